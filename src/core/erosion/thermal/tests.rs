//! Unit tests of thermal erosion.

use super::kernel::*;
use super::*;
use crate::core::erosion::stencil::{DIRS, Nb};
use crate::core::erosion::{Boundary, EdgeMode, ErosionMaps, JobError, JobInputs, Progress, Simulation};
use crate::core::heightmap::Heightmap;

fn spike(n: usize, h: f32) -> Heightmap {
    let mut hm = Heightmap::new(n, n, 1.0).unwrap();
    let c = n / 2;
    hm.set(c, c, h);
    hm
}

fn kernel(hm: &Heightmap, p: &ThermalParams, b: Boundary) -> ThermalKernel {
    ThermalKernel::new(p, hm.width, hm.height, hm.cell_size, b, None).unwrap()
}

/// Reference: the same step computed with the boundary-aware code path at every node, one
/// band, sequentially.
fn reference_step(k: &ThermalKernel, h: &[f32]) -> Vec<f32> {
    let (w, hh) = (k.w, k.h);
    let mut buf = BandBuf { s: vec![0.0; (hh + 2) * w], q: vec![0.0; (hh + 2) * w] };
    // Slot r+1 holds row r; slots 0 and hh+1 hold the wrapped halo rows when they exist.
    for r in 0..hh + 2 {
        let yy = if r == 0 {
            k.edges.row(0, -1, hh)
        } else if r == hh + 1 {
            k.edges.row(hh - 1, 1, hh)
        } else {
            Nb::In(r - 1)
        };
        if let Nb::In(yy) = yy {
            for x in 0..w {
                let (s, q) = k.p1_generic(h, x, yy);
                buf.s[r * w + x] = s;
                buf.q[r * w + x] = q;
            }
        }
    }
    let mut out = vec![0.0; w * hh];
    for y in 0..hh {
        for x in 0..w {
            out[y * w + x] = k.p2_generic(h, x, y, y + 1, &buf).0;
        }
    }
    out
}

#[test]
fn under_water_material_settles_to_the_underwater_angle() {
    // A spike on a floor 50 m below the sea: with a sea it relaxes to the underwater angle
    // (10°), without one to the talus angle (40°); both conserve material.
    let mut hm = spike(41, 30.0);
    hm.data.iter_mut().for_each(|h| *h -= 50.0);
    let p =
        ThermalParams { talus_angle: 40.0, underwater_angle: 10.0, rate: 0.8, iterations: 400, ..Default::default() };
    let sum = hm.sum();
    let mut slopes = Vec::new();
    for sea in [Some(0.0), None] {
        let inputs = JobInputs { boundary: Boundary::all(EdgeMode::Wall), sea_level: sea, ..Default::default() };
        let mut j = ThermalJob::new(hm.clone(), p.clone(), inputs).unwrap();
        while !j.is_done() {
            j.step();
        }
        assert!((j.heightmap().sum() - sum).abs() < 1e-2);
        slopes.push(max_slope(j.heightmap()));
    }
    let (wet, dry) = (slopes[0], slopes[1]);
    let (tw, td) = ((10.0f32).to_radians().tan(), (40.0f32).to_radians().tan());
    assert!(wet <= tw * 1.05 + 1e-3, "under water {wet} > {tw}");
    assert!(dry > tw * 2.0 && dry <= td * 1.05 + 1e-3, "dry {dry}");
    // Above the sea the land angle holds: the same spike standing on dry land.
    let mut land = spike(41, 30.0);
    land.data.iter_mut().for_each(|h| *h += 1.0);
    let inputs = JobInputs { boundary: Boundary::all(EdgeMode::Wall), sea_level: Some(0.0), ..Default::default() };
    let mut j = ThermalJob::new(land, p.clone(), inputs).unwrap();
    while !j.is_done() {
        j.step();
    }
    assert!(max_slope(j.heightmap()) > tw * 2.0);
    // The parameter is checked.
    assert!(ThermalParams { underwater_angle: 95.0, ..Default::default() }.validate().is_err());
}

fn max_slope(hm: &Heightmap) -> f32 {
    let mut m = 0.0f32;
    for y in 0..hm.height {
        for x in 0..hm.width {
            for &(dx, dy) in &DIRS {
                let (nx, ny) = (x as isize + dx, y as isize + dy);
                if nx < 0 || ny < 0 || nx >= hm.width as isize || ny >= hm.height as isize {
                    continue;
                }
                let d = if dx != 0 && dy != 0 { std::f32::consts::SQRT_2 } else { 1.0 };
                let s = (hm.get(x, y) - hm.get(nx as usize, ny as usize)) / (d * hm.cell_size);
                m = m.max(s);
            }
        }
    }
    m
}

