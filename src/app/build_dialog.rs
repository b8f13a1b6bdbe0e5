//! File ▸ Build…: the window that builds the project at another resolution
//! ([`crate::editor::build`]) and writes it to a file, in the background.
//!
//! The window (an `egui::Window`) edits the dialog's [`DialogSettings`]
//! ([`crate::editor::build::dialog`]), one function per section of it: the size (the allowed sides, starting at 4× the preview's
//! resolution, with what it means in nodes and metres), how erosion layers are rebuilt (Upsample
//! or Re-run), the output file (a path, Browse… for the system's save dialog, and a format combo
//! that sets the extension). "Engine tile set" instead writes the build as Unreal or Unity tiles
//! with texture maps and a manifest ([`crate::editor::build::tileset`], as `talus build --tiles`
//! writes them): the engine, a tiling from its tile sizes (choosing one sets the size), the height
//! tiles' format, the maps, the folder (Browse… picks one), the tiles' name and Replace. Under them
//! it shows the build's plan (one line per part of the stack, the tile set's parts included) and
//! its memory estimate against the memory available; a build that would be refused says why in red
//! and its Build button is disabled.
//!
//! Build sends [`EditorCommand::Build`] with the dialog's [`BuildRequest`] (a script's `Build` sends
//! the same, see [`super::script`]). This plugin prepares it ([`build::prepare`]: the one check
//! and plan of the build, as `talus build` makes it), clones the document's layer stack (its tiles
//! are shared: cheap) and runs the prepared build on Bevy's `AsyncComputeTaskPool`,
//! inside a thread pool of all cores but one so the window keeps a core to draw with (a build's
//! bits do not depend on the thread count). Stale erosion layers re-run at the preview size first,
//! on the clone; the dialog says so and offers Re-simulate, which updates the document's own.
//! Every frame reads the build's progress (stage and fraction) from a shared slot: the frame never
//! waits on the build. Cancel sets the flag the build reads between rows; a cancelled build writes
//! nothing (the file is written atomically, after the last row; once writing has begun, Cancel is
//! disabled; a tile set is written into a temporary folder renamed at the end, so Cancel works
//! until its last tile). At the end the status line says "Built PATH (N×N) in S s", or the error.
//!
//! Its "Loupe" section (drawn by [`super::loupe`]) shows a square of the terrain as these settings
//! would build it, before Build: Pick a spot, then a click on the terrain.
//!
//! Closing the window while a build runs keeps it running: the status line then shows its progress
//! twice a second, and File ▸ Build… brings the window back with its progress bar and Cancel.
//! Quitting the editor cancels it.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::commands::EditorCommand;
use super::param_editor::edit_params;
use super::state::SimState;
use super::state::{BuildChoices, EditorTerrain, StatusLine};
use crate::core::erosion::ModelEntry;
use crate::core::erosion::refine::RefineParams;
use crate::core::io::interop::Format;
use crate::core::io::tiles::{ENGINES, MapKind, TileFormat};
use crate::core::splat::SplatBands;
use crate::editor::build::dialog::{DialogSettings, TargetKind, layout_line, metres, size_line};
use crate::editor::build::loupe_view::mode_label;
use crate::editor::build::output::file_formats;
use crate::editor::build::{
    self, BuildContext, BuildError, BuildPlan, BuildProgress, BuildRequest, ErosionBuild, Finished, UNREAL_SIZES,
    Written, allowed_sizes, parity_table, tileset,
};
use crate::editor::job::simulation_threads;
use crate::editor::layers::LayerStack;

/// The Build… dialog and the build it runs.
pub struct BuildDialogPlugin;

impl Plugin for BuildDialogPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<BuildDialog>()
            .init_resource::<BuildChoices>()
            .add_systems(Update, (handle_build_commands, poll_build).chain())
            .add_systems(EguiPrimaryContextPass, draw_build_dialog);
    }
}

/// How often the memory available is read again while the dialog is open.
const MEMORY_EVERY: Duration = Duration::from_secs(2);
/// How often the status line shows a build's progress while its window is closed.
const STATUS_EVERY: Duration = Duration::from_millis(500);

/// What a build's worker hands back.
type Outcome = Result<Finished, BuildError>;

