//! Tests of [`super`] (GPU droplets).

use super::device::grid;
use super::*;

#[test]
fn units_are_powers_of_two_with_headroom() {
    assert_eq!(unit_exp(100.0), 6 - 31);
    assert_eq!(unit_exp(1.0), -31);
    assert_eq!(unit_exp(0.0), -20 - 31);
    assert_eq!(pow2(-25), 2f32.powi(-25));
    // 256 units per f32 ulp of the highest node.
    let ulp = f32::from_bits(100f32.to_bits() + 1) - 100.0;
    assert_eq!(ulp / pow2(unit_exp(100.0)), 256.0);
}

#[test]
fn brushes_match_the_cpu_definition() {
    let (taps, n) = brush_taps(5.0);
    assert_eq!(taps.len(), 16 * n as usize);
    for v in taps.chunks(n as usize) {
        let s: f32 = v.iter().map(|t| t[2]).sum();
        assert!((s - 1.0).abs() < 1e-5, "{s}");
        assert!(v.iter().all(|t| t[2] >= 0.0 && (t[0] * t[0] + t[1] * t[1]).sqrt() < 7.0));
    }
}

#[test]
fn the_uniform_block_matches_the_wgsl() {
    crate::gpu::uniform::assert_matches_wgsl::<DropletUniform>(SHADER, "Params");
    assert_eq!(std::mem::size_of::<DropletUniform>(), 208);
}

/// The parameter block is read-only storage, never a uniform: the brush loops run to `P.taps`,
/// and lavapipe (Mesa 22.3) recompiles a kernel whose loop bounds read a uniform at every bind
/// of its pipeline, leaking each copy. As a uniform, 2 000 droplets on 32² took 20 s and 2.2 GB
/// there; as storage, 2.8 s and 160 MB, the same bits.
#[test]
fn the_parameter_block_is_not_a_uniform() {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(SHADER).expect("droplet.wgsl parses");
    let params = module
        .global_variables
        .iter()
        .map(|(_, g)| g)
        .find(|g| g.binding.as_ref().is_some_and(|b| b.group == 0 && b.binding == 0))
        .expect("binding 0 of group 0");
    assert_eq!(params.name.as_deref(), Some("P"));
    assert_eq!(params.space, naga::AddressSpace::Storage { access: naga::StorageAccess::LOAD });
}

#[test]
fn dispatch_grids_cover_every_thread() {
    for t in [1u32, 63, 64, 65, 4_194_304, 16_777_216] {
        let (x, y, row) = grid(t, 64);
        assert!(x <= 65_535 && y <= 65_535);
        assert!(x as u64 * y as u64 * 64 >= t as u64 && row == x * 64);
    }
}

// ---- The sea and steering masks, against the CPU model (lavapipe in CI).

use crate::core::erosion::droplet::DropletJob;
use crate::core::erosion::{Boundary, Steer};

fn ctx() -> Option<Arc<GpuContext>> {
    crate::gpu::context::test_context().map(Arc::new)
}

fn run(sim: &mut dyn Simulation) -> f64 {
    let t = std::time::Instant::now();
    crate::core::erosion::run(sim, &std::sync::atomic::AtomicBool::new(false), |_| {});
    t.elapsed().as_secs_f64()
}

/// The default island (the demo's generator, seed 1) at `size`², its sea at 0 m.
fn island(size: usize) -> Heightmap {
    crate::core::generate::generate(&crate::core::generate::demo_params(size, 1)).unwrap()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// What a sea run did to the coast: input land nodes (above `sea`) that ended strictly below it
/// and the deepest of them; input sea nodes (at or below it) that ended lower than they started
/// and the most one was dug; input sea nodes that ended above the sea, and the highest of them.
#[derive(Debug, Default)]
struct Coast {
    land: usize,
    land_under: usize,
    land_deepest: f32,
    sea_dug: usize,
    sea_dug_most: f32,
    sea_above: usize,
    sea_above_most: f32,
}

fn coast(before: &Heightmap, after: &Heightmap, sea: f32) -> Coast {
    let mut c = Coast::default();
    for (&a, &b) in before.data.iter().zip(&after.data) {
        if a > sea {
            c.land += 1;
            if b < sea {
                c.land_under += 1;
                c.land_deepest = c.land_deepest.max(sea - b);
            }
        } else {
            if b < a {
                c.sea_dug += 1;
                c.sea_dug_most = c.sea_dug_most.max(a - b);
            }
            if b > sea {
                c.sea_above += 1;
                c.sea_above_most = c.sea_above_most.max(b - sea);
            }
        }
    }
    c
}

/// Single-node pits and spikes on land (interior nodes above the sea more than the CPU's
/// tolerance beyond all eight neighbours).
fn extremes(hm: &Heightmap, sea: f32) -> usize {
    let (w, h) = (hm.width, hm.height);
    let tol = crate::core::erosion::particles::EXTREME_TOLERANCE;
    let mut n = 0;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let c = hm.data[y * w + x];
            if c <= sea {
                continue;
            }
            let nb: Vec<f32> =
                (0..9).filter(|&k| k != 4).map(|k| hm.data[(y + k / 3 - 1) * w + x + k % 3 - 1]).collect();
            let (lo, hi) = nb.iter().fold((f32::MAX, f32::MIN), |(l, u), &v| (l.min(v), u.max(v)));
            n += (lo > sea && (c > hi + tol || c < lo - tol)) as usize;
        }
    }
    n
}

