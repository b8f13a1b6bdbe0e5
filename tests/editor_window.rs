//! The real editor window, driven by a script under X (Xvfb + Mesa's software Vulkan in CI):
//! generate, paint a stroke, simulate droplets, save after each, undo and redo the simulation,
//! start a long pipe-model run and pause, resume and cancel it, export to PNG16 and import it
//! back, take a screenshot, report frame times. Checks that the saved BHEF files changed where the stroke went (and nowhere far from
//! it), that the simulation changed the painted terrain, and that the screenshot is a real frame.
//!
//! Needs `Xvfb` (or a `DISPLAY`) and a Vulkan driver; `.ci/deps` installs both. This test is the
//! window's end-to-end check, so it fails, rather than skips, when they are missing.

#![cfg(feature = "editor")]

mod common;

use std::path::Path;
use std::process::Command;

use talus::core::Heightmap;
use talus::core::io::bhef;

fn load(p: &Path) -> Heightmap {
    bhef::load(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Distance from node `(x, y)` to the polyline.
fn dist_to_polyline(x: f32, y: f32, pts: &[(f32, f32)]) -> f32 {
    pts.windows(2)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let t = (((x - a.0) * dx + (y - a.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
            ((x - a.0 - t * dx).powi(2) + (y - a.1 - t * dy).powi(2)).sqrt()
        })
        .fold(f32::INFINITY, f32::min)
}

/// Writes `script` to `dir/name` and runs the editor on it under a private X server; fails with
/// the editor's log unless every action succeeded.
fn run_script(dir: &Path, name: &str, script: &str) {
    let (ok, log) = run_script_log(dir, name, script);
    assert!(ok, "editor script failed:\n{log}");
}

/// As [`run_script`], returning whether every action succeeded and the editor's log.
fn run_script_log(dir: &Path, name: &str, script: &str) -> (bool, String) {
    common::xvfb::run_editor_script(env!("CARGO_BIN_EXE_talus"), dir, name, script)
}

#[test]
fn scripted_session_generates_paints_simulates_and_saves() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let points = [(70.0f32, 128.0f32), (128.0, 110.0), (186.0, 128.0)];
    let radius_m = 60.0f32;
    let cell = 4.0f32;
    let script = format!(
        r#"[
    {look}Generate((width: 257, height: 257, cell_size: {cell}, seed: 7, falloff: Some((depth: 20.0)), sea_level: Some((level: 0.0, coverage: Some(0.4))))),
    Save("{generated}"),
    Stroke(tool: Raise, radius: {radius_m}, strength: 30.0, points: [{pts}], seconds: 1.5),
    Save("{painted}"),
    Simulate(model: Droplet((droplets_per_km2: 19073.486328125, radius_m: 20.0, max_path_m: 1200.0, min_slope_tan: 0.0025)), seed: 3),
    WaitSimulation,
    Save("{eroded}"),
    Undo,
    Save("{undone}"),
    Redo,
    Save("{redone}"),
    Simulate(model: Pipe((steps: 1000000)), seed: 1),
    WaitFrames(2),
    Pause(true),
    WaitFrames(2),
    Pause(false),
    Cancel,
    WaitSimulation,
    Save("{cancelled}"),
    Export("{exported}"),
    Import("{exported}"),
    Save("{imported}"),
    Screenshot("{shot}"),
    FrameReport("{frames}"),
    Quit,
]"#,
        look = common::xvfb::light_look(),
        generated = d.join("gen.bhef").display(),
        painted = d.join("painted.bhef").display(),
        eroded = d.join("eroded.bhef").display(),
        undone = d.join("undone.bhef").display(),
        redone = d.join("redone.bhef").display(),
        cancelled = d.join("cancelled.bhef").display(),
        exported = d.join("exported.png").display(),
        imported = d.join("imported.bhef").display(),
        shot = d.join("shot.png").display(),
        frames = d.join("frames.json").display(),
        pts = points.iter().map(|(x, y)| format!("({x:.1}, {y:.1})")).collect::<Vec<_>>().join(", "),
    );
    run_script(d, "session.ron", &script);

    let base = load(&d.join("gen.bhef"));
    let painted = load(&d.join("painted.bhef"));
    let eroded = load(&d.join("eroded.bhef"));
    // BHEF stores no cell size (seed 004 layout), so only the node counts come back.
    assert_eq!((base.width, base.height), (257, 257));

    // The stroke raised the terrain along its path and changed nothing far from it. The reach is
    // the brush radius plus 4 nodes (the path's round trip through the window, and the falloff's
    // rim). While the brush was cast into the surface it was raising, its dabs crept toward the
    // camera: paint was seen 18–24 nodes from the stroke's last point with a 15-node radius, more
    // the slower the frames. Every sample of a stroke is now cast into the terrain as it was when
    // the stroke began. A stray blob (the defect this also guards against) lies far beyond and is
    // metres high.
    let reach = radius_m / cell + 4.0;
    const STRAY_M: f32 = 0.001;
    let mut near_raised = 0.0f64;
    let mut stray = Vec::new();
    for y in 0..base.height {
        for x in 0..base.width {
            let dh = painted.get(x, y) - base.get(x, y);
            let dist = dist_to_polyline(x as f32, y as f32, &points);
            if dist > reach {
                if dh.abs() > STRAY_M {
                    stray.push((x, y, dh));
                }
            } else {
                assert!(dh >= 0.0, "a raise stroke lowered ({x}, {y}) by {dh}");
                near_raised += dh as f64;
            }
        }
    }
    // Nothing off the path: a stray blob here once meant the real X pointer, reset to the
    // screen's centre by the X server, was mixing its cursor events with the script's mouse.
    assert!(
        stray.is_empty(),
        "the stroke changed {} nodes far from its path, e.g. {:?}",
        stray.len(),
        &stray[..stray.len().min(5)]
    );
    assert!(near_raised > 100.0, "the stroke raised the terrain by only {near_raised} m·nodes");
    let on_path = painted.get(128, 110) - base.get(128, 110);
    assert!(on_path > 1.0, "the stroke's centre line rose by only {on_path} m");

    // The droplets changed the painted terrain, and it stayed finite.
    assert!(eroded.all_finite());
    let changed = painted.data.iter().zip(&eroded.data).filter(|(a, b)| a != b).count();
    assert!(changed > 1000, "the simulation changed only {changed} nodes");

    // Undo restores the painted map bit for bit, redo the eroded one.
    let bits = |m: &Heightmap| m.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert!(bits(&load(&d.join("undone.bhef"))) == bits(&painted), "undo did not restore the painted map exactly");
    assert!(bits(&load(&d.join("redone.bhef"))) == bits(&eroded), "redo did not restore the eroded map exactly");
    // A cancelled million-step pipe run stopped early (the script went on) and left a valid map.
    let cancelled = load(&d.join("cancelled.bhef"));
    assert!(cancelled.all_finite());
    // File ▸ Export to PNG16 and Import back: metres restored from the sidecar within one step.
    let imported = load(&d.join("imported.bhef"));
    let s = cancelled.stats();
    let step = (s.max - s.min) / 65535.0;
    let worst = cancelled.data.iter().zip(&imported.data).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst <= step, "PNG16 round trip off by {worst} m (one step is {step} m)");

    // The screenshot is a real frame: the size of the window, with many colours and contrast.
    let img = image::open(d.join("shot.png")).expect("screenshot").to_rgb8();
    assert!(img.width() >= 640 && img.height() >= 360, "screenshot is {}×{}", img.width(), img.height());
    let mut colours = std::collections::HashSet::new();
    let (mut sum, mut sum2, n) = (0.0f64, 0.0f64, (img.width() * img.height()) as f64);
    for p in img.pixels() {
        colours.insert(p.0);
        let l = 0.299 * p.0[0] as f64 + 0.587 * p.0[1] as f64 + 0.114 * p.0[2] as f64;
        sum += l;
        sum2 += l * l;
    }
    let sd = (sum2 / n - (sum / n).powi(2)).max(0.0).sqrt();
    assert!(
        colours.len() > 2000 && sd > 15.0,
        "screenshot looks blank: {} colours, luminance sd {sd:.1}",
        colours.len()
    );

    let frames: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("frames.json")).unwrap()).unwrap();
    assert!(frames["idle"]["frames"].as_u64().unwrap() > 0, "{frames}");
    eprintln!("frame report: {frames}");
}

