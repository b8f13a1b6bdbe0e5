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
    // `--git-path` knows where each file lives, in a worktree too (its HEAD is its own; branches
    // and packed-refs are the main repository's). A path that does not exist would make cargo
    // run this script, and rebuild the crate, on every build: a branch whose ref is only in
    // packed-refs is watched through its folder, where a commit writes the loose ref.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for name in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
        let Some(path) = git(&["rev-parse", "--git-path", name]).map(PathBuf::from) else { continue };
        let is_branch = Some(name) == branch.as_deref();
        let watched =
            if path.exists() { Some(path.as_path()) } else { path.parent().filter(|p| is_branch && p.exists()) };
        if let Some(w) = watched {
            println!("cargo:rerun-if-changed={}", w.display());
        }
    }
}
