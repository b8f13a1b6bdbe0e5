//! The `talus` command line: `generate`, `info`, `erode`, `preview`, `demo`, `convert`, `analyze`, `fix`; with no subcommand it
//! opens the editor when a display is present, and runs the headless demo job otherwise.
//!
//! Every parameter of a generator or erosion model is reachable: the common ones as flags, all of
//! them from a RON preset (`--preset`, `--params`) and from `--set path=value`, where `path` walks
//! the parameter struct with dots (`--set base.octaves=6`, `--set terrace.steps=12`). Enum
//! wrappers such as `base: Fbm(…)` are skipped automatically, so `base.octaves` reaches
//! `base.Fbm.octaves`. Errors go to stderr with a non-zero exit code; nothing here panics on input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub mod qa;

use crate::backend::{Backend, BackendOptions, build_with_backend_opts};
use crate::core::erosion::{self, Boundary, EdgeMode, JobInputs, MODELS, ModelEntry, ModelParams, RunEnd, registry};
use crate::core::generate::{self, Base, GenerateParams};
use crate::core::io::{atomic::write_atomic, bhef, interop, normal_map, preview, sidecar};

/// Talus: a terrain editor with procedural generation, hydraulic/thermal erosion and BHEF files.
#[derive(Parser, Debug)]
#[command(name = "talus", version, about, long_about = None)]
pub struct Cli {
    /// The subcommand; `None` opens the editor (or runs the headless demo without a display).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand: open the editor and run this script of actions (RON; see the README).
    #[arg(long)]
    pub script: Option<PathBuf>,
}

/// Arguments of `talus editor`.
#[derive(Args, Debug, Default)]
pub struct EditorArgs {
    /// A BHEF file to open instead of the default terrain.
    pub file: Option<PathBuf>,
    /// Run this script of actions (RON) in the window, then quit (exit code 0 when every action
    /// succeeded).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Window size in logical pixels, `WIDTHxHEIGHT` (default: the saved size, 1280x720 at first).
    #[arg(long, value_parser = parse_window_size)]
    pub window_size: Option<[u32; 2]>,
}

/// Parses `WIDTHxHEIGHT` (each 200 ..= 16384).
fn parse_window_size(s: &str) -> Result<[u32; 2], String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("window size {s:?} is not WIDTHxHEIGHT"))?;
    let n = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (200..=16384).contains(n))
            .ok_or_else(|| format!("window size {s:?}: each side must be 200 ..= 16384"))
    };
    Ok([n(w)?, n(h)?])
}

/// The subcommands of `talus`.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate a heightmap and save it as BHEF (and optionally a PNG preview).
    Generate(GenerateArgs),
    /// Print the size and height statistics of a BHEF file.
    Info {
        /// The BHEF file.
        file: PathBuf,
        /// Print a JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run an erosion model on a BHEF file.
    Erode(ErodeArgs),
    /// Render a hill-shaded PNG preview of a BHEF file.
    Preview {
        /// The BHEF file.
        file: PathBuf,
        /// The PNG to write.
        out: PathBuf,
        /// Height of the sea, metres (below it is drawn as water).
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        sea_level: f32,
    },
    /// The headless main job: generate the default island, erode it, write BHEF + PNGs + ledger.
    Demo {
        /// Folder for the results.
        #[arg(long, default_value = "talus-out")]
        out_dir: PathBuf,
        /// Map side in nodes.
        #[arg(long, default_value_t = 513)]
        size: usize,
        /// Seed.
        #[arg(long, default_value = "1")]
        seed: String,
    },
    /// Open the editor window (the default when a display is present).
    Editor(EditorArgs),
    /// Convert between heightmap formats, chosen by extension: .bhef .png (16-bit grey; 8/16 on
    /// input) .r16/.raw .exr .tif/.tiff (GeoTIFF) .hgt (input) .obj .glb (output). Integer
    /// outputs get a JSON sidecar (`out.png.json`) holding the metres of their range.
    Convert(ConvertArgs),
    /// Terrain QA: slope–area concavity, single-node pits and spikes on land, grid anisotropy,
    /// drainage density and (with --compare) land lost to the sea. Reads any importable format.
    Analyze(qa::AnalyzeArgs),
    /// Fix what `analyze` finds: fill or breach depressions (--pits), remove single-node spikes
    /// (--spikes); writes --out in the format of its extension.
    Fix(qa::FixArgs),
}

