//! Proof that other tools read our exports (issue #6): each test runs a real outside reader on a
//! file we wrote and compares what it reports with the map, within the format's precision.
//!
//! The readers are installed by `.ci/deps` (pngcheck, Pillow, GDAL, OpenEXR tools and the PyPI
//! OpenEXR bindings, Assimp, the Khronos glTF validator under `$HOME/.cache/talus-tools`). A
//! missing reader is a test FAILURE, not a skip: run `bash .ci/deps` first.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use talus::core::heightmap::Heightmap;
use talus::core::io::interop::{self, ExportOptions, ImportOptions};
use talus::core::io::sidecar;

/// A map whose corners differ and which is symmetric along neither axis, with fractional values.
fn terrain(w: usize, h: usize) -> Heightmap {
    Heightmap::from_fn(w, h, 3.0, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        120.0 + 7.25 * fx - 13.5 * fy
            + 20.0 * (fx * 0.37).sin() * (fy * 0.21).cos()
            + if (x, y) == (1, 0) { 50.0 } else { 0.0 }
    })
    .unwrap()
}

fn run(program: &str, args: &[&str]) -> Output {
    run_env(program, args, &[])
}

fn run_env(program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(program);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap_or_else(|e| {
        panic!("outside reader `{program}` could not be run ({e}): install it with `bash .ci/deps`")
    });
    assert!(
        out.status.success(),
        "`{program} {}` failed: {:?}\nstdout: {}\nstderr: {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn tools_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Asserts every outside value matches the map within `tol` (0: the same `f32`; the JSON the
/// readers print goes through decimal, so exact values are compared after rounding to `f32`).
fn assert_close(what: &str, hm: &Heightmap, outside: &[f64], tol: f64) {
    assert_eq!(outside.len(), hm.len(), "{what}: value count");
    for (i, (&ours, &theirs)) in hm.data.iter().zip(outside).enumerate() {
        let theirs = if tol == 0.0 { theirs as f32 as f64 } else { theirs };
        assert!(
            (ours as f64 - theirs).abs() <= tol,
            "{what}: node x={}, y={} is {ours} here but {theirs} there (tolerance {tol})",
            i % hm.width,
            i / hm.width
        );
    }
}

#[test]
fn png16_is_read_by_pngcheck_and_pillow() {
    let d = tempfile::tempdir().unwrap();
    let hm = terrain(37, 21);
    let p = d.path().join("h.png");
    let rep = interop::save(&p, &hm, &ExportOptions::default()).unwrap();
    let [lo, hi] = rep.range.unwrap();
    let check = stdout(&run("pngcheck", &["-v", s(&p)]));
    assert!(check.contains("37 x 21 image, 16-bit grayscale"), "{check}");
    assert!(check.contains("No errors"), "{check}");
    let v: Value = serde_json::from_str(&stdout(&run("python3", &[s(&tools_dir("read_png.py")), s(&p)]))).unwrap();
    assert_eq!(v["size"], serde_json::json!([37, 21]));
    assert!(v["mode"].as_str().unwrap().starts_with("I"), "Pillow mode {}", v["mode"]);
    let metres: Vec<f64> = v["pixels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| lo as f64 + p.as_f64().unwrap() / 65535.0 * (hi - lo) as f64)
        .collect();
    assert_close("Pillow PNG16", &hm, &metres, (hi - lo) as f64 / 65535.0 * 0.5 + 1e-4);
    // And back through our importer with the sidecar.
    let back = interop::load(&p, &ImportOptions::default()).unwrap();
    assert_close(
        "our PNG16 importer",
        &hm,
        &back.data.iter().map(|&h| h as f64).collect::<Vec<_>>(),
        (hi - lo) as f64 / 65535.0 * 0.5 + 1e-4,
    );
}

#[test]
fn r16_is_read_by_pillow_in_the_same_order_as_the_png() {
    let d = tempfile::tempdir().unwrap();
    let hm = terrain(33, 17);
    let (png, raw) = (d.path().join("h.png"), d.path().join("h.r16"));
    interop::save(&png, &hm, &ExportOptions::default()).unwrap();
    interop::save(&raw, &hm, &ExportOptions::default()).unwrap();
    let a: Value = serde_json::from_str(&stdout(&run("python3", &[s(&tools_dir("read_png.py")), s(&png)]))).unwrap();
    let b: Value =
        serde_json::from_str(&stdout(&run("python3", &[s(&tools_dir("read_png.py")), "r16", s(&raw), "33", "17"])))
            .unwrap();
    assert_eq!(
        a["pixels"], b["pixels"],
        "R16 (little-endian, row 0 first) and PNG hold the same samples in the same order"
    );
    let sc = sidecar::read(&raw).unwrap().unwrap();
    let metres: Vec<f64> = b["pixels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| sc.min as f64 + p.as_f64().unwrap() / 65535.0 * (sc.max - sc.min) as f64)
        .collect();
    assert_close("Pillow R16", &hm, &metres, (sc.max - sc.min) as f64 / 65535.0 * 0.5 + 1e-4);
}

#[test]
fn geotiff_is_read_by_gdal_with_its_geotransform() {
    let d = tempfile::tempdir().unwrap();
    let hm = terrain(29, 13);
    let p = d.path().join("h.tif");
    interop::save(&p, &hm, &ExportOptions::default()).unwrap();
    let info: Value = serde_json::from_str(&stdout(&run("gdalinfo", &["-stats", "-json", s(&p)]))).unwrap();
    assert_eq!(info["driverShortName"], "GTiff");
    assert_eq!(info["size"], serde_json::json!([29, 13]));
    assert_eq!(info["metadata"][""]["AREA_OR_POINT"], "Point", "heights are node samples (PixelIsPoint)");
    let band = &info["bands"][0];
    assert_eq!(band["type"], "Float32");
    let st = hm.stats();
    let stat = |k: &str| {
        band["metadata"][""][k].as_str().unwrap_or_else(|| panic!("no {k} in {band}")).parse::<f64>().unwrap()
    };
    assert!((stat("STATISTICS_MINIMUM") - st.min as f64).abs() < 1e-4, "{band}");
    assert!((stat("STATISTICS_MAXIMUM") - st.max as f64).abs() < 1e-4, "{band}");
    // Pixel size 3 m, north up (negative y step); PixelIsPoint puts the pixel-corner origin half a
    // cell west and north of the south-west node's (0, 0) model position.
    let gt: Vec<f64> = info["geoTransform"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!((gt[1], gt[2], gt[4], gt[5]), (3.0, 0.0, 0.0, -3.0), "{gt:?}");
    assert_eq!((gt[0], gt[3]), (-1.5, 12.0 * 3.0 + 1.5), "{gt:?}");
    // Every value, in file order, through GDAL's XYZ writer.
    let xyz = d.path().join("h.xyz");
    run("gdal_translate", &["-q", "-of", "XYZ", s(&p), s(&xyz)]);
    let vals: Vec<f64> = std::fs::read_to_string(&xyz)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect();
    assert_close("GDAL XYZ", &hm, &vals, 1e-3);
}

#[test]
fn srtm_tiles_read_like_gdal_reads_them() {
    // A synthetic SRTM3 tile with a void; GDAL's SRTMHGT driver converts it to a Float32 GeoTIFF
    // (voids stay -32768 there); our importer must agree on every non-void node.
    let d = tempfile::tempdir().unwrap();
    let n = 1201usize;
    let val = |x: usize, y: usize| -> i16 { ((x * 3 + y * 7) % 4000) as i16 - 100 };
    let mut bytes = Vec::with_capacity(2 * n * n);
    for y in 0..n {
        for x in 0..n {
            let v = if (x, y) == (600, 17) { -32768 } else { val(x, y) };
            bytes.extend_from_slice(&v.to_be_bytes());
        }
    }
    let hgt = d.path().join("N45E006.hgt");
    std::fs::write(&hgt, &bytes).unwrap();
    let tif = d.path().join("gdal.tif");
    run("gdal_translate", &["-q", "-ot", "Float32", s(&hgt), s(&tif)]);
    // Both are geographic: keep the file grids (no resampling to square cells) to compare nodes.
    let keep = ImportOptions { keep_grid: true, ..Default::default() };
    let theirs = interop::load(&tif, &keep).unwrap();
    let ours = interop::load(&hgt, &keep).unwrap();
    // Same metres on both sides (GDAL's tiepoint is the pixel corner: half a pixel further north).
    assert!((ours.cell_size - theirs.cell_size).abs() < 0.01, "{} {}", ours.cell_size, theirs.cell_size);
    assert_eq!((ours.width, ours.height), (theirs.width, theirs.height));
    for y in 0..n {
        for x in 0..n {
            if (x, y) == (600, 17) {
                assert_eq!(theirs.get(x, y), -32768.0);
                assert!((ours.get(x, y) - val(x, y) as f32).abs() < 20.0, "void filled from its neighbours");
            } else {
                assert_eq!(ours.get(x, y), theirs.get(x, y), "x={x}, y={y}");
            }
        }
    }
}

#[test]
fn exr_is_read_by_openexr() {
    let d = tempfile::tempdir().unwrap();
    let hm = terrain(23, 11);
    let p = d.path().join("h.exr");
    interop::save(&p, &hm, &ExportOptions::default()).unwrap();
    let header = stdout(&run("exrheader", &[s(&p)]));
    assert!(header.contains("Y, 32-bit floating-point"), "{header}");
    assert!(header.contains("(0 0) - (22 10)"), "{header}");
    let v: Value = serde_json::from_str(&stdout(&run("python3", &[s(&tools_dir("read_exr.py")), s(&p)]))).unwrap();
    assert_eq!(v["size"], serde_json::json!([23, 11]));
    let y: Vec<f64> = v["channels"]["Y"].as_array().expect("channel Y").iter().map(|x| x.as_f64().unwrap()).collect();
    assert_close("OpenEXR", &hm, &y, 0.0);
}

#[test]
fn glb_passes_the_khronos_validator_and_assimp() {
    let d = tempfile::tempdir().unwrap();
    let hm = terrain(31, 19);
    let p = d.path().join("h.glb");
    interop::save(&p, &hm, &ExportOptions { decimate: 2, ..Default::default() }).unwrap();
    let home = std::env::var("HOME").unwrap_or_default();
    let modules =
        std::env::var("TALUS_TOOLS").unwrap_or_else(|_| format!("{home}/.cache/talus-tools")) + "/node_modules";
    assert!(
        Path::new(&modules).join("gltf-validator").is_dir(),
        "gltf-validator is not installed in {modules}: run `bash .ci/deps`"
    );
    let report: Value = serde_json::from_str(&stdout(&run_env(
        "node",
        &[s(&tools_dir("validate_glb.js")), s(&p)],
        &[("NODE_PATH", &modules)],
    )))
    .unwrap();
    assert_eq!(report["issues"]["numErrors"], 0, "{report}");
    assert_eq!(report["issues"]["numWarnings"], 0, "{report}");
    // 31 → 16 columns, 19 → 10 rows (every 2nd node plus the last).
    assert_eq!(report["info"]["totalVertexCount"], 160, "{report}");
    assert_eq!(report["info"]["totalTriangleCount"], 15 * 9 * 2, "{report}");
    let a = stdout(&run("assimp", &["info", s(&p)]));
    assert!(
        a.contains("Meshes:             1")
            && a.contains("Vertices:           160")
            && a.contains("Faces:              270"),
        "{a}"
    );
}

#[test]
fn obj_is_read_by_assimp() {
    let d = tempfile::tempdir().unwrap();
    let hm = terrain(12, 9);
    let p = d.path().join("h.obj");
    interop::save(&p, &hm, &ExportOptions::default()).unwrap();
    let a = stdout(&run("assimp", &["info", s(&p)]));
    assert!(a.contains("Meshes:             1") && a.contains("Faces:              176"), "{a}");
    // Assimp splits vertices per face corner for OBJ unless joined; require the joined count.
    let j = stdout(&run("assimp", &["info", s(&p), "-jiv"]));
    assert!(j.contains("Vertices:           108"), "{j}");
}

/// Issue #27: every file of an engine tile set, the height tiles and every texture map, is read
/// by pngcheck, Pillow and GDAL at the tile's size and in the documented pixel format.
#[test]
fn tile_sets_and_their_maps_are_read_by_pngcheck_pillow_and_gdal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let talus = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_talus")).args(args).current_dir(d).output().unwrap();
        assert!(out.status.success(), "talus {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    talus(&["demo", "--project", "p.talus", "--size", "129", "--layers", "stream-power"]);
    let build = "build p.talus --engine unity --size 257 --tiles 2x2 --tile-format png --maps all --out set";
    talus(&build.split(' ').collect::<Vec<_>>());
    let set = d.join("set");
    let mut pngs: Vec<PathBuf> = std::fs::read_dir(&set)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    pngs.sort();
    // 4 height tiles and 4 tiles of each map.
    assert_eq!(pngs.len(), 4 * (1 + talus::core::io::tiles::MAPS.len()), "{pngs:?}");
    for p in &pngs {
        run("pngcheck", &["-q", s(p)]);
    }
    let script = "import json,sys\nfrom PIL import Image\nprint(json.dumps([[p, *Image.open(p).size, Image.open(p).mode] for p in sys.argv[1:]]))";
    let mut args = vec!["-c", script];
    args.extend(pngs.iter().map(|p| s(p)));
    let seen: Value = serde_json::from_str(&stdout(&run("python3", &args))).unwrap();
    for row in seen.as_array().unwrap() {
        let name = row[0].as_str().unwrap();
        assert_eq!((row[1].as_u64(), row[2].as_u64()), (Some(129), Some(129)), "{name}");
        let mode = row[3].as_str().unwrap();
        let want: &[&str] = if name.contains("_normal_") {
            &["RGB"]
        } else if name.contains("_splat_") {
            &["RGBA"]
        } else {
            &["I;16", "I;16B", "I"]
        };
        assert!(want.contains(&mode), "{name}: Pillow mode {mode}, expected one of {want:?}");
    }
    for p in &pngs {
        let info: Value = serde_json::from_str(&stdout(&run("gdalinfo", &["-json", s(p)]))).unwrap();
        assert_eq!(info["size"], serde_json::json!([129, 129]), "gdalinfo {}", p.display());
    }
}
