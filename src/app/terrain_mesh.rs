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

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;

use super::material::TerrainMaterial;
use super::{CHUNK_QUADS, EditorTerrain};
use crate::core::Heightmap;
use crate::core::heightmap::Stats;
use crate::editor::mesh::chunk_geometry;

/// Builds and refreshes the terrain mesh.
pub struct TerrainMeshPlugin;

impl Plugin for TerrainMeshPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, rebuild_dirty_chunks);
    }
}

/// One mesh chunk of the terrain.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerrainChunk {
    /// Chunk column: the chunk starts at node `x = cx · CHUNK_QUADS`.
    pub cx: usize,
    /// Chunk row: the chunk starts at node `y = cy · CHUNK_QUADS`.
    pub cy: usize,
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
        for cy in 0..ny {
            for cx in 0..nx {
                let mesh = meshes.add(chunk_mesh(terrain.map(), &terrain.stats, cx, cy));
                commands.spawn((
                    TerrainChunk { cx, cy },
                    Mesh3d(mesh),
                    MeshMaterial3d(material.0.clone()),
                    Transform::IDENTITY,
                ));
            }
        }
        terrain.relayout = false;
        terrain.dirty.clear();
        return;
    }
    for (entity, chunk) in &chunks {
        if terrain.dirty.contains(&(chunk.cx, chunk.cy)) {
            let mesh = meshes.add(chunk_mesh(terrain.map(), &terrain.stats, chunk.cx, chunk.cy));
            commands.entity(entity).insert(Mesh3d(mesh));
        }
    }
    terrain.dirty.clear();
}

/// The Bevy mesh of chunk `(cx, cy)` (geometry from [`chunk_geometry`]).
pub fn chunk_mesh(map: &Heightmap, stats: &Stats, cx: usize, cy: usize) -> Mesh {
    let g = chunk_geometry(map, stats, cx, cy, CHUNK_QUADS);
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
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
        assert_eq!(chunk_mesh(&map, &s, 0, 0).count_vertices(), 65 * 65);
        assert_eq!(chunk_mesh(&map, &s, 2, 1).count_vertices(), 2 * 6);
    }
}
