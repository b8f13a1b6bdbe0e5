//! Tests of [`super`] (brush).

use super::*;
use crate::core::rng::{SplitMix64, hash2, signed_f32};

fn noise_map(w: usize, h: usize, seed: u64) -> Heightmap {
    Heightmap::from_fn(w, h, 1.0, |x, y| 10.0 * signed_f32(hash2(x as i64, y as i64, seed))).unwrap()
}

fn raise(radius: f32, falloff: Falloff) -> BrushParams {
    BrushParams { radius, strength: 2.0, falloff, ..Default::default() }
}

/// Every changed node lies in `rect`, and `rect` is the tight box of the changes.
fn assert_tight(before: &Heightmap, after: &Heightmap, rect: DirtyRect) {
    let mut tight = DirtyRect::EMPTY;
    for y in 0..before.height {
        for x in 0..before.width {
            if before.get(x, y).to_bits() != after.get(x, y).to_bits() {
                tight = tight.union(DirtyRect::new(x, y, x + 1, y + 1));
            }
        }
    }
    assert_eq!(tight, rect);
}

#[test]
fn falloffs_run_from_one_to_zero_and_decrease() {
    for f in [Falloff::Linear, Falloff::Smooth, Falloff::Gaussian, Falloff::Constant] {
        assert_eq!(f.weight(0.0), 1.0, "{f:?}");
        assert_eq!(f.weight(1.0001), 0.0);
        assert_eq!(f.weight(f32::NAN), 0.0);
        assert_eq!(f.weight(-0.5), 1.0);
        let mut prev = 1.0;
        for i in 0..=100 {
            let w = f.weight(i as f32 / 100.0);
            assert!((0.0..=1.0).contains(&w) && w <= prev, "{f:?} at {i}");
            prev = w;
        }
        if f != Falloff::Constant {
            assert!(f.weight(1.0).abs() < 1e-6, "{f:?} rim");
        }
    }
    assert!((Falloff::Linear.weight(0.25) - 0.75).abs() < 1e-6);
    assert!((Falloff::Smooth.weight(0.5) - 0.5).abs() < 1e-6);
    let g = (((-4.5f32 * 0.25).exp() - GAUSS_RIM) / (1.0 - GAUSS_RIM)).max(0.0);
    assert!((Falloff::Gaussian.weight(0.5) - g).abs() < 1e-6);
    assert!((GAUSS_RIM - (-4.5f32).exp()).abs() < 1e-7);
}

#[test]
fn raise_and_lower_follow_strength_time_and_falloff() {
    let base = Heightmap::filled(64, 48, 2.0, 5.0).unwrap();
    let p = raise(20.0, Falloff::Linear); // 10 nodes
    let mut hm = base.clone();
    let rect = dab(&mut hm, [30.0, 20.0], &p, 0.5);
    assert_eq!(hm.get(30, 20), 6.0); // 5 + 2 m/s · 0.5 s · 1
    assert!((hm.get(35, 20) - (5.0 + 0.5)).abs() < 1e-6); // ρ = 0.5
    assert_eq!(hm.get(40, 20), 5.0); // on the rim: weight 0
    assert_eq!(hm.get(30, 31), 5.0); // outside
    assert_eq!(rect, DirtyRect::new(21, 11, 40, 30));
    assert_tight(&base, &hm, rect);
    let mut low = base.clone();
    dab(&mut low, [30.0, 20.0], &BrushParams { kind: BrushKind::Lower, ..p.clone() }, 0.5);
    assert_eq!(low.get(30, 20), 4.0);
    for i in 0..hm.len() {
        assert!(((hm.data[i] - 5.0) + (low.data[i] - 5.0)).abs() < 1e-5);
    }
    // Constant falloff covers exactly the disc.
    let mut c = base.clone();
    let rc = dab(&mut c, [10.0, 10.0], &BrushParams { radius: 6.0, falloff: Falloff::Constant, ..p }, 1.0);
    let inside = c.data.iter().filter(|&&h| h == 7.0).count();
    let expect = (7..=13).flat_map(|y| (7..=13).map(move |x| (x, y))).filter(|&(x, y)| {
        let (dx, dy) = (x as f32 - 10.0, y as f32 - 10.0);
        dx * dx + dy * dy <= 9.0
    });
    assert_eq!(inside, expect.count());
    assert_eq!(rc, DirtyRect::new(7, 7, 14, 14));
}

