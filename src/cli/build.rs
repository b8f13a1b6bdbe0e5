//! `talus build`: a project file (`.talus`, see `editor::project`) flattened into any export
//! format, or built at another resolution (`--size N`, `editor::build`), or cut into an engine
//! tile set (`--tiles`, [`super::tiles`]). The flags become one [`BuildRequest`], built as the
//! editor's Build… dialog builds it ([`build::prepare`], then [`PreparedBuild::run`]); stale
//! erosion layers re-run at the preview size first. With `--set` the base generator changes
//! first, so a batch job can rebuild a whole stack from a new seed or size of feature; with
//! `--parity` the build is measured against the preview.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::Args;

use super::CliError;
use super::generate::generate_defaults;
use super::params::apply_sets;
use super::tiles::TileArgs;
use crate::backend::Backend;
use crate::core::erosion::refine::RefineParams;
use crate::core::generate::generate;
use crate::core::io::preview;
use crate::core::splat::SplatBands;
use crate::editor::build::{
    self, BuildContext, BuildError, BuildPlan, BuildProgress, BuildRequest, Built, ErosionBuild, FileTarget, Finished,
    OutputError, Phase, PreparedBuild, Target, Written,
};
use crate::editor::layers::{BaseSource, LayerStack};
use crate::editor::project;

/// Arguments of `talus build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The project (`.talus`).
    pub project: PathBuf,
    /// The flattened terrain, in the format of its extension (.bhef .png .r16 .exr .tif .obj .glb);
    /// with --tiles, the folder of the tile set (written atomically: DIR.tmp-… renamed at the end).
    #[arg(long)]
    pub out: PathBuf,
    /// Change a value of the base generator first, `PATH=VALUE` as in `talus generate --set`
    /// (e.g. `--set seed=8`, `--set base.octaves=6`); repeatable. The size must stay the same.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Also write the updated project (re-run layers, new base) here.
    #[arg(long)]
    pub save_project: Option<PathBuf>,
    /// Build at this many nodes across instead of the project's own (same world, finer or coarser
    /// grid): 2^k + 1 from 129 to 16385, or one of Unreal's sizes (253, 505, 1009, 1017, 2017,
    /// 2033, 4033, 8129). The height follows the project's aspect.
    #[arg(long)]
    pub size: Option<usize>,
    /// How erosion layers are built at another size: `refine` (the default: the preview's result
    /// brought up ×2 per level with the model's detail pass at each, so the build holds the
    /// preview's landforms and the erosion its own cells can carry), `upsample` (the preview's
    /// result resampled, coarse to fine) or `rerun` (each recipe run again at the build's
    /// resolution).
    #[arg(long, default_value = "refine", value_parser = ["refine", "upsample", "rerun"])]
    pub erosion: String,
    /// A setting of `--erosion refine`'s detail passes, `NAME=VALUE` (e.g. `--refine
    /// stream_power_years=40000`; the names, units and defaults are in the README's refine
    /// table); repeatable.
    #[arg(long = "refine", value_name = "NAME=VALUE")]
    pub refine: Vec<String>,
    /// Measure the build against the preview (needs a size with (N − 1) a multiple of the
    /// project's (n − 1)): heights after a σ = 2 node blur, channel networks, and the build's own
    /// pits, spikes, anisotropy and land lost. Printed, and kept in --report.
    #[arg(long)]
    pub parity: bool,
    /// With --parity: a native run at the build's size (e.g. `--erosion rerun` of the same project)
    /// to hold the build's fine relief against (wavelengths of 2–4 build cells, in land windows;
    /// `core::analysis::detail`).
    #[arg(long, value_name = "FILE")]
    pub native: Option<PathBuf>,
    /// Write what the build did as JSON: the plan, times, peak memory, and the --parity figures.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Also write a hill-shaded PNG of the result, averaged down to at most 2048 pixels a side.
    #[arg(long)]
    pub preview: Option<PathBuf>,
    /// Where the erosion layers' detail passes (`--erosion refine`) and re-runs run, for every
    /// layer: `cpu`, `gpu` (falls back to the CPU with a message when no GPU can run it) or `auto`
    /// (a hardware GPU when present). Without it each layer runs where its Simulate ran (the
    /// editor's default: `auto`). Stream power's pass has a GPU version; TALUS_GPU_SOFTWARE=1 lets
    /// `gpu` use a software adapter (lavapipe).
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// The engine tile set flags.
    #[command(flatten)]
    pub tiles: TileArgs,
}

