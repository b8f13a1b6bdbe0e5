//! The Bevy front end (feature `editor`): a window with the terrain as a chunked, lit mesh, an
//! orbit camera, brushes, background generation and simulation, and an egui side panel.
//!
//! Shape: [`EditorTerrain`] is the one resource the plugins share — the [`Document`] (map, undo
//! history, file state; `crate::editor::document`) plus which mesh chunks are stale. Every user
//! request is an [`commands::EditorCommand`] message, sent alike by the panel, the keyboard
//! shortcuts and scripts ([`script`]); each plugin (one per file, listed in [`EditorPlugins`], the
//! table of contents) handles its part. Systems stay thin: the logic lives in `crate::editor` and
//! `crate::core`, which test without a window.
//!
//! File ▸ Build… ([`build_dialog`]) builds the project at another resolution. Its **loupe**
//! ([`loupe`]) shows what that build will hold before Build is pressed: "Pick a spot" in the
//! dialog's Loupe section, then a left click on the terrain (the brushes' ray pick, so the spot is
//! under the mouse; the click paints nothing; Esc cancels). A square of the chosen side (256 m to
//! start) around the spot is built in the background as the dialog's settings build it, in
//! seconds, and the Loupe window shows it hill-shaded beside the preview's same square, with the
//! cells, the sizes and the time; the square is marked on the terrain. An edit or another setting
//! marks it outdated (Refresh runs it again); scripts use `Loupe((centre: (x, y), side: 256.0))`.

use std::collections::HashSet;
use std::path::PathBuf;

use bevy::app::PluginGroupBuilder;
use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_egui::EguiPlugin;
use rayon::prelude::*;

use crate::core::Heightmap;
use crate::core::brush::DirtyRect;
use crate::core::heightmap::Stats;
use crate::editor::document::{Changed, Document};
use crate::editor::persist::Settings;

pub mod background;
pub mod build_dialog;
pub mod camera;
pub mod commands;
pub mod erosion_brush;
pub mod fields;
pub mod files;
pub mod generation;
pub mod layers;
pub mod loupe;
pub mod material;
pub mod offscreen;
pub mod overlay;
pub mod panel_sync;
pub mod param_editor;
pub mod preflight;
pub mod qa;
pub mod script;
pub mod shaders;
pub mod simulation;
pub mod sky;
pub mod terrain_mesh;
pub mod tools;
pub mod ui;
pub mod view;
pub mod water;

/// Quads along one side of a mesh chunk. Neighbouring chunks share their border vertices.
pub const CHUNK_QUADS: usize = 64;

/// Side of the terrain the editor opens with (nodes).
pub const START_SIZE: usize = 513;

/// The terrain being edited (a [`Document`]: map, undo history, file) and which parts of its mesh
/// are stale.
#[derive(Resource)]
pub struct EditorTerrain {
    /// The document: every change goes through it so each action is one undo step.
    pub doc: Document,
    /// Chunks `(cx, cy)` whose mesh no longer matches the map.
    pub dirty: HashSet<(usize, usize)>,
    /// Set when the map was replaced (size may differ): every chunk is respawned.
    pub relayout: bool,
    /// Statistics of the map when it was last replaced (the colour ramp; kept steady while
    /// painting and simulating so colours do not flicker).
    pub stats: Stats,
}

impl EditorTerrain {
    /// Wraps a document; every chunk will be built.
    pub fn new(doc: Document) -> Self {
        let stats = doc.map().stats();
        Self { doc, dirty: HashSet::new(), relayout: true, stats }
    }

    /// The current heights.
    pub fn map(&self) -> &Heightmap {
        self.doc.map()
    }

    /// Replaces the document (opened file, recovered autosave).
    pub fn set_document(&mut self, doc: Document) {
        self.doc = doc;
        self.refresh(Changed::Whole);
    }

    /// Schedules the mesh work a document change needs.
    pub fn refresh(&mut self, change: Changed) {
        match change {
            Changed::None => {}
            Changed::Rect(r) => self.mark_rect(r),
            Changed::Whole => {
                self.stats = self.doc.map().stats();
                self.dirty.clear();
                self.relayout = true;
            }
        }
    }

