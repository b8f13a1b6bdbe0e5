//! Particle (droplet) erosion on the GPU — SPEC §2a, seed 000 (after H. T. Beyer, *Implementation
//! of a method for hydraulic erosion*, TU München 2015), deterministic whatever order the GPU runs
//! its threads in. Kernel: `shaders/gpu/droplet.wgsl`. The CPU model
//! [`crate::core::erosion::droplet`] is the reference: the same [`DropletParams`] with the same
//! meaning, converted to the same grid units ([`DropletParams::in_grid_units`]: droplet count,
//! brush radius in nodes, step limit, smallest drop per step), the same steps, the same random
//! streams.
//!
//! ## The droplet (one invocation each)
//! A droplet with index `i` draws from `SplitMix64::stream(seed, i)` (64-bit arithmetic emulated
//! with 32-bit words in WGSL; the spawn position is the CPU's, bit for bit), starts at a random
//! position `p` with water `W = initial_water`, speed `v = initial_speed`, sediment `s = 0`, and
//! repeats at most `L` times (the step limit of `max_path_m`), exactly as the CPU model:
//!
//! 1. bilinear height and gradient at `p`, `g = ((h10−h00)(1−v) + (h11−h01)v, (h01−h00)(1−u) + (h11−h10)u)`;
//! 2. `d = d·inertia − g·(1 − inertia)`, a random unit `d` when `|d| < 10⁻⁶`, `d /= |d|`;
//! 3. `p' = p + d` (one cell); a drain edge ends the droplet and its sediment is `lost_at_border`,
//!    a wall reflects it, a wrapped axis re-enters on the other side;
//! 4. `Δh = h(p') − h(p)`;
//! 5. uphill: deposit `min(s, Δh)`; downhill: `c = max(−Δh, min_slope)·v·W·capacity`, deposit
//!    `(s − c)·deposition` when `s > c`, else erode `min((c − s)·erosion, −Δh)`;
//! 6. deposits go bilinearly to the 4 nodes around `p`; erosion to the disc brush of radius `r` nodes
//!    (weights `max(0, r − |p − n|)/Σ`, the CPU's 4×4 sub-cell brushes, renormalised where an edge
//!    clips them), node `n` giving `amount·w(n)·hardness(n)` but never going below the floor
//!    (`min_height`, or the input's minimum with `floor_at_input_min`);
//! 7. `v = √max(0, v² − Δh·g)`, `W ← W·(1 − evaporation)`; a droplet at `L` steps or whose
//!    water fell below 10⁻²⁰ of its start drops its remaining sediment where it stands.
//!
//! ## Scheme: droplets in lockstep
//! The droplets of a batch (`in_flight` of them, [`GpuDropletOptions`]) advance together, one
//! step per pair of dispatches: `walk` (one invocation per droplet: one step, reading the heights
//! as they were after the previous step) and `apply` (one invocation per droplet again: each node
//! its step touched is claimed with `atomicExchange` of the step's stamp, and the one claimer
//! folds the node's whole accumulated change into the terrain). So every droplet sees its own
//! earlier changes and everyone's from earlier steps, as on the CPU; only the steps of one turn
//! are concurrent — the CPU's lockstep lanes, with `in_flight` lanes instead of 8. The state of a
//! droplet (80 bytes) lives in a buffer between steps; a batch takes `L + 1` turns (`L` the step limit),
//! encoded 256 turns per submission, and stops early once every droplet has ended.
//!
//! A first version let each droplet run its whole life in one dispatch on the heights of the
//! dispatch start. It is not usable: a droplet that never sees its own deposits keeps filling
//! the same pit while it oscillates across it (one droplet on a 64² hill raised a node by 1.8 m
//! where the CPU's rose 0.5 m, and a few dozen droplets later heights ran away to hundreds of
//! metres).
//!
//! Measured on 256² (`tests/gpu_droplet.rs`, 16 000 droplets), eroded volume against the CPU's
//! classic serial order: +0.1 % with 128 in flight, +0.5 % with 512, +2.0 % with 1024 (the
//! default there), +5.7 % with 2048. (The CPU's
//! parallel tile mode eroded +92 % on the same run: it is the serial order both are held to.)
//!
//! ## Fixed-point books (why the result does not depend on thread order)
//! Every change is an integer number of *height units* `u = 2^(e−31)` metres, `2^e ≤ max|h| <
//! 2^(e+1)` of the terrain (at least `2^−20`; re-chosen on each edit): 256 units per f32 ulp of the
//! highest node, so the quantisation is far below what an f32 height can show. Per node and
//! step, eroded and deposited units are summed in **64-bit** accumulators built from two
//! `u32` words with `atomicAdd` (the low word's wrap carried into the high word; each wrapping
//! add carries exactly once, so the sum is exact in any order). The droplet's sediment is the
//! same kind of integer: it picks up exactly the units the nodes lost, and a deposit of `D`
//! units is split over the four nodes so the parts sum to `D` exactly (the heaviest node takes
//! the rounding remainder). Then `apply` adds each touched node's `deposited − eroded` to
//! the authoritative **fixed-point heights** (i64 units) and rewrites the f32 view the next step
//! reads. Integer sums are associative, so two runs give the same bits, and the terrain books
//! close exactly in units: `Σ Δh = deposited − eroded` (+ the guard's lift, see below) and
//! `eroded = deposited + lost_at_border` after every step. The f32 heightmap handed out rounds
//! each node once (< ½ ulp), which is all `Ledger::terrain_error` can see.
//!
//! **Overflow.** One contribution is at most `2^56` units (`f32_u64` caps it; that is `2^25`
//! times the highest node, which no erosion step — bounded by the local `Δh` — or deposit —
//! bounded by the droplet's sediment — comes near). A node's 64-bit accumulator overflows after
//! `2^64` units, i.e. `2^33·max|h|` moved through one node in one step — each droplet brings at most its
//! own step's erosion (≤ the local `Δh`) or sediment, so a node would need `2^33` droplets' worth
//! of the highest node's height in one step). Heights live in i64 units: `±2^63` units is
//! `±2^32·max|h|`. The visit counter is 64-bit too; the water-volume map uses units of
//! `2^−31`·(the power of two at or below `initial_water`).
//!
//! **The floor guard.** A droplet limits its take from a node to `h − floor` using the
//! height after the previous step; several droplets of one step together can overshoot it. `apply` then holds the node
//! at `min(old, floor)` (as the CPU's blur mode does) and books the lift as `clamped`, so
//! `eroded + clamped = deposited + lost_at_border` still closes.
//!
//! ## Flow maps
//! `Fields::flow` counts droplet visits per node (the nearest node after each move, and the spawn
//! node), `Fields::flow_volume` the water carried across it — the CPU's definitions.
//!
//! ## Failure
//! Building the job returns a [`GpuError`] (no adapter, shader, memory, size) for the caller to
//! show and fall back from. A fault *during* the run (device lost) is caught after the step that
//! met it: [`GpuDropletJob`] is the GPU part ([`GpuDropletCore`]) in the GPU models' one fallback
//! wrapper ([`super::fallback`]), which continues on the CPU model from the last state read back
//! (the remaining droplets, the same erosion floor, the seed mixed with the progress; see
//! [`GpuJob::adjust_continuation`]), so a job never ends silently or takes its caller down; the
//! note saying so is one of the job's [`Simulation::notes`].

