//! Hardness maps: a per-node erodibility multiplier `k ∈ [0, 1]` for [`super::JobInputs::hardness`]
//! (1 = normal, 0 = unerodible rock), built from the heights and a few parameters.
//!
//! Seed 002 erodes every node alike; real landscapes owe their benches, cliffs and mesas to rock
//! of uneven strength (the "hardness" input of Št'ava et al. 2008 and of the stream-power law's
//! `K`). Three shapes:
//!
//! * **Uniform**: `k = base` everywhere.
//! * **Strata**: horizontal rock layers by height. The layer coordinate is
//!   `z = (h + warp·n(x, y)) / thickness`, with `n` a smooth value-noise field in `[-1, 1]` of
//!   feature size `scale` metres (so the layers undulate instead of lying dead flat); each layer
//!   pair `[0, 1)` of `φ = fract(z)` is hard for `φ < hard_fraction` and soft after it. The hard
//!   indicator with soft edges is
//!   `s(φ) = S(0, e, φ) · (1 − S(f − e, f, φ))` for `f = hard_fraction`, `e = edge_softness·f`
//!   (`S` the smoothstep), and `k = base · (1 − contrast · s)`. Soft bands erode back into
//!   benches; hard bands stand as cliffs (terraced canyon walls).
//! * **Noise**: fBm patches: `n = Σ_o aᵒ·v(2ᵒ·p/scale) / Σ_o aᵒ` (`a = ½`, `v` value noise,
//!   cosine-eased), hard where `n` lies above a threshold `τ = (1 − 2f)·0.35` chosen so that
//!   roughly `f = hard_fraction` of the area is hard: `s = S(τ − w, τ + w, n)`,
//!   `w = 0.02 + 0.3·edge_softness`, and `k = base · (1 − contrast · s)`.
//!
//! Deterministic: every value is a pure function of the node position, its height, the
//! parameters and the seed. Values outside the documented ranges are refused with a
//! [`JobError::BadParam`], never a panic.
//!
//! Also here: `check_hardness`, the check every job makes of the hardness map it is given.

use serde::{Deserialize, Serialize};

use super::JobError;
use crate::core::generate::value_noise::{Interpolation, ValueNoise};
use crate::core::heightmap::Heightmap;

crate::param_enum! {
    /// The shape of the hardness map.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum HardnessMode {
        /// Every node erodes alike (`base`).
        #[default]
        Uniform,
        /// Horizontal rock layers by height: alternating hard and soft bands.
        Strata,
        /// fBm patches of hard rock.
        Noise,
    }
}

crate::params! {
    prefix "hardness.";
    /// Parameters of the hardness (erodibility) map.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct HardnessParams {
        /// Uniform, Strata (layers by height) or Noise (fBm patches).
        pub mode: HardnessMode = HardnessMode::Uniform;
        /// Erodibility of soft ground (and of every node in Uniform mode): 1 = normal, 0 = unerodible.
        /// Dimensionless.
        pub base: f32 = 1.0, range [0.0, 1.0];
        /// How much harder the hard parts are: their erodibility is `base·(1 − contrast)`. Dimensionless.
        pub contrast: f32 = 0.8, range [0.0, 1.0];
        /// Strata: height of one hard + soft layer pair, metres.
        pub thickness: f32 = 30.0, unit "m", range [0.1, 1e5];
        /// Fraction of each layer pair (Strata) or of the area (Noise, roughly) that is hard rock.
        /// Dimensionless.
        pub hard_fraction: f32 = 0.4, range [0.0, 1.0];
        /// Softness of the hard/soft edges (0 = sharp). Dimensionless.
        pub edge_softness: f32 = 0.3, range [0.0, 1.0];
        /// Strata: how far the layers undulate up and down, metres.
        pub warp: f32 = 8.0, unit "m", range [0.0, 1e5];
        /// Feature size of the strata warp and of the Noise patches, metres.
        pub scale: f32 = 250.0, unit "m", range [1.0, 1e6];
        /// Noise: fBm octaves.
        pub octaves: u32 = 4, range [1.0, 8.0];
        /// Seed of the warp and patch noise.
        pub seed: u64 = 7;
    }
}

impl HardnessParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }

    /// True when the map is all 1 (the models may then run without one).
    pub fn is_neutral(&self) -> bool {
        self.mode == HardnessMode::Uniform && self.base == 1.0
    }
}

/// Which values a job accepts in a hardness map ([`super::JobInputs::hardness`]). The model
/// families have always checked different ranges; both rules are kept as they were so that no
/// job that builds today is refused (or the other way round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HardnessRule {
    /// Grid models (pipe, thermal, on the CPU and the GPU): every value finite and ≥ 0.
    NonNegative,
    /// Particle models (droplet, snowball): every value finite and in `0 ..= 1000`.
    AtMost1000,
    /// Stream power: every value finite and in `0 ..= 10⁶`.
    AtMost1e6,
}

