//! The open terrain as a document: a [`LayerStack`] (base, sculpt, erosion layers), the terrain it
//! folds to, its undo history, where it lives on disk and whether it has unsaved changes.
//!
//! Every change goes through one of these methods so that each user action is exactly one undo
//! step:
//!
//! | action                               | what changes                                        |
//! |--------------------------------------|-----------------------------------------------------|
//! | brush stroke                         | `begin_stroke` → `stroke_to`* → `end_stroke`: the paint target's tiles (a sculpt layer, or an erosion layer's mask) |
//! | generate                             | `set_base`: the base (same size: layers stay, erosion goes stale; another size: a new stack; the base as it is: nothing) |
//! | new map / import                     | `replace_all`: a new stack on that base              |
//! | simulation run                       | `apply_result`: a new erosion layer on top           |
//! | whole-map edit (fix pits and spikes) | `apply_edit`: added to the top sculpt layer          |
//! | layer list                           | `set_visible`, `rename`, `delete`, `move_layer`, `set_strength` |
//!
//! Undo keeps whole snapshots of the stack: they share every tile they have in common with the
//! state after them ([`super::layers::tiles`]), so a snapshot costs the tiles its step changed.
//! A stale erosion layer's re-run ([`Document::set_resimulated`]) is not a step of its own: it follows
//! from the step that made the layer stale, and undoing that step brings back the layer as it was.
//!
//! `unsaved` is tracked with a revision counter: every change (undo and redo included) bumps
//! `revision` and a save records it as `saved_revision`. The rule is "changed since the last
//! save": undoing back to the saved state still counts as a change, which errs on the safe side.
//!
//! Files, by extension: `.talus` is the project ([`super::project`]: the whole stack, the look and
//! the camera); anything else is BHEF, the flattened terrain (what the document shows), written
//! byte-exact as before layers existed. Opening a BHEF makes a project with that file as its base.
//! Saving is atomic; a failed open leaves the current document untouched and says what is wrong.

use std::path::{Path, PathBuf};

use crate::core::Heightmap;
use crate::core::brush::{BrushError, BrushParams, DirtyRect, Stroke};
use crate::core::io::bhef;
use crate::editor::layers::{BaseSource, LayerKind, LayerStack, Recipe, StaleJob, TileGrid};
use crate::editor::project::{self, ProjectView};
use crate::editor::timeline::Timeline;

/// Memory the undo history may use by default (bytes).
pub const UNDO_BUDGET: usize = 512 << 20;
/// Metres of brush height per unit of mask: a mask is painted with the height brushes, a raise of
/// this many metres taking a node from 0 to 1.
pub const MASK_METRES: f32 = 10.0;

/// Where brush strokes go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PaintTarget {
    /// The terrain: the top sculpt layer (a new one on top when the top is an erosion layer).
    #[default]
    Terrain,
    /// The terrain, into this sculpt layer.
    Sculpt(u64),
    /// This erosion layer's mask: raise restores the erosion, lower erases it.
    Mask(u64),
}

/// A change of the layer list or of where strokes go, as the layer panel and scripts ask for it.
/// Layers are named by id (1, 2, … in the order they were made; `talus layers` lists them).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum LayerOp {
    /// Show (`true`) or hide a layer.
    Visible(u64, bool),
    /// Rename a layer.
    Rename(u64, String),
    /// Delete a layer.
    Delete(u64),
    /// Move a layer one place up (`true`) or down.
    Move(u64, bool),
    /// Set an erosion layer's strength (0 … 2).
    Strength(u64, f32),
    /// Show a frame of an erosion layer's timeline as its result (a drag is one undo step).
    Scrub(u64, usize),
    /// Keep an erosion layer's timeline up to the frame it shows ("Keep from here").
    Keep(u64),
    /// Steer an erosion layer's run by its painted mask (it then re-runs; the mask no longer
    /// blends), weight 0 making sinks with `sink`.
    SteerByMask {
        /// The erosion layer.
        id: u64,
        /// Steer by the mask (`false`: rain everywhere again).
        on: bool,
        /// Nodes of weight 0 are non-erodible sinks.
        sink: bool,
    },
    /// Choose where strokes go.
    Target(PaintTarget),
}

