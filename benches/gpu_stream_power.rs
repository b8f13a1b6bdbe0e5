//! GPU stream power (issue #36): the default Simulate (100 steps of the default parameters, the
//! whole run: build, warm-up, steps, readback) at 1025², 2049², 4097², GPU against the CPU model
//! in the same run, on the two maps users make: the default island (1 km scaled to the size, sea
//! at 0 m) and a raw fBm of the same extent (no falloff, no sea, its noise's pits drained through
//! the edges, which makes the first steps' fills and drainage far costlier); and one steady-state
//! time step at 4096² on each (GPU ms/step, dispatches per step; on the island, where the step's
//! time goes kernel by kernel; and the CPU model's step on the same map).
//!
//! One command (on a machine with a GPU):
//!
//! ```text
//! cargo bench --no-default-features --features gpu --bench gpu_stream_power
//! cargo bench --no-default-features --features gpu --bench gpu_stream_power -- --sizes 1025,2049 --no-cpu
//! ```
//!
//! Options: `--sizes a,b,c` (square maps over 1 km scaled to the size), `--maps island,fbm` (which
//! maps, default both),
//! `--step-size N` (the map of the per-step figure, default 4096; 0 skips it), `--software`
//! (allow a software adapter such as lavapipe: relative figures only), `--no-cpu` (skip the CPU
//! runs, which take minutes at 4097² on few cores).

use std::sync::Arc;
use std::time::Instant;

use talus::core::erosion::stream_power::{StreamPowerJob, StreamPowerParams};
use talus::core::erosion::{JobInputs, Simulation};
use talus::core::generate::{GenerateParams, demo_params, generate};
use talus::core::heightmap::Heightmap;
use talus::gpu::{AdapterChoice, GpuContext, GpuStreamPowerJob};

struct Opts {
    sizes: Vec<usize>,
    maps: Vec<Map>,
    step_size: usize,
    software: bool,
    cpu: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        sizes: vec![1025, 2049, 4097],
        maps: vec![Map::Island, Map::Fbm],
        step_size: 4096,
        software: false,
        cpu: true,
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
            "--maps" => {
                o.maps = val
                    .split(',')
                    .filter_map(|s| match s.trim() {
                        "island" => Some(Map::Island),
                        "fbm" => Some(Map::Fbm),
                        _ => None,
                    })
                    .collect();
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

/// The maps the figures are taken on.
#[derive(Clone, Copy, PartialEq)]
enum Map {
    /// The default island (`demo_params`): 1 km, sea at 0 m covering 40 %.
    Island,
    /// The generator's raw fBm over the same extent: no falloff, no sea, every pit of the noise.
    Fbm,
}

impl Map {
    fn name(self) -> &'static str {
        match self {
            Map::Island => "default island",
            Map::Fbm => "raw fBm",
        }
    }

    /// The map at `n`² and the job's inputs (the island's sea as base level; the fBm drains
    /// through its edges).
    fn at(self, n: usize) -> (Heightmap, JobInputs) {
        match self {
            Map::Island => (
                generate(&demo_params(n, 1)).expect("the default island"),
                JobInputs { sea_level: Some(0.0), ..Default::default() },
            ),
            Map::Fbm => {
                let p = GenerateParams {
                    width: n,
                    height: n,
                    cell_size: 1024.0 / (n.max(2) - 1) as f32,
                    seed: 1,
                    ..Default::default()
                };
                (generate(&p).expect("the raw fBm"), JobInputs::default())
            }
        }
    }
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
    println!("| map | GPU, whole Simulate | CPU, whole Simulate | CPU/GPU |");
    println!("|---|---|---|---|");
    let p = StreamPowerParams::default();
    for (&map, &n) in o.maps.iter().flat_map(|m| o.sizes.iter().map(move |n| (m, n))) {
        let (hm, inputs) = map.at(n);
        let name = map.name();
        let t = Instant::now();
        let g = GpuStreamPowerJob::new(ctx.clone(), hm.clone(), p.clone(), inputs.clone(), Default::default());
        let mut g = match g {
            Ok(j) => j,
            Err(e) => {
                println!("| {name}, {n}² | does not fit: {e} | | |");
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
        println!("| {name}, {n}² | {gs:.2} s | {c} | {ratio} |");
    }
    for &map in o.maps.iter().filter(|_| o.step_size > 0) {
        let n = o.step_size;
        let (hm, inputs) = map.at(n);
        let name = map.name();
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
                    "one stream-power step at {n}², {name}, on the GPU: {ms:.2} ms ({} dispatches)",
                    g.dispatches_per_step()
                );
                if let Ok((tree, incise, most)) = g.rounds_per_step() {
                    println!(
                        "pointer-jumping rounds that did work per step: the fill's tree {tree:.1}, the incision \
                         {incise:.1}, of {most} each"
                    );
                }
                if map == Map::Island {
                    kernel_profile(&mut g, n, ms);
                }
            }
            Err(e) => println!("{n}²: does not fit: {e}"),
        }
        if o.cpu {
            let (hm, inputs) = map.at(n);
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
            println!(
                "one stream-power step at {n}², {name}, on the CPU ({} threads): {ms:.1} ms",
                rayon::current_num_threads()
            );
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
