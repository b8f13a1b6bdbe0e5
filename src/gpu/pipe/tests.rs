//! GPU vs CPU parity, books, determinism. Every test opens a context with
//! [`crate::gpu::context::test_context`]: with `TALUS_REQUIRE_GPU_TESTS=1` (CI, lavapipe) a
//! missing adapter fails the test; without it the test prints a notice and skips.

use super::*;
use crate::core::erosion::pipe::{PipeJob, RiverSource};
use crate::core::erosion::thermal::ThermalJob;
use crate::core::erosion::{Boundary, EdgeMode};
use crate::core::rng::{hash2, signed_f32};
use crate::gpu::context::test_context;

#[test]
fn the_uniform_block_matches_the_wgsl() {
    // Every kernel is `pipe_common.wgsl` (which declares `Params`) followed by its own source.
    for kernel in [FLUX, WATER, ADVECT, MACCORMACK, REMAP, THERMAL1, THERMAL2] {
        crate::gpu::uniform::assert_matches_wgsl::<GpuParams>(&format!("{COMMON}\n{kernel}"), "Params");
    }
    assert_eq!(std::mem::size_of::<GpuParams>(), 128);
}

fn terrain(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        40.0 + 0.15 * fx + 6.0 * (fx * 0.07).sin() * (fy * 0.05).cos() + 0.4 * signed_f32(hash2(x as i64, y as i64, 7))
    })
    .unwrap()
}

/// Max abs and RMS of `a − b`.
fn diff(a: &[f32], b: &[f32]) -> (f64, f64) {
    assert_eq!(a.len(), b.len());
    let mut mx = 0.0f64;
    let mut ss = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        let d = (*x as f64 - *y as f64).abs();
        mx = mx.max(d);
        ss += d * d;
    }
    (mx, (ss / a.len() as f64).sqrt())
}

fn run(sim: &mut dyn Simulation) {
    while !sim.is_done() {
        sim.step();
    }
}

/// Tolerances of the parity tests (metres), measured on lavapipe (see the README):
/// max |Δ| and RMS of heights, water and sediment after the run.
struct Tol {
    height: (f64, f64),
    water: (f64, f64),
    sediment: (f64, f64),
}

fn compare(label: &str, gpu: &GpuErosionJob, cpu: &dyn Simulation, tol: &Tol) {
    let (gh, ch) = (gpu.heightmap(), cpu.heightmap());
    let dh = diff(&gh.data, &ch.data);
    let (gf, cf) = (gpu.fields(), cpu.fields());
    let dw = match (&gf.water, &cf.water) {
        (Some(a), Some(b)) => diff(a, b),
        _ => (0.0, 0.0),
    };
    let ds = match (&gf.sediment, &cf.sediment) {
        (Some(a), Some(b)) => diff(a, b),
        _ => (0.0, 0.0),
    };
    let (gl, cl) = (gpu.ledger(), cpu.ledger());
    eprintln!(
        "{label}: heights max {:.3e} rms {:.3e} | water max {:.3e} rms {:.3e} | sediment max {:.3e} rms {:.3e} | eroded gpu {:.6} cpu {:.6} | gpu books terrain err {:.2e} material err {:.2e} (moved {:.4})",
        dh.0,
        dh.1,
        dw.0,
        dw.1,
        ds.0,
        ds.1,
        gl.eroded,
        cl.eroded,
        gl.terrain_error(),
        gl.material_error(),
        gl.moved()
    );
    assert!(dh.0 <= tol.height.0 && dh.1 <= tol.height.1, "{label}: heights differ {dh:?}");
    assert!(dw.0 <= tol.water.0 && dw.1 <= tol.water.1, "{label}: water differs {dw:?}");
    assert!(ds.0 <= tol.sediment.0 && ds.1 <= tol.sediment.1, "{label}: sediment differs {ds:?}");
    assert!(gl.moved() > 1e-3, "{label}: nothing moved, the comparison would prove nothing");
    assert!(gl.closes(1e-4), "{label}: GPU books do not close: {gl:?}");
    // The books agree with the CPU's to the same order as the fields.
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-9);
    assert!(rel(gl.eroded, cl.eroded) < 1e-3, "{label}: eroded {} vs {}", gl.eroded, cl.eroded);
    assert!(rel(gl.deposited, cl.deposited) < 1e-3, "{label}: deposited {} vs {}", gl.deposited, cl.deposited);
    assert!(
        (gl.lost_at_border - cl.lost_at_border).abs() <= 1e-3 * cl.moved(),
        "{label}: lost {} vs {}",
        gl.lost_at_border,
        cl.lost_at_border
    );
}