#[test]
fn defaults_validate_and_bad_values_are_refused() {
    assert!(ThermalParams::default().validate().is_ok());
    for bad in [
        ThermalParams { rate: f32::NAN, ..Default::default() },
        ThermalParams { rate: 1.5, ..Default::default() },
        ThermalParams { rate: -0.1, ..Default::default() },
        ThermalParams { talus_angle: 90.0, ..Default::default() },
        ThermalParams { talus_angle: f32::INFINITY, ..Default::default() },
        ThermalParams { talus_tan: Some(-1.0), ..Default::default() },
    ] {
        assert!(matches!(bad.validate(), Err(JobError::BadParam { .. })), "{bad:?}");
    }
    let hm = Heightmap::new(4, 4, 1.0).unwrap();
    let e = ThermalKernel::new(&ThermalParams::default(), 4, 4, 1.0, Boundary::default(), Some(vec![1.0; 3]));
    assert!(matches!(e, Err(JobError::HardnessSize { .. })));
    let e = ThermalKernel::new(&ThermalParams::default(), 4, 4, 1.0, Boundary::default(), Some(vec![f32::NAN; 16]));
    assert!(matches!(e, Err(JobError::BadParam { .. })));
    assert!(ThermalJob::new(hm, ThermalParams { rate: 2.0, ..Default::default() }, JobInputs::default()).is_err());
}

#[test]
fn talus_slope_from_degrees() {
    let p = ThermalParams { talus_angle: 45.0, ..Default::default() };
    assert!((p.talus_slope() - 1.0).abs() < 1e-6);
    let p = ThermalParams { talus_tan: Some(0.25), ..Default::default() };
    assert_eq!(p.talus_slope(), 0.25);
}

#[test]
fn flat_and_gentle_terrain_does_not_move() {
    let hm = Heightmap::from_fn(20, 17, 1.0, |x, y| 0.1 * x as f32 + 0.05 * y as f32).unwrap();
    let k = kernel(&hm, &ThermalParams::default(), Boundary::all(EdgeMode::Wall));
    let mut h = hm.data.clone();
    let b = k.step(&mut h, &mut Vec::new(), None);
    assert_eq!(h, hm.data);
    assert_eq!(b, ThermalBooks::default());
}

#[test]
fn fast_path_matches_boundary_aware_reference_bit_for_bit() {
    // 70 rows: three bands, the last one short.
    let hm = Heightmap::from_fn(37, 70, 1.0, |x, y| {
        let u = crate::core::rng::hash2(x as i64, y as i64, 7);
        crate::core::rng::unit_f32(u) * 6.0
    })
    .unwrap();
    for b in [
        Boundary::all(EdgeMode::Wall),
        Boundary::all(EdgeMode::Drain),
        Boundary::all(EdgeMode::Wrap),
        Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall },
    ] {
        let k = kernel(&hm, &ThermalParams { rate: 1.0, ..Default::default() }, b);
        let expect = reference_step(&k, &hm.data);
        let mut h = hm.data.clone();
        k.step(&mut h, &mut Vec::new(), None);
        assert!(h.iter().zip(&expect).all(|(a, e)| a.to_bits() == e.to_bits()), "{b:?}");
    }
}

#[test]
fn spike_relaxes_to_the_talus_angle_and_never_moves_material_uphill() {
    let hm = spike(33, 12.0);
    let p = ThermalParams { talus_angle: 30.0, rate: 1.0, ..Default::default() };
    let k = kernel(&hm, &p, Boundary::all(EdgeMode::Wall));
    let t = p.talus_slope();
    let mut h = hm.data.clone();
    let mut scratch = Vec::new();
    let total0: f64 = h.iter().map(|&v| v as f64).sum();
    for _ in 0..400 {
        let old = h.clone();
        k.step(&mut h, &mut scratch, None);
        // Each node stays within the range of its closed 3×3 neighbourhood.
        for y in 0..33usize {
            for x in 0..33usize {
                let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                for dy in -1..=1isize {
                    for dx in -1..=1isize {
                        let (nx, ny) = (x as isize + dx, y as isize + dy);
                        if nx >= 0 && ny >= 0 && nx < 33 && ny < 33 {
                            let v = old[ny as usize * 33 + nx as usize];
                            lo = lo.min(v);
                            hi = hi.max(v);
                        }
                    }
                }
                let v = h[y * 33 + x];
                assert!(v >= lo - 1e-5 && v <= hi + 1e-5, "node ({x},{y}) left its neighbourhood range");
                // Material only arrives from higher neighbours: a node that rose has a
                // neighbour that was higher than it.
                if v > old[y * 33 + x] {
                    assert!(hi > old[y * 33 + x]);
                }
            }
        }
    }
    let out = Heightmap::from_data(33, 33, 1.0, h.clone()).unwrap();
    let s = max_slope(&out);
    assert!(s <= t * 1.02 + 1e-3, "max slope {s} > talus {t}");
    assert!(out.get(16, 16) < 12.0 && out.get(16, 16) > 1.0);
    let total1: f64 = h.iter().map(|&v| v as f64).sum();
    assert!((total1 - total0).abs() < 1e-3, "walls must conserve: {total0} -> {total1}");
}

