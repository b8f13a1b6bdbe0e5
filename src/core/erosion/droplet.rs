//! Particle (droplet) hydraulic erosion — SPEC §2a, seed 000 (I. van der Veen, after H. T. Beyer,
//! *Implementation of a method for hydraulic erosion*, TU München 2015).
//!
//! Each droplet starts at a random position `p` with water `W`, speed `v`, sediment `s = 0` and no
//! direction, and repeats, at most `max_lifetime` times:
//!
//! 1. Bilinear height and gradient at `p` (fractional offsets `u, v` in the cell `h00 h10 h01 h11`):
//!    `g = ((h10−h00)(1−v) + (h11−h01)v, (h01−h00)(1−u) + (h11−h10)u)`.
//! 2. `d = d·inertia − g·(1 − inertia)`; if `|d| < 10⁻⁶` a random unit direction is drawn; `d /= |d|`.
//! 3. `p' = p + d` — exactly one cell, so no node is skipped. Outside the map the edge decides:
//!    *drain* kills the droplet and its sediment leaves the map (`lost_at_border`), *wall* reflects
//!    it back in (the crossing component of `d` flips), *wrap* re-enters on the opposite side.
//! 4. `Δh = h(p') − h(p)` (bilinear).
//! 5. Uphill (`Δh > 0`): deposit `min(s, Δh)` at `p` (fill the pit). Downhill:
//!    `c = max(−Δh, min_slope)·v·W·capacity`; if `s > c` deposit `(s − c)·deposition`, else erode
//!    `min((c − s)·erosion, −Δh)`.
//! 6. A deposit is spread bilinearly over the four nodes around `p`. Erosion is spread over every node
//!    `n` with `|p − n| < radius` with weights `max(0, radius − |p − n|) / Σ`; node `n` gives
//!    `amount·w(n)·hardness(n)` (never below `min_height` when that guard is set), and the droplet
//!    picks up exactly what was removed. The brushes are precomputed for 4×4 sub-cell positions of
//!    `p` (so `|p − n|` is exact to ⅛ cell), each row stored as zero-padded runs of 4 nodes (one
//!    SIMD vector; a zero weight leaves a node's bits unchanged); a brush clipped by a non-wrapped
//!    edge is renormalised over its in-map nodes.
//! 7. `v = √max(0, v² − Δh·gravity)`, `W ← W·(1 − evaporation)`.
//!
//! A droplet that reaches `max_lifetime` (or whose water falls below 10⁻²⁰ of its initial water) drops
//! its remaining sediment where it is, so material never vanishes: after any number of whole
//! batches `Σh_after − Σh_before = deposited − eroded` and `eroded + clamped = deposited + lost`.
//! Books are kept from the f32 change each node actually received; the carried sediment is f64 and
//! mirrors them, and the few ulps of a final deposit that f32 heights cannot represent are booked
//! in `clamped` (signed) instead of vanishing.
//!
//! ## The sea ([`JobInputs::sea_level`])
//! With a sea level the job runs in *sea mode* (issue 13; the GPU droplets have no sea yet, so
//! the backend runs such jobs on the CPU):
//!
//! * Erosion never takes a node below the sea, nor anything from a node under water: the
//!   erosion floor is at least the sea level (the same guard as `min_height`).
//! * A droplet whose position's bilinear height is at or below the sea has reached it: it never
//!   erodes again and drops its load spread with the erosion brush, each node filled at most up
//!   to the water line (deltas and beaches build up to the sea level, never above it). What the
//!   footprint cannot take it carries one cell farther downhill per step and drops there; it ends
//!   when the load is gone (or at the end of its life, dropping the rest).
//! * Deposits on land are spread over a disc of radius [`LAND_SPREAD`] instead of the four
//!   corners of the droplet's cell, and a droplet at the end of its life drops its load the same
//!   way: the bilinear corners concentrate each deposit beside the radius-5 erosion brush, the
//!   classic cause of single-node spikes.
//! * [`Simulation::finish`] levels the isolated one-node extremes that remain on land (more than
//!   [`EXTREME_TOLERANCE`] above or below all eight neighbours) by a mass-conserving trade with
//!   their neighbours ([`particles::relax_extremes`]), booked as erosion and deposition.
//!
//! Without a sea (`None`) none of this applies and the classic algorithm runs unchanged (the GPU
//! parity tests compare against it).
//!
//! Options: `min_height` (seed 000's drain-valley guard), `blur_changes` (seed 000's smoothing: the
//! change of a batch is collected separately, blurred with a sum-conserving Gaussian and then
//! applied; nodes the blur would push below `min_height` are held there and the lift is booked as
//! `clamped`, as is what the f32 rounding of the blurred change adds or loses), and a flow map (`Fields::flow` = droplet visits per node, `Fields::flow_volume` =
//! water carried across it).
//!
//! ## Parallel scheme
//! `parallel = false` is the classic algorithm: one droplet after another, each seeing every change
//! made before it. `parallel = true` runs each batch in *conflict-free tile phases*:
//!
//! * The map is cut into tiles at least `2·M` nodes wide, `M = ⌈radius⌉ + 3` being the farthest
//!   node a step reads or writes from the cell it starts in (64 nodes on large maps, so a tile's
//!   data stays in cache and droplets rarely cross edges), coloured like a 2×2 checkerboard.
//! * In a phase every tile of one colour advances, in parallel, the droplets standing in it until
//!   they end or step out; a droplet that steps out is queued on its new tile and continues in
//!   that tile's phase. Tiles of one colour are at least `2M` apart, so no two tasks ever touch
//!   the same node: nothing is merged, nothing is lost, the books stay exact.
//! * Queues are filled in a fixed order (tile order, then the order droplets left their tile), so
//!   the result depends only on the map size, the radius and the inputs — never on the thread
//!   count. Each droplet draws its randomness from `SplitMix64::stream(seed, droplet_index)`.
//! * Trade-off: within a batch droplets are interleaved in tile order instead of index order.
//!   With many droplets in flight this biases the result — a droplet waiting at a tile edge falls
//!   behind the ones eroding upstream of it, and pits at tile edges deepen before the water that
//!   would refill them arrives (measured on 128²: 2.5× the serial erosion at one droplet per 9
//!   nodes, runaway pits with a whole 2048-droplet batch in flight; with the default parameters on 256²,
//!   1.9× the serial erosion at one droplet per 32 nodes). A batch therefore runs in sub-batches of
//!   one droplet per 128 nodes (see `particles::in_flight`), where eroded volume and the erosion
//!   pattern match the serial mode (integration tests: volume within 1–2 %, change-map
//!   correlation > 0.9, with the defaults and with a short-lived radius-3 setting).
//! * Inside a tile 8 droplets advance in *lockstep lanes*: each turn plans steps 1–7 of all lanes
//!   at once — the same arithmetic, branch-free, so it runs as SIMD (AVX2 where the CPU has it,
//!   same bits) and the lanes' memory reads overlap — then applies the planned map writes lane by
//!   lane in lane order, and a lane whose droplet ends or leaves the tile takes the next one of
//!   the queue. A lane thus reads the heights before the other lanes' writes of the same turn:
//!   within a turn the 8 steps are concurrent, across turns sequential. Steps that are not plain
//!   (next to the last row or column, a random direction, an edge to confine) run the scalar
//!   step in their place.
//! * With ≤ 64 droplets left, or a single tile, the rest run on one thread in the same lanes,
//!   with the whole map as their tile, filled in queue order.
//! * The job works on its own copy of the maps, one plane each for heights, erosion, deposition,
//!   flow, flow volume and hardness, whose rows are an odd number of cache lines long: unpadded,
//!   a row of 1024 heights is 4 KiB and all rows of a brush, and every map at one node, compete
//!   for the same cache sets (measured: −30 % time per step on 1024²). The heightmap is copied
//!   back after every batch, the per-node maps when asked for.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation};
use crate::core::filter::{BlurEdge, BlurOptions, gaussian_blur_with};
use crate::core::heightmap::Heightmap;
use crate::core::rng::SplitMix64;

use particles::{Books, Geom, Raw, Rect, TileGrid, Walker};

crate::params! {
    /// Parameters of the droplet model (seed 000's names in brackets).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct DropletParams {
        /// Droplets to simulate (particleCount).
        pub droplets: u64 = 5000, range [0.0, (1u64 << 34) as f64];
        /// How much of its old direction a droplet keeps (inertia).
        pub inertia: f32 = 0.3, range [0.0, 1.0];
        /// Smallest slope used in the capacity (minSlope).
        pub min_slope: f32 = 0.01, unit "m/node", range [0.0, 1e6];
        /// Sediment capacity factor (capacityFactor / dropCapacity).
        pub capacity: f32 = 10.0, range [0.0, 1e6];
        /// Fraction of the excess sediment dropped per step (depositionRate).
        pub deposition: f32 = 0.08, range [0.0, 1.0];
        /// Fraction of the free capacity eroded per step (erosionRate).
        pub erosion: f32 = 0.7, range [0.0, 1.0];
        /// Gravity in the speed update (gravity).
        pub gravity: f32 = 9.81, range [0.0, 1e6];
        /// Fraction of water evaporating per step (evaporationRate).
        pub evaporation: f32 = 0.02, range [0.0, 1.0];
        /// Erosion brush radius (erosionRadius).
        pub radius: f32 = 5.0, unit "nodes", range [1.0, 64.0];
        /// Most steps a droplet lives (maxLifeTime).
        pub max_lifetime: u32 = 300, unit "steps", range [1.0, 1e6];
        /// Water of a new droplet.
        pub initial_water: f32 = 1.0, range [0.0, 1e6];
        /// Speed of a new droplet.
        pub initial_speed: f32 = 1.0, unit "nodes/step", range [0.0, 1e6];
        /// Drain-valley guard (seed 000, after Beyer): erosion never takes a node below this height
        /// (finite). `None`: see [`Self::floor_at_input_min`].
        pub min_height: Option<f32> = None, unit "m", range [-1e30, 1e30];
        /// When `min_height` is `None`, guard at the lowest height of the terrain the job started from.
        /// Without any guard, a pit at a drain edge draws ever more droplets and deepens
        /// without bound (seed 000's "drain valleys"; on a 0–100 m map, 20 000 droplets dig pits of −10⁶
        /// m), so an editor keeps it on; `false` gives the unguarded seed algorithm.
        pub floor_at_input_min: bool = true;
        /// Smooth the changes: each batch's change map is Gaussian-blurred with this sigma (0 = off)
        /// before it is applied. `None`: off.
        pub blur_changes: Option<f32> = None, unit "nodes", range [0.0, 1000.0];
        /// Run batches in parallel tile phases (see the module doc); `false` = classic serial order.
        pub parallel: bool = true;
        /// Droplets per step (one indivisible unit of work).
        pub batch: u32 = 4096, range [1.0, (1u64 << 24) as f64];
    }
}

impl DropletParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }
}

/// Checks a hardness map: one finite value in `0 ..= 1000` per node.
pub(crate) fn check_hardness(h: &Option<Vec<f32>>, n: usize) -> Result<(), JobError> {
    if let Some(h) = h {
        if h.len() != n {
            return Err(JobError::HardnessSize { expected: n, got: h.len() });
        }
        if let Some(&bad) = h.iter().find(|v| !(v.is_finite() && **v >= 0.0 && **v <= 1000.0)) {
            return Err(JobError::BadParam { name: "hardness", value: bad as f64, range: "0..=1000 per node" });
        }
    }
    Ok(())
}

/// Sea mode: radius (nodes) of the disc a droplet's deposits on land are spread over, weights
/// `max(0, r − |p − n|)`. The four bilinear corners concentrate every deposit on one cell and
/// leave single-node spikes beside the radius-5 erosion brush; spreading as wide as the brush
/// leaves a hammered ripple where droplets fill and re-dig flats. 2 nodes reads as sediment.
pub const LAND_SPREAD: f32 = 2.0;

/// Droplets advanced together in lockstep (see [`Ctx::walk_group`]).
const LANES: usize = 8;

/// Set by a test to run the portable kernel on an AVX2 machine.
#[cfg(test)]
static PORTABLE_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether to skip the AVX2 build of the lane kernel (tests only).
#[inline(always)]
fn portable_only() -> bool {
    #[cfg(test)]
    return PORTABLE_ONLY.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    false
}

/// Sub-cell positions per axis for which erosion brushes are precomputed.
const SUB: usize = 4;
/// Below this many live droplets a batch finishes serially.
const SERIAL_TAIL: usize = 64;

/// Nodes per brush chunk: a brush row is applied in runs of this many adjacent nodes (one SIMD
/// vector), the nodes of the run outside the disc carrying weight 0.
const CHUNK: usize = 4;

/// A run of [`CHUNK`] adjacent nodes of a brush: flat offset of the first from the base node.
#[derive(Clone, Copy, Debug)]
struct BrushChunk {
    offset: isize,
    /// Column and row of the first node relative to the base node.
    dx: i32,
    dy: i32,
    weights: [f32; CHUNK],
}

/// The brush of one sub-cell position.
#[derive(Clone, Debug)]
struct BrushVariant {
    /// `(dx, dy, weight)` relative to the base node, for clipped/wrapped brushes.
    taps: Vec<(i32, i32, f32)>,
    /// The same taps as zero-padded runs, for brushes that lie wholly inside the map.
    chunks: Vec<BrushChunk>,
}

/// Precomputed erosion brushes: weights `max(0, r − |c − n|)` normalised to 1, for the sub-cell
/// centres `c = ((qx + ½)/4, (qy + ½)/4)` relative to the base node `⌊p⌋`.
#[derive(Clone, Debug)]
struct Brush {
    /// `⌈r⌉`: taps lie in `−reach ..= reach + 1` on both axes.
    reach: usize,
    /// Column range `lo ..= hi` (relative to the base node) the padded chunks touch; within
    /// `−(reach + 1) ..= reach + 3`, so inside a particle task's margin.
    lo: isize,
    hi: isize,
    variants: Vec<BrushVariant>,
}

/// The brush weights for each of the `SUB × SUB` sub-cell centres `c` (row-major, `qy` then `qx`):
/// the taps `(dx, dy, w)` with `w = max(0, r − |c − n|)` normalised to 1 (summed in f64, then
/// rounded to f32), in row order (`dy`, then `dx`). Shared with the GPU droplets, so both use the
/// same bits.
pub(crate) fn brush_sub_taps(radius: f32) -> Vec<Vec<(i32, i32, f32)>> {
    let r = radius as f64;
    let rc = radius.ceil() as i32;
    let mut variants = Vec::with_capacity(SUB * SUB);
    for qy in 0..SUB {
        for qx in 0..SUB {
            let cx = (qx as f64 + 0.5) / SUB as f64;
            let cy = (qy as f64 + 0.5) / SUB as f64;
            let mut raw: Vec<(i32, i32, f64)> = Vec::new();
            for dy in -rc..=rc + 1 {
                for dx in -rc..=rc + 1 {
                    let d = ((dx as f64 - cx).powi(2) + (dy as f64 - cy).powi(2)).sqrt();
                    if r - d > 0.0 {
                        raw.push((dx, dy, r - d));
                    }
                }
            }
            let sum: f64 = raw.iter().map(|t| t.2).sum();
            variants.push(raw.into_iter().map(|(dx, dy, w)| (dx, dy, (w / sum) as f32)).collect());
        }
    }
    variants
}