/// Checks a hardness map: one value per node (`n` of them), each allowed by `rule`.
pub(crate) fn check_hardness(h: &[f32], n: usize, rule: HardnessRule) -> Result<(), JobError> {
    if h.len() != n {
        return Err(JobError::HardnessSize { expected: n, got: h.len() });
    }
    let (max, range) = match rule {
        HardnessRule::NonNegative => (f32::INFINITY, "finite, >= 0"),
        HardnessRule::AtMost1000 => (1000.0, "0..=1000 per node"),
        HardnessRule::AtMost1e6 => (1.0e6, "[0, 1e6]"),
    };
    if let Some(&bad) = h.iter().find(|v| !(v.is_finite() && **v >= 0.0 && **v <= max)) {
        return Err(JobError::BadParam { name: "hardness", value: bad as f64, range });
    }
    Ok(())
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    if e1 <= e0 {
        return if x < e0 { 0.0 } else { 1.0 };
    }
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Hard-layer indicator `s(φ)` of the Strata mode for the layer phase `φ ∈ [0, 1)` (see the
/// module doc): 1 inside the hard part `[0, f)`, 0 in the soft part, smooth over `e = softness·f/2`.
pub fn strata_indicator(phase: f32, hard_fraction: f32, softness: f32) -> f32 {
    let f = hard_fraction.clamp(0.0, 1.0);
    if f <= 0.0 {
        return 0.0;
    }
    if f >= 1.0 {
        return 1.0;
    }
    // Edges are at most half of the thinner part, so the two ramps never overlap.
    let e = softness.clamp(0.0, 1.0) * 0.5 * f.min(1.0 - f);
    let p = phase.rem_euclid(1.0);
    // Rising edge centred on φ = 0 (wrapping from the previous pair), falling edge on φ = f.
    let rise = if p < 0.5 * (1.0 + f) { smoothstep(-e, e, p) } else { smoothstep(-e, e, p - 1.0) };
    let fall = 1.0 - smoothstep(f - e, f + e, p);
    if p < 0.5 * (1.0 + f) { rise.min(fall) } else { rise }
}

/// Normalised fBm of value noise in `[-1, 1]` at `(x, y)` (units of the lattice).
fn fbm(noise: &ValueNoise, x: f64, y: f64, octaves: u32) -> f32 {
    let (mut sum, mut norm, mut amp, mut freq) = (0.0, 0.0, 1.0, 1.0);
    for o in 0..octaves.max(1) {
        // Shift each octave so their lattices do not line up.
        let off = o as f64 * 17.13;
        sum += amp * noise.value(x * freq + off, y * freq - off);
        norm += amp;
        amp *= 0.5;
        freq *= 2.0;
    }
    (sum / norm) as f32
}

/// The erodibility map of `hm` (row-major, `width × height` values in `0 ..= 1`).
pub fn hardness_map(hm: &Heightmap, p: &HardnessParams) -> Result<Vec<f32>, JobError> {
    hardness_map_at(hm, p, [0.0, 0.0])
}

/// [`hardness_map`] of a window of a larger map whose first node is node `origin` (`[x, y]`, in
/// `hm`'s cells) of that map: the noise is read where the larger map reads it, so the window's
/// map equals the larger map's over the window (a build's loupe erodes a window).
pub fn hardness_map_at(hm: &Heightmap, p: &HardnessParams, origin: [f64; 2]) -> Result<Vec<f32>, JobError> {
    p.validate()?;
    let [ox, oy] = origin;
    let n = hm.width * hm.height;
    let base = p.base;
    let soft_to_hard = |s: f32| (base * (1.0 - p.contrast * s)).clamp(0.0, 1.0);
    match p.mode {
        HardnessMode::Uniform => Ok(vec![base; n]),
        HardnessMode::Strata => {
            let noise = ValueNoise::new(p.seed, Interpolation::Cosine);
            let k = hm.cell_size as f64 / p.scale as f64;
            let mut out = Vec::with_capacity(n);
            for y in 0..hm.height {
                for x in 0..hm.width {
                    let h = hm.data[y * hm.width + x];
                    let h = if h.is_finite() { h } else { 0.0 };
                    let (gx, gy) = ((x as f64 + ox) * k, (y as f64 + oy) * k);
                    let warp = if p.warp > 0.0 { p.warp * fbm(&noise, gx, gy, 2) } else { 0.0 };
                    let z = (h + warp) / p.thickness;
                    out.push(soft_to_hard(strata_indicator(z.rem_euclid(1.0), p.hard_fraction, p.edge_softness)));
                }
            }
            Ok(out)
        }
        HardnessMode::Noise => {
            let noise = ValueNoise::new(p.seed, Interpolation::Cosine);
            let k = hm.cell_size as f64 / p.scale as f64;
            let tau = (1.0 - 2.0 * p.hard_fraction) * 0.35;
            let w = 0.02 + 0.3 * p.edge_softness;
            let mut out = Vec::with_capacity(n);
            for y in 0..hm.height {
                for x in 0..hm.width {
                    let v = fbm(&noise, (x as f64 + ox) * k, (y as f64 + oy) * k, p.octaves);
                    out.push(soft_to_hard(smoothstep(tau - w, tau + w, v)));
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(w: usize, h: usize) -> Heightmap {
        let mut hm = Heightmap::new(w, h, 2.0).unwrap();
        for y in 0..h {
            for x in 0..w {
                hm.set(x, y, (x + y) as f32 * 1.5);
            }
        }
        hm
    }

    #[test]
    fn uniform_is_base() {
        let hm = ramp(8, 5);
        let p = HardnessParams { base: 0.6, ..Default::default() };
        assert_eq!(hardness_map(&hm, &p).unwrap(), vec![0.6; 40]);
        assert!(HardnessParams::default().is_neutral());
    }

    #[test]
    fn every_mode_is_deterministic_and_in_range() {
        let hm = ramp(97, 61);
        for mode in [HardnessMode::Uniform, HardnessMode::Strata, HardnessMode::Noise] {
            let p = HardnessParams { mode, scale: 40.0, ..Default::default() };
            let a = hardness_map(&hm, &p).unwrap();
            let b = hardness_map(&hm, &p).unwrap();
            assert_eq!(a, b, "{mode:?} repeats bit for bit");
            assert_eq!(a.len(), 97 * 61);
            assert!(a.iter().all(|v| (0.0..=1.0).contains(v)), "{mode:?} stays in 0..=1");
            if mode != HardnessMode::Uniform {
                let lo = a.iter().cloned().fold(1.0, f32::min);
                let hi = a.iter().cloned().fold(0.0, f32::max);
                assert!(lo < 0.5 && hi > 0.9, "{mode:?} has hard and soft parts ({lo} … {hi})");
            }
        }
        let other = HardnessParams { mode: HardnessMode::Noise, scale: 40.0, seed: 8, ..Default::default() };
        let same = HardnessParams { mode: HardnessMode::Noise, scale: 40.0, ..Default::default() };
        assert_ne!(hardness_map(&hm, &other).unwrap(), hardness_map(&hm, &same).unwrap(), "the seed matters");
    }

    #[test]
    fn strata_follow_height() {
        // Without warp, nodes of equal height share their hardness and the bands repeat every
        // `thickness` metres: hard in the lower `hard_fraction` of each pair.
        let mut hm = Heightmap::new(4, 1, 1.0).unwrap();
        for (x, h) in [1.0, 31.0, 20.0, 50.0].into_iter().enumerate() {
            hm.set(x, 0, h);
        }
        let p = HardnessParams {
            mode: HardnessMode::Strata,
            warp: 0.0,
            edge_softness: 0.0,
            contrast: 1.0,
            ..Default::default()
        };
        let k = hardness_map(&hm, &p).unwrap();
        assert_eq!(k[0], k[1], "one thickness apart: the same layer");
        assert_eq!(k[0], 0.0, "phase 1/30 is inside the hard part");
        assert_eq!(k[2], 1.0, "phase 2/3 is soft");
        assert_eq!(k[3], 1.0);
    }

    #[test]
    fn strata_indicator_edges() {
        assert_eq!(strata_indicator(0.2, 0.4, 0.0), 1.0);
        assert_eq!(strata_indicator(0.7, 0.4, 0.0), 0.0);
        // With soft edges the value passes ½ at the band edge and stays within [0, 1].
        assert!((strata_indicator(0.4, 0.4, 1.0) - 0.5).abs() < 1e-6);
        assert!((strata_indicator(0.0, 0.4, 1.0) - 0.5).abs() < 1e-6);
        for i in 0..200 {
            let v = strata_indicator(i as f32 / 200.0, 0.3, 0.7);
            assert!((0.0..=1.0).contains(&v));
        }
        assert_eq!(strata_indicator(0.5, 0.0, 0.5), 0.0);
        assert_eq!(strata_indicator(0.5, 1.0, 0.5), 1.0);
    }

    #[test]
    fn shipped_presets_load_and_validate() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets/hardness");
        for name in ["uniform", "strata_canyon", "noise_patches"] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.ron"))).unwrap();
            let p: HardnessParams = ron::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            p.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn absurd_values_are_refused_not_panicking() {
        let hm = ramp(4, 4);
        for p in [
            HardnessParams { thickness: 0.0, ..Default::default() },
            HardnessParams { base: f32::NAN, ..Default::default() },
            HardnessParams { scale: -1.0, ..Default::default() },
            HardnessParams { octaves: 99, ..Default::default() },
        ] {
            assert!(hardness_map(&hm, &p).is_err(), "{p:?}");
        }
    }
}
