//! Unit tests of flow routing.

use super::mfd::{pow_area, pow_unit};
use super::*;

fn router(w: usize, h: usize, data: &[f32], b: Boundary) -> Router {
    let mut r = Router::new(w, h, &b);
    r.route(data);
    r
}

/// Follows receivers from `i` to its root, failing on a cycle.
fn root_of(r: &Router, mut i: usize) -> usize {
    for _ in 0..=r.rcv.len() {
        let n = r.rcv[i] as usize;
        if n == i {
            return i;
        }
        i = n;
    }
    panic!("receiver cycle");
}

/// Every MFD edge of every node, as `(i, j, weight)`.
fn mfd_edges(m: &Mfd, r: &Router) -> Vec<(usize, usize, f32)> {
    let mut e = Vec::new();
    for i in 0..r.rcv.len() {
        m.for_edges(r, i, |j, w| e.push((i, j, w)));
    }
    e
}

fn mfd(w: usize, h: usize, data: &[f32], b: Boundary, p: f64) -> (Router, Mfd) {
    let r = router(w, h, data, b);
    let mut m = Mfd::new(w * h);
    m.compute(&r, data, p);
    (r, m)
}

/// Rough terrain with many pits.
fn noisy(w: usize, h: usize, seed: u64) -> Vec<f32> {
    use crate::core::rng::{hash2, unit_f32};
    (0..w * h).map(|i| (i % w) as f32 * 0.7 + 8.0 * unit_f32(hash2((i % w) as i64, (i / w) as i64, seed))).collect()
}

#[test]
fn mfd_area_sums_to_the_node_count_on_a_plane_and_a_cone() {
    // Tilted plane draining left (walls elsewhere): every node's area reaches the left column.
    let (w, h) = (12, 9);
    let plane: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * 2.0).collect();
    let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
    let (r, m) = mfd(w, h, &plane, b, 1.1);
    let at_outlets: f64 = (0..w * h).filter(|&i| r.outlet[i] == 1).map(|i| m.area[i]).sum();
    assert!((at_outlets - (w * h) as f64).abs() < 1e-9, "{at_outlets}");
    // Interior nodes split between W (slope 2) and NW/SW (slope 2/√2): weights sum to 1.
    let e = mfd_edges(&m, &r);
    let mid = 4 * w + 6;
    let out: Vec<_> = e.iter().filter(|x| x.0 == mid).collect();
    assert_eq!(out.len(), 3);
    assert!((out.iter().map(|x| x.2 as f64).sum::<f64>() - 1.0).abs() < 1e-6);
    let west = out.iter().find(|x| x.1 == mid - 1).unwrap().2 as f64;
    let diag = 2f64.powf(-0.5 * 1.1);
    // Within `pow_unit`'s error (a few 10⁻⁵).
    assert!((west - 1.0 / (1.0 + 2.0 * diag)).abs() < 5e-5, "{west}");
    // A cone draining to all four edges: the total arrives at the edges, and the area is
    // symmetric under the cone's mirror symmetries.
    let n = 21;
    let cone: Vec<f32> = (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 - 10.0, (i / n) as f32 - 10.0);
            100.0 - (x * x + y * y).sqrt()
        })
        .collect();
    let (r, m) = mfd(n, n, &cone, Boundary::all(EdgeMode::Drain), 1.1);
    let total: f64 = (0..n * n).filter(|&i| r.outlet[i] == 1).map(|i| m.area[i]).sum();
    assert!((total - (n * n) as f64).abs() < 1e-9, "{total}");
    assert!(m.area.iter().all(|&a| a >= 1.0));
    for (x, y) in [(3usize, 7usize), (5, 10), (8, 2)] {
        let a = m.area[y * n + x];
        for (u, v) in [(n - 1 - x, y), (x, n - 1 - y), (y, x)] {
            assert!((m.area[v * n + u] - a).abs() <= 1e-4 * a, "({x},{y}) vs ({u},{v}): {a} vs {}", m.area[v * n + u]);
        }
    }
    // Area spreads: nodes off the axes collect flow from more than one uphill line.
    assert_eq!(m.fallback, 0);
}

