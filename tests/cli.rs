//! End-to-end tests of the `talus` binary: generate → info → erode → files, and error paths.
use std::path::Path;
use std::process::Command;

fn talus(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .current_dir(dir)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap()
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn generate_info_erode_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(
        &["generate", "--kind", "fbm", "--size", "65", "--seed", "3", "--out", "a.bhef", "--preview", "a.png"],
        p,
    ));
    assert_eq!(std::fs::metadata(p.join("a.bhef")).unwrap().len(), 8 + 12 * 65 * 65);
    assert!(std::fs::metadata(p.join("a.png")).unwrap().len() > 100);
    let info = talus(&["info", "a.bhef", "--json"], p);
    ok(&info);
    let v: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(v["width"], 65);
    assert_eq!(v["height"], 65);
    assert!(v["max"].as_f64().unwrap() > v["min"].as_f64().unwrap());
    assert_eq!(v["cell_size"], 2.0, "the sidecar records generate's 2 m cells");
    // Same seed → same file.
    ok(&talus(&["generate", "--kind", "fbm", "--size", "65", "--seed", "3", "--out", "b.bhef"], p));
    assert_eq!(std::fs::read(p.join("a.bhef")).unwrap(), std::fs::read(p.join("b.bhef")).unwrap());
    for (model, amount) in [
        ("droplet", "--droplets"),
        ("snowball", "--droplets"),
        ("pipe", "--steps"),
        ("thermal", "--steps"),
        ("stream-power", "--steps"),
    ] {
        let n = if amount == "--droplets" { "2000" } else { "5" };
        let out = format!("e-{model}.bhef");
        let rep = format!("e-{model}.json");
        ok(&talus(
            &[
                "erode",
                "--model",
                model,
                "--in",
                "a.bhef",
                "--out",
                &out,
                amount,
                n,
                "--report",
                &rep,
                "--erosion-map",
                "e.png",
            ],
            p,
        ));
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(p.join(&rep)).unwrap()).unwrap();
        assert_eq!(r["done"], r["total"], "{model}");
        assert_ne!(
            std::fs::read(p.join("a.bhef")).unwrap(),
            std::fs::read(p.join(&out)).unwrap(),
            "{model} changed nothing"
        );
    }
    // Without --model: the editor's default Simulate, stream power with its defaults.
    ok(&talus(&["erode", "--in", "a.bhef", "--out", "default.bhef", "--steps", "5"], p));
    assert_eq!(
        std::fs::read(p.join("default.bhef")).unwrap(),
        std::fs::read(p.join("e-stream-power.bhef")).unwrap(),
        "erode without --model is not stream power"
    );
}

/// `erode --out` writes the format its extension names (GeoTIFF here, equal to the BHEF bit for
/// bit) and `--in` reads one, and an extension it cannot write is refused before the run, with
/// nothing written.
#[test]
fn erode_writes_the_format_its_output_names_and_refuses_others_first() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(&["generate", "--kind", "fbm", "--size", "65", "--seed", "3", "--out", "a.bhef"], p));
    let run = ["erode", "--model", "thermal", "--in", "a.bhef", "--steps", "3", "--out"];
    ok(&talus(&[&run[..], &["e.bhef"]].concat(), p));
    ok(&talus(&[&run[..], &["e.tif"]].concat(), p));
    ok(&talus(&[&run[..], &["e-noext"]].concat(), p));
    let tif = std::fs::read(p.join("e.tif")).unwrap();
    assert!(tif.starts_with(b"II*\0") || tif.starts_with(b"MM\0*"), "e.tif is not a TIFF");
    let a = talus::core::io::bhef::load(&p.join("e.bhef")).unwrap();
    let b = talus::core::io::interop::load(&p.join("e.tif"), &Default::default()).unwrap();
    assert!(a.data.iter().map(|v| v.to_bits()).eq(b.data.iter().map(|v| v.to_bits())), "the GeoTIFF differs");
    assert_eq!(std::fs::read(p.join("e-noext")).unwrap(), std::fs::read(p.join("e.bhef")).unwrap());
    // The GeoTIFF back in: read by its extension, not as a BHEF header.
    let again = ["erode", "--model", "thermal", "--in", "e.tif", "--steps", "3", "--out", "f.bhef"];
    ok(&talus(&again, p));
    assert_eq!(talus::core::io::bhef::load(&p.join("f.bhef")).unwrap().width, 65);
    for (bad, says) in [("m.obj", "convert makes meshes"), ("m.xyz", ".bhef")] {
        let out = talus(&[&run[..], &[bad]].concat(), p);
        assert!(!out.status.success(), "--out {bad} was taken");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "--out {bad}: {err}");
        assert!(!p.join(bad).exists());
    }
}

