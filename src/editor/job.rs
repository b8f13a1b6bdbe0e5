//! A simulation running in the background: the loop a worker thread runs, and what it shares
//! with the window.
//!
//! The window builds a [`Simulation`] (see `core::erosion::build`), wraps a [`JobShared`] in an
//! `Arc`, and runs [`run_job`] on a worker (the editor uses Bevy's `AsyncComputeTaskPool`). Each
//! frame it calls [`JobShared::take_update`] and shows whatever is new. The worker:
//!
//! 1. applies the brush edits queued with [`JobShared::edit`] (painting while a simulation runs is
//!    applied to the running job through [`Simulation::edit_terrain`], so the books stay closed and
//!    nothing is lost);
//! 2. stops between steps when the cancel flag is set ([`Simulation::finish`] runs, so the terrain
//!    is final-consistent), idles while paused;
//! 3. advances one indivisible step;
//! 4. publishes a [`JobUpdate`] (heights, ledger, progress, steps per second, the run's notes
//!    and, when asked, the water/sediment/flow fields) at most every `interval`, and always after
//!    edits and at the end, where the update carries how the run ended.
//!
//! The notes ([`Simulation::notes`], e.g. a GPU that failed mid-run and the CPU that took over)
//! are the run's whole list in every update, so an update the window skips loses none; the
//! window shows the ones it has not shown yet in its status line.
//!
//! Only the newest update is kept: a slow window skips intermediate ones instead of queueing them.
//!
//! With [`JobShared::record`] the worker also offers the heights of every update it publishes to
//! a [`Timeline`] (the run's scrubbable history), and the run's end state as its last frame; the
//! window takes it with [`JobShared::take_timeline`] once the run has ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::core::Heightmap;
use crate::core::brush::{BrushParams, Stroke};
use crate::core::erosion::{ErosionMaps, Fields, Ledger, Progress, Simulation};
use crate::editor::timeline::Timeline;

/// Default time between published updates.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobEnd {
    /// Every requested step ran.
    Finished,
    /// Stopped on request between two steps; the terrain is consistent.
    Cancelled,
}

/// A brush edit for a running job, in the order the window produced them.
#[derive(Clone, Debug)]
pub enum JobEdit {
    /// A stroke starts with these parameters.
    Begin(BrushParams),
    /// A cursor sample (grid units, seconds).
    Point([f32; 2], f64),
    /// The stroke ends.
    End,
}

/// What the worker publishes.
#[derive(Clone, Debug)]
pub struct JobUpdate {
    /// Heights at the time of the update.
    pub heights: Heightmap,
    /// Model fields, when [`JobShared::want_fields`] was set.
    pub fields: Option<Fields>,
    /// Per-node erosion/deposition totals so far, when [`JobShared::want_fields`] was set.
    pub maps: Option<ErosionMaps>,
    /// Books so far.
    pub ledger: Ledger,
    /// Work done / total.
    pub progress: Progress,
    /// Work per second over the last half second or so, in the model's progress unit (droplets,
    /// time steps, iterations), whatever a [`Simulation::step`] call batches.
    pub steps_per_s: f64,
    /// Everything the run has had to say so far, oldest first ([`Simulation::notes`]).
    pub notes: Vec<String>,
    /// Set on the last update of the run.
    pub end: Option<JobEnd>,
}

/// State shared between the window and the worker.
#[derive(Debug)]
pub struct JobShared {
    cancel: AtomicBool,
    pause: AtomicBool,
    want_fields: AtomicBool,
    edits: Mutex<Vec<JobEdit>>,
    latest: Mutex<Option<JobUpdate>>,
    timeline: Mutex<Option<Timeline>>,
    interval: Duration,
}

impl Default for JobShared {
    fn default() -> Self {
        Self::new(UPDATE_INTERVAL)
    }
}

