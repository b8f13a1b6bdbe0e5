//! The document as a stack of layers, so painting and erosion survive a change of the generator.
//!
//! The terrain shown and exported is the fold, bottom to top, of
//!
//! ```text
//! h = base + Σ_visible layers  c_i,   c_i = delta_i                       (sculpt)
//!                                     c_i = strength_i · mask_i · delta_i (erosion)
//! ```
//!
//! computed in that order in `f32` ([`LayerStack::compose`]), so the same stack always gives the
//! same bits.
//!
//! | layer   | holds                                                                    |
//! |---------|--------------------------------------------------------------------------|
//! | base    | a generator with its parameters, or an imported file, and its heights    |
//! | sculpt  | brush strokes as a delta ([`TileGrid`], only tiles that were painted)     |
//! | erosion | a Simulate run: its [`Recipe`], the delta `result − input`, a paintable    |
//! |         | mask in `[0, 1]` (1 = keep) and a strength in `[0, 2]` (1 = as run)        |
//!
//! An erosion layer's *input* is the fold of everything below it. When anything below changes
//! (the base regenerates, a stroke lands in a sculpt layer under it, a layer below is hidden,
//! moved, deleted or re-weighted) it becomes **stale**: it keeps its old delta until it runs
//! again on the new input ([`LayerStack::stale_job`], [`LayerStack::set_result`]). The input it
//! ran on is recorded as [`hash_heights`] of that input, so a reopened project can tell.
//!
//! Units: heights and deltas in metres; masks and strengths are factors.

pub mod recipe;
pub mod steer;
pub mod tiles;
pub mod timeline;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::core::Heightmap;
use crate::core::brush::DirtyRect;
use crate::core::generate::GenerateParams;
pub use recipe::Recipe;
pub use tiles::TileGrid;

use crate::editor::timeline::Timeline;

/// Range of an erosion layer's strength (0 erases the run, 1 is the run as it was, 2 doubles it).
pub const STRENGTH_RANGE: [f32; 2] = [0.0, 2.0];

/// Where the base heights come from.
// One per layer stack: the generator's size next to a path does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BaseSource {
    /// A generator run with these parameters (deterministic: the same parameters give the same
    /// heights).
    Generator(GenerateParams),
    /// A file that was opened or imported (BHEF, PNG16, R16, EXR, GeoTIFF …).
    File(PathBuf),
    /// Heights with no recipe (a new flat map, a recovered autosave of an older version).
    Heights,
}

impl BaseSource {
    /// Short description for the layer list.
    pub fn describe(&self) -> String {
        match self {
            BaseSource::Generator(p) => format!("generator, seed {}", p.seed),
            BaseSource::File(p) => {
                format!("file {}", p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
            }
            BaseSource::Heights => "heights".into(),
        }
    }
}

/// The bottom of the stack.
#[derive(Clone, Debug)]
pub struct Base {
    /// Where the heights come from.
    pub source: BaseSource,
    /// The heights, m.
    pub heights: TileGrid,
}

/// One erosion run as a layer.
#[derive(Clone, Debug)]
pub struct ErosionLayer {
    /// What ran.
    pub recipe: Recipe,
    /// `result − input`, m.
    pub delta: TileGrid,
    /// How much of the delta applies at each node, `[0, 1]` (fill 1: all of it).
    pub mask: TileGrid,
    /// Multiplier of the whole delta, [`STRENGTH_RANGE`].
    pub strength: f32,
    /// [`hash_heights`] of the input the delta was computed on.
    pub input_hash: u64,
    /// The input has changed since the delta was computed.
    pub stale: bool,
    /// The run's kept moments, to scrub ([`crate::editor::timeline`]); `None` for a re-run, a
    /// layer read from a project file, or a run that recorded none. Shared by undo snapshots.
    pub timeline: Option<Arc<Timeline>>,
    /// The frame of `timeline` that `delta` is (its last after a run).
    pub frame: usize,
}

/// What a layer holds.
#[derive(Clone, Debug)]
pub enum LayerKind {
    /// Brush strokes: a height delta, m.
    Sculpt(TileGrid),
    /// An erosion run.
    Erosion(Box<ErosionLayer>),
}

/// A layer above the base.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Stable identity (survives reordering and undo).
    pub id: u64,
    /// Name shown in the layer list.
    pub name: String,
    /// Hidden layers add nothing.
    pub visible: bool,
    /// Contents.
    pub kind: LayerKind,
}

