//! The thermal model's parameters ([`ThermalParams`]): fields, defaults, validation and the
//! talus slope they give.

use serde::{Deserialize, Serialize};

use super::super::JobError;
use super::super::registry::MapSize;

crate::params! {
    /// Parameters of thermal erosion.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct ThermalParams {
        /// Talus (repose) angle in degrees: slopes steeper than this shed material.
        pub talus_angle: f32 = 30.0, unit "°", range [0.0, 89.9];
        /// The talus slope given directly as a tangent (metres of drop per metre), overriding `talus_angle`
        /// when set.
        pub talus_tan: Option<f32> = None, unit "m/m", range [0.0, 1.0e4];
        /// Fraction of a node's largest excess `M` removed per iteration: the node sheds `rate·M/2` of
        /// material, which lowers the difference to a lone steep neighbour by `rate·M` (so `rate = 1`
        /// removes it in one iteration). Dimensionless (seed 003's thermal rate).
        pub rate: f32 = 0.5, range [0.0, 1.0];
        /// Number of iterations (the job's unit of work). When nested in the pipe model: iterations per
        /// application.
        pub iterations: u32 = 50;
        /// Talus (repose) angle under water in degrees: where the job has a sea level, a pair of neighbours
        /// both at or below it settles to this angle instead of `talus_angle` (saturated sediment rests
        /// flatter).
        pub underwater_angle: f32 = 20.0, unit "°", range [0.0, 89.9];
    }
}

impl ThermalParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }

    /// Version-1 values to convert (see [`crate::core::units`]): none. The angles are angles and
    /// the kernel turns them into height differences with the map's cell size; `rate` is a
    /// fraction per iteration. What the resolution still changes: material moves at most one
    /// node per iteration, so relaxing the same slope length takes `1/Δx` times the iterations.
    pub fn upgrade_units(&mut self, _map: MapSize) {}

    /// The talus slope as a tangent (`talus_tan`, or `tan(talus_angle)`).
    pub fn talus_slope(&self) -> f32 {
        match self.talus_tan {
            Some(t) => t,
            None => (self.talus_angle as f64).to_radians().tan() as f32,
        }
    }
}
