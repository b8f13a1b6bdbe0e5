//! File formats, one file per format, and the atomic writer they share.
//!
//! Native: [`bhef`]. Exchange with other tools (issue #6; [`interop`] holds the registry, the
//! shared options and the integer value mapping): [`png16`], [`r16`] (+ [`sidecar`]),
//! [`openexr`], [`geotiff`], [`hgt`] (import), [`obj`] and [`glb`] meshes (export, over
//! [`mesh`]), [`normal_map`], engine tile sets ([`tiles`]). Parameter presets: [`presets`]. Quick looks: [`preview`].
pub mod atomic;
pub mod bhef;
pub mod error;
pub mod geodesy;
pub mod geotiff;
pub mod glb;
pub mod hgt;
pub mod interop;
pub mod mapping;
pub mod mesh;
pub mod normal_map;
pub mod obj;
pub mod openexr;
pub mod png16;
pub mod presets;
pub mod preview;
pub mod r16;
pub mod sidecar;
pub mod tiles;
