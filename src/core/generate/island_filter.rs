//! Edge post-processing: seed 004's island filter, a radial falloff, and sea level (seeds 004, 001).
//!
//! ## Island filter (seed 004, `IslandFilter`)
//! Every node within `waterside` nodes of the border is pulled towards 0 in proportion to how
//! deep it lies in that band:
//!
//! ```text
//! h' = h − h · (waterside − d) / waterside        for d < waterside,   h' = h otherwise
//! ```
//!
//! * [`IslandMode::Symmetric`] — `d = min(x, y, width−1−x, height−1−y)`, the distance in nodes to
//!   the nearest border node. All four borders go to exactly 0.
//! * [`IslandMode::Seed004`] — the seed's C++ loop reproduced operation by operation, in `f32`,
//!   with `i = x`, `j = y`, `max_x = width`, `max_y = height`, `uw = waterside`. Its behaviour
//!   differs from the clean formula in ways that are kept on purpose:
//!   - the near sides use `d = i` or `j` (so they reach 0), but the far sides use
//!     `(i − far) / uw` with `far = max_x − uw`, so the last row/column is lowered only to
//!     `h / uw`, not to 0;
//!   - `far` is computed from `max_x` **for both axes**, so on a map taller than wide the far-y
//!     band is misplaced and its factor exceeds 1 (heights change sign) for `y ≥ width`;
//!   - the corner squares choose the nearer border with `i <= j` / `j < i` near the origin,
//!     `i > max_y − j` or `j > max_x − i` in the two mixed corners, and `i >= j` / `j > i` in the
//!     far corner (the last only when no other case fired);
//!   - every case is a separate `if`, each subtracting `h · factor` from the running result, so
//!     when `2·uw > width` several cases fire for one node and their factors add up.
//!
//!   The one deviation: with `waterside = 0` the C++ divides by zero on maps taller than wide;
//!   here `waterside = 0` leaves the map unchanged in both modes.
//!
//! ## Radial falloff
//! With the map's centre `c = ((W−1)/2, (H−1)/2)` and half-extents `e = ((W−1)/2, (H−1)/2)`,
//! the normalised elliptical radius is `r = |(p − c) / e|` (1 at the midpoints of the four edges,
//! √2 in the corners). Then
//!
//! ```text
//! t  = clamp((r − radius) / width, 0, 1)      f = (3t² − 2t³)^exponent
//! h' = h + (−depth − h) · f
//! ```
//!
//! so nodes inside `radius` are untouched and nodes beyond `radius + width` sit at `−depth`.
//!
//! ## Sea level (seed 001: "cells below a sea level are water"; seed 004's water plane)
//! Nodes strictly below `level` are water ([`water_mask`]). Optionally the whole map is shifted so
//! that a chosen fraction of nodes lies below `level`, and underwater nodes can be clamped to a
//! minimum depth.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{GenError, check};
use crate::core::heightmap::Heightmap;

crate::param_enum! {
    /// Which island filter formula to use.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum IslandMode {
        /// Seed 004's C++ loop, quirks included (see the module docs).
        Seed004,
        /// `h' = h·d/waterside` with `d` the distance to the nearest of the four borders.
        #[default]
        Symmetric,
    }
}

crate::params! {
    prefix "island.";
    /// Parameters of the island filter.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct IslandFilterParams {
        /// Width of the sunken band along the border, nodes, 0..=max(width, height) of the map (0 = off).
        /// Default: seed 004's `_underwater_size`.
        pub waterside: u32 = 100;
        /// Formula.
        pub mode: IslandMode = IslandMode::Symmetric;
    }
}

