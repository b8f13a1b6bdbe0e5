//! Talus: a terrain editor. `core` is pure Rust (no Bevy); `app` is the Bevy front end.
pub mod alert;
#[cfg(feature = "editor")]
pub mod app;
pub mod backend;
pub mod cli;
pub mod core;
pub mod editor;
#[cfg(feature = "gpu")]
pub mod gpu;

/// The version line of `talus --version` and of the error log ([`alert`]): the crate's version and
/// the git commit it was built from.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("TALUS_COMMIT"), ")");
