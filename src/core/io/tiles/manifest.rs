//! `manifest.json` of a tile set: every number an import needs, the tiles and maps by file, and
//! how the samples map to metres. Its schema is `assets/schema/tiles-manifest.schema.json`; its
//! engine-specific parts (tile positions, the `unreal` / `unity` import objects, the row order,
//! the height range) come from the engine's row ([`super::EngineSpec`]), its maps' texts from
//! theirs ([`super::MapSpec`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::TileFormat;
use super::engine::{Engine, EngineImport, ImportInput, Placement, UnityImport, UnrealImport};
use super::maps::{MapKind, PixelFormat};
use super::write::{Ranges, TileSetInput};

/// Version of the manifest's layout (`format_version`).
pub const FORMAT_VERSION: u32 = 1;

/// The shared height range of a tile set and how its samples map to metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeightRange {
    /// Metres that sample 0 stands for.
    pub min_m: f64,
    /// Metres that sample 65535 stands for.
    pub max_m: f64,
    /// Lowest height of the map, metres.
    pub data_min_m: f64,
    /// Highest height of the map, metres.
    pub data_max_m: f64,
    /// The mapping, in words.
    pub mapping: String,
    /// The sample that stands for 0 m (Unreal: 32768).
    pub zero_sample: Option<u32>,
}

/// How the height tiles are stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeightFiles {
    /// `png16` or `r16`.
    pub format: TileFormat,
    /// `north_first` (image order) or `south_first` (Unity's R16).
    pub rows: String,
    /// `little-endian` for R16, `big-endian` (PNG's own) for PNG.
    pub byte_order: String,
}

/// One map of a tile set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapInfo {
    /// Which map.
    pub kind: MapKind,
    /// How its pixels are stored.
    pub pixels: PixelFormat,
    /// The file name pattern (`{x}`, `{y}`: the tile's indices).
    pub files: String,
    /// The values that sample 0 and full scale stand for, for the grey maps.
    pub range: Option<[f64; 2]>,
    /// The unit of `range`.
    pub unit: String,
    /// What the pixels mean and how they map to the values.
    pub meaning: String,
}

/// One tile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileEntry {
    /// Column, counting east from 0.
    pub x: usize,
    /// Row, counting south from 0.
    pub y: usize,
    /// The height file, in the manifest's folder.
    pub file: String,
    /// The tile's first node in the global map, `[x, y]`.
    pub offset_px: [usize; 2],
    /// Nodes, `[x, y]`.
    pub size_nodes: [usize; 2],
    /// Extent, metres, `[x, y]` (`(S − 1) · cell`).
    pub size_m: [f64; 2],
    /// The tile's north-west corner in metres from the map's, `[x east, y south]`.
    pub position_m: [f64; 2],
    /// Where the engine places it: Unreal, centimetres `[x, y, z]`; Unity, metres `[x, y, z]`.
    pub engine_position: [f64; 3],
    /// The tile's map files by kind.
    pub maps: BTreeMap<String, String>,
}

/// `manifest.json` of a tile set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `talus-tiles`.
    pub format: String,
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The engine.
    pub engine: Engine,
    /// File-name prefix.
    pub name: String,
    /// Where the map came from.
    pub source: String,
    /// Nodes of the global map, `[x, y]`.
    pub size: [usize; 2],
    /// Tiles, `[x, y]`.
    pub tiles: [usize; 2],
    /// Nodes a side of one tile.
    pub tile_size: usize,
    /// Metres between nodes.
    pub cell_size: f64,
    /// Extent of the global map, metres, `[x, y]`.
    pub extent_m: [f64; 2],
    /// Sea level, metres.
    pub sea_level_m: f64,
    /// The height files.
    pub heights: HeightFiles,
    /// The shared height range.
    pub height_range: HeightRange,
    /// The maps.
    pub maps: Vec<MapInfo>,
    /// The tiles, row by row.
    pub tile_files: Vec<TileEntry>,
    /// Unreal's import numbers (Unreal sets).
    pub unreal: Option<UnrealImport>,
    /// Unity's import numbers (Unity sets).
    pub unity: Option<UnityImport>,
}

impl Manifest {
    /// What to type into the engine's import dialog, a line each ([`super::EngineSpec::import_lines`]).
    pub fn import_lines(&self) -> Vec<String> {
        (self.engine.spec().import_lines)(self)
    }
}

/// The manifest of `inp`, whose whole-map ranges `r` the writer measured ([`Ranges::measure`]);
/// nothing is written.
pub fn manifest(inp: &TileSetInput, r: &Ranges) -> Manifest {
    let map = inp.map;
    let spec = inp.engine.spec();
    let l = inp.layout;
    let s = l.tile_size;
    let cell = map.cell_size as f64;
    let range = r.heights;
    let tile_m = (s - 1) as f64 * cell;
    let mut tiles = Vec::new();
    for ty in 0..l.tiles_y {
        for tx in 0..l.tiles_x {
            let (px, py) = (tx * (s - 1), ty * (s - 1));
            let place =
                Placement { tile: [tx, ty], tiles: [l.tiles_x, l.tiles_y], offset_px: [px, py], cell, tile_m, range };
            tiles.push(TileEntry {
                x: tx,
                y: ty,
                file: inp.format.file(inp.name, tx, ty),
                offset_px: [px, py],
                size_nodes: [s, s],
                size_m: [tile_m, tile_m],
                position_m: [px as f64 * cell, py as f64 * cell],
                engine_position: (spec.place)(&place),
                maps: inp.maps.iter().map(|&k| (k.name().to_string(), k.file(inp.name, tx, ty))).collect(),
            });
        }
    }
    let maps = inp
        .maps
        .iter()
        .map(|&kind| {
            let m = kind.spec();
            MapInfo {
                kind,
                pixels: m.pixels(),
                files: kind.file_pattern(inp.name),
                range: m.range(&r.maps),
                unit: m.unit.into(),
                meaning: m.meaning.into(),
            }
        })
        .collect();
    let (w, h) = (map.width, map.height);
    let import = (spec.import)(&ImportInput {
        name: inp.name,
        format: inp.format,
        cell,
        size: [w, h],
        tile_size: s,
        tile_m,
        range,
        stats: &r.stats,
    });
    // One object per engine, the others null (the manifest's schema asks for all of them).
    let (unreal, unity) = match import {
        EngineImport::Unreal(u) => (Some(u), None),
        EngineImport::Unity(u) => (None, Some(u)),
    };
    Manifest {
        format: "talus-tiles".into(),
        format_version: FORMAT_VERSION,
        engine: inp.engine,
        name: inp.name.into(),
        source: inp.source.into(),
        size: [w, h],
        tiles: [l.tiles_x, l.tiles_y],
        tile_size: s,
        cell_size: cell,
        extent_m: [(w - 1) as f64 * cell, (h - 1) as f64 * cell],
        sea_level_m: inp.sea_level as f64,
        heights: HeightFiles {
            format: inp.format,
            rows: spec.rows(inp.format).name().into(),
            byte_order: inp.format.byte_order().into(),
        },
        height_range: HeightRange {
            min_m: range[0] as f64,
            max_m: range[1] as f64,
            data_min_m: r.stats.min as f64,
            data_max_m: r.stats.max as f64,
            mapping: "h = min_m + v/65535·(max_m − min_m), v = round((h − min_m)/(max_m − min_m)·65535)".into(),
            zero_sample: spec.heights.zero_sample(),
        },
        maps,
        tile_files: tiles,
        unreal,
        unity,
    }
}
