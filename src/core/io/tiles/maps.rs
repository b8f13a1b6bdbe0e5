//! The texture maps of a tile set, one row of [`MAPS`] a map: its name (file names, `--maps`),
//! pixels, unit, meaning (the manifest's text), a one-line summary (the Build… dialog's tooltip),
//! the inputs it needs beyond the heights, its value range and its per-node encoding. Adding a
//! map is a variant of [`MapKind`] and a row of [`MAPS`]; the compiler asks for
//! [`MapKind::spec`]'s arm.
//!
//! All maps are at the build's resolution, tiled like the heights, PNG in image order:
//!
//! - `flow`: D8 drainage area `A` (m²) on the depression-filled surface, with the sea and the map
//!   edges as outlets ([`crate::core::analysis::flow_log_area`]), as 16-bit grey
//!   `v = (log10 A − lo) / (hi − lo) · 65535`, `lo = log10(cell²)` (one node's own area),
//!   `hi = log10(max A)` over the whole map.
//! - `erosion`, `deposition`: the build's erosion layers' summed change `Δ` (m; see
//!   `editor::build::Built::erosion_change`), split by sign: erosion `max(−Δ, 0)`, deposition
//!   `max(Δ, 0)`, each as 16-bit grey over `[0, its maximum over the map]`.
//! - `slope`: `θ = acos(n_up)` in degrees of the node's normal ([`Heightmap::normal`], central
//!   differences on the global map), 16-bit grey `v = θ / 90 · 65535`.
//! - `normal`: RGB8 tangent-space normals, OpenGL (`Y+`) convention ([`super::super::normal_map`]).
//! - `splat`: RGBA8 weights R = sand, G = grass and dirt, B = rock, A = snow, summing to 255, by
//!   the editor material's band rule ([`crate::core::splat`]).
//!
//! A 16-bit grey map stores `v = round(clamp((x − lo) / (hi − lo), 0, 1) · 65535)` of its value `x`
//! over its range `[lo, hi]` ([`Encoding::Grey16`]; the range is the manifest's). Derived maps use
//! the global map around each node (neighbours across a tile edge included), so they too agree on
//! shared edges.

use serde::{Deserialize, Serialize};

use crate::core::heightmap::{Heightmap, Stats};
use crate::core::io::normal_map;
use crate::core::splat::{self, SplatBands};

/// A texture map of a tile set; what it is, is its row of [`MAPS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MapKind {
    /// `flow`: D8 drainage area, log-scaled.
    Flow,
    /// `erosion`: depth the build's erosion layers took away.
    Erosion,
    /// `deposition`: thickness the build's erosion layers laid down.
    Deposition,
    /// `slope`: slope in degrees.
    Slope,
    /// `normal`: tangent-space normals.
    Normal,
    /// `splat`: sand / soil / rock / snow weights.
    Splat,
}

