//! Integration tests of the stream-power model (src/core/erosion/stream_power).

use proptest::prelude::*;
use talus::core::erosion::stream_power::{
    FlowMethod, FlowRouting, StreamPowerJob, StreamPowerParams, UpliftMode, route_flow,
};
use talus::core::erosion::{Boundary, EdgeMode, JobInputs, ModelParams, Simulation, build};
use talus::core::heightmap::Heightmap;
use talus::core::rng::{hash2, unit_f32};

fn left_drain() -> Boundary {
    Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall }
}

/// Rough terrain full of pits: white noise on a slope toward the left, metres.
fn pitted(w: usize, h: usize, seed: u64) -> Heightmap {
    Heightmap::from_fn(w, h, 10.0, |x, y| 2.0 * x as f32 + 30.0 * unit_f32(hash2(x as i64, y as i64, seed))).unwrap()
}

/// Smooth bilinear noise (few pits), metres.
fn smooth(w: usize, h: usize, seed: u64) -> Heightmap {
    let l = |x: i64, y: i64| unit_f32(hash2(x, y, seed)) * 200.0;
    Heightmap::from_fn(w, h, 10.0, |x, y| {
        let (fx, fy) = (x as f32 / 8.0, y as f32 / 8.0);
        let (x0, y0) = (fx.floor(), fy.floor());
        let (u, v) = (fx - x0, fy - y0);
        let (xi, yi) = (x0 as i64, y0 as i64);
        let a = l(xi, yi) * (1.0 - u) + l(xi + 1, yi) * u;
        let b = l(xi, yi + 1) * (1.0 - u) + l(xi + 1, yi + 1) * u;
        a * (1.0 - v) + b * v + x as f32 * 0.5
    })
    .unwrap()
}

/// The model as it was before terrain-following uplift, MFD and diffusion became the defaults:
/// for the tests whose expectations are the pure D8 Braun–Willett scheme.
fn classic() -> StreamPowerParams {
    StreamPowerParams {
        uplift_mode: UpliftMode::Uniform,
        routing: FlowMethod::D8,
        diffusion: 0.0,
        ..Default::default()
    }
}

fn job(hm: Heightmap, p: StreamPowerParams, boundary: Boundary) -> StreamPowerJob {
    StreamPowerJob::new(hm, p, JobInputs { hardness: None, boundary, seed: 1, ..Default::default() }).unwrap()
}

fn run_all(j: &mut StreamPowerJob) {
    while !j.is_done() {
        j.step();
    }
    j.finish();
}

/// Follows receivers from `i` to its root; `None` on a cycle.
fn root_of(r: &FlowRouting, mut i: usize) -> Option<usize> {
    for _ in 0..=r.receivers.len() {
        let n = r.receivers[i] as usize;
        if n == i {
            return Some(i);
        }
        i = n;
    }
    None
}

/// True when `j` is one of the eight neighbours of `i` on a map `w` wide (no wrapping).
fn neighbours(w: usize, i: usize, j: usize) -> bool {
    let (xi, yi, xj, yj) = ((i % w) as i64, (i / w) as i64, (j % w) as i64, (j / w) as i64);
    (xi - xj).abs() <= 1 && (yi - yj).abs() <= 1 && i != j
}

#[test]
fn receivers_descend_or_are_outlets_without_pits() {
    // A smooth slope toward every edge has no pits: every receiver is a strictly lower neighbour.
    let hm = Heightmap::from_fn(40, 30, 5.0, |x, y| {
        let (dx, dy) = (x as f32 - 19.5, y as f32 - 14.5);
        1000.0 - dx * dx - dy * dy * 1.3 + 0.01 * (x * y) as f32
    })
    .unwrap();
    let r = route_flow(&hm, Boundary::default());
    assert_eq!(r.pits, 0);
    for i in 0..hm.len() {
        let rc = r.receivers[i] as usize;
        if r.outlet[i] == 1 {
            assert_eq!(rc, i);
        } else {
            assert!(neighbours(hm.width, i, rc));
            assert!(hm.data[rc] < hm.data[i], "node {i} does not descend");
        }
    }
}

