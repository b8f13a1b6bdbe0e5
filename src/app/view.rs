//! The one conversion between window coordinates and the terrain, for everything that casts the
//! pointer into the map or puts a map point on the screen: the brushes and their hover ring
//! ([`super::tools`]), the script's virtual mouse ([`super::script`]) and the view report.
//!
//! # The convention
//! A window position is in **logical pixels of the whole window**, origin at its top-left corner,
//! y down: what winit's `CursorMoved` carries (`physical / scale_factor`) and what
//! `Window::cursor_position` returns. The 3-D camera renders into a viewport beside the side
//! panel (see [`super::camera`]); Bevy 0.19's `Camera::viewport_to_world` takes a window position
//! and subtracts the viewport's origin itself (`viewport_to_ndc`: `(p − rect.min) / rect.size`),
//! and `Camera::world_to_viewport` adds it back (`world_to_viewport_core`), so both are called here
//! with window positions unchanged. Nothing else in the editor converts: a second copy of the
//! convention is how a brush once landed a panel's width left of the mouse.
//!
//! World frame: node `(x, y)` at `(x·cell, h, y·cell)` (see [`crate::core::raycast`]).

use bevy::prelude::*;

use crate::core::Heightmap;
use crate::core::raycast::{Hit, Ray, raycast};

/// The world ray under window position `pos` (logical pixels, window origin).
pub fn window_to_ray(camera: &Camera, tf: &GlobalTransform, pos: Vec2) -> Option<Ray> {
    let ray = camera.viewport_to_world(tf, pos).ok()?;
    Some(Ray { origin: ray.origin.to_array(), dir: ray.direction.as_vec3().to_array() })
}

/// The terrain point under window position `pos`, if the pointer is over the viewport and the ray
/// meets the map.
pub fn pick(camera: &Camera, tf: &GlobalTransform, map: &Heightmap, pos: Vec2) -> Option<Hit> {
    if !in_viewport(camera, pos) {
        return None;
    }
    raycast(map, &window_to_ray(camera, tf, pos)?, f32::INFINITY)
}

/// Where the world point `world` appears in the window (logical pixels, window origin), if it is
/// in front of the camera.
pub fn world_to_window(camera: &Camera, tf: &GlobalTransform, world: Vec3) -> Option<Vec2> {
    camera.world_to_viewport(tf, world).ok()
}

/// Where grid point `(gx, gy)` (node units) of `map`, on its surface, appears in the window.
pub fn grid_to_window(camera: &Camera, tf: &GlobalTransform, map: &Heightmap, gx: f32, gy: f32) -> Option<Vec2> {
    world_to_window(camera, tf, grid_to_world(map, gx, gy))
}

/// The surface point of `map` at grid point `(gx, gy)` (clamped to the map), world frame.
pub fn grid_to_world(map: &Heightmap, gx: f32, gy: f32) -> Vec3 {
    let gx = gx.clamp(0.0, map.width.saturating_sub(1) as f32);
    let gy = gy.clamp(0.0, map.height.saturating_sub(1) as f32);
    Vec3::new(gx * map.cell_size, map.sample(gx, gy), gy * map.cell_size)
}

/// True when window position `pos` lies in the camera's viewport (the part of the window the
/// panel leaves free).
pub fn in_viewport(camera: &Camera, pos: Vec2) -> bool {
    camera.logical_viewport_rect().is_some_and(|r| r.contains(pos))
}
