//! `talus convert`: its arguments, `--resize`, and the conversion between heightmap formats.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::CliError;
use super::params::parse_range;
use crate::core::io::tiles::{self, Engine};
use crate::core::io::{interop, normal_map, sidecar};

/// Arguments of `talus convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The file to read; a tile set's `manifest.json` reassembles its tiles into one map.
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
    /// Resample to N×N, W×H (e.g. 1025x513), or the nearest preset size: `unity` or `unreal`
    /// (the engines' tile sizes).
    #[arg(long, help = resize_help())]
    pub resize: Option<String>,
    /// Width in nodes of a non-square .r16/.raw input (the height follows from the length).
    #[arg(long)]
    pub width: Option<usize>,
    /// Metres between nodes (overrides what the input says: a BHEF or PNG/R16 sidecar, EXR, GeoTIFF).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
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

/// `--resize`'s help, with the engines' sizes from their table.
fn resize_help() -> String {
    let unity = tiles::tile_sizes(Engine::Unity);
    let unreal = tiles::tile_sizes(Engine::Unreal).iter().map(|s| s.to_string()).collect::<Vec<_>>();
    format!(
        "Resample to N×N, W×H (e.g. 1025x513), or the nearest preset size: `unity` (2^n+1, {}…{}) or `unreal` ({})",
        unity[0],
        unity[unity.len() - 1],
        unreal.join(", ")
    )
}

/// `N`, `WxH`, `unity` or `unreal` (an engine's nearest tile size) for a map of `w × h`.
fn parse_resize(s: &str, w: usize, h: usize) -> Result<(usize, usize), CliError> {
    let t = s.trim().to_ascii_lowercase();
    if let Some(engine) = Engine::parse(&t) {
        let n = interop::nearest_size(tiles::tile_sizes(engine), w.max(h));
        return Ok((n, n));
    }
    let n = t;
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

/// Reads a single-file input.
fn load(a: &ConvertArgs, range: Option<[f32; 2]>) -> Result<(crate::core::Heightmap, Vec<String>), CliError> {
    let in_fmt = interop::Format::from_path(&a.input)?;
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
    Ok(interop::load_with_notes(&a.input, &opts)?)
}

pub(super) fn cmd_convert(a: ConvertArgs) -> Result<ExitCode, CliError> {
    let range = match &a.range {
        Some(r) => parse_range(r)?,
        None => None,
    };
    let out_fmt = interop::Format::from_path(&a.output)?;
    let is_manifest = a.input.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let (mut hm, notes) = if is_manifest {
        let hm = tiles::read_tile_set(&a.input)?;
        (hm, vec![format!("reassembled from the tile set {}", a.input.display())])
    } else {
        load(&a, range)?
    };
    for n in &notes {
        eprintln!("note: {}: {n}", a.input.display());
    }
    if let Some(r) = &a.resize {
        let (w, h) = parse_resize(r, hm.width, hm.height)?;
        if (w, h) != (hm.width, hm.height) {
            hm = hm.resample(w, h)?;
        }
    }
    if out_fmt == interop::Format::R16
        && !(hm.width == hm.height && tiles::tile_sizes(Engine::Unity).contains(&hm.width))
    {
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
