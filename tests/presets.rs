//! The presets shipped in `assets/presets/` load, and the CLI generates and erodes with them.
use std::path::{Path, PathBuf};
use std::process::Command;

use talus::core::brush::BrushParams;
use talus::core::generate::GenerateParams;
use talus::core::io::presets;

fn dir(kind: &str) -> Vec<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets").join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    v.sort();
    v
}

fn talus(args: &[&str], cwd: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .current_dir(cwd)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert!(out.status.success(), "talus {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn shipped_generator_presets_generate() {
    let names: Vec<String> =
        dir("generate").iter().map(|p| p.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["alpine", "archipelago", "desert_canyons", "rolling_hills"]);
    let d = tempfile::tempdir().unwrap();
    for p in dir("generate") {
        let g: GenerateParams = presets::load(&p).unwrap();
        assert_eq!((g.width, g.height), (513, 513), "{}", p.display());
        // Shipped in world units: nothing left to convert.
        assert!(!g.has_legacy_units(), "{}", p.display());
        assert_eq!(presets::load_generate(&p).unwrap(), g);
        // Generated small here; the preset's own size is checked above.
        talus(&["generate", "--preset", p.to_str().unwrap(), "--size", "65", "--out", "g.bhef"], d.path());
        let hm = talus::core::io::bhef::load(&d.path().join("g.bhef")).unwrap();
        let s = hm.stats();
        assert!(s.max > s.min, "{} is flat", p.display());
    }
}

#[test]
fn shipped_erosion_presets_erode() {
    let d = tempfile::tempdir().unwrap();
    talus(&["generate", "--kind", "fbm", "--size", "65", "--seed", "2", "--out", "a.bhef"], d.path());
    let models = [
        ("alpine_droplets", "droplet", "--droplets", "500"),
        ("archipelago_pipe", "pipe", "--steps", "5"),
        ("desert_thermal", "thermal", "--steps", "5"),
        ("rolling_hills_stream_power", "stream-power", "--steps", "3"),
        ("young_mountains_stream_power", "stream-power", "--steps", "3"),
        ("gentle_valleys_droplets", "droplet", "--droplets", "500"),
        ("badlands_snowball", "snowball", "--droplets", "500"),
        ("light_rills_snowball", "snowball", "--droplets", "500"),
        ("scree_slopes_thermal", "thermal", "--steps", "5"),
        ("long_wash_pipe", "pipe", "--steps", "5"),
    ];
    assert_eq!(dir("erode").len(), models.len());
    for (name, model, flag, n) in models {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/presets/erode/{name}.ron"));
        talus(
            &["erode", "--model", model, "--params", p.to_str().unwrap(), flag, n, "--in", "a.bhef", "--out", "e.bhef"],
            d.path(),
        );
        assert_ne!(
            std::fs::read(d.path().join("a.bhef")).unwrap(),
            std::fs::read(d.path().join("e.bhef")).unwrap(),
            "{name} changed nothing"
        );
    }
}

#[test]
fn shipped_brush_presets_load_and_validate() {
    let all = dir("brush");
    assert!(all.len() >= 2);
    for p in all {
        let b: BrushParams = presets::load(&p).unwrap();
        b.validate().unwrap();
    }
}

#[test]
fn a_version_1_preset_is_read_in_world_units() {
    // Grid units, converted with the preset's own 4 m cell size, by the library and by the CLI.
    let d = tempfile::tempdir().unwrap();
    let v1 = d.path().join("v1.ron");
    std::fs::write(
        &v1,
        "(cell_size: 4.0, base: Fbm((frequency: 0.005)), hills: Some((radius_min: 2.0, radius_max: 5.0)))",
    )
    .unwrap();
    let p = presets::load_generate(&v1).unwrap();
    let talus::core::generate::Base::Fbm(f) = &p.base else { panic!("not fBm") };
    assert!((f.wavelength_m - 800.0).abs() < 1e-9);
    let h = p.hills.as_ref().unwrap();
    assert_eq!((h.radius_min_m, h.radius_max_m), (8.0, 20.0));
    let out = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["generate", "--preset", "v1.ron", "--print-params"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("frequency") && text.contains("wavelength_m"), "{text}");
    assert_eq!(ron::from_str::<GenerateParams>(&text).unwrap(), p);
}