use std::sync::{Arc, OnceLock};

use crate::core::erosion::droplet::{DropletGrid, DropletParams};
use crate::core::erosion::hardness::{HardnessRule, check_hardness};
use crate::core::erosion::setup::particle_grid;
use crate::core::erosion::{
    Boundary, EdgeMode, ErosionMaps, Fields, JobError, JobInputs, Ledger, MapSize, ModelParams, Progress, Side,
    Simulation,
};
use crate::core::heightmap::Heightmap;

use super::context::{GpuContext, GpuError};
use super::fallback::{GpuJob, Handover, ResilientGpuJob};

/// The WGSL source, embedded so the binary works anywhere.
pub const SHADER: &str = include_str!("../../shaders/gpu/droplet.wgsl");

/// Threads per workgroup of `walk` and `apply` (must match their `@workgroup_size`).
const WG: u32 = 64;
/// Bytes of one droplet's state between steps (the WGSL `Drop` struct).
const DROP_BYTES: u64 = 80;
/// Steps encoded per submission; between two, the host checks whether any droplet is still alive.
const STEPS_PER_SUBMIT: u32 = 256;
/// Sub-cell brush positions per axis (as the CPU model).
const SUB: usize = 4;
/// Words per node in the step accumulators (eroded, deposited) and in the flow totals (visits,
/// water volume): two u64 each.
const ACC_WORDS: u64 = 4;
/// Words of the run's book counters: eroded, deposited, lost, lifted, droplets ended (u64 each).
const BOOK_WORDS: usize = 10;

