//! Snowball erosion — SPEC §2b, seed 002 (J. Talle, *Simulating hydraulic erosion*, 2020).
//!
//! A cheap drop method: a "snowball" rolls down the surface normal, eroding behind itself and
//! shedding its load as the ground flattens. The parameters are in world units
//! ([`SnowballParams`]); the job converts them to the grid units of its map once, when it is
//! built ([`SnowballGrid`]), and below lengths are in nodes. Each snowball starts at a uniformly
//! random position `p` with a fixed random offset `o ∈ [−R, R]²` (`R = offset_radius_m / Δx`)
//! that roughens its path, and for `i = 0, 1, …, max_iterations − 1`:
//!
//! ```text
//! n      = unit normal at p + o   (central differences of bilinear heights at ±1 node:
//!          n ∝ (−∂h/∂x, 1, −∂h/∂y), slopes in metres per metre using the map's cell size)
//! stop if n.y == 1                (flat: the snowball cannot roll)
//! deposit = s · deposition_rate · n.y
//! erosion = erosion_rate · (1 − n.y) · min(1, i · iteration_scale)
//! h(p_prev) += deposit − erosion  (over the stamp around the previous position: it erodes
//!                                  behind itself, so it never digs under its own feet)
//! s      += erosion − deposit     (exactly what the terrain gave or took)
//! v       = friction · v + (n.x, n.z) · speed        (speed = speed_m / Δx)
//! p_prev  = p;  p += v
//! ```
//!
//! After all snowballs, [`Simulation::finish`] Gaussian-blurs the heightmap with `blur_sigma_m`
//! (seed 002 smooths with a 3×3 binomial kernel, a Gaussian of σ ≈ 0.71 nodes, hence the default
//! of `√2` m, that kernel on the default island's 2 m cells).
//!
//! The stamp: on cells of `footprint_m` and coarser, the seed's 4 nodes around the point with
//! bilinear weights; on finer cells a tent of half-width `r = footprint_m / Δx` nodes (at most
//! [`MAX_REACH_NODES`]), weights `(1 − |dx|/r)(1 − |dy|/r)` renormalised to 1 over the in-map
//! nodes. `erosion_rate` is metres over the footprint, so the job takes
//! `erosion_rate · (footprint_m / Δx)²` on the stamp: one iteration moves
//! `erosion_rate · footprint_m²` m³ at any cell size, over ground of the same width, and the normal
//! is sampled at `±r` nodes (the slope of that ground). With `Δx = footprint_m` all of it is the
//! seed's, bit for bit.
//!
//! What the resolution still changes: `max_iterations`, `friction` and `deposition_rate` count
//! iterations, not metres (the path's metres are kept through `speed_m`); the sea spread
//! ([`SEA_SPREAD`]) is in nodes. World units keep the density, volume, path speed, footprint,
//! offset and blur the same land; the particle model itself stays a grid method.
//!
//! Differences from the seed's JavaScript, all for the books: hardness scales the erosion term at
//! each node (`h += w·deposit − w·erosion·hardness`); a snowball that stops (flat ground or
//! `max_iterations`) drops its remaining load where it stands instead of letting it vanish; a
//! snowball that leaves through a drain edge takes its load off the map (`lost_at_border`); a wall
//! reflects it; wrap re-enters it on the other side. The blur is booked per node as erosion and
//! deposition, and whatever Σh it does not conserve at the edges is booked as `clamped` (signed),
//! so `Σh_after − Σh_before = deposited − eroded` and `eroded + clamped = deposited + lost` hold.
//!
//! With a sea level ([`JobInputs::sea_level`]): erosion never takes a node below the sea nor
//! anything from a node under water; a snowball standing at or below the sea stops eroding and
//! drops its load over a disc of radius [`SEA_SPREAD`], each node filled at most up to the water
//! line, rolling on with what did not fit until the load is gone; a snowball that stops drops its
//! load over the same disc (on cells finer than `footprint_m`, a tent of `SEA_SPREAD` footprints:
//! the same ground in metres); and [`Simulation::finish`] levels isolated one-node extremes on land
//! after the blur, as the droplet model does.
//!
//! Parallelism: the same conflict-free tile phases as the droplet model (see
//! [`super::droplet`]): margin `M = ⌈R⌉ + 3⌈r⌉`; a snowball advances inside its tile only while
//! its previous position's stamp is within the margin; a snowball flung farther than that in one iteration (only
//! possible with large `speed`/`friction`) finishes serially after the round. Randomness per
//! snowball comes from `SplitMix64::stream(seed, index)`; results are identical at any thread count.

