//! Editing costs on a 2048² map (issue #4): one brush dab of radius 32 nodes (goal ≤ 4 ms), the
//! undo bookkeeping around it, and cursor raycasts.
//!
//! * `dab_2048_r32/*` — raise, smooth (9×9 box mean from a window copy) and flatten dabs, and
//!   `undo_touch_dab_commit` (tile snapshot + dab + after-copy, what one recorded dab costs).
//!   `whole_map_clone` is the naive alternative to tile snapshots, copying the map per edit: the
//!   reference the dab figures are compared with (no peer crate has brushes).
//! * `dab_2048_r32/raise_dab_and_remesh` — a dab plus rebuilding the geometry of the mesh chunks
//!   it touched: the CPU work per dab in the editor (goal ≤ 4 ms).
//! * `raycast_2048/*` — a camera ray hitting the map, and a grazing ray crossing all of it.
//!
//! Run: `cargo bench --no-default-features --bench brush`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use talus::core::Heightmap;
use talus::core::brush::{BrushKind, BrushParams, dab, dab_bounds};
use talus::core::generate::fbm::FbmParams;
use talus::core::generate::{Base, GenerateParams, generate, landscape_fbm};
use talus::core::raycast::{Ray, raycast};
use talus::core::undo::UndoStack;
use talus::editor::mesh::chunk_geometry_lod;

fn map() -> Heightmap {
    // 1 m cells (the brush radii below are in metres), the default fBm's node-space look of
    // version 1 (0.006 cycles per node).
    let base = Base::Fbm(FbmParams { wavelength_m: 1.0 / 0.006, ..landscape_fbm() });
    generate(&GenerateParams { width: 2048, height: 2048, cell_size: 1.0, base, ..GenerateParams::default() }).unwrap()
}

fn params(kind: BrushKind) -> BrushParams {
    // cell_size 1 m: radius 32 m = 32 nodes.
    BrushParams { kind, radius: 32.0, strength: 5.0, flatten_height: Some(50.0), ..BrushParams::default() }
}

fn dabs(c: &mut Criterion) {
    let base = map();
    let mut g = c.benchmark_group("dab_2048_r32");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for (name, kind) in [("raise", BrushKind::Raise), ("smooth", BrushKind::Smooth), ("flatten", BrushKind::Flatten)] {
        let p = params(kind);
        let mut hm = base.clone();
        let mut i = 0u32;
        g.bench_function(name, |b| {
            b.iter(|| {
                i = i.wrapping_add(1);
                let c = [1000.0 + (i % 64) as f32 * 0.37, 1020.0 + (i % 32) as f32 * 0.53];
                black_box(dab(&mut hm, c, &p, 1.0 / 60.0))
            })
        });
    }
    let p = params(BrushKind::Raise);
    let mut hm = base.clone();
    let mut undo = UndoStack::new(64, 256 << 20);
    let mut i = 0u32;
    g.bench_function("undo_touch_dab_commit", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let c = [500.0 + (i % 997) as f32 * 1.1, 1020.0];
            undo.begin(&hm, "dab");
            undo.touch(&hm, dab_bounds(&hm, c, &p));
            dab(&mut hm, c, &p, 1.0 / 60.0);
            black_box(undo.commit(&hm))
        })
    });
    g.bench_function("whole_map_clone", |b| b.iter(|| black_box(base.clone())));
    // What one dab costs the editor on the CPU: the dab, then the geometry of every 64-quad chunk
    // its rectangle (grown by one node for the normals) touches — 4 chunks for a radius-32 dab
    // away from chunk borders, up to 9 across them — at full detail with the skirts the editor
    // hangs under every chunk. The GPU upload is not included.
    let mut hm = base.clone();
    let mut i = 0u32;
    g.bench_function("raise_dab_and_remesh", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let c = [1000.0 + (i % 64) as f32 * 0.37, 1020.0 + (i % 32) as f32 * 0.53];
            let r = dab(&mut hm, c, &p, 1.0 / 60.0).grow(1, hm.width, hm.height);
            let (q, last) = (64, |n: usize| (n - 2) / 64);
            let mut vertices = 0;
            for cy in r.y0.saturating_sub(1) / q..=((r.y1 - 1) / q).min(last(hm.height)) {
                for cx in r.x0.saturating_sub(1) / q..=((r.x1 - 1) / q).min(last(hm.width)) {
                    vertices += chunk_geometry_lod(&hm, cx, cy, q, 1, true).positions.len();
                }
            }
            black_box(vertices)
        })
    });
    g.finish();
}

fn rays(c: &mut Criterion) {
    let hm = map();
    let mut g = c.benchmark_group("raycast_2048");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    let camera = Ray::through([-200.0, 400.0, -150.0], [1300.0, hm.sample(1300.0, 900.0), 900.0]);
    assert!(raycast(&hm, &camera, f32::INFINITY).is_some());
    g.bench_function("camera_ray", |b| b.iter(|| black_box(raycast(&hm, black_box(&camera), f32::INFINITY))));
    // Skims just above the highest point all the way across the diagonal: every cell on the track
    // (about 4000) is visited and culled by its height range.
    let top = hm.stats().max + 0.01;
    let grazing = Ray { origin: [0.0, top, 0.0], dir: [1.0, 0.0, 0.93] };
    assert!(raycast(&hm, &grazing, f32::INFINITY).is_none());
    g.bench_function("grazing_miss_full_diagonal", |b| {
        b.iter(|| black_box(raycast(&hm, black_box(&grazing), f32::INFINITY)))
    });
    g.finish();
}

criterion_group!(benches, dabs, rays);
criterion_main!(benches);