const TOL: Tol = Tol { height: (2e-3, 1e-4), water: (2e-3, 1e-4), sediment: (2e-3, 1e-4) };

fn parity(label: &str, n: usize, p: PipeParams, inputs: JobInputs, tol: &Tol) {
    let Some(ctx) = test_context() else { return };
    let ctx = Arc::new(ctx);
    let hm = terrain(n);
    let mut gpu = GpuErosionJob::pipe(ctx, hm.clone(), p.clone(), inputs.clone()).unwrap();
    let mut cpu = PipeJob::new(hm, p, inputs).unwrap();
    run(&mut gpu);
    run(&mut cpu);
    assert!(gpu.fault().is_none(), "{:?}", gpu.fault());
    compare(label, &gpu, &cpu, tol);
    let (gw, cw) = (gpu.water_budget(), cpu.water_budget());
    assert!(gw.error().abs() <= 1e-4 * gw.rain, "{label}: GPU water books {gw:?}");
    assert!((gw.drained - cw.drained).abs() <= 1e-3 * cw.rain.max(1e-9), "{label}: drained {gw:?} vs {cw:?}");
}

#[test]
fn gpu_matches_cpu_pipe_semi_lagrangian_256() {
    let p = PipeParams {
        steps: 200,
        rain: 0.02,
        sources: vec![RiverSource { x_m: 40.0, y_m: 128.0, radius_m: 3.0, intensity: 0.5, ..Default::default() }],
        ..Default::default()
    };
    let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Drain, top: EdgeMode::Wall, bottom: EdgeMode::Drain };
    parity("SL 256² 200 steps", 256, p, JobInputs { boundary: b, ..Default::default() }, &TOL);
}

/// A steering mask (an erosion-brush dab's disc, with a sea) weights the rain and a source on
/// both sides alike; with sinks (the disc's outside), water and sediment leave there alike.
#[test]
fn gpu_matches_cpu_pipe_with_a_steering_mask_256() {
    use crate::core::brush::Falloff;
    use crate::core::erosion::Steer;
    use crate::core::erosion::steer::disc_mask;
    let p = PipeParams {
        steps: 150,
        rain: 0.02,
        sources: vec![RiverSource { x_m: 120.0, y_m: 100.0, radius_m: 3.0, intensity: 0.5, ..Default::default() }],
        ..Default::default()
    };
    let weights = disc_mask(256, 256, [128.0, 110.0], 60.0, Falloff::Smooth);
    assert!(weights.contains(&0.0) && weights.iter().any(|&w| w > 0.0 && w < 1.0));
    let steered =
        JobInputs { steer: Some(Steer::new(weights.clone(), false)), sea_level: Some(45.0), ..Default::default() };
    parity("SL 256² 150 steps, a dab's disc and a sea", 256, p.clone(), steered, &TOL);
    let hardness = Some((0..256 * 256).map(|i| 0.5 + (i % 7) as f32 * 0.1).collect());
    let sunk = JobInputs { steer: Some(Steer::new(weights, true)), hardness, ..Default::default() };
    let thermal = Some(ThermalParams { iterations: 1, iteration_cell_m: 1.0, ..Default::default() });
    parity("SL 256² 150 steps, sinks outside a disc, hardness, thermal", 256, PipeParams { thermal, ..p }, sunk, &TOL);
}