use rayon::prelude::*;

use super::particles::{self, Books, Confined, Geom, Raw, Rect, TileGrid, Walker};
use super::setup::prepare_particle_job;
use super::steer::Spawner;
use super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation};
use crate::core::filter::{BlurEdge, BlurOptions, gaussian_blur_with};
use crate::core::heightmap::Heightmap;
use crate::core::rng::SplitMix64;

mod params;
pub mod refine;

pub use params::{MAX_OFFSET_NODES, MAX_REACH_NODES, SnowballGrid, SnowballParams};

super::setup::particle_params!(SnowballParams => SnowballGrid);

/// Below this many live snowballs a batch finishes serially.
const SERIAL_TAIL: usize = 64;

#[derive(Clone, Debug)]
struct Ball {
    x: f32,
    y: f32,
    px: f32,
    py: f32,
    vx: f32,
    vy: f32,
    ox: f32,
    oy: f32,
    /// Carried load, f64 so it mirrors the booked height changes exactly.
    sediment: f64,
    i: u32,
    alive: bool,
    stalled: bool,
}

impl Walker for Ball {
    fn alive(&self) -> bool {
        self.alive
    }
    fn stalled(&self) -> bool {
        self.stalled
    }
}

struct Ctx<'a> {
    geom: Geom,
    raw: Raw,
    erosion_rate: f32,
    deposition_rate: f32,
    speed: f32,
    friction: f32,
    max_iter: u32,
    iter_scale: f32,
    /// Half-width of the stamp, nodes (`≤ 1`: the 4 bilinear nodes), and where the normal is
    /// sampled (`±reach`).
    reach: f32,
    /// `⌈reach⌉`: how far from its cell a stamp writes.
    reach_nodes: usize,
    /// `1 / (2 · reach · cell_size)`: central difference over `2·reach` nodes, in metres per metre.
    inv_2cs: f32,
    /// Tile margin `⌈R⌉ + 3⌈reach⌉`.
    margin: usize,
    /// The sea level, or −∞ without a sea.
    sea: f32,
    /// Sea mode (a sea level is set): erosion never takes a node below the sea, a snowball that
    /// reaches the sea drops its load there (spread, up to the water line) and deposits are spread
    /// over [`SEA_SPREAD`] nodes.
    spread: bool,
    /// Sink mode of a steering mask: its weights; a snowball whose nearest node has weight 0
    /// stops there and drops its load.
    sink: Option<&'a [f32]>,
}

/// Radius (nodes) of the footprint a snowball drops its load with in sea mode.
pub const SEA_SPREAD: f32 = 2.5;

