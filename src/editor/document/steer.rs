//! The document's side of steered runs: steering a layer by its painted mask (one undo step) and
//! erosion-brush strokes (one undo step a stroke, however many dabs).

use super::{Changed, Document, LayerOp};
use crate::core::Heightmap;
use crate::editor::erosion_brush::Dab;
use crate::editor::layers::Recipe;

impl Document {
    /// Steers erosion layer `id` by its painted mask or not (one undo step; the layer re-runs).
    pub fn set_steer_by_mask(&mut self, id: u64, on: bool, sink: bool) -> Changed {
        self.end_stroke();
        let before = self.stack.clone();
        if !self.stack.set_steer_by_mask(id, on, sink) {
            return Changed::None;
        }
        let after = std::mem::replace(&mut self.stack, before);
        self.record(if on { "Steer by mask" } else { "Stop steering by mask" }, None);
        self.stack = after;
        // The mask no longer blends (or blends again): the fold changes at once.
        self.changed_whole()
    }

    /// Starts an erosion-brush stroke with `recipe` (the panel's model, edges, seed …): a new
    /// erosion layer on top, empty until its first dab (one undo step for the whole stroke).
    /// Returns the layer's id.
    pub fn begin_erosion_brush(&mut self, recipe: Recipe) -> u64 {
        // An open height stroke ends first (its own undo step); the map is already up to date.
        self.end_stroke();
        self.record("Erosion brush", None);
        let current = self.map.clone();
        let id = self.stack.push_brush_layer(recipe, &current);
        self.history.account(&self.stack);
        self.bump();
        id
    }

    /// Adds a dab's result to erosion-brush layer `id` (part of the stroke's undo step). `None`
    /// when refused: the layer is gone or no longer on top.
    pub fn add_dab(&mut self, id: u64, dab: Dab, result: &Heightmap) -> Option<Changed> {
        if self.stroke.is_some() || !self.stack.add_dab(id, dab, result) {
            return None;
        }
        Some(self.changed_whole())
    }

    /// Applies [`LayerOp::SteerByMask`].
    pub(super) fn steer_op(&mut self, op: &LayerOp) -> Changed {
        match op {
            LayerOp::SteerByMask { id, on, sink } => self.set_steer_by_mask(*id, *on, *sink),
            _ => Changed::None,
        }
    }
}