    /// Chunks along x and y (at least 1 each).
    pub fn chunk_counts(&self) -> (usize, usize) {
        chunk_counts(self.map().width, self.map().height)
    }

    /// Marks the chunks touching the half-open node rectangle `r` as stale.
    pub fn mark_rect(&mut self, r: DirtyRect) {
        // Normals read the neighbours, so the ring around the change shades differently too.
        let r = r.grow(1, self.map().width, self.map().height);
        if r.is_empty() {
            return;
        }
        self.mark_dirty(r.x0, r.y0, r.x1 - 1, r.y1 - 1);
    }

    /// Marks the chunks touching nodes `x0..=x1`, `y0..=y1` as stale.
    pub fn mark_dirty(&mut self, x0: usize, y0: usize, x1: usize, y1: usize) {
        let (nx, ny) = self.chunk_counts();
        // A node on a chunk border belongs to both chunks.
        let c0 = |v: usize| v.saturating_sub(1) / CHUNK_QUADS;
        let c1 = |v: usize, n: usize| (v / CHUNK_QUADS).min(n - 1);
        for cy in c0(y0)..=c1(y1, ny) {
            for cx in c0(x0)..=c1(x1, nx) {
                self.dirty.insert((cx, cy));
            }
        }
    }

    /// Shows `heights` (a running simulation's state, same size) and marks only the chunks whose
    /// nodes differ. Returns false when the size does not match.
    pub fn show_heights(&mut self, heights: &Heightmap) -> bool {
        let old = self.doc.map();
        if heights.width != old.width || heights.height != old.height {
            return false;
        }
        let (nx, ny) = self.chunk_counts();
        let w = old.width;
        // Every chunk compared on every core (an update of a 4097² map is 16.8 M heights).
        let changed: Vec<(usize, usize)> = (0..nx * ny)
            .into_par_iter()
            .map(|k| (k % nx, k / nx))
            .filter(|&(cx, cy)| {
                let x0 = cx * CHUNK_QUADS;
                let x1 = (x0 + CHUNK_QUADS).min(w - 1);
                let y0 = cy * CHUNK_QUADS;
                let y1 = (y0 + CHUNK_QUADS).min(old.height - 1);
                (y0..=y1).any(|y| old.data[y * w + x0..=y * w + x1] != heights.data[y * w + x0..=y * w + x1])
            })
            .collect();
        self.doc.preview(heights);
        self.dirty.extend(changed);
        true
    }
}

/// The view's work still under way on background tasks: the chunk meshes and the material's data
/// texture of a map that changed. Set by the mesh and material plugins; a script's screenshot
/// waits until it is done, so it shows the map as it is.
#[derive(Resource, Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewWork {
    /// Chunk meshes are being built for a newer map, or are waiting to be.
    pub meshes: bool,
    /// A data texture is being built for a newer map or look, or is waiting to be.
    pub texels: bool,
}

impl ViewWork {
    /// Whether what is drawn lags the map.
    pub fn busy(&self) -> bool {
        self.meshes || self.texels
    }
}

/// One copy of the map shared by the view's background builds (the chunk meshes and the data
/// texels read the same heights): made when a build needs it and the terrain has been changed
/// since the last copy (Bevy's change tick of [`EditorTerrain`], which every change of the map
/// passes through), so an update costs the frame one copy (16 MiB at 2049²), not one per build.
#[derive(Resource, Default)]
pub struct MapSnapshot(Option<(bevy::ecs::change_detection::Tick, std::sync::Arc<Heightmap>)>);

impl MapSnapshot {
    /// The map as it is now, shared; `changed` is the terrain's `last_changed()` tick.
    pub fn of(
        &mut self,
        terrain: &EditorTerrain,
        changed: bevy::ecs::change_detection::Tick,
    ) -> std::sync::Arc<Heightmap> {
        match &self.0 {
            Some((tick, map)) if *tick == changed => map.clone(),
            _ => {
                let map = std::sync::Arc::new(terrain.map().clone());
                self.0 = Some((changed, map.clone()));
                map
            }
        }
    }
}

/// Threads of Bevy's async compute pool, where the editor's long jobs run side by side (see
/// [`run_editor`]).
pub const JOB_THREADS: usize = 4;

