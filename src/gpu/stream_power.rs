//! The stream-power model (the default Simulate, [`crate::core::erosion::stream_power`]) on the
//! GPU, with the same parameters ([`StreamPowerParams`]) and inputs: the sea as base level,
//! uplift (uniform, terrain-following or a map), hardness, steering masks (runoff weights; a
//! sink mask's zero nodes are outlets), drain/wall/wrap edges, and the books.
//!
//! ## The law and how each part is solved
//!
//! `∂h/∂t = U − K·c·A^m·S^n + κ∇²h`, one step of `Δt` years, every part a stencil or a chain on
//! the grid, after Schott, Paris, Fournier, Guérin & Galin (2023), "Large-scale terrain authoring
//! through interactive erosion simulation", ACM TOG 42(5) (drainage accumulated from the
//! previous step's, heights clamped against the receiver, no sort), and Jain, Peytavie, Galin et
//! al. (2024), "FastFlow: GPU acceleration of flow and depression routing for landscape
//! simulation", CGF 43 (pointer jumping along the receiver tree):
//!
//! ```text
//! sp_uplift    1  h ← h + U_i·Δt (0 on outlets)
//! sp_fill      2a W_i = max(h_i, min_j W_j + ε_i), the depression-filled surface (Planchon–Darboux):
//!                 first exactly along last step's drainage tree by pointer jumping (a max-plus
//!                 recurrence; an upper bound), then × fill_sweeps Jacobi sweeps
//! sp_route     2b rcv_h = steepest lower on h; rcv_w, Σ_j S_j^p on W; where sediment goes; room
//! sp_area      2c A'_i = r_i + Σ_{W_j > W_i} S_ji^p/Σ_k S_jk^p · A_j    × area_sweeps  (Freeman 1991)
//! sp_incise    3  n = 1: h'_i = (h_i + F·h'_r)/(1+F) by pointer jumping (exact);
//!                 n ≠ 1: δ − δ₀ + F·δ^n = 0 per node against the receiver's iterate × newton_sweeps
//!                 F = K·c_i·Δt·A_i^m/d^n;  lake nodes (W > h) and pits are not cut;  h' ∈ [h'_r, h]
//! sp_sediment  4  the eroded material moves one node per sweep (rcv_h; across a lake on rcv_w),
//!                 settling in lakes (a share α of each node's depth under W) and, within 8 cells of
//!                 the land, in the sea up to sea − 0.5 m, fanning out from each mouth to the sea
//!                 neighbours with room, else seaward; further out, at drain edges and sinks it
//!                 leaves the map                                             × sediment_sweeps
//!                 (each sweep's carry and the next one's settle are one kernel)
//! sp_diffuse   5  κ∇²h implicit as on the CPU: one backward-Euler step split by direction, a
//!                 Thomas solve per row, then per column (r = κ·Δt/Δx², any Δt), each line cut
//!                 into 64-node segments solved side by side and joined through the separators
//!                 between them (the partition method, `thomas_split.wgsl`); on a map with a
//!                 wrap edge explicit 5-point substeps, r·max c ≤ 0.2; outlets fixed (sea at its
//!                 surface)
//! ```
//!
//! A pointer-jumping solve takes ⌈log₂ L⌉ rounds for chains of at most L nodes; a map of N nodes
//! may hold one of N, so ⌈log₂ N⌉+1 rounds are recorded, in pairs, and every pair after the
//! first is an indirect dispatch that `sp_rounds.wgsl` empties once no record will change
//! (a record stops changing when its pointer reaches a root): the result of every round, bit
//! for bit, for the rounds the longest river needs (8 and 6 of 16 on the island at 129²).
//!
//! `ε_i = max(10⁻⁴ m, 4.8·10⁻⁷·|h_i|)` (above f32 rounding at any height). Before the first step
//! the job sweeps the fill and the area `warmup_sweeps` times (default `w + h`) from `W = +∞`, so
//! the drainage is routed over the whole map once; from then on each step starts from the last
//! step's tree and area, and the area moves `area_sweeps` nodes per step: the drainage follows
//! the terrain as it changes without a global re-routing (Schott et al. 2023).
//!
//! ## Where it differs from the CPU model
//! The CPU routes lakes through a basin graph and carries each step's sediment down the whole
//! receiver tree in that step, filling lakes from the bottom and the sea within 8 nodes of each
//! mouth; here the load travels `sediment_sweeps` nodes per step (what is still moving is
//! `suspended` in the books), each lake node takes a share α = ½ of its remaining depth a step
//! as the load passes down to the bottom (the deepest take the most, where the CPU raises the
//! lowest nodes to one flat level), and the sea fills ring by ring from the coast (distances by
//! the 3-4 chamfer, within 8 % of the Euclidean). Diffusion is the CPU's implicit step, but on
//! a map with a wrap edge, where it runs in explicit substeps (a periodic line would need the
//! CPU's Sherman–Morrison solve; a diffusion needing more than [`MAX_DIFFUSION_SUBSTEPS`] is
//! refused there, so the backend runs the CPU model and says why). Parity with the CPU is measured at the level of
//! landforms (`tests`, README: heights after σ = 2 and channels both ways).

//! ## Books and determinism
//! Every kernel is a gather (a node writes only itself) or a pointwise update, and every book is
//! summed per 16×16 workgroup in a fixed tree into its own double-float slot (eroded, deposited,
//! lost, uplift), summed on the host in f64 in a fixed order: the same bits on every run (the one
//! atomic, the rounds' flag, is an OR, whose order cannot matter). Uplift is booked as deposited
//! and as uplift, as on the CPU; material still moving is `suspended`, so
//! `eroded + uplift = deposited + lost + suspended`.
//!
//! ## Bindings
//! All kernels share one bind-group layout (`sp_common.wgsl`): the ping-pong pairs (heights,
//! fill, area, incision chain, sediment) are bound in one order or swapped, and every iterated
//! kernel runs an even number of times, so the current values always end in the pair's first
//! buffer. The route kernel leaves each node's MFD shares in the chain pair, which is free until
//! the incision, and the area sweeps alternate a third group that swaps the area pair alone; the
//! fill sweeps a fourth that swaps the fill pair alone, so they read the heights in order.
//! The rounds' decision kernel has a layout of its own, since the indirect arguments it
//! writes may not be bound where a dispatch reads them.

