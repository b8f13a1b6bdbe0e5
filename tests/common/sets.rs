//! Tile sets written by the editor's Build… dialog, held against the ones `talus build --tiles`
//! writes from the same saved project.

use std::path::Path;
use std::process::Command;

/// Runs `talus build PROJECT --size N --engine E --tiles K --maps M --out CLI_DIR` and checks that
/// `dialog_dir` holds the same files, byte for byte: every tile, every map, and the manifest (its
/// `source` is the project's path in both). Returns the number of files compared.
pub fn assert_same_as_cli(project: &Path, dialog_dir: &Path, cli_dir: &Path, args: &[&str]) -> usize {
    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("build")
        .arg(project)
        .args(args)
        .arg("--out")
        .arg(cli_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "talus build {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let (a, b) = (names(dialog_dir), names(cli_dir));
    assert_eq!(a, b, "the dialog's set and the CLI's hold different files");
    assert!(a.iter().any(|n| n == "manifest.json"), "no manifest in {a:?}");
    for n in &a {
        let (x, y) = (std::fs::read(dialog_dir.join(n)).unwrap(), std::fs::read(cli_dir.join(n)).unwrap());
        assert!(x == y, "{n}: the dialog's file differs from the CLI's ({} vs {} bytes)", x.len(), y.len());
    }
    a.len()
}

/// Runs `talus build PROJECT ARGS --out CLI_FILE` and checks that `dialog_file` holds the same
/// bytes, and so does its sidecar (`….json`, the integer formats' metres) when it has one.
pub fn assert_same_file_as_cli(project: &Path, dialog_file: &Path, cli_file: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("build")
        .arg(project)
        .args(args)
        .arg("--out")
        .arg(cli_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "talus build {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let (x, y) = (read(dialog_file), read(cli_file));
    assert!(x == y, "the dialog's {} differs from the CLI's ({} vs {} bytes)", dialog_file.display(), x.len(), y.len());
    let sidecar = |p: &Path| p.with_extension(format!("{}.json", p.extension().unwrap().to_string_lossy()));
    let (a, b) = (sidecar(dialog_file), sidecar(cli_file));
    assert_eq!(a.exists(), b.exists(), "only one of the two has a sidecar");
    if a.exists() {
        assert_eq!(String::from_utf8_lossy(&read(&a)), String::from_utf8_lossy(&read(&b)), "the sidecars differ");
    }
}
