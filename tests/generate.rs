//! Generator integration tests: determinism across thread counts, seeds, and every kind.
use talus::core::generate::fbm::{FbmParams, Fractal, NoiseKind};
use talus::core::generate::value_noise::Interpolation;
use talus::core::generate::{self, Base, GenerateParams};
use talus::core::heightmap::Heightmap;

mod common;
use common::grid::in_pool;

fn all_bases() -> Vec<Base> {
    let mut v = Vec::new();
    for noise in [
        NoiseKind::Perlin,
        NoiseKind::Simplex,
        NoiseKind::OpenSimplex,
        NoiseKind::Value(Interpolation::Linear),
        NoiseKind::Value(Interpolation::Cosine),
        NoiseKind::Value(Interpolation::Cubic),
    ] {
        for fractal in [Fractal::Fbm, Fractal::Ridged] {
            v.push(Base::Fbm(FbmParams { noise, fractal, ..Default::default() }));
        }
    }
    let mut warped = FbmParams::default();
    warped.warp.strength_m = 40.0;
    v.push(Base::Fbm(warped));
    v.push(Base::DiamondSquare(Default::default()));
    v.push(Base::LazyWorld(Default::default()));
    v.push(Base::VoronoiIsland(Default::default()));
    v.push(Base::Hills(Default::default()));
    v
}

fn full_pipeline(base: Base, seed: u64) -> GenerateParams {
    GenerateParams {
        width: 97,
        height: 61,
        seed,
        base,
        hills: Some(Default::default()),
        terrace: Some(Default::default()),
        island: Some(talus::core::generate::island_filter::IslandFilterParams {
            waterside_m: 20.0,
            ..Default::default()
        }),
        falloff: Some(Default::default()),
        sea_level: Some(Default::default()),
        ..Default::default()
    }
}

#[test]
fn same_seed_same_bits_at_one_and_two_threads() {
    for base in all_bases() {
        let p = full_pipeline(base.clone(), 11);
        let one: Heightmap = in_pool(1, || generate::generate(&p).unwrap());
        let two: Heightmap = in_pool(2, || generate::generate(&p).unwrap());
        let bits = |h: &Heightmap| h.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&one), bits(&two), "{} differs between 1 and 2 threads", base.kind_name());
        assert!(one.all_finite());
        let other = generate::generate(&full_pipeline(base.clone(), 12)).unwrap();
        assert_ne!(one.data, other.data, "{} ignores the seed", base.kind_name());
    }
}

#[test]
fn odd_sizes_generate_for_every_kind() {
    for base in all_bases() {
        for (w, h) in [(1, 1), (1, 17), (17, 1), (2, 3), (130, 5)] {
            let p = GenerateParams { width: w, height: h, base: base.clone(), ..Default::default() };
            let hm = generate::generate(&p).unwrap_or_else(|e| panic!("{} {w}×{h}: {e}", base.kind_name()));
            assert_eq!((hm.width, hm.height), (w, h));
            assert!(hm.all_finite(), "{} {w}×{h}", base.kind_name());
        }
    }
}

#[test]
fn absurd_values_are_errors_not_panics() {
    let bad = FbmParams { octaves: 1000, ..Default::default() };
    assert!(generate::generate(&GenerateParams { base: Base::Fbm(bad), ..Default::default() }).is_err());
    let bad = FbmParams { wavelength_m: f64::NAN, ..Default::default() };
    assert!(generate::generate(&GenerateParams { base: Base::Fbm(bad), ..Default::default() }).is_err());
    assert!(generate::generate(&GenerateParams { width: 1 << 20, height: 1 << 20, ..Default::default() }).is_err());
    assert!(generate::generate(&GenerateParams { cell_size: -1.0, ..Default::default() }).is_err());
    assert!(
        generate::generate(&GenerateParams { base: Base::Flat { height: f32::INFINITY }, ..Default::default() })
            .is_err()
    );
}

// ---------------------------------------------------------------------------------------------
// World units (version 2): version-1 files, and the same land at any resolution.

