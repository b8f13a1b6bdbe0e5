//! Files and safety: open/save dialogs, the window title, asking before closing with unsaved work,
//! the autosave and its recovery, and writing the user's settings at exit.
//!
//! - Dialogs (open, save as, import, export) are rfd's native ones (XDG portal, or zenity), run on their own thread so the frame
//!   never waits; their answer becomes the matching [`EditorCommand`] (`Open`, `SaveAs`, `Import`,
//!   `Export`). The
//!   panel also has a path field, so files can be opened and saved where no dialog is available.
//! - Closing the window (or [`EditorCommand::Quit`]) with unsaved changes asks: Save, Discard or
//!   Cancel. Saving first goes through the same save path, and only quits once it succeeded.
//! - Every [`AUTOSAVE_EVERY`] the project (the whole layer stack) is written to the autosave slot when it has unsaved changes
//!   newer than the last autosave (on a worker thread, from a copy). A save or a deliberate discard
//!   clears the slot, so finding it at start means the last session ended with unsaved work: the
//!   editor then offers to recover it.
//! - Scripted runs (see [`super::script`]) skip the prompts, the autosave and the settings file.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::window::WindowCloseRequested;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::commands::EditorCommand;
use super::script::ScriptRunner;
use super::state::BrushTool;
use super::state::PanelState;
use super::state::{CellSizePrompt, EditorTerrain, StatusLine, UserSettings};
use crate::editor::document::Document;
use crate::editor::persist::{AUTOSAVE_EVERY, Autosave, AutosaveInfo};

/// Dialogs, quitting, autosave, recovery, title.
pub struct FilesPlugin;

impl Plugin for FilesPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<FileDialogs>()
            .init_resource::<QuitPrompt>()
            .init_resource::<AutosaveState>()
            .add_systems(Startup, look_for_autosave)
            .add_systems(Update, (open_dialogs, finish_dialogs, handle_quit, autosave, update_title))
            .add_systems(EguiPrimaryContextPass, draw_prompts);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DialogKind {
    Open,
    SaveAs,
    Import,
    Export { unreal: bool, decimate: usize },
}

type Answer = Arc<Mutex<Option<Option<PathBuf>>>>;

/// A background autosave write: `None` until it ends, then its result.
type WriteOutcome = Arc<Mutex<Option<Result<(), String>>>>;

/// The file dialog on screen, if any.
#[derive(Resource, Default)]
pub struct FileDialogs {
    pending: Option<(DialogKind, Answer)>,
}

/// The "unsaved changes" question, and whether a save was asked to quit afterwards.
#[derive(Resource, Default)]
pub struct QuitPrompt {
    /// The question is on screen: set when a quit is asked with unsaved changes.
    pub open: bool,
    /// Set when "Save" was chosen to quit: the error count at that moment, so a failed save
    /// (a new error) cancels the quit instead of quitting at some later successful save.
    quit_after_save: Option<u32>,
}

/// Autosave bookkeeping and a recovery offer found at start.
#[derive(Resource)]
pub struct AutosaveState {
    slot: Option<Autosave>,
    last_check: Instant,
    saved_revision: Option<u64>,
    writing: Option<WriteOutcome>,
    /// An autosave found at start, not yet recovered or discarded.
    pub offer: Option<AutosaveInfo>,
}

impl Default for AutosaveState {
    fn default() -> Self {
        Self {
            slot: Autosave::standard(),
            last_check: Instant::now(),
            saved_revision: None,
            writing: None,
            offer: None,
        }
    }
}

