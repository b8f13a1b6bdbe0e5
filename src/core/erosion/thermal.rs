//! Thermal erosion: loose material slides down every slope steeper than the talus (repose) angle.
//!
//! After Musgrave, Kolb & Mace (1989) in the form Št'ava, Beneš, Brisbin & Křivánek (2008,
//! "Interactive Terrain Modeling Using Hydraulic Erosion") use beside the pipe model, and which
//! seed 003 runs on the GPU as "max slippage → slippage flux → apply". This CPU version keeps the
//! physics and makes the update conservative, race-free and deterministic.
//!
//! ## The update (one iteration)
//!
//! Neighbourhood: the **8** surrounding nodes (Moore). Cardinal neighbours are `Δ = cell_size`
//! away, diagonal ones `Δ = √2·cell_size`, so the talus limit is the same *angle* in every
//! direction (a 4-neighbourhood lets diagonal ridges stand steeper than the talus angle).
//! With `T = tan(talus angle)`:
//!
//! ```text
//! e(i→j)  = max(0, h_i − h_j − T·Δ_ij)          excess of i over its neighbour j
//! E_i     = Σ_j e(i→j),   M_i = max_j e(i→j)
//! a_i     = min(1, rate · hardness_i)
//! s_i     = a_i · M_i / (2·E_i)                   donor factor (0 when E_i = 0)
//! q_j     = min(1, max_i e(i→j) / (a_max · Σ_i e(i→j)))    receiver limit (1 with no donors)
//! flux(i→j) = s_i · e(i→j) · q_j
//! h_i'    = h_i − Σ_j flux(i→j) + Σ_j flux(j→i)
//! ```
//!
//! The donor moves at most `a_i·M_i/2`: with `rate = 1` and one steep neighbour this halves the
//! height difference in excess, which removes the excess in one iteration, shared among all
//! lower neighbours in proportion to their excess (Musgrave et al.). The receiver limit `q`
//! (our addition) caps what a node can receive at half of its largest incoming excess, so a
//! one-node pit surrounded by eight cliffs fills up to at most halfway instead of overshooting
//! into a spike; `a_max` is the largest `a_i` of the map, which bounds every `s_i ≤ a_max/2`.
//! Consequences, both tested: material only moves from a higher to a lower node, and no node
//! rises above its highest neighbour nor sinks below its lowest one in one iteration.
//!
//! ## Scheme
//!
//! Two passes over read-only heights, fused per band of rows: pass 1 computes `s` and `q` for the
//! band and its two halo rows into a band-local buffer, pass 2 gathers `h'` from the 3×3
//! neighbourhood into a second height buffer (double buffering). Each flux is computed from the
//! same numbers on both of its sides, so the scheme is conservative up to f32 rounding, and as
//! every output value is a pure function of the old heights, results are bit-identical for any
//! number of rayon threads. Bands have a fixed height ([`BAND_ROWS`]) so the f64 books are summed
//! in the same order too.
//!
//! ## Boundaries (per edge, see [`Boundary`])
//!
//! * **Wall**: a neighbour across the edge does not exist; nothing crosses.
//! * **Wrap**: the opposite edge is the neighbour (a lone `Wrap` acts as `Wall`).
//! * **Drain**: the terrain continues past the edge by linear extrapolation of the node and its
//!   opposite inner neighbour, `h_out = 2·h_i − h_opposite` (so the slope toward the edge carries
//!   on); material sliding there leaves the map and is booked as `lost_at_border`. The outside
//!   never gives material back.
//!
//! `tan` of the talus angle is evaluated once per job in f64 and rounded to f32.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{
    Boundary, EdgeMode, ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Side, Simulation, check_param,
};
use crate::core::heightmap::Heightmap;

/// Rows per parallel band. Fixed (not derived from the thread count) so that per-band partial
/// sums, and with them the ledger, are identical for any number of threads.
pub const BAND_ROWS: usize = 32;