impl Ctx<'_> {
    /// Rolls snowball `s` until it ends or (with `rect`) leaves that tile or stalls.
    ///
    /// # Safety
    /// `self.raw` points at live maps of this geometry. With `rect = Some(t)`, no other thread
    /// may touch a node within `self.margin` of `t` while this runs: an iteration only runs when
    /// the snowball stands in `t` and its previous position is within `margin − ⌈r⌉` cells of
    /// `t`, and it then reads within `⌈R⌉ + ⌈r⌉ + 1` of its cell and writes the nodes within
    /// `⌈r⌉` of its previous cell (the stamp). With `None` the caller has exclusive access to the
    /// maps.
    unsafe fn walk(&self, s: &mut Ball, rect: Option<Rect>, b: &mut Books) {
        // Without a sea (or a sink mask) the loop is compiled without those tests (the classic loop).
        match (self.spread, self.sink.is_some()) {
            // SAFETY: `walk_in` has this function's contract.
            (true, false) => unsafe { self.walk_in::<true, false>(s, rect, b) },
            // SAFETY: as above.
            (false, false) => unsafe { self.walk_in::<false, false>(s, rect, b) },
            // SAFETY: as above.
            (true, true) => unsafe { self.walk_in::<true, true>(s, rect, b) },
            // SAFETY: as above.
            (false, true) => unsafe { self.walk_in::<false, true>(s, rect, b) },
        }
    }

    /// [`Ctx::walk`] in sea mode (`SEA`, `self.spread`) or without a sea, with sinks (`SINK`,
    /// `self.sink` is set) or without.
    ///
    /// # Safety
    /// As [`Ctx::walk`].
    #[inline(always)]
    unsafe fn walk_in<const SEA: bool, const SINK: bool>(&self, s: &mut Ball, rect: Option<Rect>, b: &mut Books) {
        let g = &self.geom;
        let raw = &self.raw;
        if rect.is_none() {
            s.stalled = false;
        }
        while s.alive {
            if let Some(t) = rect {
                let (cx, cy) = g.owner_cell(s.x, s.y);
                if !t.owns(cx, cy) {
                    return;
                }
                let (qx, qy) = g.owner_cell(s.px, s.py);
                if t.distance(qx, qy) + self.reach_nodes > self.margin {
                    s.stalled = true;
                    return;
                }
            }
            if s.i >= self.max_iter {
                // SAFETY: as this function; the snowball stands in the tile (checked above, or
                // `rect = None` with exclusive access), as `settle` requires.
                unsafe { self.settle(s, b) };
                return;
            }
            if SINK
                && let Some(sk) = self.sink
                && sk[g.nearest(s.x, s.y)] == 0.0
            {
                // A sink (steering mask): the flow ends here, the load is dropped.
                // SAFETY: as the `settle` above.
                unsafe { self.settle(s, b) };
                return;
            }
            // SAFETY: `nearest` gives an in-map node of the snowball's position, which is in the
            // tile (checked above) or the caller has exclusive access.
            unsafe { raw.visit(g.nearest(s.x, s.y), 0.0) };
            // Surface normal at the offset position.
            let (sx, sy) = g.clamp_read(s.x + s.ox, s.y + s.oy);
            let at = |x: f32, y: f32| {
                let (x, y) = g.clamp_read(x, y);
                // SAFETY: in-map position within the margin (see the function's contract).
                unsafe { g.sample(raw, x, y) }
            };
            let r = self.reach;
            let gx = (at(sx + r, sy) - at(sx - r, sy)) * self.inv_2cs;
            let gy = (at(sx, sy + r) - at(sx, sy - r)) * self.inv_2cs;
            let ny = 1.0 / (1.0 + gx * gx + gy * gy).sqrt();
            if ny >= 1.0 || !ny.is_finite() {
                // SAFETY: as the `settle` above: the snowball has not moved and stands in the tile.
                unsafe { self.settle(s, b) };
                return;
            }
            let (nx, nz) = (-gx * ny, -gy * ny);
            // SAFETY: in-map position in the task's tile.
            if SEA && unsafe { g.sample(raw, s.x, s.y) } <= self.sea {
                // At sea: no erosion; drop what fits below the water line, roll on with the rest.
                if s.sediment > 0.0 {
                    // SAFETY: the snowball stands in the tile, so `(s.x, s.y)` is in the map; the
                    // disc only writes nodes closer than SEA_SPREAD = 2.5 to it, so at most 3
                    // nodes from its cell: within the margin `⌈R⌉ + 3 ≥ 3`.
                    let put =
                        unsafe { particles::deposit_disc(raw, g, s.x, s.y, s.sediment as f32, SEA_SPREAD, self.sea) };
                    b.deposited += put;
                    s.sediment -= put;
                }
                if s.sediment < 1e-6 {
                    b.residue(s.sediment);
                    s.sediment = 0.0;
                    s.alive = false;
                    return;
                }
                s.vx = self.friction * s.vx + nx * self.speed;
                s.vy = self.friction * s.vy + nz * self.speed;
                s.px = s.x;
                s.py = s.y;
                s.i += 1;
                if !self.advance(s, b) {
                    return;
                }
                continue;
            }
            let deposit = s.sediment as f32 * self.deposition_rate * ny;
            let erosion = self.erosion_rate * (1.0 - ny) * (s.i as f32 * self.iter_scale).min(1.0);
            // Change the terrain where the snowball came from.
            let mut net = 0.0f64;
            let mut change = |i: usize, w: f32| {
                // SAFETY: `i` is an in-map node of the stamp around the previous position, within
                // `⌈r⌉` of its cell: within the margin (checked above).
                unsafe {
                    let k = raw.hard(i);
                    let h = &mut *raw.h.add(i);
                    let old = *h;
                    let mut new = old + (w * deposit - w * erosion * k);
                    if SEA && new < old {
                        // Never below the sea (and nothing taken from a node under water).
                        new = new.max(old.min(self.sea));
                    }
                    *h = new;
                    let actual = new as f64 - old as f64;
                    if new < old {
                        *raw.ero.add(i) += old - new;
                        b.eroded -= actual;
                    } else {
                        *raw.dep.add(i) += new - old;
                        b.deposited += actual;
                    }
                    net += actual;
                }
            };
            if self.reach <= 1.0 {
                let (idx, u, v) = g.cell(s.px, s.py);
                let ws = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
                for (&i, w) in idx.iter().zip(ws) {
                    change(i, w);
                }
            } else {
                tent(g, s.px, s.py, self.reach, change);
            }
            s.sediment -= net;
            s.vx = self.friction * s.vx + nx * self.speed;
            s.vy = self.friction * s.vy + nz * self.speed;
            s.px = s.x;
            s.py = s.y;
            s.i += 1;
            if !self.advance(s, b) {
                return;
            }
        }
    }

    /// Moves the snowball by its velocity under the edge modes; returns `false` when it left
    /// through a drain edge (its load is booked as lost).
    #[inline(always)]
    fn advance(&self, s: &mut Ball, b: &mut Books) -> bool {
        match self.geom.confine(s.x + s.vx, s.y + s.vy) {
            Confined::Exit => {
                b.lost += s.sediment;
                s.sediment = 0.0;
                s.alive = false;
                false
            }
            Confined::Inside { x, y, flip_x, flip_y } => {
                s.x = x;
                s.y = y;
                if flip_x {
                    s.vx = -s.vx;
                }
                if flip_y {
                    s.vy = -s.vy;
                }
                true
            }
        }
    }

    /// Drops the remaining load where the snowball stands and ends it.
    ///
    /// # Safety
    /// As [`Ctx::walk`]; the snowball stands in the task's tile.
    unsafe fn settle(&self, s: &mut Ball, b: &mut Books) {
        let mut put = 0.0f64;
        if s.sediment > 0.0 && self.spread && self.reach <= 1.0 {
            // SAFETY: the snowball stands in the task's tile (contract), so its position is in
            // the map; the disc only writes nodes closer than SEA_SPREAD = 2.5 to it, at most 3
            // nodes from its cell, within the margin `⌈R⌉ + 3`.
            put = unsafe {
                particles::deposit_disc(&self.raw, &self.geom, s.x, s.y, s.sediment as f32, SEA_SPREAD, f32::INFINITY)
            };
            b.deposited += put;
        } else if s.sediment > 0.0 {
            let load = s.sediment as f32;
            let mut drop = |i: usize, w: f32| {
                // SAFETY: in-map indices of the stamp around the snowball's own cell (within
                // `⌈r⌉` of it, inside the margin).
                unsafe {
                    let h = &mut *self.raw.h.add(i);
                    let old = *h;
                    let new = old + load * w;
                    *h = new;
                    *self.raw.dep.add(i) += new - old;
                    put += new as f64 - old as f64;
                }
            };
            if self.reach <= 1.0 {
                let (idx, u, v) = self.geom.cell(s.x, s.y);
                let ws = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
                for (&i, w) in idx.iter().zip(ws) {
                    drop(i, w);
                }
            } else {
                // On cells finer than the footprint the load is a volume made over the footprint:
                // in sea mode it spreads over the sea spread's metres (`SEA_SPREAD` footprints,
                // within `⌈2.5·r⌉ ≤ 3⌈r⌉` of the cell), else over the stamp.
                let r = if self.spread { SEA_SPREAD * self.reach } else { self.reach };
                tent(&self.geom, s.x, s.y, r, drop);
            }
            b.deposited += put;
        }
        // What f32 heights could not represent (a few ulps at most) is booked, not lost.
        b.residue(s.sediment - put);
        s.sediment = 0.0;
        s.alive = false;
    }
}

