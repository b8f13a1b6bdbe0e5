//! File formats. One file per format.
pub mod bhef;