/// The layer stack through the real window (#15): generate, paint, simulate, change a generator
/// value (the erosion re-runs by itself on the new terrain), paint the erosion layer's mask down
/// to 0 in one area, save the project, reopen it, and compare.
#[test]
fn scripted_session_keeps_layers_through_a_generator_change() {
    use std::sync::atomic::AtomicBool;
    use talus::editor::layers::recipe::run_to_end;
    use talus::editor::layers::{BaseSource, LayerKind};

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let generate = |seed: u64| {
        format!(
            "Generate((width: 257, height: 257, cell_size: 4.0, seed: {seed}, falloff: Some((depth: 20.0)), sea_level: Some((level: 0.0, coverage: Some(0.4)))))"
        )
    };
    let mask_path = [(100.0f32, 150.0f32), (150.0, 150.0)];
    let script = format!(
        r#"[
    {look}{gen7},
    Stroke(tool: Raise, radius: 60.0, strength: 30.0, points: [(70.0, 128.0), (128.0, 110.0), (186.0, 128.0)], seconds: 1.0),
    Simulate(model: Droplet((droplets_per_km2: 19073.486328125, radius_m: 20.0, max_path_m: 1200.0, min_slope_tan: 0.0025)), seed: 3),
    WaitSimulation,
    Save("{eroded}"),
    {gen8},
    WaitResimulation,
    Save("{resimulated}"),
    Layer(Target(Mask(2))),
    Stroke(tool: Lower, radius: 40.0, strength: 100.0, points: [({mx0:.1}, {my0:.1}), ({mx1:.1}, {my1:.1})], seconds: 1.0),
    Layer(Target(Terrain)),
    Save("{masked}"),
    Save("{project}"),
    Open("{project}"),
    Save("{reopened}"),
    Screenshot("{shot}"),
    Quit,
]"#,
        look = common::xvfb::light_look(),
        gen7 = generate(7),
        gen8 = generate(8),
        eroded = d.join("eroded.bhef").display(),
        resimulated = d.join("resimulated.bhef").display(),
        masked = d.join("masked.bhef").display(),
        project = d.join("island.talus").display(),
        reopened = d.join("reopened.bhef").display(),
        shot = d.join("layers.png").display(),
        mx0 = mask_path[0].0,
        my0 = mask_path[0].1,
        mx1 = mask_path[1].0,
        my1 = mask_path[1].1,
    );
    run_script(d, "layers.ron", &script);
    if let Ok(dir) = std::env::var("TALUS_SHOT_DIR") {
        let _ = std::fs::copy(d.join("layers.png"), Path::new(&dir).join("layers.png"));
    }

    let bits = |m: &Heightmap| m.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let project = talus::editor::project::load(&d.join("island.talus")).expect("the project reads back");
    let stack = &project.stack;
    // Reopened, the terrain is bit for bit what was saved, with nothing re-run.
    let masked = load(&d.join("masked.bhef"));
    assert!(bits(&load(&d.join("reopened.bhef"))) == bits(&masked), "the reopened project's terrain differs");
    assert!(bits(&stack.compose()) == bits(&masked), "the project file's fold differs from the window's");
    assert!(project.view.camera.is_some() && project.view.look.is_some(), "the look and camera are saved");

    // The stack: the new generator as base, the stroke as sculpt, the droplets as erosion.
    match &stack.base.source {
        BaseSource::Generator(p) => assert_eq!(p.seed, 8, "the base is the changed generator"),
        other => panic!("base is {other:?}"),
    }
    assert_eq!(stack.layers().len(), 2, "{:?}", stack.layers().iter().map(|l| &l.name).collect::<Vec<_>>());
    let LayerKind::Sculpt(sculpt) = &stack.layers()[0].kind else { panic!("layer 1 is not the sculpt") };
    let raised: f64 = sculpt.to_dense().iter().map(|v| *v as f64).sum();
    assert!(raised > 100.0, "the stroke survived the new base: {raised} m·nodes");
    let e = stack.layers()[1].erosion().expect("layer 2 is the erosion");
    assert!(!e.stale, "the erosion re-ran on the new terrain");
    assert_eq!(e.recipe.seed, 3);

    // The re-run in the window equals a fresh run of the recipe on the new input, bit for bit.
    let input = stack.input_of(1);
    let fresh = run_to_end(&e.recipe, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
    let delta = e.delta.to_dense();
    let fresh_delta: Vec<f32> = fresh.data.iter().zip(&input.data).map(|(r, i)| r - i).collect();
    assert!(
        delta.iter().map(|v| v.to_bits()).eq(fresh_delta.iter().map(|v| v.to_bits())),
        "the re-simulation is not the recipe's run on its input"
    );
    let resimulated = load(&d.join("resimulated.bhef"));
    assert!(bits(&resimulated) != bits(&load(&d.join("eroded.bhef"))));

    // The mask was painted to 0 along its path: there the terrain is the input, uneroded.
    let mask = e.mask.to_dense();
    let w = stack.width();
    let zeros: Vec<usize> = (0..mask.len()).filter(|&k| mask[k] == 0.0).collect();
    assert!(zeros.len() > 100, "only {} mask nodes were painted to 0", zeros.len());
    let near = |k: usize| {
        let (x, y) = ((k % w) as f32, (k / w) as f32);
        dist_to_polyline(x, y, &mask_path) <= 40.0 / 4.0 + 4.0
    };
    assert!(zeros.iter().all(|&k| near(k)), "mask paint strayed from its path");
    assert!(zeros.iter().all(|&k| masked.data[k].to_bits() == input.data[k].to_bits()), "masked nodes still eroded");
    let eroded_there = zeros.iter().filter(|&&k| resimulated.data[k] != input.data[k]).count();
    assert!(eroded_there > 0, "the droplets had eroded the masked area before the mask");
}