super::uniform::wgsl_uniform! {
    /// The uniform block of `walk` and `apply` (the WGSL `Params` struct of `droplet.wgsl`; the
    /// layout is checked against it by `tests::the_uniform_block_matches_the_wgsl`). Set whole when
    /// the job is built (`fill_block`); the unit fields change on an edit (`set_unit`) and the
    /// batch fields (`first_*`, `count`, `row`, `stamp_base`) per batch.
    struct DropletUniform {
        w: u32,
        h: u32,
        wrap_x: u32,
        wrap_y: u32,
        /// 1 = drain, 0 = wall (reflect); ignored on a wrapped axis.
        drain_left: u32,
        drain_right: u32,
        drain_top: u32,
        drain_bottom: u32,
        span_x: f32,
        span_y: f32,
        inertia: f32,
        min_slope: f32,
        capacity: f32,
        deposition: f32,
        erosion: f32,
        gravity: f32,
        /// `1 − evaporation`.
        keep_water: f32,
        /// Water below which a droplet ends: `max(initial_water · 10⁻²⁰, 10⁻³⁰)`.
        min_water: f32,
        initial_water: f32,
        initial_speed: f32,
        max_life: u32,
        /// Erosion floor (f32 heights; 0 without one) and `guard` = 1 when there is one.
        floor: f32,
        guard: u32,
        has_hard: u32,
        /// The floor in height units (i64 as lo, hi words).
        floor_lo: u32,
        floor_hi: u32,
        /// Height unit = 2^k metres: `inv_unit` = 1/unit, `unit`.
        inv_unit: f32,
        unit: f32,
        /// Water unit of the flow-volume map.
        inv_wunit: f32,
        wunit: f32,
        seed_lo: u32,
        seed_hi: u32,
        /// Index of the batch's first droplet (u64 as lo, hi) and the droplets in the batch.
        first_lo: u32,
        first_hi: u32,
        count: u32,
        /// Brush: `ceil(radius)`, and taps per sub-cell variant.
        reach: u32,
        taps: u32,
        /// Threads per row of the 2-D dispatch grid.
        row: u32,
        /// Claim stamp of the batch's step 0.
        stamp_base: u32,
        _pad: u32,
    }
}

/// Tuning of the GPU droplet job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuDropletOptions {
    /// Droplets advancing in lockstep (each step of all of them reads the heights after the
    /// previous step). `None`: one per 64 nodes, at least 64, at most 2²⁰ — on 256² this erodes
    /// within 1–2 % of the CPU's classic serial order (`tests/gpu_droplet.rs`); more in flight
    /// fill a big GPU better but drift (+6 % eroded at one per 32 nodes).
    pub in_flight: Option<u32>,
}

/// Why a GPU droplet job could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum GpuDropletError {
    /// The parameters, terrain or hardness map are invalid (the CPU model would refuse them too).
    #[error(transparent)]
    Job(#[from] JobError),
    /// The GPU could not take the job; the caller should fall back to the CPU model.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// The exponent `k` of the height unit `2^k` for a terrain whose largest |height| is `max_abs`.
fn unit_exp(max_abs: f32) -> i32 {
    let m = if max_abs.is_finite() { max_abs.max(1.0 / (1 << 20) as f32) } else { 1.0 };
    let e = ((m.to_bits() >> 23) & 0xff) as i32 - 127;
    e - 31
}

/// `2^k` as f32 (k within the normal range).
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127).clamp(1, 254) as u32) << 23)
}

/// The CPU model's brushes: for each of the 4×4 sub-cell centres, the taps `(dx, dy, w)` with
/// `w = max(0, r − |c − n|)` normalised to 1 (f64, then f32), each variant padded with zero taps
/// to the longest. Returns the taps (variant-major) and the padded length.
fn brush_taps(radius: f32) -> (Vec<[f32; 4]>, u32) {
    let variants: Vec<Vec<[f32; 4]>> = crate::core::erosion::droplet::brush_sub_taps(radius)
        .into_iter()
        .map(|v| v.into_iter().map(|(dx, dy, w)| [dx as f32, dy as f32, w, 0.0]).collect())
        .collect();
    let taps = variants.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = Vec::with_capacity(taps * SUB * SUB);
    for v in variants {
        let n = v.len();
        out.extend(v);
        out.extend(std::iter::repeat_n([0.0f32; 4], taps - n));
    }
    (out, taps as u32)
}

/// A 2-D grid of workgroups covering `threads` threads of `size` per group (a dimension may hold
/// at most 65 535 groups): `(groups_x, groups_y, threads per row)`.
fn grid(threads: u32, size: u32) -> (u32, u32, u32) {
    let groups = threads.div_ceil(size).max(1);
    let gx = groups.min(65_535);
    (gx, groups.div_ceil(gx), gx * size)
}

