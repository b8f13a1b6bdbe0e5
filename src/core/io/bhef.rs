//! BHEF heightmap files, byte-exact with the `exportBin` function of seed 004
//! ("LandscapeAdvancedGen", the Russian article on Perlin/value noise and the island filter).
//!
//! # Layout
//!
//! Little-endian, no magic number, no version, no cell size:
//!
//! ```text
//! offset 0   i32 XBounds                         (X ≥ 1)
//! offset 4   i32 YBounds                         (Y ≥ 1)
//! offset 8   for i in 0..X { for j in 0..Y {    // i outer, j inner
//!                i32 i   i32 j   f32 Data[i][j]  // 12 bytes per node
//!            } }
//! total length  L = 8 + 12 · X · Y
//! node (i, j) starts at byte 8 + 12 · (i · Y + j); its height at that offset + 8.
//! ```
//!
//! # Orientation
//!
//! Seed 004 turns `Data[i][j]` into the mesh vertex `(x = i, height, z = j)`, so the file's `i`
//! runs along our x axis ([`Heightmap::width`], `X = width`) and `j` along our second horizontal
//! axis ([`Heightmap::height`], `Y = height`):
//!
//! ```text
//! file node (i, j)  ↔  hm.data[j * width + i]      (i = x, j = y)
//! ```
//!
//! The file is therefore x-outer while our memory is row-major (y-outer). Both directions convert
//! in one pass over one buffer, in blocks of columns/rows spread over rayon tasks, so a 4097²
//! map (≈ 201 MB of file) converts in a fraction of a second. The result never depends on the
//! thread count: every byte/height has exactly one writer, and when a file has several faults the
//! one reported is always the one at the lowest byte offset.
//!
//! # Strictness
//!
//! The seed writes every node's own indices, so a reader can and does check them: any node whose
//! stored `(i, j)` differs from its position, any non-finite height, a length that is not exactly
//! `8 + 12·X·Y`, or bounds that are ≤ 0 or beyond [`MAX_SIDE`]/[`MAX_NODES`] are reported as a
//! [`BhefError`] naming the byte offset and what was expected. Nothing sized by the header is
//! allocated before the header has been checked against the real length of the data.
//!
//! The format stores no spacing, so decoded maps get `cell_size = 1.0`, exactly as the seed's mesh
//! places vertices one unit apart.
//!
//! # The sidecar: the cell size beside the file
//!
//! Talus writes its BHEF files with [`save_with_sidecar`], which adds `map.bhef.json`
//! ([`super::sidecar`], format `"bhef"`) holding the map's size, its exact height range and its
//! cell size. [`load`] reads it back when it describes the file beside it: the same width and
//! height and the same lowest and highest height, to the bit (so a BHEF rewritten by another tool
//! leaves its stale sidecar unused). Then the map gets the recorded cell size; otherwise 1 m, as
//! the seed's. Other tools ignore the sidecar, and the BHEF bytes are the seed's layout.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use thiserror::Error;

use crate::core::heightmap::{Heightmap, MAX_NODES, MAX_SIDE};

/// Size of the header: two `i32` bounds.
pub const HEADER_LEN: usize = 8;
/// Size of one node record: `i32 i`, `i32 j`, `f32 height`.
pub const NODE_LEN: usize = 12;

/// Columns (file `i` values) handled together by one task when converting; keeps both the
/// strided and the contiguous side of the transpose cache-friendly.
const BLOCK: usize = 64;

