//! Simulate: runs an erosion model from `core::erosion` on Bevy's `AsyncComputeTaskPool` and
//! streams its state into the mesh.
//!
//! [`EditorCommand::Simulate`] builds the job from the current map with
//! [`crate::editor::simulate::prepare_run`] (the map at that moment is kept as the run's *base*;
//! this system only gathers the panel's choices and spawns the job) and runs [`run_job_on`] on a worker, with a thread pool of all cores
//! but one so the window keeps a core to draw with (results are the same at any thread count). Every frame
//! [`show_simulation_updates`] takes the newest update (published about ten times a second) and
//! shows it: only chunks whose heights changed are re-meshed, so the frame stays short. Pause and
//! Cancel set flags the worker reads between steps (a step is a few milliseconds on the maps the
//! editor opens), so Cancel takes effect within a frame or two and leaves the terrain of the last
//! whole step. When the run ends (finished or cancelled) its result becomes a new erosion layer
//! (one undo step) holding the run's recipe; a cancelled run's recipe asks for the work it did.
//!
//! Every run records its timeline ([`crate::editor::timeline`]) on the worker; the erosion layer
//! it becomes keeps it, so the Layers section can scrub it. [`EditorCommand::ContinueRun`] runs a
//! layer on from the frame it shows ([`Resumed`]: the recipe caught up to that frame, then on) and
//! installs the result in the same layer as one undo step.
//!
//! The run's notes (a GPU that failed mid-run and the CPU that went on; see
//! `crate::gpu::fallback`) arrive with the updates: each new one is shown in the status line
//! as it comes, the newest stays under the books in the Erosion section, and the end-of-run
//! message repeats it.
//!
//! Painting during a run is applied to the running job (see [`crate::editor::job`]): the stroke
//! reaches the job's own map between two steps and shows with the next update; it is part of the
//! run's undo step.

use std::sync::Arc;

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;

use super::commands::EditorCommand;
use super::fields::SimFields;
use super::state::{EditorTerrain, StatusLine};
use super::state::{RunningJob, SimState};
use crate::core::erosion::{Ledger, MapSize, Progress};
use crate::editor::job::{JobEnd, JobShared, run_job_on, simulation_threads};
use crate::editor::simulate::{RunRequest, prepare_run};
use crate::editor::timeline::resume::Resumed;
use crate::editor::timeline::{DEFAULT_BUDGET, Timeline};

/// Starts, streams, pauses and cancels simulations.
pub struct SimulationPlugin;

impl Plugin for SimulationPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<SimState>().add_systems(Update, (start_simulation, show_simulation_updates).chain());
    }
}

impl SimState {
    /// True while a run is in progress.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }
    /// True while the running job is paused.
    pub fn paused(&self) -> bool {
        self.job.as_ref().is_some_and(|j| j.shared.is_paused())
    }
}

fn start_simulation(
    mut cmds: MessageReader<EditorCommand>,
    mut sim: ResMut<SimState>,
    mut terrain: ResMut<EditorTerrain>,
    mut status: ResMut<StatusLine>,
    mut fields: ResMut<SimFields>,
    panel: Option<Res<super::state::PanelState>>,
    look: Option<Res<super::state::Look>>,
) {
    for cmd in cmds.read() {
        match cmd {
            EditorCommand::Simulate { model, boundary, seed, backend } => {
                if sim.running() {
                    status.error("Simulate: a simulation is already running");
                    continue;
                }
                let req = RunRequest {
                    model,
                    boundary: *boundary,
                    seed: *seed,
                    backend: *backend,
                    hardness: panel.as_deref().map(|p| &p.hardness),
                    sea_level: look.as_deref().map(super::state::sea_level).unwrap_or(0.0),
                    steer: panel.as_deref().and_then(|p| p.steer.spec()),
                };
                let (change, run) = prepare_run(&mut terrain.doc, &req);
                terrain.refresh(change);
                match run {
                    Ok(run) => {
                        let timeline = Timeline::new(&run.base, run.job.progress().total, DEFAULT_BUDGET);
                        fields.hardness = run.hardness;
                        status.info(format!("{}: running on {}", run.label, run.used));
                        sim.backend_used = run.used.to_string();
                        let job = RunningJob {
                            shared: Arc::new(JobShared::default()),
                            base: run.base,
                            label: run.label.to_string(),
                            recipe: run.recipe,
                            continues: None,
                        };
                        spawn(&mut sim, job, run.job, timeline);
                    }
                    Err(e) => status.error(format!("Simulate: {e}")),
                }
            }
            EditorCommand::ContinueRun(id) => {
                if sim.running() {
                    status.error("Continue: a simulation is already running");
                    continue;
                }
                let change = terrain.doc.end_stroke();
                terrain.refresh(change);
                let Some(c) = terrain.doc.continue_job(*id) else {
                    status
                        .error("Continue: this layer has no timeline to continue (or its input changed since it ran)");
                    continue;
                };
                match c.recipe.build(c.input.clone()) {
                    Ok(built) => {
                        fields.hardness = built.hardness;
                        let label = format!("Continue {}", c.recipe.model.entry().undo.to_lowercase());
                        let total = c.recipe.model.work(MapSize::of(&c.input));
                        status.info(format!("{label}: from {} of {total} on {}", c.from, built.used));
                        sim.backend_used = built.used.to_string();
                        let work = Box::new(Resumed::new(built.job, c.from, c.at.clone()));
                        let timeline = c.timeline.clone();
                        let job = RunningJob {
                            shared: Arc::new(JobShared::default()),
                            base: terrain.doc.map().clone(),
                            label,
                            recipe: c.recipe.clone(),
                            continues: Some(c),
                        };
                        spawn(&mut sim, job, work, timeline);
                    }
                    Err(e) => status.error(format!("Continue: {e}")),
                }
            }
            EditorCommand::SetPaused(p) => {
                if let Some(j) = &sim.job {
                    j.shared.set_paused(*p);
                    status.info(if *p { "Paused" } else { "Resumed" });
                }
            }
            EditorCommand::CancelSimulation => {
                if let Some(j) = &sim.job {
                    j.shared.cancel();
                    // A paused job must wake up to see the cancel.
                    j.shared.set_paused(false);
                }
            }
            _ => {}
        }
    }
}

