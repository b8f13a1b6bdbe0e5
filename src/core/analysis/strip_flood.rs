//! The priority-flood's filled surface, in parallel over strips of rows (issue #36): the same
//! bits as the serial flood ([`super::priority_flood`] with `ε > 0`) at any thread count.
//!
//! # What the serial flood computes
//! The priority-flood + ε (Barnes, Lehman & Mulla 2014, Algorithm 2 with ε; see the parent module)
//! gives each non-outlet node `j`, reached first from the popped neighbour `c`, the height
//!
//! ```text
//! g_j(z_c) = f(z_c)  if h_j ≤ z_c,  else h_j;      f(z) = max(z + ε, next_up(z))
//! ```
//!
//! and outlets keep `h`. `g_j` is non-decreasing and `g_j(z) > z` (Knuth's 1977 "superior"
//! functions), so the flood is Dijkstra's algorithm on them, and the filled surface is the unique
//! solution of
//!
//! ```text
//! z_j = h_j (outlets);      z_j = min over the 8 neighbours c of g_j(z_c) (every other node)
//! ```
//!
//! (if two solutions differed, take the node `j` with the lowest differing value `m` in either;
//! its minimising neighbour `c` is below `m`, so it agrees, and then so does `j`). Any process
//! that starts from upper bounds (`+∞`, outlets at `h`) and lowers a node to `g_j(z_c)` whenever
//! that is lower, until nothing changes, ends at this solution: the order of the updates, the
//! tie-breaks and the thread count cannot change a bit of it. The pop order (heights, then node
//! index) and each node's parent (its lowest neighbour, by height then index) follow from `z`
//! alone, which is what [`super::accumulation`] uses.
//!
//! # How it runs in parallel
//! The decomposition of Barnes (2016, "Parallel priority-flood depression filling for trillion
//! cell digital elevation models on desktops or clusters", Computers & Geosciences 96, 56–68):
//! the map is cut into strips of whole rows; each strip floods its own nodes with its own heap,
//! seeded with its outlets (only those with a non-outlet neighbour: the others reach nobody), and
//! the strips exchange their edge rows. Barnes's tiles solve a graph of spill heights between
//! them; with `ε` the heights a path gives are not a function of its highest node, so here the
//! strips instead exchange the nodes of their edge rows as they settle, and a strip lowers its own
//! edge nodes from its neighbours' (`g_j` of theirs) and floods on from them (label correcting).
//! To keep this from flooding a strip from the wrong side and again from the right one, the
//! heights are taken in bands, as Δ-stepping does (Meyer & Sanders 2003, "Δ-stepping: a
//! parallelizable shortest path algorithm", Journal of Algorithms 49, 114–152): in each band every
//! strip settles its nodes below the band's top, the strips exchange, and this repeats until no
//! strip has a new edge node below it; then every node below the top is final. The bands' tops are
//! quantiles of the heights. The strips and bands are the same on any pool (they could differ
//! without changing a bit): about [`STRIP_ROWS`] rows a strip and [`BANDS`] bands.
//!
//! Measured on one thread (this 2-core machine, the 513² reference island built at 8193²): the
//! strips' floods took 3.2 s of work, against 12.0 s for the one heap of the serial flood, and
//! their rounds (47) would keep 16 threads busy enough for about a tenth of that time, from the
//! time of each strip in each round.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use crate::core::Heightmap;

use super::key;

/// Rows of a strip (about): 128 strips at 16385², 8 per thread on 16 cores. Whatever the thread
/// count, so a run on one thread floods strips too: their heaps are small and stay in cache,
/// which made the fill 3–4× faster than one heap over the whole map on one thread (8193²).
const STRIP_ROWS: usize = 128;

/// Most strips.
const MAX_STRIPS: usize = 256;

/// Height bands: fewer leave more strips idle in a band, more redo less work (measured at 4097²
/// and 8193²: 8 is about the best of 1 to 64).
const BANDS: usize = 8;

/// The priority-flood's filled heights of `hm` with the sea and the map edges as outlets and a
/// gradient `epsilon` (> 0), bit for bit [`super::priority_flood`]'s `filled` (module doc), on
/// rayon's pool. A map with a height that is not finite, or `epsilon ≤ 0`, floods serially.
pub(crate) fn filled(hm: &Heightmap, sea: f32, epsilon: f32) -> Vec<f32> {
    filled_with(hm, sea, epsilon, (hm.height / STRIP_ROWS).clamp(1, MAX_STRIPS), BANDS)
}

