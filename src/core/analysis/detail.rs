//! Fine relief and how far up the slopes the channels reach (issue #34): the two figures that say
//! whether a build holds the erosion detail its own cells can carry, or is the preview magnified.
//!
//! # Fine relief
//! The radially averaged power of the height at wavelengths of `λ ∈ [2, 4]` cells (finer than a
//! preview 4× coarser could hold), measured where the land is:
//!
//! 1. the map is cut into `W × W` windows (`W` = [`DetailParams::window`], default 256) at a stride
//!    of `W / 2`; only windows wholly on land (every node above the sea) are kept;
//! 2. each window's periodogram `P(k) = |F{w·(h − h̄)}(k)|²` after the radial Hann window of
//!    [`super::spectrum`] (no leakage along the axes);
//! 3. the mean of `P` over the frequencies whose wavelength `W / |f|` (in cells) lies in
//!    `[λ_min, λ_max]` ([`DetailParams::band_cells`]);
//! 4. the median over the windows: [`FineRelief::power`] (m², per frequency sample, at the
//!    window's size).
//!
//! The figure is meant to be read as a ratio: a build's over a native run's at the same size
//! (`talus build --detail REF`): both are measured with the same windows, so the units cancel.
//!
//! # Channel reach
//! Channels are the land nodes whose *specific* catchment area, the D8 drainage area on the
//! depression-filled surface per metre of contour width, `a = A / Δx`, is at least `a_c` metres
//! ([`DetailParams::reach_width_m`], default 250 m: 2 000 m² at 8 m cells). On a smooth slope
//! the flow is one node wide, so a node drains `A = L·Δx` and `a = L`, the slope length above it,
//! at any resolution: a resampled build (Upsample) starts its channels where its preview does.
//! Only where the flow converges into gullies narrower than the slope does `a` grow faster down
//! the slope, and a channel start higher up. So the drainage density of that network (channel
//! length per land area) and the median distance from a land node to its nearest channel
//! ([`ChannelReach::median_distance_m`]), held against the preview's and an Upsample build's, say
//! whether erosion made the channels reach further up the slopes: more density and a shorter
//! distance come from convergent flow that erosion carved, not from the finer grid.
//!
//! (A threshold on `A` alone in m² is biased the other way: a finer grid reaches it *later* down
//! a smooth slope, so a resampled build would show a sparser network than its preview.)

use serde::Serialize;

use super::spectrum::power_spectrum;
use super::{drainage, drainage_density};
use crate::core::heightmap::Heightmap;

/// Tunables of [`fine_relief`] and [`channel_reach`].
#[derive(Clone, Debug, Serialize)]
pub struct DetailParams {
    /// Window side, nodes (a power of two from 16; default 256).
    pub window: usize,
    /// Wavelength band, cells `[min, max]` (default `[2, 4]`).
    pub band_cells: [f64; 2],
    /// Specific catchment area a channel starts at: drainage area per metre of contour width, m
    /// (m²/m; default 250 m).
    pub reach_width_m: f64,
}

impl Default for DetailParams {
    fn default() -> Self {
        Self { window: 256, band_cells: [2.0, 4.0], reach_width_m: 250.0 }
    }
}

/// What [`fine_relief`] measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FineRelief {
    /// Median over the windows of the mean band power, m² per frequency sample.
    pub power: f64,
    /// Windows wholly on land that entered the median.
    pub windows: usize,
}

/// The fine relief of `map` (see the module doc); `None` when no window lies wholly on land.
pub fn fine_relief(map: &Heightmap, sea: f32, p: &DetailParams) -> Option<FineRelief> {
    let ws = p.window.max(16).next_power_of_two();
    let (w, h) = (map.width, map.height);
    if w < ws || h < ws {
        return None;
    }
    let stride = ws / 2;
    let starts = |n: usize| (0..=(n - ws) / stride).map(move |i| i * stride);
    let mut powers = Vec::new();
    let mut win = vec![0.0f32; ws * ws];
    for y0 in starts(h) {
        for x0 in starts(w) {
            let mut land = true;
            for y in 0..ws {
                let row = &map.data[(y0 + y) * w + x0..(y0 + y) * w + x0 + ws];
                if row.iter().any(|&v| v <= sea) {
                    land = false;
                    break;
                }
                win[y * ws..(y + 1) * ws].copy_from_slice(row);
            }
            if !land {
                continue;
            }
            let Some((n, power, _)) = power_spectrum(&win, ws, ws) else { continue };
            powers.push(band_mean(&power, n, p.band_cells));
        }
    }
    if powers.is_empty() {
        return None;
    }
    powers.sort_by(f64::total_cmp);
    let m = powers.len();
    let median = if m % 2 == 1 { powers[m / 2] } else { 0.5 * (powers[m / 2 - 1] + powers[m / 2]) };
    Some(FineRelief { power: median, windows: m })
}

