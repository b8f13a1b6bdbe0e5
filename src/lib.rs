//! Talus: a terrain editor. `core` is pure Rust (no Bevy); `app` is the Bevy front end.
#[cfg(feature = "editor")]
pub mod app;
pub mod backend;
pub mod cli;
pub mod core;
pub mod editor;
#[cfg(feature = "gpu")]
pub mod gpu;
