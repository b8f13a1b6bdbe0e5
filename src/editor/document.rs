//! The open terrain as a document: the heightmap, its undo history, where it lives on disk and
//! whether it has changes that are not saved.
//!
//! Every change goes through one of these methods so that each user action is exactly one undo
//! step:
//!
//! | action                         | how it is recorded                                          |
//! |--------------------------------|-------------------------------------------------------------|
//! | brush stroke                   | `begin_stroke` → `stroke_to`* → `end_stroke`: tiles touched  |
//! | generate / new / open          | `replace`: whole-map diff (a size change stores both maps)   |
//! | simulation run                 | `apply_result`: tile diff of the map before vs after the run |
//!
//! `unsaved` is tracked with a revision counter: every change (undo and redo included) bumps
//! `revision` and a save records it as `saved_revision`. The rule is "changed since the last
//! save": undoing back to the saved state still counts as a change, which errs on the safe side.
//!
//! Saving is atomic (`io::bhef::save_atomic`: temporary file, fsync, rename); a failed open leaves
//! the current terrain untouched and returns the reader's message.

use std::path::{Path, PathBuf};

use crate::core::Heightmap;
use crate::core::brush::{BrushError, BrushParams, DirtyRect, Stroke};
use crate::core::io::bhef;
use crate::core::undo::UndoStack;

/// Undo tile side (nodes): 64 matches the mesh chunks.
pub const UNDO_TILE: usize = 64;
/// Memory the undo history may use by default (bytes).
pub const UNDO_BUDGET: usize = 512 << 20;

/// The terrain being edited, with its history and file state.
#[derive(Debug)]
pub struct Document {
    map: Heightmap,
    undo: UndoStack,
    stroke: Option<Stroke>,
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

impl Document {
    /// A new, never-saved document holding `map`.
    pub fn new(map: Heightmap) -> Self {
        Self {
            map,
            undo: UndoStack::new(UNDO_TILE, UNDO_BUDGET),
            stroke: None,
            path: None,
            revision: 0,
            saved_revision: 0,
        }
    }

    /// Opens a BHEF file. On error nothing is created and the message says what is wrong.
    pub fn open(path: &Path) -> Result<Self, String> {
        let map = bhef::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut doc = Self::new(map);
        doc.path = Some(path.to_path_buf());
        Ok(doc)
    }

