//! Multiple-flow-direction drainage area ([`Mfd`], Freeman 1991) on top of the D8 router: the
//! flow edges of every node, weighted by slope to a power, and the topological order that sums
//! the area along them.

use rayon::prelude::*;

use super::{NONE, Router};

/// A node of [`Mfd`] with no edge (a root).
pub(super) const EDGES_NONE: u8 = 0;
/// All of its area to the (lake-rerouted) D8 receiver.
pub(super) const EDGES_SINGLE: u8 = 1;
/// Split over its lower neighbours.
pub(super) const EDGES_MULTI: u8 = 2;
/// In-degree marker of a node already taken by the sort.
pub(super) const TAKEN: u8 = u8::MAX;

/// What the serial walk reads and writes of one node, together in half a cache line: a node's
/// donors add to its `area` and count down its `deg` just before it is taken (usually at once:
/// the walk is depth first), so its weights are then in the cache already.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
pub(super) struct Node {
    /// Drainage area gathered so far (nodes); final once the node is taken.
    pub(super) area: f64,
    /// Edge weights in units of 2⁻¹⁶ (D8 order; meaningful where `mask` has the bit).
    pub(super) w: [u16; 8],
    /// Bit `k`: an edge to neighbour `k`.
    pub(super) mask: u8,
    /// Donors not yet taken, or [`TAKEN`].
    pub(super) deg: u8,
    /// Non-zero on the map's border (neighbours by [`super::Grid::neighbour`]).
    pub(super) border: u8,
}

/// One weight unit of [`Node::w`].
const WEIGHT_UNIT: f64 = 1.0 / 65536.0;

/// A weight in `[0, 1]` in units of 2⁻¹⁶ (rounded; 1 is kept as 65535, one unit short: only a
/// node's last edge can have it, and the last edge takes the remainder).
#[inline(always)]
fn weight_units(w: f32) -> u16 {
    (w * 65536.0 + 0.5).min(65535.0) as u16
}

/// Multiple-flow-direction drainage area (Freeman 1991, "Calculating catchment area with
/// divergent flow based on a regular grid", *Computers & Geosciences* 17(3), FD8), on top of a
/// [`Router`]'s D8 receivers and lakes.
///
/// ## Edges
/// Let `z = max(h, L)` be the lake-filled surface (`L` the lake level of lake nodes, `−∞`
/// elsewhere). A node that is neither a root, a lake node nor a lake's overflow (trap) node
/// sends its area to every neighbour `j` strictly lower on `z`, in proportion to
///
/// ```text
/// w_j = S_j^p / Σ_k S_k^p,      S_j = (h_i − z_j) / d_j     (d = Δx or √2·Δx)
/// ```
///
/// (`p` the exponent; Freeman uses 1.1). Lake nodes, trap nodes and nodes with no strictly lower
/// neighbour on `z` keep the router's single receiver (lakes stay rerouted through their pass;
/// the router keeps every receiver a neighbour). The powers are taken of `S_j / max_k S_k ∈ (0, 1]`
/// with [`pow_unit`] (relative error below 3·10⁻⁵, far inside what the weights need; the
/// library `powf` was a quarter of the step). The weights are kept in units of 2⁻¹⁶ (16 bits
/// each, rounded: 8·10⁻⁶ at most, below `pow_unit`'s error), so that a node's area, weights and
/// flags fill half a cache line ([`Node`]). Edges and weights are computed for all nodes in
/// parallel rows (on a CPU with AVX2, the same code compiled for it); each node's depend on its
/// own neighbourhood only.
///
/// ## Order and area, in one pass
/// Every node must come after all its donors. The in-degrees are counted over the edges, then the
/// nodes are taken by a depth-first Kahn sort: the nodes are scanned in index order, and each one
/// with no donor left starts a walk that takes a node, hands its (now final) area `A_i` to its
/// receivers, `A_j += w_j·A_i`, and goes on with the receivers that have no donor left (last
/// released first, so a walk runs down its valley and the reads stay near each other). Serial,
/// so the order and every f64 sum never depend on the thread count. Every node contributes
/// itself (`A_i = 1` node); the last edge of a node takes the remainder `A_i − Σ_{earlier} w·A_i`,
/// so the total area arriving at the roots equals the node count up to f64 rounding.
///
/// The stream-power law then takes `A^m` of every node, computed in one vectorised pass
/// ([`Mfd::power_of_area`], [`pow_area`]) rather than by a library `powf` per node.
///
/// Equal heights can close a cycle through single-receiver edges; the nodes the sort cannot take
/// are then switched to their single D8 receiver and the pass is repeated (each round removes at
/// least one multi-edge node of a cycle, and the D8 receivers alone are acyclic), so every node
/// is ordered.
pub(crate) struct Mfd {
    pub(super) kind: Vec<u8>,
    /// Multi-edge nodes: bit `k` set when the node sends area to its neighbour `k` (D8 order).
    pub(super) mask: Vec<u8>,
    /// Per node, the weights, in-degree and area the walk works on (the weights meaningful where
    /// `mask` has the bit).
    pub(super) nodes: Vec<Node>,
    pub(super) walk: Vec<u32>,
    /// Nodes, every donor before its receivers.
    pub order: Vec<u32>,
    /// Drainage area in nodes.
    pub area: Vec<f64>,
    /// `area^m`, as of the last [`Self::power_of_area`] (empty before).
    pub area_m: Vec<f64>,
    /// What each node adds to the area (a steering mask's weights); `None` = 1 each.
    pub runoff: Option<Vec<f64>>,
    /// Multi-edge nodes switched to their D8 receiver by the last call (cycles).
    pub fallback: usize,
}

