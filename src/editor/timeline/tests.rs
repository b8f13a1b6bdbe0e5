use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::resume::Resumed;
use super::*;
use crate::backend::Backend;
use crate::core::erosion::droplet::DropletParams;
use crate::core::erosion::pipe::PipeParams;
use crate::core::erosion::stream_power::StreamPowerParams;
use crate::core::erosion::thermal::ThermalParams;
use crate::core::erosion::{Boundary, MapSize, ModelParams, Simulation, run};
use crate::core::rng::{hash2, signed_f32};
use crate::editor::job::{JobShared, run_job};
use crate::editor::layers::Recipe;

fn hills(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let (fx, fy) = (x as f32 / n as f32, y as f32 / n as f32);
        60.0 * (fx * 3.1).sin() * (fy * 2.7).cos() + 40.0 * fx + 2.0 * signed_f32(hash2(x as i64, y as i64, 3))
    })
    .unwrap()
}

fn recipe(model: ModelParams) -> Recipe {
    Recipe {
        model,
        boundary: Boundary::default(),
        seed: 11,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: Some(5.0),
        steer: None,
    }
}

fn models() -> Vec<ModelParams> {
    vec![
        // 3000 droplets on the tests' 48² map of 1 m cells.
        ModelParams::Droplet(DropletParams {
            droplets_per_km2: MapSize::new(48, 48, 1.0).per_km2(3000),
            batch: 250,
            ..Default::default()
        }),
        ModelParams::Thermal(ThermalParams { iterations: 24, ..Default::default() }),
        ModelParams::Pipe(PipeParams { steps: 24, ..Default::default() }),
        ModelParams::StreamPower(StreamPowerParams { steps: 12, ..Default::default() }),
    ]
}

