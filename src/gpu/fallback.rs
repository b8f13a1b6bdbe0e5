//! The one GPU → CPU fallback every GPU model runs under (issue #14 item 4).
//!
//! A GPU job can fail *after* it was built: the device is lost (a driver reset, a laptop
//! switching GPUs), a submission or a readback fails. Such a job must neither take its caller
//! down nor end silently, so every GPU model is a [`GpuJob`] (the GPU part, which stops at its
//! first failure and can hand over its last good state) run inside a [`ResilientGpuJob`], which:
//!
//! 1. **when**: checks the GPU part for a fault after every call that can meet one (a
//!    [`Simulation::step`], a [`Simulation::edit_terrain`], a test's
//!    [`ResilientGpuJob::simulate_fault`]);
//! 2. **from where**: takes the GPU part's [`Handover`]: the last state it could read back, the
//!    work done at that state, its books, its erosion maps and flow fields;
//! 3. **continues**: builds the model's CPU version ([`erosion::build`]) on that state for the
//!    work left ([`ModelParams::set_work`]), with whatever the model changes for a continuation
//!    ([`GpuJob::adjust_continuation`]: droplets keep their erosion floor and mix the progress
//!    into the seed);
//! 4. **keeps the books**: reports the two parts as one run. Progress counts the GPU part's work
//!    first; the ledger adds the parts ([`continued_books`]: material the GPU part still carried is
//!    dropped, booked as negative `clamped`, since the CPU part starts without it, so the
//!    identities still close); erosion maps and flow fields are the sums of both parts; water,
//!    velocity and sediment are the CPU part's (they start afresh).
//!
//! If nothing could be read back or the CPU refuses the state, the job ends where the GPU part
//! stopped (it reports itself done) instead of looping.
//!
//! ## Notes
//! What the user should hear about (a readback that failed, the switch to the CPU, worded as
//! `"device lost: …; continuing on the CPU from step 120"`) travels as a value:
//! [`Simulation::notes`], the run's notes so far, oldest first. Library code prints nothing.
//! The CLI prints each note once, as `talus: <note>` on stderr; the editor's worker copies them
//! into every [`crate::editor::job::JobUpdate`] and the window shows the newest in its status
//! line.

use crate::core::erosion::{self, ErosionMaps, Fields, JobInputs, Ledger, ModelParams, Progress, Simulation};
use crate::core::heightmap::Heightmap;

use super::context::GpuError;

/// The GPU part of a GPU model: a [`Simulation`] that stops at its first failure (it then does
/// no more work and reports itself done) and hands over its last good state.
pub trait GpuJob: Simulation {
    /// The failure that stopped the job, if any.
    fn fault(&self) -> Option<&GpuError>;
    /// Stops the job as a lost device would (tests of the fallback, and [`ResilientGpuJob`]'s
    /// `simulate_fault`).
    fn inject_fault(&mut self, err: GpuError);
    /// The last state read back, after a fault; called once. Releases the GPU resources.
    fn hand_over(&mut self) -> Handover;
    /// The note saying the run goes on on the CPU after `err` from work unit `done`.
    fn continuation_note(&self, err: &GpuError, done: u64) -> String {
        format!("{err}; continuing on the CPU from step {done}")
    }
    /// Changes, besides the work left, to the parameters and inputs of the CPU continuation that
    /// starts after `done` units of work. Default: none.
    fn adjust_continuation(&self, _params: &mut ModelParams, _inputs: &mut JobInputs, _done: u64) {}
}

/// What a failed [`GpuJob`] leaves for its CPU continuation.
#[derive(Clone, Debug)]
pub struct Handover {
    /// The last heights read back; empty when none could be (then the run ends there).
    pub heightmap: Heightmap,
    /// Work done at that state.
    pub done: u64,
    /// The GPU part's books; `volume_after` is Σ of `heightmap`.
    pub ledger: Ledger,
    /// The GPU part's per-node erosion/deposition totals (empty when unknown).
    pub maps: ErosionMaps,
    /// The GPU part's accumulated flow fields, if it has them: particles that crossed each node
    /// ([`Fields::flow`]), added to the CPU's as the run goes on.
    pub flow: Option<Vec<f32>>,
    /// Water volume the GPU part's particles carried across each node ([`Fields::flow_volume`]),
    /// added to the CPU's likewise.
    pub flow_volume: Option<Vec<f32>>,
}

