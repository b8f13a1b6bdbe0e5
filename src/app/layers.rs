//! The layer stack in the window: the Layers section of the panel, and re-running stale erosion
//! layers in the background.
//!
//! When something under an erosion layer changes (a generator slider with Live on regenerates the
//! base, a stroke lands in a sculpt layer below, a layer below is hidden or re-weighted), the
//! layer goes stale ([`crate::editor::layers`]) and keeps its old delta. With "Auto re-simulate"
//! on (the default) the lowest stale layer re-runs on Bevy's `AsyncComputeTaskPool` with its own
//! recipe on its new input; when the input moves on again before the run ends, the run is
//! cancelled and the newest input starts (newest request wins). A finished re-run replaces the
//! layer's delta if its input is still the one it ran on; the layer above it then goes stale and
//! runs next. With auto off, stale layers wait for the Re-simulate button.
//!
//! Nothing re-runs while a Simulate run owns the map or a stroke is open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use bevy_egui::egui;

use super::commands::EditorCommand;
use super::state::SimState;
use super::state::{EditorTerrain, StatusLine};
use crate::core::Heightmap;
use crate::editor::document::{LayerOp, PaintTarget};
use crate::editor::layers::recipe::run_to_end;
use crate::editor::layers::{LayerKind, STRENGTH_RANGE, StaleJob};

/// Re-runs stale erosion layers.
pub struct LayersPlugin;

impl Plugin for LayersPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ResimState>().add_systems(Update, drive_resimulation);
    }
}

type Slot = Arc<Mutex<Option<Result<Option<Heightmap>, String>>>>;

/// A re-run in flight.
struct Resim {
    job: StaleJob,
    name: String,
    slot: Slot,
    cancel: Arc<AtomicBool>,
    started: Instant,
}

/// Re-simulation state the panel shows.
#[derive(Resource)]
pub struct ResimState {
    /// Re-run stale layers by themselves.
    pub auto: bool,
    /// The Re-simulate button was pressed: run stale layers until none is left.
    requested: bool,
    running: Option<Resim>,
    /// Document revision last looked at.
    checked: Option<u64>,
    /// Re-runs that finished and were installed since start (scripts wait for this to grow).
    pub finished: u64,
}

impl Default for ResimState {
    fn default() -> Self {
        Self { auto: true, requested: false, running: None, checked: None, finished: 0 }
    }
}

impl ResimState {
    /// True while a re-run is in flight or about to start (`has_stale`: the document has a stale
    /// visible erosion layer).
    pub fn active(&self, has_stale: bool) -> bool {
        self.running.is_some() || (has_stale && (self.auto || self.requested))
    }

    /// The layer being re-run, by name.
    pub fn running(&self) -> Option<&str> {
        self.running.as_ref().map(|r| r.name.as_str())
    }
}