fn read(path: &Path) -> Result<project::Project, CliError> {
    project::load(path).map_err(|e| CliError(format!("{}: {e}", path.display())))
}

/// Applies `--set` to the base generator and regenerates it (same size only).
fn set_base(stack: &mut LayerStack, sets: &[String]) -> Result<(), CliError> {
    if sets.is_empty() {
        return Ok(());
    }
    let BaseSource::Generator(p) = &stack.base.source else {
        return Err(CliError(format!(
            "--set changes the base generator, but the base is {}",
            stack.base.source.describe()
        )));
    };
    let p = apply_sets(p, sets, &generate_defaults)?;
    p.validate()?;
    let map = generate(&p)?;
    if (map.width, map.height) != (stack.width(), stack.height()) {
        return Err(CliError(format!(
            "--set changed the map size to {}×{}; the project's layers are {}×{}",
            map.width,
            map.height,
            stack.width(),
            stack.height()
        )));
    }
    stack.set_base(&map, BaseSource::Generator(p));
    Ok(())
}

/// The message of a build error, in the CLI's words (its flags) where the editor's differ.
fn cli_error(e: BuildError) -> CliError {
    match e {
        BuildError::Output(OutputError::NotEmpty(dir)) => CliError(format!(
            "{} exists and is not empty; choose another folder or pass --force to replace it",
            dir.display()
        )),
        BuildError::Tiles(msg) if msg.starts_with("tile name") => CliError(format!("--tile-name: {msg}")),
        e => CliError(e.to_string()),
    }
}