/// [`filled`] with `strips` strips of rows and `bands` height bands (tests choose them).
pub(crate) fn filled_with(hm: &Heightmap, sea: f32, epsilon: f32, strips: usize, bands: usize) -> Vec<f32> {
    let parallel = epsilon > 0.0 && epsilon.is_finite() && sea.is_finite();
    if !(parallel && hm.data.par_iter().all(|v| v.is_finite())) {
        return super::priority_flood(hm, sea, epsilon).filled;
    }
    Flood::new(hm, sea, epsilon, strips).run(bands)
}

/// `g_j(z_c)` of the module doc: the height the flood gives a node of height `h` reached from a
/// settled node at `zc`.
#[inline]
fn lift(h: f32, zc: f32, epsilon: f32) -> f32 {
    if h <= zc { (zc + epsilon).max(zc.next_up()) } else { h }
}

/// A node's place in a heap: its height's key, then its index in the strip.
#[inline]
fn packed(z: f32, i: usize) -> u64 {
    (u64::from(key(z)) << 32) | i as u64
}

/// The map and the rules, shared by the strips.
struct Grid<'a> {
    h: &'a [f32],
    w: usize,
    rows: usize,
    sea: f32,
    epsilon: f32,
}

impl Grid<'_> {
    #[inline]
    fn outlet(&self, x: usize, y: usize) -> bool {
        x == 0 || y == 0 || x + 1 == self.w || y + 1 == self.rows || self.h[y * self.w + x] <= self.sea
    }
}

/// The nodes of one strip's edge row that settled in a round, `(x, z)`, for the strip beside it.
type Sent = Vec<(u32, f32)>;

/// One strip of rows `y0 .. y0 + rows`: its heap and seeds, and the edge nodes it settled.
struct Strip {
    y0: usize,
    rows: usize,
    heap: BinaryHeap<Reverse<u64>>,
    /// Its outlets that reach a non-outlet, sorted (they never change, so they stay out of the
    /// heap), and the next to settle.
    seeds: Vec<u64>,
    next: usize,
    /// Settled nodes of its first row (for the strip above) and of its last (for the one below).
    up: Sent,
    down: Sent,
}

struct Flood<'a> {
    grid: Grid<'a>,
    z: Vec<f32>,
    strips: Vec<Strip>,
}

impl<'a> Flood<'a> {
    /// Outlets at their heights, every other node at `+∞`, and each strip's sorted seeds.
    fn new(hm: &'a Heightmap, sea: f32, epsilon: f32, strips: usize) -> Self {
        let (w, rows) = (hm.width, hm.height);
        let grid = Grid { h: &hm.data, w, rows, sea, epsilon };
        let mut z = vec![f32::INFINITY; hm.len()];
        z.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, v) in row.iter_mut().enumerate() {
                if grid.outlet(x, y) {
                    *v = hm.data[y * w + x];
                }
            }
        });
        let n = strips.clamp(1, rows);
        let strips = (0..n)
            .into_par_iter()
            .map(|s| {
                let (y0, y1) = (s * rows / n, (s + 1) * rows / n);
                let mut seeds = Vec::new();
                for y in y0..y1 {
                    for x in 0..w {
                        if grid.outlet(x, y) && reaches_land(&grid, x, y) {
                            seeds.push(packed(hm.data[y * w + x], (y - y0) * w + x));
                        }
                    }
                }
                seeds.sort_unstable();
                Strip { y0, rows: y1 - y0, heap: BinaryHeap::new(), seeds, next: 0, up: Vec::new(), down: Vec::new() }
            })
            .collect();
        Flood { grid, z, strips }
    }

    /// Floods band by band (module doc) and returns the filled heights.
    fn run(mut self, bands: usize) -> Vec<f32> {
        let tops = if self.strips.len() > 1 { band_tops(self.grid.h, bands) } else { Vec::new() };
        let w = self.grid.w;
        let last = self.strips.len() - 1;
        let mut sent: Vec<(Sent, Sent)> = vec![(Vec::new(), Vec::new()); self.strips.len()];
        for top in tops.into_iter().chain([u64::MAX]) {
            loop {
                let mut parts: Vec<&mut [f32]> = Vec::with_capacity(self.strips.len());
                let mut rest = self.z.as_mut_slice();
                for st in &self.strips {
                    let (a, b) = rest.split_at_mut(st.rows * w);
                    parts.push(a);
                    rest = b;
                }
                let grid = &self.grid;
                let inbox = &sent;
                self.strips.par_iter_mut().zip(parts).enumerate().for_each(|(s, (st, z))| {
                    let from_above = if s > 0 { inbox[s - 1].1.as_slice() } else { &[] };
                    let from_below = if s < last { inbox[s + 1].0.as_slice() } else { &[] };
                    st.receive(grid, z, from_above, 0);
                    st.receive(grid, z, from_below, st.rows - 1);
                    st.settle(grid, z, top, s > 0, s < last);
                });
                sent = self
                    .strips
                    .iter_mut()
                    .map(|st| (std::mem::take(&mut st.up), std::mem::take(&mut st.down)))
                    .collect();
                if sent.iter().all(|(u, d)| u.is_empty() && d.is_empty()) {
                    break;
                }
            }
        }
        self.z
    }
}