use talus::core::generate::demo_params;
use talus::core::generate::hills::HillsParams;
use talus::core::generate::island_filter::IslandFilterParams;
use talus::core::generate::warp::WarpParams;

/// A version-1 generator file: frequencies in cycles per node and lengths in nodes, for its 2 m
/// grid (fBm with a warp, hills, the island filter).
const V1_WARPED: &str = r#"(
    width: 33, height: 29, cell_size: 2.0, seed: 5,
    base: Fbm((frequency: 0.006, amplitude: 100.0, persistence: 0.5, offset: (0.0, 0.0),
               warp: (strength: 3.0, frequency: 0.02, octaves: 2))),
    hills: Some((count: 6, radius_min: 3.0, radius_max: 9.0)),
    normalize: Some((0.0, 100.0)),
    island: Some((waterside: 5)),
)"#;

/// A version-1 fBm on a 2.5 m grid, without a warp (the fast row path).
const V1_PLAIN: &str = "(width: 40, height: 24, cell_size: 2.5, seed: 9, base: Fbm((frequency: 0.03, octaves: 5, persistence: 0.5, amplitude: 50.0)), normalize: None)";

/// Nodes the version-1 heights below were read at.
const PROBES: [(usize, usize); 8] = [(0, 0), (10, 3), (32, 23), (17, 14), (5, 22), (25, 9), (7, 7), (30, 1)];

/// What the version-1 generator made of [`V1_WARPED`] and [`V1_PLAIN`] (computed before the
/// change to world units): heights at [`PROBES`], and the sum of all heights.
const V1_HEIGHTS: [([f32; 8], f64); 2] = [
    ([0.0, 14.833494, 0.0, 46.90463, 43.05229, 40.597347, 23.767075, 7.722704], 30347.930306),
    ([10.099874, 2.307009, -16.180964, -25.172705, -14.6921, -23.92539, -2.4248602, -0.116895095], -11290.049389),
];

fn assert_v1_heights(hm: &Heightmap, (want, sum): ([f32; 8], f64), what: &str) {
    for (&(x, y), w) in PROBES.iter().zip(want) {
        assert!((hm.get(x, y) - w).abs() < 1e-4, "{what} ({x}, {y}): {} vs version 1's {w}", hm.get(x, y));
    }
    let got: f64 = hm.data.iter().map(|&h| h as f64).sum();
    assert!((got - sum).abs() < 1e-4 * hm.len() as f64, "{what}: sum {got} vs version 1's {sum}");
}