fn open_dialogs(
    mut cmds: MessageReader<EditorCommand>,
    mut dialogs: ResMut<FileDialogs>,
    terrain: Res<EditorTerrain>,
    mut status: ResMut<StatusLine>,
) {
    for cmd in cmds.read() {
        let kind = match cmd {
            EditorCommand::OpenDialog => DialogKind::Open,
            EditorCommand::SaveAsDialog => DialogKind::SaveAs,
            EditorCommand::ImportDialog => DialogKind::Import,
            EditorCommand::ExportDialog { unreal, decimate } => {
                DialogKind::Export { unreal: *unreal, decimate: *decimate }
            }
            _ => continue,
        };
        if dialogs.pending.is_some() {
            status.info("A file dialog is already open");
            continue;
        }
        let answer: Answer = Arc::new(Mutex::new(None));
        let out = answer.clone();
        let start_dir = terrain.doc.path().and_then(|p| p.parent()).map(|p| p.to_path_buf());
        let name = terrain
            .doc
            .path()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "terrain.talus".into());
        let spawned = std::thread::Builder::new().name("file-dialog".into()).spawn(move || {
            let mut d = match kind {
                DialogKind::Open | DialogKind::SaveAs => rfd::FileDialog::new()
                    .add_filter("Talus project (layers)", &["talus"])
                    .add_filter("BHEF heightmap (flattened)", &["bhef"]),
                DialogKind::Import => rfd::FileDialog::new()
                    .add_filter("Heightmaps", &["png", "r16", "raw", "exr", "tif", "tiff", "hgt", "bhef"])
                    .add_filter("All files", &["*"]),
                DialogKind::Export { .. } => rfd::FileDialog::new()
                    .add_filter("PNG 16-bit", &["png"])
                    .add_filter("RAW R16", &["r16", "raw"])
                    .add_filter("OpenEXR", &["exr"])
                    .add_filter("GeoTIFF", &["tif"])
                    .add_filter("Mesh", &["glb", "obj"]),
            };
            if let Some(dir) = start_dir {
                d = d.set_directory(dir);
            }
            let picked = match kind {
                DialogKind::Open | DialogKind::Import => d.pick_file(),
                DialogKind::SaveAs => d.set_file_name(name).save_file(),
                DialogKind::Export { .. } => {
                    d.set_file_name(name.replace(".bhef", ".png").replace(".talus", ".png")).save_file()
                }
            };
            *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(picked);
        });
        match spawned {
            Ok(_) => dialogs.pending = Some((kind, answer)),
            Err(e) => status.error(format!("cannot open a file dialog: {e}; type a path in the File section instead")),
        }
    }
}

fn finish_dialogs(
    mut dialogs: ResMut<FileDialogs>,
    mut out: MessageWriter<EditorCommand>,
    mut quit: ResMut<QuitPrompt>,
    mut status: ResMut<StatusLine>,
) {
    let Some((kind, answer)) = &dialogs.pending else { return };
    let Some(picked) = answer.lock().unwrap_or_else(PoisonError::into_inner).take() else { return };
    let kind = *kind;
    dialogs.pending = None;
    match (kind, picked) {
        (DialogKind::Open, Some(p)) => {
            out.write(EditorCommand::Open(p));
        }
        (DialogKind::SaveAs, Some(mut p)) => {
            if p.extension().is_none() {
                p.set_extension("bhef");
            }
            out.write(EditorCommand::SaveAs(p));
        }
        (DialogKind::Import, Some(p)) => {
            out.write(EditorCommand::Import(p));
        }
        (DialogKind::Export { unreal, decimate }, Some(mut p)) => {
            if p.extension().is_none() {
                p.set_extension("png");
            }
            out.write(EditorCommand::Export { path: p, unreal, decimate });
        }
        (_, None) => {
            quit.quit_after_save = None;
            status.info("No file chosen (where no dialog is available, type a path in the File section)");
        }
    }
}

/// What quitting needs: the settings to write (not in scripted runs) and the exit message.
#[derive(SystemParam)]
pub struct Quitter<'w, 's> {
    script: Res<'w, ScriptRunner>,
    settings: ResMut<'w, UserSettings>,
    panel: Res<'w, PanelState>,
    tool: Res<'w, BrushTool>,
    look: Res<'w, super::state::Look>,
    windows: Query<'w, 's, &'static Window>,
    exit: MessageWriter<'w, AppExit>,
}

impl Quitter<'_, '_> {
    /// Writes the settings (not in scripted runs) and exits.
    fn exit_now(&mut self, status: &mut StatusLine) {
        if !self.script.is_active() {
            let s = &mut self.settings.0;
            self.panel.store(s);
            s.brush = Some(self.tool.params.clone());
            s.look = self.look.0.clone();
            if let Ok(w) = self.windows.single() {
                s.window = [w.resolution.width(), w.resolution.height()];
            }
            if let Err(e) = s.save() {
                status.error(format!("settings not saved: {e}"));
                warn!("settings not saved: {e}");
            }
        }
        self.exit.write(AppExit::Success);
    }
}

