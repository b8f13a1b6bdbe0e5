//! Unit tests of the stream-power model.

use super::*;
use crate::core::erosion::{Boundary, EdgeMode};

fn left_drain() -> Boundary {
    Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall }
}

/// A small island: a noisy cone rising from a sea floor at −10 m, 2 m cells.
fn islet(n: usize, seed: u64) -> Heightmap {
    use crate::core::rng::{hash2, unit_f32};
    let c = (n as f32 - 1.0) / 2.0;
    Heightmap::from_fn(n, n, 2.0, |x, y| {
        let r = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt() / c;
        let noise = 6.0 * unit_f32(hash2(x as i64, y as i64, seed));
        (60.0 * (1.0 - 1.6 * r) + noise).max(-10.0 + noise * 0.5)
    })
    .unwrap()
}

fn sea_inputs() -> JobInputs {
    JobInputs { sea_level: Some(0.0), ..Default::default() }
}

#[test]
fn terrain_following_uplift_is_zero_at_and_below_the_sea() {
    let h = [-5.0f32, 0.0, 10.0, 20.0, 40.0];
    let u = terrain_uplift(&h, Some(0.0), 1e-3, 1.0);
    assert_eq!(&u[..2], &[0.0, 0.0]);
    assert!((u[2] - 0.25e-3).abs() < 1e-9 && (u[3] - 0.5e-3).abs() < 1e-9 && (u[4] - 1e-3).abs() < 1e-9);
    let u = terrain_uplift(&h, Some(0.0), 1e-3, 0.5);
    assert!((u[2] - 0.5e-3).abs() < 1e-9, "{u:?}");
    // Without a sea the map's minimum is the base.
    let u = terrain_uplift(&h, None, 1e-3, 1.0);
    assert_eq!(u[0], 0.0);
    assert!((u[1] - 1e-3 * 5.0 / 45.0).abs() < 1e-9);
    // A flat map gets none (no NaN).
    assert!(terrain_uplift(&[3.0; 4], None, 1e-3, 1.0).iter().all(|&v| v == 0.0));
    // Through the job: outlets (sea) get 0, land rises with height.
    let hm = islet(33, 1);
    let job = StreamPowerJob::new(hm.clone(), StreamPowerParams::default(), sea_inputs()).unwrap();
    let rates = job.uplift_rates();
    for (&h, &rate) in hm.data.iter().zip(&rates) {
        if h <= 0.0 {
            assert_eq!(rate, 0.0);
        } else {
            assert!(rate > 0.0 && rate <= job.params().uplift);
        }
    }
    let top = (0..hm.len()).max_by(|&a, &b| hm.data[a].total_cmp(&hm.data[b])).unwrap();
    assert_eq!(rates[top], job.params().uplift);
}

#[test]
fn sea_nodes_are_outlets_and_fill_only_to_the_sea() {
    let hm = islet(41, 2);
    let p = StreamPowerParams { steps: 20, dt: 5000.0, k: 5e-4, ..Default::default() };
    let mut job = StreamPowerJob::new(hm.clone(), p, sea_inputs()).unwrap();
    let sea = job.sea_mask().to_vec();
    assert!(sea.contains(&1) && sea.contains(&0));
    assert_eq!(sea.len(), hm.len());
    for (i, &s) in sea.iter().enumerate() {
        assert_eq!(job.receivers()[i] as usize == i, s == 1 || job.router.outlet[i] == 1, "node {i}");
    }
    while !job.is_done() {
        job.step();
    }
    let l = job.ledger();
    assert!(l.closes(1e-6), "{l:?}");
    let out = &job.heightmap().data;
    let mut filled = 0;
    for i in 0..hm.len() {
        if sea[i] == 1 {
            // Never uplifted, never incised, never above the sea (deposits stop under it).
            assert!(out[i] >= hm.data[i], "sea node {i} was lowered");
            assert!(out[i] <= 0.0 - SEA_SHELF || out[i] == hm.data[i], "sea node {i} filled to {}", out[i]);
            filled += (out[i] > hm.data[i]) as usize;
        } else {
            // Land is cut toward the sea surface, not below it.
            assert!(out[i] > 0.0, "land node {i} went under the sea ({})", out[i]);
        }
    }
    assert!(filled > 0, "no sediment settled in the sea");
    assert!(l.deposited > l.uplift, "sea deposits are booked as deposition");
    // Deposits spread: no sea node rises above its filled neighbours as a lone spike.
    let w = hm.width;
    for y in 1..w - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            if sea[i] == 1 && out[i] > hm.data[i] {
                let lower = [i - 1, i + 1, i - w, i + w].iter().filter(|&&j| out[j] < out[i] - 5.0).count();
                assert!(lower < 4, "single-node spike of sediment at {i}");
            }
        }
    }
}

