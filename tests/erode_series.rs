//! `talus erode --snapshots DIR --every N [--mask M]`: the run's time series as files, and masks
//! that steer where the run erodes, through the real binary.
use std::path::Path;
use std::process::Command;

use talus::core::io::bhef;

fn talus(args: &[&str], dir: &Path) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_talus")).args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "talus {args:?}: exit {:?}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    out
}

fn bits(p: &Path) -> Vec<u32> {
    bhef::load(p).unwrap().data.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn snapshots_are_the_runs_own_states_in_time_order() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    talus(&["generate", "--kind", "fbm", "--size", "65", "--seed", "5", "--out", "a.bhef"], p);
    let erode = |steps: &str, out: &str, extra: &[&str]| {
        let mut args = vec!["erode", "--model", "thermal", "--steps", steps, "--in", "a.bhef", "--out", out];
        args.extend_from_slice(extra);
        talus(&args, p)
    };
    let out = erode("20", "b.bhef", &["--snapshots", "series", "--every", "5"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("snapshots: 5 written"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> =
        std::fs::read_dir(p.join("series")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let want: Vec<String> = [0, 5, 10, 15, 20].iter().map(|n| format!("snapshot-{n:010}.bhef")).collect();
    assert_eq!(names, want);
    // The input, the result, and the state after 10 steps: a 10-step run gives the same bits.
    assert_eq!(bits(&p.join("series/snapshot-0000000000.bhef")), bits(&p.join("a.bhef")));
    assert_eq!(bits(&p.join("series/snapshot-0000000020.bhef")), bits(&p.join("b.bhef")));
    erode("10", "c.bhef", &[]);
    assert_eq!(bits(&p.join("series/snapshot-0000000010.bhef")), bits(&p.join("c.bhef")));

    // PNG series: one file per snapshot, each with its sidecar.
    erode("20", "e.bhef", &["--snapshots", "png", "--every", "10", "--snapshot-format", "png"]);
    for n in [0, 10, 20] {
        assert!(p.join(format!("png/snapshot-{n:010}.png")).exists());
    }
    // --every 0 is a clear error, not a panic or a directory of nothing.
    let bad = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["erode", "--model", "thermal", "--in", "a.bhef", "--out", "f.bhef", "--snapshots", "z", "--every", "0"])
        .current_dir(p)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--every"));
}
