//! Command-line interface.
pub fn run() -> i32 { 0 }
