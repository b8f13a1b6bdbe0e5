//! The terrain as a chunked triangle mesh (lit by the sun and sky of `super::sky`).
//!
//! The geometry (positions, normals, colours, indices) is built by Bevy-free code in
//! [`crate::editor::mesh`], benchmarked in `benches/brush.rs`; this plugin wraps it in meshes.
//!
//! Chunk `(cx, cy)` covers nodes `x ∈ [64·cx, min(64·cx + 64, width − 1)]` (same for `y`), so
//! neighbouring chunks share their border vertices and the surface has no cracks. Node `(x, y)`
//! sits at world `(x·cell, h, y·cell)` (Bevy is y-up; our second horizontal axis is world z).
//! Normals come from [`Heightmap::normal`] over the whole map, so borders shade seamlessly.
//! Chunks use the splatting material of [`super::material`] (`shaders/terrain.wgsl`), which
//! colours them from position and normal alone (with splatting off, the height ramp of
//! [`crate::editor::look::material::plain_color`]), so a vertex carries no colour.
//!
//! Only chunks in [`EditorTerrain::dirty`] are rebuilt; [`EditorTerrain::relayout`] respawns all.
//! The chunks' geometry is built on every core (rayon), since a simulation's update dirties the
//! whole map at once: at 2049² that is 1 024 chunks. More than [`FRAME_CHUNKS`] are built on a
//! thread of their own ([`super::background`]) and swapped in when done, at most
//! [`FRAME_UPLOAD_BYTES`] of them a frame, so the frames go on meanwhile and no frame uploads a
//! whole map's meshes (a script's screenshot waits for them, [`super::state::ViewWork`]); a
//! stroke's few are rebuilt in the frame.
//! Each chunk keeps the level of detail its distance from the camera calls for
//! ([`crate::editor::mesh::lod_step`]: triangles no smaller than a pixel), with skirts under its
//! edges against cracks; [`update_lod`] rebuilds a chunk when the camera moved enough to change
//! its step.

use std::collections::{HashMap, HashSet, VecDeque};

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use rayon::prelude::*;

use super::background::{Background, Polled};
use super::material::TerrainMaterial;
use super::state::{CHUNK_QUADS, EditorTerrain, MapSnapshot, ViewWork};
use crate::core::Heightmap;
use crate::editor::mesh::{chunk_geometry_lod, lod_step};

/// Builds and refreshes the terrain mesh.
pub struct TerrainMeshPlugin;

impl Plugin for TerrainMeshPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ChunkBuild>()
            .init_resource::<ViewWork>()
            .init_resource::<MapSnapshot>()
            .add_systems(Update, (rebuild_dirty_chunks, update_lod).chain());
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
    mut build: ResMut<ChunkBuild>,
    cams: Query<(&Camera, &GlobalTransform, &Projection), With<super::state::OrbitCamera>>,
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
    build.built_in_frame(&keys);
    for ((_, mesh), built) in changed.iter_mut().zip(chunk_meshes(terrain.map(), &keys)) {
        mesh.0 = meshes.add(built);
    }
}

/// Above this many stale chunks, their meshes are built on a background task (a simulation's
/// update or any change of the whole map: 1 024 chunks at 2049², 70 ms on 2 cores) and swapped in
/// from the frame they are done ([`FRAME_UPLOAD_BYTES`] a frame), while the frames go on; this
/// many or fewer (a brush stroke) are rebuilt in the frame, so a stroke shows under the brush at
/// once.
pub const FRAME_CHUNKS: usize = 64;

/// The most chunk-mesh data (vertices and indices, bytes) a background build puts in the view in
/// one frame; at least one chunk goes each frame. Every new mesh is packed, copied to the GPU and
/// has its pipelines specialized in the frame it appears, so a simulation's update of a whole
/// 2049² map at full detail (156 MiB, 1 024 chunks of 156 KiB) would cost one frame all of it;
/// at this rate it goes in over seven frames, an eighth of a second at 60 Hz. An update of that
/// map seen whole in a 1280×720 view (coarser chunks far off) is 20.5 MiB and goes in one frame.
/// Neighbouring chunks of two updates meet for those frames along edges their skirts hide.
pub const FRAME_UPLOAD_BYTES: usize = 24 << 20;