/// Calls `f(i, w)` for every in-map node `i` of the tent of half-width `r` nodes around
/// `(x, y)`, in row order: nodes with `|dx|, |dy| < r`, weights `(1 − |dx|/r)(1 − |dy|/r)`
/// renormalised to sum to 1 over the in-map nodes (wrapped on wrapped axes). Every such node lies
/// within `⌈r⌉` of the cell of `(x, y)`.
#[inline]
fn tent(g: &Geom, x: f32, y: f32, r: f32, mut f: impl FnMut(usize, f32)) {
    // The nodes strictly inside the tent on one axis, and the sum of their in-map weights.
    let axis = |p: f32, len: usize, wrap: bool| {
        let (lo, hi) = ((p - r).floor() as isize + 1, (p + r).ceil() as isize - 1);
        let sum: f32 =
            (lo..=hi).filter(|&n| wrap || (0..len as isize).contains(&n)).map(|n| 1.0 - (n as f32 - p).abs() / r).sum();
        (lo, hi, sum)
    };
    let (x0, x1, sx) = axis(x, g.w, g.wrap_x);
    let (y0, y1, sy) = axis(y, g.h, g.wrap_y);
    let norm = 1.0 / (sx * sy);
    if !(norm.is_finite() && norm > 0.0) {
        return;
    }
    for ny in y0..=y1 {
        let wy = (1.0 - (ny as f32 - y).abs() / r) * norm;
        for nx in x0..=x1 {
            if let Some(i) = g.node(nx, ny) {
                f(i, (1.0 - (nx as f32 - x).abs() / r) * wy);
            }
        }
    }
}

