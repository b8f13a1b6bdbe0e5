use super::*;
use crate::core::brush::BrushKind;
use crate::core::rng::{hash2, signed_f32};

fn noisy(w: usize, h: usize) -> Heightmap {
    Heightmap::from_fn(w, h, 2.0, |x, y| 5.0 * signed_f32(hash2(x as i64, y as i64, 9))).unwrap()
}

fn bits(hm: &Heightmap) -> Vec<u32> {
    hm.data.iter().map(|v| v.to_bits()).collect()
}

fn recipe() -> Recipe {
    Recipe {
        model: crate::core::erosion::ModelParams::Thermal(Default::default()),
        boundary: Default::default(),
        seed: 1,
        backend: crate::backend::Backend::Cpu,
        hardness: None,
        sea_level: None,
        steer: None,
    }
}

#[test]
fn a_stroke_is_one_undo_step_and_undo_is_bit_exact() {
    let mut doc = Document::new(noisy(200, 150));
    let before = bits(doc.map());
    let params = BrushParams { kind: BrushKind::Raise, radius: 20.0, strength: 3.0, ..Default::default() };
    doc.begin_stroke(params, "Raise").unwrap();
    for i in 0..30 {
        doc.stroke_to([20.0 + 3.0 * i as f32, 40.0 + i as f32], i as f64 * 0.02);
    }
    assert!(matches!(doc.end_stroke(), Changed::Rect(_) | Changed::None));
    let after = bits(doc.map());
    assert_ne!(before, after);
    assert!(doc.is_unsaved());
    assert_eq!(doc.history().undo_len(), 1);
    assert!(matches!(doc.undo(), Changed::Rect(_)));
    assert_eq!(bits(doc.map()), before);
    assert!(matches!(doc.redo(), Changed::Rect(_)));
    assert_eq!(bits(doc.map()), after);
}

#[test]
fn replace_with_a_new_size_undoes_to_the_old_map() {
    let mut doc = Document::new(noisy(65, 65));
    let before = bits(doc.map());
    assert_eq!(doc.set_base(noisy(129, 33), BaseSource::Heights, "Generate"), Changed::Whole);
    assert_eq!((doc.map().width, doc.map().height), (129, 33));
    assert_eq!(doc.undo(), Changed::Whole);
    assert_eq!(bits(doc.map()), before);
    assert_eq!(doc.map().width, 65);
}

#[test]
fn a_simulation_result_is_one_step_against_its_base() {
    let mut doc = Document::new(noisy(100, 100));
    let base = doc.map().clone();
    let mut step = base.clone();
    step.data[5] += 1.0;
    assert!(doc.preview(&step));
    let mut result = base.clone();
    result.data[5] += 2.0;
    result.data[777] -= 1.0;
    assert!(doc.restore_base(&base));
    assert!(matches!(doc.apply_result(result.clone(), recipe(), "Droplet erosion", None).unwrap(), Changed::Rect(_)));
    assert_eq!(doc.history().undo_len(), 1);
    doc.undo();
    assert_eq!(bits(doc.map()), bits(&base));
    assert!(doc.apply_result(noisy(10, 10), recipe(), "x", None).is_err());
}

#[test]
fn save_open_round_trip_and_unsaved_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.bhef");
    let mut doc = Document::new(noisy(33, 17));
    assert!(doc.save().is_err(), "no path yet");
    doc.mark_unsaved();
    assert!(doc.title().starts_with("• untitled"));
    doc.save_as(&path).unwrap();
    assert!(!doc.is_unsaved());
    assert_eq!(doc.title(), "t.bhef — Talus");
    let back = Document::open(&path).unwrap();
    assert_eq!(bits(back.map()), bits(doc.map()));
    // The cell size comes back from the sidecar the save wrote beside the file.
    assert_eq!((back.map().cell_size, doc.map().cell_size), (2.0, 2.0));
    // With its cell size recorded, nothing is asked and a given one is not taken.
    let asks = |p: &Path| match Document::open_or_ask(p, None) {
        Ok(Opened::AskCellSize(w, h)) => Some((w, h)),
        _ => None,
    };
    assert_eq!(asks(&path), None);
    assert!(matches!(Document::open_or_ask(&path, None), Ok(Opened::Doc(_))));
    assert_eq!(Document::open_at(&path, Some(8.0)).unwrap().map().cell_size, 2.0);
    // Without a sidecar the editor asks (the size in nodes), and opens at the answer.
    std::fs::remove_file(crate::core::io::sidecar::path_for(&path)).unwrap();
    assert_eq!(asks(&path), Some((33, 17)));
    let at = Document::open_at(&path, Some(8.0)).unwrap();
    assert_eq!((at.map().cell_size, bits(at.map())), (8.0, bits(doc.map())));
    assert_eq!(Document::open(&path).unwrap().map().cell_size, 1.0);
    let err = Document::open_at(&path, Some(-1.0)).unwrap_err();
    assert!(err.contains("t.bhef"), "{err}");
    // A project, or a file that does not read, is not asked about: opening it says why.
    assert!(Document::open_or_ask(&dir.path().join("t.talus"), None).is_err());
    std::fs::write(&path, b"BHEF but broken").unwrap();
    assert_eq!(asks(&path), None);
    assert!(Document::open_or_ask(&path, None).is_err());
    let err = Document::open(&path).unwrap_err();
    assert!(err.contains("t.bhef"), "{err}");
}