crate::params! {
    /// Parameters of thermal erosion.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct ThermalParams {
        /// Talus (repose) angle in degrees: slopes steeper than this shed material.
        pub talus_angle: f32 = 30.0, unit "°", range [0.0, 89.9];
        /// The talus slope given directly as a tangent (metres of drop per metre), overriding `talus_angle`
        /// when set.
        pub talus_tan: Option<f32> = None, range [0.0, 1.0e4];
        /// Fraction of a node's largest excess `M` removed per iteration: the node sheds `rate·M/2` of
        /// material, which lowers the difference to a lone steep neighbour by `rate·M` (so `rate = 1`
        /// removes it in one iteration). Dimensionless (seed 003's thermal rate).
        pub rate: f32 = 0.5, range [0.0, 1.0];
        /// Number of iterations (the job's unit of work). When nested in the pipe model: iterations per
        /// application.
        pub iterations: u32 = 50;
        /// Talus (repose) angle under water in degrees: where the job has a sea level, a pair of neighbours
        /// both at or below it settles to this angle instead of `talus_angle` (saturated sediment rests
        /// flatter).
        pub underwater_angle: f32 = 20.0, unit "°", range [0.0, 89.9];
    }
}

impl ThermalParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }

    /// The talus slope as a tangent (`talus_tan`, or `tan(talus_angle)`).
    pub fn talus_slope(&self) -> f32 {
        match self.talus_tan {
            Some(t) => t,
            None => (self.talus_angle as f64).to_radians().tan() as f32,
        }
    }
}

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
    fn add(&mut self, o: &ThermalBooks) {
        self.eroded += o.eroded;
        self.deposited += o.deposited;
        self.lost += o.lost;
    }
}

// ---------------------------------------------------------------------------------------------
// Neighbour resolution shared with the pipe model.

/// Where one step along an axis (or to a neighbour node) leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nb {
    /// A node of the map (index along the axis, or flat node index).
    In(usize),
    /// Across a wall: no neighbour.
    Wall,
    /// Across a drain edge: outside the map.
    Out,
}

/// The effective edge modes of the four sides.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edges {
    pub left: EdgeMode,
    pub right: EdgeMode,
    pub top: EdgeMode,
    pub bottom: EdgeMode,
}

impl Edges {
    pub fn new(b: &Boundary) -> Self {
        Self {
            left: b.effective(Side::Left),
            right: b.effective(Side::Right),
            top: b.effective(Side::Top),
            bottom: b.effective(Side::Bottom),
        }
    }

    #[inline]
    fn axis(c: usize, d: isize, n: usize, lo: EdgeMode, hi: EdgeMode) -> Nb {
        let cross = |m: EdgeMode, wrapped: usize| match m {
            EdgeMode::Wrap => Nb::In(wrapped),
            EdgeMode::Wall => Nb::Wall,
            EdgeMode::Drain => Nb::Out,
        };
        match d {
            0 => Nb::In(c),
            d if d < 0 => {
                if c > 0 {
                    Nb::In(c - 1)
                } else {
                    cross(lo, n - 1)
                }
            }
            _ => {
                if c + 1 < n {
                    Nb::In(c + 1)
                } else {
                    cross(hi, 0)
                }
            }
        }
    }

    /// Column reached from `x` by `dx ∈ {−1, 0, 1}` on a map `w` wide.
    #[inline]
    pub fn col(&self, x: usize, dx: isize, w: usize) -> Nb {
        Self::axis(x, dx, w, self.left, self.right)
    }

    /// Row reached from `y` by `dy ∈ {−1, 0, 1}` on a map `h` high.
    #[inline]
    pub fn row(&self, y: usize, dy: isize, h: usize) -> Nb {
        Self::axis(y, dy, h, self.top, self.bottom)
    }

    /// The neighbour `(x+dx, y+dy)`: `In(flat index)`, or `Wall` if either axis hits a wall,
    /// else `Out` if either axis leaves through a drain.
    #[inline]
    pub fn node(&self, x: usize, y: usize, dx: isize, dy: isize, w: usize, h: usize) -> Nb {
        match (self.col(x, dx, w), self.row(y, dy, h)) {
            (Nb::Wall, _) | (_, Nb::Wall) => Nb::Wall,
            (Nb::Out, _) | (_, Nb::Out) => Nb::Out,
            (Nb::In(cx), Nb::In(cy)) => Nb::In(cy * w + cx),
        }
    }
}

/// `max(x, 0)`, mapping NaN to 0.
#[inline(always)]
pub(crate) fn pos(x: f32) -> f32 {
    if x > 0.0 { x } else { 0.0 }
}

