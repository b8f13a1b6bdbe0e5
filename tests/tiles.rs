//! Engine tile sets (issue #27) through the real binary: the reference project (129², stream
//! power) built as Unreal and Unity tile sets in PNG16 and R16. Shared edges are the same samples
//! in both neighbours; `talus convert DIR/manifest.json` gives back the untiled build quantised
//! with the same range, bit for bit; the manifest validates against
//! `assets/schema/tiles-manifest.schema.json`; the maps have their documented ranges; bad sizes
//! and a non-empty folder without `--force` are clear errors that leave nothing behind; a cancel
//! leaves nothing either.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use talus::core::Heightmap;
use talus::core::io::interop::{dequantise, quantise};
use talus::core::io::png16::decode_samples;
use talus::core::io::tiles::{
    self, Engine, MapKind, TileError, TileFormat, TileLayout, TileSetInput, read_manifest, write_tile_set,
};
use talus::core::splat::{SplatBands, weights};

fn talus(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).current_dir(dir).output().unwrap()
}

fn ok(out: &std::process::Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A folder with the reference project `ref.talus` (129², stream power), made once.
fn project() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        ok(&talus(&["demo", "--project", "ref.talus", "--size", "129", "--layers", "stream-power"], &dir));
        dir
    })
}

/// A fresh folder holding a link to the reference project.
fn work() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(project().join("ref.talus"), d.path().join("ref.talus")).unwrap();
    d
}

/// The samples of one height tile in image order (rows put back for `south_first`).
fn tile_samples(dir: &Path, m: &tiles::Manifest, file: &str) -> Vec<u16> {
    let bytes = std::fs::read(dir.join(file)).unwrap();
    let s = m.tile_size;
    let v: Vec<u16> = match m.heights.format {
        TileFormat::Png16 => {
            let (w, h, v, full) = decode_samples(&bytes).unwrap();
            assert_eq!((w, h, full), (s, s, 65535));
            v.into_iter().map(|x| x as u16).collect()
        }
        TileFormat::R16 => {
            assert_eq!(bytes.len(), 2 * s * s);
            bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
        }
    };
    if m.heights.rows == "south_first" { v.chunks(s).rev().flatten().copied().collect() } else { v }
}

