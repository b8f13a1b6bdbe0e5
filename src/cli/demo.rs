//! `talus demo`, the headless main job (also what `talus` runs with no subcommand and no display).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::CliError;
use crate::core::erosion::{self, JobInputs, ModelParams};
use crate::core::generate::{self, demo_params};
use crate::core::io::{bhef, preview};

/// Droplets the demo runs on its 1024 m island (one per two nodes of the 513² preview grid).
const DEMO_DROPLETS_513: f64 = 131_584.0;

/// The headless main job: the default island, eroded by droplets, saved with previews.
pub(super) fn cmd_demo(dir: &Path, size: usize, seed: u64) -> Result<ExitCode, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let p = demo_params(size, seed);
    let t = Instant::now();
    let hm = generate::generate(&p)?;
    eprintln!("generated {}×{} island in {:.0} ms", hm.width, hm.height, t.elapsed().as_secs_f64() * 1e3);
    let sea = p.sea_level.as_ref().map(|s| s.level).unwrap_or(0.0);
    bhef::save_atomic(&dir.join("terrain.bhef"), &hm)?;
    preview::save_png(&dir.join("terrain.png"), &preview::render(&hm, sea))?;
    // The island is always 1024 m across: 131 584 droplets on it (one per two nodes at 513²), the
    // same droplets per km² at any --size.
    let per_km2 = DEMO_DROPLETS_513 / (1.024 * 1.024);
    let params = ModelParams::Droplet(erosion::droplet::DropletParams {
        droplets_per_km2: per_km2,
        ..erosion::droplet::DropletParams::default()
    });
    let mut sim = erosion::build(hm, &params, JobInputs { seed, sea_level: Some(sea), ..Default::default() })?;
    let t = Instant::now();
    let never = AtomicBool::new(false);
    erosion::run(sim.as_mut(), &never, |_| {});
    let l = sim.ledger();
    eprintln!(
        "eroded with {} droplets in {:.2} s: eroded {:.2}, deposited {:.2} m·nodes",
        sim.progress().total,
        t.elapsed().as_secs_f64(),
        l.eroded,
        l.deposited
    );
    bhef::save_atomic(&dir.join("eroded.bhef"), sim.heightmap())?;
    preview::save_png(&dir.join("eroded.png"), &preview::render(sim.heightmap(), sea))?;
    let (w, h) = (sim.heightmap().width, sim.heightmap().height);
    preview::save_png(&dir.join("erosion.png"), &preview::render_erosion(w, h, &sim.maps().net()))?;
    if let Some(flow) = sim.fields().flow {
        preview::save_png(&dir.join("flow.png"), &preview::render_flow(w, h, &flow))?;
    }
    eprintln!("wrote terrain.bhef, terrain.png, eroded.bhef, eroded.png, erosion.png, flow.png to {}", dir.display());
    Ok(ExitCode::SUCCESS)
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
