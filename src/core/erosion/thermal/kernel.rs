//! The thermal update (see the module doc): the prepared operator [`ThermalKernel`], its two
//! fused passes per band of rows (scalar cells, compiled for each SIMD tier), the books of an
//! iteration ([`ThermalBooks`]) and the one-off [`thermal_step`].

use rayon::prelude::*;

use super::super::hardness::{HardnessRule, check_hardness};
use super::super::simd::{fmax, fmin, pos, simd_dispatch};
use super::super::stencil::{DIRS, Edges, Nb, book_row};
use super::super::{Boundary, ErosionMaps, JobError, check_param};
use super::{BAND_ROWS, ThermalParams};
use crate::core::heightmap::Heightmap;

/// Material moved by one or more thermal iterations, metre·nodes (f64, exact per-node changes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThermalBooks {
    /// Σ of height lost by nodes that went down.
    pub eroded: f64,
    /// Σ of height gained by nodes that went up.
    pub deposited: f64,
    /// Material that slid across a drain edge.
    pub lost: f64,
}

impl ThermalBooks {
    pub(super) fn add(&mut self, o: &ThermalBooks) {
        self.eroded += o.eroded;
        self.deposited += o.deposited;
        self.lost += o.lost;
    }
}

/// A prepared thermal-erosion operator for one map size, cell size, boundary and hardness map.
#[derive(Clone, Debug)]
pub struct ThermalKernel {
    pub(super) w: usize,
    pub(super) h: usize,
    /// Talus drop to a cardinal / diagonal neighbour, metres.
    pub(super) t_card: f32,
    pub(super) t_diag: f32,
    pub(super) rate: f32,
    pub(super) inv_amax: f32,
    /// The sea level (−∞ without a sea) and the underwater talus drops (cardinal, diagonal): a
    /// pair of nodes both at or below `sea` uses these (see [`ThermalKernel::with_sea`]).
    pub(super) sea: f32,
    pub(super) w_card: f32,
    pub(super) w_diag: f32,
    pub(super) edges: Edges,
    pub(super) hardness: Option<Vec<f32>>,
}

/// Band-local pass-1 results (`s` and `q` for the band rows plus two halo rows).
#[derive(Default)]
pub(super) struct BandBuf {
    pub(super) s: Vec<f32>,
    pub(super) q: Vec<f32>,
}

impl ThermalKernel {
    /// Prepares the operator. Validates `params`, the cell size and the hardness map.
    pub fn new(
        params: &ThermalParams,
        width: usize,
        height: usize,
        cell_size: f32,
        boundary: Boundary,
        hardness: Option<Vec<f32>>,
    ) -> Result<Self, JobError> {
        params.validate()?;
        check_param("cell_size", cell_size as f64, 1.0e-9, 1.0e9, "(0, 1e9] metres")?;
        params.check_cells(cell_size)?;
        if width == 0 || height == 0 {
            return Err(JobError::BadParam { name: "size", value: 0.0, range: ">= 1 node per side" });
        }
        if let Some(hd) = &hardness {
            check_hardness(hd, width * height, HardnessRule::NonNegative)?;
        }
        let tan = params.talus_slope() as f64;
        let t_card = (tan * cell_size as f64) as f32;
        let t_diag = (tan * cell_size as f64 * std::f64::consts::SQRT_2) as f32;
        let amax = match &hardness {
            Some(hd) => hd.iter().fold(0.0f32, |m, &v| m.max((params.rate * v).min(1.0))),
            None => params.rate.min(1.0),
        };
        let inv_amax = if amax > 0.0 { 1.0 / amax } else { 0.0 };
        Ok(Self {
            w: width,
            h: height,
            t_card: if t_card.is_finite() { t_card } else { f32::MAX },
            t_diag: if t_diag.is_finite() { t_diag } else { f32::MAX },
            rate: params.rate,
            inv_amax,
            sea: f32::NEG_INFINITY,
            w_card: f32::MAX,
            w_diag: f32::MAX,
            edges: Edges::new(&boundary),
            hardness,
        })
    }