#[test]
fn every_node_reaches_an_outlet_on_a_terrain_with_pits() {
    for (seed, boundary) in [
        (1, Boundary::default()),
        (2, left_drain()),
        (3, Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall }),
    ] {
        let hm = pitted(48, 40, seed);
        let r = route_flow(&hm, boundary);
        assert!(r.pits > 50, "the test terrain must have pits ({})", r.pits);
        let filled: Vec<f32> = hm.data.iter().zip(&r.lake_level).map(|(&h, &l)| h.max(l)).collect();
        let mut at_outlets = 0u64;
        for i in 0..hm.len() {
            let root = root_of(&r, i).expect("no receiver cycle");
            assert_eq!(r.outlet[root], 1, "node {i} is trapped");
            let rc = r.receivers[i] as usize;
            if rc != i {
                // Receivers descend on the lake-filled surface, and outside lakes on the terrain.
                assert!(filled[rc] <= filled[i], "filled surface rises from {i} to {rc}");
                if hm.data[i] >= r.lake_level[i] {
                    assert!(hm.data[rc] <= hm.data[i], "non-lake node {i} flows uphill");
                }
            }
            if r.outlet[i] == 1 {
                at_outlets += r.area[i] as u64;
            }
        }
        assert_eq!(at_outlets, hm.len() as u64, "drainage area at the outlets = node count");
        // The stack lists every node once, receivers first.
        let mut pos = vec![usize::MAX; hm.len()];
        for (k, &v) in r.stack.iter().enumerate() {
            assert_eq!(pos[v as usize], usize::MAX);
            pos[v as usize] = k;
        }
        for i in 0..hm.len() {
            assert!(pos[r.receivers[i] as usize] <= pos[i]);
        }
    }
}

/// Steady state of a uniformly uplifted tilted plane draining to its left edge: every row is a
/// 1-D channel with area `A = (W − x)·Δx²`, so `S = (U / (K·A^m))^(1/n)`.
fn steady_state(n: f32) {
    let (w, h, dx) = (30usize, 4usize, 10.0f32);
    let hm = Heightmap::from_fn(w, h, dx, |x, _| x as f32 * 5.0).unwrap();
    let p = StreamPowerParams { steps: 300, dt: 1.0e5, uplift: 1.0e-3, k: 2.0e-5, m: 0.5, n, ..classic() };
    let (u, k, m) = (p.uplift as f64, p.k as f64, p.m as f64);
    let mut j = job(hm, p, left_drain());
    run_all(&mut j);
    let d = &j.heightmap().data;
    for y in 0..h {
        for x in 1..w {
            let area = ((w - x) as f64) * (dx as f64).powi(2);
            let expect = (u / (k * area.powf(m))).powf(1.0 / n as f64);
            let got = (d[y * w + x] as f64 - d[y * w + x - 1] as f64) / dx as f64;
            assert!((got - expect).abs() <= 2e-3 * expect, "n={n} x={x}: slope {got} vs {expect}");
        }
    }
    assert!(j.ledger().closes(1e-4));
}

#[test]
fn tilted_plane_reaches_the_analytic_steady_state_n1() {
    steady_state(1.0);
}

#[test]
fn tilted_plane_reaches_the_analytic_steady_state_n2() {
    steady_state(2.0);
}

#[test]
fn slope_exponent_below_one_runs_and_incises() {
    let hm = smooth(40, 40, 9);
    let before = hm.clone();
    let p = StreamPowerParams {
        steps: 10,
        n: 0.6,
        uplift: 0.0,
        lake_deposition: false,
        diffusion: 0.0,
        ..Default::default()
    };
    let mut j = job(hm, p, Boundary::default());
    run_all(&mut j);
    assert!(j.heightmap().all_finite());
    assert!(j.ledger().eroded > 0.0);
    // Without uplift or lake filling, incision only lowers nodes.
    assert!(j.heightmap().data.iter().zip(&before.data).all(|(a, b)| a <= b));
    assert!(j.ledger().closes(1e-4));
}

