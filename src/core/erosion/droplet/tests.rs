//! Unit tests of the droplet model.

use super::super::particles::{self, Books};
use super::brush::Brush;
use super::job::{P_ERO, P_FLOW, P_H};
use super::step::Ctx;
use super::*;
use crate::core::erosion::{Boundary, EdgeMode, JobError, JobInputs, MapSize, Progress, Simulation};
use crate::core::heightmap::Heightmap;
use std::sync::atomic::Ordering;

#[test]
fn avx2_and_portable_kernels_give_the_same_bits() {
    let go = |portable: bool| {
        PORTABLE_ONLY.store(portable, Ordering::Relaxed);
        let p =
            DropletParams { droplets_per_km2: dens(3000, 96), radius_m: 3.0, max_path_m: 80.0, batch: 1000, ..v1() };
        let mut j = job(bowl(96), p, Boundary::default());
        run(&mut j);
        PORTABLE_ONLY.store(false, Ordering::Relaxed);
        (j.hm.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), j.ledger().eroded)
    };
    let (a, b) = (go(true), go(false));
    assert!(a.1 > 0.0);
    assert!(a == b, "the kernels disagree");
}

/// Version 1's defaults on the 1 m cells of these tests (the defaults are now version 1's on the
/// default island's 2 m cells): the rates per step of one node, as the seed has them.
fn v1() -> DropletParams {
    DropletParams { radius_m: 5.0, max_path_m: 300.0, min_slope_tan: 0.01, path_step_m: 1.0, ..Default::default() }
}

/// The density of `count` droplets on an `n × n` map of 1 m cells.
fn dens(count: u64, n: usize) -> f64 {
    MapSize::new(n, n, 1.0).per_km2(count)
}

fn bowl(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let (fx, fy) = (x as f32 - n as f32 / 2.0, y as f32 - n as f32 / 2.0);
        0.02 * (fx * fx + fy * fy).sqrt() + 0.3 * ((x as f32 * 0.4).sin() * (y as f32 * 0.3).cos())
    })
    .unwrap()
}

fn job(hm: Heightmap, p: DropletParams, b: Boundary) -> DropletJob {
    DropletJob::new(hm, p, JobInputs { boundary: b, seed: 7, ..Default::default() }).unwrap()
}

fn run(j: &mut DropletJob) {
    while !j.is_done() {
        j.step();
    }
    j.finish();
}

/// A ramp from 20 m down to −10 m along x, with bumps: land on the left, sea on the right.
fn ramp(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        20.0 - 30.0 * x as f32 / (n - 1) as f32 + 0.4 * ((x as f32 * 0.5).sin() * (y as f32 * 0.37).cos())
    })
    .unwrap()
}

#[test]
fn droplets_end_at_the_sea_without_digging_below_it() {
    let hm = ramp(64);
    let p = DropletParams { droplets_per_km2: dens(4000, 64), batch: 1000, ..v1() };
    for parallel in [false, true] {
        // Drain edges: a walled 64² sea fills to the brim and the droplets' last loads
        // (dropped whole at the end of their life) then pile up above it.
        let inputs =
            JobInputs { boundary: Boundary::all(EdgeMode::Drain), seed: 3, sea_level: Some(0.0), ..Default::default() };
        let mut j = DropletJob::new(hm.clone(), DropletParams { parallel, ..p.clone() }, inputs).unwrap();
        run(&mut j);
        let l = j.ledger();
        assert!(l.closes(1e-5), "{l:?}");
        assert!(l.eroded > 1.0, "the droplets eroded the land: {l:?}");
        let after = j.heightmap();
        let maps = j.maps();
        for (i, (&a, &b)) in hm.data.iter().zip(&after.data).enumerate() {
            if a > 0.0 {
                // Erosion stops at the sea level (nodes may reach it, never go below).
                assert!(b >= 0.0, "land node {i} dug to {b}");
            } else {
                // Under water nothing is dug: a sea node may take a deposit (and lose it
                // again down to the water line), never end below where it started.
                assert!(b >= a - 1e-5, "sea node {i} dug from {a} to {b}");
            }
        }
        // The load reached the sea. (Known gap, issue 13: on this small map the sea near the
        // shore also builds up above the water line — land-side deposits, spread without a
        // cap, raise shore nodes, and droplets then read them as land — so the cap is not
        // asserted here.)
        let coast = hm.data.iter().take(64).position(|&h| h <= 0.0).unwrap();
        let mut sea_dep = 0.0f64;
        for y in 0..64 {
            for x in coast + 4..64 {
                sea_dep += maps.deposited[y * 64 + x] as f64;
            }
        }
        assert!(sea_dep > 0.1 * l.deposited, "little reached the sea: {sea_dep} of {}", l.deposited);
    }
}