    /// The same operator with a sea: a pair of neighbours whose higher node is at or below
    /// `sea_level` settles to `params.underwater_angle` instead of the talus angle. The rule
    /// depends on the pair only, so each flux is still computed from the same numbers on both of
    /// its sides (conservative). `None` (or a non-finite level) leaves the kernel as it is.
    pub fn with_sea(mut self, params: &ThermalParams, sea_level: Option<f32>, cell_size: f32) -> Self {
        if let Some(s) = sea_level.filter(|s| s.is_finite()) {
            let tan = (params.underwater_angle as f64).to_radians().tan();
            let (c, d) = ((tan * cell_size as f64) as f32, (tan * cell_size as f64 * std::f64::consts::SQRT_2) as f32);
            self.sea = s;
            self.w_card = if c.is_finite() { c } else { f32::MAX };
            self.w_diag = if d.is_finite() { d } else { f32::MAX };
        }
        self
    }

    /// The sea level and the underwater talus drops (cardinal, diagonal) the kernel uses (−∞ and
    /// `f32::MAX` without a sea), for the GPU version.
    pub fn underwater(&self) -> (f32, f32, f32) {
        (self.sea, self.w_card, self.w_diag)
    }

    /// The talus drop for direction `j` between heights `c` and `n`: the underwater one when
    /// both are at or below the sea.
    #[inline(always)]
    pub(super) fn talus_pair(&self, j: usize, c: f32, n: f32) -> f32 {
        if fmax(c, n) <= self.sea { if j < 4 { self.w_card } else { self.w_diag } } else { self.talus(j) }
    }

    /// The hardness map the kernel was built with.
    pub fn hardness(&self) -> Option<&[f32]> {
        self.hardness.as_deref()
    }

    #[inline(always)]
    pub(super) fn talus(&self, j: usize) -> f32 {
        if j < 4 { self.t_card } else { self.t_diag }
    }

    #[inline(always)]
    pub(super) fn a_at(&self, i: usize) -> f32 {
        match &self.hardness {
            Some(hd) => fmin(self.rate * hd[i], 1.0),
            None => self.rate,
        }
    }

    /// One iteration on `h` (`w·h` heights, row-major), using `scratch` as the second buffer
    /// (resized as needed; the buffers are swapped). Records per-node changes in `maps` when
    /// given. If `h` (or `maps`) does not have `w·h` values, nothing happens and zero books are
    /// returned.
    pub fn step(&self, h: &mut Vec<f32>, scratch: &mut Vec<f32>, maps: Option<&mut ErosionMaps>) -> ThermalBooks {
        let (w, n) = (self.w, self.w * self.h);
        if h.len() != n || maps.as_ref().is_some_and(|m| m.eroded.len() != n || m.deposited.len() != n) {
            return ThermalBooks::default();
        }
        scratch.resize(n, 0.0);
        let band = BAND_ROWS * w;
        let src: &[f32] = h;
        let parts: Vec<ThermalBooks> = match maps {
            Some(m) => scratch
                .par_chunks_mut(band)
                .zip(m.eroded.par_chunks_mut(band))
                .zip(m.deposited.par_chunks_mut(band))
                .enumerate()
                .map_init(BandBuf::default, |buf, (bi, ((out, er), dep))| {
                    band_fast(self, src, bi * BAND_ROWS, out, Some((er, dep)), buf)
                })
                .collect(),
            None => scratch
                .par_chunks_mut(band)
                .enumerate()
                .map_init(BandBuf::default, |buf, (bi, out)| band_fast(self, src, bi * BAND_ROWS, out, None, buf))
                .collect(),
        };
        std::mem::swap(h, scratch);
        let mut total = ThermalBooks::default();
        for p in &parts {
            total.add(p);
        }
        total
    }

