//! Scripts that drive the real editor window (`talus editor --script actions.ron`), so the window
//! can be tested unattended: under Xvfb in CI, or on a desk to reproduce a session.
//!
//! A script is a RON list of [`Action`]s run in order, one or more frames each. The editor turns
//! every action into what a user's input produces: `Generate`/`Simulate`/`Save` send the commands
//! the panel's buttons send, and the pointer actions (`Stroke`, `MouseMove`, `Button`, `Drag`,
//! `Click`, `ClickButton`, `Wheel`, `Keys`) write Bevy's own window input messages (cursor moved,
//! mouse button, wheel, keyboard) into the app, as winit does for a real mouse and keyboard, so
//! the editor's input systems, egui included, turn them into the pointer exactly as for a person.
//! `Stroke` points are grid nodes, projected to the window through the current camera.
//!
//! `Build` presses the Build… dialog's Build button with the settings it gives (the same command
//! the button sends) and `WaitBuild` waits for the file; `OpenBuildDialog` opens the dialog for a
//! screenshot. `Loupe` shows the build's loupe of a spot (as a pick on the terrain does) and waits
//! for it; `WaitLoupe` waits for one picked with the mouse.
//!
//! `WaitFile` and `ViewReport` let an outside driver (a test moving the real X pointer with XTest)
//! step in lockstep with the editor and read back what it saw.
//!
//! ```ron
//! [
//!     Generate((width: 257, height: 257, seed: 7)),
//!     Stroke(tool: Raise, radius: 40.0, strength: 20.0, points: [(60.0, 60.0), (120.0, 90.0)], seconds: 1.0),
//!     Simulate(model: Droplet((droplets_per_km2: 50000)), seed: 1),
//!     WaitSimulation,
//!     Save("out.bhef"),
//!     Screenshot("shot.png"),
//!     FrameReport("frames.json"),
//!     Quit,
//! ]
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::brush::BrushKind;
use crate::core::erosion::ModelParams;
use crate::core::generate::GenerateParams;