/// Chunks needed to cover a `width × height` node grid with `CHUNK_QUADS`-quad chunks.
pub fn chunk_counts(width: usize, height: usize) -> (usize, usize) {
    let n = |side: usize| side.saturating_sub(1).div_ceil(CHUNK_QUADS).max(1);
    (n(width), n(height))
}

/// A message for the user in the status line: what just happened, or what went wrong.
#[derive(Resource, Default, Clone, Debug)]
pub struct StatusLine {
    /// The message shown.
    pub text: String,
    /// The message reports a failure (drawn as an error).
    pub is_error: bool,
    /// Errors shown since start (a script run fails when this grows).
    pub errors: u32,
}

impl StatusLine {
    /// Shows `text` as information.
    pub fn info(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.is_error = false;
    }
    /// Shows `text` as an error and counts it in [`StatusLine::errors`].
    pub fn error(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.is_error = true;
        self.errors += 1;
    }
}

/// The user's settings, loaded at start and written at exit.
#[derive(Resource, Clone, Debug, Default)]
pub struct UserSettings(pub Settings);

/// How the terrain is drawn right now (material, water, sky, overlay): edited by the panel's look
/// sections and scripts, read by the drawing plugins, saved in the settings at exit.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct Look(pub crate::editor::look::LookParams);

/// How the editor was started.
#[derive(Clone, Debug, Default)]
pub struct EditorOptions {
    /// Run this script (see [`crate::editor::script`]) and quit when it ends.
    pub script: Option<PathBuf>,
    /// Open this BHEF file instead of generating the start terrain.
    pub open: Option<PathBuf>,
    /// Window size in logical pixels instead of the saved one.
    pub window_size: Option<[u32; 2]>,
}

/// Every editor plugin, in the order they are added: the table of contents of `app/`.
pub struct EditorPlugins;

impl PluginGroup for EditorPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(commands::CommandsPlugin)
            .add(shaders::ShadersPlugin)
            .add(material::TerrainMaterialPlugin)
            .add(terrain_mesh::TerrainMeshPlugin)
            .add(camera::CameraPlugin)
            .add(generation::GenerationPlugin)
            .add(simulation::SimulationPlugin)
            .add(layers::LayersPlugin)
            .add(qa::QaPlugin)
            .add(fields::FieldsPlugin)
            .add(overlay::OverlayPlugin)
            .add(sky::SkyPlugin)
            .add(water::WaterPlugin)
            .add(tools::ToolsPlugin)
            .add(erosion_brush::ErosionBrushPlugin)
            .add(files::FilesPlugin)
            .add(build_dialog::BuildDialogPlugin)
            .add(loupe::LoupePlugin)
            .add(ui::UiPlugin)
            .add(script::ScriptPlugin)
            .add(offscreen::OffscreenPlugin)
    }
}

