//! Particle (droplet) hydraulic erosion — SPEC §2a, seed 000 (I. van der Veen, after H. T. Beyer,
//! *Implementation of a method for hydraulic erosion*, TU München 2015).
//!
//! The parameters are in world units ([`DropletParams`]: metres, m/m, droplets per km²); the job
//! converts them to the grid units of its map once, when it is built ([`DropletGrid`]: `L` steps
//! of one node for the path `max_path_m`, the brush radius `r` in nodes, the smallest drop per
//! step `min_slope = min_slope_tan · Δx`, the rates of one step). Below, all lengths are in nodes
//! and the rates those of one step.
//!
//! Each droplet starts at a random position `p` with water `W`, speed `v`, sediment `s = 0` and no
//! direction, and repeats, at most `L` times:
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
//!    `min((c − s)·erosion, −Δh·dig)` (`dig` = 1 on cells of `path_step_m` and finer).
//! 6. A deposit is spread bilinearly over the four nodes around `p` (on cells finer than
//!    `path_step_m`, with the erosion brush below). Erosion is spread over every node
//!    `n` with `|p − n| < r` with weights `max(0, r − |p − n|) / Σ`; node `n` gives
//!    `amount·w(n)·hardness(n)` (never below `min_height` when that guard is set), and the droplet
//!    picks up exactly what was removed. The brushes are precomputed for 4×4 sub-cell positions of
//!    `p` (so `|p − n|` is exact to ⅛ cell), each row stored as zero-padded runs of 4 nodes (one
//!    SIMD vector; a zero weight leaves a node's bits unchanged); a brush clipped by a non-wrapped
//!    edge is renormalised over its in-map nodes.
//! 7. `v = √max(0, v² − Δh·gravity)`, `W ← W·(1 − evaporation)`.
//!
//! A droplet that reaches `L` steps (or whose water falls below 10⁻²⁰ of its initial water) drops
//! its remaining sediment where it is, so material never vanishes: after any number of whole
//! batches `Σh_after − Σh_before = deposited − eroded` and `eroded + clamped = deposited + lost`.
//! Books are kept from the f32 change each node actually received; the carried sediment is f64 and
//! mirrors them, and the few ulps of a final deposit that f32 heights cannot represent are booked
//! in `clamped` (signed) instead of vanishing.
//!
//! ## What the resolution still changes
//! World units make the same numbers describe the same brush, path, density of droplets and
//! smallest slope at any cell size `Δx`, but a droplet is still a particle that takes one step of
//! one node at a time, and some of its rules count steps:
//!
//! * `inertia`, `erosion`, `deposition` and `evaporation` are given per `path_step_m` metres of
//!   path and compounded over the steps of one node (`q = Δx / path_step_m`: `inertia^q`,
//!   `1 − (1 − f)^q`), and `capacity` is a volume factor (`capacity / q³` per step), so a droplet
//!   relaxes toward the same capacity in m³ over the same metres at any `Δx`
//!   ([`DropletParams`]'s module doc). On cells of `path_step_m` they are the seed's, bit for bit.
//!   Most steps end at the seed's cap, erosion at most the drop `−Δh` in height over one node; on
//!   cells coarser than `path_step_m` it is `−Δh/q²`, the same volume per metre, but on finer
//!   cells it stays the seed's, so there the volume a droplet moves shrinks about as `Δx²` (it went
//!   as `Δx³` with the rates per step), and deposits are spread with the erosion brush instead of
//!   over the four nodes of a cell (step 6). The fill of an uphill step is the seed's.
//! * The erosion is spread over a brush of `π·(r/Δx)²` nodes, so the depth profile of a channel
//!   is resolved in more nodes on a finer grid, and the parallel scheme's in-flight limit
//!   (`particles::in_flight`) is per node.
//! * The brush is clamped to 1 … 64 nodes ([`MAX_RADIUS_NODES`]), the land spread of the sea mode
//!   ([`LAND_SPREAD`]) and the sea's extreme tolerance are in nodes.
//!
//! A build at another resolution therefore gives the same landforms only approximately; the
//! world design (`DESIGN.md`, *World, resolution and builds*) lets a build refine a coarse
//! result instead.
//!
//! ## The sea ([`JobInputs::sea_level`](super::JobInputs::sea_level))
//! With a sea level the job runs in *sea mode* (issue 13; the GPU droplets, `crate::gpu::droplet`,
//! follow the same rules):
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
//! * [`Simulation::finish`](super::Simulation::finish) levels the isolated one-node extremes that remain on land (more than
//!   [`EXTREME_TOLERANCE`](super::particles::EXTREME_TOLERANCE) above or below all eight neighbours) by a mass-conserving trade with
//!   their neighbours ([`particles::relax_extremes`](super::particles::relax_extremes)), booked as erosion and deposition.
//!
//! Without a sea (`None`) none of this applies and the classic algorithm runs unchanged (the GPU
//! parity tests compare against it).
//!
//! Options: `min_height` (seed 000's drain-valley guard), `blur_m` (seed 000's smoothing: the
//! change of a batch is collected separately, blurred with a sum-conserving Gaussian and then
//! applied; nodes the blur would push below `min_height` are held there and the lift is booked as
//! `clamped`, as is what the f32 rounding of the blurred change adds or loses), and a flow map (`Fields::flow` = droplet visits per node, `Fields::flow_volume` =
//! water carried across it).
//!
//! ## Parallel scheme
//! `parallel = false` is the classic algorithm: one droplet after another, each seeing every change
//! made before it. `parallel = true` runs each batch in *conflict-free tile phases*:
//!
//! * The map is cut into tiles at least `2·M` nodes wide, `M = ⌈r⌉ + 3` being the farthest
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

mod brush;
mod job;
mod lanes;
mod params;
pub mod refine;
mod sea;
mod step;

/// The brush taps, for the GPU droplets (which build the same brushes).
#[cfg(feature = "gpu")]
pub(crate) use brush::brush_sub_taps;
pub use job::DropletJob;
pub use params::{DropletGrid, DropletParams, LAND_SPREAD, MAX_RADIUS_NODES};

super::setup::particle_params!(DropletParams => DropletGrid);

/// Droplets advanced together in lockstep (see [`Ctx::walk_group`](step::Ctx::walk_group)).
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

#[cfg(test)]
mod tests;
