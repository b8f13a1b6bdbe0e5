//! The editor's logic without Bevy: what the window does, as plain Rust that tests without a
//! display. `crate::app` (feature `editor`) only gathers input, calls these, and draws.
//!
//! - [`schema`]: the parameter structs' fields, types, units and ranges, from their `params!`
//!   declarations, so the panel can edit every parameter with a tooltip.
//! - [`document`]: the open terrain with its layers, undo history and file state.
//! - [`layers`]: the layer stack (base, sculpt, erosion runs with masks) and how it folds.
//! - [`project`]: the project file (`.talus`) that saves the whole stack.
//! - [`job`]: a simulation running in the background, streaming updates, pausable, cancellable.
//! - [`mesh`]: terrain chunk geometry (vertices, normals, colours) for the 3-D view.
//! - [`overlay`]: the data overlays (flow, water, erosion, masks, hardness): colour ramps, the
//!   per-node RGBA image and its legend.
//! - [`persist`]: settings, recent files, autosave.
//! - [`script`]: scripted sessions that drive the real window.
//! - [`view_extent`]: the 3-D view's distances (framing, zoom, clip planes, brush, haze) from the
//!   map's extent in metres.

pub mod build;
pub mod document;
pub mod erosion_brush;
pub mod job;
pub mod layers;
pub mod look;
pub mod mesh;
pub mod overlay;
pub mod persist;
pub mod planes;
pub mod project;
pub mod schema;
pub mod script;
pub mod simulate;
pub mod timeline;
pub mod view_extent;