impl Mfd {
    pub fn new(n: usize) -> Self {
        Self {
            kind: vec![EDGES_NONE; n],
            mask: vec![0; n],
            nodes: vec![Node::default(); n],
            walk: Vec::new(),
            order: Vec::with_capacity(n),
            area: vec![1.0; n],
            area_m: Vec::new(),
            runoff: None,
            fallback: 0,
        }
    }

    /// Edges, order and drainage area of the heights `h` already routed by `r` (which must have
    /// routed exactly these heights), with the slope exponent `p`.
    pub fn compute(&mut self, r: &Router, h: &[f32], p: f64) {
        self.compute_edges(r, h, p);
        self.fallback = 0;
        let mut rounds = 0;
        while !self.sort_and_accumulate(r) {
            rounds += 1;
            // Every node the sort could not take has a donor left (it lies on a cycle or below
            // one): send those back to their single D8 receiver. After too many rounds, all.
            for i in 0..h.len() {
                let d = self.nodes[i].deg;
                if ((d != TAKEN && d > 0) || rounds > 16) && self.kind[i] == EDGES_MULTI {
                    self.kind[i] = EDGES_SINGLE;
                    set_single(r, i, &mut self.mask[i], &mut self.nodes[i].w);
                    self.fallback += 1;
                }
            }
        }
    }

    /// `area_m = area^m` with [`pow_area`], in parallel chunks of a fixed size (each value
    /// depends on its own area only, so the bits never depend on the threads).
    pub fn power_of_area(&mut self, m: f64) {
        self.area_m.resize(self.area.len(), 0.0);
        self.area_m.par_chunks_mut(4096).zip(self.area.par_chunks(4096)).for_each(|(out, a)| {
            pow_areas(out, a, m);
        });
    }

    /// Every node's kind, edges and weights (type doc), rows in parallel. A single edge is
    /// stored like a multi edge of weight 1 (the router's receivers are neighbours), so the sort
    /// reads one form.
    pub(super) fn compute_edges(&mut self, r: &Router, h: &[f32], p: f64) {
        let g = r.grid;
        let (w, hh) = (g.w, g.h);
        debug_assert_eq!(h.len(), r.rcv.len());
        let p = p as f32;
        let interior_ok = w >= 3 && hh >= 3;
        self.kind
            .par_chunks_mut(w)
            .zip(self.mask.par_chunks_mut(w))
            .zip(self.nodes.par_chunks_mut(w))
            .enumerate()
            .for_each_init(
                || vec![0.0f32; 10 * w],
                |scratch, (y, ((kr, mr), wr))| {
                    if interior_ok && y > 0 && y + 1 < hh {
                        edges_interior_row(
                            r,
                            h,
                            p,
                            y,
                            scratch,
                            &mut kr[1..w - 1],
                            &mut mr[1..w - 1],
                            &mut wr[1..w - 1],
                        );
                        for x in [0, w - 1] {
                            edges_generic(r, h, p, x, y, &mut kr[x], &mut mr[x], &mut wr[x].w);
                        }
                    } else {
                        for x in 0..w {
                            edges_generic(r, h, p, x, y, &mut kr[x], &mut mr[x], &mut wr[x].w);
                        }
                    }
                },
            );
    }

