//! Diamond-square fractal terrain (SPEC §1, seed 001 — Fournier, Fussell & Carpenter 1982,
//! "Computer rendering of stochastic models"; Miller 1986).
//!
//! Seed 001 generalises 1-D midpoint displacement (`h = (hL + hR)/2 + rand(-R·l, R·l)`) to a
//! square grid of side `s + 1` with `s = 2^n`. The four corners get random heights, then layers
//! are refined breadth first with the half-size `b = s/2, s/4, …, 1` of the current squares:
//!
//! ```text
//! square step  (x, y both odd multiples of b):
//!     h(x,y) = ¼[h(x-b,y-b) + h(x+b,y-b) + h(x-b,y+b) + h(x+b,y+b)] + R·(l/s)·ξ(x,y)
//! diamond step (exactly one of x, y an odd multiple of b):
//!     h(x,y) = ¼[h(x-b,y) + h(x+b,y) + h(x,y-b) + h(x,y+b)]         + R·(l/s)·ξ(x,y)
//! ```
//!
//! with `l = 2b` the side of the square being split and `ξ(x,y) ∈ [-1, 1)` a pure hash of
//! `(x, y, seed)` ([`crate::core::rng::hash2`]). Dividing `l` by the map side `s` makes `R`
//! mean the same thing at every map size: the first layer moves the centre by up to `±R`, the
//! next by `±R/2`, and so on, while the corners are uniform in `[0, 1)` (the seed's "random
//! heights"). So `R = 0` gives a smooth blend of the corners and a large `R` lets the noise
//! dominate. Because `ξ` depends only on the position, every point of a layer can be computed
//! independently, and layers are evaluated row-parallel with bit-identical results at any
//! thread count. The same formula (in `f64`) drives the lazy world
//! ([`super::lazy_world`]), so a `Constant(0)` map of side `2^n + 1` equals the lazy world of
//! side `2^n` up to `f32` rounding.
//!
//! **Edges** (diamond points on the border have one neighbour outside the map):
//! [`DsEdge::Constant`] reads that neighbour as a constant (in the same raw units as the corners;
//! a value below the corners, e.g. 0, pulls the coast down), [`DsEdge::Wrap`] treats the map as a
//! torus of period `s`, so the last row/column repeats the first and the map tiles seamlessly.
//!
//! **Sizes.** The algorithm always runs on the smallest square of side `2^n + 1` that is at
//! least `max(width, height)` and the result is the top-left `width × height` crop of it (so a
//! 300 × 200 map is the corner of a 513² run and shares its values). The square may have at most
//! [`MAX_DS_SIDE`] = 8193 nodes a side.
//!
//! **Resolution.** Diamond-square is a grid algorithm: `ξ` is drawn per node and the layers
//! follow the node count, so the same seed at another map size is a different random field, not
//! the same land sampled more finely ([`super::Base::is_resolution_independent`] is false). A
//! build of a project at another resolution therefore resamples this map (smoothly, over the same
//! extent) instead of regenerating it. `roughness` and `height_scale` are unitless and metres;
//! nothing here is in nodes except the map itself.
//!
//! **Output.** With `normalize` (or `square`) the raw field is mapped linearly to `t ∈ [0, 1]`
//! over the *full* square, optionally squared (`t²`, seed 001: gentler plains, steeper
//! mountains), and multiplied by `height_scale`. Without either, the output is
//! `raw · height_scale`.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{GenError, check};
use crate::core::heightmap::Heightmap;
use crate::core::rng::{hash2, signed_f32, unit_f32};

/// Largest side (nodes) of the `2^n + 1` square diamond-square runs on (`n ≤ 13`).
pub const MAX_DS_SIDE: usize = (1 << MAX_DS_LOG2) + 1;
/// Largest `n` accepted by [`generate_side`].
pub const MAX_DS_LOG2: u32 = 13;

crate::param_enum! {
    /// How diamond points whose neighbour lies outside the map are evaluated.
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    pub enum DsEdge {
        /// The outside neighbour has this height, in raw units (corners are uniform in `[0, 1)`).
        Constant(f32) range [-100.0, 100.0],
        /// The map is a torus of period `2^n`: the outside neighbour is the one on the opposite side.
        Wrap,
    }
}

impl Default for DsEdge {
    fn default() -> Self {
        DsEdge::Constant(0.0)
    }
}

