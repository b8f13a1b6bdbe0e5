use std::sync::atomic::AtomicBool;

use proptest::prelude::*;

use super::*;
use crate::backend::Backend;
use crate::core::Heightmap;
use crate::core::erosion::droplet::DropletParams;
use crate::core::erosion::{Boundary, MapSize, ModelParams};
use crate::core::rng::{hash2, signed_f32};
use crate::editor::layers::recipe::run_to_end;

fn stack() -> LayerStack {
    let base = Heightmap::from_fn(150, 97, 3.0, |x, y| {
        30.0 + 10.0 * ((x as f32) * 0.05).sin() + signed_f32(hash2(x as i64, y as i64, 4))
    })
    .unwrap();
    let mut s = LayerStack::new(&base, BaseSource::Heights);
    let i = s.top_sculpt();
    let mut edited = base.clone();
    edited.data[500] += 2.0;
    s.add_edit(i, &base, &edited);
    let recipe = Recipe {
        model: ModelParams::Droplet(DropletParams {
            droplets_per_km2: MapSize::of(&base).per_km2(2000),
            ..Default::default()
        }),
        boundary: Boundary::default(),
        seed: 9,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: Some(25.0),
        steer: None,
    };
    let input = s.compose();
    let result = run_to_end(&recipe, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
    let id = s.push_erosion(recipe, &input, &result, "Droplet erosion");
    let e = s.layer_mut(id).unwrap().erosion_mut().unwrap();
    e.strength = 1.25;
    e.mask.set(70, 40, 0.0);
    e.mask.set(71, 40, 0.5);
    s
}

fn view() -> ProjectView {
    ProjectView {
        look: Some(LookParams::default()),
        camera: Some(CameraPose { focus: [1.0, 2.0, 3.0], yaw: 0.5, pitch: 0.7, distance: 300.0 }),
    }
}

fn bits(m: &Heightmap) -> Vec<u32> {
    m.data.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn a_project_reopens_bit_exact() {
    let s = stack();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("island.talus");
    save(&path, &s, &view()).unwrap();
    let back = load(&path).unwrap();
    assert_eq!(bits(&back.stack.compose()), bits(&s.compose()));
    assert_eq!(back.view, view());
    assert_eq!(back.stack.layers().len(), 2);
    let (a, b) = (s.layers()[1].erosion().unwrap(), back.stack.layers()[1].erosion().unwrap());
    assert_eq!(
        (a.recipe.clone(), a.strength, a.input_hash, a.stale),
        (b.recipe.clone(), b.strength, b.input_hash, b.stale)
    );
    assert_eq!(b.mask.get(71, 40), 0.5);
    assert_eq!(back.stack.next_id(), s.next_id());
    // Saving what was read gives the same bytes.
    assert_eq!(encode(&back.stack, &back.view).unwrap(), std::fs::read(&path).unwrap());
}

#[test]
fn damaged_and_newer_projects_are_clear_errors() {
    let bytes = encode(&stack(), &view()).unwrap();
    assert!(matches!(decode(b"BHEF...."), Err(ProjectError::NotAProject)));
    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let e = decode(&newer).unwrap_err();
    assert!(matches!(e, ProjectError::NewerVersion(v) if v == VERSION + 1), "{e}");
    assert!(e.to_string().contains("newer"), "{e}");
    let e = decode(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(matches!(e, ProjectError::Damaged(_)), "{e}");
    let mut flipped = bytes.clone();
    let k = bytes.len() / 2;
    flipped[k] ^= 0x10;
    assert!(decode(&flipped).unwrap_err().to_string().contains("checksum"));
    // A header claiming a huge description is refused before anything is read.
    let mut long = bytes.clone();
    long[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(decode(&long), Err(ProjectError::Damaged(_))));
    // A failed save leaves the previous file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.talus");
    std::fs::write(&path, &bytes).unwrap();
    assert!(save(&dir.path().join("missing").join("p.talus"), &stack(), &view()).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

/// Re-signs a changed file so the reader gets past the checksum to the checks behind it.
fn resign(mut b: Vec<u8>) -> Vec<u8> {
    if b.len() >= 28 {
        let body = b.len() - 4;
        let crc = crc32fast::hash(&b[..body]);
        b[body..].copy_from_slice(&crc.to_le_bytes());
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The reader never panics, whatever bytes it is given: random bytes, and a real project
    /// with bytes changed and the checksum made right again (so the description parser, the
    /// tile checks and the inflater all see damage).
    #[test]
    fn the_reader_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        random in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let _ = decode(&random);
        let mut with_magic = MAGIC.to_vec();
        with_magic.extend_from_slice(&random);
        let _ = decode(&resign(with_magic));
        let good = small_project();
        let mut b = good.clone();
        for (i, v) in &edits {
            let k = i.index(b.len());
            b[k] = *v;
        }
        let _ = decode(&resign(b));
        let n = cut.index(good.len());
        let _ = decode(&resign(good[..n].to_vec()));
    }
}

fn small_project() -> Vec<u8> {
    use std::sync::OnceLock;
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let base = Heightmap::from_fn(70, 66, 1.0, |x, y| (x + 2 * y) as f32 * 0.1).unwrap();
            let mut s = LayerStack::new(&base, BaseSource::Heights);
            let i = s.top_sculpt();
            let mut e = base.clone();
            e.data[3] += 1.0;
            s.add_edit(i, &base, &e);
            encode(&s, &ProjectView::default()).unwrap()
        })
        .clone()
}

#[test]
fn a_version_1_generator_base_is_read_in_world_units() {
    use crate::core::generate::hills::HillsParams;
    use crate::core::generate::{Base as GenBase, GenerateParams};
    let map = Heightmap::filled(20, 10, 2.0, 1.0).unwrap();
    let hills = HillsParams { radius_min_m: 8.0, radius_max_m: 12.0, ..Default::default() };
    let g = GenerateParams { width: 20, height: 10, cell_size: 2.0, base: GenBase::Hills(hills), ..Default::default() };
    let bytes = encode(&LayerStack::new(&map, BaseSource::Generator(g.clone())), &ProjectView::default()).unwrap();
    // The same project as version 1 wrote it: the radii in nodes of its 2 m grid.
    let m = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let meta = std::str::from_utf8(&bytes[HEADER..HEADER + m]).unwrap();
    let old = meta.replace("radius_min_m:8.0", "radius_min:4.0").replace("radius_max_m:12.0", "radius_max:6.0");
    assert!(old.contains("radius_min:4.0") && old.contains("radius_max:6.0"), "{meta}");
    let mut v1 = bytes[..HEADER].to_vec();
    v1[12..16].copy_from_slice(&(old.len() as u32).to_le_bytes());
    v1.extend_from_slice(old.as_bytes());
    v1.extend_from_slice(&bytes[HEADER + m..bytes.len() - 4]);
    let crc = crc32fast::hash(&v1);
    v1.extend_from_slice(&crc.to_le_bytes());
    let p = decode(&v1).unwrap();
    let BaseSource::Generator(back) = &p.stack.base.source else { panic!("not a generator") };
    assert!(!back.has_legacy_units());
    assert_eq!(*back, g);
}

/// `bytes` (a version-2 project) as version 1 wrote it: header version 1, and in the
/// description each `new:` field's value `v` replaced by `old:` `f(v)`.
fn as_version_1(bytes: &[u8], renames: &[(&str, &str, &dyn Fn(f64) -> String)]) -> Vec<u8> {
    as_version(bytes, 1, renames)
}

/// `bytes` with header version `version` and the description's renames of [`as_version_1`].
fn as_version(bytes: &[u8], version: u32, renames: &[(&str, &str, &dyn Fn(f64) -> String)]) -> Vec<u8> {
    let m = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut meta = std::str::from_utf8(&bytes[HEADER..HEADER + m]).unwrap().to_string();
    for (new, old, f) in renames {
        let key = format!("{new}:");
        let at = meta.find(&key).unwrap_or_else(|| panic!("no {key} in {meta}"));
        let start = at + key.len();
        let end = start + meta[start..].find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c))).unwrap();
        let v: f64 = meta[start..end].parse().unwrap();
        meta.replace_range(at..end, &format!("{old}:{}", f(v)));
    }
    let mut v1 = bytes[..HEADER].to_vec();
    v1[8..12].copy_from_slice(&version.to_le_bytes());
    v1[12..16].copy_from_slice(&(meta.len() as u32).to_le_bytes());
    v1.extend_from_slice(meta.as_bytes());
    v1.extend_from_slice(&bytes[HEADER + m..bytes.len() - 4]);
    let crc = crc32fast::hash(&v1);
    v1.extend_from_slice(&crc.to_le_bytes());
    v1
}