/// Arguments of `talus convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The file to read.
    pub input: PathBuf,
    /// The file to write.
    pub output: PathBuf,
    /// MIN:MAX metres that integer 0 and full scale stand for: on an integer output instead of
    /// the map's own min:max (normalise to full range, the default); on an integer input instead
    /// of its sidecar (default without one: 0:1).
    #[arg(long, allow_hyphen_values = true)]
    pub range: Option<String>,
    /// Integer output centred the way Unreal reads it (32768 = 0 m); prints the Z scale.
    #[arg(long, conflicts_with = "range")]
    pub unreal: bool,
    /// Resample to N×N, W×H (e.g. 1025x513), or the nearest preset size: `unity` (2^n+1,
    /// 33…4097) or `unreal` (127, 253, 505, 1009, 2017, 4033, 8129).
    #[arg(long)]
    pub resize: Option<String>,
    /// Width in nodes of a non-square .r16/.raw input (the height follows from the length).
    #[arg(long)]
    pub width: Option<usize>,
    /// Metres between nodes (overrides what the input says; BHEF stores none).
    #[arg(long)]
    pub cell_size: Option<f32>,
    /// Geographic inputs (GeoTIFF in degrees, .hgt): keep the file's nodes instead of resampling
    /// the rows to square cells (the cell size is then the north–south spacing).
    #[arg(long)]
    pub keep_grid: bool,
    /// Meshes: keep every K-th node along each axis (plus the last).
    #[arg(long, default_value_t = 1)]
    pub decimate: usize,
    /// Also write a tangent-space normal map (RGB PNG, OpenGL convention).
    #[arg(long)]
    pub normal_map: Option<PathBuf>,
}

/// Generator kinds of `generate --kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// fBm over Perlin noise.
    Fbm,
    /// fBm over value noise (see --interp).
    Value,
    /// Ridged multifractal over Perlin noise.
    Ridged,
    /// fBm over simplex noise.
    Simplex,
    /// fBm over OpenSimplex noise.
    Opensimplex,
    /// Diamond-square.
    DiamondSquare,
    /// A window into the lazy diamond-square world.
    LazyWorld,
    /// Voronoi islands.
    VoronoiIsland,
    /// Random hills on flat ground.
    Hills,
    /// Flat ground.
    Flat,
}

/// Value-noise interpolations of `generate --interp` (the flag makes the base value noise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Interp {
    /// Bilinear.
    Linear,
    /// Cosine-eased bilinear (the default of value noise).
    Cosine,
    /// Catmull-Rom bicubic over 4×4 lattice values.
    Cubic,
}

