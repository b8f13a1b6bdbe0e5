//! Snowball erosion — SPEC §2b, seed 002 (J. Talle, *Simulating hydraulic erosion*, 2020).
//!
//! A cheap drop method: a "snowball" rolls down the surface normal, eroding behind itself and
//! shedding its load as the ground flattens. Each snowball starts at a uniformly random position
//! `p` with a fixed random offset `o ∈ [−R, R]²` (`R = offset_radius`) that roughens its path, and
//! for `i = 0, 1, …, max_iterations − 1`:
//!
//! ```text
//! n      = unit normal at p + o   (central differences of bilinear heights at ±1 node:
//!          n ∝ (−∂h/∂x, 1, −∂h/∂y), slopes in metres per metre using the map's cell size)
//! stop if n.y == 1                (flat: the snowball cannot roll)
//! deposit = s · deposition_rate · n.y
//! erosion = erosion_rate · (1 − n.y) · min(1, i · iteration_scale)
//! h(p_prev) += deposit − erosion  (bilinearly over the 4 nodes around the previous position:
//!                                  it erodes behind itself, so it never digs under its own feet)
//! s      += erosion − deposit     (exactly what the terrain gave or took)
//! v       = friction · v + (n.x, n.z) · speed
//! p_prev  = p;  p += v
//! ```
//!
//! After all snowballs, [`Simulation::finish`] Gaussian-blurs the heightmap with `blur_sigma`
//! (seed 002 smooths with a 3×3 binomial kernel, a Gaussian of σ ≈ 0.71 nodes, hence the default).
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
//! load over the same disc; and [`Simulation::finish`] levels isolated one-node extremes on land
//! after the blur, as the droplet model does.
//!
//! Parallelism: the same conflict-free tile phases as the droplet model (see
//! [`super::droplet`]): margin `M = ⌈R⌉ + 3`; a snowball advances inside its tile only while its
//! previous position is within the margin; a snowball flung farther than that in one iteration (only
//! possible with large `speed`/`friction`) finishes serially after the round. Randomness per
//! snowball comes from `SplitMix64::stream(seed, index)`; results are identical at any thread count.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::droplet::check_hardness;
use super::droplet::particles::{self, Books, Confined, Geom, Raw, Rect, TileGrid, Walker};
use super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation};
use crate::core::filter::{BlurEdge, BlurOptions, gaussian_blur_with};
use crate::core::heightmap::Heightmap;
use crate::core::rng::SplitMix64;

crate::params! {
    /// Parameters of the snowball model (seed 002's names in brackets; defaults from its code).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SnowballParams {
        /// Snowballs to roll (seed 002 shows 35k, 50k and 100k).
        pub snowballs: u64 = 35_000, range [0.0, (1u64 << 34) as f64];
        /// Height taken per iteration at full steepness (erosionRate).
        pub erosion_rate: f32 = 0.04, unit "m", range [0.0, 1000.0];
        /// Fraction of the load dropped per iteration on flat ground (depositionRate).
        pub deposition_rate: f32 = 0.03, range [0.0, 1.0];
        /// Acceleration along the normal (speed).
        pub speed: f32 = 0.15, unit "nodes/iteration", range [0.0, 1000.0];
        /// Fraction of the velocity kept per iteration (friction).
        pub friction: f32 = 0.7, range [0.0, 1.0];
        /// Half-width of the random offset used when sampling the normal (radius).
        pub offset_radius: f32 = 0.8, unit "nodes", range [0.0, 64.0];
        /// Most iterations per snowball (maxIterations).
        pub max_iterations: u32 = 80, range [1.0, 1e6];
        /// Erosion ramps up as `min(1, i · iteration_scale)` (iterationScale).
        pub iteration_scale: f32 = 0.04, range [0.0, 1000.0];
        /// Gaussian blur of the heightmap after all snowballs: its sigma (0 = off). The default,
        /// `1/√2`, is the seed's 3×3 binomial blur.
        pub blur_sigma: f32 = std::f32::consts::FRAC_1_SQRT_2, unit "nodes", range [0.0, 1000.0];
        /// Run batches in parallel tile phases; `false` = one snowball after another.
        pub parallel: bool = true;
        /// Snowballs per step (one indivisible unit of work).
        pub batch: u32 = 4096, range [1.0, (1u64 << 24) as f64];
    }
}

