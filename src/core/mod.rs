//! The pure-Rust core of Talus: no Bevy, no window, no GPU. Everything here builds and tests with
//! `cargo test --no-default-features`.
pub mod analysis;
pub mod brush;
pub mod distance;
pub mod erosion;
pub mod filter;
pub mod generate;
pub mod heightmap;
pub mod io;
pub mod params;
pub mod rank;
pub mod raycast;
pub mod resample;
pub mod rng;
pub mod splat;
pub mod undo;
pub mod units;

pub use heightmap::{Heightmap, HeightmapError};
