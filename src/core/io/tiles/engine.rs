//! Engine conventions, one row of [`ENGINES`] an engine: its name, its tile sizes, its usual
//! height-tile format, the row order of its R16 tiles, its height range, where it places a tile,
//! and its import numbers (the manifest's `unreal` / `unity` object and the lines `talus build`
//! prints). Adding an engine is a variant of [`Engine`] and a row of [`ENGINES`]; the compiler
//! asks for the rest ([`Engine::spec`]'s arm, the manifest's object for its [`EngineImport`]).
//!
//! # Tile sizes
//!
//! - **Unreal**: the landscape sizes of Epic's "Landscape Technical Guide" ("Recommended Landscape
//!   Sizes"): 127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129 nodes a side.
//! - **Unity**: `2^k + 1` from 33 to 4097 (Unity's heightmap resolutions,
//!   <https://docs.unity3d.com/Manual/terrain-Heightmaps.html>).
//!
//! These are the program's only lists of the engines' sizes: `talus convert --resize unreal|unity`
//! and the build sides Unreal adds to `2^k + 1` (`editor::build::UNREAL_SIZES`, [`sizes_within`])
//! read them.
//!
//! # Heights
//!
//! A sample `v` stands for `h = min_m + v / 65535 · (max_m − min_m)` metres, one range for all
//! tiles ([`crate::core::io::interop::quantise`]); [`HeightRule`] says how the range is chosen:
//!
//! - **Unreal** ([`HeightRule::ZeroCentred`]): the range of
//!   [`crate::core::io::interop::unreal_range`] over the whole map (`r` = its largest |height|:
//!   `[−r·32768/32767, r]`, so sample 32768 is exactly 0 m). Unreal reads
//!   `z_cm = (v − 32768) · ZScale / 128` relative to the landscape's location, so a Z scale of 100
//!   spans ±256 m; the manifest's `ZScale = r · 100 · 128 / 32767` gives back metres, with
//!   location Z = 0 cm (0 m stays at Z = 0) and X/Y scale = cell size · 100 cm.
//! - **Unity** ([`HeightRule::OwnRange`]): the map's own `[min, max]`; Unity maps `v / 65535` onto
//!   the terrain's height, so the terrain size's height is `max − min` and its position's y is
//!   `min`.
//!
//! # Rows
//!
//! PNG tiles and Unreal's R16 tiles are in image order (file row 0 = the tile's northern row, our
//! smallest `y`), as every raster export here. **Unity's R16 tiles are written southern row
//! first** ([`RowOrder::SouthFirst`]): Unity's Import Raw puts the file's first row at the
//! terrain's `z = 0` (its back edge) unless "Flip Vertically" is ticked; with the rows reversed,
//! the world's north lies towards `+z` with "Flip Vertically" off, as the manifest says
//! (`rows: "south_first"`, `flip_vertically: false`).
//!
//! # Placement
//!
//! Tile `(X, Y)` whose first node is `(px, py)`: Unreal places it at
//! `(px · cell · 100, py · cell · 100, 0)` cm; Unity at `(X · T, min, (Ky − 1 − Y) · T)` m, with
//! `T = (S − 1) · cell` (Unity's `z` grows north, our `y` south).

use serde::{Deserialize, Serialize};

use super::TileFormat;
use crate::core::heightmap::Stats;
use crate::core::io::interop::unreal_range_of;

/// The engine a tile set is for; its conventions are its row of [`ENGINES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Unreal Engine's Landscape.
    Unreal,
    /// Unity's Terrain.
    Unity,
}