impl SnowballParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }
}

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

struct Ctx {
    geom: Geom,
    raw: Raw,
    erosion_rate: f32,
    deposition_rate: f32,
    speed: f32,
    friction: f32,
    max_iter: u32,
    iter_scale: f32,
    /// `1 / (2 · cell_size)`: central difference over two nodes, in metres per metre.
    inv_2cs: f32,
    /// Tile margin `⌈R⌉ + 3`.
    margin: usize,
    /// The sea level, or −∞ without a sea.
    sea: f32,
    /// Sea mode (a sea level is set): erosion never takes a node below the sea, a snowball that
    /// reaches the sea drops its load there (spread, up to the water line) and deposits are spread
    /// over [`SEA_SPREAD`] nodes.
    spread: bool,
}

/// Radius (nodes) of the footprint a snowball drops its load with in sea mode.
pub const SEA_SPREAD: f32 = 2.5;

impl Ctx {
    /// Rolls snowball `s` until it ends or (with `rect`) leaves that tile or stalls.
    ///
    /// # Safety
    /// `self.raw` points at live maps of this geometry. With `rect = Some(t)`, no other thread
    /// may touch a node within `self.margin` of `t` while this runs: an iteration only runs when
    /// the snowball stands in `t` and its previous position is within `margin − 1` cells of `t`,
    /// and it then reads within `⌈R⌉ + 2` of its cell and writes the 2×2 nodes of its previous
    /// cell. With `None` the caller has exclusive access to the maps.
    unsafe fn walk(&self, s: &mut Ball, rect: Option<Rect>, b: &mut Books) {
        // Without a sea the loop is compiled without the sea tests (the classic loop).
        if self.spread {
            unsafe { self.walk_in::<true>(s, rect, b) }
        } else {
            unsafe { self.walk_in::<false>(s, rect, b) }
        }
    }

