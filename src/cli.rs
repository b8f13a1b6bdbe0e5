//! The `talus` command line: `generate`, `info`, `erode`, `preview`, `demo`, `convert`, `analyze`, `fix`,
//! `build`, `layers`; with no subcommand it
//! opens the editor when a display is present, and runs the headless demo job otherwise.
//! `talus FILE` opens a project or heightmap in the editor (the desktop entry's `talus --gui %f`;
//! with `--gui` a problem that stops the start is also shown in a message box, see
//! [`crate::alert`]).
//!
//! Every parameter of a generator or erosion model is reachable: the common ones as flags, all of
//! them from a RON preset (`--preset`, `--params`) and from `--set path=value`, where `path` walks
//! the parameter struct with dots (`--set base.octaves=6`, `--set terrace.steps=12`). Enum
//! wrappers such as `base: Fbm(…)` are skipped automatically, so `base.octaves` reaches
//! `base.Fbm.octaves`. Errors go to stderr with a non-zero exit code; nothing here panics on input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod build;
mod convert;
mod demo;
mod erode;
mod generate;
mod info;
mod layers;
mod params;
pub mod qa;
mod snapshots;
mod tiles;

use crate::core::io::{bhef, preview};

pub use build::BuildArgs;
pub use convert::ConvertArgs;
use convert::cmd_convert;
use demo::cmd_demo;
use erode::cmd_erode;
pub use erode::{Edge, ErodeArgs, Model};
use generate::cmd_generate;
pub use generate::{GenerateArgs, Interp, Kind, generate_params};
pub use info::Info;
use info::cmd_info;
pub use layers::LayersArgs;
pub use params::{apply_sets, parse_seed};
pub use tiles::TileArgs;

pub use crate::VERSION;

/// Talus: a terrain editor with procedural generation, hydraulic/thermal erosion and BHEF files.
#[derive(Parser, Debug)]
#[command(name = "talus", version = VERSION, about, long_about = None)]
pub struct Cli {
    /// The subcommand; `None` opens the editor (or runs the headless demo without a display).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A project (.talus) or heightmap (.bhef) to open in the editor: `talus FILE` is
    /// `talus editor FILE`.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// With no subcommand: open the editor and run this script of actions (RON; see the README).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Started from the desktop menu or a file manager (the desktop entry runs `talus --gui %f`):
    /// always open the editor, never the headless demo, and show a problem that stops the start
    /// (no display, no Vulkan driver, a file that does not open) in a message box too, besides
    /// stderr and ~/.local/state/talus/last-error.txt.
    #[arg(long)]
    pub gui: bool,
}

/// Arguments of `talus editor`.
#[derive(Args, Debug, Default)]
pub struct EditorArgs {
    /// A project (.talus) or BHEF file to open instead of the default terrain.
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
        #[arg(long, default_value_t = 0.0, allow_hyphen_values = true, value_parser = params::sea_f32)]
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
        /// Write the reference project of `talus build`'s parity table here instead (`.talus`):
        /// the island, a painted ridge, and the `--layers` erosion layers run on it.
        #[arg(long)]
        project: Option<PathBuf>,
        /// With --project: the erosion layers, bottom first, by model (`talus erode --model`
        /// names), each with the editor's default parameters; comma-separated.
        #[arg(long, default_value = "stream-power", value_delimiter = ',')]
        layers: Vec<String>,
        /// With --project: metres between nodes (default: the island's 1 024 m across, so 2 m at
        /// 513²); e.g. 8 makes a 513² project 4 096 m across, as the Generator's cell size does.
        #[arg(long, allow_hyphen_values = true, value_parser = params::finite_f32)]
        cell_size: Option<f32>,
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
    /// Flatten a project (.talus) into any export format, re-running erosion layers whose input
    /// changed; `--set` changes a base generator value first.
    Build(BuildArgs),
    /// List a project's layers (kind, name, model, seed, strength, stale, memory).
    Layers(LayersArgs),
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
    let gui = cli.gui;
    match dispatch(cli) {
        Ok(code) => code,
        Err(CliError(msg)) => {
            eprintln!("error: {msg}");
            if gui {
                // No terminal to read stderr in: a message box and the log file (the editor's
                // preflight has already shown its own problems; `show` shows one per process).
                if let Some(note) = crate::alert::show("Talus cannot start", &msg).and_then(|s| s.log_note()) {
                    eprintln!("{note}");
                }
            }
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    if let (Some(file), Some(_)) = (&cli.file, &cli.command) {
        return Err(CliError(format!(
            "{}: give a file to open or a subcommand, not both (`talus editor FILE` opens one)",
            file.display()
        )));
    }
    match cli.command {
        Some(Command::Generate(a)) => cmd_generate(a),
        Some(Command::Info { file, json }) => cmd_info(&file, json),
        Some(Command::Erode(a)) => cmd_erode(a),
        Some(Command::Preview { file, out, sea_level }) => {
            let hm = bhef::load(&file)?;
            preview::save_png(&out, &preview::render(&hm, sea_level)).map_err(|e| format!("{}: {e}", out.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Demo { project: Some(path), size, layers, cell_size, .. }) => {
            demo::cmd_reference(&path, size, cell_size, &layers)
        }
        Some(Command::Demo { out_dir, size, seed, .. }) => cmd_demo(&out_dir, size, parse_seed(&seed)?),
        Some(Command::Editor(a)) => open_editor(a),
        Some(Command::Convert(a)) => cmd_convert(a),
        Some(Command::Analyze(a)) => qa::cmd_analyze(a),
        Some(Command::Fix(a)) => qa::cmd_fix(a),
        Some(Command::Build(a)) => build::cmd_build(a),
        Some(Command::Layers(a)) => layers::cmd_layers(a),
        None => {
            if cli.file.is_some() || cli.script.is_some() || cli.gui || has_display() {
                open_editor(EditorArgs { file: cli.file, script: cli.script, window_size: None })
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

/// A file to open must be there before anything else is checked (the editor's preflight, the
/// start terrain): a missing file is the clearest error.
fn check_file_to_open(file: Option<&Path>) -> Result<(), CliError> {
    let Some(f) = file else { return Ok(()) };
    match std::fs::metadata(f) {
        Ok(m) if m.is_dir() => {
            Err(CliError(format!("{}: is a folder, not a project (.talus) or heightmap (.bhef)", f.display())))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CliError(format!("{}: no such file", f.display()))),
        Err(e) => Err(CliError(format!("{}: {e}", f.display()))),
    }
}

#[cfg(feature = "editor")]
fn open_editor(a: EditorArgs) -> Result<ExitCode, CliError> {
    check_file_to_open(a.file.as_deref())?;
    crate::app::run_editor(crate::app::EditorOptions { script: a.script, open: a.file, window_size: a.window_size })
        .map_err(CliError)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "editor"))]
fn open_editor(a: EditorArgs) -> Result<ExitCode, CliError> {
    check_file_to_open(a.file.as_deref())?;
    Err(CliError(
        "this build has no editor (built without the `editor` feature); use the subcommands, see `talus --help`".into(),
    ))
}

pub use crate::core::generate::demo_params;