    /// Passes 1 and 2 for the rows `y0 .. y0 + out.len()/w`.
    #[inline(always)]
    pub(super) fn band(
        &self,
        h: &[f32],
        y0: usize,
        out: &mut [f32],
        mut maps: Option<(&mut [f32], &mut [f32])>,
        buf: &mut BandBuf,
    ) -> ThermalBooks {
        let w = self.w;
        let rows = out.len() / w;
        buf.s.resize((rows + 2) * w, 0.0);
        buf.q.resize((rows + 2) * w, 0.0);
        // Pass 1 over the halo row above, the band, and the halo row below.
        for r in 0..rows + 2 {
            let yy = if r == 0 {
                self.edges.row(y0, -1, self.h)
            } else if r == rows + 1 {
                self.edges.row(y0 + rows - 1, 1, self.h)
            } else {
                Nb::In(y0 + r - 1)
            };
            if let Nb::In(yy) = yy {
                let (s, q) = (&mut buf.s[r * w..(r + 1) * w], &mut buf.q[r * w..(r + 1) * w]);
                self.pass1_row(h, yy, s, q);
            }
        }
        // Pass 2.
        let mut books = ThermalBooks::default();
        for r in 0..rows {
            let y = y0 + r;
            let orow = &mut out[r * w..(r + 1) * w];
            books.lost += self.pass2_row(h, y, r + 1, buf, orow);
            let old = &h[y * w..(y + 1) * w];
            let rb = match maps.as_mut() {
                Some((er, dep)) => {
                    book_row(old, orow, Some((&mut er[r * w..(r + 1) * w], &mut dep[r * w..(r + 1) * w])))
                }
                None => book_row(old, orow, None),
            };
            books.eroded += rb.0;
            books.deposited += rb.1;
        }
        books
    }

    /// Pass 1 for row `y`: donor factors `s` and receiver limits `q`.
    #[inline(always)]
    pub(super) fn pass1_row(&self, h: &[f32], y: usize, s: &mut [f32], q: &mut [f32]) {
        // Without a sea the inner loop keeps the land-only talus choice (no per-pair test).
        if self.sea == f32::NEG_INFINITY {
            self.pass1_row_in::<false>(h, y, s, q)
        } else {
            self.pass1_row_in::<true>(h, y, s, q)
        }
    }

