//! `talus erode`: the erosion models and edge conditions of its flags, its arguments, and the command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::CliError;
use super::params::{apply_sets, parse_seed};
use super::snapshots::{SnapshotFormat, Snapshots};
use crate::backend::{Backend, BackendOptions, build_with_backend_opts};
use crate::core::erosion::{self, Boundary, EdgeMode, JobInputs, MODELS, ModelEntry, ModelParams, RunEnd, registry};
use crate::core::io::{atomic::write_atomic, bhef, interop, preview};

/// Erosion models of `erode --model`: the entries of the model registry
/// ([`crate::core::erosion::registry`]), spelled by their `cli` names; `{:?}` gives the registry
/// name (`StreamPower`), as the summary line and the report write it.
#[derive(Clone, Copy)]
pub struct Model(pub &'static ModelEntry);

impl Default for Model {
    /// The registry's default model (stream power).
    fn default() -> Self {
        Model(registry::default_model())
    }
}

impl PartialEq for Model {
    fn eq(&self, o: &Self) -> bool {
        self.0.name == o.0.name
    }
}

impl Eq for Model {}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl ValueEnum for Model {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::LazyLock<Vec<Model>> = std::sync::LazyLock::new(|| MODELS.iter().map(Model).collect());
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.cli))
    }
}

/// Edge conditions of `erode --boundary`, set on all four sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Edge {
    /// Open: water and sediment that cross the edge leave the map and are counted as lost.
    Drain,
    /// Closed: nothing leaves; particles and water reflect or stop at the wall.
    Wall,
    /// Periodic: the opposite edge is the neighbour (torus).
    Wrap,
}

/// Arguments of `talus erode`.
#[derive(Args, Debug)]
pub struct ErodeArgs {
    /// Erosion model. Default: stream power with its defaults, the editor's default Simulate
    /// (concave, dendritic valleys with the sea as base level; README, "Erosion results").
    #[arg(long, value_enum, default_value_t = Model::default())]
    pub model: Model,
    /// Input heightmap: BHEF (`.bhef` or no extension), or by its extension PNG, R16, EXR,
    /// GeoTIFF or SRTM `.hgt`, read as `talus convert` reads them (heights in metres; the node
    /// spacing is always `--cell-size`).
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Output file, written atomically when the run ends: BHEF (`.bhef`, or no extension), or by
    /// its extension PNG 16-bit, R16, EXR or GeoTIFF (as `talus convert` writes them).
    #[arg(long)]
    pub out: PathBuf,
    /// A RON file of the model's parameters (either the model's own struct or `ModelParams`), in
    /// world units; values of an older file in grid units (nodes, a particle count) are taken as
    /// made for the input map (its size and `--cell-size`) and converted.
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Number of time steps / iterations (pipe, thermal, stream-power).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Number of particles (droplet, snowball) on the input map: it sets the density
    /// (`droplets_per_km2`, `snowballs_per_km2`) that gives this many over the map's area (its
    /// size and `--cell-size`). A `--set` of the density overrides it.
    #[arg(long)]
    pub droplets: Option<u64>,
    /// Seed: a number, or `random`.
    #[arg(long, default_value = "1")]
    pub seed: String,
    /// Any model parameter by path, e.g. `inertia=0.1`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Edge condition on all four sides.
    #[arg(long, value_enum, default_value_t = Edge::Drain)]
    pub boundary: Edge,
    /// Metres between nodes. Default: what a BHEF input's sidecar records (`map.bhef.json`, which
    /// Talus writes beside every BHEF it saves), else 2 m, the cell size of `talus generate` and of
    /// the editor's island; the erosion parameters are in metres and per km², so give the map's
    /// real spacing.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub cell_size: Option<f32>,
    /// Height of the sea (the base level every flow ends at), metres. Default 0, the BHEF
    /// convention; a map entirely above it is unaffected; `-inf` turns the sea off.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true, value_parser = crate::cli::params::sea_f32)]
    pub sea_level: f32,
    /// A BHEF of the same size whose values are erodibility multipliers (1 = normal, 0 = rock).
    #[arg(long)]
    pub hardness: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the sediment ledger as JSON.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write the flow map as PNG.
    #[arg(long)]
    pub flow_map: Option<PathBuf>,
    /// Write the erosion/deposition map as PNG.
    #[arg(long)]
    pub erosion_map: Option<PathBuf>,
    /// Write a hill-shaded preview of the result as PNG.
    #[arg(long)]
    pub preview: Option<PathBuf>,
    /// On Ctrl+C, still save what was computed so far (default: save nothing).
    #[arg(long)]
    pub keep_partial: bool,
    /// Where the model runs: `cpu` (the reference), `gpu` (wgpu compute; falls back to the CPU
    /// with a message when no GPU can run it) or `auto` (a hardware GPU when present). Stream
    /// power, pipe, thermal and droplets have GPU versions.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    pub backend: Backend,
    /// Let `--backend gpu|auto` use a software adapter (Mesa lavapipe, WARP), e.g. for testing
    /// without a GPU; slower than the CPU models. Same as TALUS_GPU_SOFTWARE=1.
    #[arg(long)]
    pub gpu_software: bool,
    /// A mask that steers the run (same size as the terrain): BHEF of weights in [0, 1], or a
    /// greyscale PNG/R16/EXR read as 0 … 1 (black = 0). Rain falls and particles spawn only
    /// where it is above 0, in proportion to it.
    #[arg(long, value_name = "FILE")]
    pub mask: Option<PathBuf>,
    /// With `--mask`: nodes where the mask is 0 are non-erodible sinks where flow ends.
    #[arg(long, requires = "mask")]
    pub sink: bool,
    /// Write the run's time series into this directory: the input, a snapshot every `--every`
    /// units of work and the result, as `snapshot-<work done>.bhef` (or `.png`).
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<PathBuf>,
    /// Units of work between snapshots (droplets, time steps, iterations); default a tenth of
    /// the run.
    #[arg(long, value_name = "N", requires = "snapshots")]
    pub every: Option<u64>,
    /// Format of the snapshots: `bhef` (exact heights) or `png` (16-bit, one range for the series).
    #[arg(long, value_enum, default_value_t = SnapshotFormat::Bhef)]
    pub snapshot_format: SnapshotFormat,
}

