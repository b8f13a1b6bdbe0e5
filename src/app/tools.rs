//! Brushes (seeds 003 and 004): the cursor is cast into the heightmap on the CPU
//! ([`crate::core::raycast`]), a ring conforming to the terrain shows the brush under it, and
//! holding a button paints a stroke of evenly spaced dabs ([`crate::core::brush::Stroke`]).
//!
//! Buttons: left applies the panel's tool (raise by default), right lowers (seed 004), Ctrl+left
//! smooths, Shift+left flattens (to the height under the stroke's first dab). `[` and `]` shrink
//! and grow the radius. Alt+left and the middle button belong to the camera. Nothing paints while
//! the pointer is over the panel.
//!
//! The pointer is read from the window's input messages (`WindowEvent::CursorMoved`/`CursorLeft`
//! and the mouse buttons), whether winit wrote them for a real mouse or a script wrote them for
//! its virtual one ([`super::script`]): one path for both. A press counts for the terrain only when
//! it began over the viewport (a drag that starts on the panel never paints), and the pointer is
//! cast into the map by the one window↔terrain conversion in [`super::view`]. Each stroke is one
//! undo step. While a simulation runs, the stroke is sent to the running job instead (see
//! [`super::simulation`]) and shows with its next update. While the loupe's pick mode is armed,
//! [`super::loupe`] takes the press before the brushes see it: that click paints nothing.

use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowEvent};
use bevy_egui::input::EguiWantsInput;

use super::state::SimState;
use super::state::{BrushTool, Pointer, Press, ReadPointer, Sample, ToolSystems};
use super::state::{EditorTerrain, StatusLine};
use crate::core::brush::{BrushKind, BrushParams};
use crate::core::raycast::Hit;
use crate::editor::job::JobEdit;

/// Reads the mouse, casts it into the terrain, paints, and draws the hover ring.
pub struct ToolsPlugin;

impl Plugin for ToolsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<BrushTool>()
            .init_resource::<Pointer>()
            .add_systems(Update, read_pointer.in_set(ReadPointer))
            .add_systems(
                Update,
                (apply_brush_commands, cast_pointer, paint, draw_brush_ring)
                    .chain()
                    .after(ReadPointer)
                    .in_set(ToolSystems),
            );
    }
}

fn button_index(b: MouseButton) -> Option<usize> {
    match b {
        MouseButton::Left => Some(0),
        MouseButton::Right => Some(1),
        MouseButton::Middle => Some(2),
        _ => None,
    }
}

fn read_pointer(
    mut events: MessageReader<WindowEvent>,
    primary: Query<Entity, With<PrimaryWindow>>,
    cams: Query<&Camera, With<super::state::OrbitCamera>>,
    keys: Res<ButtonInput<KeyCode>>,
    egui_input: Res<EguiWantsInput>,
    time: Res<Time<Real>>,
    mut pointer: ResMut<Pointer>,
    mut tool: ResMut<BrushTool>,
    terrain: Res<super::state::EditorTerrain>,
) {
    let window = primary.single().ok();
    let cam = cams.single().ok();
    let over_panel = egui_input.is_pointer_over_area() || egui_input.wants_pointer_input();
    let free = |p: Option<Vec2>| !over_panel && p.zip(cam).is_some_and(|(p, c)| super::view::in_viewport(c, p));
    let p = &mut *pointer;
    let (t0, t1) = (p.time, time.elapsed_secs_f64());
    let mut moments = Vec::new();
    p.motion = Vec2::ZERO;
    for event in events.read() {
        match event {
            WindowEvent::CursorMoved(m) if Some(m.window) == window => {
                let delta = p.cursor.map(|l| m.position - l).unwrap_or(Vec2::ZERO);
                p.motion += delta;
                p.cursor = Some(m.position);
                moments.push((m.position, delta, p.held, p.armed));
            }
            WindowEvent::CursorLeft(m) if Some(m.window) == window => p.cursor = None,
            WindowEvent::MouseButtonInput(m) if Some(m.window) == window => {
                let Some(i) = button_index(m.button) else { continue };
                let down = m.state.is_pressed();
                if down && !p.held.iter().any(|h| *h) {
                    // The first button of a press decides: on the panel, the whole press is its.
                    p.armed = free(p.cursor);
                }
                p.held[i] = down;
                if let Some(c) = p.cursor {
                    moments.push((c, Vec2::ZERO, p.held, p.armed));
                }
                if !p.held.iter().any(|h| *h) {
                    p.armed = false;
                }
            }
            _ => {}
        }
    }
    if moments.is_empty()
        && p.held.iter().any(|h| *h)
        && let Some(c) = p.cursor
    {
        moments.push((c, Vec2::ZERO, p.held, p.armed));
    }
    let n = moments.len().max(1) as f64;
    p.samples = moments
        .into_iter()
        .enumerate()
        .map(|(k, (pos, delta, held, armed))| Sample {
            pos,
            delta,
            held,
            armed,
            time: t0 + (t1 - t0) * (k as f64 + 1.0) / n,
        })
        .collect();
    p.time = t1;
    // While painting, keep painting when the pointer crosses the panel; otherwise the panel wins.
    p.pos = p.cursor.filter(|c| p.painting.is_some() || free(Some(*c)));
    if !egui_input.wants_any_keyboard_input() {
        // The keys step within the radii that suit the map's extent (a cell to half the map); a
        // radius typed in the panel outside that range is left alone until a key moves it.
        let (lo, hi) = super::camera::extent_of(&terrain).brush_radius_range();
        let r = &mut tool.params.radius;
        if keys.just_pressed(KeyCode::BracketLeft) {
            *r = (*r / 1.25).clamp(lo, hi.max(lo));
        }
        if keys.just_pressed(KeyCode::BracketRight) {
            *r = (*r * 1.25).clamp(lo, hi.max(lo));
        }
    }
}

