//! The state the editor's Bevy systems share: every resource, component, system set and plain
//! value that more than one plugin reads or writes lives here, so a plugin depends on this module
//! (and on the messages of [`super::commands`]) and never on another plugin's file. A plugin's own
//! working state (a build, a loupe, a generation in flight) stays private in its file, behind the
//! plugin's resource there; methods that need a plugin's logic are `impl` blocks in that plugin's
//! file (e.g. `OrbitCamera::frame` in `camera`, `PanelState::from_settings` in `ui`).
//!
//! - [`EditorTerrain`]: the [`Document`] (map, undo history, file state) and which mesh chunks are
//!   stale; [`ViewWork`] and [`MapSnapshot`], the view's background builds; [`StatusLine`],
//!   [`UserSettings`], [`Look`].
//! - The panel: [`PanelState`] (what it edits), [`PanelWidth`], [`UiHotspots`].
//! - The pointer and brushes: [`Pointer`] (built from the window's input messages, read by the
//!   camera, the brushes and the loupe), [`BrushTool`], the [`ReadPointer`] and [`ToolSystems`]
//!   sets that order them.
//! - [`OrbitCamera`] and [`SimState`] (the run in progress and its books).

use std::collections::HashSet;
use std::sync::Arc;

use bevy::prelude::*;
use rayon::prelude::*;

use crate::core::Heightmap;
use crate::core::brush::{BrushKind, BrushParams, DirtyRect};
use crate::core::erosion::{Boundary, Ledger, ModelParams, Progress};
use crate::core::generate::GenerateParams;
use crate::core::heightmap::Stats;
use crate::core::raycast::Hit;
use crate::editor::build::dialog::DialogSettings;
use crate::editor::document::{Changed, Document};
use crate::editor::job::JobShared;
use crate::editor::layers::BaseSource;
use crate::editor::layers::timeline::ContinueJob;
use crate::editor::persist::Settings;
use crate::editor::view_extent::ViewExtent;

/// Quads along one side of a mesh chunk. Neighbouring chunks share their border vertices.
pub const CHUNK_QUADS: usize = 64;

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
    /// Frames so far that put new chunk meshes in the view (a background build swapped in, or
    /// chunks rebuilt in the frame): with [`ViewWork::texels_shown`], what a script's frame report
    /// attributes slow frames to.
    pub meshes_shown: u64,
    /// Frames so far that put a new data texture in the view.
    pub texels_shown: u64,
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

/// Chunks needed to cover a `width × height` node grid with `CHUNK_QUADS`-quad chunks.
pub fn chunk_counts(width: usize, height: usize) -> (usize, usize) {
    let n = |side: usize| side.saturating_sub(1).div_ceil(CHUNK_QUADS).max(1);
    (n(width), n(height))
}

/// The question asked before opening or importing a heightmap that does not say how far apart
/// its nodes are (a BHEF, PNG or R16 without a Talus sidecar, an EXR without Talus's attribute):
/// the file and its size in nodes, whether it is an Import, and the cell size being typed,
/// metres (and for a 16-bit file, the heights its integers stand for). [`super::commands`] asks it; [`super::files`] draws it and sends the answer as
/// `EditorCommand::OpenAt` or `ImportAt`.
#[derive(Resource, Default, Debug)]
pub struct CellSizePrompt {
    /// The file asked about and its width and height in nodes; `None` when nothing is asked.
    pub asked: Option<(std::path::PathBuf, usize, usize)>,
    /// The file is being imported (File ▸ Import…), not opened.
    pub import: bool,
    /// The answer as typed.
    pub text: String,
    /// For a 16-bit file without a sidecar: the heights its integer 0 and full scale stand for,
    /// metres, as typed; `None` when the file says.
    pub range: Option<[String; 2]>,
}