/// Runs `recipe` over `input` step by step, offering every state to a timeline, and returns the
/// timeline and every state the run had (by its `done`), the last after `finish`.
fn record(recipe: &Recipe, input: &Heightmap, budget: usize) -> (Timeline, Vec<(u64, Vec<f32>)>) {
    let mut job = recipe.build(input.clone()).unwrap().job;
    let mut t = Timeline::new(input, job.progress().total, budget);
    let mut states = vec![(0, input.data.clone())];
    while !job.is_done() {
        job.step();
        t.offer(job.heightmap(), job.progress().done, job.ledger(), false);
        states.push((job.progress().done, job.heightmap().data.clone()));
    }
    job.finish();
    t.offer(job.heightmap(), job.progress().done, job.ledger(), true);
    states.push((job.progress().done, job.heightmap().data.clone()));
    (t, states)
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn every_frame_comes_back_with_the_bits_the_run_had() {
    let input = hills(48);
    for model in models() {
        let (t, states) = record(&recipe(model.clone()), &input, DEFAULT_BUDGET);
        assert_eq!(t.len(), states.len() - 1, "{}: one frame per step plus the input", model.entry().name);
        for (i, f) in t.frames().iter().enumerate() {
            // The newest state the run had at that `done` (the end state for the last frame).
            let want = &states.iter().rev().find(|(d, _)| *d == f.done).unwrap().1;
            let got = t.heights(i);
            assert!(same_bits(&got.data, want), "{}: frame {i} (done {}) differs", model.entry().name, f.done);
        }
        // Scrubbing backwards and forwards (cache in both directions) gives the same bits.
        let k = t.len() / 2;
        let forward = t.heights(k);
        let _ = t.heights(t.len() - 1);
        assert!(same_bits(&t.heights(k).data, &forward.data));
        assert!(same_bits(&t.heights(0).data, &input.data));
    }
}

#[test]
fn the_budget_holds_while_thinning_and_the_ends_stay() {
    let input = hills(64);
    let model = ModelParams::Droplet(DropletParams {
        droplets_per_km2: MapSize::of(&input).per_km2(12_000),
        batch: 100,
        ..Default::default()
    });
    let r = recipe(model);
    let (full, states) = record(&r, &input, usize::MAX);
    let per_frame = (full.bytes() - 2 * 4 * input.len()) / full.len();
    // Room for the raw input, the raw newest frame and about 20 frames.
    let budget = 2 * 4 * input.len() + 20 * per_frame;
    let mut job = r.build(input.clone()).unwrap().job;
    let mut t = Timeline::new(&input, job.progress().total, budget);
    let mut max = 0;
    while !job.is_done() {
        job.step();
        t.offer(job.heightmap(), job.progress().done, job.ledger(), false);
        max = max.max(t.bytes());
        assert!(t.bytes() <= budget, "{} > {budget} with {} frames", t.bytes(), t.len());
    }
    job.finish();
    t.offer(job.heightmap(), job.progress().done, job.ledger(), true);
    assert!(t.bytes() <= budget);
    assert!(t.stride() >= 4, "it thinned (stride {})", t.stride());
    assert!(t.len() >= 8, "it keeps frames: {}", t.len());
    assert_eq!(t.frames()[0].done, 0, "the first frame stays");
    assert_eq!(t.frames().last().unwrap().done, 12_000, "the last frame stays");
    // Evenly spread: the kept frames (but the last) are a whole stride apart.
    let dones: Vec<u64> = t.frames().iter().map(|f| f.done).collect();
    let gaps: Vec<u64> = dones.windows(2).map(|w| w[1] - w[0]).collect();
    let step = 100 * t.stride();
    assert!(gaps[..gaps.len() - 1].iter().all(|&g| g == step), "gaps {gaps:?}, stride {}", t.stride());
    // Thinning re-encodes; every kept frame still decodes exactly.
    for (i, f) in t.frames().iter().enumerate() {
        let want = &states.iter().rev().find(|(d, _)| *d == f.done).unwrap().1;
        assert!(same_bits(&t.heights(i).data, want), "frame {i} after thinning");
    }
    assert!(max > budget / 2, "the budget was reached ({max} of {budget})");
}

/// Continuing from frame `k` runs the recipe again up to frame `k` and goes on: the end state is
/// the uninterrupted run's, bit for bit, for every model.
#[test]
fn continue_from_a_frame_equals_the_uninterrupted_run() {
    let input = hills(48);
    for model in models() {
        let r = recipe(model.clone());
        let (t, states) = record(&r, &input, DEFAULT_BUDGET);
        let end = &states.last().unwrap().1;
        for k in [1, t.len() / 3, t.len() - 2] {
            let f = &t.frames()[k];
            let mut resumed = Resumed::new(r.build(input.clone()).unwrap().job, f.done, t.heights(k));
            assert!(resumed.catching_up() || k == 0);
            assert!(same_bits(&resumed.heightmap().data, &t.heights(k).data), "shows frame k while catching up");
            run(&mut resumed, &AtomicBool::new(false), |_| {});
            assert!(!resumed.catching_up());
            assert!(same_bits(&resumed.heightmap().data, end), "{}: continued from frame {k}", model.entry().name);
        }
    }
}

/// A run cancelled at some moment and continued from its last frame through the editor's job
/// loop (recording into the truncated timeline) ends where the uninterrupted run ends, and its
/// timeline holds the first run's frames then the continuation's.
#[test]
fn a_cancelled_run_continued_through_the_job_loop_ends_as_the_whole_run() {
    let input = hills(48);
    let r = recipe(ModelParams::Thermal(ThermalParams { iterations: 40, ..Default::default() }));
    let mut whole = r.build(input.clone()).unwrap().job;
    run(whole.as_mut(), &AtomicBool::new(false), |_| {});

    // The first run stops after 15 steps (thermal's finish does nothing, so its state at the
    // cancel is its state after step 15).
    let mut first = r.build(input.clone()).unwrap().job;
    let mut t = Timeline::new(&input, 40, DEFAULT_BUDGET);
    for _ in 0..15 {
        first.step();
        t.offer(first.heightmap(), first.progress().done, first.ledger(), false);
    }
    first.finish();
    t.offer(first.heightmap(), first.progress().done, first.ledger(), true);
    let k = t.len() - 1;
    assert_eq!(t.frames()[k].done, 15);

    let shared = Arc::new(JobShared::new(Duration::ZERO));
    shared.record(t.truncated(k));
    let job = Resumed::new(r.build(input.clone()).unwrap().job, 15, t.heights(k));
    let (sim, _) = run_job(Box::new(job), shared.clone());
    assert!(same_bits(&sim.heightmap().data, &whole.heightmap().data));
    let t2 = shared.take_timeline().unwrap();
    assert_eq!(t2.frames()[k].done, 15, "the frames up to the continued one are kept");
    assert_eq!(t2.frames().last().unwrap().done, 40);
    assert!(same_bits(&t2.heights(t2.len() - 1).data, &whole.heightmap().data));
    assert!(same_bits(&t2.heights(5).data, &t.heights(5).data));
    // Frames are strictly later than the one continued from (catching up records nothing).
    assert!(t2.frames().windows(2).all(|w| w[0].done < w[1].done));
}

#[test]
fn truncating_keeps_the_frames_up_to_the_one_chosen() {
    let input = hills(32);
    let (t, _) = record(&recipe(models()[1].clone()), &input, DEFAULT_BUDGET);
    let k = 9;
    let mut kept = t.truncated(k);
    assert_eq!(kept.len(), k + 1);
    for i in 0..=k {
        assert!(same_bits(&kept.heights(i).data, &t.heights(i).data));
    }
    kept.seal();
    assert!(kept.bytes() < t.bytes());
    // Recording goes on after a truncation (the newest frame is decoded again).
    let later = t.heights(k + 3);
    kept.offer(&later, t.frames()[k + 3].done, Ledger::default(), true);
    assert!(same_bits(&kept.heights(k + 1).data, &later.data));
}
