//! Where an erosion job runs: the CPU reference models or their GPU versions (issue #7).
//!
//! [`build_with_backend`] is [`crate::core::erosion::build`] with a [`Backend`] choice. A GPU
//! that is missing, lost, refuses a shader or cannot hold the map never makes the job fail: the
//! job is built on the CPU instead and [`BackendUsed::note`] says why. Parameter errors are the
//! same as the CPU's and are returned as errors. Models without a GPU version run on the CPU.
//!
//! Which models have a GPU version is the table `gpu::GPU_MODELS`, the GPU half of the model
//! registry ([`crate::core::erosion::registry`]; `core` cannot see the GPU code), keyed by the
//! registry's model name.
//!
//! GPU jobs that lose their device mid-run carry on on the CPU from the last state read back
//! (every GPU model runs in the one wrapper of [`crate::gpu::fallback`]), with the books
//! continued, so a driver reset never takes the editor down; the job's
//! [`Simulation::notes`] say so (the CLI prints them, the editor shows them in its status line).
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
    // Version-1 values (grid units) are taken as made for `terrain` and converted once, so the
    // CPU and GPU jobs, and a GPU job's CPU continuation, all hold the same world values.
    let upgraded;
    let params = if params.has_legacy() {
        let mut p = params.clone();
        p.upgrade_units(erosion::MapSize::of(&terrain));
        upgraded = p;
        &upgraded
    } else {
        params
    };
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

/// Runs the model's detail pass on one level of a build's ladder (`--erosion refine`) on
/// `backend`. `false` when the model has no pass. Off the CPU:
/// - a pass with a GPU version of its own (stream power's stencils) runs there when the GPU can
///   run it (`Gpu`, or `Auto` with a hardware adapter); a GPU failure leaves the level as it was
///   and runs the CPU pass, with a note saying why;
/// - a pass that is the model's own job run briefly (thermal erosion, droplets:
///   [`erosion::refine::Refiner::own_job`]) runs that job where the model's Simulate would
///   ([`build_with_backend_opts`]: its GPU version, or the CPU with a note).
pub fn refine_pass(
    model: &ModelParams,
    settings: &erosion::refine::RefineParams,
    level: &mut erosion::refine::Level,
    inputs: &JobInputs,
    cancel: &std::sync::atomic::AtomicBool,
    backend: Backend,
    opts: BackendOptions,
) -> Result<(bool, BackendUsed), JobError> {
    let mut note: Option<String> = None;
    if backend != Backend::Cpu && model.has_refine() {
        #[cfg(feature = "gpu")]
        match gpu::refine(model, settings, level, inputs, cancel, opts) {
            Some(gpu::PassOutcome::Ran(adapter)) => {
                return Ok((true, BackendUsed { backend: Backend::Gpu, adapter: Some(adapter), note: None }));
            }
            Some(gpu::PassOutcome::Invalid(e)) => return Err(e),
            Some(gpu::PassOutcome::Unavailable(why)) => note = Some(why),
            None => {}
        }
        if note.is_none()
            && let Some((job_model, job_inputs)) = model.refine_own_job(settings, level, inputs)
        {
            let (mut job, used) = build_with_backend_opts(level.map.clone(), &job_model, job_inputs, backend, opts)?;
            let _ = erosion::run(job.as_mut(), cancel, |_| {});
            level.map.data.copy_from_slice(&job.heightmap().data);
            return Ok((true, used));
        }
        #[cfg(not(feature = "gpu"))]
        if note.is_none() {
            note = Some("this build has no GPU support (cargo feature `gpu`)".into());
        }
    }
    let note = note.map(|why| {
        if backend == Backend::Auto { format!("auto: {why}") } else { format!("fell back to the CPU: {why}") }
    });
    let ran = model.refine_pass(settings, level, inputs, cancel)?;
    Ok((ran, BackendUsed { backend: Backend::Cpu, adapter: None, note }))
}

/// The menu labels of the models with a GPU version, in menu order (e.g. `["Droplets", "Pipe model",
/// "Thermal"]`): what the editor's backend tooltip lists. Empty without the `gpu` feature.
pub fn gpu_model_labels() -> Vec<&'static str> {
    #[cfg(feature = "gpu")]
    let labels = erosion::MODELS.iter().filter(|e| gpu::has_gpu_version(e.name)).map(|e| e.label).collect();
    #[cfg(not(feature = "gpu"))]
    let labels = Vec::new();
    labels
}