impl CellSizePrompt {
    /// Asks about `path` (`width × height` nodes), starting from 1 m, what such a file read as;
    /// with `range`, also the heights of a 16-bit file's 0 and full scale (from 0 and 1 m).
    pub fn ask(&mut self, path: std::path::PathBuf, width: usize, height: usize, import: bool, range: bool) {
        *self = Self {
            asked: Some((path, width, height)),
            import,
            text: "1".into(),
            range: range.then(|| ["0".into(), "1".into()]),
        };
    }
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

/// Sea level for the material (metres): the water look's, so the beach meets the sea plane.
pub fn sea_level(look: &Look) -> f32 {
    let v = look.0.water.sea_level;
    if v.is_finite() { v } else { 0.0 }
}

/// Width of the side panel in logical pixels: the 3-D view is the rest of the window.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq)]
pub struct PanelWidth(pub f32);

/// Where the panel's main buttons were last drawn, window logical pixels `[x0, y0, x1, y1]`, by
/// name (`widgets::HOTSPOTS` and "panel"): for the view report a test drives real input from (it clicks
/// where a person would).
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct UiHotspots(pub std::collections::BTreeMap<String, [f32; 4]>);

/// What the panel is editing.
#[derive(Resource, Clone, Debug)]
pub struct PanelState {
    /// The layer chosen in the Layers section.
    pub layer_selected: Option<u64>,
    /// The Layers section's name field.
    pub layer_name: String,
    /// The Generate section's parameters (what Generate sends).
    pub generator: GenerateParams,
    /// Regenerate as generator parameters change.
    pub live: bool,
    /// Time (seconds) of a generator edit not yet sent.
    pub gen_edited_at: Option<f64>,
    /// The document's base the generator last followed (`panel_sync`).
    pub synced_base: Option<PanelBase>,
    /// The parameters the panel last sent to Generate, until the base they make is followed.
    pub gen_sent: Option<GenerateParams>,
    /// Why the generator parameters were refused, shown under them until an edit passes.
    pub gen_error: Option<String>,
    /// One parameter set per model ([`MODELS`] order).
    pub models: Vec<ModelParams>,
    /// Index into [`MODELS`] (and `models`) of the model Simulate runs.
    pub model: usize,
    /// The Erosion section's last error (a model parameter, edge, hardness or seed that was refused), shown
    /// under the action bar until a Simulate is sent.
    pub model_error: Option<String>,
    /// Edge modes the next simulation uses.
    pub boundary: Boundary,
    /// Where simulations run.
    pub backend: crate::backend::Backend,
    /// Simulation seed as typed (a number or `random`).
    pub sim_seed: String,
    /// The File section's path field.
    pub path_text: String,
    /// New flat map: nodes a side.
    pub new_size: usize,
    /// New flat map: distance between nodes (metres, 0.01 to 1000).
    pub new_cell: f32,
    /// New flat map: height of every node (metres, ±10 000).
    pub new_height: f32,
    /// Why the brush parameters as edited were refused; the brush keeps its last valid ones.
    pub brush_error: Option<String>,
    /// Where "Save preset" writes.
    pub preset_path: String,
    /// The last preset load/save message (error or confirmation).
    pub preset_msg: Option<(String, bool)>,
    /// Export integer formats centred on zero the way Unreal reads them.
    pub export_unreal: bool,
    /// Mesh export: keep every n-th node (1 = all).
    pub export_decimate: usize,
    /// The hardness (erodibility) map the next simulation uses (Erosion ▸ Hardness).
    pub hardness: crate::core::erosion::hardness::HardnessParams,
    /// Where the next simulation's rain falls (Erosion ▸ Steer).
    pub steer: SteerChoice,
}

/// The document's base as the panel last followed it: where it came from, its size and cell size.
#[derive(Clone, Debug, PartialEq)]
pub struct PanelBase {
    /// Where the base came from: a generator's parameters, a file, or heights alone.
    pub source: BaseSource,
    /// Its size, nodes.
    pub size: (usize, usize),
    /// Its cell size, metres.
    pub cell_size: f32,
}

/// Which generated mask steers Simulate runs (the Erosion section's "Steer").
#[derive(Clone, Debug, PartialEq)]
pub struct SteerChoice {
    /// 0 everywhere (no mask), 1 height, 2 slope, 3 flow.
    pub mode: usize,
    /// Height ramp, m: weight 0 at `[0]`, 1 at `[1]`.
    pub height: [f32; 2],
    /// Slope ramp, degrees.
    pub slope: [f32; 2],
    /// Drainage area of weight 1, m².
    pub flow_m2: f32,
    /// Weight 0 makes non-erodible sinks.
    pub sink: bool,
}

impl Default for SteerChoice {
    fn default() -> Self {
        Self { mode: 0, height: [20.0, 60.0], slope: [10.0, 30.0], flow_m2: 800.0, sink: false }
    }
}

/// The system that turns this frame's window input messages into the [`Pointer`]. A script writes
/// its messages before it; the camera and the brushes read the pointer after it.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadPointer;

/// The brush systems, for ordering.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolSystems;

/// The brush the panel edits.
#[derive(Resource, Clone, Debug, Default)]
pub struct BrushTool {
    /// The panel's brush: kind, radius, strength, falloff and spacing of the left-button tool.
    pub params: BrushParams,
    /// The left button runs the erosion brush (`erosion_brush`) instead of `params.kind`
    /// (radius and falloff still come from `params`).
    pub erode: bool,
}

/// Which stroke the pointer is painting, by button.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Press {
    /// Nothing paints: no painting button is down (the middle button and Alt+left move the camera),
    /// or the press began over the panel.
    #[default]
    None,
    /// The panel's tool (left button).
    Tool,
    /// Lower (right button).
    Lower,
    /// Smooth (Ctrl+left).
    Smooth,
    /// Flatten (Shift+left).
    Flatten,
}

/// One moment of the pointer within a frame, in the order the window's events came: at a low
/// frame rate a whole drag (press, moves, release) can arrive in one frame, and the brushes and
/// the camera follow it sample by sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Cursor position (window logical pixels).
    pub pos: Vec2,
    /// Cursor motion since the previous event (logical pixels).
    pub delta: Vec2,
    /// Left, right and middle buttons held at this moment.
    pub held: [bool; 3],
    /// The buttons held went down over the viewport (not on the panel).
    pub armed: bool,
    /// Brush clock of this moment: real seconds (virtual time caps a slow frame at 0.25 s, which
    /// would weaken a brush exactly when the machine is busy).
    pub time: f64,
}