#[test]
fn flatten_moves_towards_its_target_at_the_documented_rate() {
    let base = noise_map(40, 40, 3);
    let p = BrushParams {
        kind: BrushKind::Flatten,
        radius: 8.0,
        strength: 3.0,
        flatten_height: Some(2.5),
        ..Default::default()
    };
    let mut hm = base.clone();
    let rect = dab(&mut hm, [20.0, 20.0], &p, 0.2);
    let a = 1.0 - (-3.0f32 * 0.2).exp();
    let expect = base.get(20, 20) + (2.5 - base.get(20, 20)) * a;
    assert!((hm.get(20, 20) - expect).abs() < 1e-5);
    assert_tight(&base, &hm, rect);
    // Splitting the time into pieces at the same spot gives the same result.
    let mut split = base.clone();
    for _ in 0..4 {
        dab(&mut split, [20.0, 20.0], &p, 0.05);
    }
    for i in 0..hm.len() {
        assert!((hm.data[i] - split.data[i]).abs() < 1e-4);
    }
    // A long dab reaches the target at the centre; without a target it uses the centre height.
    let mut long = base.clone();
    dab(&mut long, [20.0, 20.0], &p, 100.0);
    assert!((long.get(20, 20) - 2.5).abs() < 1e-6);
    let mut own = base.clone();
    dab(&mut own, [20.0, 20.0], &BrushParams { flatten_height: None, ..p }, 100.0);
    assert!((own.get(21, 20) - base.get(20, 20)).abs() < 1e-3);
}

/// Straightforward reference: box mean of finite in-map neighbours, from the original map.
fn smooth_reference(base: &Heightmap, c: [f32; 2], p: &BrushParams, amount: f32) -> Heightmap {
    let mut out = base.clone();
    let r = p.radius / base.cell_size;
    let k = ((r / 8.0).round() as i64).clamp(1, 32);
    for y in 0..base.height {
        for x in 0..base.width {
            let (dx, dy) = (x as f32 - c[0], y as f32 - c[1]);
            let d2 = dx * dx + dy * dy;
            if d2 > r * r {
                continue;
            }
            let w = p.falloff.weight(d2.sqrt() / r);
            if w <= 0.0 {
                continue;
            }
            let (mut s, mut n) = (0.0f64, 0);
            for yy in (y as i64 - k).max(0)..=(y as i64 + k).min(base.height as i64 - 1) {
                for xx in (x as i64 - k).max(0)..=(x as i64 + k).min(base.width as i64 - 1) {
                    let v = base.get(xx as usize, yy as usize);
                    if v.is_finite() {
                        s += v as f64;
                        n += 1;
                    }
                }
            }
            let a = (s / n as f64) as f32;
            let h = base.get(x, y);
            out.set(x, y, if h.is_finite() { h + (a - h) * (1.0 - (-p.strength * amount * w).exp()) } else { a });
        }
    }
    out
}

#[test]
fn smooth_matches_a_direct_box_mean_and_reduces_roughness() {
    for (radius, c) in [(5.0, [20.0, 20.0]), (24.0, [3.5, 30.2]), (3.0, [0.0, 0.0])] {
        let base = noise_map(48, 40, 7);
        let p = BrushParams {
            kind: BrushKind::Smooth,
            radius,
            strength: 4.0,
            falloff: Falloff::Gaussian,
            ..Default::default()
        };
        let mut hm = base.clone();
        let rect = dab(&mut hm, c, &p, 0.3);
        let reference = smooth_reference(&base, c, &p, 0.3);
        for i in 0..hm.len() {
            assert!((hm.data[i] - reference.data[i]).abs() < 1e-4, "r {radius} node {i}");
        }
        assert_tight(&base, &hm, rect);
    }
    // Roughness (sum of squared neighbour differences) drops inside the brush.
    let base = noise_map(32, 32, 9);
    let mut hm = base.clone();
    let p = BrushParams {
        kind: BrushKind::Smooth,
        radius: 12.0,
        strength: 50.0,
        falloff: Falloff::Constant,
        ..Default::default()
    };
    dab(&mut hm, [16.0, 16.0], &p, 1.0);
    let rough = |m: &Heightmap| -> f32 { (10..22).map(|x| (m.get(x + 1, 16) - m.get(x, 16)).powi(2)).sum() };
    assert!(rough(&hm) < 0.2 * rough(&base));
    // A plane is a fixed point of the box mean away from the border.
    let plane = Heightmap::from_fn(40, 40, 1.0, |x, y| 0.5 * x as f32 - 0.25 * y as f32).unwrap();
    let mut pm = plane.clone();
    dab(&mut pm, [20.0, 20.0], &BrushParams { radius: 10.0, ..p }, 1.0);
    for i in 0..pm.len() {
        assert!((pm.data[i] - plane.data[i]).abs() < 1e-4);
    }
}

