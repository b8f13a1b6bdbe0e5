//! The droplet model's parameters ([`DropletParams`]): fields, defaults, validation, the
//! conversion of version-1 values and the grid units a job runs in ([`DropletGrid`]).
//!
//! Every length is in metres and the amount of work a density per km², so a project erodes the
//! same land at any resolution; the job converts them to grid units once, when it is built from
//! its terrain ([`DropletParams::in_grid_units`]):
//!
//! | parameter | unit | in the job (`Δx` the cell size) |
//! |---|---|---|
//! | `droplets_per_km2` | 1/km² | `round(density · area)` droplets ([`MapSize::count`]) |
//! | `min_slope_tan` | m/m | `min_slope_tan · Δx` metres of drop per step |
//! | `radius_m` | m | `radius_m / Δx` nodes, clamped to `[1, 64]` |
//! | `max_path_m` | m | `max(1, round(max_path_m / Δx))` steps (each one node long) |
//! | `blur_m` | m | Gaussian sigma `blur_m / Δx` nodes |
//! | `inertia` | kept per `path_step_m` of path | `inertia^q` per step, `q = Δx / path_step_m` |
//! | `erosion`, `deposition` | fraction per `path_step_m` | `1 − (1 − f)^q` per step |
//! | `evaporation` | fraction per `path_step_m` | water kept per step `(1 − evaporation)^q` |
//! | `capacity` | volume factor (below) | `capacity / q³` per step |
//! | (the seed's erosion cap) | — | `−Δh · dig` per step, `dig = min(1, 1/q²)` |
//!
//! The rates are given for a step of `path_step_m` metres of path (2 m, version 1's step on the
//! default island) and the job compounds them over its steps of one node, so a droplet relaxes
//! toward its capacity, evaporates and forgets its direction over the same metres at any `Δx`.
//! Its capacity is a volume: with the drop per step `−Δh ≈ tan·Δx` and a height change spread over
//! nodes of `Δx²`, the seed's capacity `max(−Δh, min_slope)·v·W·capacity` in height over one node
//! is `tan·v·W·capacity·Δx³` m³; dividing the factor by `q³` makes it
//! `tan·v·W·capacity·path_step_m³` at any `Δx`. With `Δx = path_step_m` every conversion is the
//! identity, bit for bit: the seed's algorithm on its own grid.
//!
//! The seed caps one step's erosion at its drop `−Δh` in height over one node, a volume of
//! `tan·Δx³`, i.e. `tan·Δx²` per metre of path; most steps end there (the capacity is about 100×
//! the drop). On cells coarser than `path_step_m` (`q > 1`) the cap is `−Δh/q²`, the volume per
//! metre it allows on cells of `path_step_m`, so a coarse map moves about the volume of the
//! reference. On finer cells the seed's cap stays, so there the volume a droplet moves shrinks
//! about as `Δx²` (README, *World units*, measured). A volume cap there (`−Δh/q²`) was tried: with
//! deposits on a cell's four nodes a 1 m map ran away into walls hundreds of metres high; with the
//! deposits spread (below) 1 m cells moved the reference's volume but 0.5 m cells dug craters with
//! rims. The fill of an uphill step stays the seed's, at most the rise `Δh`.
//!
//! On cells finer than `path_step_m` a droplet's load, a volume, is a tall height over one node
//! (`1/q²` times the reference's), and the seed's deposit on the four nodes of its cell heaps it
//! up: a 0.25 m map was peppered with cones metres high. There every deposit is spread with the
//! erosion brush (`radius_m`), the width the droplet erodes from ([`DropletGrid::wide`]).
//!
//! Projects of format version 2 and older had the rates per step of one node; they are read with
//! `path_step_m` = their cell size, so they keep their land ([`DropletParams::keep_rates_per_node`]).
//!
//! The defaults are version 1's on the default island (513², `Δx = 2 m`).

use serde::{Deserialize, Serialize};

use super::super::JobError;
use crate::core::units::MapSize;

/// Sea mode: radius (nodes) of the disc a droplet's deposits on land are spread over, weights
/// `max(0, r − |p − n|)`. The four bilinear corners concentrate every deposit on one cell and
/// leave single-node spikes beside the radius-5 erosion brush; spreading as wide as the brush
/// leaves a hammered ripple where droplets fill and re-dig flats. 2 nodes reads as sediment.
pub const LAND_SPREAD: f32 = 2.0;

/// Largest erosion brush radius in nodes (the brushes are precomputed for every sub-cell
/// position, and a particle task's margin grows with it).
pub const MAX_RADIUS_NODES: f64 = 64.0;
/// Most steps a droplet may take, whatever the path length and cell size.
pub const MAX_STEPS: f64 = (1u32 << 30) as f64;