#[test]
fn version_1_files_upgrade_to_world_units_and_the_same_heights() {
    let raw: GenerateParams = ron::from_str(V1_WARPED).unwrap();
    assert!(raw.has_legacy_units());
    let p = GenerateParams::from_ron(V1_WARPED).unwrap();
    assert!(!p.has_legacy_units());
    let Base::Fbm(f) = &p.base else { panic!("not fBm") };
    assert!((f.wavelength_m - 1000.0 / 3.0).abs() < 1e-9, "{}", f.wavelength_m);
    assert!((f.warp.strength_m - 6.0).abs() < 1e-12 && (f.warp.wavelength_m - 100.0).abs() < 1e-9);
    let h = p.hills.as_ref().unwrap();
    assert_eq!((h.radius_min_m, h.radius_max_m), (6.0, 18.0));
    assert_eq!(p.island.as_ref().unwrap().waterside_m, 10.0);
    // Written back, only the new names appear, and they read back the same.
    let text = ron::ser::to_string_pretty(&p, Default::default()).unwrap();
    for old in ["frequency", "strength:", "radius_min:", "radius_max:", "waterside:"] {
        assert!(!text.contains(old), "{old} in {text}");
    }
    assert_eq!(GenerateParams::from_ron(&text).unwrap(), p);
    // The same heights as version 1 made, and as the same parameters written in world units.
    assert_v1_heights(&generate::generate(&p).unwrap(), V1_HEIGHTS[0], "warped");
    let new = GenerateParams {
        width: 33,
        height: 29,
        cell_size: 2.0,
        seed: 5,
        base: Base::Fbm(FbmParams {
            wavelength_m: 1000.0 / 3.0,
            amplitude: 100.0,
            persistence: 0.5,
            offset: [0.0, 0.0],
            warp: WarpParams { strength_m: 6.0, wavelength_m: 100.0, octaves: 2, ..Default::default() },
            ..Default::default()
        }),
        hills: Some(HillsParams { count: 6, radius_min_m: 6.0, radius_max_m: 18.0, ..Default::default() }),
        island: Some(IslandFilterParams { waterside_m: 10.0, ..Default::default() }),
        ..Default::default()
    };
    assert_v1_heights(&generate::generate(&new).unwrap(), V1_HEIGHTS[0], "written in metres");
    let plain = GenerateParams::from_ron(V1_PLAIN).unwrap();
    let Base::Fbm(f) = &plain.base else { panic!("not fBm") };
    assert!((f.wavelength_m - 2.5 / 0.03).abs() < 1e-9);
    assert_v1_heights(&generate::generate(&plain).unwrap(), V1_HEIGHTS[1], "plain");
    // A version-1 file that leaves the cell size out meant 1 m; it is now read as 2 m, and its
    // frequency with it, so its heights are still version 1's, node for node.
    let bare = GenerateParams::from_ron("(width: 33, height: 29, seed: 5, base: Fbm((frequency: 0.006)))").unwrap();
    assert_eq!(bare.cell_size, 2.0);
    let at_1m = GenerateParams {
        cell_size: 1.0,
        base: Base::Fbm(FbmParams { wavelength_m: 1.0 / 0.006, ..Default::default() }),
        ..bare.clone()
    };
    let (a, b) = (generate::generate(&bare).unwrap(), generate::generate(&at_1m).unwrap());
    assert!(a.data.iter().zip(&b.data).all(|(x, y)| (x - y).abs() < 1e-4));
}

/// `p` over the default island's 1024 m square, sampled with `size` nodes a side.
fn sampled(p: &GenerateParams, size: usize) -> Heightmap {
    let q = GenerateParams { width: size, height: size, cell_size: 1024.0 / (size - 1) as f32, ..p.clone() };
    generate::generate(&q).unwrap()
}

/// Largest and mean `|Δh|` between `coarse` and every `step`-th node of `fine`.
fn difference(coarse: &Heightmap, fine: &Heightmap, step: usize) -> (f32, f64) {
    let mut worst = 0.0f32;
    let mut sum = 0.0f64;
    for y in 0..coarse.height {
        for x in 0..coarse.width {
            let d = (coarse.get(x, y) - fine.get(step * x, step * y)).abs();
            worst = worst.max(d);
            sum += d as f64;
        }
    }
    (worst, sum / coarse.len() as f64)
}

/// The largest and mean difference, as fractions of the fine map's relief, of `p` sampled at
/// 129² (8 m) and 257² (4 m) from 1025² (1 m), at their common points.
fn resolution_error(p: &GenerateParams) -> [(f64, f64); 2] {
    let fine = sampled(p, 1025);
    let s = fine.stats();
    let relief = (s.max - s.min) as f64;
    assert!(relief > 1.0, "flat: {s:?}");
    [(129, 8), (257, 4)].map(|(size, step)| {
        let (worst, mean) = difference(&sampled(p, size), &fine, step);
        (worst as f64 / relief, mean / relief)
    })
}