fn handle_quit(
    mut cmds: MessageReader<EditorCommand>,
    mut closes: MessageReader<WindowCloseRequested>,
    mut quit: ResMut<QuitPrompt>,
    terrain: Res<EditorTerrain>,
    mut quitter: Quitter,
    mut status: ResMut<StatusLine>,
    autosave: Res<AutosaveState>,
) {
    let asked = cmds.read().filter(|c| matches!(c, EditorCommand::Quit)).count() > 0;
    let closed = closes.read().count() > 0;
    // A save that was asked for in order to quit has gone through.
    if let Some(errors) = quit.quit_after_save
        && status.errors > errors
    {
        quit.quit_after_save = None;
    }
    if quit.quit_after_save.is_some() && !terrain.doc.is_unsaved() {
        quit.quit_after_save = None;
        if let Some(slot) = &autosave.slot {
            slot.clear();
        }
        quitter.exit_now(&mut status);
        return;
    }
    if !(asked || closed) {
        return;
    }
    if terrain.doc.is_unsaved() && !quitter.script.is_active() {
        quit.open = true;
    } else {
        quitter.exit_now(&mut status);
    }
}

fn look_for_autosave(mut state: ResMut<AutosaveState>, script: Res<ScriptRunner>, mut status: ResMut<StatusLine>) {
    if script.is_active() {
        state.slot = None;
        return;
    }
    let Some(slot) = &state.slot else { return };
    match slot.pending() {
        None => {}
        Some(Ok(info)) => state.offer = Some(info),
        Some(Err(e)) => status.error(format!("{e}; the autosave was left in place")),
    }
}

