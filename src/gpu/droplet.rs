//! Particle (droplet) erosion on the GPU — SPEC §2a, seed 000 (after H. T. Beyer, *Implementation
//! of a method for hydraulic erosion*, TU München 2015), deterministic whatever order the GPU runs
//! its threads in. Kernels: `shaders/gpu/droplet.wgsl` (helpers in `droplet_lib.wgsl`). The CPU model
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
//! ## The sea ([`JobInputs::sea_level`], the CPU's *sea mode*, `droplet/sea.rs`)
//! With a finite sea level `S` the rules of the CPU model's sea mode hold:
//!
//! * the erosion floor is at least `S` (`max(floor, S)`): nothing is dug below the sea, nor out
//!   of a node under it;
//! * a droplet whose position's bilinear height is `≤ S` has reached the sea: it never erodes,
//!   drops its load with the erosion brush (weights `w` renormalised over the in-map nodes), node
//!   `n` taking `min(s·w(n), room(n))` with `room(n) = ⌊S/u⌋ − h(n)` in height units `u` (so a
//!   node is filled at most to the water line), in tap order and at most `s` in all, then moves
//!   one cell along its new direction (inertia and the gradient, as on land; speed and water
//!   unchanged) to drop the rest farther out; it ends when less than 10⁻⁶ m·node is left (the
//!   residue is booked as `clamped`, as on the CPU), through a drain edge (`lost_at_border`) or
//!   at the end of its life (dropping the rest where it stands);
//! * deposits on land, and the load dropped at the end of a life, are spread over the disc of
//!   radius [`LAND_SPREAD`](crate::core::erosion::droplet::LAND_SPREAD) = 2 nodes (weights
//!   `2 − |p − n|`, renormalised, uncapped) instead of the cell's four corners;
//! * when the run ends ([`Simulation::finish`]) the isolated one-node extremes left on land are
//!   levelled by the CPU's own `particles::relax_extremes` on the heights read back.
//!
//! In lockstep several droplets at the sea may fill one node in the same step. Each computes its
//! shares from the heights before the step, so together they could overfill it; instead a node
//! takes the step's shares (summed in a third accumulator) only when all of them fit below the
//! water line after the step's other changes, and otherwise takes none and records the refusal;
//! a third pass, `sea`, gives each droplet back its shares on the refusing nodes (recomputed to
//! the bit: products only, from the height each node had before the step, kept beside it) and
//! finishes its step. So the cap is exact, the books stay exact integers and nothing depends on
//! thread order; a refused share is carried on and dropped farther out, as the CPU carries what
//! a full footprint cannot take.
//!
//! ## Steering masks ([`JobInputs::steer`], `core::erosion::steer`)
//! As on the CPU: spawn positions are drawn in the bounding box of the mask's nodes with `w > 0`
//! (the same two draws of the droplet's stream), and a droplet lives with probability `w` of its
//! nearest node (one draw from its side stream `SplitMix64::stream(seed ^ LIFE_SALT, i)`), so the
//! same droplets live on both sides; in sink mode the erodibility is `hardness·w`, and a droplet
//! whose nearest node has `w = 0` ends there and drops its load.
//!
//! Not on the GPU: the change blur (`blur_m`, applied to each batch's change on the CPU); this
//! job ignores it, and the backend runs such runs on the CPU with a note.
//!
//! ## Scheme: droplets in lockstep
//! The droplets of a batch (`in_flight` of them, [`GpuDropletOptions`]) advance together, one
//! step per pair of dispatches: `walk` (one invocation per droplet: one step, reading the heights
//! as they were after the previous step) and `apply` (one invocation per droplet again: each node
//! its step touched is claimed with `atomicExchange` of the step's stamp, and the one claimer
//! folds the node's whole accumulated change into the terrain), plus `sea` in sea mode (see
//! *The sea*). So every droplet sees its own
//! earlier changes and everyone's from earlier steps, as on the CPU; only the steps of one turn
//! are concurrent — the CPU's lockstep lanes, with `in_flight` lanes instead of 8. The state of a
//! droplet (88 bytes) lives in a buffer between steps; a batch takes `L + 1` turns (`L` the step limit),
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
//! With a sea, on the default island (257², sea at 0 m, 12 000 droplets, 1032 in flight,
//! `tests::gpu_matches_cpu_with_a_sea_on_the_island`, lavapipe): eroded +1.5 %, deposited
//! +1.6 %, deposited into the sea −1.7 %, change maps r = 0.96, no land node below the sea and
//! no sea node dug on either side, no pits or spikes left on land.
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
//! `eroded = deposited + lost_at_border` (+ the sea droplets' residue, booked as a negative
//! `clamped` as on the CPU) after every step. The f32 heightmap handed out rounds
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
//! `eroded + clamped = deposited + lost_at_border` still closes. In units the floor is rounded
//! up and the sea level down, so a guarded node never ends below the floor (nor the sea) and a
//! node filled to the water line never above it.
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
//! (the remaining droplets, the same erosion floor, sea and mask, the seed mixed with the
//! progress; see [`GpuJob::adjust_continuation`]), so a job never ends silently or takes its caller down; the
//! note saying so is one of the job's [`Simulation::notes`].