/// The GPU half of the backend: the table of models with a GPU version, the shared GPU contexts
/// (one per adapter choice) and the build that falls back to the CPU (only with feature `gpu`).
#[cfg(feature = "gpu")]
pub mod gpu {
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, Mutex, PoisonError};

    use super::*;
    use crate::core::erosion::refine::{Level, RefineParams};
    use crate::gpu::{
        AdapterChoice, GpuContext, GpuDropletError, GpuDropletJob, GpuErosionJob, GpuError, GpuJobError,
        GpuStreamPowerJob,
    };

    /// The pipe and thermal GPU job in the GPU models' one fallback wrapper
    /// ([`crate::gpu::fallback`]); the droplet job is [`GpuDropletJob`], the same wrapper.
    pub type ResilientGpuJob = crate::gpu::ResilientGpuJob<GpuErosionJob>;

    /// What [`build`] made of a request.
    pub(super) enum Outcome {
        Built(Box<dyn Simulation>, String),
        Invalid(JobError),
        Unavailable(String),
    }

    /// Why a GPU version gave no job: parameters it refuses (as the CPU would), or the GPU.
    enum BuildError {
        Invalid(JobError),
        Gpu(GpuError),
    }

    impl From<GpuJobError> for BuildError {
        fn from(e: GpuJobError) -> Self {
            match e {
                GpuJobError::Job(e) => BuildError::Invalid(e),
                GpuJobError::Gpu(e) => BuildError::Gpu(e),
            }
        }
    }

    impl From<GpuDropletError> for BuildError {
        fn from(e: GpuDropletError) -> Self {
            match e {
                GpuDropletError::Job(e) => BuildError::Invalid(e),
                GpuDropletError::Gpu(e) => BuildError::Gpu(e),
            }
        }
    }

    type GpuBuild =
        fn(Arc<GpuContext>, &Heightmap, &ModelParams, &JobInputs) -> Result<Box<dyn Simulation>, BuildError>;

    /// A model's GPU version: the GPU half of the model registry
    /// ([`crate::core::erosion::registry`]), keyed by the registry entry's `name`. Every build
    /// returns its job inside [`crate::gpu::ResilientGpuJob`], so a GPU failure mid-run goes on
    /// on the CPU.
    struct GpuModel {
        /// [`crate::core::erosion::ModelEntry::name`].
        name: &'static str,
        /// What of a run the GPU version cannot do yet, if anything (such a run stays on the CPU,
        /// with a note naming it).
        lacks: fn(&Heightmap, &ModelParams, &JobInputs) -> Option<&'static str>,
        build: GpuBuild,
        /// The GPU version of the model's detail pass in a build's ladder
        /// ([`crate::core::erosion::refine`]), if it has one.
        refine: Option<GpuRefine>,
    }

    /// One level's detail pass on the GPU (the level is unchanged when it fails).
    type GpuRefine =
        fn(&GpuContext, &ModelParams, &RefineParams, &mut Level, &JobInputs, &AtomicBool) -> Result<(), BuildError>;

    /// The models with a GPU version. A model not listed runs on the CPU (with a note). Each of
    /// them takes the sea level, the hardness map and every edge mode.
    static GPU_MODELS: &[GpuModel] = &[
        GpuModel { name: "Droplet", lacks: droplet_lacks, build: droplet, refine: None },
        GpuModel { name: "Pipe", lacks: |_, _, _| None, build: pipe, refine: None },
        GpuModel { name: "Thermal", lacks: |_, _, _| None, build: thermal, refine: None },
        GpuModel { name: "StreamPower", lacks: |_, _, _| None, build: stream_power, refine: Some(stream_power_refine) },
    ];

    fn stream_power_refine(
        ctx: &GpuContext,
        p: &ModelParams,
        r: &RefineParams,
        lv: &mut Level,
        i: &JobInputs,
        cancel: &AtomicBool,
    ) -> Result<(), BuildError> {
        let ModelParams::StreamPower(sp) = p else { unreachable!("GPU_MODELS is keyed by model") };
        Ok(crate::gpu::refine::stream_power_pass(ctx, sp, r, lv, i, cancel)?)
    }

    /// The droplets on the GPU have the sea and steering masks, not the change blur, nor the
    /// deposits spread with the brush on cells finer than `path_step_m`.
    fn droplet_lacks(t: &Heightmap, p: &ModelParams, _: &JobInputs) -> Option<&'static str> {
        let ModelParams::Droplet(d) = p else { return None };
        if d.blur_m.is_some_and(|b| b > 0.0) {
            Some("change blur (`blur_m`)")
        } else if d.in_grid_units(erosion::MapSize::of(t)).wide {
            Some("deposits spread over the brush (cells finer than `path_step_m`)")
        } else {
            None
        }
    }

    fn stream_power(
        ctx: Arc<GpuContext>,
        t: &Heightmap,
        p: &ModelParams,
        i: &JobInputs,
    ) -> Result<Box<dyn Simulation>, BuildError> {
        let ModelParams::StreamPower(sp) = p else { unreachable!("GPU_MODELS is keyed by model") };
        let j = GpuStreamPowerJob::new(ctx, t.clone(), sp.clone(), i.clone(), Default::default())?;
        Ok(Box::new(crate::gpu::ResilientGpuJob::stream_power(j, p.clone(), i.clone())))
    }

    fn droplet(
        ctx: Arc<GpuContext>,
        t: &Heightmap,
        p: &ModelParams,
        i: &JobInputs,
    ) -> Result<Box<dyn Simulation>, BuildError> {
        let ModelParams::Droplet(p) = p else { unreachable!("GPU_MODELS is keyed by model") };
        Ok(Box::new(GpuDropletJob::new(ctx, t.clone(), p.clone(), i.clone(), Default::default())?))
    }

    fn pipe(
        ctx: Arc<GpuContext>,
        t: &Heightmap,
        p: &ModelParams,
        i: &JobInputs,
    ) -> Result<Box<dyn Simulation>, BuildError> {
        let ModelParams::Pipe(pp) = p else { unreachable!("GPU_MODELS is keyed by model") };
        let j = GpuErosionJob::pipe(ctx, t.clone(), pp.clone(), i.clone())?;
        Ok(Box::new(ResilientGpuJob::new(j, p.clone(), i.clone())))
    }

    fn thermal(
        ctx: Arc<GpuContext>,
        t: &Heightmap,
        p: &ModelParams,
        i: &JobInputs,
    ) -> Result<Box<dyn Simulation>, BuildError> {
        let ModelParams::Thermal(tp) = p else { unreachable!("GPU_MODELS is keyed by model") };
        let j = GpuErosionJob::thermal(ctx, t.clone(), tp.clone(), i.clone())?;
        Ok(Box::new(ResilientGpuJob::new(j, p.clone(), i.clone())))
    }

    /// One context per adapter choice, opened on first use and kept (opening costs 0.1–1 s);
    /// dropped and reopened after a device loss.
    static CONTEXTS: Mutex<[Option<Arc<GpuContext>>; 2]> = Mutex::new([None, None]);

    fn context(choice: AdapterChoice) -> Result<Arc<GpuContext>, GpuError> {
        let slot = usize::from(choice == AdapterChoice::AllowSoftware);
        let mut g = CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = &g[slot]
            && c.check().is_ok()
        {
            return Ok(c.clone());
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
        let model = params.entry().cli;
        let Some(gpu) = GPU_MODELS.iter().find(|g| g.name == params.entry().name) else {
            return Outcome::Unavailable(format!("the {model} model has no GPU version"));
        };
        if let Some(what) = (gpu.lacks)(terrain, params, inputs) {
            return Outcome::Unavailable(format!("the {model} model's GPU version has no {what} yet"));
        }
        let choice = if opts.allow_software { AdapterChoice::AllowSoftware } else { AdapterChoice::Hardware };
        let ctx = match context(choice) {
            Ok(c) => c,
            Err(e) => return Outcome::Unavailable(e.to_string()),
        };
        let adapter = ctx.info().to_string();
        match (gpu.build)(ctx, terrain, params, inputs) {
            Ok(j) => Outcome::Built(j, adapter),
            Err(BuildError::Invalid(e)) => Outcome::Invalid(e),
            Err(BuildError::Gpu(e)) => Outcome::Unavailable(format!("{model} on the GPU: {e}")),
        }
    }

    /// [`super::refine_pass`] on the GPU: `None` when the model's pass has no GPU version, else
    /// the adapter it ran on, or why it could not run there.
    pub(super) fn refine(
        model: &ModelParams,
        settings: &RefineParams,
        level: &mut Level,
        inputs: &JobInputs,
        cancel: &AtomicBool,
        opts: BackendOptions,
    ) -> Option<PassOutcome> {
        let name = model.entry().cli;
        let pass = GPU_MODELS.iter().find(|g| g.name == model.entry().name)?.refine?;
        let choice = if opts.allow_software { AdapterChoice::AllowSoftware } else { AdapterChoice::Hardware };
        let ctx = match context(choice) {
            Ok(c) => c,
            Err(e) => return Some(PassOutcome::Unavailable(e.to_string())),
        };
        Some(match pass(&ctx, model, settings, level, inputs, cancel) {
            Ok(()) => PassOutcome::Ran(ctx.info().to_string()),
            Err(BuildError::Invalid(e)) => PassOutcome::Invalid(e),
            Err(BuildError::Gpu(e)) => PassOutcome::Unavailable(format!("the {name} detail pass on the GPU: {e}")),
        })
    }

    /// What [`refine`] made of a level: ran on the adapter named, refused the parameters (as the
    /// CPU pass would), or could not run on the GPU (why).
    pub(super) enum PassOutcome {
        Ran(String),
        Invalid(JobError),
        Unavailable(String),
    }

    /// Whether the registry model `name` has a GPU version.
    pub(super) fn has_gpu_version(name: &str) -> bool {
        GPU_MODELS.iter().any(|g| g.name == name)
    }

    #[cfg(test)]
    #[test]
    fn the_gpu_labels_name_every_gpu_model_once() {
        let labels = super::gpu_model_labels();
        assert_eq!(labels.len(), GPU_MODELS.len(), "{labels:?}");
        for g in GPU_MODELS {
            let e = crate::core::erosion::registry::by_name(g.name).expect("a registry model");
            assert!(labels.contains(&e.label), "{labels:?} lacks {}", e.label);
        }
    }

    #[cfg(test)]
    #[test]
    fn every_gpu_model_is_in_the_registry() {
        for g in GPU_MODELS {
            assert!(crate::core::erosion::registry::by_name(g.name).is_some(), "{}", g.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::erosion::pipe::PipeParams;

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
        let p = ModelParams::Snowball(Default::default());
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

    /// The note of a mid-run fallback reaches the caller as a value, once, in order after the GPU
    /// part's own; the library prints nothing.
    #[cfg(feature = "gpu")]
    #[test]
    fn a_mid_run_fallback_note_reaches_the_caller() {
        let Some(ctx) = crate::gpu::context::test_context() else { return };
        let ctx = std::sync::Arc::new(ctx);
        let pp = PipeParams { steps: 30, ..Default::default() };
        let mut j = crate::gpu::GpuErosionJob::pipe(ctx.clone(), hm(), pp.clone(), JobInputs::default()).unwrap();
        j.set_batch(10);
        let mut sim = gpu::ResilientGpuJob::new(j, ModelParams::Pipe(pp), JobInputs::default());
        sim.step();
        assert!(sim.notes().is_empty(), "{:?}", sim.notes());
        sim.inject_fault();
        let notes = sim.notes();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("GPU erosion stopped: "), "{notes:?}");
        assert!(notes[1].ends_with("; continuing on the CPU from step 10"), "{notes:?}");
        erosion::run(&mut sim, &Default::default(), |_| {});
        assert_eq!(sim.notes(), notes, "said once");
        // The droplet job runs in the same wrapper and words its note its own way.
        let dp = crate::core::erosion::droplet::DropletParams {
            droplets_per_km2: erosion::MapSize::of(&hm()).per_km2(3000),
            batch: 1000,
            path_step_m: 1.0,
            ..Default::default()
        };
        let mut d = crate::gpu::GpuDropletJob::new(ctx, hm(), dp, JobInputs::default(), Default::default()).unwrap();
        d.step();
        d.simulate_fault(crate::gpu::GpuError::DeviceLost("test".into()));
        let notes = d.notes();
        assert!(notes.len() == 1 && notes[0].ends_with("droplets continue on the CPU from droplet 1000"), "{notes:?}");
        erosion::run(&mut d, &Default::default(), |_| {});
        assert_eq!(d.progress(), erosion::Progress { done: 3000, total: 3000 });
        assert!(d.ledger().closes(1e-4), "{:?}", d.ledger());
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

    /// A build's detail pass runs on the GPU where the model's pass has a GPU version (stream
    /// power's own, thermal's through the GPU thermal job), on the CPU with a note where the GPU
    /// cannot, and on the CPU quietly when asked for.
    #[test]
    fn a_detail_pass_runs_where_the_backend_and_the_model_allow() {
        use crate::core::erosion::refine::{Level, RefineParams};
        use crate::core::erosion::stream_power::StreamPowerParams;
        use crate::core::erosion::thermal::ThermalParams;
        let input = Heightmap::from_fn(33, 33, 2.0, |x, y| {
            let (dx, dy) = (x as f32 - 16.0, y as f32 - 16.0);
            (20.0 - 0.05 * (dx * dx + dy * dy)).max(-2.0) + 0.3 * ((x * 7 + y * 3) % 5) as f32
        })
        .unwrap();
        let inputs = JobInputs { sea_level: Some(0.0), ..Default::default() };
        let sp = ModelParams::StreamPower(StreamPowerParams::default());
        let thermal = ModelParams::Thermal(ThermalParams::default());
        let run = |model: &ModelParams, backend: Backend, opts: BackendOptions| {
            let mut map = input.clone();
            let mut drainage = model.refine_start(&map, &inputs).unwrap();
            let mut lv =
                Level { map: &mut map, input: &input, drainage: &mut drainage, index: 1, levels: 1, input_range: None };
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let (ran, used) =
                refine_pass(model, &RefineParams::default(), &mut lv, &inputs, &cancel, backend, opts).unwrap();
            assert!(ran);
            (map, used)
        };
        for model in [&sp, &thermal] {
            let name = model.entry().cli;
            let (cpu, used) = run(model, Backend::Cpu, BackendOptions::default());
            assert_eq!(used, BackendUsed { backend: Backend::Cpu, adapter: None, note: None }, "{name}");
            assert_ne!(cpu.data, input.data, "{name}");
            #[cfg(not(feature = "gpu"))]
            {
                let (same, used) = run(model, Backend::Gpu, BackendOptions { allow_software: true });
                assert_eq!(used.backend, Backend::Cpu);
                assert!(used.note.is_some_and(|n| n.contains("no GPU support")), "{name}");
                assert_eq!(same.data, cpu.data, "{name}");
            }
            #[cfg(feature = "gpu")]
            if crate::gpu::context::test_context().is_some() {
                let (gpu, used) = run(model, Backend::Gpu, BackendOptions { allow_software: true });
                assert_eq!((used.backend, &used.note), (Backend::Gpu, &None), "{name}: {used}");
                let worst = gpu.data.iter().zip(&cpu.data).map(|(g, c)| (g - c).abs()).fold(0.0f32, f32::max);
                assert!(worst < 0.05, "{name}: GPU and CPU passes differ by {worst} m");
            }
        }
    }

    /// A sea level or a steering mask (with sinks or without) keeps no GPU model off the GPU (the
    /// droplets' change blur does): `--backend gpu` on a map with a sea and a mask runs droplets,
    /// pipe and thermal on the GPU, with books that close.
    #[cfg(feature = "gpu")]
    #[test]
    fn a_sea_and_a_mask_run_on_the_gpu_backend() {
        let Some(_) = crate::gpu::context::test_context() else { return };
        let opts = BackendOptions { allow_software: true };
        let droplets = crate::core::erosion::droplet::DropletParams {
            droplets_per_km2: erosion::MapSize::of(&hm()).per_km2(2000),
            path_step_m: 1.0,
            ..Default::default()
        };
        let thermal = crate::core::erosion::thermal::ThermalParams { iterations: 10, ..Default::default() };
        let pipe = PipeParams { steps: 10, ..Default::default() };
        use crate::core::erosion::Steer;
        let weights: Vec<f32> = (0..32 * 32).map(|i| (i % 32) as f32 / 31.0).collect();
        let (mask, sinks) = (Steer::new(weights.clone(), false), Steer::new(weights, true));
        // The ramp of `hm` runs from 0 to 27.9 m: a sea at 10 m covers about a third of it.
        let sea = JobInputs { sea_level: Some(10.0), seed: 3, ..Default::default() };
        let steered = JobInputs { steer: Some(mask), ..sea.clone() };
        let sunk = JobInputs { steer: Some(sinks), ..sea.clone() };
        let models = [ModelParams::Droplet(droplets.clone()), ModelParams::Pipe(pipe), ModelParams::Thermal(thermal)];
        for p in &models {
            for (what, inputs) in [("sea", &sea), ("sea and mask", &steered), ("sea and sink mask", &sunk)] {
                let (mut sim, used) = build_with_backend_opts(hm(), p, inputs.clone(), Backend::Gpu, opts).unwrap();
                let name = p.entry().cli;
                assert_eq!((used.backend, &used.note), (Backend::Gpu, &None), "{name}, {what}: {used}");
                erosion::run(sim.as_mut(), &Default::default(), |_| {});
                let l = sim.ledger();
                assert!(l.moved() > 0.0 && l.closes(1e-4), "{name}, {what}: {l:?}");
            }
        }
        // What is still missing falls back with its name.
        let blur = ModelParams::Droplet(crate::core::erosion::droplet::DropletParams { blur_m: Some(4.0), ..droplets });
        let (_, used) = build_with_backend_opts(hm(), &blur, sea, Backend::Gpu, opts).unwrap();
        assert_eq!(used.backend, Backend::Cpu);
        assert!(used.note.as_deref().is_some_and(|n| n.contains("blur_m")), "{used}");
    }

    #[cfg(feature = "gpu")]
    #[test]
    fn droplets_run_on_the_gpu_backend() {
        let Some(_) = crate::gpu::context::test_context() else { return };
        let d = crate::core::erosion::droplet::DropletParams {
            droplets_per_km2: erosion::MapSize::of(&hm()).per_km2(2000),
            // The rates per node of these 1 m cells: deposits on a cell, as the kernel has them.
            path_step_m: 1.0,
            ..Default::default()
        };
        let opts = BackendOptions { allow_software: true };
        let p = ModelParams::Droplet(d.clone());
        let (mut sim, used) = build_with_backend_opts(hm(), &p, JobInputs::default(), Backend::Gpu, opts).unwrap();
        assert_eq!(used.backend, Backend::Gpu, "{used}");
        erosion::run(sim.as_mut(), &Default::default(), |_| {});
        assert!(sim.is_done());
        assert!(sim.ledger().eroded > 0.0, "the droplets eroded nothing");
        // Cells finer than the path step spread their deposits with the brush: on the CPU, saying so.
        let fine = ModelParams::Droplet(crate::core::erosion::droplet::DropletParams { path_step_m: 2.0, ..d });
        let (_, used) = build_with_backend_opts(hm(), &fine, JobInputs::default(), Backend::Gpu, opts).unwrap();
        assert_eq!(used.backend, Backend::Cpu);
        assert!(used.note.as_deref().is_some_and(|n| n.contains("path_step_m")), "{used}");
    }

    /// The default Simulate runs on the GPU on a map with a sea and a steering mask (no
    /// fallback), and its books close.
    #[cfg(feature = "gpu")]
    #[test]
    fn stream_power_runs_on_the_gpu_backend_with_a_sea_and_a_mask() {
        let Some(_) = crate::gpu::context::test_context() else { return };
        let p = ModelParams::StreamPower(crate::core::erosion::stream_power::StreamPowerParams {
            steps: 10,
            ..Default::default()
        });
        let t = hm();
        let weights: Vec<f32> = (0..t.len()).map(|i| if i % 5 == 0 { 0.0 } else { 1.0 }).collect();
        let inputs = JobInputs {
            sea_level: Some(3.0),
            steer: Some(crate::core::erosion::steer::Steer::new(weights, true)),
            ..Default::default()
        };
        let (mut sim, used) =
            build_with_backend_opts(t, &p, inputs, Backend::Gpu, BackendOptions { allow_software: true }).unwrap();
        assert_eq!(used.backend, Backend::Gpu, "{used}");
        assert!(used.note.is_none(), "{used}");
        erosion::run(sim.as_mut(), &Default::default(), |_| {});
        assert!(sim.ledger().closes(1e-3), "{:?}", sim.ledger());
        assert!(sim.ledger().eroded > 0.0);
    }
}
