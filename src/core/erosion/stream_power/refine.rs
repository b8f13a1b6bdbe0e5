//! The stream-power model's detail pass for a build that erodes on its way up (issue #34; the
//! ladder is [`crate::core::erosion::refine`]): the model's own law, `∂h/∂t = U − K·A^m·S^n +
//! κ∇²h`, run for a short time at one level of the ladder with drainage built *locally*, after
//! Schott, Paris, Fournier, Guérin & Galin (2023), "Large-scale terrain authoring through
//! interactive erosion simulation", ACM TOG 42(5), and Schott et al. (2024), "Terrain
//! Amplification using Multi-scale Erosion", ACM TOG 43(4).
//!
//! # Drainage, accumulated in sweeps
//! The level starts from the drainage area `A` (m²) brought up from the coarser level. A sweep
//! re-routes it one node further on the level's own heights, by multiple flow directions
//! (Freeman 1991, the model's `mfd_exponent` `p`):
//!
//! ```text
//! A'_i = Δx² + Σ_{j ∈ N₈(i), h_j > h_i}  w_{j→i} · A_j,     w_{j→i} = S_{ji}^p / Σ_{k lower than j} S_{jk}^p
//! ```
//!
//! with `S_{ji} = (h_j − h_i)/d_{ji}` (`d` = `Δx` or `√2·Δx`). Outlets (the sea in the level's
//! input, `Drain` edges) take water and give none. `drainage_sweeps` sweeps run before the first
//! step, then one per step, so the flow reorganises over a few tens of nodes around every node and
//! never over the whole map: the fine level carves gullies inside the valleys the coarser levels
//! made and does not move them.
//!
//! # One step (`Δt` = the level's years / its steps)
//! 1. Steepest receiver `r` and slope `S_i` of every node, and its MFD normaliser (a 3×3 stencil).
//! 2. One drainage sweep (above).
//! 3. Incision, explicit and clamped: `h'_i = max(h_i − Δt·K·c_i·A_i^m·S_i^n, h_r)` (`c` the
//!    hardness; a sea receiver counts at the sea surface), so a node is never cut below its
//!    receiver and no pit is made; then uplift `h'_i += U_i·Δt` (0 on outlets; the model's uplift
//!    rule on the level's input, so the relief the preview sustained stays sustained).
//! 4. Diffusion `κ`: one implicit step over `Δt`, as the model's own (the sea held at its surface).
//!
//! Every stencil reads the heights of the step before and writes new buffers, rows in parallel:
//! the same bits at any thread count. Wrap edges are taken as walls here.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::diffusion::Diffusion;
use super::routing::pow_unit;
use super::routing::{Grid, outlet_mask};
use super::{StreamPowerJob, StreamPowerParams, UpliftMode, terrain_uplift};
use crate::core::erosion::refine::{Level, RefineParams};
use crate::core::erosion::{JobError, JobInputs, ModelParams};
use crate::core::heightmap::Heightmap;

/// No receiver (a pit, a flat, an outlet).
const NO_RCV: u8 = 255;

/// Neighbour offsets `(dx, dy)` in D8 order, and whether each is a diagonal.
const NB: [(i32, i32, bool); 8] = [
    (-1, -1, true),
    (0, -1, false),
    (1, -1, true),
    (-1, 0, false),
    (1, 0, false),
    (-1, 1, true),
    (0, 1, false),
    (1, 1, true),
];

fn params(model: &ModelParams) -> Result<&StreamPowerParams, JobError> {
    match model {
        ModelParams::StreamPower(p) => Ok(p),
        _ => Err(JobError::BadParam { name: "model", value: 0.0, range: "stream power" }),
    }
}

/// The drainage area of the preview's result `map`, m², as the model routes it (its own router
/// and flow method, the sea and the edges as outlets).
pub fn start(model: &ModelParams, map: &Heightmap, inputs: &JobInputs) -> Result<Vec<f32>, JobError> {
    let p = params(model)?;
    let job = StreamPowerJob::new(
        map.clone(),
        StreamPowerParams { steps: 0, uplift_map: None, ..p.clone() },
        JobInputs { steer: None, ..inputs.clone() },
    )?;
    let cell = (map.cell_size as f64).powi(2);
    Ok(job.drainage_area().into_iter().map(|a| (a * cell) as f32).collect())
}

