//! Runs a script (see [`crate::editor::script`]) in the real window: each action becomes the
//! [`EditorCommand`] a click would send, or, for strokes, a virtual cursor in the [`Pointer`] the
//! brush reads, so scripted sessions exercise the same systems as a user.
//!
//! Waiting actions (generation, simulation, screenshots) hold the script until the editor reports
//! them done. Frame times are recorded from the first frame, split into idle frames and frames
//! during which a simulation streamed, for `FrameReport`. The run ends at `Quit` (or at the end of
//! the list) with exit code 0, or with an error code when any action failed (the status line
//! showed an error), a screenshot did not appear, or the script ran longer than
//! [`SCRIPT_TIMEOUT_S`].

use std::collections::VecDeque;
use std::path::PathBuf;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};

use super::commands::EditorCommand;
use super::generation::GenState;
use super::simulation::SimState;
use super::tools::{BrushTool, Press, Pointer};
use super::ui::PanelState;
use super::{EditorTerrain, StatusLine};
use crate::editor::script::{Action, FrameReport, FrameStats};

/// Runs the script, if one was given.
pub struct ScriptPlugin;

impl Plugin for ScriptPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ScriptRunner>().add_systems(Update, run_script.before(super::tools::ToolSystems));
    }
}

/// Longest a script may run (seconds) before it is stopped as hung.
pub const SCRIPT_TIMEOUT_S: f64 = 1500.0;
/// Cursor samples per stroke segment.
const SAMPLES_PER_SEGMENT: usize = 6;
/// Frames a screenshot may take to appear on disk.
const SHOT_FRAMES: u32 = 300;

/// `TALUS_SCREENSHOT=path.png`: a one-line script that saves a frame after 60 frames and quits.
pub fn screenshot_script_from_env() -> Option<Vec<Action>> {
    let path = std::env::var_os("TALUS_SCREENSHOT").filter(|p| !p.is_empty()).map(PathBuf::from)?;
    Some(vec![Action::WaitFrames(60), Action::Screenshot(path), Action::Quit])
}

enum Step {
    Frames(u32),
    Generating,
    /// Runs started before the Simulate command, and frames waited.
    SimulationStarting(u64, u32),
    Simulating,
    Stroke { points: Vec<(f32, f32)>, i: usize, t0: f64, dt: f64 },
    Shot { path: PathBuf, frames: u32 },
}

/// The script and where it is.
#[derive(Resource, Default)]
pub struct ScriptRunner {
    actions: VecDeque<Action>,
    active: bool,
    step: Option<Step>,
    frames: Vec<(f64, bool)>,
    errors_at_start: Option<u32>,
    failures: Vec<String>,
    errors_logged: u32,
    clock: f64,
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
        // The first frames compile pipelines and upload the map: not representative.
        let steady: Vec<_> = self.frames.iter().skip(30).collect();
        let idle: Vec<f64> = steady.iter().filter(|f| !f.1).map(|f| f.0).collect();
        let sim: Vec<f64> = steady.iter().filter(|f| f.1).map(|f| f.0).collect();
        FrameReport { idle: FrameStats::of(&idle), simulating: FrameStats::of(&sim), updates_shown }
    }
}

/// Expands a polyline into evenly spaced cursor samples.
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

