//! The lazy "infinite" diamond-square world (SPEC §1, seed 001).
//!
//! The world is a diamond-square map of side `S + 1` nodes, `S = 2^k` (`k = side_log2` up to 24,
//! i.e. 16 777 217² nodes, far too many to store), of which only windows are ever evaluated.
//! Following seed 001 the algorithm is turned upside down: a height is answered top-down.
//! For a node `(x, y)` its level `b` is the lowest set bit of `x | y`
//! (`b = 1; while x & b == 0 && y & b == 0 { b <<= 1 }`); if both `x & b` and `y & b` are set the
//! node is a *square* point, otherwise a *diamond* point, and
//!
//! ```text
//! square : h(x,y) = ¼[h(x-b,y-b) + h(x+b,y-b) + h(x-b,y+b) + h(x+b,y+b)] + R·(2b/S)·ξ(x,y)
//! diamond: h(x,y) = ¼[h(x-b,y)   + h(x+b,y)   + h(x,y-b)   + h(x,y+b)]   + R·(2b/S)·ξ(x,y)
//! ```
//!
//! with `ξ(x, y) = signed(hash2(x, y, seed)) ∈ [-1, 1)`: the displacement depends only on the
//! position and the world seed, never on the order of queries, so any window, moved window or
//! cleared cache reproduces the same landscape bit for bit. The range is scaled by `2b/S`
//! (segment length over world side), so the world's height range does not grow with `k`.
//!
//! **World corners** `(0,0), (S,0), (0,S), (S,S)` are `unit(hash2(x, y, seed)) ∈ [0, 1)` (the
//! seed's "random heights at the four corners"); nodes outside `[0, S]²` are 0. These are the
//! same conventions as [`super::diamond_square`] with `DsEdge::Constant(0.0)`, so a world of side
//! `2^k` equals that generator's `2^k + 1` map (computed here in `f64`, there in `f32`).
//! Heights returned are `raw · height_scale` metres.
//!
//! **Resolution.** The world is a grid of nodes and `origin` a node of it: a window of another
//! size is another part of the world (or the same part at the world's own spacing), never the
//! same land sampled more finely. It is a grid algorithm
//! ([`super::Base::is_resolution_independent`] is false), so a build of a project at another
//! resolution resamples the window's map (smoothly, over the same extent) instead of
//! regenerating it.
//!
//! **Two evaluators, one formula.**
//! * [`LazyWorld::height`] is the seed's memoised top-down recursion, run on an explicit work
//!   stack (no call recursion): a node whose parents are all known is computed and memoised,
//!   otherwise its unknown parents are pushed. Depth is at most two stack entries per level.
//! * [`LazyWorld::window`] evaluates the same recursion level by level. The nodes needed at
//!   level `b` lie in a rectangle `T_b` aligned to `b`; `T_1` is the window (clipped to the
//!   world) and `T_2b = align_out(T_b ⊕ 2b, 2b) ∩ [0,S]²` (square points of level `b` just
//!   outside `T_b` feed its border diamonds, and their corners lie one more `b` out). Each
//!   level is a small dense grid, so a window costs `≈ 4/3·w·h + O(k)` node evaluations
//!   whatever the world size. Every node it computes is memoised too.
//!
//! The memo map uses a [`rng::mix64`](crate::core::rng::mix64)-based hasher on the packed key
//! `x << 32 | y`. It holds at most [`DEFAULT_CACHE_LIMIT`] entries by default
//! ([`LazyWorld::set_cache_limit`]); beyond that values are still computed exactly but not
//! stored, so memory stays bounded while results never change.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use super::GenError;
use crate::core::heightmap::Heightmap;
use crate::core::rng::{hash2, mix64, signed_f32, unit_f32};

/// Memo entries kept by default (about 16 bytes + overhead each, ≈ 100 MiB at the limit).
pub const DEFAULT_CACHE_LIMIT: usize = 1 << 22;

/// Largest accepted `side_log2`.
pub const MAX_SIDE_LOG2: u32 = 24;

