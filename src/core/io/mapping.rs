//! The options every exchange format reads and writes with ([`ImportOptions`], [`ExportOptions`],
//! [`ExportReport`]) and the integer formats' value mapping.
//!
//! # Value mapping of the integer formats (PNG 8/16, R16)
//!
//! An integer sample `v` out of full scale `F` (65 535 for 16 bit, 255 for 8 bit) stands for the
//! height
//!
//! ```text
//! h = lo + (v / F) · (hi − lo)            (import)
//! v = round((h − lo) / (hi − lo) · F)     (export, clamped to 0..=F)
//! ```
//!
//! On export `[lo, hi]` is the map's own `[min, max]` ("normalise to full range", the default and
//! the most precise choice), a fixed range the user gives (`--range`, for tiles that must share a
//! scale; heights outside are clipped and counted), or the Unreal range (see [`unreal_range`]).
//! The range, the cell size and the source file go into a JSON sidecar next to the file
//! ([`super::sidecar`]) so our importer restores metres; other tools ignore it. On import the
//! range comes from `--range`, else the sidecar, else `[0, 1]` (the normalised value, which is
//! what Unity and Unreal do without further information). The quantisation error is at most
//! `(hi − lo) / (2F)` plus `f32` rounding.

use super::error::InteropError;
use crate::core::heightmap::{Heightmap, Stats};

/// How to read a file.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Metres that integer 0 and full scale stand for; overrides the sidecar.
    pub range: Option<[f32; 2]>,
    /// Width in nodes of a headerless R16 file that is not square.
    pub width: Option<usize>,
    /// Metres between nodes; overrides the sidecar and the file.
    pub cell_size: Option<f32>,
    /// Geographic grids (GeoTIFF in degrees, `.hgt`): keep the file's nodes instead of resampling
    /// the rows to square cells (see [`super::geodesy`]).
    pub keep_grid: bool,
}

/// How to write a file.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Metres that integer 0 and full scale stand for (default: the map's min and max).
    pub range: Option<[f32; 2]>,
    /// Centre the integer range on zero the way Unreal reads it (see [`unreal_range`]).
    pub unreal: bool,
    /// Meshes: keep every `decimate`-th node along each axis (0 or 1: all), plus the last one.
    pub decimate: usize,
    /// The file the map came from, recorded in the sidecar.
    pub source: String,
    /// What the import did to the map (e.g. degrees turned into metres), recorded in the sidecar.
    pub notes: Vec<String>,
}

/// What an export did, for the caller to report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportReport {
    /// The `[lo, hi]` an integer format was quantised with.
    pub range: Option<[f32; 2]>,
    /// Heights outside a fixed `range` that were clipped to it.
    pub clipped: usize,
    /// Unreal's landscape Z scale for the file (with `unreal`).
    pub unreal_z_scale: Option<f32>,
}

/// The Unreal range for a map whose largest |height| is `r` metres: `[−r·32768/32767, r]`, so that
/// sample 32768 is exactly 0 m and 65535 is `r`. Unreal reads a 16-bit heightmap as
/// `z_cm = (v − 32768) · ZScale / 128` ("Landscape Technical Guide", Epic Games:
/// <https://dev.epicgames.com/documentation/en-us/unreal-engine/landscape-technical-guide-in-unreal-engine>,
/// "Calculating Heightmap Z Scale"), so the matching import Z scale is returned as well:
/// `ZScale = r · 100 · 128 / 32767` (with XY scale = cell size · 100 cm).
pub fn unreal_range(hm: &Heightmap) -> ([f32; 2], f32) {
    unreal_range_of(&hm.stats())
}

/// [`unreal_range`] of a map whose statistics are `s` (a caller that has them already saves a
/// pass over the map).
pub fn unreal_range_of(s: &Stats) -> ([f32; 2], f32) {
    let r = s.min.abs().max(s.max.abs()).max(1e-3) as f64;
    let lo = -r * 32768.0 / 32767.0;
    ([lo as f32, r as f32], (r * 100.0 * 128.0 / 32767.0) as f32)
}

/// The `[lo, hi]` an integer export uses, with the Unreal Z scale when asked for.
pub fn export_range(hm: &Heightmap, opts: &ExportOptions) -> Result<([f32; 2], Option<f32>), InteropError> {
    let (range, z) = if opts.unreal {
        let (r, z) = unreal_range(hm);
        (r, Some(z))
    } else if let Some(r) = opts.range {
        (r, None)
    } else {
        let s = hm.stats();
        ([s.min, s.max], None)
    };
    if !(range[0].is_finite() && range[1].is_finite() && range[0] <= range[1]) {
        return Err(InteropError::NonFinite {
            format: "export",
            msg: format!("range {}:{} is not a finite MIN:MAX", range[0], range[1]),
        });
    }
    Ok((range, z))
}

/// Quantises `h` to `0..=full` over `[lo, hi]`; returns the samples and how many were clipped.
pub fn quantise(data: &[f32], [lo, hi]: [f32; 2], full: u32) -> (Vec<u32>, usize) {
    let (lo, hi) = (lo as f64, hi as f64);
    let span = hi - lo;
    let mut clipped = 0;
    let out = data
        .iter()
        .map(|&h| {
            let t = if span > 0.0 { (h as f64 - lo) / span } else { 0.0 };
            if !(-1e-9..=1.0 + 1e-9).contains(&t) {
                clipped += 1;
            }
            (t.clamp(0.0, 1.0) * full as f64).round() as u32
        })
        .collect();
    (out, clipped)
}

/// The height of integer sample `v` out of `full` over `[lo, hi]`.
#[inline]
pub fn dequantise(v: u32, [lo, hi]: [f32; 2], full: u32) -> f32 {
    (lo as f64 + (v as f64 / full as f64) * (hi as f64 - lo as f64)) as f32
}

/// The import range: `--range`, else the sidecar's, else `[0, 1]`.
pub fn import_range(opts: &ImportOptions, sidecar: Option<&super::sidecar::Sidecar>) -> [f32; 2] {
    opts.range.or(sidecar.map(|s| [s.min, s.max])).unwrap_or([0.0, 1.0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantisation_round_trips_within_half_a_step_and_counts_clips() {
        let data = [-2.0f32, 0.0, 0.3, 1.0, 5.0];
        let (q, clipped) = quantise(&data, [0.0, 1.0], 65535);
        assert_eq!(clipped, 2);
        assert_eq!((q[0], q[1], q[3], q[4]), (0, 0, 65535, 65535));
        assert!((dequantise(q[2], [0.0, 1.0], 65535) - 0.3).abs() <= 0.5 / 65535.0 + 1e-7);
    }

    #[test]
    fn unreal_range_puts_zero_at_32768() {
        let hm = Heightmap::from_data(2, 1, 1.0, vec![-10.0, 300.0]).unwrap();
        let (r, z) = unreal_range(&hm);
        let (q, clipped) = quantise(&[0.0, 300.0], r, 65535);
        assert_eq!((q[0], q[1], clipped), (32768, 65535, 0));
        // Unreal's own formula: z_cm = (v − 32768) · ZScale / 128.
        assert!(((65535.0 - 32768.0) * z / 128.0 - 30_000.0).abs() < 0.5);
    }
}
