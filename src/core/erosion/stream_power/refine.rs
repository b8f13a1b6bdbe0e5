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
//! # One step (`Δt` = the level's years over `stream_power_steps`)
//! 1. Steepest receiver `r` and slope `S_i` of every node, and its MFD normaliser (a 3×3 stencil).
//! 2. One drainage sweep (above).
//! 3. Incision, implicit against the receiver's height of the step before (as the model solves
//!    it against the receiver's new height, Braun & Willett 2013, but node by node so it stays a
//!    stencil): with `F = Δt·s·K·c_i·A_i^m / d^n` (`s` the pass's `stream_power_strength`, `c`
//!    the hardness, `d` the distance to the receiver) the new height `h'_i = h_r + δ` solves
//!    `δ − δ₀ + F·δ^n = 0`, `δ₀ = h_i − h_r` (for `n = 1`, `h'_i = (h_i + F·h_r)/(1 + F)`), so a
//!    node is never cut below its receiver, no pit is made and no step is too long; a sea
//!    receiver counts at the sea surface. Then uplift `h'_i += U_i·Δt` (0 on outlets; the model's
//!    uplift rule on the level's input, so the relief the preview sustained stays sustained).
//! 4. Deposition (`deposition` = `G`, after Davy & Lague 2009 and Yuan et al. 2019, "A new
//!    efficient method to solve the stream power law model taking into account sediment
//!    deposition", JGR Earth Surface 124): the sediment a node passes on, `q_i` (m³ per step),
//!    gathers its donors' of the step before along the drainage's weights, plus its own
//!    incision `e_i` (m), and settles at `D_i = G·Q_s/A_i`. Solved implicitly per node:
//!
//!    ```text
//!    t_i = Σ_{j higher} w_{j→i}·q_j + e_i·Δx²,   q_i = t_i / (1 + G·Δx²/A_i),   h_i += (t_i − q_i)/Δx²
//!    ```
//!
//!    A node with no receiver keeps all it takes. A deposit never raises a node above its lowest
//!    donor (what it cannot hold goes on in `q_i`; from a node with no receiver, a pit filled to
//!    its lowest donor, that rest leaves the pass), so it fills gully floors and the breaks of
//!    slope below them and makes no pit upstream; outlets (the sea, drain edges) take the load
//!    away. The load moves one node per step, as the drainage does, and what is still moving when
//!    the level's last step ends is not laid down (the pass keeps no books).
//! 5. Diffusion `κ`: one implicit step over `Δt`, as the model's own (the sea held at its surface).
//!
//! Every stencil reads the heights of the step before and writes new buffers, rows in parallel:
//! the same bits at any thread count. Wrap edges are taken as walls here.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::diffusion::Diffusion;
use super::routing::pow_unit;
use super::routing::{Grid, outlet_mask};
use super::{StreamPowerJob, StreamPowerParams, UpliftMode};
use crate::core::erosion::refine::{BringUp, Level, RefineParams, Refiner};
use crate::core::erosion::{JobError, JobInputs};
use crate::core::heightmap::Heightmap;

/// `x^p` for a small whole `p` (the pass's flow exponent), by multiplication.
#[inline]
fn ipow(x: f32, p: u32) -> f32 {
    let x2 = x * x;
    match p {
        1 => x,
        2 => x2,
        3 => x2 * x,
        4 => x2 * x2,
        5 => x2 * x2 * x,
        6 => x2 * x2 * x2,
        7 => x2 * x2 * x2 * x,
        _ => (x2 * x2) * (x2 * x2),
    }
}

/// The uplift rate of the pass at a node, m/yr (module doc, step 3): the model's uplift rule on
/// the level's input. A per-node uplift map is the preview's, and at another level the terrain's
/// rule stands in for it. Shared with the GPU pass (`crate::gpu::refine`), so both lift the same.
pub(crate) struct PassUplift {
    uplift: f32,
    follow: bool,
    exponent: f64,
    /// The base (the sea, else the lowest input height) and span of the model's terrain-following
    /// uplift (`terrain_uplift` in the model), from the whole preview's range where the ladder
    /// gives it (see [`Level::input_range`]), else from the level's input.
    base: f64,
    span: f64,
}