/// Everything that can go wrong reading or writing a BHEF file.
#[derive(Debug, Error)]
pub enum BhefError {
    /// Fewer than 8 bytes: not even the two bounds are present.
    #[error(
        "BHEF data is {len} bytes long, shorter than the 8-byte header \
         (i32 XBounds at byte 0, i32 YBounds at byte 4)"
    )]
    ShortHeader {
        /// Length of the data, bytes (0 to 7).
        len: u64,
    },

    /// A bound in the header is zero or negative.
    #[error("BHEF header: {axis} at byte {offset} is {value}, but it must be at least 1")]
    BadBound {
        /// Which bound: `"XBounds"` or `"YBounds"`.
        axis: &'static str,
        /// Byte offset of the bound: 0 for `XBounds`, 4 for `YBounds`.
        offset: u64,
        /// The value stored there (≤ 0).
        value: i32,
    },

    /// The bounds describe a map larger than Talus accepts (or whose size overflows).
    #[error(
        "BHEF header: a {x}×{y} map is too large (at most {MAX_SIDE} nodes per side and \
         {MAX_NODES} nodes in all)"
    )]
    TooLarge {
        /// `XBounds` as stored, nodes along x.
        x: i64,
        /// `YBounds` as stored, nodes along y.
        y: i64,
    },

    /// The data ends before the last node the header promises.
    #[error(
        "BHEF data is truncated: the {x}×{y} header needs {expected} bytes (8 + 12·{x}·{y}), \
         but there are only {actual}"
    )]
    Truncated {
        /// `XBounds` from the header, nodes along x.
        x: usize,
        /// `YBounds` from the header, nodes along y.
        y: usize,
        /// Length the header implies, bytes: `8 + 12·x·y`.
        expected: u64,
        /// Length of the data, bytes (less than `expected`).
        actual: u64,
    },

    /// More bytes follow the last node the header promises.
    #[error(
        "BHEF data has trailing bytes: the {x}×{y} header needs {expected} bytes (8 + 12·{x}·{y}), \
         but there are {actual}"
    )]
    TrailingBytes {
        /// `XBounds` from the header, nodes along x.
        x: usize,
        /// `YBounds` from the header, nodes along y.
        y: usize,
        /// Length the header implies, bytes: `8 + 12·x·y`.
        expected: u64,
        /// Length of the data, bytes (more than `expected`).
        actual: u64,
    },

    /// A node record carries indices other than its position in the file.
    #[error(
        "BHEF node out of order at byte {offset}: expected node (i={expected_i}, j={expected_j}), \
         found (i={found_i}, j={found_j})"
    )]
    NodeOrder {
        /// Byte offset of the node record (of its stored `i`).
        offset: u64,
        /// The `i` (x) the record's position implies.
        expected_i: i32,
        /// The `j` (y) the record's position implies.
        expected_j: i32,
        /// The `i` stored in the record.
        found_i: i32,
        /// The `j` stored in the record.
        found_j: i32,
    },

    /// A stored height is NaN or infinite.
    #[error("BHEF height at byte {offset} (node i={i}, j={j}) is {value}, not a finite number")]
    NonFinite {
        /// Byte offset of the height itself (the node record's offset + 8).
        offset: u64,
        /// The node's file index along x.
        i: i32,
        /// The node's file index along y.
        j: i32,
        /// The stored height: NaN or ±∞.
        value: f32,
    },

    /// `encode`: the map cannot be expressed as a BHEF file of a size Talus would read back.
    #[error(
        "cannot write a {width}×{height} map as BHEF: each side must be 1..={MAX_SIDE} \
         (and fit an i32), with at most {MAX_NODES} nodes"
    )]
    MapTooLarge {
        /// The map's nodes along x.
        width: usize,
        /// The map's nodes along y.
        height: usize,
    },

    /// `encode`: the map's data vector does not match its sides.
    #[error("cannot write the map as BHEF: it is {width}×{height} but holds {len} heights")]
    MapDataLength {
        /// The map's nodes along x.
        width: usize,
        /// The map's nodes along y.
        height: usize,
        /// Heights the data vector holds (not `width * height`).
        len: usize,
    },

    /// `encode`: a height in the map is NaN or infinite.
    #[error("cannot write the map as BHEF: height at x={x}, y={y} is {value}, not a finite number")]
    MapNonFinite {
        /// Column of the first such node (row-major order).
        x: usize,
        /// Row of the first such node.
        y: usize,
        /// The height there: NaN or ±∞.
        value: f32,
    },

    /// The sidecar beside a BHEF file (`map.bhef.json`) could not be read or written.
    #[error("the sidecar {}: {msg} (it records the map's cell size; fix or delete it)", path.display())]
    Sidecar {
        /// The sidecar's path.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },

    /// An operating-system error while reading or writing `path`.
    #[error("could not {op} {}: {source}", path.display())]
    Io {
        /// What was being done, as a verb phrase for the message: `"open"`, `"read"`, `"save"`…
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

fn io_err(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> BhefError {
    move |source| BhefError::Io { op, path: path.to_path_buf(), source }
}

/// Bytes a BHEF file of `width × height` nodes occupies: `8 + 12 · width · height`.
///
/// `None` when no BHEF file can have that size: a side of 0, a side beyond `i32::MAX`, or a length
/// that overflows `u64`. (Sizes past [`MAX_SIDE`]/[`MAX_NODES`] still get a length; [`encode`]
/// and [`decode`] refuse them separately.)
pub fn encoded_len(width: usize, height: usize) -> Option<u64> {
    if width == 0 || height == 0 || width > i32::MAX as usize || height > i32::MAX as usize {
        return None;
    }
    (width as u64).checked_mul(height as u64)?.checked_mul(NODE_LEN as u64)?.checked_add(HEADER_LEN as u64)
}

/// Validates the 8-byte header and returns `(X, Y)` and the exact length they imply.
/// Allocates nothing.
fn parse_header(header: [u8; 8]) -> Result<(usize, usize, u64), BhefError> {
    let x = i32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let y = i32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if x <= 0 {
        return Err(BhefError::BadBound { axis: "XBounds", offset: 0, value: x });
    }
    if y <= 0 {
        return Err(BhefError::BadBound { axis: "YBounds", offset: 4, value: y });
    }
    let (xu, yu) = (x as usize, y as usize);
    if xu > MAX_SIDE || yu > MAX_SIDE || xu.checked_mul(yu).is_none_or(|n| n > MAX_NODES) {
        return Err(BhefError::TooLarge { x: x as i64, y: y as i64 });
    }
    // Cannot fail: both sides are in 1..=MAX_SIDE.
    let expected = encoded_len(xu, yu).ok_or(BhefError::TooLarge { x: x as i64, y: y as i64 })?;
    Ok((xu, yu, expected))
}

fn check_length(x: usize, y: usize, expected: u64, actual: u64) -> Result<(), BhefError> {
    if actual < expected {
        Err(BhefError::Truncated { x, y, expected, actual })
    } else if actual > expected {
        Err(BhefError::TrailingBytes { x, y, expected, actual })
    } else {
        Ok(())
    }
}

#[inline]
fn rd_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parses a whole BHEF file held in memory.
///
/// Node `(i, j)` of the file becomes `data[j * width + i]` with `width = XBounds`,
/// `height = YBounds`; `cell_size` is 1.0. Every malformation gives a [`BhefError`]; nothing
/// sized by the header is allocated until the header matches `bytes.len()`.
pub fn decode(bytes: &[u8]) -> Result<Heightmap, BhefError> {
    let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
        return Err(BhefError::ShortHeader { len: bytes.len() as u64 });
    };
    let (w, h, expected) = parse_header(*header)?;
    check_length(w, h, expected, bytes.len() as u64)?;
    let body = &bytes[HEADER_LEN..];

    let mut data = vec![0.0f32; w * h];
    // Each task owns BLOCK output rows (file j values j0..j1) and reads, for every column i, the
    // contiguous run of records (i, j0..j1). Within a task nodes are visited in increasing file
    // offset, so its first fault is its lowest; the overall lowest is picked afterwards.
    let faults: Vec<BhefError> = data
        .par_chunks_mut(w * BLOCK)
        .enumerate()
        .filter_map(|(block, rows)| {
            let j0 = block * BLOCK;
            let nrows = rows.len() / w;
            for i in 0..w {
                let run = (i * h + j0) * NODE_LEN;
                for r in 0..nrows {
                    let at = run + r * NODE_LEN;
                    let (fi, fj) = (rd_i32(body, at), rd_i32(body, at + 4));
                    let (ei, ej) = (i as i32, (j0 + r) as i32);
                    let offset = (HEADER_LEN + at) as u64;
                    if fi != ei || fj != ej {
                        return Some(BhefError::NodeOrder {
                            offset,
                            expected_i: ei,
                            expected_j: ej,
                            found_i: fi,
                            found_j: fj,
                        });
                    }
                    let v = f32::from_bits(rd_i32(body, at + 8) as u32);
                    if !v.is_finite() {
                        return Some(BhefError::NonFinite { offset: offset + 8, i: ei, j: ej, value: v });
                    }
                    rows[r * w + i] = v;
                }
            }
            None
        })
        .collect();
    if let Some(first) = faults.into_iter().min_by_key(fault_offset) {
        return Err(first);
    }
    Ok(Heightmap { width: w, height: h, cell_size: 1.0, data })
}

fn fault_offset(e: &BhefError) -> u64 {
    match e {
        BhefError::NodeOrder { offset, .. } | BhefError::NonFinite { offset, .. } => *offset,
        _ => u64::MAX,
    }
}

/// Index of the first NaN/infinite value, scanning large chunks in parallel with a branch-free
/// (vectorisable) test and searching element-wise only inside the first bad chunk.
fn first_non_finite(data: &[f32]) -> Option<usize> {
    const CHUNK: usize = 1 << 16;
    let bad_chunk = data.par_chunks(CHUNK).position_first(|c| !c.iter().fold(true, |ok, v| ok & v.is_finite()))?;
    let start = bad_chunk * CHUNK;
    data[start..].iter().position(|v| !v.is_finite()).map(|k| start + k)
}

/// One node record: `i32 i`, `i32 j`, `f32 height`, little-endian.
#[inline]
fn record(i: i32, j: i32, v: f32) -> [u8; NODE_LEN] {
    let (a, b, c) = (i.to_le_bytes(), j.to_le_bytes(), v.to_le_bytes());
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], c[0], c[1], c[2], c[3]]
}