/// Every engine's conventions, in the order of [`Engine`]'s variants (checked when compiling).
pub static ENGINES: &[EngineSpec] = &[
    EngineSpec {
        engine: Engine::Unreal,
        name: "unreal",
        label: "Unreal",
        a_name: "an Unreal",
        tip: "Landscape / World Partition: its tile sizes (505, 1009, 2017 …), PNG16 with 32768 = 0 m, name_x{X}_y{Y}",
        tile_sizes: &[127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129],
        formats: &[TileFormat::Png16, TileFormat::R16],
        default_format: TileFormat::Png16,
        r16_rows: RowOrder::NorthFirst,
        heights: HeightRule::ZeroCentred,
        place: |p| [p.offset_px[0] as f64 * p.cell * 100.0, p.offset_px[1] as f64 * p.cell * 100.0, 0.0],
        import: |i| {
            EngineImport::Unreal(UnrealImport {
                xy_scale_cm: i.cell * 100.0,
                z_scale: unreal_range_of(i.stats).1 as f64,
                location_cm: [0.0, 0.0, 0.0],
                resolution: i.size,
                first_tile: i.format.file(i.name, 0, 0),
            })
        },
        import_lines: |i| match i {
            EngineImport::Unreal(u) => vec![format!(
                "Unreal: Import from file {}, scale X/Y {:.4} Z {:.4}, location Z {} cm",
                u.first_tile, u.xy_scale_cm, u.z_scale, u.location_cm[2]
            )],
            EngineImport::Unity(_) => Vec::new(),
        },
    },
    EngineSpec {
        engine: Engine::Unity,
        name: "unity",
        label: "Unity",
        a_name: "a Unity",
        tip: "Terrain: 2^k + 1 tiles, R16 little-endian, rows south first",
        tile_sizes: &[33, 65, 129, 257, 513, 1025, 2049, 4097],
        formats: &[TileFormat::Png16, TileFormat::R16],
        default_format: TileFormat::R16,
        r16_rows: RowOrder::SouthFirst,
        heights: HeightRule::OwnRange,
        place: |p| [p.tile[0] as f64 * p.tile_m, p.range[0] as f64, (p.tiles[1] - 1 - p.tile[1]) as f64 * p.tile_m],
        import: |i| {
            EngineImport::Unity(UnityImport {
                heightmap_resolution: i.tile_size,
                terrain_size_m: [i.tile_m, i.range[1] as f64 - i.range[0] as f64, i.tile_m],
                depth: 16,
                byte_order: "Windows".into(),
                flip_vertically: false,
            })
        },
        import_lines: |i| match i {
            EngineImport::Unity(u) => vec![format!(
                "Unity: per tile Import Raw (16 bit, Windows, Flip Vertically {}), resolution {}, \
                 terrain size {:.3} × {:.3} × {:.3} m",
                if u.flip_vertically { "on" } else { "off" },
                u.heightmap_resolution,
                u.terrain_size_m[0],
                u.terrain_size_m[1],
                u.terrain_size_m[2]
            )],
            EngineImport::Unreal(_) => Vec::new(),
        },
    },
];

// Each row of ENGINES is its variant's, in declaration order, and each variant's arm of
// `Engine::spec` points at its own row (a row missing for a variant fails in `spec` itself).
const _: () = {
    let mut i = 0;
    while i < ENGINES.len() {
        assert!(ENGINES[i].engine as usize == i, "ENGINES lists the engines in the order of their variants");
        assert!(ENGINES[i].engine.spec().engine as usize == i, "Engine::spec gives each engine its own row");
        i += 1;
    }
};

impl Engine {
    /// Every engine, in the order of [`ENGINES`].
    pub const ALL: [Engine; ENGINES.len()] = {
        let mut all = [Engine::Unreal; ENGINES.len()];
        let mut i = 0;
        while i < ENGINES.len() {
            all[i] = ENGINES[i].engine;
            i += 1;
        }
        all
    };

    /// This engine's row of [`ENGINES`].
    pub const fn spec(self) -> &'static EngineSpec {
        // One arm a variant (the compiler asks for a new one), each its row's index (evaluated when
        // compiling: a row that does not exist is an error).
        match self {
            Engine::Unreal => const { &ENGINES[0] },
            Engine::Unity => const { &ENGINES[1] },
        }
    }

    /// `unreal` or `unity` ([`EngineSpec::name`]).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Reads [`Self::name`] (any case).
    pub fn parse(s: &str) -> Option<Self> {
        ENGINES.iter().find(|e| e.name.eq_ignore_ascii_case(s)).map(|e| e.engine)
    }
}

