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
    warped.warp.strength = 20.0;
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
        island: Some(talus::core::generate::island_filter::IslandFilterParams { waterside: 10, ..Default::default() }),
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
    let bad = FbmParams { frequency: f64::NAN, ..Default::default() };
    assert!(generate::generate(&GenerateParams { base: Base::Fbm(bad), ..Default::default() }).is_err());
    assert!(generate::generate(&GenerateParams { width: 1 << 20, height: 1 << 20, ..Default::default() }).is_err());
    assert!(generate::generate(&GenerateParams { cell_size: -1.0, ..Default::default() }).is_err());
    assert!(
        generate::generate(&GenerateParams { base: Base::Flat { height: f32::INFINITY }, ..Default::default() })
            .is_err()
    );
}
