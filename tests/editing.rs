//! The editing loop without a window: cursor ray → terrain hit → brush stroke → undo/redo, on a
//! generated map (SPEC §3; seeds 003 and 004). World frame: node (x, y) sits at world
//! (x·cell_size, height, y·cell_size), y-up.

use talus::core::Heightmap;
use talus::core::brush::{BrushKind, BrushParams, DirtyRect, Stroke, dab_bounds};
use talus::core::generate::{GenerateParams, generate};
use talus::core::raycast::{Ray, raycast};
use talus::core::undo::UndoStack;

mod common;
use common::grid::bits;

fn map() -> Heightmap {
    let mut p = GenerateParams { width: 97, height: 81, seed: 42, ..GenerateParams::default() };
    p.cell_size = 2.0;
    generate(&p).unwrap()
}

/// A camera hovering south-west of the map, looking at a ground point: the ray of the "cursor".
fn cursor_ray(hm: &Heightmap, ground: [f32; 2]) -> Ray {
    cursor_ray_from([-40.0, 260.0, -30.0], hm, ground)
}

fn cursor_ray_from(eye: [f32; 3], hm: &Heightmap, ground: [f32; 2]) -> Ray {
    let target = [ground[0] * hm.cell_size, hm.sample(ground[0], ground[1]), ground[1] * hm.cell_size];
    Ray::through(eye, target)
}

/// Drags the brush along `path` (ground points, grid units) at `hz`, recording on `undo`.
/// Returns the union of dirty rectangles and the hits.
fn drag(
    hm: &mut Heightmap,
    undo: &mut UndoStack,
    p: &BrushParams,
    path: &[[f32; 2]],
    hz: f64,
    label: &str,
) -> (DirtyRect, Vec<[f32; 2]>) {
    undo.begin(hm, label);
    let mut stroke = Stroke::new(p.clone()).unwrap();
    let mut rect = DirtyRect::EMPTY;
    let mut hits = Vec::new();
    for (i, g) in path.iter().enumerate() {
        let ray = cursor_ray(hm, *g);
        let Some(hit) = raycast(hm, &ray, f32::INFINITY) else { continue };
        hits.push(hit.grid);
        rect = rect.union(stroke.add_point_with(hm, hit.grid, i as f64 / hz, |m, r| undo.touch(m, r)));
    }
    rect = rect.union(stroke.finish_with(hm, |m, r| undo.touch(m, r)));
    undo.commit(hm);
    (rect, hits)
}

#[test]
fn cursor_rays_land_on_the_generated_surface() {
    let hm = map();
    for &g in &[[10.0f32, 10.0], [48.0, 40.0], [90.5, 70.25], [0.0, 80.0]] {
        let ray = cursor_ray(&hm, g);
        let hit = raycast(&hm, &ray, f32::INFINITY).expect("the camera sees the map");
        let s = hm.sample(hit.grid[0], hit.grid[1]);
        assert!((s - hit.world[1]).abs() < 1e-3, "hit off the surface");
        assert!((hit.grid[0] * hm.cell_size - hit.world[0]).abs() < 1e-3);
        // Either the aimed point, or something in front of it (a hill occluding it).
        let d = ((hit.grid[0] - g[0]).powi(2) + (hit.grid[1] - g[1]).powi(2)).sqrt();
        assert!(d < 1e-3 || hit.t < 1.0, "{g:?} → {hit:?}");
        // The hover highlight: the brush disc's rectangle around the hit.
        let p = BrushParams::default();
        let r = dab_bounds(&hm, hit.grid, &p);
        assert!(!r.is_empty());
        let reach = p.radius / hm.cell_size;
        assert!(r.x0 as f32 >= hit.grid[0] - reach - 1.0 && (r.x1 as f32) <= hit.grid[0] + reach + 2.0);
    }
    // Looking away from the terrain hits nothing.
    let up = Ray { origin: [50.0, 300.0, 50.0], dir: [0.2, 1.0, 0.1] };
    assert!(raycast(&hm, &up, f32::INFINITY).is_none());
}

#[test]
fn raise_and_lower_strokes_undo_and_redo_exactly() {
    let mut hm = map();
    let original = bits(&hm);
    let mut undo = UndoStack::new(32, 64 << 20);
    let path: Vec<[f32; 2]> = (0..=60).map(|i| [20.0 + i as f32, 30.0 + 0.3 * i as f32]).collect();
    let raise = BrushParams { radius: 10.0, strength: 5.0, ..Default::default() };
    let (r1, hits) = drag(&mut hm, &mut undo, &raise, &path, 60.0, "raise");
    assert!(hits.len() > 50);
    let after_raise = bits(&hm);
    // Every change lies in the returned rectangle; the sum of heights went up.
    let orig =
        Heightmap::from_data(hm.width, hm.height, hm.cell_size, original.iter().map(|&b| f32::from_bits(b)).collect())
            .unwrap();
    for y in 0..hm.height {
        for x in 0..hm.width {
            if hm.get(x, y).to_bits() != orig.get(x, y).to_bits() {
                assert!(r1.contains(x, y), "node {x},{y} changed outside {r1:?}");
            }
        }
    }
    assert!(hm.sum() > orig.sum() + 10.0);
    // The edit stores only the tiles the stroke crossed, not the whole map.
    let tiles = undo.last_edit_tiles().unwrap();
    let all_tiles = hm.width.div_ceil(32) * hm.height.div_ceil(32);
    assert!(tiles >= 2 && tiles < all_tiles, "{tiles} of {all_tiles}");

    // Right button: lower along the same path.
    let lower = BrushParams { kind: BrushKind::Lower, ..raise.clone() };
    drag(&mut hm, &mut undo, &lower, &path, 60.0, "lower");
    let after_lower = bits(&hm);
    assert_ne!(after_lower, after_raise);

    assert_eq!(undo.undo_label(), Some("lower"));
    undo.undo(&mut hm).unwrap();
    assert_eq!(bits(&hm), after_raise);
    undo.undo(&mut hm).unwrap();
    assert_eq!(bits(&hm), original);
    undo.redo(&mut hm).unwrap();
    assert_eq!(bits(&hm), after_raise);
    undo.redo(&mut hm).unwrap();
    assert_eq!(bits(&hm), after_lower);
    assert!(undo.bytes_used() <= 64 << 20);
}

