//! The thermal model's parameters ([`ThermalParams`]): fields, defaults, validation and the
//! talus slope they give.

use serde::{Deserialize, Serialize};

use super::super::{JobError, check_param};

/// Parameters of thermal erosion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThermalParams {
    /// Talus (repose) angle in degrees: slopes steeper than this shed material.
    /// Range `[0, 89.9]`, default `30`.
    pub talus_angle: f32,
    /// The talus slope given directly as a tangent (metres of drop per metre), overriding
    /// `talus_angle` when set. Range `[0, 1e4]`, default `None`.
    pub talus_tan: Option<f32>,
    /// Fraction of a node's largest excess `M` removed per iteration: the node sheds
    /// `rate·M/2` of material, which lowers the difference to a lone steep neighbour by
    /// `rate·M` (so `rate = 1` removes it in one iteration). Dimensionless, range `[0, 1]`,
    /// default `0.5` (seed 003's thermal rate).
    pub rate: f32,
    /// Number of iterations (the job's unit of work). When nested in the pipe model: iterations
    /// per application. Range `0..=u32::MAX`, default `50`.
    pub iterations: u32,
    /// Talus (repose) angle under water in degrees: where the job has a sea level, a pair of
    /// neighbours both at or below it settles to this angle instead of `talus_angle` (saturated
    /// sediment rests flatter). Range `[0, 89.9]`, default `20`.
    pub underwater_angle: f32,
}

impl Default for ThermalParams {
    fn default() -> Self {
        Self { talus_angle: 30.0, talus_tan: None, rate: 0.5, iterations: 50, underwater_angle: 20.0 }
    }
}

impl ThermalParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        check_param("talus_angle", self.talus_angle as f64, 0.0, 89.9, "[0, 89.9] degrees")?;
        if let Some(t) = self.talus_tan {
            check_param("talus_tan", t as f64, 0.0, 1.0e4, "[0, 1e4]")?;
        }
        check_param("rate", self.rate as f64, 0.0, 1.0, "[0, 1]")?;
        check_param("underwater_angle", self.underwater_angle as f64, 0.0, 89.9, "[0, 89.9] degrees")?;
        Ok(())
    }

    /// The talus slope as a tangent (`talus_tan`, or `tan(talus_angle)`).
    pub fn talus_slope(&self) -> f32 {
        match self.talus_tan {
            Some(t) => t,
            None => (self.talus_angle as f64).to_radians().tan() as f32,
        }
    }
}
