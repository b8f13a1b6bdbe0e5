//! GPU pipe model (issue #7): steps/s at 1024², 2048², 4096², bytes moved per node and step, the
//! fraction of a peak memory bandwidth, and the ratio to the CPU model on the same job.
//!
//! One command (on a machine with a GPU):
//!
//! ```text
//! cargo bench --no-default-features --features gpu --bench gpu_pipe
//! cargo bench --no-default-features --features gpu --bench gpu_pipe -- --peak-gbs 3350 --sizes 1024,2048,4096
//! ```
//!
//! Options: `--sizes a,b,c` (square maps), `--peak-gbs X` (the device's peak DRAM bandwidth in
//! GB/s; default 3350, an H100 SXM's HBM3), `--seconds S` (time per measurement, default 3),
//! `--software` (allow a software adapter such as lavapipe: relative figures only), `--no-cpu`
//! (skip the CPU comparison), `--thermal` (also time thermal erosion alone, iterations/s),
//! `--kernels N` (where a step's time goes on an N² map: each kernel timed alone, its bytes per
//! node and effective bandwidth, against a buffer-to-buffer copy of the same bytes on the device).
//!
//! The bandwidth figure is *effective*: each buffer a kernel reads or writes counted once per
//! node ([`talus::gpu::pipe::bytes_per_cell_step`], the table is in its doc), divided by the
//! measured time per step. Neighbour reads that miss the cache make the true traffic higher.

use std::sync::Arc;
use std::time::{Duration, Instant};

use talus::core::erosion::pipe::{Advection, PipeJob, PipeParams};
use talus::core::erosion::thermal::{ThermalJob, ThermalParams};
use talus::core::erosion::{JobInputs, Simulation};
use talus::core::heightmap::Heightmap;
use talus::core::rng::{hash2, unit_f32};
use talus::gpu::pipe::bytes_per_cell_step;
use talus::gpu::{AdapterChoice, GpuContext, GpuErosionJob};

struct Opts {
    sizes: Vec<usize>,
    peak_gbs: f64,
    seconds: f64,
    software: bool,
    cpu: bool,
    thermal: bool,
    kernels: usize,
}

fn opts() -> Opts {
    let mut o = Opts {
        sizes: vec![1024, 2048, 4096],
        peak_gbs: 3350.0,
        seconds: 3.0,
        software: false,
        cpu: true,
        thermal: false,
        kernels: 0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--sizes" => {
                o.sizes = val.split(',').filter_map(|s| s.trim().parse().ok()).collect();
                i += 1;
            }
            "--kernels" => {
                o.kernels = val.parse().unwrap_or(0);
                i += 1;
            }
            "--peak-gbs" => {
                o.peak_gbs = val.parse().unwrap_or(o.peak_gbs);
                i += 1;
            }
            "--seconds" => {
                o.seconds = val.parse().unwrap_or(o.seconds);
                i += 1;
            }
            "--software" => o.software = true,
            "--no-cpu" => o.cpu = false,
            "--thermal" => o.thermal = true,
            _ => {} // cargo bench passes `--bench`
        }
        i += 1;
    }
    o
}

fn terrain(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        60.0 + 25.0 * (fx * 0.013).sin() * (fy * 0.009).cos()
            + 6.0 * (fx * 0.07 + fy * 0.05).sin()
            + 2.0 * unit_f32(hash2(x as i64, y as i64, 9))
    })
    .unwrap()
}

fn params() -> PipeParams {
    // One flow sub-step per time step (the seed's clamp `lx/dt`) on the 1 m cells, as every
    // figure in the README was taken: a step is then one pass of each kernel.
    PipeParams {
        advection: Advection::SemiLagrangian,
        rain: 0.02,
        steps: u32::MAX,
        max_speed: 0.0,
        ..Default::default()
    }
}