impl Brush {
    fn new(radius: f32, width: usize) -> Self {
        let rc = radius.ceil() as i32;
        let mut variants = Vec::with_capacity(SUB * SUB);
        let (mut lo, mut hi) = (0isize, 0isize);
        for taps in brush_sub_taps(radius) {
            // Rows: the taps of one dy form a contiguous dx interval (a disc cut by a line),
            // covered by ⌈len/4⌉ chunks; the run is shifted left where it would overhang the
            // right edge by more than two nodes, so it stays within −(rc+1) ..= rc+3.
            let mut chunks = Vec::new();
            let mut i = 0;
            while i < taps.len() {
                let (dx0, dy, _) = taps[i];
                let mut j = i;
                while j < taps.len() && taps[j].1 == dy {
                    j += 1;
                }
                let n = (j - i).div_ceil(CHUNK);
                let start = dx0.min(rc + 4 - (n * CHUNK) as i32);
                for c in 0..n {
                    let first = start + (c * CHUNK) as i32;
                    let mut weights = [0.0f32; CHUNK];
                    for &(dx, _, w) in &taps[i..j] {
                        if (first..first + CHUNK as i32).contains(&dx) {
                            weights[(dx - first) as usize] = w;
                        }
                    }
                    chunks.push(BrushChunk {
                        offset: dy as isize * width as isize + first as isize,
                        dx: first,
                        dy,
                        weights,
                    });
                }
                lo = lo.min(start as isize);
                hi = hi.max((start + (n * CHUNK) as i32 - 1) as isize);
                i = j;
            }
            variants.push(BrushVariant { taps, chunks });
        }
        debug_assert!(lo >= -(rc as isize) - 1 && hi <= rc as isize + 3);
        Self { reach: rc as usize, lo, hi, variants }
    }
}

/// One droplet's state.
#[derive(Clone, Debug)]
struct Drop {
    x: f32,
    y: f32,
    dx: f32,
    dy: f32,
    speed: f32,
    water: f32,
    /// Carried sediment, f64 so it mirrors the booked height changes exactly.
    sediment: f64,
    life: u32,
    alive: bool,
    rng: SplitMix64,
}

impl Walker for Drop {
    fn alive(&self) -> bool {
        self.alive
    }
    fn stalled(&self) -> bool {
        false
    }
}

impl Drop {
    /// A dead droplet at node 0 (an empty lane).
    fn parked() -> Self {
        Drop {
            x: 0.0,
            y: 0.0,
            dx: 0.0,
            dy: 0.0,
            speed: 0.0,
            water: 0.0,
            sediment: 0.0,
            life: 0,
            alive: false,
            rng: SplitMix64::new(0),
        }
    }
}

/// [`LANES`] droplets in structure-of-arrays form (see [`Ctx::walk_group`]); the random stream
/// stays in the droplet's slot of the task's slice.
#[derive(Clone, Debug, Default)]
struct Lanes {
    x: [f32; LANES],
    y: [f32; LANES],
    dx: [f32; LANES],
    dy: [f32; LANES],
    speed: [f32; LANES],
    water: [f32; LANES],
    sed: [f64; LANES],
    life: [u32; LANES],
    alive: [bool; LANES],
    /// Index of the lane's droplet in the task's slice.
    slot: [u32; LANES],
}

impl Lanes {
    #[inline(always)]
    fn load(&mut self, l: usize, slot: usize, d: &Drop) {
        (self.x[l], self.y[l], self.dx[l], self.dy[l]) = (d.x, d.y, d.dx, d.dy);
        (self.speed[l], self.water[l], self.sed[l]) = (d.speed, d.water, d.sediment);
        (self.life[l], self.alive[l], self.slot[l]) = (d.life, d.alive, slot as u32);
    }

    #[inline(always)]
    fn store(&self, l: usize, ds: &mut [Drop]) {
        let d = &mut ds[self.slot[l] as usize];
        (d.x, d.y, d.dx, d.dy) = (self.x[l], self.y[l], self.dx[l], self.dy[l]);
        (d.speed, d.water, d.sediment) = (self.speed[l], self.water[l], self.sed[l]);
        (d.life, d.alive) = (self.life[l], self.alive[l]);
    }

    /// Takes the planned state for the lanes of `mask`.
    #[inline(always)]
    fn commit(&mut self, p: &Plan, mask: u32) {
        for l in 0..LANES {
            if mask & (1 << l) != 0 {
                (self.x[l], self.y[l], self.dx[l], self.dy[l]) = (p.nx[l], p.ny[l], p.dx[l], p.dy[l]);
                (self.speed[l], self.water[l]) = (p.speed[l], p.water[l]);
                self.life[l] += 1;
            }
        }
    }

    /// Empties lane `l` (node 0, never stepped).
    fn park(&mut self, l: usize) {
        self.load(l, 0, &Drop::parked());
    }
}

/// The bilinear cells of [`LANES`] positions (see [`Ctx::corners`]).
#[derive(Clone, Debug, Default)]
struct Corners {
    /// Flat index of `h00`, its column and row, the offsets in the cell, the corner heights
    /// `[h00, h10, h01, h11]`.
    i: [u32; LANES],
    xi: [i32; LANES],
    yi: [i32; LANES],
    u: [f32; LANES],
    v: [f32; LANES],
    h: [[f32; LANES]; 4],
}

/// What [`Ctx::plan`] worked out for every lane.
#[derive(Clone, Debug, Default)]
struct Plan {
    /// Bit `l`: lane `l` takes a plain step with these values.
    plain: u32,
    /// Bit `l`: after this step lane `l`'s droplet ends or stands outside the tile.
    attention: u32,
    /// Bit `l`: lane `l`'s padded brush lies in the map.
    fits: u32,
    /// Flat index of the node `h00` of the lane's cell (maps have at most 2²⁸ nodes).
    cell: [u32; LANES],
    /// Bilinear weights of the cell's four nodes (`[node][lane]`), for a deposit.
    wts: [[f32; LANES]; 4],
    /// Brush variant for the position in the cell.
    variant: [u32; LANES],
    /// What to deposit (> 0) or erode (> 0) at the old position.
    deposit: [f32; LANES],
    erode: [f32; LANES],
    /// The new state.
    dx: [f32; LANES],
    dy: [f32; LANES],
    nx: [f32; LANES],
    ny: [f32; LANES],
    speed: [f32; LANES],
    water: [f32; LANES],
    /// Node nearest to the new position (flow map).
    visit: [u32; LANES],
}

/// Everything a droplet step reads, with raw access to the shared maps.
struct Ctx<'a> {
    geom: Geom,
    raw: Raw,
    brush: &'a Brush,
    inertia: f32,
    min_slope: f32,
    capacity: f32,
    deposition: f32,
    erosion: f32,
    gravity: f32,
    keep_water: f32,
    max_life: u32,
    min_water: f32,
    /// `min_height` or −∞ (with a sea, at least the sea level).
    floor: f32,
    /// The sea level, or −∞ without a sea. A droplet whose position is at or below it has
    /// reached the sea (see [`Ctx::sea_step`]).
    sea: f32,
    /// Sea mode (a sea level is set): deposits are spread over a disc ([`LAND_SPREAD`]) instead
    /// of bilinearly over the four corners of the droplet's cell.
    spread: bool,
}