/// The sea on the GPU against the CPU model's sea mode (its classic serial order) on the default
/// island: the same coast rules (nothing dug below the sea or out of it; the load of a droplet at
/// the sea fills nodes up to the water line, never above it; land deposits spread over a disc;
/// the isolated extremes levelled at the end), books that close, erosion within a few per cent.
#[test]
fn gpu_matches_cpu_with_a_sea_on_the_island() {
    let Some(ctx) = ctx() else { return };
    let hm = island(257);
    let sea = 0.0;
    let p = DropletParams { droplets_per_km2: MapSize::of(&hm).per_km2(12_000), ..DropletParams::default() };
    let inputs = JobInputs { seed: 1, sea_level: Some(sea), ..Default::default() };
    let mut cpu = DropletJob::new(hm.clone(), DropletParams { parallel: false, ..p.clone() }, inputs.clone()).unwrap();
    let cpu_s = run(&mut cpu);
    let mut gpu = GpuDropletJob::new(ctx.clone(), hm.clone(), p, inputs, GpuDropletOptions::default()).unwrap();
    let gpu_s = run(&mut gpu);
    let (lc, lg) = (cpu.ledger(), gpu.ledger());
    let (cc, cg) = (coast(&hm, cpu.heightmap(), sea), coast(&hm, gpu.heightmap(), sea));
    let (ec, eg) = (extremes(cpu.heightmap(), sea), extremes(gpu.heightmap(), sea));
    let net = |j: &dyn Simulation| j.heightmap().data.iter().zip(&hm.data).map(|(a, b)| a - b).collect::<Vec<f32>>();
    let corr = pearson(&net(&gpu), &net(&cpu));
    let sea_dep = |j: &dyn Simulation| -> f64 {
        j.maps().deposited.iter().zip(&hm.data).filter(|(_, h)| **h <= sea).map(|(&d, _)| d as f64).sum()
    };
    let rel = |a: f64, b: f64| a / b - 1.0;
    eprintln!(
        "island 257², 12 000 droplets, sea 0 m, {} in flight: eroded GPU {:.1} / CPU {:.1} ({:+.2} %), deposited {:+.2} %, \
         into the sea GPU {:.1} / CPU {:.1} ({:+.2} %), lost GPU {:.1} / CPU {:.1}, change-map r = {corr:.3}; extremes GPU {eg} CPU {ec}; \
         GPU books terrain {:.1e} material {:.1e} of {:.1} moved; GPU {gpu_s:.1} s, CPU {cpu_s:.1} s\n  CPU {cc:?}\n  GPU {cg:?}",
        gpu.in_flight(),
        lg.eroded,
        lc.eroded,
        100.0 * rel(lg.eroded, lc.eroded),
        100.0 * rel(lg.deposited, lc.deposited),
        sea_dep(&gpu),
        sea_dep(&cpu),
        100.0 * rel(sea_dep(&gpu), sea_dep(&cpu)),
        lg.lost_at_border,
        lc.lost_at_border,
        lg.terrain_error(),
        lg.material_error(),
        lg.moved(),
    );
    assert!(lg.closes(1e-5), "GPU books: {lg:?}");
    assert!(rel(lg.eroded, lc.eroded).abs() < 0.05, "eroded {} vs {}", lg.eroded, lc.eroded);
    assert!(rel(lg.deposited, lc.deposited).abs() < 0.05, "deposited {} vs {}", lg.deposited, lc.deposited);
    assert!(rel(sea_dep(&gpu), sea_dep(&cpu)).abs() < 0.1, "into the sea {} vs {}", sea_dep(&gpu), sea_dep(&cpu));
    assert!(corr > 0.9, "change maps correlate only {corr}");
    // Nothing is dug below the sea, nor out of it, on either side.
    for c in [&cc, &cg] {
        assert_eq!((c.land_under, c.sea_dug), (0, 0), "{c:?}");
    }
    // Sea nodes end above the water line only where land deposits reached them, as on the CPU.
    assert!(cg.sea_above <= cc.sea_above + cc.sea_above / 2 + 10, "GPU {cg:?} vs CPU {cc:?}");
    assert!(eg <= ec + 5, "{eg} pits and spikes on land (CPU {ec})");
}

