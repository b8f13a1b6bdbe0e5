//! Particle erosion benchmarks (SPEC §2a/§2b).
//!
//! * `seed000_*` — seed 000's performance tables (its C++ ran single-threaded on a 100×100 map
//!   with its defaults): particle count, erosion radius (10k particles), max lifetime and map
//!   size. Our defaults are the seed's; the terrain is a fixed fBm-like sum of sines, ~12 m of
//!   relief with features ~30 nodes across (the seed used a fresh random blockout per run).
//! * `m1_1024` — 1,048,576 droplets on 1024², radius 3, lifetime 30 (goal ≤ 0.5 s on 2 cores),
//!   side by side with `terrain-generator` 0.3.1 and `symbios-ground` 0.4.1 with the closest
//!   parameters (terrain-generator's defaults: inertia 0.05, capacity 4, min capacity 0.01,
//!   erode/deposit 0.3, evaporation 0.01, gravity 4, radius 3, lifetime 30, one droplet per
//!   cell). terrain-generator only erodes inside its own pipeline, so it is timed as
//!   "noise + erosion" and "noise only" and the erosion time is the difference.
//! * `snowball_512` — seed 002's 35k and 100k snowballs on a 512² island.
//!
//! After criterion's own report, a summary table prints the medians next to the seed's figures.
//! Run: `cargo bench --no-default-features --bench droplet`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use talus::core::Heightmap;
use talus::core::erosion::MapSize;
use talus::core::erosion::droplet::{DropletJob, DropletParams};
use talus::core::erosion::snowball::{SnowballJob, SnowballParams};
use talus::core::erosion::{JobInputs, Simulation};

/// Median wall time of every benchmark, by name, for the summary.
static TIMES: Mutex<BTreeMap<String, Vec<Duration>>> = Mutex::new(BTreeMap::new());

fn record(name: &str, d: Duration) {
    TIMES.lock().unwrap().entry(name.to_string()).or_default().push(d);
}

fn median(name: &str) -> Option<f64> {
    let t = TIMES.lock().unwrap();
    let mut v: Vec<f64> = t.get(name)?.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Times `iters` runs of `work(setup())`, excluding the setup, and records the mean per run.
fn timed<S, W: FnMut(S)>(name: &str, iters: u64, mut setup: impl FnMut() -> S, mut work: W) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let input = setup();
        let t = Instant::now();
        work(input);
        total += t.elapsed();
    }
    record(name, total / iters.max(1) as u32);
    total
}

/// fBm-like terrain: 5 octaves of rotated sine products, `relief` metres peak to peak (about),
/// the largest features `wavelength` nodes across.
fn terrain(n: usize, wavelength: f32, relief: f32) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let (x, y) = (x as f32, y as f32);
        let mut f = std::f32::consts::TAU / wavelength;
        let (mut a, mut v) = (0.5f32, 0.0f32);
        for o in 0..5 {
            let r = 0.6 * o as f32;
            let (u, w) = (x * r.cos() - y * r.sin(), x * r.sin() + y * r.cos());
            v += a * (u * f + o as f32).sin() * (w * f * 1.13 + 2.0 * o as f32).cos();
            a *= 0.5;
            f *= 2.0;
        }
        relief * (v + 0.5)
    })
    .unwrap()
}

/// `n` droplets on a `size²` map of 1 m cells with seed 000's grid defaults (radius 5 nodes, 300
/// steps, smallest slope 0.01 m per node: version 1's defaults, which the world-unit defaults are
/// on the default island's 2 m cells).
fn spec(n: u64, size: usize) -> DropletParams {
    DropletParams {
        droplets_per_km2: MapSize::new(size, size, 1.0).per_km2(n),
        radius_m: 5.0,
        max_path_m: 300.0,
        min_slope_tan: 0.01,
        // The seed's rates are per step of one node.
        path_step_m: 1.0,
        ..Default::default()
    }
}

fn run_droplets(hm: Heightmap, p: &DropletParams) -> Heightmap {
    let mut j = DropletJob::new(hm, p.clone(), JobInputs { seed: 1, ..Default::default() }).unwrap();
    while !j.is_done() {
        j.step();
    }
    j.finish();
    j.heightmap().clone()
}