fn entry(binding: u32, buf: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource: buf.as_entire_binding() }
}

/// The GPU side of a job: buffers, pipelines, bind groups.
struct Device {
    ctx: Arc<GpuContext>,
    params: wgpu::Buffer,
    hf: wgpu::Buffer,
    hq: wgpu::Buffer,
    /// Held only through the bind groups.
    _acc: wgpu::Buffer,
    books: wgpu::Buffer,
    maps: wgpu::Buffer,
    flow: wgpu::Buffer,
    drops: wgpu::Buffer,
    claim: wgpu::Buffer,
    walk: wgpu::ComputePipeline,
    apply: wgpu::ComputePipeline,
    walk_bind: wgpu::BindGroup,
    apply_bind: wgpu::BindGroup,
}

/// Host copies read back from the GPU, valid until the next step or edit.
#[derive(Default)]
struct Cache {
    hm: OnceLock<Heightmap>,
    /// Per node: eroded, deposited, visits, water volume.
    maps: OnceLock<Vec<[f32; 4]>>,
    erosion_maps: OnceLock<ErosionMaps>,
    books: OnceLock<[u64; 5]>,
}

/// A droplet-erosion job on the GPU that goes on on the CPU if the GPU fails mid-run (see the
/// module doc): what the GPU backend runs.
pub type GpuDropletJob = ResilientGpuJob<GpuDropletCore>;

impl GpuDropletJob {
    /// Prepares a job on `ctx`. Refuses what the CPU model refuses ([`JobError`]) and fails with
    /// a [`GpuError`] when the GPU cannot hold or compile it.
    pub fn new(
        ctx: Arc<GpuContext>,
        terrain: Heightmap,
        params: DropletParams,
        inputs: JobInputs,
        opts: GpuDropletOptions,
    ) -> Result<Self, GpuDropletError> {
        let mut params = params;
        // Version-1 values are for this terrain; converted here so the CPU continuation's
        // parameters hold none.
        if crate::core::units::Legacy::has_legacy(&params) {
            params.upgrade_units(MapSize::of(&terrain));
        }
        let model = ModelParams::Droplet(params.clone());
        let core = GpuDropletCore::new(ctx, terrain, params, &inputs, opts)?;
        Ok(Self::wrap(core, model, inputs))
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &DropletParams {
        &self.gpu().params
    }

    /// The parameters in the grid units of the job's map.
    pub fn grid_params(&self) -> DropletGrid {
        self.gpu().grid
    }

    /// Droplets advancing in lockstep (per batch).
    pub fn in_flight(&self) -> u32 {
        self.gpu().in_flight
    }

    /// The height unit in metres (`2^k`).
    pub fn height_unit(&self) -> f64 {
        self.gpu().height_unit()
    }
}

/// The GPU part of a droplet-erosion job (see the module doc): a [`GpuJob`] that stops at its
/// first failure. Implements [`Simulation`]: progress in droplets, snapshots read back on
/// demand, terrain edits uploaded.
pub struct GpuDropletCore {
    dev: Option<Device>,
    /// Geometry and cell size of the terrain, and the last heights read back (the fallback's start).
    last: Heightmap,
    /// Books of the run so far in metres, except what still sits in the GPU's book counters.
    ledger: Ledger,
    params: DropletParams,
    /// The parameters in the grid units of the terrain.
    grid: DropletGrid,
    seed: u64,
    /// The uniform block (host copy); `first_*`/`count`/`row`/`stamp_base` change per batch.
    block: DropletUniform,
    /// Height unit exponent (unit = 2^k metres) and the water unit of the flow-volume map.
    unit_k: i32,
    wunit: f32,
    floor: f32,
    in_flight: u32,
    done: u64,
    /// Claim stamp of the next batch's first step.
    stamp: u32,
    degenerate: bool,
    cache: Cache,
    /// What stopped the job.
    fault: Option<GpuError>,
}

impl GpuDropletCore {
    /// Prepares the GPU part on `ctx`. Refuses what the CPU model refuses ([`JobError`]) and
    /// fails with a [`GpuError`] when the GPU cannot hold or compile it.
    pub fn new(
        ctx: Arc<GpuContext>,
        terrain: Heightmap,
        params: DropletParams,
        inputs: &JobInputs,
        opts: GpuDropletOptions,
    ) -> Result<Self, GpuDropletError> {
        let mut params = params;
        // The CPU job's preamble (version-1 values, ranges, grid units, finite heights).
        let grid = particle_grid(&terrain, &mut params)?;
        let n = terrain.len();
        if let Some(h) = &inputs.hardness {
            check_hardness(h, n, HardnessRule::AtMost1000)?;
        }
        let (w, h) = (terrain.width, terrain.height);
        let degenerate = w < 2 || h < 2;
        let stats = terrain.stats();
        let floor = match (params.min_height, params.floor_at_input_min) {
            (Some(m), _) => m,
            (None, true) => stats.min,
            (None, false) => f32::NEG_INFINITY,
        };
        let volume = terrain.sum();
        let in_flight = opts.in_flight.unwrap_or((n / 64).clamp(64, 1 << 20) as u32).max(1);
        let unit_k = unit_exp(stats.min.abs().max(stats.max.abs()));
        let wunit = pow2(unit_exp(params.initial_water));
        let mut job = Self {
            dev: None,
            ledger: Ledger { volume_before: volume, volume_after: volume, ..Ledger::default() },
            seed: inputs.seed,
            block: DropletUniform::default(),
            unit_k,
            wunit,
            floor,
            in_flight,
            done: 0,
            stamp: 1,
            degenerate,
            cache: Cache::default(),
            fault: None,
            params,
            grid,
            last: terrain,
        };
        job.fill_block(&inputs.boundary, inputs.hardness.is_some());
        if !degenerate {
            job.dev = Some(job.build_device(ctx, inputs.hardness.as_deref())?);
        }
        Ok(job)
    }

