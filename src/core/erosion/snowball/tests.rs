//! Unit tests of the snowball model.

use super::*;
use crate::core::erosion::{Boundary, EdgeMode, MapSize};

/// Version 1's defaults on the 1 m cells of these tests (the defaults are now version 1's on the
/// default island's 2 m cells).
fn v1() -> SnowballParams {
    SnowballParams {
        speed_m: 0.15,
        offset_radius_m: 0.8,
        blur_sigma_m: std::f32::consts::FRAC_1_SQRT_2,
        footprint_m: 1.0,
        ..Default::default()
    }
}

/// The density of `count` snowballs on an `n × n` map of 1 m cells.
fn dens(count: u64, n: usize) -> f64 {
    MapSize::new(n, n, 1.0).per_km2(count)
}

/// A cone-shaped island in a flat sea, like seed 002's test scene.
fn island(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let c = n as f32 / 2.0;
        let d = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt() / c;
        let bumps = 0.6 * (x as f32 * 0.37).sin() * (y as f32 * 0.29).cos();
        ((1.0 - d) * 12.0 + bumps).max(0.0)
    })
    .unwrap()
}

#[test]
fn snowballs_end_at_the_sea_without_digging_below_it() {
    // A cone island rising out of a sea 3 m deep (sea level 0).
    let hm = Heightmap::from_fn(80, 80, 1.0, |x, y| {
        let d = ((x as f32 - 40.0).powi(2) + (y as f32 - 40.0).powi(2)).sqrt() / 40.0;
        (1.0 - d) * 14.0 - 3.0 + 0.6 * (x as f32 * 0.37).sin() * (y as f32 * 0.29).cos()
    })
    .unwrap();
    let p =
        SnowballParams { snowballs_per_km2: dens(6000, 80), erosion_rate: 0.2, blur_sigma_m: 0.0, batch: 2000, ..v1() };
    for parallel in [false, true] {
        let inputs =
            JobInputs { boundary: Boundary::all(EdgeMode::Wall), seed: 5, sea_level: Some(0.0), ..Default::default() };
        let mut j = SnowballJob::new(hm.clone(), SnowballParams { parallel, ..p.clone() }, inputs).unwrap();
        while !j.is_done() {
            j.step();
        }
        j.finish();
        let l = j.ledger();
        assert!(l.closes(1e-5), "{l:?}");
        assert!(l.eroded > 1.0);
        for (i, (&a, &b)) in hm.data.iter().zip(&j.heightmap().data).enumerate() {
            if a > 0.0 {
                assert!(b >= 0.0, "land node {i} dug to {b}");
            } else {
                // Under water nothing is dug: a sea node may take a deposit (and lose it
                // again down to the water line), never end below where it started.
                assert!(b >= a - 1e-5, "sea node {i} dug from {a} to {b}");
            }
        }
    }
}

fn job(hm: Heightmap, p: SnowballParams, b: Boundary) -> SnowballJob {
    SnowballJob::new(hm, p, JobInputs { boundary: b, seed: 11, ..Default::default() }).unwrap()
}

fn run(j: &mut SnowballJob) {
    while !j.is_done() {
        j.step();
    }
    j.finish();
}

#[test]
fn first_iteration_neither_erodes_nor_deposits() {
    // i = 0: erosion is scaled by min(1, 0) and the load is 0, so one iteration changes nothing.
    let p = SnowballParams { snowballs_per_km2: dens(50, 32), max_iterations: 1, blur_sigma_m: 0.0, ..v1() };
    let hm = island(32);
    let mut j = job(hm.clone(), p, Boundary::default());
    run(&mut j);
    assert_eq!(j.hm, hm);
    // Every snowball visits at least its start node.
    assert!(j.flow.iter().sum::<f32>() >= 50.0);
}

