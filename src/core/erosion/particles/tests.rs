//! Unit tests of the particle scheduler and geometry.

use super::*;
use crate::core::erosion::Boundary;

#[test]
fn tiles_cover_the_map_and_same_colours_are_apart() {
    for &(w, h, m, wrap) in
        &[(100usize, 100usize, 16usize, false), (97, 45, 10, true), (30, 30, 40, false), (64, 8, 8, true)]
    {
        let g = TileGrid::new(w, h, m, wrap, wrap);
        let mut seen = vec![0u32; w * h];
        for t in 0..g.len() {
            let r = g.rect(t);
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    seen[y * w + x] += 1;
                    assert_eq!(g.tile_of(x, y), t);
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
        // Two distinct tiles of one colour: every cell of one is at least `m` from the other
        // (measured across the seam when wrapping).
        for a in 0..g.len() {
            for b in 0..g.len() {
                if a == b || g.colour(a) != g.colour(b) {
                    continue;
                }
                let (ra, rb) = (g.rect(a), g.rect(b));
                for y in rb.y0..rb.y1 {
                    for x in rb.x0..rb.x1 {
                        assert!(ra.distance(x, y) > m, "{w}x{h} m{m} tiles {a},{b} at {x},{y}");
                    }
                }
            }
        }
    }
}

#[test]
fn rect_distance_wraps() {
    let g = TileGrid::new(40, 40, 10, true, false);
    let r = g.rect(0); // x 0..10
    assert_eq!(r.distance(5, 5), 0);
    assert_eq!(r.distance(12, 5), 3);
    assert_eq!(r.distance(38, 5), 2); // across the seam
    let g = TileGrid::new(40, 40, 10, false, false);
    assert_eq!(g.rect(0).distance(38, 5), 29);
}

#[test]
fn confine_follows_the_edge_modes() {
    use crate::core::erosion::EdgeMode::*;
    let b = Boundary { left: Drain, right: Wall, top: Wrap, bottom: Wrap };
    let g = Geom::new(10, 8, &b);
    assert!(matches!(g.confine(-0.5, 3.0), Confined::Exit));
    match g.confine(9.5, 3.0) {
        Confined::Inside { x, flip_x, .. } => assert!((x - 8.5).abs() < 1e-6 && flip_x),
        _ => panic!(),
    }
    match g.confine(4.0, -0.25) {
        Confined::Inside { y, flip_y, .. } => assert!((y - 7.75).abs() < 1e-6 && !flip_y),
        _ => panic!(),
    }
    match g.confine(4.0, 8.0) {
        Confined::Inside { y, .. } => assert_eq!(y, 0.0),
        _ => panic!(),
    }
    // A lone wrap is a wall.
    let g = Geom::new(10, 8, &Boundary { left: Wrap, right: Drain, top: Drain, bottom: Drain });
    assert!(matches!(g.confine(-0.5, 3.0), Confined::Inside { flip_x: true, .. }));
    // Bilinear cells across the wrap seam use the first column.
    let g = Geom::new(10, 8, &Boundary::all(Wrap));
    let (i, u, _) = g.cell(9.5, 0.0);
    assert_eq!((i[0], i[1]), (9, 0));
    assert!((u - 0.5).abs() < 1e-6);
    let mut rng = SplitMix64::new(3);
    for _ in 0..100 {
        let (a, b) = random_unit(&mut rng);
        assert!(((a * a + b * b) - 1.0).abs() < 1e-5);
    }
}
