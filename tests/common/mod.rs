//! What the integration tests share. Each test crate that needs it says `mod common;` and uses
//! only part of it, hence `dead_code` is allowed here.
//!
//! - [`xvfb`]: a private X server for the window tests (`editor_window`, `editor_input`);
//! - [`grid`]: bit patterns of height fields, a rayon pool of a chosen size, test terrains.

#![allow(dead_code)]

pub mod grid;
pub mod xvfb;