impl Ctx<'_> {
    /// Runs droplet `d` to its end (the classic serial algorithm).
    ///
    /// # Safety
    /// `self.raw` points at live maps of `geom.w × geom.h` nodes and the caller has exclusive
    /// access to them.
    unsafe fn walk(&self, d: &mut Drop, b: &mut Books) {
        while unsafe { self.step(d, None, b) } {}
    }

    /// Advances the droplets of one tile until each has ended or stepped out of it, [`LANES`] at a
    /// time in lockstep. Every turn
    ///
    /// 1. [`Ctx::plan`]s the step of all lanes together: steps 1–4, the amount to deposit or
    ///    erode, the new speed, water and position, and whether the droplet ends or leaves the
    ///    tile — branch-free, so it runs as SIMD and the lanes' memory accesses overlap;
    /// 2. applies the planned changes to the maps lane by lane, in lane order (deposit, brush,
    ///    flow map), and commits the planned droplet states;
    /// 3. ends the lanes' droplets that are done (dropping their sediment) and lets go of those
    ///    that left the tile, in lane order, each lane taking the next droplet of `ds`.
    ///
    /// A step that is not plain — a cell next to the last row or column, a random direction, an
    /// edge to confine — is run by [`Ctx::step`] instead, in its place in step 2, from the
    /// current heights. With `rect = None` (the whole map is this task's) nothing leaves.
    ///
    /// So a lane reads the heights before the other lanes' steps of the same turn were applied:
    /// within a turn the lanes' steps are concurrent, across turns sequential.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    unsafe fn walk_group(&self, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && !portable_only() {
            // SAFETY: the CPU has AVX2; otherwise as this function.
            return unsafe { self.walk_lanes_avx2(ds, rect, b) };
        }
        // SAFETY: as this function.
        unsafe { self.walk_lanes_any(ds, rect, b) }
    }

    /// [`Ctx::walk_lanes_any`] compiled for AVX2 (8 lanes per vector instead of 4). Only vector
    /// width and instruction encoding differ — IEEE single precision, no fused multiply-add — so
    /// the results are the same bits.
    ///
    /// # Safety
    /// As [`Ctx::step`], on a CPU with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn walk_lanes_avx2(&self, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) {
        // SAFETY: as this function.
        unsafe { self.walk_lanes_any(ds, rect, b) }
    }

    /// Dispatches [`Ctx::walk_lanes`] on hardness and the `min_height` guard.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[inline(always)]
    unsafe fn walk_lanes_any(&self, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) {
        let guard = self.floor > f32::NEG_INFINITY;
        // SAFETY (all four): as this function.
        match (self.raw.hard.is_null(), guard) {
            (true, false) => unsafe { self.walk_lanes::<false, false>(ds, rect, b) },
            (true, true) => unsafe { self.walk_lanes::<false, true>(ds, rect, b) },
            (false, false) => unsafe { self.walk_lanes::<true, false>(ds, rect, b) },
            (false, true) => unsafe { self.walk_lanes::<true, true>(ds, rect, b) },
        }
    }

    /// [`Ctx::walk_group`], monomorphised on hardness and the `min_height` guard.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[inline(always)]
    unsafe fn walk_lanes<const HARD: bool, const GUARD: bool>(
        &self,
        ds: &mut [Drop],
        rect: Option<Rect>,
        b: &mut Books,
    ) {
        // The tile as a position range: a plain step ends in the tile iff its position does.
        let area = match rect {
            Some(t) => [t.x0 as f32, t.x1 as f32, t.y0 as f32, t.y1 as f32],
            None => [0.0, f32::INFINITY, 0.0, f32::INFINITY],
        };
        let mut s = Lanes::default();
        let mut next = 0usize;
        let mut live = 0u32;
        for l in 0..LANES {
            if unsafe { self.fill(&mut s, l, ds, &mut next, rect, b) } {
                live |= 1 << l;
            }
        }
        while live != 0 {
            let p = unsafe { self.plan(&s, &area) };
            let plain = p.plain & live;
            // Lanes to end or let go after this turn.
            let mut out = p.attention & plain;
            for l in 0..LANES {
                if live & (1 << l) == 0 {
                    continue;
                }
                if plain & (1 << l) != 0 {
                    unsafe { self.apply::<HARD, GUARD>(&mut s, &p, l, b) };
                } else if !unsafe { self.step_lane(&mut s, l, ds, rect, b) && self.keeps(&mut s, l, rect, b) } {
                    out |= 1 << l;
                }
            }
            s.commit(&p, plain);
            while out != 0 {
                let l = out.trailing_zeros() as usize;
                out &= out - 1;
                if plain & (1 << l) != 0 && (s.water[l] < self.min_water || s.life[l] >= self.max_life) {
                    unsafe { self.settle_lane(&mut s, l, b) };
                }
                s.store(l, ds);
                if !unsafe { self.fill(&mut s, l, ds, &mut next, rect, b) } {
                    live &= !(1 << l);
                }
            }
        }
    }

    /// Loads the next droplet of `ds` that can step in `rect` into lane `l`; droplets that are
    /// dead, out of the tile or at the end of their life (settled here) are passed over.
    /// Returns `false` when `ds` is used up (the lane is then parked on node 0).
    ///
    /// # Safety
    /// As [`Ctx::step`].
    unsafe fn fill(
        &self,
        s: &mut Lanes,
        l: usize,
        ds: &mut [Drop],
        next: &mut usize,
        rect: Option<Rect>,
        b: &mut Books,
    ) -> bool {
        while *next < ds.len() {
            let i = *next;
            *next += 1;
            let d = &mut ds[i];
            if !d.alive {
                continue;
            }
            if d.life >= self.max_life {
                unsafe { self.settle(d, b) };
                continue;
            }
            if let Some(t) = rect {
                let (cx, cy) = self.geom.owner_cell(d.x, d.y);
                if !t.owns(cx, cy) {
                    continue;
                }
            }
            s.load(l, i, d);
            return true;
        }
        s.park(l);
        false
    }

    /// After a step of lane `l` run by [`Ctx::step`]: ends a droplet that reached its lifetime
    /// (dropping its sediment) and lets go of one that left the tile. Returns whether the lane
    /// steps on.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    unsafe fn keeps(&self, s: &mut Lanes, l: usize, rect: Option<Rect>, b: &mut Books) -> bool {
        if s.life[l] >= self.max_life {
            unsafe { self.settle_lane(s, l, b) };
            return false;
        }
        match rect {
            Some(t) => {
                let (cx, cy) = self.geom.owner_cell(s.x[l], s.y[l]);
                t.owns(cx, cy)
            }
            None => true,
        }
    }

    /// Plans one step for every lane at once (see [`Ctx::walk_group`]): the same arithmetic as
    /// [`Ctx::step`], so a plain step gives the same bits either way. `area` is the tile as
    /// `[x0, x1, y0, y1]`.
    ///
    /// # Safety
    /// `self.raw` holds the maps and no other thread writes the nodes the lanes read.
    #[inline(always)]
    unsafe fn plan(&self, s: &Lanes, area: &[f32; 4]) -> Plan {
        let g = &self.geom;
        let (xlast, ylast) = ((g.w - 1) as f32, (g.h - 1) as f32);
        let mut p = Plan::default();
        // 1. Height and gradient at the position.
        let old = unsafe { self.corners(&s.x, &s.y) };
        let (u, v, [h00, h10, h01, h11]) = (old.u, old.v, old.h);
        let (mut sx, mut sy) = ([0.0f32; LANES], [0.0f32; LANES]);
        let mut h_old = [0.0f32; LANES];
        let mut plain = [0u32; LANES];
        for l in 0..LANES {
            let (u, v) = (u[l], v[l]);
            let (h00, h10, h01, h11) = (h00[l], h10[l], h01[l], h11[l]);
            let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
            let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
            h_old[l] = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
            // 2. Direction.
            let dx = s.dx[l] * self.inertia - gx * (1.0 - self.inertia);
            let dy = s.dy[l] * self.inertia - gy * (1.0 - self.inertia);
            let len = (dx * dx + dy * dy).sqrt();
            let (dx, dy) = (dx / len, dy / len);
            // 3. Plain: a real direction, and the old and new cells strictly inside the last
            // row and column (no edge, seam or clamp involved).
            let (x, y) = (s.x[l], s.y[l]);
            let (px, py) = (x + dx, y + dy);
            let ok = (1e-6..=f32::MAX).contains(&len) & (x < xlast) & (y < ylast);
            let ok = ok & (px >= 0.0) & (px < xlast) & (py >= 0.0) & (py < ylast);
            plain[l] = ok as u32;
            (p.dx[l], p.dy[l], p.nx[l], p.ny[l]) = (dx, dy, px, py);
            (sx[l], sy[l]) = if ok { (px, py) } else { (x, y) };
        }
        // 4. Height at the new position.
        let new = unsafe { self.corners(&sx, &sy) };
        let (un, vn, [n00, n10, n01, n11]) = (new.u, new.v, new.h);
        let r = self.brush.reach as i32;
        let (xend, yend) = (g.w as i32, g.h as i32);
        let (lo, hi) = (self.brush.lo as i32, self.brush.hi as i32);
        let w = g.pitch as i32;
        let (mut attention, mut fits) = ([false; LANES], [false; LANES]);
        for l in 0..LANES {
            let (u1, v1) = (un[l], vn[l]);
            let h_new = n00[l] * (1.0 - u1) * (1.0 - v1)
                + n10[l] * u1 * (1.0 - v1)
                + n01[l] * (1.0 - u1) * v1
                + n11[l] * u1 * v1;
            let dh = h_new - h_old[l];
            // At sea (never with sea = −∞): the scalar step takes over.
            plain[l] &= (h_old[l] > self.sea) as u32;
            // 5. Deposit or erode.
            let (speed, water, sed) = (s.speed[l], s.water[l], s.sed[l] as f32);
            let cap = ((-dh).max(self.min_slope) * speed * water * self.capacity).min(1e30);
            let fill = sed > cap;
            let up = dh > 0.0;
            let on_fill = if fill { (sed - cap) * self.deposition } else { 0.0 };
            p.deposit[l] = if up { sed.min(dh) } else { on_fill };
            let dig = ((cap - sed) * self.erosion).min(-dh);
            p.erode[l] = if up | fill { 0.0 } else { dig };
            // 6. Where: bilinear weights, and the brush variant and whether it fits the map.
            let (u, v) = (u[l], v[l]);
            p.wts[0][l] = (1.0 - u) * (1.0 - v);
            p.wts[1][l] = u * (1.0 - v);
            p.wts[2][l] = (1.0 - u) * v;
            p.wts[3][l] = u * v;
            let (bx, by) = (old.xi[l], old.yi[l]);
            // u, v ∈ [0, 1], so the conversions are in range.
            let qx = unsafe { (u * SUB as f32).to_int_unchecked::<i32>() }.min(SUB as i32 - 1);
            let qy = unsafe { (v * SUB as f32).to_int_unchecked::<i32>() }.min(SUB as i32 - 1);
            p.variant[l] = (qy * SUB as i32 + qx) as u32;
            fits[l] = (bx + lo >= 0) & (bx + hi < xend) & (by >= r) & (by + r + 1 < yend);
            // 7. Speed and water; visit and what happens next.
            p.speed[l] = (speed * speed - dh * self.gravity).clamp(0.0, 1e30).sqrt();
            p.water[l] = water * self.keep_water;
            let (nx, ny) = (p.nx[l], p.ny[l]);
            let xi = unsafe { (nx + 0.5).max(0.0).min(xlast).to_int_unchecked::<i32>() };
            let yi = unsafe { (ny + 0.5).max(0.0).min(ylast).to_int_unchecked::<i32>() };
            p.visit[l] = (yi * w + xi) as u32;
            let stays = (nx >= area[0]) & (nx < area[1]) & (ny >= area[2]) & (ny < area[3]);
            let ends = (p.water[l] < self.min_water) | (s.life[l] as i64 + 1 >= self.max_life as i64);
            attention[l] = ends | !stays;
        }
        for l in 0..LANES {
            p.plain |= plain[l] << l;
            p.fits |= (fits[l] as u32) << l;
            p.attention |= (attention[l] as u32) << l;
        }
        p.cell = old.i;
        p
    }

    /// The bilinear cells of the lanes' positions (clamped into the map). Equals [`Geom::cell`]
    /// for positions strictly inside the last row and column.
    ///
    /// # Safety
    /// As [`Ctx::plan`].
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    unsafe fn corners(&self, x: &[f32; LANES], y: &[f32; LANES]) -> Corners {
        let g = &self.geom;
        let (xlast, ylast) = ((g.w - 1) as f32, (g.h - 1) as f32);
        let (xcell, ycell, w) = (g.w as i32 - 2, g.h as i32 - 2, g.pitch as i32);
        let mut c = Corners::default();
        for l in 0..LANES {
            // `max` first: NaN becomes 0, so the conversions are in range whatever the lane holds.
            let xi = unsafe { x[l].max(0.0).min(xlast).to_int_unchecked::<i32>() }.min(xcell);
            let yi = unsafe { y[l].max(0.0).min(ylast).to_int_unchecked::<i32>() }.min(ycell);
            // < 2²⁸ nodes, so no overflow.
            c.i[l] = (yi * w + xi) as u32;
            (c.xi[l], c.yi[l]) = (xi, yi);
            c.u[l] = x[l] - xi as f32;
            c.v[l] = y[l] - yi as f32;
        }
        let h = self.raw.h as *const f32;
        let w = g.pitch;
        for l in 0..LANES {
            let k = c.i[l] as usize;
            // SAFETY: column ≤ w − 2 and row ≤ h − 2, so all four nodes are in the map.
            unsafe {
                c.h[0][l] = *h.add(k);
                c.h[1][l] = *h.add(k + 1);
                c.h[2][l] = *h.add(k + w);
                c.h[3][l] = *h.add(k + w + 1);
            }
        }
        c
    }

    /// Applies the planned step of plain lane `l` to the maps: the deposit or the erosion at its
    /// old position and the visit at the new one; books it and updates the carried sediment.
    ///
    /// # Safety
    /// As [`Ctx::step`]; the lane's cell is inside the task's tile.
    #[inline(always)]
    unsafe fn apply<const HARD: bool, const GUARD: bool>(&self, s: &mut Lanes, p: &Plan, l: usize, b: &mut Books) {
        let raw = &self.raw;
        let i = p.cell[l] as usize;
        if p.deposit[l] > 0.0 {
            let put = if self.spread {
                unsafe {
                    particles::deposit_disc(raw, &self.geom, s.x[l], s.y[l], p.deposit[l], LAND_SPREAD, f32::INFINITY)
                }
            } else {
                let ws = [p.wts[0][l], p.wts[1][l], p.wts[2][l], p.wts[3][l]];
                unsafe { deposit_cell(raw, i, self.geom.pitch, ws, p.deposit[l]) }
            };
            b.deposited += put;
            s.sed[l] -= put;
        } else if p.erode[l] > 0.0 {
            let got = if p.fits & (1 << l) != 0 {
                let var = &self.brush.variants[p.variant[l] as usize];
                // SAFETY: the padded brush fits the map (planned) and lies in the task's margin.
                (unsafe { brush_fast::<HARD, GUARD>(raw, var, i, p.erode[l], self.floor) }) as f64
            } else {
                unsafe { self.erode(s.x[l], s.y[l], p.erode[l]) }
            };
            b.eroded += got;
            s.sed[l] += got;
        }
        unsafe { raw.visit(p.visit[l] as usize, p.water[l]) };
    }

    /// Runs one [`Ctx::step`] for lane `l` (a step that is not plain). Returns `false` when the
    /// droplet ended.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[cold]
    unsafe fn step_lane(&self, s: &mut Lanes, l: usize, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) -> bool {
        s.store(l, ds);
        let d = &mut ds[s.slot[l] as usize];
        let go = unsafe { self.step(d, rect, b) };
        s.load(l, s.slot[l] as usize, d);
        go && d.alive
    }

    /// Drops the sediment of lane `l` where it stands and ends the droplet.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    unsafe fn settle_lane(&self, s: &mut Lanes, l: usize, b: &mut Books) {
        let mut d = Drop { x: s.x[l], y: s.y[l], sediment: s.sed[l], ..Drop::parked() };
        unsafe { self.settle(&mut d, b) };
        s.sed[l] = 0.0;
        s.alive[l] = false;
    }

    /// One step of droplet `d` (SPEC §2a steps 1–7). Returns `false` when the droplet has ended,
    /// or (with `rect`) when it does not stand in that tile — then it took no step.
    ///
    /// # Safety
    /// `self.raw` points at live maps of `geom.w × geom.h` nodes. With `rect = Some(t)` no other
    /// thread may touch a node within [`Ctx::margin`] of `t` while this runs: every node a step
    /// reads or writes lies within that margin of the cell the droplet stands on when it starts,
    /// and it only starts from cells inside `t`. With `None` the caller must have exclusive access
    /// to the maps.
    #[inline(always)]
    unsafe fn step(&self, d: &mut Drop, rect: Option<Rect>, b: &mut Books) -> bool {
        let g = &self.geom;
        let raw = &self.raw;
        if !d.alive {
            return false;
        }
        if d.life >= self.max_life {
            unsafe { self.settle(d, b) };
            return false;
        }
        if let Some(t) = rect {
            let (cx, cy) = g.owner_cell(d.x, d.y);
            if !t.owns(cx, cy) {
                return false;
            }
        }
        // 1. Height and gradient at the old position.
        let (idx, u, v) = g.cell(d.x, d.y);
        let [h00, h10, h01, h11] = unsafe { [raw.h(idx[0]), raw.h(idx[1]), raw.h(idx[2]), raw.h(idx[3])] };
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let h_old = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        if h_old <= self.sea {
            return unsafe { self.sea_step(d, gx, gy, b) };
        }
        // 2. New direction.
        let mut dx = d.dx * self.inertia - gx * (1.0 - self.inertia);
        let mut dy = d.dy * self.inertia - gy * (1.0 - self.inertia);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-6 || !len.is_finite() {
            (dx, dy) = particles::random_unit(&mut d.rng);
        } else {
            dx /= len;
            dy /= len;
        }
        // 3. One cell along it; the edges decide what leaving means.
        let (nx, ny) = match g.confine(d.x + dx, d.y + dy) {
            particles::Confined::Exit => {
                b.lost += d.sediment;
                d.sediment = 0.0;
                d.alive = false;
                return false;
            }
            particles::Confined::Inside { x, y, flip_x, flip_y } => {
                if flip_x {
                    dx = -dx;
                }
                if flip_y {
                    dy = -dy;
                }
                (x, y)
            }
        };
        d.dx = dx;
        d.dy = dy;
        // 4. Height difference.
        let h_new = unsafe { g.sample(raw, nx, ny) };
        let dh = h_new - h_old;
        // 5./6. Deposit or erode at the old position.
        let sed = d.sediment as f32;
        if dh > 0.0 {
            let a = sed.min(dh);
            if a > 0.0 {
                let put = unsafe { self.deposit_at(d.x, d.y, idx, u, v, a) };
                b.deposited += put;
                d.sediment -= put;
            }
        } else {
            let cap = ((-dh).max(self.min_slope) * d.speed * d.water * self.capacity).min(1e30);
            if sed > cap {
                let a = (sed - cap) * self.deposition;
                if a > 0.0 {
                    let put = unsafe { self.deposit_at(d.x, d.y, idx, u, v, a) };
                    b.deposited += put;
                    d.sediment -= put;
                }
            } else {
                let a = ((cap - sed) * self.erosion).min(-dh);
                if a > 0.0 {
                    let got = unsafe { self.erode(d.x, d.y, a) };
                    b.eroded += got;
                    d.sediment += got;
                }
            }
        }
        // 7. Speed and water.
        d.speed = (d.speed * d.speed - dh * self.gravity).clamp(0.0, 1e30).sqrt();
        d.water *= self.keep_water;
        d.life += 1;
        d.x = nx;
        d.y = ny;
        unsafe { raw.visit(g.nearest(nx, ny), d.water) };
        if d.water < self.min_water {
            unsafe { self.settle(d, b) };
            return false;
        }
        true
    }

    /// Drops all remaining sediment at the droplet's position and ends it.
    ///
    /// # Safety
    /// As [`Ctx::walk`].
    unsafe fn settle(&self, d: &mut Drop, b: &mut Books) {
        let mut put = 0.0;
        if d.sediment > 0.0 {
            let (idx, u, v) = self.geom.cell(d.x, d.y);
            put = unsafe { self.deposit_at(d.x, d.y, idx, u, v, d.sediment as f32) };
            b.deposited += put;
        }
        // What f32 heights could not represent (a few ulps at most) is booked, not lost.
        b.residue(d.sediment - put);
        d.sediment = 0.0;
        d.alive = false;
    }

    /// A deposit of `amount` at `(x, y)` (cell `idx`, offsets `u, v`): spread over a disc of
    /// [`LAND_SPREAD`] nodes in sea mode, bilinear otherwise. Returns what the heights received.
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(x, y)` lies in the map.
    #[inline(always)]
    unsafe fn deposit_at(&self, x: f32, y: f32, idx: [usize; 4], u: f32, v: f32, amount: f32) -> f64 {
        if self.spread {
            unsafe { particles::deposit_disc(&self.raw, &self.geom, x, y, amount, LAND_SPREAD, f32::INFINITY) }
        } else {
            unsafe { deposit4(&self.raw, idx, u, v, amount) }
        }
    }

    /// Spreads `amount` with the erosion brush centred at `(x, y)` (the same footprint the
    /// droplet erodes with, renormalised over the in-map nodes), never raising a node above
    /// `cap`: node `n` receives `min(amount·w(n), max(0, cap − h(n)))`. Returns what the heights
    /// received (less than `amount` where nodes reached `cap`).
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(x, y)` lies in the map.
    unsafe fn deposit_spread(&self, x: f32, y: f32, amount: f32, cap: f32) -> f64 {
        let g = &self.geom;
        let (bx, by) = g.owner_cell(x, y);
        let qx = (((x - bx as f32) * SUB as f32) as usize).min(SUB - 1);
        let qy = (((y - by as f32) * SUB as f32) as usize).min(SUB - 1);
        let var = &self.brush.variants[qy * SUB + qx];
        let raw = &self.raw;
        let node = |dx: i32, dy: i32| g.node(bx as isize + dx as isize, by as isize + dy as isize);
        let inside = bx >= self.brush.reach
            && by >= self.brush.reach
            && bx + self.brush.reach + 1 < g.w
            && by + self.brush.reach + 1 < g.h;
        let sum =
            if inside { 1.0 } else { var.taps.iter().filter(|t| node(t.0, t.1).is_some()).map(|t| t.2).sum::<f32>() };
        if sum <= 0.0 {
            return 0.0;
        }
        let a = amount / sum;
        let mut put = 0.0f64;
        // Inside, every tap is a node of the map: its index without the edge-mode look-up.
        let (base, pitch) = ((by * g.pitch + bx) as isize, g.pitch as isize);
        for &(dx, dy, w) in &var.taps {
            let n = if inside { Some((base + dy as isize * pitch + dx as isize) as usize) } else { node(dx, dy) };
            if let Some(i) = n {
                // SAFETY: in-map indices (`node`, or inside the map by `inside`), within the brush's reach.
                unsafe {
                    let h = &mut *raw.h.add(i);
                    let old = *h;
                    let t = (a * w).min((cap - old).max(0.0));
                    let new = old + t;
                    *h = new;
                    *raw.dep.add(i) += new - old;
                    put += new as f64 - old as f64;
                }
            }
        }
        put
    }

    /// One step of a droplet that has reached the sea (its position's height `≤ sea`; `gx, gy`
    /// the gradient there): it never erodes, drops what the brush footprint can take below the
    /// sea level ([`Ctx::deposit_spread`] capped at the sea: a delta or a beach builds up to the
    /// water line, never above it) and, while it still carries sediment, moves on one cell
    /// downhill to drop the rest farther out. It ends when its load is gone (or at the end of
    /// its life, dropping what is left). Returns whether it goes on.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[cold]
    unsafe fn sea_step(&self, d: &mut Drop, gx: f32, gy: f32, b: &mut Books) -> bool {
        if d.sediment > 0.0 {
            let put = unsafe { self.deposit_spread(d.x, d.y, d.sediment as f32, self.sea) };
            b.deposited += put;
            d.sediment -= put;
        }
        // Below a micrometre·node the rest is booked (as f32 rounding is), not carried on.
        if d.sediment < 1e-6 {
            b.residue(d.sediment);
            d.sediment = 0.0;
            d.alive = false;
            return false;
        }
        let mut dx = d.dx * self.inertia - gx * (1.0 - self.inertia);
        let mut dy = d.dy * self.inertia - gy * (1.0 - self.inertia);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-6 || !len.is_finite() {
            (dx, dy) = particles::random_unit(&mut d.rng);
        } else {
            dx /= len;
            dy /= len;
        }
        match self.geom.confine(d.x + dx, d.y + dy) {
            particles::Confined::Exit => {
                b.lost += d.sediment;
                d.sediment = 0.0;
                d.alive = false;
                return false;
            }
            particles::Confined::Inside { x, y, flip_x, flip_y } => {
                d.dx = if flip_x { -dx } else { dx };
                d.dy = if flip_y { -dy } else { dy };
                d.x = x;
                d.y = y;
            }
        }
        d.life += 1;
        unsafe { self.raw.visit(self.geom.nearest(d.x, d.y), d.water) };
        if d.life >= self.max_life {
            unsafe { self.settle(d, b) };
            return false;
        }
        true
    }

    /// Erodes `amount` with the brush centred at `(x, y)`; returns what was actually removed.
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(x, y)` lies in the map.
    unsafe fn erode(&self, x: f32, y: f32, amount: f32) -> f64 {
        let g = &self.geom;
        let (bx, by) = g.owner_cell(x, y);
        let qx = (((x - bx as f32) * SUB as f32) as usize).min(SUB - 1);
        let qy = (((y - by as f32) * SUB as f32) as usize).min(SUB - 1);
        let var = &self.brush.variants[qy * SUB + qx];
        let r = self.brush.reach;
        let raw = &self.raw;
        let mut got = 0.0f64;
        let br = self.brush;
        if bx as isize + br.lo >= 0 && by >= r && bx as isize + br.hi < g.w as isize && by + r + 1 < g.h {
            // Fast path: the whole padded brush is inside the map.
            let base = by * g.pitch + bx;
            let guard = self.floor > f32::NEG_INFINITY;
            // SAFETY (all four): the chunks span bx+lo..=bx+hi × by−r..=by+r+1, inside the map
            // (checked above) and within this task's margin.
            got = match (raw.hard.is_null(), guard) {
                (true, false) => unsafe { brush_fast::<false, false>(raw, var, base, amount, self.floor) },
                (true, true) => unsafe { brush_fast::<false, true>(raw, var, base, amount, self.floor) },
                (false, false) => unsafe { brush_fast::<true, false>(raw, var, base, amount, self.floor) },
                (false, true) => unsafe { brush_fast::<true, true>(raw, var, base, amount, self.floor) },
            } as f64;
        } else if !g.wrap_x && !g.wrap_y {
            // Clipped by the map edge: renormalise over the in-map nodes.
            let guard = self.floor > f32::NEG_INFINITY;
            // SAFETY (all four): `brush_clipped` touches in-map nodes of the brush only.
            got = match (raw.hard.is_null(), guard) {
                (true, false) => unsafe { self.brush_clipped::<false, false>(var, bx, by, amount) },
                (true, true) => unsafe { self.brush_clipped::<false, true>(var, bx, by, amount) },
                (false, false) => unsafe { self.brush_clipped::<true, false>(var, bx, by, amount) },
                (false, true) => unsafe { self.brush_clipped::<true, true>(var, bx, by, amount) },
            };
        } else {
            // Slow path: clip (renormalising over the in-map nodes) or wrap.
            let mut sum = 0.0f32;
            for &(dx, dy, w) in &var.taps {
                if g.node(bx as isize + dx as isize, by as isize + dy as isize).is_some() {
                    sum += w;
                }
            }
            if sum <= 0.0 {
                return 0.0;
            }
            for &(dx, dy, w) in &var.taps {
                if let Some(i) = g.node(bx as isize + dx as isize, by as isize + dy as isize) {
                    let k = unsafe { raw.hard(i) };
                    // SAFETY: `node` only returns in-map indices.
                    let (h, e) = unsafe { (&mut *raw.h.add(i), &mut *raw.ero.add(i)) };
                    got += take(h, e, amount * (w / sum) * k, self.floor);
                }
            }
        }
        got
    }
}

impl Ctx<'_> {
    /// The brush of variant `var` at cell `(bx, by)` on a map without wrapped edges, clipped to
    /// the map: node `j` loses `min(a·w_j·k_j, max(0, h_j − floor))` with `a = amount / Σ w` over
    /// the in-map nodes. Returns what was removed.
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(bx, by)` is a node of the map.
    unsafe fn brush_clipped<const HARD: bool, const GUARD: bool>(
        &self,
        var: &BrushVariant,
        bx: usize,
        by: usize,
        amount: f32,
    ) -> f64 {
        let g = &self.geom;
        let (w, h) = (g.w as isize, g.h as isize);
        let (bx, by) = (bx as isize, by as isize);
        let row_in = |c: &BrushChunk| (0..h).contains(&(by + c.dy as isize));
        let mut sum = 0.0f32;
        for c in var.chunks.iter().filter(|c| row_in(c)) {
            for (j, &wt) in c.weights.iter().enumerate() {
                if (0..w).contains(&(bx + (c.dx as isize) + j as isize)) {
                    sum += wt;
                }
            }
        }
        if sum <= 0.0 {
            return 0.0;
        }
        let a = amount / sum;
        let raw = &self.raw;
        let mut got = 0.0f32;
        for c in var.chunks.iter().filter(|c| row_in(c)) {
            let (x0, row) = (bx + c.dx as isize, (by + c.dy as isize) * g.pitch as isize);
            if x0 >= 0 && x0 + CHUNK as isize <= w {
                // SAFETY: the whole chunk is in the map.
                got += unsafe { erode_chunk::<HARD, GUARD>(raw, (row + x0) as usize, &c.weights, a, self.floor) };
            } else {
                for (j, &wt) in c.weights.iter().enumerate() {
                    let x = x0 + j as isize;
                    if (0..w).contains(&x) {
                        // SAFETY: an in-map node of the brush.
                        got += unsafe { erode_node::<HARD, GUARD>(raw, (row + x) as usize, wt, a, self.floor) };
                    }
                }
            }
        }
        got as f64
    }
}

