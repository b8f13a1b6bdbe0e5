//! D8 drainage area on a filled surface, in parallel (issue #36): the same bits as the serial sum
//! in the flood's reverse pop order (the parent module's `drainage_area` before #36, kept in its
//! tests) at any thread count.
//!
//! # What the serial sum computes
//! Every node starts with its own area `Δx²`; in the flood's pop order reversed, each non-outlet
//! node `i` adds its area to its D8 receiver `r(i)` ([`super::d8_receiver`]). So a node's area is
//!
//! ```text
//! A_r = (((Δx² + A_d1) + A_d2) + …)      its donors d1, d2, … in the reverse pop order
//! ```
//!
//! `f64` addition is not associative, so the order of each node's donors is part of the result.
//! The pop order is the nodes sorted by filled height (its `u32` key), then index (every node is
//! queued strictly above the node that reached it: [`super::strip_flood`]), so a node's donors,
//! at most its 8 neighbours, are summed by falling (key, index). The flood's parent of a node,
//! which D8 falls back on when rounding hides every lower neighbour, is its first neighbour in
//! that order. Both follow from the filled heights alone.
//!
//! # How it runs in parallel
//! Receivers are found row by row in parallel (one byte a node: the direction). The areas are
//! summed by dependency counts, as in Barnes (2017, "Parallel non-divergent flow accumulation for
//! trillion cell digital elevation models on desktops or clusters", Environmental Modelling &
//! Software 92, 202–212) within a tile: each node counts its donors; every node without donors
//! starts a walk downstream that finishes a node's area (its donors in the order above) and
//! moves on to its receiver only when it was the receiver's last donor to finish. Each node is
//! finished once, after all its donors, by the same additions in the same order as the serial sum,
//! whichever thread gets there.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::core::Heightmap;

use super::{d8_receiver, is_outlet, key};

/// The direction of no receiver (an outlet).
const NONE: u8 = u8::MAX;

/// A node without donors, in the pending counts (never decremented: nobody drains into it).
const LEAF: u8 = u8::MAX;

/// Peak bytes per node of [`areas`] besides the filled heights: the directions (1), the pending
/// counts (1) and the `f64` areas (8).
pub(crate) const BYTES_PER_NODE: u64 = 10;

/// The direction from a node to its neighbour `(dx, dy)`: `(dy + 1)·3 + dx + 1`, 0 … 8 without 4;
/// the way back is `8 − code`.
#[inline]
fn code(dx: isize, dy: isize) -> u8 {
    ((dy + 1) * 3 + dx + 1) as u8
}

/// The in-map neighbours `(j, code)` of node `(x, y)` of a `w × h` grid, in the D8 order.
#[inline]
fn neighbours(w: usize, h: usize, x: usize, y: usize, mut f: impl FnMut(usize, u8)) {
    for dy in -1isize..=1 {
        for dx in -1isize..=1 {
            let (nx, ny) = (x as isize + dx, y as isize + dy);
            if (dx != 0 || dy != 0) && nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h {
                f(ny as usize * w + nx as usize, code(dx, dy));
            }
        }
    }
}

/// A node's place in the flood's pop order: its height's key, then its index.
#[inline]
fn rank(z: &[f32], i: usize) -> u64 {
    (u64::from(key(z[i])) << 32) | i as u64
}

/// The flood's parent of node `i`: its neighbour first in the pop order (module doc).
fn parent(w: usize, h: usize, z: &[f32], i: usize) -> usize {
    let mut best = u64::MAX;
    neighbours(w, h, i % w, i / w, |j, _| best = best.min(rank(z, j)));
    (best & 0xffff_ffff) as usize
}

/// The D8 direction of every node on the filled surface `z` of `hm` (outlets: [`NONE`]).
fn directions(hm: &Heightmap, sea: f32, z: &[f32]) -> Vec<u8> {
    let (w, h, dx) = (hm.width, hm.height, hm.cell_size);
    let mut dir = vec![NONE; hm.len()];
    dir.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, d) in row.iter_mut().enumerate() {
            let i = y * w + x;
            if is_outlet(w, h, i, hm.data[i], sea) {
                continue;
            }
            let (r, _) = d8_receiver(w, h, dx, z, i, || parent(w, h, z, i));
            *d = code((r % w) as isize - x as isize, (r / w) as isize - y as isize);
        }
    });
    dir
}

