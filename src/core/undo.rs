//! Undo/redo of heightmap edits in bounded memory, storing changed tiles rather than whole maps.
//!
//! # World frame
//! Like every core module this one works in grid units: node `(x, y)` is `data[y·width + x]`; the
//! editor's mesh places it at world `(x·cell_size, height, y·cell_size)`, y-up (world X = our x,
//! world Z = our y). Rectangles are [`DirtyRect`]s in nodes.
//!
//! # Model
//! The map is cut into `tile × tile` squares (the last row and column may be narrower). An edit is
//! the list of tiles it changed, each with its content *before* and *after*, so undo writes the
//! befores back and redo writes the afters back, bit for bit:
//!
//! ```text
//! begin(label)  →  touch(rect)*  →  commit           brush strokes: each touch snapshots the
//!                                                    tiles overlapping rect not yet saved
//! record_whole(before, after, label)                 generate / simulate: diff tile by tile
//! ```
//!
//! `commit` reads the after-content of the saved tiles, drops tiles whose bits did not change and
//! drops the edit if none did. A stored edit clears the redo list. Memory is counted as the heights
//! held (4 bytes each, before and after) plus a fixed overhead per tile and per edit; whenever
//! [`UndoStack::bytes_used`] (stored edits plus the open edit's snapshots) would exceed the budget,
//! the oldest edits are dropped (then, if still over, redo entries, furthest first). An edit that
//! alone exceeds the budget cannot be kept: it is dropped at commit, so the history then holds
//! nothing older than it either (it would no longer apply).
//!
//! # Size changes
//! A change of size or cell size (new map, load, resample) goes through [`UndoStack::record_whole`]
//! and is stored as a whole-map edit holding both maps (subject to the budget like any other edit):
//! undo and redo then replace the map, and report the whole new map as dirty. Tile edits apply only
//! to a map of the size they were recorded on: if the caller changed the size without recording it,
//! undo/redo finds a mismatch, clears the history (it no longer describes this map) and returns
//! `None`.

use std::collections::VecDeque;
use std::mem::size_of;

use rayon::prelude::*;

use super::brush::DirtyRect;
use super::heightmap::Heightmap;

/// Largest tile side accepted by [`UndoStack::new`]; larger values are clamped.
pub const MAX_TILE: usize = 4096;

/// One tile's content before and after an edit.
#[derive(Clone, Debug)]
struct TileDelta {
    tx: usize,
    ty: usize,
    before: Box<[f32]>,
    after: Box<[f32]>,
}

#[derive(Clone, Debug)]
enum Change {
    /// Tiles of a `width × height` map.
    Tiles { width: usize, height: usize, tiles: Vec<TileDelta> },
    /// A change of size or cell size: both maps.
    Whole { before: Box<Heightmap>, after: Box<Heightmap> },
}

#[derive(Clone, Debug)]
struct Edit {
    label: String,
    change: Change,
    bytes: usize,
}

/// A tile saved during the open edit: its content before the edit.
#[derive(Clone, Debug)]
struct Saved {
    tx: usize,
    ty: usize,
    before: Box<[f32]>,
}

#[derive(Clone, Debug)]
struct Open {
    label: String,
    width: usize,
    height: usize,
    tiles_x: usize,
    /// One flag per tile: already saved in this edit.
    saved_flags: Vec<bool>,
    saved: Vec<Saved>,
    bytes: usize,
}

/// Bounded-memory undo/redo history of heightmap edits (see the module doc).
#[derive(Clone, Debug)]
pub struct UndoStack {
    tile: usize,
    budget: usize,
    done: VecDeque<Edit>,
    undone: Vec<Edit>,
    open: Option<Open>,
    stored: usize,
}

const TILE_OVERHEAD: usize = size_of::<TileDelta>();
const EDIT_OVERHEAD: usize = size_of::<Edit>();

fn well_formed(hm: &Heightmap) -> bool {
    hm.width > 0 && hm.height > 0 && hm.width.checked_mul(hm.height) == Some(hm.data.len())
}