    /// In-degrees, then the depth-first Kahn walk that writes `order` and `area` (type doc).
    /// False when some node could not be taken (those keep an in-degree `> 0`, not [`TAKEN`]).
    pub(super) fn sort_and_accumulate(&mut self, r: &Router) -> bool {
        let n = self.kind.len();
        let g = r.grid;
        let w = g.w;
        let off = offsets(w);
        // In-degrees gathered from the neighbours, rows in parallel: an interior node's donors
        // are plain neighbours (wrapped neighbours are always border nodes), so bit `7 − q` of
        // the neighbour in direction `q` says whether it sends to the node. Each node's mask,
        // border flag and own area go beside its in-degree in `nodes`.
        {
            let mask = &self.mask;
            let hh = g.h;
            let count_border = |j: usize, x: usize, y: usize| -> u8 {
                // Each distinct neighbour once, each of its edges that lands on `j`.
                let mut near = [usize::MAX; 8];
                let mut m = 0;
                let mut c = 0u8;
                g.for_neighbours(x, y, |i, _| {
                    if i != j && !near[..m].contains(&i) {
                        near[m] = i;
                        m += 1;
                        let (xi, yi) = (i % w, i / w);
                        for k in 0..8 {
                            if mask[i] >> k & 1 != 0 && g.neighbour(xi, yi, k) == Some(j) {
                                c = c.saturating_add(1);
                            }
                        }
                    }
                });
                c
            };
            let (runoff, border) = (self.runoff.as_deref(), &r.border);
            self.nodes.par_chunks_mut(w).enumerate().for_each_init(
                || vec![0u8; w],
                |dr, (y, nr)| {
                    if w >= 3 && y > 0 && y + 1 < hh {
                        // Interior run x = 1 … w−2, as byte loops over the row (they vectorise).
                        let (c, m) = (y * w + 1, w - 2);
                        let run = &mut dr[1..w - 1];
                        run.fill(0);
                        for (q, &dq) in off.iter().enumerate() {
                            let o = (c as isize + dq) as usize;
                            let bit = 1u8 << (7 - q);
                            for (d, &mk) in run.iter_mut().zip(&mask[o..o + m]) {
                                *d += (mk & bit).min(1);
                            }
                        }
                        for x in [0, w - 1] {
                            dr[x] = count_border(y * w + x, x, y);
                        }
                    } else {
                        for (x, d) in dr.iter_mut().enumerate() {
                            *d = count_border(y * w + x, x, y);
                        }
                    }
                    let base = y * w;
                    for (x, node) in nr.iter_mut().enumerate() {
                        node.deg = dr[x];
                        node.mask = mask[base + x];
                        node.border = border[base + x];
                        node.area = runoff.map_or(1.0, |ro| ro[base + x]);
                    }
                },
            );
        }
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        let mut walk = std::mem::take(&mut self.walk);
        // A stack slot per node at most (plus the branch-free push's spare slot); its contents
        // are always written before they are read, so it is only grown, never cleared.
        if walk.len() < n + 16 {
            walk.resize(n + 16, 0);
        }
        let nodes = &mut self.nodes;
        for s in 0..n {
            if nodes[s].deg != 0 {
                continue;
            }
            nodes[s].deg = TAKEN;
            walk[0] = s as u32;
            let mut top = 1usize;
            while top > 0 {
                top -= 1;
                let i = walk[top] as usize;
                order.push(i as u32);
                // Only the fields used, and the weights only for the edges there are (loading
                // the whole record measured no faster).
                let mut m = nodes[i].mask;
                if m == 0 {
                    continue;
                }
                let (a, border) = (nodes[i].area, nodes[i].border);
                // Every edge but the last gets `w·A`, the last the remainder (exact conservation).
                let mut left = a;
                if border == 0 {
                    loop {
                        let k = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let j = (i as isize + off[k]) as usize;
                        let give = if m == 0 { left.max(0.0) } else { a * (nodes[i].w[k] as f64 * WEIGHT_UNIT) };
                        let to = &mut nodes[j];
                        to.area += give;
                        left -= give;
                        let d = to.deg - 1;
                        // Released: pushed (the slot is overwritten when it is not) and taken.
                        walk[top] = j as u32;
                        top += (d == 0) as usize;
                        to.deg = if d == 0 { TAKEN } else { d };
                        if m == 0 {
                            break;
                        }
                    }
                } else {
                    let (x, y) = (i % w, i / w);
                    while m != 0 {
                        let k = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let Some(j) = g.neighbour(x, y, k) else { continue };
                        let give = if m == 0 { left.max(0.0) } else { a * (nodes[i].w[k] as f64 * WEIGHT_UNIT) };
                        let to = &mut nodes[j];
                        to.area += give;
                        left -= give;
                        to.deg -= 1;
                        if to.deg == 0 {
                            to.deg = TAKEN;
                            walk[top] = j as u32;
                            top += 1;
                        }
                    }
                }
            }
        }
        let done = order.len() == n;
        self.area.par_chunks_mut(4096).zip(self.nodes.par_chunks(4096)).for_each(|(a, nr)| {
            for (a, node) in a.iter_mut().zip(nr) {
                *a = node.area;
            }
        });
        self.order = order;
        self.walk = walk;
        done
    }

