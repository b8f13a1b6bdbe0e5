//! Grid erosion (SPEC §2c): the pipe model and thermal erosion through the public API.

use proptest::prelude::*;
use talus::core::erosion::pipe::{Advection, PipeJob, PipeParams, RiverSource};
use talus::core::erosion::thermal::{ThermalJob, ThermalParams};
use talus::core::erosion::{Boundary, EdgeMode, JobInputs, Ledger, ModelParams, Simulation, build};
use talus::core::heightmap::Heightmap;
use talus::core::rng::{hash2, unit_f32};

mod common;
use common::grid::{bits, in_pool};

/// Hills with node-scale noise.
fn hills(w: usize, h: usize, seed: u64) -> Heightmap {
    Heightmap::from_fn(w, h, 1.0, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        20.0 + 6.0 * (fx * 0.21).sin() * (fy * 0.17).cos()
            + 3.0 * (fx * 0.05 + fy * 0.08).cos()
            + unit_f32(hash2(x as i64, y as i64, seed))
    })
    .unwrap()
}

fn inputs(b: Boundary) -> JobInputs {
    JobInputs { boundary: b, ..Default::default() }
}

fn run_steps(sim: &mut dyn Simulation, n: usize) {
    for _ in 0..n {
        sim.step();
    }
}

fn assert_closes(l: &Ledger, what: &str) {
    assert!(l.moved() > 1e-3, "{what}: nothing moved: {l:?}");
    assert!(
        l.closes(1e-4),
        "{what}: books do not close: terrain {:e}, material {:e}, moved {:e}: {l:?}",
        l.terrain_error(),
        l.material_error(),
        l.moved()
    );
    for v in [l.eroded, l.deposited, l.lost_at_border, l.clamped, l.suspended, l.volume_after] {
        assert!(v.is_finite(), "{what}: {l:?}");
    }
}

#[test]
fn pipe_ledger_closes_for_every_advection_and_edge() {
    for adv in [Advection::SemiLagrangian, Advection::MacCormack, Advection::Conservative] {
        for mode in [EdgeMode::Drain, EdgeMode::Wall, EdgeMode::Wrap] {
            let p = PipeParams { advection: adv, rain: 0.04, steps: 150, ..Default::default() };
            let mut job = build(hills(48, 40, 1), &ModelParams::Pipe(p), inputs(Boundary::all(mode))).unwrap();
            run_steps(job.as_mut(), 150);
            let l = job.ledger();
            assert_closes(&l, &format!("pipe {adv:?} {mode:?}"));
            if adv == Advection::Conservative {
                // The forward remap neither creates nor destroys sediment.
                assert!(l.clamped.abs() <= 1e-6 * l.moved(), "{mode:?}: {l:?}");
            }
            match mode {
                EdgeMode::Drain => assert!(l.lost_at_border > 0.0, "{adv:?}: drains must lose sediment: {l:?}"),
                _ => assert_eq!(l.lost_at_border, 0.0, "{adv:?} {mode:?}: nothing may leave: {l:?}"),
            }
            assert!(l.suspended > 0.0);
        }
    }
}

#[test]
fn pipe_with_interleaved_thermal_and_hardness_closes_its_books() {
    let hm = hills(40, 36, 2);
    let hardness: Vec<f32> = (0..hm.len()).map(|i| if (i / 40) % 9 == 0 { 0.0 } else { 1.0 }).collect();
    for every in [1, 3] {
        let p = PipeParams {
            rain: 0.04,
            thermal: Some(ThermalParams { talus_angle: 25.0, iterations: 2, ..Default::default() }),
            thermal_every: every,
            ..Default::default()
        };
        let inputs = JobInputs {
            hardness: Some(hardness.clone()),
            boundary: Boundary::all(EdgeMode::Drain),
            seed: 0,
            ..Default::default()
        };
        let mut job = PipeJob::new(hm.clone(), p, inputs).unwrap();
        run_steps(&mut job, 120);
        assert_closes(&job.ledger(), &format!("pipe+thermal every {every}"));
        // Unerodible rows (hardness 0) are never eroded by water; thermal too respects hardness.
        for y in (0..36).step_by(9) {
            for x in 0..40 {
                assert_eq!(job.maps().eroded[y * 40 + x], 0.0, "node ({x},{y}) is unerodible");
            }
        }
    }
}