/// `max(a, b)` as one compare-and-select (no NaN special-casing, so it vectorises to `maxps`).
#[inline(always)]
pub(crate) fn fmax(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// `min(a, b)` as one compare-and-select.
#[inline(always)]
pub(crate) fn fmin(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

/// Highest instruction-set tier the dispatched kernels may use: 2 = AVX-512, 1 = AVX2,
/// 0 = the baseline target. Only lowered by tests (which check that all tiers agree bit for bit).
pub(crate) static SIMD_TIER: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(2);

/// Defines `fn $name(args) -> ret { $body }` that runs `$body` compiled for AVX-512 or AVX2 when
/// the CPU has them, and for the baseline target otherwise. The hot loops are
/// `#[inline(always)]`, so they are compiled into every copy. All copies execute the same IEEE
/// operations in the same order (no FMA contraction, no reassociation, no approximate
/// reciprocals), so their results are bit-identical; a unit test checks it.
macro_rules! simd_dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty $body:block) => {
        $(#[$m])*
        $vis fn $name($($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            {
                let tier = $crate::core::erosion::thermal::SIMD_TIER.load(std::sync::atomic::Ordering::Relaxed);
                #[target_feature(enable = "avx512f,avx512vl,avx2")]
                #[allow(clippy::too_many_arguments, clippy::unused_unit)]
                fn with_avx512($($a: $t),*) -> $r $body
                if tier >= 2 && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
                    // SAFETY: the running CPU supports these features, checked just above.
                    return unsafe { with_avx512($($a),*) };
                }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments, clippy::unused_unit)]
                fn with_avx2($($a: $t),*) -> $r $body
                if tier >= 1 && std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the running CPU supports AVX2, checked just above.
                    return unsafe { with_avx2($($a),*) };
                }
            }
            $body
        }
    };
}
pub(crate) use simd_dispatch;

/// Checks a hardness map: right length, every value finite and ≥ 0.
pub(crate) fn check_hardness(h: &[f32], n: usize) -> Result<(), JobError> {
    if h.len() != n {
        return Err(JobError::HardnessSize { expected: n, got: h.len() });
    }
    if let Some(&bad) = h.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
        return Err(JobError::BadParam { name: "hardness", value: bad as f64, range: "finite, >= 0" });
    }
    Ok(())
}

/// Directions in the order every loop visits them: W, E, N, S, NW, NE, SW, SE (first 4 cardinal).
/// The pipe model's tilt reads its neighbours in the same order.
pub(crate) const DIRS: [(isize, isize); 8] = [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)];

// ---------------------------------------------------------------------------------------------
// The kernel.

/// A prepared thermal-erosion operator for one map size, cell size, boundary and hardness map.
#[derive(Clone, Debug)]
pub struct ThermalKernel {
    w: usize,
    h: usize,
    /// Talus drop to a cardinal / diagonal neighbour, metres.
    t_card: f32,
    t_diag: f32,
    rate: f32,
    inv_amax: f32,
    /// The sea level (−∞ without a sea) and the underwater talus drops (cardinal, diagonal): a
    /// pair of nodes both at or below `sea` uses these (see [`ThermalKernel::with_sea`]).
    sea: f32,
    w_card: f32,
    w_diag: f32,
    edges: Edges,
    hardness: Option<Vec<f32>>,
}