#[test]
fn snowballs_carve_the_slopes_and_deposit_below() {
    let p = SnowballParams { snowballs_per_km2: dens(2000, 48), blur_sigma_m: 0.0, ..v1() };
    let before = island(48);
    let mut j = job(before.clone(), p, Boundary::default());
    run(&mut j);
    let l = j.ledger();
    assert!(l.eroded > 0.0 && l.deposited > 0.0);
    assert!(l.closes(1e-4), "{l:?}");
    // Erosion happens on the slopes (height > 0), not on the flat sea floor.
    let eroded_on_land: f32 = j.maps.eroded.iter().zip(&before.data).filter(|(_, h)| **h > 0.5).map(|(e, _)| *e).sum();
    let total: f32 = j.maps.eroded.iter().sum();
    assert!(eroded_on_land > 0.95 * total, "{eroded_on_land} of {total}");
}

#[test]
fn the_step_follows_the_seed_formulas() {
    // On a plane h = −a·x (downhill towards +x) the normal is (a, 1, 0)/√(1+a²).
    let a = 0.5f32;
    let hm = Heightmap::from_fn(64, 16, 1.0, |x, _| 5.0 - a * x as f32).unwrap();
    let p = SnowballParams {
        snowballs_per_km2: MapSize::new(64, 16, 1.0).per_km2(1),
        offset_radius_m: 0.0,
        max_iterations: 3,
        blur_sigma_m: 0.0,
        ..v1()
    };
    // The seed's 4-node stamp (reach 1), and a tent of half-width 3 nodes taking 9× the height
    // (a 3 m footprint on these 1 m cells): on a plane the normal is the same at ±3 nodes, and
    // the books scale by 9.
    for (reach, scale) in [(1.0f32, 1.0f32), (3.0, 9.0)] {
        let mut j = job(hm.clone(), p.clone(), Boundary::all(EdgeMode::Wall));
        let mut s = j.spawn(0);
        s.x = 10.0;
        s.y = 8.0;
        s.px = 10.0;
        s.py = 8.0;
        let raw = Raw {
            h: j.hm.data.as_mut_ptr(),
            ero: j.maps.eroded.as_mut_ptr(),
            dep: j.maps.deposited.as_mut_ptr(),
            flow: j.flow.as_mut_ptr(),
            fvol: std::ptr::null_mut(),
            hard: std::ptr::null(),
            n: 64 * 16,
        };
        let ctx = Ctx {
            geom: j.geom,
            raw,
            erosion_rate: p.erosion_rate * scale,
            deposition_rate: p.deposition_rate,
            speed: p.speed_m,
            friction: p.friction,
            max_iter: 3,
            iter_scale: p.iteration_scale,
            reach,
            reach_nodes: reach as usize,
            inv_2cs: 0.5 / reach,
            margin: 3 * reach as usize,
            sea: f32::NEG_INFINITY,
            spread: false,
            sink: None,
        };
        let mut b = Books::default();
        // SAFETY: `raw` points at `j`'s live maps (`n` = 64 × 16 nodes), and this single-threaded
        // test is their only user (`rect = None`).
        unsafe { ctx.walk(&mut s, None, &mut b) };
        let ny = 1.0 / (1.0 + a * a).sqrt();
        let nx = a * ny;
        // Velocities: v1 = nx·speed, v2 = f·v1 + nx·speed, v3 = f·v2 + nx·speed.
        let v1 = nx * p.speed_m;
        let v2 = p.friction * v1 + nx * p.speed_m;
        let v3 = p.friction * v2 + nx * p.speed_m;
        assert!((s.x - (10.0 + v1 + v2 + v3)).abs() < 1e-4, "{}", s.x);
        assert!((s.y - 8.0).abs() < 1e-6);
        // Erosion: i = 0 → 0, i = 1 → e·(1−ny)·0.04, i = 2 → e·(1−ny)·0.08; deposits are tiny
        // (load · 0.03 · ny), and everything ends on the map: eroded = deposited.
        let e1 = scale * p.erosion_rate * (1.0 - ny) * 0.04;
        let e2 = scale * p.erosion_rate * (1.0 - ny) * 0.08;
        assert!(((b.eroded - b.deposited) as f32).abs() < 1e-6 * scale);
        let dep2 = e1 * p.deposition_rate * ny;
        // (f32 rounding of heights near 5 m is ~5e-7 per node, ~1 % of these tiny changes.)
        assert!((b.eroded as f32 - (e1 + e2 - dep2)).abs() < 1e-2 * (e1 + e2), "{} vs {}", b.eroded, e1 + e2 - dep2);
        assert!(!s.alive && s.sediment == 0.0);
        // The tent spread the change over 5 × 5 nodes around each position, not 2 × 2.
        let changed = j.maps.eroded.iter().zip(&j.maps.deposited).filter(|(e, d)| **e + **d > 0.0).count();
        assert!(if reach > 1.0 { changed >= 25 } else { changed <= 8 }, "reach {reach}: {changed} nodes changed");
    }
}