fn bench_droplets(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    hm: &Heightmap,
    p: DropletParams,
) {
    let full = format!("/{name}");
    g.bench_function(name, |b| {
        b.iter_custom(|iters| timed(&full, iters, || hm.clone(), |h| drop(black_box(run_droplets(h, &p)))))
    });
}

fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
    secs: u64,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(secs));
    g
}

fn seed000(c: &mut Criterion) {
    let small = terrain(100, 30.0, 12.0);
    let mut g = group(c, "seed000_particles", 3);
    for n in [1_000u64, 5_000, 10_000, 50_000, 100_000] {
        bench_droplets(&mut g, &format!("particles_{n}"), &small, spec(n, 100));
    }
    bench_droplets(&mut g, "particles_100000_serial", &small, DropletParams { parallel: false, ..spec(100_000, 100) });
    g.finish();

    let mut g = group(c, "seed000_radius", 3);
    for r in [5.0f32, 10.0, 15.0, 20.0] {
        bench_droplets(&mut g, &format!("radius_{r}"), &small, DropletParams { radius_m: r, ..spec(10_000, 100) });
    }
    g.finish();

    let mut g = group(c, "seed000_lifetime", 3);
    for l in [100u32, 2_000, 6_000] {
        bench_droplets(
            &mut g,
            &format!("lifetime_{l}"),
            &small,
            DropletParams { max_path_m: l as f32, ..spec(5_000, 100) },
        );
    }
    g.finish();

    let mut g = group(c, "seed000_mapsize", 3);
    bench_droplets(&mut g, "map_100", &small, spec(5_000, 100));
    let big = terrain(1000, 30.0, 12.0);
    bench_droplets(&mut g, "map_1000", &big, spec(5_000, 1000));
    g.finish();
}

/// terrain-generator's erosion defaults, mirrored in our parameters (on 1 m cells, metres are
/// nodes): 2²⁰ droplets on 1024².
fn tg_like() -> DropletParams {
    DropletParams {
        droplets_per_km2: MapSize::new(1024, 1024, 1.0).per_km2(1 << 20),
        inertia: 0.05,
        capacity: 4.0,
        min_slope_tan: 0.01,
        erosion: 0.3,
        deposition: 0.3,
        evaporation: 0.01,
        gravity: 4.0,
        radius_m: 3.0,
        max_path_m: 30.0,
        // terrain-generator's rates are per step of one node.
        path_step_m: 1.0,
        batch: 1 << 17,
        ..Default::default()
    }
}

fn m1_1024(c: &mut Criterion) {
    // Heights in [0, 1] like the peers expect.
    let hm = terrain(1024, 200.0, 1.0);
    let mut g = group(c, "m1_1024", 8);
    bench_droplets(&mut g, "talus_parallel", &hm, tg_like());
    bench_droplets(&mut g, "talus_serial", &hm, DropletParams { parallel: false, ..tg_like() });

    g.bench_function("peer_symbios_ground", |b| {
        b.iter_custom(|iters| {
            timed(
                "peer_symbios_ground",
                iters,
                || {
                    let mut s = symbios_ground::HeightMap::new(1024, 1024, 1.0);
                    s.data_mut().copy_from_slice(&hm.data);
                    s
                },
                |mut s| {
                    let mut e = symbios_ground::HydraulicErosion::new(1);
                    e.num_drops = 1 << 20;
                    e.max_steps = 30;
                    e.inertia = 0.05;
                    e.erosion_rate = 0.3;
                    e.deposition_rate = 0.3;
                    e.evaporation_rate = 0.01;
                    e.capacity_factor = 4.0;
                    e.min_slope = 0.01;
                    e.erode(&mut s);
                    black_box(s);
                },
            )
        })
    });

    let tg = |erosion: bool| {
        let b = terrain_generator::Terrain::builder().size(1024, 1024).seed(1).no_island().no_breach().no_rivers();
        let b = if erosion {
            b.erosion(terrain_generator::ErosionParams { droplets: Some(1 << 20), ..Default::default() })
        } else {
            b.no_erosion()
        };
        black_box(b.generate());
    };
    g.bench_function("peer_terrain_generator_noise_and_erosion", |b| {
        b.iter_custom(|iters| timed("peer_terrain_generator_noise_and_erosion", iters, || (), |_| tg(true)))
    });
    g.bench_function("peer_terrain_generator_noise_only", |b| {
        b.iter_custom(|iters| timed("peer_terrain_generator_noise_only", iters, || (), |_| tg(false)))
    });
    g.finish();
}