/// Mean of an `n × n` periodogram over the frequencies whose wavelength `n / |f|` lies in `band`
/// cells.
fn band_mean(power: &[f64], n: usize, band: [f64; 2]) -> f64 {
    let (f_lo, f_hi) = (n as f64 / band[1].max(band[0]), n as f64 / band[0].min(band[1]).max(2.0));
    let signed = |k: usize| if k <= n / 2 { k as f64 } else { k as f64 - n as f64 };
    let (mut sum, mut count) = (0.0f64, 0usize);
    for ky in 0..n {
        let fy = signed(ky);
        for kx in 0..n {
            let fx = signed(kx);
            let f = (fx * fx + fy * fy).sqrt();
            if (f_lo..=f_hi).contains(&f) {
                sum += power[ky * n + kx];
                count += 1;
            }
        }
    }
    if count == 0 { 0.0 } else { sum / count as f64 }
}

/// What [`channel_reach`] measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChannelReach {
    /// The channel threshold: specific catchment area, m (m²/m).
    pub width_m: f64,
    /// Channel length per land area, 1/km.
    pub density_per_km: f64,
    /// Median distance from a land node to the nearest channel node, metres.
    pub median_distance_m: f64,
}

/// The channel network of `map` at its own resolution (see the module doc).
pub fn channel_reach(map: &Heightmap, sea: f32, p: &DetailParams) -> ChannelReach {
    let dr = drainage(map, sea);
    // `A / Δx ≥ a_c` is `A ≥ a_c·Δx`.
    let area = p.reach_width_m * map.cell_size as f64;
    let density = drainage_density(map, sea, &dr, area) * 1000.0;
    let (w, h) = (map.width, map.height);
    let channel: Vec<bool> = (0..map.len()).map(|i| map.data[i] > sea && dr.area[i] >= area).collect();
    let dist = distance_to(&channel, w, h);
    let mut d: Vec<f32> = (0..map.len()).filter(|&i| map.data[i] > sea).map(|i| dist[i]).collect();
    let median = if d.is_empty() {
        0.0
    } else {
        let m = d.len() / 2;
        d.select_nth_unstable_by(m, f32::total_cmp);
        d[m] as f64 * map.cell_size as f64
    };
    ChannelReach { width_m: p.reach_width_m, density_per_km: density, median_distance_m: median }
}