/// Whether outlet `(x, y)` has a non-outlet neighbour (one the flood can reach from it).
fn reaches_land(grid: &Grid, x: usize, y: usize) -> bool {
    let (xl, xr) = (x.saturating_sub(1), (x + 1).min(grid.w - 1));
    let (yt, yb) = (y.saturating_sub(1), (y + 1).min(grid.rows - 1));
    (yt..=yb).any(|ny| (xl..=xr).any(|nx| !grid.outlet(nx, ny)))
}

/// The bands' tops: `bands − 1` quantiles of the heights' keys, rising, without repeats.
fn band_tops(h: &[f32], bands: usize) -> Vec<u64> {
    let step = (h.len() / (bands * 256)).max(1);
    let mut sample: Vec<u32> = h.par_iter().step_by(step).map(|&v| key(v)).collect();
    sample.par_sort_unstable();
    let mut tops: Vec<u64> = (1..bands).map(|b| u64::from(sample[b * sample.len() / bands]) << 32).collect();
    tops.dedup();
    tops
}

impl Strip {
    /// Lowers this strip's nodes of local row `row` from the settled nodes `(x, z)` of the row
    /// beside it (each reaches `x − 1 … x + 1`).
    fn receive(&mut self, grid: &Grid, z: &mut [f32], from: &[(u32, f32)], row: usize) {
        let y = self.y0 + row;
        for &(x, zc) in from {
            let x = x as usize;
            for nx in x.saturating_sub(1)..=(x + 1).min(grid.w - 1) {
                self.lower(grid, z, nx, y, zc);
            }
        }
    }

    /// Lowers node `(x, y)` (global) to `g(zc)` if that is lower, and queues it. An outlet is
    /// never lowered: it holds `h ≤ g(zc)`.
    #[inline]
    fn lower(&mut self, grid: &Grid, z: &mut [f32], x: usize, y: usize, zc: f32) {
        let j = (y - self.y0) * grid.w + x;
        let zj = z[j];
        if zj <= zc {
            return; // settled before `zc`, or an outlet at or below it: `g(zc) > zc`
        }
        let v = lift(grid.h[y * grid.w + x], zc, grid.epsilon);
        if v < zj {
            z[j] = v;
            self.heap.push(Reverse(packed(v, j)));
        }
    }