#[test]
fn non_finite_nodes_never_spread() {
    let mut hm = noise_map(20, 20, 1);
    hm.set(10, 10, f32::NAN);
    hm.set(11, 10, f32::INFINITY);
    for kind in [BrushKind::Raise, BrushKind::Lower, BrushKind::Flatten] {
        let mut m = hm.clone();
        dab(&mut m, [10.0, 10.0], &BrushParams { kind, radius: 5.0, ..Default::default() }, 1.0);
        assert_eq!(m.data.iter().filter(|h| !h.is_finite()).count(), 2, "{kind:?}");
    }
    let mut m = hm.clone();
    dab(&mut m, [10.0, 10.0], &BrushParams { kind: BrushKind::Smooth, radius: 5.0, ..Default::default() }, 1.0);
    assert!(m.all_finite(), "smooth heals non-finite nodes from their finite neighbours");
    // Flatten with no target on a NaN centre does nothing.
    let mut f = hm.clone();
    let p = BrushParams { kind: BrushKind::Flatten, radius: 0.5, ..Default::default() };
    assert!(dab(&mut f, [10.0, 10.0], &p, 1.0).is_empty());
    // Raise saturates at the height limit instead of overflowing.
    let mut big = Heightmap::filled(5, 5, 1.0, HEIGHT_LIMIT - 1.0).unwrap();
    let p = BrushParams { radius: 3.0, strength: MAX_STRENGTH, ..Default::default() };
    dab(&mut big, [2.0, 2.0], &p, MAX_AMOUNT);
    assert!(big.data.iter().all(|&h| h <= HEIGHT_LIMIT && h.is_finite()));
    assert_eq!(big.get(2, 2), HEIGHT_LIMIT);
}

#[test]
fn invalid_parameters_are_refused_without_panicking() {
    assert!(BrushParams::default().validate().is_ok());
    let bad = [
        BrushParams { radius: 0.0, ..Default::default() },
        BrushParams { radius: -1.0, ..Default::default() },
        BrushParams { radius: f32::NAN, ..Default::default() },
        BrushParams { radius: f32::INFINITY, ..Default::default() },
        BrushParams { radius: 1e9, ..Default::default() },
        BrushParams { strength: -1.0, ..Default::default() },
        BrushParams { strength: f32::NAN, ..Default::default() },
        BrushParams { strength: 1e20, ..Default::default() },
        BrushParams { spacing: 0.0, ..Default::default() },
        BrushParams { spacing: f32::INFINITY, ..Default::default() },
        BrushParams { flatten_height: Some(f32::NAN), ..Default::default() },
        BrushParams { flatten_height: Some(1e30), ..Default::default() },
    ];
    let mut hm = noise_map(16, 16, 2);
    let before = hm.clone();
    for p in &bad {
        assert!(matches!(p.validate(), Err(BrushError::BadParam { .. })), "{p:?}");
        assert!(try_dab(&mut hm, [8.0, 8.0], p, 1.0).is_err());
        assert!(dab(&mut hm, [8.0, 8.0], p, 1.0).is_empty());
        assert!(Stroke::new(p.clone()).is_err());
        assert!(dab_bounds(&hm, [8.0, 8.0], p).is_empty());
    }
    let p = BrushParams::default();
    for amount in [f32::NAN, -1.0, f32::INFINITY, 1e9] {
        assert!(try_dab(&mut hm, [8.0, 8.0], &p, amount).is_err());
    }
    for c in [[f32::NAN, 1.0], [1.0, f32::INFINITY]] {
        assert!(try_dab(&mut hm, c, &p, 1.0).is_err());
    }
    assert_eq!(hm, before);
    // Zero strength or zero time: nothing changes.
    assert!(dab(&mut hm, [8.0, 8.0], &BrushParams { strength: 0.0, ..p.clone() }, 1.0).is_empty());
    assert!(dab(&mut hm, [8.0, 8.0], &p, 0.0).is_empty());
    assert_eq!(hm, before);
}