/// Seed 004's loop body for node `(i, j)` with height `h0`: returns the filtered height.
#[inline]
fn seed004_node(h0: f32, i: i64, j: i64, max_x: i64, max_y: i64, uw: i64) -> f32 {
    let max_xf = max_x as f32;
    let max_yf = max_y as f32;
    let uwf = uw as f32;
    let far = max_x - uw;
    let farf = far as f32;
    let (fi, fj) = (i as f32, j as f32);
    let near_i = (uwf - fi) / uwf;
    let near_j = (uwf - fj) / uwf;
    let far_i = -(farf - fi) / uwf;
    let far_j = -(farf - fj) / uwf;

    let mut r = h0;
    let mut done = false;
    if i < uw && j < uw {
        if i <= j {
            r -= h0 * near_i;
            done = true;
        }
        if j < i {
            r -= h0 * near_j;
            done = true;
        }
    }
    if i < uw && fj > farf {
        if fi > -(fj - max_yf) {
            r -= h0 * far_j;
        } else {
            r -= h0 * near_i;
        }
        done = true;
    }
    if j < uw && i > far {
        if fj > -(fi - max_xf) {
            r -= h0 * far_i;
        } else {
            r -= h0 * near_j;
        }
        done = true;
    }
    if i < uw && (j >= uw && j <= far) {
        r -= h0 * near_i;
        done = true;
    }
    if j < uw && (i >= uw && i <= far) {
        r -= h0 * near_j;
        done = true;
    }
    if i > far && (j >= uw && j <= far) {
        r -= h0 * far_i;
        done = true;
    }
    if j > far && (i >= uw && i <= far) {
        r -= h0 * far_j;
        done = true;
    }
    if !done && i > far && j > far {
        if i >= j {
            r -= h0 * far_i;
        }
        if j > i {
            r -= h0 * far_j;
        }
    }
    r
}

/// Seed 004's island filter (see the module docs for the two modes).
pub fn island_filter(hm: &mut Heightmap, p: &IslandFilterParams) -> Result<(), GenError> {
    let side = hm.width.max(hm.height) as f64;
    check("island.waterside", p.waterside as f64, 0.0, side, "0..=max(width, height) nodes")?;
    if p.waterside == 0 {
        return Ok(());
    }
    let (w, h) = (hm.width, hm.height);
    let uw = p.waterside as i64;
    let mode = p.mode;
    hm.data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            *v = match mode {
                IslandMode::Seed004 => seed004_node(*v, x as i64, y as i64, w as i64, h as i64, uw),
                IslandMode::Symmetric => {
                    let d = x.min(y).min(w - 1 - x).min(h - 1 - y) as i64;
                    if d < uw {
                        let uwf = uw as f32;
                        *v - *v * ((uwf - d as f32) / uwf)
                    } else {
                        *v
                    }
                }
            };
        }
    });
    Ok(())
}

crate::params! {
    prefix "falloff.";
    /// Parameters of the radial (elliptical) falloff.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct RadialFalloffParams {
        /// Where the falloff starts, as a fraction of the half-size of the map along each axis (1 = the
        /// midpoints of the edges, √2 ≈ 1.41 = the corners).
        pub radius: f32 = 0.7, range [0.0, 2.0];
        /// Width of the falloff ring in the same units.
        pub width: f32 = 0.3, range [1e-3, 2.0];
        /// Shape exponent applied to the smoothstep ramp(>1 keeps more land).
        pub exponent: f32 = 1.0, range [0.1, 10.0];
        /// Height the edge is pushed to is `−depth`, metres.
        pub depth: f32 = 0.0, unit "m", range [0.0, 1e5];
    }
}

impl RadialFalloffParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), GenError> {
        Ok(self.check_ranges()?)
    }

    /// The blend weight `f ∈ [0, 1]` at normalised radius `r`.
    pub fn weight(&self, r: f32) -> f32 {
        let t = ((r - self.radius) / self.width).clamp(0.0, 1.0);
        (t * t * (3.0 - 2.0 * t)).powf(self.exponent)
    }
}

/// Pushes the map towards `−depth` outside an ellipse (see the module docs).
pub fn radial_falloff(hm: &mut Heightmap, p: &RadialFalloffParams) -> Result<(), GenError> {
    p.validate()?;
    let (w, h) = (hm.width, hm.height);
    let (cx, cy) = ((w as f32 - 1.0) * 0.5, (h as f32 - 1.0) * 0.5);
    let (ex, ey) = (cx.max(0.5), cy.max(0.5));
    let target = -p.depth;
    hm.data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        let dy = (y as f32 - cy) / ey;
        for (x, v) in row.iter_mut().enumerate() {
            let dx = (x as f32 - cx) / ex;
            let f = p.weight((dx * dx + dy * dy).sqrt());
            if f > 0.0 {
                *v += (target - *v) * f;
            }
        }
    });
    Ok(())
}