    /// The height unit in metres (`2^k`).
    pub fn height_unit(&self) -> f64 {
        2f64.powi(self.unit_k)
    }

    fn fill_block(&mut self, b: &Boundary, has_hard: bool) {
        let p = &self.params;
        let g = self.grid;
        let (w, h) = (self.last.width, self.last.height);
        let wrap_x = b.wrap_x();
        let wrap_y = b.wrap_y();
        let drain = |s: Side| (b.effective(s) == EdgeMode::Drain) as u32;
        let span_x = if wrap_x { w as f32 } else { w.saturating_sub(1) as f32 };
        let span_y = if wrap_y { h as f32 } else { h.saturating_sub(1) as f32 };
        let (_, taps) = brush_taps(g.radius);
        self.block = DropletUniform {
            w: w as u32,
            h: h as u32,
            wrap_x: wrap_x as u32,
            wrap_y: wrap_y as u32,
            drain_left: drain(Side::Left),
            drain_right: drain(Side::Right),
            drain_top: drain(Side::Top),
            drain_bottom: drain(Side::Bottom),
            span_x,
            span_y,
            inertia: p.inertia,
            min_slope: g.min_slope,
            capacity: p.capacity,
            deposition: p.deposition,
            erosion: p.erosion,
            gravity: p.gravity,
            keep_water: 1.0 - p.evaporation,
            min_water: (p.initial_water * 1e-20).max(1e-30),
            initial_water: p.initial_water,
            initial_speed: p.initial_speed,
            max_life: g.max_lifetime,
            floor: if self.floor.is_finite() { self.floor } else { 0.0 },
            guard: self.floor.is_finite() as u32,
            has_hard: has_hard as u32,
            inv_wunit: 1.0 / self.wunit,
            wunit: self.wunit,
            seed_lo: self.seed as u32,
            seed_hi: (self.seed >> 32) as u32,
            reach: g.radius.ceil() as u32,
            taps,
            ..DropletUniform::default()
        };
        self.set_unit(self.unit_k);
    }

    /// Sets the height unit `2^k` (and the floor in those units) in the uniform block.
    fn set_unit(&mut self, k: i32) {
        self.unit_k = k;
        let unit = 2f64.powi(k);
        let fq = if self.floor.is_finite() {
            (self.floor as f64 / unit).round().clamp(-(2f64.powi(62)), 2f64.powi(62)) as i64
        } else {
            0
        };
        self.block.floor_lo = fq as u64 as u32;
        self.block.floor_hi = ((fq as u64) >> 32) as u32;
        self.block.inv_unit = pow2(-k);
        self.block.unit = pow2(k);
    }

    /// Fixed-point heights (i64 as lo, hi words) of `data` in the current unit.
    fn to_units(&self, data: &[f32]) -> Vec<[u32; 2]> {
        let inv = 2f64.powi(-self.unit_k);
        data.iter()
            .map(|&v| {
                let q = (v as f64 * inv).round().clamp(-(2f64.powi(62)), 2f64.powi(62)) as i64 as u64;
                [q as u32, (q >> 32) as u32]
            })
            .collect()
    }

