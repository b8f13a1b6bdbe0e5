//! Grid anisotropy from the 2-D power spectrum (issue #13, items 2 and 6).
//!
//! Erosion on a grid can leave streaks along the grid axes (D8 stripes, pipe-model streaks) or
//! the diagonals. Such streaks put power near the `k_x = 0` / `k_y = 0` axes (or the `|k_x| =
//! |k_y|` diagonals) of the power spectrum `P(k) = |F{w·(h − h̄)}(k)|²` (the periodogram, e.g.
//! Perron, Kirchner & Dietrich 2008, "Spectral signatures of characteristic spatial scales and
//! nonfractal structure in landscapes", JGR 113, F04003, §2), while natural terrain is close to
//! isotropic at a given wavelength.
//!
//! # Steps
//! 1. **Window.** `w(r) = ½ (1 + cos(π r / R))` for `r < R`, 0 beyond: a *radial* Hann window
//!    centred on the map, `R` = half the shorter side. A separable (x·y) Hann window would leak
//!    power along the axes itself; the radial one leaks the same in every direction. The windowed
//!    mean `h̄ = Σ w h / Σ w` is removed first.
//! 2. **FFT.** Zero-padded to `N × N`, `N` the next power of two ≥ the longer side, then an
//!    iterative radix-2 Cooley–Tukey FFT over rows and columns (f64). 513² takes tens of ms.
//! 3. **Directions.** Each frequency `(f_x, f_y)` (cycles per `N` nodes, `|f| ≤ N/2` so all
//!    directions are sampled alike) has the angle `a = atan2(|f_y|, |f_x|)` ∈ [0°, 90°]: *axis*
//!    when `a ≤ δ` or `a ≥ 90° − δ`, *diagonal* when `|a − 45°| ≤ δ`, *other* otherwise
//!    (`δ` = [`AnisotropyParams::half_width_deg`]).
//! 4. **Bands.** Radii from `ρ_min = m·N/(2R)` (wavelengths longer than the window diameter over
//!    `m` = [`AnisotropyParams::min_wavenumber`] are left out: they hold the map's overall shape,
//!    not texture) to the Nyquist radius `N/2` are cut into [`AnisotropyParams::bands`]
//!    logarithmically equal bands. In each band with at least 4 samples in every class, the ratio
//!    `r_b = mean P(axis) / mean P(other)` (and likewise for diagonals).
//! 5. **Ratio.** The geometric mean of `r_b` over the bands: every wavelength band weighs the
//!    same, whatever its total power (terrain spectra fall by orders of magnitude with `|k|`).
//!
//! An isotropic field gives ≈ 1 for both; 1.5 is the limit for "no grid artifacts".

use serde::Serialize;

use super::AnalysisError;

/// Tunables of [`anisotropy`].
#[derive(Clone, Debug, Serialize)]
pub struct AnisotropyParams {
    /// Half-width of the axis and diagonal wedges, degrees (0.5…20; default 5).
    pub half_width_deg: f64,
    /// Longest wavelength kept, as wavenumbers per window diameter (≥ 1; default 4: wavelengths
    /// over a quarter of the window are left out).
    pub min_wavenumber: f64,
    /// Number of log-spaced radial bands (1…64; default 8).
    pub bands: usize,
}

impl Default for AnisotropyParams {
    fn default() -> Self {
        Self { half_width_deg: 5.0, min_wavenumber: 4.0, bands: 8 }
    }
}

impl AnisotropyParams {
    /// Checks every tunable against its documented range.
    pub fn validate(&self) -> Result<(), AnalysisError> {
        use crate::core::params::check;
        check("anisotropy.half_width_deg", self.half_width_deg, 0.5, 20.0, "0.5…20°")?;
        check("anisotropy.min_wavenumber", self.min_wavenumber, 1.0, f64::MAX, "≥ 1")?;
        check("anisotropy.bands", self.bands as f64, 1.0, 64.0, "1…64")?;
        Ok(())
    }
}

/// Power along the axes and the diagonals over power in other directions (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Anisotropy {
    /// Axis power / other power, geometric mean over the bands.
    pub axis_ratio: f64,
    /// Diagonal power / other power, geometric mean over the bands.
    pub diagonal_ratio: f64,
    /// Bands that entered the means.
    pub bands: usize,
}