/// Particle counts and lengths are world units: `--droplets N` is N particles on the input map at
/// any `--cell-size`; an older parameter file in grid units is converted for the input map; the
/// old names and absurd counts are clear errors.
#[test]
fn erode_takes_world_units_and_converts_older_parameter_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(&["generate", "--kind", "fbm", "--size", "65", "--seed", "3", "--out", "a.bhef"], p));
    let report =
        |name: &str| -> serde_json::Value { serde_json::from_slice(&std::fs::read(p.join(name)).unwrap()).unwrap() };
    for (model, cell) in [("droplet", "1"), ("droplet", "2.5"), ("snowball", "4")] {
        let rep = format!("n-{model}-{cell}.json");
        let args = ["erode", "--model", model, "--in", "a.bhef", "--out", "n.bhef", "--cell-size", cell];
        ok(&talus(&[&args[..], &["--droplets", "700", "--report", &rep]].concat(), p));
        let r = report(&rep);
        assert_eq!((r["done"].as_u64(), r["total"].as_u64()), (Some(700), Some(700)), "{model} at {cell} m");
    }
    // Version 1's names: 300 droplets and a 2-node brush, made for this map at 2 m cells.
    std::fs::write(p.join("old.ron"), "(droplets: 300, radius: 2.0, max_lifetime: 40)").unwrap();
    let args = ["erode", "--model", "droplet", "--in", "a.bhef", "--cell-size", "2"];
    ok(&talus(&[&args[..], &["--out", "o.bhef", "--params", "old.ron", "--report", "old.json"]].concat(), p));
    let r = report("old.json");
    assert_eq!(r["total"].as_u64(), Some(300));
    let dp = &r["params"]["Droplet"];
    assert_eq!((dp["radius_m"].as_f64(), dp["max_path_m"].as_f64()), (Some(4.0), Some(80.0)), "{dp}");
    assert!(dp.get("radius").is_none() && dp.get("droplets").is_none(), "{dp}");
    // The same run in world units gives the same bits.
    std::fs::write(
        p.join("new.ron"),
        format!("(droplets_per_km2: {}, radius_m: 4.0, max_path_m: 80.0)", dp["droplets_per_km2"]),
    )
    .unwrap();
    ok(&talus(&[&args[..], &["--params", "new.ron", "--out", "w.bhef"]].concat(), p));
    assert_eq!(std::fs::read(p.join("o.bhef")).unwrap(), std::fs::read(p.join("w.bhef")).unwrap());
    // Old names on the command line and counts no map can hold are refused with the reason.
    for (extra, says) in [
        (["--set", "droplets=5"], "droplets_per_km2"),
        (["--droplets", "18446744073709551615"], "droplets_per_km2"),
        (["--droplets", "many"], "--droplets"),
    ] {
        let extra = [&extra[..], &["--out", "x.bhef"]].concat();
        let out = talus(&[&args[..], &extra[..]].concat(), p);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
}