    /// [`ThermalKernel::pass1_row`] with or without the underwater talus (`SEA`).
    #[inline(always)]
    pub(super) fn pass1_row_in<const SEA: bool>(&self, h: &[f32], y: usize, s: &mut [f32], q: &mut [f32]) {
        let w = self.w;
        let (up, dn) = (self.edges.row(y, -1, self.h), self.edges.row(y, 1, self.h));
        if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, w >= 3) {
            let m = w - 2;
            let (hu, hc, hd) = (&h[yu * w..(yu + 1) * w], &h[y * w..(y + 1) * w], &h[yd * w..(yd + 1) * w]);
            let (u0, u1, u2) = (&hu[..m], &hu[1..m + 1], &hu[2..m + 2]);
            let (c0, c1, c2) = (&hc[..m], &hc[1..m + 1], &hc[2..m + 2]);
            let (d0, d1, d2) = (&hd[..m], &hd[1..m + 1], &hd[2..m + 2]);
            let (so, qo) = (&mut s[1..m + 1], &mut q[1..m + 1]);
            let (tc, td, inv) = (self.t_card, self.t_diag, self.inv_amax);
            let sw = (self.sea, self.w_card, self.w_diag);
            match &self.hardness {
                None => {
                    let a = self.rate;
                    for k in 0..m {
                        let nb = [c0[k], c2[k], u1[k], d1[k], u0[k], u2[k], d0[k], d2[k]];
                        let (sv, qv) = p1_cell::<SEA>(c1[k], nb, a, tc, td, inv, sw);
                        so[k] = sv;
                        qo[k] = qv;
                    }
                }
                Some(hard) => {
                    let hr = &hard[y * w + 1..y * w + 1 + m];
                    let rate = self.rate;
                    for k in 0..m {
                        let nb = [c0[k], c2[k], u1[k], d1[k], u0[k], u2[k], d0[k], d2[k]];
                        let a = fmin(rate * hr[k], 1.0);
                        let (sv, qv) = p1_cell::<SEA>(c1[k], nb, a, tc, td, inv, sw);
                        so[k] = sv;
                        qo[k] = qv;
                    }
                }
            }
            for x in [0, w - 1] {
                let (sv, qv) = self.p1_generic(h, x, y);
                s[x] = sv;
                q[x] = qv;
            }
        } else {
            for x in 0..w {
                let (sv, qv) = self.p1_generic(h, x, y);
                s[x] = sv;
                q[x] = qv;
            }
        }
    }

    /// Height of the drain-side virtual node seen from `(x, y)` in direction `(dx, dy)`.
    #[inline]
    pub(super) fn virtual_height(&self, h: &[f32], x: usize, y: usize, dx: isize, dy: isize) -> f32 {
        let c = h[y * self.w + x];
        match self.edges.node(x, y, -dx, -dy, self.w, self.h) {
            Nb::In(o) => 2.0 * c - h[o],
            _ => c,
        }
    }

    /// Pass 1 at one node with full boundary handling.
    pub(super) fn p1_generic(&self, h: &[f32], x: usize, y: usize) -> (f32, f32) {
        let (w, i) = (self.w, y * self.w + x);
        let c = h[i];
        let (mut es, mut em, mut is, mut im) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for (j, &(dx, dy)) in DIRS.iter().enumerate() {
            match self.edges.node(x, y, dx, dy, w, self.h) {
                Nb::Wall => {}
                Nb::Out => {
                    let t = self.talus(j);
                    let eo = pos((c - self.virtual_height(h, x, y, dx, dy)) - t);
                    es += eo;
                    em = fmax(em, eo);
                }
                Nb::In(o) => {
                    let t = self.talus_pair(j, c, h[o]);
                    let diff = c - h[o];
                    let eo = pos(diff - t);
                    let ei = pos(-diff - t);
                    es += eo;
                    em = fmax(em, eo);
                    is += ei;
                    im = fmax(im, ei);
                }
            }
        }
        finish_p1(es, em, is, im, self.a_at(i), self.inv_amax)
    }

    /// Pass 2 for row `y` (band buffer slot `slot`), writing the new heights. Returns the
    /// material lost across drain edges.
    #[inline(always)]
    pub(super) fn pass2_row(&self, h: &[f32], y: usize, slot: usize, buf: &BandBuf, out: &mut [f32]) -> f64 {
        // As in pass 1: the land-only talus choice without a sea.
        if self.sea == f32::NEG_INFINITY {
            self.pass2_row_in::<false>(h, y, slot, buf, out)
        } else {
            self.pass2_row_in::<true>(h, y, slot, buf, out)
        }
    }

    /// [`ThermalKernel::pass2_row`] with or without the underwater talus (`SEA`).
    #[inline(always)]
    pub(super) fn pass2_row_in<const SEA: bool>(
        &self,
        h: &[f32],
        y: usize,
        slot: usize,
        buf: &BandBuf,
        out: &mut [f32],
    ) -> f64 {
        let w = self.w;
        let (up, dn) = (self.edges.row(y, -1, self.h), self.edges.row(y, 1, self.h));
        let mut lost = 0.0f64;
        if let (Nb::In(yu), Nb::In(yd), true) = (up, dn, w >= 3) {
            let m = w - 2;
            let (hu, hc, hd) = (&h[yu * w..(yu + 1) * w], &h[y * w..(y + 1) * w], &h[yd * w..(yd + 1) * w]);
            let (u0, u1, u2) = (&hu[..m], &hu[1..m + 1], &hu[2..m + 2]);
            let (c0, c1, c2) = (&hc[..m], &hc[1..m + 1], &hc[2..m + 2]);
            let (d0, d1, d2) = (&hd[..m], &hd[1..m + 1], &hd[2..m + 2]);
            let rs = |k: usize| (&buf.s[k * w..(k + 1) * w], &buf.q[k * w..(k + 1) * w]);
            let ((su, qu), (sc, qc), (sd, qd)) = (rs(slot - 1), rs(slot), rs(slot + 1));
            let (su0, su1, su2) = (&su[..m], &su[1..m + 1], &su[2..m + 2]);
            let (sc0, sc1, sc2) = (&sc[..m], &sc[1..m + 1], &sc[2..m + 2]);
            let (sd0, sd1, sd2) = (&sd[..m], &sd[1..m + 1], &sd[2..m + 2]);
            let (qu0, qu1, qu2) = (&qu[..m], &qu[1..m + 1], &qu[2..m + 2]);
            let (qc0, qc1, qc2) = (&qc[..m], &qc[1..m + 1], &qc[2..m + 2]);
            let (qd0, qd1, qd2) = (&qd[..m], &qd[1..m + 1], &qd[2..m + 2]);
            let o = &mut out[1..m + 1];
            let (tc, td) = (self.t_card, self.t_diag);
            let sw = (self.sea, self.w_card, self.w_diag);
            for k in 0..m {
                let nb = [c0[k], c2[k], u1[k], d1[k], u0[k], u2[k], d0[k], d2[k]];
                let sn = [sc0[k], sc2[k], su1[k], sd1[k], su0[k], su2[k], sd0[k], sd2[k]];
                let qn = [qc0[k], qc2[k], qu1[k], qd1[k], qu0[k], qu2[k], qd0[k], qd2[k]];
                o[k] = p2_cell::<SEA>(c1[k], nb, sn, qn, sc1[k], qc1[k], tc, td, sw);
            }
            for x in [0, w - 1] {
                let (v, l) = self.p2_generic(h, x, y, slot, buf);
                out[x] = v;
                lost += l;
            }
        } else {
            for (x, o) in out.iter_mut().enumerate() {
                let (v, l) = self.p2_generic(h, x, y, slot, buf);
                *o = v;
                lost += l;
            }
        }
        lost
    }

    /// Pass 2 at one node with full boundary handling: (new height, material lost).
    pub(super) fn p2_generic(&self, h: &[f32], x: usize, y: usize, slot: usize, buf: &BandBuf) -> (f32, f64) {
        let w = self.w;
        let i = y * w + x;
        let c = h[i];
        let (sc, qc) = (buf.s[slot * w + x], buf.q[slot * w + x]);
        let (mut out, mut inn, mut lost) = (0.0f32, 0.0f32, 0.0f64);
        for (j, &(dx, dy)) in DIRS.iter().enumerate() {
            match self.edges.node(x, y, dx, dy, w, self.h) {
                Nb::Wall => {}
                Nb::Out => {
                    let t = self.talus(j);
                    let eo = pos((c - self.virtual_height(h, x, y, dx, dy)) - t);
                    out += eo;
                    lost += (sc * eo) as f64;
                }
                Nb::In(o) => {
                    let t = self.talus_pair(j, c, h[o]);
                    let diff = c - h[o];
                    let eo = pos(diff - t);
                    let ei = pos(-diff - t);
                    // The neighbour's pass-1 values sit in the slot of its row offset.
                    let ns = (slot as isize + dy) as usize * w + (o % w);
                    out += eo * buf.q[ns];
                    inn += buf.s[ns] * ei;
                }
            }
        }
        (c - sc * out + qc * inn, lost)
    }
}