    fn build_device(&self, ctx: Arc<GpuContext>, hardness: Option<&[f32]>) -> Result<Device, GpuError> {
        let n = self.last.len() as u64;
        ctx.check_fits("droplet accumulators", n * ACC_WORDS * 4)?;
        ctx.check_fits("droplet flow", n * ACC_WORDS * 4)?;
        ctx.check_fits("droplet states", self.in_flight as u64 * DROP_BYTES)?;
        let params = ctx.uniform_buffer("droplet params", &self.block)?;
        let hf = ctx.storage_buffer_init("droplet heights f32", &self.last.data)?;
        let hq = ctx.storage_buffer_init("droplet heights fixed", &self.to_units(&self.last.data))?;
        let hard = match hardness {
            Some(hd) => ctx.storage_buffer_init("droplet hardness", hd)?,
            None => ctx.storage_buffer("droplet hardness (none)", 4)?,
        };
        let (taps, _) = brush_taps(self.grid.radius);
        let brush = ctx.storage_buffer_init("droplet brush", &taps)?;
        let acc = ctx.storage_buffer("droplet accumulators", n * ACC_WORDS * 4)?;
        let books = ctx.storage_buffer("droplet books", BOOK_WORDS as u64 * 4)?;
        let maps = ctx.storage_buffer("droplet maps", n * 8)?;
        let flow = ctx.storage_buffer("droplet flow", n * ACC_WORDS * 4)?;
        let drops = ctx.storage_buffer("droplet states", self.in_flight as u64 * DROP_BYTES)?;
        let claim = ctx.storage_buffer("droplet claims", n * 4)?;
        let module = ctx.shader("droplet.wgsl", SHADER)?;
        let walk = ctx.compute_pipeline("droplet walk", &module, "walk")?;
        let apply = ctx.compute_pipeline("droplet apply", &module, "apply")?;
        let walk_bind = ctx.scoped("droplet walk bind group", |d| {
            d.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("droplet walk"),
                layout: &walk.get_bind_group_layout(0),
                entries: &[
                    entry(0, &params),
                    entry(1, &hf),
                    entry(2, &hard),
                    entry(3, &brush),
                    entry(4, &acc),
                    entry(5, &books),
                    entry(8, &flow),
                    entry(9, &drops),
                ],
            })
        })?;
        let apply_bind = ctx.scoped("droplet apply bind group", |d| {
            d.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("droplet apply"),
                layout: &apply.get_bind_group_layout(0),
                entries: &[
                    entry(0, &params),
                    entry(1, &hf),
                    entry(3, &brush),
                    entry(4, &acc),
                    entry(5, &books),
                    entry(6, &hq),
                    entry(7, &maps),
                    entry(9, &drops),
                    entry(10, &claim),
                ],
            })
        })?;
        Ok(Device {
            ctx,
            params,
            hf,
            hq,
            _acc: acc,
            books,
            maps,
            flow,
            drops,
            claim,
            walk,
            apply,
            walk_bind,
            apply_bind,
        })
    }

    /// Runs droplets `start .. end` on the GPU, in batches of `in_flight` advancing in lockstep:
    /// per step one `walk` and one `apply` dispatch, [`STEPS_PER_SUBMIT`] steps per submission,
    /// stopping early once every droplet of the batch has ended. Waits for the GPU.
    fn run_gpu(&mut self, start: u64, end: u64) -> Result<(), GpuError> {
        let Some(dev) = &self.dev else { return Ok(()) };
        let ctx = &dev.ctx;
        let steps = self.grid.max_lifetime.saturating_add(1);
        let mut first = start;
        while first < end {
            let count = (end - first).min(self.in_flight as u64) as u32;
            let (gx, gy, row) = grid(count, WG);
            if self.stamp.checked_add(steps).is_none_or(|s| s == u32::MAX) {
                // Stamps would wrap: forget every claim (0 is never a stamp).
                let mut enc =
                    ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("claims") });
                enc.clear_buffer(&dev.claim, 0, None);
                ctx.queue().submit([enc.finish()]);
                self.stamp = 1;
            }
            self.block.first_lo = first as u32;
            self.block.first_hi = (first >> 32) as u32;
            self.block.count = count;
            self.block.row = row;
            self.block.stamp_base = self.stamp;
            ctx.write(&dev.params, 0, std::slice::from_ref(&self.block));
            // Only a batch longer than one submission checks for an early end (a readback).
            let ended_before = if steps > STEPS_PER_SUBMIT { self.read_books()?[4] } else { 0 };
            let mut step = 0u32;
            while step < steps {
                let upto = (step + STEPS_PER_SUBMIT).min(steps);
                let mut enc =
                    ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("droplets") });
                if step == 0 {
                    enc.clear_buffer(&dev.drops, 0, Some(count as u64 * DROP_BYTES));
                }
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("droplet steps"),
                        timestamp_writes: None,
                    });
                    for _ in step..upto {
                        pass.set_pipeline(&dev.walk);
                        pass.set_bind_group(0, &dev.walk_bind, &[]);
                        pass.dispatch_workgroups(gx, gy, 1);
                        pass.set_pipeline(&dev.apply);
                        pass.set_bind_group(0, &dev.apply_bind, &[]);
                        pass.dispatch_workgroups(gx, gy, 1);
                    }
                }
                ctx.queue().submit([enc.finish()]);
                step = upto;
                if step < steps && self.read_books()?[4] - ended_before >= count as u64 {
                    break;
                }
            }
            self.stamp += steps;
            first += count as u64;
        }
        ctx.wait()
    }

    /// Reads the GPU's book counters (eroded, deposited, lost, lifted in units; droplets ended).
    fn read_books(&self) -> Result<[u64; 5], GpuError> {
        let Some(dev) = &self.dev else { return Ok([0; 5]) };
        let w = dev.ctx.read_u32(&dev.books, 0, BOOK_WORDS)?;
        Ok([0, 1, 2, 3, 4].map(|k| w[2 * k] as u64 | (w[2 * k + 1] as u64) << 32))
    }

    fn books(&self) -> [u64; 5] {
        *self.cache.books.get_or_init(|| self.read_books().unwrap_or([0; 5]))
    }

    /// Reads the f32 heights back.
    fn read_heights(&self) -> Result<Heightmap, GpuError> {
        let Some(dev) = &self.dev else { return Ok(self.last.clone()) };
        let data = dev.ctx.read_f32(&dev.hf, 0, self.last.len())?;
        let mut hm = self.last.clone();
        hm.data = data;
        Ok(hm)
    }

    /// Per node: eroded, deposited (m), visits, water volume — read back once per step.
    fn gpu_maps(&self) -> &[[f32; 4]] {
        self.cache.maps.get_or_init(|| {
            let n = self.last.len();
            let Some(dev) = &self.dev else { return vec![[0.0; 4]; n] };
            let read = || -> Result<Vec<[f32; 4]>, GpuError> {
                let m = dev.ctx.read_f32(&dev.maps, 0, n * 2)?;
                let f = dev.ctx.read_u32(&dev.flow, 0, n * 4)?;
                let u64f = |lo: u32, hi: u32| (lo as u64 | (hi as u64) << 32) as f64;
                Ok((0..n)
                    .map(|i| {
                        let g = &f[4 * i..4 * i + 4];
                        [m[2 * i], m[2 * i + 1], u64f(g[0], g[1]) as f32, (u64f(g[2], g[3]) * self.wunit as f64) as f32]
                    })
                    .collect())
            };
            read().unwrap_or_else(|_| vec![[0.0; 4]; n])
        })
    }

    /// The books of the GPU part: host-side totals plus the counters still on the GPU.
    fn gpu_ledger(&self, volume_after: f64) -> Ledger {
        let u = self.height_unit();
        let [e, d, lost, lift, _] = self.books();
        let mut l = self.ledger;
        l.eroded += e as f64 * u;
        l.deposited += (d + lift) as f64 * u;
        l.lost_at_border += lost as f64 * u;
        l.clamped += lift as f64 * u;
        l.volume_after = volume_after;
        l
    }

    /// Moves the GPU's book counters into the host ledger and zeroes them (before the unit changes).
    fn flush_books(&mut self) -> Result<(), GpuError> {
        self.cache.books = OnceLock::new();
        let b = self.read_books()?;
        self.ledger = self.gpu_ledger(self.ledger.volume_after);
        self.cache.books = OnceLock::new();
        if let Some(dev) = &self.dev
            && b != [0; 5]
        {
            dev.ctx.write(&dev.books, 0, &[0u32; BOOK_WORDS]);
        }
        Ok(())
    }

    /// Stops the job at its first failure (the fallback wrapper takes over from here).
    fn fail(&mut self, err: GpuError) {
        if self.fault.is_none() {
            self.fault = Some(err);
        }
    }
}