#[test]
fn pit_is_filled_without_overshoot() {
    let mut hm = Heightmap::filled(9, 9, 1.0, 10.0).unwrap();
    hm.set(4, 4, 0.0);
    let k = kernel(
        &hm,
        &ThermalParams { talus_tan: Some(0.0), rate: 1.0, ..Default::default() },
        Boundary::all(EdgeMode::Wall),
    );
    let mut h = hm.data.clone();
    k.step(&mut h, &mut Vec::new(), None);
    let c = h[4 * 9 + 4];
    assert!(c > 0.0 && c <= 5.0 + 1e-4, "pit rose to {c}");
    assert!(h.iter().all(|&v| v <= 10.0 + 1e-5));
}

#[test]
fn unerodible_nodes_keep_their_height() {
    let hm = spike(15, 8.0);
    let mut hard = vec![1.0; hm.len()];
    hard[7 * 15 + 7] = 0.0;
    let k =
        ThermalKernel::new(&ThermalParams::default(), 15, 15, 1.0, Boundary::all(EdgeMode::Wall), Some(hard)).unwrap();
    let mut h = hm.data.clone();
    for _ in 0..20 {
        k.step(&mut h, &mut Vec::new(), None);
    }
    assert_eq!(h[7 * 15 + 7], 8.0);
    assert!(h.iter().enumerate().all(|(i, &v)| i == 7 * 15 + 7 || v == 0.0));
}

#[test]
fn drains_lose_material_walls_do_not() {
    // A ramp rising inward from every edge: material slides to the edges.
    let hm = Heightmap::from_fn(24, 24, 1.0, |x, y| {
        let d = x.min(y).min(23 - x).min(23 - y) as f32;
        d * 3.0
    })
    .unwrap();
    for (mode, loses) in [(EdgeMode::Drain, true), (EdgeMode::Wall, false)] {
        let k = kernel(&hm, &ThermalParams::default(), Boundary::all(mode));
        let mut h = hm.data.clone();
        let mut maps = ErosionMaps::new(hm.len());
        let mut books = ThermalBooks::default();
        for _ in 0..30 {
            books.add(&k.step(&mut h, &mut Vec::new(), Some(&mut maps)));
        }
        assert_eq!(books.lost > 1.0, loses, "{mode:?}: {books:?}");
        if !loses {
            assert_eq!(books.lost, 0.0);
        }
        let dv: f64 = h.iter().map(|&v| v as f64).sum::<f64>() - hm.sum();
        assert!((dv - (books.deposited - books.eroded)).abs() < 1e-6 * books.eroded.max(1.0));
        assert!((books.eroded - books.deposited - books.lost).abs() < 1e-4 * books.eroded);
        let me: f64 = maps.eroded.iter().map(|&v| v as f64).sum();
        assert!((me - books.eroded).abs() < 1e-3 * books.eroded);
    }
}

#[test]
fn wrap_is_translation_invariant() {
    let mut a = Heightmap::new(16, 12, 1.0).unwrap();
    a.set(0, 0, 9.0);
    let mut b = Heightmap::new(16, 12, 1.0).unwrap();
    b.set(5, 7, 9.0);
    let p = ThermalParams { rate: 1.0, ..Default::default() };
    let ka = kernel(&a, &p, Boundary::all(EdgeMode::Wrap));
    let (mut ha, mut hb) = (a.data.clone(), b.data.clone());
    for _ in 0..10 {
        ka.step(&mut ha, &mut Vec::new(), None);
        ka.step(&mut hb, &mut Vec::new(), None);
    }
    for y in 0..12 {
        for x in 0..16 {
            assert_eq!(ha[y * 16 + x], hb[((y + 7) % 12) * 16 + (x + 5) % 16], "({x},{y})");
        }
    }
}