#[test]
fn dabs_off_or_across_the_border_stay_on_the_map() {
    let base = noise_map(30, 20, 5);
    let mut hm = base.clone();
    let p = BrushParams { radius: 6.0, ..Default::default() };
    assert!(dab(&mut hm, [-7.0, 5.0], &p, 1.0).is_empty());
    assert!(dab(&mut hm, [5.0, 1e30], &p, 1.0).is_empty());
    assert!(dab(&mut hm, [-1e30, -1e30], &p, 1.0).is_empty());
    assert_eq!(hm, base);
    let r = dab(&mut hm, [-2.0, 19.5], &p, 1.0);
    assert_eq!((r.x0, r.y1), (0, 20));
    assert_tight(&base, &hm, r);
    // A radius far larger than the map touches the whole map and nothing else.
    let mut all = base.clone();
    let r = dab(&mut all, [15.0, 10.0], &BrushParams { radius: MAX_RADIUS, kind: BrushKind::Smooth, ..p.clone() }, 1.0);
    assert_eq!(r, DirtyRect::full(&base));
    assert_eq!(dab_bounds(&base, [15.0, 10.0], &BrushParams { radius: MAX_RADIUS, ..p }), DirtyRect::full(&base));
    // 1×N maps work too.
    let mut thin = Heightmap::new(1, 9, 1.0).unwrap();
    let r = dab(&mut thin, [0.0, 4.0], &BrushParams { radius: 2.0, ..Default::default() }, 0.1);
    assert_eq!(r, DirtyRect::new(0, 3, 1, 6));
}

#[test]
fn large_dabs_are_identical_at_any_thread_count() {
    let base = noise_map(300, 300, 11);
    let run = |threads: usize, kind: BrushKind| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut hm = base.clone();
            let p = BrushParams { kind, radius: 150.0, strength: 1.0, ..Default::default() };
            let r = dab(&mut hm, [150.0, 140.0], &p, 0.5);
            (hm, r)
        })
    };
    for kind in [BrushKind::Raise, BrushKind::Smooth] {
        let (a, ra) = run(1, kind);
        let (b, rb) = run(4, kind);
        assert_eq!(ra, rb);
        assert!(a.data.iter().zip(&b.data).all(|(x, y)| x.to_bits() == y.to_bits()), "{kind:?}");
        assert_ne!(a, base);
    }
}