#[test]
fn every_generator_kind_runs_from_the_cli() {
    let d = tempfile::tempdir().unwrap();
    for kind in [
        "fbm",
        "value",
        "ridged",
        "simplex",
        "opensimplex",
        "diamond-square",
        "lazy-world",
        "voronoi-island",
        "hills",
        "flat",
    ] {
        ok(&talus(&["generate", "--kind", kind, "--size", "33", "--out", &format!("{kind}.bhef")], d.path()));
    }
    ok(&talus(
        &[
            "generate",
            "--kind",
            "value",
            "--interp",
            "cubic",
            "--terrace-steps",
            "5",
            "--island-waterside",
            "8",
            "--size",
            "33",
            "--out",
            "x.bhef",
        ],
        d.path(),
    ));
    ok(&talus(
        &[
            "generate",
            "--kind",
            "lazy-world",
            "--size",
            "32",
            "--set",
            "base.side_log2=24",
            "--set",
            "base.origin=[1000000,2000000]",
            "--out",
            "w.bhef",
        ],
        d.path(),
    ));
}

#[test]
fn presets_round_trip_through_print_params() {
    let d = tempfile::tempdir().unwrap();
    let out = talus(
        &["generate", "--kind", "ridged", "--size", "40", "--seed", "5", "--octaves", "4", "--print-params"],
        d.path(),
    );
    ok(&out);
    std::fs::write(d.path().join("p.ron"), &out.stdout).unwrap();
    ok(&talus(&["generate", "--preset", "p.ron", "--out", "1.bhef"], d.path()));
    ok(&talus(
        &["generate", "--kind", "ridged", "--size", "40", "--seed", "5", "--octaves", "4", "--out", "2.bhef"],
        d.path(),
    ));
    assert_eq!(std::fs::read(d.path().join("1.bhef")).unwrap(), std::fs::read(d.path().join("2.bhef")).unwrap());
}

#[test]
fn bad_input_is_a_clear_error_without_panic() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("broken.bhef"), [1u8, 0, 0, 0, 2, 0, 0, 0, 0, 0]).unwrap();
    for args in [
        vec!["info", "broken.bhef"],
        vec!["info", "missing.bhef"],
        vec!["generate", "--size", "0", "--out", "x.bhef"],
        vec!["generate", "--octaves", "999", "--out", "x.bhef"],
        vec!["generate", "--seed", "banana", "--out", "x.bhef"],
        vec!["generate", "--set", "base.octaves=many", "--out", "x.bhef"],
        vec!["generate", "--kind", "hills", "--octaves", "3", "--out", "x.bhef"],
        vec!["erode", "--model", "droplet", "--in", "broken.bhef", "--out", "y.bhef"],
    ] {
        let out = talus(&args, p);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!p.join("x.bhef").exists() && !p.join("y.bhef").exists());
    // Usage errors are clap's (exit 2).
    assert_eq!(talus(&["generate", "--kind", "nope"], p).status.code(), Some(2));
}

/// A number flag given NaN, an infinity or an absurd value is refused by its name, before anything
/// runs; a negative number reaches the flag's own check instead of reading as an unknown flag.
#[test]
fn number_flags_refuse_nan_infinity_and_absurd_values_by_name() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(&["generate", "--size", "33", "--out", "a.bhef"], p));
    let gen_ = |flag: &str, v: &str| {
        vec![
            "generate".to_string(),
            "--size".into(),
            "33".into(),
            "--out".into(),
            "x.bhef".into(),
            flag.into(),
            v.into(),
        ]
    };
    let erode = |flag: &str, v: &str| {
        ["erode", "--in", "a.bhef", "--out", "x.bhef", "--steps", "1", flag, v].map(String::from).to_vec()
    };
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    for v in ["nan", "inf", "-inf", "NaN"] {
        for flag in
            ["--cell-size", "--amplitude", "--wavelength", "--persistence", "--warp-strength", "--terrace-smoothness"]
        {
            cases.push((gen_(flag, v), "not a finite number"));
        }
        cases.push((erode("--cell-size", v), "not a finite number"));
        cases.push((["analyze", "a.bhef", "--channel-area", v].map(String::from).to_vec(), "not a finite number"));
        cases
            .push((["convert", "a.bhef", "x.png", "--cell-size", v].map(String::from).to_vec(), "not a finite number"));
    }
    for v in ["nan", "inf"] {
        cases.push((erode("--sea-level", v), "not a sea level"));
        cases.push((erode("--set", &format!("k={v}")), "is not a finite number"));
    }
    for v in ["-5", "0", "1e30"] {
        cases.push((erode("--cell-size", v), "is not a distance between nodes"));
        cases.push((gen_("--cell-size", v), "is not a distance between nodes"));
    }
    cases.push((gen_("--amplitude", "-3"), "outside its range"));
    for (args, says) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = talus(&args, p);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say `{says}`: {err}");
        assert!(!err.contains("panicked") && !err.contains("invalid type: null"), "{args:?}: {err}");
    }
    assert!(!p.join("x.bhef").exists() && !p.join("x.png").exists());
    // No sea is `-inf`, as the flag's help says.
    ok(&talus(&["erode", "--in", "a.bhef", "--out", "x.bhef", "--steps", "1", "--sea-level", "-inf"], p));
}