#[test]
fn blur_is_booked_and_the_ledger_closes_in_every_mode() {
    for b in [Boundary::default(), Boundary::all(EdgeMode::Wall), Boundary::all(EdgeMode::Wrap)] {
        for parallel in [false, true] {
            let p = SnowballParams { snowballs_per_km2: dens(600, 40), batch: 256, parallel, ..v1() };
            let mut j = job(island(40), p, b);
            run(&mut j);
            let l = j.ledger();
            assert!(l.closes(1e-4), "{b:?} {parallel} {l:?}");
            let e: f64 = j.maps.eroded.iter().map(|&v| v as f64).sum();
            assert!((e - l.eroded).abs() <= 1e-3 * l.eroded, "{e} {}", l.eroded);
            // finish() twice blurs once.
            let h = j.hm.clone();
            j.finish();
            assert_eq!(j.hm, h);
        }
    }
}

#[test]
fn hardness_zero_is_rock() {
    let hm = island(40);
    let hard: Vec<f32> = (0..hm.len()).map(|i| if i % 40 < 20 { 0.0 } else { 1.0 }).collect();
    let p = SnowballParams { snowballs_per_km2: dens(800, 40), ..v1() };
    let mut j =
        SnowballJob::new(hm.clone(), p, JobInputs { hardness: Some(hard), seed: 1, ..Default::default() }).unwrap();
    run(&mut j);
    for y in 0..40 {
        for x in 0..20 {
            assert!(j.hm.get(x, y) >= hm.get(x, y), "rock at {x},{y} lost height");
        }
    }
    assert!(j.ledger().closes(1e-4));
}

