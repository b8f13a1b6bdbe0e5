//! Terrain mesh geometry without Bevy: one chunk's vertices, normals, colours and triangles.
//!
//! Chunk `(cx, cy)` of `q × q` quads covers nodes `x ∈ [q·cx, min(q·cx + q, width − 1)]` (same
//! for `y`), so neighbouring chunks share their border vertices and the surface has no cracks.
//! Node `(x, y)` sits at world `(x·cell, h, y·cell)` (y-up; our second horizontal axis is world
//! z). Normals come from [`Heightmap::normal`] over the whole map, so borders shade seamlessly.
//! Colours are per vertex, linear RGBA, by height within the map's range (sand, grass, forest,
//! rock, snow; below 0 m seabed) with slopes steeper than about 55° turned to rock.

use crate::core::Heightmap;
use crate::core::heightmap::Stats;

/// Vertex and index data of one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkGeometry {
    /// World positions `(x·cell, h, y·cell)`, metres, y-up; row by row over the chunk's nodes.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, one per position, from the whole map.
    pub normals: Vec<[f32; 3]>,
    /// Linear RGBA per vertex from [`height_color`], channels in `[0, 1]`, alpha always 1.
    pub colors: Vec<[f32; 4]>,
    /// Triangles, three indices into `positions` each, two per quad, counter-clockwise seen from above.
    pub indices: Vec<u32>,
}

/// The geometry of chunk `(cx, cy)` of `quads × quads` quads: positions, normals, colours and two
/// triangles per quad.
pub fn chunk_geometry(map: &Heightmap, stats: &Stats, cx: usize, cy: usize, quads: usize) -> ChunkGeometry {
    let x0 = (cx * quads).min(map.width - 1);
    let y0 = (cy * quads).min(map.height - 1);
    let x1 = (x0 + quads).min(map.width - 1);
    let y1 = (y0 + quads).min(map.height - 1);
    let (vw, vh) = (x1 - x0 + 1, y1 - y0 + 1);
    let mut positions = Vec::with_capacity(vw * vh);
    let mut normals = Vec::with_capacity(vw * vh);
    let mut colors = Vec::with_capacity(vw * vh);
    let c = map.cell_size;
    for y in y0..=y1 {
        for x in x0..=x1 {
            let h = map.get(x, y);
            let n = map.normal(x, y);
            positions.push([x as f32 * c, h, y as f32 * c]);
            normals.push(n);
            colors.push(height_color(h, n[1], stats));
        }
    }
    let mut indices = Vec::with_capacity((vw - 1) * (vh - 1) * 6);
    for j in 0..vh.saturating_sub(1) {
        for i in 0..vw.saturating_sub(1) {
            let a = (j * vw + i) as u32;
            let b = a + vw as u32; // (x, y + 1)
            let c = a + 1; // (x + 1, y)
            let d = b + 1; // (x + 1, y + 1)
            // Counter-clockwise seen from above (+Y), Bevy's front face.
            indices.extend_from_slice(&[a, b, c, c, b, d]);
        }
    }
    ChunkGeometry { positions, normals, colors, indices }
}

/// Linear RGBA for a vertex at height `h` (metres) whose normal has vertical component `up`.
/// Below 0 m (the sea) is wet sand; above, sand → grass → rock → snow by the fraction of the
/// map's positive height range; slopes steeper than about 55° show rock.
pub fn height_color(h: f32, up: f32, stats: &Stats) -> [f32; 4] {
    const SEABED: [f32; 3] = [0.45, 0.40, 0.30];
    const SAND: [f32; 3] = [0.76, 0.70, 0.50];
    const GRASS: [f32; 3] = [0.30, 0.50, 0.18];
    const FOREST: [f32; 3] = [0.20, 0.36, 0.14];
    const ROCK: [f32; 3] = [0.45, 0.42, 0.40];
    const SNOW: [f32; 3] = [0.95, 0.95, 0.97];
    let top = if stats.max > 0.0 { stats.max } else { (stats.max - stats.min).max(1.0) };
    let base = if stats.max > 0.0 { 0.0 } else { stats.min };
    let t = ((h - base) / top).clamp(-1.0, 1.0);
    let mut rgb = if t < 0.0 {
        SEABED
    } else if t < 0.03 {
        SAND
    } else if t < 0.08 {
        mix(SAND, GRASS, (t - 0.03) / 0.05)
    } else if t < 0.45 {
        mix(GRASS, FOREST, (t - 0.08) / 0.37)
    } else if t < 0.7 {
        mix(FOREST, ROCK, (t - 0.45) / 0.25)
    } else if t < 0.85 {
        ROCK
    } else {
        mix(ROCK, SNOW, ((t - 0.85) / 0.05).min(1.0))
    };
    if t >= 0.03 {
        let steep = ((0.6 - up) / 0.15).clamp(0.0, 1.0);
        rgb = mix(rgb, ROCK, steep);
    }
    // sRGB-ish constants above; the vertex colour attribute is linear.
    let lin = |v: f32| v.powf(2.2);
    [lin(rgb[0]), lin(rgb[1]), lin(rgb[2]), 1.0]
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    let t = t.clamp(0.0, 1.0);
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_share_borders_and_face_up() {
        let map = Heightmap::from_fn(130, 70, 2.0, |x, y| (x + y) as f32 * 0.1).unwrap();
        let s = map.stats();
        let g = chunk_geometry(&map, &s, 0, 0, 64);
        assert_eq!(g.positions.len(), 65 * 65);
        assert_eq!(g.indices.len(), 64 * 64 * 6);
        // x 128..=129, y 64..=69
        let last = chunk_geometry(&map, &s, 2, 1, 64);
        assert_eq!(last.positions.len(), 2 * 6);
        assert_eq!(last.positions[0], [256.0, map.get(128, 64), 128.0]);
        // Chunk (1, 0) starts on the last column of chunk (0, 0).
        let next = chunk_geometry(&map, &s, 1, 0, 64);
        assert_eq!(next.positions[0], g.positions[64]);
        // Counter-clockwise seen from above: the first triangle's normal points up (+Y).
        let p = |i: u32| g.positions[i as usize];
        let (a, b, c) = (p(g.indices[0]), p(g.indices[1]), p(g.indices[2]));
        let (u, v) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
        let ny = u[2] * v[0] - u[0] * v[2];
        assert!(ny > 0.0);
    }
}
