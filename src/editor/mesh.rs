//! Terrain mesh geometry without Bevy: one chunk's vertices, normals and triangles.
//!
//! Chunk `(cx, cy)` of `q × q` quads covers nodes `x ∈ [q·cx, min(q·cx + q, width − 1)]` (same
//! for `y`), so neighbouring chunks share their border vertices and the surface has no cracks.
//! Node `(x, y)` sits at world `(x·cell, h, y·cell)` (y-up; our second horizontal axis is world
//! z). Normals come from [`Heightmap::normal`] over the whole map, so borders shade seamlessly.
//! A vertex is its position and normal only (24 bytes): the material colours the surface from
//! them (`shaders/terrain.wgsl`: the splatting, or with it off the height ramp of
//! [`crate::editor::look::material::plain_color`]), so a simulation's update sends the GPU no
//! colours and the geometry costs no per-vertex `powf`.
//!
//! **Level of detail** (issue #35: a 2049² or 4097² preview stays interactive): a chunk far from
//! the camera keeps every `s`-th node only ([`chunk_geometry_lod`], `s` a power of two up to
//! [`MAX_LOD_STEP`], the chunk's last row and column always kept), with `s` the largest step whose
//! triangles still span at most [`LOD_TARGET_PX`] pixel ([`lod_step`]): with `k` the view's pixels
//! per metre at 1 m (`viewport height / (2·tan(fov/2))`) and `D` the distance from the camera to
//! the chunk's box, a cell spans `c·k / D` pixels. Triangles under a pixel add nothing to the
//! image, so the picture is the same while the vertex count falls with the square of `s`.
//! Neighbouring chunks of different steps meet along edges that do not coincide; each chunk
//! therefore hangs a **skirt** below its four edges (the edge vertices again, lowered by the
//! largest height range of the edge's [`MAX_LOD_STEP`]-node blocks, plus 1 % of a cell),
//! which fills any crack from below. The brush and picking read the height field itself, not the
//! mesh, so a coarse chunk never moves what the cursor touches.

use crate::core::Heightmap;

/// Vertex and index data of one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkGeometry {
    /// World positions `(x·cell, h, y·cell)`, metres, y-up; row by row over the chunk's nodes.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, one per position, from the whole map.
    pub normals: Vec<[f32; 3]>,
    /// Triangles, three indices into `positions` each, two per quad, counter-clockwise seen from above.
    pub indices: Vec<u32>,
}

/// Coarsest level of detail: every 16th node.
pub const MAX_LOD_STEP: usize = 16;
/// Largest on-screen size of a triangle's side a coarser level may reach, pixels.
pub const LOD_TARGET_PX: f32 = 1.0;

/// The geometry of chunk `(cx, cy)` of `quads × quads` quads: positions, normals and two
/// triangles per quad (every node, no skirt).
pub fn chunk_geometry(map: &Heightmap, cx: usize, cy: usize, quads: usize) -> ChunkGeometry {
    chunk_geometry_lod(map, cx, cy, quads, 1, false)
}

/// The nodes `lo ..= hi` every `step`-th, `hi` always included.
fn kept(lo: usize, hi: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (lo..hi).step_by(step.max(1)).collect();
    v.push(hi);
    v
}

/// As [`chunk_geometry`], keeping every `step`-th node (a power of two, see the module doc) and,
/// with `skirt`, hanging a skirt below the chunk's four edges.
pub fn chunk_geometry_lod(
    map: &Heightmap,
    cx: usize,
    cy: usize,
    quads: usize,
    step: usize,
    skirt: bool,
) -> ChunkGeometry {
    let x0 = (cx * quads).min(map.width - 1);
    let y0 = (cy * quads).min(map.height - 1);
    let x1 = (x0 + quads).min(map.width - 1);
    let y1 = (y0 + quads).min(map.height - 1);
    let (xs, ys) = (kept(x0, x1, step), kept(y0, y1, step));
    let (vw, vh) = (xs.len(), ys.len());
    let mut g = ChunkGeometry {
        positions: Vec::with_capacity(vw * vh),
        normals: Vec::with_capacity(vw * vh),
        indices: Vec::with_capacity((vw - 1) * (vh - 1) * 6),
    };
    let c = map.cell_size;
    for &y in &ys {
        for &x in &xs {
            let h = map.get(x, y);
            g.positions.push([x as f32 * c, h, y as f32 * c]);
            g.normals.push(map.normal(x, y));
        }
    }
    for j in 0..vh.saturating_sub(1) {
        for i in 0..vw.saturating_sub(1) {
            let a = (j * vw + i) as u32;
            let b = a + vw as u32; // (x, y + 1)
            let c = a + 1; // (x + 1, y)
            let d = b + 1; // (x + 1, y + 1)
            // Counter-clockwise seen from above (+Y), Bevy's front face.
            g.indices.extend_from_slice(&[a, b, c, c, b, d]);
        }
    }
    if skirt && vw > 1 && vh > 1 {
        // The four edges as vertex indices, each walked so its skirt faces outward.
        let top: Vec<usize> = (0..vw).collect();
        let right: Vec<usize> = (0..vh).map(|j| j * vw + vw - 1).collect();
        let bottom: Vec<usize> = (0..vw).rev().map(|i| (vh - 1) * vw + i).collect();
        let left: Vec<usize> = (0..vh).rev().map(|j| j * vw).collect();
        // Each edge's nodes, every one of them, from the chunk's origin (for the skirt's depth).
        let row = |y: usize| -> Vec<f32> { (x0..=x1).map(|x| map.get(x, y)).collect() };
        let col = |x: usize| -> Vec<f32> { (y0..=y1).map(|y| map.get(x, y)).collect() };
        for (edge, heights) in [(top, row(y0)), (right, col(x1)), (bottom, row(y1)), (left, col(x0))] {
            let depth = skirt_depth(&heights) + 0.01 * c;
            let base = g.positions.len() as u32;
            for &k in &edge {
                let p = g.positions[k];
                g.positions.push([p[0], p[1] - depth, p[2]]);
                g.normals.push(g.normals[k]);
            }
            for w in 0..edge.len() - 1 {
                let (a, b) = (edge[w] as u32, edge[w + 1] as u32);
                let (a2, b2) = (base + w as u32, base + w as u32 + 1);
                // The edges run around the chunk (+x along y = 0, then +z, −x, −z), so with the
                // lowered copy below, (a, b, a2) winds counter-clockwise seen from outside.
                g.indices.extend_from_slice(&[a, b, a2, b, b2, a2]);
            }
        }
    }
    g
}

