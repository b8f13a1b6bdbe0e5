//! Runs a script (see [`crate::editor::script`]) in the real window. Commands (Generate, Simulate,
//! Save, …) become the [`EditorCommand`] a click would send; everything the pointer and keyboard
//! do (strokes, drags, clicks, the wheel, key chords) is written as Bevy's own window input
//! messages — `WindowEvent` plus `CursorMoved`, `MouseButtonInput`, `MouseWheel`,
//! `KeyboardInput`, as `bevy_winit` writes them for a real mouse — so the editor's input systems
//! (the pointer in [`super::tools`], the camera, egui, the shortcuts) read a script exactly as they
//! read a person. No script path writes the pointer or the brushes' state.
//!
//! Waiting actions (generation, simulation, builds, loupes, screenshots, files) hold the script
//! until the editor reports them done. Frame times are recorded from the first frame, split into idle frames and
//! frames during which a simulation streamed, for `FrameReport`. The run ends at `Quit` (or at the
//! end of the list) with exit code 0, or with an error code when any action failed (the status
//! line showed an error), a screenshot did not appear, or the script ran longer than
//! [`SCRIPT_TIMEOUT_S`].

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use bevy::ecs::system::SystemParam;
use bevy::input::ButtonState;
use bevy::input::keyboard::{Key, KeyboardInput};
use bevy::input::mouse::{MouseButtonInput, MouseScrollUnit, MouseWheel};
use bevy::input::touch::TouchPhase;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy::window::{CursorMoved, PrimaryWindow, WindowEvent};

use super::commands::EditorCommand;
use super::generation::GenState;
use super::state::OrbitCamera;
use super::state::SimState;
use super::state::{BrushTool, Pointer};
use super::state::{EditorTerrain, StatusLine};
use super::state::{PanelState, PanelWidth, UiHotspots};
use super::view;
use crate::core::erosion::MapSize;
use crate::editor::script::{Action, ChordKey, FrameReport, FrameSample, MouseKey, parse_chord};

/// Runs the script, if one was given.
pub struct ScriptPlugin;

impl Plugin for ScriptPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ScriptRunner>().add_systems(Update, run_script.before(super::state::ReadPointer));
    }
}

/// Longest a script may run (seconds) before it is stopped as hung.
pub const SCRIPT_TIMEOUT_S: f64 = 1500.0;
/// Cursor samples per stroke segment (grid polyline → window polyline).
const SAMPLES_PER_SEGMENT: usize = 16;
/// Motion events per second of the virtual mouse during a drag (a USB mouse reports at 125 Hz).
const MOUSE_HZ: f64 = 125.0;
/// At most this many virtual moves go out in one frame.
const MAX_MOVES_PER_FRAME: usize = 256;
/// Frames a screenshot may take to appear on disk.
const SHOT_FRAMES: u32 = 300;
/// Longest wait of a screenshot for the view to show the map as it is (background mesh and
/// texture builds, [`super::state::ViewWork`]), seconds of real time; while a simulation streams
/// updates the view may never catch up, and the screenshot is taken then.
const SETTLE_S: f64 = 30.0;

/// `TALUS_SCREENSHOT=path.png`: a one-line script that saves a frame after 60 frames and quits.
pub fn screenshot_script_from_env() -> Option<Vec<Action>> {
    let path = std::env::var_os("TALUS_SCREENSHOT").filter(|p| !p.is_empty()).map(PathBuf::from)?;
    Some(vec![Action::WaitFrames(60), Action::Screenshot(path), Action::Quit])
}

/// One virtual input event.
#[derive(Clone, Debug)]
enum Ev {
    Move(Vec2),
    Button(MouseButton, bool),
    Wheel(f32),
    Key(ChordKey, bool),
}

