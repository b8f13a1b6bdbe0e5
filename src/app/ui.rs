//! The egui side panel: File, Edit, Layers, Generator, Erosion, Brush, View and Help sections, and a
//! status line.
//!
//! The panel edits a [`PanelState`] (parameters as the core structs themselves) and turns clicks
//! into [`EditorCommand`]s; it never changes the map itself. Parameters are edited with
//! [`super::param_editor`], which shows every field of the core structs with its doc comment as a
//! tooltip. With "Live" on, a generator change regenerates after a short pause in the edits
//! ([`LIVE_DELAY`]), in the background (see [`super::generation`]).

use std::path::PathBuf;

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::commands::EditorCommand;
use super::generation::GenState;
use super::param_editor::edit_params;
use super::state::BrushTool;
use super::state::SimState;
use super::state::{EditorTerrain, StatusLine, UserSettings};
use super::state::{PanelState, PanelWidth, UiHotspots};
use super::widgets::{HOTSPOTS, engine_hotspot, hotspot, preset_message, preset_row};
use crate::core::brush::BrushKind;
use crate::core::erosion::registry::{self, ModelEntry, ModelParamsType, ParamsVisitor};
use crate::core::erosion::{MODELS, ModelParams};
use crate::core::generate::GenerateParams;
use crate::core::io::tiles::ENGINES;
use crate::editor::persist::Settings;

/// Draws the side panel and sends what it asks for.
pub struct UiPlugin;

impl Plugin for UiPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PanelState>()
            .init_resource::<PanelWidth>()
            .init_resource::<UiHotspots>()
            .add_systems(Startup, restore_brush)
            .add_systems(Update, clicks_whatever_the_frame_time)
            .add_systems(EguiPrimaryContextPass, (super::panel_sync::follow_document, draw_side_panel).chain())
            .add_systems(Update, send_live_generate);
    }
}

/// A press and release without moving is a click however long the button was held, as in every
/// desktop toolkit. egui's default (a press longer than 0.8 s is no click, for a touch screen's
/// press-and-hold menu) judges the hold by frame times: on a frame slower than that (a 16K build
/// beside the view on a laptop, four editors sharing two cores) a quick click whose press and
/// release fell in two frames was dropped, and the button did nothing. Nothing here uses a long
/// press.
pub fn desktop_input_options(ctx: &egui::Context) {
    ctx.options_mut(|o| o.input_options.max_click_duration = f64::INFINITY);
}

/// Applies [`desktop_input_options`] to each egui context as it is made.
fn clicks_whatever_the_frame_time(mut added: Query<&mut bevy_egui::EguiContext, Added<bevy_egui::EguiContext>>) {
    for mut ctx in &mut added {
        desktop_input_options(ctx.get_mut());
    }
}

/// Seconds without further edits before a live regeneration starts.
pub const LIVE_DELAY: f64 = 0.25;

/// Largest map side the editor generates (nodes).
pub const MAX_EDITOR_SIDE: usize = 4097;

/// The models of the Erosion section's menu come from the model registry
/// ([`crate::core::erosion::registry`]): its [`MODELS`] in order, each shown by its `label`.
/// The model Simulate runs on a first start (an index in [`MODELS`]) is the registry's default,
/// stream power, which `talus erode` without `--model` runs too.
pub fn default_model() -> usize {
    registry::default_model().index()
}

/// One parameter set per model, in [`MODELS`] order: each entry's `editor_default` (the seeds'
/// defaults; droplets: enough to see on a 513² map).
pub fn default_models() -> Vec<ModelParams> {
    MODELS.iter().map(|e| (e.editor_default)()).collect()
}

/// The panel's parameter editor for the model's own struct.
struct EditModel<'a>(&'a mut egui::Ui);

impl ParamsVisitor for EditModel<'_> {
    type Out = Result<bool, String>;
    fn visit<P: ModelParamsType>(self, e: &'static ModelEntry, p: &mut P) -> Self::Out {
        edit_params(self.0, e.key, e.params_type, p)
    }
}