/// Time and place in erosion through the real window (#16): a droplet run recorded as a
/// timeline, scrubbed back, continued from there (ending bit for bit where the uninterrupted run
/// ended), scrubbed back again and kept; then the erosion brush dragged along a path (its dabs
/// land under the path and the layer re-runs to the same bits). Screenshots of the timeline and
/// of the brush stroke go to `TALUS_SHOT_DIR` when it is set.
#[test]
fn scripted_session_scrubs_continues_keeps_and_erodes_with_the_brush() {
    use std::sync::atomic::AtomicBool;
    use talus::editor::layers::recipe::{SteerSource, run_to_end};

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = [(90.0f32, 100.0f32), (128.0, 96.0), (166.0, 104.0)];
    let script = format!(
        r#"[
    {look}Generate((width: 257, height: 257, cell_size: 4.0, seed: 7, falloff: Some((depth: 20.0)), sea_level: Some((level: 0.0, coverage: Some(0.4))))),
    Save("{generated}"),
    Simulate(model: Droplet((droplets_per_km2: 190734.86328125, radius_m: 20.0, max_path_m: 1200.0, min_slope_tan: 0.0025)), seed: 3),
    WaitSimulation,
    Save("{full}"),
    Layer(Target(Mask(1))),
    Layer(Target(Terrain)),
    Layer(Scrub(1, 2)),
    Save("{scrubbed}"),
    Screenshot("{timeline}"),
    Continue(1),
    WaitSimulation,
    Save("{continued}"),
    Layer(Scrub(1, 2)),
    Layer(Keep(1)),
    Save("{kept}"),
    ErosionBrush(true),
    Stroke(tool: Raise, radius: 48.0, strength: 1.0, points: [{pts}], seconds: 3.0),
    WaitDabs,
    ErosionBrush(false),
    Save("{brushed}"),
    Save("{project}"),
    Screenshot("{brush}"),
    Quit,
]"#,
        look = common::xvfb::light_look(),
        generated = d.join("gen.bhef").display(),
        full = d.join("full.bhef").display(),
        scrubbed = d.join("scrubbed.bhef").display(),
        continued = d.join("continued.bhef").display(),
        kept = d.join("kept.bhef").display(),
        timeline = d.join("timeline.png").display(),
        brushed = d.join("brushed.bhef").display(),
        project = d.join("brushed.talus").display(),
        brush = d.join("erosion-brush.png").display(),
        pts = path.iter().map(|(x, y)| format!("({x:.1}, {y:.1})")).collect::<Vec<_>>().join(", "),
    );
    run_script(d, "timeline.ron", &script);
    if let Ok(shots) = std::env::var("TALUS_SHOT_DIR") {
        for f in ["timeline.png", "erosion-brush.png"] {
            let _ = std::fs::copy(d.join(f), Path::new(&shots).join(f));
        }
    }
    let bits = |m: &Heightmap| m.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let gen_ = load(&d.join("gen.bhef"));
    let full = load(&d.join("full.bhef"));
    let scrubbed = load(&d.join("scrubbed.bhef"));
    let moved = |m: &Heightmap| m.data.iter().zip(&gen_.data).map(|(a, b)| (a - b).abs() as f64).sum::<f64>();
    // Frame 2 is an early moment of the run: it has eroded, less than the whole run.
    assert!(moved(&scrubbed) > 0.0 && moved(&scrubbed) < moved(&full), "{} vs {}", moved(&scrubbed), moved(&full));
    // Continued from frame 2, the run ends bit for bit where the uninterrupted run ended.
    assert!(bits(&load(&d.join("continued.bhef"))) == bits(&full), "continue-from-here is not the whole run");
    // Scrubbed back to frame 2 and kept: frame 2 again, bit for bit.
    assert!(bits(&load(&d.join("kept.bhef"))) == bits(&scrubbed), "keep-from-here is not the scrubbed frame");

    // The brush stroke: one erosion-brush layer on top whose dabs lie under the dragged path
    // (radius 48 m = 12 nodes), that changed the terrain, and that re-runs to the same bits.
    let project = talus::editor::project::load(&d.join("brushed.talus")).expect("the project reads back");
    let stack = &project.stack;
    let top = stack.layers().last().unwrap();
    let e = top.erosion().expect("the top layer is the brush's erosion layer");
    let Some(SteerSource::Stroke(dabs)) = e.recipe.steer.as_ref().map(|s| &s.source) else {
        panic!("the top layer is not an erosion-brush stroke: {:?}", e.recipe.steer)
    };
    assert!(dabs.len() >= 2, "{} dabs", dabs.len());
    // Dabs are in metres on the map (4 m cells here), the path in nodes.
    let cell = stack.cell_size();
    for dab in dabs {
        assert!((dab.radius_m - 48.0).abs() < 1e-3, "radius {} m", dab.radius_m);
        let (x, y) = (dab.centre_m[0] / cell, dab.centre_m[1] / cell);
        let off = dist_to_polyline(x, y, &path);
        assert!(off <= 4.0, "a dab landed {off:.1} nodes from the path at {:?} m", dab.centre_m);
    }
    let brushed = load(&d.join("brushed.bhef"));
    assert!(bits(&brushed) != bits(&scrubbed), "the brush changed nothing");
    let input = stack.input_of(stack.layers().len() - 1);
    let fresh = run_to_end(&e.recipe, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
    let fresh_delta: Vec<f32> = fresh.data.iter().zip(&input.data).map(|(r, i)| r - i).collect();
    assert!(
        e.delta.to_dense().iter().map(|v| v.to_bits()).eq(fresh_delta.iter().map(|v| v.to_bits())),
        "the brush layer does not re-run to the stroke's bits"
    );
}

