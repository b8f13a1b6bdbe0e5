//! The GPU detail pass against the CPU pass on a level of a real ladder: the default island after
//! the default Simulate, brought up ×2. Every test opens a context with
//! [`crate::gpu::context::test_context`] (CI: lavapipe, required).

use super::*;
use crate::core::Heightmap;
use crate::core::analysis::parity::{ParityParams, parity};
use crate::core::erosion::stream_power::StreamPowerJob;
use crate::core::erosion::stream_power::refine::{pass, start};
use crate::core::erosion::{Boundary, EdgeMode, Simulation};
use crate::core::generate::{demo_params, generate};
use crate::core::resample::{resample, resample_bounded};
use crate::gpu::context::test_context;

#[test]
fn the_uniform_block_matches_the_wgsl() {
    crate::gpu::uniform::assert_matches_wgsl::<RefineGpuParams>(SHADER, "Params");
    assert_eq!(std::mem::size_of::<RefineGpuParams>() % 16, 0);
}

/// A level one ×2 step above a preview: the default island at `n` nodes (1 km, its sea at 0 m)
/// after `steps` of the default Simulate, both the fold below and the result brought up to
/// `2n − 1` nodes, with the drainage the ladder starts from.
struct Ladder {
    input: Heightmap,
    map: Heightmap,
    drainage: Vec<f32>,
}

fn ladder(n: usize, p: &StreamPowerParams, inputs: &JobInputs) -> Ladder {
    let island = generate(&demo_params(n, 1)).unwrap();
    let mut job = StreamPowerJob::new(island.clone(), p.clone(), inputs.clone()).unwrap();
    while !job.is_done() {
        job.step();
    }
    let eroded = job.heightmap().clone();
    let drainage = start(p, &eroded, inputs).unwrap();
    let m = 2 * n - 1;
    Ladder {
        input: resample(&island, m, m).unwrap(),
        map: resample(&eroded, m, m).unwrap(),
        drainage: resample_bounded(&drainage, n, n, m, m).unwrap(),
    }
}

/// Runs the pass on a copy of the ladder's level, on the GPU (`Some(ctx)`) or the CPU.
fn run(
    l: &Ladder,
    ctx: Option<&GpuContext>,
    p: &StreamPowerParams,
    r: &RefineParams,
    i: &JobInputs,
) -> (Heightmap, Vec<f32>) {
    let mut map = l.map.clone();
    let mut drainage = l.drainage.clone();
    let mut lv =
        Level { map: &mut map, input: &l.input, drainage: &mut drainage, index: 1, levels: 1, input_range: None };
    let cancel = AtomicBool::new(false);
    match ctx {
        Some(ctx) => stream_power_pass(ctx, p, r, &mut lv, i, &cancel).unwrap(),
        None => pass(p, r, &mut lv, i, &cancel).unwrap(),
    }
    (map, drainage)
}

/// RMS of the GPU's change minus the CPU's, over the RMS of the CPU's change (land nodes), and
/// the largest difference in metres.
fn change_error(before: &Heightmap, cpu: &Heightmap, gpu: &Heightmap) -> (f64, f64) {
    let (mut d2, mut c2, mut max) = (0.0f64, 0.0f64, 0.0f64);
    for ((&b, &c), &g) in before.data.iter().zip(&cpu.data).zip(&gpu.data) {
        let d = (g - c) as f64;
        d2 += d * d;
        c2 += ((c - b) as f64).powi(2);
        max = max.max(d.abs());
    }
    ((d2 / c2.max(1e-30)).sqrt(), max)
}