crate::params! {
    /// Parameters of the lazy world.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct LazyWorldParams {
        /// World side is `2^side_log2` cells (`2^side_log2 + 1` nodes). Default: seed 001's 16 777 216²
        /// world.
        pub side_log2: u32 = 24, range [1.0, MAX_SIDE_LOG2 as f64];
        /// Roughness `R`: displacement range `±R·2b/S` (unitless, corners are in `[0, 1)`).
        pub roughness: f32 = 0.5, range [0.0, 16.0];
        /// Metres per raw unit.
        pub height_scale: f32 = 100.0, unit "m", range [0.0, 1.0e6];
        /// Top-left world node of the window [`generate`] returns. Any value; nodes outside the world are
        /// 0.
        pub origin: [i64; 2] = [0, 0];
    }
}

impl LazyWorldParams {
    /// Checks every field; the first offending one is reported.
    pub fn validate(&self) -> Result<(), GenError> {
        self.check_ranges()?;
        Ok(())
    }
}

/// A `Hasher` that finalises one `u64` key with SplitMix64's mixer.
#[derive(Default, Clone, Copy)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = mix64(self.0 ^ v);
    }
}

type Memo = HashMap<u64, f64, BuildHasherDefault<MixHasher>>;

/// A lazily evaluated diamond-square world with a memo of every computed node.
#[derive(Clone, Debug)]
pub struct LazyWorld {
    side: i64,
    log2: u32,
    roughness: f64,
    height_scale: f64,
    seed: u64,
    cache: Memo,
    cache_limit: usize,
}

/// `mean + amp·ξ(x,y)` with the mean summed in the fixed parent order.
#[inline]
fn combine(p: [f64; 4], amp: f64, x: i64, y: i64, seed: u64) -> f64 {
    (((p[0] + p[1]) + p[2]) + p[3]) * 0.25 + amp * signed_f32(hash2(x, y, seed)) as f64
}

#[inline]
fn key(x: i64, y: i64) -> u64 {
    ((x as u64) << 32) | (y as u64)
}

/// Rectangle of lattice nodes, inclusive bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rect {
    x0: i64,
    x1: i64,
    y0: i64,
    y1: i64,
}

impl Rect {
    /// Grows by `m` on every side, snaps outward to multiples of `a`, clips to `[0, side]²`.
    fn grow_align_clip(self, m: i64, a: i64, side: i64) -> Rect {
        let lo = |v: i64| (v - m).div_euclid(a) * a;
        let hi = |v: i64| -((-(v + m)).div_euclid(a) * a);
        Rect { x0: lo(self.x0).max(0), x1: hi(self.x1).min(side), y0: lo(self.y0).max(0), y1: hi(self.y1).min(side) }
    }
}

/// Dense values of the `b`-lattice over a rectangle.
struct Level {
    b: i64,
    r: Rect,
    nx: usize,
    v: Vec<f64>,
}

impl Level {
    fn new(b: i64, r: Rect) -> Self {
        let nx = ((r.x1 - r.x0) / b + 1) as usize;
        let ny = ((r.y1 - r.y0) / b + 1) as usize;
        Level { b, r, nx, v: vec![f64::NAN; nx * ny] }
    }
    #[inline]
    fn idx(&self, x: i64, y: i64) -> usize {
        debug_assert!(
            x >= self.r.x0 && x <= self.r.x1 && y >= self.r.y0 && y <= self.r.y1,
            "({x},{y}) not in {:?}",
            self.r
        );
        ((y - self.r.y0) / self.b) as usize * self.nx + ((x - self.r.x0) / self.b) as usize
    }
}

impl LazyWorld {
    /// A world with an empty memo. Fails on invalid parameters.
    pub fn new(p: &LazyWorldParams, seed: u64) -> Result<Self, GenError> {
        p.validate()?;
        Ok(Self {
            side: 1i64 << p.side_log2,
            log2: p.side_log2,
            roughness: p.roughness as f64,
            height_scale: p.height_scale as f64,
            seed,
            cache: Memo::default(),
            cache_limit: DEFAULT_CACHE_LIMIT,
        })
    }

    /// World side in cells (`2^side_log2`); nodes run from 0 to `side` inclusive.
    pub fn side(&self) -> i64 {
        self.side
    }

    /// Forgets every memoised node. Later queries recompute the same values.
    pub fn clear_cache(&mut self) {
        self.cache = Memo::default();
    }

