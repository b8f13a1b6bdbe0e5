//! Why a job could not be built ([`JobError`]), and the range check every model's parameter
//! validation uses ([`check_param`]).

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

/// Checks `lo <= value <= hi` (and finiteness) for a parameter.
pub fn check_param(name: &'static str, value: f64, lo: f64, hi: f64, range: &'static str) -> Result<(), JobError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(JobError::BadParam { name, value, range })
    }
}