#[test]
fn without_a_sea_the_run_is_unchanged_by_a_sea_below_every_node() {
    // Sea mode on a map wholly above the sea differs only in the deposit footprint and the
    // finishing pass; with `None` the classic algorithm runs (the GPU parity tests rely on it).
    let hm = bowl(48);
    let p = DropletParams { droplets_per_km2: dens(1500, 48), batch: 500, ..v1() };
    let mut a = job(hm.clone(), p.clone(), Boundary::default());
    run(&mut a);
    let mut b = job(hm.clone(), p.clone(), Boundary::default());
    run(&mut b);
    assert_eq!(a.heightmap().data, b.heightmap().data);
    let inputs = JobInputs { seed: 7, sea_level: Some(-1e6), ..Default::default() };
    let mut c = DropletJob::new(hm, p, inputs).unwrap();
    run(&mut c);
    assert!(c.ledger().closes(1e-5));
    assert_ne!(a.heightmap().data, c.heightmap().data);
}

#[test]
fn isolated_extremes_are_levelled_and_nothing_else_moves() {
    let mut hm = bowl(32);
    hm.data.iter_mut().for_each(|h| *h += 5.0);
    let before = hm.clone();
    let (sx, px) = (10 * 32 + 10, 20 * 32 + 12);
    hm.data[sx] += 3.0;
    hm.data[px] -= 2.0;
    let sum = hm.sum();
    let mut changed = std::collections::BTreeSet::new();
    let (e, d) = particles::relax_extremes(&mut hm, 0.0, 0.05, &mut |i, _| {
        changed.insert(i);
    });
    assert!((hm.sum() - sum).abs() < 1e-3);
    assert!((e - d).abs() < 1e-4 && e > 2.0);
    // Only the two extremes and their neighbours changed.
    for &i in &changed {
        let near = |c: usize| (i % 32).abs_diff(c % 32) <= 1 && (i / 32).abs_diff(c / 32) <= 1;
        assert!(near(sx) || near(px), "node {i} changed");
    }
    for i in [sx, px] {
        let (x, y) = (i % 32, i / 32);
        let nb: Vec<f32> = (0..9).filter(|&k| k != 4).map(|k| hm.get(x + k % 3 - 1, y + k / 3 - 1)).collect();
        let (lo, hi) = nb.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |a, &v| (a.0.min(v), a.1.max(v)));
        assert!(hm.data[i] <= hi + 0.05 && hm.data[i] >= lo - 0.05, "node {i} still extreme");
    }
    // A map without extremes is left alone.
    let mut calm = before.clone();
    let (e, _) = particles::relax_extremes(&mut calm, 0.0, 0.5, &mut |_, _| {});
    assert_eq!(e, 0.0);
    assert_eq!(calm.data, before.data);
}

#[test]
fn brushes_are_normalised_discs() {
    for &r in &[1.0f32, 2.5, 5.0, 7.0] {
        let b = Brush::new(r, 50);
        assert_eq!(b.variants.len(), SUB * SUB);
        for (q, v) in b.variants.iter().enumerate() {
            let s: f32 = v.taps.iter().map(|t| t.2).sum();
            assert!((s - 1.0).abs() < 1e-5, "r {r} q {q}: {s}");
            let cx = ((q % SUB) as f32 + 0.5) / SUB as f32;
            let cy = ((q / SUB) as f32 + 0.5) / SUB as f32;
            for &(dx, dy, w) in &v.taps {
                let d = ((dx as f32 - cx).powi(2) + (dy as f32 - cy).powi(2)).sqrt();
                assert!(d < r && w > 0.0);
            }
            // Every node strictly inside the disc is in the brush.
            let rc = r.ceil() as i32;
            let inside = (-rc..=rc + 1)
                .flat_map(|dy| (-rc..=rc + 1).map(move |dx| (dx, dy)))
                .filter(|&(dx, dy)| ((dx as f32 - cx).powi(2) + (dy as f32 - cy).powi(2)).sqrt() < r - 1e-4)
                .count();
            assert!(v.taps.len() >= inside);
            // The chunks hold every tap exactly once, zeros elsewhere, no node twice, and stay
            // within the columns lo ..= hi inside the task margin.
            assert!(b.lo >= -(rc as isize) - 1 && b.hi <= rc as isize + 3, "{} {}", b.lo, b.hi);
            let mut slots = std::collections::HashMap::new();
            for c in &v.chunks {
                for (j, &w) in c.weights.iter().enumerate() {
                    let off = c.offset + j as isize;
                    let (dy, dx) = ((off + 25).div_euclid(50), (off + 25).rem_euclid(50) - 25);
                    assert!(dx >= b.lo && dx <= b.hi && dy >= -(rc as isize) && dy <= rc as isize + 1);
                    assert!(slots.insert(off, w).is_none(), "node {off} twice");
                }
            }
            for &(dx, dy, w) in &v.taps {
                assert_eq!(slots.remove(&(dy as isize * 50 + dx as isize)), Some(w));
            }
            assert!(slots.values().all(|&w| w == 0.0));
        }
    }
}