#[test]
fn job_runs_its_iterations_and_rebases_edits() {
    let hm = spike(21, 10.0);
    let p = ThermalParams { iterations: 7, ..Default::default() };
    let mut job =
        ThermalJob::new(hm, p, JobInputs { boundary: Boundary::all(EdgeMode::Drain), ..Default::default() }).unwrap();
    job.step();
    job.edit_terrain(&mut |h| h.data[0] += 5.0);
    job.edit_terrain(&mut |h| h.width = 3); // refused: undone
    assert_eq!(job.heightmap().width, 21);
    while !job.is_done() {
        job.step();
    }
    assert_eq!(job.progress(), Progress { done: 7, total: 7 });
    let l = job.ledger();
    assert!(l.eroded > 0.0 && l.closes(1e-4), "{l:?}");
}

#[test]
fn tiny_maps_do_not_panic() {
    for (w, h) in [(1, 1), (1, 5), (5, 1), (2, 2), (2, 3)] {
        for mode in [EdgeMode::Wall, EdgeMode::Drain, EdgeMode::Wrap] {
            let hm = Heightmap::from_fn(w, h, 1.0, |x, y| (x * 7 + y * 3) as f32).unwrap();
            let k = kernel(&hm, &ThermalParams { rate: 1.0, ..Default::default() }, Boundary::all(mode));
            let mut d = hm.data.clone();
            k.step(&mut d, &mut Vec::new(), None);
            assert!(d.iter().all(|v| v.is_finite()));
        }
    }
}

#[test]
fn a_mask_scales_what_leaves_a_node() {
    use crate::core::erosion::Steer;
    let n = 40;
    let edge = (0.3 * n as f32) as usize;
    let hm = Heightmap::from_fn(n, n, 1.0, |x, y| {
        0.2 * x as f32 + 4.0 * crate::core::rng::unit_f32(crate::core::rng::hash2(x as i64, y as i64, 5))
    })
    .unwrap();
    let mask: Vec<f32> = (0..n * n).map(|i| if i % n < edge { 1.0 } else { 0.0 }).collect();
    let inputs = JobInputs { steer: Some(Steer::new(mask, false)), ..Default::default() };
    let mut j = ThermalJob::new(hm.clone(), ThermalParams { iterations: 20, ..Default::default() }, inputs).unwrap();
    while !j.is_done() {
        j.step();
    }
    assert!(j.ledger().eroded > 0.0);
    for (i, (a, b)) in hm.data.iter().zip(&j.hm.data).enumerate() {
        let x = i % n;
        if x >= edge {
            // Nothing leaves an unmasked node; only its masked neighbours may give it material.
            assert!(b >= a, "({x}, {}) lost material", i / n);
        }
        if x > edge {
            assert_eq!(a.to_bits(), b.to_bits(), "({x}, {}) changed", i / n);
        }
    }
    let bad = JobInputs { steer: Some(Steer::new(vec![2.0; n * n], false)), ..Default::default() };
    assert!(matches!(ThermalJob::new(hm, ThermalParams::default(), bad), Err(JobError::BadParam { .. })));
}

/// The apron a 12 m cliff across a 96 × 8 m strip (walls) sheds after `iterations` counted on
/// cells of `iteration_cell_m`, on cells of `cell` metres: the metres of its foot raised by more
/// than 1 cm, along the strip's middle row.
fn cliff_apron(cell: f32, iterations: u32, iteration_cell_m: f32) -> f32 {
    let (w, h) = ((96.0 / cell) as usize + 1, (8.0 / cell) as usize + 1);
    let hm = Heightmap::from_fn(w, h, cell, |x, _| if (x as f32) * cell < 48.0 { 12.0 } else { 0.0 }).unwrap();
    let p = ThermalParams { iterations, iteration_cell_m, ..Default::default() };
    let mut job =
        ThermalJob::new(hm, p, JobInputs { boundary: Boundary::all(EdgeMode::Wall), ..Default::default() }).unwrap();
    while !job.is_done() {
        job.step();
    }
    let row = &job.heightmap().data[(h / 2) * w..(h / 2 + 1) * w];
    let foot = (0..w).filter(|&x| x as f32 * cell >= 48.0 && row[x] > 0.01).count();
    foot as f32 * cell
}