/// One step of a script.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Action {
    /// Generate a terrain (fields not given take their defaults), as the Generate button does.
    Generate(GenerateParams),
    /// Open a project (.talus) or BHEF file.
    Open(PathBuf),
    /// Import a heightmap in another format (as File ▸ Import does).
    Import(PathBuf),
    /// Export to another format, chosen by the extension (as File ▸ Export does).
    Export(PathBuf),
    /// Paint a stroke through `points` (grid nodes `(x, y)`), taking `seconds` of brush time.
    Stroke {
        /// The brush to paint with (raise, lower, smooth…).
        tool: BrushKind,
        /// Radius, metres.
        radius: f32,
        /// Strength, metres per second at the centre (raise/lower), fraction per second otherwise.
        strength: f32,
        /// The stroke's path, grid nodes `(x, y)` (fractions allowed); every point must be in the view.
        points: Vec<(f32, f32)>,
        /// Time from press to release, seconds of wall clock (0: the whole path at once).
        seconds: f32,
    },
    /// Choose this model in the Erosion section and press Simulate, as a user does.
    Simulate {
        /// The erosion model and its parameters.
        model: ModelParams,
        /// Seed for every random choice of the model.
        seed: u64,
    },
    /// Wait until the running simulation ends.
    WaitSimulation,
    /// Pause or resume the running simulation.
    Pause(bool),
    /// Cancel the running simulation.
    Cancel,
    /// Undo the last step.
    Undo,
    /// Redo.
    Redo,
    /// Save to this path (Save As): a project for `.talus`, else the flattened terrain as BHEF.
    Save(PathBuf),
    /// Change the layer stack or where strokes go, as the Layers section does (layers by id:
    /// 1, 2, … in the order they were made).
    Layer(crate::editor::document::LayerOp),
    /// Turn "Auto re-simulate" on or off.
    AutoResimulate(bool),
    /// Press Re-simulate (stale layers re-run in the background).
    Resimulate,
    /// Wait until no erosion layer is stale and no re-run is in flight.
    WaitResimulation,
    /// Choose the erosion brush for the left button (`false`: the height brush again), as the
    /// Brush section's "Erode" does.
    ErosionBrush(bool),
    /// Wait until the erosion brush's last dab has landed (after a drag with it).
    WaitDabs,
    /// Press "Continue from here" under erosion layer `id` (the run goes on from the timeline
    /// frame the layer shows; scrub it with `Layer(Scrub(id, frame))`). Waits for it to start.
    Continue(u64),
    /// Open the Build… dialog (File ▸ Build…), as for a screenshot of it.
    OpenBuildDialog,
    /// Press Build in the Build… dialog with this request (the dialog opens showing it): build
    /// the project in the background, e.g. `Build((size: 2049, target: File((path: "big.bhef"))))`,
    /// `Build((size: 1025, erosion: Rerun, target: File((path: "b.png", unreal_range: true))))` or
    /// a tile set, `Build((size: 1025, target: Tiles((engine: unity, tiles: 2, dir: "set", maps:
    /// [flow, splat]))))` (also `format: r16`, `name: "island"`, `replace: true`); the fields are
    /// those of [`crate::editor::build::BuildRequest`]. Waits for the build to start; a refused
    /// build fails the script.
    Build(crate::editor::build::BuildRequest),
    /// Wait until the running build ends; the script fails if the build failed.
    WaitBuild,
    /// Show the build's loupe of a square around a spot, as a pick on the terrain does: the
    /// Build… dialog opens and its settings make the build shown (`size` and `erosion` set them
    /// first), e.g. `Loupe((centre: (600.0, 420.0), side: 256.0))` (metres from the map's first
    /// node; the side defaults to 256 m) or `Loupe((centre: (300.0, 300.0), size: 2049, erosion:
    /// Upsample))`. Waits for the loupe to end; a loupe that fails fails the script.
    Loupe(crate::editor::build::loupe_view::LoupeRequest),
    /// Wait until the loupe running ends (after a pick with the mouse); the script fails if it
    /// failed.
    WaitLoupe,
    /// Save a frame of the window to a PNG.
    Screenshot(PathBuf),
    /// Let this many frames pass.
    WaitFrames(u32),
    /// Set how the terrain is drawn, as the panel's look sections do (fields not given take
    /// their defaults). Boxed, being by far the largest action; the RON is the same as unboxed.
    Look(Box<crate::editor::look::LookParams>),
    /// Place the orbit camera: `yaw` around +Y and `pitch` above the horizon (radians), at
    /// `zoom` times the distance that frames the whole map from that angle in the current view,
    /// looking at the map's centre.
    Camera {
        /// Angle around +Y, radians.
        yaw: f32,
        /// Angle above the horizon, radians, clamped to `0.03 ..= 1.55`.
        pitch: f32,
        /// Multiple of the framing distance (> 1: farther); not positive or not finite reads as 1.
        zoom: f32,
    },
    /// Write frame times so far (idle vs simulating) as JSON.
    FrameReport(PathBuf),
    /// Close the window (unsaved work is autosaved first).
    Quit,
    /// Move the virtual mouse to a window position (logical pixels, origin top-left).
    MouseMove(f32, f32),
    /// Press (`true`) or release a virtual mouse button where the virtual mouse is.
    Button(MouseKey, bool),
    /// Move to `(x, y)` (window logical pixels), press and release the left button.
    Click(f32, f32),
    /// Click the middle of a panel button by name: "Generate", "Simulate" or "Cancel".
    ClickButton(String),
    /// Hold `button` and move through `points` (window logical pixels) over `seconds`.
    Drag {
        /// The button held down.
        button: MouseKey,
        /// The path, window logical pixels (origin top-left); at least one point.
        points: Vec<(f32, f32)>,
        /// Time from press to release, seconds of wall clock (0: the whole path at once).
        seconds: f32,
    },
    /// Turn the mouse wheel by this many lines (positive = away from the user: zoom in).
    Wheel(f32),
    /// Press and release a key chord such as "Ctrl+Z", "Ctrl+Shift+Z", "[" or "]".
    Keys(String),
    /// Wait until no generation runs or waits (after a click on Generate, say).
    WaitGeneration,
    /// Wait until this file exists (an outside driver's signal); the script's timeout applies.
    WaitFile(PathBuf),
    /// Write what the editor sees as JSON (window, viewport, panel, pointer, brush ring, camera,
    /// buttons, counters, the Generator section's parameters and the document's base) to `path`; with `since`, also every node whose height differs from that
    /// BHEF file, with its window position.
    ViewReport {
        /// The JSON file to write (replaced atomically).
        path: PathBuf,
        /// A BHEF file to compare the current heights with.
        since: Option<PathBuf>,
    },
}