crate::params! {
    /// Parameters of the droplet model (seed 000's names in brackets).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct DropletParams {
        /// Droplets per km² of the map (particleCount over the map's area): a job on a map of
        /// `A` km² runs `round(droplets_per_km2 · A)` droplets. Default: 5000 droplets on the
        /// default island (1.048576 km²), version 1's default count.
        pub droplets_per_km2: f64 = 4_768.371_582_031_25, unit "1/km²", range [0.0, 1.0e12], legacy droplets: u64;
        /// How much of its old direction a droplet keeps per `path_step_m` of path (inertia).
        pub inertia: f32 = 0.3, range [0.0, 1.0];
        /// Smallest slope used in the capacity (minSlope), as a tangent: a step of one node never
        /// counts less than `min_slope_tan · Δx` metres of drop. Default: version 1's 0.01 m per
        /// node at 2 m cells.
        pub min_slope_tan: f32 = 0.005, unit "m/m", range [0.0, 1e6], legacy min_slope: f32;
        /// Sediment capacity factor (capacityFactor / dropCapacity): a droplet carries at most
        /// `tan·v·W·capacity·path_step_m³` m³ (module doc).
        pub capacity: f32 = 10.0, range [0.0, 1e6];
        /// Fraction of the excess sediment dropped per `path_step_m` of path (depositionRate).
        pub deposition: f32 = 0.08, range [0.0, 1.0];
        /// Fraction of the free capacity eroded per `path_step_m` of path (erosionRate).
        pub erosion: f32 = 0.7, range [0.0, 1.0];
        /// Gravity in the speed update (gravity).
        pub gravity: f32 = 9.81, unit "m/s²", range [0.0, 1e6];
        /// Fraction of water evaporating per `path_step_m` of path (evaporationRate).
        pub evaporation: f32 = 0.02, range [0.0, 1.0];
        /// Erosion brush radius (erosionRadius); in the job at least 1 and at most 64 nodes.
        /// Default: version 1's 5 nodes at 2 m cells.
        pub radius_m: f32 = 10.0, unit "m", range [1.0e-3, 1.0e5], legacy radius: f32;
        /// Longest path of a droplet (maxLifeTime steps of one node each): the job's step limit is
        /// `max(1, round(max_path_m / Δx))`. Default: version 1's 300 steps at 2 m cells.
        pub max_path_m: f32 = 600.0, unit "m", range [0.0, 1.0e9], legacy max_lifetime: u32;
        /// The length of path the rates `inertia`, `erosion`, `deposition`, `evaporation` and
        /// the volume factor `capacity` are given for (module doc): a droplet on cells of this
        /// size runs them as they are; on other cells they are compounded per metre. Default:
        /// version 1's step of one node on the default island's 2 m cells.
        pub path_step_m: f32 = 2.0, unit "m", range [1.0e-3, 1.0e5];
        /// Water of a new droplet.
        pub initial_water: f32 = 1.0, range [0.0, 1e6];
        /// Speed of a new droplet. The speed is not a distance per step (every step is one node
        /// long): the update `v² ← v² − Δh·gravity` takes the drop `Δh` in metres, so it is a
        /// speed in m/s (with the seed's energy factor 1 instead of 2), the same at any cell size.
        pub initial_speed: f32 = 1.0, unit "m/s", range [0.0, 1e6];
        /// Drain-valley guard (seed 000, after Beyer): erosion never takes a node below this height
        /// (finite). `None`: see [`Self::floor_at_input_min`].
        pub min_height: Option<f32> = None, unit "m", range [-1e30, 1e30];
        /// When `min_height` is `None`, guard at the lowest height of the terrain the job started from.
        /// Without any guard, a pit at a drain edge draws ever more droplets and deepens
        /// without bound (seed 000's "drain valleys"; on a 0–100 m map, 20 000 droplets dig pits of −10⁶
        /// m), so an editor keeps it on; `false` gives the unguarded seed algorithm.
        pub floor_at_input_min: bool = true;
        /// Smooth the changes: each batch's change map is Gaussian-blurred with this sigma (0 = off)
        /// before it is applied. `None`: off.
        pub blur_m: Option<f32> = None, unit "m", range [0.0, 1.0e5], legacy blur_changes: Option<f32>;
        /// Run batches in parallel tile phases (see the module doc); `false` = classic serial order.
        pub parallel: bool = true;
        /// Droplets per step (one indivisible unit of work).
        pub batch: u32 = 4096, range [1.0, (1u64 << 24) as f64];
    }
}