    /// Calls `f(j, weight)` for each edge of node `i`, in the D8 order, with the weight the walk
    /// gives it (the last edge: what the others leave).
    #[cfg(test)]
    pub(super) fn for_edges(&self, r: &Router, i: usize, mut f: impl FnMut(usize, f32)) {
        let g = r.grid;
        let m = self.mask[i];
        let mut left = 1.0f64;
        for k in 0..8 {
            if m >> k & 1 != 0
                && let Some(j) = g.neighbour(i % g.w, i / g.w, k)
            {
                let w = if m >> k == 1 { left } else { self.nodes[i].w[k] as f64 * WEIGHT_UNIT };
                left -= w;
                f(j, w as f32);
            }
        }
    }
}

/// Is neighbour `k` (D8 order) a diagonal one?
#[inline(always)]
pub(super) fn is_diag_k(k: usize) -> bool {
    matches!(k, 0 | 2 | 5 | 7)
}

/// Edges of the interior nodes `x = 1 … w−2` of row `y` (`kr`, `mr`, `wr` hold exactly those),
/// written as loops over the row so that they vectorise; `scratch` holds `10·w` floats. On a CPU
/// with AVX2 the same code is compiled for it (eight lanes instead of SSE2's four). It has no
/// fused multiply-add and the same operations in the same order, so the bits are the same.
#[allow(clippy::too_many_arguments)]
pub(super) fn edges_interior_row(
    r: &Router,
    h: &[f32],
    p: f32,
    y: usize,
    scratch: &mut [f32],
    kr: &mut [u8],
    mr: &mut [u8],
    wr: &mut [Node],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { edges_interior_row_avx2(r, h, p, y, scratch, kr, mr, wr) };
        return;
    }
    edges_interior_row_any(r, h, p, y, scratch, kr, mr, wr);
}

/// [`edges_interior_row`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
pub(super) fn edges_interior_row_avx2(
    r: &Router,
    h: &[f32],
    p: f32,
    y: usize,
    scratch: &mut [f32],
    kr: &mut [u8],
    mr: &mut [u8],
    wr: &mut [Node],
) {
    edges_interior_row_any(r, h, p, y, scratch, kr, mr, wr);
}

