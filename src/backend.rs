//! Where an erosion job runs: the CPU reference models or their GPU versions (issue #7).
//!
//! [`build_with_backend`] is [`crate::core::erosion::build`] with a [`Backend`] choice. A GPU
//! that is missing, lost, refuses a shader or cannot hold the map never makes the job fail: the
//! job is built on the CPU instead and [`BackendUsed::note`] says why. Parameter errors are the
//! same as the CPU's and are returned as errors. Models without a GPU version run on the CPU.
//!
//! GPU jobs that lose their device mid-run carry on on the CPU from the last state read back
//! (see `gpu::ResilientGpuJob`), with the books continued, so a driver reset never takes the editor
//! down.
//!
//! Software adapters (Mesa's lavapipe, WARP) are slower than the CPU models, so `gpu` and `auto`
//! only take them when asked: [`BackendOptions::allow_software`], or `TALUS_GPU_SOFTWARE=1` in the
//! environment.

use serde::{Deserialize, Serialize};

use crate::core::erosion::{self, JobError, JobInputs, ModelParams, Simulation};
use crate::core::heightmap::Heightmap;

/// Which processor runs an erosion job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
pub enum Backend {
    /// The CPU reference models (bit-identical at any thread count). The default.
    #[default]
    Cpu,
    /// The GPU (wgpu compute) when the model has a GPU version and a hardware adapter opens;
    /// otherwise the CPU, with a note saying why.
    Gpu,
    /// The GPU for models that have a GPU version when a hardware GPU is present, the CPU
    /// otherwise (quietly: the note only says which one ran).
    Auto,
}

impl Backend {
    /// All choices, in menu order.
    pub const ALL: [Backend; 3] = [Backend::Cpu, Backend::Gpu, Backend::Auto];

    /// Lower-case name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::Auto => "auto",
        }
    }
}

/// Extra knobs of [`build_with_backend_opts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackendOptions {
    /// Accept a software (CPU-emulated) GPU adapter such as lavapipe.
    pub allow_software: bool,
}

impl BackendOptions {
    /// Reads `TALUS_GPU_SOFTWARE` (any value but empty or `0` allows software adapters).
    pub fn from_env() -> Self {
        Self { allow_software: std::env::var("TALUS_GPU_SOFTWARE").is_ok_and(|v| !v.is_empty() && v != "0") }
    }
}

/// What a job was actually built on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendUsed {
    /// `Cpu` or `Gpu` (never `Auto`).
    pub backend: Backend,
    /// The GPU adapter, when on the GPU.
    pub adapter: Option<String>,
    /// Why the job is on the CPU although the GPU was asked for, if it is.
    pub note: Option<String>,
}

impl std::fmt::Display for BackendUsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.backend, &self.adapter) {
            (Backend::Gpu, Some(a)) => write!(f, "GPU: {a}")?,
            (Backend::Gpu, None) => write!(f, "GPU")?,
            _ => write!(f, "CPU")?,
        }
        if let Some(n) = &self.note {
            write!(f, " ({n})")?;
        }
        Ok(())
    }
}

/// [`build_with_backend_opts`] with the options from the environment.
pub fn build_with_backend(
    terrain: Heightmap,
    params: &ModelParams,
    inputs: JobInputs,
    backend: Backend,
) -> Result<(Box<dyn Simulation>, BackendUsed), JobError> {
    build_with_backend_opts(terrain, params, inputs, backend, BackendOptions::from_env())
}

/// Builds the job for `params` on `backend`, falling back to the CPU (with a note) when the GPU
/// cannot run it. Parameter errors are returned whatever the backend.
pub fn build_with_backend_opts(
    terrain: Heightmap,
    params: &ModelParams,
    inputs: JobInputs,
    backend: Backend,
    opts: BackendOptions,
) -> Result<(Box<dyn Simulation>, BackendUsed), JobError> {
    let cpu = |note: Option<String>, terrain: Heightmap, inputs: JobInputs| {
        erosion::build(terrain, params, inputs).map(|s| (s, BackendUsed { backend: Backend::Cpu, adapter: None, note }))
    };
    if backend == Backend::Cpu {
        return cpu(None, terrain, inputs);
    }
    #[cfg(feature = "gpu")]
    {
        match gpu::build(&terrain, params, &inputs, opts) {
            gpu::Outcome::Built(sim, adapter) => {
                Ok((sim, BackendUsed { backend: Backend::Gpu, adapter: Some(adapter), note: None }))
            }
            gpu::Outcome::Invalid(e) => Err(e),
            gpu::Outcome::Unavailable(why) => {
                let note = if backend == Backend::Auto {
                    format!("auto: {why}")
                } else {
                    format!("fell back to the CPU: {why}")
                };
                cpu(Some(note), terrain, inputs)
            }
        }
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = opts;
        cpu(Some("this build has no GPU support (cargo feature `gpu`)".into()), terrain, inputs)
    }
}