#[test]
fn thermal_ledger_closes_drains_lose_and_walls_keep() {
    let hm = Heightmap::from_fn(40, 40, 1.0, |x, y| {
        let d = x.min(y).min(39 - x).min(39 - y) as f32;
        4.0 * d + unit_f32(hash2(x as i64, y as i64, 5)) * 3.0
    })
    .unwrap();
    for (mode, loses) in [(EdgeMode::Drain, true), (EdgeMode::Wall, false), (EdgeMode::Wrap, false)] {
        let p = ThermalParams { iterations: 60, ..Default::default() };
        let mut job = build(hm.clone(), &ModelParams::Thermal(p), inputs(Boundary::all(mode))).unwrap();
        run_steps(job.as_mut(), 60);
        let l = job.ledger();
        assert_closes(&l, &format!("thermal {mode:?}"));
        assert_eq!(l.lost_at_border > 0.0, loses, "{mode:?}: {l:?}");
        if !loses {
            assert_eq!(l.lost_at_border, 0.0);
            assert!(
                (l.volume_after - l.volume_before).abs() <= 1e-5 * l.moved().max(1.0) + 1e-6 * l.volume_before.abs()
            );
        }
    }
}

#[test]
fn water_books_balance_rain_against_drain_evaporation_and_storage() {
    for mode in [EdgeMode::Drain, EdgeMode::Wall] {
        let p = PipeParams {
            rain: 0.03,
            evaporation: 0.05,
            sources: vec![RiverSource { x_m: 10.0, y_m: 10.0, radius_m: 2.0, intensity: 0.5, ..Default::default() }],
            ..Default::default()
        };
        let mut job = PipeJob::new(hills(36, 30, 3), p, inputs(Boundary::all(mode))).unwrap();
        run_steps(&mut job, 200);
        let wb = job.water_budget();
        assert!(wb.rain > 0.0 && wb.evaporated > 0.0 && wb.stored > 0.0, "{wb:?}");
        assert!(
            wb.error().abs() <= 1e-4 * wb.rain,
            "{mode:?}: rain {} ≠ drained {} + evaporated {} + stored {}",
            wb.rain,
            wb.drained,
            wb.evaporated,
            wb.stored
        );
        assert_eq!(wb.drained > 0.0, mode == EdgeMode::Drain, "{wb:?}");
        let stored: f64 = job.water().iter().map(|&d| d as f64).sum();
        assert_eq!(stored, wb.stored);
    }
}

/// Largest slope (metres per metre) from any node to any of its 8 neighbours.
fn max_slope(hm: &Heightmap) -> f32 {
    let mut m = 0.0f32;
    for y in 0..hm.height as isize {
        for x in 0..hm.width as isize {
            for (dx, dy) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= hm.width as isize || ny >= hm.height as isize {
                    continue;
                }
                let dist = if dx != 0 && dy != 0 { std::f32::consts::SQRT_2 } else { 1.0 } * hm.cell_size;
                let d = (hm.get(x as usize, y as usize) - hm.get(nx as usize, ny as usize)).abs();
                m = m.max(d / dist);
            }
        }
    }
    m
}

#[test]
fn thermal_relaxes_a_spike_to_the_talus_angle_without_moving_material_uphill() {
    let mut hm = Heightmap::new(41, 41, 2.0).unwrap();
    hm.set(20, 20, 30.0);
    let p = ThermalParams { talus_angle: 35.0, rate: 0.8, iterations: 600, talus_tan: None, ..Default::default() };
    let talus = p.talus_slope();
    let mut job = ThermalJob::new(hm.clone(), p, inputs(Boundary::all(EdgeMode::Wall))).unwrap();
    let (mut lo, mut hi) = (0.0f32, 30.0f32);
    while !job.is_done() {
        let before = job.heightmap().clone();
        job.step();
        let after = job.heightmap();
        let s = after.stats();
        // The highest point never rises, the lowest never sinks.
        assert!(s.max <= hi && s.min >= lo);
        (lo, hi) = (s.min, s.max);
        // A node only gains height if some neighbour stood higher than it.
        for y in 0..41usize {
            for x in 0..41usize {
                let (old, new) = (before.get(x, y), after.get(x, y));
                if new > old {
                    let higher = (-1..=1isize).any(|dy| {
                        (-1..=1isize).any(|dx| {
                            let (nx, ny) = (x as isize + dx, y as isize + dy);
                            (0..41).contains(&nx) && (0..41).contains(&ny) && before.get(nx as usize, ny as usize) > old
                        })
                    });
                    assert!(higher, "material moved uphill into ({x},{y})");
                }
            }
        }
    }
    let s = max_slope(job.heightmap());
    assert!(s <= talus * 1.02 + 1e-3, "slope {s} still above talus {talus}");
    assert!(job.heightmap().get(20, 20) < 30.0 && job.heightmap().get(20, 20) > 1.0);
    assert_closes(&job.ledger(), "thermal spike");
}