/// [`edges_interior_row`] for whatever the build targets.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn edges_interior_row_any(
    r: &Router,
    h: &[f32],
    p: f32,
    y: usize,
    scratch: &mut [f32],
    kr: &mut [u8],
    mr: &mut [u8],
    wr: &mut [Node],
) {
    let w = r.grid.w;
    let m = w - 2;
    let c = y * w + 1;
    let off = offsets(w);
    let (s, rest) = scratch.split_at_mut(8 * w);
    let (smax, rest) = rest.split_at_mut(w);
    let tot = &mut rest[..m];
    let smax = &mut smax[..m];
    let hi = &h[c..c + m];
    let ll = &r.lake_level;
    smax.fill(0.0);
    // Slopes to the neighbours strictly lower on the lake-filled surface (0 for the others).
    for k in 0..8 {
        let o = (c as isize + off[k]) as usize;
        let dk = if is_diag_k(k) { std::f32::consts::FRAC_1_SQRT_2 } else { 1.0 };
        let sk = &mut s[k * w..k * w + m];
        for (((sv, &a), &hj), &lj) in sk.iter_mut().zip(hi).zip(&h[o..o + m]).zip(&ll[o..o + m]) {
            let d = a - hj.max(lj);
            *sv = if d > 0.0 && d < f32::INFINITY { d * dk } else { 0.0 };
        }
        for (mx, &sv) in smax.iter_mut().zip(sk.iter()) {
            *mx = mx.max(sv);
        }
    }
    tot.fill(0.0);
    mr.fill(0);
    // One division per node: the reciprocal of the steepest slope (∞ where there is none; its
    // products are masked out below).
    for mx in smax.iter_mut() {
        *mx = 1.0 / *mx;
    }
    for k in 0..8 {
        let sk = &mut s[k * w..k * w + m];
        for (((sv, &inv), t), mk) in sk.iter_mut().zip(smax.iter()).zip(tot.iter_mut()).zip(mr.iter_mut()) {
            let on = *sv > 0.0;
            let v = pow_unit((*sv * inv).min(1.0), p);
            let v = if on { v } else { 0.0 };
            *sv = v;
            *t += v;
            *mk |= (on as u8) << k;
        }
    }
    for t in tot.iter_mut() {
        *t = if *t > 0.0 { 1.0 / *t } else { 0.0 };
    }
    for k in 0..8 {
        let sk = &s[k * w..k * w + m];
        for ((wx, &v), &it) in wr.iter_mut().zip(sk).zip(tot.iter()) {
            wx.w[k] = weight_units(v * it);
        }
    }
    // Roots, lake and trap nodes, and nodes with no lower neighbour: the router's receiver.
    for x in 0..m {
        let i = c + x;
        let rc = r.rcv[i] as usize;
        if rc == i {
            kr[x] = EDGES_NONE;
            mr[x] = 0;
        } else if mr[x] == 0 || (r.is_special(i) && (r.lake_level[i] > f32::NEG_INFINITY || r.trap_of[i] != NONE)) {
            kr[x] = EDGES_SINGLE;
            set_single(r, i, &mut mr[x], &mut wr[x].w);
        } else {
            kr[x] = EDGES_MULTI;
        }
    }
}

/// Edges of any node (border nodes, and every node of a map narrower than 3).
#[allow(clippy::needless_range_loop)] // `k` is the D8 direction: it also picks the neighbour and the bit of `m`
pub(super) fn edges_generic(
    r: &Router,
    h: &[f32],
    p: f32,
    x: usize,
    y: usize,
    kr: &mut u8,
    mr: &mut u8,
    wr: &mut [u16; 8],
) {
    let g = r.grid;
    let i = y * g.w + x;
    *mr = 0;
    if r.rcv[i] as usize == i {
        *kr = EDGES_NONE;
        return;
    }
    *kr = EDGES_SINGLE;
    if !(r.is_special(i) && (r.lake_level[i] > f32::NEG_INFINITY || r.trap_of[i] != NONE)) {
        let hi = h[i];
        let mut s = [0.0f32; 8];
        let (mut m, mut smax) = (0u8, 0.0f32);
        for k in 0..8 {
            let Some(j) = g.neighbour(x, y, k) else { continue };
            let d = hi - h[j].max(r.lake_level[j]);
            if d > 0.0 && d < f32::INFINITY {
                s[k] = d * if is_diag_k(k) { std::f32::consts::FRAC_1_SQRT_2 } else { 1.0 };
                m |= 1 << k;
                smax = smax.max(s[k]);
            }
        }
        if m != 0 {
            let mut tot = 0.0f32;
            for k in 0..8 {
                if m >> k & 1 != 0 {
                    s[k] = pow_unit(s[k] / smax, p);
                    tot += s[k];
                }
            }
            *kr = EDGES_MULTI;
            *mr = m;
            for k in 0..8 {
                wr[k] = if m >> k & 1 != 0 { weight_units(s[k] / tot) } else { 0 };
            }
            return;
        }
    }
    set_single(r, i, mr, wr);
}