#[test]
fn the_same_iterations_relax_a_cliff_over_the_same_metres_at_any_cell_size() {
    // Counted on 2 m cells (the default), 5 and 25 iterations shed the same aprons at 2, 1 and
    // 0.5 m cells (16× the kernel iterations at 0.5 m), 4 m and 8 m (a straight 30° talus from
    // the cliff's mid-height reaches 10.4 m).
    for (k, apron) in [(5, 4.0), (25, 8.0)] {
        for cell in [2.0, 1.0, 0.5] {
            let got = cliff_apron(cell, k, 2.0);
            assert!((got - apron).abs() <= 1.0, "{k} iterations at {cell} m: apron {got} m, not {apron} m");
        }
    }
    // Counted per node, as format-5 projects ran them, a finer map relaxes less of the cliff.
    let per_node: Vec<f32> = [2.0, 1.0, 0.5].iter().map(|&c| cliff_apron(c, 25, c)).collect();
    assert_eq!(per_node[0], cliff_apron(2.0, 25, 2.0));
    assert!(per_node[1] < 6.0 && per_node[2] < 4.0, "{per_node:?}");
}

#[test]
fn iterations_are_scaled_with_the_cells_and_spread_over_the_steps() {
    let p = ThermalParams { iteration_cell_m: 2.0, ..Default::default() };
    // On the cells they are counted for, every group is its count, however many.
    assert_eq!(p.iteration_scale(2.0), 1.0);
    assert!((0..1000).all(|a| p.kernel_iterations(2.0, a, 7) == 7));
    // Finer and coarser cells: the square of the ratio, spread evenly over the groups.
    assert_eq!(p.kernel_iterations(0.5, 0, 50), 800);
    assert_eq!(p.kernel_iterations(1.0, 3, 1), 4);
    let total = |lx: f32, groups: u64, per: u64| (0..groups).map(|a| p.kernel_iterations(lx, a, per)).sum::<u64>();
    assert_eq!(total(8.0, 50, 1), 3); // 50/16 = 3.1
    assert_eq!(total(3.0, 100, 1), 44); // 100·4/9 = 44.4
    assert_eq!(total(3.0, 10, 10), 44);
    let steps: Vec<u64> = (0..16).map(|a| p.kernel_iterations(8.0, a, 1)).collect();
    assert_eq!(steps.iter().sum::<u64>(), 1);
    assert!(steps.iter().all(|&n| n <= 1), "{steps:?}");
    // The job counts iterations as asked (its progress) and runs the scaled kernel iterations.
    let hm = Heightmap::from_fn(9, 9, 1.0, |x, _| if x < 4 { 8.0 } else { 0.0 }).unwrap();
    let mut job =
        ThermalJob::new(hm.clone(), ThermalParams { iterations: 3, ..p.clone() }, JobInputs::default()).unwrap();
    while !job.is_done() {
        job.step();
    }
    assert_eq!(job.progress(), Progress { done: 3, total: 3 });
    let mut by_hand = hm;
    for _ in 0..12 {
        thermal_step(&mut by_hand, &p, Boundary::default(), None, None).unwrap();
    }
    assert_eq!(job.heightmap().data, by_hand.data);
    // Cells finer than 1/64 of `iteration_cell_m` are refused with a clear error.
    let fine = Heightmap::new(8, 8, 0.01).unwrap();
    assert!(p.check_cells(2.0 / 64.0).is_ok());
    let err = ThermalJob::new(fine, p, JobInputs::default()).err().expect("refused");
    assert!(matches!(err, JobError::BadParam { .. }), "{err:?}");
}

#[test]
fn a_run_of_its_own_takes_a_fraction_of_an_iteration_by_chance() {
    let p = ThermalParams { iterations: 5, ..Default::default() };
    let on = |lx: f32, u: f64| {
        let mut q = p.clone();
        q.count_on_own_cells(lx, u);
        (q.iterations, q.iteration_cell_m)
    };
    // Whole counts are exact whatever is drawn; the count is then per node of these cells.
    assert_eq!(on(2.0, 0.99), (5, 2.0));
    assert_eq!(on(1.0, 0.0), (20, 1.0));
    // 5 counted on 2 m cells are 0.3125 of one on 8 m cells: taken with that chance.
    assert_eq!((on(8.0, 0.3), on(8.0, 0.32)), ((1, 8.0), (0, 8.0)));
    let mean = (0..1000).map(|i| on(8.0, (i as f64 + 0.5) / 1000.0).0 as f64).sum::<f64>() / 1000.0;
    assert!((mean - 0.3125).abs() < 0.002, "{mean}");
}