/// Meshes of chunk `(cx, cy)` built on a background task: `(cx, cy, step)` and the mesh.
type BuiltChunks = Vec<((usize, usize, usize), Mesh)>;

/// The chunk meshes being built on a background task.
#[derive(Resource, Default)]
pub struct ChunkBuild {
    /// The task, with the layout it was started for.
    task: Option<(u64, Background<BuiltChunks>)>,
    /// Grows at every relayout: a task of an older layout is dropped.
    layout: u64,
    /// Chunks rebuilt in the frame (a stroke, a level-of-detail change) while the task ran: their
    /// mesh is newer than the task's, which is not shown.
    newer: HashSet<(usize, usize)>,
    /// A finished build's meshes still to be put in the view, [`FRAME_UPLOAD_BYTES`] a frame, in
    /// row order: `(cx, cy, step)` and the mesh.
    ready: VecDeque<((usize, usize, usize), Mesh)>,
}

impl ChunkBuild {
    /// Notes chunks `(cx, cy, _)` rebuilt in the frame: a running task's or a finished build's
    /// older mesh of them is never shown.
    fn built_in_frame(&mut self, chunks: &[(usize, usize, usize)]) {
        if self.task.is_some() {
            self.newer.extend(chunks.iter().map(|&(cx, cy, _)| (cx, cy)));
        }
        if !self.ready.is_empty() {
            let rebuilt: HashSet<(usize, usize)> = chunks.iter().map(|&(cx, cy, _)| (cx, cy)).collect();
            self.ready.retain(|&((cx, cy, _), _)| !rebuilt.contains(&(cx, cy)));
        }
    }

    /// Whether a background build is running or its meshes are still going in.
    fn busy(&self) -> bool {
        self.task.is_some() || !self.ready.is_empty()
    }
}

/// The bytes a mesh sends to the GPU: its vertices and indices.
fn upload_bytes(mesh: &Mesh) -> usize {
    let index_bytes = match mesh.indices() {
        Some(Indices::U16(i)) => i.len() * 2,
        Some(Indices::U32(i)) => i.len() * 4,
        None => 0,
    };
    mesh.count_vertices() * mesh.get_vertex_size() as usize + index_bytes
}