#[test]
fn clipped_brush_is_renormalised_at_the_edge() {
    let hm = Heightmap::filled(20, 20, 1.0, 10.0).unwrap();
    let mut j = job(hm, DropletParams { radius_m: 4.0, ..v1() }, Boundary::default());
    let raw = j.raw();
    let ctx = Ctx {
        geom: j.geom,
        raw,
        brush: &j.brush,
        inertia: 0.3,
        min_slope: 0.01,
        capacity: 10.0,
        deposition: 0.1,
        erosion: 0.5,
        dig: 1.0,
        gravity: 9.81,
        keep_water: 0.98,
        max_life: 10,
        min_water: 1e-30,
        floor: f32::NEG_INFINITY,
        sea: f32::NEG_INFINITY,
        spread: false,
        wide: false,
        sink: None,
    };
    // SAFETY: `raw` points at `j`'s live maps, used by nothing else meanwhile; (0.3, 0.2) is in
    // the map.
    let got = unsafe { ctx.erode(0.3, 0.2, 1.0) };
    assert!((got - 1.0).abs() < 1e-5, "{got}");
    let (hm, eroded) = (j.planes.export(P_H), j.planes.export(P_ERO));
    let removed: f32 = hm.iter().map(|h| 10.0 - h).sum();
    assert!((removed - 1.0).abs() < 1e-4);
    // Only nodes within the radius lost material; the corner node lost the most.
    let max = hm.iter().cloned().fold(f32::INFINITY, f32::min);
    assert_eq!(hm[0], max);
    assert_eq!(hm[5 * 20 + 5], 10.0);
    // The per-node map holds exactly the change.
    for (h, e) in hm.iter().zip(&eroded) {
        assert!(((10.0 - h) - e).abs() < 1e-6);
    }
}

#[test]
fn a_droplet_on_a_plane_runs_downhill_one_cell_per_step() {
    // A gentle plane falling towards +x: the droplet must move +x one cell per step.
    let hm = Heightmap::from_fn(40, 9, 1.0, |x, _| 10.0 - 0.1 * x as f32).unwrap();
    let p = DropletParams {
        droplets_per_km2: MapSize::new(40, 9, 1.0).per_km2(1),
        max_path_m: 5.0,
        erosion: 0.0,
        deposition: 0.0,
        ..v1()
    };
    let mut j = job(hm, p, Boundary::all(EdgeMode::Wall));
    let mut d = j.spawn(0);
    d.x = 3.25;
    d.y = 4.0;
    let raw = j.raw();
    let ctx = Ctx {
        geom: j.geom,
        raw,
        brush: &j.brush,
        inertia: 0.3,
        min_slope: 0.01,
        capacity: 10.0,
        deposition: 0.0,
        erosion: 0.0,
        dig: 1.0,
        gravity: 9.81,
        keep_water: 0.98,
        max_life: 5,
        min_water: 1e-30,
        floor: f32::NEG_INFINITY,
        sea: f32::NEG_INFINITY,
        spread: false,
        wide: false,
        sink: None,
    };
    let mut b = Books::default();
    // SAFETY: `raw` points at `j`'s live maps, and this single-threaded test is their only user.
    unsafe { ctx.walk(&mut d, &mut b) };
    assert!((d.x - 8.25).abs() < 1e-4 && (d.y - 4.0).abs() < 1e-4, "{} {}", d.x, d.y);
    // Speed: v² grows by 0.1·g per step.
    assert!((d.speed - (1.0f32 + 5.0 * 0.1 * 9.81).sqrt()).abs() < 1e-3);
    assert!((d.water - 0.98f32.powi(5)).abs() < 1e-6);
    assert!(!d.alive);
    // Flow: 5 visits along the row (the start is counted by the batch, not here).
    let visited: f32 = j.planes.export(P_FLOW).iter().sum();
    assert_eq!(visited, 5.0);
}

#[test]
fn uphill_step_fills_the_pit_behind() {
    // A V-shaped valley along x: a droplet crossing it deposits on the way up.
    let hm = Heightmap::from_fn(30, 30, 1.0, |x, _| (x as f32 - 15.0).abs() * 0.5).unwrap();
    let before = hm.clone();
    let p = DropletParams { droplets_per_km2: dens(400, 30), max_path_m: 30.0, inertia: 0.9, ..v1() };
    let mut j = job(hm, p, Boundary::all(EdgeMode::Wall));
    run(&mut j);
    let l = j.ledger();
    assert!(l.deposited > 0.0 && l.eroded > 0.0);
    // The valley floor gained material, the flanks lost some.
    let mid: f32 = (5..25).map(|y| j.hm.get(15, y) - before.get(15, y)).sum();
    assert!(mid > 0.0, "{mid}");
    assert!(l.closes(1e-4), "{l:?}");
    assert_eq!(l.lost_at_border, 0.0);
}