/// Serialises a map in the seed's layout (see the module docs for the orientation).
///
/// Refuses maps with a side of 0 or beyond [`MAX_SIDE`] (hence beyond `i32`), more than
/// [`MAX_NODES`] nodes, a data vector of the wrong length, or any non-finite height (the first
/// one in memory order is named). `cell_size` is not stored: the format has no field for it.
pub fn encode(hm: &Heightmap) -> Result<Vec<u8>, BhefError> {
    let (w, h) = (hm.width, hm.height);
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE || w.checked_mul(h).is_none_or(|n| n > MAX_NODES) {
        return Err(BhefError::MapTooLarge { width: w, height: h });
    }
    if hm.data.len() != w * h {
        return Err(BhefError::MapDataLength { width: w, height: h, len: hm.data.len() });
    }
    if let Some(k) = first_non_finite(&hm.data) {
        return Err(BhefError::MapNonFinite { x: k % w, y: k / w, value: hm.data[k] });
    }
    let total = encoded_len(w, h).ok_or(BhefError::MapTooLarge { width: w, height: h })? as usize;

    let mut out = vec![0u8; total];
    out[0..4].copy_from_slice(&(w as i32).to_le_bytes());
    out[4..8].copy_from_slice(&(h as i32).to_le_bytes());
    // Each task owns the records of BLOCK consecutive columns i0..i1 (a contiguous stretch of the
    // file). It goes through them in BLOCK×BLOCK tiles: a band of rows is first copied row by row
    // (contiguous reads) into a small transposed tile, then each column's run of records is
    // written sequentially from it.
    out[HEADER_LEN..].par_chunks_mut(h * NODE_LEN * BLOCK).enumerate().for_each(|(block, chunk)| {
        let i0 = block * BLOCK;
        let mut cols: Vec<&mut [u8]> = chunk.chunks_exact_mut(h * NODE_LEN).collect();
        let ncols = cols.len();
        let mut tile = [[0.0f32; BLOCK]; BLOCK]; // tile[c][j - j0]
        for j0 in (0..h).step_by(BLOCK) {
            let j1 = (j0 + BLOCK).min(h);
            for j in j0..j1 {
                let row = &hm.data[j * w + i0..j * w + i0 + ncols];
                for (c, &v) in row.iter().enumerate() {
                    tile[c][j - j0] = v;
                }
            }
            for (c, col) in cols.iter_mut().enumerate() {
                let i = (i0 + c) as i32;
                let (recs, _) = col[j0 * NODE_LEN..j1 * NODE_LEN].as_chunks_mut::<NODE_LEN>();
                for ((j, rec), &v) in (j0..j1).zip(recs).zip(&tile[c]) {
                    *rec = record(i, j as i32, v);
                }
            }
        }
    });
    Ok(out)
}