fn autosave(mut state: ResMut<AutosaveState>, terrain: Res<EditorTerrain>, mut status: ResMut<StatusLine>) {
    if let Some(w) = &state.writing {
        let done = w.lock().unwrap_or_else(PoisonError::into_inner).take();
        match done {
            None => return,
            Some(Ok(())) => {}
            Some(Err(e)) => status.error(e),
        }
        state.writing = None;
    }
    if state.offer.is_some() || state.last_check.elapsed() < AUTOSAVE_EVERY {
        return;
    }
    state.last_check = Instant::now();
    let Some(slot) = state.slot.clone() else { return };
    let rev = terrain.doc.revision();
    if !terrain.doc.is_unsaved() || state.saved_revision == Some(rev) {
        return;
    }
    state.saved_revision = Some(rev);
    // A snapshot of the stack shares its tiles: cheap to take, written on a worker.
    let stack = terrain.doc.stack().clone();
    let view = terrain.doc.view().clone();
    let original = terrain.doc.path().map(|p| p.to_path_buf());
    let out = Arc::new(Mutex::new(None));
    let result = out.clone();
    bevy::tasks::IoTaskPool::get()
        .spawn(async move {
            let r = slot.write(&stack, &view, original.as_deref());
            *result.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    state.writing = Some(out);
}

fn update_title(terrain: Res<EditorTerrain>, mut windows: Query<&mut Window>) {
    let title = terrain.doc.title();
    for mut w in &mut windows {
        if w.title != title {
            w.title = title.clone();
        }
    }
}

fn draw_prompts(
    mut contexts: EguiContexts,
    mut quit: ResMut<QuitPrompt>,
    mut state: ResMut<AutosaveState>,
    mut terrain: ResMut<EditorTerrain>,
    mut out: MessageWriter<EditorCommand>,
    mut quitter: Quitter,
    mut status: ResMut<StatusLine>,
    mut cell: ResMut<CellSizePrompt>,
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    cell_size_prompt(&ctx, &mut cell, &mut out, &mut status);
    if quit.open {
        let mut choice = None;
        egui::Modal::new(egui::Id::new("talus_quit_prompt")).show(&ctx, |ui| {
            ui.heading("Unsaved changes");
            ui.label(format!(
                "{} has changes that are not saved.",
                terrain.doc.path().map(|p| p.display().to_string()).unwrap_or_else(|| "This terrain".into())
            ));
            ui.horizontal(|ui| {
                if ui.button("Save").clicked() {
                    choice = Some(0);
                }
                if ui.button("Discard").clicked() {
                    choice = Some(1);
                }
                if ui.button("Cancel").clicked() {
                    choice = Some(2);
                }
            });
        });
        match choice {
            Some(0) => {
                quit.open = false;
                quit.quit_after_save = Some(status.errors);
                out.write(EditorCommand::Save);
            }
            Some(1) => {
                quit.open = false;
                if let Some(slot) = &state.slot {
                    slot.clear();
                }
                quitter.exit_now(&mut status);
            }
            Some(_) => quit.open = false,
            None => {}
        }
    }
    if let Some(info) = state.offer.clone() {
        let mut choice = None;
        egui::Modal::new(egui::Id::new("talus_recover_prompt")).show(&ctx, |ui| {
            ui.heading("Recover unsaved work?");
            let from = info.original.as_ref().map(|p| format!(" of {}", p.display())).unwrap_or_default();
            let age = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs().saturating_sub(info.written_at))
                .unwrap_or(0);
            ui.label(format!("The last session ended with unsaved changes{from}, autosaved {} minutes ago.", age / 60));
            ui.horizontal(|ui| {
                if ui.button("Recover").clicked() {
                    choice = Some(true);
                }
                if ui.button("Discard").clicked() {
                    choice = Some(false);
                }
            });
        });
        if let Some(recover) = choice {
            state.offer = None;
            let Some(slot) = state.slot.clone() else { return Ok(()) };
            if recover {
                match slot.read() {
                    Ok(project) => {
                        let mut doc = Document::from_project(project);
                        doc.set_path(info.original.clone());
                        doc.mark_unsaved();
                        terrain.set_document(doc);
                        status.info("Recovered the autosaved terrain (not saved yet)");
                    }
                    // Leave the slot alone: the user may want to look at the file.
                    Err(e) => status.error(format!("Recovery failed: {e}")),
                }
            } else {
                slot.clear();
                status.info("Discarded the autosave");
            }
        }
    }
    Ok(())
}

/// The cell-size question ([`CellSizePrompt`]): before a heightmap that does not say how far apart
/// its nodes are is opened or imported, the user says it (and for a 16-bit file without a
/// sidecar, the heights its 0 and full scale stand for); the extent it makes is shown as it is
/// typed. Open sends `EditorCommand::OpenAt` (or `ImportAt`); Cancel keeps the current terrain.
fn cell_size_prompt(
    ctx: &egui::Context,
    cell: &mut CellSizePrompt,
    out: &mut MessageWriter<EditorCommand>,
    status: &mut StatusLine,
) {
    let Some((path, w, h)) = cell.asked.clone() else { return };
    let parsed = cell.text.trim().parse::<f32>().ok().filter(|c| crate::core::heightmap::check_cell(*c).is_ok());
    // A 16-bit file's heights: both finite, the lowest below the highest.
    let range = cell.range.as_ref().map(|[lo, hi]| {
        let (lo, hi) = (lo.trim().parse::<f32>().ok(), hi.trim().parse::<f32>().ok());
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() && lo < hi => Some([lo, hi]),
            _ => None,
        }
    });
    let ready = parsed.is_some() && range.is_none_or(|r| r.is_some());
    let mut choice = None;
    egui::Modal::new(egui::Id::new("talus_cell_size_prompt")).show(ctx, |ui| {
        ui.heading("Cell size");
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        ui.label(format!("{name} holds {w} × {h} heights and does not say how far apart they are."));
        ui.label("How many metres apart are its nodes? Every erosion parameter is in metres, so this sets the scale of the land.");
        ui.horizontal(|ui| {
            ui.label("Cell size");
            let field = ui.add(egui::TextEdit::singleline(&mut cell.text).desired_width(80.0));
            super::widgets::hotspot(ui, "Cell size: metres", &field);
            ui.label("m");
        });
        match parsed {
            Some(c) => ui.label(super::ui::extent_label(w, h, c)),
            None => ui.colored_label(egui::Color32::LIGHT_RED, "a number of metres, more than 0"),
        };
        if let Some([lo, hi]) = cell.range.as_mut() {
            ui.label("Its heights are 16-bit integers with no sidecar to say what they stand for:");
            ui.horizontal(|ui| {
                ui.label("0 is");
                let f = ui.add(egui::TextEdit::singleline(lo).desired_width(60.0));
                super::widgets::hotspot(ui, "Cell size: lowest", &f);
                ui.label("m, full scale is");
                let f = ui.add(egui::TextEdit::singleline(hi).desired_width(60.0));
                super::widgets::hotspot(ui, "Cell size: highest", &f);
                ui.label("m");
            });
            if let Some(None) = range {
                ui.colored_label(egui::Color32::LIGHT_RED, "two heights in metres, the first below the second");
            }
        }
        ui.horizontal(|ui| {
            let open = ui.add_enabled(ready, egui::Button::new("Open"));
            super::widgets::hotspot(ui, "Cell size: Open", &open);
            if open.clicked() {
                choice = Some(true);
            }
            if ui.button("Cancel").clicked() {
                choice = Some(false);
            }
        });
    });
    match (choice, parsed) {
        (Some(true), Some(c)) if ready => {
            cell.asked = None;
            out.write(if cell.import {
                EditorCommand::ImportAt { path, cell_size: c, range: range.flatten() }
            } else {
                EditorCommand::OpenAt { path, cell_size: c }
            });
        }
        (Some(false), _) => {
            cell.asked = None;
            status.info(format!("Did not {} {}", if cell.import { "import" } else { "open" }, path.display()));
        }
        _ => {}
    }
}