/// One undo step: the stack before it.
#[derive(Clone, Debug)]
struct Step {
    label: String,
    stack: LayerStack,
    /// Steps with the same key in a row merge (a strength slider dragged is one step).
    merge: Option<(u64, &'static str)>,
}

/// Undo and redo as stack snapshots, within a memory budget.
#[derive(Clone, Debug)]
pub struct History {
    undo: Vec<Step>,
    redo: Vec<Step>,
    budget: usize,
    bytes: usize,
}

impl History {
    fn new(budget: usize) -> Self {
        Self { undo: Vec::new(), redo: Vec::new(), budget, bytes: 0 }
    }

    /// True when there is a step to undo.
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    /// True when there is a step to redo.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Label of the step undo would revert.
    pub fn undo_label(&self) -> Option<&str> {
        self.undo.last().map(|s| s.label.as_str())
    }

    /// Label of the step redo would re-apply.
    pub fn redo_label(&self) -> Option<&str> {
        self.redo.last().map(|s| s.label.as_str())
    }

    /// Steps that can be undone.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// Steps that can be redone.
    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }

    /// Memory the history may use, bytes (the oldest steps go first beyond it).
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes the snapshots hold that the current stack does not share (as of the last change).
    pub fn bytes_used(&self) -> usize {
        self.bytes
    }

    /// Recounts the memory and drops the oldest steps while it is over budget.
    fn account(&mut self, current: &LayerStack) {
        loop {
            // Each snapshot is charged for what the state after it does not share.
            let mut after = current;
            let mut total = 0;
            for s in self.redo.iter().chain(self.undo.iter().rev()) {
                total += s.stack.bytes_not_shared_with(after);
                after = &s.stack;
            }
            self.bytes = total;
            if total <= self.budget || self.undo.is_empty() {
                return;
            }
            self.undo.remove(0);
        }
    }
}

/// An open stroke: the brush, what it paints, and the state it started from.
#[derive(Debug)]
struct OpenStroke {
    stroke: Stroke,
    target: StrokeInto,
    changed: bool,
    /// The redo steps, given back if the stroke paints nothing.
    redo: Vec<Step>,
}

#[derive(Debug)]
enum StrokeInto {
    /// Sculpt layer `id`: its delta at the start and the fold at the start.
    Sculpt { id: u64, delta0: TileGrid, fold0: Vec<f32> },
    /// Erosion layer `id`'s mask, painted on a canvas of `mask × MASK_METRES`.
    Mask { id: u64, canvas: Heightmap },
}

/// The terrain being edited, with its layers, history and file state.
#[derive(Debug)]
pub struct Document {
    stack: LayerStack,
    map: Heightmap,
    history: History,
    stroke: Option<OpenStroke>,
    target: PaintTarget,
    view: ProjectView,
    path: Option<PathBuf>,
    revision: u64,
    saved_revision: u64,
}

/// What a change did to the map, so the caller can refresh the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changed {
    /// Nothing changed.
    None,
    /// Nodes inside this rectangle changed; the size did not.
    Rect(DirtyRect),
    /// The whole map may differ, possibly in size.
    Whole,
}

fn is_project(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("talus"))
}

/// What the editor's Open gets ([`Document::open_or_ask`]): the document, or the size in nodes
/// of a BHEF that nothing gives a cell size for (no sidecar that describes it), to ask the user.
pub enum Opened {
    /// The opened document.
    Doc(Box<Document>),
    /// A BHEF of `width × height` nodes whose cell size is to be asked.
    AskCellSize(usize, usize),
}

impl Document {
    /// A new, never-saved document whose base is `map` (heights with no recipe).
    pub fn new(map: Heightmap) -> Self {
        Self::with_base(map, BaseSource::Heights)
    }

    /// A new, never-saved document whose base is `map` from `source`.
    pub fn with_base(map: Heightmap, source: BaseSource) -> Self {
        let stack = LayerStack::new(&map, source);
        Self::from_stack(stack, ProjectView::default())
    }

    /// A never-saved document holding a project read from disk (a recovered autosave).
    pub fn from_project(p: project::Project) -> Self {
        Self::from_stack(p.stack, p.view)
    }