impl PassUplift {
    pub(crate) fn new(p: &StreamPowerParams, input: &[f32], sea: Option<f32>, range: Option<(f32, f32)>) -> Self {
        let (lo, hi) = range.unwrap_or_else(|| {
            input.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)))
        });
        let base = sea.unwrap_or(lo) as f64;
        Self {
            uplift: p.uplift,
            follow: p.uplift_mode == UpliftMode::FollowTerrain || p.uplift_map.is_some(),
            exponent: p.uplift_exponent as f64,
            base,
            span: hi as f64 - base,
        }
    }

    /// The rate at every node of a level's `input`, m/yr, computed once a level (the input does
    /// not change during the pass; the terrain-following rule is a `powf` per node).
    pub(crate) fn rates(&self, input: &[f32]) -> Vec<f32> {
        input.par_iter().map(|&v| self.at(v)).collect()
    }

    /// The rate at a node whose input height is `v`.
    #[inline]
    pub(crate) fn at(&self, v: f32) -> f32 {
        if !self.follow {
            return self.uplift;
        }
        let t = (v as f64 - self.base) / self.span;
        if t > 0.0 && self.span.is_finite() {
            (self.uplift as f64 * t.min(1.0).powf(self.exponent)) as f32
        } else {
            0.0
        }
    }
}

/// The nodes that take water and give none at a level: `Drain` edges and the sea in the level's
/// input (shared with the GPU pass).
pub(crate) fn pass_outlets(input: &[f32], w: usize, h: usize, inputs: &JobInputs) -> Vec<u8> {
    let sea = inputs.sea_level.filter(|s| s.is_finite()).unwrap_or(f32::NEG_INFINITY);
    let mut outlet = outlet_mask(w, h, &inputs.boundary);
    for (o, &v) in outlet.iter_mut().zip(input) {
        if v <= sea {
            *o = 1;
        }
    }
    outlet
}

/// The time step of a level's pass, years, and the level's steps; `None` when the level has no
/// pass (no years, or a map narrower than 3 nodes). Errors: bad settings, a drainage that is not
/// one value per node.
pub(crate) fn pass_steps(r: &RefineParams, lv: &Level) -> Result<Option<(f32, u32)>, JobError> {
    r.validate()?;
    let years = r.stream_power_years_at(lv.index, lv.levels);
    let steps = r.stream_power_steps.max(1);
    let (w, h) = (lv.map.width, lv.map.height);
    if years <= 0.0 || w < 3 || h < 3 {
        return Ok(None);
    }
    if lv.drainage.len() != w * h {
        return Err(JobError::BadParam {
            name: "drainage length",
            value: lv.drainage.len() as f64,
            range: "one per node",
        });
    }
    Ok(Some((years / steps as f32, steps)))
}

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

/// Whether neighbour `k` of `(x, y)` lies on a `w × h` map.
#[inline]
fn on_map(w: usize, h: usize, x: usize, y: usize, k: usize) -> bool {
    let (ox, oy, _) = NB[k];
    let (nx, ny) = (x as i32 + ox, y as i32 + oy);
    nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h
}

/// The donors of a node: its higher neighbours `j`, each with the share `w_{j→i}` of its flow it
/// sends (module doc: `S_{ji}^p / Σ_k S_{jk}^p`, from `j`'s steepest slope and normaliser of
/// step 1). The drainage sweep and the deposition's load gather through it.
struct Donors {
    w: usize,
    h: usize,
    offs: [isize; 8],
    inv_dist: [f32; 2],
    flow_p: u32,
}

