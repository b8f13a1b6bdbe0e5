//! Steered erosion layers in the stack: a layer steered by its own painted mask, and the layer an
//! erosion-brush stroke writes into (see [`super::recipe::SteerSpec`] and
//! [`crate::editor::erosion_brush`]).

use super::recipe::{SteerSource, SteerSpec};
use super::{LayerStack, Recipe, delta_grid};
use crate::core::Heightmap;
use crate::editor::erosion_brush::Dab;

impl LayerStack {
    /// Steers erosion layer `id`'s run by its painted mask (`on`; weight 0 makes sinks with
    /// `sink`) or not. The layer goes stale: it runs again with the new steering.
    pub fn set_steer_by_mask(&mut self, id: u64, on: bool, sink: bool) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        let Some(e) = self.layers[i].erosion_mut() else { return false };
        if e.recipe.steer.as_ref().and_then(SteerSpec::dabs).is_some() {
            return false;
        }
        let steer = on.then_some(SteerSpec { source: SteerSource::LayerMask, sink });
        if e.recipe.steer == steer {
            return false;
        }
        e.recipe.steer = steer;
        e.stale = true;
        e.timeline = None;
        self.touched(Some(i));
        true
    }

    /// Puts an empty erosion-brush layer on top (its input is the current fold); `recipe` without
    /// steering is what each dab runs. Returns its id.
    pub fn push_brush_layer(&mut self, mut recipe: Recipe, current: &Heightmap) -> u64 {
        recipe.steer = Some(SteerSpec { source: SteerSource::Stroke(Vec::new()), sink: false });
        self.push_erosion(recipe, current, current, "Erosion brush")
    }

    /// Adds a dab's `result` (the heights after it) to erosion-brush layer `id`, which must be on
    /// top: its delta becomes `result − input` and the dab joins its recipe.
    pub fn add_dab(&mut self, id: u64, dab: Dab, result: &Heightmap) -> bool {
        let Some(i) = self.index_of(id) else { return false };
        if i + 1 != self.layers.len() {
            return false;
        }
        let input = self.input_of(i);
        if input.data.len() != result.data.len() {
            return false;
        }
        let Some(e) = self.layers[i].erosion_mut() else { return false };
        let Some(SteerSpec { source: SteerSource::Stroke(dabs), .. }) = e.recipe.steer.as_mut() else { return false };
        dabs.push(dab);
        e.delta = delta_grid(&input, result);
        true
    }
}