    fn from_stack(stack: LayerStack, view: ProjectView) -> Self {
        let map = stack.compose();
        Self {
            stack,
            map,
            history: History::new(UNDO_BUDGET),
            stroke: None,
            target: PaintTarget::Terrain,
            view,
            path: None,
            revision: 0,
            saved_revision: 0,
        }
    }

    /// Opens a project (`.talus`) or a BHEF file (which becomes the base of a new project). On
    /// error nothing is created and the message says what is wrong. A BHEF takes the cell size
    /// its sidecar records, else 1 m ([`Self::open_at`] gives one).
    pub fn open(path: &Path) -> Result<Self, String> {
        Self::open_at(path, None)
    }

    /// [`Self::open`], with `cell_size` metres between a BHEF's nodes where its sidecar records
    /// none (what the user answered when the editor asked, [`Self::open_or_ask`]). A recorded
    /// cell size wins; a project keeps its own.
    pub fn open_at(path: &Path, cell_size: Option<f32>) -> Result<Self, String> {
        match Self::read(path, cell_size, false)? {
            Opened::Doc(doc) => Ok(*doc),
            Opened::AskCellSize(..) => unreachable!("not asked"),
        }
    }

    /// The editor's Open, in one read of the file: the document, or for a BHEF that records no
    /// cell size and was given none, its size to ask the user ([`Opened::AskCellSize`]).
    pub fn open_or_ask(path: &Path, cell_size: Option<f32>) -> Result<Opened, String> {
        Self::read(path, cell_size, true)
    }

    fn read(path: &Path, cell_size: Option<f32>, ask: bool) -> Result<Opened, String> {
        let mut doc = if is_project(path) {
            let p = project::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Self::from_stack(p.stack, p.view)
        } else {
            let (mut map, recorded) = bhef::load_with_cell(path).map_err(|e| format!("{}: {e}", path.display()))?;
            match (recorded, cell_size) {
                (None, Some(c)) => {
                    crate::core::heightmap::check_cell(c).map_err(|e| format!("{}: {e}", path.display()))?;
                    map.cell_size = c;
                }
                (None, None) if ask => return Ok(Opened::AskCellSize(map.width, map.height)),
                _ => {}
            }
            Self::with_base(map, BaseSource::File(path.to_path_buf()))
        };
        doc.path = Some(path.to_path_buf());
        Ok(Opened::Doc(Box::new(doc)))
    }

    /// The current heights (the fold of the stack, or a running simulation's preview).
    pub fn map(&self) -> &Heightmap {
        &self.map
    }

    /// The layers.
    pub fn stack(&self) -> &LayerStack {
        &self.stack
    }

    /// The look and camera a project carries (the window fills them in before saving).
    pub fn view(&self) -> &ProjectView {
        &self.view
    }

    /// Sets the look and camera saved with the project (not an undo step, not a change).
    pub fn set_view(&mut self, view: ProjectView) {
        self.view = view;
    }

    /// The file this document was opened from or last saved to.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// True when there are changes since the last save (or the document was never saved and has
    /// been changed).
    pub fn is_unsaved(&self) -> bool {
        self.revision != self.saved_revision
    }

    /// Counts every change; lets observers (autosave, live views) notice new work cheaply.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The undo history (labels, memory used).
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Window title: file name (or "untitled"), a `•` when unsaved, then the program name.
    pub fn title(&self) -> String {
        let name = self.path.as_deref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
        let mark = if self.is_unsaved() { "• " } else { "" };
        format!("{mark}{} — Talus", name.as_deref().unwrap_or("untitled"))
    }

    fn bump(&mut self) {
        self.revision += 1;
    }