/// State shared with a build's worker.
struct Shared {
    progress: Mutex<BuildProgress>,
    cancel: AtomicBool,
    result: Mutex<Option<Outcome>>,
}

/// A build in flight.
struct Running {
    shared: Arc<Shared>,
    out: PathBuf,
    size: (usize, usize),
    started: Instant,
}

impl Drop for Running {
    /// A build nobody waits for any more (the editor quits) stops.
    fn drop(&mut self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
    }
}

impl Running {
    fn progress(&self) -> BuildProgress {
        self.shared.progress.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A save or folder dialog's answer: `None` until it closes, then the path chosen (if any).
type Answer = Arc<Mutex<Option<Option<PathBuf>>>>;

/// The plan of the request shown, and what it was made for (document revision, request).
type PlanCache = ((u64, BuildRequest), Result<BuildPlan, String>);

/// The Build… dialog's own state: the build in flight, an open file dialog, the plan and memory
/// it shows (whether it is open and what it builds with are [`BuildChoices`], which its loupe
/// reads too).
#[derive(Resource, Default)]
pub struct BuildDialog {
    running: Option<Running>,
    /// An open file (or, for a tile set, folder) dialog and what its answer is for.
    browse: Option<(TargetKind, Answer)>,
    plan: Option<PlanCache>,
    memory: Option<(Instant, Option<u64>)>,
    status_at: Option<Instant>,
    /// Builds started since start (a script waits for this to grow after Build).
    pub started: u64,
    /// Builds that ended (written, cancelled or failed) since start.
    pub finished: u64,
    /// Why the last build failed, until the next one starts.
    pub last_error: Option<String>,
    /// What the last build wrote ("Built … in S s"), until the next one starts.
    last_done: Option<String>,
}

impl BuildDialog {
    /// True while a build runs.
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    /// What a script's view report says of the dialog: open, its choices, builds started and
    /// ended, the last error.
    pub fn report(&self, choices: &BuildChoices) -> serde_json::Value {
        let s = choices.settings();
        serde_json::json!({
            "open": choices.open,
            "running": self.running(),
            "started": self.started,
            "finished": self.finished,
            "last_error": self.last_error,
            "target": s.map(|s| format!("{:?}", s.kind)),
            "size": s.map(|s| s.size),
            "engine": s.map(|s| s.tiles.engine.name()),
            "tiles_x": s.map(|s| s.tiles.tiles),
            "destination": s.map(|s| s.destination().display().to_string()),
        })
    }
}

/// What a build takes from the document besides its stack: its path (or title) and the
/// material's splat bands.
fn context(terrain: &EditorTerrain, bands: SplatBands) -> BuildContext {
    BuildContext::of_project(terrain.doc.path(), &terrain.doc.title(), bands)
}

/// Prepares `req` (the one check and plan of the build) and starts it on the background pool.
fn start(
    dialog: &mut BuildDialog,
    terrain: &EditorTerrain,
    sim: &SimState,
    req: &BuildRequest,
    ctx: &BuildContext,
) -> Result<(usize, usize), String> {
    if dialog.running.is_some() {
        return Err("a build is already running; cancel it or wait for it to end".into());
    }
    if sim.running() {
        return Err("a simulation is running; wait for it to end or cancel it".into());
    }
    let mut stack = terrain.doc.stack().clone();
    let prepared = build::prepare(&stack, req, ctx).map_err(|e| e.to_string())?;
    let size = (prepared.plan().width, prepared.plan().height);
    let shared = Arc::new(Shared {
        progress: Mutex::new(BuildProgress::starting()),
        cancel: AtomicBool::new(false),
        result: Mutex::new(None),
    });
    let worker = shared.clone();
    AsyncComputeTaskPool::get()
        .spawn(async move {
            let w = &worker;
            let progress = |p: BuildProgress| *w.progress.lock().unwrap_or_else(PoisonError::into_inner) = p;
            let mut go = || prepared.run(&mut stack, &w.cancel, &progress);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(simulation_threads())
                .thread_name(|i| format!("build-{i}"))
                .build();
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| match pool {
                Ok(pool) => pool.install(go),
                Err(_) => go(),
            }))
            .unwrap_or_else(|_| {
                Err(BuildError::Layer {
                    layer: "the build".into(),
                    msg: "it stopped on an internal error; nothing was written".into(),
                })
            });
            *w.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    let out = req.destination().map(PathBuf::from).unwrap_or_default();
    dialog.running = Some(Running { shared, out, size, started: Instant::now() });
    dialog.started += 1;
    dialog.last_error = None;
    dialog.last_done = None;
    Ok(size)
}

fn handle_build_commands(
    mut cmds: MessageReader<EditorCommand>,
    mut dialog: ResMut<BuildDialog>,
    mut choices: ResMut<BuildChoices>,
    terrain: Res<EditorTerrain>,
    sim: Res<SimState>,
    look: Option<Res<super::state::Look>>,
    mut status: ResMut<StatusLine>,
) {
    for cmd in cmds.read() {
        match cmd {
            EditorCommand::OpenBuildDialog => {
                choices.settings_for(&terrain);
                choices.open = true;
            }
            EditorCommand::Build(req) => {
                choices.settings_for(&terrain).apply(req);
                choices.open = true;
                let bands = look.as_ref().map_or_else(SplatBands::default, |l| l.0.material.bands.splat_bands());
                let ctx = context(&terrain, bands);
                match start(&mut dialog, &terrain, &sim, req, &ctx) {
                    Ok((w, h)) => status.info(format!(
                        "Building {w}×{h} to {}…",
                        req.destination().map_or_else(String::new, |p| p.display().to_string())
                    )),
                    Err(e) => {
                        status.error(format!("Build: {e}"));
                        dialog.last_error = Some(e);
                    }
                }
            }
            EditorCommand::CancelBuild => {
                if let Some(r) = &dialog.running {
                    if !r.progress().phase.cancellable() {
                        status.info("The build's file is being written; it can no longer be cancelled");
                    } else {
                        r.shared.cancel.store(true, Ordering::Relaxed);
                        status.info("Cancelling the build…");
                    }
                }
            }
            _ => {}
        }
    }
}

/// What the status line and the dialog say of a finished build.
fn done_line(r: &Running, f: &Finished, secs: f64) -> String {
    let rerun = if f.rerun.is_empty() {
        String::new()
    } else {
        format!("; re-ran {} at the preview size first", f.rerun.join(", "))
    };
    // Where the detail passes ran, when one ran on the GPU or fell back from it.
    let passes: Vec<&str> =
        f.built.passes_ran_on.iter().filter(|l| !l.ends_with(": CPU")).map(String::as_str).collect();
    let rerun = if passes.is_empty() { rerun } else { format!("{rerun}; detail passes: {}", passes.join("; ")) };
    let (w, h) = (f.built.map.width, f.built.map.height);
    match &f.written {
        Written::Tiles { layout: l, files, .. } => format!(
            "Built the tile set {} ({}×{} tiles of {}, {w}×{h} nodes, {files} files with the manifest) in {secs:.1} \
             s{rerun}",
            r.out.display(),
            l.tiles_x,
            l.tiles_y,
            l.tile_size,
        ),
        _ => format!("Built {} ({w}×{h}) in {secs:.1} s{rerun}", r.out.display()),
    }
}

/// Ends a finished build (status line), shows a running one's progress in the status line while
/// its window is closed, and takes the save dialog's answer.
fn poll_build(
    mut dialog: ResMut<BuildDialog>,
    mut choices: ResMut<BuildChoices>,
    mut status: ResMut<StatusLine>,
    terrain: Res<EditorTerrain>,
) {
    let d = &mut *dialog;
    if let Some((kind, answer)) = &d.browse {
        let kind = *kind;
        let picked = answer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(picked) = picked {
            d.browse = None;
            if let Some(mut p) = picked {
                let s = choices.settings_for(&terrain);
                match kind {
                    TargetKind::File => {
                        if Format::of_path(&p).is_none() {
                            p.set_extension(s.format().unwrap_or(Format::Png).extension());
                        }
                        s.out = p.display().to_string();
                    }
                    // A folder with files in it takes the set in a new folder of the name shown.
                    TargetKind::TileSet => {
                        let holds = std::fs::read_dir(&p).is_ok_and(|mut it| it.next().is_some());
                        if holds && let Some(name) = s.tile_dir().file_name() {
                            p = p.join(name);
                        }
                        s.tiles.dir = p.display().to_string();
                    }
                }
            }
        }
    }
    let Some(r) = &d.running else { return };
    let done = r.shared.result.lock().unwrap_or_else(PoisonError::into_inner).take();
    let Some(outcome) = done else {
        if !choices.open && !status.is_error && d.status_at.is_none_or(|t| t.elapsed() >= STATUS_EVERY) {
            let p = r.progress();
            status.info(format!(
                "Building {}×{}: {} · {:.0} % · {:.0} s (Build… in File shows it, with Cancel)",
                r.size.0,
                r.size.1,
                p.phase,
                100.0 * p.fraction,
                r.started.elapsed().as_secs_f64()
            ));
            d.status_at = Some(Instant::now());
        }
        return;
    };
    let Some(r) = d.running.take() else { return };
    d.finished += 1;
    d.status_at = None;
    let secs = r.started.elapsed().as_secs_f64();
    match outcome {
        Ok(f) => {
            let done = done_line(&r, &f, secs);
            status.info(done.clone());
            d.last_done = Some(done);
        }
        Err(BuildError::Cancelled) => status.info(format!("Build cancelled after {secs:.1} s; nothing was written")),
        Err(e) => {
            let e = e.to_string();
            status.error(format!("Build failed: {e}"));
            d.last_error = Some(e);
        }
    }
}

/// Opens the system's folder dialog for a tile set on its own thread.
fn browse_folder(settings: &DialogSettings) -> Option<Answer> {
    let answer: Answer = Arc::new(Mutex::new(None));
    let out = answer.clone();
    let current = settings.tile_dir();
    std::thread::Builder::new()
        .name("build-dialog".into())
        .spawn(move || {
            let mut d = rfd::FileDialog::new().set_title("Folder for the tile set");
            if let Some(dir) = current.parent().filter(|p| p.is_dir()) {
                d = d.set_directory(dir);
            }
            let picked = d.pick_folder();
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(picked);
        })
        .ok()
        .map(|_| answer)
}

/// Opens the system's save dialog on its own thread (the frame never waits for it).
fn browse(settings: &DialogSettings) -> Option<Answer> {
    let answer: Answer = Arc::new(Mutex::new(None));
    let out = answer.clone();
    let current = settings.out_path();
    let first = settings.format().unwrap_or(Format::Png);
    std::thread::Builder::new()
        .name("build-dialog".into())
        .spawn(move || {
            let mut d = rfd::FileDialog::new();
            for f in std::iter::once(first).chain(file_formats().filter(|f| *f != first)) {
                d = d.add_filter(f.spec().label, f.spec().extensions);
            }
            if let Some(dir) = current.parent().filter(|p| p.is_dir()) {
                d = d.set_directory(dir);
            }
            if let Some(name) = current.file_name() {
                d = d.set_file_name(name.to_string_lossy());
            }
            let picked = d.save_file();
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(picked);
        })
        .ok()
        .map(|_| answer)
}

/// What the sections of the window share while it is drawn.
struct View<'a> {
    stack: &'a LayerStack,
    /// The project's size, nodes.
    pw: usize,
    ph: usize,
    busy: bool,
}

fn draw_build_dialog(
    mut contexts: EguiContexts,
    mut dialog: ResMut<BuildDialog>,
    mut choices: ResMut<BuildChoices>,
    terrain: Res<EditorTerrain>,
    sim: Res<SimState>,
    look: Option<Res<super::state::Look>>,
    mut out: MessageWriter<EditorCommand>,
    mut status: ResMut<StatusLine>,
    mut loupe: ResMut<super::loupe::LoupeState>,
) -> Result {
    if !choices.open {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?.clone();
    // Build closes the window through `open`; its title bar's ✕ through `shown`.
    let (mut open, mut shown) = (true, true);
    let settings = choices.settings_for(&terrain);
    let BuildDialog { running, browse: browsing, plan, memory, last_error, last_done, .. } = &mut *dialog;
    let stack = terrain.doc.stack();
    let view = View { stack, pw: stack.width(), ph: stack.height(), busy: running.is_some() };
    let req = settings.request();
    let key = (terrain.doc.revision(), req.clone());
    if plan.as_ref().is_none_or(|p| p.0 != key) {
        *plan = Some((key, build::plan(stack, &req).map_err(|e| e.to_string())));
    }
    if memory.is_none_or(|m| m.0.elapsed() >= MEMORY_EVERY) {
        *memory = Some((Instant::now(), build::available_memory()));
    }
    let available = memory.and_then(|m| m.1);
    let plan = plan.as_ref().map(|p| &p.1);
    let bands = look.as_ref().map_or_else(SplatBands::default, |l| l.0.material.bands.splat_bands());
    let build_ctx = context(&terrain, bands);
    egui::Window::new("Build")
        .id(egui::Id::new("talus_build_dialog"))
        .open(&mut shown)
        .collapsible(false)
        .resizable(false)
        .default_pos([380.0, 40.0])
        .default_width(440.0)
        .show(&ctx, |ui| {
            ui.label(format!(
                "The project: {}. A build samples the same land with more (or fewer) nodes.",
                size_line(view.pw, view.ph, stack.cell_size() as f64)
            ));
            ui.add_space(4.0);
            ui.add_enabled_ui(!view.busy, |ui| {
                egui::Grid::new("talus_build_grid").num_columns(2).spacing([10.0, 6.0]).show(ui, |ui| {
                    draw_target(ui, &view, settings);
                    draw_size_line(ui, plan);
                    draw_erosion(ui, &view, settings);
                    match settings.kind {
                        TargetKind::TileSet => draw_tile_output(ui, settings, browsing, &mut status),
                        TargetKind::File => draw_file_output(ui, settings, browsing, &mut status),
                    }
                });
            });
            ui.separator();
            let refusals = draw_plan(ui, plan, available, &req, &build_ctx, &sim);
            draw_notes(ui, &view, running.is_some(), last_done.as_deref(), last_error.as_deref(), &refusals, &mut out);
            ui.separator();
            let extent =
                [(view.pw.max(1) - 1) as f32 * stack.cell_size(), (view.ph.max(1) - 1) as f32 * stack.cell_size()];
            super::loupe::loupe_section(ui, &mut loupe, extent, &mut out);
            ui.separator();
            match running {
                Some(r) => draw_progress(ui, r, &mut out),
                None => draw_buttons(ui, settings, refusals.is_empty(), &mut open, &mut out),
            }
        });
    choices.open = open && shown;
    Ok(())
}

/// "Write" (a file or a tile set); for a tile set its engine and tiling, for a file its size.
fn draw_target(ui: &mut egui::Ui, view: &View, settings: &mut DialogSettings) {
    let (pw, ph) = (view.pw, view.ph);
    ui.label("Write");
    ui.horizontal(|ui| {
        let mut kind = settings.kind;
        ui.radio_value(&mut kind, TargetKind::File, "One heightmap file");
        let r = ui.radio_value(&mut kind, TargetKind::TileSet, "Engine tile set").on_hover_text(
            "Unreal or Unity tiles cut from one build (their shared edges agree bit for bit), with texture maps and \
             a manifest of the import numbers",
        );
        super::widgets::hotspot(ui, "Build: tile set", &r);
        if kind != settings.kind {
            settings.set_kind(kind, pw, ph);
        }
    });
    ui.end_row();
    if settings.kind == TargetKind::TileSet {
        ui.label("Engine");
        ui.horizontal(|ui| {
            let mut engine = settings.tiles.engine;
            for e in ENGINES {
                let r = ui.radio_value(&mut engine, e.engine, e.label).on_hover_text(e.tip);
                super::widgets::hotspot(ui, &super::widgets::engine_hotspot(e), &r);
            }
            if engine != settings.tiles.engine {
                settings.set_engine(engine, pw, ph);
            }
        });
        ui.end_row();
        ui.label("Tiles");
        let layouts = tileset::layouts(settings.tiles.engine, pw, ph);
        let current = settings.layout(pw, ph).ok();
        let mut picked = None;
        egui::ComboBox::from_id_salt("talus_build_tiles")
            .selected_text(current.as_ref().map_or("(choose a tiling)".into(), layout_line))
            .height(360.0)
            .show_ui(ui, |ui| {
                for l in &layouts {
                    if ui.selectable_label(current == Some(*l), layout_line(l)).clicked() {
                        picked = Some(*l);
                    }
                }
            });
        if let Some(l) = picked {
            settings.set_layout(l);
        }
        ui.end_row();
    } else {
        ui.label("Size");
        let mut size = settings.size;
        egui::ComboBox::from_id_salt("talus_build_size").selected_text(format!("{0} × {0}", settings.size)).show_ui(
            ui,
            |ui| {
                for n in allowed_sizes() {
                    let unreal = if UNREAL_SIZES.contains(&n) { "  (Unreal)" } else { "" };
                    ui.selectable_value(&mut size, n, format!("{n} × {n}{unreal}"));
                }
            },
        );
        if size != settings.size {
            settings.set_size(size);
        }
        ui.end_row();
    }
}

/// What the chosen size means in nodes, cells and metres (or why it cannot be built).
fn draw_size_line(ui: &mut egui::Ui, plan: Option<&Result<BuildPlan, String>>) {
    ui.label("");
    match plan {
        Some(Ok(p)) => ui.label(format!(
            "{} ({}× the preview's resolution)",
            size_line(p.width, p.height, p.cell_size as f64),
            metres(p.ratio)
        )),
        Some(Err(e)) => ui.colored_label(egui::Color32::LIGHT_RED, e),
        None => ui.label(""),
    };
    ui.end_row();
}

/// How erosion layers are rebuilt, and which of the stack's models keep the preview's landforms
/// that way.
fn draw_erosion(ui: &mut egui::Ui, view: &View, settings: &mut DialogSettings) {
    ui.label("Erosion layers");
    ui.horizontal(|ui| {
        for mode in ErosionBuild::ALL {
            ui.radio_value(&mut settings.erosion, mode, mode_label(mode)).on_hover_text(erosion_tip(mode));
        }
    });
    ui.end_row();
    ui.label("");
    ui.small(erosion_tip(settings.erosion));
    ui.end_row();
    if settings.erosion == ErosionBuild::Refine {
        // The passes' settings, each with its unit, range and default on hover (`RefineParams`).
        ui.label("");
        ui.collapsing("Detail passes", |ui| {
            if let Err(e) = edit_params(ui, "refine", "RefineParams", &mut settings.refine) {
                ui.colored_label(egui::Color32::LIGHT_RED, e);
            }
            if settings.refine != RefineParams::default() && ui.button("Defaults").clicked() {
                settings.refine = RefineParams::default();
            }
        });
        ui.end_row();
    }
    let mut models: Vec<&'static ModelEntry> = Vec::new();
    for l in view.stack.layers().iter().filter(|l| l.visible) {
        if let Some(e) = l.erosion().map(|e| e.recipe.model.entry())
            && !models.iter().any(|m| m.cli == e.cli)
        {
            models.push(e);
        }
    }
    for e in models {
        let line = parity_table::line(e.label, e.cli, settings.erosion);
        let keeps = parity_table::measured(e.cli, settings.erosion).is_some_and(|m| m.keeps_parity());
        ui.label("");
        if keeps {
            ui.small(line);
        } else {
            ui.colored_label(egui::Color32::from_rgb(230, 180, 60), egui::RichText::new(line).small());
        }
        ui.end_row();
    }
}

/// A tile set's height format, maps, folder, name and Replace.
fn draw_tile_output(
    ui: &mut egui::Ui,
    settings: &mut DialogSettings,
    browsing: &mut Option<(TargetKind, Answer)>,
    status: &mut StatusLine,
) {
    ui.label("Height tiles");
    ui.horizontal(|ui| {
        ui.radio_value(&mut settings.tiles.format, TileFormat::Png16, "PNG 16-bit");
        ui.radio_value(&mut settings.tiles.format, TileFormat::R16, "R16 (raw)");
        ui.small(settings.tiles.engine.spec().heights_note(settings.tiles.format));
    });
    ui.end_row();
    ui.label("Maps");
    ui.horizontal_wrapped(|ui| {
        for k in MapKind::ALL {
            let mut on = settings.tiles.maps.contains(&k);
            if ui.checkbox(&mut on, k.name()).on_hover_text(k.spec().summary).changed() {
                settings.tiles.maps.retain(|m| *m != k);
                if on {
                    settings.tiles.maps.push(k);
                    settings.tiles.maps.sort();
                }
            }
        }
    });
    ui.end_row();
    ui.label("Folder");
    ui.horizontal(|ui| {
        ui.add(egui::TextEdit::singleline(&mut settings.tiles.dir).desired_width(250.0))
            .on_hover_text("The folder the tiles, maps and manifest.json go into");
        let b = ui.add_enabled(browsing.is_none(), egui::Button::new("Browse…"));
        if b.clicked() {
            *browsing = browse_folder(settings).map(|a| (TargetKind::TileSet, a));
            if browsing.is_none() {
                status.error("cannot open a folder dialog; type the path instead");
            }
        }
    });
    ui.end_row();
    ui.label("Tile name");
    ui.horizontal(|ui| {
        ui.add(egui::TextEdit::singleline(&mut settings.tiles.name).desired_width(140.0))
            .on_hover_text("The files' names start with it: NAME_x0_y0.png or .r16, maps NAME_flow_x0_y0.png");
        ui.checkbox(&mut settings.tiles.replace, "Replace")
            .on_hover_text("Replace a folder that holds files, once the new set is complete");
    });
    ui.end_row();
}

/// One file's path (with Browse…), its format and, for integer formats, Unreal's range.
fn draw_file_output(
    ui: &mut egui::Ui,
    settings: &mut DialogSettings,
    browsing: &mut Option<(TargetKind, Answer)>,
    status: &mut StatusLine,
) {
    ui.label("Output");
    ui.horizontal(|ui| {
        ui.add(egui::TextEdit::singleline(&mut settings.out).desired_width(250.0))
            .on_hover_text("The file to write; its extension picks the format");
        let b = ui.add_enabled(browsing.is_none(), egui::Button::new("Browse…"));
        if b.clicked() {
            *browsing = browse(settings).map(|a| (TargetKind::File, a));
            if browsing.is_none() {
                status.error("cannot open a file dialog; type the path instead");
            }
        }
    });
    ui.end_row();
    ui.label("Format");
    ui.horizontal(|ui| {
        let current = settings.format();
        egui::ComboBox::from_id_salt("talus_build_format")
            .selected_text(current.map_or("(by extension)", |f| f.spec().label))
            .show_ui(ui, |ui| {
                for f in file_formats() {
                    if ui.selectable_label(current == Some(f), f.spec().label).clicked() {
                        settings.set_format(f);
                    }
                }
            });
        let integer = current.is_some_and(Format::is_integer);
        ui.add_enabled(integer, egui::Checkbox::new(&mut settings.unreal, "Unreal range"))
            .on_hover_text("PNG/R16: 32768 = 0 m, as Unreal's landscape importer reads them");
    });
    ui.end_row();
}

/// The plan and its memory estimate; returns why Build is refused, if it is.
fn draw_plan(
    ui: &mut egui::Ui,
    plan: Option<&Result<BuildPlan, String>>,
    available: Option<u64>,
    req: &BuildRequest,
    ctx: &BuildContext,
    sim: &SimState,
) -> Vec<String> {
    let mut refusals: Vec<String> = Vec::new();
    match plan {
        Some(Ok(p)) => {
            ui.label("Plan");
            for s in &p.steps {
                ui.small(format!("• {s}"));
            }
            let need = p.bytes as f64 / (1u64 << 30) as f64;
            match build::check_memory(p, available) {
                Ok(()) => {
                    let avail = available
                        .map(|a| format!(" of {:.1} GiB available", a as f64 / (1u64 << 30) as f64))
                        .unwrap_or_else(|| " (the memory available is unknown)".into());
                    ui.small(format!("Memory: about {need:.2} GiB{avail}"));
                }
                Err(e) => refusals.push(e.to_string()),
            }
        }
        Some(Err(e)) => refusals.push(e.clone()),
        None => {}
    }
    if let Err(e) = build::check_target(req, ctx) {
        refusals.push(e.to_string());
    }
    if sim.running() {
        refusals.push("a simulation is running; wait for it to end or cancel it".into());
    }
    refusals
}

/// Stale layers (with Re-simulate), what the last build wrote or why it failed, and the
/// refusals.
fn draw_notes(
    ui: &mut egui::Ui,
    view: &View,
    running: bool,
    last_done: Option<&str>,
    last_error: Option<&str>,
    refusals: &[String],
    out: &mut MessageWriter<EditorCommand>,
) {
    let red = egui::Color32::LIGHT_RED;
    let stale: Vec<&str> = view
        .stack
        .layers()
        .iter()
        .filter(|l| l.visible && l.erosion().is_some_and(|e| e.stale))
        .map(|l| l.name.as_str())
        .collect();
    if !stale.is_empty() {
        ui.horizontal_wrapped(|ui| {
            ui.colored_label(
                egui::Color32::from_rgb(230, 180, 60),
                format!(
                    "Stale: {} (the input changed since it ran). The build re-runs it at the preview size first, or \
                     re-simulate now:",
                    stale.join(", ")
                ),
            );
            if ui.add_enabled(!view.busy, egui::Button::new("Re-simulate")).clicked() {
                out.write(EditorCommand::Resimulate);
            }
        });
    }
    if let (false, Some(done)) = (running, last_done) {
        ui.colored_label(egui::Color32::from_rgb(140, 200, 140), done);
    }
    for r in refusals {
        ui.colored_label(red, r);
    }
    if let (false, Some(e)) = (view.busy, last_error) {
        ui.colored_label(red, format!("The last build failed: {e}"));
    }
}

/// The running build's progress and Cancel (disabled once the file is being written).
fn draw_progress(ui: &mut egui::Ui, r: &Running, out: &mut MessageWriter<EditorCommand>) {
    let p = r.progress();
    ui.add(egui::ProgressBar::new(p.fraction as f32).text(format!(
        "{} · {:.0} % · {:.1} s",
        p.phase,
        100.0 * p.fraction,
        r.started.elapsed().as_secs_f64()
    )));
    let cancelling = r.shared.cancel.load(Ordering::Relaxed);
    let writing = !p.phase.cancellable();
    ui.horizontal(|ui| {
        let b = ui.add_enabled(!cancelling && !writing, egui::Button::new("Cancel"));
        let tip = if writing {
            "The file is being written; it can no longer be cancelled"
        } else {
            "Stop the build; nothing is written"
        };
        if b.on_hover_text(tip).on_disabled_hover_text(tip).clicked() {
            out.write(EditorCommand::CancelBuild);
        }
        ui.small(format!("writing to {}", r.out.display()));
    });
}

/// Build (sends the dialog's request) and Close.
fn draw_buttons(
    ui: &mut egui::Ui,
    settings: &DialogSettings,
    allowed: bool,
    open: &mut bool,
    out: &mut MessageWriter<EditorCommand>,
) {
    ui.horizontal(|ui| {
        let b = ui.add_enabled(allowed, egui::Button::new("Build"));
        super::widgets::hotspot(ui, "Build: Build", &b);
        let tip = match settings.kind {
            TargetKind::File => "Build in the background and write the file",
            TargetKind::TileSet => "Build in the background and write the tile set",
        };
        if b.on_hover_text(tip).clicked() {
            out.write(EditorCommand::Build(settings.request()));
        }
        if ui.button("Close").clicked() {
            *open = false;
        }
    });
}

/// What a build mode does, for its radio button and the line under it.
fn erosion_tip(mode: ErosionBuild) -> &'static str {
    match mode {
        ErosionBuild::Refine => {
            "The preview's result brought up ×2 per level, eroded a little at each: the preview's landforms with \
             the fine gullies the build's cells can hold"
        }
        ErosionBuild::Upsample => "The preview's result, resampled: the preview's landforms, no finer erosion (fast)",
        ErosionBuild::Rerun => {
            "Each recipe run again at the build's resolution: full detail, but slower and, for most models, \
             another land (the README's parity table)"
        }
    }
}
