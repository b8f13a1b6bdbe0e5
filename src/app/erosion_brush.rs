//! The erosion brush in the window, and the Erosion section's steering choice.
//!
//! With "Erode" chosen in the Brush section, the left button runs erosion under the cursor
//! while it is held ([`crate::editor::erosion_brush`]): the first dab puts an "Erosion brush"
//! layer on top (the stroke's one undo step), then a dab runs on Bevy's `AsyncComputeTaskPool`
//! with the Erosion section's model and parameters, steered by the brush disc at the cursor; when
//! it ends its result goes into the layer and the next dab starts where the cursor is then (at
//! most one dab in flight, so a slow dab never queues work behind the cursor, and a resting
//! cursor keeps eroding the same spot). Each dab does the work owed for the time since the
//! previous one began, so the brush erodes as fast per second whatever the machine. Each dab runs on the raw result of the one before, not
//! on the fold shown, so the layer re-runs to exactly the stroke's bits. The frame never waits
//! for a dab.
//!
//! The Erosion section's "Steer" choice ([`SteerChoice`]) makes every Simulate run steered by a
//! mask generated from the map: its height, its slope or its flow, optionally with sinks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use bevy_egui::egui;

use super::state::BrushTool;
use super::state::SimState;
use super::state::SteerChoice;
use super::state::{EditorTerrain, StatusLine};
use crate::core::Heightmap;
use crate::editor::erosion_brush::{Dab, FIRST_DAB_S, dab_work, run_dab};
use crate::editor::layers::Recipe;
use crate::editor::layers::recipe::{SteerSource, SteerSpec};
use crate::editor::simulate::{RunRequest, recipe_of};

/// Runs erosion-brush dabs.
pub struct ErosionBrushPlugin;

impl Plugin for ErosionBrushPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ErosionBrush>().add_systems(Update, drive_dabs.after(super::state::ToolSystems));
    }
}

type Slot = Arc<Mutex<Option<Result<Option<Heightmap>, String>>>>;

struct Flight {
    dab: Dab,
    slot: Slot,
    cancel: Arc<AtomicBool>,
    started: Instant,
}

/// An erosion-brush stroke in progress.
#[derive(Resource, Default)]
pub struct ErosionBrush {
    /// Where the held button points (grid units), set by the tools each frame; `None` when the
    /// erosion brush is not pressed.
    pub pointer: Option<[f32; 2]>,
    /// The stroke's layer.
    layer: Option<u64>,
    /// The raw heights after the stroke's last dab (the next dab's input).
    current: Option<Heightmap>,
    flight: Option<Flight>,
    /// Dabs installed since start (scripts and tests read it).
    pub dabs: u64,
    /// Seconds of the newest dab, for the panel.
    pub last_dab_s: f64,
    /// When the stroke's previous dab began (the next dab owes the work since).
    last_start: Option<Instant>,
}

impl ErosionBrush {
    /// True while a stroke is open or a dab is in flight.
    pub fn active(&self) -> bool {
        self.layer.is_some() || self.flight.is_some()
    }
}

/// The recipe a new stroke runs: the Erosion section's model, edges, seed, backend and hardness,
/// and the sea drawn in the view.
fn panel_recipe(panel: Option<&super::state::PanelState>, look: Option<&super::state::Look>) -> Result<Recipe, String> {
    let panel = panel.ok_or("the panel is not ready")?;
    let seed = crate::core::rng::parse_seed(&panel.sim_seed)?;
    recipe_of(&RunRequest {
        model: &panel.models[panel.model],
        boundary: panel.boundary,
        seed,
        backend: panel.backend,
        hardness: Some(&panel.hardness),
        sea_level: look.map(super::state::sea_level).unwrap_or(0.0),
        steer: None,
    })
}