/// Every map, in the order of [`MapKind`]'s variants (checked when compiling), which is the order
/// of `--maps all`, of the manifest and of the dialog's checkboxes.
pub static MAPS: &[MapSpec] = &[
    MapSpec {
        kind: MapKind::Flow,
        name: "flow",
        unit: "log10 m²",
        meaning: "D8 drainage area A on the depression-filled surface (sea and map edges drain): \
                  log10 A = lo + v/65535·(hi − lo); lo = one node's own area",
        summary: "Accumulated water: log10 of the drainage area in m², 16-bit",
        needs_flow: true,
        needs_erosion_change: false,
        encoding: Encoding::Grey16 { value: |s, x, y| s.flow[s.index(x, y)], range: |r| r.flow },
    },
    MapSpec {
        kind: MapKind::Erosion,
        name: "erosion",
        unit: "m",
        meaning: "depth the build's erosion layers took away (their summed change where negative): \
                  d = v/65535·hi",
        summary: "Depth the erosion layers removed, metres, 16-bit",
        needs_flow: false,
        needs_erosion_change: true,
        encoding: Encoding::Grey16 {
            value: |s, x, y| (-s.erosion_change[s.index(x, y)]).max(0.0),
            range: |r| [0.0, r.erosion],
        },
    },
    MapSpec {
        kind: MapKind::Deposition,
        name: "deposition",
        unit: "m",
        meaning: "thickness the build's erosion layers laid down (their summed change where positive): \
                  d = v/65535·hi",
        summary: "Thickness the erosion layers deposited, metres, 16-bit",
        needs_flow: false,
        needs_erosion_change: true,
        encoding: Encoding::Grey16 {
            value: |s, x, y| s.erosion_change[s.index(x, y)].max(0.0),
            range: |r| [0.0, r.deposition],
        },
    },
    MapSpec {
        kind: MapKind::Slope,
        name: "slope",
        unit: "degrees",
        meaning: "slope of the surface normal (central differences): θ = v/65535·90",
        summary: "Slope in degrees, 16-bit",
        needs_flow: false,
        needs_erosion_change: false,
        encoding: Encoding::Grey16 {
            value: |s, x, y| splat::slope_degrees(s.map.normal(x, y)),
            range: |_| [0.0, 90.0],
        },
    },
    MapSpec {
        kind: MapKind::Normal,
        name: "normal",
        unit: "unit normal",
        meaning: "tangent-space normal, OpenGL (Y+) convention: r = +x (east), g = north, b = up; \
                  c = round((n + 1)/2·255); flip green for Unreal (DirectX)",
        summary: "Tangent-space normals, RGB 8-bit",
        needs_flow: false,
        needs_erosion_change: false,
        encoding: Encoding::Rgb8(|s, x, y| normal_map::pixel(s.map, x, y)),
    },
    MapSpec {
        kind: MapKind::Splat,
        name: "splat",
        unit: "weight/255",
        meaning: "the editor material's layer weights (shaders/terrain.wgsl, no edge noise): r = sand, \
                  g = grass and dirt, b = rock, a = snow; they sum to 255",
        summary: "The material's sand, grass, rock and snow weights, RGBA 8-bit",
        needs_flow: false,
        needs_erosion_change: false,
        encoding: Encoding::Rgba8(|s, x, y| {
            // The height as a fraction of the land's: 0 at the sea, 1 at the highest peak.
            let top = (s.ranges.peak - s.sea_level).max(1.0);
            let f = (s.map.data[s.index(x, y)] - s.sea_level) / top;
            splat::to_rgba8(splat::weights(s.bands, f, splat::slope_degrees(s.map.normal(x, y))))
        }),
    },
];

// Each row of MAPS is its variant's, in declaration order (so `MapKind`'s order, which sorts
// `--maps`, is the table's), and each variant's arm of `MapKind::spec` points at its own row.
const _: () = {
    let mut i = 0;
    while i < MAPS.len() {
        assert!(MAPS[i].kind as usize == i, "MAPS lists the maps in the order of their variants");
        assert!(MAPS[i].kind.spec().kind as usize == i, "MapKind::spec gives each map its own row");
        i += 1;
    }
};

impl MapKind {
    /// Every map, in the order of `--maps all` ([`MAPS`]' order).
    pub const ALL: [MapKind; MAPS.len()] = {
        let mut all = [MapKind::Flow; MAPS.len()];
        let mut i = 0;
        while i < MAPS.len() {
            all[i] = MAPS[i].kind;
            i += 1;
        }
        all
    };

    /// This map's row of [`MAPS`].
    pub const fn spec(self) -> &'static MapSpec {
        // One arm a variant (the compiler asks for a new one), each its row's index (evaluated when
        // compiling: a row that does not exist is an error).
        match self {
            MapKind::Flow => const { &MAPS[0] },
            MapKind::Erosion => const { &MAPS[1] },
            MapKind::Deposition => const { &MAPS[2] },
            MapKind::Slope => const { &MAPS[3] },
            MapKind::Normal => const { &MAPS[4] },
            MapKind::Splat => const { &MAPS[5] },
        }
    }

    /// The name in `--maps` and in file names ([`MapSpec::name`]).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Reads a comma-separated list of names or `all` (sorted, without repeats).
    pub fn parse_list(s: &str) -> Result<Vec<MapKind>, UnknownMap> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part.eq_ignore_ascii_case("all") {
                out.extend(MapKind::ALL);
                continue;
            }
            let k =
                MAPS.iter().find(|m| m.name.eq_ignore_ascii_case(part)).ok_or_else(|| UnknownMap(part.to_string()))?;
            out.push(k.kind);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The map file of tile `(x, y)` of the tiles named `name`: `NAME_KIND_xX_yY.png`.
    pub fn file(self, name: &str, x: usize, y: usize) -> String {
        self.file_name(name, x, y)
    }

    /// The manifest's pattern of this map's files: `NAME_KIND_x{x}_y{y}.png`.
    pub fn file_pattern(self, name: &str) -> String {
        self.file_name(name, "{x}", "{y}")
    }

    fn file_name(self, name: &str, x: impl std::fmt::Display, y: impl std::fmt::Display) -> String {
        format!("{name}_{}_x{x}_y{y}.png", self.name())
    }
}