/// Arguments of `talus generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Generator. Default fbm, or the preset's.
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// Map side in nodes (sets width and height).
    #[arg(long)]
    pub size: Option<usize>,
    /// Nodes along x (overrides --size).
    #[arg(long)]
    pub width: Option<usize>,
    /// Nodes along y (overrides --size).
    #[arg(long)]
    pub height: Option<usize>,
    /// Metres between nodes.
    #[arg(long)]
    pub cell_size: Option<f32>,
    /// Seed: a number, or `random` for a fresh one.
    #[arg(long)]
    pub seed: Option<String>,
    /// A RON file of generator parameters (`GenerateParams`).
    #[arg(long)]
    pub preset: Option<PathBuf>,
    /// Noise octaves (noise kinds).
    #[arg(long)]
    pub octaves: Option<u32>,
    /// Base frequency in cycles per node (noise kinds).
    #[arg(long)]
    pub frequency: Option<f64>,
    /// Amplitude in metres (noise kinds).
    #[arg(long)]
    pub amplitude: Option<f64>,
    /// Amplitude factor per octave (noise kinds).
    #[arg(long)]
    pub persistence: Option<f64>,
    /// Frequency factor per octave (noise kinds).
    #[arg(long)]
    pub lacunarity: Option<f64>,
    /// Value-noise interpolation.
    #[arg(long, value_enum)]
    pub interp: Option<Interp>,
    /// Domain-warp strength in nodes (noise kinds; 0 = off).
    #[arg(long)]
    pub warp_strength: Option<f64>,
    /// Domain-warp frequency (noise kinds).
    #[arg(long)]
    pub warp_frequency: Option<f64>,
    /// Roughness R (diamond-square, lazy world).
    #[arg(long)]
    pub roughness: Option<f32>,
    /// Terrace step count (enables terraces).
    #[arg(long)]
    pub terrace_steps: Option<u32>,
    /// Terrace smoothness 0..1.
    #[arg(long)]
    pub terrace_smoothness: Option<f32>,
    /// Seed 004's island filter band in nodes (enables it).
    #[arg(long)]
    pub island_waterside: Option<u32>,
    /// Rescale heights to MIN:MAX metres, or `off`.
    #[arg(long)]
    pub normalize: Option<String>,
    /// Sea level in metres (enables the sea-level stage).
    #[arg(long, allow_negative_numbers = true)]
    pub sea_level: Option<f32>,
    /// Any parameter by path, e.g. `base.octaves=6`, `terrace.steps=8`, `base.noise="Simplex"`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Print the final parameters as RON (a preset) to stdout.
    #[arg(long)]
    pub print_params: bool,
    /// The BHEF file to write.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A PNG preview to write.
    #[arg(long)]
    pub preview: Option<PathBuf>,
}

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
    /// Input BHEF.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Output BHEF (written atomically when the run ends).
    #[arg(long)]
    pub out: PathBuf,
    /// A RON file of the model's parameters (either the model's own struct or `ModelParams`).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Number of time steps / iterations (pipe, thermal, stream-power).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Number of particles (droplet, snowball).
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
    /// Metres between nodes (BHEF stores none).
    #[arg(long, default_value_t = 1.0)]
    pub cell_size: f32,
    /// Height of the sea (the base level every flow ends at), metres. Default 0, the BHEF
    /// convention; a map entirely above it is unaffected; `-inf` turns the sea off.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
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
    /// with a message when no GPU can run it) or `auto` (a hardware GPU when present). Pipe and
    /// thermal have GPU versions.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    pub backend: Backend,
    /// Let `--backend gpu|auto` use a software adapter (Mesa lavapipe, WARP), e.g. for testing
    /// without a GPU; slower than the CPU models. Same as TALUS_GPU_SOFTWARE=1.
    #[arg(long)]
    pub gpu_software: bool,
}

/// A user-facing error: printed to stderr, exit code 1.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// Parses the process arguments and runs; returns the exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(CliError(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Some(Command::Generate(a)) => cmd_generate(a),
        Some(Command::Info { file, json }) => cmd_info(&file, json),
        Some(Command::Erode(a)) => cmd_erode(a),
        Some(Command::Preview { file, out, sea_level }) => {
            let hm = bhef::load(&file)?;
            preview::save_png(&out, &preview::render(&hm, sea_level)).map_err(|e| format!("{}: {e}", out.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Demo { out_dir, size, seed }) => cmd_demo(&out_dir, size, parse_seed(&seed)?),
        Some(Command::Editor(a)) => open_editor(a),
        Some(Command::Convert(a)) => cmd_convert(a),
        Some(Command::Analyze(a)) => qa::cmd_analyze(a),
        Some(Command::Fix(a)) => qa::cmd_fix(a),
        None => {
            if cli.script.is_some() || has_display() {
                open_editor(EditorArgs { file: None, script: cli.script, window_size: None })
            } else {
                eprintln!(
                    "No display found: running the headless main job (`talus demo`). Use `talus --help` for all commands."
                );
                cmd_demo(Path::new("talus-out"), 513, 1)
            }
        }
    }
}

fn has_display() -> bool {
    std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty())
        || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
}

#[cfg(feature = "editor")]
fn open_editor(a: EditorArgs) -> Result<ExitCode, CliError> {
    crate::app::run_editor(crate::app::EditorOptions { script: a.script, open: a.file, window_size: a.window_size })
        .map_err(CliError)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "editor"))]
