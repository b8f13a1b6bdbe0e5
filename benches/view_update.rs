//! What a simulation's update costs the editor's CPU (issue #35, large previews): each update
//! replaces the whole map, so every mesh chunk is rebuilt and the material's data texels are
//! recomputed. On the default island at 2049² (2 m cells):
//!
//! * `view_update_2049/chunks_one_thread` and `chunks_every_core`: the geometry of all 1 024
//!   chunks of 64 quads (every node, with skirts), as `app::terrain_mesh` builds them, on one
//!   thread and on rayon's pool;
//! * `view_update_2049/surface_data`: the terrain material's per-node data (net erosion, flow,
//!   distance to water, water depth; `editor::look::material::surface_data`);
//! * `view_update_2049/frame_copy`: what the frame itself pays for an update now that both of the
//!   above run on threads of their own (`app::background`): one copy of the map, which both share
//!   (`app::state::MapSnapshot`; the simulation's maps the texels read are shared too,
//!   `app::fields::Field`); `frame_copies_first_version`: a copy of the map for each and of three
//!   simulation maps for the texels, as the first version of that change did.
//!
//! Run: `cargo bench --no-default-features --bench view_update`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use rayon::prelude::*;
use talus::core::generate::{demo_params, generate};
use talus::editor::look::material::{SurfaceInputs, surface_data};
use talus::editor::mesh::chunk_geometry_lod;

/// The editor's chunk size in quads (`app::state::CHUNK_QUADS`).
const CHUNK_QUADS: usize = 64;

fn update(c: &mut Criterion) {
    let map = generate(&demo_params(2049, 1)).expect("the default island");
    // The editor's chunk grid (`app::state::chunk_counts`): 32 × 32 chunks of 64 quads at 2049².
    let n = (map.width - 1).div_ceil(CHUNK_QUADS);
    let chunks: Vec<(usize, usize)> = (0..n).flat_map(|cy| (0..n).map(move |cx| (cx, cy))).collect();
    let geometry = |&(cx, cy): &(usize, usize)| chunk_geometry_lod(&map, cx, cy, CHUNK_QUADS, 1, true).positions.len();
    let mut g = c.benchmark_group("view_update_2049");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("chunks_one_thread", |b| b.iter(|| chunks.iter().map(geometry).sum::<usize>()));
    g.bench_function("chunks_every_core", |b| b.iter(|| chunks.par_iter().map(geometry).sum::<usize>()));
    // A simulation's maps: flow growing toward the sea, erosion growing with height.
    let flow: Vec<f32> = map.data.iter().map(|&h| (100.0 - h).max(0.0)).collect();
    let eroded: Vec<f32> = map.data.iter().map(|&h| (h * 0.01).max(0.0)).collect();
    let deposited = vec![0.0f32; map.data.len()];
    g.bench_function("surface_data", |b| {
        b.iter(|| {
            let inputs =
                SurfaceInputs { water: None, flow: Some(&flow), eroded: Some(&eroded), deposited: Some(&deposited) };
            black_box(surface_data(&map, 0.0, 0.05, inputs)).len()
        })
    });
    // The frame's share: one copy of the map for both background builds, made while the previous
    // update's copy is still held (as `app::state::MapSnapshot` holds it until it is replaced).
    g.bench_function("frame_copy", |b| {
        let mut held = map.clone();
        b.iter(|| {
            let next = black_box(map.clone());
            std::mem::replace(&mut held, next).data.len()
        })
    });
    g.bench_function("frame_copies_first_version", |b| {
        b.iter(|| {
            let for_chunks = black_box(map.clone());
            let for_texels = black_box((map.clone(), flow.clone(), eroded.clone(), deposited.clone()));
            for_chunks.data.len() + for_texels.0.data.len()
        })
    });
    g.finish();
}

criterion_group!(benches, update);
criterion_main!(benches);