/// The load of a droplet at the sea fills nodes up to the water line and never above it, even
/// with thousands of droplets in flight filling the same shallow sea in the same steps (where the
/// GPU's nodes refuse shares that would not fit, and the droplets carry them on): here the eroded
/// land fills the whole sea to the brim, and the rest leaves through the drain edges. Nodes more
/// than 3 nodes off the input coast only ever take such loads (a land deposit reaches 3 nodes
/// past the land); with 4096 droplets in flight on 96² nodes the lockstep's pits make land
/// deposits creep a few nodes out (to 4 off the coast, all within 3·10⁻⁸ m of the sea), so there
/// the margin is 8.
#[test]
fn the_sea_step_fills_to_the_water_line_and_never_above() {
    let Some(ctx) = ctx() else { return };
    let (w, coast) = (96usize, 40usize);
    // A steep ramp into a sea deepening offshore.
    let hm = Heightmap::from_fn(w, w, 1.0, |x, y| {
        if x < coast {
            0.4 * (coast - x) as f32 + 0.3 * ((x * 7 + y * 13) % 5) as f32 / 5.0
        } else {
            -0.002 - 0.03 * (x - coast) as f32
        }
    })
    .unwrap();
    let room: f64 = hm.data.iter().map(|&h| (-h).max(0.0) as f64).sum();
    let p = DropletParams {
        droplets_per_km2: MapSize::of(&hm).per_km2(5_000),
        deposition: 0.0,
        max_path_m: 2000.0,
        // The seed's rates per node of these 1 m cells (the kernel's deposits).
        path_step_m: 1.0,
        ..DropletParams::default()
    };
    let inputs = JobInputs { seed: 9, sea_level: Some(0.0), ..Default::default() };
    let mut cpu = DropletJob::new(hm.clone(), DropletParams { parallel: false, ..p.clone() }, inputs.clone()).unwrap();
    run(&mut cpu);
    for (in_flight, margin) in [(None, 3), (Some(4096), 8)] {
        let opts = GpuDropletOptions { in_flight };
        let mut g = GpuDropletJob::new(ctx.clone(), hm.clone(), p.clone(), inputs.clone(), opts).unwrap();
        run(&mut g);
        let l = g.ledger();
        assert!(l.closes(1e-5), "{l:?}");
        for (label, j) in [("GPU", &g as &dyn Simulation), ("CPU", &cpu)] {
            let after = &j.heightmap().data;
            let offshore = (0..w * w).filter(|i| i % w > coast + margin);
            let (above, most) =
                offshore.fold((0, 0.0f32), |(n, m), i| (n + (after[i] > 0.0) as usize, m.max(after[i])));
            let filled: f64 = (0..w * w).filter(|i| i % w >= coast).map(|i| (after[i] - hm.data[i]) as f64).sum();
            eprintln!(
                "{label} ({} in flight): {above} nodes more than {margin} off the coast above the sea, \
                 {filled:.2} of {room:.2} m³ of sea filled in",
                g.in_flight()
            );
            assert_eq!(above, 0, "{label}: offshore nodes above the sea, the highest at {most}");
            assert!(filled > 0.99 * room, "{label}: the sea took only {filled} of {room} m³");
        }
    }
}