/// File ▸ Build… through the real window (#26): the 257² island, a painted ridge, the default
/// Simulate, the project saved, then Build at 1025² (Upsample) to a 16-bit PNG from a script, as the
/// dialog's Build button does. The file is 1025², and it and its sidecar are, byte for byte, what
/// `talus build --size 1025 --erosion upsample` writes from the saved project (built there on
/// another thread count): the dialog and the CLI build through one path (#33). Then
/// Build as an engine tile set (#27): Unity, 2×2 tiles of 513, every map; the folder holds, byte
/// for byte, the files `talus build --tiles` writes from the saved project. A second
/// session presses Build with an output in a folder that does not exist: the script fails, and the
/// log says why. The dialog's screenshot goes to `TALUS_SHOT_DIR` when it is set.
#[test]
fn scripted_session_builds_the_project_at_4x_from_the_build_dialog() {
    use talus::core::erosion::registry;

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = ron::to_string(&(registry::default_model().editor_default)()).unwrap();
    let script = format!(
        r#"[
    {look}{island},
    Stroke(tool: Raise, radius: 60.0, strength: 30.0, points: [(70.0, 128.0), (128.0, 110.0), (186.0, 128.0)], seconds: 1.0),
    Simulate(model: {model}, seed: 1),
    WaitSimulation,
    Save("{project}"),
    Build((size: 1025, erosion: Upsample, target: File((path: "{built}")))),
    WaitBuild,
    Build((size: 1025, target: Tiles((engine: unity, tiles: 2, dir: "{set}", maps: [flow, erosion, deposition, slope, normal, splat])))),
    WaitBuild,
    WaitFrames(4),
    Screenshot("{shot}"),
    Quit,
]"#,
        look = common::xvfb::light_look(),
        island = common::xvfb::SMALL_ISLAND,
        project = d.join("island.talus").display(),
        built = d.join("built.png").display(),
        set = d.join("unity-set").display(),
        shot = d.join("build-dialog.png").display(),
    );
    run_script(d, "build.ron", &script);
    if let Ok(shots) = std::env::var("TALUS_SHOT_DIR") {
        let _ = std::fs::copy(d.join("build-dialog.png"), Path::new(&shots).join("build-dialog-done.png"));
    }

    let project = talus::editor::project::load(&d.join("island.talus")).expect("the project reads back");
    assert_eq!(project.stack.width(), 257);
    assert!(project.stack.layers().iter().any(|l| l.erosion().is_some()), "the Simulate made an erosion layer");
    let got = talus::core::io::interop::load(&d.join("built.png"), &Default::default()).expect("the build reads back");
    assert_eq!((got.width, got.height), (1025, 1025));
    let args = ["--size", "1025", "--erosion", "upsample"];
    common::sets::assert_same_file_as_cli(&d.join("island.talus"), &d.join("built.png"), &d.join("cli.png"), &args);

    // The tile set: the same files as the CLI's, 4 tiles + 4 × every map + the manifest.
    let args = ["--size", "1025", "--engine", "unity", "--tiles", "2", "--maps", "all"];
    let n = common::sets::assert_same_as_cli(&d.join("island.talus"), &d.join("unity-set"), &d.join("cli-set"), &args);
    assert_eq!(n, 4 + 4 * talus::core::io::tiles::MAPS.len() + 1);

    // An output in a folder that does not exist: refused, the script fails and says why.
    let missing = d.join("no-such-folder").join("b.bhef");
    let bad = format!(
        "[\n    {look}Build((size: 1025, target: File((path: \"{out}\")))),\n    WaitBuild,\n    Quit,\n]",
        look = common::xvfb::light_look(),
        out = missing.display()
    );
    let (ok, log) = run_script_log(d, "bad-build.ron", &bad);
    assert!(!ok, "a build to a missing folder succeeded:\n{log}");
    assert!(log.contains("does not exist") && log.contains("no-such-folder"), "the failure does not say why:\n{log}");
    assert!(!missing.exists());
}

