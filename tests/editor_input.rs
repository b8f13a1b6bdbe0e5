//! The editor driven by real input: the X pointer and keyboard moved with XTest (`xdotool`) under
//! a private Xvfb, as a person's mouse would, while the editor runs a script that only waits for
//! the test's signals (`WaitFile`), saves, and reports what it saw (`ViewReport`). Nothing in the
//! editor is set by the test: every effect comes through winit's events.
//!
//! Checks, with the panel at its default width, after the window is resized (the viewport moves
//! and shrinks), and at a scale factor of 2:
//! - the hover ring is centred on the pointer (its centre projected with Bevy's
//!   `world_to_viewport`, and the ring's pixels in a screenshot);
//! - a left-button drag raises the terrain under the pointer's path: the changed nodes, projected
//!   back to the window with `world_to_viewport`, lie on the path;
//! - a drag that starts on the panel paints nothing;
//! - the first minute: orbit (middle drag) and zoom (wheel), Generate clicked on the
//!   panel; `[` / `]` through the script's virtual keyboard (XTest keys did not reach the window
//!   under Xvfb without a window manager).
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
        let park = || Command::new("xdotool").args(["mousemove", "2", "2"]).env("DISPLAY", display).output().expect("xdotool is needed (Debian: xdotool; `.ci/deps` installs it)");
        let mut parked = park();
        for _ in 0..40 {
            if parked.status.success() {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
            parked = park();
        }
        assert!(parked.status.success(), "xdotool could not move the pointer on {display}: {}", String::from_utf8_lossy(&parked.stderr));
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
        let mut s = Session { dir: dir.to_path_buf(), display: display.to_owned(), child, window: String::new(), scale, origin: (0, 0) };
        s.wait_file("r0.json");
        let ids = s.xdo_out(&["search", "--onlyvisible", "--name", "Talus"]);
        s.window = ids.split_whitespace().last().unwrap_or_else(|| panic!("no editor window found by xdotool: {ids:?}")).to_owned();
        s.locate();
        s
    }

    /// Reads where the window is on the screen.
    fn locate(&mut self) {
        let geo = self.xdo_out(&["getwindowgeometry", "--shell", &self.window.clone()]);
        let get = |k: &str| -> i32 {
            geo.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("no {k} in {geo:?}"))
        };
        self.origin = (get("X"), get("Y"));
    }

    fn log(&self) -> String {
        let read = |n: &str| std::fs::read_to_string(self.dir.join(n)).unwrap_or_default();
        let err = read("editor.err");
        let tail: String = err.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
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
        let out = Command::new("xdotool").args(args).env("DISPLAY", &self.display).output().expect("xdotool is needed (Debian: xdotool; `.ci/deps` installs it)");
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
        for i in 1..=steps {
            let t = i as f32 / steps as f32;
            self.move_to((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
            std::thread::sleep(Duration::from_millis(40));
        }
        std::thread::sleep(Duration::from_millis(150));
        self.xdo(&["mouseup", &button.to_string()]);
        std::thread::sleep(Duration::from_millis(100));
    }

    /// A left click on a panel widget: the pointer rests on it for a frame or more first, so egui
    /// sees it hovered before the press.
    fn click_slow(&self, p: (f32, f32)) {
        self.move_to(p);
        std::thread::sleep(Duration::from_millis(1200));
        self.xdo(&["mousedown", "1"]);
        // Shorter than egui's longest click (0.8 s), or it is a long press.
        std::thread::sleep(Duration::from_millis(300));
        self.xdo(&["mouseup", "1"]);
        std::thread::sleep(Duration::from_millis(600));
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
/// drag) lie under the path; returns the dh-weighted mean offset from the path, pixels.
fn check_stroke(r: &Value, a: (f32, f32), b: (f32, f32), what: &str) -> f32 {
    let changed = r["changed"].as_array().unwrap();
    assert!(!changed.is_empty(), "{what}: the drag from {a:?} to {b:?} changed nothing");
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    let max = changed.iter().map(|c| f(&c[2])).fold(0.0f32, f32::max);
    assert!(max > 0.5, "{what}: the drag raised the terrain by only {max} m");
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
    assert!((0.3..=0.7).contains(&along), "{what}: the raised terrain is centred {along:.2} of the way along the path, not in its middle");
    assert!(far <= radius_px * 1.3 + 4.0, "{what}: a node raised by half the most lies {far:.1} px from the path (brush radius {radius_px:.1} px)");
    offset
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
    let x = common::display(1280, 720, 1);
    // Phases: 1 hover, 2 stroke, 3 a drag from the panel, 4 hover, 5 stroke,
    // 6 resize, 7 hover, 8 stroke, 9 orbit + zoom, 10 brush radius keys, 11 Generate.
    // The frame without the pointer is taken before report 0, so before the pointer moves.
    let mut script = format!(
        "[WaitFrames(20), {}{}ViewReport(path: \"{}\", since: None),\n",
        save(d, "s0.bhef"),
        shot(d, "none.png"),
        d.join("r0.json").display(),
    );
    script += &phase(d, 1, 8, None, &shot(d, "hover.png"));
    script += &phase(d, 2, 8, Some("s0.bhef"), &(save(d, "s2.bhef") + &shot(d, "stroke.png")));
    script += &phase(d, 3, 8, Some("s2.bhef"), "");
    script += &phase(d, 4, 8, None, "");
    script += &phase(d, 5, 8, Some("s2.bhef"), &save(d, "s5.bhef"));
    script += &phase(d, 6, 20, None, "");
    script += &phase(d, 7, 8, None, "");
    script += &phase(d, 8, 8, Some("s5.bhef"), "");
    script += &phase(d, 9, 8, None, "");
    script += &phase(d, 10, 4, None, "Keys(\"]\"), Keys(\"]\"), Keys(\"[\"), WaitFrames(2), ");
    script += &phase(d, 11, 6, None, &format!("WaitGeneration, WaitFrames(4), {}", save(d, "s11.bhef")));
    script += "Quit]";
    let mut s = Session::start(d, &x.1, &script, 1.0, "1280x720");
    let r0 = s.report(0);
    let panel0 = f(&r0["panel_width"]);
    assert!(panel0 > 100.0, "the side panel is {panel0} px wide: {r0}");
    assert!((viewport(&r0)[0] - panel0).abs() <= 1.0, "the viewport starts at {} but the panel is {panel0} wide", viewport(&r0)[0]);
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
            assert!(off <= 8.0, "the ring's pixels ({n}) are centred at {c:?}, {off:.1} px from the pointer at {:?}", (cx, cy));
            figures.push(format!("ring pixels centred {off:.1} px from the pointer"));
        }
        None => panic!("no ring pixels near the pointer at {p:?} in hover.png"),
    }
    let (a, b) = ((p.0 - 70.0, p.1), (p.0 + 70.0, p.1));
    s.drag(1, a, b, 14);
    let r2 = s.step(2);
    figures.push(format!("stroke {:.2} px off its path", check_stroke(&r2, a, b, "default panel")));

    // 3: a drag that starts on the panel's top row and ends over the terrain paints nothing.
    s.drag(1, (panel0 * 0.5, 6.0), (panel0 + 300.0, in_view(&r0, 0.0, 0.5).1), 14);
    let r3 = s.step(3);
    let painted = r3["changed"].as_array().unwrap().len();
    assert_eq!(painted, 0, "a drag that started on the panel painted {painted} nodes");

    // 4–5: another place, a diagonal stroke.
    let p = in_view(&r3, 0.35, 0.6);
    s.move_to(p);
    let r4 = s.step(4);
    figures.push(format!("second place: ring {:.2} px", check_ring(&r4, p, "second place")));
    let (a, b) = ((p.0 - 50.0, p.1 - 30.0), (p.0 + 50.0, p.1 + 30.0));
    s.drag(1, a, b, 14);
    let r5 = s.step(5);
    figures.push(format!("stroke {:.2} px", check_stroke(&r5, a, b, "second place")));

    // 6–8: a smaller window.
    s.xdo(&["windowsize", &s.window.clone(), "1100", "640"]);
    std::thread::sleep(Duration::from_millis(300));
    let r6 = s.step(6);
    s.locate();
    assert_eq!(pair(&r6["window"]["logical"]), (1100.0, 640.0), "the window did not resize: {}", r6["window"]);
    assert!((viewport(&r6)[2] - 1100.0).abs() <= 1.0, "the viewport did not follow the resize: {:?}", viewport(&r6));
    let p = in_view(&r6, 0.55, 0.45);
    s.move_to(p);
    let r7 = s.step(7);
    figures.push(format!("resized 1100×640: ring {:.2} px", check_ring(&r7, p, "resized window")));
    let (a, b) = ((p.0, p.1 - 60.0), (p.0, p.1 + 60.0));
    s.drag(1, a, b, 14);
    let r8 = s.step(8);
    figures.push(format!("stroke {:.2} px", check_stroke(&r8, a, b, "resized window")));

    // 9: orbit with the middle button, zoom with the wheel.
    let p = in_view(&r8, 0.5, 0.5);
    s.drag(2, p, (p.0 + 120.0, p.1 + 30.0), 10);
    s.move_to(p);
    for _ in 0..3 {
        s.xdo(&["click", "4"]);
        std::thread::sleep(Duration::from_millis(80));
    }
    let r9 = s.step(9);
    let (c8, c9) = (&r8["camera"], &r9["camera"]);
    assert!((f(&c9["yaw"]) - f(&c8["yaw"])).abs() > 0.2, "a middle drag did not orbit: {c8} → {c9}");
    assert!(f(&c9["distance"]) < f(&c8["distance"]) * 0.9, "the wheel did not zoom in: {c8} → {c9}");
    assert_eq!(r9["map"]["revision"], r8["map"]["revision"], "orbiting or zooming changed the map");

    // 10: `]` twice and `[` once: radius × 1.25. The keys come from the script's virtual keyboard
    // (Bevy's KeyboardInput messages): XTest key events did not reach the window under Xvfb
    // without a window manager.
    let r_before = f(&r9["brush"]["radius"]);
    let r10 = s.step(10);
    let r_after = f(&r10["brush"]["radius"]);
    assert!((r_after / r_before - 1.25).abs() < 1e-3, "] ] [ took the radius from {r_before} to {r_after}");

    // 11: click Generate on the panel.
    let button = |r: &Value, name: &str| {
        let b = &r["buttons"][name];
        assert!(!b.is_null(), "no {name} button in {}", r["buttons"]);
        ((f(&b[0]) + f(&b[2])) * 0.5, (f(&b[1]) + f(&b[3])) * 0.5)
    };
    let g = button(&r10, "Generate");
    s.click_slow(g);
    let r11 = s.step(11);
    assert_eq!(f(&r11["generations"]), f(&r10["generations"]) + 1.0, "clicking Generate at {g:?} generated nothing: {}", r11["status"]);

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
    let x = common::display(1600, 900, 2);
    let mut script = format!("[WaitFrames(20), {}ViewReport(path: \"{}\", since: None),\n", save(d, "s0.bhef"), d.join("r0.json").display());
    script += &phase(d, 1, 8, None, "");
    script += &phase(d, 2, 8, Some("s0.bhef"), "");
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
    let off = check_stroke(&r2, a, b, "scale factor 2");
    let status = s.child.wait().unwrap();
    assert!(status.success(), "the editor's script failed ({status}):\n{}", s.log());
    eprintln!("real input, scale 2: ring {ring:.2} px, stroke {off:.2} px");
}
