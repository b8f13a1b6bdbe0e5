//! Steps 1–4 and 7 of a time step (see the module doc): river sources, the outflow fluxes, the
//! water depth and velocity, erosion/deposition and evaporation, per node and per row (fast
//! interior loops compiled for each SIMD tier, and the boundary-aware path), and the sea.

use super::super::simd::{fmax, fmin, pos, simd_dispatch};
use super::super::stencil::{DIRS as DIRS8, Nb, book_row};
use super::consts::{Consts, RowB, sum_f64_impl};
use super::{DEPTH_EPS, FLUX_MAX, RiverSource};
use crate::core::units::Sampling;

simd_dispatch! {
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::unused_unit)]
    pub(super) fn flux_row_fast(c: &Consts, y: usize, b: &[f32], d: &[f32], fl: &mut [f32], fr: &mut [f32], ft: &mut [f32], fb: &mut [f32]) -> () {
        flux_row::<false>(c, y, b, d, fl, fr, ft, fb)
    }
}

simd_dispatch! {
    pub(super) fn water_row_fast(c: &Consts, y: usize, inp: &BIn, out: BOut, d2: &mut [f32], er: &mut [f32], dep: &mut [f32]) -> RowB {
        water_row::<false>(c, y, inp, out, d2, er, dep)
    }
}

/// Adds one river source (m/s) to the per-node input map of a `w × h` grid sampled by `s` (its
/// centre and radius, metres, converted to nodes).
pub(crate) fn add_source(r: &mut [f32], w: usize, h: usize, src: &RiverSource, s: Sampling) {
    let rad = s.nodes(src.radius_m as f64);
    let (cx, cy) = (s.nodes(src.x_m as f64), s.nodes(src.y_m as f64));
    let x0 = (cx - rad).floor().max(0.0) as usize;
    let x1 = ((cx + rad).ceil().min((w - 1) as f64)) as usize;
    let y0 = (cy - rad).floor().max(0.0) as usize;
    let y1 = ((cy + rad).ceil().min((h - 1) as f64)) as usize;
    let mut any = false;
    for y in y0..=y1 {
        for x in x0..=x1 {
            let (dx, dy) = (x as f64 - cx, y as f64 - cy);
            if dx * dx + dy * dy <= rad * rad {
                r[y * w + x] += src.intensity;
                any = true;
            }
        }
    }
    if !any {
        // (A centre before the first node rounds to −1 or below, which saturates to 0.)
        let (x, y) = ((cx.round() as usize).min(w - 1), (cy.round() as usize).min(h - 1));
        r[y * w + x] += src.intensity;
    }
}

// ---------------------------------------------------------------------------------------------
// Per-node arithmetic, shared by the fast interior loops and the boundary-aware path.

/// New outflow fluxes of one node (step 2). `b`: terrain here, `hc`: water surface here, `d`:
/// depth here, `hn`: water surface of the L, R, T, B neighbours, `f`: previous fluxes. A sea
/// node has no outflow (the sea is a reservoir at a fixed level, see the module doc); `SEA =
/// false` compiles the sea out (for loops over a map without a sea: the same bits, less work).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn flux_cell<const SEA: bool>(
    c: &Consts,
    b: f32,
    hc: f32,
    d: f32,
    hn: [f32; 4],
    f: [f32; 4],
    open: [bool; 4],
) -> [f32; 4] {
    let shut = SEA && c.sea_on & (b < c.sea);
    let mut o = [0.0f32; 4];
    let mut sum = 0.0f32;
    for j in 0..4 {
        let v = fmin(pos(f[j] + c.kflux * (hc - hn[j])), FLUX_MAX);
        o[j] = if open[j] & !shut { v } else { 0.0 };
        sum += o[j];
    }
    let cap = d * c.area_dt;
    let k = if sum > cap { cap / sum } else { 1.0 };
    [o[0] * k, o[1] * k, o[2] * k, o[3] * k]
}