impl UndoStack {
    /// An empty history with `tile × tile` tiles (clamped to `1..=4096`; 64 is a good choice)
    /// keeping at most `budget_bytes` bytes of edits.
    pub fn new(tile: usize, budget_bytes: usize) -> Self {
        Self {
            tile: tile.clamp(1, MAX_TILE),
            budget: budget_bytes,
            done: VecDeque::new(),
            undone: Vec::new(),
            open: None,
            stored: 0,
        }
    }

    /// Tile side, nodes.
    pub fn tile(&self) -> usize {
        self.tile
    }

    /// The memory budget, bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Changes the budget, dropping the oldest edits if the history no longer fits.
    pub fn set_budget(&mut self, budget_bytes: usize) {
        self.budget = budget_bytes;
        self.trim();
    }

    /// Bytes held: stored edits plus the open edit's snapshots.
    pub fn bytes_used(&self) -> usize {
        self.stored + self.open.as_ref().map_or(0, |o| o.bytes)
    }

    /// True when [`Self::undo`] has something to undo (an open edit counts once it saved a tile).
    pub fn can_undo(&self) -> bool {
        !self.done.is_empty() || self.open.as_ref().is_some_and(|o| !o.saved.is_empty())
    }

    /// True when [`Self::redo`] has something to redo.
    pub fn can_redo(&self) -> bool {
        !self.undone.is_empty()
    }

    /// Label of the edit the next undo reverts.
    pub fn undo_label(&self) -> Option<&str> {
        match &self.open {
            Some(o) if !o.saved.is_empty() => Some(&o.label),
            _ => self.done.back().map(|e| e.label.as_str()),
        }
    }

    /// Label of the edit the next redo re-applies.
    pub fn redo_label(&self) -> Option<&str> {
        self.undone.last().map(|e| e.label.as_str())
    }

    /// Labels of the undoable edits, newest first (the open edit excluded).
    pub fn undo_labels(&self) -> impl Iterator<Item = &str> {
        self.done.iter().rev().map(|e| e.label.as_str())
    }

    /// Labels of the redoable edits, next first.
    pub fn redo_labels(&self) -> impl Iterator<Item = &str> {
        self.undone.iter().rev().map(|e| e.label.as_str())
    }

    /// Number of stored undoable edits.
    pub fn undo_len(&self) -> usize {
        self.done.len()
    }

    /// Number of stored redoable edits.
    pub fn redo_len(&self) -> usize {
        self.undone.len()
    }

    /// Number of tiles the newest undoable edit stores (a whole-map edit counts as 0 tiles).
    pub fn last_edit_tiles(&self) -> Option<usize> {
        self.done.back().map(|e| match &e.change {
            Change::Tiles { tiles, .. } => tiles.len(),
            Change::Whole { .. } => 0,
        })
    }

    /// True between [`Self::begin`] and [`Self::commit`].
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Forgets everything, including an open edit.
    pub fn clear(&mut self) {
        self.done.clear();
        self.undone.clear();
        self.open = None;
        self.stored = 0;
    }

    /// Starts an edit named `label` on `hm` (nothing is saved yet). An edit still open is
    /// committed first, `hm` being its after-state.
    pub fn begin(&mut self, hm: &Heightmap, label: &str) {
        if self.open.is_some() {
            self.commit(hm);
        }
        if !well_formed(hm) {
            return;
        }
        let tiles_x = hm.width.div_ceil(self.tile);
        let tiles_y = hm.height.div_ceil(self.tile);
        let flags = tiles_x * tiles_y;
        self.open = Some(Open {
            label: label.to_owned(),
            width: hm.width,
            height: hm.height,
            tiles_x,
            saved_flags: vec![false; flags],
            saved: Vec::new(),
            bytes: EDIT_OVERHEAD + label.len() + flags,
        });
        self.trim();
    }