#[test]
fn pow_unit_matches_powf() {
    for p in [0.0f32, 0.5, 1.0, 1.1, 2.0, 4.5, 10.0] {
        assert_eq!(pow_unit(1.0, p), 1.0);
        let mut x = 1.0f32;
        while x > 1e-30 {
            let want = (x as f64).powf(p as f64);
            let got = pow_unit(x, p) as f64;
            if want > 1e-37 {
                assert!((got - want).abs() <= 4e-5 * p.max(1.0) as f64 * want, "{x}^{p}: {got} vs {want}");
            }
            x *= 0.937;
        }
    }
    // Far below f32's range: zero, not garbage.
    assert_eq!(pow_unit(1e-30, 10.0), 0.0);
    assert_eq!(pow_unit(0.0, 1.1), pow_unit(f32::MIN_POSITIVE, 1.1));
}

#[test]
fn pow_area_matches_powf_to_a_few_ulps() {
    // Areas from a fraction of a node to 10¹² nodes (a steering mask's weights can make them
    // fractional), every exponent the model accepts.
    for m in [0.05f64, 0.3, 0.4, 0.5, 0.75, 1.0, 1.3, 2.0] {
        let mut a = 1e-3f64;
        while a < 1e12 {
            let want = a.powf(m);
            let got = pow_area(a, m);
            assert!((got - want).abs() <= 1e-14 * want, "{a}^{m}: {got} vs {want}");
            a *= 1.0173;
        }
        assert_eq!(pow_area(0.0, m), 0.0);
        assert_eq!(pow_area(1.0, m), 1.0);
        // Subnormal areas: the smallest normal one's power, never garbage.
        assert_eq!(pow_area(1e-320, m), pow_area(f64::MIN_POSITIVE, m));
    }
    for a in [0.0, 1e-300, 1.0, 3.7, 1e9] {
        assert_eq!(pow_area(a, 0.0), 1.0, "{a}^0");
    }
    // Integral areas, as D8 and a plain MFD run hold them, for the default exponent.
    for a in 1..20_000u32 {
        let (want, got) = ((a as f64).powf(0.4), pow_area(a as f64, 0.4));
        assert!((got - want).abs() <= 8.0 * f64::EPSILON * want, "{a}^0.4: {got} vs {want}");
    }
}

/// The AVX2 builds of the edge weights and of `A^m` give the bits of the plain ones (the same
/// operations, no fused multiply-add), so a result never depends on the CPU it ran on.
#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_edges_and_area_powers_have_the_plain_builds_bits() {
    use super::mfd::{Node, edges_interior_row_any, edges_interior_row_avx2, pow_areas_any, pow_areas_avx2};
    if !std::is_x86_feature_detected!("avx2") {
        return;
    }
    let (w, h) = (67, 23);
    let data = noisy(w, h, 11);
    let r = router(w, h, &data, Boundary::default());
    let mut scratch = vec![0.0f32; 10 * w];
    for p in [0.5f32, 1.1, 3.0] {
        for y in 1..h - 1 {
            let run = |avx: bool, scratch: &mut [f32]| {
                let (mut k, mut m, mut n) = (vec![0u8; w - 2], vec![0u8; w - 2], vec![Node::default(); w - 2]);
                if avx {
                    // SAFETY: AVX2 is present (checked above).
                    unsafe { edges_interior_row_avx2(&r, &data, p, y, scratch, &mut k, &mut m, &mut n) };
                } else {
                    edges_interior_row_any(&r, &data, p, y, scratch, &mut k, &mut m, &mut n);
                }
                (k, m, n.iter().map(|v| v.w).collect::<Vec<_>>())
            };
            assert_eq!(run(false, &mut scratch), run(true, &mut scratch), "row {y}, p {p}");
        }
    }
    let areas: Vec<f64> = (0..5000).map(|i| 0.37 + (i as f64).powf(2.3) * 0.731).collect();
    for m in [0.0, 0.4, 0.5, 1.7] {
        let (mut a, mut b) = (vec![0.0; areas.len()], vec![0.0; areas.len()]);
        pow_areas_any(&mut a, &areas, m);
        // SAFETY: AVX2 is present (checked above).
        unsafe { pow_areas_avx2(&mut b, &areas, m) };
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "m {m}");
    }
}

