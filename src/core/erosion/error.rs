//! Why a job could not be built ([`JobError`]), and the range check every model's parameter
//! validation uses ([`check_param`], a wrapper of [`crate::core::params::check`]).

use crate::core::params::BadParam;

/// Why a job could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum JobError {
    /// The hardness map's length differs from the terrain's node count.
    #[error("hardness map has {got} values but the terrain has {expected} nodes")]
    HardnessSize {
        /// Nodes of the terrain.
        expected: usize,
        /// Values in the hardness map.
        got: usize,
    },
    /// A model parameter lies outside its valid range (or is not finite).
    #[error("parameter {name} = {value} is outside its range {range}")]
    BadParam {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The valid range, as text for the message.
        range: &'static str,
    },
    /// The terrain holds a NaN or infinite height.
    #[error("terrain contains non-finite heights")]
    NonFinite,
}

impl From<BadParam> for JobError {
    fn from(BadParam { name, value, range }: BadParam) -> Self {
        JobError::BadParam { name, value, range }
    }
}

/// [`crate::core::params::check`] (the one range check) as a [`JobError`].
pub fn check_param(name: &'static str, value: f64, lo: f64, hi: f64, range: &'static str) -> Result<(), JobError> {
    Ok(crate::core::params::check(name, value, lo, hi, range)?)
}