crate::params! {
    /// Parameters of [`generate`].
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct DiamondSquareParams {
        /// Roughness `R`: displacement range per layer is `±R·l/s` (unitless, relative to the corners' `[0,
        /// 1)` range).
        pub roughness: f32 = 0.5, range [0.0, 16.0];
        /// Treatment of diamond neighbours outside the map.
        pub edge: DsEdge = DsEdge::default();
        /// Square the normalised `[0, 1]` result before scaling (implies normalisation).
        pub square: bool = false;
        /// Metres the normalised result is scaled to (or the factor on raw heights when not normalising).
        pub height_scale: f32 = 100.0, unit "m", range [0.0, 100_000.0];
        /// Map the raw field linearly onto `[0, 1]` before scaling.
        pub normalize: bool = true;
    }
}

impl DiamondSquareParams {
    /// Checks every field; the first offending one is reported.
    pub fn validate(&self) -> Result<(), GenError> {
        Ok(self.check_ranges()?)
    }
}

/// Smallest `n` with `2^n + 1 >= side` (side ≥ 1).
pub fn side_log2_for(side: usize) -> u32 {
    let need = side.saturating_sub(1).max(1);
    need.next_power_of_two().trailing_zeros()
}

/// Diamond-square map of `width × height` nodes: the top-left crop of the `2^n + 1` square that
/// covers both sides (see the module docs).
pub fn generate(
    width: usize,
    height: usize,
    cell_size: f32,
    p: &DiamondSquareParams,
    seed: u64,
) -> Result<Heightmap, GenError> {
    // Size and cell checks first (cheap, no allocation).
    Heightmap::new(1, 1, cell_size)?;
    crate::core::heightmap::check_size(width, height)?;
    p.validate()?;
    let longest = width.max(height);
    if longest > MAX_DS_SIDE {
        return Err(GenError::BadParam {
            name: "map side (diamond-square runs on a 2^n+1 square)",
            value: longest as f64,
            range: "1..=8193",
        });
    }
    let n = side_log2_for(longest);
    let full = generate_side(n, cell_size, p, seed)?;
    if full.width == width && full.height == height {
        return Ok(full);
    }
    Ok(full.crop(0, 0, width, height)?)
}

/// Diamond-square map of exactly `(2^n + 1)²` nodes, `n` in `0..=13`.
pub fn generate_side(n: u32, cell_size: f32, p: &DiamondSquareParams, seed: u64) -> Result<Heightmap, GenError> {
    check("n (side = 2^n + 1)", n as f64, 0.0, MAX_DS_LOG2 as f64, "0..=13")?;
    p.validate()?;
    let side = (1usize << n) + 1;
    let mut hm = Heightmap::new(side, side, cell_size)?;
    raw_field(n, p.roughness, p.edge, seed, &mut hm.data);
    finish(&mut hm, p);
    Ok(hm)
}

/// Applies normalisation, squaring and the height scale to a raw field.
fn finish(hm: &mut Heightmap, p: &DiamondSquareParams) {
    if p.normalize || p.square {
        hm.normalize(0.0, 1.0);
        let k = p.height_scale;
        if p.square {
            hm.data.par_iter_mut().for_each(|h| *h = *h * *h * k);
        } else {
            hm.data.par_iter_mut().for_each(|h| *h *= k);
        }
    } else {
        let k = p.height_scale;
        hm.data.par_iter_mut().for_each(|h| *h *= k);
    }
}

/// Layers with fewer nodes than this are computed on the calling thread.
const PAR_THRESHOLD: usize = 4096;

/// Rows a pass writes, with their indices.
type WriteRows<'a> = Vec<(usize, &'a mut [f32])>;
/// Shared views of the rows a pass only reads (`None` for the rows it writes).
type ReadRows<'a> = Vec<Option<&'a [f32]>>;

/// Splits the rows of `data` into the rows written by a pass (`y % period == phase`, `y < rows`)
/// and shared views of all the others, so a pass can write its rows in parallel while reading
/// its neighbours' rows (safe Rust, no copies).
fn split_rows<'a>(
    data: &'a mut [f32],
    side: usize,
    rows: usize,
    period: usize,
    phase: usize,
) -> (WriteRows<'a>, ReadRows<'a>) {
    let mut writes = Vec::with_capacity(side / period + 1);
    let mut reads: Vec<Option<&'a [f32]>> = vec![None; side];
    for (y, row) in data.chunks_mut(side).enumerate() {
        if y < rows && y % period == phase {
            writes.push((y, row));
        } else {
            reads[y] = Some(row);
        }
    }
    (writes, reads)
}

