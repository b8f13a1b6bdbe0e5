//! Erosion brushes and the raw map writes of a droplet step: the precomputed brushes of the
//! 4×4 sub-cell positions (zero-padded runs of [`CHUNK`] nodes, one SIMD vector), the fast and
//! the edge-clipped brush application, and the bilinear/weighted deposits.

use super::super::particles::{Geom, Raw};
use super::SUB;

/// Nodes per brush chunk: a brush row is applied in runs of this many adjacent nodes (one SIMD
/// vector), the nodes of the run outside the disc carrying weight 0.
pub(super) const CHUNK: usize = 4;

/// A run of [`CHUNK`] adjacent nodes of a brush: flat offset of the first from the base node.
#[derive(Clone, Copy, Debug)]
pub(super) struct BrushChunk {
    pub(super) offset: isize,
    /// Column and row of the first node relative to the base node.
    pub(super) dx: i32,
    pub(super) dy: i32,
    pub(super) weights: [f32; CHUNK],
}

/// The brush of one sub-cell position.
#[derive(Clone, Debug)]
pub(super) struct BrushVariant {
    /// `(dx, dy, weight)` relative to the base node, for clipped/wrapped brushes.
    pub(super) taps: Vec<(i32, i32, f32)>,
    /// The same taps as zero-padded runs, for brushes that lie wholly inside the map.
    pub(super) chunks: Vec<BrushChunk>,
}

/// Precomputed erosion brushes: weights `max(0, r − |c − n|)` normalised to 1, for the sub-cell
/// centres `c = ((qx + ½)/4, (qy + ½)/4)` relative to the base node `⌊p⌋`.
#[derive(Clone, Debug)]
pub(super) struct Brush {
    /// `⌈r⌉`: taps lie in `−reach ..= reach + 1` on both axes.
    pub(super) reach: usize,
    /// Column range `lo ..= hi` (relative to the base node) the padded chunks touch; within
    /// `−(reach + 1) ..= reach + 3`, so inside a particle task's margin.
    pub(super) lo: isize,
    pub(super) hi: isize,
    pub(super) variants: Vec<BrushVariant>,
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
    pub(super) fn new(radius: f32, width: usize) -> Self {
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

/// The brush of variant `var` at cell `(bx, by)` on a map of geometry `g` without wrapped edges,
/// clipped to the map: node `j` loses `min(a·w_j·k_j, max(0, h_j − floor))` with `a = amount / Σ w`
/// over the in-map nodes. Returns what was removed.
///
/// # Safety
/// `raw` points at live maps of `g.w × g.h` nodes the caller may write; `(bx, by)` is a node of
/// the map.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn brush_clipped<const HARD: bool, const GUARD: bool>(
    g: &Geom,
    raw: &Raw,
    floor: f32,
    var: &BrushVariant,
    bx: usize,
    by: usize,
    amount: f32,
) -> f64 {
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
    let mut got = 0.0f32;
    for c in var.chunks.iter().filter(|c| row_in(c)) {
        let (x0, row) = (bx + c.dx as isize, (by + c.dy as isize) * g.pitch as isize);
        if x0 >= 0 && x0 + CHUNK as isize <= w {
            // SAFETY: the whole chunk is in the map.
            got += unsafe { erode_chunk::<HARD, GUARD>(raw, (row + x0) as usize, &c.weights, a, floor) };
        } else {
            for (j, &wt) in c.weights.iter().enumerate() {
                let x = x0 + j as isize;
                if (0..w).contains(&x) {
                    // SAFETY: an in-map node of the brush.
                    got += unsafe { erode_node::<HARD, GUARD>(raw, (row + x) as usize, wt, a, floor) };
                }
            }
        }
    }
    got as f64
}

/// [`brush_fast`] for the one chunk of nodes `start .. start + CHUNK`; returns the sum of what
/// they lost.
///
/// # Safety
/// The nodes are in the map and the caller may write them.
#[inline(always)]
pub(super) unsafe fn erode_chunk<const HARD: bool, const GUARD: bool>(
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
pub(super) unsafe fn erode_node<const HARD: bool, const GUARD: bool>(
    raw: &Raw,
    i: usize,
    w: f32,
    a: f32,
    floor: f32,
) -> f32 {
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
pub(super) fn take(h: &mut f32, e: &mut f32, want: f32, floor: f32) -> f64 {
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
pub(super) unsafe fn brush_fast<const HARD: bool, const GUARD: bool>(
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
pub(super) unsafe fn deposit_cell(raw: &Raw, i: usize, w: usize, ws: [f32; 4], amount: f32) -> f64 {
    // SAFETY: the cell's four nodes `i, i + 1, i + w, i + w + 1` are in the map and the caller
    // may write them (this function's contract).
    unsafe { deposit_weighted(raw, [i, i + 1, i + w, i + w + 1], ws, amount) }
}

/// Adds `amount` bilinearly over the four nodes `idx` (weights from `u, v`); returns what was added.
///
/// # Safety
/// The indices are in the map and the caller may write them.
#[inline(always)]
pub(super) unsafe fn deposit4(raw: &Raw, idx: [usize; 4], u: f32, v: f32, amount: f32) -> f64 {
    let ws = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
    // SAFETY: the indices are in the map and writable by the caller (this function's contract).
    unsafe { deposit_weighted(raw, idx, ws, amount) }
}

/// Adds `amount · ws[k]` at node `idx[k]` and to the deposition map; returns what the f32 heights
/// actually received.
///
/// # Safety
/// The indices are in the map and the caller may write them.
#[inline(always)]
pub(super) unsafe fn deposit_weighted(raw: &Raw, idx: [usize; 4], ws: [f32; 4], amount: f32) -> f64 {
    let mut put = 0.0f64;
    for (i, w) in idx.into_iter().zip(ws) {
        // SAFETY: `i` is in the map, so inside the height and deposition maps `raw` points at,
        // and only this caller writes it meanwhile (this function's contract).
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
