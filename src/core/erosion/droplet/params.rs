//! The droplet model's parameters ([`DropletParams`]): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::{JobError, check_param};

/// Parameters of the droplet model (seed 000's names in brackets).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DropletParams {
    /// Droplets to simulate (particleCount). Count, `0 ..= 2³⁴`; default 5000.
    pub droplets: u64,
    /// How much of its old direction a droplet keeps (inertia). Fraction, `0 ..= 1`; default 0.3.
    pub inertia: f32,
    /// Smallest slope used in the capacity (minSlope). Metres per node, `0 ..= 10⁶`; default 0.01.
    pub min_slope: f32,
    /// Sediment capacity factor (capacityFactor / dropCapacity). `0 ..= 10⁶`; default 10.
    pub capacity: f32,
    /// Fraction of the excess sediment dropped per step (depositionRate). `0 ..= 1`; default 0.08.
    pub deposition: f32,
    /// Fraction of the free capacity eroded per step (erosionRate). `0 ..= 1`; default 0.7.
    pub erosion: f32,
    /// Gravity in the speed update (gravity). `0 ..= 10⁶`; default 9.81.
    pub gravity: f32,
    /// Fraction of water evaporating per step (evaporationRate). `0 ..= 1`; default 0.02.
    pub evaporation: f32,
    /// Erosion brush radius (erosionRadius). Nodes, `1 ..= 64`; default 5.
    pub radius: f32,
    /// Most steps a droplet lives (maxLifeTime). Steps, `1 ..= 10⁶`; default 300.
    pub max_lifetime: u32,
    /// Water of a new droplet. `0 ..= 10⁶`; default 1.
    pub initial_water: f32,
    /// Speed of a new droplet. Nodes per step, `0 ..= 10⁶`; default 1.
    pub initial_speed: f32,
    /// Drain-valley guard (seed 000, after Beyer): erosion never takes a node below this height
    /// (metres, finite). Default `None`: see [`Self::floor_at_input_min`].
    pub min_height: Option<f32>,
    /// When `min_height` is `None`, guard at the lowest height of the terrain the job started
    /// from. Default `true`. Without any guard, a pit at a drain edge draws ever more droplets
    /// and deepens without bound (seed 000's "drain valleys"; on a 0–100 m map, 20 000 droplets
    /// dig pits of −10⁶ m), so an editor keeps it on; `false` gives the unguarded seed algorithm.
    pub floor_at_input_min: bool,
    /// Smooth the changes: each batch's change map is Gaussian-blurred with this sigma (nodes,
    /// `0 ..= 1000`, 0 = off) before it is applied. Default `None` (off).
    pub blur_changes: Option<f32>,
    /// Run batches in parallel tile phases (see the module doc); `false` = classic serial order.
    /// Default `true`.
    pub parallel: bool,
    /// Droplets per step (one indivisible unit of work). `1 ..= 2²⁴`; default 4096.
    pub batch: u32,
}

impl Default for DropletParams {
    fn default() -> Self {
        Self {
            droplets: 5000,
            inertia: 0.3,
            min_slope: 0.01,
            capacity: 10.0,
            deposition: 0.08,
            erosion: 0.7,
            gravity: 9.81,
            evaporation: 0.02,
            radius: 5.0,
            max_lifetime: 300,
            initial_water: 1.0,
            initial_speed: 1.0,
            min_height: None,
            floor_at_input_min: true,
            blur_changes: None,
            parallel: true,
            batch: 4096,
        }
    }
}

impl DropletParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        check_param("droplets", self.droplets as f64, 0.0, (1u64 << 34) as f64, "0..=2^34")?;
        check_param("inertia", self.inertia as f64, 0.0, 1.0, "0..=1")?;
        check_param("min_slope", self.min_slope as f64, 0.0, 1e6, "0..=1e6")?;
        check_param("capacity", self.capacity as f64, 0.0, 1e6, "0..=1e6")?;
        check_param("deposition", self.deposition as f64, 0.0, 1.0, "0..=1")?;
        check_param("erosion", self.erosion as f64, 0.0, 1.0, "0..=1")?;
        check_param("gravity", self.gravity as f64, 0.0, 1e6, "0..=1e6")?;
        check_param("evaporation", self.evaporation as f64, 0.0, 1.0, "0..=1")?;
        check_param("radius", self.radius as f64, 1.0, 64.0, "1..=64")?;
        check_param("max_lifetime", self.max_lifetime as f64, 1.0, 1e6, "1..=1e6")?;
        check_param("initial_water", self.initial_water as f64, 0.0, 1e6, "0..=1e6")?;
        check_param("initial_speed", self.initial_speed as f64, 0.0, 1e6, "0..=1e6")?;
        if let Some(m) = self.min_height {
            check_param("min_height", m as f64, -1e30, 1e30, "finite")?;
        }
        if let Some(s) = self.blur_changes {
            check_param("blur_changes", s as f64, 0.0, 1000.0, "0..=1000")?;
        }
        check_param("batch", self.batch as f64, 1.0, (1u64 << 24) as f64, "1..=2^24")?;
        Ok(())
    }
}