    /// [`Ctx::walk`] in sea mode (`SEA`, `self.spread`) or without a sea.
    ///
    /// # Safety
    /// As [`Ctx::walk`].
    #[inline(always)]
    unsafe fn walk_in<const SEA: bool>(&self, s: &mut Ball, rect: Option<Rect>, b: &mut Books) {
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
                if t.distance(qx, qy) + 1 > self.margin {
                    s.stalled = true;
                    return;
                }
            }
            if s.i >= self.max_iter {
                unsafe { self.settle(s, b) };
                return;
            }
            unsafe { raw.visit(g.nearest(s.x, s.y), 0.0) };
            // Surface normal at the offset position.
            let (sx, sy) = g.clamp_read(s.x + s.ox, s.y + s.oy);
            let at = |x: f32, y: f32| {
                let (x, y) = g.clamp_read(x, y);
                // SAFETY: in-map position within the margin (see the function's contract).
                unsafe { g.sample(raw, x, y) }
            };
            let gx = (at(sx + 1.0, sy) - at(sx - 1.0, sy)) * self.inv_2cs;
            let gy = (at(sx, sy + 1.0) - at(sx, sy - 1.0)) * self.inv_2cs;
            let ny = 1.0 / (1.0 + gx * gx + gy * gy).sqrt();
            if ny >= 1.0 || !ny.is_finite() {
                unsafe { self.settle(s, b) };
                return;
            }
            let (nx, nz) = (-gx * ny, -gy * ny);
            // SAFETY: in-map position in the task's tile.
            if SEA && unsafe { g.sample(raw, s.x, s.y) } <= self.sea {
                // At sea: no erosion; drop what fits below the water line, roll on with the rest.
                if s.sediment > 0.0 {
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
            let (idx, u, v) = g.cell(s.px, s.py);
            let ws = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
            let mut net = 0.0f64;
            for (&i, w) in idx.iter().zip(ws) {
                // SAFETY: `cell` returns in-map indices, within the margin.
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
        if s.sediment > 0.0 && self.spread {
            put = unsafe {
                particles::deposit_disc(&self.raw, &self.geom, s.x, s.y, s.sediment as f32, SEA_SPREAD, f32::INFINITY)
            };
            b.deposited += put;
        } else if s.sediment > 0.0 {
            let (idx, u, v) = self.geom.cell(s.x, s.y);
            let ws = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
            let load = s.sediment as f32;
            for (&i, w) in idx.iter().zip(ws) {
                // SAFETY: in-map indices next to the snowball's own cell.
                unsafe {
                    let h = &mut *self.raw.h.add(i);
                    let old = *h;
                    let new = old + load * w;
                    *h = new;
                    *self.raw.dep.add(i) += new - old;
                    put += new as f64 - old as f64;
                }
            }
            b.deposited += put;
        }
        // What f32 heights could not represent (a few ulps at most) is booked, not lost.
        b.residue(s.sediment - put);
        s.sediment = 0.0;
        s.alive = false;
    }
}

/// A running snowball-erosion job (see the module doc).
pub struct SnowballJob {
    hm: Heightmap,
    params: SnowballParams,
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
}

impl SnowballJob {
    /// Prepares a job. Fails on parameters outside their documented ranges, a bad hardness map
    /// or non-finite heights.
    pub fn new(terrain: Heightmap, params: SnowballParams, inputs: JobInputs) -> Result<Self, JobError> {
        params.validate()?;
        if !terrain.all_finite() {
            return Err(JobError::NonFinite);
        }
        let n = terrain.len();
        check_hardness(&inputs.hardness, n)?;
        let (w, h) = (terrain.width, terrain.height);
        let geom = Geom::new(w, h, &inputs.boundary);
        let margin = params.offset_radius.ceil() as usize + 3;
        let grid = TileGrid::new(w, h, particles::tile_size(w, h, margin), geom.wrap_x, geom.wrap_y);
        let volume = terrain.sum();
        Ok(Self {
            params,
            seed: inputs.seed,
            hardness: inputs.hardness,
            maps: ErosionMaps::new(n),
            flow: vec![0.0; n],
            ledger: Ledger { volume_before: volume, volume_after: volume, ..Ledger::default() },
            done: 0,
            geom,
            grid,
            margin,
            dirty: true,
            degenerate: w < 2 || h < 2,
            sea: inputs.sea_level.filter(|s| s.is_finite()),
            hm: terrain,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &SnowballParams {
        &self.params
    }

    fn spawn(&self, id: u64) -> Ball {
        let mut rng = SplitMix64::stream(self.seed, id);
        let x = rng.next_f32() * self.geom.span_x;
        let y = rng.next_f32() * self.geom.span_y;
        let r = self.params.offset_radius;
        let ox = (rng.next_f32() * 2.0 - 1.0) * r;
        let oy = (rng.next_f32() * 2.0 - 1.0) * r;
        let (x, y) = match self.geom.confine(x, y) {
            Confined::Inside { x, y, .. } => (x, y),
            Confined::Exit => (0.0, 0.0),
        };
        Ball { x, y, px: x, py: y, vx: 0.0, vy: 0.0, ox, oy, sediment: 0.0, i: 0, alive: true, stalled: false }
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
            erosion_rate: p.erosion_rate,
            deposition_rate: p.deposition_rate,
            speed: p.speed,
            friction: p.friction,
            max_iter: p.max_iterations,
            iter_scale: p.iteration_scale,
            inv_2cs: 0.5 / self.hm.cell_size,
            margin: self.margin,
            sea: self.sea.unwrap_or(f32::NEG_INFINITY),
            spread: self.sea.is_some(),
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
        let sigma = self.params.blur_sigma;
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
        if self.done >= self.params.snowballs {
            return;
        }
        let start = self.done;
        let end = (start + self.params.batch as u64).min(self.params.snowballs);
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
        Progress { done: self.done, total: self.params.snowballs }
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
                    particles::relax_extremes(&mut self.hm, sea, super::droplet::EXTREME_TOLERANCE, &mut |i, dh| {
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
mod tests {
    use super::*;
    use crate::core::erosion::{Boundary, EdgeMode};

    /// A cone-shaped island in a flat sea, like seed 002's test scene.
    fn island(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| {
            let c = n as f32 / 2.0;
            let d = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt() / c;
            let bumps = 0.6 * (x as f32 * 0.37).sin() * (y as f32 * 0.29).cos();
            ((1.0 - d) * 12.0 + bumps).max(0.0)
        })
        .unwrap()
    }

    #[test]
    fn snowballs_end_at_the_sea_without_digging_below_it() {
        // A cone island rising out of a sea 3 m deep (sea level 0).
        let hm = Heightmap::from_fn(80, 80, 1.0, |x, y| {
            let d = ((x as f32 - 40.0).powi(2) + (y as f32 - 40.0).powi(2)).sqrt() / 40.0;
            (1.0 - d) * 14.0 - 3.0 + 0.6 * (x as f32 * 0.37).sin() * (y as f32 * 0.29).cos()
        })
        .unwrap();
        let p = SnowballParams {
            snowballs: 6000,
            erosion_rate: 0.2,
            blur_sigma: 0.0,
            batch: 2000,
            ..SnowballParams::default()
        };
        for parallel in [false, true] {
            let inputs = JobInputs {
                boundary: Boundary::all(EdgeMode::Wall),
                seed: 5,
                sea_level: Some(0.0),
                ..Default::default()
            };
            let mut j = SnowballJob::new(hm.clone(), SnowballParams { parallel, ..p.clone() }, inputs).unwrap();
            while !j.is_done() {
                j.step();
            }
            j.finish();
            let l = j.ledger();
            assert!(l.closes(1e-5), "{l:?}");
            assert!(l.eroded > 1.0);
            for (i, (&a, &b)) in hm.data.iter().zip(&j.heightmap().data).enumerate() {
                if a > 0.0 {
                    assert!(b >= 0.0, "land node {i} dug to {b}");
                } else {
                    // Under water nothing is dug: a sea node may take a deposit (and lose it
                    // again down to the water line), never end below where it started.
                    assert!(b >= a - 1e-5, "sea node {i} dug from {a} to {b}");
                }
            }
        }
    }

    fn job(hm: Heightmap, p: SnowballParams, b: Boundary) -> SnowballJob {
        SnowballJob::new(hm, p, JobInputs { boundary: b, seed: 11, ..Default::default() }).unwrap()
    }

    fn run(j: &mut SnowballJob) {
        while !j.is_done() {
            j.step();
        }
        j.finish();
    }

    #[test]
    fn first_iteration_neither_erodes_nor_deposits() {
        // i = 0: erosion is scaled by min(1, 0) and the load is 0, so one iteration changes nothing.
        let p = SnowballParams { snowballs: 50, max_iterations: 1, blur_sigma: 0.0, ..Default::default() };
        let hm = island(32);
        let mut j = job(hm.clone(), p, Boundary::default());
        run(&mut j);
        assert_eq!(j.hm, hm);
        // Every snowball visits at least its start node.
        assert!(j.flow.iter().sum::<f32>() >= 50.0);
    }

    #[test]
    fn snowballs_carve_the_slopes_and_deposit_below() {
        let p = SnowballParams { snowballs: 2000, blur_sigma: 0.0, ..Default::default() };
        let before = island(48);
        let mut j = job(before.clone(), p, Boundary::default());
        run(&mut j);
        let l = j.ledger();
        assert!(l.eroded > 0.0 && l.deposited > 0.0);
        assert!(l.closes(1e-4), "{l:?}");
        // Erosion happens on the slopes (height > 0), not on the flat sea floor.
        let eroded_on_land: f32 =
            j.maps.eroded.iter().zip(&before.data).filter(|(_, h)| **h > 0.5).map(|(e, _)| *e).sum();
        let total: f32 = j.maps.eroded.iter().sum();
        assert!(eroded_on_land > 0.95 * total, "{eroded_on_land} of {total}");
    }

    #[test]
    fn the_step_follows_the_seed_formulas() {
        // On a plane h = −a·x (downhill towards +x) the normal is (a, 1, 0)/√(1+a²).
        let a = 0.5f32;
        let hm = Heightmap::from_fn(64, 16, 1.0, |x, _| 5.0 - a * x as f32).unwrap();
        let p = SnowballParams {
            snowballs: 1,
            offset_radius: 0.0,
            max_iterations: 3,
            blur_sigma: 0.0,
            ..Default::default()
        };
        let mut j = job(hm, p.clone(), Boundary::all(EdgeMode::Wall));
        let mut s = j.spawn(0);
        s.x = 10.0;
        s.y = 8.0;
        s.px = 10.0;
        s.py = 8.0;
        let raw = Raw {
            h: j.hm.data.as_mut_ptr(),
            ero: j.maps.eroded.as_mut_ptr(),
            dep: j.maps.deposited.as_mut_ptr(),
            flow: j.flow.as_mut_ptr(),
            fvol: std::ptr::null_mut(),
            hard: std::ptr::null(),
            n: 64 * 16,
        };
        let ctx = Ctx {
            geom: j.geom,
            raw,
            erosion_rate: p.erosion_rate,
            deposition_rate: p.deposition_rate,
            speed: p.speed,
            friction: p.friction,
            max_iter: 3,
            iter_scale: p.iteration_scale,
            inv_2cs: 0.5,
            margin: 3,
            sea: f32::NEG_INFINITY,
            spread: false,
        };
        let mut b = Books::default();
        unsafe { ctx.walk(&mut s, None, &mut b) };
        let ny = 1.0 / (1.0 + a * a).sqrt();
        let nx = a * ny;
        // Velocities: v1 = nx·speed, v2 = f·v1 + nx·speed, v3 = f·v2 + nx·speed.
        let v1 = nx * p.speed;
        let v2 = p.friction * v1 + nx * p.speed;
        let v3 = p.friction * v2 + nx * p.speed;
        assert!((s.x - (10.0 + v1 + v2 + v3)).abs() < 1e-4, "{}", s.x);
        assert!((s.y - 8.0).abs() < 1e-6);
        // Erosion: i = 0 → 0, i = 1 → e·(1−ny)·0.04, i = 2 → e·(1−ny)·0.08; deposits are tiny
        // (load · 0.03 · ny), and everything ends on the map: eroded = deposited.
        let e1 = p.erosion_rate * (1.0 - ny) * 0.04;
        let e2 = p.erosion_rate * (1.0 - ny) * 0.08;
        assert!(((b.eroded - b.deposited) as f32).abs() < 1e-6);
        let dep2 = e1 * p.deposition_rate * ny;
        // (f32 rounding of heights near 5 m is ~5e-7 per node, ~1 % of these tiny changes.)
        assert!((b.eroded as f32 - (e1 + e2 - dep2)).abs() < 1e-2 * (e1 + e2), "{} vs {}", b.eroded, e1 + e2 - dep2);
        assert!(!s.alive && s.sediment == 0.0);
    }

    #[test]
    fn blur_is_booked_and_the_ledger_closes_in_every_mode() {
        for b in [Boundary::default(), Boundary::all(EdgeMode::Wall), Boundary::all(EdgeMode::Wrap)] {
            for parallel in [false, true] {
                let p = SnowballParams { snowballs: 600, batch: 256, parallel, ..Default::default() };
                let mut j = job(island(40), p, b);
                run(&mut j);
                let l = j.ledger();
                assert!(l.closes(1e-4), "{b:?} {parallel} {l:?}");
                let e: f64 = j.maps.eroded.iter().map(|&v| v as f64).sum();
                assert!((e - l.eroded).abs() <= 1e-3 * l.eroded, "{e} {}", l.eroded);
                // finish() twice blurs once.
                let h = j.hm.clone();
                j.finish();
                assert_eq!(j.hm, h);
            }
        }
    }

    #[test]
    fn hardness_zero_is_rock() {
        let hm = island(40);
        let hard: Vec<f32> = (0..hm.len()).map(|i| if i % 40 < 20 { 0.0 } else { 1.0 }).collect();
        let p = SnowballParams { snowballs: 800, ..Default::default() };
        let mut j =
            SnowballJob::new(hm.clone(), p, JobInputs { hardness: Some(hard), seed: 1, ..Default::default() }).unwrap();
        run(&mut j);
        for y in 0..40 {
            for x in 0..20 {
                assert!(j.hm.get(x, y) >= hm.get(x, y), "rock at {x},{y} lost height");
            }
        }
        assert!(j.ledger().closes(1e-4));
    }

    #[test]
    fn bad_parameters_are_refused() {
        let hm = island(8);
        for p in [
            SnowballParams { friction: 1.5, ..Default::default() },
            SnowballParams { speed: f32::NAN, ..Default::default() },
            SnowballParams { max_iterations: 0, ..Default::default() },
            SnowballParams { blur_sigma: -1.0, ..Default::default() },
            SnowballParams { offset_radius: 1e9, ..Default::default() },
            SnowballParams { batch: 0, ..Default::default() },
        ] {
            assert!(SnowballJob::new(hm.clone(), p, JobInputs::default()).is_err());
        }
    }
}