/// Fills `data` (side `2^n + 1`, row-major) with the raw diamond-square field.
fn raw_field(n: u32, roughness: f32, edge: DsEdge, seed: u64, data: &mut [f32]) {
    let s = 1usize << n;
    let side = s + 1;
    debug_assert_eq!(data.len(), side * side);
    let corner = |x: usize, y: usize| unit_f32(hash2(x as i64, y as i64, seed));
    let (wrap, outside) = match edge {
        DsEdge::Wrap => (true, 0.0),
        DsEdge::Constant(c) => (false, c),
    };
    for (x, y) in [(0, 0), (s, 0), (0, s), (s, s)] {
        data[y * side + x] = if wrap { corner(0, 0) } else { corner(x, y) };
    }
    // In wrap mode the torus has period s: only indices 0..s are computed, the last row and
    // column are copied from the first at the end.
    let rows = if wrap { s } else { side };
    let last_x = if wrap { s - 1 } else { s };
    let mut b = s / 2;
    while b >= 1 {
        let amp = roughness * ((2 * b) as f32 / s as f32);
        let parallel = (s / b) * (s / b) >= PAR_THRESHOLD;
        // Row y ∓ b (wrapped on the torus), None when it lies outside the map.
        let neighbour_row = |y: usize, up: bool| -> Option<usize> {
            if up {
                if y >= b {
                    Some(y - b)
                } else if wrap {
                    Some(y + s - b)
                } else {
                    None
                }
            } else if y + b <= s && !(wrap && y + b == s) {
                Some(y + b)
            } else if wrap {
                Some(y + b - s)
            } else {
                None
            }
        };
        // Value at column x (possibly outside) of a row that may be missing.
        let at = |row: Option<&[f32]>, x: isize| -> f32 {
            match row {
                None => outside,
                Some(r) => {
                    if x < 0 {
                        if wrap { r[(x + s as isize) as usize] } else { outside }
                    } else if x as usize > last_x {
                        if wrap { r[x as usize - s] } else { outside }
                    } else {
                        r[x as usize]
                    }
                }
            }
        };
        let bi = b as isize;
        // Square step: centres at odd multiples of b on both axes; they read only the
        // even-multiple rows, which this pass never writes.
        {
            let (mut writes, reads) = split_rows(data, side, rows, 2 * b, b);
            let work = |(y, row): &mut (usize, &mut [f32])| {
                let y = *y;
                let up = neighbour_row(y, true).and_then(|r| reads[r]);
                let down = neighbour_row(y, false).and_then(|r| reads[r]);
                let mut x = b;
                while x < s {
                    let xi = x as isize;
                    let m = (((at(up, xi - bi) + at(up, xi + bi)) + at(down, xi - bi)) + at(down, xi + bi)) * 0.25;
                    row[x] = m + amp * signed_f32(hash2(x as i64, y as i64, seed));
                    x += 2 * b;
                }
            };
            if parallel { writes.par_iter_mut().for_each(work) } else { writes.iter_mut().for_each(work) }
        }
        // Diamond step, in two passes by row parity. Rows y ≡ 0 (mod 2b) hold diamonds at odd
        // multiples of b and read rows y ± b (square-centre rows, untouched by this pass);
        // rows y ≡ b (mod 2b) hold diamonds at even multiples and read rows y ± b at even
        // multiples (older nodes). Neither pass reads what the other writes.
        for (phase, x0) in [(0usize, b), (b, 0usize)] {
            let (mut writes, reads) = split_rows(data, side, rows, 2 * b, phase);
            let work = |(y, row): &mut (usize, &mut [f32])| {
                let y = *y;
                let up = neighbour_row(y, true).and_then(|r| reads[r]);
                let down = neighbour_row(y, false).and_then(|r| reads[r]);
                let mut x = x0;
                while x <= last_x {
                    let xi = x as isize;
                    let (left, right) = {
                        let r: &[f32] = row;
                        (at(Some(r), xi - bi), at(Some(r), xi + bi))
                    };
                    let m = (((left + right) + at(up, xi)) + at(down, xi)) * 0.25;
                    row[x] = m + amp * signed_f32(hash2(x as i64, y as i64, seed));
                    x += 2 * b;
                }
            };
            if parallel { writes.par_iter_mut().for_each(work) } else { writes.iter_mut().for_each(work) }
        }
        b /= 2;
    }
    if wrap {
        for y in 0..s {
            data[y * side + s] = data[y * side];
        }
        let (top, bottom) = data.split_at_mut(s * side);
        bottom.copy_from_slice(&top[..side]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(edge: DsEdge) -> DiamondSquareParams {
        DiamondSquareParams { roughness: 0.7, edge, square: false, height_scale: 1.0, normalize: false }
    }

    #[test]
    fn side_log2_covers_the_size() {
        assert_eq!(side_log2_for(1), 0);
        assert_eq!(side_log2_for(2), 0);
        assert_eq!(side_log2_for(3), 1);
        assert_eq!(side_log2_for(5), 2);
        assert_eq!(side_log2_for(6), 3);
        assert_eq!(side_log2_for(129), 7);
        assert_eq!(side_log2_for(130), 8);
    }

    #[test]
    fn deterministic_and_seed_dependent() {
        let p = DiamondSquareParams::default();
        let a = generate(65, 65, 1.0, &p, 11).unwrap();
        let b = generate(65, 65, 1.0, &p, 11).unwrap();
        let c = generate(65, 65, 1.0, &p, 12).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.data, c.data);
        assert!(a.all_finite());
    }

    #[test]
    fn same_bits_at_any_thread_count() {
        // 129² so the square/diamond layers cross PAR_THRESHOLD and really run in parallel.
        let p = raw(DsEdge::Constant(0.0));
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let a = one.install(|| generate_side(7, 1.0, &p, 5).unwrap());
        let b = three.install(|| generate_side(7, 1.0, &p, 5).unwrap());
        assert_eq!(a.data, b.data);
    }

    #[test]
    fn constant_edge_follows_the_formula_exactly() {
        let (n, seed, c) = (4u32, 9u64, -0.25f32);
        let p = raw(DsEdge::Constant(c));
        let hm = generate_side(n, 1.0, &p, seed).unwrap();
        let s = 1usize << n;
        let h = |x: usize, y: usize| hm.get(x, y);
        // Corners are the hash, unit range.
        for (x, y) in [(0, 0), (s, 0), (0, s), (s, s)] {
            assert_eq!(h(x, y), unit_f32(hash2(x as i64, y as i64, seed)));
        }
        // First square step.
        let b = s / 2;
        let amp = p.roughness;
        let centre =
            (((h(0, 0) + h(s, 0)) + h(0, s)) + h(s, s)) * 0.25 + amp * signed_f32(hash2(b as i64, b as i64, seed));
        assert_eq!(h(b, b), centre);
        // A top-edge diamond point uses the constant for its outside neighbour.
        let top = (((h(0, 0) + h(s, 0)) + c) + h(b, b)) * 0.25 + amp * signed_f32(hash2(b as i64, 0, seed));
        assert_eq!(h(b, 0), top);
        // A right-edge diamond point at the finest layer.
        let q = 1usize;
        let amp1 = p.roughness * (2.0 / s as f32);
        let y = 3usize;
        let right = (((h(s - q, y) + c) + h(s, y - q)) + h(s, y + q)) * 0.25
            + amp1 * signed_f32(hash2(s as i64, y as i64, seed));
        assert_eq!(h(s, y), right);
        // An interior square point of the last layer: the mean of its corners plus displacement.
        let (x, y) = (5usize, 7usize);
        let inner = (((h(x - 1, y - 1) + h(x + 1, y - 1)) + h(x - 1, y + 1)) + h(x + 1, y + 1)) * 0.25
            + amp1 * signed_f32(hash2(x as i64, y as i64, seed));
        assert_eq!(h(x, y), inner);
    }

    #[test]
    fn edge_constant_pulls_the_coast() {
        let lo = generate_side(6, 1.0, &raw(DsEdge::Constant(-5.0)), 3).unwrap();
        let hi = generate_side(6, 1.0, &raw(DsEdge::Constant(5.0)), 3).unwrap();
        let s = 64;
        let border_mean = |m: &Heightmap| (0..=s).map(|i| m.get(i, 0) + m.get(0, i)).sum::<f32>();
        assert!(border_mean(&lo) < border_mean(&hi) - 10.0);
    }

    #[test]
    fn wrap_makes_opposite_edges_equal_and_uses_the_torus() {
        let (n, seed) = (5u32, 21u64);
        let p = raw(DsEdge::Wrap);
        let hm = generate_side(n, 1.0, &p, seed).unwrap();
        let s = 1usize << n;
        for i in 0..=s {
            assert_eq!(hm.get(i, 0), hm.get(i, s), "column {i}");
            assert_eq!(hm.get(0, i), hm.get(s, i), "row {i}");
        }
        let h = |x: usize, y: usize| hm.get(x, y);
        // Left-edge diamond at the first layer: its left neighbour wraps to the centre.
        let b = s / 2;
        let v = (((h(b, b) + h(b, b)) + h(0, 0)) + h(0, s)) * 0.25 + p.roughness * signed_f32(hash2(0, b as i64, seed));
        assert_eq!(h(0, b), v);
        // Finest layer, top edge: the upper neighbour is row s-1.
        let x = 3usize;
        let amp1 = p.roughness * (2.0 / s as f32);
        let v = (((h(x - 1, 0) + h(x + 1, 0)) + h(x, s - 1)) + h(x, 1)) * 0.25
            + amp1 * signed_f32(hash2(x as i64, 0, seed));
        assert_eq!(h(x, 0), v);
    }

    #[test]
    fn square_and_normalize_stay_in_range() {
        let mut p = DiamondSquareParams {
            square: true,
            normalize: false,
            height_scale: 1.0,
            roughness: 2.0,
            ..Default::default()
        };
        let sq = generate(100, 60, 1.0, &p, 4).unwrap();
        let s = sq.stats();
        assert!(s.min >= 0.0 && s.max <= 1.0, "{s:?}");
        p.square = false;
        p.normalize = true;
        let lin = generate(100, 60, 1.0, &p, 4).unwrap();
        // Squaring the same normalised field: t² ≤ t everywhere, and equal at 0/1.
        for (a, b) in sq.data.iter().zip(&lin.data) {
            assert!((a - b * b).abs() < 1e-6);
            assert!(a <= b);
        }
        // Height scale multiplies.
        p.height_scale = 250.0;
        let big = generate(100, 60, 1.0, &p, 4).unwrap();
        assert!((big.stats().max - 250.0 * lin.stats().max).abs() < 1e-3);
    }

    #[test]
    fn non_power_sizes_are_crops_of_the_covering_square() {
        let p = DiamondSquareParams::default();
        let small = generate(20, 11, 2.0, &p, 8).unwrap();
        assert_eq!((small.width, small.height, small.cell_size), (20, 11, 2.0));
        // 20 → 33 = 2^5 + 1. Normalisation runs over the whole square, so the crop matches.
        let full = generate_side(5, 2.0, &p, 8).unwrap();
        assert_eq!(small, full.crop(0, 0, 20, 11).unwrap());
        let exact = generate(33, 33, 2.0, &p, 8).unwrap();
        assert_eq!(exact, full);
        let one = generate(1, 1, 1.0, &p, 8).unwrap();
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn zero_roughness_is_smooth_blend_of_corners() {
        let p = DiamondSquareParams { roughness: 0.0, ..raw(DsEdge::Wrap) };
        let hm = generate_side(4, 1.0, &p, 77).unwrap();
        let c = hm.get(0, 0);
        assert!(hm.data.iter().all(|&h| h == c));
    }

    #[test]
    fn bad_parameters_are_errors() {
        let ok = DiamondSquareParams::default();
        for bad in [f32::NAN, f32::INFINITY, -1.0, 1e9] {
            let p = DiamondSquareParams { roughness: bad, ..ok.clone() };
            assert!(matches!(generate(9, 9, 1.0, &p, 0), Err(GenError::BadParam { .. })));
            let p = DiamondSquareParams { height_scale: bad, ..ok.clone() };
            assert!(generate(9, 9, 1.0, &p, 0).is_err());
        }
        for bad in [f32::NAN, f32::NEG_INFINITY, -1e9, 101.0] {
            let p = DiamondSquareParams { edge: DsEdge::Constant(bad), ..ok.clone() };
            assert!(generate(9, 9, 1.0, &p, 0).is_err());
        }
        assert!(generate(0, 9, 1.0, &ok, 0).is_err());
        assert!(generate(9, 9, 0.0, &ok, 0).is_err());
        assert!(generate(9, 9, f32::NAN, &ok, 0).is_err());
        assert!(generate(8194, 2, 1.0, &ok, 0).is_err());
        assert!(generate(usize::MAX, 2, 1.0, &ok, 0).is_err());
        assert!(generate_side(14, 1.0, &ok, 0).is_err());
        assert!(generate_side(u32::MAX, 1.0, &ok, 0).is_err());
    }

    #[test]
    fn params_round_trip_through_serde() {
        let p = DiamondSquareParams { edge: DsEdge::Wrap, square: true, ..Default::default() };
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<DiamondSquareParams>(&s).unwrap(), p);
        // Missing fields take the defaults.
        let d: DiamondSquareParams = serde_json::from_str("{\"roughness\": 1.5}").unwrap();
        assert_eq!(d, DiamondSquareParams { roughness: 1.5, ..Default::default() });
    }
}