/// The preset row for the model's own struct (shipped presets named after the model's `key`).
struct ModelPresets<'a> {
    ui: &'a mut egui::Ui,
    path: &'a mut String,
    msg: &'a mut Option<(String, bool)>,
}

impl ParamsVisitor for ModelPresets<'_> {
    type Out = bool;
    fn visit<P: ModelParamsType>(self, e: &'static ModelEntry, p: &mut P) -> bool {
        preset_row(self.ui, "erode", e.key, p, self.path, self.msg)
    }
}

impl Default for PanelState {
    fn default() -> Self {
        Self::from_settings(&Settings::default())
    }
}

impl PanelState {
    /// The panel as the user left it last time (defaults where the settings have nothing).
    pub fn from_settings(s: &Settings) -> Self {
        let mut models = default_models();
        for m in &s.models {
            models[m.index()] = m.clone();
        }
        let model = s.models.get(s.model).map(ModelParams::index).unwrap_or_else(default_model);
        Self {
            layer_selected: None,
            layer_name: String::new(),
            generator: s.generator.clone().unwrap_or_else(|| crate::core::generate::demo_params(super::START_SIZE, 1)),
            live: s.live_generate,
            gen_edited_at: None,
            synced_base: None,
            gen_sent: None,
            gen_error: None,
            models,
            model,
            model_error: None,
            boundary: s.boundary,
            backend: s.backend,
            sim_seed: "1".into(),
            path_text: s.recent.first().map(|p| p.display().to_string()).unwrap_or_else(|| "terrain.bhef".into()),
            new_size: 513,
            new_cell: 2.0,
            new_height: 0.0,
            brush_error: None,
            preset_path: "my-preset.ron".into(),
            preset_msg: None,
            export_unreal: false,
            export_decimate: 1,
            hardness: s.hardness.clone(),
            steer: Default::default(),
        }
    }

    /// Writes what should outlive the session into `s`.
    pub fn store(&self, s: &mut Settings) {
        s.generator = Some(self.generator.clone());
        s.models = self.models.clone();
        s.model = self.model;
        s.boundary = self.boundary;
        s.backend = self.backend;
        s.live_generate = self.live;
        s.hardness = self.hardness.clone();
    }
}

fn restore_brush(settings: Res<UserSettings>, mut tool: ResMut<BrushTool>) {
    if let Some(b) = &settings.0.brush
        && b.validate().is_ok()
    {
        tool.params = b.clone();
    }
}

/// The generator parameters the editor accepts, or why not.
pub fn check_generator(p: &GenerateParams) -> Result<(), String> {
    if p.width < 2 || p.height < 2 || p.width > MAX_EDITOR_SIDE || p.height > MAX_EDITOR_SIDE {
        return Err(format!(
            "the editor works on maps from 2 to {MAX_EDITOR_SIDE} nodes a side (asked {}×{})",
            p.width, p.height
        ));
    }
    Ok(())
}