#[test]
fn gpu_matches_cpu_pipe_maccormack_thermal_hardness_256() {
    let n = 256;
    let hardness: Vec<f32> = (0..n * n).map(|i| if (i % n) < n / 3 { 0.3 } else { 1.0 }).collect();
    let rain_map: Vec<f32> = (0..n * n).map(|i| 0.005 + 0.02 * ((i / n) as f32 / n as f32)).collect();
    let p = PipeParams {
        steps: 120,
        rain_map: Some(rain_map),
        advection: Advection::MacCormack,
        max_depth: 0.05,
        thermal: Some(ThermalParams { talus_angle: 20.0, iterations: 3, iteration_cell_m: 1.0, ..Default::default() }),
        thermal_every: 2,
        ..Default::default()
    };
    let b = Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall };
    parity(
        "MacCormack+thermal 256² 120 steps",
        n,
        p,
        JobInputs { boundary: b, hardness: Some(hardness), seed: 1, ..Default::default() },
        &TOL,
    );
}

#[test]
fn gpu_matches_cpu_pipe_conservative_256() {
    let p = PipeParams { steps: 150, advection: Advection::Conservative, rain: 0.03, ..Default::default() };
    parity(
        "conservative 256² 150 steps",
        256,
        p,
        JobInputs { boundary: Boundary::all(EdgeMode::Drain), ..Default::default() },
        &TOL,
    );
}

/// The sea (issue #13): nothing is eroded below it, its surface stays at its level, what reaches
/// it settles no higher than that level, and its water books agree, on both sides.
#[test]
fn gpu_matches_cpu_pipe_with_a_sea_256() {
    let p = PipeParams { steps: 150, rain: 0.03, ..Default::default() };
    let inputs = JobInputs { boundary: Boundary::all(EdgeMode::Drain), sea_level: Some(55.0), ..Default::default() };
    parity("sea 256² 150 steps", 256, p.clone(), inputs.clone(), &TOL);
    let Some(ctx) = test_context() else { return };
    let hm = terrain(256);
    let mut gpu = GpuErosionJob::pipe(Arc::new(ctx), hm.clone(), p.clone(), inputs.clone()).unwrap();
    let mut cpu = PipeJob::new(hm.clone(), p, inputs).unwrap();
    run(&mut gpu);
    run(&mut cpu);
    let d = gpu.fields().water.unwrap();
    for ((a, b), w) in gpu.heightmap().data.iter().zip(&hm.data).zip(&d) {
        assert!(*a >= b.min(55.0), "eroded below the sea: {b} → {a}");
        if *b <= 55.0 {
            assert!(*a <= 55.0, "the sea floor {b} rose to {a}");
        }
        if *a < 55.0 {
            assert!((a + w - 55.0).abs() <= 1e-5, "sea surface at {}", a + w);
        }
    }
    let (gw, cw) = (gpu.water_budget(), cpu.water_budget());
    assert!(gw.sea != 0.0 && (gw.sea - cw.sea).abs() <= 1e-4 * gw.rain, "sea books {gw:?} vs {cw:?}");
    assert!(gw.error().abs() <= 1e-4 * gw.rain, "GPU water books {gw:?}");
}

/// The sea with the conservative remap and interleaved thermal erosion, walls and a sea covering
/// most of the map.
#[test]
fn gpu_matches_cpu_pipe_conservative_thermal_with_a_sea_256() {
    let p = PipeParams {
        steps: 120,
        rain: 0.03,
        advection: Advection::Conservative,
        thermal: Some(ThermalParams { talus_angle: 25.0, iterations: 2, iteration_cell_m: 1.5, ..Default::default() }),
        ..Default::default()
    };
    let inputs = JobInputs { boundary: Boundary::all(EdgeMode::Wall), sea_level: Some(62.0), ..Default::default() };
    parity("sea, conservative + thermal 256² 120 steps", 256, p, inputs, &TOL);
}