/// Reads a BHEF file.
///
/// The header is read and checked against the file's length (from its metadata) before
/// anything sized by the header is allocated; then the file is read in one buffer and decoded.
/// A file that changes length while being read is reported as truncated or as having trailing
/// bytes. Errors from the operating system carry the path.
pub fn load(path: &Path) -> Result<Heightmap, BhefError> {
    Ok(load_with_cell(path)?.0)
}

/// Reads a BHEF file and its sidecar (module doc): the map, with the sidecar's cell size when it
/// describes this file (also returned), else 1 m and `None`. A sidecar that exists but cannot be
/// read or parsed is an error; one that describes another map is left unused.
pub fn load_with_cell(path: &Path) -> Result<(Heightmap, Option<f32>), BhefError> {
    let mut hm = load_bytes(path)?;
    let cell = recorded_cell_size(path, &hm)?;
    if let Some(c) = cell {
        hm.cell_size = c;
    }
    Ok((hm, cell))
}

/// The cell size the sidecar of `path` records for `hm`, when it describes `hm` (format `bhef`,
/// the same size and height range).
fn recorded_cell_size(path: &Path, hm: &Heightmap) -> Result<Option<f32>, BhefError> {
    let sc = super::sidecar::read(path)
        .map_err(|e| BhefError::Sidecar { path: super::sidecar::path_for(path), msg: e.to_string() })?;
    let Some(sc) = sc else { return Ok(None) };
    let (lo, hi) = hm.min_max();
    let same = sc.format == SIDECAR_FORMAT
        && (sc.width, sc.height) == (hm.width, hm.height)
        && sc.min.to_bits() == lo.to_bits()
        && sc.max.to_bits() == hi.to_bits();
    Ok(same.then_some(sc.cell_size))
}