fn send_live_generate(
    time: Res<Time>,
    mut panel: ResMut<PanelState>,
    mut out: MessageWriter<EditorCommand>,
    sim: Res<SimState>,
) {
    let Some(t) = panel.gen_edited_at else { return };
    if !panel.live || sim.running() || time.elapsed_secs_f64() - t < LIVE_DELAY {
        return;
    }
    panel.gen_edited_at = None;
    match check_generator(&panel.generator) {
        Ok(()) => {
            panel.gen_sent = Some(panel.generator.clone());
            out.write(EditorCommand::Generate(panel.generator.clone()));
        }
        Err(e) => panel.gen_error = Some(e),
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_side_panel(
    mut contexts: EguiContexts,
    terrain: Res<EditorTerrain>,
    mut panel: ResMut<PanelState>,
    mut tool: ResMut<BrushTool>,
    sim: Res<SimState>,
    gen_state: Res<GenState>,
    status: Res<StatusLine>,
    settings: Res<UserSettings>,
    time: Res<Time>,
    mut out: MessageWriter<EditorCommand>,
    mut width: ResMut<PanelWidth>,
    mut look: ResMut<super::state::Look>,
    mut hotspots: ResMut<UiHotspots>,
    qa: Res<super::qa::QaState>,
    resim: Res<super::layers::ResimState>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let mut root = egui::Ui::new(
        ctx.clone(),
        "talus_root".into(),
        egui::UiBuilder::new().layer_id(egui::LayerId::background()).max_rect(ctx.viewport_rect()),
    );
    let panel = &mut *panel;
    let shown = egui::Panel::left("talus_side_panel").resizable(true).default_size(330.0).show(&mut root, |ui| {
        ui.horizontal(|ui| {
            ui.heading("Talus");
            ui.label(terrain.doc.title().trim_end_matches(" — Talus").to_string());
        });
        ui.separator();
        // Status line first so it is always visible.
        let colour = if status.is_error { egui::Color32::LIGHT_RED } else { ui.visuals().weak_text_color() };
        if !status.text.is_empty() {
            ui.colored_label(colour, &status.text);
        }
        let m = terrain.map();
        let s = &terrain.stats;
        ui.small(format!("{} · {:.1} … {:.1} m", extent_label(m.width, m.height, m.cell_size), s.min, s.max));
        action_bar(ui, panel, &sim, &mut out);
        super::qa::qa_row(ui, &qa, terrain.doc.revision(), sim.running(), &mut out);
        ui.separator();
        // Both ways: rows wider than the panel scroll sideways instead of widening it, so the panel
        // can be dragged narrower than its widest row.
        egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
            file_section(ui, panel, &terrain, &settings, &mut out);
            edit_section(ui, &terrain, &sim, &mut out);
            super::layers::layers_section(
                ui,
                &terrain,
                &resim,
                &mut panel.layer_selected,
                &mut panel.layer_name,
                sim.running(),
                &mut out,
            );
            let base = &terrain.doc.stack().base.source;
            generator_section(ui, panel, base, &gen_state, &sim, time.elapsed_secs_f64(), &mut out);
            erosion_section(ui, panel, &sim);
            brush_section(ui, panel, &mut tool);
            super::overlay::view_section(ui, &mut look);
            super::material::material_section(ui, &mut look);
            super::sky::sky_section(ui, &mut look, &mut panel.preset_path, &mut panel.preset_msg);
            super::water::water_section(ui, &mut look, &mut panel.preset_path, &mut panel.preset_msg);
            help_section(ui);
        });
    });
    let zoom = ctx.zoom_factor();
    let w = shown.response.rect.width() * zoom;
    if width.0 != w {
        width.0 = w;
    }
    let to_window = |r: egui::Rect| [r.min.x * zoom, r.min.y * zoom, r.max.x * zoom, r.max.y * zoom];
    let mut spots = std::collections::BTreeMap::new();
    spots.insert("panel".to_owned(), to_window(shown.response.rect));
    let names = HOTSPOTS.iter().map(|n| n.to_string()).chain(ENGINES.iter().map(engine_hotspot));
    for name in names {
        let id = egui::Id::new(("talus_hotspot", name.clone()));
        if let Some(Some(r)) = ctx.data_mut(|d| d.remove_temp::<Option<egui::Rect>>(id)) {
            spots.insert(name, to_window(r));
        }
    }
    if hotspots.0 != spots {
        hotspots.0 = spots;
    }
    Ok(())
}