/// D8 drainage area (m², each node `Δx²`) of every node of `hm` on its filled surface `z`
/// (the priority-flood's with `ε > 0`), the sea and the edges as outlets, as `f64` bits: the
/// serial sum's bits (module doc) on rayon's pool.
pub(crate) fn areas(hm: &Heightmap, sea: f32, z: &[f32]) -> Vec<AtomicU64> {
    let (w, h) = (hm.width, hm.height);
    assert!(hm.len() <= u32::MAX as usize, "node indices fit 32 bits");
    let dir = directions(hm, sea, z);
    let donates = |j: usize, to: u8| dir[j] == 8 - to;
    let pending: Vec<AtomicU8> = (0..hm.len())
        .into_par_iter()
        .map(|i| {
            let mut n = 0u8;
            neighbours(w, h, i % w, i / w, |j, c| n += u8::from(donates(j, c)));
            AtomicU8::new(if n == 0 { LEAF } else { n })
        })
        .collect();
    let cell = (hm.cell_size as f64) * (hm.cell_size as f64);
    let area: Vec<AtomicU64> = (0..hm.len()).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let walk = |mut c: usize| {
        loop {
            let mut donors = [0u64; 8];
            let mut n = 0;
            neighbours(w, h, c % w, c / w, |j, k| {
                if donates(j, k) {
                    donors[n] = rank(z, j);
                    n += 1;
                }
            });
            donors[..n].sort_unstable_by(|a, b| b.cmp(a));
            let mut a = cell;
            for d in &donors[..n] {
                a += f64::from_bits(area[(d & 0xffff_ffff) as usize].load(Ordering::Relaxed));
            }
            area[c].store(a.to_bits(), Ordering::Relaxed);
            let d = dir[c];
            if d == NONE {
                return;
            }
            let r = ((c / w) as isize + (d / 3) as isize - 1) as usize * w
                + ((c % w) as isize + (d % 3) as isize - 1) as usize;
            // The last donor to finish goes on; the release and acquire of the count make every
            // donor's area visible to it.
            if pending[r].fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            c = r;
        }
    };
    pending.par_chunks(w).enumerate().for_each(|(y, row)| {
        for (x, p) in row.iter().enumerate() {
            if p.load(Ordering::Relaxed) == LEAF {
                walk(y * w + x);
            }
        }
    });
    area
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::{hash2, unit_f32};
    use proptest::prelude::*;

    fn bits(a: &[AtomicU64]) -> Vec<u64> {
        a.iter().map(|v| v.load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn codes_point_to_the_neighbour_and_back() {
        for dy in -1..=1 {
            for dx in -1..=1 {
                if dx != 0 || dy != 0 {
                    let c = code(dx, dy);
                    assert_eq!((c % 3) as isize - 1, dx);
                    assert_eq!((c / 3) as isize - 1, dy);
                    assert_eq!(8 - c, code(-dx, -dy));
                }
            }
        }
    }

    #[test]
    fn the_areas_are_the_serial_sums_bits_on_any_pool() {
        // Cell sizes whose multiples are not all exact in f64 (0.1, 0.37), so the order of each
        // node's additions shows.
        for (seed, sea, cell) in [(3u64, 0.0f32, 2.5f32), (11, 20.0, 0.1), (29, -1e9, 0.37), (5, -1e9, 1.0)] {
            let hm = Heightmap::from_fn(97, 61, cell, |x, y| {
                let (fx, fy) = (x as f32, y as f32);
                40.0 * (fx * 0.11).sin() * (fy * 0.07).cos() + 0.3 * fx - 0.2 * fy
                    + 3.0 * unit_f32(hash2(x as i64, y as i64, seed))
            })
            .unwrap();
            let want: Vec<u64> =
                super::super::tests::drainage_area_serial(&hm, sea).iter().map(|a| a.to_bits()).collect();
            let z = super::super::priority_flood(&hm, sea, f32::MIN_POSITIVE).filled;
            for threads in [1, 2, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                assert!(pool.install(|| bits(&areas(&hm, sea, &z))) == want, "seed {seed}, {threads} threads");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

        /// Random maps of a few levels (flats, where the flood's order decides), any cell size.
        #[test]
        fn any_map_sums_to_the_serial_bits(
            w in 1usize..40, h in 1usize..40, levels in 1u32..6, seed in any::<u64>(),
            sea in -1.0f32..3.0, cell in 0.01f32..10.0,
        ) {
            let hm = Heightmap::from_fn(w, h, cell, |x, y| (hash2(x as i64, y as i64, seed) % u64::from(levels)) as f32).unwrap();
            let want: Vec<u64> = super::super::tests::drainage_area_serial(&hm, sea).iter().map(|a| a.to_bits()).collect();
            let z = super::super::priority_flood(&hm, sea, f32::MIN_POSITIVE).filled;
            prop_assert!(bits(&areas(&hm, sea, &z)) == want);
        }
    }
}
