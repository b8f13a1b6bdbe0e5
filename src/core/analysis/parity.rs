//! Parity of a build with its preview (issue #26, item 3): does a terrain built at `N` nodes hold
//! the same landforms as the preview it was built from at `n` nodes?
//!
//! The build is first sampled back at the preview's nodes ([`every_kth`]: with
//! `N − 1 = k·(n − 1)`, every `k`-th node lies exactly on a preview node). Then, on the two maps
//! of `n` nodes:
//!
//! - **Heights**: both are smoothed with a Gaussian of `σ` nodes (default 2, so single-node
//!   detail that only the finer grid can hold does not count), and
//!   `RMS(G_σ * build − G_σ * preview) / relief`, with `relief = max − min` of the preview, is
//!   the height error (goal ≤ 2 %).
//! - **Channels**: D8 drainage area on the depression-filled surface ([`super::drainage`], sea and
//!   edges as outlets); a channel node is a land node with `A ≥ f · A_land` (`f` default 0.5 %
//!   of the preview's land area). A preview channel node *matches* when a build channel node lies
//!   within `r` nodes (Euclidean, default 2), and the other way round; both fractions are reported
//!   (goal ≥ 80 % each).
//!
//! The build's own quality (issue #13's bounds: pits and spikes, anisotropy, land lost) is measured
//! at the build's resolution with [`super::compare`].

use serde::Serialize;

use super::{AnalysisError, drainage};
use crate::core::Heightmap;
use crate::core::filter::gaussian_blur;

/// Tunables of [`parity`].
#[derive(Clone, Debug, Serialize)]
pub struct ParityParams {
    /// σ of the Gaussian both maps are smoothed with before the height error, preview nodes.
    pub sigma_nodes: f32,
    /// Drainage area from which a node is a channel, as a fraction of the preview's land area.
    pub channel_fraction: f64,
    /// Distance within which a channel node finds its match, preview nodes.
    pub match_radius: f32,
}

impl Default for ParityParams {
    fn default() -> Self {
        Self { sigma_nodes: 2.0, channel_fraction: 0.005, match_radius: 2.0 }
    }
}

/// What [`parity`] measured.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Parity {
    /// RMS of the smoothed height difference, metres.
    pub rms_m: f64,
    /// The preview's relief (max − min), metres.
    pub relief_m: f64,
    /// `rms_m / relief_m`.
    pub rms_fraction: f64,
    /// Largest smoothed height difference, metres.
    pub max_m: f64,
    /// The drainage area from which a node counts as a channel, m².
    pub channel_area_m2: f64,
    /// Channel nodes of the preview.
    pub preview_channels: usize,
    /// Channel nodes of the build (sampled at the preview's nodes).
    pub build_channels: usize,
    /// Fraction of the preview's channel nodes with a build channel node within the radius.
    pub preview_matched: f64,
    /// Fraction of the build's channel nodes with a preview channel node within the radius.
    pub build_matched: f64,
}

impl Parity {
    /// Whether the figures meet issue #26's goals: height error ≤ `max_rms` (0.02) of the relief
    /// and ≥ `min_match` (0.8) of the channel nodes matched both ways.
    pub fn meets(&self, max_rms: f64, min_match: f64) -> bool {
        self.rms_fraction <= max_rms && self.preview_matched >= min_match && self.build_matched >= min_match
    }
}

/// Every `k`-th node of `map` (from the first), with the cell size `k` times larger. With
/// `map.width − 1 = k·(n − 1)` the result has `n` nodes a side, one on each preview node.
pub fn every_kth(map: &Heightmap, k: usize) -> Heightmap {
    let k = k.max(1);
    let (w, h) = ((map.width - 1) / k + 1, (map.height - 1) / k + 1);
    let data = (0..w * h).map(|i| map.get((i % w) * k, (i / w) * k)).collect();
    Heightmap { width: w, height: h, cell_size: map.cell_size * k as f32, data }
}

/// Channel mask: land nodes with drainage area at least `a_min` m².
fn channels(hm: &Heightmap, sea: f32, a_min: f64) -> Vec<bool> {
    let dr = drainage(hm, sea);
    (0..hm.len()).map(|i| hm.data[i] > sea && dr.area[i] >= a_min).collect()
}

/// Fraction of the `true` nodes of `a` that have a `true` node of `b` within `r` nodes.
fn matched(a: &[bool], b: &[bool], w: usize, h: usize, r: f32) -> (usize, f64) {
    let ri = r.max(0.0).floor() as isize;
    let disk: Vec<(isize, isize)> = (-ri..=ri)
        .flat_map(|dy| (-ri..=ri).map(move |dx| (dx, dy)))
        .filter(|&(dx, dy)| ((dx * dx + dy * dy) as f32) <= r * r)
        .collect();
    let (mut n, mut hit) = (0usize, 0usize);
    for (i, &on) in a.iter().enumerate() {
        if !on {
            continue;
        }
        n += 1;
        let (x, y) = ((i % w) as isize, (i / w) as isize);
        if disk.iter().any(|&(dx, dy)| {
            let (nx, ny) = (x + dx, y + dy);
            nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h && b[ny as usize * w + nx as usize]
        }) {
            hit += 1;
        }
    }
    (n, if n > 0 { hit as f64 / n as f64 } else { 1.0 })
}

