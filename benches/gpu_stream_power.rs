//! GPU stream power (issue #36): the default Simulate (100 steps of the default parameters, the
//! whole run: build, warm-up, steps, readback) on the default island at 1025², 2049², 4097², GPU
//! against the CPU model in the same run; and one steady-state time step at 4096² (GPU ms/step,
//! dispatches per step, where the step's time goes kernel by kernel, and the CPU model's step on
//! the same map).
//!
//! One command (on a machine with a GPU):
//!
//! ```text
//! cargo bench --no-default-features --features gpu --bench gpu_stream_power
//! cargo bench --no-default-features --features gpu --bench gpu_stream_power -- --sizes 1025,2049 --no-cpu
//! ```
//!
//! Options: `--sizes a,b,c` (square maps, the default island over 1 km scaled to the size),
//! `--step-size N` (the map of the per-step figure, default 4096; 0 skips it), `--software`
//! (allow a software adapter such as lavapipe: relative figures only), `--no-cpu` (skip the CPU
//! runs, which take minutes at 4097² on few cores).

use std::sync::Arc;
use std::time::Instant;

use talus::core::erosion::stream_power::{StreamPowerJob, StreamPowerParams};
use talus::core::erosion::{JobInputs, Simulation};
use talus::core::generate::{demo_params, generate};
use talus::gpu::{AdapterChoice, GpuContext, GpuStreamPowerJob};

struct Opts {
    sizes: Vec<usize>,
    step_size: usize,
    software: bool,
    cpu: bool,
}

fn opts() -> Opts {
    let mut o = Opts { sizes: vec![1025, 2049, 4097], step_size: 4096, software: false, cpu: true };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--sizes" => {
                o.sizes = val.split(',').filter_map(|s| s.trim().parse().ok()).collect();
                i += 1;
            }
            "--step-size" => {
                o.step_size = val.parse().unwrap_or(o.step_size);
                i += 1;
            }
            "--software" => o.software = true,
            "--no-cpu" => o.cpu = false,
            _ => {} // cargo bench passes `--bench`
        }
        i += 1;
    }
    o
}

fn run(sim: &mut dyn Simulation) {
    while !sim.is_done() {
        sim.step();
    }
    // A snapshot is what the editor shows at the end: count its readback.
    let _ = sim.heightmap();
}

fn main() {
    let o = opts();
    let choice = if o.software { AdapterChoice::AllowSoftware } else { AdapterChoice::Hardware };
    let ctx = match GpuContext::new(choice) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("gpu_stream_power: {e}\n(pass --software to measure on a software adapter such as lavapipe)");
            std::process::exit(2);
        }
    };
    let info = ctx.info().clone();
    println!("adapter: {info}");
    if info.software {
        println!("NOTE: software adapter: figures are relative only, not GPU performance");
    }
    println!("CPU threads: {}", rayon::current_num_threads());
    println!();
    println!("| default island | GPU, whole Simulate | CPU, whole Simulate | CPU/GPU |");
    println!("|---|---|---|---|");
    let p = StreamPowerParams::default();
    for &n in &o.sizes {
        let hm = generate(&demo_params(n, 1)).expect("the default island");
        let inputs = JobInputs { sea_level: Some(0.0), ..Default::default() };
        let t = Instant::now();
        let g = GpuStreamPowerJob::new(ctx.clone(), hm.clone(), p.clone(), inputs.clone(), Default::default());
        let mut g = match g {
            Ok(j) => j,
            Err(e) => {
                println!("| {n}² | does not fit: {e} | | |");
                continue;
            }
        };
        run(&mut g);
        let gs = t.elapsed().as_secs_f64();
        drop(g);
        let (c, ratio) = if o.cpu {
            let t = Instant::now();
            let mut c = StreamPowerJob::new(hm, p.clone(), inputs).expect("valid job");
            run(&mut c);
            let cs = t.elapsed().as_secs_f64();
            (format!("{cs:.2} s"), format!("{:.1}×", cs / gs))
        } else {
            ("-".into(), "-".into())
        };
        println!("| {n}² | {gs:.2} s | {c} | {ratio} |");
    }
    if o.step_size > 0 {
        let n = o.step_size;
        let hm = generate(&demo_params(n, 1)).expect("the default island");
        let inputs = JobInputs { sea_level: Some(0.0), ..Default::default() };
        let steps = 40;
        let p = StreamPowerParams { steps: steps + 10, ..Default::default() };
        match GpuStreamPowerJob::new(ctx.clone(), hm, p, inputs, Default::default()) {
            Ok(mut g) => {
                g.set_batch(10);
                g.step(); // build, warm-up and the first 10 steps
                let t = Instant::now();
                while !g.is_done() {
                    g.step();
                }
                let ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
                println!();
                println!(
                    "one stream-power step at {n}² on the GPU: {ms:.2} ms ({} dispatches)",
                    g.dispatches_per_step()
                );
                kernel_profile(&mut g, n, ms);
            }
            Err(e) => println!("{n}²: does not fit: {e}"),
        }
        if o.cpu {
            let hm = generate(&demo_params(n, 1)).expect("the default island");
            let inputs = JobInputs { sea_level: Some(0.0), ..Default::default() };
            let p = StreamPowerParams { steps: 13, ..Default::default() };
            let mut c = StreamPowerJob::new(hm, p, inputs).expect("valid job");
            for _ in 0..3 {
                c.step();
            }
            let t = Instant::now();
            while !c.is_done() {
                c.step();
            }
            let ms = t.elapsed().as_secs_f64() * 1e3 / 10.0;
            println!("one stream-power step at {n}² on the CPU ({} threads): {ms:.1} ms", rayon::current_num_threads());
        }
    }
}

/// Each kernel of a step timed alone (the job is not used afterwards), against the measured step.
fn kernel_profile(g: &mut GpuStreamPowerJob, n: usize, step_ms: f64) {
    let times = match g.kernel_times(100) {
        Ok(t) => t,
        Err(e) => {
            println!("kernel profile: {e}");
            return;
        }
    };
    let total: f64 = times.iter().map(|(_, t, per)| t * per).sum::<f64>() * 1e3;
    println!();
    println!("where a step's time goes at {n}² (each kernel alone, 100 dispatches):");
    println!();
    println!("| kernel | µs per dispatch | dispatches per step | ms per step | share |");
    println!("|---|---|---|---|---|");
    for (name, t, per) in &times {
        println!(
            "| {name} | {:.1} | {per:.0} | {:.3} | {:.0} % |",
            t * 1e6,
            t * per * 1e3,
            100.0 * t * per * 1e3 / total
        );
    }
    println!("| sum of the kernels alone | | | {total:.2} | |");
    println!("| the step as run (measured above) | | | {step_ms:.2} | |");
}
