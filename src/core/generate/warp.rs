//! Domain warping (seed 003: "FBM and domain warping/terrace as an option").
//!
//! The sample point is displaced by two independent fBm fields before the terrain noise is read
//! (I. Quilez, "Domain warping", 2002):
//!
//! ```text
//! q_x(p) = Σ_k w_k · n_k(p · f_k + s_k)        q_y(p) = Σ_k w_k · m_k(p · f_k + t_k)
//! warp(p) = p + strength · (q_x(p), q_y(p))
//! ```
//!
//! with `f_k = frequency · 2^k`, weights `w_k = 0.5^k / Σ_j 0.5^j` (so `|q| ≤ 1` and the
//! displacement never exceeds `strength` nodes per axis), `n_k`, `m_k` our gradient noise
//! ([`super::fbm::GradientNoise`]) with separate seeds, and `s_k`, `t_k` per-octave shifts from the
//! seed. `strength = 0` turns the warp off: [`Warp::apply`] then returns its input unchanged.

use serde::{Deserialize, Serialize};

use super::GenError;
use super::fbm::GradientNoise;
use crate::core::rng::SplitMix64;

crate::params! {
    prefix "warp.";
    /// Parameters of the domain warp.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct WarpParams {
        /// Largest displacement of a sample point along each axis, nodes. 0 = off (default).
        pub strength: f64 = 0.0, unit "nodes", range [0.0, 1e4];
        /// Frequency of the warp field's first octave, cycles per node.
        pub frequency: f64 = 0.01, unit "cycles/node", range [1e-6, 1.0];
        /// Octaves of the warp field (persistence 0.5, lacunarity 2).
        pub octaves: u32 = 4, range [1.0, 16.0];
    }
}

impl WarpParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), GenError> {
        Ok(self.check_ranges()?)
    }
}

#[derive(Clone, Debug)]
struct WarpOctave {
    nx: GradientNoise,
    ny: GradientNoise,
    freq: f64,
    weight: f64,
    sx: [f64; 2],
    sy: [f64; 2],
}

/// A domain warp built from [`WarpParams`] and a seed.
#[derive(Clone, Debug)]
pub struct Warp {
    strength: f64,
    octaves: Vec<WarpOctave>,
}

impl Warp {
    /// Validates `p` and draws the two warp fields from `seed`.
    pub fn new(p: &WarpParams, seed: u64) -> Result<Self, GenError> {
        p.validate()?;
        let norm: f64 = (0..p.octaves).map(|k| 0.5f64.powi(k as i32)).sum();
        let mut octaves = Vec::with_capacity(p.octaves as usize);
        let mut freq = p.frequency;
        let mut weight = 1.0 / norm;
        for k in 0..p.octaves as u64 {
            let mut rng = SplitMix64::stream(seed, k);
            let mut shift = || (rng.next_f64() * 2.0 - 1.0) * 1024.0;
            let sx = [shift(), shift()];
            let sy = [shift(), shift()];
            let nx = GradientNoise::new(rng.next_u64());
            let ny = GradientNoise::new(rng.next_u64());
            octaves.push(WarpOctave { nx, ny, freq, weight, sx, sy });
            freq *= 2.0;
            weight *= 0.5;
        }
        Ok(Self { strength: p.strength, octaves })
    }

    /// True unless the strength is 0.
    pub fn is_active(&self) -> bool {
        self.strength != 0.0
    }

    /// The two warp fields `(q_x, q_y)` at `(x, y)`, each in `[-1, 1]`.
    pub fn field(&self, x: f64, y: f64) -> (f64, f64) {
        let mut qx = 0.0;
        let mut qy = 0.0;
        for o in &self.octaves {
            let (u, v) = (x * o.freq, y * o.freq);
            qx += o.weight * o.nx.value(u + o.sx[0], v + o.sx[1]);
            qy += o.weight * o.ny.value(u + o.sy[0], v + o.sy[1]);
        }
        (qx, qy)
    }

    /// The warped sample point for node-space position `(x, y)`.
    pub fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        if !self.is_active() {
            return (x, y);
        }
        let (qx, qy) = self.field(x, y);
        (x + self.strength * qx, y + self.strength * qy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_strength_is_identity() {
        let w = Warp::new(&WarpParams::default(), 3).unwrap();
        assert!(!w.is_active());
        for (x, y) in [(0.0, 0.0), (12.5, -3.25), (1e5, 7.0)] {
            assert_eq!(w.apply(x, y), (x, y));
        }
    }

    #[test]
    fn displacement_is_bounded_by_strength_and_nonzero() {
        let p = WarpParams { strength: 12.0, frequency: 0.05, octaves: 5 };
        let w = Warp::new(&p, 9).unwrap();
        let mut max = 0.0f64;
        for k in 0..5000 {
            let (x, y) = (k as f64 * 0.37, (k % 71) as f64 * 1.3);
            let (a, b) = w.apply(x, y);
            let (dx, dy) = (a - x, b - y);
            assert!(dx.abs() <= 12.0 + 1e-9 && dy.abs() <= 12.0 + 1e-9);
            max = max.max(dx.abs()).max(dy.abs());
        }
        assert!(max > 3.0, "warp barely moves points: {max}");
    }

    #[test]
    fn the_two_fields_are_independent() {
        let w = Warp::new(&WarpParams { strength: 1.0, ..WarpParams::default() }, 4).unwrap();
        let mut same = 0;
        for k in 0..200 {
            let (qx, qy) = w.field(k as f64 * 3.1, k as f64 * 1.7);
            if (qx - qy).abs() < 1e-9 {
                same += 1;
            }
        }
        assert!(same < 5);
    }

    #[test]
    fn deterministic_and_seeded() {
        let p = WarpParams { strength: 5.0, ..WarpParams::default() };
        let a = Warp::new(&p, 1).unwrap().apply(10.3, 20.7);
        let b = Warp::new(&p, 1).unwrap().apply(10.3, 20.7);
        let c = Warp::new(&p, 2).unwrap().apply(10.3, 20.7);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn rejects_bad_params() {
        for p in [
            WarpParams { strength: -0.5, ..WarpParams::default() },
            WarpParams { strength: f64::NAN, ..WarpParams::default() },
            WarpParams { strength: 1e9, ..WarpParams::default() },
            WarpParams { frequency: 0.0, ..WarpParams::default() },
            WarpParams { frequency: f64::INFINITY, ..WarpParams::default() },
            WarpParams { octaves: 0, ..WarpParams::default() },
            WarpParams { octaves: 99, ..WarpParams::default() },
        ] {
            assert!(matches!(Warp::new(&p, 0), Err(GenError::BadParam { .. })), "{p:?}");
        }
    }
}
