//! `manifest.json` of a tile set: every number an import needs, the tiles and maps by file, and
//! how the samples map to metres. Its schema is `assets/schema/tiles-manifest.schema.json`; its
//! engine-specific parts (tile positions, the `unreal` / `unity` import objects, the row order,
//! the height range) come from the engine's row ([`super::EngineSpec`]), its maps' texts from
//! theirs ([`super::MapSpec`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::TileFormat;
use super::engine::{Engine, EngineImport, UnityImport, UnrealImport};
use super::maps::{MapKind, PixelFormat};

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
        let unreal = self.unreal.iter().cloned().map(EngineImport::Unreal);
        let unity = self.unity.iter().cloned().map(EngineImport::Unity);
        let lines = self.engine.spec().import_lines;
        unreal.chain(unity).flat_map(|i| lines(&i)).collect()
    }
}