/// Results of step 3–4 and 7 at one node.
pub(super) struct WaterCell {
    pub(super) b: f32,
    pub(super) d: f32,
    pub(super) u: f32,
    pub(super) v: f32,
    pub(super) s1: f32,
    /// The water book of the node: `d2` on land (evaporation is `Ke·Δt·d2`), the water the sea
    /// took in at a sea node (which evaporates nothing).
    pub(super) d2: f32,
}

/// Steps 3, 4 and 7 at one node. `f`: own outflows L, R, T, B; `fin`: the neighbours' flows
/// into this node from L, R, T, B; `nb`: terrain of the L, R, T, B, TL, TR, BL, BR neighbours.
/// `SEA = false` compiles the sea rules out, like [`flux_cell`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn water_cell<const SEA: bool>(
    c: &Consts,
    b: f32,
    d1: f32,
    s: f32,
    f: [f32; 4],
    fin: [f32; 4],
    nb: [f32; 8],
    hard: f32,
    rain: f32,
) -> WaterCell {
    let fout = f[0] + f[1] + f[2] + f[3];
    let fsum_in = fin[0] + fin[1] + fin[2] + fin[3];
    let d2 = pos(d1 + c.dt_area * (fsum_in - fout));
    let dbar = 0.5 * (d1 + d2);
    let wx = 0.5 * (fin[0] - f[0] + f[1] - fin[1]);
    let wy = 0.5 * (fin[2] - f[2] + f[3] - fin[3]);
    let inv = if dbar > DEPTH_EPS { c.inv_l / dbar } else { 0.0 };
    let u = fmin(fmax(wx * inv, -c.vmax), c.vmax);
    let v = fmin(fmax(wy * inv, -c.vmax), c.vmax);
    // Isotropic upwind (Godunov) tilt, see the module doc.
    let g2 = upwind_tilt2(c, b, nb);
    let sin = (g2 / (1.0 + g2)).sqrt();
    let sin_t = if sin > c.min_tilt { sin } else { c.min_tilt };
    // Speed from the four face velocities (net flux through the face over l·d̄), each clamped to
    // the CFL limit: opposite outflows do not cancel, see the module doc.
    let face = |q: f32| fmin((q * inv).abs(), c.vmax);
    let (ul, ur) = (face(fin[0] - f[0]), face(f[1] - fin[1]));
    let (vt, vb) = (face(fin[2] - f[2]), face(f[3] - fin[3]));
    let speed = (0.5 * (ul * ul + ur * ur + vt * vt + vb * vb)).sqrt();
    let lim = if c.depth_on { fmin(d2 * c.inv_max_depth, 1.0) } else { 1.0 };
    let cap = c.kc * sin_t * speed * lim;
    let diff = cap - s;
    // Never below the sea (the base level), nothing from under water (0 at a sea node).
    let ero = fmin(c.ks * pos(diff) * hard, pos(b - c.sea));
    let dep_land = c.kd * pos(-diff);
    // A sea node (bed under the sea level): still water, everything suspended settles, up to the
    // sea level; its water level is the sea level again, and it books what it took in. A shore
    // node (bed at the sea level) neither erodes nor rises: what it carries moves on.
    let sea = SEA && c.sea_on & (b < c.sea);
    let wet = SEA && c.sea_on & (b <= c.sea);
    let dep = if sea { fmin(s, pos(c.sea - b)) } else { dep_land };
    let bl = b - ero + dep;
    let bn = if wet { fmin(bl, c.sea) } else { bl };
    let s1 = pos(s + (b - bn));
    let d_land = d2 * c.keep + rain;
    let d_sea = c.sea - bn;
    let took = (d1 - d_sea) + c.dt_area * (fsum_in - fout) + rain;
    WaterCell { b: bn, d: if sea { d_sea } else { d_land }, u, v, s1, d2: if sea { took } else { d2 } }
}

// ---------------------------------------------------------------------------------------------
// Sweep A rows.