/// The pointer as the brushes and the camera see it, built from the window's input messages.
#[derive(Resource, Clone, Debug, Default)]
pub struct Pointer {
    /// Where the cursor is in the window (logical pixels, window origin; see `view`),
    /// `None` before it entered or after it left.
    pub cursor: Option<Vec2>,
    /// This frame's moments, in event order; while a button is held and nothing moved, one
    /// sample at the cursor (the brush keeps working where it rests).
    pub samples: Vec<Sample>,
    /// Cursor motion this frame (logical pixels).
    pub motion: Vec2,
    /// The cursor position for the terrain after this frame: `cursor` while it is over the
    /// viewport and not over the panel (or while a stroke is being painted), else `None`.
    pub pos: Option<Vec2>,
    /// Buttons held (left, right, middle) after this frame's events.
    pub held: [bool; 3],
    /// True while the buttons held went down over the viewport.
    pub armed: bool,
    /// What the last sample pressed, for the terrain.
    pub press: Press,
    /// Brush clock at the end of this frame, seconds.
    pub time: f64,
    /// The terrain point under `pos`, if any (the hover ring).
    pub hit: Option<Hit>,
    /// The stroke being painted, with the kind it paints.
    pub painting: Option<BrushKind>,
    /// While a button paints: what it paints and the terrain as it was when that stroke began.
    /// Every sample of the stroke is cast into this surface, not into the one the stroke is
    /// changing: cast into a surface that rises under it, a resting pointer's ray would meet it
    /// ever nearer the camera and a moving one would land a little nearer with every dab, so the
    /// stroke would creep toward the camera. Cast into the start surface, a pointer that rests
    /// keeps its point and a path drawn over the terrain is painted where it was drawn (as a
    /// terrain collider synced at the end of a stroke behaves in other editors).
    pub surface: Option<(Press, Heightmap)>,
}

/// Orbit state: the camera sits `distance` from `focus`, at `yaw` around +Y and `pitch` above
/// the horizon (radians).
#[derive(Component, Clone, Debug)]
pub struct OrbitCamera {
    /// The point the camera looks at and orbits, world metres.
    pub focus: Vec3,
    /// Angle around +Y, radians; 0 puts the camera on the +Z side of `focus`.
    pub yaw: f32,
    /// Angle above the horizon, radians; the mouse keeps it in `0.03 ..= 1.55`.
    pub pitch: f32,
    /// Distance from `focus`, metres.
    pub distance: f32,
    /// The map extent last framed; another extent reframes.
    pub framed: Option<ViewExtent>,
}

/// A run in progress.
pub struct RunningJob {
    /// State shared with the worker: its updates, and the pause and cancel flags it reads.
    pub shared: Arc<JobShared>,
    /// The map the run started from (the undo step's "before").
    pub base: Heightmap,
    /// Undo label, e.g. "Droplet erosion".
    pub label: String,
    /// What runs: kept by the erosion layer the run becomes.
    pub recipe: crate::editor::layers::Recipe,
    /// A "Continue from here" run: the layer and the frame it goes on from.
    pub continues: Option<ContinueJob>,
}

/// The Build dialog's choices, which its loupe builds with too: whether the window is shown and
/// what Build builds (made from the project when first asked for).
#[derive(Resource, Default)]
pub struct BuildChoices {
    /// The window is shown.
    pub open: bool,
    settings: Option<DialogSettings>,
}

impl BuildChoices {
    /// The settings for the document in `terrain`: kept while the project keeps its side, made
    /// afresh for another.
    pub fn settings_for(&mut self, terrain: &EditorTerrain) -> &mut DialogSettings {
        let side = terrain.doc.stack().width();
        if self.settings.as_ref().is_none_or(|s| s.side != side) {
            self.settings = Some(DialogSettings::new(side, terrain.doc.path()));
        }
        self.settings.get_or_insert_with(|| DialogSettings::new(side, None))
    }

    /// The settings as they stand, if made.
    pub fn settings(&self) -> Option<&DialogSettings> {
        self.settings.as_ref()
    }
}

/// The simulation state the panel shows.
#[derive(Resource, Default)]
pub struct SimState {
    /// The run in progress; `None` when idle.
    pub job: Option<RunningJob>,
    /// Books, progress and rate from the newest update (kept after the run ends).
    pub ledger: Ledger,
    /// Work done and asked, in the model's unit (droplets, time steps, iterations).
    pub progress: Progress,
    /// Work per second, in the same unit as `progress`.
    pub steps_per_s: f64,
    /// Updates shown in the mesh since start (for the frame report).
    pub updates_shown: usize,
    /// Runs started since start (a script waits for this to grow after Simulate).
    pub started: u64,
    /// Where the newest run runs ("CPU", "GPU: <adapter>", with a fallback note if any).
    pub backend_used: String,
    /// The newest run's notes so far (e.g. "device lost: …; continuing on the CPU from step 120").
    pub notes: Vec<String>,
    /// The map the run that just ended started from, until Terrain QA (`qa`) has
    /// compared the result with it.
    pub last_base: Option<Heightmap>,
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