#[test]
fn no_display_runs_the_headless_demo() {
    let d = tempfile::tempdir().unwrap();
    ok(&talus(&["demo", "--size", "65", "--out-dir", "o"], d.path()));
    for f in [
        "terrain.bhef",
        "eroded.bhef",
        "build.bhef",
        "terrain.png",
        "eroded.png",
        "erosion.png",
        "build.png",
        "detail.png",
    ] {
        assert!(d.path().join("o").join(f).exists(), "{f}");
    }
}

/// `talus FILE` (the desktop entry's `%f`) opens FILE in the editor: a file that is not there, a
/// folder, or FILE with a subcommand is a clear error before anything else runs; and with
/// `--gui` and no display Talus explains that it needs a desktop session (stderr and the log
/// file) instead of running the headless demo.
#[test]
fn a_file_to_open_is_checked_and_gui_without_display_explains() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir(p.join("folder.talus")).unwrap();
    for (args, says) in [
        (vec!["missing.talus"], "missing.talus: no such file"),
        (vec!["missing.bhef"], "missing.bhef: no such file"),
        (vec!["folder.talus"], "is a folder"),
        (vec!["x.talus", "info", "y.bhef"], "not both"),
    ] {
        let out = talus(&args, p);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let state = p.join("state");
    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("--gui")
        .current_dir(p)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("Talus needs a desktop session") && err.contains("talus demo"), "{err}");
    let log = std::fs::read_to_string(state.join("talus/last-error.txt")).unwrap();
    assert!(log.contains("Talus needs a desktop session"), "{log}");
    assert!(err.contains("last-error.txt"), "stderr names the log: {err}");
    assert!(!p.join("talus-out").exists(), "--gui never falls back to the headless demo");
}