    /// The current heights.
    pub fn map(&self) -> &Heightmap {
        &self.map
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
    pub fn history(&self) -> &UndoStack {
        &self.undo
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

    /// Replaces the whole map (generate, new map, a loaded file merged as an edit) as one undo step.
    pub fn replace(&mut self, map: Heightmap, label: &str) -> Changed {
        self.end_stroke();
        self.undo.record_whole(&self.map, &map, label);
        self.map = map;
        self.bump();
        Changed::Whole
    }

    /// Installs the result of a simulation run that started from the current map, as one undo step.
    /// The size must be unchanged (a job keeps its geometry); otherwise the result is refused.
    pub fn apply_result(&mut self, map: Heightmap, label: &str) -> Result<Changed, String> {
        if map.width != self.map.width || map.height != self.map.height || map.cell_size != self.map.cell_size {
            return Err("the simulation result does not match the terrain's size".into());
        }
        self.end_stroke();
        if map.data == self.map.data {
            return Ok(Changed::None);
        }
        self.undo.record_whole(&self.map, &map, label);
        self.map = map;
        self.bump();
        Ok(Changed::Whole)
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
    /// undo step diffs against the right "before". Sizes must match.
    pub fn restore_base(&mut self, base: &Heightmap) -> bool {
        self.preview(base)
    }

    /// Starts a brush stroke (closing any open one). Invalid parameters are refused.
    pub fn begin_stroke(&mut self, params: BrushParams, label: &str) -> Result<(), BrushError> {
        self.end_stroke();
        let stroke = Stroke::new(params)?;
        self.undo.begin(&self.map, label);
        self.stroke = Some(stroke);
        Ok(())
    }

    /// True while a stroke is open.
    pub fn in_stroke(&self) -> bool {
        self.stroke.is_some()
    }

    /// Feeds a cursor sample (grid units, seconds) to the open stroke.
    pub fn stroke_to(&mut self, pos: [f32; 2], time: f64) -> Changed {
        let Some(stroke) = self.stroke.as_mut() else { return Changed::None };
        let undo = &mut self.undo;
        let r = stroke.add_point_with(&mut self.map, pos, time, |hm, rect| undo.touch(hm, rect));
        if r.is_empty() {
            Changed::None
        } else {
            self.revision += 1;
            Changed::Rect(r)
        }
    }

    /// Closes the open stroke (stamping its remaining brush time) and records it as one undo step.
    pub fn end_stroke(&mut self) -> Changed {
        let Some(mut stroke) = self.stroke.take() else { return Changed::None };
        let undo = &mut self.undo;
        let r = stroke.finish_with(&mut self.map, |hm, rect| undo.touch(hm, rect));
        self.undo.commit(&self.map);
        if r.is_empty() {
            Changed::None
        } else {
            self.bump();
            Changed::Rect(r)
        }
    }

    /// Undoes the last step.
    pub fn undo(&mut self) -> Changed {
        self.end_stroke();
        let (w, h) = (self.map.width, self.map.height);
        match self.undo.undo(&mut self.map) {
            Some(r) => {
                self.bump();
                if self.map.width != w || self.map.height != h { Changed::Whole } else { Changed::Rect(r) }
            }
            None => Changed::None,
        }
    }

    /// Redoes the last undone step.
    pub fn redo(&mut self) -> Changed {
        self.end_stroke();
        let (w, h) = (self.map.width, self.map.height);
        match self.undo.redo(&mut self.map) {
            Some(r) => {
                self.bump();
                if self.map.width != w || self.map.height != h { Changed::Whole } else { Changed::Rect(r) }
            }
            None => Changed::None,
        }
    }

    /// Saves to `path` atomically and makes it the document's file.
    pub fn save_as(&mut self, path: &Path) -> Result<(), String> {
        self.end_stroke();
        bhef::save_atomic(path, &self.map).map_err(|e| format!("saving {}: {e}", path.display()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::BrushKind;
    use crate::core::rng::{hash2, signed_f32};

    fn noisy(w: usize, h: usize) -> Heightmap {
        Heightmap::from_fn(w, h, 2.0, |x, y| 5.0 * signed_f32(hash2(x as i64, y as i64, 9))).unwrap()
    }

    fn bits(hm: &Heightmap) -> Vec<u32> {
        hm.data.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn a_stroke_is_one_undo_step_and_undo_is_bit_exact() {
        let mut doc = Document::new(noisy(200, 150));
        let before = bits(doc.map());
        let params = BrushParams { kind: BrushKind::Raise, radius: 20.0, strength: 3.0, ..Default::default() };
        doc.begin_stroke(params, "Raise").unwrap();
        for i in 0..30 {
            doc.stroke_to([20.0 + 3.0 * i as f32, 40.0 + i as f32], i as f64 * 0.02);
        }
        assert!(matches!(doc.end_stroke(), Changed::Rect(_) | Changed::None));
        let after = bits(doc.map());
        assert_ne!(before, after);
        assert!(doc.is_unsaved());
        assert_eq!(doc.history().undo_len(), 1);
        assert!(matches!(doc.undo(), Changed::Rect(_)));
        assert_eq!(bits(doc.map()), before);
        assert!(matches!(doc.redo(), Changed::Rect(_)));
        assert_eq!(bits(doc.map()), after);
    }

    #[test]
    fn replace_with_a_new_size_undoes_to_the_old_map() {
        let mut doc = Document::new(noisy(65, 65));
        let before = bits(doc.map());
        assert_eq!(doc.replace(noisy(129, 33), "Generate"), Changed::Whole);
        assert_eq!((doc.map().width, doc.map().height), (129, 33));
        assert_eq!(doc.undo(), Changed::Whole);
        assert_eq!(bits(doc.map()), before);
        assert_eq!(doc.map().width, 65);
    }

    #[test]
    fn a_simulation_result_is_one_step_against_its_base() {
        let mut doc = Document::new(noisy(100, 100));
        let base = doc.map().clone();
        let mut step = base.clone();
        step.data[5] += 1.0;
        assert!(doc.preview(&step));
        let mut result = base.clone();
        result.data[5] += 2.0;
        result.data[777] -= 1.0;
        assert!(doc.restore_base(&base));
        assert_eq!(doc.apply_result(result.clone(), "Droplet erosion").unwrap(), Changed::Whole);
        assert_eq!(doc.history().undo_len(), 1);
        doc.undo();
        assert_eq!(bits(doc.map()), bits(&base));
        assert!(doc.apply_result(noisy(10, 10), "x").is_err());
    }

    #[test]
    fn save_open_round_trip_and_unsaved_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bhef");
        let mut doc = Document::new(noisy(33, 17));
        assert!(doc.save().is_err(), "no path yet");
        doc.mark_unsaved();
        assert!(doc.title().starts_with("• untitled"));
        doc.save_as(&path).unwrap();
        assert!(!doc.is_unsaved());
        assert_eq!(doc.title(), "t.bhef — Talus");
        let back = Document::open(&path).unwrap();
        assert_eq!(bits(back.map()), bits(doc.map()));
        std::fs::write(&path, b"BHEF but broken").unwrap();
        let err = Document::open(&path).unwrap_err();
        assert!(err.contains("t.bhef"), "{err}");
    }
}