#[test]
fn a_river_source_carves_a_channel() {
    // A plane falling towards +x, a source near its upper end, walls on three sides and a drain
    // downhill; interleaved thermal erosion keeps the banks from standing vertical.
    let hm = Heightmap::from_fn(64, 33, 1.0, |x, _| 0.1 * (63 - x) as f32).unwrap();
    let b = Boundary { left: EdgeMode::Wall, right: EdgeMode::Drain, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
    let p = PipeParams {
        rain: 0.0,
        sources: vec![RiverSource { x_m: 4.0, y_m: 16.0, radius_m: 1.5, intensity: 0.5, ..Default::default() }],
        thermal: Some(ThermalParams { talus_angle: 30.0, iterations: 1, ..Default::default() }),
        steps: 400,
        ..Default::default()
    };
    let mut job = PipeJob::new(hm.clone(), p, inputs(b)).unwrap();
    run_steps(&mut job, 400);
    let out = job.heightmap();
    for x in [20usize, 35, 50] {
        let centre = out.get(x, 16) - hm.get(x, 16);
        let side = out.get(x, 3) - hm.get(x, 3);
        assert!(centre < -0.05, "column {x}: no channel (change {centre})");
        assert!(side.abs() < 0.1 * centre.abs(), "column {x}: the dry side changed too ({side} vs {centre})");
        // The channel lies along the source line: the erosion-weighted mean of the
        // cross-section is there (the floor of a wide channel is flat, and bank erosion can
        // leave its edges a little deeper than its centre, so the single deepest node is not a
        // steady criterion).
        let cut: Vec<f64> = (0..33).map(|y| (hm.get(x, y) - out.get(x, y)).max(0.0) as f64).collect();
        let total: f64 = cut.iter().sum();
        let mean_y = cut.iter().enumerate().map(|(y, c)| y as f64 * c).sum::<f64>() / total;
        assert!((mean_y - 16.0).abs() <= 1.0, "column {x}: channel centred at y = {mean_y}");
        // Its floor under the source line is within a quarter of the deepest cut.
        let deepest = cut.iter().cloned().fold(0.0f64, f64::max);
        assert!(-centre as f64 >= 0.75 * deepest, "column {x}: centre cut {} vs deepest {deepest}", -centre);
    }
    assert_closes(&job.ledger(), "river");
}

#[test]
fn results_are_bit_identical_with_one_and_two_threads() {
    // 80 rows: several thermal bands, one of them short.
    let hm = hills(70, 80, 4);
    let hard: Vec<f32> = (0..hm.len()).map(|i| 0.3 + unit_f32(hash2(i as i64, 0, 8))).collect();
    let pipe = |adv: Advection| {
        let hm = hm.clone();
        let hard = hard.clone();
        move || {
            let p = PipeParams {
                advection: adv,
                rain: 0.05,
                max_depth: 0.05,
                thermal: Some(ThermalParams { iterations: 1, talus_angle: 30.0, ..Default::default() }),
                ..Default::default()
            };
            let b =
                Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wrap, bottom: EdgeMode::Wrap };
            let mut job =
                PipeJob::new(hm, p, JobInputs { hardness: Some(hard), boundary: b, seed: 1, ..Default::default() })
                    .unwrap();
            run_steps(&mut job, 40);
            let f = job.fields();
            let vel: Vec<f32> = f.velocity.unwrap().iter().flat_map(|v| *v).collect();
            (
                bits(&job.heightmap().data),
                bits(&f.water.unwrap()),
                bits(&f.sediment.unwrap()),
                bits(&vel),
                bits(&job.maps().deposited),
                job.ledger(),
                job.water_budget(),
            )
        }
    };
    for adv in [Advection::SemiLagrangian, Advection::MacCormack, Advection::Conservative] {
        let one = in_pool(1, pipe(adv));
        let two = in_pool(2, pipe(adv));
        assert!(one == two, "pipe {adv:?} differs between 1 and 2 threads");
    }
    let thermal = || {
        let mut job = ThermalJob::new(
            hm.clone(),
            ThermalParams { iterations: 30, ..Default::default() },
            inputs(Boundary::all(EdgeMode::Drain)),
        )
        .unwrap();
        run_steps(&mut job, 30);
        (bits(&job.heightmap().data), bits(&job.maps().eroded), job.ledger())
    };
    assert!(in_pool(1, thermal) == in_pool(2, thermal), "thermal differs between 1 and 2 threads");
}