/// The names of the engines, in table order (`--engine`'s values).
pub fn engine_names() -> Vec<&'static str> {
    ENGINES.iter().map(|e| e.name).collect()
}

/// One engine's conventions (module doc).
#[derive(Debug)]
pub struct EngineSpec {
    /// The variant this row describes.
    pub engine: Engine,
    /// Its name in `--engine`, the manifest, folder names and messages: `unreal`.
    pub name: &'static str,
    /// Its name in the Build… dialog's engine choice: "Unreal".
    pub label: &'static str,
    /// Its short name with the article, as a message says it: "an Unreal" (tile size).
    pub a_name: &'static str,
    /// What a set for it is, in a line: the hover text of the dialog's engine choice.
    pub tip: &'static str,
    /// The sizes a tile may have, nodes a side, ascending (module doc).
    pub tile_sizes: &'static [usize],
    /// The height-tile formats its importer reads.
    pub formats: &'static [TileFormat],
    /// The height tiles' usual format (one of [`Self::formats`]).
    pub default_format: TileFormat,
    /// The row order of R16 height tiles (PNG tiles are always north first; module doc).
    pub r16_rows: RowOrder,
    /// How the shared height range is chosen (module doc).
    pub heights: HeightRule,
    /// Where the engine places a tile: the manifest's `engine_position` (module doc).
    pub place: fn(&Placement) -> [f64; 3],
    /// The import numbers: the manifest's object for this engine.
    pub import: fn(&ImportInput) -> EngineImport,
    /// What to type into the engine's import dialog, a line each, from its import numbers (a
    /// manifest's object for the engine; `talus build` prints them after writing a set).
    pub import_lines: fn(&EngineImport) -> Vec<String>,
}

impl EngineSpec {
    /// The row order of height tiles in `format`.
    pub fn rows(&self, format: TileFormat) -> RowOrder {
        match format {
            TileFormat::Png16 => RowOrder::NorthFirst,
            TileFormat::R16 => self.r16_rows,
        }
    }

    /// How its height tiles in `format` read, for the dialog's note beside the format: the
    /// height range and, where it is not image order, the rows' order.
    pub fn heights_note(&self, format: TileFormat) -> String {
        let range = match self.heights {
            HeightRule::ZeroCentred => "32768 = 0 m",
            HeightRule::OwnRange => "the set's own range",
        };
        match self.rows(format) {
            RowOrder::NorthFirst => range.into(),
            RowOrder::SouthFirst => format!("{range}, south row first"),
        }
    }
}

/// The sizes a tile may have for `engine` ([`EngineSpec::tile_sizes`]).
pub fn tile_sizes(engine: Engine) -> &'static [usize] {
    engine.spec().tile_sizes
}