/// `TALUS_OFFSCREEN=1` (for GPUs whose driver cannot present to the display, see
/// `src/app/offscreen.rs`): the window gets no surface, the editor renders into an image, and a
/// script's screenshot is a real frame of the terrain and the panel at the window's size.
#[test]
fn off_screen_rendering_makes_real_frames_without_a_window_surface() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shot = d.join("offscreen.png");
    let script_path = d.join("offscreen.ron");
    // Off screen, frames are not paced by a display: leave time for the pipelines to compile.
    let script = format!(
        "[\n    Look((sky: (shadows: (enabled: false), camera: (msaa: Off)), water: (sea_plane: false))),\n    {island},\n    WaitGeneration,\n    WaitFrames(100),\n    Screenshot(\"{shot}\"),\n    Quit,\n]",
        island = common::xvfb::SMALL_ISLAND,
        shot = shot.display(),
    );
    std::fs::write(&script_path, script).unwrap();
    let x = common::xvfb::display(800, 600, 40);
    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["editor", "--window-size", "320x200", "--script"])
        .arg(&script_path)
        .env("DISPLAY", &x.1)
        .env_remove("WAYLAND_DISPLAY")
        .env("TALUS_OFFSCREEN", "1")
        .env("TALUS_CONFIG_DIR", d.join("config"))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "({:?})\n{log}", out.status);
    assert!(log.contains("off-screen rendering"), "{log}");
    let img = image::open(&shot).expect("screenshot").to_rgb8();
    assert_eq!(img.dimensions(), (320, 200));
    // The panel (dark grey, on the left) and the lit terrain or sky (on the right) both drawn.
    let luma = |x: u32, y: u32| {
        let p = img.get_pixel(x, y);
        (p[0] as u32 + p[1] as u32 + p[2] as u32) / 3
    };
    let distinct: std::collections::BTreeSet<u32> =
        (0..200).step_by(10).flat_map(|y| (0..320).step_by(10).map(move |x| (x, y))).map(|(x, y)| luma(x, y)).collect();
    assert!(distinct.len() > 20, "a uniform frame: {distinct:?}");
    assert!(luma(5, 100) > 0 && luma(300, 100) > 0, "black where the panel and the view should be");
}

