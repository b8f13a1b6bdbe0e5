//! Edge post-processing: seed 004's island filter, a radial falloff, and sea level (seeds 004, 001).
//!
//! ## Island filter (seed 004, `IslandFilter`)
//! Every node within `waterside_m` metres of the border is pulled towards 0 in proportion to how
//! deep it lies in that band:
//!
//! ```text
//! h' = h − h · (waterside_m − d) / waterside_m        for d < waterside_m,   h' = h otherwise
//! ```
//!
//! * [`IslandMode::Symmetric`] — `d = min(x, y, width−1−x, height−1−y) · Δx`, the distance in
//!   metres to the nearest border node. All four borders go to exactly 0, and the band is the
//!   same strip of land at any resolution.
//! * [`IslandMode::Seed004`] — the seed's C++ loop reproduced operation by operation, in `f32`,
//!   with `i = x`, `j = y`, `max_x = width`, `max_y = height` and `uw = round(waterside_m / Δx)`
//!   nodes (a grid algorithm: the band is rounded to whole nodes). Its behaviour differs from the
//!   clean formula in ways that are kept on purpose:
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
//!   The one deviation: with `uw = 0` the C++ divides by zero on maps taller than wide; here
//!   `uw = 0` (a band under half a node) leaves the map unchanged in both modes.
//!
//! `waterside_m` is at most `max(width, height) · Δx` (checked when the filter runs). Version 1
//! gave the band in nodes (`waterside`); [`IslandFilterParams::upgrade_units`] multiplies by the
//! map's cell size. Default 200 m: seed 004's 100 nodes on the default island's 2 m grid.
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
//! that a chosen fraction `coverage` of the map's area lies below `level`, and underwater nodes
//! can be clamped to a minimum depth.
//!
//! The area a node stands for is its trapezoid weight `ω` (1 inside, ½ on an edge, ¼ in a corner,
//! of a cell `Δx²`), so the fraction is that of the extent itself and a coarse map, whose edges
//! hold a larger share of its nodes, is shifted like a fine one:
//!
//! ```text
//! T = the height with Σ_{h_i < T} ω_i ≈ coverage · Σ_i ω_i        h' = h + (level − T)
//! ```
//!
//! (Version 1 counted nodes, `round(coverage · n)` of them below `level`; on the default island
//! the two thresholds differ by about 0.3 m, on a 129² map by about 2 m.)
//!
//! | stage | parameter | unit | default |
//! |---|---|---|---|
//! | island filter | `waterside_m` | m | 200 |
//! | radial falloff | `radius`, `width` | fractions of the half-extent | 0.7, 0.3 |
//! | radial falloff | `depth` | m | 0 |
//! | sea level | `level`, `seabed_depth` | m | 0, none |
//! | sea level | `coverage` | fraction of the map's area | none |

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{GenError, check};
use crate::core::heightmap::Heightmap;
use crate::core::rank::Ranks;
use crate::core::units::Sampling;

crate::param_enum! {
    /// Which island filter formula to use.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum IslandMode {
        /// Seed 004's C++ loop, quirks included (see the module docs).
        Seed004,
        /// `h' = h·d/waterside_m` with `d` the distance (m) to the nearest of the four borders.
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
        /// Width of the sunken band along the border, metres, at most `max(width, height)` nodes' worth
        /// (0 = off). Default 200 m: seed 004's `_underwater_size` of 100 nodes on the default island's
        /// 2 m grid (version 1: `waterside`, nodes).
        pub waterside_m: f32 = 200.0, unit "m", range [0.0, 1e9], legacy waterside: u32;
        /// Formula.
        pub mode: IslandMode = IslandMode::Symmetric;
    }
}