/// Sweep A for row `y` (`GENERIC` forces the boundary-aware path everywhere, for tests).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn flux_row<const GENERIC: bool>(
    c: &Consts,
    y: usize,
    b: &[f32],
    d: &[f32],
    fl: &mut [f32],
    fr: &mut [f32],
    ft: &mut [f32],
    fb: &mut [f32],
) {
    let w = c.w;
    let (up, dn) = (c.edges.row(y, -1, c.h), c.edges.row(y, 1, c.h));
    let fast = matches!((up, dn), (Nb::In(_), Nb::In(_))) && w >= 3 && !GENERIC;
    if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, fast) {
        let m = w - 2;
        let (bc0, bc1, bc2) = tri(b, y, w);
        let (dc0, dc1, dc2) = tri(d, y, w);
        let (bu1, du1, bd1, dd1) = (mid(b, yu, w), mid(d, yu, w), mid(b, yd, w), mid(d, yd, w));
        let (fl1, fr1, ft1, fb1) = (&mut fl[1..m + 1], &mut fr[1..m + 1], &mut ft[1..m + 1], &mut fb[1..m + 1]);
        // Monomorphic loops with and without a sea.
        macro_rules! body {
            ($sea:literal) => {
                for k in 0..m {
                    let hc = bc1[k] + dc1[k];
                    let hn = [bc0[k] + dc0[k], bc2[k] + dc2[k], bu1[k] + du1[k], bd1[k] + dd1[k]];
                    let o = flux_cell::<$sea>(c, bc1[k], hc, dc1[k], hn, [fl1[k], fr1[k], ft1[k], fb1[k]], [true; 4]);
                    fl1[k] = o[0];
                    fr1[k] = o[1];
                    ft1[k] = o[2];
                    fb1[k] = o[3];
                }
            };
        }
        if c.sea_on {
            body!(true)
        } else {
            body!(false)
        }
        for x in [0, w - 1] {
            flux_generic(c, x, y, b, d, fl, fr, ft, fb);
        }
    } else {
        for x in 0..w {
            flux_generic(c, x, y, b, d, fl, fr, ft, fb);
        }
    }
}

/// Sweep A at one node of row `y` with full boundary handling (`fl`… are the row's slices).
#[allow(clippy::too_many_arguments)]
pub(super) fn flux_generic(
    c: &Consts,
    x: usize,
    y: usize,
    b: &[f32],
    d: &[f32],
    fl: &mut [f32],
    fr: &mut [f32],
    ft: &mut [f32],
    fb: &mut [f32],
) {
    let w = c.w;
    let i = y * w + x;
    let (bc, dc) = (b[i], d[i]);
    let hc = bc + dc;
    let mut hn = [0.0f32; 4];
    let mut open = [true; 4];
    for (j, &(dx, dy)) in DIRS4.iter().enumerate() {
        match c.edges.node(x, y, dx, dy, w, c.h) {
            Nb::In(o) => hn[j] = b[o] + d[o],
            Nb::Wall => open[j] = false,
            Nb::Out => {
                // Outside: terrain extrapolated from the opposite inner neighbour, no water.
                hn[j] = match c.edges.node(x, y, -dx, -dy, w, c.h) {
                    Nb::In(o) => 2.0 * bc - b[o],
                    _ => bc,
                };
            }
        }
    }
    let o = flux_cell::<true>(c, bc, hc, dc, hn, [fl[x], fr[x], ft[x], fb[x]], open);
    fl[x] = o[0];
    fr[x] = o[1];
    ft[x] = o[2];
    fb[x] = o[3];
}

/// Row `r` of a row-major field as three overlapping slices of length `w − 2`: starting at
/// columns 0, 1 and 2 (the left neighbour, the node, the right neighbour of columns 1..w−1).
#[inline]
pub(super) fn tri(a: &[f32], r: usize, w: usize) -> (&[f32], &[f32], &[f32]) {
    let m = w - 2;
    let s = &a[r * w..(r + 1) * w];
    (&s[..m], &s[1..m + 1], &s[2..m + 2])
}

