//! Shared machinery of the particle models (droplet and snowball): map geometry under the edge
//! modes, raw access to the shared maps, the conflict-free tile scheduler that runs a batch of
//! particles in parallel phases (see the droplet module doc, "Parallel scheme"), and the sea
//! mode's deposit spreading and finishing pass.

use rayon::prelude::*;

use super::{Boundary, EdgeMode, Side};
use crate::core::rng::SplitMix64;

/// Sea mode's finishing pass: a land node more than this far (metres) above or below all of its
/// eight neighbours is an isolated extreme and is relaxed (see [`relax_extremes`]).
pub(crate) const EXTREME_TOLERANCE: f32 = 0.05;

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
    if (0..=3).contains(&rc) && bxi >= rc && byi >= rc && bxi + rc + 1 < g.w as isize && byi + rc + 1 < g.h as isize {
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
        for t in &taps[..k] {
            // SAFETY: `taps[..k]` were written just above (`k` only counts written slots).
            sum += unsafe { t.assume_init_ref() }.1;
        }
    } else {
        for dy in -rc..=rc + 1 {
            for dx in -rc..=rc + 1 {
                let (nx, ny) = (bxi + dx, byi + dy);
                let d = ((nx as f32 - x).powi(2) + (ny as f32 - y).powi(2)).sqrt();
                if d < r
                    && k < taps.len()
                    && let Some(i) = g.node(nx, ny)
                {
                    taps[k].write((i, r - d));
                    sum += r - d;
                    k += 1;
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

// SAFETY: `Raw` only carries pointers into maps its creator keeps alive while tasks run (the
// invariant above); every dereference goes through an `unsafe` accessor whose caller vouches
// for the node, and the tile scheduler ([`run`]) never lets two threads touch one node.
unsafe impl Send for Raw {}
// SAFETY: as for `Send`: shared `&Raw` only hands out raw pointers, and the accessors' contracts
// (disjoint nodes per thread, by the scheduler's margin guarantee) rule out data races.
unsafe impl Sync for Raw {}

impl Raw {
    /// # Safety
    /// `i < n` and no concurrent writer of node `i`.
    #[inline(always)]
    pub unsafe fn h(&self, i: usize) -> f32 {
        debug_assert!(i < self.n);
        // SAFETY: `i < n` (caller), so the read is inside the height map `h` points at; no
        // concurrent writer of node `i` (caller).
        unsafe { *self.h.add(i) }
    }
    /// # Safety
    /// `i < n`.
    #[inline(always)]
    pub unsafe fn hard(&self, i: usize) -> f32 {
        debug_assert!(i < self.n);
        if self.hard.is_null() {
            1.0
        } else {
            // SAFETY: non-null, so `hard` points at a hardness map of `n` nodes; `i < n`
            // (caller). The map is only read while tasks run.
            unsafe { *self.hard.add(i) }
        }
    }
    /// Counts a particle visit (and the water it carries) at node `i`.
    ///
    /// # Safety
    /// `i < n` and the caller may write node `i`.
    #[inline(always)]
    pub unsafe fn visit(&self, i: usize, water: f32) {
        debug_assert!(i < self.n);
        // SAFETY: `i < n` (caller), inside the flow map and (when non-null) the water-volume
        // map; the caller may write node `i`, so no other thread touches it meanwhile.
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
        // SAFETY: `cell` clamps (or wraps) both axes into the map (`axis_cell`), so the four
        // indices are < `raw.n` (`raw` holds this geometry's maps); no one writes these nodes
        // concurrently (caller).
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
mod tests;