impl JobShared {
    /// Shared state publishing at most every `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            cancel: AtomicBool::new(false),
            pause: AtomicBool::new(false),
            want_fields: AtomicBool::new(false),
            edits: Mutex::new(Vec::new()),
            latest: Mutex::new(None),
            timeline: Mutex::new(None),
            interval,
        }
    }
    /// Asks the worker to stop after the current step.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
    /// Pauses or resumes.
    pub fn set_paused(&self, paused: bool) {
        self.pause.store(paused, Ordering::Relaxed);
    }
    /// True while paused.
    pub fn is_paused(&self) -> bool {
        self.pause.load(Ordering::Relaxed)
    }
    /// Whether updates carry the model's fields (water, sediment, flow).
    pub fn set_want_fields(&self, on: bool) {
        self.want_fields.store(on, Ordering::Relaxed);
    }
    /// Queues a brush edit for the running job.
    pub fn edit(&self, e: JobEdit) {
        self.edits.lock().unwrap_or_else(PoisonError::into_inner).push(e);
    }
    /// Takes the newest update, if one arrived since the last call.
    pub fn take_update(&self) -> Option<JobUpdate> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Keeps the run's history in `timeline` (frame 0 its input): every update the worker
    /// publishes is offered to it. Call before the worker starts.
    pub fn record(&self, timeline: Timeline) {
        *self.timeline.lock().unwrap_or_else(PoisonError::into_inner) = Some(timeline);
    }

    /// The recorded timeline, once the run has ended (its last frame is the run's end state).
    pub fn take_timeline(&self) -> Option<Timeline> {
        self.timeline.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn offer(&self, sim: &dyn Simulation, last: bool) {
        if let Some(t) = self.timeline.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
            t.offer(sim.heightmap(), sim.progress().done, sim.ledger(), last);
            if last {
                t.seal();
            }
        }
    }

    fn publish(&self, sim: &dyn Simulation, steps_per_s: f64, end: Option<JobEnd>) {
        let want = self.want_fields.load(Ordering::Relaxed);
        let fields = want.then(|| sim.fields());
        let maps = want.then(|| sim.maps().clone());
        let u = JobUpdate {
            heights: sim.heightmap().clone(),
            fields,
            maps,
            ledger: sim.ledger(),
            progress: sim.progress(),
            steps_per_s,
            notes: sim.notes(),
            end,
        };
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = Some(u);
    }

    /// Applies queued edits; true when any was applied.
    fn apply_edits(&self, sim: &mut dyn Simulation, stroke: &mut Option<Stroke>) -> bool {
        let edits = std::mem::take(&mut *self.edits.lock().unwrap_or_else(PoisonError::into_inner));
        if edits.is_empty() {
            return false;
        }
        sim.edit_terrain(&mut |hm: &mut Heightmap| {
            for e in &edits {
                match e {
                    JobEdit::Begin(p) => *stroke = Stroke::new(p.clone()).ok(),
                    JobEdit::Point(pos, t) => {
                        if let Some(s) = stroke.as_mut() {
                            s.add_point(hm, *pos, *t);
                        }
                    }
                    JobEdit::End => {
                        if let Some(mut s) = stroke.take() {
                            s.finish(hm);
                        }
                    }
                }
            }
        });
        true
    }
}

/// Worker threads a simulation gets so the window keeps a core: all cores but one (at least one).
/// Results do not depend on it (every model is bit-identical at any thread count).
pub fn simulation_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get().saturating_sub(1).max(1)).unwrap_or(1)
}

/// [`run_job`] on a thread pool of its own with `threads` workers, so a simulation does not take
/// the cores the window renders with. Falls back to the global pool if the pool cannot be built.
pub fn run_job_on(sim: Box<dyn Simulation>, shared: Arc<JobShared>, threads: usize) -> (Box<dyn Simulation>, JobEnd) {
    match rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).thread_name(|i| format!("simulation-{i}")).build()
    {
        Ok(pool) => pool.install(|| run_job(sim, shared)),
        Err(_) => run_job(sim, shared),
    }
}