#[test]
fn mfd_order_puts_every_donor_before_its_receivers() {
    for (seed, b) in [
        (1u64, Boundary::default()),
        (2, Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall }),
        (3, Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall }),
        (4, Boundary::all(EdgeMode::Wall)),
    ] {
        let (w, h) = (37, 29);
        let mut d = noisy(w, h, seed);
        // Flats (equal heights) and a plateau to stress the tie handling.
        for x in 10..20 {
            d[14 * w + x] = 12.0;
            d[15 * w + x] = 12.0;
        }
        let (r, m) = mfd(w, h, &d, b, 1.1);
        assert!(r.pits > 10, "test terrain needs pits ({})", r.pits);
        let mut pos = vec![usize::MAX; w * h];
        for (k, &v) in m.order.iter().enumerate() {
            assert_eq!(pos[v as usize], usize::MAX, "node listed twice");
            pos[v as usize] = k;
        }
        assert!(pos.iter().all(|&p| p != usize::MAX), "node missing from the order");
        for (i, j, wt) in mfd_edges(&m, &r) {
            assert!(pos[i] < pos[j], "edge {i} -> {j} goes against the order");
            assert!(wt > 0.0 && wt <= 1.0);
            // Lake nodes keep their single rerouted receiver.
            if r.lake_level[i] > f32::NEG_INFINITY {
                assert_eq!(j, r.rcv[i] as usize);
            }
        }
        // Total area at the roots = node count (the terminal pit on the closed map).
        let roots: f64 = (0..w * h).filter(|&i| r.rcv[i] as usize == i).map(|i| m.area[i]).sum();
        assert!((roots - (w * h) as f64).abs() < 1e-6, "{roots}");
    }
}

#[test]
fn sea_outlets_are_roots() {
    let (w, h) = (9, 7);
    let d: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 - 3.0).collect();
    let sea: Vec<u8> = d.iter().map(|&v| (v <= 0.0) as u8).collect();
    let mut r = Router::new(w, h, &Boundary::all(EdgeMode::Wall));
    r.add_outlets(&sea);
    r.route(&d);
    assert_eq!(r.pits, 0);
    for (i, &s) in sea.iter().enumerate() {
        if s == 1 {
            assert_eq!(r.rcv[i] as usize, i, "sea node {i} is not a root");
        } else {
            assert_ne!(r.rcv[i] as usize, i);
        }
    }
    // Land drains into the sea column x = 3 (the first at or below 0).
    let into_sea: u32 = (0..h).map(|y| r.area[y * w + 3]).sum();
    assert_eq!(into_sea as usize, (w - 3) * h);
}

#[test]
fn plane_drains_straight_to_the_low_edge() {
    // h = x on a 6×4 map, only the left edge drains.
    let (w, h) = (6, 4);
    let data: Vec<f32> = (0..w * h).map(|i| (i % w) as f32).collect();
    let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
    let r = router(w, h, &data, b);
    assert_eq!(r.pits, 0);
    for i in 0..w * h {
        let x = i % w;
        if x == 0 {
            assert_eq!(r.rcv[i] as usize, i);
            assert_eq!(r.area[i] as usize, w);
        } else {
            assert_eq!(r.rcv[i] as usize, i - 1, "node {i}");
            assert_eq!(r.diag[i], 0);
            assert_eq!(r.area[i] as usize, w - x);
        }
    }
    // Stack: receiver before donor.
    let mut pos = vec![0; w * h];
    for (k, &v) in r.stack.iter().enumerate() {
        pos[v as usize] = k;
    }
    for i in 0..w * h {
        assert!(pos[r.rcv[i] as usize] <= pos[i]);
    }
}

#[test]
fn diagonal_is_measured_over_root_two() {
    // Centre 10, straight neighbour 8 (drop 2), diagonal 7 (drop 3/√2 ≈ 2.12): diagonal wins;
    // with the diagonal at 7.5 (drop 1.77) the straight one wins.
    let b = Boundary::all(EdgeMode::Drain);
    let mut d = vec![20.0f32; 9];
    d[4] = 10.0;
    d[5] = 8.0;
    d[0] = 7.0;
    let r = router(3, 3, &d, b);
    assert_eq!((r.rcv[4], r.diag[4]), (0, 1));
    d[0] = 7.5;
    let r = router(3, 3, &d, b);
    assert_eq!((r.rcv[4], r.diag[4]), (5, 0));
}

#[test]
fn pit_is_routed_over_its_pass_and_gets_a_lake_level() {
    // 5×5, drains on all sides; a bowl with rim 5 and a pit of 1 at the centre, one low rim
    // node at 3 on the right.
    let b = Boundary::all(EdgeMode::Drain);
    let mut d = vec![0.0f32; 25];
    for y in 1..4 {
        for x in 1..4 {
            d[y * 5 + x] = 5.0;
        }
    }
    d[12] = 1.0;
    d[13] = 3.0; // (3, 2): the pass into the right edge
    let r = router(5, 5, &d, b);
    assert_eq!(r.pits, 1);
    for i in 0..25 {
        let root = root_of(&r, i);
        assert_eq!(r.outlet[root], 1, "node {i} ends at a non-outlet");
    }
    // The pit lies below the level of its pass (3, the lower of the two rim heights... the
    // pass e = max(h_i, h_j) = max(3, 0) = 3).
    assert_eq!(r.lake_level[12], 3.0);
    assert_eq!(r.traps.len(), 1);
    assert!((r.traps[0].capacity - 2.0).abs() < 1e-12);
    let total: u32 = (0..25).filter(|&i| r.outlet[i] == 1).map(|i| r.area[i]).sum();
    assert_eq!(total, 25);
}