#[test]
fn the_default_island_is_the_same_land_at_any_resolution() {
    // Measured: 129² differs from 1025² by at most 0.21 m (mean 0.07 m), 257² by 0.20 m (mean
    // 0.05 m), of 120 m of relief: the normalisation and the sea level's coverage see slightly
    // different extremes and quantiles in a coarser sample.
    let island = demo_params(513, 1);
    for (i, (worst, mean)) in resolution_error(&island).into_iter().enumerate() {
        assert!(worst < 4e-3 && mean < 1e-3, "{}: max {worst:.2e}, mean {mean:.2e} of the relief", ["129²", "257²"][i]);
    }
    // Before normalisation the functions of world position agree to rounding.
    let raw = GenerateParams { normalize: None, falloff: None, sea_level: None, ..island };
    let warped = FbmParams { warp: WarpParams { strength_m: 60.0, ..Default::default() }, ..generate::landscape_fbm() };
    let hills = HillsParams { count: 300, ..Default::default() };
    for base in [raw.base.clone(), Base::Fbm(warped), Base::Hills(hills.clone())] {
        let name = base.kind_name();
        assert!(base.is_resolution_independent());
        let p = GenerateParams { base, hills: Some(hills.clone()), ..raw.clone() };
        for (worst, _) in resolution_error(&p) {
            assert!(worst < 1e-6, "{name}: {worst:.2e} of the relief");
        }
    }
}

#[test]
fn a_finer_grid_with_the_coarse_grids_fit_holds_the_coarse_grids_heights() {
    // What a build does (`editor::build::stack::build_base`): the project's grid decides the
    // normalisation and the sea's shift, so the build's base agrees with the project's at the
    // nodes they share, to rounding, where the grid's own fit differs by up to 0.2 m (above).
    // 16 m cells: the world of the parity table whose channels this moved from 72 % to 96 %.
    for cell in [2.0f32, 16.0] {
        let coarse_p = GenerateParams { width: 129, height: 129, cell_size: cell * 4.0, ..demo_params(513, 1) };
        let fine_p = GenerateParams { width: 513, height: 513, cell_size: cell, ..coarse_p.clone() };
        let never = std::sync::atomic::AtomicBool::new(false);
        let (coarse, fit) = generate::generate_fitted(&coarse_p, None, &never).unwrap();
        assert_eq!(coarse, generate::generate(&coarse_p).unwrap(), "generate is generate_fitted with no fit");
        assert!(fit.range.is_some() && fit.sea_shift.is_some(), "{fit:?}");
        let (fine, used) = generate::generate_fitted(&fine_p, Some(&fit), &never).unwrap();
        assert_eq!(used, fit);
        let (worst, _) = difference(&coarse, &fine, 4);
        assert!(worst < 1e-3, "{cell} m: {worst} m apart with the coarse fit");
        // Its own fit moves the shared nodes (what builds did before).
        let (own, _) = difference(&coarse, &generate::generate(&fine_p).unwrap(), 4);
        assert!(own > 10.0 * worst.max(1e-5), "{cell} m: {own} m with the fine grid's own fit");
    }
}

#[test]
fn voronoi_islands_are_the_same_polygons_at_any_resolution() {
    // The sites, the water polygons and every common node's polygon are the same; what differs
    // is the sampling of the distance to the coast (≤ half a node on average). Measured on the
    // default island's square: 129² differs from 1025² by at most 7.4 % of the relief (mean
    // 1.0 %), 257² by at most 2.9 % (mean 0.4 %); as a whole island (normalised, with falloff and
    // sea) 5.1 % (0.55 %) and 1.8 % (0.24 %).
    let base = Base::VoronoiIsland(Default::default());
    assert!(base.is_resolution_independent());
    let island = GenerateParams { base, ..demo_params(513, 1) };
    let raw = GenerateParams { normalize: None, falloff: None, sea_level: None, ..island.clone() };
    let [coarse, mid] = resolution_error(&raw);
    assert!(coarse.0 < 0.1 && coarse.1 < 0.015, "129²: {coarse:?}");
    assert!(mid.0 < 0.04 && mid.1 < 0.006, "257²: {mid:?}");
    let [coarse, mid] = resolution_error(&island);
    assert!(coarse.0 < 0.07 && coarse.1 < 0.01, "129²: {coarse:?}");
    assert!(mid.0 < 0.025 && mid.1 < 0.004, "257²: {mid:?}");
}

#[test]
fn grid_bases_say_a_build_resamples_them() {
    assert!(!Base::DiamondSquare(Default::default()).is_resolution_independent());
    assert!(!Base::LazyWorld(Default::default()).is_resolution_independent());
    assert!(Base::Flat { height: 3.0 }.is_resolution_independent());
}