#[test]
fn gpu_matches_cpu_thermal_alone_256() {
    let Some(ctx) = test_context() else { return };
    let hm = Heightmap::from_fn(256, 256, 1.0, |x, y| 30.0 * signed_f32(hash2(x as i64, y as i64, 3)) + 0.3 * x as f32)
        .unwrap();
    let p = ThermalParams { iterations: 40, iteration_cell_m: 1.0, ..Default::default() };
    let inputs = JobInputs {
        boundary: Boundary {
            left: EdgeMode::Drain,
            right: EdgeMode::Wall,
            top: EdgeMode::Wrap,
            bottom: EdgeMode::Wrap,
        },
        ..Default::default()
    };
    let mut gpu = GpuErosionJob::thermal(Arc::new(ctx), hm.clone(), p.clone(), inputs.clone()).unwrap();
    let mut cpu = ThermalJob::new(hm, p, inputs).unwrap();
    run(&mut gpu);
    run(&mut cpu);
    compare(
        "thermal 256² 40 iterations",
        &gpu,
        &cpu,
        &Tol { height: (1e-3, 1e-4), water: (0.0, 0.0), sediment: (0.0, 0.0) },
    );
    let d = diff(&gpu.maps().eroded, &cpu.maps().eroded);
    assert!(d.0 < 1e-3, "maps differ {d:?}");
}

#[test]
fn gpu_runs_are_bit_identical_and_independent_of_the_batch_size() {
    let Some(ctx) = test_context() else { return };
    let ctx = Arc::new(ctx);
    let p = PipeParams {
        steps: 30,
        // Counted on 1.5 m cells: 4.5 kernel iterations an application on these 1 m cells, 4 and 5
        // in turn, the same whichever batch the step falls in.
        thermal: Some(ThermalParams { iterations: 2, iteration_cell_m: 1.5, ..Default::default() }),
        ..Default::default()
    };
    let mut snaps = Vec::new();
    for batch in [1, 7, 30] {
        let mut j = GpuErosionJob::pipe(ctx.clone(), terrain(96), p.clone(), JobInputs::default()).unwrap();
        j.set_batch(batch);
        run(&mut j);
        snaps.push((j.heightmap().data.clone(), j.fields().sediment.unwrap(), j.ledger()));
    }
    for s in &snaps[1..] {
        assert!(s.0 == snaps[0].0 && s.1 == snaps[0].1, "results depend on the batch size");
        assert_eq!(s.2, snaps[0].2);
    }
    assert!(snaps[0].2.eroded > 0.0);
}

#[test]
fn edits_upload_and_rebase_the_books() {
    let Some(ctx) = test_context() else { return };
    let p = PipeParams { steps: 20, ..Default::default() };
    let mut j = GpuErosionJob::pipe(Arc::new(ctx), terrain(64), p, JobInputs::default()).unwrap();
    j.set_batch(5);
    j.step();
    j.edit_terrain(&mut |hm| {
        let v = hm.get(10, 10);
        hm.set(10, 10, v + 5.0);
    });
    // A refused edit (size change) leaves the job alone.
    j.edit_terrain(&mut |hm| hm.data.push(1.0));
    assert_eq!(j.heightmap().data.len(), 64 * 64);
    run(&mut j);
    let l = j.ledger();
    assert!(l.closes(1e-4), "{l:?}");
    assert!(j.heightmap().get(10, 10) > 44.0, "the edit reached the GPU");
}

#[test]
fn bad_parameters_are_refused_like_on_the_cpu() {
    let Some(ctx) = test_context() else { return };
    let ctx = Arc::new(ctx);
    let p = PipeParams { dt: -1.0, ..Default::default() };
    let cpu = PipeJob::new(terrain(16), p.clone(), JobInputs::default()).err().unwrap();
    let gpu = GpuErosionJob::pipe(ctx.clone(), terrain(16), p, JobInputs::default()).err().unwrap();
    assert_eq!(gpu, GpuJobError::Job(cpu));
    let mut bad = terrain(16);
    bad.data[3] = f32::NAN;
    assert!(matches!(
        GpuErosionJob::pipe(ctx.clone(), bad, PipeParams::default(), JobInputs::default()),
        Err(GpuJobError::Job(JobError::NonFinite))
    ));
    let inputs = JobInputs { hardness: Some(vec![1.0; 3]), ..Default::default() };
    assert!(matches!(
        GpuErosionJob::thermal(ctx, terrain(16), ThermalParams::default(), inputs),
        Err(GpuJobError::Job(JobError::HardnessSize { .. }))
    ));
}

