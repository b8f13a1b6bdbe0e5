//! A private X server (Xvfb) for the window tests to open the editor on.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An X display for a test: a private Xvfb server (stopped on drop) or `TALUS_TEST_DISPLAY`.
pub struct Xvfb(Option<Child>, pub String);

impl Drop for Xvfb {
    /// SIGTERM first, so the server removes its socket and lock file (a SIGKILL leaves them, and a
    /// later server may find its display taken by a stale lock whose PID was reused); SIGKILL if it
    /// has not gone within 2 s.
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(2) {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A display to run on: `TALUS_TEST_DISPLAY` if set, else a private Xvfb server of `w×h` pixels.
///
/// The server chooses a free display number itself (`-displayfd`: it takes the first display whose
/// lock it can claim, so tests running at once, stale sockets and leftover locks of killed servers
/// cannot collide) and writes it once it accepts connections. `_slot` is kept for the callers'
/// readability (which display of a test file this is); it no longer picks the number.
///
/// `-noreset`: an X server resets when its last client disconnects, and a reset puts the pointer
/// back at the screen's centre. Without it, a pointer parked by `xdotool` (a client that exits at
/// once) is back in the middle of the editor's window when the editor connects, and its real
/// cursor events then mix with a script's virtual mouse.
pub fn display(w: u32, h: u32, _slot: u32) -> Xvfb {
    if let Ok(d) = std::env::var("TALUS_TEST_DISPLAY") {
        return Xvfb(None, d);
    }
    let mut child = Command::new("Xvfb")
        .args([
            "-displayfd".into(),
            "1".into(),
            "-screen".into(),
            "0".into(),
            format!("{w}x{h}x24"),
            "-nolisten".into(),
            "tcp".into(),
            "-noreset".into(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb is needed for the window tests (Debian: xvfb; `.ci/deps` installs it)");
    let stdout = child.stdout.take().expect("Xvfb's standard output");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
    let n: u32 = line.trim().parse().unwrap_or_else(|_| {
        let _ = child.kill();
        let status = child.wait();
        panic!("Xvfb did not start (it wrote {line:?} for its display; {status:?})")
    });
    Xvfb(Some(child), format!(":{n}"))
}

/// Moves the real X pointer of `display` to `(x, y)` with XTest (`xdotool`), retrying while the
/// server starts accepting clients.
pub fn park_pointer(display: &str, x: i32, y: i32) {
    let park = || {
        Command::new("xdotool")
            .args(["mousemove", &x.to_string(), &y.to_string()])
            .env("DISPLAY", display)
            .output()
            .expect("xdotool is needed (Debian: xdotool; `.ci/deps` installs it)")
    };
    let mut out = park();
    for _ in 0..40 {
        if out.status.success() {
            // Read it back in a new connection: the pointer must still be there (see `display`
            // on server resets).
            let at = Command::new("xdotool")
                .args(["getmouselocation", "--shell"])
                .env("DISPLAY", display)
                .output()
                .expect("xdotool");
            let text = String::from_utf8_lossy(&at.stdout);
            let want = format!("X={x}\nY={y}\n");
            assert!(text.starts_with(&want), "the pointer parked at ({x}, {y}) on {display} is elsewhere: {text}");
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
        out = park();
    }
    panic!("xdotool could not move the pointer on {display}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Whether the test was asked for its screenshots (`TALUS_SHOT_DIR` or `TALUS_INPUT_SHOTS`):
/// then it keeps the default look and the default start map, as the README's frames show them.
pub fn taking_screenshots() -> bool {
    std::env::var_os("TALUS_SHOT_DIR").is_some() || std::env::var_os("TALUS_INPUT_SHOTS").is_some()
}

/// A script action that makes the window cheap to draw under lavapipe, for the window tests that
/// are not about the look: no shadow maps, no MSAA, no sea plane, set as a user sets them in the
/// panel's look sections. With the 257² island of [`SMALL_ISLAND`], a 1280×720 frame takes about
/// 0.5 s on 2 cores against 2.5 s for the 513² start map with the default look (issue #25).
/// Empty when [`taking_screenshots`].
pub fn light_look() -> &'static str {
    if taking_screenshots() {
        return "";
    }
    "Look((sky: (shadows: (enabled: false), camera: (msaa: Off)), water: (sea_plane: false))),\n"
}

/// The 257² island most window sessions work on (4 m cells, the default island's falloff and sea).
pub const SMALL_ISLAND: &str = "Generate((width: 257, height: 257, cell_size: 4.0, seed: 7, falloff: Some((depth: 20.0)), \
                                sea_level: Some((level: 0.0, coverage: Some(0.4)))))";

/// Writes `script` to `dir/name` and runs the real editor binary on it under a private X server
/// (`talus_bin`: the test crate's `env!("CARGO_BIN_EXE_talus")`); returns whether every action
/// succeeded and the editor's log. The screen is larger than the window so the real pointer can
/// rest outside it (a real cursor event over the map would move the pointer the script's virtual
/// mouse drives). Without screenshots the window is 960×540: a frame costs about its pixel count
/// under lavapipe, and these sessions check files, not pixels.
pub fn run_editor_script(talus_bin: &str, dir: &std::path::Path, name: &str, script: &str) -> (bool, String) {
    let script_path = dir.join(name);
    std::fs::write(&script_path, script).unwrap();
    let x = display(1400, 800, 0);
    park_pointer(&x.1, 1390, 790);
    let mut cmd = Command::new(talus_bin);
    cmd.arg("editor");
    if !taking_screenshots() {
        cmd.args(["--window-size", "960x540"]);
    }
    let out = cmd
        .arg("--script")
        .arg(&script_path)
        .env("DISPLAY", &x.1)
        .env_remove("WAYLAND_DISPLAY")
        .env("TALUS_CONFIG_DIR", dir.join("config"))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.success(), format!("({:?})\n{log}", out.status))
}