use std::cell::{OnceCell, RefCell};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::context::{GpuContext, GpuError, groups};
use super::fallback::{GpuJob, Handover, ResilientGpuJob};
use super::pipe::GpuJobError;
use crate::core::erosion::hardness::HardnessRule;
use crate::core::erosion::setup::erodibility;
use crate::core::erosion::stream_power::{FlowMethod, StreamPowerParams, UpliftMode, terrain_uplift};
use crate::core::erosion::{
    EdgeMode, ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Side, Simulation, apply_edit, check_param,
};
use crate::core::heightmap::Heightmap;

const COMMON: &str = include_str!("../../shaders/gpu/sp_common.wgsl");
const UPLIFT: &str = include_str!("../../shaders/gpu/sp_uplift.wgsl");
const FILL: &str = include_str!("../../shaders/gpu/sp_fill.wgsl");
const ROUTE: &str = include_str!("../../shaders/gpu/sp_route.wgsl");
const AREA: &str = include_str!("../../shaders/gpu/sp_area.wgsl");
const INCISE: &str =
    concat!(include_str!("../../shaders/gpu/incision.wgsl"), "\n", include_str!("../../shaders/gpu/sp_incise.wgsl"));
const SEDIMENT: &str = include_str!("../../shaders/gpu/sp_sediment.wgsl");
const ROUNDS: &str = include_str!("../../shaders/gpu/sp_rounds.wgsl");
const DIFFUSE: &str = concat!(
    include_str!("../../shaders/gpu/thomas_split.wgsl"),
    "\n",
    include_str!("../../shaders/gpu/sp_diffuse.wgsl")
);

/// Workgroup edge (16×16 threads).
const WG: u32 = 16;
/// Lines per workgroup of the implicit diffusion's split solves (`sp_diffuse.wgsl`).
const LINE_WG: u32 = 64;
/// Nodes per segment of a split line solve (`SPLIT_SEG` in `thomas_split.wgsl`; the build's
/// detail pass dispatches by it too).
pub(super) const LINE_SEG: u32 = 64;
/// Book slots: eroded, deposited, lost, uplift (`sp_common.wgsl`).
const SLOTS: usize = 4;
/// Bindings of the shared layout: the uniform block and 15 storage buffers.
const STORAGE_BINDINGS: u32 = 15;
/// Words of the rounds' control buffer (`ctl` in `sp_common.wgsl`): the flag and two counters.
const CTL_WORDS: usize = 4;
/// Wall time one `step()` call aims at when the batch size adapts.
const BATCH_TARGET: Duration = Duration::from_millis(30);
/// Most time steps one `step()` call runs.
const BATCH_MAX: u32 = 256;
/// Most explicit diffusion substeps per time step (maps with a wrap edge); a stiffer diffusion
/// runs on the CPU.
pub const MAX_DIFFUSION_SUBSTEPS: u32 = 1024;
/// Largest `r·max c` of one explicit diffusion substep (≤ 0.25 keeps the scheme monotone).
const DIFFUSION_R: f64 = 0.2;
/// The fill's least step over a flat, metres, and relative to the height.
const EPS_ABS: f32 = 1.0e-4;
const EPS_REL: f32 = 4.8e-7;
/// Share of its remaining depth under the lake's surface a lake node may fill in one step.
const LAKE_FILL: f32 = 0.5;
/// Depth the sea's deposits leave above them (the CPU's `SEA_SHELF`).
const SEA_SHELF: f32 = 0.5;

/// Sweeps per time step of the iterated parts (module doc). The defaults follow the terrain
/// within a few nodes per step; more cost time and approach a global re-routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuStreamPowerOptions {
    /// Sweeps of the depression fill per step, ≥ 2 (rounded up to even). Default 8.
    pub fill_sweeps: u32,
    /// Sweeps of the drainage area per step, ≥ 2 (rounded up to even). Default 16.
    pub area_sweeps: u32,
    /// Sweeps of the sediment transport per step, ≥ 2 (rounded up to even). Default 8.
    pub sediment_sweeps: u32,
    /// Jacobi sweeps of the incision for `n ≠ 1` (rounded up to even). Default 32; `n = 1` is
    /// solved exactly by pointer jumping instead.
    pub newton_sweeps: u32,
    /// Sweeps of the fill and the area before the first step. `None`: `w + h`.
    pub warmup_sweeps: Option<u32>,
    /// Dispatch every one of the ⌈log₂ N⌉+1 pointer-jumping rounds of the chain solves instead
    /// of stopping once every chain reached its root (`sp_rounds.wgsl`): the same result,
    /// slower; for checking. Default false.
    pub every_round: bool,
}

impl Default for GpuStreamPowerOptions {
    fn default() -> Self {
        Self {
            fill_sweeps: 8,
            area_sweeps: 16,
            sediment_sweeps: 8,
            newton_sweeps: 32,
            warmup_sweeps: None,
            every_round: false,
        }
    }
}

/// `k` rounded up to an even number ≥ 2.
fn even(k: u32) -> u32 {
    k.max(2).div_ceil(2) * 2
}

super::uniform::wgsl_uniform! {
    /// The uniform block of every stream-power kernel (`Params` in `sp_common.wgsl`).
    struct SpParams {
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
        kdt: f32,
        m: f32,
        n: f32,
        mfd_p: f32,
        inv_dn_card: f32,
        inv_dn_diag: f32,
        inv_dx: f32,
        sea: f32,
        shelf: f32,
        r_diff: f32,
        eps_abs: f32,
        eps_rel: f32,
        lake_fill: f32,
        _pad3: f32,
        _pad4: f32,
        _pad5: f32,
    }
}

/// Per-node inputs (`NodeIn` in `sp_common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct NodeIn {
    up: f32,
    c: f32,
    runoff: f32,
    flags: u32,
}

const OUTLET: u32 = 1;
const SEA: u32 = 2;
const ANCHOR: u32 = 4;
const FAR_SEA: u32 = 8;
/// Sea nodes within this many cells of the land take the rivers' load (the CPU's `SEA_SPREAD`
/// around a river mouth); further out it leaves the books as lost.
const SEA_SPREAD: usize = 8;

/// Per-node routing (`Route` in `sp_common.wgsl`), 8 floats.
const ROUTE_FLOATS: usize = 8;
const ROUTE_H0: usize = 5;

fn edge_code(b: &crate::core::erosion::Boundary, side: Side) -> u32 {
    match b.effective(side) {
        EdgeMode::Wall => 0,
        EdgeMode::Drain => 1,
        EdgeMode::Wrap => 2,
    }
}