/// [`brush_fast`] for the one chunk of nodes `start .. start + CHUNK`; returns the sum of what
/// they lost.
///
/// # Safety
/// The nodes are in the map and the caller may write them.
#[inline(always)]
unsafe fn erode_chunk<const HARD: bool, const GUARD: bool>(
    raw: &Raw,
    start: usize,
    ws: &[f32; CHUNK],
    a: f32,
    floor: f32,
) -> f32 {
    let mut got = 0.0;
    for (j, &wt) in ws.iter().enumerate() {
        // SAFETY: as this function.
        got += unsafe { erode_node::<HARD, GUARD>(raw, start + j, wt, a, floor) };
    }
    got
}

/// One node of a brush: loses `min(a·w·k, max(0, h − floor))`, booked in the erosion map;
/// returns the exact f32 change.
///
/// # Safety
/// `i` is in the map and the caller may write it.
#[inline(always)]
unsafe fn erode_node<const HARD: bool, const GUARD: bool>(raw: &Raw, i: usize, w: f32, a: f32, floor: f32) -> f32 {
    // SAFETY: as this function.
    unsafe {
        let (h, e) = (&mut *raw.h.add(i), &mut *raw.ero.add(i));
        let old = *h;
        let mut t = a * w;
        if HARD {
            t *= *raw.hard.add(i);
        }
        if GUARD {
            let room = old - floor;
            let room = if room > 0.0 { room } else { 0.0 };
            t = if t < room { t } else { room };
        }
        let new = old - t;
        *h = new;
        let d = old - new;
        *e += d;
        d
    }
}

/// Removes up to `want` from one node without going below `floor`; books it; returns exactly
/// what the node lost (the f64 difference of two f32 values is exact).
#[inline(always)]
fn take(h: &mut f32, e: &mut f32, want: f32, floor: f32) -> f64 {
    let old = *h;
    let t = want.min((old - floor).max(0.0));
    let new = old - t;
    *h = new;
    *e += old - new;
    old as f64 - new as f64
}

/// Erodes a whole, unclipped brush at flat index `base`; returns the sum of what the nodes lost.
/// Every chunk is one vector: node `j` loses `min(a·w_j·k_j, max(0, h_j − floor))`, which is also
/// added to its erosion map entry (padding nodes have `w = 0` and stay bit-identical). The exact
/// f32 changes are summed in [`CHUNK`] lanes. Monomorphised on hardness and the `min_height`
/// guard so the loop stays branch-free.
///
/// # Safety
/// Every chunk of `var` placed at `base` lies in the map, and the caller may write those nodes.
#[inline(always)]
unsafe fn brush_fast<const HARD: bool, const GUARD: bool>(
    raw: &Raw,
    var: &BrushVariant,
    base: usize,
    a: f32,
    floor: f32,
) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SSE2 is part of x86_64. The same operations as the portable loop below, lane by lane
        // (IEEE single precision, no fused operations), so both give the same bits.
        use std::arch::x86_64::*;
        // SAFETY: every chunk lies in the map (caller) and is written by this task only.
        unsafe {
            let (va, vf, zero) = (_mm_set1_ps(a), _mm_set1_ps(floor), _mm_setzero_ps());
            let mut acc = zero;
            for c in &var.chunks {
                let start = (base as isize + c.offset) as usize;
                debug_assert!(start + CHUNK <= raw.n);
                let (hp, ep) = (raw.h.add(start), raw.ero.add(start));
                let old = _mm_loadu_ps(hp);
                let mut t = _mm_mul_ps(va, _mm_loadu_ps(c.weights.as_ptr()));
                if HARD {
                    t = _mm_mul_ps(t, _mm_loadu_ps(raw.hard.add(start)));
                }
                if GUARD {
                    // min(t, max(old − floor, 0)); nothing here is NaN.
                    t = _mm_min_ps(t, _mm_max_ps(_mm_sub_ps(old, vf), zero));
                }
                let new = _mm_sub_ps(old, t);
                _mm_storeu_ps(hp, new);
                let d = _mm_sub_ps(old, new);
                _mm_storeu_ps(ep, _mm_add_ps(_mm_loadu_ps(ep), d));
                acc = _mm_add_ps(acc, d);
            }
            let mut l = [0.0f32; CHUNK];
            _mm_storeu_ps(l.as_mut_ptr(), acc);
            (l[0] + l[1]) + (l[2] + l[3])
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut acc = [0.0f32; CHUNK];
        for c in &var.chunks {
            let start = (base as isize + c.offset) as usize;
            debug_assert!(start + CHUNK <= raw.n);
            for l in 0..CHUNK {
                // SAFETY: in the map (caller), and no one else touches these nodes meanwhile.
                acc[l] += unsafe { erode_node::<HARD, GUARD>(raw, start + l, c.weights[l], a, floor) };
            }
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3])
    }
}

/// [`deposit4`] on the cell whose node `h00` is `i` (rows `w` apart), with precomputed weights.
///
/// # Safety
/// As [`deposit4`]; the cell's four nodes are in the map.
#[inline(always)]
unsafe fn deposit_cell(raw: &Raw, i: usize, w: usize, ws: [f32; 4], amount: f32) -> f64 {
    unsafe { deposit_weighted(raw, [i, i + 1, i + w, i + w + 1], ws, amount) }
}

/// Adds `amount` bilinearly over the four nodes `idx` (weights from `u, v`); returns what was added.
///
/// # Safety
/// The indices are in the map and the caller may write them.
#[inline(always)]
unsafe fn deposit4(raw: &Raw, idx: [usize; 4], u: f32, v: f32, amount: f32) -> f64 {
    let ws = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
    unsafe { deposit_weighted(raw, idx, ws, amount) }
}

/// Adds `amount · ws[k]` at node `idx[k]` and to the deposition map; returns what the f32 heights
/// actually received.
///
/// # Safety
/// The indices are in the map and the caller may write them.
#[inline(always)]
unsafe fn deposit_weighted(raw: &Raw, idx: [usize; 4], ws: [f32; 4], amount: f32) -> f64 {
    let mut put = 0.0f64;
    for (i, w) in idx.into_iter().zip(ws) {
        unsafe {
            let h = &mut *raw.h.add(i);
            let old = *h;
            let new = old + amount * w;
            *h = new;
            *raw.dep.add(i) += new - old;
            put += new as f64 - old as f64;
        }
    }
    put
}

/// The maps the droplets work on, in one allocation: planes of `h` rows of `pitch ≥ w` values.
/// Pitch and plane stride are odd numbers of 64-byte lines, so the rows of a brush, and the
/// planes at one node, fall into different cache sets: unpadded, a row of 1024 heights is 4 KiB
/// and every row of every map competes for the same few sets and TLB entries.
#[derive(Clone, Debug)]
struct Planes {
    data: Vec<f32>,
    w: usize,
    h: usize,
    pitch: usize,
    stride: usize,
}

/// Plane numbers in [`Planes`].
const P_H: usize = 0;
const P_ERO: usize = 1;
const P_DEP: usize = 2;
const P_FLOW: usize = 3;
const P_FVOL: usize = 4;
/// Hardness (when given), or the blur mode's throw-away per-node books.
const P_HARD: usize = 5;
const P_SCRATCH: usize = 6;

impl Planes {
    fn new(w: usize, h: usize, count: usize) -> Self {
        let odd_lines = |n: usize| (n.div_ceil(16) | 1) * 16;
        let pitch = odd_lines(w);
        let stride = odd_lines(pitch * h);
        Self { data: vec![0.0; stride * count], w, h, pitch, stride }
    }

    fn plane(&self, k: usize) -> &[f32] {
        &self.data[k * self.stride..][..self.pitch * self.h]
    }

    fn plane_mut(&mut self, k: usize) -> &mut [f32] {
        &mut self.data[k * self.stride..][..self.pitch * self.h]
    }

    /// Start of plane `k` (null when there is no such plane).
    fn ptr(&mut self, k: usize) -> *mut f32 {
        if (k + 1) * self.stride <= self.data.len() {
            self.data[k * self.stride..].as_mut_ptr()
        } else {
            std::ptr::null_mut()
        }
    }

    /// Copies a `w × h` row-major map into plane `k`.
    fn import(&mut self, k: usize, src: &[f32]) {
        let (w, pitch) = (self.w, self.pitch);
        for (row, s) in self.plane_mut(k).chunks_mut(pitch).zip(src.chunks(w)) {
            row[..w].copy_from_slice(s);
        }
    }