/// Band-local pass-1 results (`s` and `q` for the band rows plus two halo rows).
#[derive(Default)]
struct BandBuf {
    s: Vec<f32>,
    q: Vec<f32>,
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
        if width == 0 || height == 0 {
            return Err(JobError::BadParam { name: "size", value: 0.0, range: ">= 1 node per side" });
        }
        if let Some(hd) = &hardness {
            check_hardness(hd, width * height)?;
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

    /// The talus drop for direction `j` between heights `c` and `n`: the underwater one when
    /// both are at or below the sea.
    #[inline(always)]
    fn talus_pair(&self, j: usize, c: f32, n: f32) -> f32 {
        if fmax(c, n) <= self.sea { if j < 4 { self.w_card } else { self.w_diag } } else { self.talus(j) }
    }

    /// The hardness map the kernel was built with.
    pub fn hardness(&self) -> Option<&[f32]> {
        self.hardness.as_deref()
    }

    #[inline(always)]
    fn talus(&self, j: usize) -> f32 {
        if j < 4 { self.t_card } else { self.t_diag }
    }

    #[inline(always)]
    fn a_at(&self, i: usize) -> f32 {
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
    fn band(
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
    fn pass1_row(&self, h: &[f32], y: usize, s: &mut [f32], q: &mut [f32]) {
        // Without a sea the inner loop keeps the land-only talus choice (no per-pair test).
        if self.sea == f32::NEG_INFINITY {
            self.pass1_row_in::<false>(h, y, s, q)
        } else {
            self.pass1_row_in::<true>(h, y, s, q)
        }
    }

    /// [`ThermalKernel::pass1_row`] with or without the underwater talus (`SEA`).
    #[inline(always)]
    fn pass1_row_in<const SEA: bool>(&self, h: &[f32], y: usize, s: &mut [f32], q: &mut [f32]) {
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
    fn virtual_height(&self, h: &[f32], x: usize, y: usize, dx: isize, dy: isize) -> f32 {
        let c = h[y * self.w + x];
        match self.edges.node(x, y, -dx, -dy, self.w, self.h) {
            Nb::In(o) => 2.0 * c - h[o],
            _ => c,
        }
    }

    /// Pass 1 at one node with full boundary handling.
    fn p1_generic(&self, h: &[f32], x: usize, y: usize) -> (f32, f32) {
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
    fn pass2_row(&self, h: &[f32], y: usize, slot: usize, buf: &BandBuf, out: &mut [f32]) -> f64 {
        // As in pass 1: the land-only talus choice without a sea.
        if self.sea == f32::NEG_INFINITY {
            self.pass2_row_in::<false>(h, y, slot, buf, out)
        } else {
            self.pass2_row_in::<true>(h, y, slot, buf, out)
        }
    }

    /// [`ThermalKernel::pass2_row`] with or without the underwater talus (`SEA`).
    #[inline(always)]
    fn pass2_row_in<const SEA: bool>(&self, h: &[f32], y: usize, slot: usize, buf: &BandBuf, out: &mut [f32]) -> f64 {
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
    fn p2_generic(&self, h: &[f32], x: usize, y: usize, slot: usize, buf: &BandBuf) -> (f32, f64) {
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
fn pair_talus<const SEA: bool>(j: usize, c: f32, n: f32, tc: f32, td: f32, sw: (f32, f32, f32)) -> f32 {
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
fn finish_p1(es: f32, em: f32, is: f32, im: f32, a: f32, inv_amax: f32) -> (f32, f32) {
    let s = if es > 0.0 { a * em / (2.0 * es) } else { 0.0 };
    let q = if is > 0.0 { fmin(im * inv_amax / is, 1.0) } else { 1.0 };
    (s, q)
}

#[inline(always)]
fn p1_cell<const SEA: bool>(
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
fn p2_cell<const SEA: bool>(
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

/// Books one row's change `old → new` (exact f64 differences, 8 fixed lanes so the sum is
/// vectorisable yet deterministic) and records it in the maps. Returns (eroded, deposited).
#[inline(always)]
pub(crate) fn book_row(old: &[f32], new: &[f32], maps: Option<(&mut [f32], &mut [f32])>) -> (f64, f64) {
    let n = old.len().min(new.len());
    let (old, new) = (&old[..n], &new[..n]);
    let mut er = [0.0f64; 8];
    let mut de = [0.0f64; 8];
    let oc = old.chunks_exact(8);
    let nc = new.chunks_exact(8);
    let (or, nr) = (oc.remainder(), nc.remainder());
    for (o8, n8) in oc.zip(nc) {
        for l in 0..8 {
            let d = n8[l] as f64 - o8[l] as f64;
            er[l] += if d < 0.0 { -d } else { 0.0 };
            de[l] += if d > 0.0 { d } else { 0.0 };
        }
    }
    for (l, (o, nn)) in or.iter().zip(nr).enumerate() {
        let d = *nn as f64 - *o as f64;
        er[l] += if d < 0.0 { -d } else { 0.0 };
        de[l] += if d > 0.0 { d } else { 0.0 };
    }
    if let Some((me, md)) = maps {
        let (me, md) = (&mut me[..n], &mut md[..n]);
        for k in 0..n {
            let d = new[k] - old[k];
            me[k] += pos(-d);
            md[k] += pos(d);
        }
    }
    (er.iter().sum(), de.iter().sum())
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

// ---------------------------------------------------------------------------------------------
// The job.

/// Thermal erosion as a [`Simulation`]: one step = one iteration.
pub struct ThermalJob {
    hm: Heightmap,
    params: ThermalParams,
    kernel: ThermalKernel,
    scratch: Vec<f32>,
    maps: ErosionMaps,
    books: ThermalBooks,
    volume_before: f64,
    done: u64,
}

impl ThermalJob {
    /// Validates everything and prepares the job.
    pub fn new(terrain: Heightmap, params: ThermalParams, inputs: JobInputs) -> Result<Self, JobError> {
        if terrain.data.len() != terrain.width * terrain.height {
            return Err(JobError::BadParam {
                name: "heightmap data",
                value: terrain.data.len() as f64,
                range: "width × height values",
            });
        }
        if !terrain.all_finite() {
            return Err(JobError::NonFinite);
        }
        let kernel = ThermalKernel::new(
            &params,
            terrain.width,
            terrain.height,
            terrain.cell_size,
            inputs.boundary,
            inputs.hardness,
        )?
        .with_sea(&params, inputs.sea_level, terrain.cell_size);
        let n = terrain.len();
        let volume_before = terrain.sum();
        Ok(Self {
            hm: terrain,
            params,
            kernel,
            scratch: Vec::with_capacity(n),
            maps: ErosionMaps::new(n),
            books: ThermalBooks::default(),
            volume_before,
            done: 0,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &ThermalParams {
        &self.params
    }
}

impl Simulation for ThermalJob {
    fn step(&mut self) {
        if self.done >= self.params.iterations as u64 {
            return;
        }
        let b = self.kernel.step(&mut self.hm.data, &mut self.scratch, Some(&mut self.maps));
        self.books.add(&b);
        self.done += 1;
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.params.iterations as u64 }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger {
            eroded: self.books.eroded,
            deposited: self.books.deposited,
            lost_at_border: self.books.lost,
            clamped: 0.0,
            uplift: 0.0,
            suspended: 0.0,
            volume_before: self.volume_before,
            volume_after: self.hm.sum(),
        }
    }

    fn maps(&self) -> &ErosionMaps {
        &self.maps
    }

    fn fields(&self) -> Fields {
        Fields::default()
    }

    /// Applies the edit and rebases `volume_before` by its Σh change. An edit that changes the
    /// map's size or cell size, or leaves non-finite heights, is undone (the kernel is built for
    /// one geometry).
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        super::apply_edit(&mut self.hm, &mut self.volume_before, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spike(n: usize, h: f32) -> Heightmap {
        let mut hm = Heightmap::new(n, n, 1.0).unwrap();
        let c = n / 2;
        hm.set(c, c, h);
        hm
    }

    fn kernel(hm: &Heightmap, p: &ThermalParams, b: Boundary) -> ThermalKernel {
        ThermalKernel::new(p, hm.width, hm.height, hm.cell_size, b, None).unwrap()
    }

    /// Reference: the same step computed with the boundary-aware code path at every node, one
    /// band, sequentially.
    fn reference_step(k: &ThermalKernel, h: &[f32]) -> Vec<f32> {
        let (w, hh) = (k.w, k.h);
        let mut buf = BandBuf { s: vec![0.0; (hh + 2) * w], q: vec![0.0; (hh + 2) * w] };
        // Slot r+1 holds row r; slots 0 and hh+1 hold the wrapped halo rows when they exist.
        for r in 0..hh + 2 {
            let yy = if r == 0 {
                k.edges.row(0, -1, hh)
            } else if r == hh + 1 {
                k.edges.row(hh - 1, 1, hh)
            } else {
                Nb::In(r - 1)
            };
            if let Nb::In(yy) = yy {
                for x in 0..w {
                    let (s, q) = k.p1_generic(h, x, yy);
                    buf.s[r * w + x] = s;
                    buf.q[r * w + x] = q;
                }
            }
        }
        let mut out = vec![0.0; w * hh];
        for y in 0..hh {
            for x in 0..w {
                out[y * w + x] = k.p2_generic(h, x, y, y + 1, &buf).0;
            }
        }
        out
    }

    #[test]
    fn under_water_material_settles_to_the_underwater_angle() {
        // A spike on a floor 50 m below the sea: with a sea it relaxes to the underwater angle
        // (10°), without one to the talus angle (40°); both conserve material.
        let mut hm = spike(41, 30.0);
        hm.data.iter_mut().for_each(|h| *h -= 50.0);
        let p = ThermalParams {
            talus_angle: 40.0,
            underwater_angle: 10.0,
            rate: 0.8,
            iterations: 400,
            ..Default::default()
        };
        let sum = hm.sum();
        let mut slopes = Vec::new();
        for sea in [Some(0.0), None] {
            let inputs = JobInputs { boundary: Boundary::all(EdgeMode::Wall), sea_level: sea, ..Default::default() };
            let mut j = ThermalJob::new(hm.clone(), p.clone(), inputs).unwrap();
            while !j.is_done() {
                j.step();
            }
            assert!((j.heightmap().sum() - sum).abs() < 1e-2);
            slopes.push(max_slope(j.heightmap()));
        }
        let (wet, dry) = (slopes[0], slopes[1]);
        let (tw, td) = ((10.0f32).to_radians().tan(), (40.0f32).to_radians().tan());
        assert!(wet <= tw * 1.05 + 1e-3, "under water {wet} > {tw}");
        assert!(dry > tw * 2.0 && dry <= td * 1.05 + 1e-3, "dry {dry}");
        // Above the sea the land angle holds: the same spike standing on dry land.
        let mut land = spike(41, 30.0);
        land.data.iter_mut().for_each(|h| *h += 1.0);
        let inputs = JobInputs { boundary: Boundary::all(EdgeMode::Wall), sea_level: Some(0.0), ..Default::default() };
        let mut j = ThermalJob::new(land, p.clone(), inputs).unwrap();
        while !j.is_done() {
            j.step();
        }
        assert!(max_slope(j.heightmap()) > tw * 2.0);
        // The parameter is checked.
        assert!(ThermalParams { underwater_angle: 95.0, ..Default::default() }.validate().is_err());
    }

    fn max_slope(hm: &Heightmap) -> f32 {
        let mut m = 0.0f32;
        for y in 0..hm.height {
            for x in 0..hm.width {
                for &(dx, dy) in &DIRS {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx < 0 || ny < 0 || nx >= hm.width as isize || ny >= hm.height as isize {
                        continue;
                    }
                    let d = if dx != 0 && dy != 0 { std::f32::consts::SQRT_2 } else { 1.0 };
                    let s = (hm.get(x, y) - hm.get(nx as usize, ny as usize)) / (d * hm.cell_size);
                    m = m.max(s);
                }
            }
        }
        m
    }

    #[test]
    fn defaults_validate_and_bad_values_are_refused() {
        assert!(ThermalParams::default().validate().is_ok());
        for bad in [
            ThermalParams { rate: f32::NAN, ..Default::default() },
            ThermalParams { rate: 1.5, ..Default::default() },
            ThermalParams { rate: -0.1, ..Default::default() },
            ThermalParams { talus_angle: 90.0, ..Default::default() },
            ThermalParams { talus_angle: f32::INFINITY, ..Default::default() },
            ThermalParams { talus_tan: Some(-1.0), ..Default::default() },
        ] {
            assert!(matches!(bad.validate(), Err(JobError::BadParam { .. })), "{bad:?}");
        }
        let hm = Heightmap::new(4, 4, 1.0).unwrap();
        let e = ThermalKernel::new(&ThermalParams::default(), 4, 4, 1.0, Boundary::default(), Some(vec![1.0; 3]));
        assert!(matches!(e, Err(JobError::HardnessSize { .. })));
        let e = ThermalKernel::new(&ThermalParams::default(), 4, 4, 1.0, Boundary::default(), Some(vec![f32::NAN; 16]));
        assert!(matches!(e, Err(JobError::BadParam { .. })));
        assert!(ThermalJob::new(hm, ThermalParams { rate: 2.0, ..Default::default() }, JobInputs::default()).is_err());
    }

    #[test]
    fn talus_slope_from_degrees() {
        let p = ThermalParams { talus_angle: 45.0, ..Default::default() };
        assert!((p.talus_slope() - 1.0).abs() < 1e-6);
        let p = ThermalParams { talus_tan: Some(0.25), ..Default::default() };
        assert_eq!(p.talus_slope(), 0.25);
    }

    #[test]
    fn flat_and_gentle_terrain_does_not_move() {
        let hm = Heightmap::from_fn(20, 17, 1.0, |x, y| 0.1 * x as f32 + 0.05 * y as f32).unwrap();
        let k = kernel(&hm, &ThermalParams::default(), Boundary::all(EdgeMode::Wall));
        let mut h = hm.data.clone();
        let b = k.step(&mut h, &mut Vec::new(), None);
        assert_eq!(h, hm.data);
        assert_eq!(b, ThermalBooks::default());
    }

    #[test]
    fn fast_path_matches_boundary_aware_reference_bit_for_bit() {
        // 70 rows: three bands, the last one short.
        let hm = Heightmap::from_fn(37, 70, 1.0, |x, y| {
            let u = crate::core::rng::hash2(x as i64, y as i64, 7);
            crate::core::rng::unit_f32(u) * 6.0
        })
        .unwrap();
        for b in [
            Boundary::all(EdgeMode::Wall),
            Boundary::all(EdgeMode::Drain),
            Boundary::all(EdgeMode::Wrap),
            Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall },
        ] {
            let k = kernel(&hm, &ThermalParams { rate: 1.0, ..Default::default() }, b);
            let expect = reference_step(&k, &hm.data);
            let mut h = hm.data.clone();
            k.step(&mut h, &mut Vec::new(), None);
            assert!(h.iter().zip(&expect).all(|(a, e)| a.to_bits() == e.to_bits()), "{b:?}");
        }
    }

    #[test]
    fn spike_relaxes_to_the_talus_angle_and_never_moves_material_uphill() {
        let hm = spike(33, 12.0);
        let p = ThermalParams { talus_angle: 30.0, rate: 1.0, ..Default::default() };
        let k = kernel(&hm, &p, Boundary::all(EdgeMode::Wall));
        let t = p.talus_slope();
        let mut h = hm.data.clone();
        let mut scratch = Vec::new();
        let total0: f64 = h.iter().map(|&v| v as f64).sum();
        for _ in 0..400 {
            let old = h.clone();
            k.step(&mut h, &mut scratch, None);
            // Each node stays within the range of its closed 3×3 neighbourhood.
            for y in 0..33usize {
                for x in 0..33usize {
                    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                    for dy in -1..=1isize {
                        for dx in -1..=1isize {
                            let (nx, ny) = (x as isize + dx, y as isize + dy);
                            if nx >= 0 && ny >= 0 && nx < 33 && ny < 33 {
                                let v = old[ny as usize * 33 + nx as usize];
                                lo = lo.min(v);
                                hi = hi.max(v);
                            }
                        }
                    }
                    let v = h[y * 33 + x];
                    assert!(v >= lo - 1e-5 && v <= hi + 1e-5, "node ({x},{y}) left its neighbourhood range");
                    // Material only arrives from higher neighbours: a node that rose has a
                    // neighbour that was higher than it.
                    if v > old[y * 33 + x] {
                        assert!(hi > old[y * 33 + x]);
                    }
                }
            }
        }
        let out = Heightmap::from_data(33, 33, 1.0, h.clone()).unwrap();
        let s = max_slope(&out);
        assert!(s <= t * 1.02 + 1e-3, "max slope {s} > talus {t}");
        assert!(out.get(16, 16) < 12.0 && out.get(16, 16) > 1.0);
        let total1: f64 = h.iter().map(|&v| v as f64).sum();
        assert!((total1 - total0).abs() < 1e-3, "walls must conserve: {total0} -> {total1}");
    }

    #[test]
    fn pit_is_filled_without_overshoot() {
        let mut hm = Heightmap::filled(9, 9, 1.0, 10.0).unwrap();
        hm.set(4, 4, 0.0);
        let k = kernel(
            &hm,
            &ThermalParams { talus_tan: Some(0.0), rate: 1.0, ..Default::default() },
            Boundary::all(EdgeMode::Wall),
        );
        let mut h = hm.data.clone();
        k.step(&mut h, &mut Vec::new(), None);
        let c = h[4 * 9 + 4];
        assert!(c > 0.0 && c <= 5.0 + 1e-4, "pit rose to {c}");
        assert!(h.iter().all(|&v| v <= 10.0 + 1e-5));
    }

    #[test]
    fn unerodible_nodes_keep_their_height() {
        let hm = spike(15, 8.0);
        let mut hard = vec![1.0; hm.len()];
        hard[7 * 15 + 7] = 0.0;
        let k = ThermalKernel::new(&ThermalParams::default(), 15, 15, 1.0, Boundary::all(EdgeMode::Wall), Some(hard))
            .unwrap();
        let mut h = hm.data.clone();
        for _ in 0..20 {
            k.step(&mut h, &mut Vec::new(), None);
        }
        assert_eq!(h[7 * 15 + 7], 8.0);
        assert!(h.iter().enumerate().all(|(i, &v)| i == 7 * 15 + 7 || v == 0.0));
    }

    #[test]
    fn drains_lose_material_walls_do_not() {
        // A ramp rising inward from every edge: material slides to the edges.
        let hm = Heightmap::from_fn(24, 24, 1.0, |x, y| {
            let d = x.min(y).min(23 - x).min(23 - y) as f32;
            d * 3.0
        })
        .unwrap();
        for (mode, loses) in [(EdgeMode::Drain, true), (EdgeMode::Wall, false)] {
            let k = kernel(&hm, &ThermalParams::default(), Boundary::all(mode));
            let mut h = hm.data.clone();
            let mut maps = ErosionMaps::new(hm.len());
            let mut books = ThermalBooks::default();
            for _ in 0..30 {
                books.add(&k.step(&mut h, &mut Vec::new(), Some(&mut maps)));
            }
            assert_eq!(books.lost > 1.0, loses, "{mode:?}: {books:?}");
            if !loses {
                assert_eq!(books.lost, 0.0);
            }
            let dv: f64 = h.iter().map(|&v| v as f64).sum::<f64>() - hm.sum();
            assert!((dv - (books.deposited - books.eroded)).abs() < 1e-6 * books.eroded.max(1.0));
            assert!((books.eroded - books.deposited - books.lost).abs() < 1e-4 * books.eroded);
            let me: f64 = maps.eroded.iter().map(|&v| v as f64).sum();
            assert!((me - books.eroded).abs() < 1e-3 * books.eroded);
        }
    }

    #[test]
    fn wrap_is_translation_invariant() {
        let mut a = Heightmap::new(16, 12, 1.0).unwrap();
        a.set(0, 0, 9.0);
        let mut b = Heightmap::new(16, 12, 1.0).unwrap();
        b.set(5, 7, 9.0);
        let p = ThermalParams { rate: 1.0, ..Default::default() };
        let ka = kernel(&a, &p, Boundary::all(EdgeMode::Wrap));
        let (mut ha, mut hb) = (a.data.clone(), b.data.clone());
        for _ in 0..10 {
            ka.step(&mut ha, &mut Vec::new(), None);
            ka.step(&mut hb, &mut Vec::new(), None);
        }
        for y in 0..12 {
            for x in 0..16 {
                assert_eq!(ha[y * 16 + x], hb[((y + 7) % 12) * 16 + (x + 5) % 16], "({x},{y})");
            }
        }
    }

    #[test]
    fn job_runs_its_iterations_and_rebases_edits() {
        let hm = spike(21, 10.0);
        let p = ThermalParams { iterations: 7, ..Default::default() };
        let mut job =
            ThermalJob::new(hm, p, JobInputs { boundary: Boundary::all(EdgeMode::Drain), ..Default::default() })
                .unwrap();
        job.step();
        job.edit_terrain(&mut |h| h.data[0] += 5.0);
        job.edit_terrain(&mut |h| h.width = 3); // refused: undone
        assert_eq!(job.heightmap().width, 21);
        while !job.is_done() {
            job.step();
        }
        assert_eq!(job.progress(), Progress { done: 7, total: 7 });
        let l = job.ledger();
        assert!(l.eroded > 0.0 && l.closes(1e-4), "{l:?}");
    }

    #[test]
    fn tiny_maps_do_not_panic() {
        for (w, h) in [(1, 1), (1, 5), (5, 1), (2, 2), (2, 3)] {
            for mode in [EdgeMode::Wall, EdgeMode::Drain, EdgeMode::Wrap] {
                let hm = Heightmap::from_fn(w, h, 1.0, |x, y| (x * 7 + y * 3) as f32).unwrap();
                let k = kernel(&hm, &ThermalParams { rate: 1.0, ..Default::default() }, Boundary::all(mode));
                let mut d = hm.data.clone();
                k.step(&mut d, &mut Vec::new(), None);
                assert!(d.iter().all(|v| v.is_finite()));
            }
        }
    }
}