simd_dispatch! {
    /// [`ThermalKernel::band`], compiled for AVX2 where available.
    fn band_fast(k: &ThermalKernel, h: &[f32], y0: usize, out: &mut [f32], maps: Option<(&mut [f32], &mut [f32])>, buf: &mut BandBuf) -> ThermalBooks {
        k.band(h, y0, out, maps, buf)
    }
}

/// The talus drop in direction `j` between heights `c` and `n`: `tc`/`td` on land, the
/// underwater drops of `sw = (sea, w_card, w_diag)` when both are at or below the sea (never
/// with `sea = −∞`, so without a sea the arithmetic is unchanged). `SEA = false` (the kernel has
/// no sea) skips the test: the same result, without its cost in the hot loops.
#[inline(always)]
pub(super) fn pair_talus<const SEA: bool>(j: usize, c: f32, n: f32, tc: f32, td: f32, sw: (f32, f32, f32)) -> f32 {
    if !SEA {
        return if j < 4 { tc } else { td };
    }
    let under = fmax(c, n) <= sw.0;
    match (j < 4, under) {
        (true, false) => tc,
        (false, false) => td,
        (true, true) => sw.1,
        (false, true) => sw.2,
    }
}

/// Pass-1 arithmetic shared by the fast and the generic path.
#[inline(always)]
pub(super) fn finish_p1(es: f32, em: f32, is: f32, im: f32, a: f32, inv_amax: f32) -> (f32, f32) {
    let s = if es > 0.0 { a * em / (2.0 * es) } else { 0.0 };
    let q = if is > 0.0 { fmin(im * inv_amax / is, 1.0) } else { 1.0 };
    (s, q)
}