enum Step {
    Frames(u32),
    Generating,
    /// Runs started before the Simulate command, and frames waited.
    SimulationStarting(u64, u32),
    Simulating,
    Resimulating,
    /// Waiting for the erosion brush's last dab to land.
    Dabbing,
    /// Builds started before the Build command, and frames waited.
    BuildStarting(u64, u32),
    /// Waiting for the running build to end.
    Building,
    /// Loupes started before the Loupe command, and frames waited.
    LoupeStarting(u64, u32),
    /// Waiting for the running loupe to end.
    Looking,
    /// Input events, one group per frame.
    Input(VecDeque<Vec<Ev>>),
    /// A held button moved along `points` (window pixels) over `seconds` of real time.
    Drag {
        button: MouseButton,
        points: Vec<Vec2>,
        seconds: f64,
        start: f64,
        phase: u8,
        sent: f32,
    },
    /// A screenshot waiting for the view to catch up with the map ([`super::state::ViewWork`]), until
    /// the real time `until` at most.
    Settle {
        path: PathBuf,
        until: f64,
    },
    Shot {
        path: PathBuf,
        frames: u32,
    },
    WaitFile(PathBuf),
}

/// The script and where it is.
#[derive(Resource, Default)]
pub struct ScriptRunner {
    actions: VecDeque<Action>,
    active: bool,
    step: Option<Step>,
    frames: Vec<FrameSample>,
    errors_at_start: Option<u32>,
    failures: Vec<String>,
    errors_logged: u32,
    clock: f64,
    /// Where the virtual mouse is (window logical pixels).
    mouse: Option<Vec2>,
}

impl ScriptRunner {
    /// A runner for `script` (`None`: an ordinary interactive session).
    pub fn new(script: Option<Vec<Action>>) -> Self {
        let active = script.is_some();
        Self { actions: script.unwrap_or_default().into(), active, ..Default::default() }
    }
    /// True while a script drives the editor.
    pub fn is_active(&self) -> bool {
        self.active
    }
    fn report(&self, updates_shown: usize) -> FrameReport {
        FrameReport::of(&self.frames, updates_shown)
    }
}