fn file_section(
    ui: &mut egui::Ui,
    panel: &mut PanelState,
    terrain: &EditorTerrain,
    settings: &UserSettings,
    out: &mut MessageWriter<EditorCommand>,
) {
    egui::CollapsingHeader::new("File").default_open(true).show(ui, |ui| {
        ui.horizontal(|ui| {
            if ui.button("Open…").on_hover_text("Ctrl+O").clicked() {
                out.write(EditorCommand::OpenDialog);
            }
            let save = ui
                .add_enabled(terrain.doc.is_unsaved() || terrain.doc.path().is_none(), egui::Button::new("Save"))
                .on_hover_text("Ctrl+S");
            if save.clicked() {
                out.write(EditorCommand::Save);
            }
            if ui.button("Save As…").on_hover_text("Ctrl+Shift+S").clicked() {
                out.write(EditorCommand::SaveAsDialog);
            }
        });
        ui.horizontal(|ui| {
            ui.add(egui::TextEdit::singleline(&mut panel.path_text).desired_width(170.0).hint_text("path/to/map.bhef"))
                .on_hover_text("A path to open or save to, for systems without a file dialog");
            let path = PathBuf::from(panel.path_text.trim());
            let has = !panel.path_text.trim().is_empty();
            if ui.add_enabled(has, egui::Button::new("Open")).clicked() {
                out.write(EditorCommand::Open(path.clone()));
            }
            if ui.add_enabled(has, egui::Button::new("Save")).clicked() {
                out.write(EditorCommand::SaveAs(path));
            }
        });
        ui.horizontal(|ui| {
            if ui.button("Import…").on_hover_text("PNG 8/16-bit, RAW R16, EXR, GeoTIFF, SRTM .hgt").clicked() {
                out.write(EditorCommand::ImportDialog);
            }
            if ui
                .button("Export…")
                .on_hover_text("PNG 16-bit, RAW R16 (+ JSON sidecar), EXR, GeoTIFF, OBJ, GLB")
                .clicked()
            {
                out.write(EditorCommand::ExportDialog { unreal: panel.export_unreal, decimate: panel.export_decimate });
            }
            let path = PathBuf::from(panel.path_text.trim());
            let has = !panel.path_text.trim().is_empty();
            if ui.add_enabled(has, egui::Button::new("Import path")).clicked() {
                out.write(EditorCommand::Import(path.clone()));
            }
            if ui.add_enabled(has, egui::Button::new("Export path")).clicked() {
                out.write(EditorCommand::Export { path, unreal: panel.export_unreal, decimate: panel.export_decimate });
            }
        });
        ui.horizontal(|ui| {
            let b = ui.button("Build…").on_hover_text(
                "Build the project at another resolution (129² to 16385²) and write it to a file or as an \
                 Unreal or Unity tile set",
            );
            hotspot(ui, "Build…", &b);
            if b.clicked() {
                out.write(EditorCommand::OpenBuildDialog);
            }
            ui.small("the same land at another resolution, or engine tiles");
        });
        ui.horizontal(|ui| {
            ui.checkbox(&mut panel.export_unreal, "Unreal range")
                .on_hover_text("PNG/R16: 32768 = 0 m; the status line gives the Z scale to import with");
            ui.label("Mesh: every");
            ui.add(egui::DragValue::new(&mut panel.export_decimate).range(1..=64))
                .on_hover_text("Keep every n-th node in OBJ/GLB exports");
            ui.label("th node");
        });
        if !settings.0.recent.is_empty() {
            ui.menu_button("Recent files", |ui| {
                for p in &settings.0.recent {
                    if ui.button(p.display().to_string()).clicked() {
                        out.write(EditorCommand::Open(p.clone()));
                        ui.close();
                    }
                }
            });
        }
        ui.collapsing("New flat map", |ui| {
            egui::Grid::new("new_map").num_columns(2).show(ui, |ui| {
                ui.label("Size (nodes)");
                egui::ComboBox::from_id_salt("new_size").selected_text(format!("{0}×{0}", panel.new_size)).show_ui(
                    ui,
                    |ui| {
                        for s in [129, 257, 513, 1025, 2049, 4097] {
                            ui.selectable_value(&mut panel.new_size, s, format!("{s}×{s}"));
                        }
                    },
                );
                ui.end_row();
                ui.label("Cell size (m)");
                ui.add(egui::DragValue::new(&mut panel.new_cell).range(0.01..=1000.0).speed(0.05));
                ui.end_row();
                ui.label("Height (m)");
                ui.add(egui::DragValue::new(&mut panel.new_height).range(-10_000.0..=10_000.0));
                ui.end_row();
            });
            ui.small(extent_label(panel.new_size, panel.new_size, panel.new_cell));
            if ui.button("Create").clicked() {
                out.write(EditorCommand::NewMap {
                    size: panel.new_size,
                    cell_size: panel.new_cell,
                    height: panel.new_height,
                });
            }
        });
    });
}

