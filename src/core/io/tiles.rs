//! Engine tile sets (issue #27): one global build cut into `Kx × Ky` square tiles of `S` nodes for
//! Unreal Engine's or Unity's terrain importers, with texture maps tiled the same way and a
//! `manifest.json` holding every number an import needs; and the way back, a tile set
//! reassembled into one map ([`read_tile_set`], `talus convert DIR/manifest.json out.bhef`).
//!
//! # Layout
//!
//! Neighbouring tiles share one row and one column of nodes, as both engines expect of landscape
//! tiles, so the global map has `W = Kx·(S − 1) + 1` by `H = Ky·(S − 1) + 1` nodes and tile
//! `(X, Y)` holds nodes `X·(S − 1) ..= X·(S − 1) + S − 1` along x (the same along y). Every tile is
//! cut from the one global map and quantised with one shared height range, so the samples of a
//! shared edge are the same bits in both tiles. Tile sizes ([`tile_sizes`]):
//!
//! - **Unreal**: the landscape sizes of Epic's "Landscape Technical Guide" ("Recommended Landscape
//!   Sizes"): 127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129 nodes a side.
//! - **Unity**: `2^k + 1` from 33 to 4097 (Unity's heightmap resolutions).
//!
//! Files are `NAME_xX_yY.png` (16-bit grey PNG) or `NAME_xX_yY.r16` (headerless little-endian
//! `u16`), `X` counting tiles east and `Y` south from the north-west corner (our `x`, `y`); Unreal's
//! tiled import recognises the `_x0_y0` suffixes. Maps are `NAME_KIND_xX_yY.png`.
//!
//! # Heights
//!
//! A sample `v` stands for `h = min_m + v / 65535 · (max_m − min_m)` metres, one range for all
//! tiles ([`super::interop::quantise`]):
//!
//! - **Unreal**: the range of [`super::interop::unreal_range`] over the whole map (`r` = its
//!   largest |height|: `[−r·32768/32767, r]`, so sample 32768 is exactly 0 m). Unreal reads
//!   `z_cm = (v − 32768) · ZScale / 128` relative to the landscape's location, so a Z scale of 100
//!   spans ±256 m; the manifest's `ZScale = r · 100 · 128 / 32767` gives back metres, with
//!   location Z = 0 cm (0 m stays at Z = 0) and X/Y scale = cell size · 100 cm.
//! - **Unity**: the map's own `[min, max]`; Unity maps `v / 65535` onto the terrain's height, so the
//!   terrain size's height is `max − min` and its position's y is `min`.
//!
//! Rows: PNG tiles and Unreal's R16 tiles are in image order (file row 0 = the tile's northern
//! row, our smallest `y`), as every raster export here. **Unity's R16 tiles are written southern
//! row first**: Unity's Import Raw puts the file's first row at the terrain's `z = 0` (its back
//! edge) unless "Flip Vertically" is ticked; with the rows reversed, the world's north lies towards
//! `+z` with "Flip Vertically" off, as the manifest says (`rows: "south_first"`,
//! `flip_vertically: false`).
//!
//! # Maps ([`MapKind`])
//!
//! All at the build's resolution, tiled like the heights, PNG in image order:
//!
//! - `flow`: D8 drainage area `A` (m²) on the depression-filled surface, with the sea and the map
//!   edges as outlets ([`crate::core::analysis::drainage`]), as 16-bit grey
//!   `v = (log10 A − lo) / (hi − lo) · 65535`, `lo = log10(cell²)` (one node's own area),
//!   `hi = log10(max A)` over the whole map.
//! - `erosion`, `deposition`: the build's erosion layers' summed change `Δ` (m; see
//!   `editor::build::Built::erosion_change`), split by sign: erosion `max(−Δ, 0)`, deposition
//!   `max(Δ, 0)`, each as 16-bit grey over `[0, its maximum over the map]`.
//! - `slope`: `θ = acos(n_up)` in degrees of the node's normal ([`Heightmap::normal`], central
//!   differences on the global map), 16-bit grey `v = θ / 90 · 65535`.
//! - `normal`: RGB8 tangent-space normals, OpenGL (`Y+`) convention ([`super::normal_map`]).
//! - `splat`: RGBA8 weights R = sand, G = grass and dirt, B = rock, A = snow, summing to 255, by
//!   the editor material's band rule ([`crate::core::splat`]).
//!
//! Derived maps use the global map around each node (neighbours across a tile edge included), so
//! they too agree on shared edges.
//!
//! # Writing: streamed and atomic
//!
//! [`write_tile_set`] writes one band of tiles (one tile row) at a time, the band's tiles in
//! parallel, each tile from its own buffers (a few bytes per node of one tile); it never holds a
//! second copy of the map. The flow map needs one global computation, kept as one `f32` grid
//! ([`flow_log_area`]; its peak while computing is [`FLOW_BYTES_PER_NODE`]). Everything goes into
//! `DIR.tmp-PID-N` next to `DIR`, the manifest last; the folder is renamed to `DIR` at the end.
//! A cancel, a failed write (a full disk) or any other error deletes the temporary folder, so
//! nothing is left; an existing `DIR` that is not empty is refused unless `force`, and is then
//! replaced only once the new set is complete.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use image::{ImageBuffer, Luma, Rgb, Rgba};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::interop::{dequantise, quantise, unreal_range};
use super::normal_map;
use crate::core::heightmap::{Heightmap, check_size};
use crate::core::splat::{self, SplatBands};

