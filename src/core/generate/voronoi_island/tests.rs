//! Tests of [`super`] (voronoi_island).

use super::*;

fn brute_nearest(sites: &[[f32; 2]], px: f32, py: f32) -> u32 {
    let mut best = (f32::INFINITY, u32::MAX);
    for (i, s) in sites.iter().enumerate() {
        let d = (s[0] - px) * (s[0] - px) + (s[1] - py) * (s[1] - py);
        if d < best.0 {
            best = (d, i as u32);
        }
    }
    best.1
}

#[test]
fn grid_search_is_exact() {
    let mut rng = SplitMix64::new(3);
    for &(w, h, n) in &[(50usize, 30usize, 1usize), (64, 64, 7), (100, 20, 200), (7, 90, 33)] {
        let sites: Vec<[f32; 2]> =
            (0..n).map(|_| [rng.next_f32() * w as f32 - 0.5, rng.next_f32() * h as f32 - 0.5]).collect();
        let g = SiteGrid::new(&sites, w, h);
        for _ in 0..2000 {
            // Include positions well outside the map (border noise can push lookups there).
            let px = rng.next_f32() * (w as f32 + 40.0) - 20.0;
            let py = rng.next_f32() * (h as f32 + 40.0) - 20.0;
            assert_eq!(g.nearest(px, py), brute_nearest(&sites, px, py), "{w}x{h} n={n} at {px},{py}");
        }
    }
}

#[test]
fn tile_candidates_are_exact() {
    let mut rng = SplitMix64::new(4);
    for &(w, h, n) in &[(50usize, 30usize, 1usize), (64, 64, 7), (100, 20, 200), (7, 90, 33), (128, 128, 1000)] {
        let sites: Vec<[f32; 2]> =
            (0..n).map(|_| [rng.next_f32() * w as f32 - 0.5, rng.next_f32() * h as f32 - 0.5]).collect();
        let near = Nearest::new(&sites, w, h);
        for _ in 0..3000 {
            let px = rng.next_f32() * (w as f32 + 20.0) - 10.0;
            let py = rng.next_f32() * (h as f32 + 20.0) - 10.0;
            assert_eq!(near.nearest(px, py), brute_nearest(&sites, px, py), "{w}x{h} n={n} at {px},{py}");
        }
        for y in 0..h {
            for x in 0..w {
                assert_eq!(near.nearest(x as f32, y as f32), brute_nearest(&sites, x as f32, y as f32));
            }
        }
    }
    // Ties go to the lowest index: two sites at the same place.
    let twin = [[3.0f32, 3.0], [10.0, 10.0], [3.0, 3.0]];
    assert_eq!(Nearest::new(&twin, 16, 16).nearest(2.0, 2.0), 0);
}

#[test]
fn row_noise_matches_point_noise_bit_for_bit() {
    let nz = ValueNoise { seed: 77, freq: 0.037 };
    let mut row = vec![0.0; 300];
    for y in [0usize, 1, 57, 299] {
        nz.fill_row(&nz.x_plan(300), y as f64, &mut row);
        for (x, &v) in row.iter().enumerate() {
            assert_eq!(v, nz.at(x as f64, y as f64), "({x},{y})");
        }
    }
}

#[test]
fn distance_transform_is_exact() {
    // 37 columns: two full column blocks and a partial one.
    let (w, h) = (37usize, 19usize);
    let mut rng = SplitMix64::new(9);
    for density in [0.0f32, 0.01, 0.05, 0.3, 0.9, 1.0] {
        let water: Vec<bool> = (0..w * h).map(|_| rng.next_f32() < density).collect();
        let d = opposite_distance(&water, w, h);
        for y in 0..h {
            for x in 0..w {
                let me = water[y * w + x];
                let mut best = f64::INFINITY;
                for (i, _) in water.iter().enumerate().filter(|(_, s)| **s != me) {
                    let (dx, dy) = ((i % w) as f64 - x as f64, (i / w) as f64 - y as f64);
                    best = best.min(dx * dx + dy * dy);
                }
                assert_eq!(d[y * w + x], best.sqrt() as f32, "density {density} at {x},{y}");
            }
        }
    }
}