    /// Records the stack as it is now as the undo step `label` (before changing it).
    fn record(&mut self, label: &str, merge: Option<(u64, &'static str)>) {
        if merge.is_some() && self.history.redo.is_empty() && self.history.undo.last().is_some_and(|s| s.merge == merge)
        {
            return;
        }
        self.history.redo.clear();
        self.history.undo.push(Step { label: label.to_string(), stack: self.stack.clone(), merge });
    }

    /// After a change of the stack: refold, count, bump. The change is the rectangle of nodes
    /// whose height differs from before (so the view rebuilds only those chunks).
    fn changed_whole(&mut self) -> Changed {
        let old = std::mem::replace(&mut self.map, self.stack.compose());
        self.history.account(&self.stack);
        self.bump();
        if (old.width, old.height) != (self.map.width, self.map.height) || old.cell_size != self.map.cell_size {
            return Changed::Whole;
        }
        let w = self.map.width;
        let mut r = DirtyRect::EMPTY;
        for (y, (a, b)) in old.data.chunks_exact(w).zip(self.map.data.chunks_exact(w)).enumerate() {
            let first = a.iter().zip(b).position(|(p, q)| p.to_bits() != q.to_bits());
            if let Some(x0) = first {
                let x1 =
                    w - a.iter().rev().zip(b.iter().rev()).position(|(p, q)| p.to_bits() != q.to_bits()).unwrap_or(0);
                r = r.union(DirtyRect::new(x0, y, x1, y + 1));
            }
        }
        if r.is_empty() { Changed::None } else { Changed::Rect(r) }
    }

    /// Where strokes go.
    pub fn paint_target(&self) -> PaintTarget {
        self.target
    }

    /// Chooses where strokes go (a target whose layer is gone falls back to the terrain).
    pub fn set_paint_target(&mut self, target: PaintTarget) {
        self.end_stroke();
        self.target = target;
    }

    /// Replaces the base (a generator's new result) as one undo step. The same size keeps every
    /// layer (erosion layers go stale); another size starts a new stack. The base as it is (the
    /// same source, size, cell size and heights, bit for bit: Generate with nothing changed) changes
    /// nothing: no undo step, no unsaved change, no stale layer.
    pub fn set_base(&mut self, map: Heightmap, source: BaseSource, label: &str) -> Changed {
        self.replace_base(map, source, label, true)
    }

    /// True when `map` from `source` is the base as it is: the same source, size and cell size,
    /// and the same heights bit for bit.
    pub fn base_is(&self, map: &Heightmap, source: &BaseSource) -> bool {
        let s = &self.stack;
        s.base.source == *source
            && (map.width, map.height) == (s.width(), s.height())
            && map.cell_size.to_bits() == s.cell_size().to_bits()
            && s.base.heights.to_dense().iter().zip(&map.data).all(|(a, b)| a.to_bits() == b.to_bits())
    }

    /// Replaces the whole terrain (new map, import) as one undo step: a new stack whose base is
    /// `map`, so the terrain shown is `map` (undo brings the old layers back).
    pub fn replace_all(&mut self, map: Heightmap, source: BaseSource, label: &str) -> Changed {
        self.replace_base(map, source, label, false)
    }

    fn replace_base(&mut self, map: Heightmap, source: BaseSource, label: &str, keep_layers: bool) -> Changed {
        let ended = self.end_stroke();
        if keep_layers && self.base_is(&map, &source) {
            return ended;
        }
        self.record(label, None);
        if keep_layers && (map.width, map.height) == (self.stack.width(), self.stack.height()) {
            self.stack.set_base(&map, source);
        } else {
            // Ids stay unique across undo: the new stack continues the count.
            self.stack = LayerStack::new(&map, source).continuing_ids(self.stack.next_id());
        }
        self.changed_whole()
    }

    /// A whole-map edit (e.g. fix pits and spikes) as one undo step: the difference from the
    /// current terrain goes into the paint target's sculpt layer. The size must be unchanged.
    pub fn apply_edit(&mut self, map: Heightmap, label: &str) -> Result<Changed, String> {
        if (map.width, map.height) != (self.map.width, self.map.height) {
            return Err("the edit does not match the terrain's size".into());
        }
        self.end_stroke();
        self.record(label, None);
        let i = self.sculpt_index();
        let current = self.map.clone();
        self.stack.add_edit(i, &current, &map);
        Ok(self.changed_whole())
    }

    /// Position of the sculpt layer strokes go into (created on top if needed).
    fn sculpt_index(&mut self) -> usize {
        if let PaintTarget::Sculpt(id) = self.target
            && let Some(i) = self.stack.index_of(id)
            && matches!(self.stack.layers()[i].kind, LayerKind::Sculpt(_))
        {
            return i;
        }
        self.stack.top_sculpt()
    }

    /// Installs the result of a simulation run of `recipe` that started from the current map, as
    /// a new erosion layer on top (one undo step) with the `timeline` the run recorded, if any.
    /// The size must be unchanged.
    pub fn apply_result(
        &mut self,
        map: Heightmap,
        recipe: Recipe,
        label: &str,
        timeline: Option<Timeline>,
    ) -> Result<Changed, String> {
        if map.width != self.map.width || map.height != self.map.height || map.cell_size != self.map.cell_size {
            return Err("the simulation result does not match the terrain's size".into());
        }
        self.end_stroke();
        if map.data == self.map.data {
            return Ok(Changed::None);
        }
        self.record(label, None);
        let input = self.map.clone();
        let id = self.stack.push_erosion(recipe, &input, &map, label);
        if let Some(t) = timeline.filter(|t| t.heights(0).data == input.data) {
            self.stack.set_timeline(id, t);
        }
        Ok(self.changed_whole())
    }

    /// Shows a simulation's intermediate heights without recording anything (the run is recorded
    /// once, by [`Self::apply_result`], against the map it started from). Sizes must match.
    pub fn preview(&mut self, map: &Heightmap) -> bool {
        if map.data.len() != self.map.data.len() || map.width != self.map.width {
            return false;
        }
        self.map.data.copy_from_slice(&map.data);
        true
    }

    /// Restores `base` (the map a simulation started from) before [`Self::apply_result`], so the
    /// new layer's input is the right one. Sizes must match.
    pub fn restore_base(&mut self, base: &Heightmap) -> bool {
        self.preview(base)
    }

    /// The next stale erosion layer to re-run, with its input (see [`LayerStack::stale_job`]).
    pub fn stale_job(&self) -> Option<StaleJob> {
        self.stack.stale_job()
    }

    /// True when some visible erosion layer is stale.
    pub fn has_stale(&self) -> bool {
        self.stack.layers().iter().any(|l| l.visible && l.erosion().is_some_and(|e| e.stale))
    }

    /// Installs a stale layer's re-run (not an undo step: see the module doc). `None` when it is
    /// refused: a stroke is open, or the layer's input has moved on since `job` was taken.
    pub fn set_resimulated(&mut self, job: &StaleJob, result: &Heightmap) -> Option<Changed> {
        if self.stroke.is_some() || !self.stack.set_result(job.id, job.input_hash, &job.input, result) {
            return None;
        }
        // Snapshots keep their own copies; only the memory count changes.
        Some(self.changed_whole())
    }

    /// Shows or hides layer `id` (one undo step).
    pub fn set_visible(&mut self, id: u64, visible: bool) -> Changed {
        if self.stack.layer(id).is_none_or(|l| l.visible == visible) {
            return Changed::None;
        }
        self.end_stroke();
        self.record(if visible { "Show layer" } else { "Hide layer" }, None);
        self.stack.set_visible(id, visible);
        self.changed_whole()
    }

    /// Renames layer `id` (one undo step; an empty name is refused).
    pub fn rename(&mut self, id: u64, name: &str) -> Changed {
        if name.trim().is_empty() || self.stack.layer(id).is_none_or(|l| l.name == name.trim()) {
            return Changed::None;
        }
        self.end_stroke();
        self.record("Rename layer", None);
        self.stack.rename(id, name);
        self.history.account(&self.stack);
        self.bump();
        Changed::None
    }

    /// Deletes layer `id` (one undo step).
    pub fn delete_layer(&mut self, id: u64) -> Changed {
        if self.stack.layer(id).is_none() {
            return Changed::None;
        }
        self.end_stroke();
        self.record("Delete layer", None);
        self.stack.delete(id);
        self.changed_whole()
    }

    /// Moves layer `id` one place up or down (one undo step).
    pub fn move_layer(&mut self, id: u64, up: bool) -> Changed {
        let Some(i) = self.stack.index_of(id) else { return Changed::None };
        let j = if up { i + 1 } else { i.wrapping_sub(1) };
        if j >= self.stack.layers().len() {
            return Changed::None;
        }
        self.end_stroke();
        self.record(if up { "Move layer up" } else { "Move layer down" }, None);
        self.stack.move_by_one(id, up);
        self.changed_whole()
    }

    /// Sets erosion layer `id`'s strength; a drag of the slider (calls in a row) is one undo step.
    pub fn set_strength(&mut self, id: u64, strength: f32) -> Changed {
        let Some(e) = self.stack.layer(id).and_then(|l| l.erosion()) else { return Changed::None };
        if e.strength == strength {
            return Changed::None;
        }
        self.end_stroke();
        self.record("Erosion strength", Some((id, "strength")));
        self.stack.set_strength(id, strength);
        self.changed_whole()
    }

    /// Applies a layer panel change (each one undo step, except choosing the paint target).
    pub fn apply_layer_op(&mut self, op: &LayerOp) -> Changed {
        match op {
            LayerOp::Visible(id, v) => self.set_visible(*id, *v),
            LayerOp::Rename(id, name) => self.rename(*id, name),
            LayerOp::Delete(id) => self.delete_layer(*id),
            LayerOp::Move(id, up) => self.move_layer(*id, *up),
            LayerOp::Strength(id, s) => self.set_strength(*id, *s),
            LayerOp::Scrub(id, frame) => self.scrub(*id, *frame),
            LayerOp::Keep(id) => self.keep_frame(*id),
            LayerOp::SteerByMask { .. } => self.steer_op(op),
            LayerOp::Target(t) => {
                self.set_paint_target(*t);
                Changed::None
            }
        }
    }

    /// Starts a brush stroke into the paint target (closing any open one). Invalid parameters are
    /// refused.
    pub fn begin_stroke(&mut self, params: BrushParams, label: &str) -> Result<(), BrushError> {
        self.end_stroke();
        let stroke = Stroke::new(params)?;
        let redo = std::mem::take(&mut self.history.redo);
        self.record(label, None);
        let mask = match self.target {
            PaintTarget::Mask(id) => self.stack.layer(id).and_then(|l| l.erosion()).map(|e| (id, e.mask.to_dense())),
            _ => None,
        };
        let target = match mask {
            Some((id, mask)) => {
                let data = mask.into_iter().map(|m| m * MASK_METRES).collect();
                let canvas =
                    Heightmap { width: self.map.width, height: self.map.height, cell_size: self.map.cell_size, data };
                StrokeInto::Mask { id, canvas }
            }
            None => {
                let i = self.sculpt_index();
                let l = &self.stack.layers()[i];
                let LayerKind::Sculpt(d) = &l.kind else { unreachable!("sculpt_index returns a sculpt layer") };
                StrokeInto::Sculpt { id: l.id, delta0: d.clone(), fold0: self.map.data.clone() }
            }
        };
        self.stroke = Some(OpenStroke { stroke, target, changed: false, redo });
        Ok(())
    }

    /// True while a stroke is open.
    pub fn in_stroke(&self) -> bool {
        self.stroke.is_some()
    }

    /// Feeds a cursor sample (grid units, seconds) to the open stroke.
    pub fn stroke_to(&mut self, pos: [f32; 2], time: f64) -> Changed {
        let Some(mut open) = self.stroke.take() else { return Changed::None };
        let r = match &mut open.target {
            StrokeInto::Sculpt { .. } => open.stroke.add_point(&mut self.map, pos, time),
            StrokeInto::Mask { canvas, .. } => open.stroke.add_point(canvas, pos, time),
        };
        let change = self.take_stroke_rect(&mut open, r);
        self.stroke = Some(open);
        change
    }

    /// Moves what the brush did inside `r` into the target layer and refolds `r`.
    fn take_stroke_rect(&mut self, open: &mut OpenStroke, r: DirtyRect) -> Changed {
        if r.is_empty() {
            return Changed::None;
        }
        let w = self.map.width;
        let i = match &mut open.target {
            StrokeInto::Sculpt { id, delta0, fold0 } => {
                let Some(i) = self.stack.index_of(*id) else { return Changed::None };
                let LayerKind::Sculpt(d) = &mut self.stack.layer_mut(*id).expect("index_of found it").kind else {
                    return Changed::None;
                };
                for y in r.y0..r.y1 {
                    for x in r.x0..r.x1 {
                        let k = y * w + x;
                        d.set(x, y, delta0.get(x, y) + (self.map.data[k] - fold0[k]));
                    }
                }
                i
            }
            StrokeInto::Mask { id, canvas } => {
                let Some(i) = self.stack.index_of(*id) else { return Changed::None };
                let Some(e) = self.stack.layer_mut(*id).and_then(|l| l.erosion_mut()) else { return Changed::None };
                for y in r.y0..r.y1 {
                    for x in r.x0..r.x1 {
                        let k = y * w + x;
                        let m = (canvas.data[k] / MASK_METRES).clamp(0.0, 1.0);
                        canvas.data[k] = m * MASK_METRES;
                        e.mask.set(x, y, m);
                    }
                }
                i
            }
        };
        if !open.changed {
            open.changed = true;
            self.stack.touched(Some(i));
        }
        self.stack.compose_rect(&mut self.map.data, r);
        self.revision += 1;
        Changed::Rect(r)
    }

    /// Closes the open stroke (stamping its remaining brush time) as one undo step.
    pub fn end_stroke(&mut self) -> Changed {
        let Some(mut open) = self.stroke.take() else { return Changed::None };
        let r = match &mut open.target {
            StrokeInto::Sculpt { .. } => open.stroke.finish(&mut self.map),
            StrokeInto::Mask { canvas, .. } => open.stroke.finish(canvas),
        };
        let change = self.take_stroke_rect(&mut open, r);
        if open.changed {
            match &open.target {
                StrokeInto::Sculpt { id, .. } => {
                    if let Some(LayerKind::Sculpt(d)) = self.stack.layer_mut(*id).map(|l| &mut l.kind) {
                        d.prune();
                    }
                }
                StrokeInto::Mask { id, .. } => {
                    if let Some(e) = self.stack.layer_mut(*id).and_then(|l| l.erosion_mut()) {
                        e.mask.prune();
                    }
                }
            }
            self.history.account(&self.stack);
            self.bump();
        } else {
            // Nothing painted: no step (a sculpt layer made for it goes with it), redo as it was.
            if let Some(step) = self.history.undo.pop() {
                self.stack = step.stack;
            }
            self.history.redo = open.redo;
        }
        change
    }

    fn undo_redo(&mut self, undo: bool) -> Changed {
        self.end_stroke();
        let (from, to) = if undo {
            (&mut self.history.undo, &mut self.history.redo)
        } else {
            (&mut self.history.redo, &mut self.history.undo)
        };
        let Some(step) = from.pop() else { return Changed::None };
        let current = std::mem::replace(&mut self.stack, step.stack);
        to.push(Step { label: step.label, stack: current, merge: None });
        self.changed_whole()
    }

    /// Undoes the last step.
    pub fn undo(&mut self) -> Changed {
        self.undo_redo(true)
    }

    /// Redoes the last undone step.
    pub fn redo(&mut self) -> Changed {
        self.undo_redo(false)
    }

    /// Saves to `path` atomically and makes it the document's file: a project for `.talus`, else
    /// the flattened terrain as BHEF.
    pub fn save_as(&mut self, path: &Path) -> Result<(), String> {
        self.end_stroke();
        if is_project(path) {
            project::save(path, &self.stack, &self.view).map_err(|e| format!("saving {}: {e}", path.display()))?;
        } else {
            bhef::save_with_sidecar(path, &self.map, "").map_err(|e| format!("saving {}: {e}", path.display()))?;
        }
        self.path = Some(path.to_path_buf());
        self.saved_revision = self.revision;
        Ok(())
    }

    /// Saves to the document's file; an error when it has none yet (ask for a path: Save As).
    pub fn save(&mut self) -> Result<(), String> {
        let path = self.path.clone().ok_or_else(|| "this terrain has no file yet: use Save As".to_string())?;
        self.save_as(&path)
    }

    /// Marks the document as unsaved without a map change (e.g. recovered from an autosave).
    pub fn mark_unsaved(&mut self) {
        self.bump();
    }

    /// Forgets the file name (a recovered autosave is not the original file).
    pub fn set_path(&mut self, path: Option<PathBuf>) {
        self.path = path;
    }
}

mod steer;
mod timeline;

#[cfg(test)]
mod tests;