/// Columns 1..w−1 of row `r`.
#[inline]
pub(super) fn mid(a: &[f32], r: usize, w: usize) -> &[f32] {
    &a[r * w + 1..r * w + w - 1]
}

/// L, R, T, B.
pub(super) const DIRS4: [(isize, isize); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];
// `DIRS8` (the stencils' `DIRS`): L, R, T, B, TL, TR, BL, BR: the neighbours the tilt reads (the
// thermal model's order).

/// The neighbour on the other side: `DIRS8[OPP8[k]] = −DIRS8[k]`.
pub(super) const OPP8: [usize; 8] = [1, 0, 3, 2, 7, 6, 5, 4];

/// Squared tilt `|∇b|²` of a node from its eight neighbours `nb` (order of [`DIRS8`]): the mean
/// of the upwind (Godunov) gradients in the axis frame and in the frame turned by 45°, see
/// *Isotropic upwind tilt* in the module doc.
#[inline(always)]
pub(super) fn upwind_tilt2(c: &Consts, b: f32, nb: [f32; 8]) -> f32 {
    let gx = fmax(fmax(b - nb[0], b - nb[1]), 0.0) * c.inv_l;
    let gy = fmax(fmax(b - nb[2], b - nb[3]), 0.0) * c.inv_l;
    // Along the diagonals the differences span √2·l: their squares count half.
    let gp = fmax(fmax(b - nb[4], b - nb[7]), 0.0) * c.inv_l;
    let gq = fmax(fmax(b - nb[5], b - nb[6]), 0.0) * c.inv_l;
    fmin(0.5 * (gx * gx + gy * gy) + 0.25 * (gp * gp + gq * gq), 1.0e30)
}

/// The erosion floor of a job: the sea level, or `f32::MIN` (no floor) without a finite one.
pub(crate) fn sea_floor(sea_level: Option<f32>) -> f32 {
    sea_level.filter(|s| s.is_finite()).unwrap_or(f32::MIN)
}

// ---------------------------------------------------------------------------------------------
// Sweep B rows.

pub(super) struct BIn<'a> {
    pub(super) b: &'a [f32],
    pub(super) s: &'a [f32],
    pub(super) fl: &'a [f32],
    pub(super) fr: &'a [f32],
    pub(super) ft: &'a [f32],
    pub(super) fb: &'a [f32],
    pub(super) hard: Option<&'a [f32]>,
    pub(super) water_in: Option<&'a [f32]>,
}

pub(super) struct BOut<'a> {
    pub(super) b: &'a mut [f32],
    pub(super) d: &'a mut [f32],
    pub(super) u: &'a mut [f32],
    pub(super) v: &'a mut [f32],
    pub(super) s1: &'a mut [f32],
}