#[test]
fn value_noise_is_bounded_and_seeded() {
    let a = ValueNoise { seed: 1, freq: 0.05 };
    let b = ValueNoise { seed: 2, freq: 0.05 };
    let mut differs = false;
    for i in 0..500 {
        let (x, y) = (i as f64 * 1.37, i as f64 * 0.61);
        let v = a.at(x, y);
        assert!((-1.0..=1.0).contains(&v));
        differs |= v != b.at(x, y);
    }
    assert!(differs);
    assert!(a.at(1e12, -1e12).is_finite());
}

#[test]
fn deterministic_seeded_and_thread_independent() {
    let p = VoronoiIslandParams { points: 40, ..Default::default() };
    let a = generate(96, 64, 1.0, &p, 5).unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b = one.install(|| generate(96, 64, 1.0, &p, 5).unwrap());
    assert_eq!(a, b);
    assert_ne!(a.data, generate(96, 64, 1.0, &p, 6).unwrap().data);
    assert!(a.all_finite());
}

#[test]
fn water_is_below_land_and_border_is_water() {
    let p = VoronoiIslandParams { points: 60, ..Default::default() };
    let (w, h) = (80usize, 72usize);
    let hm = generate(w, h, 1.0, &p, 12).unwrap();
    let c = cells(w, h, 1.0, &p, 12).unwrap();
    let mut water_max = f32::NEG_INFINITY;
    let mut land_min = f32::INFINITY;
    let (mut nw, mut nl) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let v = hm.get(x, y);
            if c.is_water(x, y) {
                water_max = water_max.max(v);
                nw += 1;
            } else {
                land_min = land_min.min(v);
                nl += 1;
            }
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                assert!(c.is_water(x, y));
                assert!(v < 0.0);
            }
        }
    }
    assert!(nw > 0 && nl > 0);
    assert!(water_max < land_min && land_min > 0.0, "{water_max} vs {land_min}");
    assert!(hm.stats().max <= p.height_scale * (1.0 + p.height_noise) + 1e-3);
    // The water fraction really selects inland polygons: more water with a larger fraction.
    let more = cells(w, h, 1.0, &VoronoiIslandParams { water_fraction: 0.6, ..p.clone() }, 12).unwrap();
    assert!(more.water.iter().filter(|w| **w).count() > c.water.iter().filter(|w| **w).count());
}

#[test]
fn land_height_grows_with_distance_to_water() {
    // No noise: height is exactly H·((d − ½)/(dmax − ½))^e.
    let p = VoronoiIslandParams {
        points: 30,
        height_noise: 0.0,
        border_noise_m: 0.0,
        height_exponent: 2.0,
        ..Default::default()
    };
    let (w, h) = (64usize, 48usize);
    let hm = generate(w, h, 1.0, &p, 3).unwrap();
    let c = cells(w, h, 1.0, &p, 3).unwrap();
    let water: Vec<bool> = c.labels.iter().map(|&l| c.water[l as usize]).collect();
    let d = opposite_distance(&water, w, h);
    let dmax = (0..w * h).filter(|&i| !water[i]).map(|i| d[i] as f64).fold(0.0, f64::max);
    for i in (0..w * h).filter(|&i| !water[i]) {
        let want = 100.0 * ((d[i] as f64 - 0.5) / (dmax - 0.5)).powf(2.0);
        assert!((hm.data[i] as f64 - want).abs() < 1e-3);
    }
    assert!((hm.stats().max - 100.0).abs() < 1e-3);
}

#[test]
fn no_border_water_and_no_water_fraction_is_a_plateau() {
    let p = VoronoiIslandParams {
        points: 10,
        water_fraction: 0.0,
        border_is_water: false,
        height_noise: 0.0,
        ..Default::default()
    };
    let hm = generate(32, 32, 1.0, &p, 1).unwrap();
    assert!(hm.data.iter().all(|&h| h == 100.0));
    let all_water = VoronoiIslandParams { water_fraction: 1.0, ..p };
    let hm = generate(32, 32, 1.0, &all_water, 1).unwrap();
    assert!(hm.data.iter().all(|&h| h == -20.0));
}

#[test]
fn lloyd_relaxation_evens_out_cell_areas() {
    let variance = |iters: u32| {
        let p = VoronoiIslandParams { points: 64, lloyd_iterations: iters, border_noise_m: 0.0, ..Default::default() };
        let a = cells(128, 128, 1.0, &p, 77).unwrap().areas();
        let mean = a.iter().sum::<u64>() as f64 / a.len() as f64;
        a.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / a.len() as f64
    };
    let v0 = variance(0);
    let v1 = variance(1);
    let v4 = variance(4);
    assert!(v1 < v0 * 0.7 && v4 < v1, "{v0} {v1} {v4}");
}