#[test]
fn ledger_closes_for_every_edge_mode_and_option() {
    let cases = [
        (Boundary::default(), None, None),
        (Boundary::all(EdgeMode::Wall), Some(0.1f32), None),
        (Boundary::all(EdgeMode::Wrap), None, Some(1.5f32)),
        (Boundary::default(), Some(0.2), Some(1.0)),
    ];
    for (b, mh, blur) in cases {
        for parallel in [false, true] {
            let p = DropletParams {
                droplets_per_km2: dens(300, 48),
                batch: 128,
                radius_m: 3.0,
                max_path_m: 40.0,
                min_height: mh,
                blur_m: blur,
                parallel,
                ..v1()
            };
            let mut j = job(bowl(48), p, b);
            run(&mut j);
            let l = j.ledger();
            assert!(l.eroded > 0.0);
            assert!(l.closes(1e-4), "{b:?} {mh:?} {blur:?} {parallel}: {l:?}");
            if let Some(m) = mh {
                // The guard only stops erosion; nodes that started above it stay above it.
                let start = bowl(48);
                for (a, s) in j.hm.data.iter().zip(&start.data) {
                    if *s >= m {
                        assert!(*a >= m - 1e-5, "{a} < {m}");
                    }
                }
            }
            if b == Boundary::all(EdgeMode::Wall) || b == Boundary::all(EdgeMode::Wrap) {
                assert_eq!(l.lost_at_border, 0.0);
            }
            // The per-node maps agree with the scalar books.
            let e: f64 = j.maps().eroded.iter().map(|&v| v as f64).sum();
            let d: f64 = j.maps().deposited.iter().map(|&v| v as f64).sum();
            assert!((e - l.eroded).abs() <= 1e-3 * l.eroded.max(1e-9), "{e} {}", l.eroded);
            assert!((d - l.deposited).abs() <= 1e-3 * l.deposited.max(1e-9), "{d} {}", l.deposited);
        }
    }
}

#[test]
fn hardness_zero_protects_nodes() {
    let hm = bowl(40);
    let n = hm.len();
    let mut hard = vec![1.0f32; n];
    for y in 0..40 {
        for x in 0..20 {
            hard[y * 40 + x] = 0.0;
        }
    }
    let p = DropletParams { droplets_per_km2: dens(300, 40), radius_m: 2.0, max_path_m: 30.0, ..v1() };
    let mut j = DropletJob::new(hm, p, JobInputs { hardness: Some(hard), seed: 3, ..Default::default() }).unwrap();
    run(&mut j);
    for y in 0..40 {
        for x in 0..20 {
            assert_eq!(j.maps().eroded[y * 40 + x], 0.0);
        }
    }
    assert!(j.maps().eroded.iter().sum::<f32>() > 0.0);
    assert!(j.ledger().closes(1e-4));
}

#[test]
fn bad_parameters_are_refused() {
    let hm = bowl(8);
    let bad = [
        DropletParams { inertia: f32::NAN, ..v1() },
        DropletParams { inertia: 1.5, ..v1() },
        DropletParams { radius_m: 0.0, ..v1() },
        DropletParams { radius_m: f32::INFINITY, ..v1() },
        DropletParams { max_path_m: -1.0, ..v1() },
        DropletParams { min_slope_tan: f32::NAN, ..v1() },
        DropletParams { batch: 0, ..v1() },
        DropletParams { capacity: -1.0, ..v1() },
        DropletParams { min_height: Some(f32::NAN), ..v1() },
        DropletParams { blur_m: Some(-1.0), ..v1() },
        DropletParams { droplets_per_km2: 1e13, ..v1() },
        DropletParams { droplets_per_km2: f64::INFINITY, ..v1() },
    ];
    for p in bad {
        assert!(
            matches!(DropletJob::new(hm.clone(), p.clone(), JobInputs::default()), Err(JobError::BadParam { .. })),
            "{p:?}"
        );
    }
    let hard = Some(vec![f32::NAN; 64]);
    assert!(
        DropletJob::new(hm.clone(), DropletParams::default(), JobInputs { hardness: hard, ..Default::default() })
            .is_err()
    );
    let hard = Some(vec![1.0; 3]);
    assert!(matches!(
        DropletJob::new(hm.clone(), DropletParams::default(), JobInputs { hardness: hard, ..Default::default() }),
        Err(JobError::HardnessSize { .. })
    ));
    let mut nan = hm.clone();
    nan.data[3] = f32::INFINITY;
    assert!(matches!(DropletJob::new(nan, DropletParams::default(), JobInputs::default()), Err(JobError::NonFinite)));
    // Degenerate maps run to completion without doing anything.
    let line = Heightmap::from_fn(7, 1, 1.0, |x, _| x as f32).unwrap();
    let mut j = job(
        line.clone(),
        DropletParams { droplets_per_km2: MapSize::new(7, 1, 1.0).per_km2(10), ..v1() },
        Boundary::default(),
    );
    run(&mut j);
    assert_eq!(j.hm, line);
    assert!(j.ledger().closes(1e-6));
}