/// How many of `sizes` lie in `[lo, hi]` (the length of [`sizes_within`]'s array).
pub const fn count_within(sizes: &[usize], [lo, hi]: [usize; 2]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < sizes.len() {
        if lo <= sizes[i] && sizes[i] <= hi {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The `N` of `sizes` that lie in `[lo, hi]`, in their order: a table's sizes as a constant
/// (`N` = [`count_within`]; a wrong `N` fails when compiling).
pub const fn sizes_within<const N: usize>(sizes: &[usize], [lo, hi]: [usize; 2]) -> [usize; N] {
    let mut out = [0; N];
    let (mut n, mut i) = (0, 0);
    while i < sizes.len() {
        if lo <= sizes[i] && sizes[i] <= hi {
            out[n] = sizes[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "N must be count_within(sizes, range)");
    out
}

/// The order of a height tile's rows in its file (module doc, Rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOrder {
    /// Image order: the tile's northern row first.
    NorthFirst,
    /// The tile's southern row first (Unity's R16).
    SouthFirst,
}

impl RowOrder {
    /// The manifest's `heights.rows`: `north_first` or `south_first`.
    pub fn name(self) -> &'static str {
        match self {
            RowOrder::NorthFirst => "north_first",
            RowOrder::SouthFirst => "south_first",
        }
    }

    /// The file row that holds the tile's row `r` (0 = north) of `rows`.
    pub fn file_row(self, r: usize, rows: usize) -> usize {
        match self {
            RowOrder::NorthFirst => r,
            RowOrder::SouthFirst => rows - 1 - r,
        }
    }
}

/// How a tile set's shared height range is chosen (module doc, Heights).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeightRule {
    /// Unreal's zero-centred range ([`crate::core::io::interop::unreal_range`]): sample 32768 is
    /// 0 m.
    ZeroCentred,
    /// The map's own `[min, max]` (at least 1 mm apart).
    OwnRange,
}

impl HeightRule {
    /// The shared `[lo, hi]` of a map with statistics `s`.
    pub fn range(self, s: &Stats) -> [f32; 2] {
        match self {
            HeightRule::ZeroCentred => unreal_range_of(s).0,
            HeightRule::OwnRange => [s.min, s.max.max(s.min + 1e-3)],
        }
    }

    /// The sample that stands for 0 m, where the rule fixes one (the manifest's `zero_sample`).
    pub fn zero_sample(self) -> Option<u32> {
        match self {
            HeightRule::ZeroCentred => Some(32768),
            HeightRule::OwnRange => None,
        }
    }
}

/// Where a tile lies, for [`EngineSpec::place`].
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The tile's column and row `[X, Y]`.
    pub tile: [usize; 2],
    /// Tiles across and down `[Kx, Ky]`.
    pub tiles: [usize; 2],
    /// The tile's first node in the global map, `[px, py]`.
    pub offset_px: [usize; 2],
    /// Metres between nodes.
    pub cell: f64,
    /// A tile's extent, metres (`(S − 1) · cell`).
    pub tile_m: f64,
    /// The shared height range, metres.
    pub range: [f32; 2],
}

/// What an engine's import numbers are made from, for [`EngineSpec::import`].
#[derive(Clone, Copy, Debug)]
pub struct ImportInput<'a> {
    /// The tiles' file-name prefix.
    pub name: &'a str,
    /// The height tiles' format.
    pub format: TileFormat,
    /// Metres between nodes.
    pub cell: f64,
    /// Nodes of the whole map, `[x, y]`.
    pub size: [usize; 2],
    /// Nodes a side of one tile.
    pub tile_size: usize,
    /// A tile's extent, metres.
    pub tile_m: f64,
    /// The shared height range, metres.
    pub range: [f32; 2],
    /// The whole map's height statistics.
    pub stats: &'a Stats,
}

/// An engine's import numbers, as the manifest holds them.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineImport {
    /// The manifest's `unreal` object.
    Unreal(UnrealImport),
    /// The manifest's `unity` object.
    Unity(UnityImport),
}

/// Unreal's import numbers (Landscape ▸ Import from file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnrealImport {
    /// Landscape scale X and Y, centimetres per node (`cell · 100`).
    pub xy_scale_cm: f64,
    /// Landscape scale Z (`r · 100 · 128 / 32767`; module doc).
    pub z_scale: f64,
    /// Landscape location, centimetres (`z` = 0 puts 0 m at Z = 0).
    pub location_cm: [f64; 3],
    /// Nodes of the whole landscape, `[x, y]`.
    pub resolution: [usize; 2],
    /// The file to pick in the import dialog (the other tiles follow by their suffixes).
    pub first_tile: String,
}