    /// Plane `k` as a `w × h` row-major map, into `dst`.
    fn export_into(&self, k: usize, dst: &mut [f32]) {
        for (d, row) in dst.chunks_mut(self.w).zip(self.plane(k).chunks(self.pitch)) {
            d.copy_from_slice(&row[..self.w]);
        }
    }

    fn export(&self, k: usize) -> Vec<f32> {
        let mut v = vec![0.0; self.w * self.h];
        self.export_into(k, &mut v);
        v
    }
}

/// A running droplet-erosion job (see the module doc).
pub struct DropletJob {
    /// The terrain, kept equal to the height plane after every step.
    hm: Heightmap,
    /// The maps being worked on (heights, books, flow, hardness); see [`Planes`].
    planes: Planes,
    /// The height plane must be reloaded from `hm` (which was edited or blurred).
    stale: bool,
    /// `maps()`, exported from the planes when first asked for after a step.
    maps: std::sync::OnceLock<ErosionMaps>,
    params: DropletParams,
    seed: u64,
    has_hardness: bool,
    ledger: Ledger,
    done: u64,
    brush: Brush,
    grid: TileGrid,
    geom: Geom,
    /// Blur mode: the heights at the start of the batch.
    base: Vec<f32>,
    /// Maps with fewer than 2 nodes along a side have no cells: nothing to erode.
    degenerate: bool,
    /// The erosion floor: `min_height`, or the input's minimum (`floor_at_input_min`), or −∞;
    /// with a sea, at least the sea level.
    floor: f32,
    /// The sea level ([`JobInputs::sea_level`]).
    sea: Option<f32>,
}

impl DropletJob {
    /// Prepares a job. Fails on parameters outside their documented ranges, a hardness map of the
    /// wrong size or with values outside `0 ..= 1000`, or non-finite heights.
    pub fn new(terrain: Heightmap, params: DropletParams, inputs: JobInputs) -> Result<Self, JobError> {
        params.validate()?;
        if !terrain.all_finite() {
            return Err(JobError::NonFinite);
        }
        let n = terrain.len();
        check_hardness(&inputs.hardness, n)?;
        let (w, h) = (terrain.width, terrain.height);
        let degenerate = w < 2 || h < 2;
        let blur = params.blur_changes.is_some_and(|s| s > 0.0);
        // Hardness, then the blur mode's scratch books, after the five planes every job has.
        let count = if blur {
            P_SCRATCH + 2
        } else if inputs.hardness.is_some() {
            P_HARD + 1
        } else {
            P_HARD
        };
        let mut planes = Planes::new(w, h, count);
        planes.import(P_H, &terrain.data);
        if let Some(hard) = &inputs.hardness {
            planes.import(P_HARD, hard);
        }
        let geom = Geom::new(w, h, &inputs.boundary).with_pitch(planes.pitch);
        let brush = Brush::new(params.radius, planes.pitch);
        let margin = brush.reach + 3;
        let grid = TileGrid::new(w, h, particles::tile_size(w, h, margin), geom.wrap_x, geom.wrap_y);
        let volume = terrain.sum();
        let floor = match (params.min_height, params.floor_at_input_min) {
            (Some(m), _) => m,
            (None, true) => terrain.stats().min,
            (None, false) => f32::NEG_INFINITY,
        };
        // With a sea, erosion never takes a node below it (nor lowers one already under water).
        let floor = match inputs.sea_level {
            Some(s) => floor.max(s),
            None => floor,
        };
        Ok(Self {
            floor,
            sea: inputs.sea_level.filter(|s| s.is_finite()),
            params,
            seed: inputs.seed,
            has_hardness: inputs.hardness.is_some(),
            planes,
            stale: false,
            maps: std::sync::OnceLock::new(),
            ledger: Ledger { volume_before: volume, volume_after: volume, ..Ledger::default() },
            done: 0,
            brush,
            grid,
            geom,
            base: if blur { vec![0.0; n] } else { Vec::new() },
            degenerate,
            hm: terrain,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &DropletParams {
        &self.params
    }

    /// Raw access to the planes the droplets write: the books go to the scratch planes in blur
    /// mode.
    fn raw(&mut self) -> Raw {
        let blur = !self.base.is_empty();
        let pl = &mut self.planes;
        let (ero, dep) = if blur { (pl.ptr(P_SCRATCH), pl.ptr(P_SCRATCH + 1)) } else { (pl.ptr(P_ERO), pl.ptr(P_DEP)) };
        Raw {
            h: pl.ptr(P_H),
            ero,
            dep,
            flow: pl.ptr(P_FLOW),
            fvol: pl.ptr(P_FVOL),
            hard: if self.has_hardness { pl.ptr(P_HARD) } else { std::ptr::null_mut() },
            n: pl.pitch * pl.h,
        }
    }

    fn spawn(&self, id: u64) -> Drop {
        let mut rng = SplitMix64::stream(self.seed, id);
        let x = rng.next_f32() * self.geom.span_x;
        let y = rng.next_f32() * self.geom.span_y;
        let (x, y) = match self.geom.confine(x, y) {
            particles::Confined::Inside { x, y, .. } => (x, y),
            particles::Confined::Exit => (0.0, 0.0),
        };
        Drop {
            x,
            y,
            dx: 0.0,
            dy: 0.0,
            speed: self.params.initial_speed,
            water: self.params.initial_water,
            sediment: 0.0,
            life: 0,
            alive: true,
            rng,
        }
    }

    /// Simulates droplets `start .. end`; returns the scalar books of the batch.
    fn run_batch(&mut self, start: u64, end: u64) -> Books {
        if self.stale {
            self.planes.import(P_H, &self.hm.data);
            self.stale = false;
        }
        let raw = self.raw();
        let p = &self.params;
        let drops: Vec<Drop> = (start..end).map(|id| self.spawn(id)).collect();
        let ctx = Ctx {
            geom: self.geom,
            raw,
            brush: &self.brush,
            inertia: p.inertia,
            min_slope: p.min_slope,
            capacity: p.capacity,
            deposition: p.deposition,
            erosion: p.erosion,
            gravity: p.gravity,
            keep_water: 1.0 - p.evaporation,
            max_life: p.max_lifetime,
            min_water: (p.initial_water * 1e-20).max(1e-30),
            floor: self.floor,
            sea: self.sea.unwrap_or(f32::NEG_INFINITY),
            spread: self.sea.is_some(),
        };
        let mut books = Books::default();
        // Mark the start nodes in the flow map (every droplet visits where it lands).
        for d in &drops {
            // SAFETY: exclusive access here; `nearest` returns an in-map index.
            unsafe { raw.visit(self.geom.nearest(d.x, d.y), d.water) };
        }
        if p.parallel {
            // A bounded number of droplets in flight at once (see `particles::in_flight`).
            let sub = particles::in_flight(&self.grid, self.hm.len());
            let (grid, geom) = (&self.grid, self.geom);
            let mut drops = drops;
            // On a worker thread of the pool, so the many short phases of a batch are forked from
            // inside the pool instead of each waking it from outside (and, on one thread, run
            // without any hand-over).
            rayon::scope(|_| {
                while !drops.is_empty() {
                    let rest = drops.split_off(sub.min(drops.len()));
                    let chunk = std::mem::replace(&mut drops, rest);
                    particles::run(
                        grid,
                        chunk,
                        SERIAL_TAIL,
                        |d: &Drop| geom.owner_cell(d.x, d.y),
                        // SAFETY: `particles::run` hands each task a tile whose margin (2·margin
                        // wide tiles, margin = reach + 3) no concurrent task touches, or runs
                        // serially.
                        |rect, ds: &mut [Drop], b: &mut Books| unsafe { ctx.walk_group(ds, rect, b) },
                        |b| books.add(&b),
                    );
                }
            });
        } else {
            for mut d in drops {
                // SAFETY: serial, `&mut self` gives exclusive access to every map.
                unsafe { ctx.walk(&mut d, &mut books) };
            }
        }
        self.planes.export_into(P_H, &mut self.hm.data);
        books
    }

    /// Blur mode: blur the batch's change (conserving its sum), apply it, book it.
    fn apply_blurred_change(&mut self, sigma: f32) -> (f64, f64, f64) {
        let (w, h) = (self.hm.width, self.hm.height);
        let mut delta: Vec<f32> = self.hm.data.iter().zip(&self.base).map(|(a, b)| a - b).collect();
        let opts = BlurOptions { wrap_x: self.geom.wrap_x, wrap_y: self.geom.wrap_y, edge: BlurEdge::Conserve };
        gaussian_blur_with(&mut delta, w, h, sigma, opts);
        let floor = self.params.min_height.unwrap_or(f32::NEG_INFINITY);
        let pitch = self.planes.pitch;
        let (books, _) = self.planes.data.split_at_mut(P_FLOW * self.planes.stride);
        let (eroded, deposited) = books.split_at_mut(P_DEP * self.planes.stride);
        let (eroded, deposited) = (&mut eroded[P_ERO * self.planes.stride..][..pitch * h], &mut deposited[..pitch * h]);
        let rows: Vec<(f64, f64, f64)> = self
            .hm
            .data
            .par_chunks_mut(w)
            .zip(self.base.par_chunks(w))
            .zip(delta.par_chunks(w))
            .zip(eroded.par_chunks_mut(pitch))
            .zip(deposited.par_chunks_mut(pitch))
            .map(|((((hs, bs), ds), es), ps)| {
                let (mut ero, mut dep, mut lift) = (0.0f64, 0.0f64, 0.0f64);
                for ((((hv, &old), &dv), e), p) in hs.iter_mut().zip(bs).zip(ds).zip(es.iter_mut()).zip(ps.iter_mut()) {
                    let free = old + dv;
                    // What the f32 delta, blur and sum gained or lost against the droplets'
                    // change is material created outside the budget: booked with the lift.
                    lift += (free as f64 - old as f64) - (*hv as f64 - old as f64);
                    // Erosion may not take a node below the guard (or lower one already below it).
                    let new = if dv < 0.0 { free.max(old.min(floor)) } else { free };
                    lift += new as f64 - free as f64;
                    *hv = new;
                    let change = new as f64 - old as f64;
                    if change < 0.0 {
                        *e -= (new - old).min(0.0);
                        ero -= change;
                    } else {
                        *p += new - old;
                        dep += change;
                    }
                }
                (ero, dep, lift)
            })
            .collect();
        self.stale = true;
        rows.iter().fold((0.0, 0.0, 0.0), |a, r| (a.0 + r.0, a.1 + r.1, a.2 + r.2))
    }
}

impl Simulation for DropletJob {
    fn step(&mut self) {
        if self.done >= self.params.droplets {
            return;
        }
        let start = self.done;
        let end = (start + self.params.batch as u64).min(self.params.droplets);
        if self.degenerate {
            self.done = end;
            return;
        }
        self.maps.take();
        let blur = self.params.blur_changes.filter(|&s| s > 0.0);
        if blur.is_some() {
            self.base.copy_from_slice(&self.hm.data);
        }
        let books = self.run_batch(start, end);
        self.ledger.lost_at_border += books.lost;
        self.ledger.clamped += books.clamped;
        if let Some(sigma) = blur {
            let (ero, dep, lift) = self.apply_blurred_change(sigma);
            self.ledger.eroded += ero;
            self.ledger.deposited += dep;
            self.ledger.clamped += lift;
        } else {
            self.ledger.eroded += books.eroded;
            self.ledger.deposited += books.deposited;
        }
        self.done = end;
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.params.droplets }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger { volume_after: self.hm.sum(), ..self.ledger }
    }

    fn maps(&self) -> &ErosionMaps {
        self.maps
            .get_or_init(|| ErosionMaps { eroded: self.planes.export(P_ERO), deposited: self.planes.export(P_DEP) })
    }

    fn fields(&self) -> Fields {
        Fields {
            flow: Some(self.planes.export(P_FLOW)),
            flow_volume: Some(self.planes.export(P_FVOL)),
            ..Fields::default()
        }
    }

    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if super::apply_edit(&mut self.hm, &mut self.ledger.volume_before, f) {
            self.stale = true;
        }
    }

    fn finish(&mut self) {
        let Some(sea) = self.sea else { return };
        if self.degenerate || self.done == 0 {
            return;
        }
        let (w, pitch) = (self.hm.width, self.planes.pitch);
        let mut ero = self.planes.plane(P_ERO).to_vec();
        let mut dep = self.planes.plane(P_DEP).to_vec();
        let (e, d) = particles::relax_extremes(&mut self.hm, sea, EXTREME_TOLERANCE, &mut |i, dh| {
            let k = (i / w) * pitch + i % w;
            if dh < 0.0 { ero[k] -= dh } else { dep[k] += dh }
        });
        self.planes.plane_mut(P_ERO).copy_from_slice(&ero);
        self.planes.plane_mut(P_DEP).copy_from_slice(&dep);
        self.ledger.eroded += e;
        self.ledger.deposited += d;
        // The f32 rounding of the trades (a few ulps) is material made or lost: booked.
        self.ledger.clamped += d - e;
        self.maps.take();
        self.stale = true;
    }
}

/// Sea mode's finishing pass: a land node more than this far (metres) above or below all of its
/// eight neighbours is an isolated extreme and is relaxed (see [`particles::relax_extremes`]).
pub(crate) const EXTREME_TOLERANCE: f32 = 0.05;

/// Shared machinery of the particle models (droplet and snowball): map geometry under the edge
/// modes, raw access to the shared maps, and the conflict-free tile scheduler.
pub(crate) mod particles {
    use rayon::prelude::*;

    use super::super::{Boundary, EdgeMode, Side};
    use crate::core::rng::SplitMix64;

    /// Scalar books of a task, summed in a fixed order.
    #[derive(Clone, Copy, Debug, Default)]
    pub(crate) struct Books {
        pub eroded: f64,
        pub deposited: f64,
        pub lost: f64,
        /// Signed material created (+) or dropped (−) outside the sediment budget: the sub-ulp
        /// remainder of a final deposit that f32 heights cannot represent.
        pub clamped: f64,
    }

    impl Books {
        pub(crate) fn add(&mut self, o: &Books) {
            self.eroded += o.eroded;
            self.deposited += o.deposited;
            self.lost += o.lost;
            self.clamped += o.clamped;
        }

        /// Books `left` (carried material that did not reach the terrain) as dropped.
        #[inline]
        pub(crate) fn residue(&mut self, left: f64) {
            self.clamped -= left;
        }
    }