fn island(n: usize) -> Heightmap {
    let bumps = terrain(n, n as f32 / 6.0, 1.0);
    Heightmap::from_fn(n, n, 0.1, |x, y| {
        let c = n as f32 / 2.0;
        let d = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt() / (0.9 * c);
        (30.0 * (1.0 - d).max(0.0).powf(1.6) * (0.6 + 0.8 * bumps.get(x, y))).max(0.0)
    })
    .unwrap()
}

fn snowball_512(c: &mut Criterion) {
    let hm = island(512);
    let mut g = group(c, "snowball_512", 4);
    for (name, n, parallel) in [("35k", 35_000u64, true), ("100k", 100_000, true), ("100k_serial", 100_000, false)] {
        // Version 1's grid defaults on this map's cells (metres are nodes on 1 m cells).
        let p = SnowballParams {
            snowballs_per_km2: MapSize::of(&hm).per_km2(n),
            speed_m: 0.15 * hm.cell_size,
            offset_radius_m: 0.8 * hm.cell_size,
            blur_sigma_m: std::f32::consts::FRAC_1_SQRT_2 * hm.cell_size,
            parallel,
            ..Default::default()
        };
        let full = format!("snowball_{name}");
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                timed(
                    &full,
                    iters,
                    || hm.clone(),
                    |h| {
                        let mut j =
                            SnowballJob::new(h, p.clone(), JobInputs { seed: 1, ..Default::default() }).unwrap();
                        while !j.is_done() {
                            j.step();
                        }
                        j.finish();
                        black_box(j.heightmap().data[0]);
                    },
                )
            })
        });
    }
    g.finish();
}

fn summary() {
    let row = |label: &str, ours: Option<f64>, seed: Option<f64>| match (ours, seed) {
        (Some(o), Some(s)) => println!("  {label:<28} {o:>10.2} ms   seed {s:>8.2} ms   speed-up ×{:.1}", s / o),
        (Some(o), None) => println!("  {label:<28} {o:>10.2} ms"),
        _ => println!("  {label:<28}   (not run)"),
    };
    println!("\n=== droplet erosion vs seed 000 (C++, 1 thread; ours on this machine, median) ===");
    for (n, s) in [(1_000, 17.37), (5_000, 78.62), (10_000, 156.45), (50_000, 791.43), (100_000, 1774.60)] {
        row(&format!("particles {n}"), median(&format!("/particles_{n}")), Some(s));
    }
    row("particles 100000 (serial)", median("/particles_100000_serial"), Some(1774.60));
    for (r, s) in [(5.0, 176.62), (10.0, 240.02), (15.0, 336.76), (20.0, 470.00)] {
        row(&format!("radius {r} (10k particles)"), median(&format!("/radius_{r}")), Some(s));
    }
    for (l, s) in [(100, 36.04), (2_000, 417.68), (6_000, 448.52)] {
        row(&format!("max lifetime {l}"), median(&format!("/lifetime_{l}")), Some(s));
    }
    row("map 100×100", median("/map_100"), Some(79.61));
    row("map 1000×1000", median("/map_1000"), Some(130.20));

    println!("\n=== 1,048,576 droplets, 1024², radius 3, lifetime 30 (goal ≤ 500 ms, ≥ 3× terrain-generator) ===");
    let ours = median("/talus_parallel");
    row("talus (parallel tiles)", ours, None);
    row("talus (serial)", median("/talus_serial"), None);
    let sym = median("peer_symbios_ground");
    row("symbios-ground 0.4.1", sym, None);
    let tg_all = median("peer_terrain_generator_noise_and_erosion");
    let tg_noise = median("peer_terrain_generator_noise_only");
    row("terrain-generator (all)", tg_all, None);
    row("terrain-generator (noise)", tg_noise, None);
    let tg = tg_all.zip(tg_noise).map(|(a, b)| a - b);
    row("terrain-generator (erosion)", tg, None);
    if let Some(o) = ours {
        if let Some(t) = tg {
            println!("  ratio terrain-generator / talus: ×{:.2}", t / o);
        }
        if let Some(s) = sym {
            println!("  ratio symbios-ground / talus:    ×{:.2}", s / o);
        }
    }
    println!("\n=== snowballs on a 512² island (seed 002: 35k–100k in < 500 ms on one thread) ===");
    row("35,000 (parallel)", median("snowball_35k"), None);
    row("100,000 (parallel)", median("snowball_100k"), None);
    row("100,000 (serial)", median("snowball_100k_serial"), None);
}