struct Buffers {
    h: [wgpu::Buffer; 2],
    w: [wgpu::Buffer; 2],
    a: [wgpu::Buffer; 2],
    s: [wgpu::Buffer; 2],
    route: wgpu::Buffer,
    maps: wgpu::Buffer,
    books: wgpu::Buffer,
    /// The rounds' control (`ctl`): flag, counters.
    ctl: wgpu::Buffer,
}

/// The pointer-jumping solves' stopping rule (`sp_rounds.wgsl`): the kernel that turns the
/// flag into the next pair's indirect dispatch, its bind groups (counting the fill's pairs, the
/// incision's), and the dispatch arguments it writes.
struct Rounds {
    pipeline: wgpu::ComputePipeline,
    groups: [wgpu::BindGroup; 2],
    args: wgpu::Buffer,
}

/// Which chain solve a pair of rounds belongs to (the counter it adds to).
#[derive(Clone, Copy)]
enum Chain {
    Fill = 0,
    Incision = 1,
}

/// One dispatch of a step.
#[derive(Clone, Copy)]
enum Op<'a> {
    /// A kernel over its grid, with the bind group of this parity.
    Grid(&'a wgpu::ComputePipeline, usize),
    /// A pointer-jumping round over the grid the last [`Op::Decide`] set (possibly none).
    Round(&'a wgpu::ComputePipeline, usize),
    /// Whether the next pair of rounds of this chain runs.
    Decide(Chain),
}

struct Pipelines {
    uplift: wgpu::ComputePipeline,
    fill: wgpu::ComputePipeline,
    tree_init: wgpu::ComputePipeline,
    tree_jump: wgpu::ComputePipeline,
    /// `tree_jump`, flagging records not yet solved (the second round of a pair).
    tree_jump_flag: wgpu::ComputePipeline,
    tree_store: wgpu::ComputePipeline,
    route: wgpu::ComputePipeline,
    area: wgpu::ComputePipeline,
    init: wgpu::ComputePipeline,
    /// `jump` (n = 1) or `newton`.
    incise: wgpu::ComputePipeline,
    /// `jump` flagging records not yet solved (n = 1; unused otherwise).
    incise_flag: wgpu::ComputePipeline,
    apply: wgpu::ComputePipeline,
    settle: wgpu::ComputePipeline,
    targets: wgpu::ComputePipeline,
    carry: wgpu::ComputePipeline,
    /// `carry` with the next sweep's settle.
    carry_settle: wgpu::ComputePipeline,
    deposit: wgpu::ComputePipeline,
    /// One explicit substep (maps with a wrap edge).
    diffuse: wgpu::ComputePipeline,
    /// The implicit step: rows, columns (each a split line solve: segments, separators,
    /// fill), booking.
    diffuse_rows: [wgpu::ComputePipeline; 3],
    diffuse_cols: [wgpu::ComputePipeline; 3],
    diffuse_settle: wgpu::ComputePipeline,
}

/// Sweep counts of one step (all even).
#[derive(Clone, Copy, Debug)]
struct Sweeps {
    /// Pointer-jumping rounds over a chain as long as the map has nodes.
    rounds: u32,
    fill: u32,
    area: u32,
    incise: u32,
    sediment: u32,
    /// Explicit diffusion substeps (maps with a wrap edge; 0 otherwise).
    diffuse: u32,
    /// Whether the implicit diffusion step runs (diffusion on, no wrap edge).
    implicit: bool,
    warmup: u32,
    /// Whether the incision is solved by pointer jumping (n = 1) rather than Jacobi sweeps.
    incise_jumps: bool,
    /// Whether every pointer-jumping round is dispatched ([`GpuStreamPowerOptions::every_round`]).
    every_round: bool,
}

/// What a snapshot read back (valid until the next step).
struct Cache {
    hm: Heightmap,
    maps: ErosionMaps,
    fill: Vec<f32>,
    area: Vec<f32>,
    suspended: f64,
    sums: [f64; SLOTS],
    done: u64,
}

/// The stream-power model on the GPU (module doc). Implements [`Simulation`]; one `step()` runs
/// a batch of time steps sized to about 30 ms of work.
pub struct GpuStreamPowerJob {
    ctx: Arc<GpuContext>,
    w: usize,
    h: usize,
    cell_size: f32,
    bufs: Buffers,
    pipes: Pipelines,
    rounds: Rounds,
    /// Bind groups: every pair in order, every pair swapped, only the area pair swapped (the
    /// area sweeps' odd group: they read the MFD shares from the chain pair in order), only the
    /// fill pair swapped (the fill sweeps' odd group: they read the heights in order).
    groups: [wgpu::BindGroup; 4],
    grid: (u32, u32),
    sweeps: Sweeps,
    /// Flags of the per-node inputs (outlets, sea, anchor), for a re-warm after an edit.
    node_flags: Vec<u32>,
    /// Whether the fill and area must be swept from scratch before the next step.
    warm_pending: bool,
    done: u64,
    total: u64,
    batch: u32,
    adaptive: bool,
    volume_before: f64,
    cache: OnceCell<Cache>,
    fault: Option<GpuError>,
    last_good: Option<Cache>,
    notes: RefCell<Vec<String>>,
}

impl std::fmt::Debug for GpuStreamPowerJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuStreamPowerJob")
            .field("size", &(self.w, self.h))
            .field("done", &self.done)
            .field("total", &self.total)
            .field("sweeps", &self.sweeps)
            .finish_non_exhaustive()
    }
}

