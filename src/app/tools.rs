//! Brushes (seeds 003 and 004): the cursor is cast into the heightmap on the CPU
//! ([`crate::core::raycast`]), a ring conforming to the terrain shows the brush under it, and
//! holding a button paints a stroke of evenly spaced dabs ([`crate::core::brush::Stroke`]).
//!
//! Buttons: left applies the panel's tool (raise by default), right lowers (seed 004), Ctrl+left
//! smooths, Shift+left flattens (to the height under the stroke's first dab). `[` and `]` shrink
//! and grow the radius. Alt+left and the middle button belong to the camera. Nothing paints while
//! the pointer is over the panel.
//!
//! The cursor is read into a [`Pointer`] (window position, buttons, time); a script fills the same
//! [`Pointer`] instead of the mouse, so scripted strokes take this exact path. Each stroke is one
//! undo step. While a simulation runs, the stroke is sent to the running job instead (see
//! [`super::simulation`]) and shows with its next update.

use bevy::prelude::*;
use bevy_egui::input::EguiWantsInput;

use super::simulation::SimState;
use super::{EditorTerrain, StatusLine};
use crate::core::brush::{BrushKind, BrushParams};
use crate::core::raycast::{Hit, Ray, raycast};
use crate::editor::job::JobEdit;

/// Reads the mouse, casts it into the terrain, paints, and draws the hover ring.
pub struct ToolsPlugin;

impl Plugin for ToolsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<BrushTool>()
            .init_resource::<Pointer>()
            .add_systems(Update, (read_mouse, cast_pointer, paint, draw_brush_ring).chain().in_set(ToolSystems));
    }
}

/// The brush systems, for ordering (a script sets the pointer before them).
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolSystems;

/// The brush the panel edits.
#[derive(Resource, Clone, Debug, Default)]
pub struct BrushTool {
    pub params: BrushParams,
}

/// Which stroke the pointer is painting, by button.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Press {
    #[default]
    None,
    /// The panel's tool (left button).
    Tool,
    /// Lower (right button).
    Lower,
    /// Smooth (Ctrl+left).
    Smooth,
    /// Flatten (Shift+left).
    Flatten,
}

/// The pointer as the brushes see it: from the mouse, or from a script.
#[derive(Resource, Clone, Debug, Default)]
pub struct Pointer {
    /// Position in the window (logical pixels), `None` when outside or over the panel.
    pub pos: Option<Vec2>,
    /// What is held.
    pub press: Press,
    /// Stroke clock, seconds.
    pub time: f64,
    /// True while a script drives the pointer (the mouse is then ignored).
    pub scripted: bool,
    /// The terrain point under `pos`, if any.
    pub hit: Option<Hit>,
    /// The stroke being painted, with the kind it paints.
    pub painting: Option<BrushKind>,
}

fn read_mouse(
    windows: Query<&Window>,
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    egui_input: Res<EguiWantsInput>,
    time: Res<Time>,
    mut pointer: ResMut<Pointer>,
    mut tool: ResMut<BrushTool>,
) {
    if pointer.scripted {
        return;
    }
    let over_panel = egui_input.is_pointer_over_area() || egui_input.wants_pointer_input();
    let Ok(window) = windows.single() else { return };
    // While painting, keep painting when the pointer crosses the panel; otherwise the panel wins.
    pointer.pos = window.cursor_position().filter(|_| pointer.painting.is_some() || !over_panel);
    pointer.time = time.elapsed_secs_f64();
    let alt = keys.any_pressed([KeyCode::AltLeft, KeyCode::AltRight]);
    let ctrl = keys.any_pressed([KeyCode::ControlLeft, KeyCode::ControlRight]);
    let shift = keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    let left = buttons.pressed(MouseButton::Left) && !alt;
    pointer.press = if pointer.pos.is_none() {
        Press::None
    } else if buttons.pressed(MouseButton::Right) {
        Press::Lower
    } else if left && ctrl {
        Press::Smooth
    } else if left && shift {
        Press::Flatten
    } else if left {
        Press::Tool
    } else {
        Press::None
    };
    if !egui_input.wants_any_keyboard_input() {
        let r = &mut tool.params.radius;
        if keys.just_pressed(KeyCode::BracketLeft) {
            *r = (*r / 1.25).max(0.5);
        }
        if keys.just_pressed(KeyCode::BracketRight) {
            *r = (*r * 1.25).min(100_000.0);
        }
    }
}

