//! SRTM `.hgt` tiles (import only): NASA's Shuttle Radar Topography Mission elevation.
//!
//! # Layout and orientation
//!
//! ```text
//! offset 2·(row·n + col)   i16 big-endian   metres above the EGM96 geoid; −32768 = void
//! total length             2·n²  (n = 1201 for 3″ SRTM3, 3601 for 1″ SRTM1; any square n ≥ 2 is read)
//! ```
//!
//! Rows run from the tile's north edge to its south edge and columns from west to east (SRTM
//! Topography documentation, "SRTM data format", USGS/NASA, `SRTM_Topo.pdf` §"DEM File (.HGT)",
//! <https://dds.cr.usgs.gov/srtm/version2_1/Documentation/SRTM_Topo.pdf>), so **file row 0 is our
//! `y = 0`** (north) and column `c` is our `x = c`, tested with an asymmetric tile.
//!
//! # Values
//!
//! Heights are the stored metres. Voids (−32 768) are filled from the outside in: every pass gives
//! each void that touches a known node the mean of its known 8-neighbours, then those count as
//! known; only the nodes next to the last pass's fills are revisited, so filling costs
//! O(voids). A tile with no known node is an error. The cell size is the north–south spacing
//! `111 320 m / (n − 1)` (one degree of latitude over `n − 1` intervals; the east–west spacing
//! shrinks with the cosine of the latitude, which a single cell size cannot express).
//!
//! GDAL reads the same files as `SRTMHGT`, QGIS through it.

use std::path::Path;

use super::interop::{InteropError, io_err};
use crate::core::heightmap::{Heightmap, check_size};

const FORMAT: &str = "SRTM .hgt";
/// The void marker.
pub const VOID: i16 = -32768;
/// Metres per degree of latitude (mean), for the cell size.
pub const METRES_PER_DEGREE: f32 = 111_320.0;

/// The side of a tile of `len` bytes. Allocates nothing.
pub fn side_from_len(len: u64) -> Result<usize, InteropError> {
    let n = len / 2;
    let s = (n as f64).sqrt().round() as u64;
    if !len.is_multiple_of(2) || s < 2 || s * s != n {
        return Err(InteropError::Size {
            format: FORMAT,
            msg: format!("the file is {len} bytes; a tile is 2·n² bytes (2 884 802 for SRTM3 1201², 25 934 402 for SRTM1 3601²)"),
        });
    }
    let s = usize::try_from(s).unwrap_or(usize::MAX);
    check_size(s, s)?;
    Ok(s)
}

/// Fills the voids of a `w × h` grid in place (see the module doc); `known[i]` says which nodes
/// hold data. Returns the number of voids filled, or `None` when no node is known.
pub fn fill_voids(w: usize, h: usize, data: &mut [f32], known: &mut [bool]) -> Option<usize> {
    if !known.iter().any(|&k| k) {
        return None;
    }
    let neighbours = |i: usize| {
        let (x, y) = ((i % w) as i64, (i / w) as i64);
        (-1i64..=1).flat_map(move |dy| (-1i64..=1).map(move |dx| (x + dx, y + dy))).filter(move |&(nx, ny)| (nx, ny) != (x, y) && nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64).map(move |(nx, ny)| ny as usize * w + nx as usize)
    };
    // First front: voids next to known nodes.
    let mut front: Vec<usize> = (0..data.len()).filter(|&i| !known[i] && neighbours(i).any(|j| known[j])).collect();
    let mut queued = vec![false; data.len()];
    front.iter().for_each(|&i| queued[i] = true);
    let mut filled = 0;
    while !front.is_empty() {
        // All values of one pass come from the state before it (order-independent).
        let values: Vec<f32> = front
            .iter()
            .map(|&i| {
                let (s, c) = neighbours(i).filter(|&j| known[j]).fold((0.0f64, 0u32), |(s, c), j| (s + data[j] as f64, c + 1));
                (s / c as f64) as f32
            })
            .collect();
        for (&i, v) in front.iter().zip(values) {
            data[i] = v;
            known[i] = true;
        }
        filled += front.len();
        let mut next = Vec::new();
        for &i in &front {
            for j in neighbours(i) {
                if !known[j] && !queued[j] {
                    queued[j] = true;
                    next.push(j);
                }
            }
        }
        next.sort_unstable();
        front = next;
    }
    Some(filled)
}

/// Decodes a tile held in memory; returns the map and the number of voids filled.
pub fn decode(bytes: &[u8]) -> Result<(Heightmap, usize), InteropError> {
    let n = side_from_len(bytes.len() as u64)?;
    let raw: Vec<i16> = bytes.chunks_exact(2).map(|b| i16::from_be_bytes([b[0], b[1]])).collect();
    let mut known: Vec<bool> = raw.iter().map(|&v| v != VOID).collect();
    let mut data: Vec<f32> = raw.iter().map(|&v| if v == VOID { 0.0 } else { v as f32 }).collect();
    let filled = fill_voids(n, n, &mut data, &mut known).ok_or_else(|| InteropError::Unsupported { format: FORMAT, msg: "every sample of the tile is void (−32768)".into() })?;
    Ok((Heightmap::from_data(n, n, METRES_PER_DEGREE / (n - 1) as f32, data)?, filled))
}

/// Reads an SRTM tile, voids filled.
pub fn load(path: &Path) -> Result<Heightmap, InteropError> {
    let len = std::fs::metadata(path).map_err(io_err("read", path))?.len();
    side_from_len(len)?;
    Ok(decode(&std::fs::read(path).map_err(io_err("read", path))?)?.0)
}
