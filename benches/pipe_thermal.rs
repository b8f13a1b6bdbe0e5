//! Pipe-model and thermal erosion on a 1024² map, with symbios-ground 0.4.1's thermal erosion
//! side by side (its hydraulic erosion is droplet-based, so it has no pipe model to compare;
//! terrain-generator 0.3.1 has neither a pipe model nor thermal erosion).
//!
//! `cargo bench --no-default-features --bench pipe_thermal`. Besides criterion's report, the
//! bench prints medians measured back to back in one process and their ratios.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use talus::core::erosion::pipe::{Advection, PipeJob, PipeParams};
use talus::core::erosion::thermal::{ThermalKernel, ThermalParams};
use talus::core::erosion::{Boundary, ErosionMaps, JobInputs, Simulation};
use talus::core::heightmap::Heightmap;
use talus::core::rng::{hash2, unit_f32};

const N: usize = 1024;

/// Rolling hills with per-node noise: every node has some slope, so nothing is skipped.
fn terrain() -> Heightmap {
    Heightmap::from_fn(N, N, 1.0, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        60.0 + 25.0 * (fx * 0.013).sin() * (fy * 0.009).cos()
            + 6.0 * (fx * 0.07 + fy * 0.05).sin()
            + 2.0 * unit_f32(hash2(x as i64, y as i64, 9))
    })
    .unwrap()
}

fn pipe_job(adv: Advection) -> PipeJob {
    // One flow sub-step per time step (the seed's clamp `lx/dt`), as the peer takes its steps.
    let p = PipeParams { advection: adv, rain: 0.02, steps: u32::MAX, max_speed: 0.0, ..Default::default() };
    let mut j = PipeJob::new(terrain(), p, JobInputs::default()).unwrap();
    // Let the water spread first so the measured steps see running water everywhere.
    for _ in 0..20 {
        j.step();
    }
    j
}

fn thermal_params() -> ThermalParams {
    ThermalParams { talus_angle: 30.0, rate: 0.5, ..Default::default() }
}

fn symbios_map(hm: &Heightmap) -> symbios_ground::HeightMap {
    let mut s = symbios_ground::HeightMap::new(hm.width, hm.height, hm.cell_size);
    s.data_mut().copy_from_slice(&hm.data);
    s
}

fn symbios_thermal() -> symbios_ground::ThermalErosion {
    // Its talus is a height difference per cell: tan(30°)·cell_size matches ours.
    symbios_ground::ThermalErosion::new().with_iterations(1).with_talus_angle(thermal_params().talus_slope())
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipe_1024");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    for adv in [Advection::SemiLagrangian, Advection::MacCormack, Advection::Conservative] {
        let mut j = pipe_job(adv);
        g.bench_function(format!("step_{adv:?}"), |b| b.iter(|| j.step()));
    }
    g.finish();

    let hm = terrain();
    let k = ThermalKernel::new(&thermal_params(), N, N, 1.0, Boundary::default(), None).unwrap();
    let mut g = c.benchmark_group("thermal_1024");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut scratch = Vec::new();
    let mut maps = ErosionMaps::new(N * N);
    g.bench_function("talus_iteration_with_maps", |b| {
        b.iter_batched_ref(
            || hm.data.clone(),
            |h| black_box(k.step(h, &mut scratch, Some(&mut maps))),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("talus_iteration_no_maps", |b| {
        b.iter_batched_ref(|| hm.data.clone(), |h| black_box(k.step(h, &mut scratch, None)), BatchSize::LargeInput)
    });
    let sym = symbios_thermal();
    g.bench_function("symbios_ground_0.4.1_iteration", |b| {
        b.iter_batched_ref(|| symbios_map(&hm), |m| sym.erode(m), BatchSize::LargeInput)
    });
    g.finish();
}

/// Median wall time of `runs` calls of `f`, each given a fresh input from `setup`.
fn median<T>(runs: usize, mut setup: impl FnMut() -> T, mut f: impl FnMut(&mut T)) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let mut x = setup();
            let s = Instant::now();
            f(&mut x);
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[runs / 2]
}

fn side_by_side() {
    let hm = terrain();
    let k = ThermalKernel::new(&thermal_params(), N, N, 1.0, Boundary::default(), None).unwrap();
    let mut scratch = Vec::new();
    let mut maps = ErosionMaps::new(N * N);
    let ours = median(
        15,
        || hm.data.clone(),
        |h| {
            k.step(h, &mut scratch, Some(&mut maps));
        },
    );
    let ours_bare = median(
        15,
        || hm.data.clone(),
        |h| {
            k.step(h, &mut scratch, None);
        },
    );
    let sym = symbios_thermal();
    let theirs = median(15, || symbios_map(&hm), |m| sym.erode(m));
    println!("thermal iteration 1024², median of 15, {} rayon threads:", rayon::current_num_threads());
    println!("  talus (with erosion maps)   {ours:8.3} ms");
    println!("  talus (kernel, no maps)     {ours_bare:8.3} ms");
    println!(
        "  symbios-ground 0.4.1        {theirs:8.3} ms   ratio symbios/talus = {:.2}× ({:.2}× without maps)",
        theirs / ours,
        theirs / ours_bare
    );
    for adv in [Advection::SemiLagrangian, Advection::MacCormack, Advection::Conservative] {
        let mut j = pipe_job(adv);
        let t = median(15, || (), |_| j.step());
        println!("pipe step 1024² {adv:?}: {t:8.3} ms");
    }
}

/// `TALUS_PROFILE=pipe_sl|pipe_mc|pipe_cons|thermal|thermal_bare|symbios|setup` runs 50 units of one workload and
/// exits, for `perf stat` (cycles are a steadier measure than wall time on a shared machine).
fn profile(which: &str) {
    let hm = terrain();
    let k = ThermalKernel::new(&thermal_params(), N, N, 1.0, Boundary::default(), None).unwrap();
    let (mut scratch, mut maps, mut h) = (Vec::new(), ErosionMaps::new(N * N), hm.data.clone());
    match which {
        "pipe_sl" | "pipe_mc" | "pipe_cons" => {
            let adv = match which {
                "pipe_sl" => Advection::SemiLagrangian,
                "pipe_mc" => Advection::MacCormack,
                _ => Advection::Conservative,
            };
            let mut j = pipe_job(adv);
            for _ in 0..50 {
                j.step();
            }
        }
        "thermal" | "thermal_bare" => {
            for _ in 0..50 {
                k.step(&mut h, &mut scratch, if which == "thermal" { Some(&mut maps) } else { None });
            }
        }
        "symbios" => {
            let mut m = symbios_map(&hm);
            for _ in 0..50 {
                symbios_thermal().erode(&mut m);
            }
        }
        "setup" => {
            let _ = pipe_job(Advection::SemiLagrangian);
        }
        _ => eprintln!("unknown TALUS_PROFILE {which}"),
    }
}

fn main() {
    if let Ok(w) = std::env::var("TALUS_PROFILE") {
        profile(&w);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
    // A criterion filter (`cargo bench … -- pipe_1024`) skips the side-by-side table.
    if !std::env::args().skip(1).any(|a| !a.starts_with('-')) {
        side_by_side();
    }
}