#[test]
fn bad_parameters_are_refused() {
    let hm = island(8);
    for p in [
        SnowballParams { friction: 1.5, ..Default::default() },
        SnowballParams { speed_m: f32::NAN, ..Default::default() },
        SnowballParams { max_iterations: 0, ..Default::default() },
        SnowballParams { blur_sigma_m: -1.0, ..Default::default() },
        SnowballParams { offset_radius_m: 1e9, ..Default::default() },
        SnowballParams { snowballs_per_km2: -1.0, ..Default::default() },
        SnowballParams { batch: 0, ..Default::default() },
    ] {
        assert!(SnowballJob::new(hm.clone(), p, JobInputs::default()).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// Steering masks (issue #16 item 3).

use crate::core::brush::Falloff;
use crate::core::erosion::steer::{Steer, disc_mask};

fn steer_ramp(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| 0.2 * x as f32 + 0.03 * ((x as f32 * 0.7).sin() * (y as f32 * 0.45).cos()))
        .unwrap()
}

fn steered(hm: Heightmap, p: SnowballParams, steer: Option<Steer>) -> SnowballJob {
    SnowballJob::new(hm, p, JobInputs { seed: 5, steer, ..Default::default() }).unwrap()
}

fn run_all(j: &mut SnowballJob) {
    while !j.is_done() {
        j.step();
    }
    j.finish();
}

#[test]
fn steered_snowballs_spawn_alive_only_where_the_mask_is() {
    let n = 96;
    let mask = disc_mask(n, n, [30.0, 50.0], 8.0, Falloff::Smooth);
    let j = steered(steer_ramp(n), v1(), Some(Steer::new(mask.clone(), false)));
    let mut alive = 0;
    for id in 0..10_000 {
        let s = j.spawn(id);
        if s.alive {
            alive += 1;
            let k = (s.y + 0.5) as usize * n + (s.x + 0.5) as usize;
            assert!(mask[k] > 0.0, "snowball {id} alive at ({}, {})", s.x, s.y);
        }
    }
    assert!(alive > 1000);
}

#[test]
fn a_mask_of_ones_rolls_exactly_as_no_mask() {
    let p = SnowballParams { snowballs_per_km2: dens(3000, 64), batch: 1000, ..v1() };
    let go = |steer: Option<Steer>| {
        let mut j = steered(island(64), p.clone(), steer);
        run_all(&mut j);
        (j.hm.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), j.ledger())
    };
    let none = go(None);
    assert!(none.1.eroded > 0.0);
    assert!(none == go(Some(Steer::new(vec![1.0; 64 * 64], false))));
}

#[test]
fn masked_and_sink_snowballs_keep_to_their_flow_paths() {
    let n = 80;
    let edge = (0.3 * n as f32) as usize;
    let hm = steer_ramp(n);
    let p = SnowballParams { snowballs_per_km2: dens(4000, n), blur_sigma_m: 0.0, erosion_rate: 0.2, ..v1() };
    // Rain only left of `edge`: nothing right of it (beyond the offset reach) changes.
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n < edge { 1.0 } else { 0.0 }).collect();
    let mut j = steered(hm.clone(), p.clone(), Some(Steer::new(mask, false)));
    run_all(&mut j);
    assert!(j.ledger().eroded > 0.0);
    for (i, (a, b)) in hm.data.iter().zip(&j.hm.data).enumerate() {
        if i % n > edge + 4 {
            assert_eq!(a.to_bits(), b.to_bits(), "({}, {}) changed", i % n, i / n);
        }
    }
    // Rain right of a sink band: nothing past the band changes, the band is never lowered.
    let (b0, b1) = (24usize, 32usize);
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n >= b1 { 1.0 } else { 0.0 }).collect();
    let mut j = steered(hm.clone(), p, Some(Steer::new(mask, true)));
    run_all(&mut j);
    assert!(j.ledger().eroded > 0.0);
    assert!(j.ledger().closes(1e-6), "{:?}", j.ledger());
    crate::core::erosion::steer::assert_sink_band(&hm.data, &j.hm.data, n, b0, b1);
}

// ---------------------------------------------------------------------------------------------
// World units (version 1 held grid units).