#[test]
fn edits_rebase_the_books_and_bad_edits_are_undone() {
    let mut j = job(
        bowl(32),
        DropletParams { droplets_per_km2: dens(200, 32), batch: 100, radius_m: 2.0, ..v1() },
        Boundary::default(),
    );
    j.step();
    j.edit_terrain(&mut |hm: &mut Heightmap| hm.data[100] += 5.0);
    j.edit_terrain(&mut |hm: &mut Heightmap| hm.data.push(1.0));
    j.edit_terrain(&mut |hm: &mut Heightmap| hm.data[0] = f32::NAN);
    assert_eq!(j.hm.len(), 32 * 32);
    assert!(j.hm.all_finite());
    j.step();
    let l = j.ledger();
    assert!(j.is_done() && l.closes(1e-4), "{l:?}");
    assert_eq!(j.progress(), Progress { done: 200, total: 200 });
}

// ---------------------------------------------------------------------------------------------
// Steering masks (issue #16 item 3).

use crate::core::brush::Falloff;
use crate::core::erosion::steer::{Steer, disc_mask};

/// A ramp descending toward x = 0 (`0.2 m` per node) with small deterministic bumps.
fn steer_ramp(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| 0.2 * x as f32 + 0.03 * ((x as f32 * 0.7).sin() * (y as f32 * 0.45).cos()))
        .unwrap()
}

fn steered(hm: Heightmap, p: DropletParams, steer: Option<Steer>) -> DropletJob {
    DropletJob::new(hm, p, JobInputs { seed: 7, steer, ..Default::default() }).unwrap()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn steered_droplets_spawn_alive_only_where_the_mask_is() {
    let n = 128;
    let mask = disc_mask(n, n, [40.0, 70.0], 10.0, Falloff::Smooth);
    let j = steered(steer_ramp(n), DropletParams::default(), Some(Steer::new(mask.clone(), false)));
    let mut alive = 0;
    let mut expected = 0.0f64;
    for id in 0..20_000 {
        let d = j.spawn(id);
        let k = (d.y + 0.5) as usize * n + (d.x + 0.5) as usize;
        // Every draw lands in the mask's box (half a cell around its nodes).
        assert!((29.5..=50.5).contains(&d.x) && (59.5..=80.5).contains(&d.y), "{} {}", d.x, d.y);
        expected += mask[k] as f64;
        if d.alive {
            alive += 1;
            assert!(mask[k] > 0.0, "droplet {id} alive at ({}, {}) outside the disc", d.x, d.y);
        }
    }
    // Alive with probability w: the count follows the weights.
    assert!((alive as f64 - expected).abs() < 0.05 * expected, "{alive} vs {expected}");
}

#[test]
fn a_mask_of_ones_runs_exactly_as_no_mask() {
    for parallel in [false, true] {
        let p = DropletParams {
            droplets_per_km2: dens(3000, 80),
            radius_m: 3.0,
            max_path_m: 60.0,
            batch: 1000,
            parallel,
            ..v1()
        };
        let go = |steer: Option<Steer>| {
            let mut j = steered(bowl(80), p.clone(), steer);
            run(&mut j);
            (bits(&j.hm.data), j.ledger(), bits(&j.fields().flow.unwrap()))
        };
        let none = go(None);
        let ones = go(Some(Steer::new(vec![1.0; 80 * 80], false)));
        assert!(none.1.eroded > 0.0);
        assert!(none == ones, "parallel = {parallel}");
    }
}

#[test]
fn a_masked_run_changes_nothing_outside_its_flow_paths() {
    let n = 96;
    let edge = (0.3 * n as f32) as usize;
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n < edge { 1.0 } else { 0.0 }).collect();
    for parallel in [false, true] {
        let p = DropletParams { droplets_per_km2: dens(4000, n), radius_m: 3.0, max_path_m: 80.0, parallel, ..v1() };
        let hm = steer_ramp(n);
        let mut j = steered(hm.clone(), p, Some(Steer::new(mask.clone(), false)));
        run(&mut j);
        assert!(j.ledger().eroded > 0.0);
        assert!(j.ledger().closes(1e-6), "{:?}", j.ledger());
        let reach = edge + 3 + 3;
        for (i, (a, b)) in hm.data.iter().zip(&j.hm.data).enumerate() {
            if i % n > reach {
                assert_eq!(a.to_bits(), b.to_bits(), "node ({}, {}) changed", i % n, i / n);
            }
        }
    }
}

#[test]
fn a_disc_mask_changes_nothing_far_from_it_but_downhill() {
    let n = 128;
    let (cx, cy, r) = (80.0f32, 64.0f32, 12.0f32);
    let mask = disc_mask(n, n, [cx, cy], r, Falloff::Smooth);
    let p = DropletParams { droplets_per_km2: dens(3000, n), radius_m: 3.0, max_path_m: 60.0, ..v1() };
    let hm = steer_ramp(n);
    let mut j = steered(hm.clone(), p, Some(Steer::new(mask, false)));
    run(&mut j);
    let mut changed = 0;
    for (i, (a, b)) in hm.data.iter().zip(&j.hm.data).enumerate() {
        let (x, y) = ((i % n) as f32, (i / n) as f32);
        if a != b {
            changed += 1;
            // Downhill is −x: nothing changes uphill of the disc, nor far beside it.
            assert!(x <= cx + r + 5.0, "({x}, {y}) changed uphill of the disc");
            assert!((y - cy).abs() <= r + 20.0, "({x}, {y}) changed beside the disc");
        }
    }
    assert!(changed > 0);
}