/// Respawns every chunk after a relayout, otherwise swaps in fresh meshes for the dirty ones: in
/// the frame for a few, on a background task for many ([`FRAME_CHUNKS`]), whose meshes then go in
/// [`FRAME_UPLOAD_BYTES`] a frame.
fn rebuild_dirty_chunks(
    mut commands: Commands,
    mut terrain: ResMut<EditorTerrain>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut build: ResMut<ChunkBuild>,
    mut work: ResMut<ViewWork>,
    mut snapshot: ResMut<MapSnapshot>,
    material: Option<Res<TerrainMaterial>>,
    chunks: Query<(Entity, &TerrainChunk)>,
) {
    let build = &mut *build;
    // A background build that is done: its meshes replace the chunks' (those of its layout, at
    // the step they still have, not rebuilt in a frame since).
    let finished = match &mut build.task {
        Some((layout, task)) => match task.poll() {
            Polled::Running => None,
            Polled::Done(done) => Some((*layout, done)),
            Polled::Gone => {
                // Its thread panicked: every chunk is built again, in the frame.
                warn!("the background build of the terrain's chunk meshes failed; rebuilding them all");
                terrain.bypass_change_detection().relayout = true;
                Some((*layout, Vec::new()))
            }
        },
        None => None,
    };
    if let Some((layout, done)) = finished {
        build.task = None;
        let bytes: usize = done.iter().map(|(_, m)| upload_bytes(m)).sum();
        debug!(
            "terrain: {} chunk meshes built off the frame are done (layout {layout}): {:.1} MiB, {} frame(s) to go in",
            done.len(),
            bytes as f64 / (1 << 20) as f64,
            bytes.div_ceil(FRAME_UPLOAD_BYTES).max(1)
        );
        if layout == build.layout {
            let newer = std::mem::take(&mut build.newer);
            let mut done: Vec<_> = done.into_iter().filter(|&((cx, cy, _), _)| !newer.contains(&(cx, cy))).collect();
            done.sort_by_key(|&((cx, cy, _), _)| (cy, cx));
            build.ready = done.into();
        }
        build.newer.clear();
    }
    if !build.ready.is_empty() {
        // This frame's share of a finished build: each at the step its chunk still has.
        let at: HashMap<(usize, usize), (Entity, usize)> =
            chunks.iter().map(|(e, c)| ((c.cx, c.cy), (e, c.step))).collect();
        let (mut bytes, mut shown) = (0, 0);
        while bytes < FRAME_UPLOAD_BYTES
            && let Some(((cx, cy, step), mesh)) = build.ready.pop_front()
        {
            if let Some(&(entity, now)) = at.get(&(cx, cy))
                && now == step
            {
                bytes += upload_bytes(&mesh);
                commands.entity(entity).insert(Mesh3d(meshes.add(mesh)));
                shown += 1;
            }
        }
        work.meshes_shown += u64::from(shown > 0);
    }
    work.meshes = build.busy() || terrain.relayout || !terrain.dirty.is_empty();
    if !terrain.relayout && terrain.dirty.is_empty() {
        return;
    }
    let Some(material) = material else { return };
    // What this system changes is bookkeeping (which chunks are stale), not the map: it leaves the
    // terrain's change tick alone, which keys the shared copy of the map ([`MapSnapshot`]).
    let changed = terrain.last_changed();
    let terrain = terrain.bypass_change_detection();
    if terrain.relayout {
        build.layout += 1;
        build.task = None;
        build.newer.clear();
        build.ready.clear();
        for (entity, _) in &chunks {
            commands.entity(entity).despawn();
        }
        let (nx, ny) = terrain.chunk_counts();
        // Every node at first; `update_lod` coarsens what is far once the view is known.
        let keys: Vec<(usize, usize, usize)> = (0..ny).flat_map(|cy| (0..nx).map(move |cx| (cx, cy, 1))).collect();
        for (&(cx, cy, step), built) in keys.iter().zip(chunk_meshes(terrain.map(), &keys)) {
            commands.spawn((
                TerrainChunk { cx, cy, step },
                Mesh3d(meshes.add(built)),
                MeshMaterial3d(material.0.clone()),
                Transform::IDENTITY,
            ));
        }
        terrain.relayout = false;
        terrain.dirty.clear();
        work.meshes = false;
        work.meshes_shown += 1;
        return;
    }
    let many = terrain.dirty.len() > FRAME_CHUNKS;
    if many && build.busy() {
        // The next background build starts when this one's meshes are all in.
        return;
    }
    let dirty: Vec<(Entity, (usize, usize, usize))> = chunks
        .iter()
        .filter(|(_, c)| terrain.dirty.contains(&(c.cx, c.cy)))
        .map(|(e, c)| (e, (c.cx, c.cy, c.step)))
        .collect();
    let keys: Vec<(usize, usize, usize)> = dirty.iter().map(|&(_, k)| k).collect();
    if many {
        let map = snapshot.of(terrain, changed);
        terrain.dirty.clear();
        let task = Background::spawn("terrain chunk meshes", move || {
            keys.iter().copied().zip(chunk_meshes(&map, &keys)).collect::<BuiltChunks>()
        });
        build.task = Some((build.layout, task));
        work.meshes = true;
        return;
    }
    terrain.dirty.clear();
    build.built_in_frame(&keys);
    for (&(entity, _), built) in dirty.iter().zip(chunk_meshes(terrain.map(), &keys)) {
        commands.entity(entity).insert(Mesh3d(meshes.add(built)));
    }
    work.meshes_shown += u64::from(!dirty.is_empty());
    work.meshes = build.busy();
}

