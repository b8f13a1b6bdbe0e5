//! The document's side of an erosion layer's timeline: scrubbing and keeping are undo steps (a
//! scrub drag merges into one), and a continuation is one undo step when it ends, like a
//! Simulate run. See [`crate::editor::layers::timeline`] for what each does to the layer.

use super::{Changed, Document};
use crate::core::Heightmap;
use crate::editor::layers::timeline::ContinueJob;
use crate::editor::timeline::Timeline;

impl Document {
    /// Shows frame `frame` of erosion layer `id`'s timeline (a drag of the slider is one undo
    /// step).
    pub fn scrub(&mut self, id: u64, frame: usize) -> Changed {
        let Some((t, shown)) = self.stack.timeline_of(id) else { return Changed::None };
        if frame.min(t.len() - 1) == shown {
            return Changed::None;
        }
        self.end_stroke();
        self.record("Scrub timeline", Some((id, "scrub")));
        self.stack.scrub(id, frame);
        self.changed_whole()
    }

    /// "Keep from here": drops the frames after the one layer `id` shows (one undo step).
    pub fn keep_frame(&mut self, id: u64) -> Changed {
        let Some((t, frame)) = self.stack.timeline_of(id) else { return Changed::None };
        if frame + 1 == t.len() {
            return Changed::None;
        }
        self.end_stroke();
        self.record("Keep from here", None);
        self.stack.keep_frame(id);
        self.history.account(&self.stack);
        self.bump();
        Changed::None
    }

    /// What "Continue from here" runs for erosion layer `id` (see [`ContinueJob`]).
    pub fn continue_job(&self, id: u64) -> Option<ContinueJob> {
        self.stack.continue_job(id)
    }

    /// Installs a continuation that ended after `done` units with `result` and the `timeline` it
    /// recorded (one undo step, `label`). `None` when refused: a stroke is open, or the layer or
    /// its input has changed since the continuation started.
    pub fn apply_continued(
        &mut self,
        job: &ContinueJob,
        result: &Heightmap,
        done: u64,
        timeline: Timeline,
        label: &str,
    ) -> Option<Changed> {
        if self.stroke.is_some() || result.data.len() != self.map.data.len() {
            return None;
        }
        let before = self.stack.clone();
        if !self.stack.set_continued(job, result, done, timeline) {
            return None;
        }
        let after = std::mem::replace(&mut self.stack, before);
        self.record(label, None);
        self.stack = after;
        Some(self.changed_whole())
    }
}
