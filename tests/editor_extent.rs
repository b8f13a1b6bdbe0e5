//! Worlds of any extent in the real window (issue #35): after Generate and after Open, a 1 km, an
//! 8 km and a 32 km world are framed whole, so strokes at the map's four corners land in view and
//! paint there. A stroke a script asks for outside the view fails the script ("… is not all in
//! the view"), and the saved heights show where each stroke went.

#![cfg(feature = "editor")]

mod common;

use std::path::Path;

use talus::core::Heightmap;
use talus::core::io::bhef;

/// `(name, side in nodes, cell size m)`: 1 km, 8 km and 32 km worlds.
const WORLDS: [(&str, usize, f32); 3] = [("1km", 257, 4.0), ("8km", 513, 16.0), ("32km", 513, 64.0)];

fn load(p: &Path) -> Heightmap {
    bhef::load(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Short strokes at the four corners of an `n`-node map, 8 nodes in from each edge.
fn corner_strokes(n: usize) -> Vec<[(f32, f32); 2]> {
    let (a, b) = (8.0, (n - 9) as f32);
    [(a, a, 1.0, 1.0), (b, a, -1.0, 1.0), (a, b, 1.0, -1.0), (b, b, -1.0, -1.0)]
        .iter()
        .map(|&(x, y, dx, dy)| [(x, y), (x + 4.0 * dx, y + 4.0 * dy)])
        .collect()
}

/// Script lines: save `before`, paint the four corners with a 5-cell brush, save `after`.
fn paint_corners(d: &Path, tag: &str, n: usize, cell: f32) -> String {
    let mut s = format!("    Save(\"{}\"),\n", d.join(format!("{tag}-before.bhef")).display());
    for [p, q] in corner_strokes(n) {
        s += &format!(
            "    Stroke(tool: Raise, radius: {r}, strength: {k}, points: [({:.1}, {:.1}), ({:.1}, {:.1})], seconds: 0.3),\n",
            p.0,
            p.1,
            q.0,
            q.1,
            r = 5.0 * cell,
            // About a cell high in 0.3 s: a low bump hides nothing behind it (see the reach in
            // `assert_corners_painted`).
            k = 4.0 * cell,
        );
    }
    s + &format!("    Save(\"{}\"),\n", d.join(format!("{tag}-after.bhef")).display())
}

/// Every corner was raised near its stroke, and nothing changed far from the four of them.
fn assert_corners_painted(d: &Path, tag: &str, n: usize) {
    let (before, after) = (load(&d.join(format!("{tag}-before.bhef"))), load(&d.join(format!("{tag}-after.bhef"))));
    assert_eq!((after.width, after.height), (n, n), "{tag}");
    let strokes = corner_strokes(n);
    let dist = |x: f32, y: f32, s: &[(f32, f32); 2]| {
        let (a, b) = (s[0], s[1]);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let t = (((x - a.0) * dx + (y - a.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
        ((x - a.0 - t * dx).powi(2) + (y - a.1 - t * dy).powi(2)).sqrt()
    };
    // The brush's 5-node radius plus 2 nodes for the path's round trip through the window (a
    // pixel of a 32 km world seen whole spans about a node). Measured: every stroke's farthest
    // changed node is 4.9 nodes from its path, in every world, after Generate and after Open.
    // The strokes are kept low (about a cell's height, see `paint_corners`): after Open they
    // paint over the corners the project had already raised, and a tall bump there hides the
    // start of the path from the camera, so the pointer aimed at a hidden node paints the bump's
    // visible face, nodes nearer the camera (what a user sees under the cursor is what is painted).
    // With strokes 10× as strong, bumps of 12 cells' height moved the first dabs up to 17 nodes.
    let reach = 5.0 + 2.0;
    let mut raised = [0.0f64; 4];
    let mut stray = Vec::new();
    for y in 0..n {
        for x in 0..n {
            let dh = after.get(x, y) - before.get(x, y);
            if dh == 0.0 {
                continue;
            }
            let (k, dk) = strokes
                .iter()
                .enumerate()
                .map(|(k, s)| (k, dist(x as f32, y as f32, s)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            if dk <= reach {
                raised[k] += dh.max(0.0) as f64;
            } else {
                stray.push((x, y, dh, dk));
            }
        }
    }
    assert!(
        stray.is_empty(),
        "{tag}: {} nodes changed far from every corner stroke, e.g. (x, y, dh, nodes from the nearest) {:?}",
        stray.len(),
        &stray[..stray.len().min(8)]
    );
    for (k, r) in raised.iter().enumerate() {
        assert!(*r > 1.0, "{tag}: corner stroke {k} ({:?}) raised only {r} m·nodes: {raised:?}", strokes[k]);
    }
}

#[test]
fn strokes_land_at_the_four_corners_of_1_8_and_32_km_worlds_after_generate_and_open() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut script = format!("[\n    {}", common::xvfb::light_look());
    for (name, n, cell) in WORLDS {
        script += &format!(
            "    Generate((width: {n}, height: {n}, cell_size: {cell}, seed: 23, falloff: Some((depth: 20.0)), \
             sea_level: Some((level: 0.0, coverage: Some(0.4))))),\n"
        );
        script += &paint_corners(d, &format!("gen-{name}"), n, cell);
        script += &format!("    Save(\"{}\"),\n", d.join(format!("{name}.talus")).display());
    }
    // Open each world after one of another extent (the last one generated is 32 km).
    for (name, n, cell) in [WORLDS[0], WORLDS[2], WORLDS[1]] {
        script += &format!("    Open(\"{}\"),\n", d.join(format!("{name}.talus")).display());
        script += &paint_corners(d, &format!("open-{name}"), n, cell);
    }
    script += "    Quit,\n]\n";
    let (ok, log) = common::xvfb::run_editor_script(env!("CARGO_BIN_EXE_talus"), d, "extent.ron", &script);
    assert!(ok, "editor script failed:\n{log}");
    for (name, n, _) in WORLDS {
        assert_corners_painted(d, &format!("gen-{name}"), n);
        assert_corners_painted(d, &format!("open-{name}"), n);
    }
}
