//! An erosion layer's timeline in the stack: scrubbing it, keeping a moment, continuing from one
//! ([`crate::editor::timeline`] holds the frames; this is what the stack does with them).
//!
//! | operation | the layer's delta | its recipe's work | its timeline |
//! |---|---|---|---|
//! | [`LayerStack::scrub`] to frame `k` | `h_k − h_0` | `done_k` (a re-run gives `h_k`) | unchanged |
//! | [`LayerStack::keep_frame`] | unchanged | unchanged | frames `0 ..= k` only |
//! | [`LayerStack::continue_job`] then [`LayerStack::set_continued`] | `result − h_0` | the work the continuation reached | frames `0 ..= k`, then the continuation's |
//!
//! A layer whose input has changed since its run (stale) cannot scrub: its frames are of the
//! old input. The stack's timelines together hold at most [`TIMELINES_BUDGET`]; the oldest go
//! first ([`LayerStack::cap_timelines`]).

use std::sync::Arc;

use super::{LayerStack, Recipe, delta_grid, hash_heights};
use crate::core::erosion::MapSize;

/// Most bytes the timelines of one stack hold together (512 MiB): when a run adds its timeline
/// and the sum is over, the oldest layers' timelines go (bottom of the stack first), never the
/// newest run's. Undo snapshots count the timelines they alone hold in the history's budget.
pub const TIMELINES_BUDGET: usize = 512 << 20;
use crate::core::Heightmap;
use crate::editor::timeline::Timeline;

/// What "Continue from here" runs: the layer's recipe for the whole run from its input, caught up
/// to frame `k` ([`crate::editor::timeline::resume::Resumed`]), recording after frame `k`.
#[derive(Clone, Debug)]
pub struct ContinueJob {
    /// The erosion layer.
    pub id: u64,
    /// The layer's recipe asking for the run's whole work.
    pub recipe: Recipe,
    /// The run's input (frame 0).
    pub input: Heightmap,
    /// [`hash_heights`] of `input`.
    pub input_hash: u64,
    /// Work done at the frame continued from.
    pub from: u64,
    /// Heights at the frame continued from.
    pub at: Heightmap,
    /// The frames up to the one continued from, to record the continuation into.
    pub timeline: Timeline,
}

impl LayerStack {
    /// The scrubbable timeline of erosion layer `id` and the frame it shows, if it has one that
    /// matches its input (`None` for a stale layer).
    pub fn timeline_of(&self, id: u64) -> Option<(&Arc<Timeline>, usize)> {
        let e = self.layer(id)?.erosion()?;
        if e.stale {
            return None;
        }
        e.timeline.as_ref().map(|t| (t, e.frame))
    }

    /// Shows frame `frame` of layer `id`'s timeline as its result: the delta and the recipe's work
    /// become that moment's. `false` when there is nothing to scrub or the frame is already shown.
    pub fn scrub(&mut self, id: u64, frame: usize) -> bool {
        let Some((t, shown)) = self.timeline_of(id) else { return false };
        let frame = frame.min(t.len() - 1);
        if frame == shown {
            return false;
        }
        let t = t.clone();
        let delta = delta_grid(&t.heights(0), &t.heights(frame));
        let Some(i) = self.index_of(id) else { return false };
        if let Some(e) = self.layers[i].erosion_mut() {
            e.delta = delta;
            e.frame = frame;
            e.recipe.model.set_work(t.frames()[frame].done, t.map_size());
        }
        self.touched(Some(i));
        true
    }

    /// Keeps layer `id`'s timeline up to the frame it shows (the frames after it are dropped).
    pub fn keep_frame(&mut self, id: u64) -> bool {
        let Some((t, frame)) = self.timeline_of(id) else { return false };
        if frame + 1 == t.len() {
            return false;
        }
        let mut kept = t.truncated(frame);
        kept.seal();
        if let Some(e) = self.layer_mut(id).and_then(|l| l.erosion_mut()) {
            e.timeline = Some(Arc::new(kept));
        }
        true
    }

    /// What "Continue from here" runs for layer `id`, from the frame it shows.
    pub fn continue_job(&self, id: u64) -> Option<ContinueJob> {
        let (t, frame) = self.timeline_of(id)?;
        let e = self.layer(id)?.erosion()?;
        let input = t.heights(0);
        let mut recipe = e.recipe.clone();
        recipe.model.set_work(t.total().max(t.frames()[frame].done), t.map_size());
        Some(ContinueJob {
            id,
            recipe,
            input_hash: hash_heights(&input.data),
            input,
            from: t.frames()[frame].done,
            at: t.heights(frame),
            timeline: t.truncated(frame),
        })
    }

    /// Installs a continuation's `result` (after `done` units of work) and its timeline for
    /// layer `job.id`. Refused (`false`) when the layer is gone or its input has changed since.
    pub fn set_continued(&mut self, job: &ContinueJob, result: &Heightmap, done: u64, mut timeline: Timeline) -> bool {
        let Some(i) = self.index_of(job.id) else { return false };
        if self.layers[i].erosion().is_none() || hash_heights(&self.input_of(i).data) != job.input_hash {
            return false;
        }
        timeline.seal();
        let delta = delta_grid(&job.input, result);
        if let Some(e) = self.layers[i].erosion_mut() {
            e.delta = delta;
            e.recipe = job.recipe.clone();
            e.recipe.model.set_work(done, MapSize::of(result));
            e.frame = timeline.len() - 1;
            e.timeline = Some(Arc::new(timeline));
            e.stale = false;
        }
        self.touched(Some(i));
        self.cap_timelines(job.id, TIMELINES_BUDGET);
        true
    }

    /// Drops the oldest timelines (bottom first, never layer `keep`'s) until the stack's
    /// timelines hold at most `budget` bytes ([`TIMELINES_BUDGET`] in the editor); the layers
    /// keep their results.
    pub fn cap_timelines(&mut self, keep: u64, budget: usize) {
        let mut total: usize = self.layers.iter().filter_map(|l| l.erosion()).map(|e| e.timeline_bytes()).sum();
        for l in &mut self.layers {
            if total <= budget {
                break;
            }
            if l.id == keep {
                continue;
            }
            if let Some(e) = l.erosion_mut()
                && let Some(t) = e.timeline.take()
            {
                total -= t.bytes();
                e.frame = 0;
            }
        }
    }

    /// Gives the newest erosion layer `id` the timeline its run recorded (showing its last frame).
    pub fn set_timeline(&mut self, id: u64, mut timeline: Timeline) {
        timeline.seal();
        if let Some(e) = self.layer_mut(id).and_then(|l| l.erosion_mut()) {
            e.frame = timeline.len() - 1;
            e.timeline = Some(Arc::new(timeline));
        }
        self.cap_timelines(id, TIMELINES_BUDGET);
    }
}