/// In-place radix-2 FFT of `re + i·im` (length a power of two).
fn fft(re: &mut [f64], im: &mut [f64]) {
    let n = re.len();
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let ang = -2.0 * std::f64::consts::PI / len as f64;
        let (wr, wi) = (ang.cos(), ang.sin());
        for start in (0..n).step_by(len) {
            let (mut cr, mut ci) = (1.0f64, 0.0f64);
            for k in 0..len / 2 {
                let (a, b) = (start + k, start + k + len / 2);
                let (tr, ti) = (re[b] * cr - im[b] * ci, re[b] * ci + im[b] * cr);
                re[b] = re[a] - tr;
                im[b] = im[a] - ti;
                re[a] += tr;
                im[a] += ti;
                let nr = cr * wr - ci * wi;
                ci = cr * wi + ci * wr;
                cr = nr;
            }
        }
        len <<= 1;
    }
}

/// The power spectrum `|F|²` of `data` (`w × h`, row-major) after the radial Hann window, on an
/// `N × N` grid; returns `(N, power, R)`. `None` for maps under 8 nodes a side or without variance.
pub(super) fn power_spectrum(data: &[f32], w: usize, h: usize) -> Option<(usize, Vec<f64>, f64)> {
    if w < 8 || h < 8 || data.len() != w * h {
        return None;
    }
    let n = w.max(h).next_power_of_two();
    let (cx, cy) = ((w - 1) as f64 / 2.0, (h - 1) as f64 / 2.0);
    let r_win = w.min(h) as f64 / 2.0;
    let win = |x: usize, y: usize| {
        let r = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
        if r < r_win { 0.5 * (1.0 + (std::f64::consts::PI * r / r_win).cos()) } else { 0.0 }
    };
    let (mut sw, mut swh) = (0.0, 0.0);
    for y in 0..h {
        for x in 0..w {
            let wt = win(x, y);
            sw += wt;
            swh += wt * data[y * w + x] as f64;
        }
    }
    let mean = swh / sw;
    let mut re = vec![0.0f64; n * n];
    let mut im = vec![0.0f64; n * n];
    for y in 0..h {
        for x in 0..w {
            re[y * n + x] = (data[y * w + x] as f64 - mean) * win(x, y);
        }
    }
    if re.iter().all(|v| v.abs() <= 1e-9 * (1.0 + mean.abs())) {
        return None;
    }
    for row in 0..n {
        fft(&mut re[row * n..(row + 1) * n], &mut im[row * n..(row + 1) * n]);
    }
    let (mut cr, mut ci) = (vec![0.0f64; n], vec![0.0f64; n]);
    for col in 0..n {
        for r in 0..n {
            cr[r] = re[r * n + col];
            ci[r] = im[r * n + col];
        }
        fft(&mut cr, &mut ci);
        for r in 0..n {
            re[r * n + col] = cr[r];
            im[r * n + col] = ci[r];
        }
    }
    let p: Vec<f64> = re.iter().zip(&im).map(|(a, b)| a * a + b * b).collect();
    Some((n, p, r_win))
}