crate::params! {
    prefix "sea.";
    /// Parameters of the sea-level stage.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SeaLevelParams {
        /// Height of the water plane, metres.
        pub level: f32 = 0.0, unit "m", range [-1e6, 1e6];
        /// If set, shift all heights so that this fraction of nodes lies strictly below `level`. Default:
        /// no shift.
        pub coverage: Option<f32> = None, range [0.0, 1.0];
        /// If set, raise underwater nodes to at least `level − seabed_depth`, metres. Default: no clamp.
        pub seabed_depth: Option<f32> = None, unit "m", range [0.0, 1e6];
    }
}

impl SeaLevelParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), GenError> {
        self.check_ranges()?;
        Ok(())
    }
}

/// The height threshold `T` such that `round(coverage · n)` of the finite heights are `< T`
/// (exactly, unless heights tie at the threshold). `None` if there are no finite heights.
fn coverage_threshold(data: &[f32], coverage: f32) -> Option<f32> {
    let mut v: Vec<f32> = data.iter().copied().filter(|h| h.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return None;
    }
    let k = ((coverage as f64 * n as f64).round() as usize).min(n);
    if k == 0 {
        return Some(*v.iter().min_by(|a, b| a.total_cmp(b)).expect("non-empty"));
    }
    if k == n {
        let top = *v.iter().max_by(|a, b| a.total_cmp(b)).expect("non-empty");
        return Some(top.next_up());
    }
    // v[k] is the (k+1)-th smallest; the k smallest lie before it.
    let (below, kth, _) = v.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
    let hi = *kth;
    let lo = *below.iter().max_by(|a, b| a.total_cmp(b)).expect("k >= 1");
    // Midpoint, but never equal to lo (lo must stay below the threshold).
    let mid = lo + (hi - lo) * 0.5;
    Some(if mid > lo { mid } else { hi })
}

/// Applies the sea-level stage: optional coverage shift, then optional seabed clamp.
pub fn apply_sea_level(hm: &mut Heightmap, p: &SeaLevelParams) -> Result<(), GenError> {
    p.validate()?;
    if let Some(c) = p.coverage
        && let Some(t) = coverage_threshold(&hm.data, c)
    {
        let shift = p.level - t;
        if shift.is_finite() && shift != 0.0 {
            hm.data.par_iter_mut().for_each(|h| *h += shift);
        }
    }
    if let Some(d) = p.seabed_depth {
        let floor = p.level - d;
        hm.data.par_iter_mut().for_each(|h| {
            if *h < p.level && *h < floor {
                *h = floor;
            }
        });
    }
    Ok(())
}