/// Unity's import numbers (Terrain ▸ Import Raw, one terrain per tile).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnityImport {
    /// Heightmap resolution of each terrain (the tile size).
    pub heightmap_resolution: usize,
    /// Terrain size, metres: width (x), height (the range), length (z).
    pub terrain_size_m: [f64; 3],
    /// Depth: 16 bit.
    pub depth: u32,
    /// Byte order: `Windows` (little-endian).
    pub byte_order: String,
    /// Whether to tick "Flip Vertically" (false: the rows are written south first).
    pub flip_vertically: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_has_one_consistent_row() {
        assert_eq!(Engine::ALL.len(), ENGINES.len());
        for (i, (&e, spec)) in Engine::ALL.iter().zip(ENGINES).enumerate() {
            // By content: a row reached through a `const` may be another copy of the same data
            // (`ptr::eq` held in one build and failed in another).
            assert_eq!((e.spec().engine, e.spec().name), (spec.engine, spec.name), "{e:?} is row {i}");
            assert_eq!(spec.engine, e);
            assert_eq!(Engine::parse(spec.name), Some(e), "{}", spec.name);
            assert_eq!(Engine::parse(&spec.name.to_ascii_uppercase()), Some(e));
            // The serde form is the name.
            assert_eq!(serde_json::to_string(&e).unwrap(), format!("\"{}\"", spec.name));
            assert!(!spec.label.is_empty() && !spec.a_name.is_empty() && !spec.tip.is_empty(), "{spec:?}");
            assert!(spec.formats.contains(&spec.default_format), "{}: its default format is one it reads", spec.name);
            assert_eq!(TileFormat::default_for(e), spec.default_format);
            assert!(!spec.tile_sizes.is_empty() && spec.tile_sizes.windows(2).all(|p| p[0] < p[1]), "{spec:?}");
            assert!(spec.tile_sizes.iter().all(|&s| s >= 2), "a tile has at least 2 nodes a side");
            assert_eq!(spec.rows(TileFormat::Png16), RowOrder::NorthFirst, "PNG tiles are in image order");
        }
        let names = engine_names();
        assert!(names.iter().enumerate().all(|(i, n)| !names[..i].contains(n)), "{names:?}");
        assert_eq!(Engine::parse("godot"), None);
    }

    #[test]
    fn the_engines_conventions_are_the_documented_ones() {
        assert_eq!(engine_names(), ["unreal", "unity"]);
        assert_eq!(tile_sizes(Engine::Unity), [33, 65, 129, 257, 513, 1025, 2049, 4097]);
        assert_eq!(tile_sizes(Engine::Unreal), [127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129]);
        assert_eq!(Engine::Unity.spec().rows(TileFormat::R16), RowOrder::SouthFirst);
        assert_eq!(Engine::Unreal.spec().rows(TileFormat::R16), RowOrder::NorthFirst);
        assert_eq!((RowOrder::SouthFirst.file_row(0, 5), RowOrder::NorthFirst.file_row(0, 5)), (4, 0));
        let s = Stats { min: -10.0, max: 300.0, mean: 0.0 };
        assert_eq!(HeightRule::OwnRange.range(&s), [-10.0, 300.0]);
        assert_eq!(HeightRule::ZeroCentred.range(&s)[1], 300.0);
        assert_eq!(HeightRule::ZeroCentred.zero_sample(), Some(32768));
        let unity = Engine::Unity.spec();
        assert_eq!(unity.heights_note(TileFormat::R16), "the set's own range, south row first");
        assert_eq!(unity.heights_note(TileFormat::Png16), "the set's own range");
        assert_eq!(Engine::Unreal.spec().heights_note(TileFormat::R16), "32768 = 0 m");
    }

    #[test]
    fn sizes_within_a_range_keep_their_order() {
        const SIZES: &[usize] = &[127, 253, 8129, 20000];
        const N: usize = count_within(SIZES, [129, 16385]);
        assert_eq!(sizes_within::<N>(SIZES, [129, 16385]), [253, 8129]);
        assert_eq!(count_within(SIZES, [1, 10]), 0);
    }
}
