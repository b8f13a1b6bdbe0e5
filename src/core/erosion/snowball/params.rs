//! The snowball model's parameters ([`SnowballParams`]): fields, defaults and validation.

use serde::{Deserialize, Serialize};

use super::super::{JobError, check_param};

/// Parameters of the snowball model (seed 002's names in brackets; defaults from its code).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SnowballParams {
    /// Snowballs to roll. Count, `0 ..= 2³⁴`; default 35 000 (seed 002 shows 35k, 50k and 100k).
    pub snowballs: u64,
    /// Height taken per iteration at full steepness (erosionRate). Metres, `0 ..= 1000`; default 0.04.
    pub erosion_rate: f32,
    /// Fraction of the load dropped per iteration on flat ground (depositionRate). `0 ..= 1`;
    /// default 0.03.
    pub deposition_rate: f32,
    /// Acceleration along the normal (speed). Nodes per iteration, `0 ..= 1000`; default 0.15.
    pub speed: f32,
    /// Fraction of the velocity kept per iteration (friction). `0 ..= 1`; default 0.7.
    pub friction: f32,
    /// Half-width of the random offset used when sampling the normal (radius). Nodes, `0 ..= 64`;
    /// default 0.8.
    pub offset_radius: f32,
    /// Most iterations per snowball (maxIterations). `1 ..= 10⁶`; default 80.
    pub max_iterations: u32,
    /// Erosion ramps up as `min(1, i · iteration_scale)` (iterationScale). `0 ..= 1000`; default 0.04.
    pub iteration_scale: f32,
    /// Gaussian blur of the heightmap after all snowballs. Sigma in nodes, `0 ..= 1000`
    /// (0 = off); default 0.7071 (the seed's 3×3 binomial blur).
    pub blur_sigma: f32,
    /// Run batches in parallel tile phases; `false` = one snowball after another. Default `true`.
    pub parallel: bool,
    /// Snowballs per step (one indivisible unit of work). `1 ..= 2²⁴`; default 4096.
    pub batch: u32,
}

impl Default for SnowballParams {
    fn default() -> Self {
        Self {
            snowballs: 35_000,
            erosion_rate: 0.04,
            deposition_rate: 0.03,
            speed: 0.15,
            friction: 0.7,
            offset_radius: 0.8,
            max_iterations: 80,
            iteration_scale: 0.04,
            blur_sigma: std::f32::consts::FRAC_1_SQRT_2,
            parallel: true,
            batch: 4096,
        }
    }
}

impl SnowballParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        check_param("snowballs", self.snowballs as f64, 0.0, (1u64 << 34) as f64, "0..=2^34")?;
        check_param("erosion_rate", self.erosion_rate as f64, 0.0, 1000.0, "0..=1000")?;
        check_param("deposition_rate", self.deposition_rate as f64, 0.0, 1.0, "0..=1")?;
        check_param("speed", self.speed as f64, 0.0, 1000.0, "0..=1000")?;
        check_param("friction", self.friction as f64, 0.0, 1.0, "0..=1")?;
        check_param("offset_radius", self.offset_radius as f64, 0.0, 64.0, "0..=64")?;
        check_param("max_iterations", self.max_iterations as f64, 1.0, 1e6, "1..=1e6")?;
        check_param("iteration_scale", self.iteration_scale as f64, 0.0, 1000.0, "0..=1000")?;
        check_param("blur_sigma", self.blur_sigma as f64, 0.0, 1000.0, "0..=1000")?;
        check_param("batch", self.batch as f64, 1.0, (1u64 << 24) as f64, "1..=2^24")?;
        Ok(())
    }
}