impl ErosionLayer {
    /// Bytes the layer's timeline holds (0 without one).
    pub fn timeline_bytes(&self) -> usize {
        self.timeline.as_ref().map_or(0, |t| t.bytes())
    }

    /// True when the run is steered by this layer's painted mask (which then does not blend).
    pub fn steers_by_mask(&self) -> bool {
        self.recipe.steer.as_ref().is_some_and(|s| s.source == recipe::SteerSource::LayerMask)
    }
}

impl Layer {
    /// The erosion contents, if this is an erosion layer.
    pub fn erosion(&self) -> Option<&ErosionLayer> {
        match &self.kind {
            LayerKind::Erosion(e) => Some(e),
            LayerKind::Sculpt(_) => None,
        }
    }

    /// The erosion contents for writing.
    pub fn erosion_mut(&mut self) -> Option<&mut ErosionLayer> {
        match &mut self.kind {
            LayerKind::Erosion(e) => Some(e),
            LayerKind::Sculpt(_) => None,
        }
    }

    /// Tiles held, in bytes.
    pub fn bytes(&self) -> usize {
        match &self.kind {
            LayerKind::Sculpt(d) => d.bytes(),
            LayerKind::Erosion(e) => e.delta.bytes() + e.mask.bytes() + e.timeline_bytes(),
        }
    }
}

/// A stale erosion layer's next run: what to run and on what.
#[derive(Clone, Debug)]
pub struct StaleJob {
    /// The layer.
    pub id: u64,
    /// Its recipe.
    pub recipe: Recipe,
    /// Its current input (the fold of everything below it).
    pub input: Heightmap,
    /// [`hash_heights`] of `input`: [`LayerStack::set_result`] refuses a result whose input is no
    /// longer the layer's.
    pub input_hash: u64,
    /// The layer's painted mask, when its recipe is steered by it.
    pub mask: Option<Vec<f32>>,
}

/// The base and the layers above it, bottom first.
#[derive(Clone, Debug)]
pub struct LayerStack {
    width: usize,
    height: usize,
    cell_size: f32,
    /// The bottom of the stack.
    pub base: Base,
    layers: Vec<Layer>,
    next_id: u64,
}