/// Sweep B for row `y`. `d2` is a scratch row. Records the terrain change in the maps rows
/// `er`, `dep` and returns the row's sums.
#[inline(always)]
pub(super) fn water_row<const GENERIC: bool>(
    c: &Consts,
    y: usize,
    inp: &BIn,
    out: BOut,
    d2: &mut [f32],
    er: &mut [f32],
    dep: &mut [f32],
) -> RowB {
    let w = c.w;
    let r0 = y * w;
    let (up, dn) = (c.edges.row(y, -1, c.h), c.edges.row(y, 1, c.h));
    let mut rb = RowB::default();
    let fast = matches!((up, dn), (Nb::In(_), Nb::In(_))) && w >= 3 && !GENERIC;
    if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, fast) {
        let m = w - 2;
        let (bc0, bc1, bc2) = tri(inp.b, y, w);
        let (bu0, bu, bu2) = tri(inp.b, yu, w);
        let (bd0, bd, bd2) = tri(inp.b, yd, w);
        let s_c = mid(inp.s, y, w);
        let (_, flc, flr) = tri(inp.fl, y, w);
        let (frl, frc, _) = tri(inp.fr, y, w);
        let (ftc, fbc) = (mid(inp.ft, y, w), mid(inp.fb, y, w));
        let (fb_up, ft_dn) = (mid(inp.fb, yu, w), mid(inp.ft, yd, w));
        let d_o = &mut out.d[1..m + 1];
        let b_o = &mut out.b[1..m + 1];
        let u_o = &mut out.u[1..m + 1];
        let v_o = &mut out.v[1..m + 1];
        let s_o = &mut out.s1[1..m + 1];
        let d2_o = &mut d2[1..m + 1];
        // The loop-invariant choices (hardness map, per-node rain, a sea) give eight monomorphic
        // loops.
        macro_rules! body {
            ($hard:ident, $rain:ident) => {
                if c.sea_on { body!(true, $hard, $rain) } else { body!(false, $hard, $rain) }
            };
            ($sea:literal, $hard:ident, $rain:ident) => {
                for k in 0..m {
                    let nb = [bc0[k], bc2[k], bu[k], bd[k], bu0[k], bu2[k], bd0[k], bd2[k]];
                    let f = [flc[k], frc[k], ftc[k], fbc[k]];
                    let fin = [frl[k], flr[k], fb_up[k], ft_dn[k]];
                    let (hd, rn) = ($hard(k), $rain(k));
                    let r = water_cell::<$sea>(c, bc1[k], d_o[k], s_c[k], f, fin, nb, hd, rn);
                    b_o[k] = r.b;
                    d_o[k] = r.d;
                    u_o[k] = r.u;
                    v_o[k] = r.v;
                    s_o[k] = r.s1;
                    d2_o[k] = r.d2;
                }
            };
        }
        let one = |_k: usize| 1.0f32;
        let rain_u = |_k: usize| c.rain_dt;
        match (inp.hard, inp.water_in) {
            (None, None) => body!(one, rain_u),
            (Some(hd), None) => {
                let hd = mid(hd, y, w);
                let hf = |k: usize| hd[k];
                body!(hf, rain_u)
            }
            (None, Some(wi)) => {
                let wi = mid(wi, y, w);
                let rf = |k: usize| wi[k];
                body!(one, rf)
            }
            (Some(hd), Some(wi)) => {
                let (hd, wi) = (mid(hd, y, w), mid(wi, y, w));
                let hf = |k: usize| hd[k];
                let rf = |k: usize| wi[k];
                body!(hf, rf)
            }
        }
        for x in [0, w - 1] {
            rb.drained +=
                water_generic(c, x, y, inp, &mut *out.b, &mut *out.d, &mut *out.u, &mut *out.v, &mut *out.s1, d2);
        }
    } else {
        for x in 0..w {
            rb.drained +=
                water_generic(c, x, y, inp, &mut *out.b, &mut *out.d, &mut *out.u, &mut *out.v, &mut *out.s1, d2);
        }
    }
    let (e, dp) = book_row(&inp.b[r0..r0 + w], out.b, Some((er, dep)));
    rb.eroded = e;
    rb.deposited = dp;
    rb.s1 = sum_f64_impl(out.s1);
    if c.sea_on {
        // The scratch row holds d2 on land and the sea's intake at sea nodes.
        let (land, sea) = split_sum_f64(d2, &inp.b[r0..r0 + w], c.sea);
        rb.evaporated = land * (1.0 - c.keep as f64);
        rb.sea = sea;
    } else {
        rb.evaporated = sum_f64_impl(d2) * (1.0 - c.keep as f64);
    }
    rb
}