/// Every pair of neighbours holds the same samples on their shared column / row.
fn check_shared_edges<T: PartialEq + std::fmt::Debug>(m: &tiles::Manifest, tile: impl Fn(usize, usize) -> Vec<T>) {
    let s = m.tile_size;
    let [kx, ky] = m.tiles;
    let mut checked = 0;
    for y in 0..ky {
        for x in 0..kx {
            let a = tile(x, y);
            if x + 1 < kx {
                let b = tile(x + 1, y);
                for r in 0..s {
                    assert_eq!(a[r * s + s - 1], b[r * s], "tiles ({x},{y})–({},{y}) row {r}", x + 1);
                }
                checked += 1;
            }
            if y + 1 < ky {
                let b = tile(x, y + 1);
                assert_eq!(a[(s - 1) * s..], b[..s], "tiles ({x},{y})–({x},{})", y + 1);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, (kx - 1) * ky + kx * (ky - 1));
}

/// A small JSON-schema validator for what the manifest's schema uses: type (one or a list),
/// const, enum, required, properties, additionalProperties (false or a schema), items, minItems,
/// maxItems, minimum, maximum, exclusiveMinimum, minLength.
fn validate(schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let s = match schema.as_object() {
        Some(s) => s,
        None => return,
    };
    let type_ok = |t: &str| match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_u64() || v.is_i64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => false,
    };
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(type_ok),
            _ => true,
        };
        if !ok {
            errors.push(format!("{at}: {v} is not of type {t}"));
            return;
        }
    }
    if let Some(c) = s.get("const").filter(|c| *c != v) {
        errors.push(format!("{at}: {v} is not {c}"));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array).filter(|e| !e.contains(v)) {
        errors.push(format!("{at}: {v} is not one of {e:?}"));
    }
    if let Some(x) = v.as_f64() {
        if s.get("minimum").and_then(Value::as_f64).is_some_and(|m| x < m) {
            errors.push(format!("{at}: {x} below the minimum"));
        }
        if s.get("maximum").and_then(Value::as_f64).is_some_and(|m| x > m) {
            errors.push(format!("{at}: {x} above the maximum"));
        }
        if s.get("exclusiveMinimum").and_then(Value::as_f64).is_some_and(|m| x <= m) {
            errors.push(format!("{at}: {x} not above the exclusive minimum"));
        }
    }
    if let (Some(t), Some(m)) = (v.as_str(), s.get("minLength").and_then(Value::as_u64))
        && (t.chars().count() as u64) < m
    {
        errors.push(format!("{at}: string shorter than {m}"));
    }
    if let Some(a) = v.as_array() {
        if s.get("minItems").and_then(Value::as_u64).is_some_and(|m| (a.len() as u64) < m) {
            errors.push(format!("{at}: fewer items than minItems"));
        }
        if s.get("maxItems").and_then(Value::as_u64).is_some_and(|m| (a.len() as u64) > m) {
            errors.push(format!("{at}: more items than maxItems"));
        }
        if let Some(items) = s.get("items") {
            for (i, x) in a.iter().enumerate() {
                validate(items, x, &format!("{at}[{i}]"), errors);
            }
        }
    }
    if let Some(o) = v.as_object() {
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !o.contains_key(r) {
                errors.push(format!("{at}: missing {r:?}"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, x) in o {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => validate(ps, x, &format!("{at}.{k}"), errors),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{at}: unexpected property {k:?}")),
                    Some(ap @ Value::Object(_)) => validate(ap, x, &format!("{at}.{k}"), errors),
                    _ => {}
                },
            }
        }
    }
}

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/schema/tiles-manifest.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_valid(manifest: &Path) {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
    let mut errors = Vec::new();
    validate(&schema(), &v, "$", &mut errors);
    assert!(errors.is_empty(), "{}: {errors:#?}", manifest.display());
}

#[test]
fn the_validator_catches_what_the_schema_forbids() {
    let s = schema();
    let mut errors = Vec::new();
    validate(&s, &serde_json::json!({ "format": "talus-tiles", "engine": "godot", "extra": 1 }), "$", &mut errors);
    let text = errors.join("\n");
    assert!(text.contains("missing \"tile_files\"") && text.contains("godot") && text.contains("\"extra\""), "{text}");
}