/// The CPU job a failed GPU job continues as, with what the GPU part left.
struct Continued {
    sim: Box<dyn Simulation>,
    base: Handover,
    merged_maps: std::sync::OnceLock<ErosionMaps>,
}

/// A [`GpuJob`] that, if the GPU fails mid-run, carries on with the CPU model from the last state
/// it read back (see the module doc). Every GPU model on the GPU backend runs in one.
pub struct ResilientGpuJob<J: GpuJob> {
    gpu: J,
    cpu: Option<Continued>,
    /// What the job was built from, for the CPU continuation.
    params: ModelParams,
    inputs: JobInputs,
    /// Set once the GPU part has handed over (whether or not a CPU continuation could start).
    handed_over: bool,
    /// The wrapper's own notes (the switch); the parts' notes are asked for when needed.
    notes: Vec<String>,
}

/// The books of a run whose first part (`gpu`) ran on the GPU and the rest (`cpu`) on the CPU
/// from the state the first part ended at. What the GPU part still carried (`suspended`) is lost
/// with it and booked as negative `clamped`; the CPU part's `volume_before` is the GPU part's
/// `volume_after` plus any edit since, which moves the whole run's `volume_before` alike.
pub fn continued_books(gpu: &Ledger, cpu: &Ledger) -> Ledger {
    Ledger {
        eroded: gpu.eroded + cpu.eroded,
        deposited: gpu.deposited + cpu.deposited,
        lost_at_border: gpu.lost_at_border + cpu.lost_at_border,
        clamped: gpu.clamped - gpu.suspended + cpu.clamped,
        uplift: gpu.uplift + cpu.uplift,
        suspended: cpu.suspended,
        volume_before: gpu.volume_before + (cpu.volume_before - gpu.volume_after),
        volume_after: cpu.volume_after,
    }
}

impl<J: GpuJob> ResilientGpuJob<J> {
    /// Wraps `gpu`; `params`/`inputs` are what it was built from (the CPU continuation is built
    /// from them).
    pub fn wrap(gpu: J, params: ModelParams, inputs: JobInputs) -> Self {
        Self { gpu, cpu: None, params, inputs, handed_over: false, notes: Vec::new() }
    }

    /// The GPU part.
    pub fn gpu(&self) -> &J {
        &self.gpu
    }

    /// True once the job has moved to the CPU.
    pub fn on_cpu(&self) -> bool {
        self.cpu.is_some()
    }

    /// The GPU failure that made the job leave the GPU, if one did.
    pub fn fault(&self) -> Option<&GpuError> {
        self.gpu.fault()
    }

    /// Makes the job leave the GPU as if `err` had happened (for tests of the fallback).
    #[doc(hidden)]
    pub fn simulate_fault(&mut self, err: GpuError) {
        if self.cpu.is_none() && self.gpu.fault().is_none() {
            self.gpu.inject_fault(err);
            self.switch();
        }
    }

    /// [`Self::simulate_fault`] with a lost device.
    #[cfg(test)]
    pub(crate) fn inject_fault(&mut self) {
        self.simulate_fault(GpuError::DeviceLost("injected by a test".into()));
    }

    /// Moves to the CPU if the GPU part has failed (once).
    fn switch(&mut self) {
        if self.handed_over {
            return;
        }
        let Some(err) = self.gpu.fault().cloned() else { return };
        self.handed_over = true;
        let total = self.gpu.progress().total;
        let base = self.gpu.hand_over();
        self.notes.push(self.gpu.continuation_note(&err, base.done));
        if base.heightmap.data.is_empty() {
            return;
        }
        let mut params = self.params.clone();
        let mut inputs = self.inputs.clone();
        params.set_work(total.saturating_sub(base.done), erosion::MapSize::of(&base.heightmap));
        self.gpu.adjust_continuation(&mut params, &mut inputs, base.done);
        // An error cannot happen (the parameters were checked when the job was built); if it
        // did, the job ends where the GPU part stopped rather than loop.
        if let Ok(sim) = erosion::build(base.heightmap.clone(), &params, inputs) {
            self.cpu = Some(Continued { sim, base, merged_maps: Default::default() });
        }
    }
}