fn open_editor(_: EditorArgs) -> Result<ExitCode, CliError> {
    Err(CliError(
        "this build has no editor (built without the `editor` feature); use the subcommands, see `talus --help`".into(),
    ))
}

/// `123` or `random` ([`crate::core::rng::parse_seed`]).
pub fn parse_seed(s: &str) -> Result<u64, CliError> {
    crate::core::rng::parse_seed(s).map_err(CliError)
}

fn read_ron<T: DeserializeOwned>(path: &Path) -> Result<T, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    ron::from_str(&text).map_err(|e| CliError(format!("{}: {e}", path.display())))
}

/// Applies `path=value` to a serialisable struct by round-tripping it through JSON.
/// `defaults` supplies the value of an `Option` field that is currently `None` when a path goes
/// through it.
pub fn apply_sets<T: Serialize + DeserializeOwned>(
    target: &T,
    sets: &[String],
    defaults: &dyn Fn(&str) -> Option<Value>,
) -> Result<T, CliError> {
    if sets.is_empty() {
        return Ok(serde_json::from_value(serde_json::to_value(target)?)?);
    }
    let mut root = serde_json::to_value(target)?;
    for s in sets {
        let (path, raw) = s.split_once('=').ok_or_else(|| CliError(format!("--set `{s}`: expected PATH=VALUE")))?;
        let value: Value = serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.trim().to_string()));
        let keys: Vec<&str> = path.trim().split('.').filter(|k| !k.is_empty()).collect();
        if keys.is_empty() {
            return Err(CliError(format!("--set `{s}`: empty path")));
        }
        set_path(&mut root, &keys, value, defaults, path, "")?;
    }
    serde_json::from_value(root).map_err(|e| CliError(format!("--set: {e}")))
}

/// `walked` is the dotted path of the keys consumed so far (what `defaults` is asked about when
/// `node` is an unset `Option`).
fn set_path(
    node: &mut Value,
    keys: &[&str],
    value: Value,
    defaults: &dyn Fn(&str) -> Option<Value>,
    full: &str,
    walked: &str,
) -> Result<(), CliError> {
    let key = keys[0];
    if node.is_null()
        && let Some(d) = defaults(walked)
    {
        *node = d;
    }
    let Value::Object(map) = node else {
        return Err(CliError(format!("--set {full}: `{key}` is not inside a parameter group")));
    };
    if !map.contains_key(key) {
        // Skip an enum wrapper such as {"Fbm": {...}}.
        if map.len() == 1 {
            let inner = map.values_mut().next().expect("len 1");
            if inner.is_object() {
                return set_path(inner, keys, value, defaults, full, walked);
            }
        }
        let known: Vec<&String> = map.keys().collect();
        return Err(CliError(format!("--set {full}: unknown parameter `{key}` (known here: {known:?})")));
    }
    let slot = map.get_mut(key).expect("checked");
    if keys.len() == 1 {
        *slot = value;
        Ok(())
    } else {
        let walked = if walked.is_empty() { key.to_string() } else { format!("{walked}.{key}") };
        set_path(slot, &keys[1..], value, defaults, full, &walked)
    }
}

fn generate_defaults(path: &str) -> Option<Value> {
    use generate::*;
    let v = match path {
        "hills" => serde_json::to_value(hills::HillsParams::default()),
        "terrace" => serde_json::to_value(terrace::TerraceParams::default()),
        "island" => serde_json::to_value(island_filter::IslandFilterParams::default()),
        "falloff" => serde_json::to_value(island_filter::RadialFalloffParams::default()),
        "sea_level" => serde_json::to_value(island_filter::SeaLevelParams::default()),
        "normalize" => serde_json::to_value([0.0f32, 100.0]),
        _ => return None,
    };
    v.ok()
}