fn start(job: StaleJob, name: String) -> Resim {
    let slot: Slot = Arc::new(Mutex::new(None));
    let cancel = Arc::new(AtomicBool::new(false));
    let (out, stop, recipe, input, mask) =
        (slot.clone(), cancel.clone(), job.recipe.clone(), job.input.clone(), job.mask.clone());
    AsyncComputeTaskPool::get()
        .spawn(async move {
            let r = run_to_end(&recipe, input, mask.as_deref(), &stop);
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    Resim { job, name, slot, cancel, started: Instant::now() }
}

fn drive_resimulation(
    mut cmds: MessageReader<EditorCommand>,
    mut state: ResMut<ResimState>,
    mut terrain: ResMut<EditorTerrain>,
    sim: Res<SimState>,
    mut status: ResMut<StatusLine>,
) {
    for cmd in cmds.read() {
        match cmd {
            EditorCommand::Resimulate => {
                state.requested = true;
                state.checked = None;
            }
            EditorCommand::SetAutoResimulate(a) => {
                state.auto = *a;
                state.checked = None;
            }
            _ => {}
        }
    }
    // A Simulate run owns the map: a re-run in flight would land under it, so it stops (the layer
    // stays stale and runs again afterwards).
    if sim.running() {
        if let Some(r) = state.running.take() {
            r.cancel.store(true, Ordering::Relaxed);
            state.checked = None;
        }
        return;
    }
    // A run that ended.
    let done = state.running.as_ref().and_then(|r| r.slot.lock().unwrap_or_else(PoisonError::into_inner).take());
    if let Some(result) = done {
        let r = state.running.take().expect("a run was in flight");
        match result {
            Ok(Some(map)) => {
                // Refused when the input moved on meanwhile: the next check starts it again.
                if let Some(change) = terrain.doc.set_resimulated(&r.job, &map) {
                    terrain.refresh(change);
                    state.finished += 1;
                    status.info(format!("Re-simulated {:?} in {:.1} s", r.name, r.started.elapsed().as_secs_f64()));
                }
            }
            Ok(None) => {}
            Err(e) => status.error(format!("Re-simulate {:?}: {e}", r.name)),
        }
        state.checked = None;
    }
    if terrain.doc.in_stroke() || !(state.auto || state.requested) {
        return;
    }
    let rev = terrain.doc.revision();
    if state.checked == Some(rev) {
        return;
    }
    state.checked = Some(rev);
    let next = terrain.doc.stale_job();
    let same = |r: &Resim, n: &StaleJob| r.job.id == n.id && r.job.input_hash == n.input_hash;
    match (&state.running, next) {
        (Some(r), Some(n)) if same(r, &n) => {}
        (running, next) => {
            // Newest wins: whatever runs for an input that is no longer current stops.
            if let Some(r) = running {
                r.cancel.store(true, Ordering::Relaxed);
            }
            state.running = None;
            match next {
                Some(n) => {
                    let name = terrain.doc.stack().layer(n.id).map(|l| l.name.clone()).unwrap_or_default();
                    status.info(format!("Re-simulating {name:?} (its input changed)"));
                    state.running = Some(start(n, name));
                }
                None => state.requested = false,
            }
        }
    }
}

/// The chosen erosion layer's timeline: a slider over its kept frames (scrubbing shows that
/// moment at once), the books at that moment, "Keep from here" and "Continue from here".
fn timeline_controls(
    ui: &mut egui::Ui,
    stack: &crate::editor::layers::LayerStack,
    id: u64,
    out: &mut MessageWriter<EditorCommand>,
) {
    let Some((t, frame)) = stack.timeline_of(id) else {
        ui.small("no timeline (a re-run, or a layer read from a project)");
        return;
    };
    let last = t.len() - 1;
    let mut k = frame;
    let slider = egui::Slider::new(&mut k, 0..=last).text("time").show_value(false);
    if ui.add(slider).on_hover_text("Scrub this run: its erosion at each moment it streamed").changed() {
        out.write(EditorCommand::Layer(LayerOp::Scrub(id, k)));
    }
    let f = &t.frames()[frame];
    let unit = stack.layer(id).and_then(|l| l.erosion()).map_or("", |e| e.recipe.model.entry().unit);
    ui.small(format!("frame {frame}/{last}: {} of {} {unit}", f.done, t.total()));
    ui.small(format!(
        "eroded {:.1}, deposited {:.1}, lost {:.1} m·nodes",
        f.ledger.eroded, f.ledger.deposited, f.ledger.lost_at_border
    ));
    ui.horizontal(|ui| {
        let keep = ui
            .add_enabled(frame < last, egui::Button::new("Keep from here"))
            .on_hover_text("Make this moment the layer's result and drop the later frames");
        if keep.clicked() {
            out.write(EditorCommand::Layer(LayerOp::Keep(id)));
        }
        let more = ui
            .add_enabled(f.done < t.total(), egui::Button::new("Continue from here"))
            .on_hover_text("Run the simulation on from this moment, as if it had been stopped here");
        if more.clicked() {
            out.write(EditorCommand::ContinueRun(id));
        }
    });
    ui.small(format!("timeline {:.1} MiB, {} frames kept", t.bytes() as f64 / 1048576.0, t.len()));
}

/// The Layers section: the stack top first, each with its visibility, name, kind and stale mark;
/// the chosen layer's strength, mask painting, name and order; re-simulation.
pub fn layers_section(
    ui: &mut egui::Ui,
    terrain: &EditorTerrain,
    resim: &ResimState,
    selected: &mut Option<u64>,
    rename: &mut String,
    busy: bool,
    out: &mut MessageWriter<EditorCommand>,
) {
    let doc = &terrain.doc;
    let stack = doc.stack();
    let target = doc.paint_target();
    if selected.is_some_and(|id| stack.layer(id).is_none()) {
        *selected = None;
    }
    // Strokes going into a layer (chosen here or by a script) show that layer as chosen; a chosen
    // erosion layer stays chosen while strokes go into a sculpt layer.
    let is_sculpt = |id: u64| stack.layer(id).is_some_and(|l| l.erosion().is_none());
    let into = match target {
        PaintTarget::Mask(id) => Some(id),
        PaintTarget::Sculpt(id) if selected.is_none_or(is_sculpt) => Some(id),
        _ => None,
    };
    if let Some(id) = into.filter(|id| *selected != Some(*id) && stack.layer(*id).is_some()) {
        *selected = Some(id);
        *rename = stack.layer(id).map(|l| l.name.clone()).unwrap_or_default();
    }
    egui::CollapsingHeader::new("Layers").default_open(true).show(ui, |ui| {
        ui.add_enabled_ui(!busy, |ui| {
            for l in stack.layers().iter().rev() {
                ui.horizontal(|ui| {
                    let mut vis = l.visible;
                    if ui.checkbox(&mut vis, "").on_hover_text("Show or hide this layer").changed() {
                        out.write(EditorCommand::Layer(LayerOp::Visible(l.id, vis)));
                    }
                    let painting = match target {
                        PaintTarget::Sculpt(id) | PaintTarget::Mask(id) => id == l.id,
                        PaintTarget::Terrain => false,
                    };
                    let label = if painting { format!("{} (painting)", l.name) } else { l.name.clone() };
                    if ui.selectable_label(*selected == Some(l.id), label).clicked() {
                        *selected = Some(l.id);
                        *rename = l.name.clone();
                        let t = match l.kind {
                            LayerKind::Sculpt(_) => PaintTarget::Sculpt(l.id),
                            LayerKind::Erosion(_) => PaintTarget::Terrain,
                        };
                        out.write(EditorCommand::Layer(LayerOp::Target(t)));
                    }
                    match &l.kind {
                        LayerKind::Sculpt(_) => {
                            ui.weak("sculpt");
                        }
                        LayerKind::Erosion(e) => {
                            ui.weak(e.recipe.model.entry().label);
                            if e.stale {
                                ui.colored_label(egui::Color32::from_rgb(230, 170, 60), "stale").on_hover_text(
                                    "What is under this layer changed since it ran: it shows its old erosion until it runs again",
                                );
                            }
                        }
                    }
                });
            }
            ui.horizontal(|ui| {
                ui.label("Base");
                ui.weak(stack.base.source.describe());
            });
            if let Some(id) = *selected
                && let Some(l) = stack.layer(id)
            {
                ui.separator();
                ui.horizontal(|ui| {
                    if ui.small_button("Up").on_hover_text("Move this layer up").clicked() {
                        out.write(EditorCommand::Layer(LayerOp::Move(id, true)));
                    }
                    if ui.small_button("Down").on_hover_text("Move this layer down").clicked() {
                        out.write(EditorCommand::Layer(LayerOp::Move(id, false)));
                    }
                    if ui.small_button("Delete").clicked() {
                        out.write(EditorCommand::Layer(LayerOp::Delete(id)));
                    }
                    let r = ui.add(egui::TextEdit::singleline(rename).desired_width(110.0));
                    if (r.lost_focus() || ui.small_button("Rename").clicked()) && rename.trim() != l.name {
                        out.write(EditorCommand::Layer(LayerOp::Rename(id, rename.clone())));
                    }
                });
                if let Some(e) = l.erosion() {
                    let mut s = e.strength;
                    let slider = egui::Slider::new(&mut s, STRENGTH_RANGE[0]..=STRENGTH_RANGE[1]).text("strength");
                    if ui.add(slider).on_hover_text("0 erases this run, 1 is the run as it was, 2 doubles it").changed() {
                        out.write(EditorCommand::Layer(LayerOp::Strength(id, s)));
                    }
                    let mut mask = target == PaintTarget::Mask(id);
                    if ui
                        .checkbox(&mut mask, "Paint mask")
                        .on_hover_text("Brushes paint this layer's mask: lower erases the erosion, raise restores it")
                        .changed()
                    {
                        let t = if mask { PaintTarget::Mask(id) } else { PaintTarget::Terrain };
                        out.write(EditorCommand::Layer(LayerOp::Target(t)));
                    }
                    let brush = e.recipe.steer.as_ref().and_then(|s| s.dabs()).map(<[_]>::len);
                    match brush {
                        Some(n) => {
                            ui.small(format!("erosion brush, {n} dabs"));
                        }
                        None => {
                            let mut steer = e.steers_by_mask();
                            let sink = e.recipe.steer.as_ref().is_some_and(|s| s.sink);
                            let tip = "Run this layer again with rain only where the mask is painted (the mask then \
                                       steers instead of blending)";
                            if ui.checkbox(&mut steer, "Steer by mask").on_hover_text(tip).changed() {
                                out.write(EditorCommand::Layer(LayerOp::SteerByMask { id, on: steer, sink }));
                            }
                        }
                    }
                    ui.small(format!("seed {}, {} mask tiles painted", e.recipe.seed, e.mask.stored()));
                    timeline_controls(ui, stack, id, out);
                }
            }
            ui.separator();
            ui.horizontal(|ui| {
                let mut auto = resim.auto;
                if ui.checkbox(&mut auto, "Auto re-simulate").changed() {
                    out.write(EditorCommand::SetAutoResimulate(auto));
                }
                if ui.add_enabled(doc.has_stale(), egui::Button::new("Re-simulate")).clicked() {
                    out.write(EditorCommand::Resimulate);
                }
            });
            if let Some(name) = resim.running() {
                ui.small(format!("re-simulating {name} …"));
            }
            ui.small(format!("layers hold {:.1} MiB", stack.bytes() as f64 / 1048576.0));
        });
    });
}