impl GpuStreamPowerJob {
    /// Builds the job: validates exactly like
    /// [`crate::core::erosion::stream_power::StreamPowerJob::new`], derives the per-node inputs
    /// on the CPU, uploads them and compiles the kernels. On a map with a wrap edge, a diffusion
    /// too stiff for the explicit substeps ([`MAX_DIFFUSION_SUBSTEPS`]) is a [`GpuError`], so the
    /// caller runs the CPU model and says why.
    pub fn new(
        ctx: Arc<GpuContext>,
        terrain: Heightmap,
        params: StreamPowerParams,
        mut inputs: JobInputs,
        opts: GpuStreamPowerOptions,
    ) -> Result<Self, GpuJobError> {
        let (w, h) = (terrain.width, terrain.height);
        let n = w * h;
        if n == 0 || terrain.data.len() != n {
            return Err(JobError::BadParam {
                name: "heightmap data",
                value: terrain.data.len() as f64,
                range: "w × h",
            }
            .into());
        }
        if !terrain.all_finite() {
            return Err(JobError::NonFinite.into());
        }
        params.validate(n)?;
        check_param("cell_size", terrain.cell_size as f64, 1.0e-6, 1.0e6, "[1e-6, 1e6] m")?;
        inputs.boundary.validate()?;
        let hard = erodibility(n, &mut inputs, HardnessRule::AtMost1e6)?;
        let sink = inputs.steer.as_ref().and_then(|s| s.sink_mask());
        let runoff = inputs.steer.as_ref().map(|s| s.weights.clone());
        let sea_level = inputs.sea_level.filter(|s| s.is_finite());

        // Outlets: drain edges, the sea in the input, sinks.
        let mut flags: Vec<u32> = crate::core::erosion::stream_power::routing::outlet_mask(w, h, &inputs.boundary)
            .into_iter()
            .map(|o| o as u32 * OUTLET)
            .collect();
        if let Some(s) = sea_level {
            for (f, &v) in flags.iter_mut().zip(&terrain.data) {
                if v <= s {
                    *f |= OUTLET | SEA;
                }
            }
        }
        if let Some(m) = &sink {
            for (f, &s) in flags.iter_mut().zip(m) {
                if s != 0 {
                    *f |= OUTLET;
                }
            }
        }
        mark_sea(&mut flags, w, h, &inputs.boundary);
        let any_outlet = flags.iter().any(|&f| f & OUTLET != 0);
        if !any_outlet {
            // The terminal basin: its lowest node holds the fill down (the first lowest).
            let lowest = (0..n).fold(0, |b, i| if terrain.data[i] < terrain.data[b] { i } else { b });
            flags[lowest] |= ANCHOR;
        }
        let dt = params.dt as f64;
        let rate: Option<Vec<f32>> = match (&params.uplift_map, params.uplift_mode) {
            (Some(u), _) => Some(u.clone()),
            (None, UpliftMode::Uniform) => None,
            (None, UpliftMode::FollowTerrain) => {
                Some(terrain_uplift(&terrain.data, sea_level, params.uplift, params.uplift_exponent))
            }
        };
        let scalar = (params.uplift as f64 * dt) as f32;
        let nodes: Vec<NodeIn> = (0..n)
            .map(|i| NodeIn {
                up: if flags[i] & OUTLET != 0 {
                    0.0
                } else {
                    rate.as_ref().map_or(scalar, |r| (r[i] as f64 * dt) as f32)
                },
                c: hard.as_ref().map_or(1.0, |c| c[i]),
                runoff: runoff.as_ref().map_or(1.0, |r| r[i]),
                flags: flags[i],
            })
            .collect();

        // Constants.
        let dx = terrain.cell_size as f64;
        let (m, pn) = (params.m as f64, params.n as f64);
        let (gx, gy) = (groups(w as u32, WG), groups(h as u32, WG));
        let g_total = gx as usize * gy as usize;
        let bnd = inputs.boundary;
        let mut gp = SpParams {
            w: w as u32,
            h: h as u32,
            groups_x: gx,
            groups: g_total as u32,
            edge_l: edge_code(&bnd, Side::Left),
            edge_r: edge_code(&bnd, Side::Right),
            edge_t: edge_code(&bnd, Side::Top),
            edge_b: edge_code(&bnd, Side::Bottom),
            kdt: (params.k as f64 * dt * dx.powf(2.0 * m)) as f32,
            m: params.m,
            n: params.n,
            mfd_p: params.mfd_exponent,
            inv_dn_card: dx.powf(-pn) as f32,
            inv_dn_diag: (std::f64::consts::SQRT_2 * dx).powf(-pn) as f32,
            inv_dx: (1.0 / dx) as f32,
            sea: sea_level.unwrap_or(-3.4e38),
            shelf: sea_level.map_or(-3.4e38, |s| s - SEA_SHELF),
            eps_abs: EPS_ABS,
            eps_rel: EPS_REL,
            lake_fill: LAKE_FILL,
            ..Default::default()
        };
        if params.routing == FlowMethod::D8 {
            gp.flags |= 1;
        }
        if sea_level.is_some() {
            gp.flags |= 2;
        }
        if params.n == 1.0 {
            gp.flags |= 4;
        }
        if params.lake_deposition {
            gp.flags |= 8;
        }
        let wraps = [Side::Left, Side::Top].iter().any(|&sd| bnd.effective(sd) == EdgeMode::Wrap);
        let implicit = params.diffusion > 0.0 && !wraps;
        let diffuse = if implicit {
            gp.r_diff = (params.diffusion as f64 * dt / (dx * dx)) as f32;
            0
        } else if params.diffusion > 0.0 {
            let c_max = nodes.iter().fold(0.0f64, |a, nd| a.max(nd.c as f64));
            let r = params.diffusion as f64 * dt / (dx * dx);
            let need = (r * c_max / DIFFUSION_R).ceil();
            if need > MAX_DIFFUSION_SUBSTEPS as f64 {
                return Err(GpuError::Other(format!(
                    "hillslope diffusion needs {need} explicit substeps per step (κ·Δt/Δx² = {r:.3}); \
                     the GPU version takes at most {MAX_DIFFUSION_SUBSTEPS}"
                ))
                .into());
            }
            let k = even(need as u32);
            gp.r_diff = (r / k as f64) as f32;
            k
        } else {
            0
        };
        let rounds = even((usize::BITS - n.leading_zeros()) + 1);
        let sweeps = Sweeps {
            rounds,
            fill: even(opts.fill_sweeps),
            area: even(opts.area_sweeps),
            incise: if params.n == 1.0 { rounds } else { even(opts.newton_sweeps) },
            sediment: even(opts.sediment_sweeps),
            diffuse,
            implicit,
            warmup: even(opts.warmup_sweeps.unwrap_or((w + h) as u32)),
            incise_jumps: params.n == 1.0,
            every_round: opts.every_round,
        };

        // Buffers (sizes checked against the limits first: a map too large is a typed error).
        let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
        if gx.max(gy) > max_groups {
            return Err(GpuError::TooLarge {
                what: "map side (workgroups per dimension)".into(),
                bytes: gx.max(gy) as u64,
                limit: max_groups as u64,
            }
            .into());
        }
        let have = ctx.limits().max_storage_buffers_per_shader_stage;
        if have < STORAGE_BINDINGS {
            return Err(GpuError::Other(format!(
                "the stream-power kernels bind {STORAGE_BINDINGS} storage buffers, the adapter allows {have}"
            ))
            .into());
        }
        let nb = n as u64;
        ctx.check_fits("stream-power route buffer", nb * 4 * ROUTE_FLOATS as u64)?;
        let params_buf = ctx.uniform_buffer("stream-power params", &gp)?;
        let h0 = ctx.storage_buffer_init("sp heights 0", &terrain.data)?;
        let h1 = ctx.storage_buffer("sp heights 1", nb * 4)?;
        let w_init = warm_fill(&terrain.data, &flags);
        let w0 = ctx.storage_buffer_init("sp fill 0", &w_init)?;
        let w1 = ctx.storage_buffer("sp fill 1", nb * 4)?;
        let a_init: Vec<f32> = nodes.iter().map(|nd| nd.runoff).collect();
        let a0 = ctx.storage_buffer_init("sp area 0", &a_init)?;
        let a1 = ctx.storage_buffer("sp area 1", nb * 4)?;
        let c0 = ctx.storage_buffer("sp chain 0", nb * 16)?;
        let c1 = ctx.storage_buffer("sp chain 1", nb * 16)?;
        let s0 = ctx.storage_buffer("sp sediment 0", nb * 4)?;
        let s1 = ctx.storage_buffer("sp sediment 1", nb * 4)?;
        let route = ctx.storage_buffer_init("sp route", &route_init(&terrain.data))?;
        let nodes_buf = ctx.storage_buffer_init("sp nodes", &nodes)?;
        let maps = ctx.storage_buffer("sp erosion maps", nb * 8)?;
        let books = ctx.storage_buffer("sp books", (SLOTS * g_total * 8) as u64)?;
        let ctl = ctx.storage_buffer("sp rounds control", (CTL_WORDS * 4) as u64)?;

        // One layout for every kernel; group 0 binds each pair in order, group 1 swaps them all,
        // groups 2 and 3 only the area pair and only the fill pair (their sweeps' odd groups).
        let layout = ctx.kernel_layout("stream-power layout", STORAGE_BINDINGS)?;
        let pairs = [[&h0, &h1], [&w0, &w1], [&a0, &a1], [&c0, &c1], [&s0, &s1]];
        // `swap[k]`: pair k bound swapped.
        let make_group = |label: &str, swap: [bool; 5]| {
            let mut list: Vec<&wgpu::Buffer> = vec![&params_buf];
            for (p, &sw) in pairs.iter().zip(&swap) {
                let parity = usize::from(sw);
                list.push(p[parity]);
                list.push(p[1 - parity]);
            }
            list.extend([&route, &nodes_buf, &maps, &books, &ctl]);
            layout.bind(&ctx, label, &list)
        };
        let bind = [
            make_group("stream-power group 0", [false; 5])?,
            make_group("stream-power group 1", [true; 5])?,
            make_group("stream-power group 2 (area swapped)", [false, false, true, false, false])?,
            make_group("stream-power group 3 (fill swapped)", [false, true, false, false, false])?,
        ];
        let pipeline = |label: &str, src: &str, entry: &str| -> Result<wgpu::ComputePipeline, GpuError> {
            let module = ctx.shader(label, &format!("{COMMON}\n{src}"))?;
            layout.pipeline(&ctx, label, &module, entry)
        };
        let pipes = Pipelines {
            uplift: pipeline("sp_uplift", UPLIFT, "main")?,
            fill: pipeline("sp_fill", FILL, "main")?,
            tree_init: pipeline("sp_fill tree init", FILL, "tree_init")?,
            tree_jump: pipeline("sp_fill tree jump", FILL, "tree_jump")?,
            tree_jump_flag: pipeline("sp_fill tree jump (flag)", FILL, "tree_jump_flag")?,
            tree_store: pipeline("sp_fill tree store", FILL, "tree_store")?,
            route: pipeline("sp_route", ROUTE, "main")?,
            area: pipeline("sp_area", AREA, "main")?,
            init: pipeline("sp_incise init", INCISE, "init")?,
            incise: if params.n == 1.0 {
                pipeline("sp_incise jump", INCISE, "jump")?
            } else {
                pipeline("sp_incise newton", INCISE, "newton")?
            },
            incise_flag: pipeline("sp_incise jump (flag)", INCISE, "jump_flag")?,
            apply: pipeline("sp_incise apply", INCISE, "apply")?,
            settle: pipeline("sp_sediment settle", SEDIMENT, "settle")?,
            targets: pipeline("sp_sediment targets", SEDIMENT, "targets")?,
            carry: pipeline("sp_sediment carry", SEDIMENT, "carry_load")?,
            carry_settle: pipeline("sp_sediment carry + settle", SEDIMENT, "carry_settle")?,
            deposit: pipeline("sp_sediment deposit", SEDIMENT, "deposit")?,
            diffuse: pipeline("sp_diffuse", DIFFUSE, "main")?,
            diffuse_rows: [
                pipeline("sp_diffuse rows: segments", DIFFUSE, "rows_segments")?,
                pipeline("sp_diffuse rows: separators", DIFFUSE, "rows_separators")?,
                pipeline("sp_diffuse rows: fill", DIFFUSE, "rows_fill")?,
            ],
            diffuse_cols: [
                pipeline("sp_diffuse cols: segments", DIFFUSE, "cols_segments")?,
                pipeline("sp_diffuse cols: separators", DIFFUSE, "cols_separators")?,
                pipeline("sp_diffuse cols: fill", DIFFUSE, "cols_fill")?,
            ],
            diffuse_settle: pipeline("sp_diffuse settle", DIFFUSE, "settle")?,
        };
        // The rounds' stopping rule: its own layout (the arguments buffer must not be bound
        // where it is read as a dispatch's arguments).
        let rounds = {
            let layout = ctx.kernel_layout("stream-power rounds layout", 2)?;
            let args = ctx.indirect_buffer("sp rounds arguments", 3)?;
            let module = ctx.shader("sp_rounds", ROUNDS)?;
            let pipeline = layout.pipeline(&ctx, "sp_rounds", &module, "main")?;
            let group = |chain: Chain| -> Result<wgpu::BindGroup, GpuError> {
                let grid = ctx.uniform_buffer("sp rounds grid", &[gx, gy, chain as u32 + 1, 0])?;
                layout.bind(&ctx, "stream-power rounds group", &[&grid, &ctl, &args])
            };
            Rounds { pipeline, groups: [group(Chain::Fill)?, group(Chain::Incision)?], args }
        };
        ctx.check()?;
        Ok(Self {
            ctx,
            w,
            h,
            cell_size: terrain.cell_size,
            bufs: Buffers { h: [h0, h1], w: [w0, w1], a: [a0, a1], s: [s0, s1], route, maps, books, ctl },
            pipes,
            rounds,
            groups: bind,
            grid: (gx, gy),
            sweeps,
            node_flags: flags,
            warm_pending: true,
            done: 0,
            total: params.steps,
            batch: 1,
            adaptive: true,
            volume_before: terrain.sum(),
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

    /// Kernel dispatches one time step records (for the bench's per-step figures), counting
    /// each pointer-jumping round and the small kernel deciding each pair after the first: how
    /// many of those rounds do any work is [`Self::rounds_per_step`].
    pub fn dispatches_per_step(&self) -> u32 {
        let s = self.sweeps;
        let chain = |jumps: bool, rounds: u32| if jumps && !s.every_round { rounds + rounds / 2 - 1 } else { rounds };
        6 + chain(true, s.rounds)
            + s.fill
            + s.area
            + chain(s.incise_jumps, s.incise)
            + 2 * s.sediment
            + 2
            + s.diffuse
            + if s.implicit { 7 } else { 0 }
    }

    /// Pointer-jumping rounds that did work per time step so far, on average: the fill's tree
    /// and the incision (n = 1; otherwise its Jacobi sweeps), of the ⌈log₂ N⌉+1 each may take.
    pub fn rounds_per_step(&self) -> Result<(f64, f64, u32), GpuError> {
        let s = self.sweeps;
        let ctl = self.ctx.read_u32(&self.bufs.ctl, 0, CTL_WORDS)?;
        let steps = self.done.max(1) as f64;
        let run = |pairs: u32| if s.every_round { s.rounds as f64 } else { 2.0 + 2.0 * pairs as f64 / steps };
        let incise = if s.incise_jumps { run(ctl[2]) } else { s.incise as f64 };
        Ok((run(ctl[1]), incise, s.rounds))
    }

    /// Where a time step's GPU time goes: each kernel of the step timed alone over `reps`
    /// dispatches ([`GpuContext::time_dispatches`]), as (kernel, seconds per dispatch,
    /// dispatches per time step). For the bench only: the job's state is not fit to continue
    /// afterwards.
    pub fn kernel_times(&mut self, reps: u32) -> Result<Vec<(&'static str, f64, f64)>, GpuError> {
        let p = &self.pipes;
        let s = self.sweeps;
        let implicit = f64::from(u8::from(s.implicit));
        // The pointer-jumping rounds as the steps so far ran them (a round that did no work was
        // an empty dispatch), and the kernel deciding each later pair.
        let (tree, incise, _) = self.rounds_per_step()?;
        let decisions =
            if s.every_round { 0.0 } else { (s.rounds / 2 - 1) as f64 * if s.incise_jumps { 2.0 } else { 1.0 } };
        let sd = s.sediment as f64;
        let list: [(&'static str, &wgpu::ComputePipeline, f64); 23] = [
            ("uplift", &p.uplift, 1.0),
            ("tree init", &p.tree_init, 1.0),
            ("tree jump (pointer jumping)", &p.tree_jump, tree),
            ("tree store", &p.tree_store, 1.0),
            ("fill sweep", &p.fill, s.fill as f64),
            ("route", &p.route, 1.0),
            ("area sweep", &p.area, s.area as f64),
            ("incision init", &p.init, 1.0),
            ("incision", &p.incise, incise),
            ("apply", &p.apply, 1.0),
            ("sediment settle", &p.settle, 1.0),
            ("sediment targets", &p.targets, sd),
            ("sediment carry", &p.carry, 1.0),
            ("sediment carry + settle", &p.carry_settle, sd - 1.0),
            ("deposit", &p.deposit, 1.0),
            ("diffusion substep (explicit)", &p.diffuse, s.diffuse as f64),
            ("diffusion rows: segments (implicit)", &p.diffuse_rows[0], implicit),
            ("diffusion rows: separators (implicit)", &p.diffuse_rows[1], implicit),
            ("diffusion rows: fill (implicit)", &p.diffuse_rows[2], implicit),
            ("diffusion columns: segments (implicit)", &p.diffuse_cols[0], implicit),
            ("diffusion columns: separators (implicit)", &p.diffuse_cols[1], implicit),
            ("diffusion columns: fill (implicit)", &p.diffuse_cols[2], implicit),
            ("diffusion settle (implicit)", &p.diffuse_settle, implicit),
        ];
        let mut out: Vec<(&'static str, f64, f64)> = list
            .iter()
            .filter(|&&(_, _, per)| per > 0.0)
            .map(|&(name, pl, per)| {
                let grid = self.grid_of(pl);
                Ok((name, self.ctx.time_dispatches(pl, &self.groups[0], grid, reps)?, per))
            })
            .collect::<Result<_, GpuError>>()?;
        if decisions > 0.0 {
            let t = self.ctx.time_dispatches(&self.rounds.pipeline, &self.rounds.groups[0], (1, 1), reps)?;
            out.push(("rounds decision (one workgroup)", t, decisions));
        }
        Ok(out)
    }

    /// The adapter the job runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The workgroups a kernel is dispatched over: for the implicit diffusion's split line
    /// solves one per 64 lines (by the line's segments for the first step), the map's 16×16
    /// tiles for every other kernel.
    fn grid_of(&self, pl: &wgpu::ComputePipeline) -> (u32, u32) {
        let (w, h) = (self.w as u32, self.h as u32);
        let [rows, cols] = [&self.pipes.diffuse_rows, &self.pipes.diffuse_cols];
        if pl == &rows[0] {
            (groups(h, LINE_WG), groups(w, LINE_SEG))
        } else if pl == &rows[1] {
            (groups(h, LINE_WG), 1)
        } else if pl == &cols[0] {
            (groups(w, LINE_WG), groups(h, LINE_SEG))
        } else if pl == &cols[1] {
            (groups(w, LINE_WG), 1)
        } else {
            self.grid
        }
    }

    /// Records `k` time steps (after the warm-up sweeps where pending) into one command buffer
    /// and submits it.
    fn run_steps(&mut self, k: u32) -> Result<(), GpuError> {
        let warm = std::mem::take(&mut self.warm_pending);
        let p = &self.pipes;
        let s = self.sweeps;
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("stream-power steps") });
        {
            let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("stream power"),
                timestamp_writes: None,
            });
            // The dispatches in order.
            let mut list: Vec<Op> = Vec::new();
            if warm {
                sweep_one(&mut list, &p.fill, s.warmup, FILL_SWAPPED);
                list.push(Op::Grid(&p.route, 0));
                sweep_one(&mut list, &p.area, s.warmup, AREA_SWAPPED);
            }
            for _ in 0..k {
                list.push(Op::Grid(&p.uplift, 0));
                list.push(Op::Grid(&p.tree_init, 0));
                chain(&mut list, [&p.tree_jump, &p.tree_jump_flag], s.rounds, Chain::Fill, s.every_round);
                list.push(Op::Grid(&p.tree_store, 0));
                sweep_one(&mut list, &p.fill, s.fill, FILL_SWAPPED);
                list.push(Op::Grid(&p.route, 0));
                sweep_one(&mut list, &p.area, s.area, AREA_SWAPPED);
                list.push(Op::Grid(&p.init, 0));
                if s.incise_jumps {
                    chain(&mut list, [&p.incise, &p.incise_flag], s.incise, Chain::Incision, s.every_round);
                } else {
                    sweep(&mut list, &p.incise, s.incise);
                }
                list.push(Op::Grid(&p.apply, 0));
                list.push(Op::Grid(&p.settle, 0));
                for t in 0..s.sediment {
                    list.push(Op::Grid(&p.targets, 0));
                    let carry = if t + 1 < s.sediment { &p.carry_settle } else { &p.carry };
                    list.push(Op::Grid(carry, (t % 2) as usize));
                }
                list.push(Op::Grid(&p.deposit, 0));
                sweep(&mut list, &p.diffuse, s.diffuse);
                if s.implicit {
                    list.extend(p.diffuse_rows.iter().chain(&p.diffuse_cols).map(|pl| Op::Grid(pl, 0)));
                    list.push(Op::Grid(&p.diffuse_settle, 0));
                }
            }
            for op in list {
                match op {
                    Op::Grid(pl, parity) => {
                        let (x, y) = self.grid_of(pl);
                        cp.set_pipeline(pl);
                        cp.set_bind_group(0, &self.groups[parity], &[]);
                        cp.dispatch_workgroups(x, y, 1);
                    }
                    Op::Round(pl, parity) => {
                        cp.set_pipeline(pl);
                        cp.set_bind_group(0, &self.groups[parity], &[]);
                        cp.dispatch_workgroups_indirect(&self.rounds.args, 0);
                    }
                    Op::Decide(which) => {
                        cp.set_pipeline(&self.rounds.pipeline);
                        cp.set_bind_group(0, &self.rounds.groups[which as usize], &[]);
                        cp.dispatch_workgroups(1, 1, 1);
                    }
                }
            }
        }
        self.done += k as u64;
        self.ctx.queue().submit([enc.finish()]);
        self.ctx.wait()
    }

    fn read_back(&self) -> Result<Cache, GpuError> {
        let n = self.w * self.h;
        let ctx = &self.ctx;
        let data = ctx.read_f32(&self.bufs.h[0], 0, n)?;
        let hm = Heightmap { width: self.w, height: self.h, cell_size: self.cell_size, data };
        let m = ctx.read_f32(&self.bufs.maps, 0, 2 * n)?;
        let maps = ErosionMaps {
            eroded: m.iter().step_by(2).copied().collect(),
            deposited: m.iter().skip(1).step_by(2).copied().collect(),
        };
        let fill = ctx.read_f32(&self.bufs.w[0], 0, n)?;
        let area = ctx.read_f32(&self.bufs.a[0], 0, n)?;
        let suspended = ctx.read_f32(&self.bufs.s[0], 0, n)?.iter().map(|&v| v as f64).sum();
        let g = (self.grid.0 * self.grid.1) as usize;
        let raw = ctx.read_f32(&self.bufs.books, 0, SLOTS * g * 2)?;
        let mut sums = [0.0f64; SLOTS];
        for (k, sum) in sums.iter_mut().enumerate() {
            *sum = raw[k * g * 2..(k + 1) * g * 2].chunks_exact(2).map(|p| p[0] as f64 + p[1] as f64).sum();
        }
        Ok(Cache { hm, maps, fill, area, suspended, sums, done: self.done })
    }

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

    fn snapshot_done(&self) -> u64 {
        if self.fault.is_some() { self.last_good.as_ref().map_or(0, |c| c.done) } else { self.done }
    }
}

/// Marks on the sea nodes their distance to the land in thirds of a cell (bits 12..17, capped
/// just beyond [`SEA_SPREAD`]; beyond it: [`FAR_SEA`]) and how many neighbours lie further out
/// (bits 8..11), the neighbours as the kernels see them (`b`'s edges).
fn mark_sea(flags: &mut [u32], w: usize, h: usize, b: &crate::core::erosion::Boundary) {
    let (wx, wy) = (b.effective(Side::Left) == EdgeMode::Wrap, b.effective(Side::Top) == EdgeMode::Wrap);
    let axis = |c: usize, d: isize, n: usize, wrap: bool| -> Option<usize> {
        let v = c as isize + d;
        if (0..n as isize).contains(&v) {
            Some(v as usize)
        } else if wrap {
            Some(v.rem_euclid(n as isize) as usize)
        } else {
            None
        }
    };
    let neighbours = |i: usize| {
        let (x, y) = (i % w, i / w);
        (-1isize..=1)
            .flat_map(move |dy| (-1isize..=1).map(move |dx| (dx, dy)))
            .filter(|&d| d != (0, 0))
            .filter_map(move |(dx, dy)| Some(axis(y, dy, h, wy)? * w + axis(x, dx, w, wx)?))
    };
    let sea: Vec<bool> = flags.iter().map(|&f| f & SEA != 0).collect();
    let dist = chamfer_to_land(&sea, w, h);
    let far = (3 * SEA_SPREAD + 1) as u32;
    for i in 0..flags.len() {
        if !sea[i] {
            continue;
        }
        let out = neighbours(i).filter(|&j| sea[j] && dist[j] > dist[i]).count() as u32;
        flags[i] |= (out << 8) | (dist[i].min(far) << 12);
        if dist[i] >= far {
            flags[i] |= FAR_SEA;
        }
    }
}

/// Distance of every node to the nearest land node (`!sea`), in thirds of a cell: the 3-4
/// chamfer distance (Borgefors 1986), within 8 % of the Euclidean; two raster passes.
fn chamfer_to_land(sea: &[bool], w: usize, h: usize) -> Vec<u32> {
    const INF: u32 = u32::MAX / 2;
    let mut d: Vec<u32> = sea.iter().map(|&s| if s { INF } else { 0 }).collect();
    let at = |x: isize, y: isize| -> Option<usize> {
        ((0..w as isize).contains(&x) && (0..h as isize).contains(&y)).then(|| y as usize * w + x as usize)
    };
    let fwd = [(-1isize, -1isize, 4u32), (0, -1, 3), (1, -1, 4), (-1, 0, 3)];
    for y in 0..h as isize {
        for x in 0..w as isize {
            let i = y as usize * w + x as usize;
            for &(dx, dy, c) in &fwd {
                if let Some(j) = at(x + dx, y + dy) {
                    d[i] = d[i].min(d[j] + c);
                }
            }
        }
    }
    for y in (0..h as isize).rev() {
        for x in (0..w as isize).rev() {
            let i = y as usize * w + x as usize;
            for &(dx, dy, c) in &fwd {
                if let Some(j) = at(x - dx, y - dy) {
                    d[i] = d[i].min(d[j] + c);
                }
            }
        }
    }
    d
}

/// Appends `times` dispatches of `pl`, alternating the bind groups (`times` is even).
fn sweep<'a>(list: &mut Vec<Op<'a>>, pl: &'a wgpu::ComputePipeline, times: u32) {
    list.extend((0..times).map(|t| Op::Grid(pl, (t % 2) as usize)));
}