    /// Number of memoised nodes.
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    /// Caps the number of memoised nodes (0 disables memoisation). Values never depend on it.
    pub fn set_cache_limit(&mut self, limit: usize) {
        self.cache_limit = limit;
    }

    #[inline]
    fn inside(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && x <= self.side && y <= self.side
    }

    #[inline]
    fn is_corner(&self, x: i64, y: i64) -> bool {
        (x == 0 || x == self.side) && (y == 0 || y == self.side)
    }

    #[inline]
    fn corner(&self, x: i64, y: i64) -> f64 {
        unit_f32(hash2(x, y, self.seed)) as f64
    }

    /// Displacement amplitude `R·2b/S` of level `b` (exact power-of-two scaling).
    #[inline]
    fn amp(&self, b: i64) -> f64 {
        self.roughness * ((2 * b) as f64 / self.side as f64)
    }

    /// Level `b` of a non-corner node inside the world and its four parents, in the fixed order.
    #[inline]
    fn parents(x: i64, y: i64) -> (i64, [(i64, i64); 4]) {
        let b = 1i64 << (x | y).trailing_zeros();
        if x & b != 0 && y & b != 0 {
            (b, [(x - b, y - b), (x + b, y - b), (x - b, y + b), (x + b, y + b)])
        } else {
            (b, [(x - b, y), (x + b, y), (x, y - b), (x, y + b)])
        }
    }

    /// A value that needs no computation: outside (0), corner, or memoised.
    #[inline]
    fn known(&self, x: i64, y: i64, scratch: &Memo) -> Option<f64> {
        if !self.inside(x, y) {
            Some(0.0)
        } else if self.is_corner(x, y) {
            Some(self.corner(x, y))
        } else {
            let k = key(x, y);
            self.cache.get(&k).or_else(|| scratch.get(&k)).copied()
        }
    }

    fn store(&mut self, x: i64, y: i64, v: f64, scratch: &mut Memo) {
        if self.cache.len() < self.cache_limit {
            self.cache.insert(key(x, y), v);
        } else {
            scratch.insert(key(x, y), v);
        }
    }

    /// Raw (unscaled) height of node `(x, y)`, top-down with memoisation.
    pub fn raw_height(&mut self, x: i64, y: i64) -> f64 {
        let mut scratch = Memo::default();
        if let Some(v) = self.known(x, y, &scratch) {
            return v;
        }
        // Explicit work stack: at most two entries per level are ever waiting on each other
        // (a diamond waits on a same-level square point, which waits on the coarser level),
        // plus up to four siblings pushed per visited node.
        let mut stack: Vec<(i64, i64)> = Vec::with_capacity(8 * (self.log2 as usize + 1));
        stack.push((x, y));
        while let Some(&(px, py)) = stack.last() {
            if self.known(px, py, &scratch).is_some() {
                stack.pop();
                continue;
            }
            let (b, ps) = Self::parents(px, py);
            let mut vals = [0.0f64; 4];
            let mut missing = false;
            for (i, &(qx, qy)) in ps.iter().enumerate() {
                match self.known(qx, qy, &scratch) {
                    Some(v) => vals[i] = v,
                    None => {
                        missing = true;
                        stack.push((qx, qy));
                    }
                }
            }
            if !missing {
                let v = combine(vals, self.amp(b), px, py, self.seed);
                self.store(px, py, v, &mut scratch);
                stack.pop();
            }
        }
        self.known(x, y, &scratch).unwrap_or(0.0)
    }

    /// Height of node `(x, y)` in metres; 0 outside the world.
    pub fn height(&mut self, x: i64, y: i64) -> f32 {
        (self.raw_height(x, y) * self.height_scale) as f32
    }

