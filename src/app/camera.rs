//! The orbit camera: turns around a focus point on the terrain.
//!
//! Controls: middle-drag or Alt+left-drag orbits, Shift+middle-drag pans, the wheel zooms (right
//! button stays free for the lower brush). Drags follow the cursor's motion in the window
//! ([`super::state::Pointer`]). Input is ignored while egui wants the pointer. The
//! camera frames the whole map at start and again whenever the map's extent in metres changes
//! (another node count or cell size: Generate, Open, Import, New map); editing the same map
//! keeps it. Framing distance, zoom range, pan speed and the clip planes all come from the
//! extent ([`ViewExtent`]); the sun's shadow cascades are fitted to the same terrain box
//! ([`super::sky`]).

use bevy::camera::visibility::RenderLayers;
use bevy::camera::{CameraOutputMode, Viewport};
use bevy::input::mouse::{AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use bevy::render::render_resource::BlendState;
use bevy_egui::input::EguiWantsInput;
use bevy_egui::{EguiGlobalSettings, PrimaryEguiContext};

use super::state::EditorTerrain;
use super::state::OrbitCamera;
use crate::editor::view_extent::ViewExtent;

/// Spawns the camera and drives it from the mouse.
pub struct CameraPlugin;

impl Plugin for CameraPlugin {
    fn build(&self, app: &mut App) {
        // The panel gets its own camera (below), so the 3-D camera's viewport can leave room for it.
        app.world_mut().resource_mut::<EguiGlobalSettings>().auto_create_primary_context = false;
        app.add_systems(Startup, spawn_camera).add_systems(
            Update,
            (fit_viewport_beside_panel, frame_terrain, orbit_camera).chain().after(super::state::ReadPointer),
        );
    }
}

impl OrbitCamera {
    /// The transform this orbit state describes.
    pub fn transform(&self) -> Transform {
        let dir = Vec3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos());
        Transform::from_translation(self.focus + dir * self.distance).looking_at(self.focus, Vec3::Y)
    }

    /// Points at the centre of the map from the default angle, just far enough that the whole
    /// terrain box (sea level or the lowest node to the highest) is in a view of `aspect` =
    /// width / height ([`ViewExtent::fit_distance`]).
    pub fn frame(&mut self, terrain: &EditorTerrain, aspect: f32) {
        self.frame_from(terrain, 0.6, 0.65, aspect);
    }

    /// As [`OrbitCamera::frame`], from `yaw` and `pitch` (radians; the pitch clamped to
    /// `0.03 ..= 1.55`).
    pub fn frame_from(&mut self, terrain: &EditorTerrain, yaw: f32, pitch: f32, aspect: f32) {
        let e = extent_of(terrain);
        let (lo, hi) = (terrain.stats.min.max(0.0).min(terrain.stats.max), terrain.stats.max);
        // The pivot a quarter of the way up from sea level: orbiting turns about the land's
        // lower slopes rather than its peaks.
        let mid = (lo + hi) * 0.25;
        let (cx, cz) = e.centre();
        self.focus = Vec3::new(cx, if mid.is_finite() { mid } else { 0.0 }, cz);
        self.yaw = if yaw.is_finite() { yaw } else { 0.6 };
        self.pitch = if pitch.is_finite() { pitch.clamp(0.03, 1.55) } else { 0.65 };
        self.distance = e.fit_distance(
            self.focus.to_array(),
            lo,
            hi,
            self.yaw,
            self.pitch,
            PerspectiveProjection::default().fov,
            aspect,
        );
        self.framed = Some(e);
    }

    /// Whether a saved pose shows `e`'s map: its focus over the map (or its margin of half a
    /// side) and its distance in the zoom range. A pose saved for another extent does not.
    pub fn pose_fits(focus: Vec3, distance: f32, e: &ViewExtent) -> bool {
        let m = e.side() * 0.5;
        let (lo, hi) = e.zoom_range();
        (-m..=e.x_m + m).contains(&focus.x) && (-m..=e.z_m + m).contains(&focus.z) && (lo..=hi).contains(&distance)
    }
}

/// The current map's extent.
pub fn extent_of(terrain: &EditorTerrain) -> ViewExtent {
    let m = terrain.map();
    ViewExtent::of(m.width, m.height, m.cell_size)
}

/// Width / height of what `camera` draws: its viewport (the window beside the panel), else 16:9.
pub fn view_aspect(camera: &Camera) -> f32 {
    let size = camera.logical_viewport_size().or_else(|| camera.viewport.as_ref().map(|v| v.physical_size.as_vec2()));
    size.filter(|s| s.x > 0.0 && s.y > 0.0).map_or(16.0 / 9.0, |s| s.x / s.y)
}

/// The perspective projection for `e`: Bevy's field of view, clip planes from the extent.
fn projection(e: &ViewExtent) -> Projection {
    let (near, far) = e.clip_planes();
    Projection::Perspective(PerspectiveProjection { near, far, ..default() })
}