use std::sync::{Arc, OnceLock};

use crate::core::erosion::droplet::{DropletGrid, DropletParams};
use crate::core::erosion::particles::{EXTREME_TOLERANCE, Geom, relax_extremes};
use crate::core::erosion::setup::{ParticleSetup, prepare_particle_job};
use crate::core::erosion::steer::LIFE_SALT;
use crate::core::erosion::{
    EdgeMode, ErosionMaps, Fields, JobError, JobInputs, Ledger, MapSize, ModelParams, Progress, Side, Simulation,
};
use crate::core::heightmap::Heightmap;

use super::context::{GpuContext, GpuError};
use super::fallback::{GpuJob, Handover, ResilientGpuJob};
use device::Device;

/// The WGSL source (the kernels, then their helpers), embedded so the binary works anywhere.
pub const SHADER: &str =
    concat!(include_str!("../../shaders/gpu/droplet.wgsl"), "\n", include_str!("../../shaders/gpu/droplet_lib.wgsl"));

/// Threads per workgroup of `walk` and `apply` (must match their `@workgroup_size`).
const WG: u32 = 64;
/// Bytes of one droplet's state between steps (the WGSL `Drop` struct).
const DROP_BYTES: u64 = 88;
/// Steps encoded per submission; between two, the host checks whether any droplet is still alive.
const STEPS_PER_SUBMIT: u32 = 256;
/// Sub-cell brush positions per axis (as the CPU model).
const SUB: usize = 4;
/// Words per node in the step accumulators (eroded, deposited, the sea step's shares): two each.
const ACC_WORDS: u64 = 6;
/// Words per node in the flow totals (visits, water volume): two u64.
const FLOW_WORDS: u64 = 4;
/// Book counters: eroded, deposited, lost, lifted, droplets ended, sea residue (u64 each).
const BOOKS: usize = 6;
const BOOK_WORDS: usize = 2 * BOOKS;