#[test]
fn same_bits_with_one_and_two_threads_with_sea_and_mfd() {
    let hm = islet(57, 3);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let p = StreamPowerParams { steps: 6, dt: 3000.0, ..Default::default() };
            let mut job = StreamPowerJob::new(hm.clone(), p, sea_inputs()).unwrap();
            while !job.is_done() {
                job.step();
            }
            let bits: Vec<u32> = job.heightmap().data.iter().map(|v| v.to_bits()).collect();
            let area: Vec<u64> = job.drainage_area().iter().map(|v| v.to_bits()).collect();
            (bits, area, format!("{:?}", job.ledger()))
        })
    };
    assert!(run(1) == run(2));
}

#[test]
fn newton_matches_closed_forms() {
    // n = 1: δ = δ₀/(1+F).
    let d = solve_incision(3.0, 2.0, 1.0);
    assert!((d - 1.0).abs() < 1e-12);
    // n = 2: δ + Fδ² = δ₀ → δ = (−1 + √(1+4Fδ₀)) / 2F.
    for &(d0, f) in &[(1.0, 1.0), (10.0, 1e-3), (1e-3, 1e6), (5.0, 1e12)] {
        let exact = (-1.0 + (1.0f64 + 4.0 * f * d0).sqrt()) / (2.0 * f);
        let got = solve_incision(d0, f, 2.0);
        assert!((got - exact).abs() <= 1e-9 * exact.max(1e-12), "{d0} {f}: {got} vs {exact}");
    }
    // n = 0.5 stays in the bracket and solves the equation.
    for &(d0, f) in &[(1.0, 1.0), (100.0, 0.01), (1e-4, 1e3)] {
        let x = solve_incision(d0, f, 0.5);
        assert!(x >= 0.0 && x <= d0);
        assert!((x - d0 + f * x.sqrt()).abs() <= 1e-9 * d0, "{d0} {f}");
    }
}

#[test]
fn lake_fills_from_the_bottom() {
    let mut h = vec![0.0f32, 1.0, 2.0, 4.0];
    let mut dep = vec![0.0f32; 4];
    let mut nodes = vec![2u32, 0, 1];
    let (hs, ds) = (Shared::new(&mut h), Shared::new(&mut dep));
    // Level 3, capacity 3+2+1 = 6. Adding 2: λ with (λ−0)+(λ−1) = 2 → λ = 1.5.
    // SAFETY: `hs` and `ds` view the local 4-element `h` and `dep`, `nodes` are < 4, and this
    // single thread is their only user.
    let d = unsafe { fill_lake(&hs, &mut nodes, 3.0, 6.0, 2.0, &ds) };
    assert!((d - 2.0).abs() < 1e-6);
    // More than the capacity fills flat to the level.
    // SAFETY: as above.
    let d2 = unsafe { fill_lake(&hs, &mut nodes, 3.0, 4.0, 100.0, &ds) };
    assert!((d2 - 4.0).abs() < 1e-6);
    assert_eq!(h, vec![3.0, 3.0, 3.0, 4.0]);
    assert!((dep.iter().sum::<f32>() - 6.0).abs() < 1e-6);
    let mut h = vec![0.0f32, 1.0, 2.0, 4.0];
    let mut dep = vec![0.0f32; 4];
    let (hs, ds) = (Shared::new(&mut h), Shared::new(&mut dep));
    // SAFETY: as above, with the new `h` and `dep`.
    unsafe { fill_lake(&hs, &mut nodes, 3.0, 6.0, 2.0, &ds) };
    assert_eq!(h, vec![1.5, 1.5, 2.0, 4.0]);
}

