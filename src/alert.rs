//! Telling the artist why Talus stopped, where they will see it (issue #28).
//!
//! A start from the desktop menu has no terminal, so stderr alone is lost. [`show`] writes the
//! message to a log file, `$XDG_STATE_HOME/talus/last-error.txt` (else
//! `~/.local/state/talus/last-error.txt`), and puts it in a message box with the first of these
//! programs that works: `zenity --error` (GNOME and most desktops), `kdialog --error` (KDE),
//! `xmessage` (any X server; Debian's x11-utils), `notify-send` (a notification, where only a
//! session bus is left). The box is a child process left on screen for the artist to close, with
//! no link to our stdout or stderr, so Talus exits at once. The caller prints the message to
//! stderr itself, as every error of the command line is, and [`Shown::log_note`] after it.
//!
//! Its callers are the command line (`talus --gui FILE`, a start from the desktop entry) and
//! the editor's window (no Vulkan driver): both reach it here, at the crate's root, beside
//! them. It needs neither (nor Bevy), so it builds with any features.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a message-box program may take to fail (no display, no session bus) before it counts
/// as shown: zenity needs a few hundred milliseconds to give up on a missing display.
const SETTLE: Duration = Duration::from_millis(800);

static SHOWN: AtomicBool = AtomicBool::new(false);

/// Where a message went.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The log file written, if one could be.
    pub log: Option<PathBuf>,
    /// The program that showed the message box, if one did.
    pub dialog: Option<&'static str>,
}

/// Writes `text` to the log file and shows it in a message box titled `title`. Only the first
/// call of a process shows anything (a process stops at its first such message): later calls
/// return `None`.
pub fn show(title: &str, text: &str) -> Option<Shown> {
    if SHOWN.swap(true, Ordering::SeqCst) {
        return None;
    }
    let log = write_log(text);
    let dialog = message_box(title, text);
    Some(Shown { log, dialog })
}

impl Shown {
    /// The line that tells a terminal user where the log is, if one was written.
    pub fn log_note(&self) -> Option<String> {
        self.log.as_ref().map(|p| format!("(this message is also in {})", p.display()))
    }
}

/// The log file: `$XDG_STATE_HOME/talus/last-error.txt` when `XDG_STATE_HOME` is an absolute
/// path (the XDG rule), else `$HOME/.local/state/talus/last-error.txt`; `None` without either.
pub fn log_path() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| {
        std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/state"))
    })?;
    Some(state.join("talus").join("last-error.txt"))
}

fn write_log(text: &str) -> Option<PathBuf> {
    let path = log_path()?;
    std::fs::create_dir_all(path.parent()?).ok()?;
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let command: Vec<String> = std::env::args().collect();
    let body = format!(
        "talus {}\ncommand: {}\ntime: {secs} s since 1970-01-01 UTC\n\n{text}\n",
        crate::VERSION,
        command.join(" ")
    );
    std::fs::write(&path, body).ok()?;
    Some(path)
}

/// The message-box programs in the order tried, each with its arguments.
fn programs(title: &str, text: &str) -> [(&'static str, Vec<String>); 4] {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    [
        ("zenity", v(&["--error", "--no-markup", "--width=520", "--title", title, "--text", text])),
        ("kdialog", v(&["--title", title, "--error", text])),
        // xmessage cuts lines at the screen's edge instead of wrapping them.
        ("xmessage", v(&["-center", "-title", title, "-buttons", "OK:0", "-default", "OK", &wrap(text, 76)])),
        ("notify-send", v(&["--urgency=critical", "--app-name=Talus", title, text])),
    ]
}

/// `text` with every line longer than `width` characters broken at spaces (a word longer than
/// the width stays whole).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut len = 0;
        for (j, word) in line.split(' ').enumerate() {
            let n = word.chars().count();
            if j > 0 && len + 1 + n > width && len > 0 {
                out.push('\n');
                len = 0;
            } else if j > 0 {
                out.push(' ');
                len += 1;
            }
            out.push_str(word);
            len += n;
        }
    }
    out
}

/// Shows the message with the first program that starts and does not fail within [`SETTLE`];
/// returns its name.
fn message_box(title: &str, text: &str) -> Option<&'static str> {
    for (program, args) in programs(title, text) {
        let Ok(mut child) =
            Command::new(program).args(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()
        else {
            continue; // not installed
        };
        let start = Instant::now();
        loop {
            match child.try_wait() {
                // notify-send has sent its notification (or the artist already pressed OK).
                Ok(Some(status)) if status.success() => return Some(program),
                // It could not show anything (no display, no session bus): the next one.
                Ok(Some(_)) | Err(_) => break,
                // On screen: left there for the artist.
                Ok(None) if start.elapsed() >= SETTLE => return Some(program),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_gets_the_title_and_the_whole_text() {
        let text = "No Vulkan driver found.\nInstall it: sudo apt install mesa-vulkan-drivers";
        for (program, args) in programs("Talus cannot start", text) {
            assert!(args.iter().any(|a| a == "Talus cannot start"), "{program}");
            let last = args.last().map(String::as_str).unwrap_or_default();
            assert_eq!(
                last.split_whitespace().collect::<Vec<_>>(),
                text.split_whitespace().collect::<Vec<_>>(),
                "{program}"
            );
        }
    }

    #[test]
    fn long_lines_break_at_spaces() {
        assert_eq!(wrap("aaa bbb ccc\nshort", 7), "aaa bbb\nccc\nshort");
        assert_eq!(wrap("a /a/very/long/path b", 6), "a\n/a/very/long/path\nb");
        assert_eq!(wrap("    indented command", 40), "    indented command");
    }
}
