//! Our 2-D gradient (Perlin) noise, the basis of [`super::fbm`]'s `Perlin` kind: Perlin's
//! improved noise (quintic fade) on an integer lattice, with 16 unit gradients at multiples of
//! 22.5° picked by a 32-bit hash of the lattice point, and a row path that walks one lattice
//! cell at a time with the same bits as the point path ([`GradientNoise::value`]).

use noise::NoiseFn;

use crate::core::rng::mix64;

/// Low-bias 32-bit integer finaliser (C. Wellons' "lowbias32" constants).
#[inline(always)]
fn fin32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

const K_ROW: u32 = 0x9e37_79b1;
const K_COL: u32 = 0x85eb_ca77;

const C1: f64 = 0.923_879_532_511_286_7; // cos 22.5°
const C2: f64 = std::f64::consts::FRAC_1_SQRT_2; // cos 45°
const C3: f64 = 0.382_683_432_365_089_8; // cos 67.5°
/// 16 unit gradients at angles k·22.5°.
const GX: [f64; 16] = [1.0, C1, C2, C3, 0.0, -C3, -C2, -C1, -1.0, -C1, -C2, -C3, 0.0, C3, C2, C1];
const GY: [f64; 16] = [0.0, C3, C2, C1, 1.0, C1, C2, C3, 0.0, -C3, -C2, -C1, -1.0, -C1, -C2, -C3];

/// Quintic fade `6t⁵ − 15t⁴ + 10t³`.
#[inline(always)]
fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Fast 2-D gradient noise in `[-1, 1]`, zero at every lattice point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GradientNoise {
    seed: u32,
}

/// Hash of a lattice row, shared by the four corners of a cell.
#[inline(always)]
fn row_hash(seed: u32, iy: i64) -> u32 {
    fin32(seed ^ (iy as u32).wrapping_mul(K_ROW))
}

/// Gradient of corner `ix` on a row with hash `rh`.
#[inline(always)]
fn corner(rh: u32, ix: i64) -> (f64, f64) {
    let g = (fin32(rh.wrapping_add((ix as u32).wrapping_mul(K_COL))) >> 28) as usize;
    (GX[g], GY[g])
}

/// The four corner gradients of a cell: `[gx00, gy00, gx10, gy10, gx01, gy01, gx11, gy11]`.
#[inline(always)]
fn cell_gradients(rh0: u32, rh1: u32, ix: i64) -> [f64; 8] {
    let (a, b) = corner(rh0, ix);
    let (c, d) = corner(rh0, ix.wrapping_add(1));
    let (e, f) = corner(rh1, ix);
    let (g, h) = corner(rh1, ix.wrapping_add(1));
    [a, b, c, d, e, f, g, h]
}

/// Gradient noise inside one cell, from its corner gradients, the offsets in the cell and their
/// fades. Shared by the per-point and the per-row paths so both give the same bits.
#[inline(always)]
fn cell_value(g: &[f64; 8], fx: f64, fy: f64, u: f64, v: f64) -> f64 {
    let n00 = g[0] * fx + g[1] * fy;
    let n10 = g[2] * (fx - 1.0) + g[3] * fy;
    let n01 = g[4] * fx + g[5] * (fy - 1.0);
    let n11 = g[6] * (fx - 1.0) + g[7] * (fy - 1.0);
    let a = n00 + u * (n10 - n00);
    let b = n01 + u * (n11 - n01);
    ((a + v * (b - a)) * std::f64::consts::SQRT_2).clamp(-1.0, 1.0)
}

/// Splits a coordinate into its lattice cell `⌊x⌋` and the offset `x − ⌊x⌋` in it. Coordinates
/// beyond ±2⁵² (where no fraction is left) and non-finite ones give cell 0, offset 0.
///
/// Written with a truncating cast instead of `f64::floor`, which on the baseline x86-64 target
/// (no SSE4.1) is a library call and dominated the noise's cost.
#[inline(always)]
pub(crate) fn split(x: f64) -> (i64, f64) {
    if x.abs() < 4.503_599_627_370_496e15 {
        let t = x as i64;
        let i = t - ((t as f64) > x) as i64;
        (i, x - i as f64)
    } else {
        (0, 0.0)
    }
}