    /// Call *before* the nodes in `rect` change: snapshots the tiles overlapping `rect` that this
    /// edit has not saved yet. Opens an edit labelled "edit" if none is open. If `hm` no longer has
    /// the size the open edit began with, that edit is discarded (its snapshots describe another
    /// map) and a new one begins.
    pub fn touch(&mut self, hm: &Heightmap, rect: DirtyRect) {
        if !well_formed(hm) {
            return;
        }
        if self.open.as_ref().is_some_and(|o| o.width != hm.width || o.height != hm.height) {
            let label = self.open.take().map(|o| o.label).unwrap_or_default();
            self.begin(hm, &label);
        }
        if self.open.is_none() {
            self.begin(hm, "edit");
        }
        let rect = rect.clamp_to(hm.width, hm.height);
        if rect.is_empty() {
            return;
        }
        let t = self.tile;
        let Some(open) = self.open.as_mut() else { return };
        for ty in rect.y0 / t..=(rect.y1 - 1) / t {
            for tx in rect.x0 / t..=(rect.x1 - 1) / t {
                let f = ty * open.tiles_x + tx;
                if open.saved_flags[f] {
                    continue;
                }
                open.saved_flags[f] = true;
                let before = read_tile(hm, t, tx, ty);
                open.bytes += size_of::<Saved>() + 4 * before.len();
                open.saved.push(Saved { tx, ty, before });
            }
        }
        self.trim();
    }

    /// Ends the open edit, `hm` being the state after it: keeps the saved tiles whose bits changed,
    /// with before and after content. Returns true when an edit was stored (false for an empty edit,
    /// no open edit, or an edit larger than the whole budget).
    pub fn commit(&mut self, hm: &Heightmap) -> bool {
        let Some(open) = self.open.take() else { return false };
        if !well_formed(hm) || hm.width != open.width || hm.height != open.height {
            return false;
        }
        let t = self.tile;
        let tiles: Vec<TileDelta> = open
            .saved
            .into_iter()
            .filter_map(|s| {
                let after = read_tile(hm, t, s.tx, s.ty);
                let same = s.before.iter().zip(after.iter()).all(|(a, b)| a.to_bits() == b.to_bits());
                (!same).then_some(TileDelta { tx: s.tx, ty: s.ty, before: s.before, after })
            })
            .collect();
        if tiles.is_empty() {
            return false;
        }
        self.push(open.label, Change::Tiles { width: open.width, height: open.height, tiles })
    }

    /// Records a change made outside brush strokes (generate, simulate, filters, load): stores the
    /// tiles whose bits differ, or both maps when the size or cell size changed. Commits an open
    /// edit first (with `before` as its after-state). Returns true when an edit was stored.
    pub fn record_whole(&mut self, before: &Heightmap, after: &Heightmap, label: &str) -> bool {
        if self.open.is_some() {
            self.commit(before);
        }
        if !well_formed(before) || !well_formed(after) {
            return false;
        }
        if before.width != after.width
            || before.height != after.height
            || before.cell_size.to_bits() != after.cell_size.to_bits()
        {
            let change = Change::Whole { before: Box::new(before.clone()), after: Box::new(after.clone()) };
            return self.push(label.to_owned(), change);
        }
        let t = self.tile;
        let tiles_x = before.width.div_ceil(t);
        let tiles_y = before.height.div_ceil(t);
        let diff_row = |ty: usize| -> Vec<TileDelta> {
            (0..tiles_x)
                .filter_map(|tx| {
                    let (x0, y0, x1, y1) = tile_rect(before, t, tx, ty);
                    let differs = (y0..y1).any(|y| {
                        let a = &before.data[y * before.width + x0..y * before.width + x1];
                        let b = &after.data[y * after.width + x0..y * after.width + x1];
                        a.iter().zip(b).any(|(p, q)| p.to_bits() != q.to_bits())
                    });
                    differs.then(|| TileDelta {
                        tx,
                        ty,
                        before: read_tile(before, t, tx, ty),
                        after: read_tile(after, t, tx, ty),
                    })
                })
                .collect()
        };
        let tiles: Vec<TileDelta> = if before.len() >= 1 << 18 {
            (0..tiles_y).into_par_iter().map(diff_row).collect::<Vec<_>>().into_iter().flatten().collect()
        } else {
            (0..tiles_y).flat_map(diff_row).collect()
        };
        if tiles.is_empty() {
            return false;
        }
        self.push(label.to_owned(), Change::Tiles { width: before.width, height: before.height, tiles })
    }