    /// The `w × h` window whose top-left node is world node `(x0, y0)`, heights in metres.
    /// Nodes outside the world are 0.
    pub fn window(&mut self, x0: i64, y0: i64, w: usize, h: usize, cell_size: f32) -> Result<Heightmap, GenError> {
        let mut hm = Heightmap::new(w, h, cell_size)?;
        // Clip [x0, x0 + w) × [y0, y0 + h) to the world in i128 (no overflow at any origin).
        let (side, xs, ys) = (self.side as i128, x0 as i128, y0 as i128);
        let cx0 = xs.max(0);
        let cx1 = (xs + w as i128 - 1).min(side);
        let cy0 = ys.max(0);
        let cy1 = (ys + h as i128 - 1).min(side);
        if cx0 > cx1 || cy0 > cy1 {
            return Ok(hm);
        }
        let t1 = Rect { x0: cx0 as i64, x1: cx1 as i64, y0: cy0 as i64, y1: cy1 as i64 };
        // Room for the nodes this window will memoise (≈ 4/3 of it plus a few per level), so the
        // map grows once instead of rehashing repeatedly.
        let nodes = ((cx1 - cx0 + 3) * (cy1 - cy0 + 3)) as usize;
        let want = nodes / 3 * 4 + 64 * self.log2 as usize;
        self.cache.reserve(want.min(self.cache_limit.saturating_sub(self.cache.len())));
        let finest = self.levels(t1);
        let k = self.height_scale;
        for y in t1.y0..=t1.y1 {
            let row = (y as i128 - ys) as usize;
            for x in t1.x0..=t1.x1 {
                let col = (x as i128 - xs) as usize;
                hm.data[row * w + col] = (finest.v[finest.idx(x, y)] * k) as f32;
            }
        }
        Ok(hm)
    }

    /// Level-by-level evaluation; returns the level-1 grid, valid over `t1`.
    fn levels(&mut self, t1: Rect) -> Level {
        let side = self.side;
        // Target rectangles T_b for b = 1, 2, …, S/2.
        let mut targets = Vec::with_capacity(self.log2 as usize);
        let mut t = t1;
        let mut b = 1i64;
        while b < side {
            targets.push(t);
            t = t.grow_align_clip(2 * b, 2 * b, side);
            b *= 2;
        }
        // Top: the corners.
        let mut parent = Level::new(side, Rect { x0: 0, x1: side, y0: 0, y1: side });
        for (x, y) in [(0, 0), (side, 0), (0, side), (side, side)] {
            let i = parent.idx(x, y);
            parent.v[i] = self.corner(x, y);
        }
        let memoise = self.cache_limit > 0;
        let seed = self.seed;
        for (lvl, t) in targets.iter().enumerate().rev() {
            let b = 1i64 << lvl;
            let amp = self.amp(b);
            let e = t.grow_align_clip(b, b, side);
            let mut cur = Level::new(b, e);
            // Pass 1: nodes of coarser levels (copied) and square points (from the coarser grid).
            let mut y = e.y0;
            while y <= e.y1 {
                let yodd = (y / b) & 1 == 1;
                let mut x = e.x0;
                while x <= e.x1 {
                    let xodd = (x / b) & 1 == 1;
                    let i = cur.idx(x, y);
                    if !xodd && !yodd {
                        cur.v[i] = parent.v[parent.idx(x, y)];
                    } else if xodd && yodd {
                        let get = |qx: i64, qy: i64| {
                            if qx < 0 || qy < 0 || qx > side || qy > side { 0.0 } else { parent.v[parent.idx(qx, qy)] }
                        };
                        let ps = [get(x - b, y - b), get(x + b, y - b), get(x - b, y + b), get(x + b, y + b)];
                        cur.v[i] = self.memo_or(memoise, x, y, || combine(ps, amp, x, y, seed));
                    }
                    x += b;
                }
                y += b;
            }
            // Pass 2: diamond points inside the target (neighbours come from this grid).
            let mut y = t.y0;
            while y <= t.y1 {
                let yodd = (y / b) & 1 == 1;
                let mut x = if yodd {
                    t.x0 + if (t.x0 / b) & 1 == 1 { b } else { 0 }
                } else {
                    t.x0 + if (t.x0 / b) & 1 == 1 { 0 } else { b }
                };
                while x <= t.x1 {
                    let get = |qx: i64, qy: i64| {
                        if qx < 0 || qy < 0 || qx > side || qy > side { 0.0 } else { cur.v[cur.idx(qx, qy)] }
                    };
                    let ps = [get(x - b, y), get(x + b, y), get(x, y - b), get(x, y + b)];
                    let v = self.memo_or(memoise, x, y, || combine(ps, amp, x, y, seed));
                    let i = cur.idx(x, y);
                    cur.v[i] = v;
                    x += 2 * b;
                }
                y += b;
            }
            parent = cur;
        }
        parent
    }

