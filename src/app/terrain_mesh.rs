//! The terrain as a chunked triangle mesh, lit by a sun with shadows and an ambient term.
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

/// The mesh of chunk `(cx, cy)`: positions, normals, colours and two triangles per quad.
pub fn chunk_mesh(map: &Heightmap, stats: &Stats, cx: usize, cy: usize) -> Mesh {
    let x0 = (cx * CHUNK_QUADS).min(map.width - 1);
    let y0 = (cy * CHUNK_QUADS).min(map.height - 1);
    let x1 = (x0 + CHUNK_QUADS).min(map.width - 1);
    let y1 = (y0 + CHUNK_QUADS).min(map.height - 1);
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
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, colors)
        .with_inserted_indices(Indices::U32(indices))
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
        let m = chunk_mesh(&map, &s, 0, 0);
        assert_eq!(m.count_vertices(), 65 * 65);
        let last = chunk_mesh(&map, &s, 2, 1);
        // x 128..=129, y 64..=69
        assert_eq!(last.count_vertices(), 2 * 6);
    }
}
