//! Heightmap generators (SPEC §1): a base generator followed by optional post-processing stages,
//! all deterministic from one `u64` seed.
//!
//! Pipeline order (fixed, each stage optional):
//! `base → hills → normalise → terraces → island filter → radial falloff → sea level`.
//! Normalising before terracing makes the step count independent of the base's amplitude.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::heightmap::{Heightmap, HeightmapError};

pub mod diamond_square;
pub mod fbm;
pub mod hills;
pub mod island_filter;
pub mod lazy_world;
pub mod terrace;
pub mod value_noise;
pub mod voronoi_island;
pub mod warp;

/// Why a map could not be generated.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GenError {
    #[error(transparent)]
    Size(#[from] HeightmapError),
    #[error("parameter {name} = {value} is outside its range {range}")]
    BadParam { name: &'static str, value: f64, range: &'static str },
}

/// Checks `lo <= value <= hi` (and finiteness) for a generator parameter.
pub fn check(name: &'static str, value: f64, lo: f64, hi: f64, range: &'static str) -> Result<(), GenError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(GenError::BadParam { name, value, range })
    }
}
