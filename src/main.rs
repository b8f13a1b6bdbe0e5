fn main() {
    std::process::exit(talus::cli::run());
}