/// `true` for every node strictly below `level` (water), row-major like the map.
pub fn water_mask(hm: &Heightmap, level: f32) -> Vec<bool> {
    hm.data.iter().map(|&h| h < level).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed-order view: `grid[i][j]` = node (x = i, y = j).
    fn by_ij(hm: &Heightmap) -> Vec<Vec<f32>> {
        (0..hm.width).map(|i| (0..hm.height).map(|j| hm.get(i, j)).collect()).collect()
    }

    fn seed(w: usize, h: usize, uw: u32, value: f32) -> Heightmap {
        let mut hm = Heightmap::filled(w, h, 1.0, value).unwrap();
        island_filter(&mut hm, &IslandFilterParams { waterside: uw, mode: IslandMode::Seed004 }).unwrap();
        hm
    }

    #[test]
    fn seed004_matches_hand_computed_5x5() {
        // Worked through the C++ by hand: uw = 2, far_uw_side = 5 − 2 = 3. Near sides use
        // (2 − i)/2 → 0 at the border; far sides use (i − 3)/2 → 0.5 at the border; (4, 0) takes
        // the `else` branch of the (j < uw && i > far) case: (2 − 0)/2 = 1.
        let hm = seed(5, 5, 2, 1.0);
        let want = vec![
            vec![0.0, 0.0, 0.0, 0.0, 0.0],
            vec![0.0, 0.5, 0.5, 0.5, 0.5],
            vec![0.0, 0.5, 1.0, 1.0, 0.5],
            vec![0.0, 0.5, 1.0, 1.0, 0.5],
            vec![0.0, 0.5, 0.5, 0.5, 0.5],
        ];
        assert_eq!(by_ij(&hm), want);
        // Scales with h (every case is h·factor).
        let hm = seed(5, 5, 2, 8.0);
        assert_eq!(hm.get(1, 1), 4.0);
        assert_eq!(hm.get(4, 4), 4.0);
        assert_eq!(hm.get(0, 3), 0.0);
    }

    #[test]
    fn seed004_overlapping_cases_accumulate() {
        // 3×3 with uw = 3: far = 0, so node (1, 1) is hit by three cases, each subtracting
        // (3 − 1)/3 of the original height: 1 − 2/3 − 2/3 − 2/3 = −1 (in f32, in that order).
        let hm = seed(3, 3, 3, 1.0);
        let f = (3.0f32 - 1.0) / 3.0;
        let want11 = 1.0f32 - f - f - f;
        assert_eq!(hm.get(1, 1), want11);
        assert!((want11 + 1.0).abs() < 1e-6);
        // (0, 0): the corner case (i <= j) gives factor 1, then the (j < uw && i > far) case
        // does not fire (i = 0 is not > 0), nor (i < uw && j > far): → 0.
        assert_eq!(hm.get(0, 0), 0.0);
        // (2, 2): (i < uw && j > far) fires: i = 2 > −(2 − 3) = 1 → far factor −(0 − 2)/3;
        // (j < uw && i > far) fires: j = 2 > −(2 − 3) = 1 → far factor −(0 − 2)/3;
        // the corner (i < uw && j < uw) case fires too with i <= j: (3 − 2)/3.
        let near = (3.0f32 - 2.0) / 3.0;
        let farf = -(0.0f32 - 2.0) / 3.0;
        assert_eq!(hm.get(2, 2), 1.0f32 - near - farf - farf);
    }

    #[test]
    fn seed004_uses_width_for_the_far_y_side() {
        // 4 wide, 6 tall, uw = 1: far = 4 − 1 = 3 on both axes, so rows y = 4 and 5 (not just 5)
        // are in the far-y band, with factors (4 − 3)/1 = 1 and (5 − 3)/1 = 2.
        let hm = seed(4, 6, 1, 1.0);
        assert_eq!(hm.get(1, 4), 0.0);
        assert_eq!(hm.get(2, 5), -1.0);
        assert_eq!(hm.get(1, 2), 1.0);
        // Near sides reach 0.
        assert_eq!(hm.get(0, 2), 0.0);
        assert_eq!(hm.get(2, 0), 0.0);
    }

    #[test]
    fn symmetric_sinks_all_borders_to_zero_and_keeps_the_interior() {
        let mut hm = Heightmap::filled(9, 7, 1.0, 10.0).unwrap();
        island_filter(&mut hm, &IslandFilterParams { waterside: 3, mode: IslandMode::Symmetric }).unwrap();
        for y in 0..7 {
            for x in 0..9 {
                let d = x.min(y).min(8 - x).min(6 - y);
                let want = if d < 3 { 10.0 * d as f32 / 3.0 } else { 10.0 };
                assert!((hm.get(x, y) - want).abs() < 1e-5, "({x},{y}) {} vs {want}", hm.get(x, y));
                if d == 0 {
                    assert_eq!(hm.get(x, y), 0.0);
                }
            }
        }
    }

    #[test]
    fn island_filter_zero_is_identity_and_rejects_oversized_band() {
        let orig = Heightmap::from_fn(6, 9, 1.0, |x, y| (x * 3 + y) as f32).unwrap();
        for mode in [IslandMode::Seed004, IslandMode::Symmetric] {
            let mut hm = orig.clone();
            island_filter(&mut hm, &IslandFilterParams { waterside: 0, mode }).unwrap();
            assert_eq!(hm, orig);
            let r = island_filter(&mut hm, &IslandFilterParams { waterside: 10, mode });
            assert!(matches!(r, Err(GenError::BadParam { .. })));
            // The largest allowed band works and stays finite.
            island_filter(&mut hm, &IslandFilterParams { waterside: 9, mode }).unwrap();
            assert!(hm.all_finite());
        }
    }

    #[test]
    fn radial_falloff_keeps_the_centre_and_sinks_the_rim() {
        let mut hm = Heightmap::filled(41, 41, 1.0, 5.0).unwrap();
        let p = RadialFalloffParams { radius: 0.5, width: 0.4, exponent: 1.0, depth: 2.0 };
        radial_falloff(&mut hm, &p).unwrap();
        assert_eq!(hm.get(20, 20), 5.0);
        assert_eq!(hm.get(25, 20), 5.0); // r = 0.25
        assert_eq!(hm.get(0, 0), -2.0); // r = √2
        assert_eq!(hm.get(0, 20), -2.0); // r = 1 ≥ 0.9
        let mid = hm.get(20 + 14, 20); // r = 0.7, t = 0.5 → f = 0.5
        assert!((mid - 1.5).abs() < 1e-5, "{mid}");
        // Monotone along a ray.
        for x in 20..40 {
            assert!(hm.get(x + 1, 20) <= hm.get(x, 20));
        }
        // Exponent > 1 keeps more land at the same spot.
        let mut hm2 = Heightmap::filled(41, 41, 1.0, 5.0).unwrap();
        radial_falloff(&mut hm2, &RadialFalloffParams { exponent: 3.0, ..p.clone() }).unwrap();
        assert!(hm2.get(34, 20) > mid);
    }

    #[test]
    fn radial_falloff_handles_thin_maps_and_rejects_bad_params() {
        let mut hm = Heightmap::filled(1, 5, 1.0, 1.0).unwrap();
        radial_falloff(&mut hm, &RadialFalloffParams::default()).unwrap();
        assert!(hm.all_finite());
        assert_eq!(hm.get(0, 2), 1.0);
        assert!(hm.get(0, 0).abs() < 1e-5);
        for p in [
            RadialFalloffParams { radius: -0.1, ..RadialFalloffParams::default() },
            RadialFalloffParams { width: 0.0, ..RadialFalloffParams::default() },
            RadialFalloffParams { exponent: f32::NAN, ..RadialFalloffParams::default() },
            RadialFalloffParams { depth: f32::INFINITY, ..RadialFalloffParams::default() },
        ] {
            assert!(matches!(radial_falloff(&mut hm, &p), Err(GenError::BadParam { .. })));
        }
    }

    #[test]
    fn sea_level_coverage_shifts_to_the_requested_fraction() {
        let base = Heightmap::from_fn(20, 20, 1.0, |x, y| ((x * 7 + y * 13) % 23) as f32 + x as f32 * 0.01).unwrap();
        for c in [0.0, 0.1, 0.25, 0.5, 0.9, 1.0] {
            let mut hm = base.clone();
            let p = SeaLevelParams { level: 3.0, coverage: Some(c), seabed_depth: None };
            apply_sea_level(&mut hm, &p).unwrap();
            let wet = water_mask(&hm, 3.0).iter().filter(|&&w| w).count();
            let want = (c * 400.0).round() as usize;
            assert!(wet.abs_diff(want) <= 1, "coverage {c}: {wet} wet, want {want}");
            // A shift, nothing else: differences between nodes are kept.
            let d0 = base.data[5] - base.data[17];
            assert!(((hm.data[5] - hm.data[17]) - d0).abs() < 1e-3);
        }
    }

    #[test]
    fn seabed_clamp_and_mask() {
        let mut hm = Heightmap::from_data(5, 1, 1.0, vec![-50.0, -5.0, 0.0, 1.0, f32::NAN]).unwrap();
        apply_sea_level(&mut hm, &SeaLevelParams { level: 0.5, coverage: None, seabed_depth: Some(10.0) }).unwrap();
        assert_eq!(&hm.data[..4], &[-9.5, -5.0, 0.0, 1.0]);
        assert_eq!(water_mask(&hm, 0.5), vec![true, true, true, false, false]);
        for p in [
            SeaLevelParams { level: f32::NAN, ..SeaLevelParams::default() },
            SeaLevelParams { coverage: Some(1.5), ..SeaLevelParams::default() },
            SeaLevelParams { seabed_depth: Some(-1.0), ..SeaLevelParams::default() },
        ] {
            assert!(matches!(apply_sea_level(&mut hm, &p), Err(GenError::BadParam { .. })));
        }
        // Default: nothing happens.
        let before = hm.clone();
        apply_sea_level(&mut hm, &SeaLevelParams::default()).unwrap();
        assert_eq!(format!("{before:?}"), format!("{hm:?}"));
    }
}