#[cfg(feature = "gpu")]
pub mod gpu {
    use std::sync::{Arc, Mutex, PoisonError};

    use super::*;
    use crate::core::erosion::{ErosionMaps, Fields, Ledger, Progress};
    use crate::gpu::{AdapterChoice, GpuContext, GpuDropletError, GpuDropletJob, GpuErosionJob, GpuJobError};

    /// What [`build`] made of a request.
    pub(super) enum Outcome {
        Built(Box<dyn Simulation>, String),
        Invalid(JobError),
        Unavailable(String),
    }

    /// One context per adapter choice, opened on first use and kept (opening costs 0.1–1 s);
    /// dropped and reopened after a device loss.
    static CONTEXTS: Mutex<[Option<Arc<GpuContext>>; 2]> = Mutex::new([None, None]);

    fn context(choice: AdapterChoice) -> Result<Arc<GpuContext>, crate::gpu::GpuError> {
        let slot = usize::from(choice == AdapterChoice::AllowSoftware);
        let mut g = CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = &g[slot] {
            if c.check().is_ok() {
                return Ok(c.clone());
            }
        }
        let c = Arc::new(GpuContext::new(choice)?);
        g[slot] = Some(c.clone());
        Ok(c)
    }

    pub(super) fn build(
        terrain: &Heightmap,
        params: &ModelParams,
        inputs: &JobInputs,
        opts: BackendOptions,
    ) -> Outcome {
        let model = match params {
            ModelParams::Pipe(_) => "pipe",
            ModelParams::Thermal(_) => "thermal",
            ModelParams::Droplet(_) => "droplet",
            ModelParams::Snowball(_) => return Outcome::Unavailable("the snowball model has no GPU version".into()),
            ModelParams::StreamPower(_) => {
                return Outcome::Unavailable("the stream-power model has no GPU version".into());
            }
        };
        if inputs.sea_level.is_some() && matches!(params, ModelParams::Droplet(_) | ModelParams::Thermal(_)) {
            // The sea (droplets end there and drop their load spread; thermal's underwater angle)
            // exists in the CPU models only so far.
            return Outcome::Unavailable(format!("the {model} model's GPU version has no sea level yet"));
        }
        let choice = if opts.allow_software { AdapterChoice::AllowSoftware } else { AdapterChoice::Hardware };
        let ctx = match context(choice) {
            Ok(c) => c,
            Err(e) => return Outcome::Unavailable(e.to_string()),
        };
        let adapter = ctx.info().to_string();
        if let ModelParams::Droplet(p) = params {
            // The droplet job carries its own CPU fallback for a device lost mid-run.
            return match GpuDropletJob::new(ctx, terrain.clone(), p.clone(), inputs.clone(), Default::default()) {
                Ok(j) => Outcome::Built(Box::new(j), adapter),
                Err(GpuDropletError::Job(e)) => Outcome::Invalid(e),
                Err(GpuDropletError::Gpu(e)) => Outcome::Unavailable(format!("{model} on the GPU: {e}")),
            };
        }
        let job = match params {
            ModelParams::Pipe(p) => GpuErosionJob::pipe(ctx, terrain.clone(), p.clone(), inputs.clone()),
            ModelParams::Thermal(p) => GpuErosionJob::thermal(ctx, terrain.clone(), p.clone(), inputs.clone()),
            _ => unreachable!("models without a GPU version returned above"),
        };
        match job {
            Ok(j) => Outcome::Built(Box::new(ResilientGpuJob::new(j, params.clone(), inputs.clone())), adapter),
            Err(GpuJobError::Job(e)) => Outcome::Invalid(e),
            Err(GpuJobError::Gpu(e)) => Outcome::Unavailable(format!("{model} on the GPU: {e}")),
        }
    }

    /// The CPU job a failed GPU job continues as, with the GPU part of the books.
    struct Continued {
        sim: Box<dyn Simulation>,
        /// Work done on the GPU before the switch.
        done_before: u64,
        /// Books of the GPU part (the sediment suspended at the switch is dropped and booked as
        /// `clamped`, negative, since the CPU job starts without it).
        gpu: Ledger,
    }

    /// A [`GpuErosionJob`] that, if the GPU fails mid-run, carries on with the CPU model from
    /// the last state it read back (water and sediment start afresh; the books stay closed).
    pub struct ResilientGpuJob {
        gpu: GpuErosionJob,
        cpu: Option<Continued>,
        params: ModelParams,
        inputs: JobInputs,
    }