#[test]
fn implicit_n1_update_matches_the_formula() {
    // Two nodes: outlet at 0, node 1 at 10 m, Δx = 2, A = 1 node = 4 m², m = 0.5, K·Δt = 0.5:
    // F = 0.5·4^0.5/2 = 0.5, h' = 10/(1.5).
    let hm = Heightmap::from_data(2, 1, 2.0, vec![0.0, 10.0]).unwrap();
    let p = StreamPowerParams {
        steps: 1,
        dt: 1.0,
        uplift: 0.0,
        k: 0.5,
        m: 0.5,
        n: 1.0,
        diffusion: 0.0,
        ..Default::default()
    };
    let mut job = StreamPowerJob::new(hm, p, JobInputs { boundary: left_drain(), ..Default::default() }).unwrap();
    job.step();
    assert!((job.heightmap().data[1] - 10.0 / 1.5).abs() < 1e-5);
    assert_eq!(job.heightmap().data[0], 0.0);
    let l = job.ledger();
    assert!((l.eroded - (10.0 - 10.0 / 1.5)).abs() < 1e-5);
    assert!((l.lost_at_border - l.eroded).abs() < 1e-12);
    assert!(l.closes(1e-9));
}

#[test]
fn hardness_zero_does_not_erode() {
    let hm = Heightmap::from_fn(6, 3, 1.0, |x, _| x as f32 * 3.0).unwrap();
    let p = StreamPowerParams { steps: 3, uplift: 0.0, k: 1e-2, ..Default::default() };
    let inputs = JobInputs { hardness: Some(vec![0.0; 18]), boundary: left_drain(), seed: 0, ..Default::default() };
    let mut job = StreamPowerJob::new(hm.clone(), p, inputs).unwrap();
    for _ in 0..3 {
        job.step();
    }
    assert_eq!(job.heightmap().data, hm.data);
}

#[test]
fn rejects_bad_params() {
    let hm = Heightmap::new(4, 4, 1.0).unwrap();
    let bad = [
        StreamPowerParams { dt: f32::NAN, ..Default::default() },
        StreamPowerParams { dt: -1.0, ..Default::default() },
        StreamPowerParams { k: f32::INFINITY, ..Default::default() },
        StreamPowerParams { m: -0.1, ..Default::default() },
        StreamPowerParams { n: 0.0, ..Default::default() },
        StreamPowerParams { uplift: 2.0, ..Default::default() },
        StreamPowerParams { diffusion: -1.0, ..Default::default() },
        StreamPowerParams { uplift_map: Some(vec![0.0; 3]), ..Default::default() },
        StreamPowerParams { uplift_map: Some(vec![f32::NAN; 16]), ..Default::default() },
        StreamPowerParams { uplift_exponent: -1.0, ..Default::default() },
        StreamPowerParams { mfd_exponent: f32::NAN, ..Default::default() },
        StreamPowerParams { mfd_exponent: 11.0, ..Default::default() },
    ];
    for p in bad {
        assert!(StreamPowerJob::new(hm.clone(), p.clone(), JobInputs::default()).is_err(), "{p:?}");
    }
    let inputs = JobInputs { hardness: Some(vec![-1.0; 16]), ..Default::default() };
    assert!(StreamPowerJob::new(hm.clone(), StreamPowerParams::default(), inputs).is_err());
    let mut nan = hm.clone();
    nan.data[3] = f32::NAN;
    assert!(matches!(
        StreamPowerJob::new(nan, StreamPowerParams::default(), JobInputs::default()),
        Err(JobError::NonFinite)
    ));
}

#[test]
fn params_round_trip_and_default_missing_fields() {
    let p: StreamPowerParams = serde_json::from_str(r#"{"n": 2.0}"#).unwrap();
    assert_eq!(p, StreamPowerParams { n: 2.0, ..Default::default() });
    let s = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<StreamPowerParams>(&s).unwrap(), p);
}