fn edit_section(ui: &mut egui::Ui, terrain: &EditorTerrain, sim: &SimState, out: &mut MessageWriter<EditorCommand>) {
    egui::CollapsingHeader::new("Edit").default_open(true).show(ui, |ui| {
        let h = terrain.doc.history();
        ui.horizontal(|ui| {
            let undo = h.undo_label().map(|l| format!("Undo {l}")).unwrap_or_else(|| "Undo".into());
            if ui.add_enabled(h.can_undo() && !sim.running(), egui::Button::new(undo)).on_hover_text("Ctrl+Z").clicked()
            {
                out.write(EditorCommand::Undo);
            }
            let redo = h.redo_label().map(|l| format!("Redo {l}")).unwrap_or_else(|| "Redo".into());
            if ui
                .add_enabled(h.can_redo() && !sim.running(), egui::Button::new(redo))
                .on_hover_text("Ctrl+Shift+Z / Ctrl+Y")
                .clicked()
            {
                out.write(EditorCommand::Redo);
            }
        });
        ui.small(format!(
            "History: {} steps, {:.1} MiB of {:.0} MiB",
            h.undo_len(),
            h.bytes_used() as f64 / 1048576.0,
            h.budget() as f64 / 1048576.0
        ));
    });
}

fn generator_section(
    ui: &mut egui::Ui,
    panel: &mut PanelState,
    base: &crate::editor::layers::BaseSource,
    gen_state: &GenState,
    sim: &SimState,
    now: f64,
    out: &mut MessageWriter<EditorCommand>,
) {
    egui::CollapsingHeader::new("Generator").default_open(true).show(ui, |ui| {
        ui.horizontal(|ui| {
            let generate = ui.add_enabled(!sim.running(), egui::Button::new("Generate"));
            hotspot(ui, "Generate", &generate);
            if generate.clicked() {
                match check_generator(&panel.generator) {
                    Ok(()) => {
                        panel.gen_error = None;
                        // Sent: no Live edit is left to send.
                        panel.gen_edited_at = None;
                        panel.gen_sent = Some(panel.generator.clone());
                        out.write(EditorCommand::Generate(panel.generator.clone()));
                    }
                    Err(e) => panel.gen_error = Some(e),
                }
            }
            if ui.button("Randomise seed").clicked() {
                panel.generator.seed = crate::core::rng::fresh_seed();
                panel.gen_edited_at = Some(now);
            }
            ui.checkbox(&mut panel.live, "Live").on_hover_text("Regenerate in the background as parameters change");
            if gen_state.busy() {
                ui.spinner();
            }
        });
        let g = &panel.generator;
        ui.small(extent_label(g.width, g.height, g.cell_size))
            .on_hover_text("The world the generator makes: (nodes − 1) × cell size");
        if let Some(note) = super::panel_sync::base_note(g, base) {
            ui.small(note);
        }
        match edit_params(ui, "generator", "GenerateParams", &mut panel.generator) {
            Ok(true) => {
                panel.gen_error = None;
                panel.gen_edited_at = Some(now);
            }
            Ok(false) => {}
            Err(e) => panel.gen_error = Some(e),
        }
        if preset_row(ui, "generate", "", &mut panel.generator, &mut panel.preset_path, &mut panel.preset_msg) {
            // Version-1 presets (grid units) are read with their own cell size.
            panel.generator.upgrade_units();
            panel.gen_edited_at = Some(now);
        }
        preset_message(ui, &panel.preset_msg);
        if ui.small_button("Reset to the default island").clicked() {
            panel.generator = crate::core::generate::demo_params(
                panel.generator.width.clamp(2, MAX_EDITOR_SIDE),
                panel.generator.seed,
            );
            panel.gen_edited_at = Some(now);
        }
        if let Some(e) = &panel.gen_error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
    });
}