#[test]
fn nested_pits_take_the_higher_level() {
    // 1-D 7×1: [0, 9, 2, 6, 1, 8, 9], drain on the left only. Basin of node 4 (h=1) overflows
    // over 6 into basin of node 2 (h=2), which overflows over 9 to the outlet: both levels 9.
    let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
    let d = [0.0f32, 9.0, 2.0, 6.0, 1.0, 8.0, 9.0];
    let r = router(7, 1, &d, b);
    assert_eq!(r.pits, 2);
    assert_eq!(r.lake_level[2], 9.0);
    assert_eq!(r.lake_level[4], 9.0);
    assert_eq!(r.lake_level[3], 9.0);
    for i in 0..7 {
        assert_eq!(root_of(&r, i), 0);
    }
    assert_eq!(r.area[0], 7);
}

#[test]
fn closed_map_drains_to_its_lowest_pit() {
    let b = Boundary::all(EdgeMode::Wall);
    let d = [3.0f32, 1.0, 4.0, 1.5, 5.0, 0.5, 2.0, 6.0, 0.7];
    let r = router(3, 3, &d, b);
    for i in 0..9 {
        assert_eq!(root_of(&r, i), 5);
    }
    assert_eq!(r.area[5], 9);
    assert_eq!(r.traps.iter().filter(|t| t.capacity.is_infinite()).count(), 1);
}

#[test]
fn wrap_links_opposite_edges() {
    // 4×3, x wraps, top/bottom drain; node (0,1) is lowest among its row via the wrap.
    let b = Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Drain };
    let mut d = vec![10.0f32; 12];
    d[4] = 5.0; // (0,1)
    d[7] = 1.0; // (3,1): west neighbour of (0,1) through the wrap
    for x in 0..4 {
        d[x] = 9.0;
        d[8 + x] = 9.0;
    }
    d[3] = 0.0; // (3,0): where (3,1) drains
    let r = router(4, 3, &d, b);
    assert_eq!(r.pits, 0);
    assert_eq!(r.rcv[4], 7);
    assert_eq!(r.rcv[7], 3);
    // Made a pit again, (3,1) overflows over its lowest pass and still reaches a drain row.
    d[3] = 9.0;
    let r = router(4, 3, &d, b);
    assert_eq!(r.pits, 1);
    let root = root_of(&r, 4);
    assert_eq!(r.outlet[root], 1);
}

/// The stack's walk takes an interior node's donors from one byte of directions (`donors`); the
/// stack must be the one a walk over the eight neighbours' receivers gives, written out here, on
/// drained, walled and wrapped maps with pits (before their lakes are resolved).
#[test]
fn the_stack_from_donor_bytes_is_the_walk_over_the_neighbours_receivers() {
    let (w, h) = (37, 23);
    for (seed, b) in [
        (1, Boundary::default()),
        (2, Boundary::all(EdgeMode::Wall)),
        (3, Boundary::all(EdgeMode::Wrap)),
        (4, Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall }),
    ] {
        let data = noisy(w, h, seed);
        let mut r = Router::new(w, h, &b);
        let pits = r.receivers(&data);
        r.build_stack(false);
        let g = r.grid;
        let mut want = Vec::new();
        for &root in &r.roots {
            let mut dfs = vec![root as usize];
            while let Some(v) = dfs.pop() {
                want.push(v as u32);
                let mut seen = Vec::new();
                for k in 0..8 {
                    if let Some(u) = g.neighbour(v % w, v / w, k)
                        && u != v
                        && r.rcv[u] as usize == v
                        && !seen.contains(&u)
                    {
                        seen.push(u);
                        dfs.push(u);
                    }
                }
            }
        }
        assert!(pits > 0, "seed {seed}: the map should have pits");
        assert_eq!(want.len(), w * h, "seed {seed}");
        assert_eq!(r.stack, want, "seed {seed}, {b:?}");
    }
}
