use std::sync::atomic::AtomicBool;

use super::*;
use crate::backend::Backend;
use crate::core::erosion::thermal::ThermalParams;
use crate::core::erosion::{Boundary, ModelParams};
use crate::core::rng::{hash2, signed_f32};

fn hill(w: usize, h: usize, seed: u64) -> Heightmap {
    Heightmap::from_fn(w, h, 2.0, |x, y| {
        let (dx, dy) = (x as f32 - w as f32 / 2.0, y as f32 - h as f32 / 2.0);
        40.0 - 0.02 * (dx * dx + dy * dy) + signed_f32(hash2(x as i64, y as i64, seed))
    })
    .unwrap()
}

fn thermal() -> Recipe {
    Recipe {
        model: ModelParams::Thermal(ThermalParams { iterations: 15, talus_angle: 20.0, ..Default::default() }),
        boundary: Boundary::default(),
        seed: 3,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: None,
        steer: None,
    }
}

fn run(recipe: &Recipe, input: &Heightmap) -> Heightmap {
    recipe::run_to_end(recipe, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap()
}

#[test]
fn the_fold_is_base_plus_sculpt_plus_weighted_erosion() {
    let (w, h) = (90, 70);
    let base = hill(w, h, 1);
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    assert_eq!(s.compose().data, base.data, "a base alone folds to itself, bit for bit");
    let i = s.top_sculpt();
    let mut raised = base.clone();
    for v in raised.data.iter_mut().take(300) {
        *v += 1.5;
    }
    s.add_edit(i, &base, &raised);
    let input = s.compose();
    let result = run(&thermal(), &input);
    let id = s.push_erosion(thermal(), &input, &result, "Thermal erosion");
    s.set_strength(id, 0.5);
    let e = s.layer(id).unwrap().erosion().unwrap();
    assert!(!e.stale);
    let mut mask = e.mask.clone();
    mask.set(45, 35, 0.0);
    s.layer_mut(id).unwrap().erosion_mut().unwrap().mask = mask;
    let folded = s.compose();
    let sculpt = match &s.layers()[0].kind {
        LayerKind::Sculpt(d) => d.to_dense(),
        LayerKind::Erosion(_) => unreachable!(),
    };
    for (k, s) in sculpt.iter().enumerate() {
        let (x, y) = (k % w, k / w);
        let m = if (x, y) == (45, 35) { 0.0 } else { 1.0 };
        let d = result.data[k] - input.data[k];
        let want = base.data[k] + s + 0.5 * m * d;
        assert_eq!(folded.data[k].to_bits(), want.to_bits(), "node ({x}, {y})");
    }
    // Hidden, the erosion adds nothing.
    s.set_visible(id, false);
    assert_eq!(s.compose().data, input.data);
}

#[test]
fn a_new_base_keeps_sculpt_bit_exact_and_makes_erosion_stale() {
    let base = hill(80, 80, 1);
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    let i = s.top_sculpt();
    let mut edited = base.clone();
    edited.data[4000] += 7.25;
    edited.data[10] -= 1.0;
    s.add_edit(i, &base, &edited);
    let sculpt_before = match &s.layers()[i].kind {
        LayerKind::Sculpt(d) => d.to_dense(),
        LayerKind::Erosion(_) => unreachable!(),
    };
    let input = s.compose();
    let id = s.push_erosion(thermal(), &input, &run(&thermal(), &input), "Thermal erosion");
    let old_delta = s.layer(id).unwrap().erosion().unwrap().delta.to_dense();

    s.set_base(&hill(80, 80, 2), BaseSource::Heights);
    let sculpt_after = match &s.layers()[i].kind {
        LayerKind::Sculpt(d) => d.to_dense(),
        LayerKind::Erosion(_) => unreachable!(),
    };
    assert_eq!(
        sculpt_after.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        sculpt_before.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let e = s.layer(id).unwrap().erosion().unwrap();
    assert!(e.stale, "the erosion's input changed");
    assert_eq!(e.delta.to_dense(), old_delta, "a stale layer keeps its old delta until it runs again");
}

#[test]
fn re_simulation_is_deterministic_and_refuses_an_outdated_input() {
    let mut s = LayerStack::new(&hill(70, 60, 1), BaseSource::Heights);
    let input = s.compose();
    let id = s.push_erosion(thermal(), &input, &run(&thermal(), &input), "Thermal erosion");
    s.set_base(&hill(70, 60, 5), BaseSource::Heights);
    let job = s.stale_job().expect("stale");
    assert_eq!(job.id, id);
    let a = run(&job.recipe, &job.input);
    let b = run(&job.recipe, &job.input);
    assert_eq!(
        a.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        b.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        "the same input and recipe give the same bits"
    );
    // The base moves on while the job runs: its result is refused, the layer stays stale.
    let mut moved = s.clone();
    moved.set_base(&hill(70, 60, 6), BaseSource::Heights);
    assert!(!moved.set_result(job.id, job.input_hash, &job.input, &a));
    assert!(moved.stale_job().is_some());
    assert!(s.set_result(job.id, job.input_hash, &job.input, &a));
    assert!(s.stale_job().is_none());
    // Re-run on the new input, the layer equals a fresh run there.
    let fresh = run(&thermal(), &job.input);
    let folded = s.compose();
    let max = folded.data.iter().zip(&fresh.data).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(max <= 1e-4, "the fold after a re-run differs from a fresh run by {max} m");
}

#[test]
fn layer_edits_mark_only_what_is_above() {
    let base = hill(64, 64, 1);
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    let input = s.compose();
    let a = s.push_erosion(thermal(), &input, &run(&thermal(), &input), "Erosion");
    let input = s.compose();
    let b = s.push_erosion(thermal(), &input, &run(&thermal(), &input), "Erosion");
    assert_eq!(s.layer(b).unwrap().name, "Erosion 2");
    s.set_strength(b, 5.0);
    assert_eq!(s.layer(b).unwrap().erosion().unwrap().strength, 2.0, "clamped to the range");
    assert!(!s.layer(a).unwrap().erosion().unwrap().stale, "a change above does not touch below");
    s.set_strength(a, 0.0);
    assert!(s.layer(b).unwrap().erosion().unwrap().stale);
    assert!(s.rename(a, "  Rain  ") && s.layer(a).unwrap().name == "Rain");
    assert!(!s.rename(a, "  "));
    assert!(s.move_by_one(a, true));
    assert_eq!(s.layers()[1].id, a);
    assert!(!s.move_by_one(a, true), "already on top");
    assert!(s.delete(a));
    assert_eq!(s.layers().len(), 1);
    s.verify_stale();
    assert!(s.layer(b).unwrap().erosion().unwrap().stale, "b ran on the base with a in it");
    let job = s.stale_job().unwrap();
    let result = run(&job.recipe, &job.input);
    assert!(s.set_result(b, job.input_hash, &job.input, &result));
    s.verify_stale();
    assert!(!s.layer(b).unwrap().erosion().unwrap().stale, "re-run on its input, the hash check agrees");
}

/// A layer steered by its painted mask re-runs with rain only where the mask is: nothing changes
/// away from there (thermal moves material only from masked nodes, one node per iteration at
/// most), the mask no longer blends, and a generated (height) mask steers a run the same way.
#[test]
fn a_layer_steered_by_its_mask_erodes_only_from_the_mask() {
    let (w, h) = (80, 60);
    let base = hill(w, h, 4);
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    let r = thermal();
    let full = run(&r, &base);
    let id = s.push_erosion(r.clone(), &base, &full, "Thermal erosion");
    // Mask: 1 for x < 25, 0 elsewhere.
    if let Some(e) = s.layer_mut(id).and_then(Layer::erosion_mut) {
        for y in 0..h {
            for x in 25..w {
                e.mask.set(x, y, 0.0);
            }
        }
    }
    assert!(s.set_steer_by_mask(id, true, false));
    let job = s.stale_job().expect("steering makes the layer run again");
    assert!(job.mask.is_some(), "the re-run gets the painted mask");
    s.rebuild(&AtomicBool::new(false), |_| {}).unwrap();
    let folded = s.compose();
    let reach = 25 + 15 + 1; // thermal moves material one node per iteration at most
    let mut changed_inside = 0;
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if x >= reach {
                assert_eq!(folded.data[i], base.data[i], "changed at ({x}, {y}), away from the mask");
            } else if folded.data[i] != base.data[i] {
                changed_inside += 1;
            }
        }
    }
    assert!(changed_inside > 100, "the steered run eroded where the mask is ({changed_inside} nodes)");
    // Between the mask's edge and the reach material arrived from the masked side: the mask does
    // not blend it away.
    assert!((25..reach).any(|x| (0..h).any(|y| folded.data[y * w + x] != base.data[y * w + x])));

    // A height mask in the recipe steers the same way: only nodes above 35 m give up material.
    let steered = Recipe {
        steer: Some(recipe::SteerSpec { source: recipe::SteerSource::Height { lo: 35.0, hi: 35.5 }, sink: false }),
        ..r
    };
    let out = run(&steered, &base);
    assert!(out.data.iter().zip(&base.data).any(|(a, b)| a != b));
    for (i, (a, b)) in out.data.iter().zip(&base.data).enumerate() {
        if a < b {
            assert!(*b > 34.0, "node {i} at {b} m lost material below the mask");
        }
    }
}

