//! Lazy world, diamond-square and Voronoi islands (SPEC §1, seed 001).
//!
//! * `lazy_world_128/fresh_2^12` and `fresh_2^24` — a 128² window with a fresh cache in a world
//!   of side 2^12 and 2^24. The cost must follow the window, not the world: both should be about
//!   equal (goal ≤ 2 ms on one core). Before criterion runs, a plain timing loop prints both
//!   medians and their ratio.
//! * `lazy_world_128/warm_2^24` — the same window again with everything memoised.
//! * `diamond_square/1025` and `/4097` — ours (rows of each layer in parallel) beside
//!   `symbios-ground`'s `DiamondSquare` (single-threaded, same 2^n+1 sizes).
//! * `voronoi_1024/island` — ours (default parameters: 512 sites, 2 Lloyd passes, noisy
//!   borders, two exact distance transforms) beside `symbios-ground`'s `VoronoiTerracing`
//!   (nearest-site lookup only, no relaxation or distances: a lower bound, not a like-for-like).
//!
//! Run: `cargo bench --no-default-features --bench lazy_world`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use talus::core::generate::diamond_square::{self, DiamondSquareParams};
use talus::core::generate::lazy_world::{LazyWorld, LazyWorldParams};
use talus::core::generate::voronoi_island::{self, VoronoiIslandParams};

fn world(k: u32) -> LazyWorld {
    LazyWorld::new(&LazyWorldParams { side_log2: k, ..Default::default() }, 7).unwrap()
}

/// A window origin away from any power-of-two alignment, in the middle of the world.
fn origin(k: u32) -> (i64, i64) {
    let s = 1i64 << k;
    (s / 2 + 37, s / 3 + 11)
}

fn fresh_window(k: u32) -> f32 {
    let mut w = world(k);
    let (x, y) = origin(k);
    let hm = w.window(x, y, 128, 128, 1.0).unwrap();
    hm.data[129]
}

fn median_us(k: u32, reps: usize) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            black_box(fresh_window(k));
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn lazy(c: &mut Criterion) {
    // Single-threaded by construction (LazyWorld is &mut and sequential).
    let a = median_us(12, 201);
    let b = median_us(24, 201);
    println!("lazy_world 128² fresh cache: 2^12 world {a:.0} µs, 2^24 world {b:.0} µs, ratio 2^24/2^12 = {:.2}", b / a);
    let mut cache = world(24);
    let (x, y) = origin(24);
    cache.window(x, y, 128, 128, 1.0).unwrap();
    println!(
        "lazy_world 128² memo entries: 2^12 {} , 2^24 {}",
        {
            let mut w = world(12);
            let (x, y) = origin(12);
            w.window(x, y, 128, 128, 1.0).unwrap();
            w.cache_len()
        },
        cache.cache_len()
    );

    let mut g = c.benchmark_group("lazy_world_128");
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    g.bench_function("fresh_2^12", |bch| bch.iter(|| black_box(fresh_window(12))));
    g.bench_function("fresh_2^24", |bch| bch.iter(|| black_box(fresh_window(24))));
    g.bench_function("warm_2^24", |bch| bch.iter(|| black_box(cache.window(x, y, 128, 128, 1.0).unwrap())));
    g.finish();
}

fn ds(c: &mut Criterion) {
    let mut g = c.benchmark_group("diamond_square");
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(3));
    let p = DiamondSquareParams::default();
    for n in [10u32, 12] {
        let side = (1usize << n) + 1;
        g.bench_function(format!("{side}/talus"), |bch| {
            bch.iter(|| black_box(diamond_square::generate_side(n, 1.0, &p, 3).unwrap()))
        });
        g.bench_function(format!("{side}/peer_symbios"), |bch| {
            use symbios_ground::TerrainGenerator;
            let gen_ = symbios_ground::DiamondSquare::new(3, 0.5);
            bch.iter(|| {
                let mut hm = symbios_ground::HeightMap::new(side, side, 1.0);
                gen_.generate(&mut hm);
                black_box(hm)
            })
        });
    }
    g.finish();
}

fn voronoi(c: &mut Criterion) {
    let mut g = c.benchmark_group("voronoi_1024");
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(3));
    let p = VoronoiIslandParams::default();
    g.bench_function("island/talus", |bch| {
        bch.iter(|| black_box(voronoi_island::generate(1024, 1024, 1.0, &p, 5).unwrap()))
    });
    g.bench_function("cells_only/talus", |bch| {
        bch.iter(|| black_box(voronoi_island::cells(1024, 1024, 1.0, &p, 5).unwrap()))
    });
    g.bench_function("terracing/peer_symbios", |bch| {
        use symbios_ground::TerrainGenerator;
        let gen_ = symbios_ground::VoronoiTerracing::new(5, 512, 8);
        bch.iter(|| {
            let mut hm = symbios_ground::HeightMap::new(1024, 1024, 1.0);
            gen_.generate(&mut hm);
            black_box(hm)
        })
    });
    g.finish();
}

criterion_group!(benches, lazy, ds, voronoi);
criterion_main!(benches);