impl GpuJob for GpuDropletCore {
    fn fault(&self) -> Option<&GpuError> {
        self.fault.as_ref()
    }

    fn inject_fault(&mut self, err: GpuError) {
        self.fail(err);
    }

    /// The last state that could be read back (or the last one known when nothing could); the
    /// GPU resources are released.
    fn hand_over(&mut self) -> Handover {
        let hm = self.read_heights().unwrap_or_else(|_| self.last.clone());
        let readable = self.read_books().is_ok();
        let ledger =
            if readable { self.gpu_ledger(hm.sum()) } else { Ledger { volume_after: self.last.sum(), ..self.ledger } };
        let maps = self.gpu_maps().to_vec();
        self.dev = None;
        self.last = hm.clone();
        self.cache = Cache::default();
        Handover {
            heightmap: hm,
            done: self.done,
            ledger,
            maps: ErosionMaps {
                eroded: maps.iter().map(|m| m[0]).collect(),
                deposited: maps.iter().map(|m| m[1]).collect(),
            },
            flow: Some(maps.iter().map(|m| m[2]).collect()),
            flow_volume: Some(maps.iter().map(|m| m[3]).collect()),
        }
    }

    fn continuation_note(&self, err: &GpuError, done: u64) -> String {
        format!("{err}; droplets continue on the CPU from droplet {done}")
    }