fn raise(doc: &mut Document, from: [f32; 2], to: [f32; 2]) {
    let params = BrushParams { kind: BrushKind::Raise, radius: 12.0, strength: 5.0, ..Default::default() };
    doc.begin_stroke(params, "Raise").unwrap();
    for i in 0..=20 {
        let t = i as f32 / 20.0;
        doc.stroke_to([from[0] + t * (to[0] - from[0]), from[1] + t * (to[1] - from[1])], i as f64 * 0.05);
    }
    doc.end_stroke();
}

fn thermal_run(doc: &mut Document) {
    use std::sync::atomic::AtomicBool;
    let result = crate::editor::layers::recipe::run_to_end(&recipe(), doc.map().clone(), None, &AtomicBool::new(false))
        .unwrap()
        .unwrap();
    doc.apply_result(result, recipe(), "Thermal erosion", None).unwrap();
}

fn sculpt_bits(doc: &Document) -> Vec<u32> {
    match &doc.stack().layers()[0].kind {
        LayerKind::Sculpt(d) => d.to_dense().iter().map(|v| v.to_bits()).collect(),
        LayerKind::Erosion(_) => panic!("layer 1 is not the sculpt"),
    }
}

/// Generate with nothing changed (#35): the base it makes is the base as it is, so nothing
/// changes: no undo step, no unsaved change, the layers as they were (erosion not stale).
#[test]
fn the_same_base_again_changes_nothing() {
    let params =
        crate::core::generate::GenerateParams { width: 97, height: 81, cell_size: 8.0, seed: 23, ..Default::default() };
    let source = BaseSource::Generator(params.clone());
    let map = crate::core::generate::generate(&params).unwrap();
    let mut doc = Document::with_base(map.clone(), source.clone());
    raise(&mut doc, [20.0, 20.0], [70.0, 60.0]);
    thermal_run(&mut doc);
    doc.saved_revision = doc.revision;
    let (folded, steps) = (bits(doc.map()), doc.history().undo_len());
    assert!(doc.base_is(&map, &source));
    assert_eq!(doc.set_base(map.clone(), source.clone(), "Generate"), Changed::None);
    assert_eq!(bits(doc.map()), folded);
    assert_eq!(doc.history().undo_len(), steps, "no undo step");
    assert!(!doc.is_unsaved() && !doc.has_stale(), "no change, nothing stale");
    // Another seed, or the same heights from another source, is a new base.
    let other = BaseSource::Generator(crate::core::generate::GenerateParams { seed: 24, ..params });
    assert!(!doc.base_is(&map, &other) && !doc.base_is(&map, &BaseSource::Heights));
    let mut moved = map.clone();
    moved.data[5] = f32::from_bits(moved.data[5].to_bits() ^ 1);
    assert!(!doc.base_is(&moved, &source), "one bit differs");
    doc.set_base(map, other, "Generate");
    assert_eq!(doc.history().undo_len(), steps + 1);
    assert!(doc.has_stale());
}

