//! The editor driven by real input: the X pointer and keyboard moved with XTest (`xdotool`) under
//! a private Xvfb, as a person's mouse would, while the editor runs a script that only waits for
//! the test's signals (`WaitFile`), saves, and reports what it saw (`ViewReport`). Nothing in the
//! editor is set by the test: every effect comes through winit's events.
//!
//! Checks, with the panel at its default width, with the panel dragged 140 px wider (and, for the
//! ring, 80 px narrower than its default), after the window is resized (the viewport moves and
//! shrinks), and at a scale factor of 2:
//! - the hover ring is centred on the pointer (its centre projected with Bevy's
//!   `world_to_viewport`, and the ring's pixels in a screenshot);
//! - a left-button drag raises the terrain under the pointer's path: the changed nodes, projected
//!   back to the window with `world_to_viewport`, lie on the path;
//! - a drag that starts on the panel paints nothing;
//! - the panel's edge dragged wider moves the viewport, and painting stays under the pointer;
//! - the first minute: orbit (middle drag) and zoom (wheel); `[` / `]`, Ctrl+Z and Ctrl+Shift+Z
//!   as X key events (the window is given the input focus first: there is no window manager to
//!   do it); Generate, Simulate and Cancel clicked on the panel;
//! - File ▸ Build… clicked through to an engine tile set, and its loupe's spot picked with a click
//!   on the terrain (the loupe's centre is the point under the pointer; the click paints nothing);
//! - the cell-size question of a file that records none, answered by a click in its field,
//!   Ctrl+A, a typed "8" and a click on Open.
//!
//! Needs `Xvfb`, `xdotool` and a Vulkan driver (`.ci/deps` installs them); fails, rather than
//! skips, without them.

#![cfg(feature = "editor")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest wait for one report (lavapipe is slow, and the machine may be loaded).
const REPORT_TIMEOUT: Duration = Duration::from_secs(400);