#[test]
fn a_version_1_project_reads_in_world_units_and_builds_at_another_size() {
    use crate::core::generate::{demo_params, generate};
    use crate::editor::build::{BuildRequest, ErosionBuild, build_in_memory};
    // A 129² island (8 m cells) with a droplet layer, saved, then rewritten as version 1 saved it:
    // the fBm's wavelength as cycles per node, the droplets as a count on the map.
    let p = demo_params(129, 3);
    let base = generate(&p).unwrap();
    let mut s = LayerStack::new(&base, BaseSource::Generator(p.clone()));
    let size = MapSize::of(&base);
    let model = ModelParams::Droplet(DropletParams { droplets_per_km2: size.per_km2(3000), ..Default::default() });
    let recipe = Recipe {
        model,
        boundary: Boundary::default(),
        seed: 4,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: Some(0.0),
        steer: None,
    };
    let result = run_to_end(&recipe, base.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
    s.push_erosion(recipe.clone(), &base, &result, "Droplets");
    let bytes = encode(&s, &ProjectView::default()).unwrap();
    let cell = base.cell_size as f64;
    let v1 = as_version_1(
        &bytes,
        &[
            ("wavelength_m", "frequency", &|w| format!("{}", cell / w)),
            ("droplets_per_km2", "droplets", &|_| "3000".into()),
        ],
    );
    assert_eq!(u32::from_le_bytes(v1[8..12].try_into().unwrap()), 1);
    let back = decode(&v1).unwrap();
    let BaseSource::Generator(g) = &back.stack.base.source else { panic!("not a generator") };
    let crate::core::generate::Base::Fbm(f) = &g.base else { panic!("not fBm") };
    let crate::core::generate::Base::Fbm(f0) = &p.base else { panic!() };
    assert!(
        (f.wavelength_m - f0.wavelength_m).abs() < 1e-9 * f0.wavelength_m,
        "{} vs {}",
        f.wavelength_m,
        f0.wavelength_m
    );
    let e = back.stack.layers()[0].erosion().unwrap();
    assert!(!e.recipe.has_legacy() && e.recipe.model.work(size) == 3000, "{:?}", e.recipe.model);
    // The heights are the stored ones, bit for bit; saved again it is version 2.
    assert!(bits(&back.stack.compose()) == bits(&s.compose()));
    assert_eq!(u32::from_le_bytes(encode(&back.stack, &back.view).unwrap()[8..12].try_into().unwrap()), VERSION);
    // And it builds at twice its resolution with the generator run again.
    let opts = BuildRequest::in_memory(257, ErosionBuild::Upsample);
    let b = build_in_memory(&back.stack, &opts, &AtomicBool::new(false), &|_| {}).unwrap();
    assert_eq!((b.map.width, b.map.height, b.map.cell_size), (257, 257, 4.0));
    // A version-1 value that has no world equivalent is a clear error when the base is made.
    let bad = as_version_1(&bytes, &[("wavelength_m", "frequency", &|_| "0.0".into())]);
    let back = decode(&bad).unwrap();
    let err = build_in_memory(&back.stack, &opts, &AtomicBool::new(false), &|_| {}).unwrap_err().to_string();
    assert!(err.contains("wavelength_m"), "{err}");
}

#[test]
fn a_version_2_project_keeps_its_droplet_rates_per_node() {
    // Version 2 gave the droplets' rates per step of one node of the project's 3 m cells.
    let s = stack();
    let bytes = encode(&s, &view()).unwrap();
    let v2 = as_version(&bytes, 2, &[]);
    let rates = |p: &Project| {
        let e = p.stack.layers().iter().find_map(|l| l.erosion()).unwrap();
        let ModelParams::Droplet(d) = &e.recipe.model else { panic!("not droplets") };
        d.path_step_m
    };
    let back = decode(&v2).unwrap();
    // On its own map the rates are then the stored values as they are, as version 2 ran them
    // (`droplet::tests::the_rates_are_per_metre_of_path_and_the_capacity_a_volume`).
    assert_eq!(rates(&back), 3.0);
    // A project of this version keeps what it says.
    let now = decode(&bytes).unwrap();
    assert_eq!(rates(&now), 2.0);
    let resaved = encode(&back.stack, &back.view).unwrap();
    assert_eq!(u32::from_le_bytes(resaved[8..12].try_into().unwrap()), VERSION);
    assert_eq!(rates(&decode(&resaved).unwrap()), 3.0);
}

/// A rough slope of `cell` metres cells, the base of the format-version tests below.
fn sloped_base(w: usize, h: usize, cell: f32) -> Heightmap {
    Heightmap::from_fn(w, h, cell, |x, y| 20.0 + 0.3 * x as f32 + signed_f32(hash2(x as i64, y as i64, 2))).unwrap()
}

/// The bytes of a project of `base` with one erosion layer of `model` (seed 3, run on the CPU).
fn one_layer_project(base: &Heightmap, model: ModelParams, name: &str) -> Vec<u8> {
    let mut s = LayerStack::new(base, BaseSource::Heights);
    let recipe = Recipe {
        model,
        boundary: Boundary::default(),
        seed: 3,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: None,
        steer: None,
    };
    let result = run_to_end(&recipe, base.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
    s.push_erosion(recipe, base, &result, name);
    encode(&s, &view()).unwrap()
}

#[test]
fn a_version_3_project_keeps_its_snowball_rate_per_node() {
    // Version 3 gave the snowballs' erosion rate on the 4 nodes of the project's 3 m cells.
    let base = sloped_base(64, 48, 3.0);
    let model = ModelParams::Snowball(crate::core::erosion::snowball::SnowballParams {
        snowballs_per_km2: MapSize::of(&base).per_km2(500),
        ..Default::default()
    });
    let bytes = one_layer_project(&base, model, "Snowballs");
    let footprint = |p: &Project| {
        let e = p.stack.layers().iter().find_map(|l| l.erosion()).unwrap();
        let ModelParams::Snowball(b) = &e.recipe.model else { panic!("not snowballs") };
        b.footprint_m
    };
    let v3 = as_version(&bytes, 3, &[]);
    let back = decode(&v3).unwrap();
    assert_eq!(footprint(&back), 3.0);
    // This version's project keeps what it says; the older one, saved again, keeps its 3 m.
    assert_eq!(footprint(&decode(&bytes).unwrap()), 2.0);
    let resaved = encode(&back.stack, &back.view).unwrap();
    assert_eq!(u32::from_le_bytes(resaved[8..12].try_into().unwrap()), VERSION);
    assert_eq!(footprint(&decode(&resaved).unwrap()), 3.0);
    // Read so, the layer erodes the project's own map as version 3 did: the rate on the 4
    // nodes, unscaled (the grid values at footprint = the cell size are the stored ones).
    let e = back.stack.layers().iter().find_map(|l| l.erosion()).unwrap();
    let ModelParams::Snowball(b) = &e.recipe.model else { panic!() };
    let g = b.in_grid_units(MapSize::of(&base));
    assert_eq!((g.reach, g.erosion_rate), (1.0, b.erosion_rate));
}

#[test]
fn a_version_4_project_keeps_its_pipe_clamp_per_cell() {
    // Version 4 clamped the pipe model's flow to one cell per time step: on these 1 m cells,
    // 10 m/s in one step, where version 5 follows 20 m/s in two sub-steps.
    let base = sloped_base(48, 40, 1.0);
    let model = ModelParams::Pipe(crate::core::erosion::pipe::PipeParams { steps: 5, ..Default::default() });
    let bytes = one_layer_project(&base, model, "Pipe");
    let max_speed = |p: &Project| {
        let e = p.stack.layers().iter().find_map(|l| l.erosion()).unwrap();
        let ModelParams::Pipe(b) = &e.recipe.model else { panic!("not the pipe model") };
        (b.max_speed, b.stepping(1.0).n)
    };
    let back = decode(&as_version(&bytes, 4, &[])).unwrap();
    assert_eq!(max_speed(&back), (0.0, 1));
    // This version's project keeps what it says; the older one, saved again, keeps its clamp.
    assert_eq!(max_speed(&decode(&bytes).unwrap()), (20.0, 2));
    let resaved = encode(&back.stack, &back.view).unwrap();
    assert_eq!(max_speed(&decode(&resaved).unwrap()), (0.0, 1));
}

#[test]
fn a_version_5_project_keeps_its_thermal_iterations_per_node() {
    // Version 5 ran thermal iterations per node: on these 1 m cells, 6 of them, where version 6
    // counts them on 2 m cells and runs 24. The pipe model's interleaved thermal likewise.
    let base = sloped_base(48, 40, 1.0);
    let thermal = crate::core::erosion::thermal::ThermalParams { iterations: 6, ..Default::default() };
    let pipe = crate::core::erosion::pipe::PipeParams {
        steps: 3,
        thermal: Some(thermal.clone()),
        cell_size: Some(0.5),
        ..Default::default()
    };
    for (model, lx) in [(ModelParams::Thermal(thermal), 1.0), (ModelParams::Pipe(pipe), 0.5)] {
        let bytes = one_layer_project(&base, model, "Old");
        let cells = |p: &Project| {
            let e = p.stack.layers().iter().find_map(|l| l.erosion()).unwrap();
            let t = match &e.recipe.model {
                ModelParams::Thermal(t) => t.clone(),
                ModelParams::Pipe(b) => b.thermal.clone().unwrap(),
                _ => panic!("not thermal"),
            };
            (t.iteration_cell_m, t.kernel_iterations(lx, 0, 6))
        };
        let back = decode(&as_version(&bytes, 5, &[])).unwrap();
        assert_eq!(cells(&back), (lx, 6));
        // A pipe layer's thermal step also keeps the land talus under the sea, as version 5 ran it.
        let sea_talus = |p: &Project| match &p.stack.layers().iter().find_map(|l| l.erosion()).unwrap().recipe.model {
            ModelParams::Pipe(b) => Some(b.thermal_sea),
            _ => None,
        };
        if sea_talus(&back).is_some() {
            assert_eq!((sea_talus(&back), sea_talus(&decode(&bytes).unwrap())), (Some(false), Some(true)));
        }
        // This version's project keeps what it says; the older one, saved again, keeps its count.
        assert_eq!(cells(&decode(&bytes).unwrap()), (2.0, (6.0 * (2.0 / lx) * (2.0 / lx)) as u64));
        let resaved = encode(&back.stack, &back.view).unwrap();
        assert_eq!(cells(&decode(&resaved).unwrap()), (lx, 6));
        // Read so, a thermal layer relaxes the project's own map as version 5 did, bit for bit:
        // 6 iterations of the kernel on its cells.
        if let ModelParams::Thermal(t) = &back.stack.layers().iter().find_map(|l| l.erosion()).unwrap().recipe.model {
            let recipe = back.stack.layers().iter().find_map(|l| l.erosion()).unwrap().recipe.clone();
            let run = run_to_end(&recipe, base.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
            let mut by_hand = base.clone();
            for _ in 0..6 {
                crate::core::erosion::thermal::thermal_step(&mut by_hand, t, Boundary::default(), None, None).unwrap();
            }
            assert_eq!(bits(&run), bits(&by_hand));
        }
    }
}