/// The stack's timelines stay within their shared budget: adding one past it drops the oldest
/// (bottom first), never the newest, and the layers keep their results; an undo snapshot that
/// alone holds a timeline counts it.
#[test]
fn timelines_share_one_budget_and_the_oldest_go_first() {
    use crate::editor::timeline::Timeline;
    let base = hill(64, 48, 5);
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    let mut ids = Vec::new();
    let mut input = base.clone();
    for _ in 0..3 {
        let result = run(&thermal(), &input);
        let id = s.push_erosion(thermal(), &input, &result, "Thermal erosion");
        let mut t = Timeline::new(&input, 15, usize::MAX);
        t.offer(&result, 15, Default::default(), true);
        s.set_timeline(id, t);
        ids.push(id);
        input = result;
    }
    let bytes = |s: &LayerStack, id| s.layer(id).unwrap().erosion().unwrap().timeline_bytes();
    let each = bytes(&s, ids[0]);
    assert!(each > 0);
    let first_two = bytes(&s, ids[0]) + bytes(&s, ids[1]);
    let folded = s.compose();
    let snapshot = s.clone();
    s.cap_timelines(ids[2], 2 * each + each / 2);
    let has = |s: &LayerStack, id| s.timeline_of(id).is_some();
    assert!(!has(&s, ids[0]) && has(&s, ids[1]) && has(&s, ids[2]), "the oldest went first");
    assert_eq!(s.compose().data, folded.data, "results stay");
    s.cap_timelines(ids[2], 0);
    assert!(!has(&s, ids[1]) && has(&s, ids[2]), "never the newest");
    // The snapshot holds two timelines the present no longer has: an undo step counts them.
    assert_eq!(snapshot.bytes_not_shared_with(&s), first_two);
    assert_eq!(s.bytes_not_shared_with(&s.clone()), 0);
}