#[test]
fn convert_round_trips_resizes_and_explains_errors() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(
        &[
            "generate",
            "--kind",
            "fbm",
            "--width",
            "100",
            "--height",
            "60",
            "--seed",
            "4",
            "--normalize=-20:380",
            "--out",
            "a.bhef",
        ],
        p,
    ));
    let a = talus::core::io::bhef::load(&p.join("a.bhef")).unwrap();
    // BHEF → PNG16 (+ sidecar) → BHEF restores metres within half a 16-bit step.
    ok(&talus(&["convert", "a.bhef", "a.png", "--cell-size", "2"], p));
    assert!(p.join("a.png.json").exists());
    ok(&talus(&["convert", "a.png", "b.bhef"], p));
    let b = talus::core::io::bhef::load(&p.join("b.bhef")).unwrap();
    let err = a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(err <= 400.0 / 65535.0, "{err}");
    // Unity preset size: the longer side 100 snaps to 129, square.
    ok(&talus(&["convert", "a.bhef", "u.r16", "--resize", "unity"], p));
    assert_eq!(std::fs::metadata(p.join("u.r16")).unwrap().len(), 2 * 129 * 129);
    // Unreal: centred range, the Z scale printed.
    let out = talus(&["convert", "a.bhef", "ue.png", "--unreal", "--resize", "253x127"], p);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Z scale"));
    // Float and mesh outputs, a normal map on the side.
    for o in ["a.exr", "a.tif", "a.obj", "a.glb"] {
        ok(&talus(&["convert", "a.bhef", o, "--decimate", "3", "--normal-map", "n.png"], p));
    }
    ok(&talus(&["convert", "a.tif", "c.bhef"], p));
    assert_eq!(std::fs::read(p.join("a.bhef")).unwrap(), std::fs::read(p.join("c.bhef")).unwrap());
    // A non-square R16 without a sidecar needs --width; with it and --range the values are read.
    ok(&talus(&["convert", "a.bhef", "n.r16"], p));
    std::fs::rename(p.join("n.r16"), p.join("bare.r16")).unwrap();
    for (args, needle) in [
        (vec!["convert", "bare.r16", "x.bhef"], "--width"),
        (vec!["convert", "a.bhef", "x.jpg"], "unknown format"),
        (vec!["convert", "a.obj", "x.bhef"], "exported but not imported"),
        (vec!["convert", "a.bhef", "x.png", "--range", "5:1"], "MIN:MAX"),
        (vec!["convert", "a.bhef", "x.png", "--resize", "big"], "--resize"),
        (vec!["convert", "missing.png", "x.bhef"], "missing.png"),
    ] {
        let out = talus(&args, p);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("error:") && e.contains(needle), "{args:?}: {e}");
    }
    ok(&talus(&["convert", "bare.r16", "bare.bhef", "--width", "100", "--range", "0:10"], p));
    let bare = talus::core::io::bhef::load(&p.join("bare.bhef")).unwrap();
    assert_eq!((bare.width, bare.height, bare.stats().min, bare.stats().max), (100, 60, 0.0, 10.0));
}

/// `erode --backend gpu` says where it ran: on the GPU when this build has the `gpu` feature and
/// an adapter opens (software allowed here), otherwise on the CPU with the reason. Either way the
/// result is written and its books close.
#[test]
fn erode_backend_reports_where_it_ran() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(&["generate", "--kind", "fbm", "--size", "65", "--seed", "5", "--out", "a.bhef"], p));
    let run = talus(
        &[
            "erode",
            "--model",
            "pipe",
            "--backend",
            "gpu",
            "--gpu-software",
            "--in",
            "a.bhef",
            "--out",
            "g.bhef",
            "--steps",
            "20",
            "--report",
            "g.json",
        ],
        p,
    );
    ok(&run);
    let err = String::from_utf8_lossy(&run.stderr);
    let line = err.lines().find(|l| l.starts_with("backend: ")).unwrap_or_else(|| panic!("no backend line in {err}"));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(p.join("g.json")).unwrap()).unwrap();
    let backend = r["backend"].as_str().unwrap();
    assert_eq!(line.trim_start_matches("backend: "), backend);
    let required = std::env::var("TALUS_REQUIRE_GPU_TESTS").is_ok_and(|v| v == "1");
    if cfg!(feature = "gpu") && required {
        assert!(backend.starts_with("GPU: "), "{backend}");
    } else if !backend.starts_with("GPU") {
        assert!(backend.starts_with("CPU (") && backend.len() > 10, "a fallback must say why: {backend}");
    }
    let moved = r["ledger"]["eroded"].as_f64().unwrap();
    assert!(moved > 0.0);
    assert!(
        r["terrain_error"].as_f64().unwrap().abs() < 1e-4 * moved
            && r["material_error"].as_f64().unwrap().abs() < 1e-4 * moved,
        "{r}"
    );
    // The CPU default prints nothing about backends.
    let cpu = talus(&["erode", "--model", "pipe", "--in", "a.bhef", "--out", "c.bhef", "--steps", "20"], p);
    ok(&cpu);
    assert!(!String::from_utf8_lossy(&cpu.stderr).contains("backend:"));
}