/// Compares `build` (already sampled at the preview's nodes, see [`every_kth`]) with `preview`
/// (see the module doc). Both must have the same size; `sea` is the sea level, metres.
pub fn parity(preview: &Heightmap, build: &Heightmap, sea: f32, p: &ParityParams) -> Result<Parity, AnalysisError> {
    if (preview.width, preview.height) != (build.width, build.height) {
        return Err(AnalysisError::SizeMismatch {
            a_w: preview.width,
            a_h: preview.height,
            b_w: build.width,
            b_h: build.height,
        });
    }
    if !preview.all_finite() || !build.all_finite() || !sea.is_finite() {
        return Err(AnalysisError::NonFinite);
    }
    let (w, h) = (preview.width, preview.height);
    let mut a = preview.data.clone();
    let mut b = build.data.clone();
    gaussian_blur(&mut a, w, h, p.sigma_nodes);
    gaussian_blur(&mut b, w, h, p.sigma_nodes);
    let (mut ss, mut max) = (0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(&b) {
        let d = (*y - *x) as f64;
        ss += d * d;
        max = max.max(d.abs());
    }
    let rms = (ss / a.len() as f64).sqrt();
    let s = preview.stats();
    let relief = (s.max - s.min) as f64;
    let land = preview.data.iter().filter(|&&v| v > sea).count();
    let cell = preview.cell_size as f64;
    let a_min = (p.channel_fraction * land as f64 * cell * cell).max(cell * cell);
    let ca = channels(preview, sea, a_min);
    let cb = channels(build, sea, a_min);
    let (na, fa) = matched(&ca, &cb, w, h, p.match_radius);
    let (nb, fb) = matched(&cb, &ca, w, h, p.match_radius);
    Ok(Parity {
        rms_m: rms,
        relief_m: relief,
        rms_fraction: if relief > 0.0 { rms / relief } else { 0.0 },
        max_m: max,
        channel_area_m2: a_min,
        preview_channels: na,
        build_channels: nb,
        preview_matched: fa,
        build_matched: fb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valley(w: usize, shift: f32) -> Heightmap {
        // A tilted plane with a V valley down the middle, draining to the sea at y = h−1.
        Heightmap::from_fn(w, w, 4.0, |x, y| {
            let c = (w as f32 - 1.0) * 0.5 + shift;
            10.0 + (x as f32 - c).abs() * 0.8 + (w - 1 - y) as f32 * 0.5 - 2.0
        })
        .unwrap()
    }

    #[test]
    fn a_map_matches_itself_and_every_kth_samples_the_preview_nodes() {
        let a = valley(65, 0.0);
        let p = parity(&a, &a, 0.0, &ParityParams::default()).unwrap();
        assert_eq!((p.rms_m, p.preview_matched, p.build_matched), (0.0, 1.0, 1.0));
        assert!(p.preview_channels > 10, "{p:?}");
        let fine = crate::core::resample::resample(&a, 257, 257).unwrap();
        let back = every_kth(&fine, 4);
        assert_eq!((back.width, back.cell_size), (65, 4.0));
        assert!(back.data.iter().zip(&a.data).all(|(x, y)| x == y));
    }

    #[test]
    fn a_moved_valley_is_caught_by_the_channels_and_a_raised_map_by_the_heights() {
        // On these planar flanks every node's area grows towards the valley: a higher threshold
        // keeps the channels to the valley floor.
        let pp = ParityParams { channel_fraction: 0.05, ..Default::default() };
        let a = valley(65, 0.0);
        let near = valley(65, 1.0);
        let p = parity(&a, &near, 0.0, &pp).unwrap();
        assert!(p.meets(0.02, 0.8), "a valley one node over still matches: {p:?}");
        let far = valley(65, 6.0);
        let p = parity(&a, &far, 0.0, &pp).unwrap();
        assert!(p.preview_matched < 0.5 && !p.meets(0.02, 0.8), "a valley 6 nodes over does not: {p:?}");
        let mut raised = a.clone();
        raised.data.iter_mut().for_each(|v| *v += 5.0);
        let p = parity(&a, &raised, 0.0, &ParityParams::default()).unwrap();
        assert!(p.rms_fraction > 0.02 && (p.rms_m - 5.0).abs() < 1e-3, "{p:?}");
        assert!(parity(&a, &valley(33, 0.0), 0.0, &ParityParams::default()).is_err());
    }
}