/// The sidecar's `format` for a BHEF file.
pub const SIDECAR_FORMAT: &str = "bhef";

/// Reads the BHEF bytes of `path` (no sidecar).
fn load_bytes(path: &Path) -> Result<Heightmap, BhefError> {
    let mut file = File::open(path).map_err(io_err("open", path))?;
    let meta = file.metadata().map_err(io_err("read the metadata of", path))?;
    if meta.is_dir() {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "it is a folder, not a BHEF file");
        return Err(BhefError::Io { op: "load", path: path.to_path_buf(), source });
    }
    let actual = meta.len();
    if actual < HEADER_LEN as u64 {
        return Err(BhefError::ShortHeader { len: actual });
    }
    let mut header = [0u8; HEADER_LEN];
    read_full(&mut file, &mut header).map_err(io_err("read", path))?;
    let (w, h, expected) = parse_header(header)?;
    check_length(w, h, expected, actual)?;

    // Only now, with expected == the file's length, allocate.
    let mut bytes = vec![0u8; expected as usize];
    bytes[..HEADER_LEN].copy_from_slice(&header);
    let got = HEADER_LEN as u64 + read_full(&mut file, &mut bytes[HEADER_LEN..]).map_err(io_err("read", path))? as u64;
    if got < expected {
        return Err(BhefError::Truncated { x: w, y: h, expected, actual: got });
    }
    let mut probe = [0u8; 1];
    let extra = read_full(&mut file, &mut probe).map_err(io_err("read", path))?;
    if extra > 0 {
        let now = file.metadata().map(|m| m.len()).unwrap_or(expected + 1).max(expected + 1);
        return Err(BhefError::TrailingBytes { x: w, y: h, expected, actual: now });
    }
    decode(&bytes)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Writes `hm` to `path` atomically: the bytes go to a fresh temporary file in the same folder,
/// which is flushed and fsync'ed and then renamed over `path`. On any error the temporary file is
/// removed and `path` is untouched, so a crash leaves either the old file or the new one, never a
/// half-written one. The map is encoded (and validated) before anything is created on disk.
pub fn save_atomic(path: &Path, hm: &Heightmap) -> Result<(), BhefError> {
    // Encode first: an invalid map never touches the disk.
    let bytes = encode(hm)?;
    super::atomic::write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("save", path))
}