#[test]
fn tiny_and_odd_maps_run() {
    let Some(ctx) = test_context() else { return };
    let ctx = Arc::new(ctx);
    for (w, h) in [(1, 1), (2, 3), (17, 5), (33, 1)] {
        let hm = Heightmap::from_fn(w, h, 1.0, |x, y| (x * 3 + y) as f32).unwrap();
        let p = PipeParams { steps: 5, thermal: Some(ThermalParams::default()), ..Default::default() };
        let mut g = GpuErosionJob::pipe(ctx.clone(), hm.clone(), p.clone(), JobInputs::default()).unwrap();
        let mut c = PipeJob::new(hm, p, JobInputs::default()).unwrap();
        run(&mut g);
        run(&mut c);
        let d = diff(&g.heightmap().data, &c.heightmap().data);
        assert!(d.0 < 1e-4, "{w}×{h}: {d:?}");
    }
}

/// Thermal erosion alone with a sea (pairs of nodes at or below it settle to the underwater
/// angle), a steering mask (an erodibility multiplier) and a hardness map, against the CPU; two
/// GPU runs give the same bits, and the sea changes the result (it is not ignored).
#[test]
fn gpu_matches_cpu_thermal_with_a_sea_and_a_mask_256() {
    let Some(ctx) = test_context() else { return };
    let ctx = Arc::new(ctx);
    let n = 256;
    let hm =
        Heightmap::from_fn(n, n, 1.0, |x, y| 30.0 * signed_f32(hash2(x as i64, y as i64, 5)) + 0.3 * x as f32).unwrap();
    let mut sorted = hm.data.clone();
    sorted.sort_by(f32::total_cmp);
    let sea = sorted[sorted.len() / 2];
    let hardness: Vec<f32> = (0..n * n).map(|i| if (i / n) < n / 4 { 0.4 } else { 1.0 }).collect();
    let mask: Vec<f32> = (0..n * n).map(|i| ((i % n) as f32 / n as f32).min(1.0)).collect();
    let p = ThermalParams { iterations: 40, underwater_angle: 15.0, iteration_cell_m: 1.0, ..Default::default() };
    let inputs = JobInputs {
        boundary: Boundary {
            left: EdgeMode::Drain,
            right: EdgeMode::Wall,
            top: EdgeMode::Wrap,
            bottom: EdgeMode::Wrap,
        },
        hardness: Some(hardness),
        sea_level: Some(sea),
        steer: Some(crate::core::erosion::Steer::new(mask, true)),
        ..Default::default()
    };
    let gpu_run = |inputs: &JobInputs| {
        let mut g = GpuErosionJob::thermal(ctx.clone(), hm.clone(), p.clone(), inputs.clone()).unwrap();
        run(&mut g);
        g
    };
    let gpu = gpu_run(&inputs);
    let mut cpu = ThermalJob::new(hm.clone(), p.clone(), inputs.clone()).unwrap();
    run(&mut cpu);
    compare(
        "thermal, sea at the median + mask + hardness 256² 40 iterations",
        &gpu,
        &cpu,
        &Tol { height: (1e-3, 1e-4), water: (0.0, 0.0), sediment: (0.0, 0.0) },
    );
    let d = diff(&gpu.maps().deposited, &cpu.maps().deposited);
    assert!(d.0 < 1e-3, "maps differ {d:?}");
    let again = gpu_run(&inputs);
    let bits = |j: &GpuErosionJob| j.heightmap().data.iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&gpu), bits(&again), "two GPU runs differ");
    assert_eq!(gpu.ledger(), again.ledger());
    let dry = gpu_run(&JobInputs { sea_level: None, ..inputs.clone() });
    let d = diff(&gpu.heightmap().data, &dry.heightmap().data);
    assert!(d.0 > 0.1, "the sea changed nothing: {d:?}");
}
