//! The snowball model's parameters ([`SnowballParams`]): fields, defaults, validation, the
//! conversion of version-1 values and the grid units a job runs in ([`SnowballGrid`]).
//!
//! Lengths are in metres and the amount of work a density per km², so a project erodes the same
//! land at any resolution; the job converts them to grid units once, when it is built
//! ([`SnowballParams::in_grid_units`], `Δx` the cell size):
//!
//! | parameter | unit | in the job |
//! |---|---|---|
//! | `snowballs_per_km2` | 1/km² | `round(density · area)` snowballs ([`MapSize::count`]) |
//! | `speed_m` | m/iteration (gained per iteration) | `speed_m / Δx` nodes/iteration |
//! | `offset_radius_m` | m | `offset_radius_m / Δx` nodes |
//! | `blur_sigma_m` | m | Gaussian sigma `blur_sigma_m / Δx` nodes |
//! | `footprint_m` | m | the stamp's half-width `r = max(1, footprint_m / Δx)` nodes |
//! | `erosion_rate` | m of height over `footprint_m²` per iteration | `erosion_rate · (footprint_m / Δx)²` m on the stamp's nodes |
//!
//! An iteration's change lands on a stamp: on cells of `footprint_m` and coarser the 4 nodes
//! around the point (bilinear weights), on finer cells a tent of half-width `r` nodes, weights
//! `(1 − |dx|/r)(1 − |dy|/r)` summing to 1. Either way one iteration moves
//! `erosion_rate · footprint_m²` m³ at full steepness, and the load (height on the stamp, m·nodes)
//! is a volume over `Δx²`: the same density of snowballs moves the same volume per km² at any
//! cell size, over ground of the same width. With `Δx = footprint_m` the stamp is the seed's and
//! every conversion is the identity, bit for bit.
//!
//! The defaults are version 1's on the default island (513², `Δx = 2 m`).

use serde::{Deserialize, Serialize};

use super::super::JobError;
use super::super::registry::MapSize;

crate::params! {
    /// Parameters of the snowball model (seed 002's names in brackets; defaults from its code).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SnowballParams {
        /// Snowballs per km² of the map: a job on a map of `A` km² rolls
        /// `round(snowballs_per_km2 · A)`. Default: the seed's 35 000 on the default island
        /// (1.048576 km²), version 1's default count (seed 002 shows 35k, 50k and 100k).
        pub snowballs_per_km2: f64 = 33_378.601_074_218_75, unit "1/km²", range [0.0, 1.0e12], legacy snowballs: u64;
        /// Height taken per iteration at full steepness (erosionRate), over ground of
        /// `footprint_m` cells: one iteration moves `erosion_rate · footprint_m²` m³ at any cell
        /// size (module doc).
        pub erosion_rate: f32 = 0.04, unit "m", range [0.0, 1000.0];
        /// The width of ground one iteration changes: on cells of this size the seed's 4
        /// bilinear nodes, on finer cells a tent of half-width `footprint_m` (at most
        /// [`MAX_REACH_NODES`] nodes), on coarser ones the 4 nodes with the same volume.
        /// Default: version 1's node on the default island's 2 m cells.
        pub footprint_m: f32 = 2.0, unit "m", range [1.0e-3, 1.0e5];
        /// Fraction of the load dropped per iteration on flat ground (depositionRate).
        pub deposition_rate: f32 = 0.03, range [0.0, 1.0];
        /// Acceleration along the normal (speed): every iteration the velocity (metres per
        /// iteration) gains `(n.x, n.z) · speed_m`. Default: version 1's 0.15 nodes per iteration
        /// at 2 m cells.
        pub speed_m: f32 = 0.3, unit "m/iteration", range [0.0, 1.0e5], legacy speed: f32;
        /// Fraction of the velocity kept per iteration (friction).
        pub friction: f32 = 0.7, range [0.0, 1.0];
        /// Half-width of the random offset used when sampling the normal (radius); in the job at
        /// most 64 nodes. Default: version 1's 0.8 nodes at 2 m cells.
        pub offset_radius_m: f32 = 1.6, unit "m", range [0.0, 1.0e5], legacy offset_radius: f32;
        /// Most iterations per snowball (maxIterations).
        pub max_iterations: u32 = 80, range [1.0, 1e6];
        /// Erosion ramps up as `min(1, i · iteration_scale)` (iterationScale).
        pub iteration_scale: f32 = 0.04, range [0.0, 1000.0];
        /// Gaussian blur of the heightmap after all snowballs: its sigma (0 = off). The default,
        /// `√2` m, is the seed's 3×3 binomial blur (σ = `1/√2` nodes) at 2 m cells, version 1's
        /// default.
        pub blur_sigma_m: f32 = std::f32::consts::SQRT_2, unit "m", range [0.0, 1.0e5], legacy blur_sigma: f32;
        /// Run batches in parallel tile phases; `false` = one snowball after another.
        pub parallel: bool = true;
        /// Snowballs per step (one indivisible unit of work).
        pub batch: u32 = 4096, range [1.0, (1u64 << 24) as f64];
    }
}