/// A 65² island with a valley, written by `generate`, analysed and fixed through the binary.
#[test]
fn analyze_reports_and_fix_removes_pits_and_spikes() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(
        &["generate", "--kind", "fbm", "--size", "65", "--seed", "4", "--island-waterside", "20", "--out", "a.bhef"],
        p,
    ));
    let out = talus(&["analyze", "a.bhef", "--cell-size", "2", "--json", "--channel-area", "400"], p);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["width"], 65);
    assert_eq!(v["cell_size_m"], 2.0);
    for key in ["pits", "spikes", "drainage_density_per_m", "land_nodes"] {
        assert!(v[key].is_number(), "{key}: {v}");
    }
    assert!(v["anisotropy"]["axis_ratio"].as_f64().unwrap() > 0.0);
    // Plant a pit and a spike on land through a round trip via EXR (float, any tool can edit).
    let hm = talus::core::io::bhef::load(&p.join("a.bhef")).unwrap();
    let mut m = talus::core::Heightmap::from_data(hm.width, hm.height, 2.0, hm.data).unwrap();
    let (mut best, mut at) = (f32::MIN, 0);
    for y in 8..57 {
        for x in 8..57 {
            if m.get(x, y) > best {
                (best, at) = (m.get(x, y), y * 65 + x);
            }
        }
    }
    let (x, y) = (at % 65, at / 65);
    m.set(x, y, best + 30.0); // spike on the highest interior node
    let lo = [(2, 0), (4, 0), (2, 1), (3, 1), (4, 1), (2, 2), (3, 2), (4, 2)]
        .iter()
        .map(|&(dx, dy)| m.get(x + dx, y + dy - 1))
        .fold(f32::MAX, f32::min);
    assert!(lo > 2.0, "the pit must stay on land: {lo}");
    m.set(x + 3, y, lo - 1.0); // a pit beside it, 1 m below all its neighbours, still on land
    talus::core::io::openexr::save(&p.join("b.exr"), &m).unwrap();
    let rep = talus(&["analyze", "b.exr"], p);
    ok(&rep);
    let text = String::from_utf8_lossy(&rep.stdout);
    assert!(text.contains("concavity") && text.contains("anisotropy"), "{text}");
    let b: serde_json::Value = serde_json::from_slice(&talus(&["analyze", "b.exr", "--json"], p).stdout).unwrap();
    assert!(b["pits"].as_u64().unwrap() >= 1 && b["spikes"].as_u64().unwrap() >= 1, "{b}");
    // fix: spikes removed, depressions filled; then analyze finds none and compare reports the change.
    let fix = talus(&["fix", "b.exr", "--out", "c.exr", "--spikes", "--pits", "fill"], p);
    ok(&fix);
    assert!(String::from_utf8_lossy(&fix.stderr).contains("after"), "{}", String::from_utf8_lossy(&fix.stderr));
    let c: serde_json::Value =
        serde_json::from_slice(&talus(&["analyze", "c.exr", "--json", "--compare", "b.exr"], p).stdout).unwrap();
    assert_eq!((c["pits"].as_u64(), c["spikes"].as_u64()), (Some(0), Some(0)), "{c}");
    assert_eq!(c["comparison"]["land_lost_nodes"], 0);
    assert!(c["comparison"]["mean_abs_change_m"].as_f64().unwrap() > 0.0);
    ok(&talus(&["fix", "b.exr", "--out", "d.exr", "--pits", "breach"], p));
    // Errors, not panics: unknown file, size mismatch, nothing to do, bad numbers.
    for args in [
        vec!["analyze", "missing.bhef"],
        vec!["analyze", "a.bhef", "--compare", "small.bhef"],
        vec!["fix", "b.exr", "--out", "e.exr", "--pits", "none"],
        vec!["fix", "b.exr", "--out", "e.exr", "--epsilon", "-1"],
        vec!["analyze", "a.bhef", "--channel-area", "0"],
    ] {
        if args.contains(&"small.bhef") {
            ok(&talus(&["generate", "--kind", "flat", "--size", "9", "--out", "small.bhef"], p));
        }
        let o = talus(&args, p);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).starts_with("error:"), "{args:?}");
    }
}

