//! Value noise with selectable interpolation (seed 004, "Виды интерполяции").
//!
//! Every integer lattice point `(i, j)` carries a pseudo-random value
//! `v(i, j) = signed(hash2(i, j, seed)) ∈ [-1, 1)` (see [`crate::core::rng::hash2`]); between
//! lattice points the values are interpolated. Seed 004 names three interpolations, and all three
//! are offered here:
//!
//! * **linear** — seed 004's `linear_mix`: `mix(a, b, k) = a + (b - a)·k`, applied along x then y
//!   (bilinear). Fastest; shows the lattice as creases.
//! * **cosine** — seed 004's `cos_mix`: `f = (1 - cos(π·x)) / 2`, `mix = a·(1 - f) + b·f`.
//!   Smooth (zero slope) at lattice points; the seed's default-looking choice, and ours.
//! * **cubic** — a cubic through four consecutive lattice values `v0..v3` (Catmull-Rom):
//!   `p(t) = ½·(2v1 + (v2 - v0)·t + (2v0 - 5v1 + 4v2 - v3)·t² + (3v1 - v0 - 3v2 + v3)·t³)`,
//!   applied to the 4×4 neighbourhood (bicubic). It passes through `v1` at `t = 0` and `v2` at
//!   `t = 1`, and is C¹ across cells. The seed remarks that cubic avoids the cost of `cos`; it
//!   reads 16 lattice values instead of 4.
//!
//! Linear and cosine results lie in `[-1, 1]`. Catmull-Rom may overshoot: the sum of the absolute
//! 1-D weights is at most `1 + t(1-t) ≤ 1.25`, so 2-D cubic values lie in `[-1.5625, 1.5625]`
//! (the fBm sampler clamps each octave to `[-1, 1]`).

use noise::NoiseFn;
use serde::{Deserialize, Serialize};

use super::gradient::split;
use crate::core::rng::{hash2, mix64};

crate::param_enum! {
    /// How [`ValueNoise`] interpolates between lattice values.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum Interpolation {
        /// Seed 004's `linear_mix` (bilinear).
        Linear,
        /// Seed 004's `cos_mix` (cosine-eased bilinear).
        #[default]
        Cosine,
        /// Catmull-Rom cubic over 4 lattice values per axis (bicubic over 4×4).
        Cubic,
    }
}

/// Seed 004's `linear_mix(a, b, k) = a + (b - a)·k`.
#[inline]
pub fn linear_mix(a: f64, b: f64, k: f64) -> f64 {
    a + (b - a) * k
}

/// Seed 004's `cos_mix`: `f = (1 - cos(π·x)) / 2`, result `a·(1 - f) + b·f`.
#[inline]
pub fn cos_mix(a: f64, b: f64, x: f64) -> f64 {
    let f = (1.0 - (x * std::f64::consts::PI).cos()) * 0.5;
    a * (1.0 - f) + b * f
}

/// Catmull-Rom cubic through `v0, v1, v2, v3` at unit spacing, evaluated at `t ∈ [0, 1]` between
/// `v1` (t = 0) and `v2` (t = 1).
#[inline]
pub fn cubic_mix(v0: f64, v1: f64, v2: f64, v3: f64, t: f64) -> f64 {
    let a = 2.0 * v1;
    let b = v2 - v0;
    let c = 2.0 * v0 - 5.0 * v1 + 4.0 * v2 - v3;
    let d = 3.0 * v1 - v0 - 3.0 * v2 + v3;
    0.5 * (a + t * (b + t * (c + t * d)))
}

/// 2-D value noise: hashed lattice values, interpolated as chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueNoise {
    seed: u64,
    interp: Interpolation,
}

impl ValueNoise {
    /// Value noise whose lattice values are fixed by `seed`.
    pub fn new(seed: u64, interp: Interpolation) -> Self {
        // Pre-mix so that neighbouring seeds give unrelated lattices.
        Self { seed: mix64(seed ^ 0x5641_4c55_454e_4f49), interp }
    }

    /// The interpolation in use.
    pub fn interpolation(&self) -> Interpolation {
        self.interp
    }

