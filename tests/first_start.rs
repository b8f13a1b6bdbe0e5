//! The first start on a machine that cannot run the editor (issue #28): the real binary on a
//! private Xvfb server with the Vulkan loader pointed at a driver file that does not exist, as on
//! a desktop without a Vulkan driver. Talus must exit with code 1, never a panic, say what is
//! missing and how to get it on stderr and in `$XDG_STATE_HOME/talus/last-error.txt`, and put it
//! in a message box. The box needs zenity, kdialog or xmessage (Debian: x11-utils); without any,
//! only that part is skipped. With `xwd` (x11-apps) the screen is saved as
//! `no-vulkan-message.png`, into `TALUS_SHOT_DIR` when set (the README's picture:
//! `TALUS_SHOT_DIR=screenshots cargo test --test first_start`).

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::xwd;

/// The message box's title (`talus::app::preflight::TITLE`).
const TITLE: &str = "Talus cannot start";

/// Runs the editor's start (`talus --gui ARGS`) on `display` without a Vulkan driver.
fn start_without_vulkan(display: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .current_dir(dir)
        .env("DISPLAY", display)
        .env_remove("WAYLAND_DISPLAY")
        // The loader's own variables (VK_ICD_FILENAMES before loader 1.3.207).
        .env("VK_DRIVER_FILES", "/nonexistent.json")
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env_remove("VK_ADD_DRIVER_FILES")
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TALUS_CONFIG_DIR", dir.join("config"))
        .output()
        .unwrap()
}

/// The id of the visible window named `name` on `display`, waiting up to `wait`.
fn find_window(display: &str, name: &str, wait: Duration) -> Option<String> {
    let start = Instant::now();
    loop {
        let out = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", &format!("^{name}$")])
            .env("DISPLAY", display)
            .output()
            .ok()?;
        let ids = String::from_utf8_lossy(&out.stdout);
        if let Some(id) = ids.split_whitespace().next() {
            return Some(id.to_string());
        }
        if start.elapsed() > wait {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn no_vulkan_driver_is_explained_on_stderr_in_the_log_and_in_a_message_box() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = common::xvfb::display(1024, 600, 0);
    let out = start_without_vulkan(&x.1, d, &["--gui"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "exit code 1, not a crash:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    for says in ["No Vulkan driver found", "sudo apt install mesa-vulkan-drivers", "last-error.txt"] {
        assert!(err.contains(says), "stderr says {says:?}:\n{err}");
    }
    let log = std::fs::read_to_string(d.join("state/talus/last-error.txt")).expect("the log file");
    assert!(log.contains("No Vulkan driver found") && log.contains("mesa-vulkan-drivers"), "{log}");
    assert!(log.starts_with("talus "), "the log names the version: {log}");

    // The message box (the first of these on PATH is the one Talus used).
    let Some(program) = ["zenity", "kdialog", "xmessage"].into_iter().find(|p| xwd::have(p)) else {
        eprintln!("skipped the message box: no zenity, kdialog or xmessage (Debian: x11-utils)");
        return;
    };
    assert!(xwd::have("xdotool"), "xdotool finds the box (Debian: xdotool; .ci/deps installs it)");
    let window = find_window(&x.1, TITLE, Duration::from_secs(15))
        .unwrap_or_else(|| panic!("no {program} window titled {TITLE:?} on {}", x.1));
    if xwd::have("xwd") {
        let shots = std::env::var_os("TALUS_SHOT_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| d.to_path_buf());
        std::fs::create_dir_all(&shots).unwrap();
        let path = shots.join("no-vulkan-message.png");
        // The box may still be drawing its text: wait until the picture stops changing.
        let mut last = xwd::root_png(&x.1, &path).unwrap();
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(250));
            let now = xwd::root_png(&x.1, &path).unwrap();
            if now == last {
                break;
            }
            last = now;
        }
        // Xvfb's root is one flat colour; the box adds a light panel with dark text.
        let mut grey = [0usize; 256];
        for p in last.pixels() {
            grey[((p[0] as usize + p[1] as usize + p[2] as usize) / 3).min(255)] += 1;
        }
        let light = grey[200..].iter().sum::<usize>();
        let total = last.width() as usize * last.height() as usize;
        assert!(light > total / 100, "no light box on the screen ({light} light pixels of {total})");
        eprintln!("{program}'s box: {}", path.display());
    } else {
        eprintln!("skipped the screenshot: no xwd (Debian: x11-apps)");
    }
    // Close it (the server goes when the test ends anyway; a TALUS_TEST_DISPLAY stays).
    let _ = Command::new("xdotool").args(["windowkill", &window]).env("DISPLAY", &x.1).output();
}

/// A file that does not load is reported before the window opens, with its path, and no panic.
/// Needs a Vulkan adapter (lavapipe is enough) to get past the preflight: skipped without one,
/// unless `TALUS_REQUIRE_GPU_TESTS` is set (the test command sets it).
#[test]
fn a_broken_file_is_a_clear_error_before_the_window_opens() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("broken.bhef"), [1u8, 0, 0, 0, 2, 0, 0, 0, 0, 0]).unwrap();
    std::fs::write(d.join("broken.talus"), b"not a project").unwrap();
    let x = common::xvfb::display(640, 480, 1);
    for file in ["broken.bhef", "broken.talus"] {
        let out = Command::new(env!("CARGO_BIN_EXE_talus"))
            .arg(file)
            .current_dir(d)
            .env("DISPLAY", &x.1)
            .env_remove("WAYLAND_DISPLAY")
            .env("XDG_STATE_HOME", d.join("state"))
            .env("TALUS_CONFIG_DIR", d.join("config"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No Vulkan driver found") && std::env::var_os("TALUS_REQUIRE_GPU_TESTS").is_none() {
            eprintln!("skipped: no Vulkan adapter on this machine (Debian: mesa-vulkan-drivers)");
            return;
        }
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(&format!("error: {file}: ")), "{file}: {err}");
        assert!(!err.contains("panicked"), "{file}: {err}");
    }
}