/// Version of the manifest's layout (`format_version`).
pub const FORMAT_VERSION: u32 = 1;

/// Unreal Engine's landscape sizes a tile may have (nodes a side; module doc).
pub const UNREAL_TILE_SIZES: [usize; 9] = [127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129];

/// Unity's heightmap resolutions a tile may have (`2^k + 1`, nodes a side).
pub const UNITY_TILE_SIZES: [usize; 8] = [33, 65, 129, 257, 513, 1025, 2049, 4097];

/// Peak bytes per node of computing the flow map: [`crate::core::analysis::drainage_area`]'s
/// (the flood's filled heights, flags, parents and order, its sorted outlets, the `f64` areas),
/// the kept `f32` grid, and 4 for the flood's heap, which holds only its land front.
pub const FLOW_BYTES_PER_NODE: u64 = crate::core::analysis::DRAINAGE_AREA_BYTES_PER_NODE + 8;

/// Why a tile set could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TileError {
    /// The sizes do not make a tile set for the engine.
    #[error("{0}")]
    Layout(String),
    /// The output folder exists and holds files.
    #[error("{0} exists and is not empty; choose another folder or pass --force to replace it")]
    NotEmpty(String),
    /// An operating-system error (nothing was left behind).
    #[error("could not {op} {path}: {source}; nothing was written (the temporary folder was removed)")]
    Io {
        /// What was being done: `"create"`, `"write"`, `"rename"`, `"read"`.
        op: &'static str,
        /// The file or folder.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Reading a tile set failed (its own IO errors say what happened to which file).
    #[error("{path}: {msg}")]
    Read {
        /// The manifest or tile.
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// An image could not be encoded.
    #[error("cannot encode {0}")]
    Encode(String),
    /// Cancelled by the caller (nothing was left behind).
    #[error("cancelled")]
    Cancelled,
}

/// The engine a tile set is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Unreal Engine's Landscape.
    Unreal,
    /// Unity's Terrain.
    Unity,
}

impl Engine {
    /// `unreal` or `unity`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Unreal => "unreal",
            Engine::Unity => "unity",
        }
    }

    /// Reads [`Self::name`].
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "unreal" => Some(Engine::Unreal),
            "unity" => Some(Engine::Unity),
            _ => None,
        }
    }
}

/// The sizes a tile may have for `engine` (module doc).
pub fn tile_sizes(engine: Engine) -> &'static [usize] {
    match engine {
        Engine::Unreal => &UNREAL_TILE_SIZES,
        Engine::Unity => &UNITY_TILE_SIZES,
    }
}

/// The file format of the height tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TileFormat {
    /// 16-bit greyscale PNG.
    Png16,
    /// Headerless little-endian `u16`.
    R16,
}

impl TileFormat {
    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            TileFormat::Png16 => "png",
            TileFormat::R16 => "r16",
        }
    }

    /// Reads `png`/`png16` or `r16`/`raw`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "png" | "png16" => Some(TileFormat::Png16),
            "r16" | "raw" => Some(TileFormat::R16),
            _ => None,
        }
    }

    /// Each engine's usual format: PNG16 for Unreal, R16 for Unity.
    pub fn default_for(engine: Engine) -> Self {
        match engine {
            Engine::Unreal => TileFormat::Png16,
            Engine::Unity => TileFormat::R16,
        }
    }
}

/// A texture map of a tile set (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MapKind {
    /// D8 drainage area, log-scaled, 16-bit.
    Flow,
    /// Erosion depth of the build's erosion layers, 16-bit.
    Erosion,
    /// Deposit thickness of the build's erosion layers, 16-bit.
    Deposition,
    /// Slope in degrees, 16-bit.
    Slope,
    /// Tangent-space normals, RGB8.
    Normal,
    /// Sand / soil / rock / snow weights, RGBA8.
    Splat,
}

impl MapKind {
    /// Every map, in the order of `--maps all`.
    pub const ALL: [MapKind; 6] =
        [MapKind::Flow, MapKind::Erosion, MapKind::Deposition, MapKind::Slope, MapKind::Normal, MapKind::Splat];

