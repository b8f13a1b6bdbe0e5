//! The droplet model's parameters ([`DropletParams`]): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::JobError;

crate::params! {
    /// Parameters of the droplet model (seed 000's names in brackets).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct DropletParams {
        /// Droplets to simulate (particleCount).
        pub droplets: u64 = 5000, range [0.0, (1u64 << 34) as f64];
        /// How much of its old direction a droplet keeps (inertia).
        pub inertia: f32 = 0.3, range [0.0, 1.0];
        /// Smallest slope used in the capacity (minSlope).
        pub min_slope: f32 = 0.01, unit "m/node", range [0.0, 1e6];
        /// Sediment capacity factor (capacityFactor / dropCapacity).
        pub capacity: f32 = 10.0, range [0.0, 1e6];
        /// Fraction of the excess sediment dropped per step (depositionRate).
        pub deposition: f32 = 0.08, range [0.0, 1.0];
        /// Fraction of the free capacity eroded per step (erosionRate).
        pub erosion: f32 = 0.7, range [0.0, 1.0];
        /// Gravity in the speed update (gravity).
        pub gravity: f32 = 9.81, range [0.0, 1e6];
        /// Fraction of water evaporating per step (evaporationRate).
        pub evaporation: f32 = 0.02, range [0.0, 1.0];
        /// Erosion brush radius (erosionRadius).
        pub radius: f32 = 5.0, unit "nodes", range [1.0, 64.0];
        /// Most steps a droplet lives (maxLifeTime).
        pub max_lifetime: u32 = 300, unit "steps", range [1.0, 1e6];
        /// Water of a new droplet.
        pub initial_water: f32 = 1.0, range [0.0, 1e6];
        /// Speed of a new droplet.
        pub initial_speed: f32 = 1.0, unit "nodes/step", range [0.0, 1e6];
        /// Drain-valley guard (seed 000, after Beyer): erosion never takes a node below this height
        /// (finite). `None`: see [`Self::floor_at_input_min`].
        pub min_height: Option<f32> = None, unit "m", range [-1e30, 1e30];
        /// When `min_height` is `None`, guard at the lowest height of the terrain the job started from.
        /// Without any guard, a pit at a drain edge draws ever more droplets and deepens
        /// without bound (seed 000's "drain valleys"; on a 0–100 m map, 20 000 droplets dig pits of −10⁶
        /// m), so an editor keeps it on; `false` gives the unguarded seed algorithm.
        pub floor_at_input_min: bool = true;
        /// Smooth the changes: each batch's change map is Gaussian-blurred with this sigma (0 = off)
        /// before it is applied. `None`: off.
        pub blur_changes: Option<f32> = None, unit "nodes", range [0.0, 1000.0];
        /// Run batches in parallel tile phases (see the module doc); `false` = classic serial order.
        pub parallel: bool = true;
        /// Droplets per step (one indivisible unit of work).
        pub batch: u32 = 4096, range [1.0, (1u64 << 24) as f64];
    }
}

impl DropletParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }
}
