//! Terrain generation in the background, so the frame never waits for it.
//!
//! A [`EditorCommand::Generate`] starts [`generate_until`] on Bevy's `AsyncComputeTaskPool`. While
//! one runs, a newer request replaces any request still waiting and cancels the running one (it
//! stops between rows of its fBm base or between stages; its result, if it still arrives, is
//! dropped as stale); the newest request then starts. So dragging a slider produces at most one
//! generation in flight and one waiting, and the map always ends at the parameters the user last
//! chose.
//! A finished generation replaces the document's base layer as one undo step (none when it made
//! the base as it is, bit for bit: Generate with nothing changed): sculpt layers stay,
//! erosion layers above go stale (and re-run in the background with auto re-simulate on, see
//! [`super::layers`]). While a simulation runs the result is refused with a message (the
//! simulation owns the map until it ends).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;

use super::commands::EditorCommand;
use super::state::SimState;
use super::state::{EditorTerrain, StatusLine};
use crate::core::Heightmap;
use crate::core::generate::{GenerateParams, generate_until};
use crate::editor::layers::BaseSource;

/// Runs generation requests in the background.
pub struct GenerationPlugin;

impl Plugin for GenerationPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<GenState>().add_systems(Update, (queue_generate_commands, finish_generation).chain());
    }
}

type Slot = Arc<Mutex<Option<Result<(Heightmap, GenerateParams, f64), String>>>>;

/// A generation in flight: where its result lands, and its cancel flag.
struct Running {
    slot: Slot,
    cancel: Arc<AtomicBool>,
}

/// The generation in flight and the request waiting behind it.
#[derive(Resource, Default)]
pub struct GenState {
    running: Option<Running>,
    waiting: Option<GenerateParams>,
    /// Seconds the last generation took.
    pub last_seconds: Option<f64>,
    /// Generations that replaced the map since start.
    pub finished: u64,
}

impl GenState {
    /// True while a generation runs or waits.
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.waiting.is_some()
    }
}

fn start(params: GenerateParams) -> Running {
    let slot: Slot = Arc::new(Mutex::new(None));
    let cancel = Arc::new(AtomicBool::new(false));
    let (out, stop) = (slot.clone(), cancel.clone());
    AsyncComputeTaskPool::get()
        .spawn(async move {
            let t = std::time::Instant::now();
            let r = generate_until(&params, &stop)
                .map(|m| (m, params.clone(), t.elapsed().as_secs_f64()))
                .map_err(|e| e.to_string());
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    Running { slot, cancel }
}

fn queue_generate_commands(mut cmds: MessageReader<EditorCommand>, mut state: ResMut<GenState>) {
    for cmd in cmds.read() {
        if let EditorCommand::Generate(p) = cmd {
            if let Some(r) = &state.running {
                r.cancel.store(true, Ordering::Relaxed);
                state.waiting = Some(p.clone());
            } else {
                state.running = Some(start(p.clone()));
            }
        }
    }
}

fn finish_generation(
    mut state: ResMut<GenState>,
    mut terrain: ResMut<EditorTerrain>,
    mut status: ResMut<StatusLine>,
    sim: Res<SimState>,
) {
    let Some(running) = &state.running else { return };
    let Some(result) = running.slot.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
    state.running = None;
    if let Some(next) = state.waiting.take() {
        // Stale: a newer request came in while this one ran.
        state.running = Some(start(next));
        return;
    }
    match result {
        Ok((map, params, secs)) if !sim.running() => {
            let (w, h) = (map.width, map.height);
            let revision = terrain.doc.revision();
            let change = terrain.doc.set_base(map, BaseSource::Generator(params), "Generate");
            terrain.refresh(change);
            state.last_seconds = Some(secs);
            state.finished += 1;
            let same = if terrain.doc.revision() == revision { ": the same land, nothing changed" } else { "" };
            status.info(format!("Generated {w}×{h} in {:.0} ms{same}", secs * 1e3));
        }
        Ok(_) => status.error("Generate: a simulation is running; cancel it or wait for it to finish"),
        Err(e) => status.error(format!("Generate failed: {e}")),
    }
}
