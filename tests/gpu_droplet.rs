//! GPU droplet erosion (issue #7) against itself and against the CPU reference model.
//!
//! Every test needs a wgpu adapter; lavapipe (Mesa's software Vulkan) is enough. Without one a
//! test prints a notice and skips — unless `TALUS_REQUIRE_GPU_TESTS=1` (set by `.ci/test`), when
//! it fails.
#![cfg(feature = "gpu")]

use std::sync::Arc;
use std::time::Instant;

use talus::core::Heightmap;
use talus::core::erosion::droplet::{DropletJob, DropletParams};
use talus::core::erosion::{Boundary, EdgeMode, JobInputs, MapSize, Simulation};
use talus::gpu::context::{GpuContext, GpuError, test_context};
use talus::gpu::droplet::{GpuDropletJob, GpuDropletOptions};

mod common;
use common::grid::{bits, sine_hills as hills};

/// Version 1's defaults on the 1 m cells of these tests (the defaults are version 1's on the
/// default island's 2 m cells), with `count` droplets on a `w × h` map: the rates per step of
/// one node, as the seed has them.
fn v1(count: u64, w: usize, h: usize) -> DropletParams {
    DropletParams {
        droplets_per_km2: MapSize::new(w, h, 1.0).per_km2(count),
        radius_m: 5.0,
        max_path_m: 300.0,
        min_slope_tan: 0.01,
        path_step_m: 1.0,
        ..DropletParams::default()
    }
}

fn ctx() -> Option<Arc<GpuContext>> {
    test_context().map(Arc::new)
}

fn inputs(seed: u64, boundary: Boundary) -> JobInputs {
    JobInputs { hardness: None, boundary, seed, ..Default::default() }
}

fn gpu(ctx: &Arc<GpuContext>, hm: Heightmap, p: &DropletParams, i: JobInputs) -> GpuDropletJob {
    GpuDropletJob::new(ctx.clone(), hm, p.clone(), i, GpuDropletOptions::default()).unwrap()
}

fn run(sim: &mut dyn Simulation) -> f64 {
    let t = Instant::now();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    talus::core::erosion::run(sim, &cancel, |_| {});
    t.elapsed().as_secs_f64()
}

