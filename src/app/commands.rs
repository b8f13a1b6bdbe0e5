//! What the user can ask for, as one message type: panel buttons, keyboard shortcuts and scripts
//! all send [`EditorCommand`]s, so a scripted session takes the same path as a user's clicks.
//!
//! This plugin handles the document commands (new, open, save, undo, redo) and the shortcuts;
//! generation, simulation and the file dialogs / quitting are handled by their own plugins, each
//! reading the same messages.
//!
//! Shortcuts: Ctrl+Z undo, Ctrl+Shift+Z or Ctrl+Y redo, Ctrl+S save, Ctrl+Shift+S save as,
//! Ctrl+O open (ignored while a text field has the keyboard).

use std::path::PathBuf;

use bevy::prelude::*;
use bevy_egui::input::EguiWantsInput;

use super::state::OrbitCamera;
use super::state::SimState;
use super::state::{CellSizePrompt, EditorTerrain, StatusLine, UserSettings};
use crate::core::Heightmap;
use crate::core::erosion::{Boundary, ModelParams};
use crate::core::generate::GenerateParams;
use crate::core::io::interop::{self, ExportOptions, ImportOptions};
use crate::editor::document::{Document, LayerOp, Opened};
use crate::editor::layers::BaseSource;
use crate::editor::project::{CameraPose, ProjectView};

/// The look and camera as a project saves them.
fn current_view(look: Option<&super::state::Look>, orbits: &Query<&mut OrbitCamera>) -> ProjectView {
    ProjectView {
        look: look.map(|l| l.0.clone()),
        camera: orbits.iter().next().map(|o| CameraPose {
            focus: o.focus.to_array(),
            yaw: o.yaw,
            pitch: o.pitch,
            distance: o.distance,
        }),
    }
}

/// Restores a project's look and camera (what it has of them).
fn apply_view(
    view: &ProjectView,
    extent: crate::editor::view_extent::ViewExtent,
    look: Option<&mut super::state::Look>,
    orbits: &mut Query<&mut OrbitCamera>,
) {
    if let (Some(l), Some(look)) = (&view.look, look) {
        look.0 = l.clone();
    }
    let finite = |c: &CameraPose| c.focus.iter().chain(&[c.yaw, c.pitch, c.distance]).all(|v| v.is_finite());
    // A pose that does not show this map (saved for another extent) is dropped: the camera frames
    // the map instead.
    let fits = |c: &CameraPose| OrbitCamera::pose_fits(Vec3::from_array(c.focus), c.distance, &extent);
    if let Some(c) = view.camera.filter(finite).filter(fits) {
        for mut o in orbits.iter_mut() {
            // Framed already: the saved camera stays when the new map arrives.
            o.framed = Some(extent);
            o.focus = Vec3::from_array(c.focus);
            o.yaw = c.yaw;
            o.pitch = c.pitch.clamp(0.03, 1.55);
            o.distance = c.distance.max(0.01);
        }
    }
}

/// Handles document commands and keyboard shortcuts.
pub struct CommandsPlugin;

impl Plugin for CommandsPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<EditorCommand>()
            .init_resource::<StatusLine>()
            .init_resource::<CellSizePrompt>()
            .add_systems(Update, (send_shortcut_commands, apply_document_commands).chain());
    }
}