#[test]
fn both_advection_schemes_stay_stable_on_bumpy_terrain() {
    // Rough terrain, heavy rain, strong erosion.
    let hm = Heightmap::from_fn(48, 48, 1.0, |x, y| 10.0 * unit_f32(hash2(x as i64, y as i64, 6))).unwrap();
    for adv in [Advection::SemiLagrangian, Advection::MacCormack, Advection::Conservative] {
        let p = PipeParams {
            advection: adv,
            rain: 0.2,
            capacity: 2.0,
            erosion: 0.3,
            deposition: 0.1,
            ..Default::default()
        };
        let mut job = PipeJob::new(hm.clone(), p, inputs(Boundary::all(EdgeMode::Drain))).unwrap();
        for _ in 0..300 {
            job.step();
            assert!(job.sediment().iter().all(|&s| s >= 0.0 && s.is_finite()), "{adv:?}: sediment");
            assert!(job.water().iter().all(|&d| d >= 0.0 && d.is_finite()), "{adv:?}: water");
        }
        assert!(job.heightmap().all_finite());
        let (u, v) = job.velocity();
        assert!(u.iter().chain(v).all(|x| x.is_finite()));
        assert_closes(&job.ledger(), &format!("bumpy {adv:?}"));
    }
}

#[test]
fn edits_while_running_keep_the_books_closed() {
    let mut job =
        PipeJob::new(hills(32, 32, 7), PipeParams { rain: 0.05, ..Default::default() }, JobInputs::default()).unwrap();
    run_steps(&mut job, 30);
    job.edit_terrain(&mut |h| {
        for y in 10..20 {
            for x in 10..20 {
                let v = h.get(x, y);
                h.set(x, y, v + 2.0);
            }
        }
    });
    run_steps(&mut job, 30);
    assert_closes(&job.ledger(), "pipe with a brush stroke");
}

fn edge() -> impl Strategy<Value = EdgeMode> {
    prop_oneof![Just(EdgeMode::Wall), Just(EdgeMode::Drain), Just(EdgeMode::Wrap)]
}

/// Log-uniform value in `[lo, hi]` (the f32 nearest `lo` can lie below it: the next one up is
/// taken then, so a drawn bound passes the parameter's range check).
fn log_range(lo: f64, hi: f64) -> impl Strategy<Value = f32> {
    (0.0f64..=1.0).prop_map(move |t| {
        let v = (lo.ln() + t * (hi.ln() - lo.ln())).exp() as f32;
        if (v as f64) < lo { v.next_up() } else { v }
    })
}

