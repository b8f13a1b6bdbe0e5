//! What the editor needs before its window opens (issue #28): an X display it can connect to, the
//! X11 libraries winit loads at run time, and a Vulkan adapter.
//!
//! Without them Bevy stops deep inside winit or wgpu with a panic an artist never sees (a start
//! from the desktop menu has no terminal). [`check`] looks first, in a few milliseconds, and turns
//! each missing piece into a [`Problem`] whose text says what is missing and how to get it;
//! [`super::alert`] shows it. The checks do what the window will do, in the same way: winit opens
//! `libX11`, `libX11-xcb`, `libXcursor`, `libXi`, `libxkbcommon` and `libxkbcommon-x11` with
//! `dlopen` (through the crates used here) and connects with `XOpenDisplay`; Bevy's renderer asks
//! wgpu for an adapter on the backends `WGPU_BACKEND` names, else on all of them.
//!
//! The window is X11 only (Bevy's `x11` feature; Wayland desktops run it through XWayland), so a
//! Wayland session without XWayland is a problem of its own.

use std::fmt;

/// The title of the message box that shows a [`Problem`].
pub const TITLE: &str = "Talus cannot start";

/// Something the editor's window needs and this system lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// Neither `DISPLAY` nor `WAYLAND_DISPLAY` is set: no desktop session.
    NoDisplay,
    /// `WAYLAND_DISPLAY` is set but `DISPLAY` is not: a Wayland session without XWayland.
    WaylandOnly,
    /// A library winit loads at run time is missing.
    MissingLibrary {
        /// The file name winit asks `dlopen` for.
        soname: &'static str,
        /// The Debian/Ubuntu package that has it.
        package: &'static str,
    },
    /// `XOpenDisplay` failed for this `DISPLAY`.
    DisplayUnreachable(String),
    /// wgpu found no adapter: no Vulkan driver (or no Vulkan loader). The `WGPU_BACKEND` value if
    /// it narrowed the search to backends without Vulkan.
    NoVulkan(Option<String>),
}

impl fmt::Display for Problem {
    /// What is missing on the first line, then how to get it; lines short enough for a plain
    /// message box, a command to type on a line of its own.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NoDisplay => write!(
                f,
                "Talus needs a desktop session (no DISPLAY/WAYLAND_DISPLAY).\n\
                 Start it from your desktop, or run `talus demo` for the\n\
                 command-line job (`talus --help` lists every command)."
            ),
            Problem::WaylandOnly => write!(
                f,
                "Talus draws its window through X11, and this Wayland session\n\
                 has no X display (WAYLAND_DISPLAY is set, DISPLAY is not).\n\
                 Install XWayland, then log in again:\n    sudo apt install xwayland"
            ),
            Problem::MissingLibrary { soname, package } => write!(
                f,
                "Talus cannot open its window: the library {soname} is missing.\n\
                 Install it:\n    sudo apt install {package}"
            ),
            Problem::DisplayUnreachable(d) => write!(
                f,
                "Talus cannot connect to the X display {d:?} (DISPLAY).\n\
                 Check that the desktop session is running and that this user\n\
                 may use it (over ssh, connect with X forwarding: ssh -X)."
            ),
            Problem::NoVulkan(backend) => {
                write!(
                    f,
                    "No Vulkan driver found: Talus draws its window with Vulkan.\n\
                     Install your GPU's Vulkan driver, or Mesa's software one:\n    \
                     sudo apt install mesa-vulkan-drivers libvulkan1"
                )?;
                if let Some(b) = backend {
                    write!(f, "\n(WGPU_BACKEND={b} limits the search to those backends;\nunset it to try them all.)")?;
                }
                Ok(())
            }
        }
    }
}

/// What the checks found when nothing was missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Ready {
    /// The adapters wgpu offers, `name (type, backend)`.
    pub adapters: Vec<String>,
    /// Whether every adapter is a software one (Mesa's lavapipe): the editor runs, slowly.
    pub software_only: bool,
}

/// Runs every check: the display first (it is cheap), then the Vulkan adapter.
pub fn check() -> Result<Ready, Problem> {
    display()?;
    vulkan()
}

/// The X display: the environment, the libraries winit loads, and a connection.
pub fn display() -> Result<(), Problem> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if !set("DISPLAY") {
        return Err(if set("WAYLAND_DISPLAY") { Problem::WaylandOnly } else { Problem::NoDisplay });
    }
    x11::connect()
}