/// Largest random offset in nodes (a particle task's margin grows with it).
pub const MAX_OFFSET_NODES: f64 = 64.0;
/// Largest half-width of an iteration's stamp in nodes (its cost grows as the square): a
/// `footprint_m` over 16 cells is stamped 16 nodes wide, with the same volume.
pub const MAX_REACH_NODES: f64 = 16.0;

/// The snowball parameters that depend on the resolution, in the grid units of one map: what the
/// job runs with ([`SnowballParams::in_grid_units`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SnowballGrid {
    /// Snowballs of the run.
    pub snowballs: u64,
    /// Acceleration along the normal, nodes per iteration gained per iteration.
    pub speed: f32,
    /// Half-width of the random offset, nodes, in `[0, 64]`.
    pub offset_radius: f32,
    /// Sigma of the final blur, nodes (0: off).
    pub blur_sigma: f32,
    /// Half-width of an iteration's stamp, nodes, in `[1, 16]` (1: the 4 bilinear nodes).
    pub reach: f32,
    /// Height an iteration takes at full steepness, metres over the stamp's nodes
    /// (`erosion_rate · (footprint_m / Δx)²`).
    pub erosion_rate: f32,
}

impl SnowballParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }

    /// The parameters in the grid units of `map` (see the module doc's table).
    pub fn in_grid_units(&self, map: MapSize) -> SnowballGrid {
        let s = map.sampling();
        SnowballGrid {
            snowballs: map.count(self.snowballs_per_km2),
            speed: s.nodes(self.speed_m as f64) as f32,
            offset_radius: s.nodes(self.offset_radius_m as f64).min(MAX_OFFSET_NODES) as f32,
            blur_sigma: s.nodes(self.blur_sigma_m as f64) as f32,
            reach: s.nodes(self.footprint_m as f64).clamp(1.0, MAX_REACH_NODES) as f32,
            // Exactly `erosion_rate` when `footprint_m = Δx` (the factor is then 1).
            erosion_rate: (self.erosion_rate as f64 * (self.footprint_m as f64 / s.cell_size).powi(2)) as f32,
        }
    }

    /// Makes the erosion rate one of a node of `cell_size` metres, as version 1 to 3 had it:
    /// `footprint_m = cell_size`, so a project erodes its own map as it always did, and a
    /// build at another resolution moves the same volume from there.
    pub fn keep_rate_per_node(&mut self, cell_size: f32) {
        self.footprint_m = cell_size.clamp(1.0e-3, 1.0e5);
    }

    /// Converts what a version-1 file left in grid units (see [`crate::core::units`]) for `map`,
    /// the map those values were made for: the count becomes a density over its area, nodes
    /// metres.
    pub fn upgrade_units(&mut self, map: MapSize) {
        let s = map.sampling();
        // A version-1 file also gave its erosion rate per node of that map.
        if crate::core::units::Legacy::has_legacy(self) {
            self.keep_rate_per_node(map.cell_size);
        }
        if let Some(n) = self.snowballs.take() {
            self.snowballs_per_km2 = map.per_km2(n);
        }
        if let Some(v) = self.speed.take() {
            self.speed_m = s.metres(v as f64) as f32;
        }
        if let Some(r) = self.offset_radius.take() {
            self.offset_radius_m = s.metres(r as f64) as f32;
        }
        if let Some(b) = self.blur_sigma.take() {
            self.blur_sigma_m = s.metres(b as f64) as f32;
        }
    }
}
