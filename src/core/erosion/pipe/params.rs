//! The pipe model's parameters ([`PipeParams`]) and the types they hold (the sediment
//! [`Advection`] scheme, [`RiverSource`]s): fields, defaults, validation and the conversion of
//! version-1 values.
//!
//! Every parameter is physical (metres, seconds, m/s, m², m/s²) except `rain_map`, a per-node
//! map of the size of the terrain it was made for, and `steps`, the number of time steps. The
//! river sources are placed in metres from the map's top-left node, so a source lands on the
//! same spot of the world at any resolution; the job converts them to nodes with its cell size
//! `lx` (the heightmap's, or `cell_size` when set). The virtual pipes are per cell by
//! construction (Mei et al.: one pipe between neighbouring cells), and `pipe_area`/`pipe_length`
//! are constants of the flux update `Δt·A·g·Δh/l`, not the cell's geometry: on a slope `s` the
//! flow through a pipe accelerates by `A·g·s·lx/l` while the water it drains grows with `lx`, so
//! the velocity's response `A·g·s/(l·d)` does not depend on `lx`.
//!
//! What the resolution still changes: the velocity is clamped to `lx/Δt` (CFL number 1), so
//! on finer cells fast flow needs a shorter `dt` (and more `steps` for the same time); the
//! tilt and the transport see relief at the grid scale; `rain_map` is per node; and a
//! `cell_size` of its own ties the parameters to one grid (a build at another resolution
//! should leave it `None`).

use serde::{Deserialize, Serialize};

use super::super::thermal::ThermalParams;
use super::super::{JobError, check_param};
use crate::core::units::{GridChange, MapSize};

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
        /// Centre, metres east of the map's top-left node, within the map: `[0, (width−1)·lx]`
        /// (half a cell beyond it still has its nearest node in the map).
        pub x_m: f32 = 0.0, unit "m", legacy x: f32;
        /// Centre, metres south of the map's top-left node, within `[0, (height−1)·lx]`.
        pub y_m: f32 = 0.0, unit "m", legacy y: f32;
        /// Radius: every node within it gets the full intensity; when no node lies that close, the nearest
        /// node gets it.
        pub radius_m: f32 = 0.0, unit "m", range [0.0, 1.0e7], legacy radius: f32;
        /// Water added, metres of depth per second at each covered node.
        pub intensity: f32 = 0.0, unit "m/s", range [0.0, 1.0e3];
    }
}

impl RiverSource {
    /// Converts what a version-1 file left in nodes (see [`crate::core::units`]), with the cell
    /// size of the map it was made for.
    pub fn upgrade_units(&mut self, cell_size: f32) {
        let s = crate::core::units::Sampling::new(cell_size);
        if let Some(x) = self.x.take() {
            self.x_m = s.metres(x as f64) as f32;
        }
        if let Some(y) = self.y.take() {
            self.y_m = s.metres(y as f64) as f32;
        }
        if let Some(r) = self.radius.take() {
            self.radius_m = s.metres(r as f64) as f32;
        }
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
    /// Converts what a version-1 file left in grid units (the river sources' nodes, see
    /// [`crate::core::units`]) for `map`, the map those values were made for (with `cell_size`,
    /// when set, as its cell size: the job converts back with it).
    pub fn upgrade_units(&mut self, map: MapSize) {
        let lx = self.cell_size.unwrap_or(map.cell_size);
        for s in &mut self.sources {
            s.upgrade_units(lx);
        }
    }

    /// The registry's `to_grid` ([`crate::core::erosion::ModelParams::to_grid`]): on a grid
    /// `change.ratio` times finer, a `cell_size` of its own shrinks with the cells and
    /// `rain_map` is resampled without overshoot (a dry area stays dry). The sources are in
    /// metres and stay.
    pub fn to_grid(&mut self, change: &GridChange) {
        if let Some(c) = self.cell_size.as_mut() {
            *c /= change.ratio as f32;
        }
        change.per_node_map(&mut self.rain_map);
    }

    /// Checks every field against its documented range for a `width × height` map of cells of
    /// `lx` metres (the heightmap's cell size, or `cell_size` when set).
    pub fn validate(&self, width: usize, height: usize, lx: f32) -> Result<(), JobError> {
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
        // Within the map: the nearest node of the centre is a node of the map.
        let lx = lx as f64;
        let (x_max, y_max) = ((width as f64 - 0.5) * lx, (height as f64 - 0.5) * lx);
        for s in &self.sources {
            check_param("source.x_m", s.x_m as f64, -0.5 * lx, x_max, "[0, (width−1)·cell] m, ± half a cell")?;
            check_param("source.y_m", s.y_m as f64, -0.5 * lx, y_max, "[0, (height−1)·cell] m, ± half a cell")?;
            s.check_ranges()?;
        }
        check_param("evaporation·dt", self.evaporation as f64 * self.dt as f64, 0.0, 1.0, "Ke·dt ≤ 1")?;
        if let Some(t) = &self.thermal {
            t.validate()?;
        }
        Ok(())
    }
}