#[test]
fn a_sink_band_stops_the_flow() {
    let n = 96;
    let (b0, b1) = (40usize, 48usize);
    // Water from upstream of the band (x ≥ b1); the band and everything downstream are sinks.
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n >= b1 { 1.0 } else { 0.0 }).collect();
    for parallel in [false, true] {
        let p = DropletParams { droplets_per_km2: dens(4000, n), radius_m: 3.0, max_path_m: 120.0, parallel, ..v1() };
        let hm = steer_ramp(n);
        let run_with = |sink: bool| {
            let mut j = steered(hm.clone(), p.clone(), Some(Steer::new(mask.clone(), sink)));
            run(&mut j);
            j
        };
        let j = run_with(true);
        assert!(j.ledger().eroded > 0.0);
        assert!(j.ledger().closes(1e-6), "{:?}", j.ledger());
        let flow = j.fields().flow.unwrap();
        crate::core::erosion::steer::assert_sink_band(&hm.data, &j.hm.data, n, b0, b1);
        for (i, f) in flow.iter().enumerate() {
            let x = i % n;
            if x < b0 {
                assert_eq!(*f, 0.0, "flow past the band at ({x}, {})", i / n);
            }
        }
        // Without sinks the same water runs on past the band.
        let free = run_with(false);
        let past: f32 =
            free.fields().flow.unwrap().iter().enumerate().filter(|(i, _)| i % n < b0).map(|(_, f)| f).sum();
        assert!(past > 0.0);
    }
}

#[test]
fn a_masked_run_gives_the_same_bits_at_any_thread_count() {
    let n = 160;
    let go = |threads: usize, sink: bool| {
        let mask = disc_mask(n, n, [90.0, 70.0], 40.0, Falloff::Smooth);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let p =
                DropletParams { droplets_per_km2: dens(6000, n), radius_m: 3.0, max_path_m: 80.0, batch: 2000, ..v1() };
            let mut j = steered(bowl(n), p, Some(Steer::new(mask, sink)));
            run(&mut j);
            (bits(&j.hm.data), j.ledger())
        })
    };
    for sink in [false, true] {
        let one = go(1, sink);
        assert!(one.1.eroded > 0.0);
        assert!(one == go(3, sink), "sink = {sink}");
    }
}

#[test]
fn bad_masks_are_job_errors() {
    let hm = steer_ramp(16);
    for weights in [vec![1.0; 15], vec![f32::NAN; 256], vec![1.5; 256], vec![-0.5; 256]] {
        let steer = Some(Steer::new(weights, false));
        let inputs = JobInputs { steer, ..Default::default() };
        assert!(matches!(
            DropletJob::new(hm.clone(), DropletParams::default(), inputs.clone()),
            Err(JobError::BadParam { .. })
        ));
        let params = crate::core::erosion::ModelParams::Droplet(DropletParams::default());
        assert!(matches!(crate::core::erosion::build(hm.clone(), &params, inputs), Err(JobError::BadParam { .. })));
    }
}

// ---------------------------------------------------------------------------------------------
// World units (version 1 held grid units).

/// A version-1 parameter file, made for a 96² map of 2 m cells.
const V1_RON: &str = "(droplets: 3000, min_slope: 0.02, radius: 3.0, max_lifetime: 80, blur_changes: Some(1.5), \
                      inertia: 0.4, batch: 1000)";