/// A mouse button a script can press.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MouseKey {
    /// The primary button: paints, clicks panel buttons.
    Left,
    /// The secondary button.
    Right,
    /// The middle button (the wheel pressed).
    Middle,
}

/// One key of a chord: a modifier or a key with the text it types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChordKey {
    /// The Control modifier (`Ctrl`, `Control`).
    Ctrl,
    /// The Shift modifier.
    Shift,
    /// The Alt modifier.
    Alt,
    /// A printable key, by the character it types unshifted (`'z'`, `'['`, `'1'`).
    Char(char),
    /// The Escape key (`Esc`, `Escape`).
    Escape,
    /// The Delete key (`Del`, `Delete`).
    Delete,
}

/// Parses a chord like "Ctrl+Shift+Z" (case-insensitive names; `+` separates, a lone "+" is the
/// plus key). Letters, digits and `[ ] - = , . / ;` are accepted as keys.
pub fn parse_chord(text: &str) -> Result<Vec<ChordKey>, String> {
    let parts: Vec<&str> = if text == "+" { vec!["+"] } else { text.split('+').map(str::trim).collect() };
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("key chord {text:?} has an empty part"));
    }
    parts
        .iter()
        .map(|p| match p.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => Ok(ChordKey::Ctrl),
            "shift" => Ok(ChordKey::Shift),
            "alt" => Ok(ChordKey::Alt),
            "esc" | "escape" => Ok(ChordKey::Escape),
            "del" | "delete" => Ok(ChordKey::Delete),
            k if k.chars().count() == 1 => {
                let c = k.chars().next().unwrap_or(' ');
                if c.is_ascii_alphanumeric() || "[]-=,./;".contains(c) {
                    Ok(ChordKey::Char(c))
                } else {
                    Err(format!("key {c:?} in {text:?} is not one a script can press"))
                }
            }
            other => Err(format!("unknown key {other:?} in {text:?}")),
        })
        .collect()
}

/// Reads a script file.
pub fn load(path: &Path) -> Result<Vec<Action>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read script {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("script {}: {e}", path.display()))
}

/// Parses a script's text.
pub fn parse(text: &str) -> Result<Vec<Action>, String> {
    // An option may be written without `Some` (`size: 1025`).
    let ron = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let mut actions: Vec<Action> = ron.from_str(text).map_err(|e| e.to_string())?;
    for a in &mut actions {
        if let Action::Generate(g) = a {
            // Version-1 values (grid units) are read with the generator's own cell size.
            g.upgrade_units();
        }
    }
    Ok(actions)
}

/// Frame-time statistics of one phase, milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameStats {
    /// Frames measured; all the times are 0 when there are none.
    pub frames: usize,
    /// Mean frame time, milliseconds.
    pub mean_ms: f64,
    /// Median frame time (nearest rank), milliseconds.
    pub median_ms: f64,
    /// 95th-percentile frame time (nearest rank), milliseconds.
    pub p95_ms: f64,
    /// Longest frame, milliseconds.
    pub max_ms: f64,
}

