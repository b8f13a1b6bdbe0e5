//! Thermal erosion: loose material slides down every slope steeper than the talus (repose) angle.
//!
//! After Musgrave, Kolb & Mace (1989) in the form Št'ava, Beneš, Brisbin & Křivánek (2008,
//! "Interactive Terrain Modeling Using Hydraulic Erosion") use beside the pipe model, and which
//! seed 003 runs on the GPU as "max slippage → slippage flux → apply". This CPU version keeps the
//! physics and makes the update conservative, race-free and deterministic.
//!
//! ## The update (one iteration)
//!
//! Neighbourhood: the **8** surrounding nodes (Moore). Cardinal neighbours are `Δ = cell_size`
//! away, diagonal ones `Δ = √2·cell_size`, so the talus limit is the same *angle* in every
//! direction (a 4-neighbourhood lets diagonal ridges stand steeper than the talus angle).
//! With `T = tan(talus angle)`:
//!
//! ```text
//! e(i→j)  = max(0, h_i − h_j − T·Δ_ij)          excess of i over its neighbour j
//! E_i     = Σ_j e(i→j),   M_i = max_j e(i→j)
//! a_i     = min(1, rate · hardness_i)
//! s_i     = a_i · M_i / (2·E_i)                   donor factor (0 when E_i = 0)
//! q_j     = min(1, max_i e(i→j) / (a_max · Σ_i e(i→j)))    receiver limit (1 with no donors)
//! flux(i→j) = s_i · e(i→j) · q_j
//! h_i'    = h_i − Σ_j flux(i→j) + Σ_j flux(j→i)
//! ```
//!
//! The donor moves at most `a_i·M_i/2`: with `rate = 1` and one steep neighbour this halves the
//! height difference in excess, which removes the excess in one iteration, shared among all
//! lower neighbours in proportion to their excess (Musgrave et al.). The receiver limit `q`
//! (our addition) caps what a node can receive at half of its largest incoming excess, so a
//! one-node pit surrounded by eight cliffs fills up to at most halfway instead of overshooting
//! into a spike; `a_max` is the largest `a_i` of the map, which bounds every `s_i ≤ a_max/2`.
//! Consequences, both tested: material only moves from a higher to a lower node, and no node
//! rises above its highest neighbour nor sinks below its lowest one in one iteration.
//!
//! ## Iterations in world units
//!
//! On a slope steeper than the talus the update is a diffusion of the excess slope,
//! `∂h/∂k ≈ (a/2)·Δx²·∇·(s − T)₊` per iteration `k`, so `k` iterations relax a slope over about
//! `Δx·√k` metres. `iterations` is therefore counted on cells of `iteration_cell_m` (2 m by
//! default): a map of `Δx` cells runs `(iteration_cell_m/Δx)²` kernel iterations for each, and
//! the same project sheds the same aprons at any resolution (16× the iterations at 0.5 m, 1/16
//! at 8 m). [`ThermalParams::kernel_iterations`] spreads a fractional scale evenly over the
//! steps; on cells of `iteration_cell_m` it is the count itself.
//!
//! ## Scheme
//!
//! Two passes over read-only heights, fused per band of rows: pass 1 computes `s` and `q` for the
//! band and its two halo rows into a band-local buffer, pass 2 gathers `h'` from the 3×3
//! neighbourhood into a second height buffer (double buffering). Each flux is computed from the
//! same numbers on both of its sides, so the scheme is conservative up to f32 rounding, and as
//! every output value is a pure function of the old heights, results are bit-identical for any
//! number of rayon threads. Bands have a fixed height ([`BAND_ROWS`]) so the f64 books are summed
//! in the same order too.
//!
//! ## Boundaries (per edge, see [`Boundary`](super::Boundary))
//!
//! * **Wall**: a neighbour across the edge does not exist; nothing crosses.
//! * **Wrap**: the opposite edge is the neighbour (a lone `Wrap` acts as `Wall`).
//! * **Drain**: the terrain continues past the edge by linear extrapolation of the node and its
//!   opposite inner neighbour, `h_out = 2·h_i − h_opposite` (so the slope toward the edge carries
//!   on); material sliding there leaves the map and is booked as `lost_at_border`. The outside
//!   never gives material back.
//!
//! `tan` of the talus angle is evaluated once per job in f64 and rounded to f32.

mod job;
mod kernel;
mod params;
pub mod refine;

pub use job::ThermalJob;
pub use kernel::{ThermalBooks, ThermalKernel, thermal_step};
pub use params::{MAX_ITERATION_SCALE, ThermalParams};

/// Rows per parallel band. Fixed (not derived from the thread count) so that per-band partial
/// sums, and with them the ledger, are identical for any number of threads.
pub const BAND_ROWS: usize = 32;

#[cfg(test)]
mod tests;