#[test]
fn edit_rebases_the_books() {
    let hm = Heightmap::from_fn(8, 8, 1.0, |x, y| (x + y) as f32).unwrap();
    let mut job =
        StreamPowerJob::new(hm, StreamPowerParams { steps: 4, ..Default::default() }, JobInputs::default()).unwrap();
    job.step();
    job.edit_terrain(&mut |h| {
        h.data[27] += 50.0;
        h.data[28] = f32::NAN;
    });
    assert!(job.heightmap().all_finite());
    job.step();
    assert!(job.ledger().closes(1e-6));
    // A resizing edit is refused.
    job.edit_terrain(&mut |h| *h = Heightmap::new(3, 3, 1.0).unwrap());
    assert_eq!(job.heightmap().len(), 64);
}

// ---------------------------------------------------------------------------------------------
// Steering masks (issue #16 item 3).

/// A ramp descending toward x = 0 (0.2 m per node) with small deterministic bumps.
fn steer_ramp(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        5.0 + 0.2 * x as f32 + 0.03 * ((x as f32 * 0.7).sin() * (y as f32 * 0.45).cos())
    })
    .unwrap()
}

fn steered_run(hm: &Heightmap, p: StreamPowerParams, steer: Option<crate::core::erosion::Steer>) -> StreamPowerJob {
    let mut j =
        StreamPowerJob::new(hm.clone(), p, JobInputs { boundary: left_drain(), steer, ..Default::default() }).unwrap();
    while !j.is_done() {
        j.step();
    }
    j
}

#[test]
fn masked_runoff_changes_nothing_outside_its_flow_paths() {
    let n = 40;
    let edge = (0.3 * n as f32) as usize;
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n < edge { 1.0 } else { 0.0 }).collect();
    let hm = steer_ramp(n);
    for routing in [FlowMethod::D8, FlowMethod::Mfd] {
        // Uplift and diffusion act everywhere: off, so only the incision (the runoff) shows.
        let p = StreamPowerParams { steps: 10, uplift: 0.0, diffusion: 0.0, k: 1e-3, routing, ..Default::default() };
        let j = steered_run(&hm, p, Some(crate::core::erosion::Steer::new(mask.clone(), false)));
        assert!(j.ledger().eroded > 0.0, "{routing:?}");
        let area = j.drainage_area();
        for (i, (a, b)) in hm.data.iter().zip(&j.hm.data).enumerate() {
            if i % n >= edge {
                assert_eq!(a.to_bits(), b.to_bits(), "{routing:?}: node ({}, {}) changed", i % n, i / n);
                assert_eq!(area[i], 0.0, "{routing:?}");
            }
        }
    }
}

#[test]
fn sink_nodes_are_base_level() {
    let n = 40;
    let b1 = 20usize;
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n >= b1 { 1.0 } else { 0.0 }).collect();
    let hm = steer_ramp(n);
    let p = StreamPowerParams { steps: 10, k: 1e-3, ..Default::default() };
    let j = steered_run(&hm, p, Some(crate::core::erosion::Steer::new(mask, true)));
    let l = j.ledger();
    assert!(l.eroded > 0.0);
    assert!(l.closes(1e-6), "{l:?}");
    for (i, (a, b)) in hm.data.iter().zip(&j.hm.data).enumerate() {
        if i % n < b1 {
            assert_eq!(a.to_bits(), b.to_bits(), "sink ({}, {}) moved", i % n, i / n);
        }
    }
}

#[test]
fn bad_steer_masks_are_refused() {
    let hm = steer_ramp(8);
    for w in [vec![1.0; 3], vec![f32::NAN; 64], vec![1.5; 64]] {
        let inputs = JobInputs { steer: Some(crate::core::erosion::Steer::new(w, false)), ..Default::default() };
        assert!(matches!(
            StreamPowerJob::new(hm.clone(), StreamPowerParams::default(), inputs),
            Err(JobError::BadParam { .. })
        ));
    }
}