/// FNV-1a over the bits of `data`, 64-bit: identifies an erosion layer's input.
pub fn hash_heights(data: &[f32]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in data {
        h = (h ^ v.to_bits() as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl LayerStack {
    /// A stack holding only `map` as its base.
    pub fn new(map: &Heightmap, source: BaseSource) -> Self {
        Self {
            width: map.width,
            height: map.height,
            cell_size: map.cell_size,
            base: Base { source, heights: TileGrid::from_dense_all(map.width, map.height, &map.data) },
            layers: Vec::new(),
            next_id: 1,
        }
    }

    /// A stack from its parts (the project reader); the sizes must agree.
    pub fn from_parts(cell_size: f32, base: Base, layers: Vec<Layer>, next_id: u64) -> Result<Self, String> {
        let (w, h) = (base.heights.width(), base.heights.height());
        let grids_fit = layers.iter().all(|l| match &l.kind {
            LayerKind::Sculpt(d) => (d.width(), d.height()) == (w, h),
            LayerKind::Erosion(e) => {
                (e.delta.width(), e.delta.height(), e.mask.width(), e.mask.height()) == (w, h, w, h)
            }
        });
        if !grids_fit {
            return Err("a layer's size differs from the base's".into());
        }
        let mut ids: Vec<u64> = layers.iter().map(|l| l.id).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|p| p[0] == p[1]) || ids.last().is_some_and(|&m| m >= next_id) {
            return Err("layer ids are repeated or out of range".into());
        }
        Ok(Self { width: w, height: h, cell_size, base, layers, next_id })
    }

    /// The same stack with ids counted from at least `next` (a new stack replacing one whose
    /// ids undo may bring back).
    pub fn continuing_ids(mut self, next: u64) -> Self {
        self.next_id = self.next_id.max(next);
        self
    }

    /// Nodes along x.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Nodes along y.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Node spacing, m.
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// The id the next new layer gets.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The layers above the base, bottom first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Position of layer `id` in [`Self::layers`].
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.layers.iter().position(|l| l.id == id)
    }

    /// Layer `id`.
    pub fn layer(&self, id: u64) -> Option<&Layer> {
        self.layers.iter().find(|l| l.id == id)
    }

    /// Layer `id` for writing (the caller marks what it changed with [`Self::touched`]).
    pub fn layer_mut(&mut self, id: u64) -> Option<&mut Layer> {
        self.layers.iter_mut().find(|l| l.id == id)
    }

    /// The folded terrain.
    pub fn compose(&self) -> Heightmap {
        self.input_of(self.layers.len())
    }

    /// Folds the stack into `out` (`width × height`) inside `rect` only.
    pub fn compose_rect(&self, out: &mut [f32], rect: DirtyRect) {
        self.compose_below(out, rect, self.layers.len());
    }

    /// The fold of the base and the first `n` layers into `out` inside `rect`.
    fn compose_below(&self, out: &mut [f32], rect: DirtyRect, n: usize) {
        self.base.heights.write_rect(out, rect);
        for l in self.layers[..n].iter().filter(|l| l.visible) {
            match &l.kind {
                LayerKind::Sculpt(d) => d.add_into(out, rect, 1.0, None),
                LayerKind::Erosion(e) => {
                    // A mask that steers the run does not blend its result as well.
                    let painted = e.mask.stored() > 0 || e.mask.fill() != 1.0;
                    let mask = (painted && !e.steers_by_mask()).then_some(&e.mask);
                    e.delta.add_into(out, rect, e.strength, mask)
                }
            }
        }
    }

    /// The input of layer `i`: the fold of the base and every layer below it.
    pub fn input_of(&self, i: usize) -> Heightmap {
        let mut data = vec![0.0; self.width * self.height];
        self.compose_below(&mut data, DirtyRect::new(0, 0, self.width, self.height), i.min(self.layers.len()));
        Heightmap { width: self.width, height: self.height, cell_size: self.cell_size, data }
    }

    /// The stack cut to the `w × h` nodes from `(x0, y0)`: the base and every layer's grids cut
    /// the same way; sources, recipes, strengths, staleness and ids kept; timelines dropped. Its
    /// fold is the project's fold over the window, node for node (a build's loupe builds a window
    /// of the project this way). `None` when the window is empty or leaves the map.
    pub fn crop(&self, x0: usize, y0: usize, w: usize, h: usize) -> Option<LayerStack> {
        let layers = self
            .layers
            .iter()
            .map(|l| {
                let kind = match &l.kind {
                    LayerKind::Sculpt(d) => LayerKind::Sculpt(d.crop(x0, y0, w, h)?),
                    LayerKind::Erosion(e) => LayerKind::Erosion(Box::new(ErosionLayer {
                        delta: e.delta.crop(x0, y0, w, h)?,
                        mask: e.mask.crop(x0, y0, w, h)?,
                        timeline: None,
                        frame: 0,
                        ..(**e).clone()
                    })),
                };
                Some(Layer { kind, name: l.name.clone(), ..*l })
            })
            .collect::<Option<Vec<_>>>()?;
        let heights = self.base.heights.crop(x0, y0, w, h)?;
        let base =
            Base { source: self.base.source.clone(), heights: TileGrid::from_dense_all(w, h, &heights.to_dense()) };
        Some(LayerStack { width: w, height: h, cell_size: self.cell_size, base, layers, next_id: self.next_id })
    }

    /// Marks every erosion layer above position `i` stale (`None`: above the base, i.e. all).
    pub fn touched(&mut self, i: Option<usize>) {
        let from = i.map_or(0, |i| i + 1);
        for l in self.layers.iter_mut().skip(from) {
            if let Some(e) = l.erosion_mut() {
                e.stale = true;
            }
        }
    }

    /// Replaces the base heights (same size) and its source; every erosion layer goes stale.
    pub fn set_base(&mut self, map: &Heightmap, source: BaseSource) {
        debug_assert_eq!((map.width, map.height), (self.width, self.height));
        self.cell_size = map.cell_size;
        self.base = Base { source, heights: TileGrid::from_dense_all(self.width, self.height, &map.data) };
        self.touched(None);
    }

    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A name not used yet: `stem`, else `stem 2`, `stem 3` …
    fn fresh_name(&self, stem: &str) -> String {
        let used = |n: &str| self.layers.iter().any(|l| l.name == n);
        if !used(stem) {
            return stem.to_string();
        }
        (2..).map(|k| format!("{stem} {k}")).find(|n| !used(n)).unwrap_or_default()
    }

    /// The sculpt layer strokes go into when no layer is chosen: the top layer if it is a sculpt
    /// layer, else a new one on top. Returns its position.
    pub fn top_sculpt(&mut self) -> usize {
        if let Some(l) = self.layers.last()
            && matches!(l.kind, LayerKind::Sculpt(_))
        {
            return self.layers.len() - 1;
        }
        let id = self.new_id();
        let name = self.fresh_name("Sculpt");
        self.layers.push(Layer {
            id,
            name,
            visible: true,
            kind: LayerKind::Sculpt(TileGrid::new(self.width, self.height, 0.0)),
        });
        self.layers.len() - 1
    }

    /// Adds `target − (current fold)` to sculpt layer `i` (an edit of the whole map, e.g. "fix pits
    /// and spikes", expressed as sculpt). Layers above go stale.
    pub fn add_edit(&mut self, i: usize, current: &Heightmap, target: &Heightmap) {
        if let LayerKind::Sculpt(d) = &mut self.layers[i].kind {
            for y in 0..self.height {
                for x in 0..self.width {
                    let k = y * self.width + x;
                    let dh = target.data[k] - current.data[k];
                    if dh != 0.0 {
                        d.set(x, y, d.get(x, y) + dh);
                    }
                }
            }
            d.prune();
        }
        self.touched(Some(i));
    }

    /// Puts a run of `recipe` from `input` (the current fold) to `result` on top, as a new
    /// erosion layer named after `label`. Returns its id.
    pub fn push_erosion(&mut self, recipe: Recipe, input: &Heightmap, result: &Heightmap, label: &str) -> u64 {
        let id = self.new_id();
        let name = self.fresh_name(label);
        let e = ErosionLayer {
            recipe,
            delta: delta_grid(input, result),
            mask: TileGrid::new(self.width, self.height, 1.0),
            strength: 1.0,
            input_hash: hash_heights(&input.data),
            stale: false,
            timeline: None,
            frame: 0,
        };
        self.layers.push(Layer { id, name, visible: true, kind: LayerKind::Erosion(Box::new(e)) });
        id
    }

    /// The lowest visible stale erosion layer's next run, if any.
    pub fn stale_job(&self) -> Option<StaleJob> {
        let i = self.layers.iter().position(|l| l.visible && l.erosion().is_some_and(|e| e.stale))?;
        let input = self.input_of(i);
        let e = self.layers[i].erosion()?;
        Some(StaleJob {
            id: self.layers[i].id,
            recipe: e.recipe.clone(),
            input_hash: hash_heights(&input.data),
            mask: e.steers_by_mask().then(|| e.mask.to_dense()),
            input,
        })
    }

    /// Installs a re-run's `result` for layer `id`, computed from the input whose hash is
    /// `input_hash`. Refused (`false`) when the layer is gone or its input has changed since; layers
    /// above go stale.
    pub fn set_result(&mut self, id: u64, input_hash: u64, input: &Heightmap, result: &Heightmap) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        if self.layers[i].erosion().is_none() || hash_heights(&self.input_of(i).data) != input_hash {
            return false;
        }
        let delta = delta_grid(input, result);
        if let Some(e) = self.layers[i].erosion_mut() {
            e.delta = delta;
            e.input_hash = input_hash;
            e.stale = false;
            // The frames are of the old input.
            e.timeline = None;
            e.frame = 0;
        }
        self.touched(Some(i));
        true
    }

    /// Re-runs every visible stale erosion layer, bottom first (each on the fold below it, which
    /// earlier re-runs have already updated), calling `on_layer` before each. `Ok(false)` when
    /// `cancel` stopped it (the layers already re-run keep their new deltas).
    pub fn rebuild(
        &mut self,
        cancel: &std::sync::atomic::AtomicBool,
        mut on_layer: impl FnMut(&Layer),
    ) -> Result<bool, String> {
        while let Some(job) = self.stale_job() {
            if let Some(l) = self.layer(job.id) {
                on_layer(l);
            }
            let name = self.layer(job.id).map(|l| l.name.clone()).unwrap_or_default();
            match recipe::run_to_end(&job.recipe, job.input.clone(), job.mask.as_deref(), cancel)
                .map_err(|e| format!("{name}: {e}"))?
            {
                Some(result) => {
                    self.set_result(job.id, job.input_hash, &job.input, &result);
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Re-checks every erosion layer's stale flag against the hash of its input (a reopened
    /// project: the flags were saved, this makes sure).
    pub fn verify_stale(&mut self) {
        for i in 0..self.layers.len() {
            if self.layers[i].erosion().is_some() {
                let h = hash_heights(&self.input_of(i).data);
                if let Some(e) = self.layers[i].erosion_mut() {
                    e.stale = h != e.input_hash;
                }
            }
        }
    }

    /// Shows or hides layer `id`; layers above go stale. `false` if there is no such layer.
    pub fn set_visible(&mut self, id: u64, visible: bool) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        if self.layers[i].visible != visible {
            self.layers[i].visible = visible;
            self.touched(Some(i));
        }
        true
    }

    /// Renames layer `id` (an empty name is refused).
    pub fn rename(&mut self, id: u64, name: &str) -> bool {
        let name = name.trim();
        match self.layer_mut(id) {
            Some(l) if !name.is_empty() => {
                l.name = name.to_string();
                true
            }
            _ => false,
        }
    }

    /// Deletes layer `id`; layers above go stale.
    pub fn delete(&mut self, id: u64) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        self.layers.remove(i);
        self.touched(i.checked_sub(1));
        true
    }

    /// Moves layer `id` one place up (`up`) or down. Both layers it passes and everything above
    /// go stale. `false` when it cannot move.
    pub fn move_by_one(&mut self, id: u64, up: bool) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        let j = if up { i + 1 } else { i.wrapping_sub(1) };
        if j >= self.layers.len() {
            return false;
        }
        self.layers.swap(i, j);
        self.touched(i.min(j).checked_sub(1));
        true
    }

    /// Sets erosion layer `id`'s strength (clamped to [`STRENGTH_RANGE`]); layers above go stale.
    pub fn set_strength(&mut self, id: u64, strength: f32) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        let s = if strength.is_finite() { strength.clamp(STRENGTH_RANGE[0], STRENGTH_RANGE[1]) } else { 1.0 };
        match self.layers[i].erosion_mut() {
            Some(e) => {
                e.strength = s;
                self.touched(Some(i));
                true
            }
            None => false,
        }
    }

    /// Bytes held by the base and the layers' tiles.
    pub fn bytes(&self) -> usize {
        self.base.heights.bytes() + self.layers.iter().map(Layer::bytes).sum::<usize>()
    }

    /// Bytes of tiles held here that `current` does not share (what an undo snapshot costs).
    pub fn bytes_not_shared_with(&self, current: &LayerStack) -> usize {
        let mut n = self.base.heights.bytes_not_shared_with(&current.base.heights);
        for l in &self.layers {
            let other = current.layer(l.id);
            n += match (&l.kind, other.map(|o| &o.kind)) {
                (LayerKind::Sculpt(a), Some(LayerKind::Sculpt(b))) => a.bytes_not_shared_with(b),
                (LayerKind::Erosion(a), Some(LayerKind::Erosion(b))) => {
                    let same_timeline = match (&a.timeline, &b.timeline) {
                        (Some(x), Some(y)) => std::sync::Arc::ptr_eq(x, y),
                        (None, _) => true,
                        _ => false,
                    };
                    a.delta.bytes_not_shared_with(&b.delta)
                        + a.mask.bytes_not_shared_with(&b.mask)
                        + if same_timeline { 0 } else { a.timeline_bytes() }
                }
                _ => l.bytes(),
            };
        }
        n
    }
}

/// `result − input` as tiles (only where some node changed).
pub fn delta_grid(input: &Heightmap, result: &Heightmap) -> TileGrid {
    let d: Vec<f32> = result.data.iter().zip(&input.data).map(|(r, i)| r - i).collect();
    TileGrid::from_dense(input.width, input.height, 0.0, &d)
}

#[cfg(test)]
mod tests;
