//! `talus build` and `talus layers`: project files (`.talus`, see `editor::project`) from the
//! command line. `build` flattens a project into any export format, re-running the erosion layers
//! whose input changed; with `--set` it first changes a value of the base generator, so a batch
//! job can rebuild a whole stack from a new seed or size of feature; with `--size N` it builds the
//! same world at another resolution (`editor::build`), with `--parity` it measures the build
//! against the preview.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::Args;

use super::CliError;
use super::generate::generate_defaults;
use super::params::apply_sets;
use crate::core::generate::generate;
use crate::core::io::{interop, preview};
use crate::editor::build::{self, BuildError, BuildOptions, BuildProgress, Built, ErosionBuild};
use crate::editor::layers::{BaseSource, LayerKind, LayerStack};
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
    /// How erosion layers are built at another size: `upsample` (the preview's result resampled,
    /// coarse to fine; the default) or `rerun` (each recipe run again at the build's resolution).
    #[arg(long, default_value = "upsample", value_parser = ["upsample", "rerun"])]
    pub erosion: String,
    /// Measure the build against the preview (needs a size with (N − 1) a multiple of the
    /// project's (n − 1)): heights after a σ = 2 node blur, channel networks, and the build's own
    /// pits, spikes, anisotropy and land lost. Printed, and kept in --report.
    #[arg(long)]
    pub parity: bool,
    /// Write what the build did as JSON: the plan, times, peak memory, and the --parity figures.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Also write a hill-shaded PNG of the result, averaged down to at most 2048 pixels a side.
    #[arg(long)]
    pub preview: Option<PathBuf>,
    /// Cut the build into an engine tile set: K or KxL tiles (with --size N or --tile-size S);
    /// neighbours share one row and column, so N = K·(S − 1) + 1. Needs --engine.
    #[arg(long, value_name = "K|KxL")]
    pub tiles: Option<String>,
    /// Nodes a side of one tile (Unreal: 127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129;
    /// Unity: 2^k + 1 from 33 to 4097).
    #[arg(long)]
    pub tile_size: Option<usize>,
    /// The engine of the tile set: `unreal` (PNG16 by default, 32768 = 0 m) or `unity` (R16 by
    /// default, rows south first, the map's own range).
    #[arg(long, value_parser = crate::core::io::tiles::engine_names())]
    pub engine: Option<String>,
    /// Format of the height tiles: `png` (16-bit grey) or `r16` (little-endian RAW).
    #[arg(long, value_parser = ["png", "r16"])]
    pub tile_format: Option<String>,
    /// Texture maps tiled like the heights: a comma-separated list of their names, or `all`.
    #[arg(long, value_name = "LIST", help = crate::core::io::tiles::maps_help())]
    pub maps: Option<String>,
    /// File-name prefix of the tiles (default: the project's file name without extension).
    #[arg(long)]
    pub tile_name: Option<String>,
    /// Replace a non-empty --out folder (only once the new tile set is complete).
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `talus layers`.
#[derive(Args, Debug)]
pub struct LayersArgs {
    /// The project (`.talus`).
    pub project: PathBuf,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn read(path: &std::path::Path) -> Result<project::Project, CliError> {
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

pub(super) fn cmd_build(a: BuildArgs) -> Result<ExitCode, CliError> {
    let tiled = super::tiles::wanted(&a);
    if !tiled && (a.maps.is_some() || a.tile_format.is_some() || a.tile_name.is_some() || a.force) {
        return Err(CliError(
            "--maps, --tile-format, --tile-name and --force apply to a tile set: give --tiles".into(),
        ));
    }
    let out_fmt = if tiled { interop::Format::Bhef } else { interop::Format::from_path(&a.out)? };
    let mut p = read(&a.project)?;
    p.stack.verify_stale();
    set_base(&mut p.stack, &a.sets)?;
    let tile_req = if tiled { Some(super::tiles::prepare(&a, &p.stack)?) } else { None };
    if a.size.is_none() && !tiled && (a.parity || a.erosion != "upsample") {
        return Err(CliError("--parity and --erosion apply to a build at another size: give --size".into()));
    }
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let c = cancel.clone();
        // A second Ctrl+C while a handler is already installed (tests calling twice) is harmless.
        let _ = ctrlc::set_handler(move || c.store(true, Ordering::SeqCst));
    }
    let t = Instant::now();
    let mut ran = Vec::new();
    let rebuilt = p.stack.rebuild(&cancel, |l| {
        eprintln!("re-running {:?} (its input changed)", l.name);
        ran.push(l.name.clone());
    })?;
    if !rebuilt {
        eprintln!("cancelled: {} left untouched", a.out.display());
        return Ok(ExitCode::from(130));
    }
    if let Some(req) = &tile_req {
        return super::tiles::run(&a, req, &p, &cancel, t);
    }
    let mut report = serde_json::json!({ "project": a.project.display().to_string(), "rerun_at_preview": ran });
    let hm = match a.size {
        None => p.stack.compose(),
        Some(n) => {
            let erosion = ErosionBuild::parse(&a.erosion).unwrap_or_default();
            let opts = BuildOptions { width: n, erosion, keep_input: a.parity, erosion_change: false };
            let built = match build_at(&p.stack, &opts, &cancel)? {
                Some(b) => b,
                None => {
                    eprintln!("cancelled: {} left untouched", a.out.display());
                    return Ok(ExitCode::from(130));
                }
            };
            report["plan"] = serde_json::to_value(&built.plan).unwrap_or_default();
            report["erosion"] = a.erosion.clone().into();
            report["build_seconds"] = t.elapsed().as_secs_f64().into();
            if a.parity {
                report["parity"] = parity_report(&p.stack, &built)?;
            }
            built.map
        }
    };
    let eo = interop::ExportOptions { source: a.project.display().to_string(), ..Default::default() };
    if out_fmt.is_integer() {
        eprintln!("note: integer formats quantise the heights (the sidecar holds their metres)");
    }
    if cancel.load(Ordering::SeqCst) {
        eprintln!("cancelled: {} left untouched", a.out.display());
        return Ok(ExitCode::from(130));
    }
    interop::save(&a.out, &hm, &eo)?;
    let s = hm.stats();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "wrote {} ({}×{}, cell {} m, heights {:.3} … {:.3} m; {} layer(s) re-run at the preview size; {:.1} s)",
        a.out.display(),
        hm.width,
        hm.height,
        hm.cell_size,
        s.min,
        s.max,
        ran.len(),
        secs
    );
    if let Some(png) = &a.preview {
        let shown = averaged_to(&hm, 2048);
        preview::save_png(png, &preview::render(&shown, crate::editor::build::sea_level(&p.stack)))
            .map_err(|e| CliError(format!("{}: {e}", png.display())))?;
        eprintln!("wrote {} ({}×{})", png.display(), shown.width, shown.height);
    }
    if let Some(path) = &a.save_project {
        project::save(path, &p.stack, &p.view).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.report {
        report["seconds"] = secs.into();
        report["peak_rss_bytes"] = peak_rss().map_or(serde_json::Value::Null, Into::into);
        report["width"] = hm.width.into();
        report["height"] = hm.height.into();
        report["cell_size"] = hm.cell_size.into();
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        std::fs::write(path, text).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a build's plan on standard error: `head` (what is built), the size, cell, ratio and
/// memory estimate, then one line per step.
pub(super) fn print_plan(head: &str, plan: &build::BuildPlan) {
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
/// and stage) it reports, cleared when it ends.
pub(super) fn with_build_bar<T>(job: impl FnOnce(&(dyn Fn(BuildProgress) + Sync)) -> T) -> T {
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} [{bar:40}] {percent}% {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |p: BuildProgress| {
        bar.set_position((p.fraction * 1000.0) as u64);
        bar.set_message(p.stage);
    };
    let r = job(&progress);
    bar.finish_and_clear();
    r
}

/// Runs a build with a progress bar; `None` when cancelled.
pub(super) fn build_at(
    stack: &LayerStack,
    opts: &BuildOptions,
    cancel: &AtomicBool,
) -> Result<Option<Built>, CliError> {
    let plan = build::plan(stack, opts)?;
    build::check_memory(&plan, build::available_memory())?;
    print_plan("building ", &plan);
    match with_build_bar(|progress| build::build(stack, opts, cancel, progress)) {
        Ok(b) => Ok(Some(b)),
        Err(BuildError::Cancelled) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The build's parity with its preview, and its own QA (see `core::analysis::parity`), printed
/// and as JSON.
fn parity_report(stack: &LayerStack, built: &Built) -> Result<serde_json::Value, CliError> {
    use crate::core::analysis::{self, AnalysisParams, parity};
    let preview = stack.compose();
    let sea = crate::editor::build::sea_level(stack);
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

pub(super) fn cmd_layers(a: LayersArgs) -> Result<ExitCode, CliError> {
    let mut p = read(&a.project)?;
    p.stack.verify_stale();
    let s = &p.stack;
    let file_bytes = std::fs::metadata(&a.project).map(|m| m.len()).unwrap_or(0);
    let layers: Vec<serde_json::Value> = s
        .layers()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut v = serde_json::json!({
                "index": i + 1, "id": l.id, "name": l.name, "visible": l.visible, "bytes": l.bytes(),
            });
            match &l.kind {
                LayerKind::Sculpt(d) => {
                    v["kind"] = "sculpt".into();
                    v["tiles"] = d.stored().into();
                }
                LayerKind::Erosion(e) => {
                    v["kind"] = "erosion".into();
                    v["model"] = e.recipe.model.entry().cli.into();
                    v["seed"] = e.recipe.seed.into();
                    v["strength"] = e.strength.into();
                    v["stale"] = e.stale.into();
                    v["tiles"] = e.delta.stored().into();
                    v["mask_tiles"] = e.mask.stored().into();
                }
            }
            v
        })
        .collect();
    if a.json {
        let out = serde_json::json!({
            "width": s.width(), "height": s.height(), "cell_size": s.cell_size(),
            "base": s.base.source.describe(), "base_bytes": s.base.heights.bytes(),
            "layers": layers, "memory_bytes": s.bytes(), "file_bytes": file_bytes,
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} × {} nodes, cell {} m", s.width(), s.height(), s.cell_size());
    println!("0  base     {}", s.base.source.describe());
    for l in &layers {
        let extra = match l["kind"].as_str() {
            Some("erosion") => format!(
                "{} seed {}, strength {}, {}{} delta tiles, {} mask tiles",
                l["model"].as_str().unwrap_or(""),
                l["seed"],
                l["strength"],
                if l["stale"].as_bool() == Some(true) { "STALE, " } else { "" },
                l["tiles"],
                l["mask_tiles"]
            ),
            _ => format!("{} tiles", l["tiles"]),
        };
        println!(
            "{:<2} {:<8} {:?}{} — {extra}",
            l["index"],
            l["kind"].as_str().unwrap_or(""),
            l["name"].as_str().unwrap_or(""),
            if l["visible"].as_bool() == Some(false) { " (hidden)" } else { "" },
        );
    }
    println!("memory {:.1} MiB, file {:.1} MiB", s.bytes() as f64 / 1048576.0, file_bytes as f64 / 1048576.0);
    Ok(ExitCode::SUCCESS)
}
