//! "Continue from here": a run that goes on from a kept moment of an earlier run, giving exactly
//! what the earlier run would have given had it gone on from there.
//!
//! A model's state between steps is more than its heights (the pipe model's water, sediment and
//! fluxes; the droplets' flow books and their place in the seeded sequence; the ledger), and a
//! frame keeps only heights. Every model is deterministic (same input, parameters and seed give
//! the same bits at any thread count), so the state at frame `k` is rebuilt exactly by running
//! the recipe again from the input up to the `done` of frame `k` ([`Resumed`]); from there the
//! run simply goes on. While it catches up, the job shows frame `k`'s heights, so the view does
//! not jump back to the input.
//!
//! If the earlier run was painted on while it ran, catching up does not reach frame `k`'s
//! heights; the heights are then set to frame `k`'s (booked as an edit, like a stroke on a
//! running job) and the model's other state is the caught-up one.

use crate::core::Heightmap;
use crate::core::erosion::{ErosionMaps, Fields, Ledger, Progress, Simulation};

/// A job that silently runs `inner` up to `from` units, then goes on (see the module doc).
pub struct Resumed {
    inner: Box<dyn Simulation>,
    from: u64,
    shown: Heightmap,
    caught_up: bool,
}

impl Resumed {
    /// Goes on from the moment `inner` (a fresh job of the same recipe on the same input) reaches
    /// `from` units of work, where the earlier run had the heights `at`.
    pub fn new(inner: Box<dyn Simulation>, from: u64, at: Heightmap) -> Self {
        let mut r = Self { inner, from, shown: at, caught_up: false };
        r.check();
        r
    }

    /// True while the job is still catching up with the moment it continues from.
    pub fn catching_up(&self) -> bool {
        !self.caught_up
    }

    fn check(&mut self) {
        if self.caught_up || (self.inner.progress().done < self.from && !self.inner.is_done()) {
            return;
        }
        self.caught_up = true;
        if self.inner.heightmap().data != self.shown.data {
            let at = std::mem::take(&mut self.shown.data);
            self.inner.edit_terrain(&mut |hm: &mut Heightmap| {
                if hm.data.len() == at.len() {
                    hm.data.copy_from_slice(&at);
                }
            });
        }
        self.shown = Heightmap { width: 0, height: 0, cell_size: 1.0, data: Vec::new() };
    }
}

impl Simulation for Resumed {
    fn step(&mut self) {
        self.inner.step();
        self.check();
    }
    fn progress(&self) -> Progress {
        self.inner.progress()
    }
    fn heightmap(&self) -> &Heightmap {
        if self.caught_up { self.inner.heightmap() } else { &self.shown }
    }
    fn ledger(&self) -> Ledger {
        self.inner.ledger()
    }
    fn maps(&self) -> &ErosionMaps {
        self.inner.maps()
    }
    fn fields(&self) -> Fields {
        self.inner.fields()
    }
    fn finish(&mut self) {
        // A cancel while catching up ends at the moment continued from, as it was.
        if self.caught_up {
            self.inner.finish();
        }
    }
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if self.caught_up {
            self.inner.edit_terrain(f);
        } else {
            f(&mut self.shown);
        }
    }
    fn notes(&self) -> Vec<String> {
        self.inner.notes()
    }
}
