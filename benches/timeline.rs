//! Figures of issue #16: memory per kept timeline frame on 1025² and 2049² maps, scrub latency,
//! and the cost of one erosion-brush dab. Prints a table (not timed assertions: the machines
//! are shared and noisy).
//!
//! * **Memory per frame**: a default-island droplet run (200 000 droplets per 1025², scaled with
//!   the area) offers its state after every 10 000 droplets per 1025² (about what ten snapshots a
//!   second are on a fast machine); the timeline's bytes minus its raw input and newest frame,
//!   over the frames kept, against the 4·N bytes of a raw frame.
//! * **Scrub**: decoding a frame right after a key frame's neighbour (one delta, the cached
//!   step of a slider drag) and the worst frame from cold (a key frame plus seven deltas).
//! * **Dab**: one erosion-brush dab of radius 30 nodes owing 0.1 s of work on the 1025² island,
//!   per model, wall time on all cores.
//!
//! Run: `cargo bench --no-default-features --bench timeline`.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use talus::backend::Backend;
use talus::core::brush::Falloff;
use talus::core::erosion::droplet::DropletParams;
use talus::core::erosion::pipe::PipeParams;
use talus::core::erosion::stream_power::StreamPowerParams;
use talus::core::erosion::thermal::ThermalParams;
use talus::core::erosion::{Boundary, MapSize, ModelParams};
use talus::core::generate::{demo_params, generate};
use talus::editor::erosion_brush::{Dab, run_dab};
use talus::editor::layers::Recipe;
use talus::editor::timeline::{KEY_EVERY, Timeline};

fn recipe(model: ModelParams) -> Recipe {
    Recipe {
        model,
        boundary: Boundary::default(),
        seed: 1,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: Some(0.0),
        steer: None,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    println!("| map | frames kept | raw frame | packed frame (mean) | ratio | scrub, 1 delta | scrub, cold worst |");
    println!("|---|---|---|---|---|---|---|");
    for n in [1025usize, 2049] {
        let input = generate(&demo_params(n, 1)).unwrap();
        let scale = ((n * n) as f64 / (1025.0 * 1025.0)).round() as u64;
        let droplets = 200_000 * scale;
        let every = 10_000 * scale;
        // Version 1's count and grid defaults on this map (a 5-node brush, 300 steps, 0.01 m per
        // node), so the figures stay comparable.
        let cell = input.cell_size;
        let r = recipe(ModelParams::Droplet(DropletParams {
            droplets_per_km2: MapSize::of(&input).per_km2(droplets),
            radius_m: 5.0 * cell,
            max_path_m: 300.0 * cell,
            min_slope_tan: 0.01 / cell,
            ..Default::default()
        }));
        let mut job = r.build(input.clone()).unwrap().job;
        let mut t = Timeline::new(&input, droplets, usize::MAX);
        let mut next = every;
        while !job.is_done() {
            job.step();
            let done = job.progress().done;
            if done >= next {
                t.offer(job.heightmap(), done, job.ledger(), false);
                next += every;
            }
        }
        job.finish();
        t.offer(job.heightmap(), job.progress().done, job.ledger(), true);
        let raw = 4 * input.len();
        let packed = (t.bytes() - 2 * raw) as f64 / (t.len() - 1) as f64;
        // Scrub: frame 9 right after frame 8 (cached), and frame KEY_EVERY-1+8 from cold.
        let mut one = Vec::new();
        let mut cold = Vec::new();
        for _ in 0..5 {
            let fresh = t.clone();
            let _ = fresh.heights(8);
            let s = Instant::now();
            let _ = fresh.heights(9);
            one.push(s.elapsed().as_secs_f64() * 1e3);
            let fresh = t.clone();
            let s = Instant::now();
            let _ = fresh.heights(KEY_EVERY * 2 - 1);
            cold.push(s.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "| {n}² | {} | {:.1} MiB | {:.2} MiB | {:.1} % | {:.1} ms | {:.1} ms |",
            t.len(),
            raw as f64 / 1048576.0,
            packed / 1048576.0,
            100.0 * packed / raw as f64,
            median(one),
            median(cold)
        );
    }
    let island = generate(&demo_params(1025, 1)).unwrap();
    println!();
    println!("| model | work of a 0.1 s dab (r = 30 nodes) | wall time |");
    println!("|---|---|---|");
    for model in [
        ModelParams::Droplet(DropletParams::default()),
        ModelParams::Thermal(ThermalParams::default()),
        ModelParams::Pipe(PipeParams::default()),
        ModelParams::StreamPower(StreamPowerParams::default()),
    ] {
        let r = recipe(model.clone());
        let work = talus::editor::erosion_brush::dab_work(&model, 30.0 * island.cell_size, 0.1);
        let c = island.cell_size;
        let dab = Dab { centre_m: [600.0 * c, 480.0 * c], radius_m: 30.0 * c, falloff: Falloff::Smooth, work };
        let times: Vec<f64> = (0..5)
            .map(|i| {
                let s = Instant::now();
                let _ = run_dab(&r.dab_model(), &dab, i, island.clone(), &AtomicBool::new(false)).unwrap();
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        println!("| {} | {} | {:.1} ms |", model.entry().label, work, median(times));
    }
}