fn pearson(a: &[f32], b: &[f32]) -> f64 {
    let n = a.len() as f64;
    let ma = a.iter().map(|&v| v as f64).sum::<f64>() / n;
    let mb = b.iter().map(|&v| v as f64).sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (x as f64 - ma, y as f64 - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    sab / (saa * sbb).sqrt().max(1e-30)
}

/// The books identities, both to `rel` of the material moved.
fn assert_books_close(l: &talus::core::erosion::Ledger, rel: f64, what: &str) {
    assert!(l.eroded > 0.0, "{what}: nothing eroded: {l:?}");
    assert!(
        l.terrain_error().abs() <= rel * l.moved() && l.material_error().abs() <= rel * l.moved(),
        "{what}: books do not close to {rel}: terrain {:e}, material {:e}, {l:?}",
        l.terrain_error(),
        l.material_error()
    );
}

#[test]
fn two_gpu_runs_are_bit_identical() {
    let Some(ctx) = ctx() else { return };
    let p = v1(4_000, 256, 256);
    let b = Boundary::all(EdgeMode::Drain);
    let mut a = gpu(&ctx, hills(256, 256), &p, inputs(7, b));
    let mut c = gpu(&ctx, hills(256, 256), &p, inputs(7, b));
    let secs = run(&mut a);
    run(&mut c);
    println!("GPU droplets on {} (256², {} in flight): {:.0} droplets/s", ctx.info(), a.in_flight(), 4_000.0 / secs);
    assert_eq!(bits(&a.heightmap().data), bits(&c.heightmap().data), "heights differ between two GPU runs");
    assert_eq!(bits(&a.maps().eroded), bits(&c.maps().eroded));
    assert_eq!(bits(&a.maps().deposited), bits(&c.maps().deposited));
    assert_eq!(a.fields().flow, c.fields().flow);
    assert_eq!(a.fields().flow_volume.map(|v| bits(&v)), c.fields().flow_volume.map(|v| bits(&v)));
    assert_eq!(a.ledger(), c.ledger());
    assert_ne!(bits(&a.heightmap().data), bits(&hills(256, 256).data), "the run changed nothing");
    // A different seed is a different run.
    let mut d = gpu(&ctx, hills(256, 256), &p, inputs(8, b));
    run(&mut d);
    assert_ne!(bits(&a.heightmap().data), bits(&d.heightmap().data));
}

#[test]
fn books_close_for_every_edge_mode_and_nothing_is_created() {
    let Some(ctx) = ctx() else { return };
    for (mode, guard) in
        [(EdgeMode::Drain, true), (EdgeMode::Wall, true), (EdgeMode::Wrap, false), (EdgeMode::Drain, false)]
    {
        let p = DropletParams { floor_at_input_min: guard, ..v1(3_000, 96, 80) };
        let mut j = gpu(&ctx, hills(96, 80), &p, inputs(3, Boundary::all(mode)));
        run(&mut j);
        let l = j.ledger();
        let what = format!("{mode:?} guard={guard}");
        // Fixed-point books are exact; all that is left is the f32 rounding of each node (< ½ ulp).
        assert_books_close(&l, 1e-5, &what);
        assert_eq!(l.suspended, 0.0);
        assert!(l.clamped >= 0.0 && l.clamped <= 1e-3 * l.moved(), "{what}: guard lift {l:?}");
        if mode == EdgeMode::Drain {
            assert!(l.lost_at_border > 0.0, "{what}: {l:?}");
        } else {
            assert_eq!(l.lost_at_border, 0.0, "{what}: {l:?}");
        }
        let net: f64 = j.maps().net().iter().map(|&v| v as f64).sum();
        assert!((net - (l.deposited - l.eroded)).abs() <= 1e-4 * l.moved(), "{what}: maps {net} vs books {l:?}");
        if guard {
            let floor = hills(96, 80).stats().min;
            assert!(j.heightmap().data.iter().all(|&h| h >= floor), "{what}: a node went below the guard");
        }
    }
}

/// The GPU runs droplets in lockstep batches; the CPU reference is its classic serial order
/// (`parallel: false`). Measured on lavapipe (16 000 droplets, 1024 in flight): eroded +2.05 %,
/// deposited +2.04 %, lost +7.4 %, change-map r = 0.994, flow-map r = 0.995.
#[test]
fn statistically_like_the_cpu_model_on_256() {
    let Some(ctx) = ctx() else { return };
    let hm = hills(256, 256);
    let n = 16_000;
    let p = v1(n, 256, 256);
    let b = Boundary::all(EdgeMode::Drain);
    let mut cpu = DropletJob::new(hm.clone(), DropletParams { parallel: false, ..p.clone() }, inputs(11, b)).unwrap();
    let cpu_s = run(&mut cpu);
    let mut g = gpu(&ctx, hm.clone(), &p, inputs(11, b));
    let gpu_s = run(&mut g);
    let (lc, lg) = (cpu.ledger(), g.ledger());
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-12);
    let de = rel(lg.eroded, lc.eroded);
    let dd = rel(lg.deposited, lc.deposited);
    let dl = rel(lg.lost_at_border, lc.lost_at_border);
    let net = |j: &dyn Simulation| j.heightmap().data.iter().zip(&hm.data).map(|(a, b)| a - b).collect::<Vec<f32>>();
    let corr = pearson(&net(&g), &net(&cpu));
    let fc = pearson(g.fields().flow.as_deref().unwrap(), cpu.fields().flow.as_deref().unwrap());
    println!(
        "256², {n} droplets, {} in flight: eroded GPU {:.1} / CPU serial {:.1} ({:+.2}%), deposited {:+.2}%, lost {:+.1}%, \
         change-map r = {corr:.3}, flow r = {fc:.3}; GPU {:.0} droplets/s on {}, CPU serial {:.0} droplets/s",
        g.in_flight(),
        lg.eroded,
        lc.eroded,
        100.0 * (lg.eroded / lc.eroded - 1.0),
        100.0 * (lg.deposited / lc.deposited - 1.0),
        100.0 * (lg.lost_at_border / lc.lost_at_border.max(1e-12) - 1.0),
        n as f64 / gpu_s,
        ctx.info().name,
        n as f64 / cpu_s
    );
    assert!(de < 0.05, "eroded volume differs by {:.1}%", de * 100.0);
    assert!(dd < 0.05, "deposited volume differs by {:.1}%", dd * 100.0);
    assert!(dl < 0.25, "border loss differs by {:.1}%", dl * 100.0);
    assert!(corr > 0.9, "change maps correlate only {corr}");
    assert!(fc > 0.8, "flow maps correlate only {fc}");
    assert_books_close(&lg, 1e-5, "gpu");
}