fn books_close(hm: Heightmap, p: StreamPowerParams, inputs: JobInputs) -> talus::core::erosion::Ledger {
    let mut j = StreamPowerJob::new(hm, p, inputs).unwrap();
    run_all(&mut j);
    let l = j.ledger();
    assert!(
        l.closes(1e-4),
        "ledger does not close: {l:?} (terrain {}, material {})",
        l.terrain_error(),
        l.material_error()
    );
    // The maps hold the same totals as the books.
    let (e, d): (f64, f64) =
        (j.maps().eroded.iter().map(|&v| v as f64).sum(), j.maps().deposited.iter().map(|&v| v as f64).sum());
    assert!((e - l.eroded).abs() <= 1e-3 * l.moved() && (d - l.deposited).abs() <= 1e-3 * l.moved());
    l
}

#[test]
fn ledger_closes_for_every_configuration() {
    let n = 48 * 40;
    let hard: Vec<f32> = (0..n).map(|i| unit_f32(hash2(i as i64, 7, 3)) * 2.0).collect();
    let umap: Vec<f32> = (0..n).map(|i| 1e-3 * unit_f32(hash2(i as i64, 9, 4))).collect();
    let base = StreamPowerParams { steps: 6, ..Default::default() };
    let cases = [
        (base.clone(), Boundary::default(), None),
        (StreamPowerParams { diffusion: 0.5, ..base.clone() }, Boundary::default(), Some(hard.clone())),
        (StreamPowerParams { n: 1.5, uplift_map: Some(umap.clone()), ..base.clone() }, left_drain(), None),
        (StreamPowerParams { lake_deposition: false, ..base.clone() }, left_drain(), Some(hard.clone())),
        (StreamPowerParams { diffusion: 2.0, ..base.clone() }, Boundary::all(EdgeMode::Wall), None),
        (
            StreamPowerParams { diffusion: 0.1, m: 0.5, ..base.clone() },
            Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Wrap, bottom: EdgeMode::Drain },
            None,
        ),
        (base.clone(), Boundary::all(EdgeMode::Wrap), None),
    ];
    for (p, b, hardness) in cases {
        let l = books_close(
            pitted(48, 40, 5),
            p.clone(),
            JobInputs { hardness: hardness.clone(), boundary: b, seed: 0, ..Default::default() },
        );
        assert!(l.eroded > 0.0, "{p:?} {b:?}");
        let l = books_close(smooth(48, 40, 6), p, JobInputs { hardness, boundary: b, seed: 0, ..Default::default() });
        assert_eq!(l.suspended, 0.0);
    }
}

#[test]
fn closed_map_loses_nothing() {
    let l = books_close(
        pitted(32, 32, 11),
        StreamPowerParams { steps: 5, diffusion: 1.0, ..Default::default() },
        JobInputs { boundary: Boundary::all(EdgeMode::Wall), ..Default::default() },
    );
    assert!(l.lost_at_border.abs() <= 1e-6 * l.moved(), "{l:?}");
    // Without uplift the volume is conserved.
    let hm = pitted(32, 32, 12);
    let mut j = job(
        hm.clone(),
        StreamPowerParams { steps: 5, uplift: 0.0, ..Default::default() },
        Boundary::all(EdgeMode::Wall),
    );
    run_all(&mut j);
    assert!(j.ledger().eroded > 0.0);
    assert!((j.heightmap().sum() - hm.sum()).abs() <= 1e-5 * j.ledger().moved());
}