fn base_for(kind: Kind) -> Base {
    use generate::fbm::{FbmParams, Fractal, NoiseKind};
    use generate::value_noise::Interpolation;
    let fbm = |noise, fractal| Base::Fbm(FbmParams { noise, fractal, ..generate::landscape_fbm() });
    match kind {
        Kind::Fbm => fbm(NoiseKind::Perlin, Fractal::Fbm),
        Kind::Value => fbm(NoiseKind::Value(Interpolation::default()), Fractal::Fbm),
        Kind::Ridged => fbm(NoiseKind::Perlin, Fractal::Ridged),
        Kind::Simplex => fbm(NoiseKind::Simplex, Fractal::Fbm),
        Kind::Opensimplex => fbm(NoiseKind::OpenSimplex, Fractal::Fbm),
        Kind::DiamondSquare => Base::DiamondSquare(Default::default()),
        Kind::LazyWorld => Base::LazyWorld(Default::default()),
        Kind::VoronoiIsland => Base::VoronoiIsland(Default::default()),
        Kind::Hills => Base::Hills(Default::default()),
        Kind::Flat => Base::Flat { height: 0.0 },
    }
}

/// Builds the generator parameters from the flags (preset → kind → size/seed → flags → --set).
pub fn generate_params(a: &GenerateArgs) -> Result<GenerateParams, CliError> {
    use generate::value_noise::Interpolation;
    let mut p: GenerateParams = match &a.preset {
        Some(path) => read_ron(path)?,
        None => GenerateParams::default(),
    };
    if let Some(kind) = a.kind
        && (a.preset.is_none() || base_for(kind).kind_name() != p.base.kind_name())
    {
        p.base = base_for(kind);
        if kind == Kind::VoronoiIsland && a.preset.is_none() {
            // Voronoi islands come with their own sea (water polygons below 0 m): keep their
            // units and draw the sea at 0 rather than stretching the seabed to 0..100.
            p.normalize = None;
            p.sea_level = Some(Default::default());
        }
    }
    if let Some(s) = a.size {
        p.width = s;
        p.height = s;
    }
    if let Some(w) = a.width {
        p.width = w;
    }
    if let Some(h) = a.height {
        p.height = h;
    }
    if let Some(c) = a.cell_size {
        p.cell_size = c;
    }
    if let Some(s) = &a.seed {
        p.seed = parse_seed(s)?;
    }
    let noise_flags = a.octaves.is_some()
        || a.frequency.is_some()
        || a.amplitude.is_some()
        || a.persistence.is_some()
        || a.lacunarity.is_some()
        || a.interp.is_some()
        || a.warp_strength.is_some()
        || a.warp_frequency.is_some();
    match &mut p.base {
        Base::Fbm(f) => {
            if let Some(v) = a.octaves {
                f.octaves = v;
            }
            if let Some(v) = a.frequency {
                f.frequency = v;
            }
            if let Some(v) = a.amplitude {
                f.amplitude = v;
            }
            if let Some(v) = a.persistence {
                f.persistence = v;
            }
            if let Some(v) = a.lacunarity {
                f.lacunarity = v;
            }
            if let Some(v) = a.warp_strength {
                f.warp.strength = v;
            }
            if let Some(v) = a.warp_frequency {
                f.warp.frequency = v;
            }
            if let Some(i) = a.interp {
                let interp = match i {
                    Interp::Linear => Interpolation::Linear,
                    Interp::Cosine => Interpolation::Cosine,
                    Interp::Cubic => Interpolation::Cubic,
                };
                f.noise = generate::fbm::NoiseKind::Value(interp);
            }
            if a.roughness.is_some() {
                return Err(CliError("--roughness applies to diamond-square and lazy-world only".into()));
            }
        }
        Base::DiamondSquare(d) => {
            if let Some(r) = a.roughness {
                d.roughness = r;
            }
        }
        Base::LazyWorld(l) => {
            if let Some(r) = a.roughness {
                l.roughness = r;
            }
        }
        other => {
            if a.roughness.is_some() {
                return Err(CliError(format!("--roughness does not apply to {}", other.kind_name())));
            }
        }
    }
    if noise_flags && !matches!(p.base, Base::Fbm(_)) {
        return Err(CliError(format!(
            "--octaves/--frequency/--amplitude/--persistence/--lacunarity/--interp/--warp-* apply to noise generators, not {}",
            p.base.kind_name()
        )));
    }
    if a.terrace_steps.is_some() || a.terrace_smoothness.is_some() {
        let t = p.terrace.get_or_insert_with(Default::default);
        if let Some(s) = a.terrace_steps {
            t.steps = s;
        }
        if let Some(s) = a.terrace_smoothness {
            t.smoothness = s;
        }
    }
    if let Some(w) = a.island_waterside {
        p.island.get_or_insert_with(Default::default).waterside = w;
    }
    if let Some(n) = &a.normalize {
        p.normalize = parse_range(n)?;
    }
    if let Some(l) = a.sea_level {
        p.sea_level.get_or_insert_with(Default::default).level = l;
    }
    apply_sets(&p, &a.sets, &generate_defaults)
}