/// Anisotropy of a `w × h` height field (a map or a height change); `None` when the field is flat,
/// smaller than 8 nodes a side, or no band has enough samples.
pub fn anisotropy(data: &[f32], w: usize, h: usize, p: &AnisotropyParams) -> Option<Anisotropy> {
    p.validate().ok()?;
    let (n, power, r_win) = power_spectrum(data, w, h)?;
    let rho_min = p.min_wavenumber * n as f64 / (2.0 * r_win);
    let rho_max = n as f64 / 2.0;
    if rho_min >= rho_max {
        return None;
    }
    let nb = p.bands;
    // Per band: (sum, count) for axis, diagonal, other.
    let mut acc = vec![[(0.0f64, 0usize); 3]; nb];
    let (lmin, lspan) = (rho_min.ln(), (rho_max / rho_min).ln());
    let signed = |k: usize| if k <= n / 2 { k as f64 } else { k as f64 - n as f64 };
    for ky in 0..n {
        let fy = signed(ky);
        for kx in 0..n {
            let fx = signed(kx);
            let rho = (fx * fx + fy * fy).sqrt();
            if rho < rho_min || rho > rho_max {
                continue;
            }
            let b = (((rho.ln() - lmin) / lspan) * nb as f64).floor().clamp(0.0, (nb - 1) as f64) as usize;
            let a = fy.abs().atan2(fx.abs()).to_degrees();
            let class = if a <= p.half_width_deg || a >= 90.0 - p.half_width_deg {
                0
            } else if (a - 45.0).abs() <= p.half_width_deg {
                1
            } else {
                2
            };
            acc[b][class].0 += power[ky * n + kx];
            acc[b][class].1 += 1;
        }
    }
    let (mut la, mut ld, mut used) = (0.0f64, 0.0f64, 0usize);
    for band in &acc {
        if band.iter().any(|c| c.1 < 4) {
            continue;
        }
        let mean = |c: (f64, usize)| c.0 / c.1 as f64;
        let other = mean(band[2]);
        if other <= 0.0 || mean(band[0]) <= 0.0 || mean(band[1]) <= 0.0 {
            continue;
        }
        la += (mean(band[0]) / other).ln();
        ld += (mean(band[1]) / other).ln();
        used += 1;
    }
    if used == 0 {
        return None;
    }
    Some(Anisotropy { axis_ratio: (la / used as f64).exp(), diagonal_ratio: (ld / used as f64).exp(), bands: used })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::SplitMix64;

    fn noise(w: usize, h: usize, seed: u64) -> Vec<f32> {
        let mut r = SplitMix64::new(seed);
        (0..w * h).map(|_| r.range_f32(-1.0, 1.0)).collect()
    }

    #[test]
    fn fft_matches_a_direct_dft() {
        let x: Vec<f64> = (0..16).map(|i| ((i * 7 % 5) as f64) - 2.0).collect();
        let (mut re, mut im) = (x.clone(), vec![0.0; 16]);
        fft(&mut re, &mut im);
        for k in 0..16 {
            let (mut sr, mut si) = (0.0, 0.0);
            for (t, &v) in x.iter().enumerate() {
                let a = -2.0 * std::f64::consts::PI * (k * t) as f64 / 16.0;
                sr += v * a.cos();
                si += v * a.sin();
            }
            assert!((re[k] - sr).abs() < 1e-9 && (im[k] - si).abs() < 1e-9, "bin {k}");
        }
    }

    #[test]
    fn isotropic_noise_is_near_one_and_stripes_are_not() {
        let (w, h) = (200, 180);
        let n = noise(w, h, 7);
        let a = anisotropy(&n, w, h, &AnisotropyParams::default()).unwrap();
        assert!((a.axis_ratio - 1.0).abs() < 0.2 && (a.diagonal_ratio - 1.0).abs() < 0.2, "{a:?}");
        // Straight stripes along x: every row one random height (a broadband profile in y), plus
        // weaker isotropic noise.
        let g = noise(w + h, 1, 9);
        let stripes: Vec<f32> = (0..w * h).map(|i| g[i / w] + 0.3 * n[i]).collect();
        let s = anisotropy(&stripes, w, h, &AnisotropyParams::default()).unwrap();
        assert!(s.axis_ratio > 1.5 && s.axis_ratio > 3.0 * s.diagonal_ratio, "{s:?}");
        // Diagonal stripes: constant along x = −y.
        let diag: Vec<f32> = (0..w * h).map(|i| g[(i % w) + i / w] + 0.3 * n[i]).collect();
        let d = anisotropy(&diag, w, h, &AnisotropyParams::default()).unwrap();
        assert!(d.diagonal_ratio > 1.5 && d.diagonal_ratio > 3.0 * d.axis_ratio, "{d:?}");
        // A single sinusoid shows in its band only (the mean over bands still exceeds 1).
        let one: Vec<f32> = (0..w * h).map(|i| ((i / w) as f32 * 0.7).sin() + 0.2 * n[i]).collect();
        assert!(anisotropy(&one, w, h, &AnisotropyParams::default()).unwrap().axis_ratio > 1.2);
        assert!(anisotropy(&vec![3.0; w * h], w, h, &AnisotropyParams::default()).is_none());
    }

    #[test]
    fn a_smooth_isotropic_dome_with_noise_is_not_flagged() {
        // Low-frequency shape + isotropic texture: the radial window must not leak along the axes.
        let (w, h) = (129, 129);
        let n = noise(w, h, 3);
        let f: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32 - 64.0, (i / w) as f32 - 64.0);
                200.0 * (-(x * x + y * y) / 2000.0).exp() + n[i]
            })
            .collect();
        let a = anisotropy(&f, w, h, &AnisotropyParams::default()).unwrap();
        assert!(a.axis_ratio < 1.3 && a.diagonal_ratio < 1.3, "{a:?}");
    }
}
