//! The triangle grid shared by the mesh exports ([`super::obj`], [`super::glb`]).
//!
//! Y-up, right-handed, metres: node `(x, y)` becomes the vertex
//! `(x · cell, h(x, y), y · cell)`, so our `+y` (south, down in the 2-D view) is the mesh's `+z`.
//! Normals are [`Heightmap::normal`] (already `(−∂h/∂x, 1, −∂h/∂y)` normalised, in that frame).
//! Texture coordinates put our `y = 0` row at the top of an image: `(u, v) = (x / (w − 1),
//! y / (h − 1))` in glTF's top-left convention (OBJ flips `v`, see there), so our PNG exports
//! drape the right way round. Each grid cell gives two triangles wound counter-clockwise seen
//! from above (`+Y`): `(x,y) (x,y+1) (x+1,y)` and `(x+1,y) (x,y+1) (x+1,y+1)`.
//!
//! Decimation `k > 1` keeps every `k`-th node along each axis plus the last one (so the outline
//! and the extent stay exact); it is uniform subsampling, not error-driven simplification.

use super::error::InteropError;
use crate::core::heightmap::Heightmap;

/// A triangle grid ready to be written.
#[derive(Clone, Debug)]
pub struct GridMesh {
    /// Vertex positions `(x · cell, h, y · cell)`, metres, Y-up; row by row, `cols` per row.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals in the same frame, one per position.
    pub normals: Vec<[f32; 3]>,
    /// Top-left origin (glTF convention).
    pub uvs: Vec<[f32; 2]>,
    /// Triangles, three vertex indices each.
    pub indices: Vec<u32>,
    /// Vertices per row and rows kept.
    pub cols: usize,
    /// Rows of vertices kept (nodes kept along y); `positions.len() == cols * rows`.
    pub rows: usize,
}

/// The node indices kept along an axis of `n` nodes with stride `step`.
pub fn kept(n: usize, step: usize) -> Vec<usize> {
    let step = step.max(1);
    let mut v: Vec<usize> = (0..n).step_by(step).collect();
    if v.last() != Some(&(n - 1)) {
        v.push(n - 1);
    }
    v
}

/// Builds the grid of `hm`, keeping every `decimate`-th node (0 or 1: all).
pub fn build(hm: &Heightmap, decimate: usize) -> Result<GridMesh, InteropError> {
    if hm.width < 2 || hm.height < 2 {
        return Err(InteropError::Size {
            format: "mesh",
            msg: format!("a {}×{} map has no cells; a mesh needs at least 2×2 nodes", hm.width, hm.height),
        });
    }
    let xs = kept(hm.width, decimate);
    let ys = kept(hm.height, decimate);
    let (cols, rows) = (xs.len(), ys.len());
    let n = cols * rows;
    let mut positions = Vec::with_capacity(n);
    let mut normals = Vec::with_capacity(n);
    let mut uvs = Vec::with_capacity(n);
    let c = hm.cell_size;
    for &y in &ys {
        for &x in &xs {
            positions.push([x as f32 * c, hm.get(x, y), y as f32 * c]);
            normals.push(hm.normal(x, y));
            uvs.push([x as f32 / (hm.width - 1) as f32, y as f32 / (hm.height - 1) as f32]);
        }
    }
    let mut indices = Vec::with_capacity((cols - 1) * (rows - 1) * 6);
    for r in 0..rows - 1 {
        for q in 0..cols - 1 {
            let a = (r * cols + q) as u32;
            let b = a + cols as u32;
            indices.extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
        }
    }
    Ok(GridMesh { positions, normals, uvs, indices, cols, rows })
}
