//! World units (issue #26): a project describes land, not a grid. Its extent is in metres and
//! stays fixed; the node count is only how finely it is sampled. So every parameter a user sets
//! is in metres, seconds, years, degrees or per km², never per node, and the same numbers give the
//! same landforms at 513² and at 8193².
//!
//! The resolution enters through this module: [`Sampling`], the spacing of the nodes in metres,
//! and [`MapSize`], a map's node counts with its sampling (what a count per km² becomes a count
//! on). A generator evaluates its function of world position `(x·Δx, y·Δx)`; an erosion model
//! converts its world parameters to grid units once, when its job is built from a terrain
//! ([`Sampling::of`], [`MapSize::of`]), and works in grid units inside.
//!
//! # Version 1 values
//! Version 1 had some parameters in grid units (nodes, cycles per node, steps). Those fields were
//! renamed with their unit (`radius` → `radius_m`), and each old name stays in its struct as a
//! hidden legacy field (`params!`'s `legacy` clause) that older files fill and newer ones never
//! write. Each parameter type's `upgrade_units(cell_size)` converts what older files left there,
//! with the cell size of the map the values were made for (a project's own, a generator's own,
//! the terrain a job runs on); [`Legacy::has_legacy`] says whether anything is left to convert.
//! The conversions, with `Δx` the cell size in metres:
//!
//! | version 1 | version 2 | conversion |
//! |---|---|---|
//! | length in nodes | metres (`*_m`) | `× Δx` |
//! | frequency in cycles per node | wavelength in metres (`wavelength_m`) | `Δx / f` |
//! | slope in m per node | slope as a tangent (m/m) | `/ Δx` |
//! | speed in nodes per step | metres per step | `× Δx` |
//! | count per map | count per km² (`*_per_km2`) | `/ (area in km²)` |
//!
//! The README's *World units* table lists every parameter, its unit, and what a build at another
//! resolution does with it.

/// A parameter type that may hold version-1 values still to convert (see the module doc).
/// Implemented by `params!` for every parameter struct.
pub trait Legacy {
    /// Whether a version-1 (grid-unit) field is still set.
    fn has_legacy(&self) -> bool;
}

/// Reads a legacy field: version-1 files hold the bare value (`radius: 5.0`), not `Some(…)`.
pub fn legacy_value<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// How finely a world is sampled: the spacing of the grid's nodes, metres. The one way the
/// resolution enters a model or a generator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Distance between neighbouring nodes, metres (finite, > 0).
    pub cell_size: f64,
}

impl Sampling {
    /// The sampling of a map with this cell size (metres).
    pub fn new(cell_size: f32) -> Self {
        Self { cell_size: cell_size as f64 }
    }

    /// The sampling of `map`.
    pub fn of(map: &crate::core::Heightmap) -> Self {
        Self::new(map.cell_size)
    }

    /// A length in metres as a number of nodes.
    pub fn nodes(self, metres: f64) -> f64 {
        metres / self.cell_size
    }

    /// A number of nodes as metres.
    pub fn metres(self, nodes: f64) -> f64 {
        nodes * self.cell_size
    }

    /// A spatial frequency given as a wavelength in metres, in cycles per node.
    pub fn cycles_per_node(self, wavelength_m: f64) -> f64 {
        self.cell_size / wavelength_m
    }

    /// A slope as a tangent (m/m) in metres of height per node.
    pub fn per_node(self, tangent: f64) -> f64 {
        tangent * self.cell_size
    }

    /// Area of a `width × height` map (the rectangle through its outer nodes), km².
    pub fn area_km2(self, width: usize, height: usize) -> f64 {
        let side = |n: usize| n.saturating_sub(1).max(1) as f64 * self.cell_size;
        side(width) * side(height) * 1e-6
    }

    /// `per_km2` items over a `width × height` map, rounded to the nearest whole count.
    pub fn count(self, per_km2: f64, width: usize, height: usize) -> u64 {
        let n = per_km2 * self.area_km2(width, height);
        if n.is_finite() && n > 0.0 { n.round().min(u64::MAX as f64) as u64 } else { 0 }
    }
}

/// The map a job runs on, as far as its amount of work is concerned: a particle model's work is
/// a density (per km², so the same project erodes the same land at any resolution), and the
/// count of one run is that density times this map's area ([`Sampling::count`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapSize {
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Metres between nodes.
    pub cell_size: f32,
}

impl MapSize {
    /// A `width × height` map of `cell_size` metres.
    pub fn new(width: usize, height: usize, cell_size: f32) -> Self {
        Self { width, height, cell_size }
    }

    /// The size of `map`.
    pub fn of(map: &crate::core::Heightmap) -> Self {
        Self::new(map.width, map.height, map.cell_size)
    }

    /// How finely the map samples its world.
    pub fn sampling(self) -> Sampling {
        Sampling::new(self.cell_size)
    }

    /// `per_km2` items over this map, rounded to a whole count ([`Sampling::count`]).
    pub fn count(self, per_km2: f64) -> u64 {
        self.sampling().count(per_km2, self.width, self.height)
    }

