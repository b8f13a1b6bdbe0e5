//! The stream-power model's parameters ([`StreamPowerParams`]) and the choices they hold
//! ([`UpliftMode`], [`FlowMethod`]): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::{JobError, check_param};
use crate::core::units::{GridChange, MapSize};

crate::param_enum! {
    /// How the uplift rate is spread over the map when no `uplift_map` is given (module doc, step 1).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum UpliftMode {
        /// The same rate `uplift` on every node that is not an outlet (sea or drain edge): the whole
        /// map rises as a block.
        Uniform,
        /// `U_i = uplift · clamp((h_i − b) / (h_max − b), 0, 1)^uplift_exponent` from the input
        /// heights (`b` the sea level, or the map minimum without a sea): 0 at and below the sea,
        /// the full rate on the highest peak, so the terrain keeps its shape and outline (Cordonnier
        /// et al. 2016; Schott et al. 2023).
        #[default]
        FollowTerrain,
    }
}

crate::param_enum! {
    /// How drainage area is routed (module doc, step 2).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum FlowMethod {
        /// Single steepest-descent receiver (O'Callaghan & Mark 1984). Fast, but long straight
        /// parallel valleys follow the grid axes and diagonals.
        D8,
        /// Multiple flow directions (Freeman 1991, FD8): area split over all lower neighbours in
        /// proportion to `slope^mfd_exponent`; incision still follows the steepest receiver.
        #[default]
        Mfd,
    }
}

crate::params! {
    /// Parameters of the stream-power model (module doc for the equations).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct StreamPowerParams {
        /// Number of time steps to run (the unit of progress). Any value; 0 does nothing.
        pub steps: u64 = 100;
        /// Time step `Δt`, years, in `[0, 1e7]`. The scheme is implicit: large steps stay stable.
        pub dt: f32 = 1000.0, unit "yr", range [0.0, 1.0e7];
        /// Uplift rate `U`, m/yr, in `[0, 1]`: the rate of every non-outlet node (`Uniform`) or of the
        /// highest one (`FollowTerrain`); ignored where `uplift_map` is given. Default: 0.5 mm/yr.
        pub uplift: f32 = 5.0e-4, unit "m/yr", range [0.0, 1.0];
        /// How `uplift` is spread over the map: `Uniform` (every node above the sea alike) or
        /// `FollowTerrain` (proportional to the input's height above the sea, 0 at the coast).
        pub uplift_mode: UpliftMode = UpliftMode::FollowTerrain;
        /// Exponent `p` of the `FollowTerrain` uplift, in `[0, 8]`: 1 grows linearly with height, larger
        /// values keep the uplift to the peaks, 0 is uniform above the sea. Default: coastal hills keep
        /// some uplift, so the coast does not wear down to a flat rim.
        pub uplift_exponent: f32 = 0.7, range [0.0, 8.0];
        /// Optional per-node uplift rate, m/yr, each in `[0, 1]`, one value per node (row-major); replaces
        /// `uplift`.
        pub uplift_map: Option<Vec<f32>> = None;
        /// Erodibility `K`, m^(1−2m)/yr, in `[0, 1]`; multiplied per node by the hardness map.
        pub k: f32 = 2.0e-4, unit "m^(1−2m)/yr", range [0.0, 1.0];
        /// Drainage-area exponent `m`, in `[0, 2]`.
        pub m: f32 = 0.4, range [0.0, 2.0];
        /// Slope exponent `n`, in `[0.25, 4]`; `n ≠ 1` is solved by Newton iteration per node.
        pub n: f32 = 1.0, range [0.25, 4.0];
        /// Hillslope diffusivity `κ`; 0 turns diffusion off. Default: on 2 m cells it
        /// rounds off single-node peaks without blurring the valleys.
        pub diffusion: f32 = 8.0e-4, unit "m²/yr", range [0.0, 1.0e6];
        /// Drainage-area routing: `D8` (single steepest receiver) or `Mfd` (Freeman's multiple flow
        /// directions, no grid-aligned stripes).
        pub routing: FlowMethod = FlowMethod::Mfd;
        /// Exponent `p` of the `Mfd` split `w_j ∝ S_j^p`, in `[0, 10]`: 1.1 after Freeman (1991); larger
        /// values concentrate flow toward D8, smaller spread it.
        pub mfd_exponent: f32 = 1.1, range [0.0, 10.0];
        /// Whether lakes trap the sediment that flows into them (filling from the bottom). When false,
        /// sediment crosses lakes and leaves at the outlets.
        pub lake_deposition: bool = true;
    }
}

impl StreamPowerParams {
    /// Version-1 values to convert (see [`crate::core::units`]): none. Every parameter is physical
    /// (years, m/yr, m²/yr, `K` in m^(1−2m)/yr with the drainage area in m² and slopes in m/m,
    /// both taken with the map's cell size). `uplift_map` is a per-node map of the size of the
    /// terrain it was made for.
    pub fn upgrade_units(&mut self, _map: MapSize) {}

    /// The registry's `to_grid` ([`crate::core::erosion::ModelParams::to_grid`]): `uplift_map`
    /// is resampled to the new grid without overshoot (a rate keeps its sign and range).
    pub fn to_grid(&mut self, change: &GridChange) {
        change.per_node_map(&mut self.uplift_map);
    }

    /// Checks every parameter against its documented range (and the uplift map against `nodes`).
    pub fn validate(&self, nodes: usize) -> Result<(), JobError> {
        self.check_ranges()?;
        if let Some(u) = &self.uplift_map {
            if u.len() != nodes {
                return Err(JobError::BadParam {
                    name: "uplift_map length",
                    value: u.len() as f64,
                    range: "one value per node",
                });
            }
            for &v in u {
                check_param("uplift_map", v as f64, 0.0, 1.0, "[0, 1] m/yr")?;
            }
        }
        Ok(())
    }
}