    /// Settles this strip's queued nodes below `top` (a key in the high 32 bits; `u64::MAX`: all)
    /// in height order,
    /// lowering their neighbours in the strip; settled nodes of the first and last rows are sent
    /// (`up`, `down`) where there is a strip beside.
    fn settle(&mut self, grid: &Grid, z: &mut [f32], top: u64, above: bool, below: bool) {
        let w = grid.w;
        loop {
            let seed = self.seeds.get(self.next).copied();
            let (c, from_heap) = match (seed, self.heap.peek()) {
                (Some(s), Some(&Reverse(t))) if t < s => (t, true),
                (Some(s), _) => (s, false),
                (None, Some(&Reverse(t))) => (t, true),
                (None, None) => break,
            };
            if c >= top {
                break;
            }
            if from_heap {
                self.heap.pop();
            } else {
                self.next += 1;
            }
            let i = (c & 0xffff_ffff) as usize;
            let zc = z[i];
            if from_heap && u64::from(key(zc)) != c >> 32 {
                continue; // lowered again since it was queued
            }
            let (x, row) = (i % w, i / w);
            for ny in row.saturating_sub(1)..=(row + 1).min(self.rows - 1) {
                for nx in x.saturating_sub(1)..=(x + 1).min(w - 1) {
                    if nx != x || ny != row {
                        self.lower(grid, z, nx, self.y0 + ny, zc);
                    }
                }
            }
            if above && row == 0 {
                self.up.push((x as u32, zc));
            }
            if below && row + 1 == self.rows {
                self.down.push((x as u32, zc));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::{hash2, unit_f32};
    use proptest::prelude::*;

    fn maps() -> Vec<(&'static str, Heightmap, f32)> {
        let fbm = crate::core::generate::fbm::generate(129, 97, 2.0, &Default::default(), 5).unwrap();
        let isle = Heightmap::from_fn(150, 120, 2.0, |x, y| {
            let r = ((x as f32 - 75.0).powi(2) + (y as f32 - 60.0).powi(2)).sqrt();
            40.0 - r * 0.6 + 3.0 * unit_f32(hash2(x as i64, y as i64, 9))
        })
        .unwrap();
        // A big lake across every strip, with an island in it and its outlet at the bottom.
        let lake = Heightmap::from_fn(90, 160, 1.0, |x, y| {
            let r = ((x as f32 - 45.0).powi(2) + ((y as f32 - 80.0) * 0.5).powi(2)).sqrt();
            let rim = if r < 38.0 { 5.0 } else { 20.0 };
            let isle = if r < 6.0 { 30.0 } else { 0.0 };
            let notch = if x == 45 && y > 110 { -14.0 } else { 0.0 };
            rim + isle + notch + 0.5 * unit_f32(hash2(x as i64, y as i64, 3))
        })
        .unwrap();
        let flat = Heightmap::from_fn(40, 70, 1.0, |_, _| 7.0).unwrap();
        // Heights about 0, where f(z) = z + ε is more than one f32 step.
        let tiny = Heightmap::from_fn(60, 80, 1.0, |x, y| {
            let v = unit_f32(hash2(x as i64, y as i64, 4));
            if v < 0.5 { 0.0 } else { f32::MIN_POSITIVE * (v * 8.0 - 3.0) }
        })
        .unwrap();
        let terraces = Heightmap::from_fn(101, 99, 1.0, |x, y| {
            (((x as f32 * 0.13).sin() + (y as f32 * 0.07).cos()) * 3.0).floor() * 2.0
        })
        .unwrap();
        vec![
            ("fbm", fbm.clone(), -1e9),
            ("fbm sea", fbm, 0.0),
            ("island", isle, 0.0),
            ("lake", lake, -1.0),
            ("flat", flat, 0.0),
            ("tiny", tiny, -1.0),
            ("terraces", terraces, -100.0),
        ]
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn strips_fill_the_serial_floods_bits() {
        for (name, hm, sea) in maps() {
            for eps in [f32::MIN_POSITIVE, 0.01] {
                let serial = bits(&crate::core::analysis::priority_flood(&hm, sea, eps).filled);
                for (strips, bands) in [(1, 1), (2, 1), (3, 4), (7, 32), (hm.height, 3), (5, 200)] {
                    let got = bits(&filled_with(&hm, sea, eps, strips, bands));
                    assert!(got == serial, "{name}, ε {eps}, {strips} strips, {bands} bands");
                }
            }
        }
    }

    #[test]
    fn the_fill_is_the_same_on_any_pool() {
        let (_, hm, sea) = maps().swap_remove(0);
        let serial = bits(&crate::core::analysis::priority_flood(&hm, sea, f32::MIN_POSITIVE).filled);
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert!(pool.install(|| bits(&filled(&hm, sea, f32::MIN_POSITIVE))) == serial, "{threads} threads");
        }
    }

    #[test]
    fn maps_that_are_not_finite_or_a_zero_gradient_flood_serially() {
        let mut hm = Heightmap::from_fn(40, 70, 1.0, |x, y| (x * y % 7) as f32).unwrap();
        for eps in [0.0, f32::MIN_POSITIVE] {
            let serial = bits(&crate::core::analysis::priority_flood(&hm, 0.5, eps).filled);
            assert_eq!(bits(&filled_with(&hm, 0.5, eps, 4, 4)), serial);
        }
        hm.set(5, 5, f32::NAN);
        let serial = bits(&crate::core::analysis::priority_flood(&hm, 0.5, 1e-3).filled);
        assert_eq!(bits(&filled_with(&hm, 0.5, 1e-3, 4, 4)), serial);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

        /// Random maps of a few levels (flats and ties everywhere), any sea, strips and bands.
        #[test]
        fn any_strips_and_bands_fill_the_serial_floods_bits(
            w in 1usize..40, h in 1usize..40, levels in 1u32..6, seed in any::<u64>(),
            sea in -1.0f32..3.0, strips in 1usize..40, bands in 1usize..12, eps in prop_oneof![Just(f32::MIN_POSITIVE), Just(0.25f32)],
        ) {
            let hm = Heightmap::from_fn(w, h, 1.0, |x, y| (hash2(x as i64, y as i64, seed) % u64::from(levels)) as f32).unwrap();
            let serial = bits(&crate::core::analysis::priority_flood(&hm, sea, eps).filled);
            prop_assert!(bits(&filled_with(&hm, sea, eps, strips, bands)) == serial);
        }
    }
}