/// `(Σ x where bed ≥ sea, Σ x where bed < sea)` in f64 with 8 fixed lanes, like [`sum_f64`](super::consts::sum_f64).
#[inline(always)]
pub(super) fn split_sum_f64(x: &[f32], bed: &[f32], sea: f32) -> (f64, f64) {
    let n = x.len().min(bed.len());
    let (x, bed) = (&x[..n], &bed[..n]);
    let mut land = [0.0f64; 8];
    let mut wet = [0.0f64; 8];
    let (xc, bc) = (x.chunks_exact(8), bed.chunks_exact(8));
    let (xr, br) = (xc.remainder(), bc.remainder());
    for (x8, b8) in xc.zip(bc) {
        for l in 0..8 {
            let v = x8[l] as f64;
            let s = b8[l] < sea;
            land[l] += if s { 0.0 } else { v };
            wet[l] += if s { v } else { 0.0 };
        }
    }
    for (l, (&v, &b)) in xr.iter().zip(br).enumerate() {
        let s = b < sea;
        land[l] += if s { 0.0 } else { v as f64 };
        wet[l] += if s { v as f64 } else { 0.0 };
    }
    (land.iter().sum(), wet.iter().sum())
}

/// Fills the sea at the start of a run: every node with `b < sea` gets the depth `sea − b` (its
/// water input, already in `d`, joins the sea). Returns the water booked to the sea:
/// `Σ (input − (sea − b))`, negative (the sea supplied its own water).
pub(crate) fn fill_sea(b: &[f32], d: &mut [f32], sea: f32, on: bool) -> f64 {
    if !on {
        return 0.0;
    }
    let mut took = 0.0f64;
    for (&bi, di) in b.iter().zip(d.iter_mut()) {
        if bi < sea {
            let full = sea - bi;
            took += *di as f64 - full as f64;
            *di = full;
        }
    }
    took
}

/// Sweep B at one node with full boundary handling; `d` holds d1 on entry. Returns the water
/// drained across edges (metres of depth).
#[allow(clippy::too_many_arguments)]
pub(super) fn water_generic(
    c: &Consts,
    x: usize,
    y: usize,
    inp: &BIn,
    b_o: &mut [f32],
    d_o: &mut [f32],
    u_o: &mut [f32],
    v_o: &mut [f32],
    s_o: &mut [f32],
    d2_o: &mut [f32],
) -> f64 {
    let w = c.w;
    let i = y * w + x;
    let b = inp.b[i];
    let f = [inp.fl[i], inp.fr[i], inp.ft[i], inp.fb[i]];
    let mut fin = [0.0f32; 4];
    let mut drained = 0.0f32;
    let mut nb_b = [b; 8];
    let mut has = [false; 8];
    for (j, &(dx, dy)) in DIRS8.iter().enumerate() {
        match c.edges.node(x, y, dx, dy, w, c.h) {
            Nb::In(o) => {
                // The neighbour's flux towards us: its R for our L, its L for our R, …
                if j < 4 {
                    fin[j] = match j {
                        0 => inp.fr[o],
                        1 => inp.fl[o],
                        2 => inp.fb[o],
                        _ => inp.ft[o],
                    };
                }
                nb_b[j] = inp.b[o];
                has[j] = true;
            }
            Nb::Out if j < 4 => drained += f[j],
            _ => {}
        }
    }
    // Beyond a wall or drain the tilt sees the terrain extrapolated linearly from the opposite
    // neighbour (so the one-sided descent is the slope towards that neighbour).
    let mut nb = nb_b;
    for (j, &o) in OPP8.iter().enumerate() {
        if !has[j] && has[o] {
            nb[j] = 2.0 * b - nb_b[o];
        }
    }
    let hard = inp.hard.map_or(1.0, |h| h[i]);
    let rain = inp.water_in.map_or(c.rain_dt, |r| r[i]);
    let r = water_cell::<true>(c, b, d_o[x], inp.s[i], f, fin, nb, hard, rain);
    b_o[x] = r.b;
    d_o[x] = r.d;
    u_o[x] = r.u;
    v_o[x] = r.v;
    s_o[x] = r.s1;
    d2_o[x] = r.d2;
    (drained * c.dt_area) as f64
}
