//! The pipe model and thermal erosion on the GPU (SPEC §2c, seed 003), with the same parameters
//! ([`PipeParams`], [`ThermalParams`]) and the same results as the CPU reference
//! [`crate::core::erosion::pipe`] / [`crate::core::erosion::thermal`] within f32 tolerance.
//!
//! After Mei, Decaudin & Hu 2007 ("Fast Hydraulic Erosion Simulation and Visualization on GPU"),
//! the capacity depth limit and interleaved thermal step of Št'ava et al. 2008 ("Interactive
//! Terrain Modeling Using Hydraulic Erosion"), and seed 003's MacCormack option. Per node: terrain
//! `b`, water `d`, sediment `s`, outflow fluxes `f = (f_L, f_R, f_T, f_B)`, velocity `(u, v)`;
//! `lx = ly` the cell size. One time step is the CPU's, kernel by kernel:
//!
//! ```text
//! pipe_flux.wgsl     2  f_k ← max(0, f_k + Δt·A·g·Δh_k/l),  K = min(1, d·lx·ly/(Σf·Δt)),  f ← K·f
//! pipe_water.wgsl    3  d2 = d1 + Δt·(Σf_in − Σf_out)/(lx·ly),  u = (f_R(x−1) − f_L + f_R − f_L(x+1))/(2·ly·d̄)
//!                    4  C = Kc·max(sin α, min_tilt)·|v|_f·min(1, d2/max_depth)   (isotropic upwind α, RMS face |v|)
//!                       C > s: Δb = −min(Ks·(C − s)·hardness, max(0, b − sea)),  else Δb = Kd·(s − C);  s1 = s − Δb
//!                    7  d ← d2·(1 − Ke·Δt) + Δt·r          (r: rain or rain map + river sources: step 1 of the next step)
//! pipe_advect.wgsl   5  s = s1(x − u·Δt/lx, y − v·Δt/ly)   (semi-Lagrangian, bilinear)
//!   + pipe_maccormack.wgsl   ŝ = back(s1), s̃ = fwd(ŝ), s = clamp(ŝ + (s1 − s̃)/2)
//!   or pipe_remap.wgsl       conservative forward remap, written as a gather
//! thermal_pass1/2    6  e(i→j) = max(0, h_i − h_j − T·Δ_ij),  s_i = a_i·M_i/(2E_i),  q_j receiver limit,
//!                       h_i' = h_i − s_i·Σ_j e(i→j)·q_j + q_i·Σ_j s_j·e(j→i)   (every `thermal_every` steps)
//! ```
//!
//! (the first water increment is applied when the job is built, as on the CPU). Steps 2–5 and 7
//! run once per sub-step, `n` of them per time step with `Δt = dt/n`, `Ks`, `Kd` and the velocity
//! clamp per sub-step ([`crate::core::erosion::pipe::Stepping`], the CPU's); step 6 once per time
//! step. With a sea level
//! (flags bit 3), sea nodes (`b < sea`) follow the CPU's *The sea* rules in the same kernels:
//! `pipe_flux` gives them no outflow; `pipe_water` settles their suspended sediment up to the sea
//! level, resets their depth to `sea − b'`, evaporates nothing there and books the water the sea
//! took in (slot 8), and keeps shore nodes (`b = sea`) at the sea level; the job fills the sea
//! when it is built, as on the CPU.
//!
//! Thermal erosion with a sea level (flags bit 4; alone, or the pipe model's step) uses the CPU's underwater talus
//! ([`ThermalKernel::with_sea`]): a pair of neighbours both at or below the sea settles to
//! `underwater_angle`, `e(i→j) = max(0, h_i − h_j − W·Δ_ij)` with `W = tan(underwater_angle)`
//! when `max(h_i, h_j) ≤ sea` (`talus_pair` in `pipe_common.wgsl`; the same number on both sides
//! of a pair, so still conservative); a drain's virtual neighbour keeps the land talus. The pipe
//! model's interleaved thermal step takes it too (with `thermal_sea`, as on the CPU). A steering mask
//! multiplies thermal's erodibility, `a_i = min(1, rate·hardness_i·w_i)` (as on the CPU). In the
//! pipe model a mask weights each node's water input, `(rain_i + sources_i)·w_i·Δt`, folded into
//! the per-node input before upload exactly as the CPU computes it (the erosion brush's dabs are
//! such masks). A sink mask also scales the erodibility (flow and thermal, as the CPU's
//! `erodibility`), and its zeros are sinks (flags bit 5, marked by a water input of −1): at the end
//! of `pipe_water` their water leaves, booked as the sea's intake, and their suspended sediment
//! settles on them, booked as deposition (the CPU's `drain_sinks`, run after sweep B).
//!
//! ## Passes, fusion and bandwidth
//!
//! Each field is a flat storage buffer; the terrain is a ping-pong pair. Steps 3, 4 and 7 are
//! fused into one kernel (one read of the fluxes feeds the depth, the velocity, the erosion and
//! the evaporation), so a step is three dispatches (four with MacCormack, plus two per thermal
//! iteration), all recorded into one compute pass and one submit per [`Simulation::step`] call,
//! which runs a batch of time steps (sized to about 30 ms of work, so cancel stays responsive).
//! Nothing is read back until a snapshot is asked for ([`Simulation::heightmap`] and friends read
//! lazily and cache until the next step). Bytes a step moves per node (f32 = 4 B; neighbour
//! reads counted once, assuming the 3×3 stencils hit the cache): see [`bytes_per_cell_step`].
//!
//! ## Books (deterministic, thread-order independent)
//!
//! Every kernel that changes the books sums its values over its 16×16 workgroup with a fixed
//! tree in workgroup memory and adds the total to that workgroup's own double-float `(hi, lo)`
//! accumulator slot with TwoSum (no atomics: each slot has one writer), so the ledger is the same
//! on every run. The host sums the slots in f64 in a fixed order when a snapshot is read. The
//! slots hold Σ eroded, Σ deposited, Σ s1, Σ d2 (evaporation = Σ d2·Ke·Δt), water drained, Σ s
//! after transport, sediment lost by transport, material lost by thermal slippage and the water
//! the sea took in;
//! `clamped = Σ s_after − Σ s1 + lost` (the non-conservation of the seed's advection schemes),
//! exactly as the CPU books it.
//!
//! ## Parity with the CPU
//!
//! The kernels follow the CPU's boundary-aware per-node code operation for operation (same
//! order of sums, same selects for min/max/`pos`). They are not bit-identical: WGSL lets the
//! driver fuse `a·b + c` and Vulkan allows 2.5 ulp division and an approximate `sqrt`, and the
//! pipe model amplifies last-bit differences a little each step. `tests::gpu_matches_cpu_*`
//! measures the gap on 256² after N steps (see the README for the figures).
//!
//! ## Why this file is over 800 lines
//! It is one job's device side: the buffers, the pipelines, the order of the dispatches within a
//! step, the readback and the books read back with it. Those parts share the job's private
//! buffers and bind groups, and split apart they would each need the whole of it; the kernels
//! themselves live in `shaders/gpu/`, the uniform block in `GpuParams`, the tests in
//! `pipe/tests.rs` and the CPU hand-over in `super::fallback`.