impl FrameStats {
    /// Statistics of `ms` (frame durations in milliseconds).
    pub fn of(ms: &[f64]) -> Self {
        if ms.is_empty() {
            return Self::default();
        }
        let mut v = ms.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
        Self {
            frames: v.len(),
            mean_ms: v.iter().sum::<f64>() / v.len() as f64,
            median_ms: q(0.5),
            p95_ms: q(0.95),
            max_ms: v[v.len() - 1],
        }
    }
}

/// The frame-time report a script writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameReport {
    /// Frames with no simulation running.
    pub idle: FrameStats,
    /// Frames while a simulation streamed updates into the mesh.
    pub simulating: FrameStats,
    /// Simulation updates shown in the mesh.
    pub updates_shown: usize,
    /// The simulating frames within [`SWAP_FRAMES`] of a frame that put new chunk meshes in the
    /// view: their upload and the chunks' new pipelines land in these.
    #[serde(default)]
    pub simulating_after_meshes: FrameStats,
    /// The simulating frames within [`SWAP_FRAMES`] of a new data texture, and of no new meshes.
    #[serde(default)]
    pub simulating_after_texels: FrameStats,
    /// The other simulating frames: what streaming costs a frame that shows nothing new.
    #[serde(default)]
    pub simulating_other: FrameStats,
}

/// One frame as a script records it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameSample {
    /// The frame's duration, milliseconds.
    pub ms: f64,
    /// Whether a simulation was running.
    pub simulating: bool,
    /// Frames so far that put new chunk meshes in the view (a running count).
    pub meshes_shown: u64,
    /// Frames so far that put a new data texture in the view (a running count).
    pub texels_shown: u64,
}

/// How many frames after a swap its cost may land in. A frame's duration is measured from the
/// start of the one before; with pipelined rendering the render world draws (and uploads) a
/// frame while the next one updates, and the counts are read in an arbitrary order against the
/// systems that swap. A frame is attributed to a swap when a count moved within this many frames.
pub const SWAP_FRAMES: usize = 3;

/// Frames left out of a report: the first ones compile pipelines and upload the map.
pub const WARMUP_FRAMES: usize = 30;

