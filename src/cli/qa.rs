//! `talus analyze` and `talus fix` (issue #13, item 6): the terrain QA report of
//! [`crate::core::analysis`] and its one-step fixes, on any file the importer reads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::CliError;
use crate::core::Heightmap;
use crate::core::analysis::{self, AnalysisParams, FixReport};
use crate::core::io::interop;

/// Arguments of `talus analyze`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The map to analyse (any importable format: .bhef .png .r16 .raw .exr .tif .tiff .hgt).
    pub file: PathBuf,
    /// Sea level, metres: nodes at or below it are sea (outlets), above it land.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub sea_level: f32,
    /// Metres between nodes (default: what the file records, a BHEF sidecar among it, else 1 m; the default island has 2 m).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub cell_size: Option<f32>,
    /// The map FILE was made from (same size): adds land lost to the sea and the anisotropy of
    /// the change FILE − INPUT.
    #[arg(long)]
    pub compare: Option<PathBuf>,
    /// Drainage area from which a node is a channel, m² (default 10 000).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub channel_area: Option<f64>,
    /// Margin of a single-node pit or spike, metres (default 0.5).
    #[arg(long, allow_hyphen_values = true)]
    pub tolerance: Option<f32>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How `talus fix` treats depressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PitMode {
    /// Priority-flood fill of every depression on land (Barnes et al. 2014), with --epsilon.
    Fill,
    /// Breach every depression by carving along the priority-flood path (Soille 2004).
    Breach,
    /// Raise only single-node pits to their lowest neighbour.
    Raise,
    /// Leave pits alone.
    None,
}

/// Arguments of `talus fix`.
#[derive(Args, Debug)]
pub struct FixArgs {
    /// The map to fix (any importable format).
    pub file: PathBuf,
    /// Where to write the fixed map (format by extension).
    #[arg(long)]
    pub out: PathBuf,
    /// What to do with pits and depressions.
    #[arg(long, value_enum, default_value_t = PitMode::Fill)]
    pub pits: PitMode,
    /// Also lower single-node spikes to their highest neighbour (after the pits are treated).
    #[arg(long)]
    pub spikes: bool,
    /// Sea level, metres (nodes at or below it are left alone and are outlets).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub sea_level: f32,
    /// Metres between nodes.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub cell_size: Option<f32>,
    /// Fill/breach gradient per node, metres (≥ 0; 0 fills flat).
    #[arg(long, default_value_t = 1e-3, allow_hyphen_values = true)]
    pub epsilon: f32,
    /// Margin of a single-node pit or spike, metres.
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    pub tolerance: f32,
}

fn load(path: &Path, cell_size: Option<f32>) -> Result<Heightmap, CliError> {
    let opts = interop::ImportOptions { cell_size, ..Default::default() };
    let (hm, notes) = interop::load_with_notes(path, &opts)?;
    for n in notes {
        eprintln!("note: {}: {n}", path.display());
    }
    Ok(hm)
}

fn check_finite(name: &str, v: f32) -> Result<(), CliError> {
    if v.is_finite() { Ok(()) } else { Err(CliError(format!("{name} {v} is not a finite number of metres"))) }
}

/// `talus analyze`.
pub fn cmd_analyze(a: AnalyzeArgs) -> Result<ExitCode, CliError> {
    check_finite("--sea-level", a.sea_level)?;
    let mut p = AnalysisParams::default();
    if let Some(c) = a.channel_area {
        p.channel_area_m2 = c;
    }
    if let Some(t) = a.tolerance {
        p.pit_tolerance_m = t;
    }
    let hm = load(&a.file, a.cell_size)?;
    let rep = match &a.compare {
        Some(input) => {
            let mut inp = load(input, a.cell_size)?;
            inp.cell_size = hm.cell_size;
            analysis::compare(&inp, &hm, a.sea_level, &p)?
        }
        None => analysis::analyze(&hm, a.sea_level, &p)?,
    };
    let text = if a.json {
        serde_json::to_string_pretty(&rep)?
    } else {
        format!("file:              {}\n{rep}", a.file.display())
    };
    // A closed pipe (`| head`) ends the output quietly instead of panicking in `println!`.
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError(format!("cannot write the report: {e}"))),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// What `talus fix` did, for the log.
#[derive(Serialize, Debug, Default)]
struct FixLog {
    spikes: Option<FixReport>,
    pits: Option<FixReport>,
}

/// `talus fix`.
pub fn cmd_fix(a: FixArgs) -> Result<ExitCode, CliError> {
    check_finite("--sea-level", a.sea_level)?;
    if !(a.epsilon.is_finite() && a.epsilon >= 0.0) {
        return Err(CliError(format!("--epsilon {} must be a finite number of metres ≥ 0", a.epsilon)));
    }
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        return Err(CliError(format!("--tolerance {} must be a finite number of metres ≥ 0", a.tolerance)));
    }
    if a.pits == PitMode::None && !a.spikes {
        return Err(CliError("nothing to do: give --pits fill|breach|raise and/or --spikes".into()));
    }
    let mut hm = load(&a.file, a.cell_size)?;
    let before = analysis::pits_and_spikes(&hm, a.sea_level, a.tolerance);
    // Pits first: breaching carves notches that can leave a node standing alone, which the spike
    // pass then takes down (lowering a spike to its highest neighbour never makes a pit).
    let pits = match a.pits {
        PitMode::Fill => Some(analysis::fill_pits(&mut hm, a.sea_level, a.epsilon)),
        PitMode::Breach => Some(analysis::breach_pits(&mut hm, a.sea_level, a.epsilon)),
        PitMode::Raise => Some(analysis::raise_pits(&mut hm, a.sea_level, a.tolerance)),
        PitMode::None => None,
    };
    let spikes = a.spikes.then(|| analysis::remove_spikes(&mut hm, a.sea_level, a.tolerance));
    let log = FixLog { spikes, pits };
    let after = analysis::pits_and_spikes(&hm, a.sea_level, a.tolerance);
    let eo = interop::ExportOptions { source: a.file.display().to_string(), ..Default::default() };
    interop::save(&a.out, &hm, &eo)?;
    let say = |what: &str, r: &Option<FixReport>| {
        if let Some(r) = r {
            eprintln!(
                "{what}: {} nodes changed, largest change {:.3} m, volume {:+.1} m³",
                r.changed, r.max_change_m, r.volume_m3
            );
        }
    };
    say(&format!("pits ({:?})", a.pits).to_lowercase(), &log.pits);
    say("spikes", &log.spikes);
    eprintln!(
        "single-node pits / spikes on land: {} / {} before, {} / {} after; wrote {}",
        before.pits.len(),
        before.spikes.len(),
        after.pits.len(),
        after.spikes.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