/// A window of the stack (a build's loupe cuts the project this way) folds to the project's fold
/// over the window, bit for bit, with the erosion layer's mask and strength; a window that leaves
/// the map or is empty is refused.
#[test]
fn a_cropped_stack_folds_to_the_window_of_the_fold() {
    let (w, h) = (90, 70);
    let base = hill(w, h, 4);
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    let i = s.top_sculpt();
    let mut raised = base.clone();
    for v in raised.data.iter_mut().skip(2000).take(900) {
        *v += 2.5;
    }
    s.add_edit(i, &base, &raised);
    let input = s.compose();
    let id = s.push_erosion(thermal(), &input, &run(&thermal(), &input), "Thermal erosion");
    s.set_strength(id, 0.7);
    let mut mask = s.layer(id).unwrap().erosion().unwrap().mask.clone();
    mask.set(40, 30, 0.25);
    s.layer_mut(id).unwrap().erosion_mut().unwrap().mask = mask;
    let fold = s.compose();
    let (x0, y0, cw, ch) = (17, 9, 50, 41);
    let c = s.crop(x0, y0, cw, ch).expect("the window is on the map");
    assert_eq!((c.width(), c.height(), c.layers().len()), (cw, ch, s.layers().len()));
    let cf = c.compose();
    for y in 0..ch {
        for x in 0..cw {
            assert_eq!(cf.get(x, y).to_bits(), fold.get(x0 + x, y0 + y).to_bits(), "node ({x}, {y})");
        }
    }
    assert!(s.crop(60, 0, 31, 10).is_none() && s.crop(0, 0, 0, 10).is_none());
}