    /// The CPU's guard stays where the GPU's was (not at the new minimum), the seed is mixed with
    /// the droplets done (the rest must not repeat the first droplets' paths), and there is no
    /// sea (the GPU version has none).
    fn adjust_continuation(&self, params: &mut ModelParams, inputs: &mut JobInputs, done: u64) {
        if let ModelParams::Droplet(p) = params
            && p.min_height.is_none()
            && p.floor_at_input_min
            && self.floor.is_finite()
        {
            p.min_height = Some(self.floor);
        }
        inputs.seed = crate::core::rng::mix64(self.seed ^ done.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        inputs.sea_level = None;
    }
}

impl Simulation for GpuDropletCore {
    fn step(&mut self) {
        if self.fault.is_some() || self.done >= self.grid.droplets {
            return;
        }
        let start = self.done;
        let size = (self.params.batch as u64).max(self.in_flight as u64);
        let end = (start + size).min(self.grid.droplets);
        if self.degenerate {
            self.done = end;
            return;
        }
        self.cache = Cache::default();
        match self.run_gpu(start, end) {
            Ok(()) => self.done = end,
            Err(e) => self.fail(e),
        }
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.grid.droplets }
    }

    fn is_done(&self) -> bool {
        self.fault.is_some() || self.done >= self.grid.droplets
    }

    fn heightmap(&self) -> &Heightmap {
        self.cache.hm.get_or_init(|| self.read_heights().unwrap_or_else(|_| self.last.clone()))
    }

    fn ledger(&self) -> Ledger {
        self.gpu_ledger(self.heightmap().sum())
    }

    fn maps(&self) -> &ErosionMaps {
        self.cache.erosion_maps.get_or_init(|| {
            let m = self.gpu_maps();
            ErosionMaps { eroded: m.iter().map(|v| v[0]).collect(), deposited: m.iter().map(|v| v[1]).collect() }
        })
    }

    fn fields(&self) -> Fields {
        let m = self.gpu_maps();
        Fields {
            flow: Some(m.iter().map(|v| v[2]).collect()),
            flow_volume: Some(m.iter().map(|v| v[3]).collect()),
            ..Fields::default()
        }
    }

    /// A failure to read the books back stops the job before the edit is applied (the wrapper
    /// then applies it to the CPU continuation).
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if self.fault.is_some() {
            return;
        }
        let mut hm = self.heightmap().clone();
        if self.degenerate || self.dev.is_none() {
            if crate::core::erosion::apply_edit(&mut hm, &mut self.ledger.volume_before, f) {
                self.last = hm;
                self.cache = Cache::default();
            }
            return;
        }
        if let Err(e) = self.flush_books() {
            self.fail(e);
            return;
        }
        if !crate::core::erosion::apply_edit(&mut hm, &mut self.ledger.volume_before, f) {
            return;
        }
        // New heights, maybe a new range: re-choose the unit and re-upload both views.
        let s = hm.stats();
        self.set_unit(unit_exp(s.min.abs().max(s.max.abs())));
        let q = self.to_units(&hm.data);
        if let Some(dev) = &self.dev {
            dev.ctx.write(&dev.params, 0, std::slice::from_ref(&self.block));
            dev.ctx.write(&dev.hf, 0, &hm.data);
            dev.ctx.write(&dev.hq, 0, &q);
        }
        self.last = hm;
        self.cache = Cache::default();
    }
}

#[cfg(test)]
mod tests;