#[test]
fn border_noise_moves_borders_by_at_most_its_amplitude() {
    let base = VoronoiIslandParams { points: 25, border_noise_m: 0.0, ..Default::default() };
    let noisy = VoronoiIslandParams { border_noise_m: 3.0, ..base.clone() };
    let a = cells(64, 64, 1.0, &base, 8).unwrap();
    let b = cells(64, 64, 1.0, &noisy, 8).unwrap();
    assert_eq!(a.sites, b.sites);
    assert_ne!(a.labels, b.labels);
    // A node whose label changed is within 3 nodes of a node that had the new label.
    for y in 0..64i64 {
        for x in 0..64i64 {
            let l = b.labels[(y * 64 + x) as usize];
            if l != a.labels[(y * 64 + x) as usize] {
                let near = (-3..=3).any(|dy: i64| {
                    (-3..=3).any(|dx: i64| {
                        let (qx, qy) = (x + dx, y + dy);
                        (0..64).contains(&qx) && (0..64).contains(&qy) && a.labels[(qy * 64 + qx) as usize] == l
                    })
                });
                assert!(near, "({x},{y})");
            }
        }
    }
}

#[test]
fn bad_parameters_are_errors() {
    let ok = VoronoiIslandParams::default();
    let bads: Vec<VoronoiIslandParams> = vec![
        VoronoiIslandParams { points: 0, ..ok.clone() },
        VoronoiIslandParams { points: 1 << 20, ..ok.clone() },
        VoronoiIslandParams { lloyd_iterations: 1000, ..ok.clone() },
        VoronoiIslandParams { water_fraction: f32::NAN, ..ok.clone() },
        VoronoiIslandParams { water_fraction: 1.5, ..ok.clone() },
        VoronoiIslandParams { height_scale: -1.0, ..ok.clone() },
        VoronoiIslandParams { height_exponent: 0.0, ..ok.clone() },
        VoronoiIslandParams { sea_depth: f32::INFINITY, ..ok.clone() },
        VoronoiIslandParams { height_noise: 2.0, ..ok.clone() },
        VoronoiIslandParams { border_noise_m: -1.0, ..ok.clone() },
        VoronoiIslandParams { noise_frequency: 0.0, ..ok.clone() },
    ];
    for p in bads {
        assert!(matches!(generate(16, 16, 1.0, &p, 0), Err(GenError::BadParam { .. })), "{p:?}");
    }
    assert!(generate(0, 16, 1.0, &ok, 0).is_err());
    assert!(generate(16, 16, 0.0, &ok, 0).is_err());
    // Tiny maps and more sites than nodes are fine.
    let many = VoronoiIslandParams { points: 5000, ..ok.clone() };
    assert!(generate(3, 2, 1.0, &many, 0).unwrap().all_finite());
    assert!(generate(1, 1, 1.0, &ok, 0).unwrap().all_finite());
    let d: VoronoiIslandParams = serde_json::from_str("{\"points\": 9}").unwrap();
    assert_eq!(d, VoronoiIslandParams { points: 9, ..Default::default() });
}

#[test]
fn the_polygons_are_the_same_at_any_resolution() {
    // The same 256 m × 192 m world at 4 m and at 1 m: the same sites (in metres), the same water
    // polygons and, at every common node, the same polygon.
    let p = VoronoiIslandParams { points: 60, border_noise_m: 10.0, ..Default::default() };
    let coarse = cells(65, 49, 4.0, &p, 9).unwrap();
    let fine = cells(257, 193, 1.0, &p, 9).unwrap();
    assert_eq!(coarse.water, fine.water);
    for (a, b) in coarse.sites.iter().zip(&fine.sites) {
        assert_eq!([a[0] * 4.0, a[1] * 4.0], *b);
    }
    for y in 0..49 {
        for x in 0..65 {
            assert_eq!(coarse.labels[y * 65 + x], fine.labels[4 * y * 257 + 4 * x], "({x}, {y})");
        }
    }
    // Version 1's border noise in nodes, read with its map's cell size.
    let mut v1: VoronoiIslandParams = ron::from_str("(points: 60, border_noise: 2.5)").unwrap();
    v1.upgrade_units(4.0);
    assert_eq!((v1.border_noise, v1.border_noise_m), (None, 10.0));
    assert_eq!(v1, p);
}