/// The row that is always in view at the top of the panel, above the scrolled sections: the
/// model that Simulate runs, Simulate (or Pause/Resume and Cancel while it runs), the seed, and
/// the run's progress. (Inside the scrolled Erosion section it lay below the window's bottom edge
/// at 720 px, out of reach without scrolling.)
fn action_bar(ui: &mut egui::Ui, panel: &mut PanelState, sim: &SimState, out: &mut MessageWriter<EditorCommand>) {
    ui.horizontal(|ui| {
        if sim.running() {
            let paused = sim.paused();
            if ui.button(if paused { "Resume" } else { "Pause" }).clicked() {
                out.write(EditorCommand::SetPaused(!paused));
            }
            let cancel = ui.button("Cancel").on_hover_text("Stop now, keeping what ran (one undo step)");
            hotspot(ui, "Cancel", &cancel);
            if cancel.clicked() {
                out.write(EditorCommand::CancelSimulation);
            }
        } else {
            let tip = format!(
                "Run {} (set up in the Erosion section) on the whole map, as one undo step",
                MODELS[panel.model].label
            );
            let simulate = ui.button("Simulate").on_hover_text(tip);
            hotspot(ui, "Simulate", &simulate);
            if simulate.clicked() {
                match crate::core::rng::parse_seed(&panel.sim_seed) {
                    Ok(seed) => {
                        panel.model_error = None;
                        out.write(EditorCommand::Simulate {
                            model: panel.models[panel.model].clone(),
                            boundary: panel.boundary,
                            seed,
                            backend: panel.backend,
                        });
                    }
                    Err(e) => panel.model_error = Some(e),
                }
            }
        }
        ui.label("Seed");
        ui.add(egui::TextEdit::singleline(&mut panel.sim_seed).desired_width(80.0))
            .on_hover_text("A whole number, or `random`");
    });
    if sim.running() || sim.progress.total > 0 {
        let p = sim.progress;
        ui.add(
            egui::ProgressBar::new(p.fraction()).text(format!("{} / {} · {:.1}/s", p.done, p.total, sim.steps_per_s)),
        )
        .on_hover_text(format!("{} done / asked, and per second", MODELS[panel.model].unit));
    }
    if let Some(e) = &panel.model_error {
        ui.colored_label(egui::Color32::LIGHT_RED, e);
    }
}