/// Opens the editor window and runs until it is closed.
///
/// Environment: `TALUS_SCREENSHOT=path.png` saves a frame after 60 frames and quits (a one-line
/// script); `TALUS_CONFIG_DIR` moves settings and autosave (see [`crate::editor::persist`]).
pub fn run_editor(opts: EditorOptions) -> Result<(), String> {
    // Before anything slow, and before Bevy could panic without a display or a Vulkan driver.
    match preflight::check() {
        Ok(ready) if ready.software_only => eprintln!(
            "note: only a software Vulkan driver found ({}): the editor runs, slowly; install your GPU's Vulkan driver for full speed",
            ready.adapters.join("; ")
        ),
        Ok(_) => {}
        Err(problem) => {
            let text = problem.to_string();
            let note = crate::alert::show(preflight::TITLE, &text).and_then(|s| s.log_note());
            return Err(note.map_or(text.clone(), |n| format!("{text}\n{n}")));
        }
    }
    let script = match &opts.script {
        Some(p) => Some(crate::editor::script::load(p)?),
        None => script::screenshot_script_from_env(),
    };
    let (settings, settings_msg) = if script.is_some() { (Settings::default(), None) } else { Settings::load() };
    let mut status = StatusLine::default();
    let doc = match &opts.open {
        Some(p) => Document::open(p)?,
        None => {
            let params = settings
                .generator
                .clone()
                .filter(|g| g.width <= 4097 && g.height <= 4097)
                .unwrap_or_else(|| crate::core::generate::demo_params(START_SIZE, 1));
            match crate::core::generate::generate(&params) {
                // The generator is the base's source, so a build at another size runs it again.
                Ok(map) => Document::with_base(map, crate::editor::layers::BaseSource::Generator(params.clone())),
                Err(e) => {
                    status.error(format!("the saved generator settings failed ({e}); started from the default island"));
                    let demo = crate::core::generate::demo_params(START_SIZE, 1);
                    let map = crate::core::generate::generate(&demo)
                        .map_err(|e| format!("generating the start terrain: {e}"))?;
                    Document::with_base(map, crate::editor::layers::BaseSource::Generator(demo))
                }
            }
        }
    };
    if let Some(m) = settings_msg {
        status.error(m);
    }
    let [w, h] = opts.window_size.map(|[w, h]| [w as f32, h as f32]).unwrap_or(settings.window);
    let mut app = App::new();
    // The editor's long jobs (a simulation, a build, a loupe, a generation, a layer's re-run, the
    // erosion brush) each hold a thread of Bevy's async compute pool while their work runs on
    // rayon. Bevy gives that pool a quarter of the cores, a single thread on 2 cores, where a
    // build started during a simulation would wait for it to end: four threads whatever the cores.
    let jobs = bevy::app::TaskPoolThreadAssignmentPolicy {
        min_threads: JOB_THREADS,
        max_threads: JOB_THREADS,
        percent: 0.25,
        on_thread_spawn: None,
        on_thread_destroy: None,
    };
    let pools = TaskPoolPlugin { task_pool_options: TaskPoolOptions { async_compute: jobs, ..default() } };
    app.add_plugins(DefaultPlugins.set(pools).set(WindowPlugin {
        primary_window: Some(Window {
            title: doc.title(),
            resolution: WindowResolution::new(w as u32, h as u32),
            // Off screen the window is never mapped: with no visible window the runner updates
            // without waiting for redraws, which never come to a window without a surface.
            visible: !offscreen::enabled(),
            ..default()
        }),
        close_when_requested: false,
        ..default()
    }))
    .add_plugins(EguiPlugin::default())
    .insert_resource(EditorTerrain::new(doc))
    .insert_resource(status)
    .insert_resource(ui::PanelState::from_settings(&settings))
    .insert_resource(Look(settings.look.clone()))
    .insert_resource(UserSettings(settings))
    .insert_resource(script::ScriptRunner::new(script))
    .add_plugins(EditorPlugins);
    match app.run() {
        AppExit::Success => Ok(()),
        AppExit::Error(code) => Err(format!("the editor stopped with error code {code}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_counts_cover_the_map() {
        assert_eq!(chunk_counts(257, 257), (4, 4));
        assert_eq!(chunk_counts(258, 65), (5, 1));
        assert_eq!(chunk_counts(1, 1), (1, 1));
    }

    #[test]
    fn showing_heights_marks_only_changed_chunks() {
        let mut t = EditorTerrain::new(Document::new(Heightmap::new(257, 257, 1.0).unwrap()));
        t.relayout = false;
        let mut next = t.map().clone();
        next.set(200, 10, 3.0);
        assert!(t.show_heights(&next));
        assert_eq!(t.dirty.iter().copied().collect::<Vec<_>>(), vec![(3, 0)]);
        assert_eq!(t.map().get(200, 10), 3.0);
        assert!(!t.show_heights(&Heightmap::new(10, 10, 1.0).unwrap()));
    }

    #[test]
    fn border_nodes_dirty_both_chunks() {
        let mut t = EditorTerrain::new(Document::new(Heightmap::new(257, 257, 1.0).unwrap()));
        t.mark_dirty(64, 10, 64, 10);
        assert!(t.dirty.contains(&(0, 0)) && t.dirty.contains(&(1, 0)) && t.dirty.len() == 2);
        t.dirty.clear();
        t.mark_dirty(256, 256, 256, 256);
        assert_eq!(t.dirty.iter().copied().collect::<Vec<_>>(), vec![(3, 3)]);
    }
}
