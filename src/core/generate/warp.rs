//! Domain warping (seed 003: "FBM and domain warping/terrace as an option").
//!
//! The sample point is displaced by two independent fBm fields before the terrain noise is read
//! (I. Quilez, "Domain warping", 2002). With `p` a world position in metres:
//!
//! ```text
//! q_x(p) = Σ_k w_k · n_k(p · f_k + s_k)        q_y(p) = Σ_k w_k · m_k(p · f_k + t_k)
//! warp(p) = p + strength_m · (q_x(p), q_y(p))
//! ```
//!
//! with `f_k = 2^k / wavelength_m` (cycles per metre), weights `w_k = 0.5^k / Σ_j 0.5^j` (so
//! `|q| ≤ 1` and the displacement never exceeds `strength_m` metres per axis), `n_k`, `m_k` our
//! gradient noise ([`super::fbm::GradientNoise`]) with separate seeds, and `s_k`, `t_k` per-octave
//! shifts from the seed. `strength_m = 0` turns the warp off: [`Warp::apply`] then returns its
//! input unchanged.
//!
//! The warp is a function of world position, so the same parameters displace the same land by
//! the same metres at any resolution. [`Warp`] works in node space for the sampler: built for a
//! [`Sampling`] of spacing `Δx`, it reads node `(x, y)` at world `(x·Δx, y·Δx)`, i.e. with
//! `f_k·Δx` cycles per node and a largest displacement of `strength_m / Δx` nodes.
//!
//! | parameter | unit | range | default |
//! |---|---|---|---|
//! | `strength_m` | m | `[0, 1e6]` | 0 (off) |
//! | `wavelength_m` | m | `[1e-3, 1e9]` | 200 (version 1: 0.01 cycles per node, 200 m on a 2 m grid) |
//! | `octaves` | — | `[1, 16]` | 4 |

use serde::{Deserialize, Serialize};

use super::GenError;
use super::gradient::GradientNoise;
use crate::core::rng::SplitMix64;
use crate::core::units::Sampling;

crate::params! {
    prefix "warp.";
    /// Parameters of the domain warp.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct WarpParams {
        /// Largest displacement of a sample point along each axis, metres. 0 = off (default).
        /// Version 1: `strength`, nodes.
        pub strength_m: f64 = 0.0, unit "m", range [0.0, 1e6], legacy strength: f64;
        /// Wavelength of the warp field's first octave, metres. Default 200 m: version 1's 0.01
        /// cycles per node (`frequency`) on the default island's 2 m grid.
        pub wavelength_m: f64 = 200.0, unit "m", range [1e-3, 1e9], legacy frequency: f64;
        /// Octaves of the warp field (persistence 0.5, lacunarity 2).
        pub octaves: u32 = 4, range [1.0, 16.0];
    }
}