/// Builds a tile set, checks its manifest, shared edges and reassembly against the untiled build.
fn check_engine(engine: &str, format: &str, tiles_flag: &[&str], size: usize) {
    let d = work();
    let mut args = vec!["build", "ref.talus", "--engine", engine, "--tile-format", format, "--out", "set"];
    args.extend_from_slice(tiles_flag);
    ok(&talus(&args, d.path()));
    let set = d.path().join("set");
    let mpath = set.join("manifest.json");
    assert_valid(&mpath);
    let m = read_manifest(&mpath).unwrap();
    assert_eq!(m.size, [size, size]);
    assert_eq!(m.tile_files.len(), m.tiles[0] * m.tiles[1]);
    let ext = if format == "png" { "png" } else { "r16" };
    assert!(set.join(format!("ref_x1_y1.{ext}")).exists());
    // Nothing else next to the set.
    let names: Vec<String> =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-") && !n.contains(".old-")), "{names:?}");
    check_shared_edges(&m, |x, y| tile_samples(&set, &m, &format!("ref_x{x}_y{y}.{ext}")));

    // Reassembly = the untiled build quantised with the manifest's range.
    ok(&talus(&["convert", "set/manifest.json", "back.bhef"], d.path()));
    ok(&talus(&["build", "ref.talus", "--size", &size.to_string(), "--out", "full.bhef"], d.path()));
    let back = talus::core::io::bhef::load(&d.path().join("back.bhef")).unwrap();
    let full = talus::core::io::bhef::load(&d.path().join("full.bhef")).unwrap();
    let range = [m.height_range.min_m as f32, m.height_range.max_m as f32];
    let (q, clipped) = quantise(&full.data, range, 65535);
    assert_eq!(clipped, 0);
    let want: Vec<f32> = q.into_iter().map(|v| dequantise(v, range, 65535)).collect();
    assert_eq!((back.width, back.height), (full.width, full.height));
    assert_eq!(common::grid::bits(&back.data), common::grid::bits(&want), "{engine} {format}");
    match engine {
        "unreal" => {
            assert_eq!(m.height_range.zero_sample, Some(32768));
            let (q0, _) = quantise(&[0.0], range, 65535);
            assert_eq!(q0[0], 32768);
            let u = m.unreal.as_ref().unwrap();
            // Unreal reads z_cm = (v − 32768)·Z/128: the top sample is the map's largest |height|.
            let top_cm = (65535.0 - 32768.0) * u.z_scale / 128.0;
            assert!((top_cm - range[1] as f64 * 100.0).abs() < 0.01 * range[1] as f64, "{top_cm} {range:?}");
            assert!((u.xy_scale_cm - m.cell_size * 100.0).abs() < 1e-9);
        }
        _ => {
            let u = m.unity.as_ref().unwrap();
            assert_eq!(u.heightmap_resolution, m.tile_size);
            assert!((u.terrain_size_m[1] - (m.height_range.max_m - m.height_range.min_m)).abs() < 1e-6);
            assert_eq!(m.heights.rows, if format == "r16" { "south_first" } else { "north_first" });
            assert!(!u.flip_vertically);
        }
    }
}

#[test]
fn unreal_png16_tiles_share_edges_and_reassemble_to_the_build() {
    check_engine("unreal", "png", &["--tiles", "2", "--tile-size", "127"], 253);
}

#[test]
fn unreal_r16_tiles_share_edges_and_reassemble_to_the_build() {
    check_engine("unreal", "r16", &["--size", "505", "--tiles", "4x4"], 505);
}

#[test]
fn unity_r16_tiles_share_edges_and_reassemble_to_the_build() {
    check_engine("unity", "r16", &["--size", "257", "--tiles", "2x2"], 257);
}

#[test]
fn unity_png16_tiles_share_edges_and_reassemble_to_the_build() {
    check_engine("unity", "png", &["--size", "513", "--tile-size", "129"], 513);
}

fn decode_rgba(path: &Path) -> (usize, Vec<u8>, usize) {
    let img = image::open(path).unwrap();
    let ch = img.color().channel_count() as usize;
    (img.width() as usize, img.into_bytes(), ch)
}