super::uniform::wgsl_uniform! {
    /// The parameter block of `walk` and `apply` (the WGSL `Params` struct of `droplet.wgsl`; the
    /// layout is checked against it by `tests::the_uniform_block_matches_the_wgsl`). Laid out as a
    /// uniform block but bound as read-only storage (`tests::the_parameter_block_is_not_a_uniform`
    /// says why). Set whole when
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
        /// Water kept per step ([`DropletGrid::keep_water`]).
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
        /// Sea mode (the pipeline constant `SEA`): the level (m) and `⌊sea/unit⌋` (i64 as lo, hi).
        _pad2: u32,
        sea: f32,
        sea_lo: u32,
        sea_hi: u32,
        /// Steering mask: bit 0 spawn box and lives, bit 1 sinks; the spawn box.
        steer: u32,
        spawn_x0: f32,
        spawn_sx: f32,
        spawn_y0: f32,
        spawn_sy: f32,
        /// Seed of the life side stream (`seed ^ LIFE_SALT`, lo, hi).
        life_lo: u32,
        life_hi: u32,
        /// One step erodes at most `−Δh · dig` ([`DropletGrid::dig`]).
        dig: f32,
        _pad1: u32,
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

/// Host copies read back from the GPU, valid until the next step or edit.
#[derive(Default)]
struct Cache {
    hm: OnceLock<Heightmap>,
    /// Per node: eroded, deposited, visits, water volume.
    maps: OnceLock<Vec<[f32; 4]>>,
    erosion_maps: OnceLock<ErosionMaps>,
    books: OnceLock<[u64; BOOKS]>,
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
        if params.in_grid_units(MapSize::of(&terrain)).wide {
            // The kernel deposits on a cell's four nodes or the sea's 2-node disc only.
            return Err(GpuError::Other(
                "the droplets' deposits spread over the brush (cells finer than `path_step_m`) run on the CPU only"
                    .into(),
            )
            .into());
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
    /// The sea level (sea mode), where it is a finite one.
    sea: Option<f32>,
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
        // The CPU job's preamble (version-1 values, ranges, grid units, finite heights, the
        // hardness and steering checks, the erodibility: the hardness, times the mask in sink mode).
        let setup = prepare_particle_job(&terrain, &mut params, inputs.clone())?;
        let grid = setup.grid;
        let n = terrain.len();
        let (w, h) = (terrain.width, terrain.height);
        let degenerate = w < 2 || h < 2;
        let stats = terrain.stats();
        let floor = match (params.min_height, params.floor_at_input_min) {
            (Some(m), _) => m,
            (None, true) => stats.min,
            (None, false) => f32::NEG_INFINITY,
        };
        // With a sea, erosion never takes a node below it (nor lowers one already under water).
        let sea = setup.sea();
        let floor = sea.map_or(floor, |s| floor.max(s));
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
            sea,
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
        job.fill_block(&setup, setup.erodibility.is_some());
        if !degenerate {
            // Per node: the erodibility and the mask's weight.
            let steer = setup.steer().map(|s| s.weights.as_slice());
            let nodein: Option<Vec<[f32; 2]>> = (setup.erodibility.is_some() || steer.is_some()).then(|| {
                (0..n)
                    .map(|i| [setup.erodibility.as_ref().map_or(1.0, |k| k[i]), steer.map_or(1.0, |w| w[i])])
                    .collect()
            });
            job.dev = Some(job.build_device(ctx, nodein.as_deref())?);
        }
        Ok(job)
    }

    /// The height unit in metres (`2^k`).
    pub fn height_unit(&self) -> f64 {
        2f64.powi(self.unit_k)
    }

    fn fill_block(&mut self, setup: &ParticleSetup<DropletGrid>, has_hard: bool) {
        let b = &setup.inputs.boundary;
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
            inertia: g.inertia,
            min_slope: g.min_slope,
            capacity: g.capacity,
            deposition: g.deposition,
            erosion: g.erosion,
            gravity: p.gravity,
            keep_water: g.keep_water,
            dig: g.dig,
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
            sea: self.sea.unwrap_or(0.0),
            ..DropletUniform::default()
        };
        let geom = Geom::new(w, h, b);
        if let Some(sp) = setup.spawner(&geom) {
            let bl = &mut self.block;
            (bl.spawn_x0, bl.spawn_sx, bl.spawn_y0, bl.spawn_sy) = sp.spawn_box();
            bl.steer = 1 | if setup.steer().is_some_and(|s| s.sink) { 2 } else { 0 };
            let life = self.seed ^ LIFE_SALT;
            (bl.life_lo, bl.life_hi) = (life as u32, (life >> 32) as u32);
        }
        self.set_unit(self.unit_k);
    }

    /// Sets the height unit `2^k` (and the floor and sea level in those units) in the uniform
    /// block. The floor is rounded up and the sea level down, so a node held at the floor is not
    /// below it and one filled to the sea level is not above it.
    fn set_unit(&mut self, k: i32) {
        self.unit_k = k;
        let unit = 2f64.powi(k);
        let q = |v: f32, r: fn(f64) -> f64| {
            if v.is_finite() { r(v as f64 / unit).clamp(-(2f64.powi(62)), 2f64.powi(62)) as i64 as u64 } else { 0 }
        };
        let fq = q(self.floor, f64::ceil);
        (self.block.floor_lo, self.block.floor_hi) = (fq as u32, (fq >> 32) as u32);
        let sq = q(self.sea.unwrap_or(0.0), f64::floor);
        (self.block.sea_lo, self.block.sea_hi) = (sq as u32, (sq >> 32) as u32);
        self.block.inv_unit = pow2(-k);
        self.block.unit = pow2(k);
    }

    /// Fixed-point heights of `data` in the current unit (i64 as lo, hi words), twice: the
    /// height and the height before the last step that folded the node.
    fn to_units(&self, data: &[f32]) -> Vec<[u32; 4]> {
        let inv = 2f64.powi(-self.unit_k);
        data.iter()
            .map(|&v| {
                let q = (v as f64 * inv).round().clamp(-(2f64.powi(62)), 2f64.powi(62)) as i64 as u64;
                [q as u32, (q >> 32) as u32, q as u32, (q >> 32) as u32]
            })
            .collect()
    }

    /// Reads the GPU's book counters (eroded, deposited, lost, lifted in units; droplets ended;
    /// the sea droplets' residue in units).
    fn read_books(&self) -> Result<[u64; BOOKS], GpuError> {
        let Some(dev) = &self.dev else { return Ok([0; BOOKS]) };
        let w = dev.ctx.read_u32(&dev.books, 0, BOOK_WORDS)?;
        Ok(std::array::from_fn(|k| w[2 * k] as u64 | (w[2 * k + 1] as u64) << 32))
    }

    fn books(&self) -> [u64; BOOKS] {
        *self.cache.books.get_or_init(|| self.read_books().unwrap_or([0; BOOKS]))
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
        let [e, d, lost, lift, _, residue] = self.books();
        let mut l = self.ledger;
        l.eroded += e as f64 * u;
        l.deposited += (d + lift) as f64 * u;
        l.lost_at_border += lost as f64 * u;
        l.clamped += (lift as f64 - residue as f64) * u;
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
            && b != [0; BOOKS]
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

    /// The CPU's guard stays where the GPU's was (not at the new minimum), and the seed is mixed
    /// with the droplets done (the rest must not repeat the first droplets' paths).
    fn adjust_continuation(&self, params: &mut ModelParams, inputs: &mut JobInputs, done: u64) {
        if let ModelParams::Droplet(p) = params
            && p.min_height.is_none()
            && p.floor_at_input_min
            && self.floor.is_finite()
        {
            p.min_height = Some(self.floor);
        }
        inputs.seed = crate::core::rng::mix64(self.seed ^ done.wrapping_mul(0x9e37_79b9_7f4a_7c15));
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

    /// Sea mode: levels the isolated one-node extremes left on land, as the CPU job's `finish`
    /// does (`particles::relax_extremes` on the heights read back, booked as erosion and
    /// deposition, the f32 rounding of the trades as `clamped`), and uploads the result.
    fn finish(&mut self) {
        let Some(sea) = self.sea else { return };
        if self.fault.is_some() || self.degenerate || self.done == 0 || self.dev.is_none() {
            return;
        }
        let mut hm = self.heightmap().clone();
        let mut maps: Vec<[f32; 2]> = self.gpu_maps().iter().map(|m| [m[0], m[1]]).collect();
        if let Err(e) = self.flush_books() {
            self.fail(e);
            return;
        }
        let (e, d) = relax_extremes(&mut hm, sea, EXTREME_TOLERANCE, &mut |i, dh| {
            if dh < 0.0 { maps[i][0] -= dh } else { maps[i][1] += dh }
        });
        if e == 0.0 && d == 0.0 {
            return;
        }
        self.ledger.eroded += e;
        self.ledger.deposited += d;
        self.ledger.clamped += d - e;
        let s = hm.stats();
        self.set_unit(unit_exp(s.min.abs().max(s.max.abs())));
        let q = self.to_units(&hm.data);
        if let Some(dev) = &self.dev {
            dev.ctx.write(&dev.params, 0, std::slice::from_ref(&self.block));
            dev.ctx.write(&dev.hf, 0, &hm.data);
            dev.ctx.write(&dev.hq, 0, &q);
            dev.ctx.write(&dev.maps, 0, &maps);
        }
        self.last = hm;
        self.cache = Cache::default();
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

mod device;
#[cfg(test)]
mod tests;