#[test]
fn a_new_base_keeps_the_sculpt_bit_exact_and_undo_brings_all_back() {
    let mut doc = Document::new(noisy(120, 90));
    raise(&mut doc, [20.0, 20.0], [90.0, 60.0]);
    thermal_run(&mut doc);
    let (sculpt, folded) = (sculpt_bits(&doc), bits(doc.map()));
    assert!(sculpt.iter().any(|b| *b != 0));
    let mut other = noisy(120, 90);
    other.data.iter_mut().for_each(|v| *v *= 2.0);
    doc.set_base(other, BaseSource::Heights, "Generate");
    assert_eq!(sculpt_bits(&doc), sculpt, "the strokes survive a new base");
    assert!(doc.has_stale(), "the erosion's input changed");
    assert_eq!(doc.stack().layers().len(), 2);
    doc.undo();
    assert_eq!(bits(doc.map()), folded);
    assert!(!doc.has_stale());
    // The re-run of a stale layer is what a fresh run on its input gives.
    doc.redo();
    let job = doc.stale_job().unwrap();
    let fresh = crate::editor::layers::recipe::run_to_end(
        &job.recipe,
        job.input.clone(),
        job.mask.as_deref(),
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap()
    .unwrap();
    assert!(matches!(doc.set_resimulated(&job, &fresh), Some(Changed::Rect(_))));
    assert!(!doc.has_stale());
    assert_eq!(doc.history().undo_len(), 3, "stroke, run, generate; the re-run is not a step of its own");
}

#[test]
fn painting_the_mask_to_zero_erases_the_erosion_there_only() {
    let mut doc = Document::new(noisy(100, 100));
    thermal_run(&mut doc);
    let id = doc.stack().layers()[0].id;
    let input = doc.stack().input_of(0);
    let before = doc.map().clone();
    doc.set_paint_target(PaintTarget::Mask(id));
    let params = BrushParams { kind: BrushKind::Lower, radius: 10.0, strength: 200.0, ..Default::default() };
    doc.begin_stroke(params, "Lower").unwrap();
    doc.stroke_to([30.0, 50.0], 0.0);
    doc.stroke_to([70.0, 50.0], 0.5);
    doc.end_stroke();
    let e = doc.stack().layers()[0].erosion().unwrap();
    let mut zeros = 0;
    for y in 0..100 {
        for x in 0..100 {
            let k = y * 100 + x;
            let m = e.mask.get(x, y);
            assert!((0.0..=1.0).contains(&m));
            if m == 0.0 {
                zeros += 1;
                assert_eq!(doc.map().data[k].to_bits(), input.data[k].to_bits(), "({x}, {y}) is uneroded");
            }
            let far = (y as f32 - 50.0).abs() > 6.0 || !(24..=76).contains(&x);
            if far {
                assert_eq!(m, 1.0, "({x}, {y}) is far from the stroke");
                assert_eq!(doc.map().data[k].to_bits(), before.data[k].to_bits());
            }
        }
    }
    assert!(zeros > 100, "{zeros} nodes painted to 0");
    assert_eq!(doc.stack().layers().len(), 1, "mask painting makes no sculpt layer");
    doc.undo();
    assert_eq!(bits(doc.map()), bits(&before), "the mask stroke is one undo step");
}

#[test]
fn layer_panel_changes_are_one_step_each() {
    let mut doc = Document::new(noisy(80, 80));
    thermal_run(&mut doc);
    let id = doc.stack().layers()[0].id;
    let full = bits(doc.map());
    for s in [0.9, 0.5, 0.1, 0.0] {
        doc.apply_layer_op(&LayerOp::Strength(id, s));
    }
    assert_eq!(bits(doc.map()), bits(&doc.stack().input_of(0)), "strength 0 erases the run");
    assert_eq!(doc.history().undo_len(), 2, "a slider drag is one step");
    doc.undo();
    assert_eq!(bits(doc.map()), full);
    doc.apply_layer_op(&LayerOp::Rename(id, "Rain".into()));
    doc.apply_layer_op(&LayerOp::Visible(id, false));
    assert_eq!(bits(doc.map()), bits(&doc.stack().input_of(0)));
    doc.apply_layer_op(&LayerOp::Delete(id));
    assert!(doc.stack().layers().is_empty());
    assert_eq!(doc.history().undo_label(), Some("Delete layer"));
    doc.undo();
    doc.undo();
    assert_eq!(doc.stack().layers()[0].name, "Rain");
    assert_eq!(bits(doc.map()), full);
}

#[test]
fn a_project_saves_and_reopens_bit_exact_and_bhef_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Document::new(noisy(90, 70));
    raise(&mut doc, [10.0, 10.0], [60.0, 50.0]);
    thermal_run(&mut doc);
    let project = dir.path().join("t.talus");
    let flat = dir.path().join("t.bhef");
    doc.save_as(&flat).unwrap();
    doc.save_as(&project).unwrap();
    assert!(!doc.is_unsaved());
    let back = Document::open(&project).unwrap();
    assert_eq!(bits(back.map()), bits(doc.map()));
    assert_eq!(back.stack().layers().len(), 2);
    assert_eq!(bits(&bhef::load(&flat).unwrap()), bits(doc.map()), "BHEF holds the flattened terrain");
    let from_bhef = Document::open(&flat).unwrap();
    assert!(matches!(from_bhef.stack().base.source, BaseSource::File(_)));
    assert!(from_bhef.stack().layers().is_empty());
    std::fs::write(&project, b"TALUSPRJ broken").unwrap();
    let e = Document::open(&project).unwrap_err();
    assert!(e.contains("t.talus") && e.contains("damaged"), "{e}");
}