    /// The density (per km²) of `count` items over this map: [`Self::count`] of it gives `count`
    /// back exactly (for any count below 2⁵⁰).
    pub fn per_km2(self, count: u64) -> f64 {
        let area = self.sampling().area_km2(self.width, self.height);
        if area > 0.0 && area.is_finite() { count as f64 / area } else { 0.0 }
    }
}

/// A move to another grid over the same extent: what a build that re-runs a model at another
/// resolution hands to a model's `to_grid` (its registry entry). Node `X` of the new grid lies at
/// `X · (from − 1) / (to − 1)` of the old one along each side (corners on corners, as in
/// [`crate::core::resample`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridChange {
    /// Nodes `(width, height)` of the grid the parameters were made for.
    pub from: (usize, usize),
    /// Nodes `(width, height)` of the new grid.
    pub to: (usize, usize),
    /// New cells per old cell along a side, `(to.0 − 1) / (from.0 − 1)`: a cell size in the
    /// parameters is divided by it, a length in nodes multiplied.
    pub ratio: f64,
}

impl GridChange {
    /// The change from `from` to `to` nodes, with its ratio from the widths (1 where a side has
    /// fewer than 2 nodes).
    pub fn new(from: (usize, usize), to: (usize, usize)) -> Self {
        let ratio = if from.0 < 2 || to.0 < 2 { 1.0 } else { (to.0 - 1) as f64 / (from.0 - 1) as f64 };
        Self { from, to, ratio }
    }

    /// A per-node map of the old grid (one value per node, row-major) on the new one, never
    /// beyond the values it interpolates (a dry area stays dry, a rate keeps its sign) and exact
    /// on the nodes both grids share ([`crate::core::resample::resample_bounded`]). `None` when
    /// `map` is not one value per node of the old grid.
    pub fn resample(&self, map: &[f32]) -> Option<Vec<f32>> {
        crate::core::resample::resample_bounded(map, self.from.0, self.from.1, self.to.0, self.to.1)
    }

    /// Brings an optional per-node map to the new grid in place ([`Self::resample`]). A map that
    /// is not one value per node of the old grid is left as it is: the job refuses it with its
    /// own message.
    pub fn per_node_map(&self, map: &mut Option<Vec<f32>>) {
        if let Some(m) = map.as_mut()
            && let Some(r) = self.resample(m)
        {
            *m = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    crate::params! {
        /// A parameter struct that renamed a grid-unit field.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct Probe {
            /// A radius, metres.
            pub radius_m: f32 = 10.0, unit "m", range [0.0, 100.0], legacy radius: f32;
            /// A count.
            pub count: u32 = 3;
        }
    }

    impl Probe {
        fn upgrade_units(&mut self, cell_size: f32) {
            if let Some(r) = self.radius.take() {
                self.radius_m = Sampling::new(cell_size).metres(r as f64) as f32;
            }
        }
    }

    #[test]
    fn a_legacy_field_is_read_converted_and_never_written() {
        use crate::core::params::ParamSchema;
        let mut p: Probe = ron::from_str("(radius: 5.0, count: 4)").unwrap();
        assert!(p.has_legacy());
        assert_eq!((p.radius, p.radius_m), (Some(5.0), 10.0));
        p.upgrade_units(2.0);
        assert!(!p.has_legacy());
        assert_eq!(p, Probe { radius_m: 10.0, count: 4, ..Default::default() });
        let text = ron::to_string(&p).unwrap();
        assert!(!text.contains("radius:"), "{text}");
        assert_eq!(ron::from_str::<Probe>(&text).unwrap(), p);
        // The legacy field is not a parameter: not in the schema, not range-checked.
        let names: Vec<_> = Probe::spec().fields().iter().map(|f| f.name).collect();
        assert_eq!(names, ["radius_m", "count"]);
        assert!(Probe { radius: Some(f32::NAN), ..Default::default() }.check_ranges().is_ok());
    }

    #[test]
    fn conversions_round_trip() {
        let s = Sampling::new(2.0);
        assert_eq!(s.metres(s.nodes(10.0)), 10.0);
        assert_eq!(s.nodes(10.0), 5.0);
        // 0.006 cycles per node at 2 m is a 333 m wavelength, and back.
        let wavelength = s.cell_size / 0.006;
        assert!((s.cycles_per_node(wavelength) - 0.006).abs() < 1e-15);
        assert_eq!(s.per_node(0.005), 0.01);
        // The default island: 513² at 2 m is 1.048576 km².
        assert!((s.area_km2(513, 513) - 1.048_576).abs() < 1e-12);
        assert_eq!(s.count(1000.0, 513, 513), 1049);
        assert_eq!(s.count(f64::NAN, 513, 513), 0);
        // The same world sampled 4× finer holds the same count.
        let fine = Sampling::new(0.5);
        assert_eq!(fine.count(1000.0, 2049, 2049), 1049);
    }
}
