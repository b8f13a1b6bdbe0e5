//! File formats, one file per format, and the atomic writer they share.
pub mod atomic;
pub mod bhef;
pub mod preview;