#[test]
fn dirty_rect_algebra() {
    let a = DirtyRect::new(2, 3, 5, 7);
    assert_eq!(a.area(), 12);
    assert!(DirtyRect::new(3, 3, 3, 9).is_empty());
    assert_eq!(a.union(DirtyRect::EMPTY), a);
    assert_eq!(DirtyRect::EMPTY.union(a), a);
    assert_eq!(a.union(DirtyRect::new(10, 0, 11, 1)), DirtyRect::new(2, 0, 11, 7));
    assert_eq!(a.intersect(DirtyRect::new(4, 0, 9, 4)), DirtyRect::new(4, 3, 5, 4));
    assert!(a.intersect(DirtyRect::new(5, 0, 9, 9)).is_empty());
    assert_eq!(a.grow(3, 6, 100), DirtyRect::new(0, 0, 6, 10));
    assert!(a.contains(4, 6) && !a.contains(5, 6));
    let chunks: Vec<_> = DirtyRect::new(3, 0, 9, 5).chunks(4).collect();
    assert_eq!(chunks, vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
    assert_eq!(DirtyRect::EMPTY.chunks(4).count(), 0);
}

/// Plays a stroke along `path(s)` (s from 0 to 1 over `duration` seconds) sampled at `hz`.
fn play(
    base: &Heightmap,
    p: &BrushParams,
    hz: f64,
    duration: f64,
    path: impl Fn(f64) -> [f32; 2],
) -> (Heightmap, DirtyRect, Stroke) {
    let mut hm = base.clone();
    let mut s = Stroke::new(p.clone()).unwrap();
    let n = (hz * duration).round() as usize;
    let mut rect = DirtyRect::EMPTY;
    for i in 0..=n {
        let t = i as f64 / hz;
        rect = rect.union(s.add_point(&mut hm, path(t / duration), 10.0 + t));
    }
    rect = rect.union(s.finish(&mut hm));
    assert_eq!(rect, s.dirty());
    (hm, rect, s)
}

fn max_diff(a: &Heightmap, b: &Heightmap) -> f32 {
    a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

#[test]
fn strokes_do_not_depend_on_the_frame_rate() {
    let base = Heightmap::filled(96, 96, 1.0, 0.0).unwrap();
    let p = BrushParams { radius: 8.0, strength: 4.0, ..Default::default() };
    // Straight line: identical dab positions, so results agree to rounding.
    let line = |s: f64| [(16.0 + 60.0 * s) as f32, 40.0];
    let (a, ra, sa) = play(&base, &p, 10.0, 1.0, line);
    let (b, rb, sb) = play(&base, &p, 200.0, 1.0, line);
    assert!(max_diff(&a, &b) < 1e-4, "{}", max_diff(&a, &b));
    assert_eq!(ra, rb);
    // The same dabs, give or take one at the very end (a remainder of rounding size).
    assert!(sa.dab_count().abs_diff(sb.dab_count()) <= 1, "{} vs {}", sa.dab_count(), sb.dab_count());
    // The brush time adds up: volume = strength × duration × Σ weights (same for every dab).
    let wsum: f32 = (-8..=8)
        .flat_map(|y: i32| (-8..=8).map(move |x: i32| (x, y)))
        .map(|(x, y)| p.falloff.weight(((x * x + y * y) as f32).sqrt() / 8.0))
        .sum();
    let vol: f32 = a.data.iter().sum();
    assert!((vol - 4.0 * 1.0 * wsum).abs() < 1e-3 * vol, "{vol} vs {}", 4.0 * wsum);
    // A quarter circle: the 10 Hz polyline cuts corners slightly, the maps still agree closely.
    let arc = |s: f64| {
        let a = s * std::f64::consts::FRAC_PI_2;
        [(20.0 + 50.0 * a.cos()) as f32, (20.0 + 50.0 * a.sin()) as f32]
    };
    let (c, _, _) = play(&base, &p, 10.0, 1.5, arc);
    let (d, _, _) = play(&base, &p, 200.0, 1.5, arc);
    let peak = d.data.iter().cloned().fold(0.0, f32::max);
    assert!(peak > 0.1);
    assert!(max_diff(&c, &d) < 0.05 * peak, "{} vs peak {peak}", max_diff(&c, &d));
    // Holding still for one second raises the centre by strength × 1 s at any rate.
    for hz in [7.0, 60.0, 240.0] {
        let (h, _, s) = play(&base, &p, hz, 1.0, |_| [50.0, 50.0]);
        assert!((h.get(50, 50) - 4.0).abs() < 1e-4, "{hz} Hz: {}", h.get(50, 50));
        assert!(s.dab_count() >= 60);
    }
}

#[test]
fn stroke_spacing_hooks_and_odd_samples() {
    let base = noise_map(64, 64, 4);
    let p = BrushParams { radius: 8.0, spacing: 0.5, ..Default::default() };
    // A fast move (60 nodes in 0.01 s) is dominated by spacing: one dab every 4 nodes.
    let mut hm = base.clone();
    let mut s = Stroke::new(p.clone()).unwrap();
    s.add_point(&mut hm, [2.0, 30.0], 0.0);
    s.add_point(&mut hm, [63.0, 30.0], 0.01);
    assert_eq!(s.dab_count(), 15);
    // The before-hook sees every rectangle before it changes, on the unchanged map.
    let mut hm = base.clone();
    let mut s = Stroke::new(BrushParams { kind: BrushKind::Smooth, ..p.clone() }).unwrap();
    let mut seen = DirtyRect::EMPTY;
    let mut calls = 0;
    for i in 0..20 {
        let pos = [10.0 + 2.0 * i as f32, 20.0 + i as f32];
        s.add_point_with(&mut hm, pos, i as f64 * 0.02, |m, r| {
            calls += 1;
            seen = seen.union(r);
            assert!(!r.is_empty() && r.x1 <= m.width && r.y1 <= m.height);
        });
    }
    assert!(calls > 0);
    let last = s.finish_with(&mut hm, |_, r| seen = seen.union(r));
    assert!(!s.dirty().is_empty());
    assert_eq!(seen.union(s.dirty()), seen, "changes outside the announced rectangles");
    assert_eq!(seen.union(last), seen);
    assert_tight(&base, &hm, s.dirty());
    // Non-finite samples and time going backwards do nothing harmful.
    let mut hm = base.clone();
    let mut s = Stroke::new(p.clone()).unwrap();
    assert!(s.add_point(&mut hm, [f32::NAN, 3.0], 0.0).is_empty());
    assert!(s.add_point(&mut hm, [10.0, 10.0], f64::INFINITY).is_empty());
    s.add_point(&mut hm, [10.0, 10.0], 5.0);
    s.add_point(&mut hm, [10.0, 10.0], 4.0);
    s.add_point(&mut hm, [10.0, 10.0], 1e12);
    s.finish(&mut hm);
    assert!(hm.all_finite());
    assert!((hm.get(10, 10) - base.get(10, 10) - p.strength * MAX_SAMPLE_GAP as f32).abs() < 1e-3);
    // A huge jump is capped in dab count.
    let mut s = Stroke::new(BrushParams { radius: 0.001, spacing: 0.01, ..p }).unwrap();
    s.add_point(&mut hm, [0.0, 0.0], 0.0);
    s.add_point(&mut hm, [1e7, 0.0], 0.0);
    assert!(s.dab_count() <= MAX_DABS_PER_SEGMENT as usize + 1);
}

#[test]
fn flatten_stroke_takes_the_first_dab_height() {
    let base = noise_map(64, 64, 8);
    let p = BrushParams { kind: BrushKind::Flatten, radius: 6.0, strength: 60.0, ..Default::default() };
    let mut hm = base.clone();
    let mut s = Stroke::new(p).unwrap();
    let mut rng = SplitMix64::new(3);
    s.add_point(&mut hm, [20.0, 20.0], 0.0);
    let mut t = 0.0;
    for i in 1..=40 {
        t += 0.02 + 0.01 * rng.next_f64();
        s.add_point(&mut hm, [20.0 + i as f32 * 0.5, 20.0], t);
    }
    s.finish(&mut hm);
    let target = s.flatten_target().unwrap();
    // The first dab lies within one spacing (1.5 nodes) of the start along row 20, where the
    // bilinear surface is piecewise linear between nodes 20, 21 and 22.
    let row = [base.get(20, 20), base.get(21, 20), base.sample(21.5, 20.0)];
    let (lo, hi) = (row.iter().cloned().fold(f32::MAX, f32::min), row.iter().cloned().fold(f32::MIN, f32::max));
    assert!(target >= lo - 1e-5 && target <= hi + 1e-5, "target {target} not in [{lo}, {hi}]");
    assert_ne!(target, base.get(20, 20), "the target comes from the first dab, not the first sample");
    assert!((hm.get(30, 20) - target).abs() < 0.05, "{} vs {target}", hm.get(30, 20));
}

#[test]
fn params_round_trip_and_fill_defaults() {
    let p = BrushParams {
        kind: BrushKind::Flatten,
        falloff: Falloff::Gaussian,
        flatten_height: Some(3.0),
        ..Default::default()
    };
    let s = ron::to_string(&p).unwrap();
    assert_eq!(ron::from_str::<BrushParams>(&s).unwrap(), p);
    let partial: BrushParams = ron::from_str("(radius: 4.0)").unwrap();
    assert_eq!(partial, BrushParams { radius: 4.0, ..Default::default() });
    let j = serde_json::to_string(&DirtyRect::new(1, 2, 3, 4)).unwrap();
    assert_eq!(serde_json::from_str::<DirtyRect>(&j).unwrap(), DirtyRect::new(1, 2, 3, 4));
}
