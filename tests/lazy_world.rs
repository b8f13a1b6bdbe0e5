//! Integration tests of the lazy "infinite" diamond-square world (SPEC §1, seed 001) through the
//! public API: windows agree wherever they overlap, a moved window or a cleared cache reproduces
//! the landscape, the query order never matters, and the results do not depend on the number of
//! rayon threads.

use talus::core::generate::GenError;
use talus::core::generate::lazy_world::{self, LazyWorld, LazyWorldParams};

fn world(k: u32, seed: u64) -> LazyWorld {
    let p = LazyWorldParams { side_log2: k, roughness: 1.0, height_scale: 300.0, origin: [0, 0] };
    LazyWorld::new(&p, seed).unwrap()
}

#[test]
fn overlapping_windows_agree_node_for_node() {
    let mut w = world(24, 42);
    let (ox, oy) = (8_000_000i64, 123_457i64);
    let a = w.window(ox, oy, 96, 80, 1.0).unwrap();
    // Offsets that are and are not aligned to powers of two.
    for (dx, dy) in [(1i64, 0i64), (17, 33), (64, 64), (-31, 5), (95, 79)] {
        let b = w.window(ox + dx, oy + dy, 96, 80, 1.0).unwrap();
        for y in 0..80i64 {
            for x in 0..96i64 {
                let (ax, ay) = (x + dx, y + dy);
                if (0..96).contains(&ax) && (0..80).contains(&ay) {
                    assert_eq!(
                        a.get(ax as usize, ay as usize),
                        b.get(x as usize, y as usize),
                        "offset {dx},{dy} node {x},{y}"
                    );
                }
            }
        }
    }
}

#[test]
fn moved_window_and_cleared_cache_reproduce() {
    let mut w = world(20, 7);
    let first = w.window(500_000, 700_000, 128, 128, 2.0).unwrap();
    // Wander far away, then clear everything and come back.
    w.window(10, 10, 64, 64, 2.0).unwrap();
    w.window(1_000_000, 3, 64, 64, 2.0).unwrap();
    assert_eq!(w.window(500_000, 700_000, 128, 128, 2.0).unwrap(), first);
    w.clear_cache();
    assert_eq!(w.cache_len(), 0);
    assert_eq!(w.window(500_000, 700_000, 128, 128, 2.0).unwrap(), first);
    // A brand-new world object with the same seed too, and the one-shot generator.
    let mut other = world(20, 7);
    assert_eq!(other.window(500_000, 700_000, 128, 128, 2.0).unwrap(), first);
    let p = LazyWorldParams { side_log2: 20, roughness: 1.0, height_scale: 300.0, origin: [500_000, 700_000] };
    assert_eq!(lazy_world::generate(128, 128, 2.0, &p, 7).unwrap(), first);
    // A different seed is a different landscape.
    assert_ne!(world(20, 8).window(500_000, 700_000, 128, 128, 2.0).unwrap().data, first.data);
}

#[test]
fn query_order_is_irrelevant() {
    let (x0, y0, n) = (1_234_567i64, 7_654_321i64, 24i64);
    let mut reference = world(24, 3);
    let win = reference.window(x0, y0, n as usize, n as usize, 1.0).unwrap();
    // Single queries in a scrambled order on a fresh world.
    let mut w = world(24, 3);
    let mut order: Vec<i64> = (0..n * n).collect();
    let mut state = 0x1234_5678u64;
    for i in (1..order.len()).rev() {
        state = talus::core::rng::mix64(state);
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    for k in order {
        let (x, y) = (k % n, k / n);
        assert_eq!(w.height(x0 + x, y0 + y), win.get(x as usize, y as usize));
    }
    // Interleaving single queries and windows in another world gives the same again.
    let mut z = world(24, 3);
    assert_eq!(z.height(x0 + 5, y0 + 9), win.get(5, 9));
    let part = z.window(x0 + 8, y0 + 8, 8, 8, 1.0).unwrap();
    assert_eq!(part.get(0, 0), win.get(8, 8));
    assert_eq!(z.window(x0, y0, n as usize, n as usize, 1.0).unwrap(), win);
}

#[test]
fn outside_is_zero_and_edges_are_consistent() {
    let mut w = world(10, 11);
    let s = w.side();
    let win = w.window(-4, s - 4, 12, 12, 1.0).unwrap();
    let mut fresh = world(10, 11);
    for y in 0..12i64 {
        for x in 0..12i64 {
            let (wx, wy) = (x - 4, s - 4 + y);
            let v = win.get(x as usize, y as usize);
            if wx < 0 || wy > s {
                assert_eq!(v, 0.0);
            }
            assert_eq!(v, fresh.height(wx, wy));
        }
    }
    assert!(win.get(4, 4) != 0.0 || win.get(5, 5) != 0.0);
}

#[test]
fn same_bits_with_one_and_two_threads() {
    let run = || {
        let mut w = world(24, 99);
        let a = w.window(3_000_000, 4_000_000, 64, 64, 1.0).unwrap();
        let b = lazy_world::generate(
            64,
            64,
            1.0,
            &LazyWorldParams { side_log2: 16, roughness: 2.0, height_scale: 50.0, origin: [-10, 1000] },
            99,
        )
        .unwrap();
        (a, b)
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(run);
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(run);
    assert_eq!(one, two);
}

#[test]
fn invalid_input_is_an_error_not_a_panic() {
    let bad = LazyWorldParams { side_log2: 30, ..Default::default() };
    assert!(matches!(LazyWorld::new(&bad, 0), Err(GenError::BadParam { .. })));
    let nan = LazyWorldParams { roughness: f32::NAN, ..Default::default() };
    assert!(lazy_world::generate(8, 8, 1.0, &nan, 0).is_err());
    let mut w = world(24, 0);
    assert!(w.window(0, 0, 0, 0, 1.0).is_err());
    assert!(w.window(i64::MAX, i64::MAX, 4, 4, 1.0).unwrap().data.iter().all(|&h| h == 0.0));
    assert_eq!(w.height(i64::MIN, i64::MIN), 0.0);
}