use std::cell::{OnceCell, RefCell};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::context::{GpuContext, GpuError, groups};
use super::fallback::{GpuJob, Handover, ResilientGpuJob};
use crate::core::erosion::hardness::{HardnessRule, check_hardness};
use crate::core::erosion::pipe::{Advection, PipeParams, WaterBudget, add_source, fill_sea, sea_floor};
use crate::core::erosion::thermal::{ThermalKernel, ThermalParams};
use crate::core::erosion::{
    EdgeMode, ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Side, Simulation, apply_edit, check_param,
};
use crate::core::heightmap::Heightmap;

const COMMON: &str = include_str!("../../shaders/gpu/pipe_common.wgsl");
const FLUX: &str = include_str!("../../shaders/gpu/pipe_flux.wgsl");
const WATER: &str = include_str!("../../shaders/gpu/pipe_water.wgsl");
const ADVECT: &str = include_str!("../../shaders/gpu/pipe_advect.wgsl");
const MACCORMACK: &str = include_str!("../../shaders/gpu/pipe_maccormack.wgsl");
const REMAP: &str = include_str!("../../shaders/gpu/pipe_remap.wgsl");
const THERMAL1: &str = include_str!("../../shaders/gpu/thermal_pass1.wgsl");
const THERMAL2: &str = include_str!("../../shaders/gpu/thermal_pass2.wgsl");

/// Workgroup edge (16×16 threads).
const WG: u32 = 16;
/// Book slots (see the module doc), in the order of `pipe_common.wgsl`.
const SLOTS: usize = 9;
const SLOT_ERODED: usize = 0;
const SLOT_DEPOSITED: usize = 1;
const SLOT_S1: usize = 2;
const SLOT_D2: usize = 3;
const SLOT_DRAINED: usize = 4;
const SLOT_SSUM: usize = 5;
const SLOT_LOST: usize = 6;
const SLOT_TH_LOST: usize = 7;
const SLOT_SEA: usize = 8;
/// Wall time one `step()` call aims at when the batch size adapts.
const BATCH_TARGET: Duration = Duration::from_millis(30);
/// Most time steps one `step()` call runs.
const BATCH_MAX: u32 = 512;

