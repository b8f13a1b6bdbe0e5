fn main() -> std::process::ExitCode {
    talus::cli::run()
}
