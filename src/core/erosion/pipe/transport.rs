//! Step 5 of a time step (see the module doc): sediment transport by semi-Lagrangian
//! advection, MacCormack, or the conservative forward remap, per row (fast interior loops
//! compiled for each SIMD tier, and the boundary-aware path).

use super::super::simd::{fmax, fmin, pos, simd_dispatch};
use super::super::stencil::Nb;
use super::consts::Consts;
use super::water::{mid, tri};

simd_dispatch! {
    pub(super) fn advect_row_fast(c: &Consts, y: usize, src: &[f32], u: &[f32], v: &[f32], out: &mut [f32]) -> f64 {
        advect_row::<false>(c, y, src, u, v, 1.0, out)
    }
}

simd_dispatch! {
    #[allow(clippy::unused_unit)]
    pub(super) fn maccormack_row_fast(c: &Consts, y: usize, s1: &[f32], s2: &[f32], u: &[f32], v: &[f32], out: &mut [f32]) -> () {
        maccormack_row::<false>(c, y, s1, s2, u, v, out)
    }
}

simd_dispatch! {
    pub(super) fn remap_row_fast(c: &Consts, y: usize, src: &[f32], u: &[f32], v: &[f32], out: &mut [f32]) -> f64 {
        remap_row::<false>(c, y, src, u, v, out)
    }
}

// ---------------------------------------------------------------------------------------------
// Sweep C rows: transport.
//
// The back-traced point lies within one cell (|u|·Δt ≤ lx), so bilinear sampling reduces to a
// separable 3-tap filter over the 3×3 neighbourhood with weights
// `w₋ = max(a, 0)`, `w₀ = 1 − |a|`, `w₊ = max(−a, 0)` for a displacement `−a` cells.

#[inline(always)]
pub(super) fn taps(a: f32) -> [f32; 3] {
    // |a| ≤ 1 by the velocity clamp, up to one rounding of (lx/Δt)·(Δt/lx): clamp so no weight
    // can turn negative.
    let a = fmin(fmax(a, -1.0), 1.0);
    [pos(a), 1.0 - a.abs(), pos(-a)]
}

#[inline(always)]
pub(super) fn filter3(r: [[f32; 3]; 3], wx: [f32; 3], wy: [f32; 3]) -> f32 {
    let row = |k: usize| wx[0] * r[k][0] + wx[1] * r[k][1] + wx[2] * r[k][2];
    wy[0] * row(0) + wy[1] * row(1) + wy[2] * row(2)
}

/// Min and max of the 2×2 nodes a back-trace by `(ax, ay)` cells interpolates between.
#[inline(always)]
pub(super) fn cell_range(r: [[f32; 3]; 3], ax: f32, ay: f32) -> (f32, f32) {
    // Selects rather than indexing, so the loop stays vectorised.
    let pick = |row: [f32; 3]| if ax >= 0.0 { row[0] } else { row[2] };
    let ry = if ay >= 0.0 { r[0] } else { r[2] };
    let (a, b, cc, d) = (r[1][1], pick(r[1]), ry[1], pick(ry));
    (fmin(fmin(a, b), fmin(cc, d)), fmax(fmax(a, b), fmax(cc, d)))
}

/// Resolves the 3×3 neighbourhood of `(x, y)`: rows and columns of the neighbours, with walls
/// and drains clamped to the node itself (zero-gradient sampling) and wraps wrapped.
#[inline]
pub(super) fn stencil(c: &Consts, x: usize, y: usize) -> ([usize; 3], [usize; 3]) {
    let ax = |d: isize| match c.edges.col(x, d, c.w) {
        Nb::In(v) => v,
        _ => x,
    };
    let ay = |d: isize| match c.edges.row(y, d, c.h) {
        Nb::In(v) => v,
        _ => y,
    };
    ([ax(-1), x, ax(1)], [ay(-1), y, ay(1)])
}

#[inline]
pub(super) fn gather(src: &[f32], w: usize, cols: [usize; 3], rows: [usize; 3]) -> [[f32; 3]; 3] {
    let mut r = [[0.0f32; 3]; 3];
    for (j, &ry) in rows.iter().enumerate() {
        for (i, &cx) in cols.iter().enumerate() {
            r[j][i] = src[ry * w + cx];
        }
    }
    r
}