#[test]
fn maps_have_their_documented_ranges_and_share_edges() {
    let d = work();
    ok(&talus(
        &[
            "build",
            "ref.talus",
            "--engine",
            "unity",
            "--size",
            "257",
            "--tiles",
            "2",
            "--maps",
            "all",
            "--out",
            "set",
            "--report",
            "rep.json",
        ],
        d.path(),
    ));
    // The report's plan counts the flow computation and the erosion change.
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("rep.json")).unwrap()).unwrap();
    let steps = rep["plan"]["steps"].to_string();
    assert!(steps.contains("flow map") && steps.contains("summed change"), "{steps}");
    assert!(rep["peak_rss_bytes"].as_u64().is_some_and(|b| b > 0), "{rep}");
    let set = d.path().join("set");
    assert_valid(&set.join("manifest.json"));
    let m = read_manifest(&set.join("manifest.json")).unwrap();
    assert_eq!(m.maps.len(), tiles::MAPS.len());
    let s = m.tile_size;
    let cell = m.cell_size;
    for info in &m.maps {
        let file = |x: usize, y: usize| set.join(&m.tile_files[y * m.tiles[0] + x].maps[info.kind.name()]);
        match info.kind {
            MapKind::Normal | MapKind::Splat => {
                let (w, px, ch) = decode_rgba(&file(0, 0));
                assert_eq!((w, ch), (s, if info.kind == MapKind::Splat { 4 } else { 3 }));
                if info.kind == MapKind::Splat {
                    for p in px.chunks(4) {
                        assert_eq!(p.iter().map(|&v| v as u32).sum::<u32>(), 255, "{p:?}");
                    }
                    // Sand on the beach and under the sea, rock or soil inland: more than one layer shows.
                    let used = (0..4).filter(|&c| px.chunks(4).any(|p| p[c] > 128)).count();
                    assert!(used >= 2, "splat uses {used} layers");
                }
                check_shared_edges(&m, |x, y| {
                    let (_, px, ch) = decode_rgba(&file(x, y));
                    px.chunks(ch).map(|p| p.to_vec()).collect::<Vec<_>>()
                });
            }
            _ => {
                let r = info.range.unwrap();
                let grey = |x, y| decode_samples(&std::fs::read(file(x, y)).unwrap()).unwrap();
                let (w, _, v, full) = grey(0, 0);
                assert_eq!((w, full), (s, 65535));
                match info.kind {
                    MapKind::Flow => {
                        assert!((r[0] - (cell * cell).log10()).abs() < 1e-5, "{r:?}");
                        // The whole island drains somewhere: the largest area is many nodes.
                        assert!(r[1] > r[0] + 2.0, "{r:?}");
                        assert_eq!(info.unit, "log10 m²");
                    }
                    MapKind::Slope => assert_eq!(r, [0.0, 90.0]),
                    _ => {
                        assert_eq!(r[0], 0.0);
                        assert!(r[1] > 0.0 && r[1] < 100.0, "{:?} {r:?}", info.kind);
                    }
                }
                // Full scale is reached somewhere for the maps scaled to their own maximum.
                let top = (0..m.tiles[1])
                    .flat_map(|y| (0..m.tiles[0]).map(move |x| (x, y)))
                    .map(|(x, y)| grey(x, y).2.into_iter().max().unwrap())
                    .max()
                    .unwrap();
                if matches!(info.kind, MapKind::Flow | MapKind::Erosion) {
                    assert_eq!(top, 65535, "{:?}", info.kind);
                }
                assert!(v.iter().all(|&x| x <= 65535));
                check_shared_edges(&m, |x, y| grey(x, y).2);
            }
        }
    }
}