#[test]
fn paths_match_the_cpu_when_the_terrain_does_not_change() {
    // With erosion and deposition off the dispatch-start heights are the heights: every droplet
    // must walk the CPU's path (same spawn from the same random stream, same steps), so the flow
    // maps agree up to float contraction differences between the two compilers.
    let Some(ctx) = ctx() else { return };
    let hm = hills(128, 128);
    let p = DropletParams { erosion: 0.0, deposition: 0.0, ..v1(3_000, 128, 128) };
    for b in [Boundary::all(EdgeMode::Drain), Boundary::all(EdgeMode::Wall), Boundary::all(EdgeMode::Wrap)] {
        let mut cpu = DropletJob::new(hm.clone(), p.clone(), inputs(5, b)).unwrap();
        run(&mut cpu);
        let mut g = gpu(&ctx, hm.clone(), &p, inputs(5, b));
        run(&mut g);
        let (fc, fg) = (cpu.fields().flow.unwrap(), g.fields().flow.unwrap());
        let total: f64 = fc.iter().map(|&v| v as f64).sum();
        let diff: f64 = fc.iter().zip(&fg).map(|(a, b)| (a - b).abs() as f64).sum();
        println!("{b:?}: {total} visits, {diff} differ");
        assert!(total > 3_000.0 * 5.0, "{b:?}: droplets died at once ({total} visits)");
        assert!(diff <= 0.01 * total, "{b:?}: flow maps differ in {diff} of {total} visits");
        assert_eq!(g.heightmap().data, hm.data, "{b:?}: nothing may change with erosion and deposition off");
    }
}

#[test]
fn hardness_zero_protects_and_bad_inputs_are_refused() {
    let Some(ctx) = ctx() else { return };
    let hm = hills(64, 64);
    let p = v1(2_000, 64, 64);
    let i = JobInputs { hardness: Some(vec![0.0; 64 * 64]), ..inputs(1, Boundary::default()) };
    let mut j = GpuDropletJob::new(ctx.clone(), hm.clone(), p.clone(), i, GpuDropletOptions::default()).unwrap();
    run(&mut j);
    assert_eq!(j.ledger().eroded, 0.0);
    assert_eq!(j.heightmap().data, hm.data);
    let bad = DropletParams { radius_m: 0.0, ..p.clone() };
    assert!(
        GpuDropletJob::new(ctx.clone(), hm.clone(), bad, inputs(1, Boundary::default()), GpuDropletOptions::default())
            .is_err()
    );
    let i = JobInputs { hardness: Some(vec![1.0; 3]), ..inputs(1, Boundary::default()) };
    assert!(GpuDropletJob::new(ctx.clone(), hm.clone(), p.clone(), i, GpuDropletOptions::default()).is_err());
    let mut nan = hm.clone();
    nan.data[5] = f32::NAN;
    assert!(
        GpuDropletJob::new(ctx.clone(), nan, p, inputs(1, Boundary::default()), GpuDropletOptions::default()).is_err()
    );
}

