//! The Bevy front end (feature `editor`). Issue #4 builds the window; until it lands, running the
//! binary without a subcommand explains that and points at the CLI.

/// Opens the editor window. Not built yet: returns a message for the user.
pub fn run_editor() -> Result<(), String> {
    Err("the 3-D editor window is not part of this build yet (it arrives with issue #4).\n\
         Everything else works from the command line: run `talus --help`."
        .to_string())
}