/// The meshes of chunks `(cx, cy, step)` of `map`, in order, built in parallel.
fn chunk_meshes(map: &Heightmap, keys: &[(usize, usize, usize)]) -> Vec<Mesh> {
    keys.par_iter().map(|&(cx, cy, step)| chunk_mesh(map, cx, cy, step)).collect()
}

/// The Bevy mesh of chunk `(cx, cy)` at level of detail `step`, with skirts (geometry from
/// [`chunk_geometry_lod`]). Its data goes to the render world only (moved there, not copied: a
/// simulation's update replaces every chunk), since picking and the brush read the height field.
/// A vertex is a position and a normal (the material colours it); the indices are 16-bit, as a
/// chunk has at most 65² + 4·65 vertices: 30 bytes a vertex with its share of the triangles,
/// where 32-bit indices and a colour made it 64.
pub fn chunk_mesh(map: &Heightmap, cx: usize, cy: usize, step: usize) -> Mesh {
    let g = chunk_geometry_lod(map, cx, cy, CHUNK_QUADS, step, true);
    let indices = if g.positions.len() <= usize::from(u16::MAX) + 1 {
        Indices::U16(g.indices.iter().map(|&i| i as u16).collect())
    } else {
        Indices::U32(g.indices)
    };
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::RENDER_WORLD)
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, g.positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, g.normals)
        .with_inserted_indices(indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_meshes_carry_the_geometry() {
        let map = Heightmap::from_fn(130, 70, 2.0, |x, y| (x + y) as f32 * 0.1).unwrap();
        // The surface and one lowered copy of each edge (the skirt).
        assert_eq!(chunk_mesh(&map, 0, 0, 1).count_vertices(), 65 * 65 + 4 * 65);
        assert_eq!(chunk_mesh(&map, 2, 1, 1).count_vertices(), 2 * 6 + 2 * 2 + 2 * 6);
        assert_eq!(chunk_mesh(&map, 0, 0, 4).count_vertices(), 17 * 17 + 4 * 17);
    }

    /// An app with the chunk systems and a `side²` map (no renderer: the meshes stay readable).
    fn app(side: usize) -> App {
        let map = Heightmap::from_fn(side, side, 1.0, |x, y| (x * 3 + y) as f32 * 0.01).unwrap();
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, AssetPlugin::default()))
            .init_asset::<Mesh>()
            .init_resource::<ChunkBuild>()
            .init_resource::<ViewWork>()
            .init_resource::<MapSnapshot>()
            .insert_resource(TerrainMaterial(Handle::default()))
            .insert_resource(EditorTerrain::new(crate::editor::document::Document::new(map)))
            .add_systems(Update, rebuild_dirty_chunks);
        app.update();
        app
    }

    /// Every chunk's surface heights as its mesh holds them, against the map's: the largest
    /// difference, metres.
    fn mesh_lag(app: &mut App) -> f32 {
        let map = app.world().resource::<EditorTerrain>().map().clone();
        let mut q = app.world_mut().query::<(&TerrainChunk, &Mesh3d)>();
        let chunks: Vec<(TerrainChunk, Handle<Mesh>)> = q.iter(app.world()).map(|(c, m)| (*c, m.0.clone())).collect();
        let meshes = app.world().resource::<Assets<Mesh>>();
        let mut worst = 0.0f32;
        for (c, h) in chunks {
            let Some(bevy::mesh::VertexAttributeValues::Float32x3(p)) =
                meshes.get(&h).and_then(|m| m.attribute(Mesh::ATTRIBUTE_POSITION))
            else {
                panic!("chunk {c:?} has no mesh")
            };
            // The surface's vertices come first, then the skirts'.
            let x0 = c.cx * CHUNK_QUADS;
            let y0 = c.cy * CHUNK_QUADS;
            for v in p.iter().take((CHUNK_QUADS + 1) * (CHUNK_QUADS + 1)) {
                let (x, y) = ((v[0] / map.cell_size).round() as usize, (v[2] / map.cell_size).round() as usize);
                assert!(x >= x0 && y >= y0 && x <= x0 + CHUNK_QUADS && y <= y0 + CHUNK_QUADS, "{c:?}: vertex {v:?}");
                worst = worst.max((v[1] - map.get(x, y)).abs());
            }
        }
        worst
    }

    /// Updates until the view has no background work left (at most 10 s).
    fn settle(app: &mut App) {
        let t = std::time::Instant::now();
        while app.world().resource::<ViewWork>().meshes {
            assert!(t.elapsed().as_secs() < 10, "the background mesh build never finished");
            std::thread::sleep(std::time::Duration::from_millis(2));
            app.update();
        }
    }

    /// A change of the whole map (a simulation's update: 81 chunks, more than [`FRAME_CHUNKS`]) is
    /// built on a background task and swapped in when done; a stroke's chunks are rebuilt in the
    /// frame.
    #[test]
    fn many_chunks_are_built_in_the_background_a_strokes_in_the_frame() {
        let mut app = app(577);
        assert_eq!(mesh_lag(&mut app), 0.0);
        {
            let mut t = app.world_mut().resource_mut::<EditorTerrain>();
            let next = Heightmap { data: t.map().data.iter().map(|v| v + 1.0).collect(), ..t.map().clone() };
            assert!(t.show_heights(&next));
            assert_eq!(t.dirty.len(), 81);
        }
        app.update();
        assert!(app.world().resource::<ViewWork>().meshes, "81 chunks were not left to a background task");
        settle(&mut app);
        assert_eq!(mesh_lag(&mut app), 0.0, "the background build's meshes are not the map's");
        // A stroke: its chunk is rebuilt in the frame.
        {
            let mut t = app.world_mut().resource_mut::<EditorTerrain>();
            let mut next = t.map().clone();
            next.set(100, 100, 50.0);
            assert!(t.show_heights(&next));
            assert!(t.dirty.len() <= FRAME_CHUNKS);
        }
        app.update();
        assert!(!app.world().resource::<ViewWork>().meshes);
        assert_eq!(mesh_lag(&mut app), 0.0, "the stroke's chunk was not rebuilt in the frame");
    }

    /// A finished build larger than [`FRAME_UPLOAD_BYTES`] goes into the view over several frames,
    /// none taking much more than the budget, and ends with every chunk showing the map.
    #[test]
    fn a_large_update_goes_in_over_several_frames_within_the_budget() {
        let mut app = app(1537);
        let total: usize = {
            let t = app.world().resource::<EditorTerrain>();
            let (nx, ny) = t.chunk_counts();
            let keys: Vec<_> = (0..ny).flat_map(|cy| (0..nx).map(move |cx| (cx, cy, 1))).collect();
            chunk_meshes(t.map(), &keys).iter().map(upload_bytes).sum()
        };
        assert!(total > 2 * FRAME_UPLOAD_BYTES, "the test's map is too small: {total} bytes");
        {
            let mut t = app.world_mut().resource_mut::<EditorTerrain>();
            let next = Heightmap { data: t.map().data.iter().map(|v| v + 3.0).collect(), ..t.map().clone() };
            assert!(t.show_heights(&next));
        }
        let before = app.world().resource::<ViewWork>().meshes_shown;
        let t = std::time::Instant::now();
        let mut lags = Vec::new();
        app.update();
        while app.world().resource::<ViewWork>().meshes {
            assert!(t.elapsed().as_secs() < 20, "the background mesh build never finished");
            std::thread::sleep(std::time::Duration::from_millis(2));
            app.update();
            lags.push(mesh_lag(&mut app));
        }
        let frames = app.world().resource::<ViewWork>().meshes_shown - before;
        assert!(frames as usize >= total / FRAME_UPLOAD_BYTES, "{total} bytes went in over {frames} frames");
        assert!(frames as usize <= total / FRAME_UPLOAD_BYTES + 2, "{total} bytes went in over {frames} frames");
        // Mid-way some chunks showed the new map and others the old one.
        assert!(lags.iter().any(|l| (l - 3.0).abs() < 1e-3), "no frame showed the update part-way: {lags:?}");
        assert_eq!(mesh_lag(&mut app), 0.0, "the view does not show the map once the update is in");
    }

    /// A stroke while a background build runs: the stroke's chunk shows the stroke's map, and the
    /// build (of the map before the stroke), when done, does not put its older mesh back.
    #[test]
    fn a_background_build_never_overwrites_a_newer_chunk() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let mut app = app(193);
        // The map before the stroke, and a background build of it that waits for the test.
        let before = {
            let mut t = app.world_mut().resource_mut::<EditorTerrain>();
            let next = Heightmap { data: t.map().data.iter().map(|v| v + 2.0).collect(), ..t.map().clone() };
            assert!(t.show_heights(&next));
            t.dirty.clear();
            next
        };
        let go = Arc::new(AtomicBool::new(false));
        let gate = go.clone();
        let keys: Vec<(usize, usize, usize)> = (0..3).flat_map(|cy| (0..3).map(move |cx| (cx, cy, 1))).collect();
        let task = Background::spawn("held-back chunk meshes", move || {
            while !gate.load(Ordering::Acquire) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            keys.iter().copied().zip(chunk_meshes(&before, &keys)).collect::<BuiltChunks>()
        });
        {
            let mut build = app.world_mut().resource_mut::<ChunkBuild>();
            build.task = Some((build.layout, task));
        }
        // The stroke on chunk (1, 1), in the frame.
        {
            let mut t = app.world_mut().resource_mut::<EditorTerrain>();
            let mut next = t.map().clone();
            next.set(100, 100, 50.0);
            assert!(t.show_heights(&next));
            assert_eq!(t.dirty.iter().copied().collect::<Vec<_>>(), vec![(1, 1)]);
        }
        app.update();
        assert!(app.world().resource::<ViewWork>().meshes, "the gated build ended early");
        go.store(true, Ordering::Release);
        settle(&mut app);
        assert_eq!(mesh_lag(&mut app), 0.0, "the background build put an older mesh back");
    }

    /// The copy of the map the background builds share is made once per change of the terrain
    /// and is the map as it is; a change makes a new one.
    #[test]
    fn the_shared_copy_of_the_map_follows_every_change() {
        let mut app = app(65);
        let take = |app: &mut App| {
            app.world_mut().resource_scope(|world, mut snap: Mut<MapSnapshot>| {
                let t = world.resource_ref::<EditorTerrain>();
                snap.of(&t, t.last_changed())
            })
        };
        let (a, b) = (take(&mut app), take(&mut app));
        assert!(std::sync::Arc::ptr_eq(&a, &b), "no change, yet a second copy");
        {
            let mut t = app.world_mut().resource_mut::<EditorTerrain>();
            let mut next = t.map().clone();
            next.set(3, 4, 9.0);
            assert!(t.show_heights(&next));
        }
        app.update();
        let c = take(&mut app);
        assert!(!std::sync::Arc::ptr_eq(&a, &c));
        assert_eq!(c.get(3, 4), 9.0);
        assert_eq!(c.data, app.world().resource::<EditorTerrain>().map().data);
    }
}