/// Runs `sim` to its end or until cancelled, publishing updates through `shared`. Returns the
/// simulation (its final state) and how it ended.
pub fn run_job(mut sim: Box<dyn Simulation>, shared: Arc<JobShared>) -> (Box<dyn Simulation>, JobEnd) {
    let mut stroke: Option<Stroke> = None;
    let mut last_publish = Instant::now();
    let mut window = (Instant::now(), 0u64);
    let mut rate = 0.0;
    shared.publish(&*sim, 0.0, None);
    let end = loop {
        let edited = shared.apply_edits(&mut *sim, &mut stroke);
        if shared.cancel.load(Ordering::Relaxed) {
            sim.finish();
            break JobEnd::Cancelled;
        }
        if sim.is_done() {
            sim.finish();
            break JobEnd::Finished;
        }
        if shared.is_paused() {
            if edited {
                shared.publish(&*sim, 0.0, None);
            }
            std::thread::sleep(Duration::from_millis(5));
            window = (Instant::now(), 0);
            continue;
        }
        // Count the model's own work units (a GPU job's step runs a batch of time steps).
        let before = sim.progress().done;
        sim.step();
        window.1 += sim.progress().done.saturating_sub(before);
        let span = window.0.elapsed();
        if span >= Duration::from_millis(500) {
            rate = window.1 as f64 / span.as_secs_f64();
            window = (Instant::now(), 0);
        } else if rate == 0.0 && span > Duration::ZERO {
            rate = window.1 as f64 / span.as_secs_f64();
        }
        if edited || last_publish.elapsed() >= shared.interval {
            shared.publish(&*sim, rate, None);
            shared.offer(&*sim, false);
            last_publish = Instant::now();
        }
    };
    shared.offer(&*sim, true);
    shared.publish(&*sim, rate, Some(end.clone()));
    (sim, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::BrushKind;
    use crate::core::erosion::thermal::ThermalParams;
    use crate::core::erosion::{JobInputs, ModelParams, build};
    use crate::core::rng::{hash2, signed_f32};

    fn rough(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| 30.0 * signed_f32(hash2(x as i64, y as i64, 4))).unwrap()
    }

    fn thermal(steps: u32) -> Box<dyn Simulation> {
        let p = ThermalParams { iterations: steps, ..Default::default() };
        build(rough(64), &ModelParams::Thermal(p), JobInputs::default()).unwrap()
    }

    #[test]
    fn a_finished_job_matches_running_it_directly() {
        let shared = Arc::new(JobShared::new(Duration::ZERO));
        let (sim, end) = run_job(thermal(20), shared.clone());
        assert_eq!(end, JobEnd::Finished);
        let mut direct = thermal(20);
        crate::core::erosion::run(&mut *direct, &AtomicBool::new(false), |_| {});
        assert_eq!(sim.heightmap().data, direct.heightmap().data);
        let last = shared.take_update().unwrap();
        assert_eq!(last.end, Some(JobEnd::Finished));
        assert_eq!(last.heights.data, direct.heightmap().data);
        assert!(shared.take_update().is_none(), "an update is handed out once");
    }

    #[test]
    fn a_private_pool_gives_the_same_bits() {
        let (a, _) = run_job_on(thermal(15), Arc::new(JobShared::new(Duration::ZERO)), 1);
        let (b, _) = run_job_on(thermal(15), Arc::new(JobShared::new(Duration::ZERO)), 3);
        assert_eq!(a.heightmap().data, b.heightmap().data);
        assert!(simulation_threads() >= 1);
    }

    #[test]
    fn cancel_stops_before_the_end_with_a_consistent_map() {
        let shared = Arc::new(JobShared::new(Duration::ZERO));
        shared.cancel();
        let (sim, end) = run_job(thermal(1000), shared.clone());
        assert_eq!(end, JobEnd::Cancelled);
        assert!(sim.progress().done < 1000);
        assert!(sim.heightmap().all_finite());
        assert!(sim.ledger().closes(1e-4));
    }

    #[test]
    fn edits_reach_the_running_job_and_keep_the_books() {
        let shared = Arc::new(JobShared::new(Duration::ZERO));
        let p = BrushParams { kind: BrushKind::Raise, radius: 8.0, strength: 50.0, ..Default::default() };
        shared.edit(JobEdit::Begin(p));
        shared.edit(JobEdit::Point([20.0, 20.0], 0.0));
        shared.edit(JobEdit::Point([40.0, 30.0], 0.5));
        shared.edit(JobEdit::End);
        let (sim, _) = run_job(thermal(5), shared);
        let (plain, _) = run_job(thermal(5), Arc::new(JobShared::new(Duration::ZERO)));
        let raised = sim.heightmap().sum() - plain.heightmap().sum();
        assert!(raised > 100.0, "the stroke raised the terrain by {raised}");
        assert!(sim.ledger().closes(1e-4));
    }

    /// A job that says something after its second step (as a GPU job does when it falls back).
    struct Talkative {
        inner: Box<dyn Simulation>,
    }

    impl Simulation for Talkative {
        fn step(&mut self) {
            self.inner.step()
        }
        fn progress(&self) -> crate::core::erosion::Progress {
            self.inner.progress()
        }
        fn heightmap(&self) -> &Heightmap {
            self.inner.heightmap()
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
        fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
            self.inner.edit_terrain(f)
        }
        fn notes(&self) -> Vec<String> {
            if self.inner.progress().done >= 2 { vec!["went on on the CPU".into()] } else { Vec::new() }
        }
    }

    #[test]
    fn notes_reach_the_window_in_the_updates() {
        let shared = Arc::new(JobShared::new(Duration::from_secs(3600)));
        let (_, end) = run_job(Box::new(Talkative { inner: thermal(5) }), shared.clone());
        assert_eq!(end, JobEnd::Finished);
        // Only the last update is kept (the interval is long): it still carries the note.
        let last = shared.take_update().unwrap();
        assert_eq!(last.notes, vec!["went on on the CPU".to_string()]);
        let quiet = Arc::new(JobShared::new(Duration::ZERO));
        run_job(thermal(3), quiet.clone());
        assert!(quiet.take_update().unwrap().notes.is_empty());
    }

    #[test]
    fn pause_holds_the_job_until_resumed() {
        let shared = Arc::new(JobShared::new(Duration::ZERO));
        shared.set_paused(true);
        let worker = {
            let shared = shared.clone();
            std::thread::spawn(move || run_job(thermal(10), shared))
        };
        std::thread::sleep(Duration::from_millis(100));
        let u = shared.take_update().expect("the first update is published at once");
        assert_eq!(u.progress.done, 0, "no step ran while paused");
        shared.set_paused(false);
        let (sim, end) = worker.join().unwrap();
        assert_eq!(end, JobEnd::Finished);
        assert_eq!(sim.progress().done, 10);
    }
}