/// Sediment an edge node loses across drain edges: `s·(1 − (1 − c_x)(1 − c_y))` with the
/// outward Courant numbers `c`.
#[inline]
pub(super) fn drain_loss(c: &Consts, x: usize, y: usize, s: f32, ax: f32, ay: f32) -> f64 {
    use super::super::EdgeMode::Drain;
    let e = &c.edges;
    let mut cx = 0.0f32;
    let mut cy = 0.0f32;
    if x == 0 && e.left == Drain {
        cx += pos(-ax);
    }
    if x + 1 == c.w && e.right == Drain {
        cx += pos(ax);
    }
    if y == 0 && e.top == Drain {
        cy += pos(-ay);
    }
    if y + 1 == c.h && e.bottom == Drain {
        cy += pos(ay);
    }
    let (cx, cy) = (cx.min(1.0), cy.min(1.0));
    (s as f64) * (1.0 - (1.0 - cx as f64) * (1.0 - cy as f64))
}

/// Semi-Lagrangian transport of row `y` from `src` into `out`, tracing by `sign·(u, v)·Δt`
/// (`sign = 1`: backward, the usual pass; `−1`: MacCormack's forward pass). Returns the
/// sediment lost across drain edges (only booked for `sign = 1`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn advect_row<const GENERIC: bool>(
    c: &Consts,
    y: usize,
    src: &[f32],
    u: &[f32],
    v: &[f32],
    sign: f32,
    out: &mut [f32],
) -> f64 {
    let w = c.w;
    let (up, dn) = (c.edges.row(y, -1, c.h), c.edges.row(y, 1, c.h));
    let k = c.courant * sign;
    let mut lost = 0.0f64;
    let fast = matches!((up, dn), (Nb::In(_), Nb::In(_))) && w >= 3 && !GENERIC;
    if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, fast) {
        let m = w - 2;
        let (u0, u1, u2) = tri(src, yu, w);
        let (c0, c1, c2) = tri(src, y, w);
        let (d0, d1, d2) = tri(src, yd, w);
        let (uu, vv) = (mid(u, y, w), mid(v, y, w));
        let o = &mut out[1..m + 1];
        for i in 0..m {
            let (ax, ay) = (uu[i] * k, vv[i] * k);
            let r = [[u0[i], u1[i], u2[i]], [c0[i], c1[i], c2[i]], [d0[i], d1[i], d2[i]]];
            o[i] = filter3(r, taps(ax), taps(ay));
        }
        for x in [0, w - 1] {
            lost += advect_generic(c, x, y, src, u, v, k, sign, out);
        }
    } else {
        for x in 0..w {
            lost += advect_generic(c, x, y, src, u, v, k, sign, out);
        }
    }
    lost
}

#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn advect_generic(
    c: &Consts,
    x: usize,
    y: usize,
    src: &[f32],
    u: &[f32],
    v: &[f32],
    k: f32,
    sign: f32,
    out: &mut [f32],
) -> f64 {
    let i = y * c.w + x;
    let (ax, ay) = (u[i] * k, v[i] * k);
    let (cols, rows) = stencil(c, x, y);
    let r = gather(src, c.w, cols, rows);
    out[x] = filter3(r, taps(ax), taps(ay));
    if sign > 0.0 { drain_loss(c, x, y, src[i], ax, ay) } else { 0.0 }
}

