//! The orbit camera: turns around a focus point on the terrain.
//!
//! Controls: middle-drag or Alt+left-drag orbits, Shift+middle-drag pans, the wheel zooms (right
//! button stays free for the lower brush). Drags follow the cursor's motion in the window
//! ([`super::tools::Pointer`]). Input is ignored while egui wants the pointer. The
//! camera frames the whole map at start and again whenever the map's size changes.

use bevy::camera::visibility::RenderLayers;
use bevy::camera::{CameraOutputMode, Viewport};
use bevy::input::mouse::{AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use bevy::render::render_resource::BlendState;
use bevy_egui::input::EguiWantsInput;
use bevy_egui::{EguiGlobalSettings, PrimaryEguiContext};

use super::EditorTerrain;

/// Spawns the camera and drives it from the mouse.
pub struct CameraPlugin;

impl Plugin for CameraPlugin {
    fn build(&self, app: &mut App) {
        // The panel gets its own camera (below), so the 3-D camera's viewport can leave room for it.
        app.world_mut().resource_mut::<EguiGlobalSettings>().auto_create_primary_context = false;
        app.add_systems(Startup, spawn_camera).add_systems(
            Update,
            (fit_viewport_beside_panel, frame_terrain, orbit_camera).chain().after(super::tools::ReadPointer),
        );
    }
}

/// Orbit state: the camera sits `distance` from `focus`, at `yaw` around +Y and `pitch` above
/// the horizon (radians).
#[derive(Component, Clone, Debug)]
pub struct OrbitCamera {
    /// The point the camera looks at and orbits, world metres.
    pub focus: Vec3,
    /// Angle around +Y, radians; 0 puts the camera on the +Z side of `focus`.
    pub yaw: f32,
    /// Angle above the horizon, radians; the mouse keeps it in `0.03 ..= 1.55`.
    pub pitch: f32,
    /// Distance from `focus`, metres.
    pub distance: f32,
    /// Map size (nodes) last framed; a different size reframes.
    pub framed: (usize, usize),
}

impl OrbitCamera {
    /// The transform this orbit state describes.
    pub fn transform(&self) -> Transform {
        let dir = Vec3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos());
        Transform::from_translation(self.focus + dir * self.distance).looking_at(self.focus, Vec3::Y)
    }

    /// Points at the centre of `map`'s extent from far enough to see all of it.
    pub fn frame(&mut self, terrain: &EditorTerrain) {
        let m = terrain.map();
        let (ex, ez) = ((m.width.max(2) - 1) as f32 * m.cell_size, (m.height.max(2) - 1) as f32 * m.cell_size);
        let mid = (terrain.stats.min.max(0.0) + terrain.stats.max) * 0.25;
        self.focus = Vec3::new(ex * 0.5, mid, ez * 0.5);
        self.distance = ex.max(ez).max(1.0) * 1.15;
        self.yaw = 0.6;
        self.pitch = 0.65;
        self.framed = (m.width, m.height);
    }
}

fn spawn_camera(mut commands: Commands, terrain: Res<EditorTerrain>) {
    let mut orbit = OrbitCamera { focus: Vec3::ZERO, yaw: 0.0, pitch: 0.5, distance: 10.0, framed: (0, 0) };
    orbit.frame(&terrain);
    commands.spawn((Camera3d::default(), orbit.transform(), orbit));
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
    panel: Res<super::ui::PanelWidth>,
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

/// Reframes when the map was replaced by one of another size.
fn frame_terrain(terrain: Res<EditorTerrain>, mut cams: Query<&mut OrbitCamera>) {
    if !terrain.is_changed() {
        return;
    }
    for mut cam in &mut cams {
        if cam.framed != (terrain.map().width, terrain.map().height) {
            cam.frame(&terrain);
        }
    }
}

/// Orbits, pans and zooms from this frame's mouse motion and wheel.
fn orbit_camera(
    keys: Res<ButtonInput<KeyCode>>,
    pointer: Res<super::tools::Pointer>,
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
    let m = terrain.map();
    let extent = (m.width.max(m.height) as f32 * m.cell_size).max(1.0);
    for (mut cam, mut transform) in &mut cams {
        if orbit_drag != Vec2::ZERO {
            let drag = orbit_drag;
            cam.yaw -= drag.x * 0.006;
            cam.pitch = (cam.pitch + drag.y * 0.006).clamp(0.03, 1.55);
        } else if pan_drag != Vec2::ZERO {
            let drag = pan_drag;
            let right = transform.right().as_vec3();
            let forward = Vec3::new(transform.forward().x, 0.0, transform.forward().z).normalize_or_zero();
            let k = cam.distance * 0.0015;
            cam.focus += (-right * drag.x + forward * drag.y) * k;
        }
        if wheel != 0.0 {
            cam.distance = (cam.distance * (1.0 - 0.12 * wheel.clamp(-5.0, 5.0))).clamp(1.0, extent * 6.0);
        }
        let next = cam.transform();
        if *transform != next {
            *transform = next;
        }
    }
}