    /// Adds up to `amount` around `(x, y)` with weights `max(0, r − |p − n|)` over the nodes `n`
    /// within `r` (renormalised over the in-map ones), never raising a node above `cap`: node `n`
    /// receives `min(amount·w(n), max(0, cap − h(n)))`. Returns what the heights received.
    ///
    /// # Safety
    /// `raw` holds this geometry's maps, `(x, y)` lies in the map and the caller may write every
    /// node within `⌈r⌉ + 1` of its cell.
    pub(crate) unsafe fn deposit_disc(raw: &Raw, g: &Geom, x: f32, y: f32, amount: f32, r: f32, cap: f32) -> f64 {
        let (bx, by) = g.owner_cell(x, y);
        let rc = r.ceil() as isize;
        let (bxi, byi) = (bx as isize, by as isize);
        // Only `taps[..k]` is read, and every one of those was written.
        let mut taps = [std::mem::MaybeUninit::<(usize, f32)>::uninit(); 64];
        let (mut k, mut sum) = (0usize, 0.0f32);
        if (0..=3).contains(&rc) && bxi >= rc && byi >= rc && bxi + rc + 1 < g.w as isize && byi + rc + 1 < g.h as isize
        {
            // Every candidate node lies in the map (at most 8 × 8 of them): the general loop
            // below without its node look-ups, branch-free, and without the rows and columns
            // that lie wholly outside the disc (`√(ex² + ey²) ≥ √ex² ≥ r`). The same distances,
            // taps and sum, in the same order.
            let n = (2 * rc + 2) as usize;
            let (mut ex2, mut ey2) = ([f32::INFINITY; 8], [f32::INFINITY; 8]);
            let (mut x0, mut x1, mut y0, mut y1) = (n, 0, n, 0);
            for c in 0..n {
                ex2[c] = ((bxi + c as isize - rc) as f32 - x).powi(2);
                ey2[c] = ((byi + c as isize - rc) as f32 - y).powi(2);
                // (A NaN makes its whole column or row NaN: outside either way.)
                if ex2[c].sqrt() < r {
                    (x0, x1) = (x0.min(c), c + 1);
                }
                if ey2[c].sqrt() < r {
                    (y0, y1) = (y0.min(c), c + 1);
                }
            }
            for (ry, &ey) in ey2.iter().enumerate().take(y1).skip(y0) {
                let row = (byi + ry as isize - rc) as usize * g.pitch + bx - rc as usize;
                let d: [f32; 8] = std::array::from_fn(|c| (ex2[c] + ey).sqrt());
                for (cx, &dc) in d.iter().enumerate().take(x1).skip(x0) {
                    taps[k].write((row + cx, r - dc));
                    k += (dc < r) as usize;
                }
            }
            // SAFETY: `taps[..k]` were written just above.
            for t in &taps[..k] {
                sum += unsafe { t.assume_init_ref() }.1;
            }
        } else {
            for dy in -rc..=rc + 1 {
                for dx in -rc..=rc + 1 {
                    let (nx, ny) = (bxi + dx, byi + dy);
                    let d = ((nx as f32 - x).powi(2) + (ny as f32 - y).powi(2)).sqrt();
                    if d < r && k < taps.len() {
                        if let Some(i) = g.node(nx, ny) {
                            taps[k].write((i, r - d));
                            sum += r - d;
                            k += 1;
                        }
                    }
                }
            }
        }
        if sum <= 0.0 {
            return 0.0;
        }
        let a = amount / sum;
        let mut put = 0.0f64;
        // SAFETY: `taps[..k]` were written above.
        for &(i, w) in taps[..k].iter().map(|t| unsafe { t.assume_init_ref() }) {
            // SAFETY: in-map indices (`node`, or the fast path's bounds), within the caller's reach.
            unsafe {
                let h = &mut *raw.h.add(i);
                let old = *h;
                let t = (a * w).min((cap - old).max(0.0));
                let new = old + t;
                *h = new;
                *raw.dep.add(i) += new - old;
                put += new as f64 - old as f64;
            }
        }
        put
    }