    /// The memoised value of `(x, y)`, computing and storing it when absent (and room is left).
    #[inline]
    fn memo_or(&mut self, memoise: bool, x: i64, y: i64, f: impl FnOnce() -> f64) -> f64 {
        if memoise {
            let k = key(x, y);
            if let Some(&v) = self.cache.get(&k) {
                return v;
            }
            let v = f();
            if self.cache.len() < self.cache_limit {
                self.cache.insert(k, v);
            }
            v
        } else {
            f()
        }
    }
}

/// The `width × height` window of the world at `p.origin`, with a fresh memo.
pub fn generate(
    width: usize,
    height: usize,
    cell_size: f32,
    p: &LazyWorldParams,
    seed: u64,
) -> Result<Heightmap, GenError> {
    crate::core::heightmap::check_size(width, height)?;
    let mut world = LazyWorld::new(p, seed)?;
    world.window(p.origin[0], p.origin[1], width, height, cell_size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::generate::diamond_square::{self, DiamondSquareParams, DsEdge};

    fn params(k: u32) -> LazyWorldParams {
        LazyWorldParams { side_log2: k, roughness: 0.8, height_scale: 1.0, origin: [0, 0] }
    }

    #[test]
    fn level_and_parents_follow_the_lowest_set_bit() {
        assert_eq!(LazyWorld::parents(4, 4), (4, [(0, 0), (8, 0), (0, 8), (8, 8)]));
        assert_eq!(LazyWorld::parents(4, 8), (4, [(0, 8), (8, 8), (4, 4), (4, 12)]));
        assert_eq!(LazyWorld::parents(3, 6), (1, [(2, 6), (4, 6), (3, 5), (3, 7)]));
        assert_eq!(LazyWorld::parents(0, 6), (2, [(-2, 6), (2, 6), (0, 4), (0, 8)]));
    }

    #[test]
    fn outside_is_zero_and_corners_are_hashed() {
        let mut w = LazyWorld::new(&params(5), 3).unwrap();
        for (x, y) in [(-1, 0), (0, -1), (33, 5), (5, 33), (i64::MIN, i64::MAX), (i64::MAX, 0)] {
            assert_eq!(w.height(x, y), 0.0);
        }
        assert_eq!(w.height(32, 32), unit_f32(hash2(32, 32, 3)));
        assert_eq!(w.cache_len(), 0);
    }

    #[test]
    fn height_follows_the_formula() {
        let mut w = LazyWorld::new(&params(4), 17).unwrap();
        let c = |x: i64, y: i64| unit_f32(hash2(x, y, 17)) as f64;
        let xi = |x: i64, y: i64| signed_f32(hash2(x, y, 17)) as f64;
        let centre = (((c(0, 0) + c(16, 0)) + c(0, 16)) + c(16, 16)) * 0.25 + (0.8f32 as f64) * xi(8, 8);
        assert_eq!(w.raw_height(8, 8), centre);
        // Top edge diamond: the neighbour above the world is 0.
        let top = (((c(0, 0) + c(16, 0)) + 0.0) + centre) * 0.25 + (0.8f32 as f64) * xi(8, 0);
        assert_eq!(w.raw_height(8, 0), top);
    }

    #[test]
    fn equals_diamond_square_with_constant_zero_edge() {
        for k in [1u32, 3, 6] {
            let s = 1usize << k;
            let ds = DiamondSquareParams {
                roughness: 0.8,
                edge: DsEdge::Constant(0.0),
                square: false,
                height_scale: 1.0,
                normalize: false,
            };
            let a = diamond_square::generate_side(k, 1.0, &ds, 99).unwrap();
            let mut w = LazyWorld::new(&params(k), 99).unwrap();
            let b = w.window(0, 0, s + 1, s + 1, 1.0).unwrap();
            for (i, (p, q)) in a.data.iter().zip(&b.data).enumerate() {
                assert!((p - q).abs() < 1e-5, "k={k} node {i}: {p} vs {q}");
            }
        }
    }

    #[test]
    fn single_queries_match_the_window_bit_for_bit() {
        let mut a = LazyWorld::new(&params(10), 5).unwrap();
        let win = a.window(300, 517, 40, 33, 1.0).unwrap();
        let mut b = LazyWorld::new(&params(10), 5).unwrap();
        // Reverse order, fresh memo.
        for y in (0..33).rev() {
            for x in (0..40).rev() {
                assert_eq!(b.height(300 + x, 517 + y), win.get(x as usize, y as usize));
            }
        }
        assert!(b.cache_len() > 0);
        b.clear_cache();
        assert_eq!(b.cache_len(), 0);
        assert_eq!(b.height(310, 520), win.get(10, 3));
    }

    #[test]
    fn query_order_does_not_matter() {
        let mut a = LazyWorld::new(&params(12), 8).unwrap();
        let mut b = LazyWorld::new(&params(12), 8).unwrap();
        let pts: Vec<(i64, i64)> = (0..200).map(|i| ((i * 37) % 4097, (i * 91 + 13) % 4097)).collect();
        let fwd: Vec<f32> = pts.iter().map(|&(x, y)| a.height(x, y)).collect();
        let mut bwd: Vec<f32> = pts.iter().rev().map(|&(x, y)| b.height(x, y)).collect();
        bwd.reverse();
        assert_eq!(fwd, bwd);
    }

    #[test]
    fn overlapping_windows_agree_and_cache_is_reused() {
        let mut w = LazyWorld::new(&params(16), 1).unwrap();
        let a = w.window(1000, 2000, 64, 64, 1.0).unwrap();
        let n = w.cache_len();
        assert!((64 * 64 - 4..64 * 64 * 2).contains(&n), "cache {n}");
        let b = w.window(1032, 2016, 64, 64, 1.0).unwrap();
        for y in 0..48 {
            for x in 0..32 {
                assert_eq!(a.get(x + 32, y + 16), b.get(x, y));
            }
        }
        // A window that is already fully known adds nothing.
        let before = w.cache_len();
        let c = w.window(1010, 2010, 16, 16, 1.0).unwrap();
        assert_eq!(w.cache_len(), before);
        assert_eq!(c.get(0, 0), a.get(10, 10));
        // Cleared cache reproduces.
        w.clear_cache();
        assert_eq!(w.window(1000, 2000, 64, 64, 1.0).unwrap(), a);
    }

    #[test]
    fn windows_crossing_and_beyond_the_world_edges() {
        let mut w = LazyWorld::new(&params(6), 4).unwrap();
        let s = 64i64;
        let win = w.window(s - 5, -3, 10, 10, 1.0).unwrap();
        let mut fresh = LazyWorld::new(&params(6), 4).unwrap();
        for y in 0..10i64 {
            for x in 0..10i64 {
                let (wx, wy) = (s - 5 + x, y - 3);
                let v = win.get(x as usize, y as usize);
                assert_eq!(v, fresh.height(wx, wy));
                if wx > s || wy < 0 {
                    assert_eq!(v, 0.0);
                }
            }
        }
        // Far-edge nodes: (s, 0) is a corner, (s, 1) a diamond whose right neighbour is outside.
        assert_eq!(win.get(5, 3), unit_f32(hash2(s, 0, 4)));
        let edge = (((fresh.raw_height(s - 1, 1) + 0.0) + fresh.raw_height(s, 0)) + fresh.raw_height(s, 2)) * 0.25
            + (0.8f32 as f64) * (2.0 / s as f64) * signed_f32(hash2(s, 1, 4)) as f64;
        assert_eq!(win.get(5, 4), edge as f32);
        let far = w.window(i64::MAX - 3, i64::MIN, 8, 8, 1.0).unwrap();
        assert!(far.data.iter().all(|&h| h == 0.0));
        let far = w.window(-1_000_000_000_000, 5, 8, 8, 1.0).unwrap();
        assert!(far.data.iter().all(|&h| h == 0.0));
    }

    #[test]
    fn every_world_size_works() {
        for k in 1..=MAX_SIDE_LOG2 {
            let mut w = LazyWorld::new(&params(k), k as u64).unwrap();
            let s = w.side();
            let a = w.window(s / 2 - 2, s / 2 - 2, 5, 5, 1.0).unwrap();
            assert!(a.all_finite());
            let b = w.window(s - 2, s - 2, 4, 4, 1.0).unwrap();
            assert_eq!(b.get(3, 3), 0.0);
            assert_eq!(b.get(2, 2), unit_f32(hash2(s, s, k as u64)));
            // Height range does not grow with the world: |h| stays O(1) in raw units.
            assert!(a.data.iter().chain(&b.data).all(|h| h.abs() < 4.0), "k={k}");
            let h = w.height(s, s - 1);
            assert_eq!(h, b.get(2, 1));
        }
    }

    #[test]
    fn cost_follows_the_window_not_the_world() {
        let mut small = LazyWorld::new(&params(8), 2).unwrap();
        small.window(37, 41, 32, 32, 1.0).unwrap();
        let mut huge = LazyWorld::new(&params(24), 2).unwrap();
        huge.window(5_000_037, 9_000_041, 32, 32, 1.0).unwrap();
        // ≈ 4/3·32² plus a few dozen nodes per level.
        assert!(huge.cache_len() < small.cache_len() + 24 * 64, "{} vs {}", huge.cache_len(), small.cache_len());
        let mut single = LazyWorld::new(&params(24), 2).unwrap();
        single.height(5_000_037, 9_000_041);
        assert!(single.cache_len() < 24 * 16, "{}", single.cache_len());
    }

    #[test]
    fn cache_limit_bounds_memory_not_values() {
        let mut a = LazyWorld::new(&params(12), 6).unwrap();
        let full = a.window(100, 100, 50, 50, 1.0).unwrap();
        let mut b = LazyWorld::new(&params(12), 6).unwrap();
        b.set_cache_limit(100);
        assert_eq!(b.window(100, 100, 50, 50, 1.0).unwrap(), full);
        assert_eq!(b.cache_len(), 100);
        assert_eq!(b.height(123, 131), full.get(23, 31));
        b.set_cache_limit(0);
        b.clear_cache();
        assert_eq!(b.height(149, 149), full.get(49, 49));
        assert_eq!(b.window(100, 100, 50, 50, 1.0).unwrap(), full);
        assert_eq!(b.cache_len(), 0);
    }

    #[test]
    fn generate_uses_origin_and_scale() {
        let p = LazyWorldParams { side_log2: 10, roughness: 1.0, height_scale: 250.0, origin: [200, 300] };
        let g = generate(16, 8, 2.0, &p, 3).unwrap();
        let mut w = LazyWorld::new(&p, 3).unwrap();
        assert_eq!(g, w.window(200, 300, 16, 8, 2.0).unwrap());
        let unit = LazyWorldParams { height_scale: 1.0, ..p.clone() };
        let g1 = generate(16, 8, 2.0, &unit, 3).unwrap();
        for (a, b) in g.data.iter().zip(&g1.data) {
            assert!((a - 250.0 * b).abs() <= 1e-3 * a.abs().max(1.0));
        }
        assert_ne!(g.data, generate(16, 8, 2.0, &p, 4).unwrap().data);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let ok = LazyWorldParams::default();
        for k in [0u32, 25, u32::MAX] {
            assert!(LazyWorld::new(&LazyWorldParams { side_log2: k, ..ok.clone() }, 0).is_err());
        }
        for bad in [f32::NAN, f32::NEG_INFINITY, -0.5, 1e30] {
            assert!(LazyWorld::new(&LazyWorldParams { roughness: bad, ..ok.clone() }, 0).is_err());
            assert!(LazyWorld::new(&LazyWorldParams { height_scale: bad, ..ok.clone() }, 0).is_err());
        }
        let mut w = LazyWorld::new(&ok, 0).unwrap();
        assert!(w.window(0, 0, 0, 5, 1.0).is_err());
        assert!(w.window(0, 0, 5, 5, -1.0).is_err());
        assert!(generate(usize::MAX, 1, 1.0, &ok, 0).is_err());
        let d: LazyWorldParams = serde_json::from_str("{\"side_log2\": 12}").unwrap();
        assert_eq!(d, LazyWorldParams { side_log2: 12, ..Default::default() });
    }
}