/// The Generator section holds the document (#35, item 2), through the real window: a project
/// whose base is a 257² generator at 8 m cells, seed 23, with a sculpt layer, made here with the
/// library, is opened in a session whose panel shows the start map's generator (513², 2 m, seed
/// 1). After Open the panel's generator is the project's; the panel's Generate button, clicked
/// with nothing changed, gives the same land bit for bit with the layer kept and no undo step;
/// a script's Generate of seed 24 shows seed 24, Undo brings back the project's parameters and
/// Redo seed 24's. The panel's parameters are read from the script's view report, which writes
/// what the Generator section shows and sends.
#[test]
fn scripted_session_shows_the_opened_projects_generator_and_regenerates_it_bit_for_bit() {
    use talus::core::generate::island_filter::SeaLevelParams;
    use talus::core::generate::{GenerateParams, generate};
    use talus::editor::layers::{BaseSource, LayerKind, LayerStack};
    use talus::editor::project::{self, ProjectView};

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let params = GenerateParams {
        width: 257,
        height: 257,
        cell_size: 8.0,
        seed: 23,
        sea_level: Some(SeaLevelParams { level: 0.0, coverage: Some(0.4), ..Default::default() }),
        ..Default::default()
    };
    let map = generate(&params).unwrap();
    let mut stack = LayerStack::new(&map, BaseSource::Generator(params.clone()));
    let i = stack.top_sculpt();
    let mut raised = map.clone();
    for y in 100..140 {
        for x in 60..90 {
            raised.data[y * 257 + x] += 7.5;
        }
    }
    stack.add_edit(i, &map, &raised);
    project::save(&d.join("island.talus"), &stack, &ProjectView::default()).unwrap();
    let seed24 = GenerateParams { seed: 24, ..params.clone() };

    let report = |k: usize| format!("ViewReport(path: \"{}\", since: None)", d.join(format!("r{k}.json")).display());
    let script = format!(
        r#"[
    {look}WaitFrames(2),
    {r0},
    Open("{project}"),
    {r1},
    Save("{opened}"),
    ClickButton("Generate"),
    WaitFrames(4),
    WaitGeneration,
    WaitFrames(2),
    {r2},
    Save("{regenerated}"),
    Save("{regenerated_project}"),
    Generate({seed24}),
    WaitFrames(2),
    WaitGeneration,
    WaitFrames(2),
    {r3},
    Undo,
    WaitFrames(2),
    {r4},
    Redo,
    WaitFrames(2),
    {r5},
    Quit,
]"#,
        look = common::xvfb::light_look(),
        project = d.join("island.talus").display(),
        opened = d.join("opened.bhef").display(),
        regenerated = d.join("regenerated.bhef").display(),
        regenerated_project = d.join("regenerated.talus").display(),
        seed24 = ron::to_string(&seed24).unwrap(),
        r0 = report(0),
        r1 = report(1),
        r2 = report(2),
        r3 = report(3),
        r4 = report(4),
        r5 = report(5),
    );
    run_script(d, "panel.ron", &script);

    let r = |k: usize| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join(format!("r{k}.json"))).unwrap()).unwrap()
    };
    let json = |p: &GenerateParams| serde_json::to_value(p).unwrap();
    let (r0, r1, r2) = (r(0), r(1), r(2));
    // Before Open the panel shows another generator, so following the project is a change.
    assert_ne!(r0["generator"], json(&params), "the start panel already shows the project");
    // After Open: the project's generator, in the panel and as the document's base.
    assert_eq!(r1["generator"], json(&params), "after Open the panel shows {}", r1["generator"]);
    assert_eq!(r1["base"]["generator"], json(&params));
    // The Generate button is in the window (the click lands on it).
    let b = &r1["buttons"]["Generate"];
    let (w, h) = (r1["window"]["logical"][0].as_f64().unwrap(), r1["window"]["logical"][1].as_f64().unwrap());
    let (cx, cy) = (
        (b[0].as_f64().unwrap() + b[2].as_f64().unwrap()) / 2.0,
        (b[1].as_f64().unwrap() + b[3].as_f64().unwrap()) / 2.0,
    );
    assert!(
        cx > 0.0 && cx < w && cy > 0.0 && cy < h,
        "the Generate button at ({cx}, {cy}) is outside the {w}×{h} window"
    );

    // Generate with nothing changed: it ran, the land is the same bit for bit, the layer stays,
    // and nothing was recorded.
    assert_eq!(r2["generations"].as_u64().unwrap(), r1["generations"].as_u64().unwrap() + 1, "{}", r2["status"]);
    assert!(r2["status"].as_str().unwrap().contains("nothing changed"), "{}", r2["status"]);
    assert_eq!(
        (&r2["undo"], &r2["map"]["revision"]),
        (&r1["undo"], &r1["map"]["revision"]),
        "Generate recorded a step"
    );
    assert_eq!(r2["generator"], json(&params));
    let bits = |m: &Heightmap| m.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let opened = load(&d.join("opened.bhef"));
    assert!(bits(&opened) == bits(&stack.compose()), "the opened project is not the saved one");
    assert!(bits(&load(&d.join("regenerated.bhef"))) == bits(&opened), "Generate with nothing changed moved the land");
    let back = project::load(&d.join("regenerated.talus")).unwrap().stack;
    assert_eq!(back.base.source, BaseSource::Generator(params.clone()));
    assert!(back.base.heights.to_dense().iter().map(|v| v.to_bits()).eq(map.data.iter().map(|v| v.to_bits())));
    assert_eq!(back.layers().len(), 1);
    let (LayerKind::Sculpt(a), LayerKind::Sculpt(b)) = (&back.layers()[0].kind, &stack.layers()[0].kind) else {
        panic!("the sculpt layer is gone")
    };
    assert!(a.to_dense().iter().map(|v| v.to_bits()).eq(b.to_dense().iter().map(|v| v.to_bits())));

    // A script's Generate, then Undo and Redo of it: the panel follows each.
    assert_eq!(r(3)["generator"], json(&seed24), "after Generate the panel shows {}", r(3)["generator"]);
    assert_eq!(r(4)["generator"], json(&params), "after Undo the panel shows {}", r(4)["generator"]);
    assert_eq!(r(5)["generator"], json(&seed24), "after Redo the panel shows {}", r(5)["generator"]);
}