fn edge(e: Edge) -> EdgeMode {
    match e {
        Edge::Drain => EdgeMode::Drain,
        Edge::Wall => EdgeMode::Wall,
        Edge::Wrap => EdgeMode::Wrap,
    }
}

/// Reads model parameters from a RON file: either `ModelParams` or the model's own struct (the
/// values of an older file in grid units still to convert, [`ModelParams::upgrade_units`]).
fn model_params(model: Model, path: Option<&Path>) -> Result<ModelParams, CliError> {
    let Some(path) = path else { return Ok((model.0.default)()) };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    crate::core::io::presets::model_from_ron(&text, model.0)
        .map_err(|e| CliError(format!("{}: not {model:?} parameters: {e}", path.display())))
}

/// Metres between nodes of an input that records none (see `--cell-size`).
const DEFAULT_CELL_SIZE: f32 = 2.0;

/// Reads a steering mask for `hm`: its size must match; a BHEF holds the weights themselves, an
/// integer image is read as 0 … 1 of its range.
fn read_mask(path: &Path, hm: &crate::core::Heightmap) -> Result<Vec<f32>, CliError> {
    let is_bhef = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("bhef"));
    let m = if is_bhef {
        bhef::load(path)?
    } else {
        let opts = crate::core::io::interop::ImportOptions { range: Some([0.0, 1.0]), ..Default::default() };
        crate::core::io::interop::load(path, &opts)?
    };
    if (m.width, m.height) != (hm.width, hm.height) {
        return Err(CliError(format!(
            "--mask {} is {}×{} but the terrain is {}×{}",
            path.display(),
            m.width,
            m.height,
            hm.width,
            hm.height
        )));
    }
    if let Some(bad) = m.data.iter().find(|v| !(v.is_finite() && (0.0..=1.0).contains(*v))) {
        return Err(CliError(format!("--mask {}: weights must be in [0, 1], found {bad}", path.display())));
    }
    Ok(m.data)
}