#[test]
fn smooth_and_flatten_then_regenerate_and_walk_back() {
    let mut hm = map();
    let s0 = bits(&hm);
    let mut undo = UndoStack::new(16, 32 << 20);
    let path: Vec<[f32; 2]> = (0..=40).map(|i| [60.0, 10.0 + 1.5 * i as f32]).collect();
    let smooth = BrushParams { kind: BrushKind::Smooth, radius: 12.0, strength: 8.0, ..Default::default() };
    drag(&mut hm, &mut undo, &smooth, &path, 30.0, "smooth");
    let s1 = bits(&hm);
    let flat_path: Vec<[f32; 2]> = (0..=30).map(|i| [15.0 + i as f32, 60.0]).collect();
    let flatten = BrushParams { kind: BrushKind::Flatten, radius: 8.0, strength: 30.0, ..Default::default() };
    drag(&mut hm, &mut undo, &flatten, &flat_path, 30.0, "flatten");
    let s2 = bits(&hm);
    assert!(s0 != s1 && s1 != s2);
    // Flattened ground is level around the middle of the path.
    let mid = [hm.get(28, 60), hm.get(30, 60), hm.get(32, 60)];
    assert!((mid[0] - mid[2]).abs() < 0.5, "{mid:?}");

    // "Generate" a different map of a different size, then paint on it.
    let before = hm.clone();
    let fresh = generate(&GenerateParams { width: 65, height: 65, seed: 7, ..GenerateParams::default() }).unwrap();
    assert!(undo.record_whole(&before, &fresh, "generate"));
    hm = fresh.clone();
    let raise = BrushParams { radius: 6.0, ..Default::default() };
    let path: Vec<[f32; 2]> = (0..=20).map(|i| [10.0 + i as f32, 20.0]).collect();
    drag(&mut hm, &mut undo, &raise, &path, 20.0, "raise");
    let s4 = bits(&hm);

    assert_eq!(undo.undo_labels().collect::<Vec<_>>(), ["raise", "generate", "flatten", "smooth"]);
    undo.undo(&mut hm).unwrap();
    assert_eq!(bits(&hm), bits(&fresh));
    let r = undo.undo(&mut hm).unwrap();
    assert_eq!((hm.width, hm.height, hm.cell_size), (97, 81, 2.0));
    assert_eq!(r, DirtyRect::full(&hm));
    assert_eq!(bits(&hm), s2);
    undo.undo(&mut hm).unwrap();
    assert_eq!(bits(&hm), s1);
    undo.undo(&mut hm).unwrap();
    assert_eq!(bits(&hm), s0);
    for _ in 0..4 {
        undo.redo(&mut hm).unwrap();
    }
    assert_eq!(bits(&hm), s4);
    assert_eq!((hm.width, hm.height), (65, 65));
}

#[test]
fn the_same_drag_at_different_frame_rates_gives_nearly_the_same_map() {
    // The cursor sweeps a straight line across the screen in one second, seen from a camera high
    // above the path (so no hill hides part of it, which the 10 Hz run could skip over); the hits
    // are taken on the untouched map (as against a mesh that lags a frame), so both runs see the
    // same path.
    let base = map();
    let p = BrushParams { radius: 16.0, strength: 20.0, ..Default::default() };
    let run = |hz: f64| {
        let n = hz as usize;
        let mut hm = base.clone();
        let mut undo = UndoStack::new(32, 64 << 20);
        let path: Vec<[f32; 2]> = (0..=n).map(|i| [20.0 + 50.0 * i as f32 / n as f32, 40.0]).collect();
        let eye = [45.0 * base.cell_size, 2000.0, 40.0 * base.cell_size];
        let hits: Vec<[f32; 2]> = path
            .iter()
            .filter_map(|g| raycast(&base, &cursor_ray_from(eye, &base, *g), f32::INFINITY))
            .map(|h| h.grid)
            .collect();
        assert_eq!(hits.len(), path.len());
        for (h, g) in hits.iter().zip(&path) {
            assert!((h[0] - g[0]).abs() < 1e-3 && (h[1] - g[1]).abs() < 1e-3, "{g:?} hidden: hit {h:?}");
        }
        undo.begin(&hm, "drag");
        let mut s = Stroke::new(p.clone()).unwrap();
        for (i, h) in hits.iter().enumerate() {
            s.add_point_with(&mut hm, *h, i as f64 / hz, |m, r| undo.touch(m, r));
        }
        s.finish_with(&mut hm, |m, r| undo.touch(m, r));
        undo.commit(&hm);
        (hm, undo)
    };
    let (a, mut ua) = run(10.0);
    let (b, _) = run(120.0);
    let change: f32 = a.data.iter().zip(&base.data).map(|(x, y)| x - y).fold(0.0, f32::max);
    let diff: f32 = a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
    assert!(change > 1.0);
    assert!(diff < 0.01 * change, "diff {diff} vs change {change}");
    let mut a2 = a.clone();
    ua.undo(&mut a2).unwrap();
    assert_eq!(bits(&a2), bits(&base));
}
