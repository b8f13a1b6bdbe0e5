//! Stream-power model: one time step on 1024² (goal ≤ 60 ms on the 2-core build machine).
//!
//! Reference figures for one step of the same size on that machine (they cannot run here):
//! fastscapelib ≈ 170 ms, landlab ≈ 410 ms. The peer measured side by side is terrain-generator
//! 0.3.1, whose hydrology stage (priority-flood fill + D8 routing + flow accumulation) is the part
//! of its pipeline closest to our routing; it only runs inside its builder, so we time the builder
//! with and without rivers and the difference is its hydrology.
//!
//! The build machine is shared, so wall times swing with whatever else runs; the
//! "CPU time" entries time the same step in CPU seconds of the whole process (all threads,
//! from `/proc/self/stat`, 10 ms ticks over many steps), which other processes do not inflate.
//! On an idle machine the wall time of a step on 2 threads is below the 1-thread CPU time by
//! the parallel share of the work (receivers, stack walk, area, incision, transport, diffusion).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use talus::core::erosion::stream_power::{FlowMethod, StreamPowerJob, StreamPowerParams, route_flow};
use talus::core::erosion::{Boundary, JobInputs, Simulation};
use talus::core::heightmap::Heightmap;
use talus::core::rng::{hash2, unit_f32};

const SIDE: usize = 1024;

/// Six octaves of bilinear value noise on a gentle dome, metres; cell 10 m.
fn terrain(side: usize) -> Heightmap {
    let lattice = |x: i64, y: i64, o: u64| unit_f32(hash2(x, y, 0x5eed ^ o));
    Heightmap::from_fn(side, side, 10.0, |x, y| {
        let (mut h, mut amp, mut freq) = (0.0f32, 400.0f32, 4.0 / side as f32);
        for o in 0..6u64 {
            let (fx, fy) = (x as f32 * freq, y as f32 * freq);
            let (x0, y0) = (fx.floor(), fy.floor());
            let (u, v) = (fx - x0, fy - y0);
            let (xi, yi) = (x0 as i64, y0 as i64);
            let a = lattice(xi, yi, o) * (1.0 - u) + lattice(xi + 1, yi, o) * u;
            let b = lattice(xi, yi + 1, o) * (1.0 - u) + lattice(xi + 1, yi + 1, o) * u;
            h += amp * (a * (1.0 - v) + b * v);
            amp *= 0.5;
            freq *= 2.0;
        }
        let (cx, cy) = (x as f32 / side as f32 - 0.5, y as f32 / side as f32 - 0.5);
        h + 600.0 * (1.0 - 2.0 * (cx * cx + cy * cy))
    })
    .expect("valid size")
}

fn job(hm: Heightmap, diffusion: f32) -> StreamPowerJob {
    job_with(hm, diffusion, FlowMethod::default())
}

fn job_with(hm: Heightmap, diffusion: f32, routing: FlowMethod) -> StreamPowerJob {
    let p = StreamPowerParams { steps: u64::MAX, diffusion, routing, ..Default::default() };
    StreamPowerJob::new(hm, p, JobInputs { boundary: Boundary::default(), ..Default::default() }).expect("valid job")
}

/// CPU time of this process so far (all threads), seconds, from `/proc/self/stat` (Linux only;
/// 0 elsewhere). Unlike wall time it does not grow when other processes compete for the cores.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which ends with ')'): utime and stime are the 12th and
    // 13th, in clock ticks (100 per second on Linux).
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |k: usize| f.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn bench(c: &mut Criterion) {
    let raw = terrain(SIDE);
    // The running state: a few steps in, pits of the raw noise resolved and filled.
    let mut warm = job(raw.clone(), 0.0);
    for _ in 0..5 {
        warm.step();
    }
    let evolved = warm.heightmap().clone();
    let pits = route_flow(&evolved, Boundary::default()).pits;
    let raw_pits = route_flow(&raw, Boundary::default()).pits;
    println!(
        "stream_power 1024²: {raw_pits} pits in the raw noise, {pits} after 5 steps. \
         Reference one-step times on this machine: fastscapelib ≈ 170 ms, landlab ≈ 410 ms; goal ≤ 60 ms."
    );

    let mut g = c.benchmark_group("stream_power_1024");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(6));

    let mut j = job(evolved.clone(), 0.0);
    g.bench_function("talus step (evolved terrain)", |b| b.iter(|| j.step()));
    // D8 drainage area, the default before MFD: what MFD's serial order and area cost.
    let mut j = job_with(evolved.clone(), 0.0, FlowMethod::D8);
    g.bench_function("talus step, D8 area (evolved terrain)", |b| b.iter(|| j.step()));
    // The same step timed in CPU seconds of the whole process (all threads): immune to other
    // processes competing for the cores, so comparable between runs on a busy machine.
    for (routing, label) in [(FlowMethod::Mfd, ""), (FlowMethod::D8, ", D8 area")] {
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut j = job_with(evolved.clone(), 0.0, routing);
            g.bench_function(format!("talus step{label} (evolved terrain), CPU time, {threads} thread(s)"), |b| {
                b.iter_custom(|iters| {
                    pool.install(|| {
                        let t0 = cpu_seconds();
                        for _ in 0..iters {
                            j.step();
                        }
                        Duration::from_secs_f64(cpu_seconds() - t0)
                    })
                })
            });
        }
    }
    let mut j = job(evolved.clone(), 0.01);
    g.bench_function("talus step + diffusion (evolved terrain)", |b| b.iter(|| j.step()));
    g.bench_function("talus routing only (evolved terrain)", |b| {
        b.iter(|| black_box(route_flow(black_box(&evolved), Boundary::default())))
    });
    g.bench_function("talus routing only (raw noise, many pits)", |b| {
        b.iter(|| black_box(route_flow(black_box(&raw), Boundary::default())))
    });
    g.bench_function("talus first step (raw noise, many pits)", |b| {
        b.iter_batched(|| job(raw.clone(), 0.0), |mut j| j.step(), criterion::BatchSize::LargeInput)
    });
    g.bench_function("peer terrain-generator: base only (no rivers)", |b| {
        b.iter(|| {
            black_box(
                terrain_generator::Terrain::builder()
                    .size(SIDE, SIDE)
                    .seed(7)
                    .no_erosion()
                    .no_breach()
                    .no_rivers()
                    .generate(),
            )
        })
    });
    g.bench_function("peer terrain-generator: base + hydrology", |b| {
        b.iter(|| {
            black_box(
                terrain_generator::Terrain::builder()
                    .size(SIDE, SIDE)
                    .seed(7)
                    .no_erosion()
                    .no_breach()
                    .rivers(terrain_generator::RiverParams::default())
                    .generate(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