/// One level's detail pass (module doc).
pub fn pass(
    model: &ModelParams,
    r: &RefineParams,
    lv: &mut Level,
    inputs: &JobInputs,
    cancel: &AtomicBool,
) -> Result<(), JobError> {
    let p = params(model)?;
    r.validate()?;
    let years = r.stream_power_years_at(lv.index);
    let steps = r.stream_power_steps.max(1);
    let (w, h) = (lv.map.width, lv.map.height);
    let n = w * h;
    if years <= 0.0 || w < 3 || h < 3 {
        return Ok(());
    }
    if lv.drainage.len() != n {
        return Err(JobError::BadParam {
            name: "drainage length",
            value: lv.drainage.len() as f64,
            range: "one per node",
        });
    }
    let dt = years / steps as f32;
    let exp = |k: &str, d: f32| std::env::var(k).ok().and_then(|v| v.parse::<f32>().ok()).unwrap_or(d);
    let uplift_on = exp("TR_UPLIFT", 1.0);
    let diff_on = exp("TR_DIFF", 1.0);
    let k_mul = exp("TR_KMUL", 1.0);
    let dx = lv.map.cell_size;
    let sea_level = inputs.sea_level.filter(|s| s.is_finite());
    let sea = sea_level.unwrap_or(f32::NEG_INFINITY);
    let mut outlet = outlet_mask(w, h, &inputs.boundary);
    if let Some(s) = sea_level {
        for (o, &v) in outlet.iter_mut().zip(&lv.input.data) {
            if v <= s {
                *o = 1;
            }
        }
    }
    let is_sea: Vec<bool> = lv.input.data.iter().map(|&v| v <= sea).collect();
    let rate: Option<Vec<f32>> = match p.uplift_mode {
        // A per-node uplift map is the preview's; at another level the terrain's rule stands in
        // for it (the map followed the terrain where it was painted).
        UpliftMode::FollowTerrain => Some(terrain_uplift(&lv.input.data, sea_level, p.uplift, p.uplift_exponent)),
        UpliftMode::Uniform if p.uplift_map.is_some() => {
            Some(terrain_uplift(&lv.input.data, sea_level, p.uplift, p.uplift_exponent))
        }
        UpliftMode::Uniform => None,
    };
    let hard = inputs.hardness.as_deref();
    let mut diffusion =
        (p.diffusion > 0.0).then(|| Diffusion::new(Grid { w, h, wrap_x: false, wrap_y: false }, &outlet, hard));
    let k_dt = p.k * dt * k_mul;
    let (m, pn, mfd_p) = (p.m, p.n, p.mfd_exponent);
    let cell2 = dx * dx;
    let dist = [dx, std::f32::consts::SQRT_2 * dx];

    let mut hb = lv.map.data.clone();
    let mut area_b = vec![0.0f32; n];
    let mut steep = vec![0.0f32; n];
    let mut norm = vec![0.0f32; n];
    let mut rcv = vec![NO_RCV; n];

    // Step 1: steepest receiver, its slope, the MFD normaliser of the lower neighbours.
    let receivers = |hs: &[f32], steep: &mut [f32], norm: &mut [f32], rcv: &mut [u8]| {
        steep.par_chunks_mut(w).zip(norm.par_chunks_mut(w)).zip(rcv.par_chunks_mut(w)).enumerate().for_each(
            |(y, ((srow, nrow), rrow))| {
                for x in 0..w {
                    let i = y * w + x;
                    srow[x] = 0.0;
                    nrow[x] = 0.0;
                    rrow[x] = NO_RCV;
                    if outlet[i] != 0 {
                        continue;
                    }
                    let hi = hs[i];
                    let mut best = (0.0f32, NO_RCV);
                    for (k, &(ox, oy, diag)) in NB.iter().enumerate() {
                        let (nx, ny) = (x as i32 + ox, y as i32 + oy);
                        if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
                            continue;
                        }
                        let s = (hi - hs[ny as usize * w + nx as usize]) / dist[diag as usize];
                        if s > best.0 {
                            best = (s, k as u8);
                        }
                    }
                    if best.1 == NO_RCV {
                        continue;
                    }
                    let smax = best.0;
                    let mut sum = 0.0f32;
                    for &(ox, oy, diag) in &NB {
                        let (nx, ny) = (x as i32 + ox, y as i32 + oy);
                        if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
                            continue;
                        }
                        let s = (hi - hs[ny as usize * w + nx as usize]) / dist[diag as usize];
                        if s > 0.0 {
                            sum += pow_unit(s / smax, mfd_p);
                        }
                    }
                    srow[x] = smax;
                    nrow[x] = sum;
                    rrow[x] = best.1;
                }
            },
        );
    };
    // Step 2: one sweep of the drainage (module doc).
    let sweep = |hs: &[f32], norm: &[f32], steep: &[f32], a_in: &[f32], a_out: &mut [f32]| {
        a_out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                let i = y * w + x;
                let hi = hs[i];
                let mut a = cell2;
                for &(ox, oy, diag) in &NB {
                    let (nx, ny) = (x as i32 + ox, y as i32 + oy);
                    if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
                        continue;
                    }
                    let j = ny as usize * w + nx as usize;
                    let nj = norm[j];
                    if nj <= 0.0 {
                        continue;
                    }
                    let s = (hs[j] - hi) / dist[diag as usize];
                    if s > 0.0 {
                        a += pow_unit(s / steep[j], mfd_p) / nj * a_in[j];
                    }
                }
                *out = a;
            }
        });
    };

    receivers(&lv.map.data, &mut steep, &mut norm, &mut rcv);
    for _ in 0..r.drainage_sweeps {
        sweep(&lv.map.data, &norm, &steep, lv.drainage, &mut area_b);
        std::mem::swap(lv.drainage, &mut area_b);
    }
    for _ in 0..steps {
        if cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        receivers(&lv.map.data, &mut steep, &mut norm, &mut rcv);
        sweep(&lv.map.data, &norm, &steep, lv.drainage, &mut area_b);
        std::mem::swap(lv.drainage, &mut area_b);
        // Step 3: incision against the old heights, clamped at the receiver; then uplift.
        let (hs, area, rate) = (&lv.map.data, &*lv.drainage, rate.as_deref());
        hb.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                let i = y * w + x;
                let hi = hs[i];
                *out = hi;
                if outlet[i] != 0 {
                    continue;
                }
                let k = rcv[i];
                let mut new = hi;
                if k != NO_RCV {
                    let (ox, oy, _) = NB[k as usize];
                    let j = (y as i32 + oy) as usize * w + (x as i32 + ox) as usize;
                    let hr = if is_sea[j] { hs[j].max(sea) } else { hs[j] };
                    let s = steep[i];
                    let sn = if pn == 1.0 { s } else { s.powf(pn) };
                    let c = hard.map_or(1.0, |c| c[i]);
                    let e = k_dt * c * area[i].powf(m) * sn;
                    if e.is_finite() && e > 0.0 && hi > hr {
                        new = (hi - e).max(hr);
                    }
                }
                let u = rate.map_or(p.uplift, |r| r[i]);
                *out = new + uplift_on * u * dt;
            }
        });
        std::mem::swap(&mut lv.map.data, &mut hb);
        // Step 4: diffusion, the sea held at its surface.
        if let Some(d) = diffusion.as_mut() {
            let lifted: Vec<(usize, f32)> =
                (0..n).filter(|&i| is_sea[i] && lv.map.data[i] < sea).map(|i| (i, lv.map.data[i])).collect();
            for &(i, _) in &lifted {
                lv.map.data[i] = sea;
            }
            d.apply(&mut lv.map.data, diff_on as f64 * p.diffusion as f64 * dt as f64 / (dx as f64 * dx as f64));
            for &(i, v) in &lifted {
                lv.map.data[i] = v;
            }
        }
    }
    if !lv.map.all_finite() {
        return Err(JobError::NonFinite);
    }
    Ok(())
}