    impl ResilientGpuJob {
        /// Wraps `gpu`; `params`/`inputs` are what it was built from (for the CPU continuation).
        pub fn new(gpu: GpuErosionJob, params: ModelParams, inputs: JobInputs) -> Self {
            Self { gpu, cpu: None, params, inputs }
        }

        /// True once the job has moved to the CPU.
        pub fn on_cpu(&self) -> bool {
            self.cpu.is_some()
        }

        #[cfg(test)]
        pub(crate) fn inject_fault(&mut self) {
            self.gpu.inject_fault(crate::gpu::GpuError::DeviceLost("injected by a test".into()));
        }

        fn switch(&mut self) {
            let Some(err) = self.gpu.fault().cloned() else { return };
            let hm = self.gpu.heightmap().clone();
            let done = self.gpu.snapshot_done();
            let mut params = self.params.clone();
            let left = self.gpu.progress().total.saturating_sub(done);
            match &mut params {
                ModelParams::Pipe(p) => p.steps = left.min(u32::MAX as u64) as u32,
                ModelParams::Thermal(p) => p.iterations = left.min(u32::MAX as u64) as u32,
                _ => {}
            }
            eprintln!("talus: {err}; continuing on the CPU from step {done}");
            if hm.data.is_empty() {
                return;
            }
            if let Ok(sim) = erosion::build(hm, &params, self.inputs.clone()) {
                let mut gl = self.gpu.ledger();
                gl.clamped -= gl.suspended;
                gl.suspended = 0.0;
                self.cpu = Some(Continued { sim, done_before: done, gpu: gl });
            }
        }
    }