fn spawn_camera(mut commands: Commands, terrain: Res<EditorTerrain>) {
    // Framed for a 16:9 view now, and again for the real viewport once the window has one.
    let mut orbit = OrbitCamera { focus: Vec3::ZERO, yaw: 0.0, pitch: 0.5, distance: 10.0, framed: None };
    orbit.frame(&terrain, 16.0 / 9.0);
    orbit.framed = None;
    let e = extent_of(&terrain);
    commands.spawn((Camera3d::default(), projection(&e), orbit.transform(), orbit));
    // The egui camera: draws only the panel, over the whole window, after the 3-D view.
    commands.spawn((
        PrimaryEguiContext,
        Camera2d,
        RenderLayers::none(),
        Camera {
            order: 1,
            output_mode: CameraOutputMode::Write {
                blend_state: Some(BlendState::ALPHA_BLENDING),
                clear_color: ClearColorConfig::None,
            },
            clear_color: ClearColorConfig::Custom(Color::NONE),
            ..default()
        },
    ));
}

/// Renders the 3-D view in the part of the window the side panel leaves free, so the terrain is
/// centred in what the user can see.
fn fit_viewport_beside_panel(
    panel: Res<super::state::PanelWidth>,
    windows: Query<&Window>,
    mut cams: Query<&mut Camera, With<OrbitCamera>>,
) {
    let Ok(window) = windows.single() else { return };
    let (w, h) = (window.physical_width(), window.physical_height());
    let left = ((panel.0 * window.scale_factor()).round().max(0.0) as u32).min(w.saturating_sub(1));
    let viewport = (w > 1 && h > 0).then(|| Viewport {
        physical_position: UVec2::new(left, 0),
        physical_size: UVec2::new(w - left, h),
        ..default()
    });
    for mut cam in &mut cams {
        if cam.viewport.as_ref().map(|v| (v.physical_position, v.physical_size))
            != viewport.as_ref().map(|v| (v.physical_position, v.physical_size))
        {
            cam.viewport = viewport.clone();
        }
    }
}

/// Reframes when the map was replaced by one of another extent (or at start, once the view has
/// its size), and keeps the clip planes those of the map's extent (a project opened with its
/// saved pose reframes nothing).
fn frame_terrain(terrain: Res<EditorTerrain>, mut cams: Query<(&mut OrbitCamera, &mut Projection, &Camera)>) {
    let e = extent_of(&terrain);
    for (mut cam, mut proj, camera) in &mut cams {
        let unframed = cam.framed.is_none() && camera.logical_viewport_size().is_some();
        if !terrain.is_changed() && !unframed {
            continue;
        }
        if unframed || cam.framed.is_some_and(|f| f.differs(&e)) {
            cam.frame(&terrain, view_aspect(camera));
        }
        // Read first: writing through `proj` marks the projection changed, and the terrain changes
        // every frame of a brush stroke.
        let (near, far) = e.clip_planes();
        if let Projection::Perspective(p) = &*proj
            && (p.near != near || p.far != far)
            && let Projection::Perspective(p) = &mut *proj
        {
            (p.near, p.far) = (near, far);
        }
    }
}

/// Orbits, pans and zooms from this frame's mouse motion and wheel.
fn orbit_camera(
    keys: Res<ButtonInput<KeyCode>>,
    pointer: Res<super::state::Pointer>,
    scroll: Res<AccumulatedMouseScroll>,
    egui_input: Res<EguiWantsInput>,
    terrain: Res<EditorTerrain>,
    mut cams: Query<(&mut OrbitCamera, &mut Transform)>,
) {
    // egui reports false for a drag that started in the viewport and strays over the panel.
    let egui_drag = egui_input.wants_pointer_input();
    let egui_busy = egui_drag || egui_input.is_pointer_over_area();
    let shift = keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    let alt = keys.any_pressed([KeyCode::AltLeft, KeyCode::AltRight]);
    // The cursor's motion while the buttons were held, event by event (a whole drag can arrive
    // in one slow frame), so a scripted drag orbits as a mouse does.
    let (mut orbit_drag, mut pan_drag) = (Vec2::ZERO, Vec2::ZERO);
    for s in &pointer.samples {
        let middle = s.held[2];
        if (middle && !shift) || (alt && s.held[0]) {
            orbit_drag += s.delta;
        } else if middle && shift {
            pan_drag += s.delta;
        }
    }
    let wheel = if egui_busy {
        0.0
    } else {
        match scroll.unit {
            MouseScrollUnit::Line => scroll.delta.y,
            MouseScrollUnit::Pixel => scroll.delta.y / 40.0,
        }
    };
    if egui_drag {
        (orbit_drag, pan_drag) = (Vec2::ZERO, Vec2::ZERO);
    }
    let (closest, farthest) = extent_of(&terrain).zoom_range();
    for (mut cam, mut transform) in &mut cams {
        if orbit_drag != Vec2::ZERO {
            let drag = orbit_drag;
            cam.yaw -= drag.x * 0.006;
            cam.pitch = (cam.pitch + drag.y * 0.006).clamp(0.03, 1.55);
        } else if pan_drag != Vec2::ZERO {
            let drag = pan_drag;
            let right = transform.right().as_vec3();
            let forward = Vec3::new(transform.forward().x, 0.0, transform.forward().z).normalize_or_zero();
            let k = ViewExtent::pan_per_pixel(cam.distance);
            cam.focus += (-right * drag.x + forward * drag.y) * k;
        }
        if wheel != 0.0 {
            cam.distance = (cam.distance * (1.0 - 0.12 * wheel.clamp(-5.0, 5.0))).clamp(closest, farthest);
        }
        let next = cam.transform();
        if *transform != next {
            *transform = next;
        }
    }
}
