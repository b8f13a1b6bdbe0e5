//! The Bevy front end (feature `editor`): a window with the terrain as a chunked, lit mesh, an
//! orbit camera and an egui side panel.
//!
//! Shape: [`EditorTerrain`] is the one resource the editor's plugins share (the current
//! [`Heightmap`] plus which mesh chunks are stale); every plugin lives in its own file and
//! [`EditorPlugins`] lists them, so this file reads as the table of contents. Systems stay thin:
//! they gather ECS data, call `crate::core`, and write the result back.

use std::collections::HashSet;
use std::path::PathBuf;

use bevy::app::PluginGroupBuilder;
use bevy::prelude::*;
use bevy_egui::EguiPlugin;

use crate::core::Heightmap;
use crate::core::heightmap::Stats;

pub mod automation;
pub mod camera;
pub mod terrain_mesh;
pub mod ui;

/// Quads along one side of a mesh chunk. Neighbouring chunks share their border vertices.
pub const CHUNK_QUADS: usize = 64;

/// Side of the terrain the editor opens with (nodes).
const START_SIZE: usize = 257;

/// The terrain being edited and the bookkeeping around it.
#[derive(Resource)]
pub struct EditorTerrain {
    /// The current heights.
    pub map: Heightmap,
    /// Chunks `(cx, cy)` whose mesh no longer matches `map`.
    pub dirty: HashSet<(usize, usize)>,
    /// Set when the map was replaced (size may differ): every chunk is respawned.
    pub relayout: bool,
    /// Where the map was loaded from / last saved to, if anywhere.
    pub path: Option<PathBuf>,
    /// True when `map` has changes that are not on disk.
    pub unsaved: bool,
    /// Statistics of `map` when it was last replaced (kept for the status line and colours).
    pub stats: Stats,
}

impl EditorTerrain {
    /// Wraps a freshly generated or loaded map; every chunk will be rebuilt.
    pub fn new(map: Heightmap) -> Self {
        let stats = map.stats();
        Self { map, dirty: HashSet::new(), relayout: true, path: None, unsaved: false, stats }
    }

    /// Replaces the whole map (new size allowed) and schedules a full mesh rebuild.
    pub fn replace(&mut self, map: Heightmap) {
        self.stats = map.stats();
        self.map = map;
        self.dirty.clear();
        self.relayout = true;
        self.unsaved = true;
    }

    /// Chunks along x and y (at least 1 each).
    pub fn chunk_counts(&self) -> (usize, usize) {
        chunk_counts(self.map.width, self.map.height)
    }

    /// Marks the chunks touching nodes `x0..=x1`, `y0..=y1` as stale (for brushes and erosion).
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
        self.unsaved = true;
    }
}

/// Chunks needed to cover a `width × height` node grid with `CHUNK_QUADS`-quad chunks.
pub fn chunk_counts(width: usize, height: usize) -> (usize, usize) {
    let n = |side: usize| side.saturating_sub(1).div_ceil(CHUNK_QUADS).max(1);
    (n(width), n(height))
}

/// Every editor plugin, in the order they are added: the table of contents of `app/`.
pub struct EditorPlugins;

impl PluginGroup for EditorPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(terrain_mesh::TerrainMeshPlugin)
            .add(camera::CameraPlugin)
            .add(ui::UiPlugin)
            .add(automation::AutomationPlugin)
    }
}

/// Opens the editor window and runs until it is closed.
///
/// Environment: `TALUS_SCREENSHOT=path.png` saves a frame after 60 frames and quits after 120
/// (for checking the window under Xvfb).
pub fn run_editor() -> Result<(), String> {
    let params = crate::cli::demo_params(START_SIZE, 1);
    let map = crate::core::generate::generate(&params).map_err(|e| format!("generating the start terrain: {e}"))?;
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window { title: "Talus".into(), ..default() }),
        ..default()
    }))
    .add_plugins(EguiPlugin::default())
    .insert_resource(EditorTerrain::new(map))
    .insert_resource(ui::GeneratorUi::from_params(&params))
    .insert_resource(automation::ScreenshotRequest::from_env())
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
    fn border_nodes_dirty_both_chunks() {
        let mut t = EditorTerrain::new(Heightmap::new(257, 257, 1.0).unwrap());
        t.mark_dirty(64, 10, 64, 10);
        assert!(t.dirty.contains(&(0, 0)) && t.dirty.contains(&(1, 0)) && t.dirty.len() == 2);
        t.dirty.clear();
        t.mark_dirty(256, 256, 256, 256);
        assert_eq!(t.dirty.iter().copied().collect::<Vec<_>>(), vec![(3, 3)]);
    }
}