#[test]
fn version_1_params_convert_to_world_units_and_run_as_they_did() {
    // Made for a 64² map of 2 m cells.
    let v1_ron = "(snowballs: 3000, speed: 0.2, offset_radius: 1.5, blur_sigma: 0.5, erosion_rate: 0.1, batch: 1000)";
    let map = MapSize::new(64, 64, 2.0);
    let mut old: SnowballParams = ron::from_str(v1_ron).unwrap();
    assert!(crate::core::units::Legacy::has_legacy(&old));
    old.upgrade_units(map);
    assert!(!crate::core::units::Legacy::has_legacy(&old));
    let new = SnowballParams {
        snowballs_per_km2: map.per_km2(3000),
        speed_m: 0.4,
        offset_radius_m: 3.0,
        blur_sigma_m: 1.0,
        erosion_rate: 0.1,
        batch: 1000,
        ..Default::default()
    };
    assert_eq!(old, new);
    assert_eq!(
        new.in_grid_units(map),
        SnowballGrid {
            snowballs: 3000,
            speed: 0.2,
            offset_radius: 1.5,
            blur_sigma: 0.5,
            reach: 1.0,
            erosion_rate: 0.1
        }
    );
    let text = ron::to_string(&new).unwrap();
    for old_name in ["(snowballs:", " speed:", " offset_radius:", " blur_sigma:"] {
        assert!(!text.contains(old_name), "{old_name} in {text}");
    }
    // The job converts version-1 values with its terrain's cell size, to the same bits.
    let mut hm = island(64);
    hm.cell_size = 2.0;
    let mut a = job(hm.clone(), ron::from_str(v1_ron).unwrap(), Boundary::default());
    let mut b = job(hm, new.clone(), Boundary::default());
    assert_eq!((a.params(), a.progress().total), (&new, 3000));
    run(&mut a);
    run(&mut b);
    assert!(a.ledger().eroded > 0.0);
    assert!(a.hm.data.iter().zip(&b.hm.data).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert_eq!(a.ledger(), b.ledger());
}

#[test]
fn the_same_world_values_mean_the_same_land_at_any_cell_size() {
    let p = SnowballParams::default();
    let coarse = p.in_grid_units(MapSize::new(257, 257, 4.0));
    let island = p.in_grid_units(MapSize::new(513, 513, 2.0));
    let fine = p.in_grid_units(MapSize::new(2049, 2049, 0.5));
    assert_eq!([coarse.snowballs, island.snowballs, fine.snowballs], [35_000; 3]);
    assert_eq!([coarse.speed, island.speed, fine.speed], [0.075, 0.15, 0.6]);
    assert_eq!([coarse.offset_radius, island.offset_radius, fine.offset_radius], [0.4, 0.8, 3.2]);
    // One iteration moves `erosion_rate · footprint_m²` = 0.16 m³: on the 4 nodes of 4 m cells
    // (16 m² each), of 2 m cells, and on a tent of half-width 4 nodes of 0.5 m cells.
    assert_eq!([coarse.reach, island.reach, fine.reach], [1.0, 1.0, 4.0]);
    assert_eq!([coarse.erosion_rate, island.erosion_rate, fine.erosion_rate], [0.01, 0.04, 0.64]);
    // The stamp stays within 16 nodes.
    let g = SnowballParams { footprint_m: 100.0, ..p.clone() }.in_grid_units(MapSize::new(64, 64, 1.0));
    assert_eq!((g.reach, g.erosion_rate), (16.0, 400.0));
    // The offset stays within 64 nodes (a particle task's margin).
    let g = SnowballParams { offset_radius_m: 1.0e4, ..p }.in_grid_units(MapSize::new(64, 64, 1.0));
    assert_eq!(g.offset_radius, 64.0);
}

/// The stamp on cells finer than the footprint: in-map weights that sum to 1, every node within
/// `⌈r⌉` of the point's cell, the tent's shape, and renormalised at a drain edge or wrapped.
#[test]
fn the_tent_sums_to_one_and_keeps_within_its_reach() {
    let bounded = Geom::new(40, 30, &Boundary::default());
    let wrapped = Geom::new(40, 30, &Boundary::all(EdgeMode::Wrap));
    for (g, x, y, r) in [
        (&bounded, 20.3, 14.7, 4.0),
        (&bounded, 20.0, 15.0, 2.5),
        (&bounded, 0.4, 29.0, 3.0),
        (&bounded, 39.0, 0.0, 16.0),
        (&wrapped, 0.2, 29.6, 3.5),
    ] {
        let mut taps = Vec::new();
        tent(g, x, y, r, |i, w| taps.push((i, w)));
        let sum: f64 = taps.iter().map(|t| t.1 as f64).sum();
        assert!((sum - 1.0).abs() < 1e-5, "({x}, {y}) r {r}: sum {sum}");
        let (cx, cy) = g.owner_cell(x, y);
        let reach = r.ceil() as isize;
        for &(i, w) in &taps {
            assert!(w > 0.0);
            let (nx, ny) = ((i % g.w) as isize, (i / g.w) as isize);
            let near = |n: isize, c: usize, len: usize, wrap: bool| {
                let d = (n - c as isize).abs();
                if wrap { d.min(len as isize - d) <= reach } else { d <= reach }
            };
            assert!(near(nx, cx, g.w, g.wrap_x) && near(ny, cy, g.h, g.wrap_y), "node ({nx}, {ny}) from ({x}, {y})");
        }
    }
    // In the open, the weights are the tent's: the nearest node weighs most, and with r = 2 the
    // node one node off on each axis weighs (1 − 1/2)² of the centre's at a node's position.
    let mut taps = Vec::new();
    tent(&bounded, 20.0, 15.0, 2.0, |i, w| taps.push((i, w)));
    assert_eq!(taps.len(), 9);
    let at = |x: usize, y: usize| taps.iter().find(|t| t.0 == y * 40 + x).unwrap().1;
    assert!((at(21, 16) / at(20, 15) - 0.25).abs() < 1e-6 && (at(21, 15) / at(20, 15) - 0.5).abs() < 1e-6);
}

/// A ribbed hillside in metres, 128 m across, at `cell` metres: the same world at any cell size.
fn ribbed_world(cell: f32) -> Heightmap {
    let n = (128.0 / cell) as usize + 1;
    Heightmap::from_fn(n, n, cell, |x, y| {
        let (x, y) = (x as f32 * cell, y as f32 * cell);
        0.35 * y + 1.5 * (x * 0.19).sin() * (y * 0.07).cos() + 0.8 * (x * 0.05 + y * 0.11).sin()
    })
    .unwrap()
}

/// The same land at any cell size: the same world (a ribbed hillside in metres, 128 m across)
/// at 4, 2, 1 and 0.5 m cells, the same density of snowballs, the blur off. With the erosion
/// rate over the footprint the volume moved stays within 5 % of the 2 m run's; as a rate on
/// the 4 nodes around a point (the old reading) it fell as `Δx²`, to 1/16 at 0.5 m.
#[test]
fn snowballs_move_the_same_volume_at_any_cell_size() {
    let moved = |cell: f32| {
        let p =
            SnowballParams { snowballs_per_km2: 400_000.0, blur_sigma_m: 0.0, parallel: false, ..Default::default() };
        let mut j = job(ribbed_world(cell), p, Boundary::default());
        run(&mut j);
        let l = j.ledger();
        assert!(l.eroded > 0.0);
        l.eroded * (cell as f64).powi(2)
    };
    let at2 = moved(2.0);
    for cell in [4.0, 1.0, 0.5] {
        let v = moved(cell);
        eprintln!("snowballs on {cell} m cells moved {v:.1} m³ (2 m cells: {at2:.1} m³, ×{:.3})", v / at2);
        assert!((v / at2 - 1.0).abs() < 0.05, "{cell} m cells moved {v:.1} m³, 2 m cells {at2:.1} m³");
    }
}

/// With a sea, a snowball that stops drops its load (a volume) over the same metres at any cell
/// size: on 0.5 m cells the highest deposit on land stands about as high as on 2 m cells, where
/// a disc of 2.5 of the finer nodes would heap the same volume 16 times higher.
#[test]
fn with_a_sea_stopped_loads_stand_as_high_at_any_cell_size() {
    let highest = |cell: f32| {
        let p = SnowballParams {
            snowballs_per_km2: 400_000.0,
            blur_sigma_m: 0.0,
            max_iterations: 30,
            parallel: false,
            ..Default::default()
        };
        let before = ribbed_world(cell);
        let mut j =
            SnowballJob::new(before.clone(), p, JobInputs { seed: 11, sea_level: Some(12.0), ..Default::default() })
                .unwrap();
        run(&mut j);
        let after = j.heightmap();
        before.data.iter().zip(&after.data).filter(|(b, _)| **b > 12.0).map(|(b, a)| a - b).fold(0.0f32, f32::max)
    };
    let (coarse, fine) = (highest(2.0), highest(0.5));
    eprintln!("highest deposit on land: {coarse:.3} m on 2 m cells, {fine:.3} m on 0.5 m cells");
    assert!(coarse > 0.0 && fine < 1.5 * coarse && fine > 0.5 * coarse, "{fine} m vs {coarse} m");
}
