//! Engine tile sets (issue #27): one global build cut into `Kx × Ky` square tiles of `S` nodes for
//! Unreal Engine's or Unity's terrain importers, with texture maps tiled the same way and a
//! `manifest.json` holding every number an import needs; and the way back, a tile set
//! reassembled into one map ([`read_tile_set`], `talus convert DIR/manifest.json out.bhef`).
//!
//! One concern a file; engines and maps are rows of tables, so adding one is a variant and a row:
//!
//! - [`engine`]: each engine's conventions, one row of [`ENGINES`]: its tile sizes, its usual
//!   height format, its rows, its height range, where it places a tile, its import numbers.
//! - [`layout`]: the tiling ([`TileLayout`]) and how it is chosen from what the caller gave
//!   ([`resolve_layout`], its errors typed as [`LayoutError`]).
//! - [`maps`]: the texture maps, one row of [`MAPS`] each: name, pixels, unit, meaning, inputs,
//!   range and per-node encoding.
//! - [`mod@manifest`]: `manifest.json` ([`Manifest`]).
//! - [`mod@write`]: the streamed, atomic writer ([`write_tile_set`]).
//! - [`read`]: reassembly ([`read_tile_set`]).
//!
//! The flow map's drainage is terrain analysis: [`crate::core::analysis::flow_log_area`].
//!
//! # Files
//!
//! Height tiles are `NAME_xX_yY.png` (16-bit grey PNG) or `NAME_xX_yY.r16` (headerless
//! little-endian `u16`), `X` counting tiles east and `Y` south from the north-west corner (our
//! `x`, `y`); Unreal's tiled import recognises the `_x0_y0` suffixes. Maps are
//! `NAME_KIND_xX_yY.png`. The manifest lists every file.

pub mod engine;
pub mod layout;
pub mod manifest;
pub mod maps;
pub mod read;
pub mod write;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::core::io::atomic::{self, DirError};

pub use engine::{
    ENGINES, Engine, EngineImport, EngineSpec, HeightRule, ImportInput, Placement, RowOrder, UnityImport, UnrealImport,
    count_within, engine_names, sizes_within, tile_sizes,
};
pub use layout::{LayoutError, SizeChoice, TileLayout, list_choices, parse_tiles, resolve_layout};
pub use manifest::{FORMAT_VERSION, HeightFiles, HeightRange, Manifest, MapInfo, TileEntry};
pub use maps::{
    Encoding, MAPS, MapKind, MapRanges, MapSource, MapSpec, PixelFormat, UnknownMap, map_names, maps_help,
    needs_erosion_change, needs_flow,
};
pub use read::{read_manifest, read_tile_set};
pub use write::{Ranges, TileSetCost, TileSetInput, plan_bytes, write_tile_set};

/// Why a tile set could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TileError {
    /// The sizes do not make a tile set for the engine.
    #[error("{0}")]
    Layout(#[from] LayoutError),
    /// The output path names no folder (`/`, `..`).
    #[error("{0}: not a folder name")]
    NotAFolder(String),
    /// The output folder exists and holds files.
    #[error("{0} exists and is not empty; choose another folder or allow replacing it")]
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

impl From<DirError> for TileError {
    fn from(e: DirError) -> Self {
        match e {
            DirError::NotAFolder(p) => TileError::NotAFolder(p.display().to_string()),
            DirError::NotEmpty(p) => TileError::NotEmpty(p.display().to_string()),
            DirError::Io { op, path, source } => TileError::Io { op, path: path.display().to_string(), source },
        }
    }
}

/// `op` on `path` failed: a [`TileError::Io`].
pub(crate) fn io_err(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TileError {
    let path = path.display().to_string();
    move |source| TileError::Io { op, path, source }
}

/// Refuses an output folder that exists and is not empty (unless `force`), or is a file
/// ([`atomic::check_dir`]).
pub fn check_out_dir(dir: &Path, force: bool) -> Result<(), TileError> {
    Ok(atomic::check_dir(dir, force)?)
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

    /// Each engine's usual format ([`EngineSpec::default_format`]).
    pub fn default_for(engine: Engine) -> Self {
        engine.spec().default_format
    }

    /// The samples' byte order: `little-endian` for R16, `big-endian` (PNG's own) for PNG.
    pub fn byte_order(self) -> &'static str {
        match self {
            TileFormat::R16 => "little-endian",
            TileFormat::Png16 => "big-endian",
        }
    }

    /// The height file of tile `(x, y)`: `NAME_xX_yY.EXT`.
    pub fn file(self, name: &str, x: usize, y: usize) -> String {
        format!("{name}_x{x}_y{y}.{}", self.ext())
    }
}