#[inline(always)]
pub(super) fn p1_cell<const SEA: bool>(
    c: f32,
    nb: [f32; 8],
    a: f32,
    tc: f32,
    td: f32,
    inv_amax: f32,
    sw: (f32, f32, f32),
) -> (f32, f32) {
    let (mut es, mut em, mut is, mut im) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for (j, &n) in nb.iter().enumerate() {
        let t = pair_talus::<SEA>(j, c, n, tc, td, sw);
        let diff = c - n;
        let eo = pos(diff - t);
        let ei = pos(-diff - t);
        es += eo;
        em = fmax(em, eo);
        is += ei;
        im = fmax(im, ei);
    }
    finish_p1(es, em, is, im, a, inv_amax)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn p2_cell<const SEA: bool>(
    c: f32,
    nb: [f32; 8],
    sn: [f32; 8],
    qn: [f32; 8],
    sc: f32,
    qc: f32,
    tc: f32,
    td: f32,
    sw: (f32, f32, f32),
) -> f32 {
    let (mut out, mut inn) = (0.0f32, 0.0f32);
    for j in 0..8 {
        let t = pair_talus::<SEA>(j, c, nb[j], tc, td, sw);
        let diff = c - nb[j];
        let eo = pos(diff - t);
        let ei = pos(-diff - t);
        out += eo * qn[j];
        inn += sn[j] * ei;
    }
    c - sc * out + qc * inn
}

/// One thermal iteration on `hm` (convenience wrapper building a [`ThermalKernel`]; for repeated
/// use build the kernel once). `params.iterations` is ignored: exactly one iteration runs.
pub fn thermal_step(
    hm: &mut Heightmap,
    params: &ThermalParams,
    boundary: Boundary,
    hardness: Option<&[f32]>,
    maps: Option<&mut ErosionMaps>,
) -> Result<ThermalBooks, JobError> {
    if hm.data.len() != hm.width * hm.height {
        return Err(JobError::BadParam {
            name: "heightmap data",
            value: hm.data.len() as f64,
            range: "width × height values",
        });
    }
    if let Some(m) = &maps
        && (m.eroded.len() != hm.data.len() || m.deposited.len() != hm.data.len())
    {
        return Err(JobError::BadParam { name: "maps", value: m.eroded.len() as f64, range: "one value per node" });
    }
    let k = ThermalKernel::new(params, hm.width, hm.height, hm.cell_size, boundary, hardness.map(|h| h.to_vec()))?;
    let mut scratch = Vec::new();
    Ok(k.step(&mut hm.data, &mut scratch, maps))
}
