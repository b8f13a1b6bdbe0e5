//! The terrain as a chunked triangle mesh (lit by the sun and sky of `super::sky`).
//!
//! The geometry (positions, normals, colours, indices) is built by Bevy-free code in
//! [`crate::editor::mesh`], benchmarked in `benches/brush.rs`; this plugin wraps it in meshes.
//!
//! Chunk `(cx, cy)` covers nodes `x ∈ [64·cx, min(64·cx + 64, width − 1)]` (same for `y`), so
//! neighbouring chunks share their border vertices and the surface has no cracks. Node `(x, y)`
//! sits at world `(x·cell, h, y·cell)` (Bevy is y-up; our second horizontal axis is world z).
//! Normals come from [`Heightmap::normal`] over the whole map, so borders shade seamlessly.
//! Chunks use the splatting material of [`super::material`] (`shaders/terrain.wgsl`); the
//! per-vertex colours (a height ramp) remain as its fallback when splatting is switched off.
//!
//! Only chunks in [`EditorTerrain::dirty`] are rebuilt; [`EditorTerrain::relayout`] respawns all.
//! The chunks' geometry is built on every core (rayon), since a simulation's update dirties the
//! whole map at once: at 2049² that is 1 024 chunks in one frame.
//! Each chunk keeps the level of detail its distance from the camera calls for
//! ([`crate::editor::mesh::lod_step`]: triangles no smaller than a pixel), with skirts under its
//! edges against cracks; [`update_lod`] rebuilds a chunk when the camera moved enough to change
//! its step.

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use rayon::prelude::*;

use super::material::TerrainMaterial;
use super::{CHUNK_QUADS, EditorTerrain};
use crate::core::Heightmap;
use crate::core::heightmap::Stats;
use crate::editor::mesh::{chunk_geometry_lod, lod_step};

/// Builds and refreshes the terrain mesh.
pub struct TerrainMeshPlugin;

impl Plugin for TerrainMeshPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, (rebuild_dirty_chunks, update_lod).chain());
    }
}

/// One mesh chunk of the terrain.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerrainChunk {
    /// Chunk column: the chunk starts at node `x = cx · CHUNK_QUADS`.
    pub cx: usize,
    /// Chunk row: the chunk starts at node `y = cy · CHUNK_QUADS`.
    pub cy: usize,
    /// Level of detail: the mesh keeps every `step`-th node.
    pub step: usize,
}

/// What the level of detail of a chunk is chosen from: the camera's position and the view's
/// pixels per metre at 1 m (`viewport height / (2·tan(fov/2))`).
#[derive(Clone, Copy, Debug)]
struct LodView {
    eye: Vec3,
    px_per_m: f32,
}

impl LodView {
    fn of(camera: &Camera, tf: &GlobalTransform, proj: &Projection) -> Option<Self> {
        let h = camera.logical_viewport_size()?.y;
        let Projection::Perspective(p) = proj else { return None };
        Some(LodView { eye: tf.translation(), px_per_m: h / (2.0 * (p.fov * 0.5).tan()) })
    }

    /// The step chunk `(cx, cy)` of `terrain` should have, from `current`.
    fn step(&self, terrain: &EditorTerrain, cx: usize, cy: usize, current: usize) -> usize {
        let m = terrain.map();
        let c = m.cell_size;
        let (x0, y0) = ((cx * CHUNK_QUADS).min(m.width - 1), (cy * CHUNK_QUADS).min(m.height - 1));
        let (x1, y1) = ((x0 + CHUNK_QUADS).min(m.width - 1), (y0 + CHUNK_QUADS).min(m.height - 1));
        let lo = Vec3::new(x0 as f32 * c, terrain.stats.min, y0 as f32 * c);
        let hi = Vec3::new(x1 as f32 * c, terrain.stats.max, y1 as f32 * c);
        let d = self.eye.distance(self.eye.clamp(lo, hi.max(lo)));
        lod_step(c, d, self.px_per_m, current)
    }
}