/// The bind group that swaps only the area pair (the area sweeps read the MFD shares from the
/// chain pair in order).
const AREA_SWAPPED: usize = 2;
/// The bind group that swaps only the fill pair (the fill sweeps read the heights in order).
const FILL_SWAPPED: usize = 3;

/// Appends `times` sweeps of `pl` (even), alternating bind group 0 and `odd`, a group that swaps
/// only the pair the sweep iterates.
fn sweep_one<'a>(list: &mut Vec<Op<'a>>, pl: &'a wgpu::ComputePipeline, times: u32, odd: usize) {
    list.extend((0..times).map(|t| Op::Grid(pl, if t % 2 == 0 { 0 } else { odd })));
}

/// Appends a pointer-jumping solve of at most `rounds` rounds (even) in pairs: the first pair
/// always, each later one over the grid [`Op::Decide`] sets from the last pair's flag (none once
/// every chain is solved; `sp_rounds.wgsl`). `[plain, flagging]` are the round's two kernels.
/// With `every_round`, all rounds run over the whole grid.
fn chain<'a>(
    list: &mut Vec<Op<'a>>,
    [plain, flagging]: [&'a wgpu::ComputePipeline; 2],
    rounds: u32,
    which: Chain,
    every_round: bool,
) {
    if every_round {
        sweep(list, plain, rounds);
        return;
    }
    list.extend([Op::Grid(plain, 0), Op::Grid(flagging, 1)]);
    for _ in 1..rounds / 2 {
        list.extend([Op::Decide(which), Op::Round(plain, 0), Op::Round(flagging, 1)]);
    }
}

