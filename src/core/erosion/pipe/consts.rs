//! What the pipe model's sweeps share: the constants of a run ([`Consts`], derived once from the
//! parameters), the per-row sums of sweep B ([`RowB`]), and the deterministic f64 sum of a row.

use super::super::simd::simd_dispatch;
use super::super::stencil::Edges;

/// Constants of a run, derived once from the parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Consts {
    pub(super) w: usize,
    pub(super) h: usize,
    /// Δt·A·g/l.
    pub(super) kflux: f32,
    /// lx·ly/Δt: the outflow rate that empties one metre of water in one step.
    pub(super) area_dt: f32,
    /// Δt/(lx·ly).
    pub(super) dt_area: f32,
    /// 1/lx (= 1/ly).
    pub(super) inv_l: f32,
    /// Velocity clamp lx/Δt.
    pub(super) vmax: f32,
    /// Δt/lx: velocity → cells per step.
    pub(super) courant: f32,
    pub(super) kc: f32,
    pub(super) ks: f32,
    pub(super) kd: f32,
    pub(super) min_tilt: f32,
    pub(super) depth_on: bool,
    pub(super) inv_max_depth: f32,
    /// 1 − Ke·Δt.
    pub(super) keep: f32,
    /// Δt·rain, used when there is no per-node water input.
    pub(super) rain_dt: f32,
    /// Erosion floor and sea level: the sea level, or `f32::MIN` without a sea.
    pub(super) sea: f32,
    /// A sea is set: nodes with `b < sea` are sea nodes (fixed water level), `b = sea` shore
    /// (see the module doc).
    pub(super) sea_on: bool,
    pub(super) edges: Edges,
}

/// Per-step sums of sweep B.
#[derive(Clone, Copy, Default)]
pub(super) struct RowB {
    pub(super) eroded: f64,
    pub(super) deposited: f64,
    pub(super) s1: f64,
    pub(super) evaporated: f64,
    pub(super) drained: f64,
    pub(super) rain: f64,
    /// Water the sea took in.
    pub(super) sea: f64,
}

simd_dispatch! {
    /// Σ of an f32 slice in f64 with 8 fixed lanes (deterministic, vectorisable).
    pub(crate) fn sum_f64(x: &[f32]) -> f64 {
        sum_f64_impl(x)
    }
}

#[inline(always)]
pub(super) fn sum_f64_impl(x: &[f32]) -> f64 {
    let mut acc = [0.0f64; 8];
    let ch = x.chunks_exact(8);
    let rem = ch.remainder();
    for c8 in ch {
        for l in 0..8 {
            acc[l] += c8[l] as f64;
        }
    }
    for (l, &v) in rem.iter().enumerate() {
        acc[l] += v as f64;
    }
    acc.iter().sum()
}