impl GradientNoise {
    /// Noise whose gradients are fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { seed: (mix64(seed ^ 0x4752_4144_4945_4e54) >> 32) as u32 }
    }

    /// Noise value at `(x, y)` in lattice units.
    #[inline]
    pub fn value(&self, x: f64, y: f64) -> f64 {
        let (ix, fx) = split(x);
        let (iy, fy) = split(y);
        let rh0 = row_hash(self.seed, iy);
        let rh1 = row_hash(self.seed, iy.wrapping_add(1));
        let g = cell_gradients(rh0, rh1, ix);
        cell_value(&g, fx, fy, fade(fx), fade(fy))
    }

    /// Walks one row `sx = x·freq + cx`, `x = 0..len`, at lattice row coordinate `sy`, one cell at
    /// a time: calls `seg(x0, x1, cell)` for every maximal run `x0..x1` of nodes lying in the same
    /// cell, with that cell's gradients computed once (and the shared corners reused when the run
    /// steps into the next cell). `cell.value(sx)` then gives exactly [`Self::value`]`(sx, sy)`.
    #[inline]
    pub(super) fn row_cells(
        &self,
        freq: f64,
        cx: f64,
        sy: f64,
        len: usize,
        mut seg: impl FnMut(usize, usize, &RowCell),
    ) {
        let (iy, fy) = split(sy);
        let rh0 = row_hash(self.seed, iy);
        let rh1 = row_hash(self.seed, iy.wrapping_add(1));
        let cell_of = |x: usize| split(x as f64 * freq + cx).0;
        let mut c = RowCell { g: [0.0; 8], ix: 0.0, fy, v: fade(fy) };
        let mut prev: Option<i64> = None;
        let mut x = 0;
        while x < len {
            let ix = cell_of(x);
            c.g = if prev == Some(ix.wrapping_sub(1)) {
                let (a, b) = corner(rh0, ix.wrapping_add(1));
                let (d, e) = corner(rh1, ix.wrapping_add(1));
                [c.g[2], c.g[3], a, b, c.g[6], c.g[7], d, e]
            } else {
                cell_gradients(rh0, rh1, ix)
            };
            c.ix = ix as f64;
            prev = Some(ix);
            // Guess where the next cell starts, then settle it exactly (cells never decrease in x).
            let guess = (ix as f64 + 1.0 - cx) / freq;
            let mut end = if guess < len as f64 { (guess.max(0.0) as usize).clamp(x + 1, len) } else { len };
            while end > x + 1 && cell_of(end - 1) != ix {
                end -= 1;
            }
            while end < len && cell_of(end) == ix {
                end += 1;
            }
            seg(x, end, &c);
            x = end;
        }
    }
}

/// One lattice cell met along a row: its corner gradients, `⌊sx⌋`, and the row's `fy`, `fade(fy)`.
pub(super) struct RowCell {
    g: [f64; 8],
    ix: f64,
    fy: f64,
    v: f64,
}

impl RowCell {
    /// The noise at `(sx, sy)` for an `sx` inside this cell (same bits as `GradientNoise::value`).
    #[inline(always)]
    pub(super) fn value(&self, sx: f64) -> f64 {
        let fx = sx - self.ix;
        cell_value(&self.g, fx, self.fy, fade(fx), self.v)
    }
}

impl NoiseFn<f64, 2> for GradientNoise {
    fn get(&self, point: [f64; 2]) -> f64 {
        self.value(point[0], point[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_noise_is_zero_on_lattice_bounded_and_continuous() {
        let g = GradientNoise::new(9);
        for j in -5..5 {
            for i in -5..5 {
                assert_eq!(g.value(i as f64, j as f64), 0.0);
            }
        }
        let mut hi = 0.0f64;
        for k in 0..20_000 {
            let x = k as f64 * 0.0137 - 100.0;
            let y = (k % 97) as f64 * 0.31 + 0.5;
            let v = g.value(x, y);
            assert!(v.abs() <= 1.0);
            hi = hi.max(v.abs());
            assert!((v - g.value(x + 1e-7, y)).abs() < 1e-5);
            assert!((v - g.value(x, y + 1e-7)).abs() < 1e-5);
        }
        assert!(hi > 0.5, "noise too flat: max {hi}");
    }

    #[test]
    fn gradient_noise_uses_many_directions() {
        // Different lattice points must get different gradients (all 16 show up).
        let g = GradientNoise::new(1);
        let mut seen = [false; 16];
        for i in 0..200 {
            let rh = row_hash(g.seed, i / 20);
            let k = (fin32(rh.wrapping_add(((i % 20) as u32).wrapping_mul(K_COL))) >> 28) as usize;
            seen[k] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
