//! The `talus` executable: hands the process arguments to [`talus::cli::run`], which runs a
//! subcommand or, with none, opens the editor (or the headless demo job when there is no display).

fn main() -> std::process::ExitCode {
    talus::cli::run()
}