fn erosion_section(ui: &mut egui::Ui, panel: &mut PanelState, sim: &SimState) {
    egui::CollapsingHeader::new("Erosion").default_open(true).show(ui, |ui| {
        ui.add_enabled_ui(!sim.running(), |ui| {
            egui::ComboBox::from_label("Model").selected_text(MODELS[panel.model].label).show_ui(ui, |ui| {
                for (i, e) in MODELS.iter().enumerate() {
                    ui.selectable_value(&mut panel.model, i, e.label);
                }
            });
            egui::ComboBox::from_label("Backend")
                .selected_text(panel.backend.name())
                .show_ui(ui, |ui| {
                    for b in crate::backend::Backend::ALL {
                        ui.selectable_value(&mut panel.backend, b, b.name());
                    }
                })
                .response
                .on_hover_text(format!(
                    "cpu: the reference models · gpu: wgpu compute ({}), CPU if no GPU can run it · auto: a \
                     hardware GPU when present",
                    crate::backend::gpu_model_labels().join(", ").to_lowercase()
                ));
        });
        if sim.running() || sim.progress.total > 0 {
            let l = &sim.ledger;
            egui::Grid::new("ledger").num_columns(2).show(ui, |ui| {
                for (name, v, tip) in [
                    ("eroded", l.eroded, "material removed from the terrain"),
                    ("deposited", l.deposited, "material laid down"),
                    ("lost at border", l.lost_at_border, "carried off a drain edge"),
                    ("suspended", l.suspended, "still carried by water or particles"),
                    ("clamped", l.clamped, "created/destroyed by a guard or a non-conservative scheme (signed)"),
                ] {
                    ui.label(name).on_hover_text(tip);
                    ui.label(format!("{:.3} m·nodes", v));
                    ui.end_row();
                }
            });
            ui.small(format!(
                "books close to {:.1e} of the material moved",
                (l.terrain_error().abs().max(l.material_error().abs()) / l.moved())
            ));
            if !sim.backend_used.is_empty() {
                ui.small(format!("on {}", sim.backend_used));
            }
            if let Some(n) = sim.notes.last() {
                ui.small(n);
            }
        }
        ui.add_enabled_ui(!sim.running(), |ui| {
            let i = panel.model;
            let changed = panel.models[i].visit_mut(EditModel(ui));
            if let Err(e) = changed {
                panel.model_error = Some(e);
            }
            ui.collapsing("Edges", |ui| {
                if let Err(e) = edit_params(ui, "boundary", "Boundary", &mut panel.boundary) {
                    panel.model_error = Some(e);
                }
            });
            ui.collapsing("Hardness", |ui| super::overlay::hardness_editor(ui, panel));
            ui.collapsing("Steer", |ui| panel.steer.edit(ui));
            let (models, path, msg) = (&mut panel.models, &mut panel.preset_path, &mut panel.preset_msg);
            models[i].visit_mut(ModelPresets { ui, path, msg });
            preset_message(ui, &panel.preset_msg);
            if ui.small_button("Reset this model to its defaults").clicked() {
                panel.models[i] = default_models().swap_remove(i);
            }
        });
    });
}

fn brush_section(ui: &mut egui::Ui, panel: &mut PanelState, tool: &mut BrushTool) {
    egui::CollapsingHeader::new("Brush").default_open(true).show(ui, |ui| {
        ui.horizontal(|ui| {
            for (k, name) in [
                (BrushKind::Raise, "Raise"),
                (BrushKind::Lower, "Lower"),
                (BrushKind::Smooth, "Smooth"),
                (BrushKind::Flatten, "Flatten"),
            ] {
                if ui.selectable_label(!tool.erode && tool.params.kind == k, name).clicked() {
                    tool.params.kind = k;
                    tool.erode = false;
                }
            }
            ui.selectable_value(&mut tool.erode, true, "Erode").on_hover_text(
                "Run the Erosion section's model under the cursor while the button is held, into an erosion layer",
            );
        });
        let mut p = tool.params.clone();
        preset_row(ui, "brush", "", &mut p, &mut panel.preset_path, &mut panel.preset_msg);
        match edit_params(ui, "brush", "BrushParams", &mut p) {
            Ok(_) => match p.validate() {
                Ok(()) => {
                    tool.params = p;
                    panel.brush_error = None;
                }
                Err(e) => panel.brush_error = Some(e.to_string()),
            },
            Err(e) => panel.brush_error = Some(e),
        }
        if let Some(e) = &panel.brush_error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
    });
}

