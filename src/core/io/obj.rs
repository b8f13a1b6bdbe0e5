//! Wavefront OBJ mesh export: positions, normals and texture coordinates of the Y-up grid of
//! [`super::mesh`], one `f v/vt/vn` line per triangle.
//!
//! ```text
//! # talus heightmap W×H, cell C m
//! v  X Y Z        (one per kept node, rows of our y, each along +x; metres, Y up)
//! vt U V          (V = 1 − y/(h−1): OBJ's texture origin is bottom-left)
//! vn X Y Z
//! f a/a/a b/b/b c/c/c   (1-based; counter-clockwise seen from +Y)
//! ```
//!
//! Numbers are printed in Rust's shortest round-trip form, so the file holds the heights exactly.
//! OBJ has no unit: Blender's importer (default "Y Forward / Z Up" conversion turns this Y-up
//! file upright) and Assimp read it as metres/units (Wavefront OBJ specification, Appendix B1 of
//! the Advanced Visualizer manual; <https://paulbourke.net/dataformats/obj/>).

use std::fmt::Write as _;
use std::path::Path;

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};
use super::mesh;
use crate::core::heightmap::Heightmap;

/// The OBJ text of `hm`'s grid.
pub fn encode(hm: &Heightmap, decimate: usize) -> Result<String, InteropError> {
    let m = mesh::build(hm, decimate)?;
    let mut s = String::with_capacity(m.positions.len() * 80 + m.indices.len() * 12);
    let _ = writeln!(
        s,
        "# talus heightmap {}x{}, cell {} m, {}x{} vertices, Y up",
        hm.width, hm.height, hm.cell_size, m.cols, m.rows
    );
    let _ = writeln!(s, "o terrain");
    for p in &m.positions {
        let _ = writeln!(s, "v {} {} {}", p[0], p[1], p[2]);
    }
    for t in &m.uvs {
        let _ = writeln!(s, "vt {} {}", t[0], 1.0 - t[1]);
    }
    for n in &m.normals {
        let _ = writeln!(s, "vn {} {} {}", n[0], n[1], n[2]);
    }
    for t in m.indices.chunks_exact(3) {
        let (a, b, c) = (t[0] + 1, t[1] + 1, t[2] + 1);
        let _ = writeln!(s, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}");
    }
    Ok(s)
}

/// Writes `hm` as OBJ, atomically.
pub fn save(path: &Path, hm: &Heightmap, decimate: usize) -> Result<(), InteropError> {
    let text = encode(hm, decimate)?;
    write_atomic(path, |w| w.write_all(text.as_bytes())).map_err(io_err("write", path))
}