fn parse_range(s: &str) -> Result<Option<[f32; 2]>, CliError> {
    if s.eq_ignore_ascii_case("off") || s.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let bad = || CliError(format!("range `{s}`: expected MIN:MAX in metres (e.g. 0:250) or `off`"));
    let (lo, hi) = s.split_once(':').ok_or_else(bad)?;
    let lo: f32 = lo.trim().parse().map_err(|_| bad())?;
    let hi: f32 = hi.trim().parse().map_err(|_| bad())?;
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(bad());
    }
    Ok(Some([lo, hi]))
}

fn cmd_generate(a: GenerateArgs) -> Result<ExitCode, CliError> {
    let p = generate_params(&a)?;
    if a.print_params {
        println!("{}", ron::ser::to_string_pretty(&p, ron::ser::PrettyConfig::default())?);
    }
    if a.out.is_none() && a.preview.is_none() {
        if a.print_params {
            return Ok(ExitCode::SUCCESS);
        }
        return Err(CliError("nothing to write: give --out map.bhef and/or --preview map.png".into()));
    }
    let t = Instant::now();
    let hm = generate::generate(&p)?;
    let s = hm.stats();
    eprintln!(
        "generated {} {}×{} (seed {}) in {:.0} ms: heights {:.2} … {:.2} m",
        p.base.kind_name(),
        hm.width,
        hm.height,
        p.seed,
        t.elapsed().as_secs_f64() * 1e3,
        s.min,
        s.max
    );
    if let Some(out) = &a.out {
        bhef::save_atomic(out, &hm)?;
    }
    if let Some(png) = &a.preview {
        let sea = p.sea_level.as_ref().map(|s| s.level).unwrap_or(f32::NEG_INFINITY);
        preview::save_png(png, &preview::render(&hm, sea)).map_err(|e| format!("{}: {e}", png.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The statistics `info` prints.
#[derive(Serialize, Debug)]
pub struct Info {
    /// The file as given on the command line.
    pub file: String,
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Nodes in all (`width × height`).
    pub nodes: usize,
    /// Size of the BHEF file, `8 + 12 · nodes` bytes.
    pub bytes: u64,
    /// Lowest height, metres.
    pub min: f32,
    /// Highest height, metres.
    pub max: f32,
    /// Mean height, metres.
    pub mean: f64,
}

fn cmd_info(file: &Path, json: bool) -> Result<ExitCode, CliError> {
    let hm = bhef::load(file)?;
    let s = hm.stats();
    let info = Info {
        file: file.display().to_string(),
        width: hm.width,
        height: hm.height,
        nodes: hm.len(),
        bytes: bhef::encoded_len(hm.width, hm.height).unwrap_or(0),
        min: s.min,
        max: s.max,
        mean: s.mean,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        println!("file:   {}", info.file);
        println!("size:   {} × {} ({} nodes, {} bytes)", info.width, info.height, info.nodes, info.bytes);
        println!("min:    {}", info.min);
        println!("max:    {}", info.max);
        println!("mean:   {}", info.mean);
    }
    Ok(ExitCode::SUCCESS)
}

fn edge(e: Edge) -> EdgeMode {
    match e {
        Edge::Drain => EdgeMode::Drain,
        Edge::Wall => EdgeMode::Wall,
        Edge::Wrap => EdgeMode::Wrap,
    }
}

/// Reads model parameters from a RON file: either `ModelParams` or the model's own struct.
fn model_params(model: Model, path: Option<&Path>) -> Result<ModelParams, CliError> {
    let Some(path) = path else { return Ok((model.0.default)()) };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    crate::core::io::presets::model_from_ron(&text, model.0)
        .map_err(|e| CliError(format!("{}: not {model:?} parameters: {e}", path.display())))
}

fn cmd_erode(a: ErodeArgs) -> Result<ExitCode, CliError> {
    let mut params = model_params(a.model, a.params.as_deref())?;
    let particle = params.entry().particles;
    let mut sets = a.sets.clone();
    match (particle, a.droplets, a.steps) {
        (true, Some(n), _) => sets.insert(0, format!("{}={n}", params.entry().work_field)),
        (false, _, Some(n)) => sets.insert(0, format!("{}={n}", params.entry().work_field)),
        (true, None, Some(_)) => {
            return Err(CliError(
                "--steps applies to pipe/thermal/stream-power; use --droplets for particle models".into(),
            ));
        }
        (false, Some(_), None) => {
            return Err(CliError("--droplets applies to droplet/snowball; use --steps for grid models".into()));
        }
        _ => {}
    }
    params = apply_sets(&params, &sets, &|_| None)?;
    let mut hm = bhef::load(&a.input)?;
    if !(a.cell_size.is_finite() && a.cell_size > 0.0) {
        return Err(CliError(format!("--cell-size {} must be a positive number of metres", a.cell_size)));
    }
    hm.cell_size = a.cell_size;
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
    // Parsed once: `random` must report the seed that was actually used.
    let seed = parse_seed(&a.seed)?;
    let inputs = JobInputs {
        hardness,
        boundary: Boundary::all(edge(a.boundary)),
        seed,
        sea_level: a.sea_level.is_finite().then_some(a.sea_level),
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
    let total = sim.progress().total;
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
        })
    });
    print_notes(sim.as_ref());
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
    bhef::save_atomic(&a.out, sim.heightmap())?;
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

/// `N`, `WxH`, `unity` or `unreal` for a map of `w × h`.
fn parse_resize(s: &str, w: usize, h: usize) -> Result<(usize, usize), CliError> {
    let t = s.trim().to_ascii_lowercase();
    let side = w.max(h);
    let n = match t.as_str() {
        "unity" => {
            return Ok((
                interop::nearest_size(&interop::UNITY_SIZES, side),
                interop::nearest_size(&interop::UNITY_SIZES, side),
            ));
        }
        "unreal" => {
            return Ok((
                interop::nearest_size(&interop::UNREAL_SIZES, side),
                interop::nearest_size(&interop::UNREAL_SIZES, side),
            ));
        }
        _ => t,
    };
    let bad = || CliError(format!("--resize `{s}`: expected N, WxH, `unity` or `unreal`"));
    let (a, b) = match n.split_once('x') {
        Some((a, b)) => (a.trim().parse::<usize>().map_err(|_| bad())?, b.trim().parse::<usize>().map_err(|_| bad())?),
        None => {
            let a = n.parse::<usize>().map_err(|_| bad())?;
            (a, a)
        }
    };
    crate::core::heightmap::check_size(a, b)?;
    Ok((a, b))
}

fn cmd_convert(a: ConvertArgs) -> Result<ExitCode, CliError> {
    let range = match &a.range {
        Some(r) => parse_range(r)?,
        None => None,
    };
    let in_fmt = interop::Format::from_path(&a.input)?;
    let out_fmt = interop::Format::from_path(&a.output)?;
    if in_fmt.is_integer() && range.is_none() && !sidecar::path_for(&a.input).exists() {
        eprintln!(
            "note: {} has no sidecar and no --range was given: heights are the normalised 0…1 values",
            a.input.display()
        );
    }
    let opts = interop::ImportOptions {
        range: range.filter(|_| in_fmt.is_integer()),
        width: a.width,
        cell_size: a.cell_size,
        keep_grid: a.keep_grid,
    };
    let (mut hm, notes) = interop::load_with_notes(&a.input, &opts)?;
    for n in &notes {
        eprintln!("note: {}: {n}", a.input.display());
    }
    if let Some(r) = &a.resize {
        let (w, h) = parse_resize(r, hm.width, hm.height)?;
        if (w, h) != (hm.width, hm.height) {
            hm = hm.resample(w, h)?;
        }
    }
    if out_fmt == interop::Format::R16 && !(hm.width == hm.height && interop::UNITY_SIZES.contains(&hm.width)) {
        eprintln!(
            "note: {}×{} is not a Unity terrain size (square 2^n+1, 33…4097); use --resize unity for Unity",
            hm.width, hm.height
        );
    }
    let eo = interop::ExportOptions {
        range: range.filter(|_| out_fmt.is_integer()),
        unreal: a.unreal,
        decimate: a.decimate,
        source: a.input.display().to_string(),
        notes,
    };
    if a.unreal && !out_fmt.is_integer() {
        return Err(CliError("--unreal applies to integer outputs (.png, .r16)".into()));
    }
    let rep = interop::save(&a.output, &hm, &eo)?;
    let s = hm.stats();
    eprintln!(
        "wrote {} ({}×{}, heights {:.3} … {:.3} m, cell {} m)",
        a.output.display(),
        hm.width,
        hm.height,
        s.min,
        s.max,
        hm.cell_size
    );
    if let Some([lo, hi]) = rep.range {
        eprintln!("integer range {lo} … {hi} m (sidecar {})", sidecar::path_for(&a.output).display());
    }
    if rep.clipped > 0 {
        eprintln!("warning: {} heights lay outside --range and were clipped", rep.clipped);
    }
    if let Some(z) = rep.unreal_z_scale {
        eprintln!("Unreal import: Z scale {z:.4}, X/Y scale {:.4} (cm per node)", hm.cell_size * 100.0);
    }
    if let Some(n) = &a.normal_map {
        normal_map::save(n, &hm)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The headless main job: the default island, eroded by droplets, saved with previews.
fn cmd_demo(dir: &Path, size: usize, seed: u64) -> Result<ExitCode, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let p = demo_params(size, seed);
    let t = Instant::now();
    let hm = generate::generate(&p)?;
    eprintln!("generated {}×{} island in {:.0} ms", hm.width, hm.height, t.elapsed().as_secs_f64() * 1e3);
    let sea = p.sea_level.as_ref().map(|s| s.level).unwrap_or(0.0);
    bhef::save_atomic(&dir.join("terrain.bhef"), &hm)?;
    preview::save_png(&dir.join("terrain.png"), &preview::render(&hm, sea))?;
    let params = ModelParams::Droplet(erosion::droplet::DropletParams::default());
    let params = apply_sets(&params, &[format!("droplets={}", (size * size / 2).max(1000))], &|_| None)?;
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

pub use crate::core::generate::demo_params;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_paths_reach_nested_and_optional_fields() {
        let p = GenerateParams::default();
        let q =
            apply_sets(&p, &["base.octaves=3".into(), "terrace.steps=7".into(), "width=65".into()], &generate_defaults)
                .unwrap();
        // Regression: a key that also occurs inside its group's name (`level` in `sea_level`).
        let r = apply_sets(&p, &["sea_level.level=3".into()], &generate_defaults).unwrap();
        assert_eq!(r.sea_level.as_ref().unwrap().level, 3.0);
        let Base::Fbm(f) = &q.base else { panic!("base changed") };
        assert_eq!(f.octaves, 3);
        assert_eq!(q.terrace.as_ref().unwrap().steps, 7);
        assert_eq!(q.width, 65);
        assert!(apply_sets(&p, &["base.nonsense=1".into()], &generate_defaults).is_err());
        assert!(apply_sets(&p, &["width".into()], &generate_defaults).is_err());
        assert!(apply_sets(&p, &["width=-3".into()], &generate_defaults).is_err());
    }

    #[test]
    fn seeds_and_ranges_parse_or_explain() {
        assert_eq!(parse_seed("42").unwrap(), 42);
        assert!(parse_seed("-1").is_err());
        assert!(parse_seed("random").is_ok());
        assert_eq!(parse_range("0:250").unwrap(), Some([0.0, 250.0]));
        assert_eq!(parse_range("off").unwrap(), None);
        assert!(parse_range("5:1").is_err());
        assert!(parse_range("nan:1").is_err());
    }
}