/// A map name `--maps` (or a script) gave that is none of [`MAPS`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown map {0:?}; known: {known}, all", known = map_names().join(", "))]
pub struct UnknownMap(pub String);

/// The maps' names, in table order.
pub fn map_names() -> Vec<&'static str> {
    MAPS.iter().map(|m| m.name).collect()
}

/// `talus build --maps`'s help: the maps' names from the table.
pub fn maps_help() -> String {
    format!("Texture maps tiled like the heights: a comma-separated list of {}, or `all`", map_names().join(", "))
}

/// Whether any of `maps` needs the flow map's drainage ([`MapSpec::needs_flow`]).
pub fn needs_flow(maps: &[MapKind]) -> bool {
    maps.iter().any(|m| m.spec().needs_flow)
}

/// Whether any of `maps` needs the build's erosion change ([`MapSpec::needs_erosion_change`]).
pub fn needs_erosion_change(maps: &[MapKind]) -> bool {
    maps.iter().any(|m| m.spec().needs_erosion_change)
}

/// How a map's pixels are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PixelFormat {
    /// 16-bit greyscale PNG.
    Png16,
    /// 8-bit RGB PNG.
    Rgb8,
    /// 8-bit RGBA PNG.
    Rgba8,
}

/// One map: what it is called, holds and needs, and how a node becomes a pixel (module doc).
#[derive(Debug)]
pub struct MapSpec {
    /// The variant this row describes.
    pub kind: MapKind,
    /// The name in `--maps`, file names and the manifest's `kind`.
    pub name: &'static str,
    /// The unit of the values (the manifest's `unit`).
    pub unit: &'static str,
    /// What the pixels mean and how they map to the values (the manifest's `meaning`).
    pub meaning: &'static str,
    /// One line for people: the Build… dialog's tooltip.
    pub summary: &'static str,
    /// Needs the flow map's drainage ([`MapSource::flow`]).
    pub needs_flow: bool,
    /// Needs the build's erosion change ([`MapSource::erosion_change`]).
    pub needs_erosion_change: bool,
    /// The pixels and how a node becomes one.
    pub encoding: Encoding,
}

impl MapSpec {
    /// How the pixels are stored.
    pub fn pixels(&self) -> PixelFormat {
        match self.encoding {
            Encoding::Grey16 { .. } => PixelFormat::Png16,
            Encoding::Rgb8(_) => PixelFormat::Rgb8,
            Encoding::Rgba8(_) => PixelFormat::Rgba8,
        }
    }

    /// The values that sample 0 and full scale stand for, for a grey map (the manifest's
    /// `range`).
    pub fn range(&self, r: &MapRanges) -> Option<[f64; 2]> {
        match self.encoding {
            Encoding::Grey16 { range, .. } => Some(range(r).map(f64::from)),
            Encoding::Rgb8(_) | Encoding::Rgba8(_) => None,
        }
    }
}

/// How a map's node `(x, y)` of the global map becomes a pixel.
#[derive(Clone, Copy, Debug)]
pub enum Encoding {
    /// 16-bit grey: `value` quantised over `range` (module doc).
    Grey16 {
        /// The node's value, in the map's unit.
        value: fn(&MapSource, usize, usize) -> f32,
        /// The values that sample 0 and 65535 stand for.
        range: fn(&MapRanges) -> [f32; 2],
    },
    /// 8-bit RGB.
    Rgb8(fn(&MapSource, usize, usize) -> [u8; 3]),
    /// 8-bit RGBA.
    Rgba8(fn(&MapSource, usize, usize) -> [u8; 4]),
}

/// The ranges of the maps over the whole map, measured once for every tile and the manifest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapRanges {
    /// `[lo, hi]` of the flow map's `log10 A`: one node's own area to the largest.
    pub flow: [f32; 2],
    /// The deepest erosion, metres.
    pub erosion: f32,
    /// The thickest deposit, metres.
    pub deposition: f32,
    /// The highest height, metres (the splat map's top).
    pub peak: f32,
}

