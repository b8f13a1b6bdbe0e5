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
//! O(voids). A tile with no known node is an error.
//!
//! # Cell size (issue #13, item 7)
//!
//! A tile spans 1° × 1° in geographic coordinates (WGS84), `n − 1` intervals each way. The file
//! name gives its south-west corner (`N46E007.hgt`: 46° N, 7° E; `S12W077.hgt`: 12° S, 77° W), so
//! the centre latitude is that + 0.5°. [`super::geodesy`] turns the spacings into metres there
//! (3″ at 46.5° N: 92.63 m north–south, 64.0 m east–west) and resamples the rows to square cells.
//! A name that does not follow the pattern leaves the latitude unknown: the cell size is then the
//! mean-degree north–south spacing `111 320 m / (n − 1)` and the east–west spacing is not
//! corrected, which a note says.
//!
//! GDAL reads the same files as `SRTMHGT`, QGIS through it.

use std::path::Path;

use super::error::{InteropError, io_err};
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
            msg: format!(
                "the file is {len} bytes; a tile is 2·n² bytes (2 884 802 for SRTM3 1201², 25 934 402 for SRTM1 3601²)"
            ),
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
        (-1i64..=1)
            .flat_map(move |dy| (-1i64..=1).map(move |dx| (x + dx, y + dy)))
            .filter(move |&(nx, ny)| (nx, ny) != (x, y) && nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64)
            .map(move |(nx, ny)| ny as usize * w + nx as usize)
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
                let (s, c) =
                    neighbours(i).filter(|&j| known[j]).fold((0.0f64, 0u32), |(s, c), j| (s + data[j] as f64, c + 1));
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

/// The latitude of the south-west corner named by a tile's file name (`N46E007.hgt` → 46,
/// `s12w077.HGT` → −12); `None` when the name does not follow the pattern.
pub fn latitude_from_name(path: &Path) -> Option<f64> {
    let stem = path.file_stem()?.to_str()?.as_bytes();
    if stem.len() < 7 {
        return None;
    }
    let sign = match stem[0].to_ascii_uppercase() {
        b'N' => 1.0,
        b'S' => -1.0,
        _ => return None,
    };
    let digits =
        |b: &[u8]| b.iter().all(u8::is_ascii_digit).then(|| std::str::from_utf8(b).ok()?.parse::<f64>().ok()).flatten();
    let lat = digits(&stem[1..3])?;
    if !matches!(stem[3].to_ascii_uppercase(), b'E' | b'W') || digits(&stem[4..7]).is_none() || lat > 89.0 {
        return None;
    }
    Some(sign * lat)
}

/// Decodes a tile whose south-west corner lies at latitude `lat_sw` (degrees; `None`: unknown),
/// with square cells in metres (see the module doc; `keep_grid`: no resampling, see
/// [`super::geodesy`]); returns the map, the number of voids filled and notes saying how the cell
/// size was obtained.
pub fn decode_at(
    bytes: &[u8],
    lat_sw: Option<f64>,
    keep_grid: bool,
) -> Result<(Heightmap, usize, Vec<String>), InteropError> {
    let (hm, filled) = decode(bytes)?;
    let n = hm.width;
    let mut notes = Vec::new();
    let Some(lat) = lat_sw else {
        notes.push(format!(
            "SRTM tile: latitude unknown (the file name is not like N46E007.hgt): cell {:.2} m north–south (111 320 m per degree), east–west spacing not corrected",
            hm.cell_size
        ));
        return Ok((hm, filled, notes));
    };
    let centre = lat + 0.5;
    let (mx, my) = super::geodesy::metres_per_degree(centre);
    let (dx, dy) = (mx / (n - 1) as f64, my / (n - 1) as f64);
    let hemi = if centre >= 0.0 { "N" } else { "S" };
    notes.push(format!(
        "SRTM tile (geographic, WGS84): {:.2}″ cells are {dx:.2} m (x) × {dy:.2} m (y) at the tile's centre latitude {:.1}° {hemi}",
        3600.0 / (n - 1) as f64,
        centre.abs()
    ));
    let hm = super::geodesy::square_cells(hm.data, n, n, dx, dy, keep_grid, &mut notes)?;
    Ok((hm, filled, notes))
}

/// Decodes a tile held in memory; returns the map and the number of voids filled. The latitude is
/// unknown here: the cell size is `111 320 m / (n − 1)` (see [`decode_at`]).
pub fn decode(bytes: &[u8]) -> Result<(Heightmap, usize), InteropError> {
    let n = side_from_len(bytes.len() as u64)?;
    let raw: Vec<i16> = bytes.chunks_exact(2).map(|b| i16::from_be_bytes([b[0], b[1]])).collect();
    let mut known: Vec<bool> = raw.iter().map(|&v| v != VOID).collect();
    let mut data: Vec<f32> = raw.iter().map(|&v| if v == VOID { 0.0 } else { v as f32 }).collect();
    let filled = fill_voids(n, n, &mut data, &mut known).ok_or_else(|| InteropError::Unsupported {
        format: FORMAT,
        msg: "every sample of the tile is void (−32768)".into(),
    })?;
    Ok((Heightmap::from_data(n, n, METRES_PER_DEGREE / (n - 1) as f32, data)?, filled))
}

/// Reads an SRTM tile, voids filled, in metres at the latitude its name gives.
pub fn load(path: &Path) -> Result<Heightmap, InteropError> {
    Ok(load_with_notes(path, false)?.0)
}

/// Reads an SRTM tile with the notes of [`decode_at`] (and the number of voids filled).
pub fn load_with_notes(path: &Path, keep_grid: bool) -> Result<(Heightmap, Vec<String>), InteropError> {
    let len = std::fs::metadata(path).map_err(io_err("read", path))?.len();
    side_from_len(len)?;
    let (hm, filled, mut notes) =
        decode_at(&std::fs::read(path).map_err(io_err("read", path))?, latitude_from_name(path), keep_grid)?;
    if filled > 0 {
        notes.push(format!("{filled} void samples filled from their neighbours"));
    }
    Ok((hm, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latitude_comes_from_the_file_name() {
        assert_eq!(latitude_from_name(Path::new("/x/N46E007.hgt")), Some(46.0));
        assert_eq!(latitude_from_name(Path::new("s12w077.HGT")), Some(-12.0));
        assert_eq!(latitude_from_name(Path::new("tile.hgt")), None);
        assert_eq!(latitude_from_name(Path::new("N4XE007.hgt")), None);
    }

    #[test]
    fn a_3_arc_second_tile_at_46_north_gets_square_metre_cells() {
        let n = 1201;
        let bytes: Vec<u8> = (0..n * n).flat_map(|i| (((i % n) / 10) as i16).to_be_bytes()).collect();
        let (hm, filled, notes) = decode_at(&bytes, Some(46.0), false).unwrap();
        assert_eq!((filled, hm.height), (0, n));
        // Centre 46.5° N: 92.64 m north–south, 63.91 m east–west → 1200 · 63.91 / 92.64 + 1 nodes.
        assert!((hm.cell_size - 92.64).abs() < 0.02, "{}", hm.cell_size);
        let (mx, my) = crate::core::io::geodesy::metres_per_degree(46.5);
        assert_eq!(hm.width, (1200.0 * (mx / 1200.0) / (my / 1200.0)).round() as usize + 1);
        let text = notes.join("\n");
        assert!(text.contains("46.5° N") && text.contains("resampled"), "{text}");
        let (_, _, unknown) = decode_at(&bytes, None, false).unwrap();
        assert!(unknown[0].contains("latitude unknown"));
    }
}
