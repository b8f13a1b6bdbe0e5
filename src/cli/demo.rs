//! `talus demo`, the headless main job (also what `talus` runs with no subcommand and no display).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::CliError;
use crate::backend::Backend;
use crate::core::Heightmap;
use crate::core::erosion::{self, Boundary, registry};
use crate::core::generate::{self, demo_params};
use crate::core::io::{bhef, preview};
use crate::editor::build::{self, BuildRequest, ErosionBuild};
use crate::editor::layers::recipe::Recipe;
use crate::editor::layers::{BaseSource, LayerStack};

/// The headless main job, the product's headline in files: the default island; the default
/// Simulate (the registry's default model with the editor's parameters, as a first Simulate in
/// the editor runs it) as the erosion layer of a project; and that project built at 4× its
/// resolution in the default build mode (Refine: the preview's landforms with the erosion detail
/// of the build's own cells). Each is written as BHEF with a hill-shaded PNG; `detail.png` shows a
/// square a quarter of the island across at the build's full resolution, the preview's same square
/// (each node a block of pixels) on its left.
pub(super) fn cmd_demo(dir: &Path, size: usize, seed: u64) -> Result<ExitCode, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let p = demo_params(size, seed);
    let t = Instant::now();
    let hm = generate::generate(&p)?;
    eprintln!("generated {}×{} island in {:.0} ms", hm.width, hm.height, t.elapsed().as_secs_f64() * 1e3);
    let sea = p.sea_level.as_ref().map(|s| s.level).unwrap_or(0.0);
    bhef::save_with_sidecar(&dir.join("terrain.bhef"), &hm, "")?;
    preview::save_png(&dir.join("terrain.png"), &preview::render(&hm, sea))?;

    // The default Simulate, as the editor's first Simulate runs it.
    let model = (registry::default_model().editor_default)();
    let recipe = Recipe {
        model: model.clone(),
        boundary: Boundary::default(),
        seed,
        backend: Backend::Cpu,
        hardness: None,
        sea_level: Some(sea),
        steer: None,
    };
    let mut stack = LayerStack::new(&hm, BaseSource::Generator(p));
    let t = Instant::now();
    let mut run = recipe.build(hm.clone())?;
    let never = AtomicBool::new(false);
    erosion::run(run.job.as_mut(), &never, |_| {});
    let job = run.job;
    let l = job.ledger();
    eprintln!(
        "{} ({} {}) in {:.2} s: eroded {:.2}, deposited {:.2} m·nodes",
        model.entry().label,
        job.progress().total,
        model.entry().unit,
        t.elapsed().as_secs_f64(),
        l.eroded,
        l.deposited
    );
    let eroded = job.heightmap().clone();
    bhef::save_with_sidecar(&dir.join("eroded.bhef"), &eroded, "terrain.bhef")?;
    preview::save_png(&dir.join("eroded.png"), &preview::render(&eroded, sea))?;
    let (w, h) = (eroded.width, eroded.height);
    preview::save_png(&dir.join("erosion.png"), &preview::render_erosion(w, h, &job.maps().net()))?;
    if let Some(flow) = job.fields().flow {
        preview::save_png(&dir.join("flow.png"), &preview::render_flow(w, h, &flow))?;
    }
    stack.push_erosion(recipe, &hm, &eroded, model.entry().label);

    // The project built at 4× its resolution, in the default build mode.
    let n = build::default_size(size);
    let req = BuildRequest::in_memory(n, ErosionBuild::default());
    let t = Instant::now();
    let built = build::build_in_memory(&stack, &req, &never, &|_| {})?.map;
    eprintln!(
        "built at {}×{} ({} m cells, erosion {}) in {:.1} s",
        built.width,
        built.height,
        built.cell_size,
        req.erosion.name(),
        t.elapsed().as_secs_f64()
    );
    bhef::save_with_sidecar(&dir.join("build.bhef"), &built, "eroded.bhef")?;
    preview::save_png(&dir.join("build.png"), &preview::render(&built, sea))?;
    preview::save_png(&dir.join("detail.png"), &detail_image(&eroded, &built, sea))?;
    eprintln!(
        "wrote terrain, eroded and build (.bhef, .png), erosion.png, flow.png and detail.png to {}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The middle square a quarter of the map across: the preview's (each node a block of pixels) on
/// the left, the build's at its full resolution on the right, each hill-shaded.
fn detail_image(preview_map: &Heightmap, built: &Heightmap, sea: f32) -> image::RgbImage {
    let k = ((built.width - 1) / (preview_map.width - 1).max(1)).max(1);
    let side = (preview_map.width / 4).max(2);
    let (x0, y0) = ((preview_map.width - side) / 2, (preview_map.height.saturating_sub(side)) / 2);
    let crop = |m: &Heightmap, x0: usize, y0: usize, s: usize| {
        let s = s.min(m.width - x0).min(m.height - y0);
        let data = (0..s * s).map(|i| m.get(x0 + i % s, y0 + i / s)).collect();
        Heightmap { width: s, height: s, cell_size: m.cell_size, data }
    };
    let fine = crop(built, x0 * k, y0 * k, (side - 1) * k + 1);
    let coarse = crop(preview_map, x0, y0, side);
    let fi = preview::render(&fine, sea);
    let ci = preview::render(&coarse, sea);
    let s = fi.width();
    let mut out = image::RgbImage::new(2 * s + 8, s);
    for (x, y, px) in fi.enumerate_pixels() {
        out.put_pixel(s + 8 + x, y, *px);
    }
    for y in 0..s {
        for x in 0..s {
            let (cx, cy) =
                ((x as usize / k).min(ci.width() as usize - 1), (y as usize / k).min(ci.height() as usize - 1));
            out.put_pixel(x, y, *ci.get_pixel(cx as u32, cy as u32));
        }
    }
    out
}

/// `talus demo --project`: writes the reference project of the parity table (see
/// `editor::build::reference`).
pub(super) fn cmd_reference(
    path: &Path,
    size: usize,
    cell_size: Option<f32>,
    layers: &[String],
) -> Result<ExitCode, CliError> {
    let models = layers
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| {
            crate::core::erosion::registry::by_cli(l)
                .map(|e| (e.editor_default)())
                .ok_or_else(|| CliError(format!("--layers: no model {l:?} (see talus erode --help)")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let t = Instant::now();
    let stack = crate::editor::build::reference::reference_stack_with(size, cell_size, &models).map_err(CliError)?;
    crate::editor::project::save(path, &stack, &Default::default())
        .map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    eprintln!(
        "wrote {} ({}×{}, cell {} m; {} layer(s)) in {:.1} s",
        path.display(),
        stack.width(),
        stack.height(),
        stack.cell_size(),
        stack.layers().len(),
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