/// A BHEF from another tool records no cell size: File ▸ Open asks for one before opening it.
/// The script answers as a user does (clicks the field, selects its text, types 8, clicks Open),
/// and the opened map is the file's heights 8 m apart: a 129² file becomes a 1.02 km world, where
/// it used to open as 128 m. File ▸ Import of a PNG without its sidecar asks the same, and what
/// its 16-bit heights stand for. The question's screenshot goes to `TALUS_SHOT_DIR` when it is set.
#[test]
fn opening_a_bhef_without_a_cell_size_asks_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hm = Heightmap::from_fn(129, 129, 1.0, |x, y| 10.0 + 0.2 * x as f32 + 0.1 * y as f32).unwrap();
    let file = d.join("other-tool.bhef");
    bhef::save_atomic(&file, &hm).unwrap();
    assert!(!d.join("other-tool.bhef.json").exists(), "a plain BHEF has no sidecar");
    // A 16-bit PNG as another tool writes it: no sidecar.
    let png = d.join("other-tool.png");
    talus::core::io::interop::save(&png, &hm, &Default::default()).unwrap();
    std::fs::remove_file(d.join("other-tool.png.json")).unwrap();
    let script = format!(
        r#"[
    {look}WaitFrames(2),
    Open("{file}"),
    WaitFrames(3),
    Screenshot("{shot}"),
    ClickButton("Cell size: metres"),
    Keys("Ctrl+A"),
    Keys("8"),
    WaitFrames(2),
    ClickButton("Cell size: Open"),
    WaitFrames(4),
    Save("{project}"),
    Import("{png}"),
    WaitFrames(3),
    Screenshot("{shot2}"),
    ClickButton("Cell size: metres"),
    Keys("Ctrl+A"),
    Keys("4"),
    Keys("."),
    Keys("5"),
    ClickButton("Cell size: highest"),
    Keys("Ctrl+A"),
    Keys("8"),
    Keys("0"),
    Keys("0"),
    WaitFrames(2),
    ClickButton("Cell size: Open"),
    WaitFrames(4),
    Save("{imported}"),
    Quit,
]"#,
        look = common::xvfb::light_look(),
        file = file.display(),
        shot = d.join("cell-size.png").display(),
        project = d.join("opened.talus").display(),
        png = png.display(),
        shot2 = d.join("import-cell-size.png").display(),
        imported = d.join("imported.talus").display(),
    );
    run_script(d, "cell-size.ron", &script);
    if let Ok(shots) = std::env::var("TALUS_SHOT_DIR") {
        let _ = std::fs::copy(d.join("cell-size.png"), Path::new(&shots).join("open-bhef-cell-size.png"));
        let _ = std::fs::copy(d.join("import-cell-size.png"), Path::new(&shots).join("import-png-cell-size.png"));
    }
    let p = talus::editor::project::load(&d.join("opened.talus")).expect("the opened map saves as a project");
    assert_eq!((p.stack.width(), p.stack.cell_size()), (129, 8.0), "the answer is the map's cell size");
    assert!(p.stack.compose().data == hm.data, "the file's heights, unchanged");
    // File ▸ Import of the PNG asks too (typed "4.5"), and what its 16-bit heights stand for
    // (0 stays 0 m, full scale typed as 800 m): the file's lowest node reads 0 m, its highest 800.
    let p = talus::editor::project::load(&d.join("imported.talus")).expect("the import saves as a project");
    assert_eq!((p.stack.width(), p.stack.cell_size()), (129, 4.5));
    let (lo, hi) = p.stack.compose().min_max();
    assert!(lo.abs() < 1e-3 && (hi - 800.0).abs() < 1e-3, "imported heights {lo} … {hi} m");
}