#[test]
fn version_1_params_convert_to_world_units_and_run_as_they_did() {
    let map = MapSize::new(96, 96, 2.0);
    let mut old: DropletParams = ron::from_str(V1_RON).unwrap();
    assert!(crate::core::units::Legacy::has_legacy(&old));
    old.upgrade_units(map);
    assert!(!crate::core::units::Legacy::has_legacy(&old));
    let new = DropletParams {
        droplets_per_km2: map.per_km2(3000),
        min_slope_tan: 0.01,
        radius_m: 6.0,
        max_path_m: 160.0,
        blur_m: Some(3.0),
        inertia: 0.4,
        batch: 1000,
        ..Default::default()
    };
    assert_eq!(old, new);
    // On the map they were made for, the world values are version 1's grid values exactly.
    let g = new.in_grid_units(map);
    assert_eq!(
        g,
        DropletGrid {
            droplets: 3000,
            min_slope: 0.02,
            radius: 3.0,
            max_lifetime: 80,
            blur: Some(1.5),
            inertia: 0.4,
            capacity: 10.0,
            deposition: 0.08,
            erosion: 0.7,
            keep_water: 1.0 - 0.02,
            dig: 1.0,
            wide: false,
        }
    );
    // Written back, only the new names appear, and they read back the same.
    let text = ron::to_string(&new).unwrap();
    for old_name in ["(droplets:", " min_slope:", " radius:", " max_lifetime:", " blur_changes:"] {
        assert!(!text.contains(old_name), "{old_name} in {text}");
    }
    assert_eq!(ron::from_str::<DropletParams>(&text).unwrap(), new);

    // A job given the version-1 values converts them itself (with its terrain's cell size) and
    // runs to the same bits as one given the world values.
    let mut hm = bowl(96);
    hm.cell_size = 2.0;
    let legacy: DropletParams = ron::from_str(V1_RON).unwrap();
    let mut a = job(hm.clone(), legacy, Boundary::default());
    let mut b = job(hm, new.clone(), Boundary::default());
    assert_eq!(a.params(), &new);
    assert_eq!(a.grid_params(), g);
    assert_eq!(a.progress().total, 3000);
    run(&mut a);
    run(&mut b);
    assert!(a.ledger().eroded > 0.0);
    assert_eq!(bits(&a.hm.data), bits(&b.hm.data));
    assert_eq!(a.ledger(), b.ledger());
}

#[test]
fn the_same_world_values_mean_the_same_land_at_any_cell_size() {
    let p = DropletParams { droplets_per_km2: 2.0e5, radius_m: 6.0, max_path_m: 90.0, ..Default::default() };
    // 1 km² sampled at 4 m, 2 m and 0.5 m.
    let coarse = p.in_grid_units(MapSize::new(251, 251, 4.0));
    let island = p.in_grid_units(MapSize::new(501, 501, 2.0));
    let fine = p.in_grid_units(MapSize::new(2001, 2001, 0.5));
    assert_eq!([coarse.droplets, island.droplets, fine.droplets], [200_000; 3]);
    assert_eq!([coarse.radius, island.radius, fine.radius], [1.5, 3.0, 12.0]);
    assert_eq!([coarse.max_lifetime, island.max_lifetime, fine.max_lifetime], [23, 45, 180]);
    assert_eq!([coarse.min_slope, island.min_slope, fine.min_slope], [0.02, 0.01, 0.0025]);
    // The brush stays between 1 and 64 nodes, a droplet takes at least one step.
    let tiny = DropletParams { radius_m: 0.01, max_path_m: 0.0, ..Default::default() };
    let g = tiny.in_grid_units(MapSize::new(64, 64, 1.0));
    assert_eq!((g.radius, g.max_lifetime), (1.0, 1));
    let g = DropletParams { radius_m: 1000.0, ..Default::default() }.in_grid_units(MapSize::new(64, 64, 1.0));
    assert_eq!(g.radius, 64.0);
}

#[test]
fn a_version_1_file_made_for_other_cells_keeps_its_rates_per_node() {
    // The same file, made for 5 m cells: its rates were per step of a 5 m node.
    let map = MapSize::new(96, 96, 5.0);
    let mut old: DropletParams = ron::from_str(V1_RON).unwrap();
    old.upgrade_units(map);
    assert_eq!(old.path_step_m, 5.0);
    let g = old.in_grid_units(map);
    assert_eq!((g.inertia, g.erosion, g.capacity), (0.4, 0.7, 10.0));
    // A file of today's is not touched.
    let mut now = DropletParams::default();
    now.upgrade_units(map);
    assert_eq!(now, DropletParams::default());
}

#[test]
fn the_rates_are_per_metre_of_path_and_the_capacity_a_volume() {
    let p = DropletParams { evaporation: 0.1, erosion: 0.5, deposition: 0.2, inertia: 0.36, ..Default::default() };
    // On cells of `path_step_m` every rate is the parameter itself, bit for bit.
    let same = p.in_grid_units(MapSize::new(64, 64, 2.0));
    assert_eq!((same.inertia, same.erosion, same.deposition), (0.36, 0.5, 0.2));
    assert_eq!((same.keep_water, same.capacity, same.dig), (1.0 - 0.1, 10.0, 1.0));
    // On 1 m cells two steps make one of 2 m; on 4 m cells one step is two of 2 m.
    let fine = p.in_grid_units(MapSize::new(64, 64, 1.0));
    let coarse = p.in_grid_units(MapSize::new(64, 64, 4.0));
    let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
    assert!(close(fine.keep_water * fine.keep_water, 0.9) && close(coarse.keep_water, 0.81));
    assert!(close((1.0 - fine.erosion).powi(2), 0.5) && close(coarse.erosion, 0.75));
    assert!(close((1.0 - fine.deposition).powi(2), 0.8) && close(coarse.deposition, 0.36));
    assert!(close(fine.inertia * fine.inertia, 0.36) && close(coarse.inertia, 0.36 * 0.36));
    // The capacity in m³ (height over one node × Δx², per unit of tan·v·W with −Δh = tan·Δx)
    // does not depend on the cell.
    let volume = |g: &DropletGrid, dx: f32| g.capacity * dx.powi(3);
    assert_eq!((volume(&fine, 1.0), volume(&coarse, 4.0)), (80.0, 80.0));
    // Nor, on coarser cells, the volume one step may erode per metre of path (`dig·tan·Δx²`);
    // on finer ones it is the seed's cap, the drop.
    assert_eq!((coarse.dig * 16.0, fine.dig), (4.0, 1.0));
    // Extreme ratios stay finite.
    let g = DropletParams { path_step_m: 1.0e-3, ..p.clone() }.in_grid_units(MapSize::new(8, 8, 5.0e5));
    assert!([g.inertia, g.erosion, g.deposition, g.keep_water, g.capacity, g.dig].iter().all(|v| v.is_finite()));
    let g = DropletParams { path_step_m: 1.0e5, ..p }.in_grid_units(MapSize::new(8, 8, 1.0e-3));
    assert!([g.inertia, g.erosion, g.deposition, g.keep_water, g.capacity, g.dig].iter().all(|v| v.is_finite()));
}