/// Two GPU runs with a sea and a steering mask (sink mode) give the same bits, and the droplets
/// never erode a sink.
#[test]
fn sea_and_steered_gpu_runs_are_bit_identical() {
    let Some(ctx) = ctx() else { return };
    let hm = island(129);
    let n = hm.len();
    // Rain on the west half only, with a sink band down the middle of it; the east half is all sinks.
    let w: Vec<f32> = (0..n).map(|i| if i % 129 < 64 && !(30..34).contains(&(i % 129)) { 1.0 } else { 0.0 }).collect();
    let p = DropletParams { droplets_per_km2: MapSize::of(&hm).per_km2(6_000), ..DropletParams::default() };
    let inputs =
        JobInputs { seed: 5, sea_level: Some(0.0), steer: Some(Steer::new(w.clone(), true)), ..Default::default() };
    let job = || GpuDropletJob::new(ctx.clone(), hm.clone(), p.clone(), inputs.clone(), Default::default()).unwrap();
    let (mut a, mut b) = (job(), job());
    for j in [&mut a, &mut b] {
        while !j.is_done() {
            j.step();
        }
    }
    // Before the finishing pass (which may level an input spike anywhere): no sink went down.
    for (i, (&wi, (&x, &y))) in w.iter().zip(hm.data.iter().zip(&a.heightmap().data)).enumerate() {
        assert!(wi > 0.0 || y >= x, "sink node {i} eroded from {x} to {y}");
    }
    a.finish();
    b.finish();
    assert_eq!(bits(&a.heightmap().data), bits(&b.heightmap().data), "heights differ between two GPU runs");
    assert_eq!(bits(&a.maps().eroded), bits(&b.maps().eroded));
    assert_eq!(bits(&a.maps().deposited), bits(&b.maps().deposited));
    assert_eq!(a.fields().flow, b.fields().flow);
    assert_eq!(a.ledger(), b.ledger());
    let l = a.ledger();
    assert!(l.eroded > 0.0 && l.closes(1e-5), "{l:?}");
    // No droplet spawns east of the mask; few walk that far.
    let flow = a.fields().flow.unwrap();
    let east: f32 = flow.iter().enumerate().filter(|(i, _)| i % 129 >= 100).map(|(_, v)| v).sum();
    let west: f32 = flow.iter().enumerate().filter(|(i, _)| i % 129 < 30).map(|(_, v)| v).sum();
    assert!(west > 10.0 * east.max(1.0), "flow west {west}, east {east}");
}

/// With erosion and deposition off the terrain never changes, so every droplet must walk the
/// CPU's path: the same spawn box and lives of a steering mask, the same sinks, the same end at
/// the sea (a droplet reaching it carries nothing and ends there).
#[test]
fn steered_paths_end_at_sinks_and_the_sea_like_on_the_cpu() {
    let Some(ctx) = ctx() else { return };
    let hm = island(129);
    let n = hm.len();
    let w: Vec<f32> =
        (0..n).map(|i| if i % 129 < 80 { if (i / 129) % 16 == 0 { 0.0 } else { 0.7 } } else { 0.0 }).collect();
    let p = DropletParams {
        erosion: 0.0,
        deposition: 0.0,
        droplets_per_km2: MapSize::of(&hm).per_km2(3_000),
        ..DropletParams::default()
    };
    for b in [Boundary::all(crate::core::erosion::EdgeMode::Drain), Boundary::all(crate::core::erosion::EdgeMode::Wrap)]
    {
        let inputs = JobInputs {
            boundary: b,
            seed: 2,
            sea_level: Some(0.0),
            steer: Some(Steer::new(w.clone(), true)),
            ..Default::default()
        };
        let mut cpu =
            DropletJob::new(hm.clone(), DropletParams { parallel: false, ..p.clone() }, inputs.clone()).unwrap();
        run(&mut cpu);
        let mut g =
            GpuDropletJob::new(ctx.clone(), hm.clone(), p.clone(), inputs, GpuDropletOptions::default()).unwrap();
        run(&mut g);
        let (fc, fg) = (cpu.fields().flow.unwrap(), g.fields().flow.unwrap());
        let total: f64 = fc.iter().map(|&v| v as f64).sum();
        let diff: f64 = fc.iter().zip(&fg).map(|(a, b)| (a - b).abs() as f64).sum();
        eprintln!("{b:?}: {total} visits, {diff} differ");
        assert!(total > 3_000.0, "{b:?}: droplets died at once ({total} visits)");
        assert!(diff <= 0.01 * total, "{b:?}: flow maps differ in {diff} of {total} visits");
        // Nothing changes but the extremes the finishing pass levels, the same on both sides.
        assert_eq!(bits(&g.heightmap().data), bits(&cpu.heightmap().data), "{b:?}");
    }
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