/// Starts `work` on the background pool for `job`, recording its timeline.
fn spawn(sim: &mut SimState, job: RunningJob, work: Box<dyn crate::core::erosion::Simulation>, timeline: Timeline) {
    // The look draws water, flow and erosion maps from the updates.
    job.shared.set_want_fields(true);
    job.shared.record(timeline);
    let worker = job.shared.clone();
    let threads = simulation_threads();
    AsyncComputeTaskPool::get().spawn(async move { run_job_on(work, worker, threads) }).detach();
    sim.notes.clear();
    sim.job = Some(job);
    sim.started += 1;
    sim.ledger = Ledger::default();
    sim.progress = Progress::default();
    sim.steps_per_s = 0.0;
}

/// Shows the newest update of the running job; at the end, records the run as one undo step.
pub fn show_simulation_updates(
    mut sim: ResMut<SimState>,
    mut terrain: ResMut<EditorTerrain>,
    mut status: ResMut<StatusLine>,
    mut fields: ResMut<SimFields>,
) {
    let Some(job) = &sim.job else { return };
    let Some(mut update) = job.shared.take_update() else { return };
    terrain.show_heights(&update.heights);
    fields.take_update(update.heights.width, update.heights.height, update.fields.take(), update.maps.take());
    let label = job.label.clone();
    let sim = &mut *sim;
    sim.ledger = update.ledger;
    sim.progress = update.progress;
    sim.steps_per_s = update.steps_per_s;
    sim.updates_shown += 1;
    debug!("simulation: update {} shown{}", sim.updates_shown, if update.end.is_some() { ", the last" } else { "" });
    if update.notes.len() > sim.notes.len() {
        for n in &update.notes[sim.notes.len()..] {
            status.info(format!("{label}: {n}"));
        }
        sim.notes = update.notes.clone();
    }
    let Some(end) = update.end else { return };
    let Some(mut job) = sim.job.take() else { return };
    terrain.doc.restore_base(&job.base);
    if end == JobEnd::Cancelled {
        // The layer keeps the work that was done, so a re-run does that much again.
        job.recipe.model.set_work(update.progress.done, MapSize::of(&job.base));
    }
    let timeline = job.shared.take_timeline();
    let applied = match (&job.continues, timeline) {
        (Some(c), Some(t)) => terrain
            .doc
            .apply_continued(c, &update.heights, update.progress.done, t, &job.label)
            .ok_or_else(|| "the layer changed while it ran; its result was not kept".to_string()),
        (Some(_), None) => Err("the continuation recorded no timeline".to_string()),
        (None, t) => terrain.doc.apply_result(update.heights, job.recipe.clone(), &job.label, t),
    };
    match applied {
        Ok(change) => {
            terrain.refresh(change);
            sim.last_base = Some(job.base);
            let how = if end == JobEnd::Cancelled { "cancelled" } else { "finished" };
            let note = sim.notes.last().map(|n| format!(" ({n})")).unwrap_or_default();
            status.info(format!(
                "{}: {how} after {} of {} — eroded {:.3}, deposited {:.3}, lost {:.3} (m·nodes){note}",
                job.label,
                update.progress.done,
                update.progress.total,
                update.ledger.eroded,
                update.ledger.deposited,
                update.ledger.lost_at_border
            ));
        }
        Err(e) => status.error(format!("{}: {e}", job.label)),
    }
}