/// The droplet parameters that depend on the resolution, in the grid units of one map: what the
/// CPU and the GPU jobs run with (both from [`DropletParams::in_grid_units`], so they agree bit
/// for bit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropletGrid {
    /// Droplets of the run.
    pub droplets: u64,
    /// Smallest drop a step counts in the capacity, metres per node.
    pub min_slope: f32,
    /// Erosion brush radius, nodes, in `[1, 64]`.
    pub radius: f32,
    /// Most steps a droplet takes (≥ 1).
    pub max_lifetime: u32,
    /// Sigma of the change blur, nodes (`None` or 0: off).
    pub blur: Option<f32>,
    /// Direction kept per step of one node.
    pub inertia: f32,
    /// Capacity factor per step: a height over one node per unit of drop, speed and water.
    pub capacity: f32,
    /// Fraction of the excess sediment dropped per step.
    pub deposition: f32,
    /// Fraction of the free capacity eroded per step.
    pub erosion: f32,
    /// Water kept per step, `(1 − evaporation)^q`.
    pub keep_water: f32,
    /// One step erodes at most `−Δh · dig` (a height over one node): `min(1, 1/q²)` (module doc).
    pub dig: f32,
    /// Cells finer than `path_step_m` (`q < 1`): deposits are spread with the erosion brush
    /// (`radius_m`) instead of over a cell's four nodes (module doc).
    pub wide: bool,
}

impl DropletParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }

    /// The parameters in the grid units of `map` (see the module doc's table).
    pub fn in_grid_units(&self, map: MapSize) -> DropletGrid {
        let s = map.sampling();
        let steps = s.nodes(self.max_path_m as f64).round();
        // Steps of one node per `path_step_m`; exactly 1 on cells of that size, where every
        // conversion below is the identity, bit for bit.
        let q = s.cell_size / self.path_step_m as f64;
        let same = q == 1.0;
        let finite = |v: f64| v.clamp(0.0, f32::MAX as f64) as f32;
        let keep = |k: f32| if same { k } else { finite((k as f64).powf(q)) };
        let rate = |f: f32| if same { f } else { finite(1.0 - (1.0 - f as f64).powf(q)) };
        DropletGrid {
            inertia: keep(self.inertia),
            capacity: if same { self.capacity } else { finite(self.capacity as f64 / (q * q * q)) },
            deposition: rate(self.deposition),
            erosion: rate(self.erosion),
            dig: if q > 1.0 { finite(1.0 / (q * q)) } else { 1.0 },
            wide: q < 1.0,
            keep_water: keep(1.0 - self.evaporation),
            droplets: map.count(self.droplets_per_km2),
            min_slope: s.per_node(self.min_slope_tan as f64) as f32,
            radius: s.nodes(self.radius_m as f64).clamp(1.0, MAX_RADIUS_NODES) as f32,
            max_lifetime: if steps.is_nan() { 1 } else { steps.clamp(1.0, MAX_STEPS) as u32 },
            blur: self.blur_m.map(|b| s.nodes(b as f64) as f32),
        }
    }

    /// Makes the rates those of one node's step on cells of `cell_size` metres, as format
    /// versions 1 and 2 had them: `path_step_m = cell_size`, so the project erodes its own map
    /// as it always did, and a build at another resolution compounds the rates from there.
    pub fn keep_rates_per_node(&mut self, cell_size: f32) {
        self.path_step_m = cell_size.clamp(1.0e-3, 1.0e5);
    }

    /// Converts what a version-1 file left in grid units (see [`crate::core::units`]) for `map`,
    /// the map those values were made for: the droplet count becomes a density over its area,
    /// slopes per node tangents, nodes and steps metres, and the rates are per step of one of its
    /// nodes ([`Self::keep_rates_per_node`]).
    pub fn upgrade_units(&mut self, map: MapSize) {
        let s = map.sampling();
        // A version-1 file also gave its rates per step of one node of that map.
        if crate::core::units::Legacy::has_legacy(self) {
            self.keep_rates_per_node(map.cell_size);
        }
        if let Some(n) = self.droplets.take() {
            self.droplets_per_km2 = map.per_km2(n);
        }
        if let Some(m) = self.min_slope.take() {
            // Metres per node over metres per node: a tangent.
            self.min_slope_tan = (m as f64 / s.cell_size) as f32;
        }
        if let Some(r) = self.radius.take() {
            self.radius_m = s.metres(r as f64) as f32;
        }
        if let Some(l) = self.max_lifetime.take() {
            self.max_path_m = s.metres(l as f64) as f32;
        }
        if let Some(b) = self.blur_changes.take() {
            self.blur_m = b.map(|b| s.metres(b as f64) as f32);
        }
    }
}
