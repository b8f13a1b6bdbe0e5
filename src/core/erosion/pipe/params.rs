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
//! The velocity is clamped to `max_speed` (m/s), and a time step `dt` is taken as the fewest
//! equal sub-steps in which that speed crosses at most one cell ([`Stepping`]): the same flow is
//! followed at any cell size, with the rates per step (`erosion`, `deposition`) converted per
//! sub-step so they act the same over `dt`. Before, the clamp was `lx/dt` (CFL number 1), so on
//! N× finer cells fast flow was capped N× lower; `max_speed = 0` keeps that (projects of format
//! 4 and older, and version-1 files, read their pipe layers so).
//!
//! What the resolution still changes: the tilt and the transport see relief at the grid scale;
//! `rain_map` is per node; and a `cell_size` of its own ties the parameters to one grid (a build
//! at another resolution should leave it `None`).

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
        /// Fastest flow the run follows, m/s: each velocity component is clamped to it, and each
        /// time step is split into `n = ⌈max_speed·dt/lx⌉` equal sub-steps so that this speed
        /// crosses at most one cell per sub-step ([`Stepping`]). The default is the clamp the
        /// default island (2 m cells, `dt` 0.1 s) always had. `0` keeps the seed's clamp `lx/dt`
        /// in one step, which depends on the cell size (projects of format 4 and older).
        pub max_speed: f32 = 20.0, unit "m/s", range [0.0, 1.0e4];
        /// Sediment transport scheme.
        pub advection: Advection = Advection::SemiLagrangian;
        /// Number of time steps (the job's unit of work).
        pub steps: u32 = 1000;
        /// Thermal erosion interleaved with the flow: `iterations` iterations every `thermal_every` steps.
        pub thermal: Option<ThermalParams> = None;
        /// Apply `thermal` every this many steps.
        pub thermal_every: u32 = 1, range [1.0, u32::MAX as f64];
        /// With a sea level, the interleaved thermal step settles a pair of nodes both at or
        /// below it to the thermal's `underwater_angle`, as thermal erosion alone does; `false`
        /// keeps the land talus everywhere (projects of format 5 and older).
        pub thermal_sea: bool = true;
    }
}

/// Most sub-steps one time step may take ([`PipeParams::validate`] refuses more).
pub const MAX_SUB_STEPS: u32 = 1024;

/// How one time step of `dt` is taken on cells of `lx` metres ([`PipeParams::stepping`]): `n`
/// sub-steps of `dt/n`, each a full step of the model (module doc of [`super`], steps 1–5 and
/// 7; the interleaved thermal step still runs once per time step).
///
/// ```text
/// n     = max(1, ⌈max_speed·dt/lx⌉)          (1 when max_speed = 0)
/// Δt    = dt/n
/// vmax  = min(max_speed, lx/Δt)              (lx/Δt when max_speed = 0: CFL number ≤ 1)
/// Ks'   = 1 − (1 − Ks)^(1/n),   Kd' = 1 − (1 − Kd)^(1/n)
/// ```
///
/// `Ks` and `Kd` are the fractions of the capacity deficit (excess) closed per time step; over
/// `n` sub-steps `Ks'` closes the same fraction of a constant deficit. Rain, evaporation and the
/// flux update are rates per second and take `Δt`. With `n = 1` every value is the parameter
/// itself, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stepping {
    /// Sub-steps per time step.
    pub n: u32,
    /// Seconds per sub-step.
    pub dt: f32,
    /// Velocity clamp, m/s.
    pub vmax: f32,
    /// Erosion constant per sub-step.
    pub erosion: f32,
    /// Deposition constant per sub-step.
    pub deposition: f32,
}

impl PipeParams {
    /// Sub-steps a time step needs on cells of `lx` metres: `⌈max_speed·dt/lx⌉` (f64, less a
    /// hair so an exact ratio is not rounded up), at least 1; 1 when `max_speed = 0`.
    fn sub_steps_f64(&self, lx: f32) -> f64 {
        if self.max_speed > 0.0 {
            (self.max_speed as f64 * self.dt as f64 / lx as f64 - 1.0e-6).ceil().max(1.0)
        } else {
            1.0
        }
    }

    /// The time stepping on cells of `lx` metres ([`Stepping`]). Call after [`Self::validate`]
    /// (which bounds the sub-steps by [`MAX_SUB_STEPS`]).
    pub fn stepping(&self, lx: f32) -> Stepping {
        let n = self.sub_steps_f64(lx).min(MAX_SUB_STEPS as f64) as u32;
        if n == 1 {
            let cfl = lx / self.dt;
            let vmax = if self.max_speed > 0.0 { self.max_speed.min(cfl) } else { cfl };
            return Stepping { n, dt: self.dt, vmax, erosion: self.erosion, deposition: self.deposition };
        }
        let dt = self.dt / n as f32;
        let per = |k: f32| (1.0 - (1.0 - k as f64).powf(1.0 / n as f64)) as f32;
        Stepping {
            n,
            dt,
            vmax: self.max_speed.min(lx / dt),
            erosion: per(self.erosion),
            deposition: per(self.deposition),
        }
    }

    /// Keeps the seed's velocity clamp `lx/dt` in one step per time step (`max_speed = 0`), as
    /// projects of format 4 and older ran: they erode their own map bit for bit as before.
    pub fn keep_cfl_per_cell(&mut self) {
        self.max_speed = 0.0;
    }

    /// Keeps the interleaved thermal step as projects of format 5 and older ran it on cells of
    /// `lx` metres: its iterations per node ([`ThermalParams::keep_iterations_per_node`]) and no
    /// underwater talus (`thermal_sea = false`), so they erode their own map bit for bit as before.
    pub fn keep_format_5_thermal(&mut self, lx: f32) {
        self.thermal_sea = false;
        if let Some(t) = &mut self.thermal {
            t.keep_iterations_per_node(lx);
        }
    }

    /// Converts what a version-1 file left in grid units (the river sources' nodes, see
    /// [`crate::core::units`]) for `map`, the map those values were made for (with `cell_size`,
    /// when set, as its cell size: the job converts back with it). A version-1 file also ran
    /// with the seed's clamp ([`Self::keep_cfl_per_cell`]) and its interleaved thermal step as
    /// format 5 ran it ([`Self::keep_format_5_thermal`]).
    pub fn upgrade_units(&mut self, map: MapSize) {
        let lx = self.cell_size.unwrap_or(map.cell_size);
        if crate::core::units::Legacy::has_legacy(self) {
            self.keep_cfl_per_cell();
            self.keep_format_5_thermal(lx);
        }
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
        check_param(
            "sub-steps (max_speed·dt/cell_size)",
            self.sub_steps_f64(lx as f32),
            1.0,
            MAX_SUB_STEPS as f64,
            "at most 1024 sub-steps per time step: lower max_speed or dt, or use coarser cells",
        )?;
        if let Some(t) = &self.thermal {
            t.validate()?;
        }
        Ok(())
    }
}