/// Rebuilds the chunks whose level of detail the camera's move changed.
fn update_lod(
    terrain: Res<EditorTerrain>,
    mut meshes: ResMut<Assets<Mesh>>,
    cams: Query<(&Camera, &GlobalTransform, &Projection), With<super::camera::OrbitCamera>>,
    mut chunks: Query<(&mut TerrainChunk, &mut Mesh3d)>,
) {
    let Some(view) = cams.iter().next().and_then(|(c, t, p)| LodView::of(c, t, p)) else { return };
    let mut changed: Vec<(Mut<TerrainChunk>, Mut<Mesh3d>)> = chunks
        .iter_mut()
        .filter_map(|(mut chunk, mesh)| {
            let step = view.step(&terrain, chunk.cx, chunk.cy, chunk.step);
            (step != chunk.step).then(|| {
                chunk.step = step;
                (chunk, mesh)
            })
        })
        .collect();
    let keys: Vec<(usize, usize, usize)> = changed.iter().map(|(c, _)| (c.cx, c.cy, c.step)).collect();
    for ((_, mesh), built) in changed.iter_mut().zip(chunk_meshes(&terrain, &keys)) {
        mesh.0 = meshes.add(built);
    }
}

/// Respawns every chunk after a relayout, otherwise swaps in fresh meshes for the dirty ones.
fn rebuild_dirty_chunks(
    mut commands: Commands,
    mut terrain: ResMut<EditorTerrain>,
    mut meshes: ResMut<Assets<Mesh>>,
    material: Option<Res<TerrainMaterial>>,
    chunks: Query<(Entity, &TerrainChunk)>,
) {
    if !terrain.relayout && terrain.dirty.is_empty() {
        return;
    }
    let Some(material) = material else { return };
    let terrain = &mut *terrain;
    if terrain.relayout {
        for (entity, _) in &chunks {
            commands.entity(entity).despawn();
        }
        let (nx, ny) = terrain.chunk_counts();
        // Every node at first; `update_lod` coarsens what is far once the view is known.
        let keys: Vec<(usize, usize, usize)> = (0..ny).flat_map(|cy| (0..nx).map(move |cx| (cx, cy, 1))).collect();
        for (&(cx, cy, step), built) in keys.iter().zip(chunk_meshes(terrain, &keys)) {
            commands.spawn((
                TerrainChunk { cx, cy, step },
                Mesh3d(meshes.add(built)),
                MeshMaterial3d(material.0.clone()),
                Transform::IDENTITY,
            ));
        }
        terrain.relayout = false;
        terrain.dirty.clear();
        return;
    }
    let dirty: Vec<(Entity, (usize, usize, usize))> = chunks
        .iter()
        .filter(|(_, c)| terrain.dirty.contains(&(c.cx, c.cy)))
        .map(|(e, c)| (e, (c.cx, c.cy, c.step)))
        .collect();
    let keys: Vec<(usize, usize, usize)> = dirty.iter().map(|&(_, k)| k).collect();
    for (&(entity, _), built) in dirty.iter().zip(chunk_meshes(terrain, &keys)) {
        commands.entity(entity).insert(Mesh3d(meshes.add(built)));
    }
    terrain.dirty.clear();
}

/// The meshes of chunks `(cx, cy, step)`, in order, built in parallel.
fn chunk_meshes(terrain: &EditorTerrain, keys: &[(usize, usize, usize)]) -> Vec<Mesh> {
    let (map, stats) = (terrain.map(), &terrain.stats);
    keys.par_iter().map(|&(cx, cy, step)| chunk_mesh(map, stats, cx, cy, step)).collect()
}

/// The Bevy mesh of chunk `(cx, cy)` at level of detail `step`, with skirts (geometry from
/// [`chunk_geometry_lod`]). Its data goes to the render world only (moved there, not copied: a
/// simulation's update replaces every chunk), since picking and the brush read the height field.
pub fn chunk_mesh(map: &Heightmap, stats: &Stats, cx: usize, cy: usize, step: usize) -> Mesh {
    let g = chunk_geometry_lod(map, stats, cx, cy, CHUNK_QUADS, step, true);
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::RENDER_WORLD)
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, g.positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, g.normals)
        .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, g.colors)
        .with_inserted_indices(Indices::U32(g.indices))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_meshes_carry_the_geometry() {
        let map = Heightmap::from_fn(130, 70, 2.0, |x, y| (x + y) as f32 * 0.1).unwrap();
        let s = map.stats();
        // The surface and one lowered copy of each edge (the skirt).
        assert_eq!(chunk_mesh(&map, &s, 0, 0, 1).count_vertices(), 65 * 65 + 4 * 65);
        assert_eq!(chunk_mesh(&map, &s, 2, 1, 1).count_vertices(), 2 * 6 + 2 * 2 + 2 * 6);
        assert_eq!(chunk_mesh(&map, &s, 0, 0, 4).count_vertices(), 17 * 17 + 4 * 17);
    }
}