/// `n`² nodes over the same 256 m square of land at any `n`: a slope toward y = 0 with ridges
/// (wavelength 64 m) and a finer ripple (24 m), heights in metres of world position.
fn hillside(n: usize) -> Heightmap {
    let dx = 256.0 / (n - 1) as f32;
    Heightmap::from_fn(n, n, dx, |x, y| {
        let (wx, wy) = (x as f32 * dx, y as f32 * dx);
        0.25 * wy
            + 6.0 * (wx * std::f32::consts::TAU / 64.0).sin() * (0.5 + wy / 512.0)
            + 1.5 * (wx * std::f32::consts::TAU / 24.0 + wy * 0.11).cos()
    })
    .unwrap()
}

/// Volume (m³) the droplets of `p` erode from [`hillside`] sampled with `n`² nodes.
fn eroded_m3(n: usize, p: &DropletParams) -> f64 {
    let hm = hillside(n);
    let dx = hm.cell_size as f64;
    let mut j = job(hm, p.clone(), Boundary::default());
    run(&mut j);
    j.ledger().eroded * dx * dx
}

#[test]
fn with_rates_per_metre_coarse_cells_move_the_same_volume_and_fine_ones_less() {
    // 100 000 droplets per km² (6 554 on the square), paths of 200 m, a 8 m brush.
    let p = DropletParams { droplets_per_km2: 1.0e5, radius_m: 8.0, max_path_m: 200.0, ..Default::default() };
    let [v4, v2, v1] = [65, 129, 257].map(|n| eroded_m3(n, &p));
    // With the rates per step of one node (format 2's meaning) on the same land.
    let per_node = |n: usize| {
        let dx = 256.0 / (n - 1) as f32;
        eroded_m3(n, &DropletParams { path_step_m: dx, ..p.clone() })
    };
    let (o4, o1) = (per_node(65), per_node(257));
    assert!(v2 > 0.0 && o1 > 0.0);
    // 4 m cells (coarser than `path_step_m`): about the 2 m volume. 1 m cells: the seed's cap on
    // one step's erosion leaves about Δx² (module doc), where the rates per node left about Δx³.
    let (coarse, fine, before) = (v4 / v2, v2 / v1, o4 / o1);
    assert!((0.7..1.4).contains(&coarse), "4 m / 2 m cells: {coarse:.2}");
    assert!(fine < 4.5 && before > 3.0 * coarse * fine, "2 m / 1 m: {fine:.2}; 4 m / 1 m per node: {before:.2}");
}

#[test]
fn on_cells_finer_than_the_path_step_deposits_are_spread_with_the_brush() {
    // The hillside at 0.5 m: the loads, volumes, are tall heights over one node; spread with
    // the 8 m brush they leave no cell-scale heaps (a node at most a few centimetres above the
    // mean of its 5 × 5 neighbourhood where the hillside's own curvature gives about 1 cm).
    let p = DropletParams { droplets_per_km2: 1.0e5, radius_m: 8.0, max_path_m: 200.0, ..Default::default() };
    let hm = hillside(513);
    assert!(p.in_grid_units(MapSize::of(&hm)).wide && !p.in_grid_units(MapSize::new(65, 65, 4.0)).wide);
    let mut j = job(hm, p, Boundary::default());
    run(&mut j);
    assert!(j.ledger().eroded > 0.0 && j.ledger().deposited > 0.0);
    let m = &j.hm;
    let mut worst = 0.0f32;
    for y in 2..m.height - 2 {
        for x in 2..m.width - 2 {
            let mut sum = 0.0;
            for dy in 0..5 {
                for dx in 0..5 {
                    sum += m.get(x + dx - 2, y + dy - 2);
                }
            }
            worst = worst.max(m.get(x, y) - sum / 25.0);
        }
    }
    assert!(worst < 0.6, "a node stands {worst} m above its neighbourhood");
}