fn pipe_params() -> impl Strategy<Value = PipeParams> {
    (
        (
            log_range(1e-6, 10.0),
            log_range(1e-6, 1e4),
            log_range(1e-6, 1e4),
            0.0f32..1e3,
            prop::option::of(log_range(1e-6, 1e6)),
        ),
        (0.0f32..1e3, 0.0f32..1e3, 0.0f32..=1.0, 0.0f32..=1.0, 0.0f32..=1.0),
        (
            0.0f64..=1.0,
            0.0f32..=1.0,
            prop::option::of(0.0f32..1e4),
            0u8..3,
            prop::option::of((0.0f32..89.9, 0.0f32..=1.0, 0u32..3)),
            1u32..4,
            0u32..6,
        ),
    )
        .prop_map(
            |(
                (dt, area, len, g, cell),
                (rain, kc, ks, kd, tilt),
                (ke_frac, depth_on, depth, mac, thermal, every, subs),
            )| {
                // 0: the seed's clamp; k: a max_speed that takes about k sub-steps on these cells
                // (at most 1e4 m/s, the parameter's range, so fewer where that caps it).
                let lx = cell.unwrap_or(1.0);
                let max_speed = if subs == 0 { 0.0 } else { (subs as f32 * lx / dt).min(1.0e4) };
                PipeParams {
                    max_speed,
                    dt,
                    pipe_area: area,
                    pipe_length: len,
                    gravity: g,
                    cell_size: cell,
                    rain,
                    capacity: kc,
                    erosion: ks,
                    deposition: kd,
                    evaporation: ((ke_frac / dt as f64).min(1e3) as f32).min(1e3),
                    min_tilt: tilt,
                    max_depth: if depth_on > 0.5 { depth.unwrap_or(0.0) } else { 0.0 },
                    advection: [Advection::SemiLagrangian, Advection::MacCormack, Advection::Conservative]
                        [mac as usize],
                    // Iterations counted on cells twice these: 4 kernel iterations each.
                    thermal: thermal.map(|(a, r, i)| ThermalParams {
                        talus_angle: a,
                        rate: r,
                        iterations: i,
                        talus_tan: None,
                        iteration_cell_m: (2.0 * lx).min(1.0e6),
                        ..Default::default()
                    }),
                    thermal_every: every,
                    steps: 6,
                    ..Default::default()
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn pipe_never_produces_nan_or_inf(
        p in pipe_params(),
        (w, h) in (1usize..14, 1usize..14),
        seed in any::<u64>(),
        amp in log_range(1e-3, 1e3),
        edges in (edge(), edge(), edge(), edge()),
        hard in prop::option::of(0.0f32..4.0),
    ) {
        let hm = Heightmap::from_fn(w, h, 1.0, |x, y| amp * unit_f32(hash2(x as i64, y as i64, seed))).unwrap();
        let b = Boundary { left: edges.0, right: edges.1, top: edges.2, bottom: edges.3 };
        let hardness = hard.map(|k| (0..w * h).map(|i| k * unit_f32(hash2(i as i64, 1, seed))).collect());
        let mut job = PipeJob::new(hm, p.clone(), JobInputs { hardness, boundary: b, seed, ..Default::default() }).unwrap();
        run_steps(&mut job, 6);
        prop_assert!(job.heightmap().all_finite(), "{:?}", p);
        prop_assert!(job.water().iter().all(|d| d.is_finite() && *d >= 0.0));
        prop_assert!(job.sediment().iter().all(|s| s.is_finite() && *s >= 0.0));
        let (u, v) = job.velocity();
        prop_assert!(u.iter().chain(v).all(|x| x.is_finite()));
        let l = job.ledger();
        prop_assert!([l.eroded, l.deposited, l.lost_at_border, l.clamped, l.suspended, l.volume_after].iter().all(|x| x.is_finite()), "{:?}", l);
    }

    #[test]
    fn thermal_never_produces_nan_or_inf(
        angle in 0.0f32..89.9,
        tan in prop::option::of(0.0f32..1e4),
        rate in 0.0f32..=1.0,
        (w, h) in (1usize..20, 1usize..20),
        seed in any::<u64>(),
        amp in log_range(1e-3, 1e4),
        edges in (edge(), edge(), edge(), edge()),
    ) {
        let hm = Heightmap::from_fn(w, h, 1.0, |x, y| amp * unit_f32(hash2(x as i64, y as i64, seed))).unwrap();
        let b = Boundary { left: edges.0, right: edges.1, top: edges.2, bottom: edges.3 };
        let p = ThermalParams { talus_angle: angle, talus_tan: tan, rate, iterations: 8, ..Default::default() };
        let mut job = ThermalJob::new(hm, p, JobInputs { boundary: b, ..Default::default() }).unwrap();
        run_steps(&mut job, 8);
        prop_assert!(job.heightmap().all_finite());
        let l = job.ledger();
        // The books are kept in f64 from the f32 heights each sweep writes, so a sweep may round
        // every node by half an ulp of the tallest height: 8 steps × 8 iterations of that is the
        // floor below which the books cannot close (a 7×8 map of 0.5 m moving 15 µm is 2e-8 off).
        let rounding = 64.0 * (w * h) as f64 * f64::from(amp) * f64::from(f32::EPSILON) / 2.0;
        let closes = l.closes(1e-4)
            || (l.terrain_error().abs() <= rounding && l.material_error().abs() <= rounding);
        prop_assert!(closes, "{:?} (rounding floor {:e})", l, rounding);
    }
}

/// The case the property test once found: 15 µm moved on a 7×8 map of half a metre leaves the
/// books 2e-8 apart, f32 rounding of the heights, which the relative tolerance alone rejected.
#[test]
fn thermal_books_on_a_tiny_move_close_to_the_heights_rounding() {
    let (w, h, amp, seed) = (7usize, 8usize, 0.511_719_6f32, 12_819_848_315_288_284_438u64);
    let hm = Heightmap::from_fn(w, h, 1.0, |x, y| amp * unit_f32(hash2(x as i64, y as i64, seed))).unwrap();
    let p = ThermalParams {
        talus_angle: 26.244_677,
        talus_tan: None,
        rate: 0.989_285_3,
        iterations: 8,
        ..Default::default()
    };
    let mut job =
        ThermalJob::new(hm, p, JobInputs { boundary: Boundary::all(EdgeMode::Wall), ..Default::default() }).unwrap();
    run_steps(&mut job, 8);
    let l = job.ledger();
    let rounding = 64.0 * (w * h) as f64 * f64::from(amp) * f64::from(f32::EPSILON) / 2.0;
    assert!(l.eroded > 0.0, "{l:?}");
    assert!(l.terrain_error().abs() <= rounding && l.material_error().abs() <= rounding, "{l:?}");
}