/// An SRTM tile named for 46° N: `convert` says that degrees became metres and rows were
/// resampled, and the PNG's sidecar records it with the square cell size.
#[test]
fn a_geographic_hgt_tile_converts_with_metre_cells_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let n = 121; // 30″ cells over 1°
    let bytes: Vec<u8> = (0..n * n).flat_map(|i| (100 + (i % n) as i16).to_be_bytes()).collect();
    std::fs::write(p.join("N46E007.hgt"), bytes).unwrap();
    let out = talus(&["convert", "N46E007.hgt", "t.png"], p);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("note:") && err.contains("46.5° N") && err.contains("resampled"), "{err}");
    let sc: serde_json::Value = serde_json::from_slice(&std::fs::read(p.join("t.png.json")).unwrap()).unwrap();
    // 1° of latitude at 46.5° N is 111 161 m: 120 intervals of 926.34 m; x: 639.69 m per interval.
    let cell = sc["cell_size"].as_f64().unwrap();
    assert!((cell - 926.34).abs() < 0.01, "{sc}");
    assert_eq!((sc["width"].as_u64(), sc["height"].as_u64()), (Some(84), Some(121)), "{sc}");
    assert!(sc["notes"].as_array().unwrap().iter().any(|v| v.as_str().unwrap().contains("resampled")), "{sc}");
    // analyze reads the tile the same way and prints the note.
    let a = talus(&["analyze", "N46E007.hgt"], p);
    ok(&a);
    assert!(String::from_utf8_lossy(&a.stdout).contains("cell 926.3"), "{}", String::from_utf8_lossy(&a.stdout));
}

/// The cell size travels with a BHEF file in its sidecar: `generate` writes it, `erode` runs at
/// it unless `--cell-size` says otherwise and writes what it ran at, `info` prints it.
#[test]
fn a_bhef_keeps_its_cell_size_in_its_sidecar() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok(&talus(&["generate", "--size", "33", "--cell-size", "4", "--seed", "2", "--out", "a.bhef"], p));
    let cell = |f: &str| -> f64 {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p.join(f)).unwrap()).unwrap();
        assert_eq!(v["format"], "bhef", "{v}");
        v["cell_size"].as_f64().unwrap()
    };
    assert_eq!(cell("a.bhef.json"), 4.0);
    let info = talus(&["info", "a.bhef"], p);
    ok(&info);
    assert!(String::from_utf8_lossy(&info.stdout).contains("cell:   4 m (sidecar)"));
    // The erosion runs on the recorded 4 m cells: the same bits as with `--cell-size 4`.
    ok(&talus(&["erode", "--model", "thermal", "--in", "a.bhef", "--out", "b.bhef", "--steps", "3"], p));
    ok(&talus(
        &["erode", "--model", "thermal", "--in", "a.bhef", "--out", "c.bhef", "--steps", "3", "--cell-size", "4"],
        p,
    ));
    assert_eq!(std::fs::read(p.join("b.bhef")).unwrap(), std::fs::read(p.join("c.bhef")).unwrap());
    assert_eq!(cell("b.bhef.json"), 4.0);
    // A flag overrides it, and the output records what the run used.
    ok(&talus(
        &["erode", "--model", "thermal", "--in", "a.bhef", "--out", "e.bhef", "--steps", "3", "--cell-size", "1"],
        p,
    ));
    assert_eq!(cell("e.bhef.json"), 1.0);
    assert_ne!(std::fs::read(p.join("b.bhef")).unwrap(), std::fs::read(p.join("e.bhef")).unwrap());
    // Without a sidecar the default stays 2 m.
    std::fs::copy(p.join("a.bhef"), p.join("bare.bhef")).unwrap();
    ok(&talus(&["erode", "--model", "thermal", "--in", "bare.bhef", "--out", "f.bhef", "--steps", "3"], p));
    assert_eq!(cell("f.bhef.json"), 2.0);
    let info = talus(&["info", "bare.bhef"], p);
    assert!(String::from_utf8_lossy(&info.stdout).contains("cell:   not recorded"));
}