/// MacCormack correction for row `y`: `ŝ` = `s2` (backward pass of `s1`), forward-trace `ŝ`,
/// combine and clamp to the range of the 2×2 `s1` nodes of the backward sample.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn maccormack_row<const GENERIC: bool>(
    c: &Consts,
    y: usize,
    s1: &[f32],
    s2: &[f32],
    u: &[f32],
    v: &[f32],
    out: &mut [f32],
) {
    let w = c.w;
    let (up, dn) = (c.edges.row(y, -1, c.h), c.edges.row(y, 1, c.h));
    let k = c.courant;
    let fast = matches!((up, dn), (Nb::In(_), Nb::In(_))) && w >= 3 && !GENERIC;
    if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, fast) {
        let m = w - 2;
        let (a0, a1, a2) = tri(s1, yu, w);
        let (b0, b1, b2) = tri(s1, y, w);
        let (e0, e1, e2) = tri(s1, yd, w);
        let (p0, p1, p2) = tri(s2, yu, w);
        let (q0, q1, q2) = tri(s2, y, w);
        let (r0_, r1_, r2_) = tri(s2, yd, w);
        let (uu, vv) = (mid(u, y, w), mid(v, y, w));
        let o = &mut out[1..m + 1];
        for i in 0..m {
            let (ax, ay) = (uu[i] * k, vv[i] * k);
            let rs = [[a0[i], a1[i], a2[i]], [b0[i], b1[i], b2[i]], [e0[i], e1[i], e2[i]]];
            let rh = [[p0[i], p1[i], p2[i]], [q0[i], q1[i], q2[i]], [r0_[i], r1_[i], r2_[i]]];
            o[i] = maccormack_cell(rs, rh, ax, ay);
        }
        for x in [0, w - 1] {
            out[x] = maccormack_generic(c, x, y, s1, s2, u, v);
        }
    } else {
        for (x, o) in out.iter_mut().enumerate() {
            *o = maccormack_generic(c, x, y, s1, s2, u, v);
        }
    }
}

#[inline(always)]
pub(super) fn maccormack_cell(rs: [[f32; 3]; 3], rh: [[f32; 3]; 3], ax: f32, ay: f32) -> f32 {
    // Forward trace of ŝ: displacement +a, i.e. taps of −a.
    let fwd = filter3(rh, taps(-ax), taps(-ay));
    let corrected = rh[1][1] + 0.5 * (rs[1][1] - fwd);
    let (lo, hi) = cell_range(rs, ax, ay);
    fmin(fmax(corrected, lo), hi)
}

pub(super) fn maccormack_generic(c: &Consts, x: usize, y: usize, s1: &[f32], s2: &[f32], u: &[f32], v: &[f32]) -> f32 {
    let i = y * c.w + x;
    let (ax, ay) = (u[i] * c.courant, v[i] * c.courant);
    let (cols, rows) = stencil(c, x, y);
    maccormack_cell(gather(s1, c.w, cols, rows), gather(s2, c.w, cols, rows), ax, ay)
}

// Conservative forward remap. A node with displacement `a` (cells, |a| ≤ 1) sends the shares
// `pos(−a)`, `1 − |a|`, `pos(a)` of its sediment to the columns x−1, x, x+1 (rows likewise). A
// receiver gathers from its 3×3 neighbourhood: from its left neighbour the share `pos(a_left)`,
// from itself `1 − |a|`, from its right neighbour `pos(−a_right)`, and the products for rows.

/// Shares (x−1, x, x+1) of one displacement, clamped like [`taps`].
#[inline(always)]
pub(super) fn shares(a: f32) -> [f32; 3] {
    let a = fmin(fmax(a, -1.0), 1.0);
    [pos(-a), 1.0 - a.abs(), pos(a)]
}

/// What the node at the centre of a 3×3 neighbourhood receives: `Σ s·wx·wy` over the
/// neighbours (`[row][col]`), with `wx`, `wy` the shares each neighbour sends towards the centre.
#[inline(always)]
pub(super) fn remap_cell(s: [[f32; 3]; 3], wx: [[f32; 3]; 3], wy: [[f32; 3]; 3]) -> f32 {
    let mut acc = 0.0f32;
    for j in 0..3 {
        for i in 0..3 {
            acc += s[j][i] * wx[j][i] * wy[j][i];
        }
    }
    acc
}