    /// The lattice value at integer point `(i, j)`, uniform in `[-1, 1)`.
    #[inline]
    pub fn lattice(&self, i: i64, j: i64) -> f64 {
        // 53 random bits → [0, 1) exactly representable, then to [-1, 1).
        let h = hash2(i, j, self.seed);
        (h >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    }

    /// Noise value at `(x, y)` (lattice units).
    pub fn value(&self, x: f64, y: f64) -> f64 {
        // Cell and offset; coordinates beyond ±2⁵² or non-finite fall back to cell 0, offset 0.
        let (i, tx) = split(x);
        let (j, ty) = split(y);
        match self.interp {
            Interpolation::Linear | Interpolation::Cosine => {
                let v00 = self.lattice(i, j);
                let v10 = self.lattice(i.wrapping_add(1), j);
                let v01 = self.lattice(i, j.wrapping_add(1));
                let v11 = self.lattice(i.wrapping_add(1), j.wrapping_add(1));
                if self.interp == Interpolation::Linear {
                    let a = linear_mix(v00, v10, tx);
                    let b = linear_mix(v01, v11, tx);
                    linear_mix(a, b, ty)
                } else {
                    let a = cos_mix(v00, v10, tx);
                    let b = cos_mix(v01, v11, tx);
                    cos_mix(a, b, ty)
                }
            }
            Interpolation::Cubic => {
                let mut rows = [0.0; 4];
                for (r, row) in rows.iter_mut().enumerate() {
                    let jj = j.wrapping_add(r as i64 - 1);
                    let v = |dx: i64| self.lattice(i.wrapping_add(dx), jj);
                    *row = cubic_mix(v(-1), v(0), v(1), v(2), tx);
                }
                cubic_mix(rows[0], rows[1], rows[2], rows[3], ty)
            }
        }
    }
}

impl NoiseFn<f64, 2> for ValueNoise {
    fn get(&self, point: [f64; 2]) -> f64 {
        self.value(point[0], point[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Interpolation; 3] = [Interpolation::Linear, Interpolation::Cosine, Interpolation::Cubic];

    #[test]
    fn mixes_hit_their_end_points() {
        assert_eq!(linear_mix(2.0, 5.0, 0.0), 2.0);
        assert_eq!(linear_mix(2.0, 5.0, 1.0), 5.0);
        assert_eq!(linear_mix(2.0, 5.0, 0.5), 3.5);
        assert_eq!(cos_mix(2.0, 5.0, 0.0), 2.0);
        assert!((cos_mix(2.0, 5.0, 1.0) - 5.0).abs() < 1e-12);
        assert!((cos_mix(2.0, 5.0, 0.5) - 3.5).abs() < 1e-12);
        // Cosine eases: a quarter of the way it has moved less than linearly.
        assert!(cos_mix(0.0, 1.0, 0.25) < 0.25);
        assert_eq!(cubic_mix(9.0, 2.0, 5.0, -3.0, 0.0), 2.0);
        assert_eq!(cubic_mix(9.0, 2.0, 5.0, -3.0, 1.0), 5.0);
        // Catmull-Rom reproduces straight lines exactly.
        assert!((cubic_mix(1.0, 2.0, 3.0, 4.0, 0.3) - 2.3).abs() < 1e-12);
    }

    #[test]
    fn every_interpolation_hits_lattice_values_exactly() {
        for interp in ALL {
            let n = ValueNoise::new(42, interp);
            for j in -3..4 {
                for i in -3..4 {
                    let got = n.get([i as f64, j as f64]);
                    let want = n.lattice(i, j);
                    assert!((got - want).abs() < 1e-12, "{interp:?} at ({i},{j}): {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn every_interpolation_is_continuous_across_cell_borders() {
        for interp in ALL {
            let n = ValueNoise::new(7, interp);
            let eps = 1e-9;
            for k in 0..50 {
                let y = -2.0 + k as f64 * 0.173;
                for x in [-1.0, 0.0, 1.0, 2.0, 3.0] {
                    let a = n.value(x - eps, y);
                    let b = n.value(x + eps, y);
                    assert!((a - b).abs() < 1e-6, "{interp:?} jumps across x = {x} at y = {y}");
                    let a = n.value(y, x - eps);
                    let b = n.value(y, x + eps);
                    assert!((a - b).abs() < 1e-6, "{interp:?} jumps across y = {x} at x = {y}");
                }
            }
        }
    }

    #[test]
    fn values_are_bounded_and_vary() {
        for interp in ALL {
            let n = ValueNoise::new(3, interp);
            let bound = if interp == Interpolation::Cubic { 1.5625 } else { 1.0 };
            let mut lo = f64::MAX;
            let mut hi = f64::MIN;
            for k in 0..4000 {
                let v = n.value(k as f64 * 0.137, k as f64 * 0.071 - 50.0);
                assert!(v.abs() <= bound + 1e-12);
                lo = lo.min(v);
                hi = hi.max(v);
            }
            assert!(hi - lo > 1.0, "{interp:?} barely varies: {lo}..{hi}");
        }
    }

    #[test]
    fn seeds_differ_and_repeat() {
        let a = ValueNoise::new(1, Interpolation::Cosine);
        let b = ValueNoise::new(2, Interpolation::Cosine);
        assert_eq!(a.value(3.3, 4.4).to_bits(), ValueNoise::new(1, Interpolation::Cosine).value(3.3, 4.4).to_bits());
        assert_ne!(a.value(3.3, 4.4), b.value(3.3, 4.4));
    }

    #[test]
    fn absurd_coordinates_do_not_panic() {
        for interp in ALL {
            let n = ValueNoise::new(0, interp);
            for p in [f64::NAN, f64::INFINITY, -f64::INFINITY, 1e300, -1e300, i64::MAX as f64] {
                assert!(n.value(p, 0.5).is_finite());
                assert!(n.value(0.5, p).is_finite());
            }
        }
    }

    #[test]
    fn interpolation_serde_default_is_cosine() {
        assert_eq!(Interpolation::default(), Interpolation::Cosine);
        let s = serde_json::to_string(&Interpolation::Cubic).unwrap();
        assert_eq!(serde_json::from_str::<Interpolation>(&s).unwrap(), Interpolation::Cubic);
    }
}