/// The fill's start: `+∞` (3·10³⁸) but on outlets and the anchor, which hold their height.
fn warm_fill(h: &[f32], flags: &[u32]) -> Vec<f32> {
    h.iter().zip(flags).map(|(&v, &f)| if f & (OUTLET | ANCHOR) != 0 { v } else { 3.0e38 }).collect()
}

/// The route buffer's start: every lane 0 but the fill's floor `h0`.
fn route_init(h: &[f32]) -> Vec<f32> {
    let mut r = vec![0.0f32; h.len() * ROUTE_FLOATS];
    for (i, &v) in h.iter().enumerate() {
        r[i * ROUTE_FLOATS + ROUTE_H0] = v;
    }
    r
}

impl ResilientGpuJob<GpuStreamPowerJob> {
    /// Wraps a GPU stream-power job in the GPU models' fallback.
    pub fn stream_power(gpu: GpuStreamPowerJob, params: crate::core::erosion::ModelParams, inputs: JobInputs) -> Self {
        Self::wrap(gpu, params, inputs)
    }
}

impl GpuJob for GpuStreamPowerJob {
    fn fault(&self) -> Option<&GpuError> {
        self.fault.as_ref()
    }

    fn inject_fault(&mut self, e: GpuError) {
        let now = self.cache.take().or_else(|| self.read_back().ok());
        if now.is_some() {
            self.last_good = now;
        }
        self.fail(e);
    }

