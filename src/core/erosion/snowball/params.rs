//! The snowball model's parameters ([`SnowballParams`]): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::JobError;

crate::params! {
    /// Parameters of the snowball model (seed 002's names in brackets; defaults from its code).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SnowballParams {
        /// Snowballs to roll (seed 002 shows 35k, 50k and 100k).
        pub snowballs: u64 = 35_000, range [0.0, (1u64 << 34) as f64];
        /// Height taken per iteration at full steepness (erosionRate).
        pub erosion_rate: f32 = 0.04, unit "m", range [0.0, 1000.0];
        /// Fraction of the load dropped per iteration on flat ground (depositionRate).
        pub deposition_rate: f32 = 0.03, range [0.0, 1.0];
        /// Acceleration along the normal (speed).
        pub speed: f32 = 0.15, unit "nodes/iteration", range [0.0, 1000.0];
        /// Fraction of the velocity kept per iteration (friction).
        pub friction: f32 = 0.7, range [0.0, 1.0];
        /// Half-width of the random offset used when sampling the normal (radius).
        pub offset_radius: f32 = 0.8, unit "nodes", range [0.0, 64.0];
        /// Most iterations per snowball (maxIterations).
        pub max_iterations: u32 = 80, range [1.0, 1e6];
        /// Erosion ramps up as `min(1, i · iteration_scale)` (iterationScale).
        pub iteration_scale: f32 = 0.04, range [0.0, 1000.0];
        /// Gaussian blur of the heightmap after all snowballs: its sigma (0 = off). The default,
        /// `1/√2`, is the seed's 3×3 binomial blur.
        pub blur_sigma: f32 = std::f32::consts::FRAC_1_SQRT_2, unit "nodes", range [0.0, 1000.0];
        /// Run batches in parallel tile phases; `false` = one snowball after another.
        pub parallel: bool = true;
        /// Snowballs per step (one indivisible unit of work).
        pub batch: u32 = 4096, range [1.0, (1u64 << 24) as f64];
    }
}

impl SnowballParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }
}
