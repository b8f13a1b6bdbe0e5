//! The books of a run: the sediment [`Ledger`] (the identities are in the [`super`] module doc),
//! the per-node [`ErosionMaps`], the extra [`Fields`] a model exposes, and the [`Snapshot`] that
//! carries them all between steps.

use serde::{Deserialize, Serialize};

use super::Progress;
use crate::core::heightmap::Heightmap;

/// The sediment books of a run, in metre·nodes (see the module doc for the identities).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    /// Material removed from the terrain.
    pub eroded: f64,
    /// Material added to the terrain by deposition.
    pub deposited: f64,
    /// Material that left the map across a drain edge.
    pub lost_at_border: f64,
    /// Material created (positive) or destroyed (negative) outside the erosion/deposition
    /// exchange, signed: a clamp such as the minimum-height guard lifting terrain back up, or the
    /// residual of a non-conservative scheme (the seed's semi-Lagrangian and MacCormack sediment
    /// advection gain or lose sediment where flow converges or diverges; the pipe model's
    /// `Conservative` advection keeps this ≈ 0). Booked so the identities still close and the
    /// non-conservation is visible rather than hidden.
    pub clamped: f64,
    /// Material created by tectonic uplift (stream-power only), already included in `deposited`
    /// in the terrain books but not taken from suspension.
    pub uplift: f64,
    /// Material still carried by water/particles at the time of the report.
    pub suspended: f64,
    /// Σh before the run.
    pub volume_before: f64,
    /// Σh at the time of the report.
    pub volume_after: f64,
}

impl Ledger {
    /// `Σh_after − Σh_before − (deposited − eroded)`: should be ~0.
    pub fn terrain_error(&self) -> f64 {
        (self.volume_after - self.volume_before) - (self.deposited - self.eroded)
    }
    /// `eroded + clamped + uplift − deposited − lost_at_border − suspended`: should be ~0.
    pub fn material_error(&self) -> f64 {
        self.eroded + self.clamped + self.uplift - self.deposited - self.lost_at_border - self.suspended
    }
    /// Total material moved, the scale the errors are judged against.
    pub fn moved(&self) -> f64 {
        self.eroded.max(self.deposited).max(1e-12)
    }
    /// True when both books close to `rel` of the material moved (plus f32 rounding of Σh).
    pub fn closes(&self, rel: f64) -> bool {
        let tol = rel * self.moved();
        self.terrain_error().abs() <= tol && self.material_error().abs() <= tol
    }
}

/// Per-node totals of erosion and deposition over a run (metres), for colouring and export.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErosionMaps {
    /// Total height removed at each node (≥ 0).
    pub eroded: Vec<f32>,
    /// Total height added at each node (≥ 0).
    pub deposited: Vec<f32>,
}

impl ErosionMaps {
    /// Zeroed maps for `n` nodes.
    pub fn new(n: usize) -> Self {
        Self { eroded: vec![0.0; n], deposited: vec![0.0; n] }
    }
    /// Records a signed height change at node `i` (negative = erosion).
    #[inline]
    pub fn record(&mut self, i: usize, dh: f32) {
        if dh < 0.0 { self.eroded[i] -= dh } else { self.deposited[i] += dh }
    }
    /// Net change (deposited − eroded) per node.
    pub fn net(&self) -> Vec<f32> {
        self.deposited.iter().zip(&self.eroded).map(|(d, e)| d - e).collect()
    }
}

/// Extra per-node fields a model can expose (the editor draws them; the CLI exports them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    /// Water depth, metres (pipe model).
    pub water: Option<Vec<f32>>,
    /// Water velocity (u, v), metres per second (pipe model).
    pub velocity: Option<Vec<[f32; 2]>>,
    /// Suspended sediment, metres (pipe model).
    pub sediment: Option<Vec<f32>>,
    /// Flow: how many particles crossed each node (droplet/snowball) or drainage area (stream-power).
    pub flow: Option<Vec<f32>>,
    /// Water volume carried across each node by particles (droplet).
    pub flow_volume: Option<Vec<f32>>,
}

/// A consistent copy of a simulation's state, handed out between steps.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The terrain.
    pub heightmap: Heightmap,
    /// The model's own fields (water, sediment, flow…).
    pub fields: Fields,
    /// The books.
    pub ledger: Ledger,
    /// Per-node erosion/deposition totals.
    pub maps: ErosionMaps,
    /// Work done / total.
    pub progress: Progress,
}