/// A running snowball-erosion job (see the module doc).
pub struct SnowballJob {
    hm: Heightmap,
    params: SnowballParams,
    /// The parameters in this map's grid units.
    grid_p: SnowballGrid,
    seed: u64,
    hardness: Option<Vec<f32>>,
    maps: ErosionMaps,
    flow: Vec<f32>,
    ledger: Ledger,
    done: u64,
    geom: Geom,
    grid: TileGrid,
    margin: usize,
    /// Snowballs have run since the last blur.
    dirty: bool,
    degenerate: bool,
    /// The sea level ([`JobInputs::sea_level`]).
    sea: Option<f32>,
    /// Where snowballs spawn and whether they live, with a steering mask ([`JobInputs::steer`]).
    spawner: Option<Spawner>,
    /// Sink mode: the mask's weights (a snowball on a weight-0 node ends there).
    sink: Option<Vec<f32>>,
}

impl SnowballJob {
    /// Prepares a job. Fails on parameters outside their documented ranges, a bad hardness map
    /// or non-finite heights. Version-1 values still in `params` are taken as made for `terrain`
    /// ([`SnowballParams::upgrade_units`]).
    pub fn new(terrain: Heightmap, mut params: SnowballParams, inputs: JobInputs) -> Result<Self, JobError> {
        // Sink mode: the mask multiplies the erodibility.
        let setup = prepare_particle_job(&terrain, &mut params, inputs)?;
        let grid_p = setup.grid;
        let n = terrain.len();
        let (w, h) = (terrain.width, terrain.height);
        let geom = Geom::new(w, h, &setup.inputs.boundary);
        let margin = grid_p.offset_radius.ceil() as usize + 3 * grid_p.reach.ceil() as usize;
        let grid = TileGrid::new(w, h, particles::tile_size(w, h, margin), geom.wrap_x, geom.wrap_y);
        let volume = terrain.sum();
        let spawner = setup.spawner(&geom);
        let sink = setup.steer().filter(|s| s.sink).map(|s| s.weights.clone());
        let sea = setup.sea();
        Ok(Self {
            spawner,
            sink,
            params,
            grid_p,
            seed: setup.inputs.seed,
            hardness: setup.erodibility,
            maps: ErosionMaps::new(n),
            flow: vec![0.0; n],
            ledger: Ledger { volume_before: volume, volume_after: volume, ..Ledger::default() },
            done: 0,
            geom,
            grid,
            margin,
            dirty: true,
            degenerate: w < 2 || h < 2,
            sea,
            hm: terrain,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &SnowballParams {
        &self.params
    }

    /// The parameters in the grid units of the job's map.
    pub fn grid_params(&self) -> SnowballGrid {
        self.grid_p
    }

    fn spawn(&self, id: u64) -> Ball {
        let mut rng = SplitMix64::stream(self.seed, id);
        let (x, y) = match &self.spawner {
            None => (rng.next_f32() * self.geom.span_x, rng.next_f32() * self.geom.span_y),
            Some(s) => s.place(&mut rng),
        };
        let r = self.grid_p.offset_radius;
        let ox = (rng.next_f32() * 2.0 - 1.0) * r;
        let oy = (rng.next_f32() * 2.0 - 1.0) * r;
        let (x, y) = match self.geom.confine(x, y) {
            Confined::Inside { x, y, .. } => (x, y),
            Confined::Exit => (0.0, 0.0),
        };
        // With a steering mask the snowball lives with the probability of its node's weight.
        let alive = match &self.spawner {
            None => true,
            Some(s) => {
                let k = self.geom.nearest(x, y);
                s.lives(k % self.geom.w, k / self.geom.w, self.seed, id)
            }
        };
        Ball { x, y, px: x, py: y, vx: 0.0, vy: 0.0, ox, oy, sediment: 0.0, i: 0, alive, stalled: false }
    }

    fn run_batch(&mut self, start: u64, end: u64) -> Books {
        let p = &self.params;
        let balls: Vec<Ball> = (start..end).map(|id| self.spawn(id)).collect();
        let raw = Raw {
            h: self.hm.data.as_mut_ptr(),
            ero: self.maps.eroded.as_mut_ptr(),
            dep: self.maps.deposited.as_mut_ptr(),
            flow: self.flow.as_mut_ptr(),
            fvol: std::ptr::null_mut(),
            hard: self.hardness.as_ref().map_or(std::ptr::null(), |h| h.as_ptr()),
            n: self.hm.data.len(),
        };
        let ctx = Ctx {
            geom: self.geom,
            raw,
            erosion_rate: self.grid_p.erosion_rate,
            deposition_rate: p.deposition_rate,
            speed: self.grid_p.speed,
            friction: p.friction,
            max_iter: p.max_iterations,
            iter_scale: p.iteration_scale,
            reach: self.grid_p.reach,
            reach_nodes: self.grid_p.reach.ceil() as usize,
            inv_2cs: 0.5 / (self.grid_p.reach * self.hm.cell_size),
            margin: self.margin,
            sea: self.sea.unwrap_or(f32::NEG_INFINITY),
            spread: self.sea.is_some(),
            sink: self.sink.as_deref(),
        };
        let mut books = Books::default();
        if p.parallel {
            // A bounded number of snowballs in flight at once (see `particles::in_flight`).
            let sub = particles::in_flight(&self.grid, self.hm.len());
            let mut balls = balls;
            while !balls.is_empty() {
                let rest = balls.split_off(sub.min(balls.len()));
                let chunk = std::mem::replace(&mut balls, rest);
                particles::run(
                    &self.grid,
                    chunk,
                    SERIAL_TAIL,
                    |s: &Ball| self.geom.owner_cell(s.x, s.y),
                    // SAFETY: tiles are 2·margin wide and `walk` keeps to the margin (or stalls).
                    |rect, ss: &mut [Ball], b: &mut Books| ss.iter_mut().for_each(|s| unsafe { ctx.walk(s, rect, b) }),
                    |b| books.add(&b),
                );
            }
        } else {
            for mut s in balls {
                // SAFETY: serial with `&mut self`: exclusive access.
                unsafe { ctx.walk(&mut s, None, &mut books) };
            }
        }
        books
    }

    /// The final blur, booked node by node; hardness `k < 1` damps it (`k = 0` rock stays put).
    fn blur(&mut self) {
        let sigma = self.grid_p.blur_sigma;
        // Validated finite and ≥ 0; 0 = off.
        if sigma <= 0.0 || self.degenerate {
            return;
        }
        let (w, h) = (self.hm.width, self.hm.height);
        let mut blurred = self.hm.data.clone();
        let opts = BlurOptions { wrap_x: self.geom.wrap_x, wrap_y: self.geom.wrap_y, edge: BlurEdge::Renormalize };
        gaussian_blur_with(&mut blurred, w, h, sigma, opts);
        let hard = self.hardness.as_deref();
        let rows: Vec<(f64, f64)> = self
            .hm
            .data
            .par_chunks_mut(w)
            .zip(blurred.par_chunks(w))
            .zip(self.maps.eroded.par_chunks_mut(w))
            .zip(self.maps.deposited.par_chunks_mut(w))
            .enumerate()
            .map(|(y, (((hs, bs), es), ds))| {
                let (mut ero, mut dep) = (0.0f64, 0.0f64);
                for (x, (((hv, &bv), e), d)) in hs.iter_mut().zip(bs).zip(es.iter_mut()).zip(ds.iter_mut()).enumerate()
                {
                    let old = *hv;
                    let k = hard.map_or(1.0, |k| k[y * w + x].min(1.0));
                    let new = if k >= 1.0 { bv } else { old + (bv - old) * k };
                    *hv = new;
                    let change = new - old;
                    if change < 0.0 {
                        *e -= change;
                        ero -= new as f64 - old as f64;
                    } else {
                        *d += change;
                        dep += new as f64 - old as f64;
                    }
                }
                (ero, dep)
            })
            .collect();
        let (ero, dep) = rows.iter().fold((0.0, 0.0), |a, r| (a.0 + r.0, a.1 + r.1));
        self.ledger.eroded += ero;
        self.ledger.deposited += dep;
        // Material the blur created (+) or removed (−) at the edges: outside the sediment budget.
        self.ledger.clamped += dep - ero;
    }
}

impl Simulation for SnowballJob {
    fn step(&mut self) {
        let total = self.grid_p.snowballs;
        if self.done >= total {
            return;
        }
        let start = self.done;
        let end = (start + self.params.batch as u64).min(total);
        if !self.degenerate {
            let books = self.run_batch(start, end);
            self.ledger.eroded += books.eroded;
            self.ledger.deposited += books.deposited;
            self.ledger.lost_at_border += books.lost;
            self.ledger.clamped += books.clamped;
        }
        self.dirty = true;
        self.done = end;
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.grid_p.snowballs }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger { volume_after: self.hm.sum(), ..self.ledger }
    }

    fn maps(&self) -> &ErosionMaps {
        &self.maps
    }

    fn fields(&self) -> Fields {
        Fields { flow: Some(self.flow.clone()), ..Fields::default() }
    }

    /// Blurs the heightmap once (again only if snowballs ran since the last blur).
    fn finish(&mut self) {
        if self.dirty {
            self.blur();
            self.dirty = false;
            if let (Some(sea), false) = (self.sea, self.degenerate) {
                let maps = &mut self.maps;
                let (e, d) =
                    particles::relax_extremes(&mut self.hm, sea, particles::EXTREME_TOLERANCE, &mut |i, dh| {
                        maps.record(i, dh)
                    });
                self.ledger.eroded += e;
                self.ledger.deposited += d;
                self.ledger.clamped += d - e;
            }
        }
    }

    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        super::apply_edit(&mut self.hm, &mut self.ledger.volume_before, f);
    }
}

#[cfg(test)]
mod tests;