impl IslandFilterParams {
    /// Converts a version-1 band (nodes) made for a map of this cell size (metres) into metres.
    pub fn upgrade_units(&mut self, cell_size: f32) {
        if let Some(w) = self.waterside.take() {
            self.waterside_m = Sampling::new(cell_size).metres(w as f64) as f32;
        }
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
    p.check_ranges()?;
    let s = Sampling::of(hm);
    let side = s.metres(hm.width.max(hm.height) as f64);
    // A little slack so a version-1 band of `max(width, height)` nodes, converted, still fits.
    let side = side * (1.0 + 1e-6);
    check("island.waterside_m", p.waterside_m as f64, 0.0, side, "0..=max(width, height) nodes' worth, m")?;
    let (w, h) = (hm.width, hm.height);
    let band = p.waterside_m as f64;
    // Seed 004's loop runs on whole nodes.
    let uw = s.nodes(band).round() as i64;
    if band == 0.0 || (p.mode == IslandMode::Seed004 && uw == 0) {
        return Ok(());
    }
    let mode = p.mode;
    let cell = s.cell_size;
    hm.data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            *v = match mode {
                IslandMode::Seed004 => seed004_node(*v, x as i64, y as i64, w as i64, h as i64, uw),
                IslandMode::Symmetric => {
                    let d = x.min(y).min(w - 1 - x).min(h - 1 - y) as f64 * cell;
                    if d < band { *v - *v * ((band - d) / band) as f32 } else { *v }
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
        /// If set, shift all heights so that this fraction of the map's area lies strictly below `level`
        /// (nodes weighted by the area they stand for: ½ on an edge, ¼ in a corner). Default: no shift.
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

/// A threshold `T` with exactly `k` of the finite values `r` counts below it, unless values tie
/// at it: midway between the values of ranks `k − 1` and `k` in [`f32::total_cmp`] order (the
/// order statistics are counted in parallel, [`Ranks`]; the bits are a selection's).
fn threshold_below(r: &Ranks, k: usize) -> f32 {
    let n = r.len();
    if k == 0 {
        return r.values([0])[0];
    }
    if k >= n {
        return r.values([n - 1])[0].next_up();
    }
    // The (k+1)-th smallest, and the largest of the k smallest below it.
    let [lo, hi] = r.values([k - 1, k]);
    // Midpoint, but never equal to lo (lo must stay below the threshold).
    let mid = lo + (hi - lo) * 0.5;
    if mid > lo { mid } else { hi }
}

/// Four times the trapezoid weight of node `(x, y)` of a `w × h` map: 4 inside, 2 on an edge,
/// 1 in a corner (an axis of one node counts as inside).
fn weight4(x: usize, y: usize, w: usize, h: usize) -> u64 {
    let axis = |i: usize, n: usize| if n > 1 && (i == 0 || i == n - 1) { 1 } else { 2 };
    axis(x, w) * axis(y, h)
}

/// The height threshold `T` such that the finite heights below it cover `coverage` of the map's
/// area, each node weighted by the area it stands for ([`weight4`]), to within one node (exactly
/// so unless heights tie). `None` if there are no finite heights.
///
/// Only border nodes weigh less than 4, so with `c(T)` the number of heights below `T` and `d(T)`
/// the weight the border nodes below `T` lack, the weighted count is `4·c(T) − d(T)`. Starting
/// from `c = K/4` (`K` the target), `c ← round((K + d(T_c)) / 4)` rises to its fixed point in a
/// few selections (`d` only counts border nodes).
fn coverage_threshold(hm: &Heightmap, coverage: f32) -> Option<f32> {
    let (w, h) = (hm.width, hm.height);
    let ranks = Ranks::finite(&hm.data);
    let n = ranks.len();
    if n == 0 {
        return None;
    }
    // The border nodes, by height, with the weight each lacks (4 − weight4).
    let mut border: Vec<(f32, u64)> = Vec::with_capacity(2 * (w + h));
    let mut at = Vec::with_capacity(2 * (w + h));
    for x in 0..w {
        at.push((x, 0));
        if h > 1 {
            at.push((x, h - 1));
        }
    }
    for y in 1..h.saturating_sub(1) {
        at.push((0, y));
        if w > 1 {
            at.push((w - 1, y));
        }
    }
    for (x, y) in at {
        let lack = 4 - weight4(x, y, w, h);
        let z = hm.get(x, y);
        if lack > 0 && z.is_finite() {
            border.push((z, lack));
        }
    }
    border.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut lack_below = Vec::with_capacity(border.len() + 1);
    lack_below.push(0u64);
    for &(_, l) in &border {
        lack_below.push(lack_below.last().expect("non-empty") + l);
    }
    let lack_under = |t: f32| lack_below[border.partition_point(|b| b.0 < t)];
    let total = 4 * n as u64 - lack_below.last().expect("non-empty");
    let k = (coverage as f64 * total as f64).round();
    let mut c = ((k / 4.0).round() as usize).min(n);
    let mut t = threshold_below(&ranks, c);
    for _ in 0..32 {
        let next = (((k + lack_under(t) as f64) / 4.0).round() as usize).min(n);
        if next == c {
            break;
        }
        c = next;
        t = threshold_below(&ranks, c);
    }
    Some(t)
}

/// Applies the sea-level stage: optional coverage shift, then optional seabed clamp.
pub fn apply_sea_level(hm: &mut Heightmap, p: &SeaLevelParams) -> Result<(), GenError> {
    apply_sea_level_with(hm, p, None).map(|_| ())
}

/// [`apply_sea_level`] with the coverage's shift given (`Some`: the shift another grid of the same
/// world found, so both put the sea at the same heights) or found on this map (`None`). Returns
/// the shift applied (`None` when the coverage is off or the map has no finite height).
pub fn apply_sea_level_with(
    hm: &mut Heightmap,
    p: &SeaLevelParams,
    shift: Option<f32>,
) -> Result<Option<f32>, GenError> {
    p.validate()?;
    let shift = match (p.coverage, shift) {
        (None, _) => None,
        (Some(_), Some(s)) => Some(s),
        (Some(c), None) => coverage_threshold(hm, c).map(|t| p.level - t),
    };
    if let Some(shift) = shift
        && shift.is_finite()
        && shift != 0.0
    {
        hm.data.par_iter_mut().for_each(|h| *h += shift);
    }
    if let Some(d) = p.seabed_depth {
        let floor = p.level - d;
        hm.data.par_iter_mut().for_each(|h| {
            if *h < p.level && *h < floor {
                *h = floor;
            }
        });
    }
    Ok(shift)
}

/// `true` for every node strictly below `level` (water), row-major like the map.
pub fn water_mask(hm: &Heightmap, level: f32) -> Vec<bool> {
    hm.data.iter().map(|&h| h < level).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`threshold_below`] before #36: a serial selection on a copy of the finite values.
    fn threshold_below_serial(v: &mut [f32], k: usize) -> f32 {
        let n = v.len();
        if k == 0 {
            return *v.iter().min_by(|a, b| a.total_cmp(b)).expect("non-empty");
        }
        if k >= n {
            let top = *v.iter().max_by(|a, b| a.total_cmp(b)).expect("non-empty");
            return top.next_up();
        }
        let (below, kth, _) = v.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
        let hi = *kth;
        let lo = *below.iter().max_by(|a, b| a.total_cmp(b)).expect("k >= 1");
        let mid = lo + (hi - lo) * 0.5;
        if mid > lo { mid } else { hi }
    }

    #[test]
    fn the_counted_threshold_is_the_selections_bits() {
        // Ties, signed zeros, a NaN and an infinity (not finite: left out), tiny steps.
        let data: Vec<f32> = (0..5000)
            .map(|i| match i % 11 {
                0 => -0.0,
                1 => 0.0,
                2 if i == 2 => f32::NAN,
                3 if i == 3 => f32::INFINITY,
                _ => ((i * 7919 % 101) as f32 - 50.0) * 0.25 + (i % 3) as f32 * 1e-7,
            })
            .collect();
        let mut finite: Vec<f32> = data.iter().copied().filter(|x| x.is_finite()).collect();
        let ranks = Ranks::finite(&data);
        for k in (0..=finite.len() + 1).step_by(7).chain([1, finite.len() - 1, finite.len()]) {
            let want = threshold_below_serial(&mut finite, k);
            assert_eq!(threshold_below(&ranks, k).to_bits(), want.to_bits(), "k = {k}");
        }
    }

    /// Seed-order view: `grid[i][j]` = node (x = i, y = j).
    fn by_ij(hm: &Heightmap) -> Vec<Vec<f32>> {
        (0..hm.width).map(|i| (0..hm.height).map(|j| hm.get(i, j)).collect()).collect()
    }

    fn seed(w: usize, h: usize, uw: u32, value: f32) -> Heightmap {
        let mut hm = Heightmap::filled(w, h, 1.0, value).unwrap();
        island_filter(
            &mut hm,
            &IslandFilterParams { waterside_m: uw as f32, mode: IslandMode::Seed004, ..Default::default() },
        )
        .unwrap();
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
        island_filter(
            &mut hm,
            &IslandFilterParams { waterside_m: 3.0, mode: IslandMode::Symmetric, ..Default::default() },
        )
        .unwrap();
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
            island_filter(&mut hm, &IslandFilterParams { waterside_m: 0.0, mode, ..Default::default() }).unwrap();
            assert_eq!(hm, orig);
            let r = island_filter(&mut hm, &IslandFilterParams { waterside_m: 10.0, mode, ..Default::default() });
            assert!(matches!(r, Err(GenError::BadParam { .. })));
            // The largest allowed band works and stays finite.
            island_filter(&mut hm, &IslandFilterParams { waterside_m: 9.0, mode, ..Default::default() }).unwrap();
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
            // The wet share of the area (nodes weighted ¼ in the corners, ½ on the edges), to
            // within one node.
            let wet: u64 = water_mask(&hm, 3.0)
                .iter()
                .enumerate()
                .filter(|(_, w)| **w)
                .map(|(i, _)| weight4(i % 20, i / 20, 20, 20))
                .sum();
            let want = (c as f64 * 4.0 * 19.0 * 19.0).round() as u64;
            assert!(wet.abs_diff(want) <= 4, "coverage {c}: {wet} wet, want {want}");
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

    #[test]
    fn the_band_is_in_metres() {
        // A 40 m band sinks the same strip at 2 m and at 0.5 m; version 1's 20 nodes at 2 m is it.
        let band = |w: usize, cell: f32| {
            let mut hm = Heightmap::filled(w, w, cell, 10.0).unwrap();
            island_filter(&mut hm, &IslandFilterParams { waterside_m: 40.0, ..Default::default() }).unwrap();
            hm
        };
        let (coarse, fine) = (band(65, 2.0), band(257, 0.5));
        for y in 0..65 {
            for x in 0..65 {
                assert!((coarse.get(x, y) - fine.get(4 * x, 4 * y)).abs() < 1e-5, "({x}, {y})");
            }
        }
        assert_eq!(coarse.get(10, 32), 5.0);
        let mut v1: IslandFilterParams = ron::from_str("(waterside: 20, mode: Seed004)").unwrap();
        v1.upgrade_units(2.0);
        assert_eq!((v1.waterside, v1.waterside_m, v1.mode), (None, 40.0, IslandMode::Seed004));
        // Seed 004's loop rounds the band to whole nodes, and a band under half a node is off.
        let mut hm = Heightmap::filled(9, 9, 2.0, 1.0).unwrap();
        island_filter(
            &mut hm,
            &IslandFilterParams { waterside_m: 0.9, mode: IslandMode::Seed004, ..Default::default() },
        )
        .unwrap();
        assert!(hm.data.iter().all(|&h| h == 1.0));
        assert!(island_filter(&mut hm, &IslandFilterParams { waterside_m: f32::NAN, ..Default::default() }).is_err());
    }

    #[test]
    fn coverage_is_a_share_of_the_area_at_any_resolution() {
        // h = x (metres) over a 64 m square at 4 m and at 1 m: the share of the area below T is
        // T / 64, so the shift is −64·c to within half a node at either spacing.
        for c in [0.1f32, 0.25, 0.37, 0.5, 0.8, 0.95] {
            for (n, cell) in [(17usize, 4.0f32), (65, 1.0)] {
                let mut hm = Heightmap::from_fn(n, n, cell, |x, _| x as f32 * cell).unwrap();
                let p = SeaLevelParams { level: 0.0, coverage: Some(c), seabed_depth: None };
                apply_sea_level(&mut hm, &p).unwrap();
                let got = -hm.get(0, 0);
                assert!((got - 64.0 * c).abs() <= cell * 0.5 + 1e-3, "{c} at {cell} m: threshold {got}");
            }
        }
        // Thin maps and non-finite heights are fine.
        for (w, h) in [(1, 1), (1, 9), (9, 1), (2, 2)] {
            let mut hm =
                Heightmap::from_fn(w, h, 1.0, |x, y| if x + y == 1 { f32::NAN } else { (x + 3 * y) as f32 }).unwrap();
            let p = SeaLevelParams { level: 0.0, coverage: Some(0.5), seabed_depth: None };
            apply_sea_level(&mut hm, &p).unwrap();
        }
    }
}