impl Donors {
    /// Calls `f(j, w_{j→i})` for every donor `j` of `(x, y)` on heights `hs`, in D8 order.
    #[inline]
    fn each(&self, hs: &[f32], inv_norm: &[f32], inv_steep: &[f32], x: usize, y: usize, mut f: impl FnMut(usize, f32)) {
        let i = y * self.w + x;
        let hi = hs[i];
        let interior = y > 0 && y + 1 < self.h && x > 0 && x + 1 < self.w;
        for (k, &(_, _, diag)) in NB.iter().enumerate() {
            if !interior && !on_map(self.w, self.h, x, y, k) {
                continue;
            }
            let j = (i as isize + self.offs[k]) as usize;
            let nj = inv_norm[j];
            let s = (hs[j] - hi) * self.inv_dist[diag as usize];
            if nj > 0.0 && s > 0.0 {
                f(j, ipow(s * inv_steep[j], self.flow_p) * nj);
            }
        }
    }
}

/// The model's registry entry's `refine`.
pub const REFINER: Refiner<StreamPowerParams> = Refiner {
    start,
    pass: Some(pass),
    // A second height and drainage grid, slopes and normalisers (4 · 4), the uplift rates (4),
    // receivers and outlets (2), diffusion's faces, outlet copies and scratch (14), and with
    // deposition on the sediment's two loads (2 · 4).
    bytes_per_node: |_, r| 4 * 4 + 4 + 2 + 14 + if r.deposition > 0.0 { 8 } else { 0 },
    bring_up: BringUp::Smooth,
    own_job: None,
};