    /// The name in `--maps` and in file names.
    pub fn name(self) -> &'static str {
        match self {
            MapKind::Flow => "flow",
            MapKind::Erosion => "erosion",
            MapKind::Deposition => "deposition",
            MapKind::Slope => "slope",
            MapKind::Normal => "normal",
            MapKind::Splat => "splat",
        }
    }

    /// Reads a comma-separated list of names or `all` (sorted, without repeats).
    pub fn parse_list(s: &str) -> Result<Vec<MapKind>, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part.eq_ignore_ascii_case("all") {
                out.extend(MapKind::ALL);
                continue;
            }
            let k = MapKind::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(part)).ok_or_else(|| {
                format!("--maps: unknown map {part:?}; known: flow, erosion, deposition, slope, normal, splat, all")
            })?;
            out.push(k);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
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

/// `Kx × Ky` tiles of `S` nodes a side, sharing edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileLayout {
    /// Tiles along x.
    pub tiles_x: usize,
    /// Tiles along y.
    pub tiles_y: usize,
    /// Nodes a side of one tile.
    pub tile_size: usize,
}

impl TileLayout {
    /// Nodes along x of the whole map, `Kx·(S − 1) + 1`.
    pub fn width(&self) -> usize {
        self.tiles_x * (self.tile_size - 1) + 1
    }

    /// Nodes along y of the whole map, `Ky·(S − 1) + 1`.
    pub fn height(&self) -> usize {
        self.tiles_y * (self.tile_size - 1) + 1
    }
}

/// Reads `K` or `KxL` (tiles along x and y).
pub fn parse_tiles(s: &str) -> Result<(usize, Option<usize>), String> {
    let bad = || format!("--tiles {s:?}: expected K or KxL (e.g. 4 or 4x4), each at least 1");
    let num = |v: &str| v.trim().parse::<usize>().ok().filter(|&n| (1..=1024).contains(&n)).ok_or_else(bad);
    match s.split_once(['x', 'X', '×']) {
        Some((a, b)) => Ok((num(a)?, Some(num(b)?))),
        None => Ok((num(s)?, None)),
    }
}

/// The tile layout for `engine` from what the caller gave: the build's width `size`, the tiles
/// along x and y, the tile size. `height_for(W)` is the build's height at width `W` (the project's
/// aspect) or an error; `side_ok(n)` says whether a build may have `n` nodes a side. A size
/// that does not fit gives an error naming the valid choices.
pub fn resolve_layout(
    engine: Engine,
    size: Option<usize>,
    tiles: Option<(usize, Option<usize>)>,
    tile_size: Option<usize>,
    height_for: &dyn Fn(usize) -> Result<usize, String>,
    side_ok: &dyn Fn(usize) -> bool,
) -> Result<TileLayout, TileError> {
    let sizes = tile_sizes(engine);
    let choices = |kx: usize| -> String {
        let c: Vec<String> = sizes
            .iter()
            .map(|&s| (s, kx * (s - 1) + 1))
            .filter(|&(_, n)| side_ok(n))
            .map(|(s, n)| format!("--size {n} (tiles of {s})"))
            .collect();
        if c.is_empty() { "none at this tile count".into() } else { c.join(", ") }
    };
    let err = |m: String| TileError::Layout(m);
    let (kx, s) =
        match (tiles, tile_size, size) {
            (Some((kx, _)), Some(s), _) => (kx, s),
            (Some((kx, _)), None, Some(n)) => {
                if n < 2 || !(n - 1).is_multiple_of(kx) {
                    return Err(err(format!(
                        "--size {n} does not split into {kx} tiles across that share edges (N = K·(S − 1) + 1); \
                     for {} with {kx} tiles across: {}",
                        engine.name(),
                        choices(kx)
                    )));
                }
                (kx, (n - 1) / kx + 1)
            }
            (None, Some(s), Some(n)) => {
                if s < 2 || n < 2 || !(n - 1).is_multiple_of(s - 1) {
                    return Err(err(format!(
                        "--size {n} is not a whole number of tiles of {s} nodes sharing edges (N = K·(S − 1) + 1)"
                    )));
                }
                ((n - 1) / (s - 1), s)
            }
            _ => return Err(err(
                "a tile set needs --tiles K (or KxL) with --size N or --tile-size S, or --size N with --tile-size S"
                    .into(),
            )),
        };
    if !sizes.contains(&s) {
        return Err(err(format!(
            "tiles of {s} nodes are not {} tile size ({}); with {kx} tiles across: {}",
            match engine {
                Engine::Unreal => "an Unreal",
                Engine::Unity => "a Unity",
            },
            sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            choices(kx)
        )));
    }
    let w = kx * (s - 1) + 1;
    if let Some(n) = size.filter(|&n| n != w) {
        return Err(err(format!("--size {n} does not match {kx} tiles of {s} nodes ({w} nodes across)")));
    }
    if !side_ok(w) {
        return Err(err(format!(
            "{kx} tiles of {s} nodes make a {w}-node build, which is not a build size; for {} with {kx} tiles across: {}",
            engine.name(),
            choices(kx)
        )));
    }
    let h = height_for(w).map_err(err)?;
    if !(h - 1).is_multiple_of(s - 1) {
        return Err(err(format!(
            "the build is {w}×{h} nodes; {h} is not a whole number of tiles of {s} nodes down (the project's aspect)"
        )));
    }
    let ky = (h - 1) / (s - 1);
    if let Some((_, Some(l))) = tiles.filter(|(_, l)| l.is_some_and(|l| l != ky)) {
        return Err(err(format!("--tiles {kx}x{l}: the project's aspect gives {kx}x{ky} tiles of {s} nodes")));
    }
    Ok(TileLayout { tiles_x: kx, tiles_y: ky, tile_size: s })
}