#[test]
fn bad_sizes_and_a_full_folder_are_clear_errors_that_leave_nothing() {
    let d = work();
    let listing = |p: &Path| {
        let mut v: Vec<String> =
            std::fs::read_dir(p).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    let before = listing(d.path());
    // A size the tiles do not divide.
    let out =
        talus(&["build", "ref.talus", "--engine", "unity", "--size", "258", "--tiles", "2", "--out", "set"], d.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--size 257 (tiles of 129)"), "{err}");
    // A tile size that is not the engine's.
    let out =
        talus(&["build", "ref.talus", "--engine", "unreal", "--size", "257", "--tiles", "2", "--out", "set"], d.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("not an Unreal tile size") && err.contains("--size 253"), "{err}");
    // No engine.
    let out = talus(&["build", "ref.talus", "--size", "257", "--tiles", "2", "--out", "set"], d.path());
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--engine"));
    assert_eq!(listing(d.path()), before);
    // A non-empty folder without --force is refused and kept as it was; with --force it is replaced.
    std::fs::create_dir(d.path().join("set")).unwrap();
    std::fs::write(d.path().join("set/keep.txt"), b"mine").unwrap();
    let args = ["build", "ref.talus", "--engine", "unity", "--size", "257", "--tiles", "2", "--out", "set"];
    let out = talus(&args, d.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("not empty") && err.contains("--force"), "{err}");
    assert_eq!(listing(&d.path().join("set")), ["keep.txt"]);
    let mut forced = args.to_vec();
    forced.push("--force");
    ok(&talus(&forced, d.path()));
    let files = listing(&d.path().join("set"));
    assert!(files.contains(&"manifest.json".to_string()) && !files.contains(&"keep.txt".to_string()), "{files:?}");
    let mut want = before.clone();
    want.push("set".into());
    want.sort();
    assert_eq!(listing(d.path()), want);
    // An empty folder is filled.
    std::fs::create_dir(d.path().join("empty")).unwrap();
    let mut empty = args.to_vec();
    let last = empty.len() - 1;
    empty[last] = "empty";
    ok(&talus(&empty, d.path()));
    assert!(d.path().join("empty/manifest.json").exists());
}

fn small_input(map: &Heightmap) -> TileSetInput<'_> {
    TileSetInput {
        map,
        name: "t",
        engine: Engine::Unity,
        format: TileFormat::R16,
        layout: TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 33 },
        maps: &[MapKind::Slope, MapKind::Normal, MapKind::Splat],
        sea_level: 0.0,
        flow: None,
        erosion_change: None,
        bands: SplatBands::default(),
        source: "test",
    }
}