pub(super) fn cmd_erode(a: ErodeArgs) -> Result<ExitCode, CliError> {
    let mut params = model_params(a.model, a.params.as_deref())?;
    let particle = params.entry().particles;
    let work = match (particle, a.droplets, a.steps) {
        (true, Some(n), _) | (false, _, Some(n)) => Some(n),
        (true, None, Some(_)) => {
            return Err(CliError(
                "--steps applies to pipe/thermal/stream-power; use --droplets for particle models".into(),
            ));
        }
        (false, Some(_), None) => {
            return Err(CliError("--droplets applies to droplet/snowball; use --steps for grid models".into()));
        }
        _ => None,
    };
    if let Some(c) = a.cell_size {
        crate::core::heightmap::check_cell(c).map_err(|e| CliError(format!("--cell-size: {e}")))?;
    }
    // The output's format is checked before the run, not found wrong after it.
    let out_fmt = match a.out.extension() {
        None => interop::Format::Bhef,
        Some(_) => interop::Format::from_path(&a.out)?,
    };
    if matches!(out_fmt, interop::Format::Hgt | interop::Format::Obj | interop::Format::Glb) {
        return Err(CliError(format!(
            "--out {}: erode writes a heightmap: .bhef, .png, .r16, .exr or .tif (convert makes meshes)",
            a.out.display()
        )));
    }
    // The input by its extension, as `talus convert` reads it: BHEF for `.bhef` or none.
    let (mut hm, recorded) = match a.input.extension() {
        None => bhef::load_with_cell(&a.input)?,
        Some(e) if e.eq_ignore_ascii_case("bhef") => bhef::load_with_cell(&a.input)?,
        Some(_) => (interop::load(&a.input, &interop::ImportOptions::default())?, None),
    };
    hm.cell_size = a.cell_size.or(recorded).unwrap_or(DEFAULT_CELL_SIZE);
    // Values of an older parameter file in grid units were made for this map.
    let map = erosion::MapSize::of(&hm);
    params.upgrade_units(map);
    if let Some(n) = work {
        params.set_work(n, map);
    }
    params = apply_sets(&params, &a.sets, &|_| None)?;
    let hardness = match &a.hardness {
        Some(p) => {
            let h = bhef::load(p)?;
            if (h.width, h.height) != (hm.width, hm.height) {
                return Err(CliError(format!(
                    "hardness map is {}×{} but the terrain is {}×{}",
                    h.width, h.height, hm.width, hm.height
                )));
            }
            Some(h.data)
        }
        None => None,
    };
    let steer = match &a.mask {
        Some(p) => Some(erosion::Steer::new(read_mask(p, &hm)?, a.sink)),
        None => None,
    };
    // Parsed once: `random` must report the seed that was actually used.
    let seed = parse_seed(&a.seed)?;
    let inputs = JobInputs {
        hardness,
        boundary: Boundary::all(edge(a.boundary)),
        seed,
        sea_level: a.sea_level.is_finite().then_some(a.sea_level),
        steer,
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(a.threads.unwrap_or(0)).build()?;
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let c = cancel.clone();
        // A second Ctrl+C while a handler is already installed (tests calling twice) is harmless.
        let _ = ctrlc::set_handler(move || c.store(true, Ordering::SeqCst));
    }
    let opts = BackendOptions { allow_software: a.gpu_software || BackendOptions::from_env().allow_software };
    let (mut sim, used) = build_with_backend_opts(hm, &params, inputs, a.backend, opts)?;
    if a.backend != Backend::Cpu || used.backend != Backend::Cpu {
        eprintln!("backend: {used}");
    }
    if let ModelParams::Thermal(t) = &params
        && let Some(note) = t.count_note(sim.heightmap().cell_size)
    {
        eprintln!("{note}");
    }
    let total = sim.progress().total;
    let mut snaps = match &a.snapshots {
        Some(dir) => Some(Snapshots::new(dir, a.every, total, a.snapshot_format, sim.heightmap())?),
        None => None,
    };
    if let Some(s) = snaps.as_mut() {
        s.offer(sim.heightmap(), 0, true)?;
    }
    let mut snap_error: Option<CliError> = None;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {elapsed_precise} [{bar:40}] {pos}/{len} {per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let t = Instant::now();
    // The job's notes (a GPU that failed mid-run and what happened next) are printed as they come.
    let mut noted = 0;
    let mut print_notes = |s: &dyn erosion::Simulation| {
        let notes = s.notes();
        for n in notes.iter().skip(noted) {
            bar.suspend(|| eprintln!("talus: {n}"));
        }
        noted = noted.max(notes.len());
    };
    let end = pool.install(|| {
        erosion::run(sim.as_mut(), &cancel, |s| {
            bar.set_position(s.progress().done);
            print_notes(s);
            if let Some(w) = snaps.as_mut()
                && snap_error.is_none()
                && let Err(e) = w.offer(s.heightmap(), s.progress().done, false)
            {
                // Stop the run: a series with a hole in it is not what was asked for.
                snap_error = Some(e);
                cancel.store(true, Ordering::SeqCst);
            }
        })
    });
    print_notes(sim.as_ref());
    if let Some(e) = snap_error {
        bar.finish_and_clear();
        return Err(CliError(format!("--snapshots: {}", e.0)));
    }
    bar.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    let ledger = sim.ledger();
    let p = sim.progress();
    eprintln!(
        "{:?} (seed {seed}): {}/{} in {:.2} s; eroded {:.4}, deposited {:.4}, lost at border {:.4}, suspended {:.4} (m·nodes)",
        a.model, p.done, p.total, secs, ledger.eroded, ledger.deposited, ledger.lost_at_border, ledger.suspended
    );
    if end == RunEnd::Cancelled && !a.keep_partial {
        eprintln!("cancelled: {} left untouched (use --keep-partial to save the partial result)", a.out.display());
        return Ok(ExitCode::from(130));
    }
    if out_fmt == interop::Format::Bhef {
        bhef::save_with_sidecar(&a.out, sim.heightmap(), &a.input.display().to_string())?;
    } else {
        let eo = interop::ExportOptions { source: a.input.display().to_string(), ..Default::default() };
        interop::save(&a.out, sim.heightmap(), &eo)?;
    }
    if let Some(s) = snaps.as_mut() {
        s.offer(sim.heightmap(), p.done, true)?;
        let clipped =
            if s.clipped > 0 { format!(" ({} heights clipped to the PNG range)", s.clipped) } else { String::new() };
        eprintln!(
            "snapshots: {} written to {}{clipped}",
            s.written,
            a.snapshots.as_deref().unwrap_or(Path::new(".")).display()
        );
    }
    if let Some(r) = &a.report {
        #[derive(Serialize)]
        struct Report<'a> {
            model: String,
            backend: String,
            params: &'a ModelParams,
            seed: u64,
            done: u64,
            total: u64,
            cancelled: bool,
            seconds: f64,
            ledger: erosion::Ledger,
            terrain_error: f64,
            material_error: f64,
        }
        let rep = Report {
            model: format!("{:?}", a.model),
            backend: used.to_string(),
            params: &params,
            seed,
            done: p.done,
            total: p.total,
            cancelled: end == RunEnd::Cancelled,
            seconds: secs,
            ledger,
            terrain_error: ledger.terrain_error(),
            material_error: ledger.material_error(),
        };
        let text = serde_json::to_string_pretty(&rep)?;
        write_atomic(r, |w| w.write_all(text.as_bytes())).map_err(|e| format!("{}: {e}", r.display()))?;
    }
    let (w, h) = (sim.heightmap().width, sim.heightmap().height);
    if let Some(f) = &a.flow_map {
        let fields = sim.fields();
        let flow = fields
            .flow
            .or_else(|| fields.water.clone())
            .ok_or_else(|| format!("{:?} produces no flow map", a.model))?;
        preview::save_png(f, &preview::render_flow(w, h, &flow)).map_err(|e| format!("{}: {e}", f.display()))?;
    }
    if let Some(f) = &a.erosion_map {
        preview::save_png(f, &preview::render_erosion(w, h, &sim.maps().net()))
            .map_err(|e| format!("{}: {e}", f.display()))?;
    }
    if let Some(f) = &a.preview {
        preview::save_png(f, &preview::render(sim.heightmap(), f32::NEG_INFINITY))
            .map_err(|e| format!("{}: {e}", f.display()))?;
    }
    Ok(if end == RunEnd::Cancelled { ExitCode::from(130) } else { ExitCode::SUCCESS })
}