/// Expands a polyline into evenly spaced samples.
fn sample_polyline(points: &[(f32, f32)]) -> Vec<(f32, f32)> {
    let mut out = Vec::new();
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        for k in 0..SAMPLES_PER_SEGMENT {
            let t = k as f32 / SAMPLES_PER_SEGMENT as f32;
            out.push((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
        }
    }
    if let Some(&last) = points.last() {
        out.push(last);
    }
    out
}

/// The point a fraction `u ∈ [0, 1]` of the way along `pts` by arc length.
fn along(pts: &[Vec2], u: f32) -> Vec2 {
    let total: f32 = pts.windows(2).map(|w| w[0].distance(w[1])).sum();
    let mut left = u.clamp(0.0, 1.0) * total;
    for w in pts.windows(2) {
        let d = w[0].distance(w[1]);
        if left <= d && d > 0.0 {
            return w[0].lerp(w[1], left / d);
        }
        left -= d;
    }
    pts.last().copied().unwrap_or(Vec2::ZERO)
}

fn mouse_button(k: MouseKey) -> MouseButton {
    match k {
        MouseKey::Left => MouseButton::Left,
        MouseKey::Right => MouseButton::Right,
        MouseKey::Middle => MouseButton::Middle,
    }
}

/// The key code, logical key and text of a chord key, as winit reports them on a US layout.
fn key_of(k: ChordKey) -> (KeyCode, Key, Option<char>) {
    const LETTERS: [KeyCode; 26] = [
        KeyCode::KeyA,
        KeyCode::KeyB,
        KeyCode::KeyC,
        KeyCode::KeyD,
        KeyCode::KeyE,
        KeyCode::KeyF,
        KeyCode::KeyG,
        KeyCode::KeyH,
        KeyCode::KeyI,
        KeyCode::KeyJ,
        KeyCode::KeyK,
        KeyCode::KeyL,
        KeyCode::KeyM,
        KeyCode::KeyN,
        KeyCode::KeyO,
        KeyCode::KeyP,
        KeyCode::KeyQ,
        KeyCode::KeyR,
        KeyCode::KeyS,
        KeyCode::KeyT,
        KeyCode::KeyU,
        KeyCode::KeyV,
        KeyCode::KeyW,
        KeyCode::KeyX,
        KeyCode::KeyY,
        KeyCode::KeyZ,
    ];
    const DIGITS: [KeyCode; 10] = [
        KeyCode::Digit0,
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
        KeyCode::Digit8,
        KeyCode::Digit9,
    ];
    match k {
        ChordKey::Ctrl => (KeyCode::ControlLeft, Key::Control, None),
        ChordKey::Shift => (KeyCode::ShiftLeft, Key::Shift, None),
        ChordKey::Alt => (KeyCode::AltLeft, Key::Alt, None),
        ChordKey::Escape => (KeyCode::Escape, Key::Escape, None),
        ChordKey::Delete => (KeyCode::Delete, Key::Delete, None),
        ChordKey::Char(c) => {
            let code = match c {
                'a'..='z' => LETTERS[(c as u8 - b'a') as usize],
                '0'..='9' => DIGITS[(c as u8 - b'0') as usize],
                '[' => KeyCode::BracketLeft,
                ']' => KeyCode::BracketRight,
                '-' => KeyCode::Minus,
                '=' => KeyCode::Equal,
                ',' => KeyCode::Comma,
                '.' => KeyCode::Period,
                '/' => KeyCode::Slash,
                _ => KeyCode::Semicolon,
            };
            (code, Key::Character(c.to_string().into()), Some(c))
        }
    }
}

/// Writes virtual input as `bevy_winit` writes a real device's: the specific message and the same
/// event in the ordered `WindowEvent` stream (egui reads the latter).
#[derive(SystemParam)]
struct VirtualInput<'w, 's> {
    window: Query<'w, 's, Entity, With<PrimaryWindow>>,
    events: MessageWriter<'w, WindowEvent>,
    moved: MessageWriter<'w, CursorMoved>,
    buttons: MessageWriter<'w, MouseButtonInput>,
    wheel: MessageWriter<'w, MouseWheel>,
    keys: MessageWriter<'w, KeyboardInput>,
}

impl VirtualInput<'_, '_> {
    /// Sends `ev`; `mouse` is the virtual mouse position, updated by moves. False without a window.
    fn send(&mut self, ev: &Ev, mouse: &mut Option<Vec2>, held: &[ChordKey]) -> bool {
        let Ok(window) = self.window.single() else { return false };
        match *ev {
            Ev::Move(p) => {
                let m = CursorMoved { window, position: p, delta: mouse.map(|l| p - l) };
                *mouse = Some(p);
                self.moved.write(m.clone());
                self.events.write(WindowEvent::CursorMoved(m));
            }
            Ev::Button(button, down) => {
                let state = if down { ButtonState::Pressed } else { ButtonState::Released };
                let m = MouseButtonInput { button, state, window };
                self.buttons.write(m);
                self.events.write(WindowEvent::MouseButtonInput(m));
            }
            Ev::Wheel(lines) => {
                let m = MouseWheel { unit: MouseScrollUnit::Line, x: 0.0, y: lines, window, phase: TouchPhase::Moved };
                self.wheel.write(m);
                self.events.write(WindowEvent::MouseWheel(m));
            }
            Ev::Key(k, down) => {
                let (key_code, logical_key, ch) = key_of(k);
                // Like a keyboard: no text while Ctrl or Alt is held.
                let plain = !held.iter().any(|h| matches!(h, ChordKey::Ctrl | ChordKey::Alt));
                let text = ch.filter(|_| down && plain).map(|c| c.to_string().into());
                let state = if down { ButtonState::Pressed } else { ButtonState::Released };
                let m = KeyboardInput { key_code, logical_key, state, text, repeat: false, window };
                self.keys.write(m.clone());
                self.events.write(WindowEvent::KeyboardInput(m));
            }
        }
        true
    }
}

/// What the script reads of the editor's state.
#[derive(SystemParam)]
struct Editor<'w> {
    gen_state: Res<'w, GenState>,
    sim: Res<'w, SimState>,
    status: Res<'w, StatusLine>,
    panel: ResMut<'w, PanelState>,
    terrain: Res<'w, EditorTerrain>,
    look: ResMut<'w, super::state::Look>,
    resim: Res<'w, super::layers::ResimState>,
    erosion: Res<'w, super::erosion_brush::ErosionBrush>,
    build: Res<'w, super::build_dialog::BuildDialog>,
    build_choices: Res<'w, super::state::BuildChoices>,
    loupe: Res<'w, super::loupe::LoupeState>,
}

