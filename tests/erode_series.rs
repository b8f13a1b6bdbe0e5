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

/// `--mask`: on a slope falling toward x = 0, a mask over the low third steers the droplets there;
/// nothing uphill of it changes (flow runs downhill), while an unmasked run changes the whole
/// slope. A mask of the wrong size or with weights outside [0, 1] is a clear error.
#[test]
fn a_mask_steers_the_run_to_its_flow_paths() {
    use talus::core::Heightmap;
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let n = 96;
    let ramp = Heightmap::from_fn(n, n, 1.0, |x, y| 0.5 * x as f32 + 0.2 * ((x * 7 + y * 13) % 5) as f32).unwrap();
    bhef::save_atomic(&p.join("ramp.bhef"), &ramp).unwrap();
    let mask = Heightmap::from_fn(n, n, 1.0, |x, _| if x < 32 { 1.0 } else { 0.0 }).unwrap();
    bhef::save_atomic(&p.join("mask.bhef"), &mask).unwrap();
    let run = |extra: &[&str], out: &str| {
        // 2 m cells: the default 10 m brush is 5 nodes wide, as the reach checked below assumes.
        let mut args = vec![
            "erode",
            "--model",
            "droplet",
            "--droplets",
            "4000",
            "--cell-size",
            "2",
            "--in",
            "ramp.bhef",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        talus(&args, p);
        bhef::load(&p.join(out)).unwrap()
    };
    let steered = run(&["--mask", "mask.bhef"], "s.bhef");
    let free = run(&[], "f.bhef");
    let changed = |m: &Heightmap, x0: usize| {
        (0..n).flat_map(|y| (x0..n).map(move |x| (x, y))).filter(|&(x, y)| m.get(x, y) != ramp.get(x, y)).count()
    };
    assert_eq!(changed(&steered, 32 + 6), 0, "nothing changes uphill of the mask");
    assert!(changed(&steered, 0) > 100, "the masked part erodes");
    assert!(changed(&free, 38) > 1000, "without the mask the whole slope erodes");

    let bad = Heightmap::from_fn(n, n, 1.0, |_, _| 1.5).unwrap();
    bhef::save_atomic(&p.join("bad.bhef"), &bad).unwrap();
    let small = Heightmap::from_fn(10, 10, 1.0, |_, _| 1.0).unwrap();
    bhef::save_atomic(&p.join("small.bhef"), &small).unwrap();
    for (m, says) in [("bad.bhef", "[0, 1]"), ("small.bhef", "10×10")] {
        let out = Command::new(env!("CARGO_BIN_EXE_talus"))
            .args(["erode", "--model", "droplet", "--in", "ramp.bhef", "--out", "x.bhef", "--mask", m])
            .current_dir(p)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
    }
    assert!(!p.join("x.bhef").exists());
}