    /// Levels isolated one-node extremes on land (a node above `sea` whose eight neighbours are
    /// too): a node more than `tol`
    /// above all eight neighbours (a spike) or below all of them (a pit) trades material with
    /// its neighbours, mass-conserving, until it ties the nearest one: a spike `c` over
    /// neighbours whose highest is `m` gives `x = 8(c − m)/9`, `x/8` to each neighbour (so it
    /// ends level with that neighbour); a pit takes `x/8` from each. Nothing else is touched, so
    /// the map is not blurred. Up to four sweeps in row order (a relaxed node's neighbours are
    /// looked at again). `record(i, dh)` gets every node change (exact f32 differences);
    /// returns (eroded, deposited) in metre·nodes, equal up to f32 rounding.
    pub(crate) fn relax_extremes(
        hm: &mut crate::core::heightmap::Heightmap,
        sea: f32,
        tol: f32,
        record: &mut dyn FnMut(usize, f32),
    ) -> (f64, f64) {
        let (w, h) = (hm.width, hm.height);
        let (mut ero, mut dep) = (0.0f64, 0.0f64);
        if w < 3 || h < 3 {
            return (ero, dep);
        }
        const NB: [(isize, isize); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];
        for _ in 0..4 {
            let mut changed = false;
            for y in 1..h - 1 {
                for x in 1..w - 1 {
                    let i = y * w + x;
                    let c = hm.data[i];
                    if c <= sea {
                        continue;
                    }
                    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                    for (dx, dy) in NB {
                        let v = hm.data[(y as isize + dy) as usize * w + (x as isize + dx) as usize];
                        lo = lo.min(v);
                        hi = hi.max(v);
                    }
                    if lo <= sea {
                        // On the shore: nothing is taken from or put into the sea here.
                        continue;
                    }
                    // Signed amount the node gives (> 0, a spike) or takes (< 0, a pit).
                    let give = if c > hi + tol {
                        (c - hi) * (8.0 / 9.0)
                    } else if c < lo - tol {
                        (c - lo) * (8.0 / 9.0)
                    } else {
                        continue;
                    };
                    changed = true;
                    let mut apply = |j: usize, dh: f32| {
                        let old = hm.data[j];
                        let new = old + dh;
                        hm.data[j] = new;
                        let got = new - old;
                        record(j, got);
                        if got < 0.0 { ero -= got as f64 } else { dep += got as f64 }
                    };
                    apply(i, -give);
                    for (dx, dy) in NB {
                        apply((y as isize + dy) as usize * w + (x as isize + dx) as usize, give / 8.0);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        (ero, dep)
    }

    /// Raw pointers to the maps a particle task writes.
    ///
    /// Invariant: every pointer is valid for `n` elements for as long as the value is used, and
    /// concurrent users touch disjoint node sets (the tile scheduler's margin guarantee).
    #[derive(Clone, Copy)]
    pub(crate) struct Raw {
        pub h: *mut f32,
        pub ero: *mut f32,
        pub dep: *mut f32,
        pub flow: *mut f32,
        /// May be null (no water-volume map).
        pub fvol: *mut f32,
        /// Null = hardness 1 everywhere.
        pub hard: *const f32,
        pub n: usize,
    }

    // SAFETY: see the invariant on `Raw`; the scheduler never lets two threads touch one node.
    unsafe impl Send for Raw {}
    unsafe impl Sync for Raw {}

    impl Raw {
        /// # Safety
        /// `i < n` and no concurrent writer of node `i`.
        #[inline(always)]
        pub unsafe fn h(&self, i: usize) -> f32 {
            debug_assert!(i < self.n);
            unsafe { *self.h.add(i) }
        }
        /// # Safety
        /// `i < n`.
        #[inline(always)]
        pub unsafe fn hard(&self, i: usize) -> f32 {
            debug_assert!(i < self.n);
            if self.hard.is_null() { 1.0 } else { unsafe { *self.hard.add(i) } }
        }
        /// Counts a particle visit (and the water it carries) at node `i`.
        ///
        /// # Safety
        /// `i < n` and the caller may write node `i`.
        #[inline(always)]
        pub unsafe fn visit(&self, i: usize, water: f32) {
            debug_assert!(i < self.n);
            unsafe {
                *self.flow.add(i) += 1.0;
                if !self.fvol.is_null() {
                    *self.fvol.add(i) += water;
                }
            }
        }
    }

    /// Where a moved particle ended up.
    pub(crate) enum Confined {
        /// In the map (after any reflection or wrap); `flip_*` = it bounced off a wall on that axis.
        Inside { x: f32, y: f32, flip_x: bool, flip_y: bool },
        /// It crossed a drain edge.
        Exit,
    }

    /// The map's size and edge modes, as particles see it. Positions live in `[0, w−1]` on a
    /// bounded axis and in `[0, w)` on a wrapped one (the cell between the last and first node
    /// exists there).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Geom {
        pub w: usize,
        pub h: usize,
        /// Distance between the starts of two rows in the maps (`≥ w`; `w` unless padded).
        pub pitch: usize,
        pub wrap_x: bool,
        pub wrap_y: bool,
        left: EdgeMode,
        right: EdgeMode,
        top: EdgeMode,
        bottom: EdgeMode,
        /// Length of the position domain per axis.
        pub span_x: f32,
        pub span_y: f32,
    }

    impl Geom {
        pub(crate) fn new(w: usize, h: usize, b: &Boundary) -> Self {
            let wrap_x = b.wrap_x();
            let wrap_y = b.wrap_y();
            Self {
                w,
                h,
                pitch: w,
                wrap_x,
                wrap_y,
                left: b.effective(Side::Left),
                right: b.effective(Side::Right),
                top: b.effective(Side::Top),
                bottom: b.effective(Side::Bottom),
                span_x: if wrap_x { w as f32 } else { w.saturating_sub(1) as f32 },
                span_y: if wrap_y { h as f32 } else { h.saturating_sub(1) as f32 },
            }
        }

        /// The same geometry over maps whose rows are `pitch ≥ w` values apart.
        pub(crate) fn with_pitch(self, pitch: usize) -> Self {
            debug_assert!(pitch >= self.w);
            Self { pitch, ..self }
        }

        /// The cell a position stands on (its floor, within the map).
        #[inline(always)]
        pub(crate) fn owner_cell(&self, x: f32, y: f32) -> (usize, usize) {
            ((x.max(0.0) as usize).min(self.w - 1), (y.max(0.0) as usize).min(self.h - 1))
        }

        /// Flat index of the node nearest to a position in the domain.
        #[inline(always)]
        pub(crate) fn nearest(&self, x: f32, y: f32) -> usize {
            let mut xi = (x + 0.5) as usize;
            let mut yi = (y + 0.5) as usize;
            if xi >= self.w {
                xi = if self.wrap_x { 0 } else { self.w - 1 };
            }
            if yi >= self.h {
                yi = if self.wrap_y { 0 } else { self.h - 1 };
            }
            yi * self.pitch + xi
        }

        /// Node `(x, y)` by signed coordinates: wrapped on wrapped axes, `None` outside otherwise.
        #[inline(always)]
        pub(crate) fn node(&self, x: isize, y: isize) -> Option<usize> {
            let x = if self.wrap_x {
                x.rem_euclid(self.w as isize)
            } else if x < 0 || x >= self.w as isize {
                return None;
            } else {
                x
            };
            let y = if self.wrap_y {
                y.rem_euclid(self.h as isize)
            } else if y < 0 || y >= self.h as isize {
                return None;
            } else {
                y
            };
            Some(y as usize * self.pitch + x as usize)
        }

        /// Bilinear cell of a position in the domain: node indices `[h00, h10, h01, h11]` and the
        /// fractional offsets `(u, v)`. Needs `w, h >= 2` on bounded axes.
        #[inline(always)]
        pub(crate) fn cell(&self, x: f32, y: f32) -> ([usize; 4], f32, f32) {
            let (x0, x1, u) = axis_cell(x, self.w, self.wrap_x);
            let (y0, y1, v) = axis_cell(y, self.h, self.wrap_y);
            let (r0, r1) = (y0 * self.pitch, y1 * self.pitch);
            ([r0 + x0, r0 + x1, r1 + x0, r1 + x1], u, v)
        }

        /// Bilinear height at a position in the domain.
        ///
        /// # Safety
        /// `raw` holds this geometry's maps and no one writes the four nodes concurrently.
        #[inline(always)]
        pub(crate) unsafe fn sample(&self, raw: &Raw, x: f32, y: f32) -> f32 {
            let (i, u, v) = self.cell(x, y);
            let [h00, h10, h01, h11] = unsafe { [raw.h(i[0]), raw.h(i[1]), raw.h(i[2]), raw.h(i[3])] };
            h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v
        }

        /// Brings an arbitrary position into the domain for *reading* (clamp on bounded axes,
        /// wrap on wrapped ones) — used where a sample may overhang the edge.
        #[inline(always)]
        pub(crate) fn clamp_read(&self, x: f32, y: f32) -> (f32, f32) {
            (read_axis(x, self.span_x, self.wrap_x), read_axis(y, self.span_y, self.wrap_y))
        }

        /// Applies the edge modes to a particle that moved to `(x, y)`.
        #[inline(always)]
        pub(crate) fn confine(&self, x: f32, y: f32) -> Confined {
            let (x, fx) = match move_axis(x, self.span_x, self.wrap_x, self.left, self.right) {
                Some(r) => r,
                None => return Confined::Exit,
            };
            let (y, fy) = match move_axis(y, self.span_y, self.wrap_y, self.top, self.bottom) {
                Some(r) => r,
                None => return Confined::Exit,
            };
            Confined::Inside { x, y, flip_x: fx, flip_y: fy }
        }
    }

    #[inline(always)]
    fn axis_cell(p: f32, n: usize, wrap: bool) -> (usize, usize, f32) {
        if wrap {
            let i0 = (p.max(0.0) as usize).min(n - 1);
            let i1 = if i0 + 1 == n { 0 } else { i0 + 1 };
            (i0, i1, (p - i0 as f32).clamp(0.0, 1.0))
        } else {
            let i0 = (p.max(0.0) as usize).min(n.saturating_sub(2));
            let i1 = (i0 + 1).min(n - 1);
            (i0, i1, (p - i0 as f32).clamp(0.0, 1.0))
        }
    }

    #[inline(always)]
    fn read_axis(p: f32, span: f32, wrap: bool) -> f32 {
        if p.is_nan() {
            return 0.0;
        }
        if wrap { wrap_into(p, span) } else { p.clamp(0.0, span) }
    }

    /// `p mod span` in `[0, span)`.
    #[inline(always)]
    fn wrap_into(p: f32, span: f32) -> f32 {
        if (0.0..span).contains(&p) {
            return p;
        }
        let r = p.rem_euclid(span);
        if r >= span || !r.is_finite() { 0.0 } else { r }
    }

    /// One axis of [`Geom::confine`]: `Some((position, bounced))`, or `None` when it drains.
    #[inline(always)]
    fn move_axis(p: f32, span: f32, wrap: bool, low: EdgeMode, high: EdgeMode) -> Option<(f32, bool)> {
        if wrap {
            return Some((wrap_into(p, span), false));
        }
        if p < 0.0 {
            match low {
                EdgeMode::Drain => None,
                _ => Some(((-p).clamp(0.0, span), true)),
            }
        } else if p > span {
            match high {
                EdgeMode::Drain => None,
                _ => Some(((2.0 * span - p).clamp(0.0, span), true)),
            }
        } else if p.is_nan() {
            None
        } else {
            Some((p, false))
        }
    }

    /// A uniformly random unit vector (rejection sampling; no transcendental functions, so the
    /// same bits on every platform).
    pub(crate) fn random_unit(rng: &mut SplitMix64) -> (f32, f32) {
        loop {
            let a = rng.next_f32() * 2.0 - 1.0;
            let b = rng.next_f32() * 2.0 - 1.0;
            let l2 = a * a + b * b;
            if l2 > 1e-4 && l2 <= 1.0 {
                let l = l2.sqrt();
                return (a / l, b / l);
            }
        }
    }

    /// A tile's cells `x0..x1 × y0..y1`, with the map's size and wrap for distances.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Rect {
        pub x0: usize,
        pub x1: usize,
        pub y0: usize,
        pub y1: usize,
        w: usize,
        h: usize,
        wrap_x: bool,
        wrap_y: bool,
    }

    impl Rect {
        /// True when cell `(cx, cy)` belongs to this tile.
        #[inline(always)]
        pub(crate) fn owns(&self, cx: usize, cy: usize) -> bool {
            cx >= self.x0 && cx < self.x1 && cy >= self.y0 && cy < self.y1
        }

        /// Chebyshev distance (cells) from cell `(cx, cy)` to this tile (0 inside), across the
        /// seam on wrapped axes.
        pub(crate) fn distance(&self, cx: usize, cy: usize) -> usize {
            let ax = axis_dist(cx, self.x0, self.x1, self.w, self.wrap_x);
            let ay = axis_dist(cy, self.y0, self.y1, self.h, self.wrap_y);
            ax.max(ay)
        }
    }

    fn axis_dist(c: usize, a: usize, b: usize, n: usize, wrap: bool) -> usize {
        let (a, b, n) = (a as isize, b as isize, n as isize);
        let d = |c: isize| -> isize {
            if c < a {
                a - c
            } else if c >= b {
                c + 1 - b
            } else {
                0
            }
        };
        let c = c as isize;
        let r = if wrap { d(c).min(d(c + n)).min(d(c - n)) } else { d(c) };
        r as usize
    }

    /// The tile layout: `nx × ny` tiles, each at least `min_size` cells wide where the map allows.
    /// Wrapped axes get an even number of tiles (or one) so the checkerboard stays conflict-free
    /// across the seam.
    #[derive(Clone, Debug)]
    pub(crate) struct TileGrid {
        nx: usize,
        ny: usize,
        xs: Vec<usize>,
        ys: Vec<usize>,
        col: Vec<u32>,
        row: Vec<u32>,
        w: usize,
        h: usize,
        wrap_x: bool,
        wrap_y: bool,
    }

    impl TileGrid {
        pub(crate) fn new(w: usize, h: usize, min_size: usize, wrap_x: bool, wrap_y: bool) -> Self {
            let count = |n: usize, wrap: bool| {
                let mut c = (n / min_size.max(1)).max(1);
                if wrap && c > 1 && c % 2 == 1 {
                    c -= 1;
                }
                c
            };
            let (nx, ny) = (count(w, wrap_x), count(h, wrap_y));
            let xs: Vec<usize> = (0..=nx).map(|i| i * w / nx).collect();
            let ys: Vec<usize> = (0..=ny).map(|i| i * h / ny).collect();
            let mut col = vec![0u32; w];
            for t in 0..nx {
                col[xs[t]..xs[t + 1]].iter_mut().for_each(|c| *c = t as u32);
            }
            let mut row = vec![0u32; h];
            for t in 0..ny {
                row[ys[t]..ys[t + 1]].iter_mut().for_each(|c| *c = t as u32);
            }
            Self { nx, ny, xs, ys, col, row, w, h, wrap_x, wrap_y }
        }

        /// Number of tiles.
        pub(crate) fn len(&self) -> usize {
            self.nx * self.ny
        }

        /// The tile owning cell `(cx, cy)`.
        #[inline(always)]
        pub(crate) fn tile_of(&self, cx: usize, cy: usize) -> usize {
            self.row[cy] as usize * self.nx + self.col[cx] as usize
        }

        /// Checkerboard colour `0..4` of a tile.
        #[inline(always)]
        pub(crate) fn colour(&self, t: usize) -> usize {
            (t % self.nx) % 2 + 2 * ((t / self.nx) % 2)
        }

        pub(crate) fn rect(&self, t: usize) -> Rect {
            let (tx, ty) = (t % self.nx, t / self.nx);
            Rect {
                x0: self.xs[tx],
                x1: self.xs[tx + 1],
                y0: self.ys[ty],
                y1: self.ys[ty + 1],
                w: self.w,
                h: self.h,
                wrap_x: self.wrap_x,
                wrap_y: self.wrap_y,
            }
        }
    }

    /// A particle the scheduler can move between tiles.
    pub(crate) trait Walker: Send {
        fn alive(&self) -> bool;
        /// Set by a tile walk that could not take a step safely inside its tile; such particles
        /// are finished serially at the end of the round.
        fn stalled(&self) -> bool;
    }

    /// Preferred tile side on large maps: a tile plus its margins (≈ 76² nodes × 5 maps) stays in
    /// a core's L2 cache, and particles cross tile edges (where they wait for the next phase and
    /// resume with cold caches) rarely.
    const TILE_TARGET: usize = 64;

    /// Tile side for a map: at least `2·margin` (the conflict-free condition), otherwise
    /// [`TILE_TARGET`] or a quarter of the shorter side, whichever is smaller (small maps still get
    /// several tiles per colour to run in parallel).
    pub(crate) fn tile_size(w: usize, h: usize, margin: usize) -> usize {
        (2 * margin).max(TILE_TARGET.min(w.min(h) / 4))
    }

    /// Nodes per particle in flight: a batch runs in sub-batches of `nodes / DENSITY` particles
    /// (at least `MIN_PER_TILE` per tile). More concurrency lets particles that wait at a tile edge
    /// fall behind the ones eroding upstream of them, which biases the result (pits at tile edges
    /// deepen before the particles that would refill them arrive); at one particle per 128 nodes
    /// the parallel result matches the serial one (eroded volume within 1–2 %, change-map
    /// correlation > 0.9; see the integration tests), while at one per 32 it does not with the
    /// default parameters (1.9× the serial erosion on 256²).
    const DENSITY: usize = 128;
    const MIN_PER_TILE: usize = 4;

    /// How many particles of a batch run together (see [`DENSITY`]).
    pub(crate) fn in_flight(grid: &TileGrid, nodes: usize) -> usize {
        (nodes / DENSITY).max(grid.len() * MIN_PER_TILE).max(1)
    }

    /// What one tile task hands back: its books, the particles that stepped out (in the order
    /// they left) and the ones that stalled.
    struct TaskOut<P> {
        books: Books,
        moved: Vec<P>,
        stalled: Vec<P>,
    }

    /// Runs every particle to the end in conflict-free tile phases (see the droplet module doc).
    ///
    /// Every tile keeps a queue of the particles standing in it. A phase processes, in parallel,
    /// the queues of all tiles of one checkerboard colour; particles that step out are appended
    /// to their new tile's queue afterwards, in tile order, so every queue's order is a pure
    /// function of the inputs. `cell(p)` is the cell a particle stands on; `walk(Some(rect), ps,
    /// books)` must advance every particle of `ps` while it stands in `rect` (at least one step,
    /// or set `stalled`, or end it), touching only nodes within the model's margin of `rect` (half
    /// the minimum tile size of `grid`); `walk(None, ps, books)` runs them to the end (in an order
    /// fixed by `ps`), with exclusive access. `merge` receives the books of every task in a fixed order.
    pub(crate) fn run<P, C, W, M>(grid: &TileGrid, parts: Vec<P>, tail: usize, cell: C, walk: W, mut merge: M)
    where
        P: Walker,
        C: Fn(&P) -> (usize, usize) + Sync,
        W: Fn(Option<Rect>, &mut [P], &mut Books) + Sync,
        M: FnMut(Books),
    {
        let tile = |p: &P| {
            let (cx, cy) = cell(p);
            grid.tile_of(cx, cy)
        };
        let mut queues: Vec<Vec<P>> = (0..grid.len()).map(|_| Vec::new()).collect();
        let mut live = 0usize;
        for p in parts.into_iter().filter(|p| p.alive()) {
            queues[tile(&p)].push(p);
            live += 1;
        }
        let mut rounds = 0usize;
        loop {
            if live == 0 {
                return;
            }
            if live <= tail || grid.len() == 1 || rounds >= 100_000 {
                let mut b = Books::default();
                for q in queues.iter_mut() {
                    walk(None, q, &mut b);
                    q.clear();
                }
                merge(b);
                return;
            }
            rounds += 1;
            let mut stalled: Vec<P> = Vec::new();
            for c in 0..4 {
                let outs: Vec<TaskOut<P>> = queues
                    .par_iter_mut()
                    .enumerate()
                    .with_min_len(8)
                    .filter(|(t, q)| !q.is_empty() && grid.colour(*t) == c)
                    .map(|(t, q)| {
                        let rect = grid.rect(t);
                        let mut out = TaskOut { books: Books::default(), moved: Vec::new(), stalled: Vec::new() };
                        walk(Some(rect), q, &mut out.books);
                        for p in q.drain(..) {
                            if !p.alive() {
                                continue;
                            }
                            if p.stalled() {
                                out.stalled.push(p);
                            } else {
                                out.moved.push(p);
                            }
                        }
                        out
                    })
                    .collect();
                live = 0;
                for out in outs {
                    merge(out.books);
                    for p in out.moved {
                        queues[tile(&p)].push(p);
                    }
                    stalled.extend(out.stalled);
                }
                live += queues.iter().map(Vec::len).sum::<usize>();
            }
            if !stalled.is_empty() {
                let mut b = Books::default();
                walk(None, &mut stalled, &mut b);
                merge(b);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::core::erosion::Boundary;

        #[test]
        fn tiles_cover_the_map_and_same_colours_are_apart() {
            for &(w, h, m, wrap) in
                &[(100usize, 100usize, 16usize, false), (97, 45, 10, true), (30, 30, 40, false), (64, 8, 8, true)]
            {
                let g = TileGrid::new(w, h, m, wrap, wrap);
                let mut seen = vec![0u32; w * h];
                for t in 0..g.len() {
                    let r = g.rect(t);
                    for y in r.y0..r.y1 {
                        for x in r.x0..r.x1 {
                            seen[y * w + x] += 1;
                            assert_eq!(g.tile_of(x, y), t);
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s == 1));
                // Two distinct tiles of one colour: every cell of one is at least `m` from the other
                // (measured across the seam when wrapping).
                for a in 0..g.len() {
                    for b in 0..g.len() {
                        if a == b || g.colour(a) != g.colour(b) {
                            continue;
                        }
                        let (ra, rb) = (g.rect(a), g.rect(b));
                        for y in rb.y0..rb.y1 {
                            for x in rb.x0..rb.x1 {
                                assert!(ra.distance(x, y) > m, "{w}x{h} m{m} tiles {a},{b} at {x},{y}");
                            }
                        }
                    }
                }
            }
        }

        #[test]
        fn rect_distance_wraps() {
            let g = TileGrid::new(40, 40, 10, true, false);
            let r = g.rect(0); // x 0..10
            assert_eq!(r.distance(5, 5), 0);
            assert_eq!(r.distance(12, 5), 3);
            assert_eq!(r.distance(38, 5), 2); // across the seam
            let g = TileGrid::new(40, 40, 10, false, false);
            assert_eq!(g.rect(0).distance(38, 5), 29);
        }

        #[test]
        fn confine_follows_the_edge_modes() {
            use crate::core::erosion::EdgeMode::*;
            let b = Boundary { left: Drain, right: Wall, top: Wrap, bottom: Wrap };
            let g = Geom::new(10, 8, &b);
            assert!(matches!(g.confine(-0.5, 3.0), Confined::Exit));
            match g.confine(9.5, 3.0) {
                Confined::Inside { x, flip_x, .. } => assert!((x - 8.5).abs() < 1e-6 && flip_x),
                _ => panic!(),
            }
            match g.confine(4.0, -0.25) {
                Confined::Inside { y, flip_y, .. } => assert!((y - 7.75).abs() < 1e-6 && !flip_y),
                _ => panic!(),
            }
            match g.confine(4.0, 8.0) {
                Confined::Inside { y, .. } => assert_eq!(y, 0.0),
                _ => panic!(),
            }
            // A lone wrap is a wall.
            let g = Geom::new(10, 8, &Boundary { left: Wrap, right: Drain, top: Drain, bottom: Drain });
            assert!(matches!(g.confine(-0.5, 3.0), Confined::Inside { flip_x: true, .. }));
            // Bilinear cells across the wrap seam use the first column.
            let g = Geom::new(10, 8, &Boundary::all(Wrap));
            let (i, u, _) = g.cell(9.5, 0.0);
            assert_eq!((i[0], i[1]), (9, 0));
            assert!((u - 0.5).abs() < 1e-6);
            let mut rng = SplitMix64::new(3);
            for _ in 0..100 {
                let (a, b) = random_unit(&mut rng);
                assert!(((a * a + b * b) - 1.0).abs() < 1e-5);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::erosion::{Boundary, EdgeMode};
    use std::sync::atomic::Ordering;

    #[test]
    fn avx2_and_portable_kernels_give_the_same_bits() {
        let go = |portable: bool| {
            PORTABLE_ONLY.store(portable, Ordering::Relaxed);
            let p = DropletParams { droplets: 3000, radius: 3.0, max_lifetime: 80, batch: 1000, ..Default::default() };
            let mut j = job(bowl(96), p, Boundary::default());
            run(&mut j);
            PORTABLE_ONLY.store(false, Ordering::Relaxed);
            (j.hm.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), j.ledger().eroded)
        };
        let (a, b) = (go(true), go(false));
        assert!(a.1 > 0.0);
        assert!(a == b, "the kernels disagree");
    }

    fn bowl(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| {
            let (fx, fy) = (x as f32 - n as f32 / 2.0, y as f32 - n as f32 / 2.0);
            0.02 * (fx * fx + fy * fy).sqrt() + 0.3 * ((x as f32 * 0.4).sin() * (y as f32 * 0.3).cos())
        })
        .unwrap()
    }

    fn job(hm: Heightmap, p: DropletParams, b: Boundary) -> DropletJob {
        DropletJob::new(hm, p, JobInputs { boundary: b, seed: 7, ..Default::default() }).unwrap()
    }

    fn run(j: &mut DropletJob) {
        while !j.is_done() {
            j.step();
        }
        j.finish();
    }

    /// A ramp from 20 m down to −10 m along x, with bumps: land on the left, sea on the right.
    fn ramp(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| {
            20.0 - 30.0 * x as f32 / (n - 1) as f32 + 0.4 * ((x as f32 * 0.5).sin() * (y as f32 * 0.37).cos())
        })
        .unwrap()
    }

    #[test]
    fn droplets_end_at_the_sea_without_digging_below_it() {
        let hm = ramp(64);
        let p = DropletParams { droplets: 4000, batch: 1000, ..DropletParams::default() };
        for parallel in [false, true] {
            // Drain edges: a walled 64² sea fills to the brim and the droplets' last loads
            // (dropped whole at the end of their life) then pile up above it.
            let inputs = JobInputs {
                boundary: Boundary::all(EdgeMode::Drain),
                seed: 3,
                sea_level: Some(0.0),
                ..Default::default()
            };
            let mut j = DropletJob::new(hm.clone(), DropletParams { parallel, ..p.clone() }, inputs).unwrap();
            run(&mut j);
            let l = j.ledger();
            assert!(l.closes(1e-5), "{l:?}");
            assert!(l.eroded > 1.0, "the droplets eroded the land: {l:?}");
            let after = j.heightmap();
            let maps = j.maps();
            for (i, (&a, &b)) in hm.data.iter().zip(&after.data).enumerate() {
                if a > 0.0 {
                    // Erosion stops at the sea level (nodes may reach it, never go below).
                    assert!(b >= 0.0, "land node {i} dug to {b}");
                } else {
                    // Under water nothing is dug: a sea node may take a deposit (and lose it
                    // again down to the water line), never end below where it started.
                    assert!(b >= a - 1e-5, "sea node {i} dug from {a} to {b}");
                }
            }
            // The load reached the sea. (Known gap, issue 13: on this small map the sea near the
            // shore also builds up above the water line — land-side deposits, spread without a
            // cap, raise shore nodes, and droplets then read them as land — so the cap is not
            // asserted here.)
            let coast = hm.data.iter().take(64).position(|&h| h <= 0.0).unwrap();
            let mut sea_dep = 0.0f64;
            for y in 0..64 {
                for x in coast + 4..64 {
                    sea_dep += maps.deposited[y * 64 + x] as f64;
                }
            }
            assert!(sea_dep > 0.1 * l.deposited, "little reached the sea: {sea_dep} of {}", l.deposited);
        }
    }

    #[test]
    fn without_a_sea_the_run_is_unchanged_by_a_sea_below_every_node() {
        // Sea mode on a map wholly above the sea differs only in the deposit footprint and the
        // finishing pass; with `None` the classic algorithm runs (the GPU parity tests rely on it).
        let hm = bowl(48);
        let p = DropletParams { droplets: 1500, batch: 500, ..DropletParams::default() };
        let mut a = job(hm.clone(), p.clone(), Boundary::default());
        run(&mut a);
        let mut b = job(hm.clone(), p.clone(), Boundary::default());
        run(&mut b);
        assert_eq!(a.heightmap().data, b.heightmap().data);
        let inputs = JobInputs { seed: 7, sea_level: Some(-1e6), ..Default::default() };
        let mut c = DropletJob::new(hm, p, inputs).unwrap();
        run(&mut c);
        assert!(c.ledger().closes(1e-5));
        assert_ne!(a.heightmap().data, c.heightmap().data);
    }

    #[test]
    fn isolated_extremes_are_levelled_and_nothing_else_moves() {
        let mut hm = bowl(32);
        hm.data.iter_mut().for_each(|h| *h += 5.0);
        let before = hm.clone();
        let (sx, px) = (10 * 32 + 10, 20 * 32 + 12);
        hm.data[sx] += 3.0;
        hm.data[px] -= 2.0;
        let sum = hm.sum();
        let mut changed = std::collections::BTreeSet::new();
        let (e, d) = particles::relax_extremes(&mut hm, 0.0, 0.05, &mut |i, _| {
            changed.insert(i);
        });
        assert!((hm.sum() - sum).abs() < 1e-3);
        assert!((e - d).abs() < 1e-4 && e > 2.0);
        // Only the two extremes and their neighbours changed.
        for &i in &changed {
            let near = |c: usize| (i % 32).abs_diff(c % 32) <= 1 && (i / 32).abs_diff(c / 32) <= 1;
            assert!(near(sx) || near(px), "node {i} changed");
        }
        for i in [sx, px] {
            let (x, y) = (i % 32, i / 32);
            let nb: Vec<f32> = (0..9).filter(|&k| k != 4).map(|k| hm.get(x + k % 3 - 1, y + k / 3 - 1)).collect();
            let (lo, hi) = nb.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |a, &v| (a.0.min(v), a.1.max(v)));
            assert!(hm.data[i] <= hi + 0.05 && hm.data[i] >= lo - 0.05, "node {i} still extreme");
        }
        // A map without extremes is left alone.
        let mut calm = before.clone();
        let (e, _) = particles::relax_extremes(&mut calm, 0.0, 0.5, &mut |_, _| {});
        assert_eq!(e, 0.0);
        assert_eq!(calm.data, before.data);
    }

    #[test]
    fn brushes_are_normalised_discs() {
        for &r in &[1.0f32, 2.5, 5.0, 7.0] {
            let b = Brush::new(r, 50);
            assert_eq!(b.variants.len(), SUB * SUB);
            for (q, v) in b.variants.iter().enumerate() {
                let s: f32 = v.taps.iter().map(|t| t.2).sum();
                assert!((s - 1.0).abs() < 1e-5, "r {r} q {q}: {s}");
                let cx = ((q % SUB) as f32 + 0.5) / SUB as f32;
                let cy = ((q / SUB) as f32 + 0.5) / SUB as f32;
                for &(dx, dy, w) in &v.taps {
                    let d = ((dx as f32 - cx).powi(2) + (dy as f32 - cy).powi(2)).sqrt();
                    assert!(d < r && w > 0.0);
                }
                // Every node strictly inside the disc is in the brush.
                let rc = r.ceil() as i32;
                let inside = (-rc..=rc + 1)
                    .flat_map(|dy| (-rc..=rc + 1).map(move |dx| (dx, dy)))
                    .filter(|&(dx, dy)| ((dx as f32 - cx).powi(2) + (dy as f32 - cy).powi(2)).sqrt() < r - 1e-4)
                    .count();
                assert!(v.taps.len() >= inside);
                // The chunks hold every tap exactly once, zeros elsewhere, no node twice, and stay
                // within the columns lo ..= hi inside the task margin.
                assert!(b.lo >= -(rc as isize) - 1 && b.hi <= rc as isize + 3, "{} {}", b.lo, b.hi);
                let mut slots = std::collections::HashMap::new();
                for c in &v.chunks {
                    for (j, &w) in c.weights.iter().enumerate() {
                        let off = c.offset + j as isize;
                        let (dy, dx) = ((off + 25).div_euclid(50), (off + 25).rem_euclid(50) - 25);
                        assert!(dx >= b.lo && dx <= b.hi && dy >= -(rc as isize) && dy <= rc as isize + 1);
                        assert!(slots.insert(off, w).is_none(), "node {off} twice");
                    }
                }
                for &(dx, dy, w) in &v.taps {
                    assert_eq!(slots.remove(&(dy as isize * 50 + dx as isize)), Some(w));
                }
                assert!(slots.values().all(|&w| w == 0.0));
            }
        }
    }

    #[test]
    fn clipped_brush_is_renormalised_at_the_edge() {
        let hm = Heightmap::filled(20, 20, 1.0, 10.0).unwrap();
        let mut j = job(hm, DropletParams { radius: 4.0, ..Default::default() }, Boundary::default());
        let raw = j.raw();
        let ctx = Ctx {
            geom: j.geom,
            raw,
            brush: &j.brush,
            inertia: 0.3,
            min_slope: 0.01,
            capacity: 10.0,
            deposition: 0.1,
            erosion: 0.5,
            gravity: 9.81,
            keep_water: 0.98,
            max_life: 10,
            min_water: 1e-30,
            floor: f32::NEG_INFINITY,
            sea: f32::NEG_INFINITY,
            spread: false,
        };
        let got = unsafe { ctx.erode(0.3, 0.2, 1.0) };
        assert!((got - 1.0).abs() < 1e-5, "{got}");
        let (hm, eroded) = (j.planes.export(P_H), j.planes.export(P_ERO));
        let removed: f32 = hm.iter().map(|h| 10.0 - h).sum();
        assert!((removed - 1.0).abs() < 1e-4);
        // Only nodes within the radius lost material; the corner node lost the most.
        let max = hm.iter().cloned().fold(f32::INFINITY, f32::min);
        assert_eq!(hm[0], max);
        assert_eq!(hm[5 * 20 + 5], 10.0);
        // The per-node map holds exactly the change.
        for (h, e) in hm.iter().zip(&eroded) {
            assert!(((10.0 - h) - e).abs() < 1e-6);
        }
    }

    #[test]
    fn a_droplet_on_a_plane_runs_downhill_one_cell_per_step() {
        // A gentle plane falling towards +x: the droplet must move +x one cell per step.
        let hm = Heightmap::from_fn(40, 9, 1.0, |x, _| 10.0 - 0.1 * x as f32).unwrap();
        let p = DropletParams { droplets: 1, max_lifetime: 5, erosion: 0.0, deposition: 0.0, ..Default::default() };
        let mut j = job(hm, p, Boundary::all(EdgeMode::Wall));
        let mut d = j.spawn(0);
        d.x = 3.25;
        d.y = 4.0;
        let raw = j.raw();
        let ctx = Ctx {
            geom: j.geom,
            raw,
            brush: &j.brush,
            inertia: 0.3,
            min_slope: 0.01,
            capacity: 10.0,
            deposition: 0.0,
            erosion: 0.0,
            gravity: 9.81,
            keep_water: 0.98,
            max_life: 5,
            min_water: 1e-30,
            floor: f32::NEG_INFINITY,
            sea: f32::NEG_INFINITY,
            spread: false,
        };
        let mut b = Books::default();
        unsafe { ctx.walk(&mut d, &mut b) };
        assert!((d.x - 8.25).abs() < 1e-4 && (d.y - 4.0).abs() < 1e-4, "{} {}", d.x, d.y);
        // Speed: v² grows by 0.1·g per step.
        assert!((d.speed - (1.0f32 + 5.0 * 0.1 * 9.81).sqrt()).abs() < 1e-3);
        assert!((d.water - 0.98f32.powi(5)).abs() < 1e-6);
        assert!(!d.alive);
        // Flow: 5 visits along the row (the start is counted by the batch, not here).
        let visited: f32 = j.planes.export(P_FLOW).iter().sum();
        assert_eq!(visited, 5.0);
    }

    #[test]
    fn uphill_step_fills_the_pit_behind() {
        // A V-shaped valley along x: a droplet crossing it deposits on the way up.
        let hm = Heightmap::from_fn(30, 30, 1.0, |x, _| (x as f32 - 15.0).abs() * 0.5).unwrap();
        let before = hm.clone();
        let p = DropletParams { droplets: 400, max_lifetime: 30, inertia: 0.9, ..Default::default() };
        let mut j = job(hm, p, Boundary::all(EdgeMode::Wall));
        run(&mut j);
        let l = j.ledger();
        assert!(l.deposited > 0.0 && l.eroded > 0.0);
        // The valley floor gained material, the flanks lost some.
        let mid: f32 = (5..25).map(|y| j.hm.get(15, y) - before.get(15, y)).sum();
        assert!(mid > 0.0, "{mid}");
        assert!(l.closes(1e-4), "{l:?}");
        assert_eq!(l.lost_at_border, 0.0);
    }

    #[test]
    fn ledger_closes_for_every_edge_mode_and_option() {
        let cases = [
            (Boundary::default(), None, None),
            (Boundary::all(EdgeMode::Wall), Some(0.1f32), None),
            (Boundary::all(EdgeMode::Wrap), None, Some(1.5f32)),
            (Boundary::default(), Some(0.2), Some(1.0)),
        ];
        for (b, mh, blur) in cases {
            for parallel in [false, true] {
                let p = DropletParams {
                    droplets: 300,
                    batch: 128,
                    radius: 3.0,
                    max_lifetime: 40,
                    min_height: mh,
                    blur_changes: blur,
                    parallel,
                    ..Default::default()
                };
                let mut j = job(bowl(48), p, b);
                run(&mut j);
                let l = j.ledger();
                assert!(l.eroded > 0.0);
                assert!(l.closes(1e-4), "{b:?} {mh:?} {blur:?} {parallel}: {l:?}");
                if let Some(m) = mh {
                    // The guard only stops erosion; nodes that started above it stay above it.
                    let start = bowl(48);
                    for (a, s) in j.hm.data.iter().zip(&start.data) {
                        if *s >= m {
                            assert!(*a >= m - 1e-5, "{a} < {m}");
                        }
                    }
                }
                if b == Boundary::all(EdgeMode::Wall) || b == Boundary::all(EdgeMode::Wrap) {
                    assert_eq!(l.lost_at_border, 0.0);
                }
                // The per-node maps agree with the scalar books.
                let e: f64 = j.maps().eroded.iter().map(|&v| v as f64).sum();
                let d: f64 = j.maps().deposited.iter().map(|&v| v as f64).sum();
                assert!((e - l.eroded).abs() <= 1e-3 * l.eroded.max(1e-9), "{e} {}", l.eroded);
                assert!((d - l.deposited).abs() <= 1e-3 * l.deposited.max(1e-9), "{d} {}", l.deposited);
            }
        }
    }

    #[test]
    fn hardness_zero_protects_nodes() {
        let hm = bowl(40);
        let n = hm.len();
        let mut hard = vec![1.0f32; n];
        for y in 0..40 {
            for x in 0..20 {
                hard[y * 40 + x] = 0.0;
            }
        }
        let p = DropletParams { droplets: 300, radius: 2.0, max_lifetime: 30, ..Default::default() };
        let mut j = DropletJob::new(hm, p, JobInputs { hardness: Some(hard), seed: 3, ..Default::default() }).unwrap();
        run(&mut j);
        for y in 0..40 {
            for x in 0..20 {
                assert_eq!(j.maps().eroded[y * 40 + x], 0.0);
            }
        }
        assert!(j.maps().eroded.iter().sum::<f32>() > 0.0);
        assert!(j.ledger().closes(1e-4));
    }

    #[test]
    fn bad_parameters_are_refused() {
        let hm = bowl(8);
        let bad = [
            DropletParams { inertia: f32::NAN, ..Default::default() },
            DropletParams { inertia: 1.5, ..Default::default() },
            DropletParams { radius: 0.5, ..Default::default() },
            DropletParams { radius: f32::INFINITY, ..Default::default() },
            DropletParams { max_lifetime: 0, ..Default::default() },
            DropletParams { batch: 0, ..Default::default() },
            DropletParams { capacity: -1.0, ..Default::default() },
            DropletParams { min_height: Some(f32::NAN), ..Default::default() },
            DropletParams { blur_changes: Some(-1.0), ..Default::default() },
            DropletParams { droplets: u64::MAX, ..Default::default() },
        ];
        for p in bad {
            assert!(
                matches!(DropletJob::new(hm.clone(), p.clone(), JobInputs::default()), Err(JobError::BadParam { .. })),
                "{p:?}"
            );
        }
        let hard = Some(vec![f32::NAN; 64]);
        assert!(
            DropletJob::new(hm.clone(), DropletParams::default(), JobInputs { hardness: hard, ..Default::default() })
                .is_err()
        );
        let hard = Some(vec![1.0; 3]);
        assert!(matches!(
            DropletJob::new(hm.clone(), DropletParams::default(), JobInputs { hardness: hard, ..Default::default() }),
            Err(JobError::HardnessSize { .. })
        ));
        let mut nan = hm.clone();
        nan.data[3] = f32::INFINITY;
        assert!(matches!(
            DropletJob::new(nan, DropletParams::default(), JobInputs::default()),
            Err(JobError::NonFinite)
        ));
        // Degenerate maps run to completion without doing anything.
        let line = Heightmap::from_fn(7, 1, 1.0, |x, _| x as f32).unwrap();
        let mut j = job(line.clone(), DropletParams { droplets: 10, ..Default::default() }, Boundary::default());
        run(&mut j);
        assert_eq!(j.hm, line);
        assert!(j.ledger().closes(1e-6));
    }

    #[test]
    fn edits_rebase_the_books_and_bad_edits_are_undone() {
        let mut j = job(
            bowl(32),
            DropletParams { droplets: 200, batch: 100, radius: 2.0, ..Default::default() },
            Boundary::default(),
        );
        j.step();
        j.edit_terrain(&mut |hm: &mut Heightmap| hm.data[100] += 5.0);
        j.edit_terrain(&mut |hm: &mut Heightmap| hm.data.push(1.0));
        j.edit_terrain(&mut |hm: &mut Heightmap| hm.data[0] = f32::NAN);
        assert_eq!(j.hm.len(), 32 * 32);
        assert!(j.hm.all_finite());
        j.step();
        let l = j.ledger();
        assert!(j.is_done() && l.closes(1e-4), "{l:?}");
        assert_eq!(j.progress(), Progress { done: 200, total: 200 });
    }
}