/// The log10 of each node's D8 drainage area in m² (module doc, `flow`), as a map of the same
/// size.
pub fn flow_log_area(map: &Heightmap, sea_level: f32) -> Heightmap {
    let area = crate::core::analysis::drainage_area(map, sea_level);
    let data = area.par_iter().map(|&a| a.max(f64::MIN_POSITIVE).log10() as f32).collect();
    Heightmap { width: map.width, height: map.height, cell_size: map.cell_size, data }
}

/// What a tile set adds to its build's memory: the per-band tile buffers, and the flow
/// computation's peak when the flow map is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSetCost {
    /// Bytes of one band's tile buffers (a tile's heights, samples, one map's pixels and its PNG).
    pub band_bytes: u64,
    /// Bytes of the flow map's computation, when it is asked for.
    pub flow_bytes: Option<u64>,
}

/// What a tile set of `layout` with `maps` adds to its build's memory.
pub fn plan_bytes(layout: &TileLayout, maps: &[MapKind]) -> TileSetCost {
    let nodes = (layout.width() * layout.height()) as u64;
    let s2 = (layout.tile_size * layout.tile_size) as u64;
    // A tile's heights (f32), samples (u32, u16), one map's pixels (≤ 4 bytes) and its PNG.
    let band_bytes = layout.tiles_x as u64 * s2 * 16;
    let flow_bytes = maps.contains(&MapKind::Flow).then_some(nodes * FLOW_BYTES_PER_NODE);
    TileSetCost { band_bytes, flow_bytes }
}

/// What a tile set is written from.
#[derive(Clone, Copy, Debug)]
pub struct TileSetInput<'a> {
    /// The global build.
    pub map: &'a Heightmap,
    /// File-name prefix of the tiles.
    pub name: &'a str,
    /// The engine.
    pub engine: Engine,
    /// The height tiles' format.
    pub format: TileFormat,
    /// The tiling (its width and height must be the map's).
    pub layout: TileLayout,
    /// The maps to write.
    pub maps: &'a [MapKind],
    /// Sea level, metres (flow outlets, the splat's height fraction).
    pub sea_level: f32,
    /// [`flow_log_area`] of the map, for the flow map.
    pub flow: Option<&'a Heightmap>,
    /// The build's erosion layers' summed change, for the erosion and deposition maps.
    pub erosion_change: Option<&'a [f32]>,
    /// The material's bands, for the splat map.
    pub bands: SplatBands,
    /// Where the map came from (recorded in the manifest).
    pub source: &'a str,
}

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

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TileError {
    let path = path.display().to_string();
    move |source| TileError::Io { op, path, source }
}

/// The shared `[lo, hi]` and Unreal's Z scale for `map` (module doc).
fn height_range(map: &Heightmap, engine: Engine) -> ([f32; 2], Option<f32>) {
    match engine {
        Engine::Unreal => {
            let (r, z) = unreal_range(map);
            (r, Some(z))
        }
        Engine::Unity => {
            let s = map.stats();
            ([s.min, s.max.max(s.min + 1e-3)], None)
        }
    }
}

/// The `[lo, hi]` of each grey map over the whole map.
struct MapRanges {
    flow: [f32; 2],
    erosion: f32,
    deposition: f32,
    peak: f32,
}

fn map_ranges(inp: &TileSetInput) -> MapRanges {
    let cell = inp.map.cell_size as f64;
    let flow_hi = inp.flow.map_or(0.0, |f| f.stats().max);
    let flow_lo = (cell * cell).log10() as f32;
    let (mut e, mut d) = (0.0f32, 0.0f32);
    if let Some(c) = inp.erosion_change {
        for &v in c {
            e = e.max(-v);
            d = d.max(v);
        }
    }
    MapRanges {
        flow: [flow_lo, flow_hi.max(flow_lo + 1e-3)],
        erosion: e.max(1e-6),
        deposition: d.max(1e-6),
        peak: inp.map.stats().max,
    }
}

fn map_file(name: &str, kind: MapKind, x: usize, y: usize) -> String {
    format!("{name}_{}_x{x}_y{y}.png", kind.name())
}

