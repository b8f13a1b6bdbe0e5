//! Reading a tile set back: its manifest, and its height tiles reassembled into one map
//! (`talus convert DIR/manifest.json out.bhef`). Every tile is read, its rows put back in image
//! order (the manifest's `rows`), and placed at its offset; every node must be covered, and a node
//! two tiles share must hold the same sample in both.

use std::fs;
use std::path::Path;

use super::engine::RowOrder;
use super::manifest::{FORMAT_VERSION, Manifest};
use super::{TileError, TileFormat, io_err};
use crate::core::heightmap::{Heightmap, check_size};
use crate::core::io::interop::dequantise;
use crate::core::io::png16;

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

/// Reassembles the tile set of `manifest` into one map (module doc). The heights are the samples
/// over the shared range, so the map equals the untiled build quantised the same way, bit for bit.
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
    let rows = if m.heights.rows == RowOrder::SouthFirst.name() { RowOrder::SouthFirst } else { RowOrder::NorthFirst };
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
                let (pw, ph, s, full) = png16::decode_samples(&bytes).map_err(|e| read_err(&p, e.to_string()))?;
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
            let src = rows.file_row(r, th);
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