/// What a sample presses on the terrain, with the modifiers held this frame.
fn press_of(s: &Sample, keys: &ButtonInput<KeyCode>) -> Press {
    let alt = keys.any_pressed([KeyCode::AltLeft, KeyCode::AltRight]);
    let ctrl = keys.any_pressed([KeyCode::ControlLeft, KeyCode::ControlRight]);
    let shift = keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    let left = s.held[0] && !alt;
    if !s.armed {
        Press::None
    } else if s.held[1] {
        Press::Lower
    } else if left && ctrl {
        Press::Smooth
    } else if left && shift {
        Press::Flatten
    } else if left {
        Press::Tool
    } else {
        Press::None
    }
}

/// Sets the brush from [`EditorCommand::SetBrush`] (scripts; the panel edits the brush in place).
fn apply_brush_commands(mut commands: MessageReader<super::commands::EditorCommand>, mut tool: ResMut<BrushTool>) {
    for c in commands.read() {
        match c {
            super::commands::EditorCommand::SetBrush(p) => tool.params = p.clone(),
            super::commands::EditorCommand::SetErosionBrush(on) => tool.erode = *on,
            _ => {}
        }
    }
}

/// Casts the pointer into the terrain (the hover ring's point).
fn cast_pointer(
    cams: Query<(&Camera, &GlobalTransform), With<super::state::OrbitCamera>>,
    terrain: Res<EditorTerrain>,
    mut pointer: ResMut<Pointer>,
) {
    let Ok((camera, cam_tf)) = cams.single() else {
        pointer.hit = None;
        return;
    };
    let surface = pointer.surface.as_ref().map_or(terrain.map(), |(_, m)| m);
    pointer.hit = pointer.pos.and_then(|pos| super::view::pick(camera, cam_tf, surface, pos));
}

/// Paints along this frame's samples, in order.
#[allow(clippy::too_many_arguments)]
fn paint(
    mut pointer: ResMut<Pointer>,
    keys: Res<ButtonInput<KeyCode>>,
    cams: Query<(&Camera, &GlobalTransform), With<super::state::OrbitCamera>>,
    tool: Res<BrushTool>,
    mut terrain: ResMut<EditorTerrain>,
    sim: Res<SimState>,
    mut status: ResMut<StatusLine>,
    mut erode: ResMut<super::erosion_brush::ErosionBrush>,
) {
    let cam = cams.single().ok();
    let samples = std::mem::take(&mut pointer.samples);
    erode.pointer = None;
    for s in &samples {
        let press = press_of(s, &keys);
        if tool.erode && press == Press::Tool {
            // The erosion brush: dabs run where the button points (see `erosion_brush`).
            pointer.press = press;
            if pointer.surface.is_none() {
                pointer.surface = Some((press, terrain.map().clone()));
            }
            let surface = pointer.surface.as_ref().map_or(terrain.map(), |(_, m)| m);
            if let Some(hit) = cam.and_then(|(c, tf)| super::view::pick(c, tf, surface, s.pos)) {
                erode.pointer = Some(hit.grid);
            }
            continue;
        }
        pointer.press = press;
        if press == Press::None {
            pointer.surface = None;
        } else if pointer.surface.as_ref().is_none_or(|(p, _)| *p != press) {
            pointer.surface = Some((press, terrain.map().clone()));
        }
        let surface = pointer.surface.as_ref().map_or(terrain.map(), |(_, m)| m);
        let hit = cam.and_then(|(c, tf)| super::view::pick(c, tf, surface, s.pos));
        paint_sample(&mut pointer, press, hit, s.time, &tool, &mut terrain, &sim, &mut status);
    }
    if samples.is_empty() {
        pointer.press = Press::None;
        pointer.surface = None;
        paint_sample(&mut pointer, Press::None, None, 0.0, &tool, &mut terrain, &sim, &mut status);
    }
    pointer.samples = samples;
}

#[allow(clippy::too_many_arguments)]
fn paint_sample(
    pointer: &mut Pointer,
    press: Press,
    hit: Option<Hit>,
    time: f64,
    tool: &BrushTool,
    terrain: &mut EditorTerrain,
    sim: &SimState,
    status: &mut StatusLine,
) {
    let kind = match press {
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
    let Some(hit) = hit else { return };
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
        Some(shared) => shared.edit(JobEdit::Point(hit.grid, time)),
        None => {
            let change = terrain.doc.stroke_to(hit.grid, time);
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
/// Off when the View section's brush ring toggle ([`crate::editor::look::OverlayParams::brush_ring`]) is,
/// and while the loupe's pick mode is armed (a click then picks a spot, [`super::loupe`]).
fn draw_brush_ring(
    pointer: Res<Pointer>,
    tool: Res<BrushTool>,
    terrain: Res<EditorTerrain>,
    look: Option<Res<super::state::Look>>,
    loupe: Option<Res<super::loupe::LoupeState>>,
    mut gizmos: Gizmos,
) {
    if look.is_some_and(|l| !l.0.overlay.brush_ring) || loupe.is_some_and(|l| l.armed) {
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