/// What the script reads of the view, for projecting strokes and the view report.
#[derive(SystemParam)]
struct View<'w, 's> {
    windows: Query<'w, 's, &'static Window, With<PrimaryWindow>>,
    cams: Query<'w, 's, (&'static Camera, &'static GlobalTransform), With<OrbitCamera>>,
    orbits: Query<'w, 's, &'static mut OrbitCamera>,
    panel_width: Res<'w, PanelWidth>,
    hotspots: Res<'w, UiHotspots>,
    pointer: Res<'w, Pointer>,
    tool: Res<'w, BrushTool>,
    offscreen: Option<Res<'w, super::offscreen::OffscreenTarget>>,
    work: Option<Res<'w, super::state::ViewWork>>,
}

/// Asks for a screenshot of the frame (the window's, or the off-screen image) into `path`.
fn screenshot(commands: &mut Commands, view: &View, path: PathBuf) -> Step {
    let shot = match &view.offscreen {
        Some(t) => Screenshot::image(t.0.clone()),
        None => Screenshot::primary_window(),
    };
    commands.spawn(shot).observe(save_to_disk(path.clone()));
    Step::Shot { path, frames: 0 }
}

fn run_script(
    mut runner: ResMut<ScriptRunner>,
    time: Res<Time<Real>>,
    mut out: MessageWriter<EditorCommand>,
    mut exit: MessageWriter<AppExit>,
    mut commands: Commands,
    mut ed: Editor,
    mut view: View,
    mut input: VirtualInput,
) {
    if !runner.active {
        return;
    }
    let runner = &mut *runner;
    let status = &*ed.status;
    let errors_at_start = *runner.errors_at_start.get_or_insert(status.errors);
    let shown = view.work.as_deref().copied().unwrap_or_default();
    runner.frames.push(FrameSample {
        ms: time.delta_secs_f64() * 1e3,
        simulating: ed.sim.running(),
        meshes_shown: shown.meshes_shown,
        texels_shown: shown.texels_shown,
    });
    if status.errors > errors_at_start + runner.errors_logged {
        runner.errors_logged = status.errors - errors_at_start;
        runner.failures.push(status.text.clone());
    }
    runner.clock += time.delta_secs_f64();
    if runner.clock > SCRIPT_TIMEOUT_S {
        error!("script: timed out after {SCRIPT_TIMEOUT_S} s");
        exit.write(AppExit::from_code(3));
        runner.active = false;
        return;
    }
    let now = time.elapsed_secs_f64();
    // Advance the current step; `None` afterwards means it is done.
    if let Some(step) = runner.step.take() {
        runner.step = match step {
            Step::Frames(n) => (n > 1).then_some(Step::Frames(n - 1)),
            Step::Generating => ed.gen_state.busy().then_some(Step::Generating),
            Step::SimulationStarting(before, n) => {
                if ed.sim.started > before {
                    None
                } else if n > 3 {
                    runner.failures.push("a simulation did not start".into());
                    None
                } else {
                    Some(Step::SimulationStarting(before, n + 1))
                }
            }
            Step::Simulating => ed.sim.running().then_some(Step::Simulating),
            Step::Dabbing => ed.erosion.active().then_some(Step::Dabbing),
            Step::BuildStarting(before, n) => {
                if ed.build.started > before {
                    None
                } else if n > 3 {
                    runner.failures.push("the build did not start".into());
                    None
                } else {
                    Some(Step::BuildStarting(before, n + 1))
                }
            }
            Step::Building => {
                if ed.build.running() {
                    Some(Step::Building)
                } else {
                    if let Some(e) = &ed.build.last_error {
                        runner.failures.push(format!("the build failed: {e}"));
                    }
                    None
                }
            }
            Step::LoupeStarting(before, n) => {
                if ed.loupe.started > before {
                    Some(Step::Looking)
                } else if n > 3 {
                    runner.failures.push("the loupe did not start".into());
                    None
                } else {
                    Some(Step::LoupeStarting(before, n + 1))
                }
            }
            Step::Looking => {
                if ed.loupe.running() {
                    Some(Step::Looking)
                } else {
                    if let Some(e) = &ed.loupe.last_error {
                        runner.failures.push(format!("the loupe failed: {e}"));
                    }
                    None
                }
            }
            Step::Resimulating => {
                let busy = ed.gen_state.busy() || ed.resim.active(ed.terrain.doc.has_stale());
                busy.then_some(Step::Resimulating)
            }
            Step::Input(mut frames) => {
                let group = frames.pop_front().unwrap_or_default();
                let mut held = Vec::new();
                for ev in &group {
                    if let Ev::Key(k, true) = ev {
                        held.push(*k);
                    }
                    if !input.send(ev, &mut runner.mouse, &held) {
                        runner.failures.push("no window to send input to".into());
                    }
                }
                (!frames.is_empty()).then_some(Step::Input(frames))
            }
            Step::Drag { button, points, seconds, start, phase, sent } => {
                let mouse = &mut runner.mouse;
                match phase {
                    0 => {
                        input.send(&Ev::Move(points[0]), mouse, &[]);
                        Some(Step::Drag { button, points, seconds, start, phase: 1, sent })
                    }
                    1 => {
                        // Again with the press, in order, should a real pointer event have come
                        // in between.
                        input.send(&Ev::Move(points[0]), mouse, &[]);
                        input.send(&Ev::Button(button, true), mouse, &[]);
                        Some(Step::Drag { button, points, seconds, start: now, phase: 2, sent: 0.0 })
                    }
                    2 => {
                        // A mouse reports its motion at its own rate, whatever the frame rate:
                        // every moment since the last frame goes out, so a slow frame carries
                        // many moves (as winit delivers them) and the stroke keeps its shape
                        // instead of cutting a chord between two frames' positions.
                        let u = if seconds > 0.0 { ((now - start) / seconds).min(1.0) as f32 } else { 1.0 };
                        let du = if seconds > 0.0 { (1.0 / (MOUSE_HZ * seconds)) as f32 } else { 1.0 };
                        let n = (((u - sent) / du).ceil().max(1.0) as usize).min(MAX_MOVES_PER_FRAME);
                        for k in 1..=n {
                            let uk = sent + (u - sent) * k as f32 / n as f32;
                            input.send(&Ev::Move(along(&points, uk)), mouse, &[]);
                        }
                        Some(Step::Drag {
                            button,
                            points,
                            seconds,
                            start,
                            phase: if u >= 1.0 { 3 } else { 2 },
                            sent: u,
                        })
                    }
                    _ => {
                        input.send(&Ev::Button(button, false), mouse, &[]);
                        None
                    }
                }
            }
            Step::Shot { path, frames } => {
                let ok = std::fs::metadata(&path).is_ok_and(|m| m.len() > 0);
                if ok {
                    None
                } else if frames > SHOT_FRAMES {
                    runner.failures.push(format!("screenshot {} did not appear", path.display()));
                    None
                } else {
                    Some(Step::Shot { path, frames: frames + 1 })
                }
            }
            Step::Settle { path, until } => {
                if view.work.as_ref().is_some_and(|w| w.busy()) && now < until {
                    Some(Step::Settle { path, until })
                } else {
                    Some(screenshot(&mut commands, &view, path))
                }
            }
            Step::WaitFile(path) => (!path.exists()).then_some(Step::WaitFile(path)),
        };
        if runner.step.is_some() {
            return;
        }
    }
    let Some(action) = runner.actions.pop_front() else {
        runner.active = false;
        finish(runner, ed.status.errors - errors_at_start, &mut exit);
        return;
    };
    info!("script: {action:?}");
    let click = |p: Vec2| {
        Step::Input(VecDeque::from([
            vec![Ev::Move(p)],
            vec![Ev::Button(MouseButton::Left, true)],
            vec![Ev::Button(MouseButton::Left, false)],
        ]))
    };
    runner.step = match action {
        Action::Generate(p) => {
            out.write(EditorCommand::Generate(p));
            Some(Step::Generating)
        }
        Action::Open(p) => {
            out.write(EditorCommand::Open(p));
            Some(Step::Frames(2))
        }
        Action::Import(p) => {
            out.write(EditorCommand::Import(p));
            Some(Step::Frames(2))
        }
        Action::Export(path) => {
            out.write(EditorCommand::Export {
                path,
                unreal: ed.panel.export_unreal,
                decimate: ed.panel.export_decimate,
            });
            Some(Step::Frames(2))
        }
        Action::Stroke { tool: kind, radius, strength, points, seconds } => {
            let params = crate::core::brush::BrushParams { kind, radius, strength, ..view.tool.params.clone() };
            out.write(EditorCommand::SetBrush(params));
            // Grid nodes → window pixels through the camera as it is now (it does not move while
            // the button is held).
            let map = ed.terrain.map();
            let window: Option<Vec<Vec2>> = view.cams.single().ok().and_then(|(cam, tf)| {
                sample_polyline(&points)
                    .iter()
                    .map(|&(x, y)| view::grid_to_window(cam, tf, map, x, y).filter(|p| view::in_viewport(cam, *p)))
                    .collect()
            });
            match window {
                Some(points) if !points.is_empty() => Some(Step::Drag {
                    button: MouseButton::Left,
                    points,
                    seconds: seconds.max(0.0) as f64,
                    start: now,
                    phase: 0,
                    sent: 0.0,
                }),
                _ => {
                    runner.failures.push(format!("stroke {points:?} is not all in the view"));
                    None
                }
            }
        }
        Action::Simulate { mut model, seed } => {
            // As a user does: the model is chosen in the Erosion section (where the erosion brush
            // reads it too), then Simulate. A script written in grid units (version 1) meant the
            // map it runs on.
            model.upgrade_units(MapSize::of(ed.terrain.map()));
            let i = model.index();
            ed.panel.models[i] = model.clone();
            ed.panel.model = i;
            out.write(EditorCommand::Simulate { model, boundary: ed.panel.boundary, seed, backend: ed.panel.backend });
            Some(Step::SimulationStarting(ed.sim.started, 0))
        }
        Action::WaitSimulation => Some(Step::Simulating),
        Action::Continue(id) => {
            out.write(EditorCommand::ContinueRun(id));
            Some(Step::SimulationStarting(ed.sim.started, 0))
        }
        Action::Pause(p) => {
            out.write(EditorCommand::SetPaused(p));
            Some(Step::Frames(1))
        }
        Action::Cancel => {
            out.write(EditorCommand::CancelSimulation);
            Some(Step::Frames(1))
        }
        Action::Undo => {
            out.write(EditorCommand::Undo);
            Some(Step::Frames(1))
        }
        Action::Redo => {
            out.write(EditorCommand::Redo);
            Some(Step::Frames(1))
        }
        Action::Save(p) => {
            out.write(EditorCommand::SaveAs(p));
            Some(Step::Frames(2))
        }
        Action::Screenshot(path) => {
            let _ = std::fs::remove_file(&path);
            Some(Step::Settle { path, until: now + SETTLE_S })
        }
        Action::WaitFrames(n) => Some(Step::Frames(n.max(1))),
        Action::Look(l) => {
            ed.look.0 = *l;
            Some(Step::Frames(2))
        }
        Action::Camera { yaw, pitch, zoom } => {
            let aspect = view.cams.single().map_or(16.0 / 9.0, |(cam, _)| super::camera::view_aspect(cam));
            for mut orbit in &mut view.orbits {
                orbit.frame_from(&ed.terrain, yaw, pitch, aspect);
                orbit.distance *= if zoom.is_finite() && zoom > 0.0 { zoom } else { 1.0 };
            }
            Some(Step::Frames(2))
        }
        Action::FrameReport(path) => {
            let report = runner.report(ed.sim.updates_shown);
            let text = serde_json::to_string_pretty(&report).unwrap_or_default();
            if let Err(e) = std::fs::write(&path, text) {
                runner.failures.push(format!("frame report {}: {e}", path.display()));
            }
            None
        }
        Action::Quit => {
            runner.active = false;
            finish(runner, ed.status.errors - errors_at_start, &mut exit);
            None
        }
        Action::MouseMove(x, y) => Some(Step::Input(VecDeque::from([vec![Ev::Move(Vec2::new(x, y))]]))),
        Action::Button(b, down) => Some(Step::Input(VecDeque::from([vec![Ev::Button(mouse_button(b), down)]]))),
        Action::Click(x, y) => Some(click(Vec2::new(x, y))),
        Action::ClickButton(name) => match view.hotspots.0.get(&name) {
            Some(r) => Some(click(Vec2::new((r[0] + r[2]) * 0.5, (r[1] + r[3]) * 0.5))),
            None => {
                runner.failures.push(format!("no panel button {name:?} is shown"));
                None
            }
        },
        Action::Drag { button, points, seconds } => {
            let points: Vec<Vec2> = points.iter().map(|&(x, y)| Vec2::new(x, y)).collect();
            if points.is_empty() {
                runner.failures.push("a drag needs at least one point".into());
                None
            } else {
                Some(Step::Drag {
                    button: mouse_button(button),
                    points,
                    seconds: seconds.max(0.0) as f64,
                    start: now,
                    phase: 0,
                    sent: 0.0,
                })
            }
        }
        Action::Wheel(lines) => Some(Step::Input(VecDeque::from([vec![Ev::Wheel(lines)]]))),
        Action::Keys(chord) => match parse_chord(&chord) {
            Ok(keys) => {
                let down = keys.iter().map(|k| Ev::Key(*k, true)).collect();
                let up = keys.iter().rev().map(|k| Ev::Key(*k, false)).collect();
                Some(Step::Input(VecDeque::from([down, up])))
            }
            Err(e) => {
                runner.failures.push(e);
                None
            }
        },
        Action::WaitFile(path) => Some(Step::WaitFile(path)),
        Action::WaitGeneration => Some(Step::Generating),
        Action::Layer(op) => {
            out.write(EditorCommand::Layer(op));
            Some(Step::Frames(2))
        }
        Action::AutoResimulate(a) => {
            out.write(EditorCommand::SetAutoResimulate(a));
            Some(Step::Frames(1))
        }
        Action::Resimulate => {
            out.write(EditorCommand::Resimulate);
            Some(Step::Frames(2))
        }
        Action::WaitResimulation => Some(Step::Resimulating),
        Action::ErosionBrush(on) => {
            out.write(EditorCommand::SetErosionBrush(on));
            Some(Step::Frames(1))
        }
        Action::WaitDabs => Some(Step::Dabbing),
        Action::OpenBuildDialog => {
            out.write(EditorCommand::OpenBuildDialog);
            Some(Step::Frames(2))
        }
        Action::Build(req) => {
            // The dialog's Build button sends the same command with the dialog's request.
            out.write(EditorCommand::Build(req));
            Some(Step::BuildStarting(ed.build.started, 0))
        }
        Action::WaitBuild => Some(Step::Building),
        Action::Loupe(req) => {
            // A pick on the terrain sends the same command with the spot under the pointer.
            out.write(EditorCommand::Loupe(req));
            Some(Step::LoupeStarting(ed.loupe.started, 0))
        }
        Action::WaitLoupe => Some(Step::Looking),
        Action::ViewReport { path, since } => {
            match view_report(&ed, &view, since.as_deref()) {
                Ok(report) => {
                    let tmp = path.with_extension("json.tmp");
                    let text = serde_json::to_string(&report).unwrap_or_default();
                    if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path)) {
                        runner.failures.push(format!("view report {}: {e}", path.display()));
                    }
                }
                Err(e) => runner.failures.push(e),
            }
            None
        }
    };
}