#[test]
fn a_cancel_or_a_failed_write_leaves_nothing() {
    let map = common::grid::sine_hills(65, 65);
    let d = tempfile::tempdir().unwrap();
    let inp = small_input(&map);
    let e = write_tile_set(&d.path().join("set"), &inp, false, &AtomicBool::new(true), &|_| {}).unwrap_err();
    assert!(matches!(e, TileError::Cancelled), "{e}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // Cancelled part-way (Ctrl+C after the first tile): the tiles already written go too.
    let c = AtomicBool::new(false);
    let e = write_tile_set(&d.path().join("set"), &inp, false, &c, &|_| c.store(true, Ordering::SeqCst)).unwrap_err();
    assert!(matches!(e, TileError::Cancelled), "{e}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // A folder that cannot be created (its parent is a file): an error naming it, nothing left.
    std::fs::write(d.path().join("file"), b"x").unwrap();
    let e = write_tile_set(&d.path().join("file/set"), &inp, false, &AtomicBool::new(false), &|_| {}).unwrap_err();
    assert!(e.to_string().contains("file/set"), "{e}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    // A layout that is not the map's size.
    let wrong = TileSetInput { layout: TileLayout { tiles_x: 4, tiles_y: 4, tile_size: 33 }, ..inp };
    assert!(matches!(
        write_tile_set(&d.path().join("w"), &wrong, false, &AtomicBool::new(false), &|_| {}),
        Err(TileError::Layout(_))
    ));
    // And the same input twice gives the same bytes.
    let a = write_tile_set(&d.path().join("a"), &inp, false, &AtomicBool::new(false), &|_| {}).unwrap();
    let b = write_tile_set(&d.path().join("b"), &inp, false, &AtomicBool::new(false), &|_| {}).unwrap();
    assert_eq!(a, b);
    for t in &a.tile_files {
        for f in std::iter::once(&t.file).chain(t.maps.values()) {
            assert_eq!(
                std::fs::read(d.path().join("a").join(f)).unwrap(),
                std::fs::read(d.path().join("b").join(f)).unwrap()
            );
        }
    }
}

#[test]
fn the_splat_rule_is_the_editor_materials() {
    use talus::editor::look::MaterialParams;
    use talus::editor::look::material::layer_weights;
    let mut p = MaterialParams::default();
    p.sediment.enabled = false;
    let b = SplatBands::default();
    let eb = &p.bands;
    assert_eq!(
        (
            b.beach_top,
            b.dirt_height,
            b.snow_line,
            b.height_blend,
            b.dirt_slope,
            b.rock_slope,
            b.snow_max_slope,
            b.slope_blend
        ),
        (
            eb.beach_top,
            eb.dirt_height,
            eb.snow_line,
            eb.height_blend,
            eb.dirt_slope,
            eb.rock_slope,
            eb.snow_max_slope,
            eb.slope_blend
        )
    );
    for i in 0..=40 {
        for j in 0..=30 {
            let f = -0.2 + i as f32 * 0.03;
            let slope = j as f32 * 3.0;
            let e = layer_weights(&p, f, slope, 0.0, 0.0);
            let w = weights(&b, f, slope);
            let want = [e[0], e[1] + e[2], e[3], e[4]];
            for k in 0..4 {
                assert!((w[k] - want[k]).abs() < 1e-6, "f {f} slope {slope}: {w:?} vs {want:?}");
            }
        }
    }
}

/// FNV-1a (64 bits) of every file of a folder, names and bytes, in name order.
fn folder_hash(dir: &Path) -> u64 {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in names {
        for b in p.file_name().unwrap().as_encoded_bytes().iter().chain(&std::fs::read(&p).unwrap()) {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// Issue #36: the flow map's fill and sum and the files are computed in parallel, with the same
/// bytes at any thread count and the same bytes as before (the hashes were recorded with the
/// serial flood, the serial sum and the band-by-band writer, on this input; a change of the PNG
/// encoder would change them too). The map has pits, a sea and a cell size whose area multiples
/// are not exact in `f64`, so the order of every sum shows.
#[test]
fn a_tile_set_is_the_same_bytes_on_any_pool_and_as_before_the_parallel_writer() {
    let hills = common::grid::sine_hills(257, 257);
    let map = Heightmap::from_fn(257, 257, 0.37, |x, y| {
        hills.get(x, y) - 6.0 + ((x * 7919 + y * 104_729) % 97) as f32 * 0.02
    })
    .unwrap();
    let pits = talus::core::analysis::pits_and_spikes(&map, 0.0, 0.0).pits.len();
    let sea = map.data.iter().filter(|&&v| v <= 0.0).count();
    assert!(pits > 10 && sea > 1000 && sea < map.len() / 2, "{pits} pits, {sea} sea nodes");
    let change: Vec<f32> = (0..map.len()).map(|i| ((i * 31 % 211) as f32 - 105.0) * 0.01).collect();
    let d = tempfile::tempdir().unwrap();
    let mut got = Vec::new();
    for (engine, format) in [(Engine::Unity, TileFormat::R16), (Engine::Unreal, TileFormat::Png16)] {
        let hashes: Vec<u64> = [1, 2, 4]
            .into_iter()
            .map(|threads| {
                let dir = d.path().join(format!("{}-{threads}", engine.name()));
                common::grid::in_pool(threads, || {
                    let flow = talus::core::analysis::flow_log_area(&map, 0.0);
                    let inp = TileSetInput {
                        map: &map,
                        name: "t",
                        engine,
                        format,
                        layout: TileLayout { tiles_x: 4, tiles_y: 4, tile_size: 65 },
                        maps: &MapKind::ALL,
                        sea_level: 0.0,
                        flow: Some(&flow),
                        erosion_change: Some(&change),
                        bands: SplatBands::default(),
                        source: "test",
                    };
                    write_tile_set(&dir, &inp, false, &AtomicBool::new(false), &|_| {}).unwrap();
                });
                folder_hash(&dir)
            })
            .collect();
        assert!(hashes.iter().all(|&h| h == hashes[0]), "{engine:?}: {hashes:x?} at 1, 2, 4 threads");
        got.push(hashes[0]);
    }
    assert_eq!(got, [0x04bd_791c_6c77_d358, 0x39a1_544f_f4da_d22c], "the bytes before #36 (Unity R16, Unreal PNG16)");
}