/// Distance in nodes from every node to the nearest `true` node (Euclidean, exact: two passes of
/// the 1-D lower envelope of parabolas, Felzenszwalb & Huttenlocher 2012); `f32::MAX` where there
/// is none.
fn distance_to(seed: &[bool], w: usize, h: usize) -> Vec<f32> {
    const INF: f64 = 1e20;
    let mut g = vec![INF; w * h];
    for (v, &s) in g.iter_mut().zip(seed) {
        if s {
            *v = 0.0;
        }
    }
    // The lower envelope of the parabolas `(q − p)² + f(p)` over the finite `f(p)`.
    let edt = |f: &[f64], out: &mut [f64]| {
        let n = f.len();
        let mut v = vec![0usize; n];
        let mut z = vec![0.0f64; n + 1];
        let mut k: Option<usize> = None;
        for q in 0..n {
            if f[q] >= INF {
                continue;
            }
            let fq = f[q] + (q * q) as f64;
            loop {
                let Some(kk) = k else {
                    k = Some(0);
                    v[0] = q;
                    z[0] = f64::NEG_INFINITY;
                    z[1] = f64::INFINITY;
                    break;
                };
                let p = v[kk];
                let s = (fq - (f[p] + (p * p) as f64)) / (2.0 * (q as f64 - p as f64));
                if s <= z[kk] {
                    // z[0] is −∞, so this never empties the envelope.
                    k = Some(kk - 1);
                    continue;
                }
                v[kk + 1] = q;
                z[kk + 1] = s;
                z[kk + 2] = f64::INFINITY;
                k = Some(kk + 1);
                break;
            }
        }
        if k.is_none() {
            out.fill(INF);
            return;
        }
        let mut kk = 0;
        for (q, o) in out.iter_mut().enumerate() {
            while z[kk + 1] < q as f64 {
                kk += 1;
            }
            let p = v[kk];
            *o = (q as f64 - p as f64).powi(2) + f[p];
        }
    };
    let mut col = vec![0.0f64; h];
    let mut out = vec![0.0f64; h.max(w)];
    for x in 0..w {
        for y in 0..h {
            col[y] = g[y * w + x];
        }
        edt(&col, &mut out[..h]);
        for y in 0..h {
            g[y * w + x] = out[y];
        }
    }
    let mut row = vec![0.0f64; w];
    for y in 0..h {
        row.copy_from_slice(&g[y * w..(y + 1) * w]);
        edt(&row, &mut out[..w]);
        g[y * w..(y + 1) * w].copy_from_slice(&out[..w]);
    }
    g.into_iter().map(|d| if d >= INF / 2.0 { f32::MAX } else { d.sqrt() as f32 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distance_transform_is_euclidean() {
        let (w, h) = (9, 7);
        let mut seed = vec![false; w * h];
        seed[3 * w + 4] = true;
        seed[0] = true;
        let d = distance_to(&seed, w, h);
        for y in 0..h {
            for x in 0..w {
                let a =
                    (((x as f32 - 4.0).powi(2) + (y as f32 - 3.0).powi(2)).sqrt()).min(((x * x + y * y) as f32).sqrt());
                assert!((d[y * w + x] - a).abs() < 1e-5, "({x}, {y}): {} vs {a}", d[y * w + x]);
            }
        }
        assert!(distance_to(&[false; 4], 2, 2).iter().all(|&v| v == f32::MAX));
    }

    #[test]
    fn fine_relief_sees_short_waves_and_ignores_long_ones_and_the_sea() {
        let n = 512;
        let wave = |period: f32, amp: f32| {
            let data = (0..n * n)
                .map(|i| {
                    let (x, y) = ((i % n) as f32, (i / n) as f32);
                    50.0 + amp * (2.0 * std::f32::consts::PI * (x + 0.7 * y) / period).sin()
                })
                .collect();
            Heightmap { width: n, height: n, cell_size: 1.0, data }
        };
        let p = DetailParams::default();
        let fine = fine_relief(&wave(3.0, 1.0), 0.0, &p).unwrap();
        let coarse = fine_relief(&wave(40.0, 1.0), 0.0, &p).unwrap();
        assert_eq!(fine.windows, 9);
        assert!(fine.power > 1e3 * coarse.power.max(1e-12), "{} vs {}", fine.power, coarse.power);
        // Twice the amplitude: four times the power.
        let twice = fine_relief(&wave(3.0, 2.0), 0.0, &p).unwrap();
        assert!((twice.power / fine.power - 4.0).abs() < 1e-6);
        // Under the sea: no window.
        let mut sea = wave(3.0, 1.0);
        sea.data.iter_mut().for_each(|v| *v -= 100.0);
        assert!(fine_relief(&sea, 0.0, &p).is_none());
    }

    /// A slope `extent` metres long falling to the sea along y, at `cell` metres, with `gullies`
    /// metres deep cut every 64 m across it (0: a plane with a faint cross-fall).
    fn slope(extent: f32, cell: f32, gullies: f32) -> Heightmap {
        let n = (extent / cell) as usize + 1;
        let data = (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32 * cell, (i / n) as f32 * cell);
                let cut = gullies * (std::f32::consts::PI * x / 64.0).sin().abs();
                0.1 * y + 0.001 * x - cut - 0.5
            })
            .collect();
        Heightmap { width: n, height: n, cell_size: cell, data }
    }

    #[test]
    fn channel_reach_is_the_same_on_a_plane_at_any_cell_and_climbs_into_gullies() {
        let p = DetailParams::default();
        // A plane 400 m long: the flow is one node wide and `A/Δx` is the slope length at any cell
        // size, so channels start 250 m down the slope at 4 m and at 2 m cells alike.
        let (a, b) = (channel_reach(&slope(400.0, 4.0, 0.0), 0.0, &p), channel_reach(&slope(400.0, 2.0, 0.0), 0.0, &p));
        assert!(
            a.median_distance_m > 20.0 && (a.median_distance_m - b.median_distance_m).abs() <= 4.0,
            "{a:?} vs {b:?}"
        );
        // Gullies gather the flow of their 64 m: channels start higher up, so the land is nearer one.
        let g = channel_reach(&slope(400.0, 2.0, 3.0), 0.0, &p);
        assert!(g.median_distance_m < 0.5 * b.median_distance_m, "{g:?} vs {b:?}");
    }
}