/// The drainage area of the preview's result `map`, m², as the model routes it (its own router
/// and flow method, the sea and the edges as outlets).
pub fn start(p: &StreamPowerParams, map: &Heightmap, inputs: &JobInputs) -> Result<Vec<f32>, JobError> {
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
    p: &StreamPowerParams,
    r: &RefineParams,
    lv: &mut Level,
    inputs: &JobInputs,
    cancel: &AtomicBool,
) -> Result<(), JobError> {
    let Some((dt, steps)) = pass_steps(r, lv)? else { return Ok(()) };
    let (w, h) = (lv.map.width, lv.map.height);
    let n = w * h;
    let dx = lv.map.cell_size;
    let sea_level = inputs.sea_level.filter(|s| s.is_finite());
    let sea = sea_level.unwrap_or(f32::NEG_INFINITY);
    let input = &lv.input.data;
    let outlet = pass_outlets(input, w, h, inputs);
    let up = PassUplift::new(p, input, sea_level, lv.input_range).rates(input);
    let uplift = |i: usize| -> f32 { up[i] };
    let hard = inputs.hardness.as_deref();
    let mut diffusion =
        (p.diffusion > 0.0).then(|| Diffusion::new(Grid { w, h, wrap_x: false, wrap_y: false }, &outlet, hard));
    let k_dt = p.k * r.stream_power_strength * dt;
    let (m, pn) = (p.m, p.n);
    let flow_p = r.flow_exponent.clamp(1, 8);
    let cell2 = dx * dx;
    let dist = [dx, std::f32::consts::SQRT_2 * dx];
    let inv_dist = [1.0 / dist[0], 1.0 / dist[1]];
    let offs: [isize; 8] = NB.map(|(ox, oy, _)| oy as isize * w as isize + ox as isize);

    let mut hb = lv.map.data.clone();
    let mut area_b = vec![0.0f32; n];
    // Step 4's sediment: what each node passed on in the step before, and in this one (m³).
    let g_dep = r.deposition;
    let (mut qs, mut qs_b) = if g_dep > 0.0 { (vec![0.0f32; n], vec![0.0f32; n]) } else { (Vec::new(), Vec::new()) };
    // Per node: 1 / its steepest slope, 1 / the sum of its MFD weights (0: no lower neighbour),
    // and its steepest receiver.
    let mut inv_steep = vec![0.0f32; n];
    let mut inv_norm = vec![0.0f32; n];
    let mut rcv = vec![NO_RCV; n];

    // The neighbours `(k, j)` of `(x, y)` that lie on the map.
    let inside = |x: usize, y: usize, k: usize| -> bool { on_map(w, h, x, y, k) };
    let donors = Donors { w, h, offs, inv_dist, flow_p };
    // Step 1: steepest receiver, its slope, the MFD normaliser of the lower neighbours.
    let receivers = |hs: &[f32], inv_steep: &mut [f32], inv_norm: &mut [f32], rcv: &mut [u8]| {
        inv_steep.par_chunks_mut(w).zip(inv_norm.par_chunks_mut(w)).zip(rcv.par_chunks_mut(w)).enumerate().for_each(
            |(y, ((srow, nrow), rrow))| {
                let edge_row = y == 0 || y + 1 == h;
                for x in 0..w {
                    let i = y * w + x;
                    srow[x] = 0.0;
                    nrow[x] = 0.0;
                    rrow[x] = NO_RCV;
                    if outlet[i] != 0 {
                        continue;
                    }
                    let hi = hs[i];
                    let interior = !edge_row && x > 0 && x + 1 < w;
                    let mut slope = [0.0f32; 8];
                    let mut best = (0.0f32, NO_RCV);
                    for k in 0..8 {
                        if !interior && !inside(x, y, k) {
                            continue;
                        }
                        let j = (i as isize + offs[k]) as usize;
                        let s = (hi - hs[j]) * inv_dist[NB[k].2 as usize];
                        slope[k] = s;
                        if s > best.0 {
                            best = (s, k as u8);
                        }
                    }
                    if best.1 == NO_RCV {
                        continue;
                    }
                    let inv = 1.0 / best.0;
                    let mut sum = 0.0f32;
                    for &s in &slope {
                        if s > 0.0 {
                            sum += ipow(s * inv, flow_p);
                        }
                    }
                    srow[x] = inv;
                    nrow[x] = 1.0 / sum;
                    rrow[x] = best.1;
                }
            },
        );
    };
    // Step 2: one sweep of the drainage (module doc).
    let sweep = |hs: &[f32], inv_norm: &[f32], inv_steep: &[f32], a_in: &[f32], a_out: &mut [f32]| {
        a_out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                let mut a = cell2;
                donors.each(hs, inv_norm, inv_steep, x, y, |j, wj| a += wj * a_in[j]);
                *out = a;
            }
        });
    };

    receivers(&lv.map.data, &mut inv_steep, &mut inv_norm, &mut rcv);
    for _ in 0..r.drainage_sweeps {
        sweep(&lv.map.data, &inv_norm, &inv_steep, lv.drainage, &mut area_b);
        std::mem::swap(lv.drainage, &mut area_b);
    }
    // `A^m` as `pow_unit(A·2^−40, m)·2^(40·m)`: areas up to 2^40 m² (a 1 000 km square).
    let (a_scale, a_back) = (2f32.powi(-40), 2f64.powf(40.0 * m as f64) as f32);
    for _ in 0..steps {
        if cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        receivers(&lv.map.data, &mut inv_steep, &mut inv_norm, &mut rcv);
        sweep(&lv.map.data, &inv_norm, &inv_steep, lv.drainage, &mut area_b);
        std::mem::swap(lv.drainage, &mut area_b);
        // `A^m` of every node, row loops that vectorise, into the sweep's second buffer (free
        // until the next step's sweep writes it whole).
        area_b.par_chunks_mut(w).zip(lv.drainage.par_chunks(w)).for_each(|(out, a)| {
            for (o, &a) in out.iter_mut().zip(a) {
                *o = pow_unit((a * a_scale).min(1.0), m) * a_back;
            }
        });
        let area_m = &area_b;
        // Steps 3 and 4: incision against the receiver's old height, implicit; deposition; then
        // uplift.
        let (hs, area) = (&lv.map.data, &*lv.drainage);
        let incise = |x: usize, y: usize| -> (f32, bool) {
            let i = y * w + x;
            let hi = hs[i];
            if rcv[i] == NO_RCV {
                return (hi, false);
            }
            // The receiver: the lower neighbours weighted as the flow splits over them (their
            // height and distance), so incision follows the flow, not a grid axis.
            let interior = y > 0 && y + 1 < h && x > 0 && x + 1 < w;
            let (mut sw, mut shr, mut sd) = (0.0f32, 0.0f32, 0.0f32);
            for kk in 0..8 {
                if !interior && !inside(x, y, kk) {
                    continue;
                }
                let j = (i as isize + offs[kk]) as usize;
                let hj = if input[j] <= sea { hs[j].max(sea) } else { hs[j] };
                let diag = NB[kk].2 as usize;
                let (dk, s) = (dist[diag], (hi - hj) * inv_dist[diag]);
                if s > 0.0 {
                    let wk = ipow(s * inv_steep[i], flow_p);
                    sw += wk;
                    shr += wk * hj;
                    sd += wk * dk;
                }
            }
            if sw <= 0.0 {
                return (hi, false);
            }
            let (hr, dr) = (shr / sw, sd / sw);
            let c = hard.map_or(1.0, |c| c[i]);
            let am = area_m[i];
            let d0 = hi - hr;
            let mut new = hi;
            if pn == 1.0 {
                let f = k_dt * c * am / dr;
                if f.is_finite() && f > 0.0 && d0 > 0.0 {
                    new = (hr + d0 / (1.0 + f)).clamp(hr, hi);
                }
            } else {
                let f = k_dt as f64 * c as f64 * am as f64 / (dr as f64).powf(pn as f64);
                if f.is_finite() && f > 0.0 && d0 > 0.0 {
                    let delta = super::solve_incision(d0 as f64, f, pn as f64);
                    new = ((hr as f64 + delta) as f32).clamp(hr, hi);
                }
            }
            (new, true)
        };
        // Step 4 at node `i`, incised to `new`: the height it settles to and the load it passes on.
        let deposit = |x: usize, y: usize, new: f32, drains: bool| -> (f32, f32) {
            let i = y * w + x;
            let mut t = (hs[i] - new).max(0.0) * cell2;
            let mut lowest = f32::INFINITY;
            donors.each(hs, &inv_norm, &inv_steep, x, y, |j, wj| {
                t += wj * qs[j];
                lowest = lowest.min(hs[j]);
            });
            let q = if drains { t / (1.0 + g_dep * cell2 / area[i]) } else { 0.0 };
            let room = (lowest - new).max(0.0);
            let d = ((t - q) / cell2).min(room);
            (new + d, t - d * cell2)
        };
        if g_dep > 0.0 {
            hb.par_chunks_mut(w).zip(qs_b.par_chunks_mut(w)).enumerate().for_each(|(y, (row, qrow))| {
                for x in 0..w {
                    let i = y * w + x;
                    if outlet[i] != 0 {
                        (row[x], qrow[x]) = (hs[i], 0.0);
                        continue;
                    }
                    let (new, drains) = incise(x, y);
                    let (settled, q) = deposit(x, y, new, drains);
                    (row[x], qrow[x]) = (settled + uplift(i) * dt, q);
                }
            });
            std::mem::swap(&mut qs, &mut qs_b);
        } else {
            hb.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
                for (x, out) in row.iter_mut().enumerate() {
                    let i = y * w + x;
                    *out = if outlet[i] != 0 { hs[i] } else { incise(x, y).0 + uplift(i) * dt };
                }
            });
        }
        std::mem::swap(&mut lv.map.data, &mut hb);
        // Step 5: diffusion, the sea held at its surface.
        if let Some(d) = diffusion.as_mut() {
            let lifted: Vec<(usize, f32)> =
                (0..n).filter(|&i| input[i] <= sea && lv.map.data[i] < sea).map(|i| (i, lv.map.data[i])).collect();
            for &(i, _) in &lifted {
                lv.map.data[i] = sea;
            }
            d.apply(&mut lv.map.data, p.diffusion as f64 * dt as f64 / (dx as f64 * dx as f64));
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

#[cfg(test)]
mod tests;