/// [`save_atomic`], then the sidecar `path.json` with the map's size, height range and cell size
/// (module doc), written atomically after the file, so that [`load`] gives the map back with its
/// cell size. `source` names what the map came from (may be empty).
pub fn save_with_sidecar(path: &Path, hm: &Heightmap, source: &str) -> Result<(), BhefError> {
    save_atomic(path, hm)?;
    let (lo, hi) = hm.min_max();
    let sc = super::sidecar::for_export(SIDECAR_FORMAT, hm.width, hm.height, [lo, hi], hm.cell_size, source, None);
    super::sidecar::write(path, &sc)
        .map_err(|e| BhefError::Sidecar { path: super::sidecar::path_for(path), msg: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(w: usize, h: usize) -> Heightmap {
        Heightmap::from_fn(w, h, 1.0, |x, y| 100.0 * x as f32 + y as f32 + 0.5).unwrap()
    }

    fn header(x: i32, y: i32) -> Vec<u8> {
        let mut b = x.to_le_bytes().to_vec();
        b.extend_from_slice(&y.to_le_bytes());
        b
    }

    #[test]
    fn encoded_len_formula_and_limits() {
        assert_eq!(encoded_len(2, 3), Some(8 + 72));
        assert_eq!(encoded_len(1, 1), Some(20));
        assert_eq!(encoded_len(0, 5), None);
        assert_eq!(encoded_len(5, 0), None);
        assert_eq!(encoded_len(i32::MAX as usize + 1, 1), None);
        // 12·(2^31 − 1)² does not fit a u64.
        assert_eq!(encoded_len(i32::MAX as usize, i32::MAX as usize), None);
        assert_eq!(encoded_len(65_536, 65_536), Some(8 + 12 * (1u64 << 32)));
    }

    #[test]
    fn round_trip_edge_shapes_and_values() {
        for (w, h) in [(1, 1), (1, 7), (7, 1), (3, 130), (130, 3), (65, 64), (64, 65)] {
            let hm = map(w, h);
            let bytes = encode(&hm).unwrap();
            assert_eq!(bytes.len() as u64, encoded_len(w, h).unwrap());
            assert_eq!(decode(&bytes).unwrap(), hm);
        }
        // Extreme finite values and signed zero survive bit-exactly.
        let vals = [f32::MAX, f32::MIN, f32::MIN_POSITIVE, -0.0, 1e-45, -1e-45];
        let hm = Heightmap::from_data(3, 2, 1.0, vals.to_vec()).unwrap();
        let back = decode(&encode(&hm).unwrap()).unwrap();
        let bits = |m: &Heightmap| m.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back), bits(&hm));
    }

    #[test]
    fn decode_sets_unit_cell_size() {
        let mut hm = map(4, 3);
        hm.cell_size = 7.5;
        assert_eq!(decode(&encode(&hm).unwrap()).unwrap().cell_size, 1.0);
    }

    #[test]
    fn short_header() {
        for n in 0..8 {
            assert!(matches!(decode(&vec![1u8; n]), Err(BhefError::ShortHeader { len }) if len == n as u64));
        }
    }

    #[test]
    fn bad_bounds_name_the_axis() {
        let e = decode(&header(0, 3)).unwrap_err();
        assert!(matches!(e, BhefError::BadBound { axis: "XBounds", offset: 0, value: 0 }), "{e}");
        let e = decode(&header(2, -5)).unwrap_err();
        assert!(matches!(e, BhefError::BadBound { axis: "YBounds", offset: 4, value: -5 }), "{e}");
        assert!(e.to_string().contains("YBounds") && e.to_string().contains("byte 4"));
        // X is checked first.
        assert!(matches!(decode(&header(i32::MIN, 0)), Err(BhefError::BadBound { axis: "XBounds", .. })));
    }

    #[test]
    fn too_large_before_length() {
        let e = decode(&header(1 << 30, 1 << 30)).unwrap_err();
        assert!(matches!(e, BhefError::TooLarge { .. }), "{e}");
        assert!(matches!(decode(&header(MAX_SIDE as i32 + 1, 1)), Err(BhefError::TooLarge { .. })));
        assert!(matches!(decode(&header(MAX_SIDE as i32, MAX_SIDE as i32)), Err(BhefError::TooLarge { .. })));
        // At the node limit the header is fine and the (tiny) length is what's wrong.
        let e = decode(&header(MAX_SIDE as i32, (MAX_NODES / MAX_SIDE) as i32)).unwrap_err();
        assert!(matches!(e, BhefError::Truncated { actual: 8, .. }), "{e}");
    }

    #[test]
    fn length_mismatch_says_which() {
        let good = encode(&map(2, 3)).unwrap();
        let e = decode(&good[..good.len() - 1]).unwrap_err();
        assert!(matches!(e, BhefError::Truncated { expected: 80, actual: 79, .. }));
        assert!(e.to_string().contains("truncated") && e.to_string().contains("80") && e.to_string().contains("79"));
        let mut long = good.clone();
        long.push(0);
        let e = decode(&long).unwrap_err();
        assert!(matches!(e, BhefError::TrailingBytes { expected: 80, actual: 81, .. }));
        assert!(e.to_string().contains("trailing bytes"));
    }

    #[test]
    fn node_order_reports_offset_and_nodes() {
        let mut b = encode(&map(2, 3)).unwrap();
        // Node (1, 0) is the 4th record: byte 8 + 12·3 = 44. Claim it is (0, 2).
        b[44..48].copy_from_slice(&0i32.to_le_bytes());
        b[48..52].copy_from_slice(&2i32.to_le_bytes());
        let e = decode(&b).unwrap_err();
        assert!(
            matches!(e, BhefError::NodeOrder { offset: 44, expected_i: 1, expected_j: 0, found_i: 0, found_j: 2 }),
            "{e}"
        );
    }

    #[test]
    fn non_finite_reports_offset_of_height() {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut b = encode(&map(2, 3)).unwrap();
            // Node (0, 2): record at 8 + 12·2 = 32, height at 40.
            b[40..44].copy_from_slice(&bad.to_le_bytes());
            let e = decode(&b).unwrap_err();
            assert!(matches!(e, BhefError::NonFinite { offset: 40, i: 0, j: 2, .. }), "{e}");
        }
    }

    #[test]
    fn lowest_fault_wins_across_blocks() {
        // 3 columns, 200 rows: rows span several decode blocks. Faults in a late block at a low
        // offset and in an early block at a high offset: the lower byte offset must be reported.
        let hm = map(3, 200);
        let mut b = encode(&hm).unwrap();
        let rec = |i: usize, j: usize| HEADER_LEN + (i * 200 + j) * NODE_LEN;
        let late_low = rec(0, 150); // block 2, column 0
        let early_high = rec(2, 5); // block 0, column 2
        b[early_high + 8..early_high + 12].copy_from_slice(&f32::NAN.to_le_bytes());
        b[late_low..late_low + 4].copy_from_slice(&9i32.to_le_bytes());
        let e = decode(&b).unwrap_err();
        assert!(
            matches!(e, BhefError::NodeOrder { offset, expected_i: 0, expected_j: 150, found_i: 9, .. } if offset == late_low as u64),
            "{e}"
        );
    }

    #[test]
    fn encode_refuses_bad_maps() {
        let mut hm = map(3, 2);
        hm.data[4] = f32::NAN; // x = 1, y = 1
        assert!(matches!(encode(&hm), Err(BhefError::MapNonFinite { x: 1, y: 1, .. })));
        hm.data[4] = 0.0;
        hm.data[0] = f32::NEG_INFINITY;
        assert!(matches!(encode(&hm), Err(BhefError::MapNonFinite { x: 0, y: 0, .. })));

        let bad_len = Heightmap { width: 3, height: 2, cell_size: 1.0, data: vec![0.0; 5] };
        assert!(matches!(encode(&bad_len), Err(BhefError::MapDataLength { len: 5, .. })));
        let empty = Heightmap { width: 0, height: 2, cell_size: 1.0, data: vec![] };
        assert!(matches!(encode(&empty), Err(BhefError::MapTooLarge { .. })));
        // Sides beyond i32 are refused before the data is looked at.
        let huge = Heightmap { width: i32::MAX as usize + 1, height: 1, cell_size: 1.0, data: vec![] };
        assert!(matches!(encode(&huge), Err(BhefError::MapTooLarge { .. })));
        let wide = Heightmap { width: usize::MAX, height: usize::MAX, cell_size: 1.0, data: vec![] };
        assert!(matches!(encode(&wide), Err(BhefError::MapTooLarge { .. })));
    }

    #[test]
    fn encode_layout_is_i_outer() {
        let hm = map(2, 3);
        let b = encode(&hm).unwrap();
        assert_eq!(&b[..8], &header(2, 3)[..]);
        let mut k = HEADER_LEN;
        for i in 0..2 {
            for j in 0..3 {
                assert_eq!(rd_i32(&b, k), i as i32);
                assert_eq!(rd_i32(&b, k + 4), j as i32);
                assert_eq!(f32::from_le_bytes(b[k + 8..k + 12].try_into().unwrap()), hm.get(i, j));
                k += NODE_LEN;
            }
        }
    }

    #[test]
    fn same_bytes_at_any_thread_count() {
        let hm = Heightmap::from_fn(97, 131, 1.0, |x, y| {
            crate::core::rng::signed_f32(crate::core::rng::hash2(x as i64, y as i64, 7)) * 1000.0
        })
        .unwrap();
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let a = one.install(|| encode(&hm).unwrap());
        let b = four.install(|| encode(&hm).unwrap());
        assert_eq!(a, b);
        assert_eq!(one.install(|| decode(&a).unwrap()), four.install(|| decode(&a).unwrap()));
    }
}