impl FrameReport {
    /// The report of `frames` (in order, from the first), with `updates_shown` simulation updates.
    pub fn of(frames: &[FrameSample], updates_shown: usize) -> Self {
        let moved = |i: usize, count: fn(&FrameSample) -> u64| {
            let back = i.saturating_sub(SWAP_FRAMES);
            count(&frames[i]) != count(&frames[back])
        };
        let (mut idle, mut sim, mut meshes, mut texels, mut other) = (vec![], vec![], vec![], vec![], vec![]);
        for (i, f) in frames.iter().enumerate().skip(WARMUP_FRAMES) {
            if !f.simulating {
                idle.push(f.ms);
                continue;
            }
            sim.push(f.ms);
            if moved(i, |f| f.meshes_shown) {
                meshes.push(f.ms);
            } else if moved(i, |f| f.texels_shown) {
                texels.push(f.ms);
            } else {
                other.push(f.ms);
            }
        }
        FrameReport {
            idle: FrameStats::of(&idle),
            simulating: FrameStats::of(&sim),
            updates_shown,
            simulating_after_meshes: FrameStats::of(&meshes),
            simulating_after_texels: FrameStats::of(&texels),
            simulating_other: FrameStats::of(&other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_report_attributes_slow_frames_to_what_was_swapped_in() {
        // 30 warm-up frames, 10 idle, then 20 simulating: meshes swapped in after frame 45, a
        // texture after frame 55.
        let frames: Vec<FrameSample> = (0..60)
            .map(|i| FrameSample {
                ms: if (46..=48).contains(&i) {
                    300.0
                } else if (56..=58).contains(&i) {
                    50.0
                } else {
                    10.0
                },
                simulating: i >= 40,
                meshes_shown: u64::from(i > 45),
                texels_shown: u64::from(i > 55),
            })
            .collect();
        let r = FrameReport::of(&frames, 2);
        assert_eq!((r.idle.frames, r.simulating.frames, r.updates_shown), (10, 20, 2));
        assert_eq!((r.simulating_after_meshes.frames, r.simulating_after_meshes.median_ms), (3, 300.0));
        assert_eq!((r.simulating_after_texels.frames, r.simulating_after_texels.median_ms), (3, 50.0));
        assert_eq!((r.simulating_other.frames, r.simulating_other.max_ms), (14, 10.0));
        // A report of an older binary (no breakdown) still reads.
        let old: FrameReport =
            serde_json::from_str(r#"{"idle":{"frames":1,"mean_ms":1,"median_ms":1,"p95_ms":1,"max_ms":1},"simulating":{"frames":0,"mean_ms":0,"median_ms":0,"p95_ms":0,"max_ms":0},"updates_shown":0}"#)
                .unwrap();
        assert_eq!(old.simulating_other, FrameStats::default());
    }

    #[test]
    fn the_documented_example_parses() {
        let doc = include_str!("script.rs");
        let start = doc.find("//! ```ron").unwrap() + "//! ```ron".len();
        let end = start + doc[start..].find("//! ```").unwrap();
        let text: String =
            doc[start..end].lines().map(|l| l.trim_start().trim_start_matches("//!")).collect::<Vec<_>>().join("\n");
        let actions = parse(&text).unwrap();
        assert_eq!(actions.len(), 8);
        let Action::Generate(g) = &actions[0] else { panic!() };
        assert_eq!((g.width, g.seed), (257, 7));
        assert!(
            matches!(&actions[2], Action::Simulate { model: ModelParams::Droplet(d), .. } if d.droplets_per_km2 == 50000.0)
        );
    }

    #[test]
    fn a_version_1_generate_is_read_in_world_units() {
        let actions = parse("[Generate((cell_size: 4.0, base: Hills((radius_min: 2.0, radius_max: 3.0))))]").unwrap();
        let Action::Generate(g) = &actions[0] else { panic!() };
        let crate::core::generate::Base::Hills(h) = &g.base else { panic!("{g:?}") };
        assert_eq!((h.radius_min_m, h.radius_max_m), (8.0, 12.0));
        assert!(!g.has_legacy_units());
    }

    #[test]
    fn shipped_scripts_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ron") {
                load(&p).unwrap();
                n += 1;
            }
        }
        assert!(n > 0);
    }

    #[test]
    fn a_bad_script_names_the_problem() {
        let e = parse("[Generate((width: 257)), Fly]").unwrap_err();
        assert!(e.contains("Fly"), "{e}");
    }

    #[test]
    fn chords_parse() {
        assert_eq!(parse_chord("Ctrl+Shift+Z").unwrap(), vec![ChordKey::Ctrl, ChordKey::Shift, ChordKey::Char('z')]);
        assert_eq!(parse_chord("]").unwrap(), vec![ChordKey::Char(']')]);
        assert_eq!(parse_chord("esc").unwrap(), vec![ChordKey::Escape]);
        assert!(parse_chord("Ctrl+").is_err());
        assert!(parse_chord("Hyper+Z").unwrap_err().contains("hyper"));
        assert!(parse_chord("Ctrl+@").is_err());
    }

    #[test]
    fn input_actions_parse() {
        let a = parse(r#"[MouseMove(10.0, 20.0), Button(Left, true), Drag(button: Middle, points: [(1.0, 2.0), (3.0, 4.0)], seconds: 0.5), Keys("Ctrl+Z"), Wheel(-2.0), ClickButton("Generate"), WaitFile("go"), ViewReport(path: "r.json", since: None)]"#).unwrap();
        assert_eq!(a.len(), 8);
        assert_eq!(a[1], Action::Button(MouseKey::Left, true));
    }

    #[test]
    fn build_actions_parse() {
        use crate::core::io::tiles::{Engine, MapKind, TileFormat};
        use crate::editor::build::{BuildRequest, ErosionBuild, FileTarget, Target, TileTarget};
        let a = parse(r#"[OpenBuildDialog, Build((size: 1025, erosion: Upsample, target: File((path: "b.bhef")))), Build((size: Some(2049), target: File((path: "c.exr")))), Build((size: 513, erosion: Rerun, target: File((path: "d.png", unreal_range: true)))), WaitBuild, Build((size: 1025, target: Tiles((engine: unity, tiles: 2, dir: "set", maps: [splat, flow])))), Build((size: 2017, target: Tiles((engine: unreal, tiles: 4, dir: "ue", format: r16, name: "isle", replace: true)))), Build((target: File((path: "flat.obj"))))]"#).unwrap();
        assert_eq!(a.len(), 8);
        let file = |size, path: &str, erosion, unreal_range| {
            Action::Build(BuildRequest {
                size: Some(size),
                erosion,
                target: Target::File(FileTarget { path: path.into(), unreal_range }),
                keep_input: false,
                refine: Default::default(),
            })
        };
        assert_eq!(a[1], file(1025, "b.bhef", ErosionBuild::Upsample, false));
        assert_eq!(a[2], file(2049, "c.exr", ErosionBuild::Refine, false), "refine is the default");
        assert_eq!(a[3], file(513, "d.png", ErosionBuild::Rerun, true));
        assert_eq!(a[4], Action::WaitBuild);
        let unity = TileTarget {
            engine: Engine::Unity,
            tiles: 2,
            format: None,
            maps: vec![MapKind::Splat, MapKind::Flow],
            dir: "set".into(),
            name: None,
            replace: false,
        };
        assert_eq!(
            a[5],
            Action::Build(BuildRequest {
                size: Some(1025),
                erosion: ErosionBuild::Refine,
                target: Target::Tiles(unity),
                keep_input: false,
                refine: Default::default()
            })
        );
        let Action::Build(BuildRequest { target: Target::Tiles(ue), .. }) = &a[6] else { panic!("{:?}", a[6]) };
        assert_eq!(
            (ue.engine, ue.tiles, ue.format, ue.name.as_deref(), ue.replace),
            (Engine::Unreal, 4, Some(TileFormat::R16), Some("isle"), true)
        );
        let Action::Build(flat) = &a[7] else { panic!("{:?}", a[7]) };
        let l = parse(
            r#"[Loupe((centre: (600.0, 420.5), side: 128.0)), Loupe((centre: (1.0, 2.0), size: 2049, erosion: Upsample)), WaitLoupe]"#,
        )
        .unwrap();
        use crate::editor::build::loupe_view::LoupeRequest;
        assert_eq!(l[0], Action::Loupe(LoupeRequest::at([600.0, 420.5], 128.0)));
        assert_eq!(
            l[1],
            Action::Loupe(LoupeRequest {
                centre: (1.0, 2.0),
                side: crate::editor::build::loupe::DEFAULT_SIDE_M,
                size: Some(2049),
                erosion: Some(ErosionBuild::Upsample)
            }),
            "the side defaults to the editor's"
        );
        assert_eq!(l[2], Action::WaitLoupe);
        assert_eq!(flat.size, None, "no size: the project's own, folded");
    }

    #[test]
    fn frame_stats() {
        let s = FrameStats::of(&[10.0, 20.0, 30.0, 40.0]);
        assert_eq!(s.frames, 4);
        assert_eq!(s.mean_ms, 25.0);
        assert_eq!(s.max_ms, 40.0);
        assert_eq!(FrameStats::of(&[]).frames, 0);
    }
}