fn encode<P: image::Pixel<Subpixel = S> + image::PixelWithColorType, S: image::Primitive>(
    s: usize,
    data: Vec<S>,
    what: &str,
) -> Result<Vec<u8>, TileError>
where
    [S]: image::EncodableLayout,
{
    let img: ImageBuffer<P, Vec<S>> =
        ImageBuffer::from_raw(s as u32, s as u32, data).ok_or_else(|| TileError::Encode(what.into()))?;
    let mut buf = Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png).map_err(|e| TileError::Encode(format!("{what}: {e}")))?;
    Ok(buf.into_inner())
}

/// Quantises `v ∈ [lo, hi]` to 16 bits, as [`quantise`] does one value (without its buffer).
#[inline]
fn q16(v: f32, [lo, hi]: [f32; 2]) -> u16 {
    let (lo, hi) = (lo as f64, hi as f64);
    let span = hi - lo;
    let t = if span > 0.0 { (v as f64 - lo) / span } else { 0.0 };
    (t.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// The files of tile `(tx, ty)`: name and bytes.
fn tile_files(
    inp: &TileSetInput,
    tx: usize,
    ty: usize,
    range: [f32; 2],
    mr: &MapRanges,
) -> Result<Vec<(String, Vec<u8>)>, TileError> {
    let s = inp.layout.tile_size;
    let (x0, y0) = (tx * (s - 1), ty * (s - 1));
    let map = inp.map;
    let w = map.width;
    let nodes = || (0..s * s).map(move |i| (x0 + i % s, y0 + i / s));
    let mut out = Vec::new();
    // Heights.
    let mut hts: Vec<f32> = Vec::with_capacity(s * s);
    for y in y0..y0 + s {
        hts.extend_from_slice(&map.data[y * w + x0..y * w + x0 + s]);
    }
    let (q, _) = quantise(&hts, range, 65535);
    drop(hts);
    let hfile = format!("{}_x{tx}_y{ty}.{}", inp.name, inp.format.ext());
    let bytes = match inp.format {
        TileFormat::Png16 => encode::<Luma<u16>, u16>(s, q.into_iter().map(|v| v as u16).collect(), &hfile)?,
        TileFormat::R16 => {
            let south_first = inp.engine == Engine::Unity;
            let mut b = Vec::with_capacity(2 * s * s);
            for r in 0..s {
                let row = if south_first { s - 1 - r } else { r };
                b.extend(q[row * s..(row + 1) * s].iter().flat_map(|&v| (v as u16).to_le_bytes()));
            }
            b
        }
    };
    out.push((hfile, bytes));
    for &kind in inp.maps {
        let file = map_file(inp.name, kind, tx, ty);
        let bytes = match kind {
            MapKind::Flow => {
                let f = inp.flow.ok_or_else(|| TileError::Encode("the flow map was not computed".into()))?;
                encode::<Luma<u16>, u16>(s, nodes().map(|(x, y)| q16(f.data[y * w + x], mr.flow)).collect(), &file)?
            }
            MapKind::Erosion | MapKind::Deposition => {
                let c = inp
                    .erosion_change
                    .ok_or_else(|| TileError::Encode("the build's erosion change was not kept".into()))?;
                let (sign, hi) = if kind == MapKind::Erosion { (-1.0, mr.erosion) } else { (1.0, mr.deposition) };
                encode::<Luma<u16>, u16>(
                    s,
                    nodes().map(|(x, y)| q16((sign * c[y * w + x]).max(0.0), [0.0, hi])).collect(),
                    &file,
                )?
            }
            MapKind::Slope => encode::<Luma<u16>, u16>(
                s,
                nodes().map(|(x, y)| q16(splat::slope_degrees(map.normal(x, y)), [0.0, 90.0])).collect(),
                &file,
            )?,
            MapKind::Normal => {
                encode::<Rgb<u8>, u8>(s, nodes().flat_map(|(x, y)| normal_map::pixel(map, x, y)).collect(), &file)?
            }
            MapKind::Splat => {
                let top = (mr.peak - inp.sea_level).max(1.0);
                encode::<Rgba<u8>, u8>(
                    s,
                    nodes()
                        .flat_map(|(x, y)| {
                            let f = (map.data[y * w + x] - inp.sea_level) / top;
                            splat::to_rgba8(splat::weights(&inp.bands, f, splat::slope_degrees(map.normal(x, y))))
                        })
                        .collect(),
                    &file,
                )?
            }
        };
        out.push((file, bytes));
    }
    Ok(out)
}

/// The manifest of `inp` (without writing anything).
pub fn manifest(inp: &TileSetInput) -> Manifest {
    let map = inp.map;
    let l = inp.layout;
    let s = l.tile_size;
    let cell = map.cell_size as f64;
    let (range, z) = height_range(map, inp.engine);
    let mr = map_ranges(inp);
    let st = map.stats();
    let tile_m = (s - 1) as f64 * cell;
    let mut tiles = Vec::new();
    for ty in 0..l.tiles_y {
        for tx in 0..l.tiles_x {
            let (px, py) = (tx * (s - 1), ty * (s - 1));
            let engine_position = match inp.engine {
                Engine::Unreal => [px as f64 * cell * 100.0, py as f64 * cell * 100.0, 0.0],
                Engine::Unity => [tx as f64 * tile_m, range[0] as f64, (l.tiles_y - 1 - ty) as f64 * tile_m],
            };
            tiles.push(TileEntry {
                x: tx,
                y: ty,
                file: format!("{}_x{tx}_y{ty}.{}", inp.name, inp.format.ext()),
                offset_px: [px, py],
                size_nodes: [s, s],
                size_m: [tile_m, tile_m],
                position_m: [px as f64 * cell, py as f64 * cell],
                engine_position,
                maps: inp.maps.iter().map(|&k| (k.name().to_string(), map_file(inp.name, k, tx, ty))).collect(),
            });
        }
    }
    let maps = inp
        .maps
        .iter()
        .map(|&kind| {
            let files = format!("{}_{}_x{{x}}_y{{y}}.png", inp.name, kind.name());
            let (pixels, range, unit, meaning) = match kind {
                MapKind::Flow => (
                    PixelFormat::Png16,
                    Some([mr.flow[0] as f64, mr.flow[1] as f64]),
                    "log10 m²",
                    "D8 drainage area A on the depression-filled surface (sea and map edges drain): \
                     log10 A = lo + v/65535·(hi − lo); lo = one node's own area",
                ),
                MapKind::Erosion => (
                    PixelFormat::Png16,
                    Some([0.0, mr.erosion as f64]),
                    "m",
                    "depth the build's erosion layers took away (their summed change where negative): \
                     d = v/65535·hi",
                ),
                MapKind::Deposition => (
                    PixelFormat::Png16,
                    Some([0.0, mr.deposition as f64]),
                    "m",
                    "thickness the build's erosion layers laid down (their summed change where positive): \
                     d = v/65535·hi",
                ),
                MapKind::Slope => (
                    PixelFormat::Png16,
                    Some([0.0, 90.0]),
                    "degrees",
                    "slope of the surface normal (central differences): θ = v/65535·90",
                ),
                MapKind::Normal => (
                    PixelFormat::Rgb8,
                    None,
                    "unit normal",
                    "tangent-space normal, OpenGL (Y+) convention: r = +x (east), g = north, b = up; \
                     c = round((n + 1)/2·255); flip green for Unreal (DirectX)",
                ),
                MapKind::Splat => (
                    PixelFormat::Rgba8,
                    None,
                    "weight/255",
                    "the editor material's layer weights (shaders/terrain.wgsl, no edge noise): r = sand, \
                     g = grass and dirt, b = rock, a = snow; they sum to 255",
                ),
            };
            MapInfo { kind, pixels, files, range, unit: unit.into(), meaning: meaning.into() }
        })
        .collect();
    let (w, h) = (map.width, map.height);
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
            rows: if inp.engine == Engine::Unity && inp.format == TileFormat::R16 {
                "south_first"
            } else {
                "north_first"
            }
            .into(),
            byte_order: match inp.format {
                TileFormat::R16 => "little-endian",
                TileFormat::Png16 => "big-endian",
            }
            .into(),
        },
        height_range: HeightRange {
            min_m: range[0] as f64,
            max_m: range[1] as f64,
            data_min_m: st.min as f64,
            data_max_m: st.max as f64,
            mapping: "h = min_m + v/65535·(max_m − min_m), v = round((h − min_m)/(max_m − min_m)·65535)".into(),
            zero_sample: (inp.engine == Engine::Unreal).then_some(32768),
        },
        maps,
        tile_files: tiles,
        unreal: z.map(|z| UnrealImport {
            xy_scale_cm: cell * 100.0,
            z_scale: z as f64,
            location_cm: [0.0, 0.0, 0.0],
            resolution: [w, h],
            first_tile: format!("{}_x0_y0.{}", inp.name, inp.format.ext()),
        }),
        unity: (inp.engine == Engine::Unity).then(|| UnityImport {
            heightmap_resolution: s,
            terrain_size_m: [tile_m, range[1] as f64 - range[0] as f64, tile_m],
            depth: 16,
            byte_order: "Windows".into(),
            flip_vertically: false,
        }),
    }
}

