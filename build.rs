//! Build script: stamps the git commit into `talus --version` (issue #28).
//!
//! `TALUS_COMMIT` is the short hash of `HEAD`, or the variable of that name when the build
//! environment sets it (a source tarball has no `.git`), or `unknown`. The script asks cargo to run
//! it again only when `HEAD` or the branch it points to moves, so ordinary edits rebuild nothing
//! extra.
use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=TALUS_COMMIT");
    let commit = std::env::var("TALUS_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=10", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TALUS_COMMIT={commit}");
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = PathBuf::from(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(head_ref).display());
        }
        if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
            println!("cargo:rerun-if-changed={}", PathBuf::from(common).join("packed-refs").display());
        }
    }
}