#[test]
fn the_gpu_pass_matches_the_cpu_pass() {
    let Some(ctx) = test_context() else { return };
    let base = StreamPowerParams { steps: 40, ..Default::default() };
    let sea = JobInputs { sea_level: Some(0.0), seed: 1, ..Default::default() };
    let l = ladder(65, &base, &sea);
    let n = l.map.len();
    // The default pass, then every option the pass reads: n ≠ 1, hardness, terrain-following
    // uplift, walls, no sea, no diffusion, another flow exponent, deposition.
    let hard: Vec<f32> = (0..n).map(|i| 0.5 + ((i * 7919) % 97) as f32 / 97.0).collect();
    let walls = Boundary { left: EdgeMode::Wall, top: EdgeMode::Wall, ..Boundary::all(EdgeMode::Drain) };
    let r = RefineParams::default();
    let cases: Vec<(&str, StreamPowerParams, RefineParams, JobInputs)> = vec![
        ("default", base.clone(), r.clone(), sea.clone()),
        (
            "uniform uplift",
            StreamPowerParams {
                uplift: 2.0e-3,
                uplift_mode: crate::core::erosion::stream_power::UpliftMode::Uniform,
                ..base.clone()
            },
            r.clone(),
            sea.clone(),
        ),
        ("n = 1.5", StreamPowerParams { n: 1.5, ..base.clone() }, r.clone(), sea.clone()),
        ("hardness", base.clone(), r.clone(), JobInputs { hardness: Some(hard), ..sea.clone() }),
        (
            "terrain uplift (the default rule), faster",
            StreamPowerParams { uplift: 2.0e-3, ..base.clone() },
            r.clone(),
            sea.clone(),
        ),
        ("two walls, no sea", base.clone(), r.clone(), JobInputs { boundary: walls, ..Default::default() }),
        ("no diffusion", StreamPowerParams { diffusion: 0.0, ..base.clone() }, r.clone(), sea.clone()),
        ("flow exponent 1", base.clone(), RefineParams { flow_exponent: 1, ..r.clone() }, sea.clone()),
        ("deposition", base.clone(), RefineParams { deposition: 1.0, ..r.clone() }, sea.clone()),
    ];
    for (what, p, r, i) in &cases {
        let (cpu, cpu_a) = run(&l, None, p, r, i);
        let (gpu, gpu_a) = run(&l, Some(&ctx), p, r, i);
        let (rel, max) = change_error(&l.map, &cpu, &gpu);
        let par = parity(&cpu, &gpu, i.sea_level.unwrap_or(-1.0e9), &ParityParams::default()).unwrap();
        // Drainage: the share of nodes within 1 % of the CPU's. On flats a rounding difference
        // can turn a node's steepest receiver, and the drainage below it follows: without a sea
        // the island's flat sea floor is a walled basin (96 % of the nodes within 1 % there).
        let a_close = cpu_a.iter().zip(&gpu_a).filter(|(c, g)| ((*g - *c) / c.abs().max(1.0)).abs() < 0.01).count()
            as f64
            / n as f64;
        eprintln!(
            "{what}: change error {rel:.2e} of the change (max {max:.2e} m), drainage within 1 %: {a_close}, {par:?}"
        );
        // The same stencils: the difference is rounding (f32 vs f64 in the diffusion's lines,
        // WGSL's pow in the Newton solve), far below the change the pass makes.
        assert!(rel < 0.02, "{what}: {rel}");
        assert!(par.meets(0.02, 0.8), "{what}: {par:?}");
        assert!(a_close > 0.95, "{what}: drainage {a_close}");
        assert!(gpu.data.iter().all(|v| v.is_finite()), "{what}");
    }
}

#[test]
fn two_gpu_passes_give_the_same_bits_and_a_cancel_leaves_the_level() {
    let Some(ctx) = test_context() else { return };
    let p = StreamPowerParams { steps: 20, ..Default::default() };
    let i = JobInputs { sea_level: Some(0.0), seed: 1, ..Default::default() };
    let l = ladder(33, &p, &i);
    let r = RefineParams::default();
    let a = run(&l, Some(&ctx), &p, &r, &i);
    let b = run(&l, Some(&ctx), &p, &r, &i);
    assert!(a.0.data.iter().zip(&b.0.data).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert!(a.1.iter().zip(&b.1).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert_ne!(a.0.data, l.map.data, "the pass changes the level");

    let mut map = l.map.clone();
    let mut drainage = l.drainage.clone();
    let mut lv =
        Level { map: &mut map, input: &l.input, drainage: &mut drainage, index: 1, levels: 1, input_range: None };
    stream_power_pass(&ctx, &p, &r, &mut lv, &i, &AtomicBool::new(true)).unwrap();
    assert_eq!(map.data, l.map.data);
    assert_eq!(drainage, l.drainage);
}

#[test]
fn bad_settings_are_the_cpu_passes_errors() {
    let Some(ctx) = test_context() else { return };
    let p = StreamPowerParams { steps: 5, ..Default::default() };
    let i = JobInputs::default();
    let l = ladder(17, &p, &i);
    let mut map = l.map.clone();
    let mut short = vec![1.0f32; 3];
    let mut lv = Level { map: &mut map, input: &l.input, drainage: &mut short, index: 1, levels: 1, input_range: None };
    let cancel = AtomicBool::new(false);
    let e = stream_power_pass(&ctx, &p, &RefineParams::default(), &mut lv, &i, &cancel).unwrap_err();
    assert!(matches!(e, GpuJobError::Job(JobError::BadParam { name: "drainage length", .. })), "{e}");
    let bad = RefineParams { flow_exponent: 0, ..Default::default() };
    let mut drainage = l.drainage.clone();
    let mut lv =
        Level { map: &mut map, input: &l.input, drainage: &mut drainage, index: 1, levels: 1, input_range: None };
    assert!(matches!(stream_power_pass(&ctx, &p, &bad, &mut lv, &i, &cancel), Err(GpuJobError::Job(_))));
    assert_eq!(map.data, l.map.data);
}
