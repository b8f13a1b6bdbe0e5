//! Terrain generation in the background, so the frame never waits for it.
//!
//! A [`EditorCommand::Generate`] starts [`generate`] on Bevy's `AsyncComputeTaskPool`. While one
//! runs, a newer request replaces any request still waiting, and the running one's result is
//! dropped when it arrives (it is stale); the newest request then starts. So dragging a slider
//! produces at most one generation in flight and one waiting, and the map always ends at the
//! parameters the user last chose. `generate` itself has no cancel point, so a stale run finishes
//! on its worker before the fresh one starts: the latency is at most one generation.
//! A finished generation replaces the map as one undo step; while a simulation runs the result is
//! refused with a message (the simulation owns the map until it ends).

use std::sync::{Arc, Mutex, PoisonError};

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;

use super::commands::EditorCommand;
use super::simulation::SimState;
use super::{EditorTerrain, StatusLine};
use crate::core::Heightmap;
use crate::core::generate::{GenerateParams, generate};

/// Runs generation requests in the background.
pub struct GenerationPlugin;

impl Plugin for GenerationPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<GenState>().add_systems(Update, (queue_generate_commands, finish_generation).chain());
    }
}

type Slot = Arc<Mutex<Option<Result<(Heightmap, f64), String>>>>;

/// The generation in flight and the request waiting behind it.
#[derive(Resource, Default)]
pub struct GenState {
    running: Option<Slot>,
    waiting: Option<GenerateParams>,
    /// Seconds the last generation took.
    pub last_seconds: Option<f64>,
}

impl GenState {
    /// True while a generation runs or waits.
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.waiting.is_some()
    }
}

fn start(params: GenerateParams) -> Slot {
    let slot: Slot = Arc::new(Mutex::new(None));
    let out = slot.clone();
    AsyncComputeTaskPool::get()
        .spawn(async move {
            let t = std::time::Instant::now();
            let r = generate(&params).map(|m| (m, t.elapsed().as_secs_f64())).map_err(|e| e.to_string());
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    slot
}

fn queue_generate_commands(mut cmds: MessageReader<EditorCommand>, mut state: ResMut<GenState>) {
    for cmd in cmds.read() {
        if let EditorCommand::Generate(p) = cmd {
            if state.running.is_some() {
                state.waiting = Some(p.clone());
            } else {
                state.running = Some(start(p.clone()));
            }
        }
    }
}

fn finish_generation(mut state: ResMut<GenState>, mut terrain: ResMut<EditorTerrain>, mut status: ResMut<StatusLine>, sim: Res<SimState>) {
    let Some(slot) = &state.running else { return };
    let Some(result) = slot.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
    state.running = None;
    if let Some(next) = state.waiting.take() {
        // Stale: a newer request came in while this one ran.
        state.running = Some(start(next));
        return;
    }
    match result {
        Ok((map, secs)) if !sim.running() => {
            let (w, h) = (map.width, map.height);
            let change = terrain.doc.replace(map, "Generate");
            terrain.refresh(change);
            state.last_seconds = Some(secs);
            status.info(format!("Generated {w}×{h} in {:.0} ms", secs * 1e3));
        }
        Ok(_) => status.error("Generate: a simulation is running; cancel it or wait for it to finish"),
        Err(e) => status.error(format!("Generate failed: {e}")),
    }
}