/// Something the user asked the editor to do.
#[derive(Message, Clone, Debug)]
pub enum EditorCommand {
    /// Generate a terrain in the background and make it the map (one undo step).
    Generate(GenerateParams),
    /// A flat map of `size × size` nodes, `cell_size` metres apart, at `height` metres.
    NewMap {
        /// Nodes a side; the command refuses sizes outside `2 ..= MAX_NEW_SIDE`.
        size: usize,
        /// Distance between neighbouring nodes (metres).
        cell_size: f32,
        /// Height of every node (metres); must be finite.
        height: f32,
    },
    /// Open a project (.talus) or BHEF file (replaces the document; the old one must be saved or
    /// discarded first). A BHEF that records no cell size is not opened yet: the editor asks for
    /// one ([`CellSizePrompt`]).
    Open(PathBuf),
    /// Open a BHEF with `cell_size` metres between its nodes where nothing records one (the cell
    /// size question's answer).
    OpenAt {
        /// The file.
        path: PathBuf,
        /// Metres between nodes.
        cell_size: f32,
    },
    /// Import a heightmap with `cell_size` metres between its nodes (the cell size question's
    /// answer for a file that records none).
    ImportAt {
        /// The file.
        path: PathBuf,
        /// Metres between nodes.
        cell_size: f32,
        /// For a 16-bit file: the heights its integer 0 and full scale stand for, metres.
        range: Option<[f32; 2]>,
    },
    /// Save to the document's file (Save As when it has none).
    Save,
    /// Save to a new path: a project for `.talus` (layers, look, camera), else the flattened
    /// terrain as BHEF.
    SaveAs(PathBuf),
    /// Import a heightmap in another tool's format (PNG, R16, EXR, GeoTIFF, HGT, BHEF) as one
    /// undo step (the document keeps its file).
    Import(PathBuf),
    /// Export the map in the format named by the extension (PNG16, R16, EXR, GeoTIFF, OBJ, GLB,
    /// BHEF); `unreal` centres integer formats on zero as Unreal reads them; meshes keep every
    /// `decimate`-th node.
    Export {
        /// Where to write; its extension picks the format.
        path: PathBuf,
        /// Centre integer formats on zero the way Unreal reads them.
        unreal: bool,
        /// Mesh formats keep every `decimate`-th node (1 = all).
        decimate: usize,
    },
    /// Ask for a file to open (dialog).
    OpenDialog,
    /// Ask for a file to import (dialog).
    ImportDialog,
    /// Ask for a path to export to (dialog); the options as in [`EditorCommand::Export`].
    ExportDialog {
        /// As in [`EditorCommand::Export`].
        unreal: bool,
        /// As in [`EditorCommand::Export`].
        decimate: usize,
    },
    /// Ask for a path to save to (dialog).
    SaveAsDialog,
    /// Undo the last edit on the document's history.
    Undo,
    /// Redo the last undone edit.
    Redo,
    /// Start a simulation of the current map.
    Simulate {
        /// The model to run and its parameters.
        model: ModelParams,
        /// Edge modes of the four sides (wall, drain or wrap).
        boundary: Boundary,
        /// Seed of the run's random numbers (the same seed gives the same result).
        seed: u64,
        /// Which processor runs it (CPU, GPU or the best one present).
        backend: crate::backend::Backend,
    },
    /// Pause (true) or resume (false) the running simulation.
    SetPaused(bool),
    /// Stop the running simulation between two steps, keeping what it did.
    CancelSimulation,
    /// Close the window (asks first when there is unsaved work).
    Quit,
    /// Set the brush (tool, radius, strength, …), as the panel's Brush section does.
    SetBrush(crate::core::brush::BrushParams),
    /// Choose the erosion brush for the left button (`false`: the height brush again).
    SetErosionBrush(bool),
    /// Analyse the current map (Terrain QA, [`super::qa`]).
    Analyse,
    /// Raise single-node pits and lower single-node spikes on land (one undo step, [`super::qa`]).
    FixPitsSpikes,
    /// Change the layer stack or where strokes go ([`LayerOp`]; one undo step each).
    Layer(LayerOp),
    /// Re-run the stale erosion layers now (in the background, [`super::layers`]).
    Resimulate,
    /// Re-run stale erosion layers by themselves as soon as they go stale.
    SetAutoResimulate(bool),
    /// "Continue from here": run erosion layer `id` on from the timeline frame it shows
    /// ([`super::simulation`]).
    ContinueRun(u64),
    /// Open the Build… dialog (File ▸ Build…, [`super::build_dialog`]).
    OpenBuildDialog,
    /// The Build… dialog's Build button (and a script's `Build`): build this request in the
    /// background; the dialog shows it.
    Build(crate::editor::build::BuildRequest),
    /// Cancel the running build (nothing is written).
    CancelBuild,
    /// Show a square of the terrain at the build's resolution, as the Build… dialog's settings
    /// would build it ([`super::loupe`]): sent by a pick on the terrain, Refresh and a script's
    /// `Loupe`; a loupe running is replaced.
    Loupe(crate::editor::build::loupe_view::LoupeRequest),
    /// Stop the loupe running.
    CancelLoupe,
}