/// Refuses an output folder that exists and is not empty (unless `force`), or is a file.
pub fn check_out_dir(dir: &Path, force: bool) -> Result<(), TileError> {
    match fs::read_dir(dir) {
        Ok(mut it) => {
            if !force && it.next().is_some() {
                return Err(TileError::NotEmpty(dir.display().to_string()));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("open", dir)(e)),
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// `DIR` with `suffix` appended to its last component.
fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    dir.with_file_name(name)
}

/// Writes the tile set of `inp` into `dir` (module doc: streamed, atomic, nothing left on error
/// or cancel); `progress` hears the fraction of tiles written.
pub fn write_tile_set(
    dir: &Path,
    inp: &TileSetInput,
    force: bool,
    cancel: &AtomicBool,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Manifest, TileError> {
    let l = inp.layout;
    if (l.width(), l.height()) != (inp.map.width, inp.map.height) {
        return Err(TileError::Layout(format!(
            "{}×{} tiles of {} nodes need a {}×{} map; the build is {}×{}",
            l.tiles_x,
            l.tiles_y,
            l.tile_size,
            l.width(),
            l.height(),
            inp.map.width,
            inp.map.height
        )));
    }
    if dir.file_name().is_none() {
        return Err(TileError::Layout(format!("{}: not a folder name", dir.display())));
    }
    check_out_dir(dir, force)?;
    let tmp = loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let t = sibling(dir, &format!(".tmp-{}-{n}", std::process::id()));
        match fs::create_dir(&t) {
            Ok(()) => break t,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err("create", &t)(e)),
        }
    };
    let result = write_into(&tmp, dir, inp, force, cancel, progress);
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

fn write_into(
    tmp: &Path,
    dir: &Path,
    inp: &TileSetInput,
    force: bool,
    cancel: &AtomicBool,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Manifest, TileError> {
    let l = inp.layout;
    let (range, _) = height_range(inp.map, inp.engine);
    let mr = map_ranges(inp);
    let total = (l.tiles_x * l.tiles_y) as f64;
    let done = AtomicU64::new(0);
    for ty in 0..l.tiles_y {
        (0..l.tiles_x).into_par_iter().try_for_each(|tx| -> Result<(), TileError> {
            if cancel.load(Ordering::Relaxed) {
                return Err(TileError::Cancelled);
            }
            for (name, bytes) in tile_files(inp, tx, ty, range, &mr)? {
                let p = tmp.join(&name);
                let mut f = fs::File::create(&p).map_err(io_err("create", &p))?;
                f.write_all(&bytes).map_err(io_err("write", &p))?;
                f.sync_all().map_err(io_err("write", &p))?;
            }
            let d = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(d as f64 / total);
            Ok(())
        })?;
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(TileError::Cancelled);
    }
    let m = manifest(inp);
    let p = tmp.join("manifest.json");
    let text = serde_json::to_string_pretty(&m).map_err(|e| TileError::Encode(format!("manifest: {e}")))?;
    fs::write(&p, text).map_err(io_err("write", &p))?;
    // In place: an existing (empty, or with `force`) folder is moved aside first and removed once
    // the new one is in its place.
    let old = if dir.exists() {
        check_out_dir(dir, force)?;
        let o = sibling(dir, &format!(".old-{}-{}", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        fs::rename(dir, &o).map_err(io_err("rename", dir))?;
        Some(o)
    } else {
        None
    };
    if let Err(e) = fs::rename(tmp, dir) {
        if let Some(o) = &old {
            let _ = fs::rename(o, dir);
        }
        return Err(io_err("rename", tmp)(e));
    }
    if let Some(o) = old {
        let _ = fs::remove_dir_all(o);
    }
    Ok(m)
}

fn read_err(path: &Path, msg: impl Into<String>) -> TileError {
    TileError::Read { path: path.display().to_string(), msg: msg.into() }
}

/// Reads a tile set's manifest.
pub fn read_manifest(path: &Path) -> Result<Manifest, TileError> {
    let text = fs::read_to_string(path).map_err(io_err("read", path))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| read_err(path, format!("not a tile manifest: {e}")))?;
    if m.format != "talus-tiles" || m.format_version != FORMAT_VERSION {
        return Err(read_err(
            path,
            format!(
                "format {:?} version {}; this Talus reads talus-tiles version {FORMAT_VERSION}",
                m.format, m.format_version
            ),
        ));
    }
    Ok(m)
}

/// Reassembles the tile set of `manifest` into one map (module doc): every tile read, its rows
/// put back in image order, placed at its offset; every node must be covered, and a node two
/// tiles share must hold the same sample in both. The heights are the samples over the shared
/// range, so the map equals the untiled build quantised the same way, bit for bit.
pub fn read_tile_set(manifest: &Path) -> Result<Heightmap, TileError> {
    let m = read_manifest(manifest)?;
    let [w, h] = m.size;
    check_size(w, h).map_err(|e| read_err(manifest, e.to_string()))?;
    if !(m.cell_size.is_finite() && m.cell_size > 0.0) {
        return Err(read_err(manifest, format!("cell size {} is not a positive number", m.cell_size)));
    }
    let range = [m.height_range.min_m as f32, m.height_range.max_m as f32];
    if !(range[0].is_finite() && range[1].is_finite() && range[0] <= range[1]) {
        return Err(read_err(manifest, "the height range is not a finite min ≤ max"));
    }
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let south_first = m.heights.rows == "south_first";
    let mut samples = vec![0u16; w * h];
    let mut seen = vec![false; w * h];
    for t in &m.tile_files {
        let [tw, th] = t.size_nodes;
        let [ox, oy] = t.offset_px;
        if tw == 0 || th == 0 || ox.checked_add(tw).is_none_or(|e| e > w) || oy.checked_add(th).is_none_or(|e| e > h) {
            return Err(read_err(manifest, format!("tile {} lies outside the {w}×{h} map", t.file)));
        }
        if t.file.contains(['/', '\\']) || t.file.starts_with('.') {
            return Err(read_err(
                manifest,
                format!("tile file {:?} must be a plain name in the manifest's folder", t.file),
            ));
        }
        let p = folder.join(&t.file);
        let bytes = fs::read(&p).map_err(io_err("read", &p))?;
        let tile: Vec<u16> = match m.heights.format {
            TileFormat::Png16 => {
                let (pw, ph, s, full) =
                    super::png16::decode_samples(&bytes).map_err(|e| read_err(&p, e.to_string()))?;
                if (pw, ph) != (tw, th) || full != 65535 {
                    return Err(read_err(
                        &p,
                        format!("{pw}×{ph} ({full} full scale); the manifest says {tw}×{th} 16-bit"),
                    ));
                }
                s.into_iter().map(|v| v as u16).collect()
            }
            TileFormat::R16 => {
                if bytes.len() != 2 * tw * th {
                    return Err(read_err(&p, format!("{} bytes; {tw}×{th} R16 needs {}", bytes.len(), 2 * tw * th)));
                }
                bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
            }
        };
        for r in 0..th {
            let src = if south_first { th - 1 - r } else { r };
            for c in 0..tw {
                let i = (oy + r) * w + ox + c;
                let v = tile[src * tw + c];
                if seen[i] && samples[i] != v {
                    return Err(read_err(
                        &p,
                        format!(
                            "node ({}, {}) differs from the neighbouring tile's ({v} against {})",
                            ox + c,
                            oy + r,
                            samples[i]
                        ),
                    ));
                }
                samples[i] = v;
                seen[i] = true;
            }
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(read_err(manifest, format!("no tile covers node ({}, {})", i % w, i / w)));
    }
    let data = samples.into_iter().map(|v| dequantise(v as u32, range, 65535)).collect();
    Heightmap::from_data(w, h, m.cell_size as f32, data).map_err(|e| read_err(manifest, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_side_limit(_: usize) -> bool {
        true
    }

    #[test]
    fn layouts_resolve_and_bad_sizes_name_the_choices() {
        let square = |w: usize| Ok(w);
        let l = resolve_layout(Engine::Unity, Some(257), Some((2, None)), None, &square, &no_side_limit).unwrap();
        assert_eq!(l, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 129 });
        let l = resolve_layout(Engine::Unreal, None, Some((4, None)), Some(127), &square, &no_side_limit).unwrap();
        assert_eq!((l.width(), l.height()), (505, 505));
        let l = resolve_layout(Engine::Unreal, Some(2017), None, Some(505), &square, &no_side_limit).unwrap();
        assert_eq!(l.tiles_x, 4);
        let e = resolve_layout(Engine::Unreal, Some(257), Some((2, None)), None, &square, &no_side_limit).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("129") && msg.contains("--size 253 (tiles of 127)"), "{msg}");
        let e = resolve_layout(Engine::Unity, Some(258), Some((2, None)), None, &square, &no_side_limit).unwrap_err();
        assert!(e.to_string().contains("--size 257 (tiles of 129)"), "{e}");
        let half = |w: usize| Ok((w - 1) / 2 + 1);
        let l = resolve_layout(Engine::Unity, Some(513), Some((4, None)), None, &half, &no_side_limit).unwrap();
        assert_eq!((l.tiles_x, l.tiles_y), (4, 2));
        assert!(resolve_layout(Engine::Unity, Some(513), Some((4, Some(4))), None, &half, &no_side_limit).is_err());
        assert_eq!(parse_tiles("4x2"), Ok((4, Some(2))));
        assert!(parse_tiles("0").is_err() && parse_tiles("ax2").is_err());
        assert_eq!(MapKind::parse_list("all").unwrap().len(), 6);
        assert_eq!(MapKind::parse_list("splat,flow,flow").unwrap(), vec![MapKind::Flow, MapKind::Splat]);
        assert!(MapKind::parse_list("flow,rain").is_err());
    }

    #[test]
    fn q16_is_quantise() {
        for (v, r) in
            [(0.3f32, [0.0f32, 1.0]), (-5.0, [0.0, 1.0]), (7.0, [0.0, 1.0]), (12.345, [-3.0, 90.0]), (1.0, [1.0, 1.0])]
        {
            assert_eq!(q16(v, r) as u32, quantise(&[v], r, 65535).0[0], "{v} {r:?}");
        }
    }
}