#[test]
fn lakes_fill_with_sediment_instead_of_vanishing() {
    // A slope draining left with a deep pit in the middle: sediment eroded upstream fills it.
    let (w, h) = (40usize, 9usize);
    let pit = 4 * w + 20;
    let hm = Heightmap::from_fn(w, h, 10.0, |x, y| {
        let base = x as f32 * 10.0;
        if y * w + x == pit { base - 60.0 } else { base }
    })
    .unwrap();
    let p = StreamPowerParams { steps: 3, uplift: 0.0, k: 5e-5, diffusion: 0.0, ..Default::default() };
    let r0 = route_flow(&hm, left_drain());
    assert!(r0.lake_level[pit] > hm.data[pit]);
    let mut j = job(hm.clone(), p.clone(), left_drain());
    run_all(&mut j);
    let l = j.ledger();
    assert!(j.heightmap().data[pit] > hm.data[pit] + 1.0, "the pit received sediment");
    assert!(l.deposited > 0.0 && l.lost_at_border < l.eroded);
    assert!(l.closes(1e-4));
    // Switched off, the lake keeps its depth and everything leaves.
    let mut j = job(hm.clone(), StreamPowerParams { lake_deposition: false, ..p }, left_drain());
    run_all(&mut j);
    assert_eq!(j.heightmap().data[pit], hm.data[pit]);
    assert!((j.ledger().lost_at_border - j.ledger().eroded).abs() <= 1e-9 * j.ledger().moved());
    // The lake shows up as water depth while it is there.
    let j = job(hm.clone(), StreamPowerParams::default(), left_drain());
    let water = j.fields().water.unwrap();
    // Pit at 140 m, lowest neighbour (the pass) at 190 m.
    assert_eq!(water[pit], 50.0);
}

#[test]
fn flow_field_is_the_drainage_area_in_nodes() {
    let hm = smooth(32, 24, 2);
    let mut j = job(hm, StreamPowerParams { steps: 2, ..Default::default() }, Boundary::default());
    j.step();
    let flow = j.fields().flow.unwrap();
    let area = j.drainage_area();
    assert!(flow.iter().zip(&area).all(|(&f, &a)| f == a as f32));
    assert!(flow.iter().all(|&f| f >= 1.0));
    let outlets: f64 = (0..flow.len())
        .filter(|&i| {
            let (x, y) = (i % 32, i / 32);
            x == 0 || y == 0 || x == 31 || y == 23
        })
        .map(|i| flow[i] as f64)
        .sum();
    // MFD areas are fractions; their total is still the node count.
    assert!((outlets - (32 * 24) as f64).abs() < 1e-2, "{outlets}");
    // D8 areas are whole node counts.
    let hm = smooth(32, 24, 2);
    let mut j = job(hm, StreamPowerParams { steps: 2, ..classic() }, Boundary::default());
    j.step();
    let flow = j.fields().flow.unwrap();
    assert!(flow.iter().all(|&f| f == f.round() && f >= 1.0));
}

fn run_in_pool(
    threads: usize,
    hm: &Heightmap,
    p: &StreamPowerParams,
    hardness: Option<Vec<f32>>,
    boundary: Boundary,
) -> (Vec<u32>, String, Vec<u32>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut j =
            StreamPowerJob::new(hm.clone(), p.clone(), JobInputs { hardness, boundary, seed: 4, ..Default::default() })
                .unwrap();
        run_all(&mut j);
        let bits = j.heightmap().data.iter().map(|v| v.to_bits()).collect();
        let maps = j.maps().eroded.iter().chain(&j.maps().deposited).map(|v| v.to_bits()).collect();
        (bits, format!("{:?}", j.ledger()), maps)
    })
}