#[test]
fn an_import_replaces_the_terrain_and_undo_brings_the_layers_back() {
    let mut doc = Document::new(noisy(64, 64));
    thermal_run(&mut doc);
    let before = bits(doc.map());
    let imported = noisy(64, 64);
    doc.replace_all(imported.clone(), BaseSource::File("x.png".into()), "Import");
    assert_eq!(bits(doc.map()), bits(&imported), "the terrain shown is the file");
    assert!(doc.stack().layers().is_empty());
    doc.undo();
    assert_eq!(bits(doc.map()), before);
    assert_eq!(doc.stack().layers().len(), 1);
}

/// A Simulate run with its timeline, as the window records it: the layer scrubs to any frame
/// (bit-exact up to the fold's rounding), a scrub drag is one undo step, "Keep from here" drops
/// the later frames, and "Continue from here" ends where the uninterrupted run ended.
#[test]
fn the_timeline_scrubs_keeps_and_continues_as_undo_steps() {
    use crate::editor::job::{JobShared, run_job};
    use crate::editor::timeline::resume::Resumed;
    use crate::editor::timeline::{DEFAULT_BUDGET, Timeline};
    use std::sync::Arc;
    use std::time::Duration;

    let input = Heightmap::from_fn(48, 48, 2.0, |x, y| {
        20.0 + 0.4 * x as f32 + 4.0 * signed_f32(hash2(x as i64, y as i64, 2)) + 0.1 * y as f32
    })
    .unwrap();
    let mut r = recipe();
    let map = crate::core::erosion::MapSize::of(&input);
    r.model.set_work(30, map);
    let mut doc = Document::new(input.clone());
    // The run, recording every step (an update interval of zero publishes each one).
    let shared = Arc::new(JobShared::new(Duration::ZERO));
    shared.record(Timeline::new(&input, 30, DEFAULT_BUDGET));
    let (sim, _) = run_job(r.build(input.clone()).unwrap().job, shared.clone());
    let end = sim.heightmap().clone();
    let t = shared.take_timeline().unwrap();
    assert_eq!(t.len(), 31, "the input and one frame per step");
    doc.apply_result(end.clone(), r.clone(), "Thermal erosion", Some(t)).unwrap();
    let id = doc.stack().layers().last().unwrap().id;
    let close = |a: &Heightmap, b: &Heightmap| a.data.iter().zip(&b.data).all(|(x, y)| (x - y).abs() <= 1e-4);

    // Scrub back and forth: one undo step; the map is frame k's heights.
    let frame10 = doc.stack().timeline_of(id).unwrap().0.heights(10);
    assert_ne!(doc.scrub(id, 20), Changed::None);
    assert_ne!(doc.scrub(id, 10), Changed::None);
    assert!(close(doc.map(), &frame10));
    assert_eq!(doc.history().undo_len(), 2, "the run and one scrub drag");
    let e = doc.stack().layer(id).unwrap().erosion().unwrap();
    assert_eq!(e.recipe.model.work(map), 10, "a re-run of the layer gives frame 10");
    // Undo brings the run's end back; redo frame 10.
    doc.undo();
    assert!(close(doc.map(), &end));
    doc.redo();
    assert!(close(doc.map(), &frame10));

    // Keep from here: frames after 10 are gone (one undo step; undo brings them back).
    doc.keep_frame(id);
    assert_eq!(doc.stack().timeline_of(id).unwrap().0.len(), 11);
    doc.undo();
    assert_eq!(doc.stack().timeline_of(id).unwrap().0.len(), 31);
    doc.redo();

    // Continue from frame 10 through the job loop: ends where the uninterrupted run ended.
    let job = doc.continue_job(id).unwrap();
    assert_eq!((job.from, job.recipe.model.work(map)), (10, 30));
    let shared = Arc::new(JobShared::new(Duration::ZERO));
    shared.record(job.timeline.clone());
    let resumed = Resumed::new(job.recipe.build(job.input.clone()).unwrap().job, job.from, job.at.clone());
    let (sim, _) = run_job(Box::new(resumed), shared.clone());
    assert_eq!(bits(sim.heightmap()), bits(&end), "continued = uninterrupted, bit for bit");
    let steps = doc.history().undo_len();
    let change = doc.apply_continued(&job, sim.heightmap(), 30, shared.take_timeline().unwrap(), "Continue erosion");
    assert!(change.is_some());
    assert_eq!(doc.history().undo_len(), steps + 1);
    assert!(close(doc.map(), &end));
    let (t, frame) = doc.stack().timeline_of(id).unwrap();
    assert_eq!((t.len(), frame), (31, 30));
    doc.undo();
    assert!(close(doc.map(), &frame10), "undo of the continuation goes back to the kept frame");
}