/// Why a GPU job could not be built: bad parameters (the same checks as the CPU model) or a GPU
/// failure.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum GpuJobError {
    /// Parameters the CPU model would refuse too.
    #[error(transparent)]
    Job(#[from] JobError),
    /// The GPU could not run the job (no adapter, shader, memory, size, lost device).
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

super::uniform::wgsl_uniform! {
    /// The uniform block every kernel reads (`Params` in `pipe_common.wgsl`; the layout is checked
    /// against it by `tests::the_uniform_block_matches_the_wgsl`).
    struct GpuParams {
        w: u32,
        h: u32,
        groups_x: u32,
        groups: u32,
        edge_l: u32,
        edge_r: u32,
        edge_t: u32,
        edge_b: u32,
        flags: u32,
        _pad0: u32,
        _pad1: u32,
        _pad2: u32,
        kflux: f32,
        area_dt: f32,
        dt_area: f32,
        inv_l: f32,
        vmax: f32,
        courant: f32,
        kc: f32,
        ks: f32,
        kd: f32,
        min_tilt: f32,
        inv_max_depth: f32,
        keep: f32,
        rain_dt: f32,
        t_card: f32,
        t_diag: f32,
        th_rate: f32,
        th_inv_amax: f32,
        /// Erosion floor and sea level of the pipe model (`pipe::sea_floor`; flags bit 3: a sea),
        /// or the sea level of thermal erosion (flags bit 4: alone, or the pipe model's step).
        sea: f32,
        /// Thermal with a sea: the underwater talus drops (`ThermalKernel::with_sea`).
        w_card: f32,
        w_diag: f32,
    }
}

fn edge_code(b: &crate::core::erosion::Boundary, side: Side) -> u32 {
    match b.effective(side) {
        EdgeMode::Wall => 0,
        EdgeMode::Drain => 1,
        EdgeMode::Wrap => 2,
    }
}

/// Thermal constants exactly as `ThermalKernel::new` derives them: (t_card, t_diag, inv_amax).
fn thermal_consts(tp: &ThermalParams, cell: f32, hardness: Option<&[f32]>) -> (f32, f32, f32) {
    let tan = tp.talus_slope() as f64;
    let t_card = (tan * cell as f64) as f32;
    let t_diag = (tan * cell as f64 * std::f64::consts::SQRT_2) as f32;
    let amax = match hardness {
        Some(hd) => hd.iter().fold(0.0f32, |m, &v| m.max((tp.rate * v).min(1.0))),
        None => tp.rate.min(1.0),
    };
    (
        if t_card.is_finite() { t_card } else { f32::MAX },
        if t_diag.is_finite() { t_diag } else { f32::MAX },
        if amax > 0.0 { 1.0 / amax } else { 0.0 },
    )
}

/// Which model a job runs.
#[derive(Clone, Debug)]
enum Model {
    Pipe(PipeParams),
    Thermal(ThermalParams),
}

/// Bytes one pipe-model time step moves per node, counting each buffer a kernel reads or writes
/// once (neighbour reads served by the cache), for the bandwidth figure of the bench:
///
/// | kernel | reads | writes |
/// |---|---|---|
/// | flux | b, d, f (4+4+16) | f (16) |
/// | water | b, d, s, f, maps (4+4+4+16+8) [+ inputs 8] | b', d, uv, s1, maps (4+4+8+4+8) |
/// | advect (SL) | s1, uv (4+8) | s (4) |
/// | MacCormack adds | s1, s2, uv (4+4+8) | s (4) (the backward pass writes s2) |
/// | conservative | s1, uv (4+8) | s (4) |
/// | thermal iteration | h, h, sq [+ inputs] (4+4+8) | sq, h', maps (8+4+16) |
///
/// The flow kernels run once per sub-step (`n` of them per time step on cells of `lx` metres,
/// [`PipeParams::stepping`]), thermal once per time step.
pub fn bytes_per_cell_step(p: &PipeParams, lx: f32, with_inputs: bool) -> f64 {
    let flux = 24.0 + 16.0;
    let water = 36.0 + if with_inputs { 8.0 } else { 0.0 } + 28.0;
    let transport = match p.advection {
        Advection::SemiLagrangian | Advection::Conservative => 16.0,
        Advection::MacCormack => 16.0 + 20.0,
    };
    let thermal = p.thermal.as_ref().map_or(0.0, |t| {
        let per_iter = 16.0 + 28.0 + if with_inputs { 8.0 } else { 0.0 };
        per_iter * t.iterations as f64 * t.iteration_scale(lx) / p.thermal_every.max(1) as f64
    });
    (flux + water + transport) * p.stepping(lx).n as f64 + thermal
}

struct Buffers {
    params: wgpu::Buffer,
    b: [wgpu::Buffer; 2],
    d: wgpu::Buffer,
    s: wgpu::Buffer,
    s1: wgpu::Buffer,
    s2: wgpu::Buffer,
    flux: wgpu::Buffer,
    uv: wgpu::Buffer,
    inputs: wgpu::Buffer,
    maps: wgpu::Buffer,
    books: wgpu::Buffer,
    sq: wgpu::Buffer,
}

/// A pipeline with its bind groups (one per terrain-buffer parity where it matters).
struct Pass {
    pipeline: wgpu::ComputePipeline,
    groups: [wgpu::BindGroup; 2],
}

/// What a snapshot read back (valid until the next step).
struct Cache {
    hm: Heightmap,
    maps: ErosionMaps,
    d: Vec<f32>,
    uv: Vec<[f32; 2]>,
    s: Vec<f32>,
    sums: [f64; SLOTS],
    /// Work done when it was read.
    done: u64,
}

/// The pipe model (with optional interleaved thermal erosion) or thermal erosion alone, on the
/// GPU. Implements [`Simulation`]; one `step()` runs a batch of time steps (see the module doc).
pub struct GpuErosionJob {
    ctx: Arc<GpuContext>,
    model: Model,
    w: usize,
    h: usize,
    cell_size: f32,
    bufs: Buffers,
    flux: Option<Pass>,
    water: Option<Pass>,
    transport: Vec<Pass>,
    th1: Option<Pass>,
    th2: Option<Pass>,
    grid: (u32, u32),
    /// Index of the terrain buffer holding the current heights.
    cur: usize,
    done: u64,
    total: u64,
    /// The thermal parameters (the model's, or the pipe model's interleaved ones) and the cell
    /// size they run on: each step's kernel iterations are [`ThermalParams::kernel_iterations`].
    thermal: Option<ThermalParams>,
    lx: f32,
    thermal_every: u32,
    /// Flow sub-steps per time step ([`crate::core::erosion::pipe::Stepping`]).
    sub_steps: u32,
    batch: u32,
    adaptive: bool,
    volume_before: f64,
    water_in_sum: f64,
    /// The sea's initial fill, booked to [`WaterBudget::sea`] (negative; 0 without a sea).
    sea_fill: f64,
    keep: f32,
    cache: OnceCell<Cache>,
    /// The first GPU failure; the job stops (is done) and keeps the last snapshot it read.
    fault: Option<GpuError>,
    last_good: Option<Cache>,
    /// What the job has to tell the user (a failed readback, the failure that stopped it).
    notes: RefCell<Vec<String>>,
}

impl std::fmt::Debug for GpuErosionJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuErosionJob")
            .field("size", &(self.w, self.h))
            .field("done", &self.done)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl GpuErosionJob {
    /// The pipe model on the GPU. Validates exactly like [`crate::core::erosion::pipe::PipeJob::new`].
    pub fn pipe(
        ctx: Arc<GpuContext>,
        terrain: Heightmap,
        mut params: PipeParams,
        inputs: JobInputs,
    ) -> Result<Self, GpuJobError> {
        let (w, h) = (terrain.width, terrain.height);
        check_terrain(&terrain)?;
        params.check_ranges().map_err(JobError::from)?;
        let lx = params.cell_size.unwrap_or(terrain.cell_size);
        check_param("cell_size", lx as f64, 1.0e-6, 1.0e6, "[1e-6, 1e6] m")?;
        if crate::core::units::Legacy::has_legacy(&params) {
            params.upgrade_units(crate::core::erosion::MapSize::of(&terrain));
        }
        params.validate(w, h, lx)?;
        if let Some(hd) = &inputs.hardness {
            check_hardness(hd, w * h, HardnessRule::NonNegative)?;
        }
        // A steering mask weights the rain (and the sources); a sink mask also scales the
        // erodibility (of the flow and the interleaved thermal), as on the CPU (`erodibility`).
        let mut inputs = inputs;
        if let Some(s) = &inputs.steer {
            s.check(w * h)?;
            if s.sink {
                inputs.hardness = s.erodibility(inputs.hardness.as_deref());
            }
        }
        if let Some(tp) = &params.thermal {
            tp.validate()?;
        }
        Self::build(ctx, terrain, Model::Pipe(params), inputs, lx)
    }

    /// Thermal erosion alone on the GPU. Validates exactly like
    /// [`crate::core::erosion::thermal::ThermalJob::new`].
    pub fn thermal(
        ctx: Arc<GpuContext>,
        terrain: Heightmap,
        params: ThermalParams,
        inputs: JobInputs,
    ) -> Result<Self, GpuJobError> {
        check_terrain(&terrain)?;
        params.validate()?;
        check_param("cell_size", terrain.cell_size as f64, 1.0e-9, 1.0e9, "(0, 1e9] metres")?;
        let mut inputs = inputs;
        if let Some(hd) = &inputs.hardness {
            check_hardness(hd, terrain.len(), HardnessRule::NonNegative)?;
        }
        // A steering mask scales what each node may give up, as on the CPU (`k·w`).
        if let Some(s) = inputs.steer.take() {
            s.check(terrain.len())?;
            inputs.hardness = Some(s.scaled(inputs.hardness.as_deref()));
        }
        let cell = terrain.cell_size;
        Self::build(ctx, terrain, Model::Thermal(params), inputs, cell)
    }

    fn build(
        ctx: Arc<GpuContext>,
        terrain: Heightmap,
        model: Model,
        inputs: JobInputs,
        lx: f32,
    ) -> Result<Self, GpuJobError> {
        let (w, h) = (terrain.width, terrain.height);
        let n = w * h;
        let (gx, gy) = (groups(w as u32, WG), groups(h as u32, WG));
        let g_total = gx as usize * gy as usize;
        let bnd = inputs.boundary;
        let mut gp = GpuParams {
            w: w as u32,
            h: h as u32,
            groups_x: gx,
            groups: g_total as u32,
            edge_l: edge_code(&bnd, Side::Left),
            edge_r: edge_code(&bnd, Side::Right),
            edge_t: edge_code(&bnd, Side::Top),
            edge_b: edge_code(&bnd, Side::Bottom),
            ..Default::default()
        };
        let hardness = inputs.hardness.as_deref();
        // Sink nodes of a steering mask (pipe model; marked in the per-node input below).
        if matches!(model, Model::Pipe(_)) && inputs.steer.as_ref().is_some_and(|s| s.sink) {
            gp.flags |= 32;
        }
        if hardness.is_some() {
            gp.flags |= 1;
        }
        let pipe = matches!(model, Model::Pipe(_));
        let mut water_in: Option<Vec<f32>> = None;
        let mut water_in_sum = 0.0f64;
        let mut keep = 1.0f32;
        let mut init_d: Vec<f32> = Vec::new();
        let mut sea_fill = 0.0f64;
        let thermal_p = match &model {
            Model::Pipe(p) => p.thermal.clone(),
            Model::Thermal(t) => Some(t.clone()),
        };
        if let Some(tp) = &thermal_p {
            tp.check_cells(lx)?;
        }
        let mut sub_steps = 1u32;
        if let Model::Pipe(p) = &model {
            // Every constant is per sub-step, as on the CPU (`Stepping`).
            let st = p.stepping(lx);
            sub_steps = st.n;
            let dt = st.dt;
            gp.kflux = dt * p.pipe_area * p.gravity / p.pipe_length;
            gp.area_dt = lx * lx / dt;
            gp.dt_area = dt / (lx * lx);
            gp.inv_l = 1.0 / lx;
            gp.vmax = st.vmax;
            gp.courant = dt / lx;
            gp.kc = p.capacity;
            gp.ks = st.erosion;
            gp.kd = st.deposition;
            gp.min_tilt = p.min_tilt;
            if p.max_depth > 0.0 {
                gp.flags |= 4;
                gp.inv_max_depth = 1.0 / p.max_depth;
            }
            keep = (1.0 - p.evaporation * dt).max(0.0);
            gp.keep = keep;
            gp.rain_dt = dt * p.rain;
            gp.sea = sea_floor(inputs.sea_level);
            let sea_on = inputs.sea_level.is_some_and(f32::is_finite);
            if sea_on {
                gp.flags |= 8;
            }
            if p.rain_map.is_some() || !p.sources.is_empty() || inputs.steer.is_some() {
                let mut r: Vec<f32> = match &p.rain_map {
                    Some(m) => m.clone(),
                    None => vec![p.rain; n],
                };
                for src in &p.sources {
                    add_source(&mut r, w, h, src, crate::core::units::Sampling::new(lx));
                }
                // A steering mask: the water input of each node times its weight, as on the CPU.
                if let Some(s) = &inputs.steer {
                    r.iter_mut().zip(&s.weights).for_each(|(v, k)| *v *= k);
                }
                r.iter_mut().for_each(|v| *v *= dt);
                gp.flags |= 2;
                water_in = Some(r);
            }
            water_in_sum = match &water_in {
                Some(r) => r.iter().map(|&v| v as f64).sum(),
                None => gp.rain_dt as f64 * n as f64,
            };
            init_d = match &water_in {
                Some(r) => r.clone(),
                None => vec![gp.rain_dt; n],
            };
            sea_fill = fill_sea(&terrain.data, &mut init_d, gp.sea, sea_on);
        }
        if let Some(tp) = &thermal_p {
            let (tc, td, inv) = thermal_consts(tp, lx, hardness);
            gp.t_card = tc;
            gp.t_diag = td;
            gp.th_rate = tp.rate;
            gp.th_inv_amax = inv;
        }
        // Thermal alone takes the sea's underwater talus, and so does the pipe model's
        // interleaved thermal step unless `thermal_sea` is off (as on the CPU). The pipe's sea
        // floor is the same level.
        let sea_thermal = match &model {
            Model::Thermal(tp) => Some(tp),
            Model::Pipe(p) if p.thermal_sea => p.thermal.as_ref(),
            Model::Pipe(_) => None,
        };
        if let (Some(tp), Some(sea)) = (sea_thermal, inputs.sea_level.filter(|s| s.is_finite())) {
            let k = ThermalKernel::new(tp, w, h, lx, bnd, None)?.with_sea(tp, Some(sea), lx);
            (gp.sea, gp.w_card, gp.w_diag) = k.underwater();
            gp.flags |= 16;
        }

        // Buffers (sizes checked against the limits first: a map too large is a typed error).
        let nb = n as u64;
        let small = 16u64;
        let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
        if gx.max(gy) > max_groups {
            return Err(GpuError::TooLarge {
                what: "map side (workgroups per dimension)".into(),
                bytes: gx.max(gy) as u64,
                limit: max_groups as u64,
            }
            .into());
        }
        ctx.check_fits("flux buffer", nb * 16)?;
        let params = ctx.uniform_buffer("pipe params", &gp)?;
        let b0 = ctx.storage_buffer_init("terrain 0", &terrain.data)?;
        let b1 = ctx.storage_buffer("terrain 1", nb * 4)?;
        let sz = |on: bool, per: u64| if on { nb * per } else { small };
        let d = if pipe { ctx.storage_buffer_init("water", &init_d)? } else { ctx.storage_buffer("water", small)? };
        let s = ctx.storage_buffer("sediment", sz(pipe, 4))?;
        let s1 = ctx.storage_buffer("sediment s1", sz(pipe, 4))?;
        let mac = matches!(&model, Model::Pipe(p) if p.advection == Advection::MacCormack);
        let s2 = ctx.storage_buffer("sediment s2", sz(mac, 4))?;
        let flux = ctx.storage_buffer("flux", sz(pipe, 16))?;
        let uv = ctx.storage_buffer("velocity", sz(pipe, 8))?;
        // A sink node (a sink mask's zero) is marked by a water input of −1 (real inputs are ≥ 0).
        let sinks = inputs.steer.as_ref().filter(|s| s.sink && pipe).map(|s| &s.weights);
        let inputs_buf = if hardness.is_some() || water_in.is_some() {
            let v: Vec<[f32; 2]> = (0..n)
                .map(|i| {
                    let r = water_in.as_ref().map_or(0.0, |r| r[i]);
                    let r = if sinks.is_some_and(|k| k[i] == 0.0) { -1.0 } else { r };
                    [hardness.map_or(1.0, |hd| hd[i]), r]
                })
                .collect();
            ctx.storage_buffer_init("inputs", &v)?
        } else {
            ctx.storage_buffer("inputs", small)?
        };
        let maps = ctx.storage_buffer("erosion maps", nb * 8)?;
        let books = ctx.storage_buffer("books", (SLOTS * g_total * 8) as u64)?;
        let sq = ctx.storage_buffer("thermal s,q", sz(thermal_p.is_some(), 8))?;
        let bufs = Buffers { params, b: [b0, b1], d, s, s1, s2, flux, uv, inputs: inputs_buf, maps, books, sq };

        // Pipelines and bind groups.
        let bg =
            |pl: &wgpu::ComputePipeline, label: &str, entries: &[&wgpu::Buffer]| -> Result<wgpu::BindGroup, GpuError> {
                ctx.bind_buffers(label, &pl.get_bind_group_layout(0), entries)
            };
        let module = |label: &str, src: &str| ctx.shader(label, &format!("{COMMON}\n{src}"));
        let bb = &bufs;
        let (mut flux_p, mut water_p, mut th1, mut th2) = (None, None, None, None);
        let mut transport = Vec::new();
        if let Model::Pipe(p) = &model {
            let m = module("pipe_flux", FLUX)?;
            let pl = ctx.compute_pipeline("pipe_flux", &m, "main")?;
            let g = [
                bg(&pl, "flux 0", &[&bb.params, &bb.b[0], &bb.d, &bb.flux])?,
                bg(&pl, "flux 1", &[&bb.params, &bb.b[1], &bb.d, &bb.flux])?,
            ];
            flux_p = Some(Pass { pipeline: pl, groups: g });
            let m = module("pipe_water", WATER)?;
            let pl = ctx.compute_pipeline("pipe_water", &m, "main")?;
            let wb = |c: usize| {
                [
                    &bb.params,
                    &bb.b[c],
                    &bb.b[1 - c],
                    &bb.d,
                    &bb.s,
                    &bb.flux,
                    &bb.uv,
                    &bb.s1,
                    &bb.inputs,
                    &bb.maps,
                    &bb.books,
                ]
            };
            let g = [bg(&pl, "water 0", &wb(0))?, bg(&pl, "water 1", &wb(1))?];
            water_p = Some(Pass { pipeline: pl, groups: g });
            match p.advection {
                Advection::SemiLagrangian => {
                    let m = module("pipe_advect", ADVECT)?;
                    let pl = ctx.compute_pipeline("pipe_advect", &m, "main")?;
                    let e = [&bb.params, &bb.s1, &bb.uv, &bb.s, &bb.books];
                    let g = [bg(&pl, "advect", &e)?, bg(&pl, "advect", &e)?];
                    transport.push(Pass { pipeline: pl, groups: g });
                }
                Advection::MacCormack => {
                    let m = module("pipe_advect", ADVECT)?;
                    let pl = ctx.compute_pipeline_with(
                        "pipe_advect (MacCormack backward)",
                        &m,
                        "main",
                        &[("BOOK_SUM", 0.0)],
                    )?;
                    let e = [&bb.params, &bb.s1, &bb.uv, &bb.s2, &bb.books];
                    let g = [bg(&pl, "advect back", &e)?, bg(&pl, "advect back", &e)?];
                    transport.push(Pass { pipeline: pl, groups: g });
                    let m = module("pipe_maccormack", MACCORMACK)?;
                    let pl = ctx.compute_pipeline("pipe_maccormack", &m, "main")?;
                    let e = [&bb.params, &bb.s1, &bb.s2, &bb.uv, &bb.s, &bb.books];
                    let g = [bg(&pl, "maccormack", &e)?, bg(&pl, "maccormack", &e)?];
                    transport.push(Pass { pipeline: pl, groups: g });
                }
                Advection::Conservative => {
                    let m = module("pipe_remap", REMAP)?;
                    let pl = ctx.compute_pipeline("pipe_remap", &m, "main")?;
                    let e = [&bb.params, &bb.s1, &bb.uv, &bb.s, &bb.books];
                    let g = [bg(&pl, "remap", &e)?, bg(&pl, "remap", &e)?];
                    transport.push(Pass { pipeline: pl, groups: g });
                }
            }
        }
        if thermal_p.is_some() {
            let m = module("thermal_pass1", THERMAL1)?;
            let pl = ctx.compute_pipeline("thermal_pass1", &m, "main")?;
            let g = [
                bg(&pl, "thermal1 0", &[&bb.params, &bb.b[0], &bb.inputs, &bb.sq])?,
                bg(&pl, "thermal1 1", &[&bb.params, &bb.b[1], &bb.inputs, &bb.sq])?,
            ];
            th1 = Some(Pass { pipeline: pl, groups: g });
            let m = module("thermal_pass2", THERMAL2)?;
            let pl = ctx.compute_pipeline("thermal_pass2", &m, "main")?;
            let e = |c: usize| [&bb.params, &bb.b[c], &bb.sq, &bb.b[1 - c], &bb.maps, &bb.books];
            let g = [bg(&pl, "thermal2 0", &e(0))?, bg(&pl, "thermal2 1", &e(1))?];
            th2 = Some(Pass { pipeline: pl, groups: g });
        }
        ctx.check()?;
        let (total, thermal_every) = match &model {
            Model::Pipe(p) => (p.steps as u64, p.thermal_every.max(1)),
            Model::Thermal(t) => (t.iterations as u64, 1),
        };
        let volume_before = terrain.sum();
        Ok(Self {
            ctx,
            model,
            w,
            h,
            cell_size: terrain.cell_size,
            bufs,
            flux: flux_p,
            water: water_p,
            transport,
            th1,
            th2,
            grid: (gx, gy),
            cur: 0,
            done: 0,
            total,
            thermal: thermal_p,
            lx,
            thermal_every,
            sub_steps,
            batch: 1,
            adaptive: true,
            volume_before,
            water_in_sum,
            sea_fill,
            keep,
            cache: OnceCell::new(),
            fault: None,
            last_good: None,
            notes: RefCell::new(Vec::new()),
        })
    }

    /// Runs exactly `n` time steps per [`Simulation::step`] call (the default adapts the batch
    /// to about 30 ms of GPU work). Results do not depend on the batch size.
    pub fn set_batch(&mut self, n: u32) {
        self.batch = n.clamp(1, BATCH_MAX);
        self.adaptive = false;
    }

    /// The GPU failure that stopped the job, if any (the job then reports itself done and keeps
    /// the last state it read back).
    pub fn fault(&self) -> Option<&GpuError> {
        self.fault.as_ref()
    }

    /// Work done at the state [`Simulation::heightmap`] shows: after a fault, the last state
    /// read back before it.
    pub fn snapshot_done(&self) -> u64 {
        if self.fault.is_some() { self.last_good.as_ref().map_or(0, |c| c.done) } else { self.done }
    }

    /// The adapter the job runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The water books so far (pipe model; zeros for thermal alone).
    pub fn water_budget(&self) -> WaterBudget {
        let Some(c) = self.cached() else { return WaterBudget::default() };
        if !matches!(self.model, Model::Pipe(_)) {
            return WaterBudget::default();
        }
        WaterBudget {
            rain: self.water_in_sum * (1 + self.done * self.sub_steps as u64) as f64,
            evaporated: c.sums[SLOT_D2] * (1.0 - self.keep as f64),
            drained: c.sums[SLOT_DRAINED],
            sea: self.sea_fill + c.sums[SLOT_SEA],
            stored: c.d.iter().map(|&v| v as f64).sum(),
        }
    }

    /// Where a time step's GPU time goes: each kernel of the step (pipe model: flux, water,
    /// the transport passes, then thermal's two passes where they run) timed alone over `reps`
    /// dispatches ([`GpuContext::time_dispatches`]), as (kernel, seconds per dispatch,
    /// dispatches per time step). For the bench only: the job's state is not fit to continue
    /// afterwards.
    pub fn kernel_times(&mut self, reps: u32) -> Result<Vec<(&'static str, f64, f64)>, GpuError> {
        // Kernel iterations per time step, on average.
        let per_step_thermal = self.thermal.as_ref().map_or(0.0, |t| {
            let per = if matches!(self.model, Model::Thermal(_)) { 1.0 } else { t.iterations as f64 };
            per * t.iteration_scale(self.lx) / self.thermal_every.max(1) as f64
        });
        let mut list: Vec<(&'static str, &Pass, f64)> = Vec::new();
        let sub = self.sub_steps as f64;
        if let (Some(f), Some(w)) = (&self.flux, &self.water) {
            list.push(("flux", f, sub));
            list.push(("water", w, sub));
        }
        const NAMES: [&str; 3] = ["transport 1", "transport 2", "transport 3"];
        for (t, name) in self.transport.iter().zip(NAMES) {
            list.push((name, t, sub));
        }
        if let (Some(t1), Some(t2)) = (&self.th1, &self.th2)
            && per_step_thermal > 0.0
        {
            list.push(("thermal pass 1", t1, per_step_thermal));
            list.push(("thermal pass 2", t2, per_step_thermal));
        }
        list.iter()
            .map(|&(name, p, per)| {
                Ok((name, self.ctx.time_dispatches(&p.pipeline, &p.groups[0], self.grid, reps)?, per))
            })
            .collect()
    }

    /// Records `k` time steps into one command buffer and submits it.
    fn run_steps(&mut self, k: u32) -> Result<(), GpuError> {
        let (gx, gy) = self.grid;
        let mut enc =
            self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("erosion steps") });
        {
            let mut cp =
                enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("erosion"), timestamp_writes: None });
            let mut dispatch = |p: &Pass, parity: usize| {
                cp.set_pipeline(&p.pipeline);
                cp.set_bind_group(0, &p.groups[parity], &[]);
                cp.dispatch_workgroups(gx, gy, 1);
            };
            for _ in 0..k {
                match &self.model {
                    Model::Pipe(_) => {
                        if let (Some(f), Some(wt)) = (&self.flux, &self.water) {
                            for _ in 0..self.sub_steps {
                                dispatch(f, self.cur);
                                dispatch(wt, self.cur);
                                self.cur = 1 - self.cur;
                                for t in &self.transport {
                                    dispatch(t, 0);
                                }
                            }
                        }
                        self.done += 1;
                        let every = self.thermal_every.max(1) as u64;
                        if let (Some(t1), Some(t2), Some(tp)) = (&self.th1, &self.th2, &self.thermal)
                            && self.done.is_multiple_of(every)
                        {
                            for _ in 0..tp.kernel_iterations(self.lx, self.done / every - 1, tp.iterations as u64) {
                                dispatch(t1, self.cur);
                                dispatch(t2, self.cur);
                                self.cur = 1 - self.cur;
                            }
                        }
                    }
                    Model::Thermal(tp) => {
                        if let (Some(t1), Some(t2)) = (&self.th1, &self.th2) {
                            for _ in 0..tp.kernel_iterations(self.lx, self.done, 1) {
                                dispatch(t1, self.cur);
                                dispatch(t2, self.cur);
                                self.cur = 1 - self.cur;
                            }
                        }
                        self.done += 1;
                    }
                }
            }
        }
        self.ctx.queue().submit([enc.finish()]);
        self.ctx.wait()
    }

    fn read_back(&self) -> Result<Cache, GpuError> {
        let n = self.w * self.h;
        let ctx = &self.ctx;
        let data = ctx.read_f32(&self.bufs.b[self.cur], 0, n)?;
        let hm = Heightmap { width: self.w, height: self.h, cell_size: self.cell_size, data };
        let m = ctx.read_f32(&self.bufs.maps, 0, 2 * n)?;
        let maps = ErosionMaps {
            eroded: m.iter().step_by(2).copied().collect(),
            deposited: m.iter().skip(1).step_by(2).copied().collect(),
        };
        let (d, uv, s) = if matches!(self.model, Model::Pipe(_)) {
            let uvf = ctx.read_f32(&self.bufs.uv, 0, 2 * n)?;
            (
                ctx.read_f32(&self.bufs.d, 0, n)?,
                uvf.chunks_exact(2).map(|c| [c[0], c[1]]).collect(),
                ctx.read_f32(&self.bufs.s, 0, n)?,
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        let g = (self.grid.0 * self.grid.1) as usize;
        let raw = ctx.read_f32(&self.bufs.books, 0, SLOTS * g * 2)?;
        let mut sums = [0.0f64; SLOTS];
        for (k, sum) in sums.iter_mut().enumerate() {
            *sum = raw[k * g * 2..(k + 1) * g * 2].chunks_exact(2).map(|p| p[0] as f64 + p[1] as f64).sum();
        }
        Ok(Cache { hm, maps, d, uv, s, sums, done: self.done })
    }

    /// The snapshot, read back on first use after a step; after a fault, the last good one.
    fn cached(&self) -> Option<&Cache> {
        if self.fault.is_some() {
            return self.last_good.as_ref();
        }
        if self.cache.get().is_none() {
            match self.read_back() {
                Ok(c) => {
                    let _ = self.cache.set(c);
                }
                Err(e) => {
                    self.note(format!("GPU readback failed: {e}"));
                    return self.last_good.as_ref();
                }
            }
        }
        self.cache.get()
    }

    /// Records a note for the user (a repeat of the newest one is dropped: a readback that keeps
    /// failing is said once).
    fn note(&self, text: String) {
        let mut notes = self.notes.borrow_mut();
        if notes.last() != Some(&text) {
            notes.push(text);
        }
    }

    fn fail(&mut self, e: GpuError) {
        self.note(format!("GPU erosion stopped: {e}"));
        if self.fault.is_none() {
            self.fault = Some(e);
        }
    }
}

impl ResilientGpuJob<GpuErosionJob> {
    /// Wraps a pipe or thermal GPU job in the GPU models' fallback; `params`/`inputs` are what it
    /// was built from (for the CPU continuation).
    pub fn new(gpu: GpuErosionJob, params: crate::core::erosion::ModelParams, inputs: JobInputs) -> Self {
        Self::wrap(gpu, params, inputs)
    }
}

impl GpuJob for GpuErosionJob {
    fn fault(&self) -> Option<&GpuError> {
        self.fault.as_ref()
    }

    /// Marks the job as failed, as a lost device would, keeping the state read back now.
    fn inject_fault(&mut self, e: GpuError) {
        let now = self.cache.take().or_else(|| self.read_back().ok());
        if now.is_some() {
            self.last_good = now;
        }
        self.fail(e);
    }

    /// The last snapshot read back before the failure (the water and sediment it carried are not
    /// handed on: the CPU part starts them afresh).
    fn hand_over(&mut self) -> Handover {
        Handover {
            heightmap: self.heightmap().clone(),
            done: self.snapshot_done(),
            ledger: self.ledger(),
            maps: self.maps().clone(),
            flow: None,
            flow_volume: None,
        }
    }
}

fn check_terrain(t: &Heightmap) -> Result<(), JobError> {
    if t.width == 0 || t.height == 0 || t.data.len() != t.width * t.height {
        return Err(JobError::BadParam {
            name: "heightmap data",
            value: t.data.len() as f64,
            range: "width × height values",
        });
    }
    if !t.all_finite() {
        return Err(JobError::NonFinite);
    }
    Ok(())
}

/// An empty snapshot for a job that failed before its first readback.
fn empty_hm() -> &'static Heightmap {
    static EMPTY: std::sync::OnceLock<Heightmap> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Heightmap { width: 0, height: 0, cell_size: 1.0, data: Vec::new() })
}

