//! Terracing (seed 003: "FBM and domain warping/terrace as an option").
//!
//! Heights are quantised into `steps` equal bands over the map's own range `[lo, hi]`:
//!
//! ```text
//! t  = (h − lo) / (hi − lo) · steps       k = ⌊t⌋        f = t − k ∈ [0, 1)
//! h' = lo + (hi − lo) · (k + p(f)) / steps
//! ```
//!
//! The in-step profile `p` is a flat tread followed by a riser that takes the last `s`
//! (= `smoothness`) of the step:
//!
//! ```text
//! r    = clamp((f − (1 − s)) / s, 0, 1)
//! p(f) = (1 − s) · (3r² − 2r³) + s · r
//! ```
//!
//! `s = 0` gives hard steps (`p = 0`: exactly `steps + 1` levels, the top one holding only the
//! highest nodes); `s = 1` gives `p(f) = f`, i.e. no terracing at all; in between the riser is a
//! smoothstep blended towards a straight ramp. `p(0) = 0` and `p(1) = 1`, so the result is
//! continuous for every `s > 0`. Non-finite heights are left alone.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::GenError;
use crate::core::heightmap::Heightmap;

crate::params! {
    prefix "terrace.";
    /// Parameters of the terrace filter.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct TerraceParams {
        /// Number of bands the height range is cut into.
        pub steps: u32 = 8, range [1.0, 1024.0];
        /// Fraction of each step taken by the riser: 0 = hard steps, 1 = no terracing.
        pub smoothness: f32 = 0.2, range [0.0, 1.0];
    }
}

impl TerraceParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), GenError> {
        Ok(self.check_ranges()?)
    }
}

/// The in-step profile `p(f)` for smoothness `s`.
#[inline]
pub fn profile(f: f64, s: f64) -> f64 {
    if s <= 0.0 {
        return if f >= 1.0 { 1.0 } else { 0.0 };
    }
    let r = ((f - (1.0 - s)) / s).clamp(0.0, 1.0);
    (1.0 - s) * (r * r * (3.0 - 2.0 * r)) + s * r
}

/// Terraces `hm` in place (see the module docs). A flat map is left unchanged.
pub fn apply(hm: &mut Heightmap, p: &TerraceParams) -> Result<(), GenError> {
    p.validate()?;
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &h in hm.data.iter().filter(|h| h.is_finite()) {
        lo = lo.min(h);
        hi = hi.max(h);
    }
    if hi <= lo {
        return Ok(());
    }
    let (lo, range) = (lo as f64, hi as f64 - lo as f64);
    let steps = p.steps as f64;
    let s = p.smoothness as f64;
    hm.data.par_iter_mut().filter(|h| h.is_finite()).for_each(|h| {
        let t = ((*h as f64 - lo) / range * steps).clamp(0.0, steps);
        let k = t.floor();
        let q = k + profile(t - k, s);
        *h = (lo + range * q / steps) as f32;
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| (x + y * n) as f32 * 0.37 - 100.0).unwrap()
    }

    fn distinct(hm: &Heightmap) -> usize {
        let mut v: Vec<u32> = hm.data.iter().map(|h| h.to_bits()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    }

    #[test]
    fn hard_steps_give_at_most_steps_plus_one_plateaus() {
        for steps in [1, 2, 5, 8] {
            let mut hm = ramp(40);
            apply(&mut hm, &TerraceParams { steps, smoothness: 0.0 }).unwrap();
            let n = distinct(&hm);
            assert!(n <= steps as usize + 1, "{steps} steps gave {n} levels");
            assert!(n >= steps as usize, "{steps} steps gave only {n} levels");
        }
    }

    #[test]
    fn hard_levels_are_the_band_floors() {
        // Range 0..10, 5 steps → levels 0, 2, 4, 6, 8, 10.
        let mut hm = Heightmap::from_data(6, 1, 1.0, vec![0.0, 1.9, 2.0, 5.5, 9.99, 10.0]).unwrap();
        apply(&mut hm, &TerraceParams { steps: 5, smoothness: 0.0 }).unwrap();
        assert_eq!(hm.data, vec![0.0, 0.0, 2.0, 4.0, 8.0, 10.0]);
    }

    #[test]
    fn smoothness_one_changes_nothing() {
        let orig = ramp(20);
        let mut hm = orig.clone();
        apply(&mut hm, &TerraceParams { steps: 7, smoothness: 1.0 }).unwrap();
        for (a, b) in orig.data.iter().zip(&hm.data) {
            assert!((a - b).abs() < 1e-3, "{a} vs {b}");
        }
    }

    #[test]
    fn smooth_terraces_are_monotone_continuous_and_keep_the_range() {
        let orig = ramp(30);
        let mut hm = orig.clone();
        apply(&mut hm, &TerraceParams { steps: 6, smoothness: 0.3 }).unwrap();
        // The ramp is increasing in data order; terracing must keep it non-decreasing.
        for w in hm.data.windows(2) {
            assert!(w[1] >= w[0] - 1e-3);
        }
        let (a, b) = (orig.stats(), hm.stats());
        assert!((a.min - b.min).abs() < 1e-3 && (a.max - b.max).abs() < 1e-3);
        // A continuous profile: no jump bigger than the riser allows.
        for k in 0..1000 {
            let f = k as f64 / 1000.0;
            assert!((profile(f + 1e-4, 0.3) - profile(f, 0.3)).abs() < 0.01);
        }
        assert_eq!(profile(0.0, 0.3), 0.0);
        assert!((profile(1.0, 0.3) - 1.0).abs() < 1e-12);
        // Part of each step is flat.
        assert_eq!(profile(0.5, 0.3), 0.0);
    }

    #[test]
    fn flat_and_non_finite_maps_are_safe() {
        let mut flat = Heightmap::filled(4, 4, 1.0, 3.0).unwrap();
        apply(&mut flat, &TerraceParams::default()).unwrap();
        assert!(flat.data.iter().all(|&h| h == 3.0));
        let mut hm = Heightmap::from_data(3, 1, 1.0, vec![f32::NAN, 1.0, 5.0]).unwrap();
        apply(&mut hm, &TerraceParams { steps: 2, smoothness: 0.0 }).unwrap();
        assert!(hm.data[0].is_nan());
        assert_eq!(&hm.data[1..], &[1.0, 5.0]);
    }

    #[test]
    fn rejects_bad_params() {
        let mut hm = ramp(4);
        for p in [
            TerraceParams { steps: 0, smoothness: 0.5 },
            TerraceParams { steps: 5000, smoothness: 0.5 },
            TerraceParams { steps: 4, smoothness: -0.1 },
            TerraceParams { steps: 4, smoothness: 1.5 },
            TerraceParams { steps: 4, smoothness: f32::NAN },
        ] {
            assert!(matches!(apply(&mut hm, &p), Err(GenError::BadParam { .. })), "{p:?}");
        }
        assert_eq!(hm, ramp(4));
    }
}