    impl Simulation for ResilientGpuJob {
        fn step(&mut self) {
            match &mut self.cpu {
                Some(c) => c.sim.step(),
                None => {
                    self.gpu.step();
                    if self.gpu.fault().is_some() {
                        self.switch();
                    }
                }
            }
        }
        fn progress(&self) -> Progress {
            match &self.cpu {
                Some(c) => {
                    let p = c.sim.progress();
                    Progress { done: c.done_before + p.done, total: c.done_before + p.total }
                }
                None => self.gpu.progress(),
            }
        }
        fn is_done(&self) -> bool {
            match &self.cpu {
                Some(c) => c.sim.is_done(),
                None => self.gpu.is_done(),
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
                Some(c) => {
                    let l = c.sim.ledger();
                    Ledger {
                        eroded: c.gpu.eroded + l.eroded,
                        deposited: c.gpu.deposited + l.deposited,
                        lost_at_border: c.gpu.lost_at_border + l.lost_at_border,
                        clamped: c.gpu.clamped + l.clamped,
                        uplift: c.gpu.uplift + l.uplift,
                        suspended: l.suspended,
                        volume_before: c.gpu.volume_before + (l.volume_before - c.gpu.volume_after),
                        volume_after: l.volume_after,
                    }
                }
                None => self.gpu.ledger(),
            }
        }
        fn maps(&self) -> &ErosionMaps {
            match &self.cpu {
                // After a switch: the CPU part's erosion maps.
                Some(c) => c.sim.maps(),
                None => self.gpu.maps(),
            }
        }
        fn fields(&self) -> Fields {
            match &self.cpu {
                Some(c) => c.sim.fields(),
                None => self.gpu.fields(),
            }
        }
        fn finish(&mut self) {
            if let Some(c) = &mut self.cpu {
                c.sim.finish();
            }
        }
        fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
            match &mut self.cpu {
                Some(c) => c.sim.edit_terrain(f),
                None => self.gpu.edit_terrain(f),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::erosion::pipe::PipeParams;
    use crate::core::erosion::stream_power::StreamPowerParams;

    fn hm() -> Heightmap {
        Heightmap::from_fn(32, 32, 1.0, |x, y| (x + 2 * y) as f32 * 0.3).unwrap()
    }

    #[test]
    fn cpu_is_the_default_and_builds_on_the_cpu() {
        assert_eq!(Backend::default(), Backend::Cpu);
        let (_, used) =
            build_with_backend(hm(), &ModelParams::Pipe(PipeParams::default()), JobInputs::default(), Backend::Cpu)
                .unwrap();
        assert_eq!(used, BackendUsed { backend: Backend::Cpu, adapter: None, note: None });
        assert_eq!(used.to_string(), "CPU");
    }

    #[test]
    fn bad_parameters_are_errors_on_every_backend() {
        let p = ModelParams::Pipe(PipeParams { dt: 0.0, ..Default::default() });
        for b in Backend::ALL {
            for allow_software in [false, true] {
                let r = build_with_backend_opts(hm(), &p, JobInputs::default(), b, BackendOptions { allow_software });
                assert!(matches!(r, Err(JobError::BadParam { name: "dt", .. })), "{b:?}");
            }
        }
    }

    #[test]
    fn models_without_a_gpu_version_fall_back_with_a_note() {
        let p = ModelParams::StreamPower(StreamPowerParams::default());
        let (_, used) = build_with_backend(hm(), &p, JobInputs::default(), Backend::Gpu).unwrap();
        assert_eq!(used.backend, Backend::Cpu);
        assert!(used.note.as_deref().is_some_and(|n| n.contains("GPU")), "{used}");
    }

    #[test]
    fn serde_round_trip() {
        for b in Backend::ALL {
            let s = ron::to_string(&b).unwrap();
            assert_eq!(ron::from_str::<Backend>(&s).unwrap(), b);
        }
    }

    /// With software adapters allowed and an adapter present (CI: lavapipe), `gpu` runs on the
    /// GPU and gives the CPU's result; with hardware only on a machine without a GPU, it falls
    /// back with a note naming the reason.
    #[cfg(feature = "gpu")]
    #[test]
    fn a_gpu_failure_mid_run_continues_on_the_cpu_with_closed_books() {
        let Some(ctx) = crate::gpu::context::test_context() else { return };
        let pp = PipeParams { steps: 40, ..Default::default() };
        let mut j =
            crate::gpu::GpuErosionJob::pipe(std::sync::Arc::new(ctx), hm(), pp.clone(), JobInputs::default()).unwrap();
        j.set_batch(10);
        let mut sim = gpu::ResilientGpuJob::new(j, ModelParams::Pipe(pp), JobInputs::default());
        sim.step();
        sim.step();
        sim.inject_fault();
        sim.step();
        sim.edit_terrain(&mut |h| h.data[5] += 1.0);
        erosion::run(&mut sim, &Default::default(), |_| {});
        assert!(sim.on_cpu());
        assert_eq!(sim.progress(), erosion::Progress { done: 40, total: 40 });
        let l = sim.ledger();
        assert!(l.closes(1e-4), "{l:?}");
        assert!(l.eroded > 0.0);
    }

    #[cfg(feature = "gpu")]
    #[test]
    fn gpu_backend_runs_or_falls_back_with_a_reason() {
        let Some(_) = crate::gpu::context::test_context() else { return };
        let p = ModelParams::Pipe(PipeParams { steps: 10, ..Default::default() });
        let (mut sim, used) = build_with_backend_opts(
            hm(),
            &p,
            JobInputs::default(),
            Backend::Gpu,
            BackendOptions { allow_software: true },
        )
        .unwrap();
        assert_eq!(used.backend, Backend::Gpu, "{used}");
        assert!(used.adapter.is_some());
        let (mut cpu, _) = build_with_backend(hm(), &p, JobInputs::default(), Backend::Cpu).unwrap();
        erosion::run(sim.as_mut(), &Default::default(), |_| {});
        erosion::run(cpu.as_mut(), &Default::default(), |_| {});
        let d =
            sim.heightmap().data.iter().zip(&cpu.heightmap().data).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(d < 1e-3, "{d}");
        let (_, used) = build_with_backend_opts(
            hm(),
            &p,
            JobInputs::default(),
            Backend::Auto,
            BackendOptions { allow_software: false },
        )
        .unwrap();
        match crate::gpu::GpuContext::new(crate::gpu::AdapterChoice::Hardware) {
            Ok(_) => assert_eq!(used.backend, Backend::Gpu),
            Err(_) => {
                assert_eq!(used.backend, Backend::Cpu);
                assert!(used.note.as_deref().is_some_and(|n| n.contains("auto")), "{used}");
            }
        }
    }

    #[cfg(feature = "gpu")]
    #[test]
    fn droplets_run_on_the_gpu_backend() {
        let Some(_) = crate::gpu::context::test_context() else { return };
        let p =
            ModelParams::Droplet(crate::core::erosion::droplet::DropletParams { droplets: 2000, ..Default::default() });
        let (mut sim, used) = build_with_backend_opts(
            hm(),
            &p,
            JobInputs::default(),
            Backend::Gpu,
            BackendOptions { allow_software: true },
        )
        .unwrap();
        assert_eq!(used.backend, Backend::Gpu, "{used}");
        erosion::run(sim.as_mut(), &Default::default(), |_| {});
        assert!(sim.is_done());
        assert!(sim.ledger().eroded > 0.0, "the droplets eroded nothing");
    }
}