/// Adds two per-node fields (`None` when the CPU part has none; the CPU part's alone when the GPU
/// part's is missing or of another size).
fn add_fields(base: Option<&Vec<f32>>, cpu: Option<Vec<f32>>) -> Option<Vec<f32>> {
    let c = cpu?;
    match base {
        Some(b) if b.len() == c.len() => Some(b.iter().zip(&c).map(|(x, y)| x + y).collect()),
        _ => Some(c),
    }
}

impl<J: GpuJob> Simulation for ResilientGpuJob<J> {
    fn step(&mut self) {
        match &mut self.cpu {
            Some(c) => c.sim.step(),
            None => {
                self.gpu.step();
                self.switch();
            }
        }
        if let Some(c) = &mut self.cpu {
            c.merged_maps = Default::default();
        }
    }
    fn progress(&self) -> Progress {
        match &self.cpu {
            Some(c) => {
                let p = c.sim.progress();
                Progress { done: c.base.done + p.done, total: c.base.done + p.total }
            }
            None => self.gpu.progress(),
        }
    }
    fn is_done(&self) -> bool {
        match &self.cpu {
            Some(c) => c.sim.is_done(),
            None => self.gpu.is_done() || self.gpu.fault().is_some(),
        }
    }
    fn heightmap(&self) -> &Heightmap {
        match &self.cpu {
            Some(c) => c.sim.heightmap(),
            None => self.gpu.heightmap(),
        }
    }
    fn ledger(&self) -> Ledger {
        match &self.cpu {
            Some(c) => continued_books(&c.base.ledger, &c.sim.ledger()),
            None => self.gpu.ledger(),
        }
    }
    fn maps(&self) -> &ErosionMaps {
        match &self.cpu {
            Some(c) => c.merged_maps.get_or_init(|| {
                let m = c.sim.maps();
                let b = &c.base.maps;
                if b.eroded.len() != m.eroded.len() || b.deposited.len() != m.deposited.len() {
                    return m.clone();
                }
                let add = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x + y).collect();
                ErosionMaps { eroded: add(&b.eroded, &m.eroded), deposited: add(&b.deposited, &m.deposited) }
            }),
            None => self.gpu.maps(),
        }
    }
    fn fields(&self) -> Fields {
        match &self.cpu {
            Some(c) => {
                let f = c.sim.fields();
                Fields {
                    flow: add_fields(c.base.flow.as_ref(), f.flow),
                    flow_volume: add_fields(c.base.flow_volume.as_ref(), f.flow_volume),
                    ..f
                }
            }
            None => self.gpu.fields(),
        }
    }
    fn finish(&mut self) {
        match &mut self.cpu {
            Some(c) => c.sim.finish(),
            None => self.gpu.finish(),
        }
    }
    /// On the GPU part; if that fails before it applied the edit, the edit goes to the CPU
    /// continuation instead. (An edit the GPU part applied and then lost with the device is not
    /// replayed: the closure may carry a stroke's state and must run once.)
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if let Some(c) = &mut self.cpu {
            c.sim.edit_terrain(f);
            c.merged_maps = Default::default();
            return;
        }
        let mut applied = false;
        self.gpu.edit_terrain(&mut |hm| {
            applied = true;
            f(hm)
        });
        self.switch();
        if !applied && let Some(c) = &mut self.cpu {
            c.sim.edit_terrain(f);
        }
    }
    fn notes(&self) -> Vec<String> {
        let mut n = self.gpu.notes();
        n.extend(self.notes.iter().cloned());
        if let Some(c) = &self.cpu {
            n.extend(c.sim.notes());
        }
        n
    }
}