/// Writes node `i`'s single edge to its receiver (a neighbour, the first direction that reaches
/// it) as a weight-1 edge.
pub(super) fn set_single(r: &Router, i: usize, mr: &mut u8, wr: &mut [u16; 8]) {
    let g = r.grid;
    let rc = r.rcv[i] as usize;
    let k = if r.border[i] == 0 {
        let (off, dlt) = (offsets(g.w), rc as isize - i as isize);
        (0..8).find(|&k| off[k] == dlt)
    } else {
        (0..8).find(|&k| g.neighbour(i % g.w, i / g.w, k) == Some(rc))
    };
    debug_assert!(k.is_some(), "receiver {rc} of {i} is not a neighbour");
    *wr = [0; 8];
    *mr = 0;
    if let Some(k) = k {
        *mr = 1 << k;
        wr[k] = u16::MAX;
    }
}

/// The index offsets of the eight neighbours of an interior node, in the D8 order.
#[inline]
pub(super) fn offsets(w: usize) -> [isize; 8] {
    let w = w as isize;
    [-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1]
}

/// `x^p` for `x ∈ (0, 1]` and `p ≥ 0`, as `2^(p·log₂ x)` with polynomial `log₂` and `2^f` on the
/// mantissa and the fraction (least-squares fits on Chebyshev nodes: `log₂(1+t)` to 1.7·10⁻⁵,
/// `2^f` to 2·10⁻⁷ relative), so about 3·10⁻⁵·p relative in all. Plain f32 arithmetic, no fused
/// operations: the same bits on every machine. Exact at `x = 1`; 0 when the result is below
/// f32's normal range; subnormal `x` are taken as the smallest normal.
#[inline(always)]
pub(crate) fn pow_unit(x: f32, p: f32) -> f32 {
    // Branch-free, so that row loops calling it vectorise.
    let x = x.max(f32::MIN_POSITIVE);
    let b = x.to_bits();
    let e = ((b >> 23) & 0xff) as i32 - 127;
    let t = f32::from_bits((b & 0x007f_ffff) | 0x3f80_0000) - 1.0;
    let l = t * (1.441_879_8 + t * (-0.708_863_9 + t * (0.415_241 + t * (-0.193_510_4 + t * 0.045_265_505))));
    let y = (p * (e as f32 + l)).max(-127.0);
    // floor(y) (truncation rounds toward zero; `floor` is a libm call without SSE4.1).
    let fi = (y as i32) - (((y as i32) as f32 > y) as i32);
    let f = y - fi as f32;
    let q =
        1.0 + f * (0.693_154_6 + f * (0.240_140_8 + f * (0.055_863_26 + f * (0.008_946_225 + f * 0.001_895_108_6))));
    // fi = −127 (below the normal range) gives the exponent field 0: a zero.
    q * f32::from_bits(((fi + 127) as u32) << 23)
}