pub(super) fn cmd_build(a: BuildArgs) -> Result<ExitCode, CliError> {
    let tiled = a.tiles.wanted();
    if !tiled && a.tiles.set_only() {
        return Err(CliError(
            "--maps, --tile-format, --tile-name and --force apply to a tile set: give --tiles".into(),
        ));
    }
    if tiled && (a.parity || a.save_project.is_some() || a.preview.is_some()) {
        return Err(CliError(
            "--parity, --save-project and --preview apply to a single-file build, not to --tiles".into(),
        ));
    }
    if a.size.is_none() && !tiled && (a.parity || a.erosion != "refine") {
        return Err(CliError("--parity and --erosion apply to a build at another size: give --size".into()));
    }
    let mut p = read(&a.project)?;
    p.stack.verify_stale();
    set_base(&mut p.stack, &a.sets)?;
    if let Some(b) = a.backend {
        let ids: Vec<u64> = p.stack.layers().iter().map(|l| l.id).collect();
        for id in ids {
            if let Some(e) = p.stack.layer_mut(id).and_then(|l| l.erosion_mut()) {
                e.recipe.backend = b;
            }
        }
    }
    let erosion = ErosionBuild::parse(&a.erosion).unwrap_or_default();
    let (size, target) = if tiled {
        let (w, h) = (p.stack.width(), p.stack.height());
        let (size, t) = a.tiles.target(a.size, &a.out, w, h)?;
        (Some(size), Target::Tiles(t))
    } else {
        (a.size, Target::File(FileTarget { path: a.out.clone(), unreal_range: false }))
    };
    // `apply_sets` speaks of `--set`; here the values came from `--refine`.
    let refine: RefineParams = apply_sets(&RefineParams::default(), &a.refine, &|_| None)
        .map_err(|e| CliError(e.0.replacen("--set", "--refine", 1)))?;
    refine.validate().map_err(|e| CliError(format!("--refine: {e}")))?;
    let req = BuildRequest { size, erosion, target, keep_input: a.parity, refine };
    let bands = p.view.look.as_ref().map_or_else(SplatBands::default, |look| look.material.bands.splat_bands());
    let ctx = BuildContext::of_project(Some(&a.project), "", bands);
    let prepared = build::prepare(&p.stack, &req, &ctx).map_err(cli_error)?;
    let plan = prepared.plan();
    if let Target::Tiles(t) = &req.target
        && let Some(l) = plan.layout
    {
        let head = format!(
            "tile set for {}: {}×{} tiles of {} nodes, a build of ",
            t.engine.name(),
            l.tiles_x,
            l.tiles_y,
            l.tile_size
        );
        print_plan(&head, plan);
    } else if req.size.is_some() {
        print_plan("building ", plan);
    }
    if let Target::File(f) = &req.target
        && f.format().is_some_and(|f| f.is_integer())
    {
        eprintln!("note: integer formats quantise the heights (the sidecar holds their metres)");
    }
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let c = cancel.clone();
        // A second Ctrl+C while a handler is already installed (tests calling twice) is harmless.
        let _ = ctrlc::set_handler(move || c.store(true, Ordering::SeqCst));
    }
    let t = Instant::now();
    let finished = match with_build_bar(&prepared, |progress| prepared.run(&mut p.stack, &cancel, progress)) {
        Ok(f) => f,
        Err(BuildError::Cancelled) => {
            match &req.target {
                Target::Tiles(_) => eprintln!("cancelled: nothing written to {}", a.out.display()),
                _ => eprintln!("cancelled: {} left untouched", a.out.display()),
            }
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(cli_error(e)),
    };
    let secs = t.elapsed().as_secs_f64();
    let Finished { built, rerun, written } = &finished;
    let mut report = serde_json::json!({
        "project": a.project.display().to_string(),
        "rerun_at_preview": rerun,
        "erosion": a.erosion,
        "plan": serde_json::to_value(plan).unwrap_or_default(),
    });
    match written {
        Written::Tiles { layout, manifest, .. } => super::tiles::print_written(&a.out, layout, manifest, &req, secs),
        _ => {
            let s = built.map.stats();
            eprintln!(
                "wrote {} ({}×{}, cell {} m, heights {:.3} … {:.3} m; {} layer(s) re-run at the preview size; {:.1} s)",
                a.out.display(),
                built.map.width,
                built.map.height,
                built.map.cell_size,
                s.min,
                s.max,
                rerun.len(),
                secs
            );
        }
    }
    for line in &built.passes_ran_on {
        eprintln!("detail passes: {line}");
    }
    report["passes_ran_on"] = serde_json::json!(built.passes_ran_on);
    if a.parity {
        report["parity"] = parity_report(&p.stack, built, a.native.as_deref())?;
    }
    if let Some(png) = &a.preview {
        let shown = averaged_to(&built.map, 2048);
        preview::save_png(png, &preview::render(&shown, build::sea_level(&p.stack)))
            .map_err(|e| CliError(format!("{}: {e}", png.display())))?;
        eprintln!("wrote {} ({}×{})", png.display(), shown.width, shown.height);
    }
    if let Some(path) = &a.save_project {
        project::save(path, &p.stack, &p.view).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.report {
        report["seconds"] = secs.into();
        report["build_seconds"] = secs.into();
        report["peak_rss_bytes"] = peak_rss().map_or(serde_json::Value::Null, Into::into);
        report["width"] = built.map.width.into();
        report["height"] = built.map.height.into();
        report["cell_size"] = built.map.cell_size.into();
        if let Written::Tiles { manifest, layout, .. } = written {
            report["tiles"] = serde_json::json!([layout.tiles_x, layout.tiles_y]);
            report["tile_size"] = manifest.tile_size.into();
        }
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        std::fs::write(path, text).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a build's plan on standard error: `head` (what is built), the size, cell, ratio and
/// memory estimate, then one line per step.
fn print_plan(head: &str, plan: &BuildPlan) {
    eprintln!(
        "{head}{}×{} (cell {} m, {:.2}× the preview's resolution), about {:.2} GiB:",
        plan.width,
        plan.height,
        plan.cell_size,
        plan.ratio,
        plan.bytes as f64 / (1u64 << 30) as f64
    );
    for s in &plan.steps {
        eprintln!("  {s}");
    }
}

/// Runs `job` with a progress bar on standard error that shows each [`BuildProgress`] (fraction
/// and phase) it reports, cleared when it ends; a stale layer's re-run is printed on its own line.
fn with_build_bar<T>(prepared: &PreparedBuild, job: impl FnOnce(&(dyn Fn(BuildProgress) + Sync)) -> T) -> T {
    let bar = if prepared.request().size.is_some() {
        indicatif::ProgressBar::new(1000)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} [{bar:40}] {percent}% {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |p: BuildProgress| {
        if let Phase::Stale { layer } = &p.phase {
            bar.suspend(|| eprintln!("re-running {layer:?} (its input changed)"));
        }
        bar.set_position((p.fraction * 1000.0) as u64);
        bar.set_message(p.phase.to_string());
    };
    let r = job(&progress);
    bar.finish_and_clear();
    r
}

/// The build's parity with its preview, and its own QA (see `core::analysis::parity`), printed
/// and as JSON.
fn parity_report(stack: &LayerStack, built: &Built, native: Option<&Path>) -> Result<serde_json::Value, CliError> {
    use crate::core::analysis::{self, AnalysisParams, parity};
    let preview = stack.compose();
    let sea = build::sea_level(stack);
    let n = preview.width - 1;
    let nn = built.map.width - 1;
    let mut out = serde_json::json!({ "sea_level": sea });
    if nn.is_multiple_of(n) && (built.map.height - 1) == (preview.height - 1) * (nn / n) {
        let back = parity::every_kth(&built.map, nn / n);
        let pr = parity::parity(&preview, &back, sea, &parity::ParityParams::default())
            .map_err(|e| CliError(format!("parity: {e}")))?;
        eprintln!(
            "parity with the preview: heights {:.2} % of the relief (RMS {:.3} m of {:.1} m, σ = 2 nodes), \
             channels matched {:.1} % / {:.1} % ({} / {} channel nodes, A ≥ {:.0} m²) — {}",
            100.0 * pr.rms_fraction,
            pr.rms_m,
            pr.relief_m,
            100.0 * pr.preview_matched,
            100.0 * pr.build_matched,
            pr.preview_channels,
            pr.build_channels,
            pr.channel_area_m2,
            if pr.meets(0.02, 0.8) {
                "meets the goals (≤ 2 %, ≥ 80 %)"
            } else {
                "MISSES the goals (≤ 2 %, ≥ 80 %)"
            }
        );
        out["parity"] = serde_json::to_value(&pr).unwrap_or_default();
    } else {
        eprintln!("parity: the build's side is not a whole multiple of the preview's; not measured");
    }
    if let Some(input) = &built.input {
        let rep = analysis::compare(input, &built.map, sea, &AnalysisParams::default())
            .map_err(|e| CliError(format!("analysis: {e}")))?;
        let c = rep.comparison.as_ref();
        eprintln!(
            "the build: {} pits / {} spikes on land, anisotropy {:?} (map) {:?} (change), land lost {:.2} %",
            rep.pits,
            rep.spikes,
            rep.anisotropy.as_ref().map(|a| (a.axis_ratio, a.diagonal_ratio)),
            c.and_then(|c| c.change_anisotropy.as_ref()).map(|a| (a.axis_ratio, a.diagonal_ratio)),
            100.0 * c.map_or(0.0, |c| c.land_lost_fraction),
        );
        out["qa"] = serde_json::to_value(&rep).unwrap_or_default();
    }
    out["detail"] = detail_report(&preview, &built.map, sea, native)?;
    Ok(out)
}

/// The build's fine relief (against a native run's, when given) and how far its channels reach
/// up the slopes against the preview's (`core::analysis::detail`), printed and as JSON.
fn detail_report(
    preview: &crate::core::Heightmap,
    map: &crate::core::Heightmap,
    sea: f32,
    native: Option<&Path>,
) -> Result<serde_json::Value, CliError> {
    use crate::core::analysis::detail::{DetailParams, channel_reach, fine_relief};
    let p = DetailParams::default();
    let fine = fine_relief(map, sea, &p);
    let mut out = serde_json::json!({ "fine_relief": fine });
    let native_fine = match native {
        Some(path) => {
            let mut n = crate::core::io::interop::load(path, &Default::default())
                .map_err(|e| CliError(format!("--native {}: {e}", path.display())))?;
            if (n.width, n.height) != (map.width, map.height) {
                return Err(CliError(format!(
                    "--native {}: {}×{}, the build is {}×{}",
                    path.display(),
                    n.width,
                    n.height,
                    map.width,
                    map.height
                )));
            }
            n.cell_size = map.cell_size;
            let f = fine_relief(&n, sea, &p);
            out["native_fine_relief"] = serde_json::to_value(&f).unwrap_or_default();
            let nr = channel_reach(&n, sea, &p);
            eprintln!(
                "native run's channels: drainage density {:.2} /km, median distance to a channel {:.1} m",
                nr.density_per_km, nr.median_distance_m
            );
            out["native_reach"] = serde_json::to_value(nr).unwrap_or_default();
            f
        }
        None => None,
    };
    match (&fine, &native_fine) {
        (Some(b), Some(n)) if n.power > 0.0 => {
            let ratio = b.power / n.power;
            out["fine_relief_ratio"] = ratio.into();
            eprintln!(
                "fine relief (2–4 cells, median of {} land windows of {}²): {:.3e} m², {:.3} of the native run's {:.3e} m²",
                b.windows, p.window, b.power, ratio, n.power
            );
        }
        (Some(b), _) => eprintln!(
            "fine relief (2–4 cells, median of {} land windows of {}²): {:.3e} m²",
            b.windows, p.window, b.power
        ),
        (None, _) => eprintln!("fine relief: no {}² window lies wholly on land", p.window),
    }
    let reach_b = channel_reach(map, sea, &p);
    let reach_p = channel_reach(preview, sea, &p);
    eprintln!(
        "channels (A/Δx ≥ {:.0} m): drainage density {:.2} /km in the build against {:.2} /km in the preview; \
         median distance to a channel {:.1} m against {:.1} m",
        p.reach_width_m,
        reach_b.density_per_km,
        reach_p.density_per_km,
        reach_b.median_distance_m,
        reach_p.median_distance_m,
    );
    out["reach"] = serde_json::to_value(&reach_b).unwrap_or_default();
    out["preview_reach"] = serde_json::to_value(&reach_p).unwrap_or_default();
    Ok(out)
}

/// `hm` averaged over blocks of `k × k` nodes, with `k` the smallest whole factor that brings the
/// longer side to at most `max` (the map itself when it already fits).
fn averaged_to(hm: &crate::core::Heightmap, max: usize) -> crate::core::Heightmap {
    let k = hm.width.max(hm.height).div_ceil(max.max(1)).max(1);
    if k == 1 {
        return hm.clone();
    }
    let (w, h) = (hm.width.div_ceil(k), hm.height.div_ceil(k));
    let data = (0..w * h)
        .map(|i| {
            let (bx, by) = (i % w * k, i / w * k);
            let (mut sum, mut n) = (0.0f64, 0u32);
            for y in by..(by + k).min(hm.height) {
                for x in bx..(bx + k).min(hm.width) {
                    sum += hm.get(x, y) as f64;
                    n += 1;
                }
            }
            (sum / n as f64) as f32
        })
        .collect();
    crate::core::Heightmap { width: w, height: h, cell_size: hm.cell_size * k as f32, data }
}

/// Peak resident memory of this process, bytes (`VmHWM`; `None` where it cannot be read).
pub(crate) fn peak_rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