#[inline(always)]
pub(super) fn remap_row<const GENERIC: bool>(
    c: &Consts,
    y: usize,
    src: &[f32],
    u: &[f32],
    v: &[f32],
    out: &mut [f32],
) -> f64 {
    let w = c.w;
    let (up, dn) = (c.edges.row(y, -1, c.h), c.edges.row(y, 1, c.h));
    let k = c.courant;
    let mut lost = 0.0f64;
    let fast = matches!((up, dn), (Nb::In(_), Nb::In(_))) && w >= 3 && !GENERIC;
    if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, fast) {
        let m = w - 2;
        let ((sa, sb, sc), (sd, se, sf), (sg, sh, si)) = (tri(src, yu, w), tri(src, y, w), tri(src, yd, w));
        let ((ua, ub, uc), (ud, ue, uf), (ug, uh, ui)) = (tri(u, yu, w), tri(u, y, w), tri(u, yd, w));
        let ((va, vb, vc), (vd, ve, vf), (vg, vh, vi)) = (tri(v, yu, w), tri(v, y, w), tri(v, yd, w));
        let o = &mut out[1..m + 1];
        for i in 0..m {
            let s = [[sa[i], sb[i], sc[i]], [sd[i], se[i], sf[i]], [sg[i], sh[i], si[i]]];
            // The share each neighbour sends towards the centre: the left column its share for
            // +1, the middle column its share for 0, the right column its share for −1; rows
            // likewise.
            let wx = [
                [shares(ua[i] * k)[2], shares(ub[i] * k)[1], shares(uc[i] * k)[0]],
                [shares(ud[i] * k)[2], shares(ue[i] * k)[1], shares(uf[i] * k)[0]],
                [shares(ug[i] * k)[2], shares(uh[i] * k)[1], shares(ui[i] * k)[0]],
            ];
            let wy = [
                [shares(va[i] * k)[2], shares(vb[i] * k)[2], shares(vc[i] * k)[2]],
                [shares(vd[i] * k)[1], shares(ve[i] * k)[1], shares(vf[i] * k)[1]],
                [shares(vg[i] * k)[0], shares(vh[i] * k)[0], shares(vi[i] * k)[0]],
            ];
            o[i] = remap_cell(s, wx, wy);
        }
        for x in [0, w - 1] {
            lost += remap_generic(c, x, y, src, u, v, out);
        }
    } else {
        for x in 0..w {
            lost += remap_generic(c, x, y, src, u, v, out);
        }
    }
    lost
}

/// The shares a node at `pos` (column or row index of an axis of length `n`) sends to its
/// −1, 0, +1 neighbours along that axis, with what would cross a wall kept in the node.
#[inline]
pub(super) fn shares_at(a: f32, pos: usize, n: usize, lo_wall: bool, hi_wall: bool) -> [f32; 3] {
    let mut sh = shares(a);
    if pos == 0 && lo_wall {
        sh[1] += sh[0];
        sh[0] = 0.0;
    }
    if pos + 1 == n && hi_wall {
        sh[1] += sh[2];
        sh[2] = 0.0;
    }
    sh
}

/// Forward remap at one node with full boundary handling. Returns the sediment this node sends
/// across drain edges.
pub(super) fn remap_generic(c: &Consts, x: usize, y: usize, src: &[f32], u: &[f32], v: &[f32], out: &mut [f32]) -> f64 {
    use super::super::EdgeMode::Wall;
    let (w, h, k, e) = (c.w, c.h, c.courant, &c.edges);
    let (lw, rw, tw, bw) = (e.left == Wall, e.right == Wall, e.top == Wall, e.bottom == Wall);
    let mut s = [[0.0f32; 3]; 3];
    let mut wx = [[0.0f32; 3]; 3];
    let mut wy = [[0.0f32; 3]; 3];
    for (j, dy) in (-1isize..=1).enumerate() {
        for (i, dx) in (-1isize..=1).enumerate() {
            if let Nb::In(o) = e.node(x, y, dx, dy, w, h) {
                let (ox, oy) = (o % w, o / w);
                s[j][i] = src[o];
                // The neighbour at column offset dx sends its share for offset −dx to us.
                wx[j][i] = shares_at(u[o] * k, ox, w, lw, rw)[(1 - dx) as usize];
                wy[j][i] = shares_at(v[o] * k, oy, h, tw, bw)[(1 - dy) as usize];
            }
        }
    }
    out[x] = remap_cell(s, wx, wy);
    // This node's own shares that cross a drain edge leave the map.
    let i = y * w + x;
    let (sx, sy) = (shares_at(u[i] * k, x, w, lw, rw), shares_at(v[i] * k, y, h, tw, bw));
    let gone = |sh: [f32; 3], lo: Nb, hi: Nb| {
        let mut g = 0.0f64;
        if lo == Nb::Out {
            g += sh[0] as f64;
        }
        if hi == Nb::Out {
            g += sh[2] as f64;
        }
        g.min(1.0)
    };
    let gx = gone(sx, e.col(x, -1, w), e.col(x, 1, w));
    let gy = gone(sy, e.row(y, -1, h), e.row(y, 1, h));
    src[i] as f64 * (1.0 - (1.0 - gx) * (1.0 - gy))
}
