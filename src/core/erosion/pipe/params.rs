//! The pipe model's parameters ([`PipeParams`]) and the types they hold (the sediment
//! [`Advection`] scheme, [`RiverSource`]s): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::thermal::ThermalParams;
use super::super::{JobError, check_param};

crate::param_enum! {
    /// How suspended sediment is transported.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Advection {
        /// Back-trace along the velocity and interpolate bilinearly (Mei et al. 2007).
        #[default]
        SemiLagrangian,
        /// Backward pass, forward pass on its result, `s = ŝ + (s − s̃)/2`, with the correction
        /// clamped to the local min/max so it stays stable and non-negative (seed 003, Selle 2008).
        MacCormack,
        /// Forward remap (our addition): each node's sediment moves by `(u, v)·Δt` and is split
        /// bilinearly over the nodes around its landing point. Exactly mass-conservative: what would
        /// cross a wall stays in its node, what crosses a drain leaves the map, nothing else is lost
        /// or created (the two seed schemes gain or lose sediment where the flow converges or
        /// diverges; see `clamped` in the module doc).
        Conservative,
    }
}

crate::params! {
    prefix "source.";
    /// A river source: water arriving at a fixed place (seed 003: location, radius, intensity).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct RiverSource {
        /// Centre, grid x (nodes), within `[0, width−1]`.
        pub x: f32 = 0.0, unit "nodes";
        /// Centre, grid y (nodes), within `[0, height−1]`.
        pub y: f32 = 0.0, unit "nodes";
        /// Radius: every node within it gets the full intensity; when no node lies that close, the nearest
        /// node gets it.
        pub radius: f32 = 0.0, unit "nodes", range [0.0, 1.0e5];
        /// Water added, metres of depth per second at each covered node.
        pub intensity: f32 = 0.0, unit "m/s", range [0.0, 1.0e3];
    }
}

crate::params! {
    /// Parameters of the pipe model.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct PipeParams {
        /// Time step Δt, seconds (seed 003).
        pub dt: f32 = 0.1, unit "s", range [1.0e-6, 10.0];
        /// Cross-section A of a virtual pipe, m² (seed 003).
        pub pipe_area: f32 = 0.8, unit "m²", range [1.0e-6, 1.0e4];
        /// Length l of a virtual pipe, m (seed 003).
        pub pipe_length: f32 = 1.0, unit "m", range [1.0e-6, 1.0e4];
        /// Gravity g, m/s².
        pub gravity: f32 = 9.81, unit "m/s²", range [0.0, 1.0e3];
        /// Cell size `lx = ly`, metres; `None` uses the heightmap's `cell_size`.
        pub cell_size: Option<f32> = None, unit "m", range [1.0e-6, 1.0e6];
        /// Uniform rain, metres of water per second.
        pub rain: f32 = 0.01, unit "m/s", range [0.0, 1.0e3];
        /// Per-node rain (m/s, each in `[0, 1e3]`, one value per node) used instead of `rain` when set.
        pub rain_map: Option<Vec<f32>> = None;
        /// River sources, added to the rain.
        pub sources: Vec<RiverSource> = Vec::new();
        /// Sediment capacity constant Kc (metres of sediment per m/s of flow) (seed 003).
        pub capacity: f32 = 0.4, range [0.0, 1.0e3];
        /// Dissolving (erosion) constant Ks, fraction of the capacity deficit taken per step (seed 003).
        pub erosion: f32 = 0.025, range [0.0, 1.0];
        /// Deposition constant Kd, fraction of the excess sediment dropped per step (seed 003).
        pub deposition: f32 = 0.004, range [0.0, 1.0];
        /// Evaporation constant Ke (`d *= 1 − Ke·Δt`), with `Ke·Δt ≤ 1`. Seed 003 ships 0.0001 and
        /// 0.0116; the larger keeps standing water from piling up under steady rain.
        pub evaporation: f32 = 0.0116, unit "1/s", range [0.0, 1.0e3];
        /// Lower bound of `sin(tilt)` in the capacity, so flat ground under moving water still erodes a
        /// little (seed 003).
        pub min_tilt: f32 = 0.1, range [0.0, 1.0];
        /// Depth (m) at which the capacity reaches its full value; below it capacity scales with
        /// `d/max_depth`. `0` disables the limit (seed 003).
        pub max_depth: f32 = 0.0, unit "m", range [0.0, 1.0e4];
        /// Sediment transport scheme.
        pub advection: Advection = Advection::SemiLagrangian;
        /// Number of time steps (the job's unit of work).
        pub steps: u32 = 1000;
        /// Thermal erosion interleaved with the flow: `iterations` iterations every `thermal_every` steps.
        pub thermal: Option<ThermalParams> = None;
        /// Apply `thermal` every this many steps.
        pub thermal_every: u32 = 1, range [1.0, u32::MAX as f64];
    }
}

impl PipeParams {
    /// Checks every field against its documented range for a `width × height` map.
    pub fn validate(&self, width: usize, height: usize) -> Result<(), JobError> {
        self.check_ranges()?;
        if let Some(r) = &self.rain_map {
            if r.len() != width * height {
                return Err(JobError::BadParam {
                    name: "rain_map length",
                    value: r.len() as f64,
                    range: "one value per node",
                });
            }
            if let Some(&bad) = r.iter().find(|v| !(v.is_finite() && **v >= 0.0 && **v <= 1.0e3)) {
                return Err(JobError::BadParam { name: "rain_map", value: bad as f64, range: "[0, 1e3] m/s" });
            }
        }
        for s in &self.sources {
            check_param("source.x", s.x as f64, 0.0, (width - 1) as f64, "[0, width−1]")?;
            check_param("source.y", s.y as f64, 0.0, (height - 1) as f64, "[0, height−1]")?;
            s.check_ranges()?;
        }
        check_param("evaporation·dt", self.evaporation as f64 * self.dt as f64, 0.0, 1.0, "Ke·dt ≤ 1")?;
        if let Some(t) = &self.thermal {
            t.validate()?;
        }
        Ok(())
    }
}