    /// The last snapshot read back before the failure; the load still moving is not handed on
    /// (the books drop it as negative `clamped`).
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

fn empty_hm() -> &'static Heightmap {
    static EMPTY: std::sync::OnceLock<Heightmap> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Heightmap { width: 0, height: 0, cell_size: 1.0, data: Vec::new() })
}

fn empty_maps() -> &'static ErosionMaps {
    static EMPTY: std::sync::OnceLock<ErosionMaps> = std::sync::OnceLock::new();
    EMPTY.get_or_init(ErosionMaps::default)
}

impl Simulation for GpuStreamPowerJob {
    fn step(&mut self) {
        if self.done >= self.total || self.fault.is_some() {
            return;
        }
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
        Ledger {
            eroded: s[0],
            deposited: s[1],
            lost_at_border: s[2],
            clamped: 0.0,
            uplift: s[3],
            suspended: c.suspended,
            volume_before: self.volume_before,
            volume_after: c.hm.sum(),
        }
    }

    fn maps(&self) -> &ErosionMaps {
        self.cached().map_or(empty_maps(), |c| &c.maps)
    }

    /// `flow`: drainage area in nodes; `water`: lake depth `W − h` where the fill stands above
    /// the ground.
    fn fields(&self) -> Fields {
        match self.cached() {
            Some(c) => Fields {
                water: Some(c.fill.iter().zip(&c.hm.data).map(|(&w, &h)| (w - h).max(0.0)).collect()),
                flow: Some(c.area.clone()),
                ..Fields::default()
            },
            None => Fields::default(),
        }
    }

    /// Reads the heights, applies the edit (rebasing `volume_before` like the CPU models),
    /// uploads them, and sweeps the fill afresh before the next step (an edit can raise a
    /// basin's rim above the last fill).
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if self.fault.is_some() || self.cached().is_none() {
            return;
        }
        let Some(mut c) = self.cache.take() else { return };
        if apply_edit(&mut c.hm, &mut self.volume_before, f) {
            self.ctx.write(&self.bufs.h[0], 0, &c.hm.data);
            self.ctx.write(&self.bufs.w[0], 0, &warm_fill(&c.hm.data, &self.node_flags));
            self.ctx.write(&self.bufs.route, 0, &route_init(&c.hm.data));
            self.warm_pending = true;
            if let Err(e) = self.ctx.wait() {
                self.fail(e);
                return;
            }
            c.fill = c.hm.data.clone();
        }
        let _ = self.cache.set(c);
    }
}

#[cfg(test)]
mod tests;