/// What the editor sees, for [`Action::ViewReport`]: positions are window logical pixels.
fn view_report(ed: &Editor, view: &View, since: Option<&Path>) -> Result<serde_json::Value, String> {
    use serde_json::json;
    let window = view.windows.single().map_err(|e| format!("view report: no window ({e})"))?;
    let (cam, tf) = view.cams.single().map_err(|e| format!("view report: no camera ({e})"))?;
    let map = ed.terrain.map();
    let rect = cam.logical_viewport_rect();
    let orbit = view.orbits.iter().next().map(|o| json!({ "yaw": o.yaw, "pitch": o.pitch, "distance": o.distance }));
    let r = view.tool.params.radius;
    let ring = view.pointer.hit.map(|h| {
        let c = Vec3::from_array(h.world);
        let centre = view::world_to_window(cam, tf, c);
        // The ring's screen radius: the farthest of four rim points from the projected centre.
        let rim = [Vec3::X, Vec3::Z, -Vec3::X, -Vec3::Z]
            .iter()
            .filter_map(|d| {
                let p = c + *d * r;
                let g = (p.x / map.cell_size, p.z / map.cell_size);
                view::grid_to_window(cam, tf, map, g.0, g.1)
            })
            .filter_map(|p| centre.map(|c| p.distance(c)))
            .fold(0.0f32, f32::max);
        json!({ "world": h.world, "grid": h.grid, "centre": centre.map(|v| [v.x, v.y]), "radius_px": rim })
    });
    let mut changed = Vec::new();
    if let Some(path) = since {
        let before = crate::core::io::bhef::load(path).map_err(|e| format!("view report: {}: {e}", path.display()))?;
        if (before.width, before.height) != (map.width, map.height) {
            return Err(format!(
                "view report: {} is {}×{}, the map {}×{}",
                path.display(),
                before.width,
                before.height,
                map.width,
                map.height
            ));
        }
        for y in 0..map.height {
            for x in 0..map.width {
                let dh = map.get(x, y) - before.get(x, y);
                if dh != 0.0 {
                    let w = view::grid_to_window(cam, tf, map, x as f32, y as f32).map(|v| [v.x, v.y]);
                    changed.push(json!([x, y, dh, w]));
                }
            }
        }
    }
    let h = ed.terrain.doc.history();
    // The Generator section's parameters (what the panel shows and Generate sends), and the
    // document's base: its generator's, or what it is.
    let base = match &ed.terrain.doc.stack().base.source {
        crate::editor::layers::BaseSource::Generator(p) => json!({ "generator": p }),
        other => json!({ "heights": other.describe() }),
    };
    let mut loupe = ed.loupe.report();
    if let Some(c) = ed.loupe.shown_centre() {
        // Where the loupe's spot appears in the window (the pick's inverse, through Bevy's
        // `world_to_viewport`).
        let w = view::grid_to_window(cam, tf, map, c[0] / map.cell_size, c[1] / map.cell_size);
        loupe["centre_window"] = json!(w.map(|v| [v.x, v.y]));
    }
    Ok(json!({
        "window": { "logical": [window.width(), window.height()], "physical": [window.physical_width(), window.physical_height()], "scale_factor": window.scale_factor() },
        "viewport": rect.map(|r| [r.min.x, r.min.y, r.max.x, r.max.y]),
        "panel_width": view.panel_width.0,
        "buttons": view.hotspots.0,
        "cursor": view.pointer.cursor.map(|v| [v.x, v.y]),
        "pointer_on_terrain": view.pointer.pos.map(|v| [v.x, v.y]),
        "brush": { "kind": format!("{:?}", view.tool.params.kind), "radius": r, "strength": view.tool.params.strength },
        "ring": ring,
        "camera": orbit,
        "map": { "width": map.width, "height": map.height, "cell_size": map.cell_size, "revision": ed.terrain.doc.revision() },
        "undo": h.undo_len(),
        "redo": h.redo_len(),
        "generations": ed.gen_state.finished,
        "simulations_started": ed.sim.started,
        "simulating": ed.sim.running(),
        "build": ed.build.report(&ed.build_choices),
        "loupe": loupe,
        "status": ed.status.text,
        "generator": ed.panel.generator,
        "base": base,
        "changed": changed,
    }))
}

fn finish(runner: &mut ScriptRunner, new_errors: u32, exit: &mut MessageWriter<AppExit>) {
    if new_errors > 0 || !runner.failures.is_empty() {
        for f in &runner.failures {
            error!("script: {f}");
        }
        error!("script: {new_errors} errors shown in the status line");
        exit.write(AppExit::from_code(2));
    } else {
        exit.write(AppExit::Success);
    }
}