impl WarpParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), GenError> {
        Ok(self.check_ranges()?)
    }

    /// Converts version-1 values (strength in nodes, frequency in cycles per node) made for a
    /// map of this cell size (metres) into `strength_m` and `wavelength_m`.
    pub fn upgrade_units(&mut self, cell_size: f32) {
        let s = Sampling::new(cell_size);
        if let Some(v) = self.strength.take() {
            self.strength_m = s.metres(v);
        }
        if let Some(f) = self.frequency.take() {
            self.wavelength_m = s.cell_size / f;
        }
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

/// A domain warp built from [`WarpParams`], a seed and the sampling it is read at (node space).
#[derive(Clone, Debug)]
pub struct Warp {
    /// Largest displacement, nodes.
    strength: f64,
    octaves: Vec<WarpOctave>,
}

impl Warp {
    /// Validates `p` and draws the two warp fields from `seed`, for nodes spaced as `sampling`
    /// says.
    pub fn new(p: &WarpParams, seed: u64, sampling: Sampling) -> Result<Self, GenError> {
        p.validate()?;
        let norm: f64 = (0..p.octaves).map(|k| 0.5f64.powi(k as i32)).sum();
        let mut octaves = Vec::with_capacity(p.octaves as usize);
        let mut freq = sampling.cycles_per_node(p.wavelength_m);
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
        Ok(Self { strength: sampling.nodes(p.strength_m), octaves })
    }

    /// True unless the strength is 0.
    pub fn is_active(&self) -> bool {
        self.strength != 0.0
    }

    /// The two warp fields `(q_x, q_y)` at node-space position `(x, y)`, each in `[-1, 1]`.
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

    /// The warped sample point (node space) for node-space position `(x, y)`.
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
    use crate::core::units::Legacy;

    /// 1 m between nodes: node space is metres.
    fn unit() -> Sampling {
        Sampling::new(1.0)
    }

    #[test]
    fn zero_strength_is_identity() {
        let w = Warp::new(&WarpParams::default(), 3, unit()).unwrap();
        assert!(!w.is_active());
        for (x, y) in [(0.0, 0.0), (12.5, -3.25), (1e5, 7.0)] {
            assert_eq!(w.apply(x, y), (x, y));
        }
    }

    #[test]
    fn displacement_is_bounded_by_strength_and_nonzero() {
        let p = WarpParams { strength_m: 12.0, wavelength_m: 20.0, octaves: 5, ..Default::default() };
        let w = Warp::new(&p, 9, unit()).unwrap();
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
        let w = Warp::new(&WarpParams { strength_m: 1.0, ..WarpParams::default() }, 4, unit()).unwrap();
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
        let p = WarpParams { strength_m: 5.0, ..WarpParams::default() };
        let a = Warp::new(&p, 1, unit()).unwrap().apply(10.3, 20.7);
        let b = Warp::new(&p, 1, unit()).unwrap().apply(10.3, 20.7);
        let c = Warp::new(&p, 2, unit()).unwrap().apply(10.3, 20.7);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn rejects_bad_params() {
        for p in [
            WarpParams { strength_m: -0.5, ..WarpParams::default() },
            WarpParams { strength_m: f64::NAN, ..WarpParams::default() },
            WarpParams { strength_m: 1e9, ..WarpParams::default() },
            WarpParams { wavelength_m: 0.0, ..WarpParams::default() },
            WarpParams { wavelength_m: f64::INFINITY, ..WarpParams::default() },
            WarpParams { octaves: 0, ..WarpParams::default() },
            WarpParams { octaves: 99, ..WarpParams::default() },
        ] {
            assert!(matches!(Warp::new(&p, 0, unit()), Err(GenError::BadParam { .. })), "{p:?}");
        }
    }

    #[test]
    fn the_warp_is_a_function_of_world_position() {
        // The same world point read through a 2 m and a 0.5 m grid moves by the same metres.
        let p = WarpParams { strength_m: 30.0, wavelength_m: 150.0, octaves: 4, ..Default::default() };
        let coarse = Warp::new(&p, 7, Sampling::new(2.0)).unwrap();
        let fine = Warp::new(&p, 7, Sampling::new(0.5)).unwrap();
        for (xm, ym) in [(0.0, 0.0), (37.0, 11.0), (400.0, 1022.0)] {
            let (cx, cy) = coarse.apply(xm / 2.0, ym / 2.0);
            let (fx, fy) = fine.apply(xm / 0.5, ym / 0.5);
            assert!((cx * 2.0 - fx * 0.5).abs() < 1e-9 && (cy * 2.0 - fy * 0.5).abs() < 1e-9);
        }
    }

    #[test]
    fn version_1_values_upgrade_to_metres() {
        let mut p: WarpParams = ron::from_str("(strength: 6.0, frequency: 0.02, octaves: 3)").unwrap();
        assert!(p.has_legacy());
        p.upgrade_units(2.0);
        assert!(!p.has_legacy());
        assert_eq!((p.strength_m, p.wavelength_m, p.octaves), (12.0, 100.0, 3));
        // The same node-space warp as version 1 had on its own grid.
        let w = Warp::new(&p, 5, Sampling::new(2.0)).unwrap();
        assert!((w.strength - 6.0).abs() < 1e-12);
        assert!((w.octaves[0].freq - 0.02).abs() < 1e-15);
    }
}