#[test]
fn same_bits_with_one_and_two_threads() {
    let hm = pitted(96, 80, 21);
    let hard: Vec<f32> = (0..hm.len()).map(|i| 0.5 + unit_f32(hash2(i as i64, 1, 1))).collect();
    let wrap = Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall };
    for (p, b) in [
        (StreamPowerParams { steps: 4, diffusion: 0.3, ..Default::default() }, Boundary::default()),
        (StreamPowerParams { steps: 3, n: 2.0, ..Default::default() }, Boundary::default()),
        (StreamPowerParams { steps: 3, diffusion: 1.0, ..Default::default() }, Boundary::all(EdgeMode::Wall)),
        (StreamPowerParams { steps: 3, m: 0.5, ..Default::default() }, wrap),
        (StreamPowerParams { steps: 3, ..classic() }, Boundary::default()),
    ] {
        let a = run_in_pool(1, &hm, &p, Some(hard.clone()), b);
        let c = run_in_pool(2, &hm, &p, Some(hard.clone()), b);
        assert!(a == c, "results differ between 1 and 2 threads for {p:?} {b:?}");
    }
}

#[test]
fn runs_through_build_and_stops_on_cancel() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let hm = smooth(24, 24, 3);
    let params = ModelParams::StreamPower(StreamPowerParams { steps: 50, ..Default::default() });
    let mut sim = build(hm, &params, JobInputs::default()).unwrap();
    let cancel = AtomicBool::new(false);
    let mut seen = 0;
    let end = talus::core::erosion::run(sim.as_mut(), &cancel, |s| {
        seen += 1;
        if s.progress().done == 7 {
            cancel.store(true, Ordering::Relaxed);
        }
    });
    assert_eq!(end, talus::core::erosion::RunEnd::Cancelled);
    assert_eq!((seen, sim.progress().done, sim.progress().total), (7, 7, 50));
    assert!(sim.ledger().closes(1e-4));
}

#[test]
fn tiny_maps_do_not_panic() {
    for (w, h) in [(1, 1), (1, 5), (5, 1), (2, 2), (3, 2)] {
        for b in [Boundary::default(), Boundary::all(EdgeMode::Wall), Boundary::all(EdgeMode::Wrap), left_drain()] {
            let hm = Heightmap::from_fn(w, h, 1.0, |x, y| (x * 3 + y * 7 % 5) as f32).unwrap();
            let mut j = job(hm, StreamPowerParams { steps: 3, diffusion: 1.0, ..Default::default() }, b);
            run_all(&mut j);
            assert!(j.heightmap().all_finite());
            assert!(j.ledger().closes(1e-4), "{w}x{h} {b:?}: {:?}", j.ledger());
        }
    }
}

#[test]
fn extreme_heights_and_parameters_stay_finite() {
    let huge = Heightmap::from_fn(9, 7, 1.0e5, |x, y| if (x + y) % 2 == 0 { 3.0e37 } else { -3.0e37 }).unwrap();
    let tiny = Heightmap::from_fn(9, 7, 1.0e-3, |x, y| 1.0e-30 * (x * 7 + y * 3 % 5) as f32).unwrap();
    for hm in [huge, tiny] {
        for p in [
            StreamPowerParams {
                steps: 3,
                dt: 1.0e7,
                uplift: 1.0,
                k: 1.0,
                m: 2.0,
                n: 4.0,
                diffusion: 1.0e6,
                ..Default::default()
            },
            StreamPowerParams {
                steps: 3,
                dt: 1.0e7,
                uplift: 1.0,
                k: 1.0,
                m: 0.0,
                n: 0.25,
                diffusion: 1.0e6,
                ..Default::default()
            },
        ] {
            for b in [Boundary::default(), Boundary::all(EdgeMode::Wall)] {
                let mut j = job(hm.clone(), p.clone(), b);
                run_all(&mut j);
                assert!(j.heightmap().all_finite(), "{p:?} {b:?}");
                let l = j.ledger();
                assert!(l.eroded.is_finite() && l.deposited.is_finite() && l.lost_at_border.is_finite());
            }
        }
    }
}

