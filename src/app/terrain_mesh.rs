//! The terrain as a chunked triangle mesh, lit by a sun with shadows and an ambient term.
//!
//! The geometry (positions, normals, colours, indices) is built by Bevy-free code in
//! [`crate::editor::mesh`], benchmarked in `benches/brush.rs`; this plugin wraps it in meshes.
//!
//! Chunk `(cx, cy)` covers nodes `x ∈ [64·cx, min(64·cx + 64, width − 1)]` (same for `y`), so
//! neighbouring chunks share their border vertices and the surface has no cracks. Node `(x, y)`
//! sits at world `(x·cell, h, y·cell)` (Bevy is y-up; our second horizontal axis is world z).
//! Normals come from [`Heightmap::normal`] over the whole map, so borders shade seamlessly.
//! Colours are per vertex, by height within the map's range (sand, grass, rock, snow) with
//! steep slopes turned to rock; the material is a plain white `StandardMaterial`.
//!
//! Only chunks in [`EditorTerrain::dirty`] are rebuilt; [`EditorTerrain::relayout`] respawns all.

use bevy::asset::RenderAssetUsages;
use bevy::light::CascadeShadowConfigBuilder;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;

use super::{CHUNK_QUADS, EditorTerrain};
use crate::core::Heightmap;
use crate::core::heightmap::Stats;
use crate::editor::mesh::chunk_geometry;

/// Builds and refreshes the terrain mesh and sets up the lights.
pub struct TerrainMeshPlugin;

impl Plugin for TerrainMeshPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(GlobalAmbientLight { color: Color::srgb(0.75, 0.82, 1.0), brightness: 400.0, ..default() })
            .insert_resource(ClearColor(Color::srgb(0.55, 0.70, 0.88)))
            .add_systems(Startup, (create_material, spawn_lights))
            .add_systems(Update, rebuild_dirty_chunks);
    }
}

/// One mesh chunk of the terrain.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerrainChunk {
    pub cx: usize,
    pub cy: usize,
}

/// The material every chunk shares.
#[derive(Resource)]
pub struct TerrainMaterial(pub Handle<StandardMaterial>);

fn create_material(mut commands: Commands, mut materials: ResMut<Assets<StandardMaterial>>) {
    let handle = materials.add(StandardMaterial { base_color: Color::WHITE, perceptual_roughness: 0.9, ..default() });
    commands.insert_resource(TerrainMaterial(handle));
}

fn spawn_lights(mut commands: Commands, terrain: Res<EditorTerrain>) {
    let extent = terrain.map().width.max(terrain.map().height) as f32 * terrain.map().cell_size;
    let shadows = CascadeShadowConfigBuilder {
        maximum_distance: extent * 3.0,
        first_cascade_far_bound: extent * 0.5,
        ..default()
    }
    .build();
    commands.spawn((
        DirectionalLight { illuminance: 9000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(1.0, 1.3, 0.3).looking_at(Vec3::ZERO, Vec3::Y),
        shadows,
    ));
}

/// Respawns every chunk after a relayout, otherwise swaps in fresh meshes for the dirty ones.
fn rebuild_dirty_chunks(
    mut commands: Commands,
    mut terrain: ResMut<EditorTerrain>,
    mut meshes: ResMut<Assets<Mesh>>,
    material: Res<TerrainMaterial>,
    chunks: Query<(Entity, &TerrainChunk)>,
) {
    if !terrain.relayout && terrain.dirty.is_empty() {
        return;
    }
    let terrain = &mut *terrain;
    if terrain.relayout {
        for (entity, _) in &chunks {
            commands.entity(entity).despawn();
        }
        let (nx, ny) = terrain.chunk_counts();
        for cy in 0..ny {
            for cx in 0..nx {
                let mesh = meshes.add(chunk_mesh(terrain.map(), &terrain.stats, cx, cy));
                commands.spawn((TerrainChunk { cx, cy }, Mesh3d(mesh), MeshMaterial3d(material.0.clone()), Transform::IDENTITY));
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