#[allow(clippy::too_many_arguments)]
fn run_script(
    mut runner: ResMut<ScriptRunner>,
    time: Res<Time<Real>>,
    mut out: MessageWriter<EditorCommand>,
    mut exit: MessageWriter<AppExit>,
    mut commands: Commands,
    gen_state: Res<GenState>,
    sim: Res<SimState>,
    status: Res<StatusLine>,
    panel: Res<PanelState>,
    terrain: Res<EditorTerrain>,
    mut pointer: ResMut<Pointer>,
    mut tool: ResMut<BrushTool>,
    cams: Query<(&Camera, &GlobalTransform), With<super::camera::OrbitCamera>>,
    mut orbits: Query<&mut super::camera::OrbitCamera>,
    mut look: ResMut<super::Look>,
) {
    if !runner.active {
        return;
    }
    let runner = &mut *runner;
    let errors_at_start = *runner.errors_at_start.get_or_insert(status.errors);
    runner.frames.push((time.delta_secs_f64() * 1e3, sim.running()));
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
    // Advance the current step; `None` afterwards means it is done.
    if let Some(step) = runner.step.take() {
        runner.step = match step {
            Step::Frames(n) => (n > 1).then_some(Step::Frames(n - 1)),
            Step::Generating => gen_state.busy().then_some(Step::Generating),
            Step::SimulationStarting(before, n) => {
                if sim.started > before {
                    None
                } else if n > 3 {
                    runner.failures.push("a simulation did not start".into());
                    None
                } else {
                    Some(Step::SimulationStarting(before, n + 1))
                }
            }
            Step::Simulating => sim.running().then_some(Step::Simulating),
            Step::Stroke { points, i, t0, dt } => {
                if i < points.len() {
                    let (x, y) = points[i];
                    let map = terrain.map();
                    let gx = x.clamp(0.0, (map.width - 1) as f32);
                    let gy = y.clamp(0.0, (map.height - 1) as f32);
                    let world = Vec3::new(gx * map.cell_size, map.sample(gx, gy), gy * map.cell_size);
                    pointer.pos = cams.single().ok().and_then(|(cam, tf)| {
                        let origin = cam.logical_viewport_rect().map(|r| r.min).unwrap_or(Vec2::ZERO);
                        cam.world_to_viewport(tf, world).ok().map(|v| v + origin)
                    });
                    if pointer.pos.is_none() {
                        runner.failures.push(format!("stroke point ({x}, {y}) is not on screen"));
                    }
                    pointer.press = Press::Tool;
                    pointer.time = t0 + i as f64 * dt;
                    Some(Step::Stroke { points, i: i + 1, t0, dt })
                } else {
                    // Release: the brush ends the stroke this frame.
                    pointer.press = Press::None;
                    pointer.time = t0 + i as f64 * dt;
                    pointer.scripted = false;
                    None
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
        };
        if runner.step.is_some() {
            return;
        }
    }
    let Some(action) = runner.actions.pop_front() else {
        runner.active = false;
        finish(runner, status.errors - errors_at_start, &mut exit);
        return;
    };
    info!("script: {action:?}");
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
            out.write(EditorCommand::Export { path, unreal: panel.export_unreal, decimate: panel.export_decimate });
            Some(Step::Frames(2))
        }
        Action::Stroke { tool: kind, radius, strength, points, seconds } => {
            tool.params.kind = kind;
            tool.params.radius = radius;
            tool.params.strength = strength;
            let points = sample_polyline(&points);
            let dt = if points.len() > 1 { seconds.max(0.0) as f64 / (points.len() - 1) as f64 } else { 0.0 };
            pointer.scripted = true;
            pointer.press = Press::None;
            // Strokes start on a fresh clock, after any earlier one.
            let t0 = pointer.time + 1.0;
            Some(Step::Stroke { points, i: 0, t0, dt })
        }
        Action::Simulate { model, seed } => {
            out.write(EditorCommand::Simulate { model, boundary: panel.boundary, seed, backend: panel.backend });
            Some(Step::SimulationStarting(sim.started, 0))
        }
        Action::WaitSimulation => Some(Step::Simulating),
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
            commands.spawn(Screenshot::primary_window()).observe(save_to_disk(path.clone()));
            Some(Step::Shot { path, frames: 0 })
        }
        Action::WaitFrames(n) => Some(Step::Frames(n.max(1))),
        Action::Look(l) => {
            look.0 = l;
            Some(Step::Frames(2))
        }
        Action::Camera { yaw, pitch, zoom } => {
            for mut orbit in &mut orbits {
                orbit.frame(&terrain);
                orbit.yaw = yaw;
                orbit.pitch = pitch.clamp(0.03, 1.55);
                orbit.distance *= if zoom.is_finite() && zoom > 0.0 { zoom } else { 1.0 };
            }
            Some(Step::Frames(2))
        }
        Action::FrameReport(path) => {
            let report = runner.report(sim.updates_shown);
            let text = serde_json::to_string_pretty(&report).unwrap_or_default();
            if let Err(e) = std::fs::write(&path, text) {
                runner.failures.push(format!("frame report {}: {e}", path.display()));
            }
            None
        }
        Action::Quit => {
            runner.active = false;
            finish(runner, status.errors - errors_at_start, &mut exit);
            None
        }
    };
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
