//! Projects (`.talus`, #15) through the library and the real binary: `talus layers` lists what
//! a project holds, `talus build` flattens it (bit-exactly the library's fold), and with `--set`
//! regenerates the base and re-runs the erosion layers on it, keeping the sculpt. Also the
//! memory and file size of a 2049² project with base, sculpt and three erosion layers.

use std::process::Command;
use std::sync::atomic::AtomicBool;

use talus::backend::Backend;
use talus::core::Heightmap;
use talus::core::erosion::thermal::ThermalParams;
use talus::core::erosion::{Boundary, ModelParams};
use talus::core::generate::{GenerateParams, generate};
use talus::core::io::bhef;
use talus::editor::layers::recipe::run_to_end;
use talus::editor::layers::{BaseSource, LayerKind, LayerStack, Recipe};
use talus::editor::project::{self, ProjectView};

fn talus(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().unwrap()
}

fn bits(m: &Heightmap) -> Vec<u32> {
    m.data.iter().map(|v| v.to_bits()).collect()
}

fn thermal(iterations: u32, seed: u64) -> Recipe {
    Recipe {
        model: ModelParams::Thermal(ThermalParams { iterations, talus_angle: 25.0, ..Default::default() }),
        boundary: Boundary::default(),
        seed,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: Some(0.0),
        steer: None,
    }
}

/// Base from a generator, a sculpt edit, then `runs` thermal layers on top.
fn build_stack(p: &GenerateParams, runs: &[Recipe]) -> LayerStack {
    let base = generate(p).unwrap();
    let mut s = LayerStack::new(&base, BaseSource::Generator(p.clone()));
    let i = s.top_sculpt();
    let mut edited = base.clone();
    let (w, h) = (base.width, base.height);
    for y in h / 3..h / 2 {
        for x in w / 3..w / 2 {
            edited.data[y * w + x] += 5.0;
        }
    }
    s.add_edit(i, &base, &edited);
    for r in runs {
        let input = s.compose();
        let result = run_to_end(r, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
        s.push_erosion(r.clone(), &input, &result, "Thermal erosion");
    }
    s
}

fn small_params(seed: u64) -> GenerateParams {
    GenerateParams { width: 129, height: 129, cell_size: 10.0, seed, ..GenerateParams::default() }
}

#[test]
fn layers_lists_and_build_flattens_bit_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.talus");
    let s = build_stack(&small_params(3), &[thermal(10, 1)]);
    project::save(&path, &s, &ProjectView::default()).unwrap();

    let out = talus(&["layers", path.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["width"], 129);
    assert_eq!(v["layers"][0]["kind"], "sculpt");
    assert_eq!(v["layers"][1]["kind"], "erosion");
    assert_eq!(v["layers"][1]["model"], "thermal");
    assert_eq!(v["layers"][1]["stale"], false);
    let text = talus(&["layers", path.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("Thermal erosion"));

    let flat = dir.path().join("flat.bhef");
    let out = talus(&["build", path.to_str().unwrap(), "--out", flat.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 layer(s) re-run"), "nothing was stale");
    assert!(bits(&bhef::load(&flat).unwrap()) == bits(&s.compose()));
    // Any export format, by extension.
    let png = dir.path().join("flat.png");
    assert!(talus(&["build", path.to_str().unwrap(), "--out", png.to_str().unwrap()]).status.success());
    assert!(png.exists());
}

#[test]
fn build_with_set_regenerates_the_base_and_reruns_the_erosion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.talus");
    let s = build_stack(&small_params(3), &[thermal(10, 1), thermal(5, 2)]);
    project::save(&path, &s, &ProjectView::default()).unwrap();
    let (out_map, out_proj) = (dir.path().join("seed9.bhef"), dir.path().join("seed9.talus"));
    let out = talus(&[
        "build",
        path.to_str().unwrap(),
        "--set",
        "seed=9",
        "--out",
        out_map.to_str().unwrap(),
        "--save-project",
        out_proj.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("2 layer(s) re-run"), "{err}");

    // The same in the library: the new base, both layers re-run bottom first.
    let mut want = s.clone();
    want.set_base(&generate(&small_params(9)).unwrap(), BaseSource::Generator(small_params(9)));
    assert!(want.rebuild(&AtomicBool::new(false), |_| {}).unwrap());
    let got = project::load(&out_proj).unwrap().stack;
    assert!(bits(&bhef::load(&out_map).unwrap()) == bits(&want.compose()), "the CLI's rebuild differs");
    assert!(bits(&got.compose()) == bits(&want.compose()));
    // The sculpt is kept bit for bit; no layer is stale.
    let sculpt = |st: &LayerStack| match &st.layers()[0].kind {
        LayerKind::Sculpt(d) => d.to_dense().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        LayerKind::Erosion(_) => panic!("layer 1 is not the sculpt"),
    };
    assert_eq!(sculpt(&got), sculpt(&s));
    assert!(got.layers().iter().all(|l| l.erosion().is_none_or(|e| !e.stale)));

    // Bad input: a size change, a bad path, a damaged file: clear errors, exit code 1.
    let bad = talus(&["build", path.to_str().unwrap(), "--set", "width=65", "--out", "x.bhef"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("size"), "{}", String::from_utf8_lossy(&bad.stderr));
    let bad = talus(&["build", path.to_str().unwrap(), "--set", "nonsense=1", "--out", "x.bhef"]);
    assert_eq!(bad.status.code(), Some(1));
    let broken = dir.path().join("broken.talus");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&broken, bytes).unwrap();
    let bad = talus(&["layers", broken.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("damaged"), "{}", String::from_utf8_lossy(&bad.stderr));
}

/// Issue #15's memory figure: a 2049² project with base, sculpt and three erosion layers (every
/// node changed by each run) stays under 200 MB in memory and on disk.
#[test]
fn a_2049_project_with_five_layers_fits_in_200_mb() {
    let p = GenerateParams { width: 2049, height: 2049, cell_size: 2.0, ..talus::core::generate::demo_params(2049, 1) };
    let s = build_stack(&p, &[thermal(3, 1), thermal(3, 2), thermal(3, 3)]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.talus");
    project::save(&path, &s, &ProjectView::default()).unwrap();
    let file = std::fs::metadata(&path).unwrap().len() as usize;
    // In memory: the layers' tiles plus the document's folded map.
    let memory = s.bytes() + 2049 * 2049 * 4;
    let tiles: Vec<usize> = s
        .layers()
        .iter()
        .map(|l| match &l.kind {
            LayerKind::Sculpt(d) => d.stored(),
            LayerKind::Erosion(e) => e.delta.stored(),
        })
        .collect();
    eprintln!(
        "2049² project: memory {:.1} MiB, file {:.1} MiB, stored tiles per layer {tiles:?} of {}",
        memory as f64 / 1048576.0,
        file as f64 / 1048576.0,
        s.base.heights.tile_count()
    );
    assert!(memory < 200_000_000 && file < 200_000_000, "memory {memory} B, file {file} B");
    let back = project::load(&path).unwrap();
    assert!(bits(&back.stack.compose()) == bits(&s.compose()));
}
