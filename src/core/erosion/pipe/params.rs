//! The pipe model's parameters ([`PipeParams`]) and the types they hold (the sediment
//! [`Advection`] scheme, [`RiverSource`]s): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::thermal::ThermalParams;
use super::super::{JobError, check_param};

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

/// A river source: water arriving at a fixed place (seed 003: location, radius, intensity).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RiverSource {
    /// Centre, grid x (nodes), within `[0, width−1]`.
    pub x: f32,
    /// Centre, grid y (nodes), within `[0, height−1]`.
    pub y: f32,
    /// Radius in nodes, `[0, 1e5]`: every node within it gets the full intensity; when no node
    /// lies that close, the nearest node gets it.
    pub radius: f32,
    /// Water added, metres of depth per second at each covered node, `[0, 1e3]`.
    pub intensity: f32,
}

/// Parameters of the pipe model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PipeParams {
    /// Time step Δt, seconds. Range `[1e-6, 10]`, default `0.1` (seed 003).
    pub dt: f32,
    /// Cross-section A of a virtual pipe, m². Range `[1e-6, 1e4]`, default `0.8` (seed 003).
    pub pipe_area: f32,
    /// Length l of a virtual pipe, m. Range `[1e-6, 1e4]`, default `1.0` (seed 003).
    pub pipe_length: f32,
    /// Gravity g, m/s². Range `[0, 1e3]`, default `9.81`.
    pub gravity: f32,
    /// Cell size `lx = ly`, metres; `None` uses the heightmap's `cell_size`. Range `[1e-6, 1e6]`,
    /// default `None`.
    pub cell_size: Option<f32>,
    /// Uniform rain, metres of water per second. Range `[0, 1e3]`, default `0.01`.
    pub rain: f32,
    /// Per-node rain (m/s, each in `[0, 1e3]`, one value per node) used instead of `rain` when
    /// set. Default `None`.
    pub rain_map: Option<Vec<f32>>,
    /// River sources, added to the rain. Default none.
    pub sources: Vec<RiverSource>,
    /// Sediment capacity constant Kc (metres of sediment per m/s of flow). Range `[0, 1e3]`,
    /// default `0.4` (seed 003).
    pub capacity: f32,
    /// Dissolving (erosion) constant Ks, fraction of the capacity deficit taken per step.
    /// Range `[0, 1]`, default `0.025` (seed 003).
    pub erosion: f32,
    /// Deposition constant Kd, fraction of the excess sediment dropped per step. Range
    /// `[0, 1]`, default `0.004` (seed 003).
    pub deposition: f32,
    /// Evaporation constant Ke, 1/s (`d *= 1 − Ke·Δt`). Range `[0, 1e3]` with `Ke·Δt ≤ 1`,
    /// default `0.0116` (seed 003 ships 0.0001 and 0.0116; the larger keeps standing water from
    /// piling up under steady rain).
    pub evaporation: f32,
    /// Lower bound of `sin(tilt)` in the capacity, so flat ground under moving water still
    /// erodes a little. Range `[0, 1]`, default `0.1` (seed 003).
    pub min_tilt: f32,
    /// Depth (m) at which the capacity reaches its full value; below it capacity scales with
    /// `d/max_depth`. `0` disables the limit. Range `[0, 1e4]`, default `0` (seed 003).
    pub max_depth: f32,
    /// Sediment transport scheme. Default semi-Lagrangian.
    pub advection: Advection,
    /// Number of time steps (the job's unit of work). Range `0..=u32::MAX`, default `1000`.
    pub steps: u32,
    /// Thermal erosion interleaved with the flow: `iterations` iterations every `thermal_every`
    /// steps. Default `None`.
    pub thermal: Option<ThermalParams>,
    /// Apply `thermal` every this many steps. Range `[1, u32::MAX]`, default `1`.
    pub thermal_every: u32,
}

impl Default for PipeParams {
    fn default() -> Self {
        Self {
            dt: 0.1,
            pipe_area: 0.8,
            pipe_length: 1.0,
            gravity: 9.81,
            cell_size: None,
            rain: 0.01,
            rain_map: None,
            sources: Vec::new(),
            capacity: 0.4,
            erosion: 0.025,
            deposition: 0.004,
            evaporation: 0.0116,
            min_tilt: 0.1,
            max_depth: 0.0,
            advection: Advection::SemiLagrangian,
            steps: 1000,
            thermal: None,
            thermal_every: 1,
        }
    }
}

impl PipeParams {
    /// Checks every field against its documented range for a `width × height` map.
    pub fn validate(&self, width: usize, height: usize) -> Result<(), JobError> {
        check_param("dt", self.dt as f64, 1.0e-6, 10.0, "[1e-6, 10] s")?;
        check_param("pipe_area", self.pipe_area as f64, 1.0e-6, 1.0e4, "[1e-6, 1e4] m²")?;
        check_param("pipe_length", self.pipe_length as f64, 1.0e-6, 1.0e4, "[1e-6, 1e4] m")?;
        check_param("gravity", self.gravity as f64, 0.0, 1.0e3, "[0, 1e3] m/s²")?;
        if let Some(c) = self.cell_size {
            check_param("cell_size", c as f64, 1.0e-6, 1.0e6, "[1e-6, 1e6] m")?;
        }
        check_param("rain", self.rain as f64, 0.0, 1.0e3, "[0, 1e3] m/s")?;
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
            check_param("source.radius", s.radius as f64, 0.0, 1.0e5, "[0, 1e5] nodes")?;
            check_param("source.intensity", s.intensity as f64, 0.0, 1.0e3, "[0, 1e3] m/s")?;
        }
        check_param("capacity", self.capacity as f64, 0.0, 1.0e3, "[0, 1e3]")?;
        check_param("erosion", self.erosion as f64, 0.0, 1.0, "[0, 1]")?;
        check_param("deposition", self.deposition as f64, 0.0, 1.0, "[0, 1]")?;
        check_param("evaporation", self.evaporation as f64, 0.0, 1.0e3, "[0, 1e3] 1/s")?;
        check_param("evaporation·dt", self.evaporation as f64 * self.dt as f64, 0.0, 1.0, "Ke·dt ≤ 1")?;
        check_param("min_tilt", self.min_tilt as f64, 0.0, 1.0, "[0, 1]")?;
        check_param("max_depth", self.max_depth as f64, 0.0, 1.0e4, "[0, 1e4] m (0 = off)")?;
        check_param("thermal_every", self.thermal_every as f64, 1.0, u32::MAX as f64, "[1, 2^32−1]")?;
        if let Some(t) = &self.thermal {
            t.validate()?;
        }
        Ok(())
    }
}
