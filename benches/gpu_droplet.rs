//! GPU droplet erosion (issue #7) against the CPU model, same parameters, same terrain.
//!
//! One command (a real GPU; see README "Benchmarks"):
//!
//! ```text
//! cargo bench --bench gpu_droplet
//! ```
//!
//! Workload: 1,048,576 droplets on a 1024² fBm terrain (heights 0–1) with `benches/droplet.rs`'s
//! `m1_1024` parameters (terrain-generator-like: radius 3, lifetime 30, inertia 0.05, …), seed 1.
//! Prints droplets/s of the GPU job with its default lockstep width (one droplet per 64 nodes)
//! and with a wide one (2¹⁷ in flight: fills a big GPU, drifts a few % from the CPU's result),
//! of the CPU model (parallel tile mode, the editor's default) and the ratios.
//!
//! Environment:
//! * `TALUS_BENCH_DROPLETS` — droplet count (default 1048576); `TALUS_BENCH_SIZE` — map side
//!   (default 1024); `TALUS_BENCH_PARAMS=spec` — SPEC §2a defaults (radius 5, lifetime 300)
//!   instead of `m1`;
//! * `TALUS_GPU_SOFTWARE=1` — accept a software adapter (lavapipe): relative figures only.
//!   Without it and without a hardware GPU the bench says so and exits.

use std::sync::Arc;
use std::time::Instant;

use talus::core::Heightmap;
use talus::core::erosion::droplet::{DropletJob, DropletParams};
use talus::core::erosion::{JobInputs, MapSize, Simulation};
use talus::gpu::{AdapterChoice, GpuContext, GpuDropletJob, GpuDropletOptions};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The fBm-like terrain of `benches/droplet.rs`: 5 octaves of rotated sine products.
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

/// `benches/droplet.rs`'s `tg_like` parameters with `droplets` on an `n²` map of 1 m cells (where
/// metres are nodes).
fn m1(droplets: u64, n: usize) -> DropletParams {
    DropletParams {
        droplets_per_km2: MapSize::new(n, n, 1.0).per_km2(droplets),
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

/// Runs `sim` to the end and reads the result back; returns (seconds, eroded volume).
fn time(sim: &mut dyn Simulation) -> (f64, f64) {
    let t = Instant::now();
    while !sim.is_done() {
        sim.step();
    }
    sim.finish();
    let _ = sim.heightmap().data.len();
    let l = sim.ledger();
    (t.elapsed().as_secs_f64(), l.eroded)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let n = env_u64("TALUS_BENCH_SIZE", 1024) as usize;
    let droplets = env_u64("TALUS_BENCH_DROPLETS", 1 << 20);
    let spec = std::env::var("TALUS_BENCH_PARAMS").is_ok_and(|v| v == "spec");
    // SPEC §2a: seed 000's grid defaults (radius 5 nodes, 300 steps, 0.01 m per node).
    let params = if spec {
        DropletParams {
            droplets_per_km2: MapSize::new(n, n, 1.0).per_km2(droplets),
            radius_m: 5.0,
            max_path_m: 300.0,
            min_slope_tan: 0.01,
            path_step_m: 1.0,
            batch: 1 << 17,
            ..Default::default()
        }
    } else {
        m1(droplets, n)
    };
    let software = std::env::var("TALUS_GPU_SOFTWARE").is_ok_and(|v| !v.is_empty() && v != "0");
    let choice = if software { AdapterChoice::AllowSoftware } else { AdapterChoice::Hardware };
    let ctx = match GpuContext::new(choice) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("gpu_droplet bench: no GPU ({e}); set TALUS_GPU_SOFTWARE=1 to measure on a software adapter");
            return;
        }
    };
    let hm = terrain(n, 200.0, 1.0);
    let inputs = JobInputs { seed: 1, ..Default::default() };
    println!(
        "GPU droplets: {droplets} droplets on {n}², {} parameters (radius {}, lifetime {}), seed 1",
        if spec { "SPEC §2a default" } else { "m1_1024" },
        params.radius_m,
        params.max_path_m
    );
    println!("adapter: {}{}", ctx.info(), if ctx.info().software { "  [software: relative figures only]" } else { "" });
    let mut rows: Vec<(String, f64, f64)> = Vec::new();
    for (label, in_flight) in
        [("GPU, default lockstep width", None), ("GPU, wide (131072 in flight)", Some(1u32 << 17))]
    {
        let t = Instant::now();
        let job = GpuDropletJob::new(
            ctx.clone(),
            hm.clone(),
            params.clone(),
            inputs.clone(),
            GpuDropletOptions { in_flight },
        );
        let mut job = match job {
            Ok(j) => j,
            Err(e) => {
                eprintln!("{label}: could not build the job: {e}");
                continue;
            }
        };
        let setup = t.elapsed().as_secs_f64();
        let (s, eroded) = time(&mut job);
        if let Some(f) = job.fault() {
            eprintln!("{label}: the GPU failed during the run ({f}); the figure is the CPU fallback's");
        }
        println!(
            "{label:<34} {:>8} in flight  {s:>9.3} s  {:>12.0} droplets/s  eroded {eroded:.1}  (setup + upload {setup:.3} s)",
            job.in_flight(),
            droplets as f64 / s
        );
        rows.push((label.to_string(), s, eroded));
    }
    for (label, parallel) in [("CPU, parallel tiles (default)", true), ("CPU, classic serial", false)] {
        if !parallel && droplets > 1 << 18 && std::env::var("TALUS_BENCH_SERIAL").is_err() {
            println!("{label:<34} skipped (set TALUS_BENCH_SERIAL=1)");
            continue;
        }
        let mut job =
            DropletJob::new(hm.clone(), DropletParams { parallel, ..params.clone() }, inputs.clone()).unwrap();
        let (s, eroded) = time(&mut job);
        println!(
            "{label:<34} {:>8} threads    {s:>9.3} s  {:>12.0} droplets/s  eroded {eroded:.1}",
            rayon::current_num_threads(),
            droplets as f64 / s
        );
        rows.push((label.to_string(), s, eroded));
    }
    if let Some(cpu) = rows.iter().find(|r| r.0.starts_with("CPU, parallel")) {
        for g in rows.iter().filter(|r| r.0.starts_with("GPU")) {
            println!("speed-up {} vs CPU parallel: ×{:.2}", g.0, cpu.1 / g.1);
        }
    }
}