#[cfg(target_os = "linux")]
mod x11 {
    use super::Problem;
    use x11_dl::{xcursor::Xcursor, xinput2::XInput2, xlib::Xlib, xlib_xcb::Xlib_xcb};

    fn missing(soname: &'static str, package: &'static str) -> Problem {
        Problem::MissingLibrary { soname, package }
    }

    /// Loads what winit loads (`XConnection::new` and its keyboard) and opens the display.
    pub(super) fn connect() -> Result<(), Problem> {
        let xlib = Xlib::open().map_err(|_| missing("libX11.so.6", "libx11-6"))?;
        Xlib_xcb::open().map_err(|_| missing("libX11-xcb.so.1", "libx11-xcb1"))?;
        Xcursor::open().map_err(|_| missing("libXcursor.so.1", "libxcursor1"))?;
        XInput2::open().map_err(|_| missing("libXi.so.6", "libxi6"))?;
        xkbcommon_dl::xkbcommon_option().ok_or_else(|| missing("libxkbcommon.so.0", "libxkbcommon0"))?;
        xkbcommon_dl::x11::xkbcommon_x11_option()
            .ok_or_else(|| missing("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"))?;
        // SAFETY: the functions come from the libX11 just loaded, with their C signatures. The
        // program has made no Xlib call yet and no other thread uses Xlib, so XInitThreads may
        // come first as Xlib wants (winit calls it again, which is allowed); XOpenDisplay(NULL)
        // reads DISPLAY; the display it returns is closed once and not used after.
        unsafe {
            (xlib.XInitThreads)();
            let display = (xlib.XOpenDisplay)(std::ptr::null());
            if display.is_null() {
                let d = std::env::var("DISPLAY").unwrap_or_default();
                return Err(Problem::DisplayUnreachable(d));
            }
            (xlib.XCloseDisplay)(display);
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod x11 {
    /// Elsewhere the platform's own windowing is there whenever a session is.
    pub(super) fn connect() -> Result<(), super::Problem> {
        Ok(())
    }
}

/// A Vulkan (or other wgpu) adapter on the backends Bevy's renderer will try.
pub fn vulkan() -> Result<Ready, Problem> {
    let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
    // Worth a word only when it left Vulkan out (on Linux the one backend built in).
    let env_backend = std::env::var("WGPU_BACKEND")
        .ok()
        .filter(|b| !b.trim().is_empty() && !backends.contains(wgpu::Backends::VULKAN));
    // wgpu can panic deep inside a broken driver stack: that is a missing driver too.
    let found = std::panic::catch_unwind(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        desc.flags = wgpu::InstanceFlags::empty();
        let instance = wgpu::Instance::new(desc);
        pollster::block_on(instance.enumerate_adapters(backends))
            .iter()
            .map(|a| a.get_info())
            .map(|i| (format!("{} ({:?}, {:?})", i.name, i.device_type, i.backend), i.device_type))
            .collect::<Vec<_>>()
    })
    .unwrap_or_default();
    if found.is_empty() {
        return Err(Problem::NoVulkan(env_backend));
    }
    let software_only = found.iter().all(|(_, t)| *t == wgpu::DeviceType::Cpu);
    Ok(Ready { adapters: found.into_iter().map(|(n, _)| n).collect(), software_only })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_says_how_to_fix_it() {
        let all = [
            Problem::NoDisplay,
            Problem::WaylandOnly,
            Problem::MissingLibrary { soname: "libXcursor.so.1", package: "libxcursor1" },
            Problem::DisplayUnreachable(":9".into()),
            Problem::NoVulkan(None),
            Problem::NoVulkan(Some("gl".into())),
        ];
        for p in &all {
            let text = p.to_string();
            assert!(text.lines().count() >= 2, "a line for what is missing, one for the fix: {text}");
            assert!(text.lines().all(|l| l.chars().count() <= 72), "short lines for a plain message box: {text}");
        }
        assert!(Problem::NoVulkan(None).to_string().contains("sudo apt install mesa-vulkan-drivers"));
        assert!(Problem::NoDisplay.to_string().contains("talus demo"));
        assert!(
            Problem::MissingLibrary { soname: "libXi.so.6", package: "libxi6" }
                .to_string()
                .contains("apt install libxi6")
        );
        assert!(Problem::NoVulkan(Some("gl".into())).to_string().contains("WGPU_BACKEND=gl"));
    }
}