fn empty_maps() -> &'static ErosionMaps {
    static EMPTY: std::sync::OnceLock<ErosionMaps> = std::sync::OnceLock::new();
    EMPTY.get_or_init(ErosionMaps::default)
}

impl Simulation for GpuErosionJob {
    fn step(&mut self) {
        if self.done >= self.total || self.fault.is_some() {
            return;
        }
        // Keep the last good snapshot so a failure mid-run leaves a valid map behind.
        if let Some(c) = self.cache.take() {
            self.last_good = Some(c);
        } else if self.last_good.is_none() {
            match self.read_back() {
                Ok(c) => self.last_good = Some(c),
                Err(e) => return self.fail(e),
            }
        }
        let k = (self.batch as u64).min(self.total - self.done) as u32;
        let t0 = Instant::now();
        if let Err(e) = self.run_steps(k) {
            return self.fail(e);
        }
        if self.adaptive {
            let el = t0.elapsed().as_secs_f64().max(1e-6);
            let want = (k as f64 * BATCH_TARGET.as_secs_f64() / el).clamp(1.0, BATCH_MAX as f64);
            // Grow at most ×2 per call so one fast batch does not overshoot.
            self.batch = (want as u32).min(self.batch.saturating_mul(2)).max(1);
        }
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.total }
    }

    fn is_done(&self) -> bool {
        self.fault.is_some() || self.done >= self.total
    }

    fn notes(&self) -> Vec<String> {
        self.notes.borrow().clone()
    }

    fn heightmap(&self) -> &Heightmap {
        self.cached().map_or(empty_hm(), |c| &c.hm)
    }

    fn ledger(&self) -> Ledger {
        let Some(c) = self.cached() else { return Ledger { volume_before: self.volume_before, ..Default::default() } };
        let s = &c.sums;
        let pipe = matches!(self.model, Model::Pipe(_));
        let suspended = if pipe { c.s.iter().map(|&v| v as f64).sum() } else { 0.0 };
        Ledger {
            eroded: s[SLOT_ERODED],
            deposited: s[SLOT_DEPOSITED],
            lost_at_border: s[SLOT_LOST] + s[SLOT_TH_LOST],
            clamped: if pipe { s[SLOT_SSUM] - s[SLOT_S1] + s[SLOT_LOST] } else { 0.0 },
            uplift: 0.0,
            suspended,
            volume_before: self.volume_before,
            volume_after: c.hm.sum(),
        }
    }

    fn maps(&self) -> &ErosionMaps {
        self.cached().map_or(empty_maps(), |c| &c.maps)
    }

    fn fields(&self) -> Fields {
        match (self.cached(), &self.model) {
            (Some(c), Model::Pipe(_)) => Fields {
                water: Some(c.d.clone()),
                velocity: Some(c.uv.clone()),
                sediment: Some(c.s.clone()),
                flow: None,
                flow_volume: None,
            },
            _ => Fields::default(),
        }
    }

    /// Reads the current heights, applies the edit (rebasing `volume_before` like the CPU
    /// models) and uploads the result.
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if self.fault.is_some() {
            return;
        }
        if self.cached().is_none() {
            return;
        }
        let Some(mut c) = self.cache.take() else { return };
        if apply_edit(&mut c.hm, &mut self.volume_before, f) {
            self.ctx.write(&self.bufs.b[self.cur], 0, &c.hm.data);
            if let Err(e) = self.ctx.wait() {
                self.fail(e);
                return;
            }
        }
        let _ = self.cache.set(c);
    }
}

#[cfg(test)]
mod tests;