#[test]
fn edits_rebase_the_books_and_a_fault_continues_on_the_cpu() {
    let Some(ctx) = ctx() else { return };
    let p = DropletParams { batch: 1000, ..v1(12_000, 96, 96) };
    let opts = GpuDropletOptions { in_flight: Some(1000) };
    let mut j = GpuDropletJob::new(ctx.clone(), hills(96, 96), p, inputs(9, Boundary::default()), opts).unwrap();
    j.step();
    j.step();
    // A brush stroke while the job runs: raise a block by 3 m (and far above the old range).
    j.edit_terrain(&mut |hm: &mut Heightmap| {
        for y in 10..20 {
            for x in 10..20 {
                hm.data[y * 96 + x] += 3.0;
            }
        }
        hm.data[0] = 5000.0;
    });
    assert_eq!(j.heightmap().data[0], 5000.0);
    // An edit that changes the geometry is refused whole.
    let before = j.heightmap().data.clone();
    j.edit_terrain(&mut |hm: &mut Heightmap| hm.data.push(1.0));
    assert_eq!(j.heightmap().data, before);
    j.step();
    assert_books_close(&j.ledger(), 1e-5, "after edits");
    // The device goes away mid-run: the job must finish on the CPU with the books still closed.
    j.simulate_fault(GpuError::DeviceLost("test".into()));
    assert!(j.fault().is_some());
    let done = j.progress().done;
    run(&mut j);
    assert_eq!(j.progress().done, 12_000);
    assert!(done < 12_000);
    assert_books_close(&j.ledger(), 1e-4, "after the fallback");
    assert!(j.fields().flow.unwrap().iter().sum::<f32>() > 0.0);
}

/// World units on the GPU: the job converts to the same grid units as the CPU job (so the two
/// agree where they did), and version-1 values run to the same bits as their world values.
#[test]
fn the_gpu_converts_world_and_version_1_units_like_the_cpu() {
    let Some(ctx) = ctx() else { return };
    let mut hm = hills(96, 96);
    hm.cell_size = 2.0;
    let old: DropletParams =
        ron::from_str("(droplets: 2000, radius: 3.0, max_lifetime: 120, min_slope: 0.02)").unwrap();
    let mut new = old.clone();
    new.upgrade_units(MapSize::of(&hm));
    assert_eq!((new.radius_m, new.max_path_m, new.min_slope_tan), (6.0, 240.0, 0.01));
    let b = Boundary::default();
    let cpu = DropletJob::new(hm.clone(), new.clone(), inputs(4, b)).unwrap();
    let mut a = gpu(&ctx, hm.clone(), &old, inputs(4, b));
    let mut c = gpu(&ctx, hm.clone(), &new, inputs(4, b));
    assert_eq!(a.grid_params(), cpu.grid_params());
    assert_eq!(a.params(), &new);
    assert_eq!(a.progress().total, 2000);
    run(&mut a);
    run(&mut c);
    assert!(a.ledger().eroded > 0.0);
    assert_eq!(bits(&a.heightmap().data), bits(&c.heightmap().data));

    // On 8 m cells the rates are compounded per metre of path and the erosion cap scaled, the
    // same on both (the kernel takes them from the same grid values), and the GPU run books
    // about what the CPU's does.
    hm.cell_size = 8.0;
    let mut cpu = DropletJob::new(hm.clone(), new.clone(), inputs(4, b)).unwrap();
    let mut g = gpu(&ctx, hm, &new, inputs(4, b));
    let grid = g.grid_params();
    assert_eq!(grid, cpu.grid_params());
    assert!(grid.dig == 1.0 / 16.0 && grid.capacity == new.capacity / 64.0, "{grid:?}");
    run(&mut cpu);
    run(&mut g);
    let (lc, lg) = (cpu.ledger().eroded, g.ledger().eroded);
    assert!(lc > 0.0 && (lg / lc - 1.0).abs() < 0.15, "eroded GPU {lg} vs CPU {lc}");
}