fn send_shortcut_commands(
    keys: Res<ButtonInput<KeyCode>>,
    egui_input: Res<EguiWantsInput>,
    mut out: MessageWriter<EditorCommand>,
) {
    if egui_input.wants_any_keyboard_input() {
        return;
    }
    let ctrl = keys.any_pressed([KeyCode::ControlLeft, KeyCode::ControlRight, KeyCode::SuperLeft, KeyCode::SuperRight]);
    if !ctrl {
        return;
    }
    let shift = keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    if keys.just_pressed(KeyCode::KeyZ) {
        out.write(if shift { EditorCommand::Redo } else { EditorCommand::Undo });
    }
    if keys.just_pressed(KeyCode::KeyY) {
        out.write(EditorCommand::Redo);
    }
    if keys.just_pressed(KeyCode::KeyS) {
        out.write(if shift { EditorCommand::SaveAsDialog } else { EditorCommand::Save });
    }
    if keys.just_pressed(KeyCode::KeyO) {
        out.write(EditorCommand::OpenDialog);
    }
}

/// Largest side the New Map command accepts (nodes).
pub const MAX_NEW_SIDE: usize = 8193;

fn apply_document_commands(
    mut cmds: MessageReader<EditorCommand>,
    mut terrain: ResMut<EditorTerrain>,
    mut status: ResMut<StatusLine>,
    mut settings: ResMut<UserSettings>,
    sim: Res<SimState>,
    mut look: Option<ResMut<super::state::Look>>,
    mut orbits: Query<&mut OrbitCamera>,
    mut prompt: ResMut<CellSizePrompt>,
    mut commands: Commands,
) {
    for cmd in cmds.read() {
        let busy = sim.running();
        let refuse = |status: &mut StatusLine, what: &str| {
            status.error(format!("{what}: a simulation is running; cancel it or wait for it to finish"))
        };
        match cmd {
            EditorCommand::NewMap { size, cell_size, height } => {
                if busy {
                    refuse(&mut status, "New map");
                    continue;
                }
                if *size < 2 || *size > MAX_NEW_SIDE {
                    status.error(format!("New map: size {size} is outside 2 ..= {MAX_NEW_SIDE}"));
                    continue;
                }
                match Heightmap::filled(*size, *size, *cell_size, *height) {
                    Ok(map) if height.is_finite() => {
                        let change = terrain.doc.replace_all(map, BaseSource::Heights, "New map");
                        terrain.refresh(change);
                        status.info(format!("New {size}×{size} map"));
                    }
                    Ok(_) => status.error("New map: the height must be a finite number"),
                    Err(e) => status.error(format!("New map: {e}")),
                }
            }
            EditorCommand::Open(path) | EditorCommand::OpenAt { path, .. } => {
                if busy {
                    refuse(&mut status, "Open");
                    continue;
                }
                let cell_size = match cmd {
                    EditorCommand::OpenAt { cell_size, .. } => Some(*cell_size),
                    _ => None,
                };
                // A BHEF that records no cell size: ask for it first (1 m was a guess that made
                // another tool's 8 km map a 1 km one, with every parameter in metres off by 8×).
                match Document::open_or_ask(path, cell_size) {
                    Ok(Opened::AskCellSize(w, h)) => {
                        prompt.ask(path.clone(), w, h, false, false);
                        status.info(format!("{}: how many metres between its nodes?", path.display()));
                    }
                    Ok(Opened::Doc(doc)) => {
                        let doc = *doc;
                        let m = doc.map();
                        let extent = crate::editor::view_extent::ViewExtent::of(m.width, m.height, m.cell_size);
                        apply_view(doc.view(), extent, look.as_deref_mut(), &mut orbits);
                        terrain.set_document(doc);
                        settings.0.add_recent(path);
                        status.info(format!("Opened {}", path.display()));
                    }
                    // The current terrain stays as it was.
                    Err(e) => status.error(format!("Open failed: {e}")),
                }
            }
            EditorCommand::Save => {
                if terrain.doc.path().is_none() {
                    commands.write_message(EditorCommand::SaveAsDialog);
                    continue;
                }
                terrain.doc.set_view(current_view(look.as_deref(), &orbits));
                match terrain.doc.save() {
                    Ok(()) => {
                        let p = terrain.doc.path().map(|p| p.to_path_buf()).unwrap_or_default();
                        settings.0.add_recent(&p);
                        status.info(format!("Saved {}", p.display()));
                    }
                    Err(e) => status.error(e),
                }
            }
            EditorCommand::Import(path) | EditorCommand::ImportAt { path, .. } => {
                if busy {
                    refuse(&mut status, "Import");
                    continue;
                }
                let (cell_size, range) = match cmd {
                    EditorCommand::ImportAt { cell_size, range, .. } => (Some(*cell_size), *range),
                    _ => (None, None),
                };
                match interop::load_recording_cell_size(path, &ImportOptions { cell_size, range, ..Default::default() })
                {
                    Ok((map, records_cell)) => {
                        let (w, h) = (map.width, map.height);
                        if w > MAX_NEW_SIDE || h > MAX_NEW_SIDE {
                            status.error(format!("Import: {w}×{h} is larger than the editor's {MAX_NEW_SIDE} nodes a side; resample it with `talus convert --resize`"));
                            continue;
                        }
                        // A file that does not say how far apart its nodes are (nor, 16-bit,
                        // what heights its integers stand for): ask first.
                        if cell_size.is_none() && !records_cell {
                            let range = !interop::records_height_range(path).unwrap_or(true);
                            prompt.ask(path.clone(), w, h, true, range);
                            status.info(format!("{}: how many metres between its nodes?", path.display()));
                            continue;
                        }
                        let change = terrain.doc.replace_all(map, BaseSource::File(path.clone()), "Import");
                        terrain.refresh(change);
                        status.info(format!("Imported {} ({w}×{h})", path.display()));
                    }
                    Err(e) => status.error(format!("Import failed: {e}")),
                }
            }
            EditorCommand::Export { path, unreal, decimate } => {
                let opts = ExportOptions {
                    unreal: *unreal,
                    decimate: *decimate,
                    source: terrain.doc.title(),
                    ..Default::default()
                };
                match interop::save(path, terrain.map(), &opts) {
                    Ok(r) => {
                        let mut msg = format!("Exported {}", path.display());
                        if let Some([lo, hi]) = r.range {
                            msg += &format!(" (range {lo:.2} … {hi:.2} m, sidecar written)");
                        }
                        if let Some(z) = r.unreal_z_scale {
                            msg += &format!(", Unreal Z scale {z:.3}");
                        }
                        status.info(msg);
                    }
                    Err(e) => status.error(format!("Export failed: {e}")),
                }
            }
            EditorCommand::SaveAs(path) => {
                terrain.doc.set_view(current_view(look.as_deref(), &orbits));
                match terrain.doc.save_as(path) {
                    Ok(()) => {
                        settings.0.add_recent(path);
                        status.info(format!("Saved {}", path.display()));
                    }
                    Err(e) => status.error(e),
                }
            }
            EditorCommand::Layer(op) => {
                if busy {
                    refuse(&mut status, "Layers");
                    continue;
                }
                let change = terrain.doc.apply_layer_op(op);
                terrain.refresh(change);
            }
            EditorCommand::Undo | EditorCommand::Redo => {
                let undo = matches!(cmd, EditorCommand::Undo);
                if busy {
                    refuse(&mut status, if undo { "Undo" } else { "Redo" });
                    continue;
                }
                let label = if undo { terrain.doc.history().undo_label() } else { terrain.doc.history().redo_label() }
                    .map(str::to_owned);
                let change = if undo { terrain.doc.undo() } else { terrain.doc.redo() };
                match label {
                    None => status.info(if undo { "Nothing to undo" } else { "Nothing to redo" }),
                    Some(l) => {
                        terrain.refresh(change);
                        status.info(format!("{} {l}", if undo { "Undid" } else { "Redid" }));
                    }
                }
            }
            _ => {}
        }
    }
}