/// `a^m` for a drainage area `a ≥ 0` and an exponent `m ≥ 0`, in f64, as `e^(m·ln a)`:
/// `ln a = e·ln 2 + ln t` with `a = t·2^e`, `t ∈ [√½, √2)`, and `ln t = 2·atanh(u)`,
/// `u = (t − 1)/(t + 1)` (`|u| < 0.172`, its odd series to `u¹⁹`); then `e^y = 2^k·e^r` with `k`
/// the nearest integer to `y/ln 2`, `r = y − k·ln 2` (`ln 2` in two parts, `|r| ≤ 0.35`) and
/// `e^r` by its Taylor series to `r¹³`. Both series stop below 10⁻¹⁷ of their sum, so the result
/// is within a few units in the last place of `powf` (about 10⁻¹⁵ relative at the areas a map
/// holds). The series are summed by Estrin's scheme (pairs, then pairs of pairs: short
/// dependency chains) and the integer parts are moved in and out of the exponent bits with the
/// `1.5·2⁵²` trick, so a loop over many areas vectorises without integer conversions. Plain f64
/// arithmetic without fused operations: the same bits on every machine. `0^m = 0` (`m > 0`) and
/// `a^0 = 1`, as `powf` gives them; subnormal areas are taken as the smallest normal one, and
/// `m·ln a` is kept within ±700.
#[inline(always)]
pub(crate) fn pow_area(a: f64, m: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const TWO52: f64 = 4_503_599_627_370_496.0;
    // 1.5·2⁵²: added to a number of magnitude below 2⁵¹, it rounds it to an integer held in
    // the low bits.
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    let x = a.clamp(f64::MIN_POSITIVE, f64::MAX);
    let b = x.to_bits();
    // The biased exponent field as an f64, read through the same trick.
    let ef = f64::from_bits((b >> 52) | 0x4330_0000_0000_0000) - TWO52 - 1023.0;
    let t = f64::from_bits((b & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let big = t > std::f64::consts::SQRT_2;
    let t = if big { 0.5 * t } else { t };
    let ef = if big { ef + 1.0 } else { ef };
    let u = (t - 1.0) / (t + 1.0);
    let v = u * u;
    let (v2, v4) = (v * v, v * v * (v * v));
    let series = ((1.0 + v * (1.0 / 3.0)) + v2 * (1.0 / 5.0 + v * (1.0 / 7.0)))
        + v4 * ((1.0 / 9.0 + v * (1.0 / 11.0)) + v2 * (1.0 / 13.0 + v * (1.0 / 15.0)))
        + v4 * v4 * (1.0 / 17.0 + v * (1.0 / 19.0));
    let ln_t = 2.0 * u * series;
    // m·ln a, with e·ln 2 in two parts so that it keeps its precision at large e.
    let y = (m * (ef * LN2_HI + ln_t) + m * ef * LN2_LO).clamp(-700.0, 700.0);
    let kt = y * std::f64::consts::LOG2_E + MAGIC;
    let kf = kt - MAGIC;
    let k = kt.to_bits().wrapping_sub(MAGIC.to_bits()) as i64;
    let r = (y - kf * LN2_HI) - kf * LN2_LO;
    let (r2, r4) = (r * r, r * r * (r * r));
    let er = ((1.0 + r) + r2 * (1.0 / 2.0 + r * (1.0 / 6.0)))
        + r4 * ((1.0 / 24.0 + r * (1.0 / 120.0)) + r2 * (1.0 / 720.0 + r * (1.0 / 5040.0)))
        + r4 * r4
            * (((1.0 / 40_320.0 + r * (1.0 / 362_880.0)) + r2 * (1.0 / 3_628_800.0 + r * (1.0 / 39_916_800.0)))
                + r4 * (1.0 / 479_001_600.0 + r * (1.0 / 6_227_020_800.0)));
    // 2^k in two halves: k reaches ±1010, beyond one exponent field's normal range.
    let h1 = k >> 1;
    let p1 = f64::from_bits(((h1 + 1023) as u64) << 52);
    let p2 = f64::from_bits(((k - h1 + 1023) as u64) << 52);
    let v = er * p1 * p2;
    if m == 0.0 {
        1.0
    } else if a > 0.0 {
        v
    } else {
        0.0
    }
}

/// `out[i] = pow_area(a[i], m)`; on a CPU with AVX2 compiled for it (four lanes instead of two),
/// with the same bits.
pub(crate) fn pow_areas(out: &mut [f64], a: &[f64], m: f64) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { pow_areas_avx2(out, a, m) };
        return;
    }
    pow_areas_any(out, a, m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) fn pow_areas_avx2(out: &mut [f64], a: &[f64], m: f64) {
    pow_areas_any(out, a, m);
}

#[inline(always)]
pub(super) fn pow_areas_any(out: &mut [f64], a: &[f64], m: f64) {
    for (o, &v) in out.iter_mut().zip(a) {
        *o = pow_area(v, m);
    }
}