/// How far below an edge with these node heights (every node, from the chunk's origin) its skirt
/// reaches: the largest height range over the edge's [`MAX_LOD_STEP`]-node blocks, aligned at the
/// chunk's origin. Every level keeps nodes at multiples of its step from that origin (and the
/// edge's last node), as the neighbour across the edge does, so each coarse segment of either
/// side lies within one block and the two edges cannot be further apart than its range.
fn skirt_depth(heights: &[f32]) -> f32 {
    (0..heights.len().saturating_sub(1))
        .step_by(MAX_LOD_STEP)
        .map(|i| {
            let block = &heights[i..(i + MAX_LOD_STEP + 1).min(heights.len())];
            let (lo, hi) = block.iter().fold((f32::MAX, f32::MIN), |(a, b), &h| (a.min(h), b.max(h)));
            if hi.is_finite() && lo.is_finite() { hi - lo } else { 0.0 }
        })
        .fold(0.0, f32::max)
}

/// The level of detail for a chunk `distance_m` from the camera (to the nearest point of its box)
/// on a map of `cell` metres, seen with `px_per_m` pixels per metre at 1 m: the largest power of
/// two up to [`MAX_LOD_STEP`] whose cells still span at most [`LOD_TARGET_PX`]. `current` is the
/// step the chunk has: it changes only when the new one is right by a margin of 25 % in
/// distance, so a chunk at a threshold does not flip with every small camera move.
pub fn lod_step(cell: f32, distance_m: f32, px_per_m: f32, current: usize) -> usize {
    let want = |d: f32| {
        let px_per_cell = cell * px_per_m / d.max(1e-3);
        let mut s = 1;
        while s < MAX_LOD_STEP && (2 * s) as f32 * px_per_cell <= LOD_TARGET_PX {
            s *= 2;
        }
        s
    };
    if !(distance_m.is_finite() && cell.is_finite() && px_per_m.is_finite()) || cell <= 0.0 || px_per_m <= 0.0 {
        return 1;
    }
    let s = want(distance_m);
    // Coarser only once it would still hold 25 % nearer; finer as soon as it is due (sharpness
    // wins over a saved rebuild).
    if s > current && want(distance_m * 0.8) <= current { current } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coarse_chunk_keeps_every_step_th_node_and_its_last() {
        let map = Heightmap::from_fn(130, 70, 2.0, |x, y| ((x * 7 + y * 3) % 11) as f32).unwrap();
        let fine = chunk_geometry(&map, 0, 0, 64);
        let coarse = chunk_geometry_lod(&map, 0, 0, 64, 4, false);
        assert_eq!(coarse.positions.len(), 17 * 17);
        assert_eq!(coarse.indices.len(), 16 * 16 * 6);
        // Its corners are the fine chunk's, and every vertex sits on the height field.
        assert_eq!(coarse.positions[0], fine.positions[0]);
        assert_eq!(coarse.positions[17 * 17 - 1], fine.positions[65 * 65 - 1]);
        for p in &coarse.positions {
            let (x, y) = ((p[0] / 2.0) as usize, (p[2] / 2.0) as usize);
            assert_eq!(p[1], map.get(x, y));
        }
        // A ragged last chunk (nodes 128 ..= 129) keeps both ends.
        let edge = chunk_geometry_lod(&map, 2, 0, 64, 8, false);
        assert_eq!(edge.positions.len(), 2 * 9);
    }

    #[test]
    fn skirts_hang_below_every_edge_deep_enough_to_close_any_crack() {
        let map = Heightmap::from_fn(65, 65, 1.0, |x, y| ((x * 13 + y * 5) % 17) as f32 * 0.5).unwrap();
        let g = chunk_geometry_lod(&map, 0, 0, 64, 8, true);
        let surface = 9 * 9;
        assert_eq!(g.positions.len(), surface + 4 * 9, "one lowered copy of each edge's vertices");
        assert_eq!(g.indices.len(), 8 * 8 * 6 + 4 * 8 * 6);
        // Each skirt vertex lies under an edge vertex, lower by at least the neighbour's worst gap:
        // the difference between the fine edge and the coarse one.
        for v in &g.positions[surface..] {
            let (x, y) = (v[0] as usize, v[2] as usize);
            assert!(x == 0 || x == 64 || y == 0 || y == 64, "skirt off the edge at ({x}, {y})");
            let top = map.get(x, y);
            assert!(v[1] < top);
        }
        // The worst crack along the top edge between step 8 and step 1 is covered.
        let worst = (0..64)
            .map(|x| {
                let (a, b) = (x / 8 * 8, (x / 8 * 8 + 8).min(64));
                let t = (x - a) as f32 / (b - a) as f32;
                let coarse = map.get(a, 0) * (1.0 - t) + map.get(b, 0) * t;
                (map.get(x, 0) - coarse).abs()
            })
            .fold(0.0f32, f32::max);
        let depth = g.positions[0][1] - g.positions[surface][1];
        assert!(depth >= worst, "skirt {depth} m, crack {worst} m");
        // Skirt triangles face outward: the top edge's (y = 0) normal points to −z.
        let (a, b, c) = (g.indices[8 * 8 * 6], g.indices[8 * 8 * 6 + 1], g.indices[8 * 8 * 6 + 2]);
        let p = |i: u32| g.positions[i as usize];
        let (u, v) = (
            [p(b)[0] - p(a)[0], p(b)[1] - p(a)[1], p(b)[2] - p(a)[2]],
            [p(c)[0] - p(a)[0], p(c)[1] - p(a)[1], p(c)[2] - p(a)[2]],
        );
        let nz = u[0] * v[1] - u[1] * v[0];
        assert!(nz < 0.0, "the top skirt faces +z ({nz})");
        // And the left edge's (x = 0) to −x.
        let k = g.indices.len() - 6;
        let (a, b, c) = (g.indices[k], g.indices[k + 1], g.indices[k + 2]);
        let (u, v) = (
            [p(b)[0] - p(a)[0], p(b)[1] - p(a)[1], p(b)[2] - p(a)[2]],
            [p(c)[0] - p(a)[0], p(c)[1] - p(a)[1], p(c)[2] - p(a)[2]],
        );
        let nx = u[1] * v[2] - u[2] * v[1];
        assert!(nx < 0.0, "the left skirt faces +x ({nx})");
    }

    #[test]
    fn far_chunks_get_coarser_and_near_ones_keep_every_node() {
        // 1000 px per metre at 1 m; 2 m cells: a cell spans 1 px at 2 km.
        let k = 1000.0;
        assert_eq!(lod_step(2.0, 100.0, k, 1), 1);
        assert_eq!(lod_step(2.0, 4000.0, k, 2), 2);
        assert_eq!(lod_step(2.0, 8000.0, k, 4), 4);
        assert_eq!(lod_step(2.0, 1.0e7, k, 1), MAX_LOD_STEP);
        // Hysteresis: just past a threshold the coarser step waits; nearer, the finer one is at once.
        assert_eq!(lod_step(2.0, 4100.0, k, 1), 1);
        assert_eq!(lod_step(2.0, 5100.0, k, 1), 2);
        assert_eq!(lod_step(2.0, 3900.0, k, 2), 1);
        assert_eq!(lod_step(2.0, f32::NAN, k, 4), 1);
    }

    #[test]
    fn chunks_share_borders_and_face_up() {
        let map = Heightmap::from_fn(130, 70, 2.0, |x, y| (x + y) as f32 * 0.1).unwrap();
        let g = chunk_geometry(&map, 0, 0, 64);
        assert_eq!(g.positions.len(), 65 * 65);
        assert_eq!(g.indices.len(), 64 * 64 * 6);
        // x 128..=129, y 64..=69
        let last = chunk_geometry(&map, 2, 1, 64);
        assert_eq!(last.positions.len(), 2 * 6);
        assert_eq!(last.positions[0], [256.0, map.get(128, 64), 128.0]);
        // Chunk (1, 0) starts on the last column of chunk (0, 0).
        let next = chunk_geometry(&map, 1, 0, 64);
        assert_eq!(next.positions[0], g.positions[64]);
        // Counter-clockwise seen from above: the first triangle's normal points up (+Y).
        let p = |i: u32| g.positions[i as usize];
        let (a, b, c) = (p(g.indices[0]), p(g.indices[1]), p(g.indices[2]));
        let (u, v) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
        let ny = u[2] * v[0] - u[0] * v[2];
        assert!(ny > 0.0);
    }
}