fn edge() -> impl Strategy<Value = EdgeMode> {
    prop_oneof![Just(EdgeMode::Wall), Just(EdgeMode::Drain), Just(EdgeMode::Wrap)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn any_valid_parameters_stay_finite_and_close_the_books(
        w in 2usize..14, h in 2usize..14, seed in 0u64..1000,
        relief in prop_oneof![Just(0.0f32), 0.0f32..1.0e4],
        dt in prop_oneof![Just(0.0f32), 0.0f32..1.0e7],
        uplift in 0.0f32..=1.0,
        k in prop_oneof![Just(0.0f32), 0.0f32..=1.0, 1e-7f32..1e-3],
        m in 0.0f32..=2.0,
        n in 0.25f32..=4.0,
        diffusion in prop_oneof![Just(0.0f32), 0.0f32..1.0e6],
        lake_deposition in any::<bool>(),
        cell in prop_oneof![Just(1.0f32), 0.01f32..1000.0],
        hard in prop_oneof![Just(None), Just(Some(0.0f32)), (0.0f32..5.0).prop_map(Some)],
        b in (edge(), edge(), edge(), edge()),
    ) {
        let hm = Heightmap::from_fn(w, h, cell, |x, y| relief * unit_f32(hash2(x as i64, y as i64, seed))).unwrap();
        let p = StreamPowerParams { steps: 3, dt, uplift, uplift_map: None, k, m, n, diffusion, lake_deposition, ..Default::default() };
        let boundary = Boundary { left: b.0, right: b.1, top: b.2, bottom: b.3 };
        let hardness = hard.map(|c| (0..w * h).map(|i| c * unit_f32(hash2(i as i64, 0, seed))).collect());
        let mut j = StreamPowerJob::new(hm, p, JobInputs { hardness, boundary, seed, ..Default::default() }).unwrap();
        run_all(&mut j);
        prop_assert!(j.heightmap().all_finite());
        let f = j.fields();
        prop_assert!(f.water.unwrap().iter().all(|v| v.is_finite() && *v >= 0.0));
        let l = j.ledger();
        prop_assert!(l.eroded.is_finite() && l.deposited.is_finite() && l.lost_at_border.is_finite());
        prop_assert!(l.closes(1e-4), "terrain error {}, material error {} ({l:?})", l.terrain_error(), l.material_error());
    }
}

/// Issue #13: the default run on the default island (`talus demo`: 513², 2 m cells, sea at 0)
/// keeps the island, cuts a network with a river-like concavity and leaves no grid artefacts.
#[test]
fn default_run_on_the_default_island_reads_as_real_land() {
    use talus::core::analysis::{self, AnalysisParams};
    let gp = talus::cli::demo_params(513, 1);
    let island = talus::core::generate::generate(&gp).unwrap();
    let sea = gp.sea_level.as_ref().map(|s| s.level).unwrap();
    let inputs = JobInputs { sea_level: Some(sea), seed: 1, ..Default::default() };
    let mut j = StreamPowerJob::new(island.clone(), StreamPowerParams::default(), inputs).unwrap();
    run_all(&mut j);
    assert!(j.ledger().closes(1e-6), "{:?}", j.ledger());
    let out = j.heightmap();
    let rep = analysis::compare(&island, out, sea, &AnalysisParams::default()).unwrap();
    let c = rep.comparison.as_ref().unwrap();
    assert!(c.land_lost_fraction <= 0.02, "land lost {}", c.land_lost_fraction);
    // No square block: the land area stays the island's (the sea floor is not uplifted).
    assert!(
        rep.land_nodes as f64 <= 1.02 * c.input_land_nodes as f64,
        "land grew: {} vs {}",
        rep.land_nodes,
        c.input_land_nodes
    );
    assert!(rep.pits <= 5 && rep.spikes <= 5, "pits {} spikes {}", rep.pits, rep.spikes);
    let a = rep.anisotropy.as_ref().unwrap();
    assert!(a.axis_ratio <= 1.5 && a.diagonal_ratio <= 1.5, "{a:?}");
    let d = c.change_anisotropy.as_ref().unwrap();
    assert!(d.axis_ratio <= 1.5 && d.diagonal_ratio <= 1.5, "change {d:?}");
    let theta = rep.concavity.as_ref().unwrap().theta;
    assert!((0.35..=0.6).contains(&theta), "concavity {theta}");
}
