//! The JSON sidecar of the integer formats (PNG, R16): the metres the integer range stands for,
//! the cell size and the source, so a round trip through a 16-bit file restores real heights.
//!
//! It sits next to the file with `.json` appended (`map.png` → `map.png.json`), is written
//! atomically after the file, and is read back by [`super::interop::load`] when present. Other
//! tools ignore it. Example:
//!
//! ```json
//! { "format": "png16", "width": 513, "height": 513, "min": -12.5, "max": 310.0,
//!   "cell_size": 2.0, "source": "island.bhef", "unreal_z_scale": null, "generator": "talus 0.1.0" }
//! ```
//!
//! A sample `v` of full scale `F` is the height `min + v / F · (max − min)` (see
//! [`super::interop`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};

/// What the sidecar records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// `png16` or `r16`.
    pub format: String,
    /// Nodes along x of the map (the file's pixels per row).
    pub width: usize,
    /// Nodes along y of the map (the file's rows).
    pub height: usize,
    /// Metres of integer 0.
    pub min: f32,
    /// Metres of integer full scale.
    pub max: f32,
    /// Metres between nodes.
    pub cell_size: f32,
    /// The file the map was converted from (may be empty).
    #[serde(default)]
    pub source: String,
    /// Unreal's landscape Z scale, when the file was written centred for Unreal.
    #[serde(default)]
    pub unreal_z_scale: Option<f32>,
    /// The program that wrote it.
    #[serde(default)]
    pub generator: String,
    /// What the import of the source did (e.g. a geographic GeoTIFF's degrees turned into metres
    /// and its rows resampled to square cells); absent when nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `file` with `.json` appended.
pub fn path_for(file: &Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

/// Writes the sidecar of `file`, atomically.
pub fn write(file: &Path, sc: &Sidecar) -> Result<(), InteropError> {
    let p = path_for(file);
    let text = serde_json::to_string_pretty(sc)
        .map_err(|e| InteropError::Sidecar { path: p.display().to_string(), msg: e.to_string() })?;
    write_atomic(&p, |w| w.write_all(text.as_bytes())).map_err(io_err("write", &p))
}

/// Reads the sidecar of `file`; `None` when there is none. A sidecar that exists but is not
/// valid (bad JSON, non-finite or reversed range, bad cell size) is an error, not ignored.
pub fn read(file: &Path) -> Result<Option<Sidecar>, InteropError> {
    let p = path_for(file);
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("read", &p)(e)),
    };
    let bad = |msg: String| InteropError::Sidecar { path: p.display().to_string(), msg };
    let sc: Sidecar = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if !(sc.min.is_finite() && sc.max.is_finite() && sc.min <= sc.max) {
        return Err(bad(format!("min {} / max {} is not a finite range", sc.min, sc.max)));
    }
    if !(sc.cell_size.is_finite() && sc.cell_size > 0.0) {
        return Err(bad(format!("cell_size {} is not a positive number of metres", sc.cell_size)));
    }
    Ok(Some(sc))
}

/// The sidecar of an export.
pub fn for_export(
    format: &str,
    width: usize,
    height: usize,
    range: [f32; 2],
    cell_size: f32,
    source: &str,
    unreal_z_scale: Option<f32>,
) -> Sidecar {
    Sidecar {
        format: format.into(),
        width,
        height,
        min: range[0],
        max: range[1],
        cell_size,
        source: source.into(),
        unreal_z_scale,
        generator: concat!("talus ", env!("CARGO_PKG_VERSION")).into(),
        notes: Vec::new(),
    }
}
