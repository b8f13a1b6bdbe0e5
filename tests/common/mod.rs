//! What the integration tests share. Each test crate that needs it says `mod common;` and uses
//! only part of it, hence `dead_code` is allowed here.
//!
//! - [`xvfb`]: a private X server for the window tests (`editor_window`, `editor_input`);
//! - [`grid`]: bit patterns of height fields, a rayon pool of a chosen size, test terrains;
//! - [`xwd`]: a PNG of a whole X screen (`xwd -root`), for windows that are not Talus's own;
//! - [`sets`]: a tile set from the editor's Build… dialog held against `talus build --tiles`'s.

#![allow(dead_code)]

pub mod grid;
pub mod sets;
pub mod xvfb;
pub mod xwd;