#[allow(clippy::too_many_arguments)]
fn drive_dabs(
    mut brush: ResMut<ErosionBrush>,
    tool: Res<BrushTool>,
    mut terrain: ResMut<EditorTerrain>,
    sim: Res<SimState>,
    mut status: ResMut<StatusLine>,
    panel: Option<Res<super::state::PanelState>>,
    look: Option<Res<super::state::Look>>,
) {
    let brush = &mut *brush;
    // A dab that ended: its result goes into the stroke's layer.
    let done = brush.flight.as_ref().and_then(|f| f.slot.lock().unwrap_or_else(PoisonError::into_inner).take());
    if let Some(result) = done {
        let f = brush.flight.take().expect("a dab was in flight");
        match (result, brush.layer) {
            (Ok(Some(map)), Some(id)) => match terrain.doc.add_dab(id, f.dab, &map) {
                Some(change) => {
                    terrain.refresh(change);
                    brush.current = Some(map);
                    brush.dabs += 1;
                    brush.last_dab_s = f.started.elapsed().as_secs_f64();
                }
                None => brush.layer = None,
            },
            (Ok(_), _) => {}
            (Err(e), _) => {
                status.error(format!("Erosion brush: {e}"));
                brush.layer = None;
            }
        }
    }
    let Some(centre) = brush.pointer else {
        // Released: the stroke ends once its last dab is in.
        if brush.flight.is_none() {
            brush.layer = None;
            brush.current = None;
            brush.last_start = None;
        }
        return;
    };
    if sim.running() {
        status.error("Erosion brush: a simulation is running");
        brush.pointer = None;
        return;
    }
    if brush.flight.is_some() {
        return;
    }
    let id = match brush.layer.filter(|id| terrain.doc.stack().layer(*id).is_some()) {
        Some(id) => id,
        None => {
            let recipe = match panel_recipe(panel.as_deref(), look.as_deref()) {
                Ok(r) => r,
                Err(e) => {
                    status.error(format!("Erosion brush: {e}"));
                    brush.pointer = None;
                    return;
                }
            };
            let id = terrain.doc.begin_erosion_brush(recipe);
            brush.layer = Some(id);
            brush.current = Some(terrain.doc.map().clone());
            id
        }
    };
    let Some(e) = terrain.doc.stack().layer(id).and_then(|l| l.erosion()) else { return };
    let index = e.recipe.steer.as_ref().and_then(SteerSpec::dabs).map_or(0, <[Dab]>::len);
    let recipe = e.recipe.clone();
    // The pointer is in node coordinates, a dab in metres; it owes the work since the last began.
    let cell = terrain.doc.map().cell_size;
    let centre = [centre[0] * cell, centre[1] * cell];
    let now = Instant::now();
    let held = brush.last_start.map_or(FIRST_DAB_S, |t| now.duration_since(t).as_secs_f32());
    brush.last_start = Some(now);
    let work = dab_work(&recipe.model, tool.params.radius, held);
    let dab = Dab { centre_m: centre, radius_m: tool.params.radius, falloff: tool.params.falloff, work };
    let input = brush.current.clone().unwrap_or_else(|| terrain.doc.map().clone());
    let slot: Slot = Arc::new(Mutex::new(None));
    let cancel = Arc::new(AtomicBool::new(false));
    let (out, stop) = (slot.clone(), cancel.clone());
    AsyncComputeTaskPool::get()
        .spawn(async move {
            let r = run_dab(&recipe.dab_model(), &dab, index, input, &stop);
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    brush.flight = Some(Flight { dab, slot, cancel, started: Instant::now() });
}

impl Drop for ErosionBrush {
    fn drop(&mut self) {
        if let Some(f) = &self.flight {
            f.cancel.store(true, Ordering::Relaxed);
        }
    }
}

impl SteerChoice {
    /// The steering of the next Simulate run (`None`: rain everywhere).
    pub fn spec(&self) -> Option<SteerSpec> {
        let source = match self.mode {
            1 => SteerSource::Height { lo: self.height[0], hi: self.height[1] },
            2 => SteerSource::Slope { lo_deg: self.slope[0], hi_deg: self.slope[1] },
            3 => SteerSource::Drainage { area_m2: self.flow_m2 },
            _ => return None,
        };
        Some(SteerSpec { source, sink: self.sink })
    }

    /// The Erosion section's "Steer" controls.
    pub fn edit(&mut self, ui: &mut egui::Ui) {
        const MODES: [&str; 4] = ["everywhere", "by height", "by slope", "by flow"];
        egui::ComboBox::from_label("Rain falls")
            .selected_text(MODES[self.mode.min(3)])
            .show_ui(ui, |ui| {
                for (i, m) in MODES.iter().enumerate() {
                    ui.selectable_value(&mut self.mode, i, *m);
                }
            })
            .response
            .on_hover_text("Where the next Simulate run's rain falls and particles spawn: a mask made from the map");
        match self.mode {
            1 => ramp(ui, &mut self.height, "m", -10_000.0..=10_000.0),
            2 => ramp(ui, &mut self.slope, "°", 0.0..=90.0),
            3 => {
                ui.add(egui::DragValue::new(&mut self.flow_m2).range(1e-2..=1e12).speed(10.0).suffix(" m²"))
                    .on_hover_text("Drainage area from which the mask is 1 (0 below half of it)");
            }
            _ => {}
        }
        if self.mode > 0 {
            ui.checkbox(&mut self.sink, "Outside is a sink")
                .on_hover_text("Where the mask is 0 nothing erodes and flow that arrives ends there");
        }
    }
}

fn ramp(ui: &mut egui::Ui, v: &mut [f32; 2], unit: &str, range: std::ops::RangeInclusive<f32>) {
    ui.horizontal(|ui| {
        ui.label("from");
        ui.add(egui::DragValue::new(&mut v[0]).range(range.clone()).suffix(unit));
        ui.label("to");
        ui.add(egui::DragValue::new(&mut v[1]).range(range).suffix(unit));
    })
    .response
    .on_hover_text("The mask ramps from 0 at the first value to 1 at the second");
}