/// Steps per second of `sim` over about `secs` seconds, after `warm` warm-up calls. `step()`
/// returns when its work is done (the GPU job waits for its batch), so wall time is honest.
fn rate(sim: &mut dyn Simulation, warm: usize, secs: f64) -> f64 {
    for _ in 0..warm {
        sim.step();
    }
    let d0 = sim.progress().done;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs_f64(secs) {
        sim.step();
    }
    (sim.progress().done - d0) as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let o = opts();
    let choice = if o.software { AdapterChoice::AllowSoftware } else { AdapterChoice::Hardware };
    let ctx = match GpuContext::new(choice) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("gpu_pipe: {e}\n(pass --software to measure on a software adapter such as lavapipe)");
            std::process::exit(2);
        }
    };
    let info = ctx.info().clone();
    println!("adapter: {info}");
    if info.software {
        println!("NOTE: software adapter: figures are relative only, not GPU performance");
    }
    println!("peak bandwidth assumed: {} GB/s", o.peak_gbs);
    println!();
    println!("| map | GPU steps/s | B/node/step | effective GB/s | % of peak | CPU steps/s | GPU/CPU |");
    println!("|---|---|---|---|---|---|---|");
    let p = params();
    let bpc = bytes_per_cell_step(&p, 1.0, false);
    for &n in &o.sizes {
        let hm = terrain(n);
        let mut gpu = match GpuErosionJob::pipe(ctx.clone(), hm.clone(), p.clone(), JobInputs::default()) {
            Ok(j) => j,
            Err(e) => {
                println!("| {n}² | does not fit: {e} | | | | | |");
                continue;
            }
        };
        gpu.set_batch(if n <= 1024 { 64 } else { 16 });
        let g = rate(&mut gpu, 2, o.seconds);
        if let Some(e) = gpu.fault() {
            println!("| {n}² | failed: {e} | | | | | |");
            continue;
        }
        drop(gpu);
        let gbs = g * bpc * (n * n) as f64 / 1e9;
        let (c, ratio) = if o.cpu {
            let mut cpu = PipeJob::new(hm, p.clone(), JobInputs::default()).unwrap();
            let c = rate(&mut cpu, 1, o.seconds.min(5.0));
            (format!("{c:.1}"), format!("{:.1}×", g / c))
        } else {
            ("-".into(), "-".into())
        };
        println!("| {n}² | {g:.1} | {bpc:.0} | {gbs:.1} | {:.1}% | {c} | {ratio} |", 100.0 * gbs / o.peak_gbs);
    }
    if o.thermal {
        println!();
        println!("| map | GPU thermal iterations/s | CPU iterations/s | GPU/CPU |");
        println!("|---|---|---|---|");
        // Iterations counted on the 1 m cells themselves, so one is one pass of each kernel.
        let tp = ThermalParams { iterations: u32::MAX, iteration_cell_m: 1.0, ..Default::default() };
        for &n in &o.sizes {
            let hm = terrain(n);
            let Ok(mut gpu) = GpuErosionJob::thermal(ctx.clone(), hm.clone(), tp.clone(), JobInputs::default()) else {
                continue;
            };
            gpu.set_batch(32);
            let g = rate(&mut gpu, 2, o.seconds);
            drop(gpu);
            let mut cpu = ThermalJob::new(hm, tp.clone(), JobInputs::default()).unwrap();
            let c = if o.cpu { rate(&mut cpu, 1, o.seconds.min(5.0)) } else { f64::NAN };
            println!("| {n}² | {g:.1} | {c:.1} | {:.1}× |", g / c);
        }
    }
    if o.kernels > 0 {
        kernel_profile(&ctx, o.kernels, o.peak_gbs);
    }
}

/// Each kernel of a pipe-model step timed alone on an `n`² map, with the bytes per node it moves
/// (the table of [`bytes_per_cell_step`]) and its effective bandwidth; then a plain copy of
/// `n`² × 16 bytes between two device buffers, the bandwidth the same API reaches with no
/// kernel at all.
fn kernel_profile(ctx: &Arc<GpuContext>, n: usize, peak_gbs: f64) {
    let p = params();
    let mut gpu = match GpuErosionJob::pipe(ctx.clone(), terrain(n), p.clone(), JobInputs::default()) {
        Ok(j) => j,
        Err(e) => {
            println!("kernel profile at {n}²: does not fit: {e}");
            return;
        }
    };
    gpu.set_batch(16);
    for _ in 0..4 {
        gpu.step(); // reach the steady state the steps/s figure measures
    }
    // Bytes per node of each kernel, semi-Lagrangian without inputs (bytes_per_cell_step's table).
    let bytes = |name: &str| match name {
        "flux" => 40.0,
        "water" => 64.0,
        _ => 16.0,
    };
    let reps = if n >= 4096 { 200 } else { 1000 };
    let times = match gpu.kernel_times(reps) {
        Ok(t) => t,
        Err(e) => {
            println!("kernel profile at {n}²: {e}");
            return;
        }
    };
    let nodes = (n * n) as f64;
    let total: f64 = times.iter().map(|(_, t, per)| t * per).sum();
    println!();
    println!("where a pipe-model step's time goes at {n}² (each kernel alone, {reps} dispatches):");
    println!();
    println!("| kernel | µs per dispatch | B/node | effective GB/s | % of peak | share of the kernels' sum |");
    println!("|---|---|---|---|---|---|");
    for (name, t, per) in &times {
        let b = bytes(name);
        let gbs = b * nodes / t / 1e9;
        println!(
            "| {name} | {:.1} | {b:.0} | {gbs:.0} | {:.1} % | {:.0} % |",
            t * 1e6,
            100.0 * gbs / peak_gbs,
            100.0 * t * per / total
        );
    }
    println!("| sum of the kernels alone | {:.1} | | | | |", total * 1e6);
    // The API's own roof: copy n² × 16 B from one device buffer to another.
    let size = (nodes * 16.0) as u64;
    let (Ok(a), Ok(b)) = (ctx.storage_buffer("copy a", size), ctx.storage_buffer("copy b", size)) else {
        return;
    };
    let copy = |k: u32| {
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        for _ in 0..k {
            enc.copy_buffer_to_buffer(&a, 0, &b, 0, size);
        }
        ctx.queue().submit([enc.finish()]);
        ctx.wait()
    };
    if copy(2).is_err() {
        return;
    }
    let t = Instant::now();
    if copy(50).is_err() {
        return;
    }
    let secs = t.elapsed().as_secs_f64() / 50.0;
    let gbs = 2.0 * size as f64 / secs / 1e9;
    println!(
        "copy of {:.0} MiB between two device buffers: {:.1} µs, {gbs:.0} GB/s read + written ({:.1} % of peak)",
        size as f64 / 1048576.0,
        secs * 1e6,
        100.0 * gbs / peak_gbs
    );
}
