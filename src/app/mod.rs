//! The Bevy front end (feature `editor`): a window with the terrain as a chunked, lit mesh, an
//! orbit camera, brushes, background generation and simulation, and an egui side panel.
//!
//! Shape: the plugins share state through one module, [`state`]: above all
//! [`state::EditorTerrain`], the [`crate::editor::document::Document`] (map, undo history, file
//! state) plus which mesh chunks are stale, and the panel's, the pointer's, the camera's and the
//! simulation's resources; never through each other's files. Every user request is an
//! [`commands::EditorCommand`] message, sent alike by the panel, the keyboard shortcuts and
//! scripts ([`script`]); each plugin (one per file, listed in [`EditorPlugins`], the table of
//! contents) handles its part, with its working state private in its file. The panel's shared
//! egui pieces are in [`widgets`]. Systems stay thin: the logic lives in `crate::editor` and
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

use std::path::PathBuf;

use bevy::app::PluginGroupBuilder;
use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_egui::EguiPlugin;

use crate::editor::document::Document;
use crate::editor::persist::Settings;
use state::{EditorTerrain, Look, StatusLine, UserSettings};

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
pub mod state;
pub mod terrain_mesh;
pub mod tools;
pub mod ui;
pub mod view;
pub mod water;
pub mod widgets;

/// Side of the terrain the editor opens with (nodes).
pub const START_SIZE: usize = 513;

/// Threads of Bevy's async compute pool, where the editor's long jobs run side by side (see
/// [`run_editor`]).
pub const JOB_THREADS: usize = 4;

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
    .insert_resource(state::PanelState::from_settings(&settings))
    .insert_resource(Look(settings.look.clone()))
    .insert_resource(UserSettings(settings))
    .insert_resource(script::ScriptRunner::new(script))
    .add_plugins(EditorPlugins);
    match app.run() {
        AppExit::Success => Ok(()),
        AppExit::Error(code) => Err(format!("the editor stopped with error code {code}")),
    }
}