    /// Reverts the newest edit (committing an open one first). Returns the rectangle that changed,
    /// or `None` when there is nothing to undo or the history no longer matches `hm`'s size.
    pub fn undo(&mut self, hm: &mut Heightmap) -> Option<DirtyRect> {
        if self.open.is_some() {
            self.commit(hm);
        }
        let edit = self.done.pop_back()?;
        self.stored -= edit.bytes;
        match apply(hm, &edit.change, self.tile, Side::Before) {
            Some(rect) => {
                self.stored += edit.bytes;
                self.undone.push(edit);
                Some(rect)
            }
            None => {
                self.clear();
                None
            }
        }
    }

    /// Re-applies the newest undone edit. Returns the rectangle that changed, or `None` when there
    /// is nothing to redo or the history no longer matches `hm`'s size.
    pub fn redo(&mut self, hm: &mut Heightmap) -> Option<DirtyRect> {
        if self.open.is_some() {
            self.commit(hm);
        }
        let edit = self.undone.pop()?;
        self.stored -= edit.bytes;
        match apply(hm, &edit.change, self.tile, Side::After) {
            Some(rect) => {
                self.stored += edit.bytes;
                self.done.push_back(edit);
                Some(rect)
            }
            None => {
                self.clear();
                None
            }
        }
    }

    /// Stores a finished edit, clears the redo list and enforces the budget.
    fn push(&mut self, label: String, change: Change) -> bool {
        let data_bytes = match &change {
            Change::Tiles { tiles, .. } => {
                tiles.iter().map(|t| TILE_OVERHEAD + 4 * (t.before.len() + t.after.len())).sum()
            }
            Change::Whole { before, after } => 2 * size_of::<Heightmap>() + 4 * (before.data.len() + after.data.len()),
        };
        let bytes = EDIT_OVERHEAD + label.len() + data_bytes;
        self.undone.clear();
        self.stored = self.done.iter().map(|e| e.bytes).sum();
        if bytes > self.budget {
            // It cannot be kept, and older edits would no longer apply after it.
            self.clear();
            return false;
        }
        self.stored += bytes;
        self.done.push_back(Edit { label, change, bytes });
        self.trim();
        true
    }