criterion_group!(benches, seed000, m1_1024, snowball_512);

/// CPU time of this process so far (user + system, from `/proc/self/stat`; 0 elsewhere), seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().skip(11).take(2).filter_map(|v| v.parse().ok()).collect();
    f.iter().sum::<f64>() / 100.0
}

/// One plain, uninstrumented run for a profiler (`perf record`) instead of the criterion suite:
/// `DROPLET_PROFILE=seed100k|seed100k_serial|m1|m1_serial|m1_256|tg|tg_noise|symbios target/release/deps/droplet-…`.
/// Prints the wall time and, for ours, steps per droplet and nanoseconds (wall and CPU) per step.
fn profile(which: &str) {
    let t = Instant::now();
    match which {
        "symbios" => {
            let hm = terrain(1024, 200.0, 1.0);
            let t = Instant::now();
            let mut s = symbios_ground::HeightMap::new(1024, 1024, 1.0);
            s.data_mut().copy_from_slice(&hm.data);
            let mut e = symbios_ground::HydraulicErosion::new(1);
            e.num_drops = 1 << 20;
            e.max_steps = 30;
            e.erode(&mut s);
            println!("{which}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        "tg" | "tg_noise" => {
            let b = terrain_generator::Terrain::builder().size(1024, 1024).seed(1).no_island().no_breach().no_rivers();
            let b = if which == "tg" {
                b.erosion(terrain_generator::ErosionParams { droplets: Some(1 << 20), ..Default::default() })
            } else {
                b.no_erosion()
            };
            black_box(b.generate());
            println!("{which}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        _ => {
            let (hm, p) = match which {
                "m1" => (terrain(1024, 200.0, 1.0), tg_like()),
                "m1_serial" => (terrain(1024, 200.0, 1.0), DropletParams { parallel: false, ..tg_like() }),
                "m1_256" => (
                    terrain(256, 50.0, 1.0),
                    DropletParams {
                        droplets_per_km2: MapSize::new(256, 256, 1.0).per_km2(1 << 16),
                        batch: 1 << 13,
                        ..tg_like()
                    },
                ),
                "seed100k_serial" => {
                    (terrain(100, 30.0, 12.0), DropletParams { parallel: false, ..spec(100_000, 100) })
                }
                _ => (terrain(100, 30.0, 12.0), spec(100_000, 100)),
            };
            let (t, cpu) = (Instant::now(), cpu_seconds());
            let mut j = DropletJob::new(hm, p.clone(), JobInputs { seed: 1, ..Default::default() }).unwrap();
            while !j.is_done() {
                j.step();
            }
            let steps: f64 = j.fields().flow.unwrap().iter().map(|&v| v as f64).sum();
            let (el, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
            println!(
                "{which}: {:.1} ms, {:.1} steps/droplet, {:.1} ns/step; CPU {:.0} ms, {:.1} CPU-ns/step",
                el * 1e3,
                steps / j.progress().total as f64,
                el * 1e9 / steps,
                cpu * 1e3,
                cpu * 1e9 / steps
            );
        }
    }
}

fn main() {
    if let Ok(which) = std::env::var("DROPLET_PROFILE") {
        profile(&which);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
