//! Erosion layers coarse to fine ([`super::ErosionBuild::Upsample`]), and the resampling every
//! rebuilt grid goes through (Catmull–Rom, [`crate::core::resample`]).

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::error::BuildError;
use crate::core::Heightmap;
use crate::core::filter::gaussian_blur;
use crate::core::resample::Resampler;
use crate::editor::layers::TileGrid;

/// One grid to resample and add: its dense values, and the factor it is added with.
pub(super) struct Grid {
    r: Resampler,
    scale: f32,
}

impl Grid {
    pub(super) fn new(data: &[f32], w: usize, h: usize, nw: usize, nh: usize, scale: f32) -> Self {
        Self { r: Resampler::new(data, w, h, nw, nh), scale }
    }
}

/// Adds an erosion layer coarse to fine (see the module doc). `map` holds the fold below the
/// layer at the build's size, `delta` the layer's preview result minus its preview input
/// (`w × h`), `ratio` the build's side over the preview's. With `up(·)` the bounded Catmull–Rom
/// resampling to the build's size and `G` an isotropic Gaussian of `σ = 0.4·ratio` build nodes
/// (it keeps what the preview resolves and removes the axis-aligned images any separable
/// interpolator leaves above the preview's Nyquist frequency):
///
/// ```text
/// d      = G * (strength · mask · up(delta))   the layer's change at the build's size
/// detail = map − G * map                       what only the finer grid holds
/// w      = exp(−|d| / D),  D = RMS(detail)     how much of it the erosion left
/// map   ← map + d − (1 − w) · detail
/// ```
///
/// Where the layer barely changed the terrain the build keeps the fine detail under it; where it
/// cut a channel, filled a lake or laid a shelf, the smooth surface replaces it, as the erosion
/// replaced the surface there. Building at the preview's size or smaller (`ratio ≤ 1`) adds
/// `up(delta)` alone.
pub(super) fn upsample_erosion(
    map: &mut Heightmap,
    delta: &[f32],
    strength: f32,
    mask: Option<&[f32]>,
    (w, h): (usize, usize),
    ratio: f64,
    cancel: &AtomicBool,
) -> Result<(), BuildError> {
    let (nw, nh) = (map.width, map.height);
    let up = Resampler::with_bounds(delta, w, h, nw, nh, true);
    let mut d = vec![0.0f32; nw * nh];
    d.par_chunks_mut(nw).enumerate().for_each(|(y, row)| {
        up.row(y, row, None);
        let m = mask.map(|m| &m[y * nw..(y + 1) * nw]);
        for (x, v) in row.iter_mut().enumerate() {
            *v *= strength * m.map_or(1.0, |m| m[x]);
        }
    });
    drop(up);
    if ratio <= 1.0 {
        map.data.par_iter_mut().zip(&d).for_each(|(m, v)| *m += v);
        return Ok(());
    }
    let sigma = (0.4 * ratio) as f32;
    gaussian_blur(&mut d, nw, nh, sigma);
    if cancel.load(Ordering::Relaxed) {
        return Err(BuildError::Cancelled);
    }
    let mut smooth = map.data.clone();
    gaussian_blur(&mut smooth, nw, nh, sigma);
    if cancel.load(Ordering::Relaxed) {
        return Err(BuildError::Cancelled);
    }
    // The RMS of the detail, summed per row and then in row order (the same bits at any thread
    // count).
    let rows: Vec<f64> = map
        .data
        .par_chunks(nw)
        .zip(smooth.par_chunks(nw))
        .map(|(m, s)| m.iter().zip(s).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>())
        .collect();
    let d_rms = (rows.iter().sum::<f64>() / (nw * nh) as f64).sqrt() as f32;
    map.data.par_iter_mut().zip(&d).zip(&smooth).for_each(|((m, &dx), &s)| {
        let detail = *m - s;
        let keep = if d_rms > 0.0 { (-dx.abs() / d_rms).exp() } else { 1.0 };
        *m += dx - (1.0 - keep) * detail;
    });
    Ok(())
}

/// A tile grid resampled to `nw × nh` (clamped when asked), densely.
pub(super) fn resampled(g: &TileGrid, w: usize, h: usize, nw: usize, nh: usize, clamp: Option<(f32, f32)>) -> Vec<f32> {
    let r = Resampler::new(&g.to_dense(), w, h, nw, nh);
    let mut out = vec![0.0f32; nw * nh];
    out.par_chunks_mut(nw).enumerate().for_each(|(y, row)| r.row(y, row, clamp));
    out
}

/// Adds every grid, resampled to the map's size, row by row (`mask`: a per-node weight over the
/// map); stops with [`BuildError::Cancelled`] when `cancel` is set.
pub(super) fn add_resampled(
    out: &mut [f32],
    grids: &[Grid],
    mask: Option<&[f32]>,
    cancel: &AtomicBool,
) -> Result<(), BuildError> {
    let Some(nw) = grids.first().map(|g| g.r.width()) else { return Ok(()) };
    out.par_chunks_mut(nw).enumerate().for_each_init(Vec::new, |tmp, (y, row)| {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let m = mask.map(|m| &m[y * nw..(y + 1) * nw]);
        for g in grids {
            g.r.add_row(y, row, g.scale, m, tmp);
        }
    });
    if cancel.load(Ordering::Relaxed) { Err(BuildError::Cancelled) } else { Ok(()) }
}
