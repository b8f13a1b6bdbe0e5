//! RAW R16 heightmaps: headerless little-endian `u16`, as Unity and Godot exchange them.
//!
//! # Layout and orientation
//!
//! ```text
//! offset 2·(y·width + x)   u16 little-endian   sample of node (x, y)
//! total length             2 · width · height  (no header)
//! ```
//!
//! Rows follow each other from **our `y = 0` (file row 0)** to `y = height − 1`; each row runs
//! along `+x`, the same order as our memory and as the PNG export. `tests/interop.rs` checks this
//! with an asymmetric map, and `tests/interop_tools.rs` reads the file with Pillow as `I;16`
//! (little-endian) and finds the PNG's pixels in the same order. Unity's importer (Terrain
//! Settings → Import Raw…, "Depth: Bit 16", "Byte Order: Windows", i.e. little-endian; Unity
//! Manual, "Working with Heightmaps", <https://docs.unity3d.com/Manual/terrain-Heightmaps.html>)
//! reads the rows in file order; its "Flip Vertically" option reverses them if the terrain should
//! come in mirrored north–south for a project's axis convention. Unity wants square `2^n + 1`
//! sizes from 33 to 4097 ([`super::tiles::tile_sizes`], `convert --resize unity`); Godot's
//! terrain plugins (HTerrain, Terrain3D) import R16 of any size with the same layout.
//!
//! # Values
//!
//! `lo + v / 65535 · (hi − lo)` metres with the range of [`super::interop`]; Unity maps
//! `v / 65535` onto its terrain height, so set the terrain height to `max − min` from the
//! [`super::sidecar`].
//!
//! # Size on import
//!
//! The file has no header, so the size comes from its length: `width` from
//! [`ImportOptions::width`] (then `height = len / 2 / width`), or else the file must hold a square
//! number of samples. An odd length, a length that is not `2·width·height`, or a non-square count
//! without a width gives an [`InteropError`] before anything is allocated.

use std::path::Path;

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};
use super::mapping::{ExportOptions, ExportReport, ImportOptions, dequantise, export_range, import_range, quantise};
use super::png16::check_sidecar_size;
use super::sidecar;
use crate::core::heightmap::{Heightmap, check_size};

const FORMAT: &str = "R16";

/// `width × height` from a byte length and an optional width. Allocates nothing.
pub fn size_from_len(len: u64, width: Option<usize>) -> Result<(usize, usize), InteropError> {
    if len == 0 || !len.is_multiple_of(2) {
        return Err(InteropError::Size {
            format: FORMAT,
            msg: format!("the file is {len} bytes; R16 needs a positive even length (2 bytes per sample)"),
        });
    }
    let n = len / 2;
    let (w, h) = match width {
        Some(0) => return Err(InteropError::Size { format: FORMAT, msg: "width 0".into() }),
        Some(w) => {
            let h = n / w as u64;
            if h == 0 || h * w as u64 != n {
                return Err(InteropError::Length {
                    format: FORMAT,
                    what: format!("a width of {w} (2·{w}·height bytes)"),
                    expected: 2 * w as u64 * h.max(1),
                    actual: len,
                });
            }
            (w as u64, h)
        }
        None => {
            let s = (n as f64).sqrt().round() as u64;
            if s * s != n {
                return Err(InteropError::Size {
                    format: FORMAT,
                    msg: format!("{n} samples ({len} bytes) are not a square map; give the width (convert --width N)"),
                });
            }
            (s, s)
        }
    };
    let (w, h) = (usize::try_from(w).unwrap_or(usize::MAX), usize::try_from(h).unwrap_or(usize::MAX));
    check_size(w, h)?;
    Ok((w, h))
}

/// Decodes R16 bytes over `range` metres.
pub fn decode(bytes: &[u8], width: Option<usize>, range: [f32; 2], cell_size: f32) -> Result<Heightmap, InteropError> {
    let (w, h) = size_from_len(bytes.len() as u64, width)?;
    let data =
        bytes.chunks_exact(2).map(|b| dequantise(u16::from_le_bytes([b[0], b[1]]) as u32, range, 65535)).collect();
    Ok(Heightmap::from_data(w, h, cell_size, data)?)
}

/// Encodes `hm` as R16 over `range`; returns the bytes and the clip count.
pub fn encode(hm: &Heightmap, range: [f32; 2]) -> (Vec<u8>, usize) {
    let (q, clipped) = quantise(&hm.data, range, 65535);
    (q.into_iter().flat_map(|v| (v as u16).to_le_bytes()).collect(), clipped)
}

/// Reads an R16 file; the size from its length (and `opts.width`), the range and cell size from
/// `opts`, else the sidecar, else `[0, 1]` and 1 m.
pub fn load(path: &Path, opts: &ImportOptions) -> Result<Heightmap, InteropError> {
    let len = std::fs::metadata(path).map_err(io_err("read", path))?.len();
    let sc = sidecar::read(path)?;
    let width = opts.width.or(sc.as_ref().map(|s| s.width));
    size_from_len(len, width)?;
    let bytes = std::fs::read(path).map_err(io_err("read", path))?;
    let hm = decode(&bytes, width, import_range(opts, sc.as_ref()), sc.as_ref().map_or(1.0, |s| s.cell_size))?;
    check_sidecar_size(path, sc.as_ref(), &hm)?;
    Ok(hm)
}

/// Writes `hm` as R16 plus its sidecar, both atomically.
pub fn save(path: &Path, hm: &Heightmap, opts: &ExportOptions) -> Result<ExportReport, InteropError> {
    let (range, z) = export_range(hm, opts)?;
    let (bytes, clipped) = encode(hm, range);
    write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("write", path))?;
    let mut sc = sidecar::for_export("r16", hm.width, hm.height, range, hm.cell_size, &opts.source, z);
    sc.notes = opts.notes.clone();
    sidecar::write(path, &sc)?;
    Ok(ExportReport { range: Some(range), clipped, unreal_z_scale: z })
}