/// A map's size for the panel: nodes, cell size and the world's extent, `(n − 1)·cell` a side, in
/// metres below 1 km: "513 × 513 nodes · 8 m cells = 4.10 × 4.10 km".
pub fn extent_label(width: usize, height: usize, cell_size: f32) -> String {
    let side = |n: usize| n.saturating_sub(1) as f64 * cell_size as f64;
    let (x, z) = (side(width), side(height));
    let extent = if x.max(z) >= 1000.0 {
        format!("{:.2} × {:.2} km", x / 1000.0, z / 1000.0)
    } else {
        let m = |v: f64| if v >= 100.0 || v.fract() == 0.0 { format!("{v:.0}") } else { format!("{v:.1}") };
        format!("{} × {} m", m(x), m(z))
    };
    format!("{width} × {height} nodes · {cell_size} m cells = {extent}")
}

/// The controls, as the Help section and the README list them.
pub const HELP: &str = "\
Camera: middle-drag or Alt+left-drag orbits · Shift+middle-drag pans · wheel zooms.
Brush: left paints with the selected tool (Raise by default) · right lowers · Ctrl+left smooths · Shift+left flattens · [ and ] change the radius.
Keys: Ctrl+Z undo · Ctrl+Shift+Z or Ctrl+Y redo · Ctrl+S save · Ctrl+Shift+S save as · Ctrl+O open.
Painting while a simulation runs is applied to the running simulation and becomes part of its undo step.";

fn help_section(ui: &mut egui::Ui) {
    egui::CollapsingHeader::new("Help").default_open(false).show(ui, |ui| {
        for line in HELP.lines() {
            ui.label(line);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clicks a button in frames `seconds` apart (the pointer arrives, the press, the release) in
    /// a new context, with the editor's input options or egui's defaults.
    fn click_in_slow_frames(desktop: bool, seconds: f64) -> bool {
        let ctx = egui::Context::default();
        if desktop {
            desktop_input_options(&ctx);
        }
        let at = egui::pos2(40.0, 20.0);
        let frames = [
            vec![egui::Event::PointerMoved(at)],
            vec![egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Primary,
                pressed: true,
                modifiers: Default::default(),
            }],
            vec![egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Primary,
                pressed: false,
                modifiers: Default::default(),
            }],
        ];
        let mut clicked = false;
        for (k, events) in frames.into_iter().enumerate() {
            let input = egui::RawInput {
                time: Some(k as f64 * seconds),
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(200.0, 100.0))),
                events,
                ..Default::default()
            };
            let mut out = ctx.run_ui(input, |ui| {
                let b = ui.put(
                    egui::Rect::from_min_size(egui::pos2(10.0, 10.0), egui::vec2(80.0, 24.0)),
                    egui::Button::new("Generate"),
                );
                clicked |= b.clicked();
            });
            out.textures_delta.clear();
        }
        clicked
    }

    #[test]
    fn a_click_counts_however_slow_the_frames() {
        assert!(click_in_slow_frames(true, 0.02), "a click at 50 frames a second");
        assert!(click_in_slow_frames(true, 3.0), "a click whose press and release lie in frames 3 s apart");
        // egui's own default drops it: the reason for the option.
        assert!(click_in_slow_frames(false, 0.02));
        assert!(!click_in_slow_frames(false, 3.0));
    }

    #[test]
    fn extent_labels_give_the_world_in_metres_or_km() {
        assert_eq!(extent_label(513, 513, 8.0), "513 × 513 nodes · 8 m cells = 4.10 × 4.10 km");
        assert_eq!(extent_label(513, 257, 2.0), "513 × 257 nodes · 2 m cells = 1.02 × 0.51 km");
        assert_eq!(extent_label(257, 129, 2.0), "257 × 129 nodes · 2 m cells = 512 × 256 m");
        assert_eq!(extent_label(65, 65, 0.25), "65 × 65 nodes · 0.25 m cells = 16 × 16 m");
        assert_eq!(extent_label(100, 100, 0.5), "100 × 100 nodes · 0.5 m cells = 49.5 × 49.5 m");
        assert_eq!(extent_label(1, 1, 2.0), "1 × 1 nodes · 2 m cells = 0 × 0 m");
    }
}
