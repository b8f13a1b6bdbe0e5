//! Noise generators and post-processing stages (SPEC §1).
//!
//! * `fbm_4096/perlin_8oct` — the headline goal: 4096² nodes, 8 octaves of our gradient noise
//!   (≈134 M noise evaluations) in ≤ 1 s on two cores.
//! * `fbm_1024_8oct/*` — every base noise, ridged and warped, at 1024², 8 octaves, with two peers:
//!   the `noise` crate's own `Fbm<Perlin>` (evaluated point by point, rows in parallel like ours)
//!   and `symbios-ground`'s `FbmNoise` (its own single-threaded loop, value noise).
//! * `post_1024/*` — hills, terraces, island filter, radial falloff, sea level.
//!
//! Run: `cargo bench --no-default-features --bench generate`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use noise::{MultiFractal, NoiseFn};
use rayon::prelude::*;
use talus::core::generate::fbm::{self, FbmParams, Fractal, NoiseKind};
use talus::core::generate::hills::{self, HillsParams};
use talus::core::generate::island_filter::{
    IslandFilterParams, IslandMode, RadialFalloffParams, SeaLevelParams, apply_sea_level, island_filter, radial_falloff,
};
use talus::core::generate::terrace::{self, TerraceParams};
use talus::core::generate::value_noise::Interpolation;
use talus::core::generate::warp::WarpParams;

fn params(size: usize) -> FbmParams {
    FbmParams {
        octaves: 8,
        wavelength_m: size as f64 / 8.0,
        persistence: 0.5,
        amplitude: 100.0,
        ..FbmParams::default()
    }
}

fn fbm_4096(c: &mut Criterion) {
    let mut g = c.benchmark_group("fbm_4096");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(12));
    let p = params(4096);
    g.bench_function("perlin_8oct", |b| b.iter(|| black_box(fbm::generate(4096, 4096, 1.0, &p, 1).unwrap())));
    g.finish();
}

fn fbm_1024(c: &mut Criterion) {
    let mut g = c.benchmark_group("fbm_1024_8oct");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    let base = params(1024);
    let kinds = [
        ("perlin", NoiseKind::Perlin),
        ("crate_perlin", NoiseKind::CratePerlin),
        ("open_simplex", NoiseKind::OpenSimplex),
        ("simplex", NoiseKind::Simplex),
        ("value_linear", NoiseKind::Value(Interpolation::Linear)),
        ("value_cosine", NoiseKind::Value(Interpolation::Cosine)),
        ("value_cubic", NoiseKind::Value(Interpolation::Cubic)),
    ];
    for (name, kind) in kinds {
        let p = FbmParams { noise: kind, ..base.clone() };
        g.bench_function(name, |b| b.iter(|| black_box(fbm::generate(1024, 1024, 1.0, &p, 1).unwrap())));
    }
    let ridged = FbmParams { fractal: Fractal::Ridged, ..base.clone() };
    g.bench_function("perlin_ridged", |b| b.iter(|| black_box(fbm::generate(1024, 1024, 1.0, &ridged, 1).unwrap())));
    let warped = FbmParams {
        warp: WarpParams { strength_m: 40.0, wavelength_m: 256.0, octaves: 4, ..WarpParams::default() },
        ..base.clone()
    };
    g.bench_function("perlin_warped", |b| b.iter(|| black_box(fbm::generate(1024, 1024, 1.0, &warped, 1).unwrap())));

    // Peer: the noise crate's Fbm<Perlin>, same parallel row loop.
    let peer = noise::Fbm::<noise::Perlin>::new(1)
        .set_octaves(8)
        .set_frequency(8.0 / 1024.0)
        .set_persistence(0.5)
        .set_lacunarity(2.0);
    g.bench_function("peer_noise_crate_fbm_perlin", |b| {
        b.iter(|| {
            let mut data = vec![0.0f32; 1024 * 1024];
            data.par_chunks_mut(1024).enumerate().for_each(|(y, row)| {
                for (x, v) in row.iter_mut().enumerate() {
                    *v = peer.get([x as f64, y as f64]) as f32;
                }
            });
            black_box(data)
        })
    });
    // Peer: symbios-ground's FbmNoise (value noise, single-threaded by design).
    g.bench_function("peer_symbios_fbm_value", |b| {
        use symbios_ground::TerrainGenerator;
        let gen_ = symbios_ground::FbmNoise::new(1).with_octaves(8).with_persistence(0.5);
        b.iter(|| {
            let mut hm = symbios_ground::HeightMap::new(1024, 1024, 1.0);
            gen_.generate(&mut hm);
            black_box(hm)
        })
    });
    g.finish();
}

fn post_1024(c: &mut Criterion) {
    let mut g = c.benchmark_group("post_1024");
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    let base = fbm::generate(1024, 1024, 1.0, &params(1024), 1).unwrap();
    let hp = HillsParams { count: 2000, radius_min_m: 8.0, radius_max_m: 48.0, ..HillsParams::default() };
    g.bench_function("hills_2000", |b| b.iter(|| black_box(hills::generate(1024, 1024, 1.0, &hp, 1).unwrap())));
    g.bench_function("terrace_8", |b| {
        b.iter(|| {
            let mut hm = base.clone();
            terrace::apply(&mut hm, &TerraceParams::default()).unwrap();
            black_box(hm)
        })
    });
    for (name, mode) in [("island_seed004", IslandMode::Seed004), ("island_symmetric", IslandMode::Symmetric)] {
        let p = IslandFilterParams { waterside_m: 100.0, mode, ..IslandFilterParams::default() };
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut hm = base.clone();
                island_filter(&mut hm, &p).unwrap();
                black_box(hm)
            })
        });
    }
    g.bench_function("radial_falloff", |b| {
        b.iter(|| {
            let mut hm = base.clone();
            radial_falloff(&mut hm, &RadialFalloffParams::default()).unwrap();
            black_box(hm)
        })
    });
    let sea = SeaLevelParams { level: 0.0, coverage: Some(0.4), seabed_depth: Some(20.0) };
    g.bench_function("sea_level_coverage", |b| {
        b.iter(|| {
            let mut hm = base.clone();
            apply_sea_level(&mut hm, &sea).unwrap();
            black_box(hm)
        })
    });
    g.bench_function("clone_only", |b| b.iter(|| black_box(base.clone())));
    g.finish();
}

criterion_group!(benches, fbm_4096, fbm_1024, post_1024);
criterion_main!(benches);