/// An editor under a script of lockstep phases, and the X display it runs on.
struct Session {
    dir: PathBuf,
    display: String,
    child: Child,
    window: String,
    scale: f32,
    /// Top-left of the window on the X screen (physical pixels).
    origin: (i32, i32),
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Session {
    /// Starts the editor with `script` (RON text) on `display`.
    fn start(dir: &Path, display: &str, script: &str, scale: f32, window_size: &str) -> Session {
        // The pointer starts over the panel's corner, not over the terrain.
        // (The server may take a moment after its socket appears to accept clients.)
        let park = || {
            Command::new("xdotool")
                .args(["mousemove", "2", "2"])
                .env("DISPLAY", display)
                .output()
                .expect("xdotool is needed (Debian: xdotool; `.ci/deps` installs it)")
        };
        let mut parked = park();
        for _ in 0..40 {
            if parked.status.success() {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
            parked = park();
        }
        assert!(
            parked.status.success(),
            "xdotool could not move the pointer on {display}: {}",
            String::from_utf8_lossy(&parked.stderr)
        );
        let script_path = dir.join("session.ron");
        std::fs::write(&script_path, script).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_talus"));
        cmd.args(["editor", "--window-size", window_size, "--script"])
            .arg(&script_path)
            .env("DISPLAY", display)
            .env_remove("WAYLAND_DISPLAY")
            .env("TALUS_CONFIG_DIR", dir.join("config"))
            .stdout(Stdio::from(std::fs::File::create(dir.join("editor.log")).unwrap()))
            .stderr(Stdio::from(std::fs::File::create(dir.join("editor.err")).unwrap()));
        if scale != 1.0 {
            cmd.env("WINIT_X11_SCALE_FACTOR", scale.to_string());
        }
        let child = cmd.spawn().expect("start the editor");
        let mut s = Session {
            dir: dir.to_path_buf(),
            display: display.to_owned(),
            child,
            window: String::new(),
            scale,
            origin: (0, 0),
        };
        s.wait_file("r0.json");
        let ids = s.xdo_out(&["search", "--onlyvisible", "--name", "Talus"]);
        s.window = ids
            .split_whitespace()
            .last()
            .unwrap_or_else(|| panic!("no editor window found by xdotool: {ids:?}"))
            .to_owned();
        s.locate();
        s
    }

    /// Reads where the window is on the screen.
    fn locate(&mut self) {
        let geo = self.xdo_out(&["getwindowgeometry", "--shell", &self.window.clone()]);
        let get = |k: &str| -> i32 {
            geo.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {k} in {geo:?}"))
        };
        self.origin = (get("X"), get("Y"));
    }

    fn log(&self) -> String {
        let read = |n: &str| std::fs::read_to_string(self.dir.join(n)).unwrap_or_default();
        let err = read("editor.err");
        let tail: String =
            err.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
        format!("{}\n{tail}", read("editor.log"))
    }

    /// Waits for the editor to write `name` in the session folder.
    fn wait_file(&mut self, name: &str) -> PathBuf {
        let p = self.dir.join(name);
        let t = Instant::now();
        while !p.exists() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the editor exited ({status}) before writing {name}:\n{}", self.log());
            }
            assert!(t.elapsed() < REPORT_TIMEOUT, "no {name} after {REPORT_TIMEOUT:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        p
    }

    /// Lets the editor go on past `WaitFile("goK")`, then reads its report `rK.json`.
    fn step(&mut self, k: usize) -> Value {
        std::fs::write(self.dir.join(format!("go{k}")), b"").unwrap();
        let p = self.wait_file(&format!("r{k}.json"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn report(&mut self, k: usize) -> Value {
        let p = self.wait_file(&format!("r{k}.json"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn xdo_out(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool is needed (Debian: xdotool; `.ci/deps` installs it)");
        assert!(out.status.success(), "xdotool {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn xdo(&self, args: &[&str]) {
        self.xdo_out(args);
    }

    /// Screen pixel of window position `p` (logical pixels).
    fn screen(&self, p: (f32, f32)) -> (i32, i32) {
        (self.origin.0 + (p.0 * self.scale).round() as i32, self.origin.1 + (p.1 * self.scale).round() as i32)
    }

    /// Moves the real pointer to window position `p` (logical pixels).
    fn move_to(&self, p: (f32, f32)) {
        let (x, y) = self.screen(p);
        self.xdo(&["mousemove", &x.to_string(), &y.to_string()]);
    }

    /// Holds X button `button` (1 left, 2 middle, 3 right) from `a` to `b` in `steps` moves.
    fn drag(&self, button: u8, a: (f32, f32), b: (f32, f32), steps: usize) {
        self.move_to(a);
        std::thread::sleep(Duration::from_millis(150));
        self.xdo(&["mousedown", &button.to_string()]);
        std::thread::sleep(Duration::from_millis(150));
        self.moves_then_release(button, a, b, steps);
    }

    /// A left drag from `a` to `b` whose press egui sees in a frame of its own, at `a`, before
    /// the pointer moves (sync phases `k`, `k + 1`): with frames seconds apart, a press and the
    /// first moves would otherwise reach egui in one frame, hit-tested at the latest position.
    fn drag_synced(&mut self, a: (f32, f32), b: (f32, f32), steps: usize, k: usize) {
        self.move_to(a);
        self.sync(k);
        self.xdo(&["mousedown", "1"]);
        self.sync(k + 1);
        self.moves_then_release(1, a, b, steps);
    }

    /// The moves of a drag from `a` to `b` with the button held, then its release.
    fn moves_then_release(&self, button: u8, a: (f32, f32), b: (f32, f32), steps: usize) {
        for i in 1..=steps {
            let t = i as f32 / steps as f32;
            self.move_to((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
            std::thread::sleep(Duration::from_millis(40));
        }
        std::thread::sleep(Duration::from_millis(150));
        self.xdo(&["mouseup", &button.to_string()]);
        std::thread::sleep(Duration::from_millis(100));
    }

    /// Waits until the editor has drawn two frames after this point (sync phase `k`, see
    /// [`syncs`]). Frames take seconds under lavapipe on a loaded machine: where egui or Bevy must
    /// see the steps of a gesture in different frames (the button held before the pointer moves,
    /// a modifier held when the key comes), the test syncs between them instead of sleeping.
    fn sync(&mut self, k: usize) {
        self.step(k);
    }

    /// Drags the panel's right edge from `from` to `to` (window x, logical pixels) at height `y`,
    /// as a person would: the pointer rests on the edge, the button goes down, a first move of
    /// 16 px past egui's drag threshold, then the rest; each of those seen in its own frames
    /// (sync phases `k .. k + 4`).
    fn drag_panel_edge(&mut self, from: f32, to: f32, y: f32, k: usize) {
        let start = from - 1.0;
        let first = start + 16.0 * (to - from).signum();
        self.move_to((start, y));
        self.sync(k);
        self.xdo(&["mousedown", "1"]);
        self.sync(k + 1);
        self.move_to((first, y));
        self.sync(k + 2);
        for i in 1..=8 {
            self.move_to((first + (to - 1.0 - first) * i as f32 / 8.0, y));
            std::thread::sleep(Duration::from_millis(60));
        }
        self.sync(k + 3);
        self.xdo(&["mouseup", "1"]);
    }

    /// A left click on a panel widget: the pointer rests on it for two frames first (egui sees it
    /// hovered), then press and release (`k`: the sync phase).
    fn click_synced(&mut self, p: (f32, f32), k: usize) {
        self.move_to(p);
        self.sync(k);
        self.xdo(&["click", "1"]);
    }
}

fn f(v: &Value) -> f32 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) as f32
}

fn pair(v: &Value) -> (f32, f32) {
    (f(&v[0]), f(&v[1]))
}

/// The viewport's rectangle `[x0, y0, x1, y1]` from a report.
fn viewport(r: &Value) -> [f32; 4] {
    let v = &r["viewport"];
    [f(&v[0]), f(&v[1]), f(&v[2]), f(&v[3])]
}

/// A point `(u, v)` of the way across the viewport.
fn in_view(r: &Value, u: f32, v: f32) -> (f32, f32) {
    let [x0, y0, x1, y1] = viewport(r);
    (x0 + (x1 - x0) * u, y0 + (y1 - y0) * v)
}

fn dist(a: (f32, f32), b: (f32, f32)) -> f32 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Checks that the hover ring in report `r` is centred on the pointer at `p`; returns the offset.
fn check_ring(r: &Value, p: (f32, f32), what: &str) -> f32 {
    let cursor = pair(&r["cursor"]);
    assert!(dist(cursor, p) < 1.5, "{what}: the editor saw the pointer at {cursor:?}, XTest put it at {p:?}");
    assert!(!r["ring"].is_null(), "{what}: no brush ring under the pointer at {p:?}: {r}");
    let centre = pair(&r["ring"]["centre"]);
    let off = dist(centre, p);
    assert!(off <= 3.0, "{what}: the ring is centred at {centre:?}, {off:.1} px from the pointer at {p:?}");
    off
}

/// Checks that the nodes a drag from `a` to `b` changed (report `r`, `changed` since before the
/// drag) lie under the path; returns the dh-weighted mean offset from the path (pixels) and the
/// most the drag raised a node (metres).
fn check_stroke(r: &Value, a: (f32, f32), b: (f32, f32), what: &str) -> (f32, f32) {
    let changed = r["changed"].as_array().unwrap();
    assert!(!changed.is_empty(), "{what}: the drag from {a:?} to {b:?} changed nothing");
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    let max = changed.iter().map(|c| f(&c[2])).fold(0.0f32, f32::max);
    // How much a drag raises follows the brush time the frames give it (the press to the release
    // as the editor's frames saw them), and on a loaded machine under lavapipe those frames come
    // seconds apart: a vertical drag across foreshortened ground raised 0.54 m here and 0.48 m on
    // CI. So only a clearly real raise is asked for; where it landed is what the checks below test.
    assert!(max > 0.1, "{what}: the drag raised the terrain by only {max} m");
    let (mut w_sum, mut off_sum, mut along_sum, mut far) = (0.0f64, 0.0f64, 0.0f64, 0.0f32);
    let radius_px = f(&r["ring"]["radius_px"]).max(4.0);
    for c in changed {
        let dh = f(&c[2]);
        assert!(dh >= 0.0, "{what}: a raise drag lowered node {c}");
        let Some(pos) = c[3].as_array().map(|_| pair(&c[3])) else { continue };
        let t = (((pos.0 - a.0) * dx + (pos.1 - a.1) * dy) / (len * len)).clamp(0.0, 1.0);
        let near = (a.0 + t * dx, a.1 + t * dy);
        let d = dist(pos, near);
        let signed = ((pos.0 - a.0) * dy - (pos.1 - a.1) * dx) / len;
        if dh >= 0.5 * max {
            far = far.max(d);
        }
        w_sum += dh as f64;
        off_sum += (dh * signed) as f64;
        along_sum += (dh * t) as f64;
    }
    let offset = (off_sum / w_sum) as f32;
    let along = (along_sum / w_sum) as f32;
    assert!(offset.abs() <= 4.0, "{what}: the raised terrain lies {offset:.1} px off the pointer's path {a:?}→{b:?}");
    assert!(
        (0.3..=0.7).contains(&along),
        "{what}: the raised terrain is centred {along:.2} of the way along the path, not in its middle"
    );
    assert!(
        far <= radius_px * 1.3 + 4.0,
        "{what}: a node raised by half the most lies {far:.1} px from the path (brush radius {radius_px:.1} px)"
    );
    (offset, max)
}

/// Centroid of the pixels that turned near-white (the ring) between two screenshots, within
/// `reach` pixels of `p` (physical pixels).
fn ring_pixels_centre(before: &Path, after: &Path, p: (f32, f32), reach: f32) -> Option<((f32, f32), usize)> {
    let a = image::open(before).unwrap().to_rgb8();
    let b = image::open(after).unwrap().to_rgb8();
    let (mut sx, mut sy, mut n) = (0.0f64, 0.0f64, 0usize);
    for (x, y, px) in b.enumerate_pixels() {
        if dist((x as f32, y as f32), p) > reach || x >= a.width() || y >= a.height() {
            continue;
        }
        let q = a.get_pixel(x, y);
        // The ring is white before tonemapping: bright grey (about 197) in the frame.
        let (lo, hi) = (px.0.iter().copied().min().unwrap_or(0), px.0.iter().copied().max().unwrap_or(0));
        let white = lo >= 170 && hi - lo <= 25;
        let diff: i32 = px.0.iter().zip(q.0).map(|(&u, v)| (u as i32 - v as i32).abs()).sum();
        if white && diff > 90 {
            sx += x as f64;
            sy += y as f64;
            n += 1;
        }
    }
    (n > 20).then(|| (((sx / n as f64) as f32, (sy / n as f64) as f32), n))
}

/// The session folder: a temporary one, kept (and named on stderr) when `TALUS_TEST_KEEP` is set.
fn session_dir() -> (Option<tempfile::TempDir>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    if std::env::var_os("TALUS_TEST_KEEP").is_some() {
        let p = dir.keep();
        eprintln!("session folder kept: {}", p.display());
        (None, p)
    } else {
        let p = dir.path().to_path_buf();
        (Some(dir), p)
    }
}

/// Frames between a phase's go-file and its report: the X events of the step before it reach
/// winit at the next frame, and the report reads the editor's state, not the screen (a phase with
/// a screenshot waits for it to be saved).
const PHASE_FRAMES: u32 = 4;

/// What a session script starts with: the light look and the 257² island (see
/// `common::xvfb::light_look`), or nothing when the test is asked for its screenshots.
fn light_start() -> String {
    if common::xvfb::taking_screenshots() {
        return String::new();
    }
    // The camera then frames the whole square map, corners at sea included; these sessions'
    // pointer positions are fractions of the view that expect the island to fill it, so the
    // camera moves in to 0.68 of that distance (1.15 sides: the island's old framing), as a wheel
    // turn would.
    format!(
        "{}{}, WaitGeneration, Camera(yaw: 0.6, pitch: 0.65, zoom: 0.68), ",
        common::xvfb::light_look(),
        common::xvfb::SMALL_ISLAND
    )
}

/// A report after `go{k}` (the test's input), `frames` frames later, optionally with the nodes
/// changed since `since` and a screenshot.
fn phase(d: &Path, k: usize, frames: u32, since: Option<&str>, extra: &str) -> String {
    let since = since.map(|s| format!("Some(\"{}\")", d.join(s).display())).unwrap_or("None".into());
    format!(
        "WaitFile(\"{go}\"), WaitFrames({frames}), {extra} ViewReport(path: \"{r}\", since: {since}),\n",
        go = d.join(format!("go{k}")).display(),
        r = d.join(format!("r{k}.json")).display(),
    )
}

/// Sync phases `ks` (see [`Session::sync`]): each waits for its go-file and reports two frames
/// later.
fn syncs(d: &Path, ks: std::ops::Range<usize>) -> String {
    ks.map(|k| phase(d, k, 2, None, "")).collect()
}

fn save(d: &Path, name: &str) -> String {
    format!("Save(\"{}\"), ", d.join(name).display())
}

fn shot(d: &Path, name: &str) -> String {
    format!("Screenshot(\"{}\"), ", d.join(name).display())
}

#[test]
fn real_pointer_paints_under_itself_and_the_first_minute_works() {
    let (_dir, d) = session_dir();
    let d = d.as_path();
    let x = common::xvfb::display(1280, 720, 1);
    // Phases: 1 hover, 2 stroke, 3 a drag from the panel, 4 the panel dragged wider, 5 hover,
    // 6 stroke, 7 window resize, 8 hover, 9 stroke, 10 orbit + zoom, 11 brush radius keys,
    // 12 Ctrl+Z, 13 Ctrl+Shift+Z, 14 Generate, 15 Simulate, 16 Cancel, 17 the panel dragged
    // narrower, 18 hover; 100 and up: the frame
    // syncs inside a press, a key chord or a click (see `Session::sync`).
    // The frame without the pointer is taken before report 0, so before the pointer moves.
    let mut script = format!(
        "[{}WaitFrames(20), {}{}ViewReport(path: \"{}\", since: None),\n",
        light_start(),
        save(d, "s0.bhef"),
        shot(d, "none.png"),
        d.join("r0.json").display(),
    );
    script += &phase(d, 1, PHASE_FRAMES, None, &shot(d, "hover.png"));
    script += &phase(d, 2, PHASE_FRAMES, Some("s0.bhef"), &(save(d, "s2.bhef") + &shot(d, "stroke.png")));
    script += &syncs(d, 117..119);
    script += &phase(d, 3, PHASE_FRAMES, Some("s2.bhef"), "");
    script += &syncs(d, 100..104);
    script += &phase(d, 4, PHASE_FRAMES, Some("s2.bhef"), "");
    script += &phase(d, 5, PHASE_FRAMES, None, "");
    script += &phase(d, 6, PHASE_FRAMES, Some("s2.bhef"), &save(d, "s6.bhef"));
    script += &phase(d, 7, 8, None, "");
    script += &phase(d, 8, PHASE_FRAMES, None, "");
    script += &phase(d, 9, PHASE_FRAMES, Some("s6.bhef"), "");
    script += &phase(d, 10, PHASE_FRAMES, None, "");
    script += &syncs(d, 104..106);
    script += &phase(d, 11, 4, None, "");
    script += &syncs(d, 106..108);
    script += &phase(d, 12, 4, Some("s6.bhef"), "");
    script += &syncs(d, 108..110);
    script += &phase(d, 13, 4, Some("s6.bhef"), "");
    script += &syncs(d, 110..111);
    script += &phase(d, 14, 6, None, &format!("WaitGeneration, WaitFrames(4), {}", save(d, "s14.bhef")));
    script += &syncs(d, 111..112);
    script += &phase(d, 15, 4, None, "");
    script += &syncs(d, 112..113);
    script += &phase(d, 16, 4, None, "WaitSimulation, WaitFrames(2), ");
    script += &syncs(d, 113..117);
    script += &phase(d, 17, PHASE_FRAMES, None, "");
    script += &phase(d, 18, PHASE_FRAMES, None, "");
    script += "Quit]";
    let mut s = Session::start(d, &x.1, &script, 1.0, "1280x720");
    let r0 = s.report(0);
    let panel0 = f(&r0["panel_width"]);
    assert!(panel0 > 100.0, "the side panel is {panel0} px wide: {r0}");
    assert!(
        (viewport(&r0)[0] - panel0).abs() <= 1.0,
        "the viewport starts at {} but the panel is {panel0} wide",
        viewport(&r0)[0]
    );
    let mut figures = Vec::new();

    // 1–2: the panel at its default width.
    let p = in_view(&r0, 0.5, 0.5);
    s.move_to(p);
    let r1 = s.step(1);
    figures.push(format!("default panel ({panel0:.0} px): ring {:.2} px", check_ring(&r1, p, "default panel")));
    let reach = f(&r1["ring"]["radius_px"]) * 1.6 + 10.0;
    let (cx, cy) = (p.0, p.1);
    match ring_pixels_centre(&d.join("none.png"), &d.join("hover.png"), (cx, cy), reach) {
        Some((c, n)) => {
            let off = dist(c, (cx, cy));
            assert!(
                off <= 8.0,
                "the ring's pixels ({n}) are centred at {c:?}, {off:.1} px from the pointer at {:?}",
                (cx, cy)
            );
            figures.push(format!("ring pixels centred {off:.1} px from the pointer"));
        }
        None => panic!("no ring pixels near the pointer at {p:?} in hover.png"),
    }
    let (a, b) = ((p.0 - 70.0, p.1), (p.0 + 70.0, p.1));
    s.drag(1, a, b, 14);
    let r2 = s.step(2);
    let (off, top) = check_stroke(&r2, a, b, "default panel");
    figures.push(format!("stroke {off:.2} px off its path, raised {top:.2} m"));

    // 3: a drag that starts on the panel's top row and ends over the terrain paints nothing and
    // leaves the panel as it was. Its press is synced (117, 118): unsynced, under load, egui took
    // it as a grab of the panel's edge the first moves crossed (a CI run saw the panel resized to
    // the drag's end, 630 px).
    s.drag_synced((panel0 * 0.5, 6.0), (panel0 + 300.0, in_view(&r0, 0.0, 0.5).1), 14, 117);
    let r3 = s.step(3);
    let painted = r3["changed"].as_array().unwrap().len();
    assert_eq!(painted, 0, "a drag that started on the panel painted {painted} nodes");
    let panel3 = f(&r3["panel_width"]);
    assert!(
        (panel3 - panel0).abs() <= 1.0,
        "a drag that started inside the panel resized it from {panel0} to {panel3} px"
    );

    // 4: the panel's right edge dragged 140 px to the right: the viewport follows.
    let edge_y = in_view(&r0, 0.0, 0.7).1;
    s.drag_panel_edge(panel0, panel0 + 140.0, edge_y, 100);
    let r4 = s.step(4);
    let panel4 = f(&r4["panel_width"]);
    assert!(
        (panel4 - (panel0 + 140.0)).abs() <= 6.0,
        "dragging the panel's edge from {panel0} by 140 px left it {panel4} px wide"
    );
    assert!(
        (viewport(&r4)[0] - panel4).abs() <= 1.0,
        "the viewport starts at {} but the panel is {panel4} wide",
        viewport(&r4)[0]
    );
    let painted = r4["changed"].as_array().unwrap().len();
    assert_eq!(painted, 0, "dragging the panel's edge painted {painted} nodes");

    // 5–6: the wider panel, a diagonal stroke.
    let p = in_view(&r4, 0.35, 0.6);
    s.move_to(p);
    let r5 = s.step(5);
    figures.push(format!("panel dragged to {panel4:.0} px: ring {:.2} px", check_ring(&r5, p, "wider panel")));
    let (a, b) = ((p.0 - 50.0, p.1 - 30.0), (p.0 + 50.0, p.1 + 30.0));
    s.drag(1, a, b, 14);
    let r6 = s.step(6);
    let (off, top) = check_stroke(&r6, a, b, "wider panel");
    figures.push(format!("stroke {off:.2} px, raised {top:.2} m"));

    // 7–9: a smaller window.
    s.xdo(&["windowsize", &s.window.clone(), "1100", "640"]);
    std::thread::sleep(Duration::from_millis(300));
    let r7 = s.step(7);
    s.locate();
    assert_eq!(pair(&r7["window"]["logical"]), (1100.0, 640.0), "the window did not resize: {}", r7["window"]);
    assert!((viewport(&r7)[2] - 1100.0).abs() <= 1.0, "the viewport did not follow the resize: {:?}", viewport(&r7));
    let p = in_view(&r7, 0.55, 0.45);
    s.move_to(p);
    let r8 = s.step(8);
    figures.push(format!("resized 1100×640: ring {:.2} px", check_ring(&r8, p, "resized window")));
    let (a, b) = ((p.0, p.1 - 60.0), (p.0, p.1 + 60.0));
    s.drag(1, a, b, 14);
    let r9 = s.step(9);
    let (off, top) = check_stroke(&r9, a, b, "resized window");
    figures.push(format!("stroke {off:.2} px, raised {top:.2} m"));
    let stroke9 = r9["changed"].as_array().unwrap().len();

    // 10: orbit with the middle button, zoom with the wheel.
    let p = in_view(&r9, 0.5, 0.5);
    s.drag(2, p, (p.0 + 120.0, p.1 + 30.0), 10);
    s.move_to(p);
    for _ in 0..3 {
        s.xdo(&["click", "4"]);
        std::thread::sleep(Duration::from_millis(80));
    }
    let r10 = s.step(10);
    let (c9, c10) = (&r9["camera"], &r10["camera"]);
    assert!((f(&c10["yaw"]) - f(&c9["yaw"])).abs() > 0.2, "a middle drag did not orbit: {c9} → {c10}");
    assert!(f(&c10["distance"]) < f(&c9["distance"]) * 0.9, "the wheel did not zoom in: {c9} → {c10}");
    assert_eq!(r10["map"]["revision"], r9["map"]["revision"], "orbiting or zooming changed the map");

    // 11: `]` twice and `[` once, real X key events to the focused window: radius × 1.25.
    s.xdo(&["windowfocus", "--sync", &s.window.clone()]);
    let r_before = f(&r10["brush"]["radius"]);
    s.xdo(&["key", "bracketright"]);
    s.sync(104);
    s.xdo(&["key", "bracketright"]);
    s.sync(105);
    s.xdo(&["key", "bracketleft"]);
    let r11 = s.step(11);
    let r_after = f(&r11["brush"]["radius"]);
    assert!((r_after / r_before - 1.25).abs() < 1e-3, "] ] [ took the radius from {r_before} to {r_after}");

    // 12: Ctrl+Z takes the last stroke back (the map equals the one saved before it).
    s.xdo(&["keydown", "ctrl"]);
    s.sync(106);
    s.xdo(&["key", "z"]);
    s.sync(107);
    s.xdo(&["keyup", "ctrl"]);
    let r12 = s.step(12);
    assert_eq!(f(&r12["redo"]), f(&r11["redo"]) + 1.0, "Ctrl+Z undid nothing: {r11} → {r12}");
    let left = r12["changed"].as_array().unwrap().len();
    assert_eq!(left, 0, "after Ctrl+Z, {left} nodes still differ from the map before the last stroke");
    // 13: Ctrl+Shift+Z puts it back.
    s.xdo(&["keydown", "ctrl"]);
    s.xdo(&["keydown", "shift"]);
    s.sync(108);
    s.xdo(&["key", "z"]);
    s.sync(109);
    s.xdo(&["keyup", "shift"]);
    s.xdo(&["keyup", "ctrl"]);
    let r13 = s.step(13);
    assert_eq!(f(&r13["redo"]), f(&r11["redo"]), "Ctrl+Shift+Z redid nothing: {r12} → {r13}");
    let back = r13["changed"].as_array().unwrap().len();
    assert_eq!(
        back, stroke9,
        "after Ctrl+Shift+Z, {back} nodes differ from the map before the last stroke, not the stroke's {stroke9}"
    );

    // 14–16: click Generate, Simulate, and Cancel on the panel.
    let button = |r: &Value, name: &str| {
        let b = &r["buttons"][name];
        assert!(!b.is_null(), "no {name} button in {}", r["buttons"]);
        let c = ((f(&b[0]) + f(&b[2])) * 0.5, (f(&b[1]) + f(&b[3])) * 0.5);
        let (w, h) = pair(&r["window"]["logical"]);
        assert!(
            c.0 > 0.0 && c.0 < w && c.1 > 0.0 && c.1 < h,
            "the {name} button at {c:?} lies outside the {w}×{h} window"
        );
        c
    };
    let g = button(&r13, "Generate");
    s.click_synced(g, 110);
    let r14 = s.step(14);
    assert_eq!(
        f(&r14["generations"]),
        f(&r13["generations"]) + 1.0,
        "clicking Generate at {g:?} generated nothing: {}",
        r14["status"]
    );
    let sim = button(&r14, "Simulate");
    s.click_synced(sim, 111);
    let r15 = s.step(15);
    assert_eq!(
        f(&r15["simulations_started"]),
        f(&r14["simulations_started"]) + 1.0,
        "clicking Simulate at {sim:?} started nothing: {}",
        r15["status"]
    );
    if r15["simulating"].as_bool() == Some(true) {
        let c = button(&r15, "Cancel");
        s.click_synced(c, 112);
    } else {
        s.sync(112);
    }
    let r16 = s.step(16);
    assert_eq!(r16["simulating"].as_bool(), Some(false), "the simulation still runs: {}", r16["status"]);
    assert_eq!(
        f(&r16["undo"]),
        f(&r14["undo"]) + 1.0,
        "the simulation (finished or cancelled) is not one undo step: {r14} → {r16}"
    );
    assert_ne!(r16["map"]["revision"], r14["map"]["revision"], "the simulation changed nothing");

    // 17–18: the panel's edge dragged narrower than its default: the viewport follows and the
    // ring stays under the pointer.
    let panel16 = f(&r16["panel_width"]);
    let narrow = panel0 - 80.0;
    let edge_y = in_view(&r16, 0.0, 0.7).1;
    s.drag_panel_edge(panel16, narrow, edge_y, 113);
    let r17 = s.step(17);
    let panel17 = f(&r17["panel_width"]);
    assert!((panel17 - narrow).abs() <= 6.0, "dragging the panel's edge to {narrow} left it {panel17} px wide");
    assert!(
        (viewport(&r17)[0] - panel17).abs() <= 1.0,
        "the viewport starts at {} but the panel is {panel17} wide",
        viewport(&r17)[0]
    );
    let p = in_view(&r17, 0.3, 0.5);
    s.move_to(p);
    let r18 = s.step(18);
    figures.push(format!("panel dragged to {panel17:.0} px: ring {:.2} px", check_ring(&r18, p, "narrower panel")));

    let status = s.child.wait().unwrap();
    assert!(status.success(), "the editor's script failed ({status}):\n{}", s.log());
    if let Ok(out) = std::env::var("TALUS_INPUT_SHOTS") {
        for n in ["hover.png", "stroke.png"] {
            let _ = std::fs::copy(d.join(n), Path::new(&out).join(format!("real-input-{n}")));
        }
    }
    eprintln!("real input, scale 1: {}", figures.join("; "));
}

#[test]
fn real_pointer_paints_under_itself_at_scale_factor_2() {
    let (_dir, d) = session_dir();
    let d = d.as_path();
    let x = common::xvfb::display(1600, 900, 2);
    let mut script = format!(
        "[{}WaitFrames(20), {}ViewReport(path: \"{}\", since: None),\n",
        light_start(),
        save(d, "s0.bhef"),
        d.join("r0.json").display()
    );
    script += &phase(d, 1, PHASE_FRAMES, None, "");
    script += &phase(d, 2, PHASE_FRAMES, Some("s0.bhef"), "");
    script += "Quit]";
    let mut s = Session::start(d, &x.1, &script, 2.0, "800x450");
    let r0 = s.report(0);
    assert_eq!(f(&r0["window"]["scale_factor"]), 2.0, "WINIT_X11_SCALE_FACTOR=2 was not applied: {}", r0["window"]);
    let p = in_view(&r0, 0.5, 0.5);
    s.move_to(p);
    let r1 = s.step(1);
    let ring = check_ring(&r1, p, "scale factor 2");
    let (a, b) = ((p.0 - 40.0, p.1), (p.0 + 40.0, p.1));
    s.drag(1, a, b, 14);
    let r2 = s.step(2);
    let (off, top) = check_stroke(&r2, a, b, "scale factor 2");
    let status = s.child.wait().unwrap();
    assert!(status.success(), "the editor's script failed ({status}):\n{}", s.log());
    eprintln!("real input, scale 2: ring {ring:.2} px, stroke {off:.2} px, raised {top:.2} m");
}

/// The centre of panel or dialog widget `name` in report `r` (window logical pixels), checked to
/// lie inside the window.
fn widget(r: &Value, name: &str) -> (f32, f32) {
    let b = &r["buttons"][name];
    assert!(!b.is_null(), "no {name:?} widget in {}", r["buttons"]);
    let c = ((f(&b[0]) + f(&b[2])) * 0.5, (f(&b[1]) + f(&b[3])) * 0.5);
    let (w, h) = pair(&r["window"]["logical"]);
    assert!(c.0 > 0.0 && c.0 < w && c.1 > 0.0 && c.1 < h, "{name:?} at {c:?} lies outside the {w}×{h} window");
    c
}

/// File ▸ Build… as an engine tile set, every step a real click (#27): Build… on the panel, "Engine
/// tile set" (Unity, 2 tiles across, at 4× the preview's side, every map, a folder beside the
/// project), Unreal (its closest tiling, the folder renamed), Unity again (the same size back),
/// and Build. The folder then holds, byte for byte, what `talus build --tiles` writes from the
/// saved project.
#[test]
fn real_clicks_build_an_engine_tile_set_from_the_build_dialog() {
    let (_dir, d) = session_dir();
    let d = d.as_path();
    let x = common::xvfb::display(1280, 720, 3);
    let project = d.join("island.talus");
    // Phases: 1 Build… clicked, 2 Engine tile set, 3 Unreal, 4 Unity, 5 Build (and the build
    // ended); 120 and up: the frame syncs before each click.
    let mut script = format!(
        "[{}WaitGeneration, WaitFrames(10), Save(\"{}\"), WaitFrames(4), ViewReport(path: \"{}\", since: None),\n",
        light_start(),
        project.display(),
        d.join("r0.json").display(),
    );
    for k in 1..=4 {
        script += &syncs(d, 119 + k..120 + k);
        script += &phase(d, k, PHASE_FRAMES, None, "");
    }
    script += &syncs(d, 124..125);
    script += &phase(d, 5, PHASE_FRAMES, None, &format!("WaitBuild, WaitFrames(4), {}", shot(d, "tile-set.png")));
    script += "Quit]";
    let mut s = Session::start(d, &x.1, &script, 1.0, "1280x720");
    let r0 = s.report(0);
    let side = f(&r0["map"]["width"]) as usize;
    assert_eq!(r0["build"]["open"], false);

    s.click_synced(widget(&r0, "Build…"), 120);
    let r1 = s.step(1);
    assert_eq!(r1["build"]["open"], true, "clicking Build… opened no dialog: {}", r1["status"]);
    assert_eq!(r1["build"]["target"], "File");

    s.click_synced(widget(&r1, "Build: tile set"), 121);
    let r2 = s.step(2);
    let b2 = &r2["build"];
    assert_eq!(b2["target"], "TileSet", "clicking Engine tile set did not choose it: {b2}");
    let size = 4 * (side - 1) + 1;
    assert_eq!(
        (b2["engine"].as_str(), b2["tiles_x"].as_u64(), b2["size"].as_u64()),
        (Some("unity"), Some(2), Some(size as u64))
    );
    let folder = d.join(format!("island-unity-{size}"));
    assert_eq!(b2["destination"].as_str(), Some(folder.to_str().unwrap()), "the folder is not beside the project");

    s.click_synced(widget(&r2, "Build: Unreal"), 122);
    let r3 = s.step(3);
    let b3 = &r3["build"];
    assert_eq!(b3["engine"], "unreal", "clicking Unreal did not choose it: {b3}");
    let ue = b3["size"].as_u64().unwrap();
    assert!(talus::editor::build::UNREAL_SIZES.contains(&(ue as usize)), "Unreal's tiling is {ue} nodes across");
    assert!(b3["destination"].as_str().unwrap().ends_with(&format!("island-unreal-{ue}")), "{b3}");
    assert_eq!(b3["tiles_x"].as_u64(), Some(2), "Unreal's tiling does not keep two tiles across: {b3}");

    s.click_synced(widget(&r3, "Build: Unity"), 123);
    let r4 = s.step(4);
    let b4 = &r4["build"];
    assert_eq!(
        (b4["engine"].as_str(), b4["size"].as_u64(), b4["tiles_x"].as_u64()),
        (Some("unity"), Some(size as u64), Some(2)),
        "Unity again is not the first tiling: {b4}"
    );

    s.click_synced(widget(&r4, "Build: Build"), 124);
    let r5 = s.step(5);
    let b5 = &r5["build"];
    assert_eq!(
        b5["started"].as_u64(),
        r4["build"]["started"].as_u64().map(|n| n + 1),
        "clicking Build started nothing: {b5}"
    );
    assert_eq!(b5["finished"], b5["started"], "the build did not end: {b5}");
    assert!(b5["last_error"].is_null(), "the build failed: {b5}");
    assert!(r5["status"].as_str().unwrap_or("").starts_with("Built the tile set"), "status: {}", r5["status"]);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "the editor's script failed ({status}):\n{}", s.log());

    let tiles = 2usize;
    let args = ["--size", &size.to_string(), "--engine", "unity", "--tiles", "2", "--maps", "all"].map(String::from);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let n = common::sets::assert_same_as_cli(&project, &folder, &d.join("cli-set"), &args);
    let maps = talus::core::io::tiles::MAPS.len();
    assert_eq!(n, tiles * tiles * (1 + maps) + 1, "4 height tiles, {maps} maps of each, the manifest");
    if let Ok(out) = std::env::var("TALUS_INPUT_SHOTS") {
        let _ = std::fs::copy(d.join("tile-set.png"), Path::new(&out).join("build-tile-set.png"));
    }
}

/// The build loupe picked with the real pointer (#34, item 5): Build… clicked on the panel, "Pick a
/// spot" in the dialog's Loupe section (Esc disarms it; a second click arms it again), then a left
/// click on the terrain beside the dialog. The loupe's centre is the terrain point under that pixel
/// (the hover ring's point there, and projected back into the window with Bevy's
/// `world_to_viewport` it lands on the pixel); its build window is what the dialog's build (4× the
/// 257² island's side) gives a 256 m square, 257² nodes of 1 m; and the click painted nothing.
#[test]
fn real_clicks_pick_a_spot_for_the_build_loupe() {
    let (_dir, d) = session_dir();
    let d = d.as_path();
    let x = common::xvfb::display(1280, 720, 4);
    // Phases: 1 Build… clicked, 2 Pick a spot clicked, 3 Esc, 4 Pick a spot again, 5 the pointer
    // over the terrain, 6 the click (and the loupe ended); 130 and up: the frame syncs.
    let mut script = format!(
        "[{}WaitFrames(10), ViewReport(path: \"{}\", since: None),\n",
        light_start(),
        d.join("r0.json").display(),
    );
    script += &syncs(d, 130..131);
    script += &phase(d, 1, PHASE_FRAMES, None, "");
    script += &syncs(d, 131..132);
    script += &phase(d, 2, PHASE_FRAMES, None, "");
    script += &phase(d, 3, PHASE_FRAMES, None, "");
    script += &syncs(d, 132..133);
    script += &phase(d, 4, PHASE_FRAMES, None, "");
    script += &phase(d, 5, PHASE_FRAMES, None, &save(d, "s5.bhef"));
    script +=
        &phase(d, 6, PHASE_FRAMES, Some("s5.bhef"), &format!("WaitLoupe, WaitFrames(4), {}", shot(d, "loupe.png")));
    script += "Quit]";
    let mut s = Session::start(d, &x.1, &script, 1.0, "1280x720");
    let r0 = s.report(0);
    let map = &r0["map"];
    let (side, cell) = (f(&map["width"]) as usize, f(&map["cell_size"]));
    assert_eq!(r0["loupe"]["started"], 0);

    s.click_synced(widget(&r0, "Build…"), 130);
    let r1 = s.step(1);
    assert_eq!(r1["build"]["open"], true, "clicking Build… opened no dialog: {}", r1["status"]);
    let size = 4 * (side - 1) + 1;
    assert_eq!(r1["build"]["size"].as_u64(), Some(size as u64), "the dialog does not start at 4×");

    // Pick a spot, then Esc: disarmed, nothing picked.
    s.click_synced(widget(&r1, "Loupe: Pick a spot"), 131);
    let r2 = s.step(2);
    assert_eq!(r2["loupe"]["armed"], true, "clicking Pick a spot did not arm the pick: {}", r2["loupe"]);
    s.xdo(&["windowfocus", "--sync", &s.window.clone()]);
    s.xdo(&["key", "Escape"]);
    let r3 = s.step(3);
    assert_eq!(r3["loupe"]["armed"], false, "Esc did not disarm the pick: {}", r3["loupe"]);
    s.click_synced(widget(&r3, "Loupe: Pick a spot"), 132);
    let r4 = s.step(4);
    assert_eq!(r4["loupe"]["armed"], true, "{}", r4["loupe"]);
    assert_eq!(r4["loupe"]["started"], 0, "arming started a loupe");

    // A spot right of the dialog (it opens at x = 380, about 650 px wide), on the terrain.
    let p = in_view(&r4, 0.86, 0.55);
    s.move_to(p);
    let r5 = s.step(5);
    let cursor = pair(&r5["cursor"]);
    assert!(dist(cursor, p) < 1.5, "the editor saw the pointer at {cursor:?}, XTest put it at {p:?}");
    let hit = &r5["ring"]["world"];
    assert!(!hit.is_null(), "no terrain under the pointer at {p:?}: {r5}");
    let under = (f(&hit[0]), f(&hit[2]));

    s.xdo(&["click", "1"]);
    let r6 = s.step(6);
    let l = &r6["loupe"];
    assert_eq!((l["started"].as_u64(), l["finished"].as_u64()), (Some(1), Some(1)), "one loupe, ended: {l}");
    assert!(l["last_error"].is_null(), "the loupe failed: {l} ({})", r6["status"]);
    assert_eq!(l["armed"], false, "the pick did not disarm");
    let shown = &l["shown"];
    assert!(!shown.is_null(), "no loupe shown: {l}");
    let centre = pair(&shown["centre_m"]);
    let off_m = dist(centre, under);
    assert!(
        off_m <= 3.0,
        "the loupe's centre {centre:?} m is {off_m:.2} m from the terrain point {under:?} m under the pointer"
    );
    let on_screen = pair(&l["centre_window"]);
    let off_px = dist(on_screen, p);
    assert!(off_px <= 3.0, "the loupe's centre shows at {on_screen:?}, {off_px:.1} px from the click at {p:?}");
    // 256 m: 64 preview cells of 4 m, 256 build cells of 1 m.
    let cells = (256.0 / cell).round() as usize;
    let ratio = (size - 1) / (side - 1);
    assert_eq!(shown["preview"], serde_json::json!([cells + 1, cells + 1]), "{shown}");
    assert_eq!(shown["build"], serde_json::json!([cells * ratio + 1, cells * ratio + 1]), "{shown}");
    assert_eq!(shown["build_size"], serde_json::json!([size, size]), "{shown}");
    assert!((f(&shown["build_cell"]) - cell / ratio as f32).abs() < 1e-6, "{shown}");
    let [ox, oy] = [f(&shown["origin_m"][0]), f(&shown["origin_m"][1])];
    let inside = |c: f32, o: f32| c >= o - cell && c <= o + 256.0 + cell;
    assert!(inside(centre.0, ox) && inside(centre.1, oy), "the window at {ox}, {oy} m does not hold {centre:?}");
    let painted = r6["changed"].as_array().unwrap().len();
    assert_eq!(painted, 0, "the click that picked the spot painted {painted} nodes");
    assert!(r6["status"].as_str().unwrap_or("").starts_with("Loupe: 256 m around"), "status: {}", r6["status"]);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "the editor's script failed ({status}):\n{}", s.log());
    eprintln!(
        "loupe: centre {off_m:.2} m from the point under the pointer, {off_px:.2} px from the click; {} s",
        shown["seconds"]
    );
    if let Ok(out) = std::env::var("TALUS_INPUT_SHOTS") {
        let _ = std::fs::copy(d.join("loupe.png"), Path::new(&out).join("real-input-loupe.png"));
    }
}

/// The cell-size question answered with the real pointer and keyboard: a BHEF from another tool
/// (no sidecar, so no cell size) is opened (the script's `Open` stands for the system's file
/// dialog, which XTest cannot reach under a bare X server), the question's field is clicked, its
/// text selected with Ctrl+A and replaced by a typed "8", and Open is clicked. The map opened is
/// the file's 129² heights 8 m apart, unchanged, and the saved project says so.
#[test]
fn real_keys_answer_the_cell_size_question() {
    let (_dir, d) = session_dir();
    let d = d.as_path();
    let x = common::xvfb::display(1280, 720, 5);
    let hm = talus::core::heightmap::Heightmap::from_fn(129, 129, 1.0, |x, y| 10.0 + 0.2 * x as f32 + 0.1 * y as f32)
        .unwrap();
    let file = d.join("other-tool.bhef");
    talus::core::io::bhef::save_atomic(&file, &hm).unwrap();
    assert!(!d.join("other-tool.bhef.json").exists(), "a plain BHEF has no sidecar");
    let project = d.join("opened.talus");
    // Phases: 0 the question open; 1 after the field's text was replaced; 2 after Open (and the
    // project saved). 140 and up: the frame syncs between the steps of the gestures.
    let mut script = format!(
        "[{}Open(\"{}\"), WaitFrames(4), ViewReport(path: \"{}\", since: None),\n",
        light_start(),
        file.display(),
        d.join("r0.json").display(),
    );
    script += &syncs(d, 140..143);
    script += &phase(d, 1, PHASE_FRAMES, None, "");
    script += &syncs(d, 143..144);
    script += &phase(d, 2, PHASE_FRAMES, None, &save(d, "opened.talus"));
    script += "Quit]";
    let mut s = Session::start(d, &x.1, &script, 1.0, "1280x720");
    let r0 = s.report(0);
    let before = (f(&r0["map"]["width"]), f(&r0["map"]["cell_size"]));
    assert_ne!(before.0, 129.0, "the file opened before the question was answered: {}", r0["map"]);
    let field = widget(&r0, "Cell size: metres");

    // Click the field (egui focuses it), Ctrl+A with the modifier held across frames, then "8".
    s.click_synced(field, 140);
    s.xdo(&["windowfocus", "--sync", &s.window.clone()]);
    s.xdo(&["keydown", "ctrl"]);
    s.sync(141);
    s.xdo(&["key", "a"]);
    s.sync(142);
    s.xdo(&["keyup", "ctrl"]);
    s.xdo(&["key", "8"]);
    let r1 = s.step(1);
    assert_eq!(
        (f(&r1["map"]["width"]), f(&r1["map"]["cell_size"])),
        before,
        "typing in the question changed the map: {}",
        r1["map"]
    );

    s.click_synced(widget(&r1, "Cell size: Open"), 143);
    let r2 = s.step(2);
    assert_eq!(
        (f(&r2["map"]["width"]), f(&r2["map"]["cell_size"])),
        (129.0, 8.0),
        "the opened map is not the file at the typed 8 m: {} ({})",
        r2["map"],
        r2["status"]
    );
    assert!(r2["buttons"]["Cell size: Open"].is_null(), "the question is still open: {}", r2["buttons"]);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "the editor's script failed ({status}):\n{}", s.log());
    let p = talus::editor::project::load(&project).expect("the opened map saves as a project");
    assert_eq!((p.stack.width(), p.stack.cell_size()), (129, 8.0), "the typed answer is the map's cell size");
    assert!(p.stack.compose().data == hm.data, "the file's heights, unchanged");
}