    /// Drops the oldest edits, then the furthest redo entries, until the budget holds (or nothing
    /// is left to drop).
    fn trim(&mut self) {
        while self.bytes_used() > self.budget {
            if let Some(e) = self.done.pop_front() {
                self.stored -= e.bytes;
            } else if !self.undone.is_empty() {
                let e = self.undone.remove(0);
                self.stored -= e.bytes;
            } else {
                break;
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Before,
    After,
}

/// Writes one side of `change` into `hm`; `None` (and `hm` untouched) when sizes do not match.
fn apply(hm: &mut Heightmap, change: &Change, tile: usize, side: Side) -> Option<DirtyRect> {
    match change {
        Change::Tiles { width, height, tiles } => {
            if !well_formed(hm) || hm.width != *width || hm.height != *height {
                return None;
            }
            let mut rect = DirtyRect::EMPTY;
            for d in tiles {
                let content = if side == Side::Before { &d.before } else { &d.after };
                let (x0, y0, x1, y1) = tile_rect(hm, tile, d.tx, d.ty);
                let w = x1 - x0;
                for (k, y) in (y0..y1).enumerate() {
                    hm.data[y * hm.width + x0..y * hm.width + x1].copy_from_slice(&content[k * w..(k + 1) * w]);
                }
                rect = rect.union(DirtyRect::new(x0, y0, x1, y1));
            }
            Some(rect)
        }
        Change::Whole { before, after } => {
            let src: &Heightmap = if side == Side::Before { before } else { after };
            hm.clone_from(src);
            Some(DirtyRect::full(hm))
        }
    }
}

/// Node range `[x0, x1) × [y0, y1)` of tile `(tx, ty)`.
fn tile_rect(hm: &Heightmap, t: usize, tx: usize, ty: usize) -> (usize, usize, usize, usize) {
    let x0 = tx * t;
    let y0 = ty * t;
    (x0, y0, (x0 + t).min(hm.width), (y0 + t).min(hm.height))
}

/// Copies tile `(tx, ty)` of `hm`, row by row.
fn read_tile(hm: &Heightmap, t: usize, tx: usize, ty: usize) -> Box<[f32]> {
    let (x0, y0, x1, y1) = tile_rect(hm, t, tx, ty);
    let mut v = Vec::with_capacity((x1 - x0) * (y1 - y0));
    for y in y0..y1 {
        v.extend_from_slice(&hm.data[y * hm.width + x0..y * hm.width + x1]);
    }
    v.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::{BrushKind, BrushParams, Stroke};
    use crate::core::rng::{SplitMix64, hash2, signed_f32};

    fn noise(w: usize, h: usize, seed: u64) -> Heightmap {
        Heightmap::from_fn(w, h, 1.0, |x, y| 5.0 * signed_f32(hash2(x as i64, y as i64, seed))).unwrap()
    }

    fn bits(hm: &Heightmap) -> Vec<u32> {
        hm.data.iter().map(|h| h.to_bits()).collect()
    }

    /// Plays a stroke of `kind` from `a` to `b`, recording it on `undo`.
    fn stroke(hm: &mut Heightmap, undo: &mut UndoStack, kind: BrushKind, a: [f32; 2], b: [f32; 2], label: &str) {
        undo.begin(hm, label);
        let mut s = Stroke::new(BrushParams { kind, radius: 4.0, strength: 3.0, ..Default::default() }).unwrap();
        for i in 0..=20 {
            let f = i as f32 / 20.0;
            let p = [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])];
            s.add_point_with(hm, p, i as f64 * 0.02, |m, r| undo.touch(m, r));
        }
        s.finish_with(hm, |m, r| undo.touch(m, r));
        undo.commit(hm);
    }

    #[test]
    fn strokes_undo_and_redo_bit_exactly() {
        let mut hm = noise(100, 70, 1);
        let mut undo = UndoStack::new(16, 1 << 24);
        let s0 = bits(&hm);
        stroke(&mut hm, &mut undo, BrushKind::Raise, [10.0, 10.0], [60.0, 40.0], "raise");
        let s1 = bits(&hm);
        stroke(&mut hm, &mut undo, BrushKind::Smooth, [50.0, 5.0], [50.0, 65.0], "smooth");
        let s2 = bits(&hm);
        stroke(&mut hm, &mut undo, BrushKind::Flatten, [5.0, 60.0], [95.0, 60.0], "flatten");
        let s3 = bits(&hm);
        assert!(s0 != s1 && s1 != s2 && s2 != s3);
        assert_eq!(undo.undo_labels().collect::<Vec<_>>(), ["flatten", "smooth", "raise"]);
        let r = undo.undo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s2);
        assert!(r.y0 <= 56 && r.y1 >= 64, "{r:?}");
        undo.undo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s1);
        undo.undo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s0);
        assert!(!undo.can_undo() && undo.undo(&mut hm).is_none());
        assert_eq!(undo.redo_label(), Some("raise"));
        undo.redo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s1);
        undo.redo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s2);
        undo.redo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s3);
        assert!(!undo.can_redo() && undo.redo(&mut hm).is_none());
        // A new edit after an undo clears the redo list.
        undo.undo(&mut hm).unwrap();
        assert!(undo.can_redo());
        stroke(&mut hm, &mut undo, BrushKind::Lower, [30.0, 30.0], [31.0, 31.0], "lower");
        assert!(!undo.can_redo());
        undo.undo(&mut hm).unwrap();
        assert_eq!(bits(&hm), s2);
    }

    #[test]
    fn whole_map_changes_and_mixes() {
        let mut hm = noise(90, 90, 2);
        let mut undo = UndoStack::new(32, 1 << 24);
        let s0 = hm.clone();
        // "Simulate": changes only a corner, so only the tiles there are stored.
        let mut after = hm.clone();
        for y in 70..90 {
            for x in 0..20 {
                after.set(x, y, after.get(x, y) - 1.0);
            }
        }
        assert!(undo.record_whole(&hm, &after, "erode"));
        assert_eq!(undo.last_edit_tiles(), Some(1));
        hm = after;
        let s1 = hm.clone();
        stroke(&mut hm, &mut undo, BrushKind::Raise, [40.0, 40.0], [50.0, 45.0], "raise");
        let s2 = hm.clone();
        // "Generate" a new map of another size: stored whole.
        let big = noise(120, 64, 9);
        assert!(undo.record_whole(&hm, &big, "generate"));
        assert_eq!(undo.last_edit_tiles(), Some(0));
        hm = big.clone();
        stroke(&mut hm, &mut undo, BrushKind::Smooth, [10.0, 10.0], [100.0, 50.0], "smooth");
        let s4 = hm.clone();
        // Identical maps record nothing.
        assert!(!undo.record_whole(&hm, &hm.clone(), "noop"));
        let back = [&big, &s2, &s1, &s0];
        for (i, want) in back.iter().enumerate() {
            let r = undo.undo(&mut hm).unwrap();
            assert_eq!(bits(&hm), bits(want), "undo {i}");
            assert_eq!((hm.width, hm.height, hm.cell_size), (want.width, want.height, want.cell_size));
            if i == 1 {
                assert_eq!(r, DirtyRect::full(&hm), "size change reports the whole map");
            }
        }
        for want in [&s1, &s2, &big, &s4] {
            undo.redo(&mut hm).unwrap();
            assert_eq!(bits(&hm), bits(want));
            assert_eq!((hm.width, hm.height), (want.width, want.height));
        }
        // A cell-size change alone is a whole-map edit too.
        let mut coarse = hm.clone();
        coarse.cell_size = 2.0;
        assert!(undo.record_whole(&hm, &coarse, "rescale"));
        hm = coarse;
        undo.undo(&mut hm).unwrap();
        assert_eq!(hm.cell_size, 1.0);
    }

    #[test]
    fn a_stroke_across_two_tiles_stores_two_tiles() {
        let mut hm = Heightmap::new(128, 128, 1.0).unwrap();
        let mut undo = UndoStack::new(64, 1 << 24);
        // Radius 4 around y = 32, x from 58 to 70: tiles (0,0) and (1,0) only.
        stroke(&mut hm, &mut undo, BrushKind::Raise, [58.0, 32.0], [70.0, 32.0], "across");
        assert_eq!(undo.last_edit_tiles(), Some(2));
        let tile_bytes = 2 * 4 * 64 * 64;
        assert!(
            undo.bytes_used() >= 2 * tile_bytes && undo.bytes_used() < 2 * tile_bytes + 1024,
            "{}",
            undo.bytes_used()
        );
        // Touched but unchanged tiles are not kept; an edit with no change is dropped.
        undo.begin(&hm, "nothing");
        undo.touch(&hm, DirtyRect::new(0, 0, 128, 128));
        assert!(undo.is_open() && undo.can_undo());
        assert!(!undo.commit(&hm));
        assert_eq!(undo.undo_len(), 1);
        assert_eq!(undo.undo_label(), Some("across"));
    }

    #[test]
    fn memory_stays_within_the_budget() {
        let mut hm = noise(256, 256, 3);
        let budget = 200_000; // about six 32×32 tiles' worth of before+after pairs
        let mut undo = UndoStack::new(32, budget);
        let mut rng = SplitMix64::new(5);
        let mut states = vec![bits(&hm)];
        for i in 0..30 {
            let a = [rng.range_f32(0.0, 255.0), rng.range_f32(0.0, 255.0)];
            let b = [a[0] + rng.range_f32(-10.0, 10.0), a[1] + rng.range_f32(-10.0, 10.0)];
            undo.begin(&hm, &format!("s{i}"));
            let mut s = Stroke::new(BrushParams { radius: 3.0, ..Default::default() }).unwrap();
            for k in 0..=10 {
                let f = k as f32 / 10.0;
                s.add_point_with(
                    &mut hm,
                    [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])],
                    k as f64 * 0.03,
                    |m, r| {
                        undo.touch(m, r);
                        assert!(undo.bytes_used() <= budget);
                    },
                );
            }
            s.finish_with(&mut hm, |m, r| undo.touch(m, r));
            undo.commit(&hm);
            assert!(undo.bytes_used() <= budget, "{} > {budget}", undo.bytes_used());
            states.push(bits(&hm));
        }
        let kept = undo.undo_len();
        assert!((2..30).contains(&kept), "kept {kept}");
        // The edits kept are the newest, and undoing them walks back through the newest states.
        for k in 0..kept {
            undo.undo(&mut hm).unwrap();
            assert_eq!(bits(&hm), states[states.len() - 2 - k]);
        }
        assert!(undo.undo(&mut hm).is_none());
        // An edit bigger than the whole budget is not kept, and nothing older survives it.
        let mut tiny = UndoStack::new(64, 10_000);
        let other = noise(256, 256, 4);
        assert!(!tiny.record_whole(&hm, &other, "huge"));
        assert!(!tiny.can_undo() && tiny.bytes_used() == 0);
        // Shrinking the budget trims.
        let n = undo.redo_len();
        undo.set_budget(budget / 4);
        assert!(undo.bytes_used() <= budget / 4 && undo.redo_len() < n);
    }

    #[test]
    fn size_mismatch_and_bad_input_do_not_panic() {
        let mut hm = noise(40, 40, 6);
        let mut undo = UndoStack::new(0, 1 << 20); // tile 0 → 1
        assert_eq!(undo.tile(), 1);
        stroke(&mut hm, &mut undo, BrushKind::Raise, [10.0, 10.0], [12.0, 12.0], "a");
        assert!(undo.can_undo());
        // The map was replaced behind the stack's back: undo refuses and clears.
        let mut other = noise(30, 30, 7);
        let copy = other.clone();
        assert!(undo.undo(&mut other).is_none());
        assert_eq!(other, copy);
        assert!(!undo.can_undo() && !undo.can_redo());
        // touch without begin opens an edit; a size change mid-edit restarts it.
        let mut undo = UndoStack::new(8, 1 << 20);
        undo.touch(&hm, DirtyRect::new(0, 0, 5, 5));
        assert_eq!(undo.undo_label(), Some("edit"));
        let small = noise(10, 10, 8);
        undo.touch(&small, DirtyRect::new(0, 0, 3, 3));
        let mut changed = small.clone();
        changed.set(1, 1, 99.0);
        assert!(undo.commit(&changed));
        let mut m = changed.clone();
        undo.undo(&mut m).unwrap();
        assert_eq!(m, small);
        // Rectangles outside the map, malformed maps and commits without begin are ignored.
        undo.touch(&hm, DirtyRect::new(500, 500, 600, 600));
        let broken = Heightmap { width: 4, height: 4, cell_size: 1.0, data: vec![0.0; 3] };
        undo.touch(&broken, DirtyRect::new(0, 0, 2, 2));
        assert!(!undo.record_whole(&broken, &hm, "x"));
        assert!(!undo.commit(&hm));
        assert!(!undo.commit(&hm));
        // NaN heights round-trip by their bits.
        let mut n = noise(16, 16, 1);
        let mut u = UndoStack::new(8, 1 << 20);
        let before = n.clone();
        n.set(3, 3, f32::from_bits(0x7fc0_1234));
        assert!(u.record_whole(&before, &n, "nan"));
        u.undo(&mut n).unwrap();
        u.redo(&mut n).unwrap();
        assert_eq!(n.get(3, 3).to_bits(), 0x7fc0_1234);
    }
}