impl MapRanges {
    /// The ranges of a map of statistics `stats` and cell size `cell` metres, with its flow
    /// map's `log10 A` and its erosion change where there are (each one parallel pass: a maximum
    /// is the same in any order, as `f32::max` skips NaN either way and a `±0` tie only arises
    /// below the ranges' floors).
    pub fn measure(stats: &Stats, cell: f32, flow: Option<&Heightmap>, erosion_change: Option<&[f32]>) -> Self {
        use rayon::prelude::*;
        let cell = cell as f64;
        let flow_hi = flow.map_or(0.0, |f| f.data.par_iter().copied().reduce(|| f32::NEG_INFINITY, f32::max));
        let flow_lo = (cell * cell).log10() as f32;
        let (e, d) = erosion_change.map_or((0.0, 0.0), |c| {
            c.par_iter().map(|&v| (-v, v)).reduce(|| (0.0f32, 0.0f32), |a, b| (a.0.max(b.0), a.1.max(b.1)))
        });
        MapRanges {
            flow: [flow_lo, flow_hi.max(flow_lo + 1e-3)],
            erosion: e.max(1e-6),
            deposition: d.max(1e-6),
            peak: stats.max,
        }
    }
}

/// What the maps' pixels are computed from: the global map and what the maps need beside it.
#[derive(Clone, Copy, Debug)]
pub struct MapSource<'a> {
    /// The global build.
    pub map: &'a Heightmap,
    /// `log10 A` of every node ([`crate::core::analysis::flow_log_area`]'s data); empty when no
    /// map asked for needs it.
    pub flow: &'a [f32],
    /// The build's erosion layers' summed change of every node; empty when no map asked for needs
    /// it.
    pub erosion_change: &'a [f32],
    /// The maps' ranges over the whole map.
    pub ranges: &'a MapRanges,
    /// Sea level, metres.
    pub sea_level: f32,
    /// The material's bands, for the splat map.
    pub bands: &'a SplatBands,
}

impl MapSource<'_> {
    /// The index of node `(x, y)` in the map's data.
    #[inline]
    pub fn index(&self, x: usize, y: usize) -> usize {
        y * self.map.width + x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_map_has_one_consistent_row() {
        assert_eq!(MapKind::ALL.len(), MAPS.len());
        for (i, (&k, spec)) in MapKind::ALL.iter().zip(MAPS).enumerate() {
            // By content: a row reached through a `const` may be another copy of the same data
            // (`ptr::eq` held in one build and failed in another).
            assert_eq!((k.spec().kind, k.spec().name), (spec.kind, spec.name), "{k:?} is row {i}");
            assert_eq!(spec.kind, k);
            assert_eq!(MapKind::parse_list(spec.name), Ok(vec![k]), "{}", spec.name);
            assert_eq!(MapKind::parse_list(&spec.name.to_ascii_uppercase()), Ok(vec![k]));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{}\"", spec.name), "the serde form is the name");
            for text in [spec.unit, spec.meaning, spec.summary] {
                assert!(!text.is_empty() && !text.contains('\n') && !text.contains("  "), "{text:?}");
            }
            assert!(spec.name.chars().all(|c| c.is_ascii_lowercase()), "{}: a file-name part", spec.name);
            // A grey map has a range; a colour map has none.
            let r = MapRanges { flow: [1.0, 2.0], erosion: 3.0, deposition: 4.0, peak: 5.0 };
            assert_eq!(spec.range(&r).is_some(), spec.pixels() == PixelFormat::Png16, "{}", spec.name);
        }
        assert!(MapKind::ALL.windows(2).all(|p| p[0] < p[1]), "sorting keeps the table's order");
        let names = map_names();
        assert!(names.iter().enumerate().all(|(i, n)| !names[..i].contains(n)), "{names:?}");
        assert_eq!(MapKind::parse_list("all").unwrap(), MapKind::ALL.to_vec());
        assert!(needs_flow(&[MapKind::Flow]) && !needs_flow(&[MapKind::Erosion, MapKind::Splat]));
        assert!(needs_erosion_change(&[MapKind::Deposition]) && !needs_erosion_change(&[MapKind::Flow]));
    }

    #[test]
    fn lists_parse_and_unknown_names_say_the_known_ones() {
        assert_eq!(MapKind::parse_list("all").unwrap().len(), 6);
        assert_eq!(MapKind::parse_list("splat,flow,flow").unwrap(), vec![MapKind::Flow, MapKind::Splat]);
        let e = MapKind::parse_list("flow,rain").unwrap_err();
        assert_eq!(e.to_string(), "unknown map \"rain\"; known: flow, erosion, deposition, slope, normal, splat, all");
        assert_eq!(MapKind::Flow.file("isle", 2, 3), "isle_flow_x2_y3.png");
        assert_eq!(MapKind::Splat.file_pattern("isle"), "isle_splat_x{x}_y{y}.png");
        assert_eq!(
            maps_help(),
            "Texture maps tiled like the heights: a comma-separated list of flow, erosion, deposition, slope, \
             normal, splat, or `all`"
        );
    }
}
