//! Why a job could not be built ([`JobError`]), and the range check every model's parameter
//! validation uses ([`check_param`], a wrapper of [`crate::core::params::check`]).

use crate::core::params::BadParam;

/// Why a job could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum JobError {
    #[error("hardness map has {got} values but the terrain has {expected} nodes")]
    HardnessSize { expected: usize, got: usize },
    #[error("parameter {name} = {value} is outside its range {range}")]
    BadParam { name: &'static str, value: f64, range: &'static str },
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