/// Casts the pointer into the terrain.
fn cast_pointer(cams: Query<(&Camera, &GlobalTransform), With<super::camera::OrbitCamera>>, terrain: Res<EditorTerrain>, mut pointer: ResMut<Pointer>) {
    pointer.hit = None;
    let Some(pos) = pointer.pos else { return };
    let Ok((camera, cam_tf)) = cams.single() else { return };
    // The pointer is in window coordinates; the camera renders into a viewport beside the panel.
    let origin = camera.logical_viewport_rect().map(|r| r.min).unwrap_or(Vec2::ZERO);
    let Ok(ray) = camera.viewport_to_world(cam_tf, pos - origin) else { return };
    let ray = Ray { origin: ray.origin.to_array(), dir: ray.direction.as_vec3().to_array() };
    pointer.hit = raycast(terrain.map(), &ray, f32::INFINITY);
}

fn paint(mut pointer: ResMut<Pointer>, tool: Res<BrushTool>, mut terrain: ResMut<EditorTerrain>, sim: Res<SimState>, mut status: ResMut<StatusLine>) {
    let kind = match pointer.press {
        Press::None => None,
        Press::Tool => Some(tool.params.kind),
        Press::Lower => Some(BrushKind::Lower),
        Press::Smooth => Some(BrushKind::Smooth),
        Press::Flatten => Some(BrushKind::Flatten),
    };
    let job = sim.job.as_ref().map(|j| j.shared.clone());
    // End the stroke when the button is released or the kind changed.
    if pointer.painting.is_some() && pointer.painting != kind {
        pointer.painting = None;
        match &job {
            Some(shared) => shared.edit(JobEdit::End),
            None => {
                let change = terrain.doc.end_stroke();
                terrain.refresh(change);
            }
        }
    }
    let Some(kind) = kind else { return };
    let Some(hit) = pointer.hit else { return };
    if pointer.painting.is_none() {
        let params = BrushParams { kind, flatten_height: None, ..tool.params.clone() };
        if let Err(e) = params.validate() {
            status.error(format!("Brush: {e}"));
            return;
        }
        match &job {
            Some(shared) => shared.edit(JobEdit::Begin(params)),
            None => {
                if let Err(e) = terrain.doc.begin_stroke(params, brush_label(kind)) {
                    status.error(format!("Brush: {e}"));
                    return;
                }
            }
        }
        pointer.painting = Some(kind);
    }
    match &job {
        Some(shared) => shared.edit(JobEdit::Point(hit.grid, pointer.time)),
        None => {
            let change = terrain.doc.stroke_to(hit.grid, pointer.time);
            terrain.refresh(change);
        }
    }
}

/// Undo label of a stroke.
pub fn brush_label(kind: BrushKind) -> &'static str {
    match kind {
        BrushKind::Raise => "Raise stroke",
        BrushKind::Lower => "Lower stroke",
        BrushKind::Smooth => "Smooth stroke",
        BrushKind::Flatten => "Flatten stroke",
    }
}

/// Draws the brush outline on the terrain: a ring following the surface, and a dot at the centre.
/// Off when the View section's brush ring toggle ([`crate::editor::look::OverlayParams::brush_ring`]) is.
fn draw_brush_ring(pointer: Res<Pointer>, tool: Res<BrushTool>, terrain: Res<EditorTerrain>, look: Option<Res<super::Look>>, mut gizmos: Gizmos) {
    if look.is_some_and(|l| !l.0.overlay.brush_ring) {
        return;
    }
    let Some(hit) = pointer.hit else { return };
    let map = terrain.map();
    let c = map.cell_size;
    let r = tool.params.radius;
    let lift = (r * 0.01).max(c * 0.05);
    let color = match pointer.painting {
        Some(BrushKind::Lower) => Color::srgb(0.3, 0.6, 1.0),
        Some(_) => Color::srgb(1.0, 0.55, 0.2),
        None => Color::srgb(1.0, 1.0, 1.0),
    };
    const SEGMENTS: usize = 96;
    let ring = (0..=SEGMENTS).map(|i| {
        let a = i as f32 / SEGMENTS as f32 * std::f32::consts::TAU;
        let (wx, wz) = (hit.world[0] + r * a.cos(), hit.world[2] + r * a.sin());
        let gx = (wx / c).clamp(0.0, (map.width - 1) as f32);
        let gz = (wz / c).clamp(0.0, (map.height - 1) as f32);
        Vec3::new(wx, map.sample(gx, gz) + lift, wz)
    });
    gizmos.linestrip(ring, color);
    let centre = Vec3::from_array(hit.world);
    gizmos.line(centre, centre + Vec3::Y * r * 0.25, color);
}
