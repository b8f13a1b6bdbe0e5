//! `talus generate`: its arguments, the generator parameters they build, and the command.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::Value;

use super::CliError;
use super::params::{apply_sets, parse_range, parse_seed, read_ron};
use crate::core::generate::{self, Base, GenerateParams};
use crate::core::io::{bhef, preview};

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
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub cell_size: Option<f32>,
    /// Seed: a number, or `random` for a fresh one.
    #[arg(long)]
    pub seed: Option<String>,
    /// A RON file of generator parameters (`GenerateParams`); version-1 values in grid units are
    /// converted with the file's own cell size.
    #[arg(long)]
    pub preset: Option<PathBuf>,
    /// Noise octaves (noise kinds).
    #[arg(long)]
    pub octaves: Option<u32>,
    /// Wavelength of the first octave in metres (noise kinds).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub wavelength: Option<f64>,
    /// Amplitude in metres (noise kinds).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub amplitude: Option<f64>,
    /// Amplitude factor per octave (noise kinds).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub persistence: Option<f64>,
    /// Frequency factor per octave (noise kinds).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub lacunarity: Option<f64>,
    /// Value-noise interpolation.
    #[arg(long, value_enum)]
    pub interp: Option<Interp>,
    /// Domain-warp strength (largest displacement) in metres (noise kinds; 0 = off).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub warp_strength: Option<f64>,
    /// Wavelength of the domain warp's first octave in metres (noise kinds).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f64)]
    pub warp_wavelength: Option<f64>,
    /// Roughness R (diamond-square, lazy world).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub roughness: Option<f32>,
    /// Terrace step count (enables terraces).
    #[arg(long)]
    pub terrace_steps: Option<u32>,
    /// Terrace smoothness 0..1.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub terrace_smoothness: Option<f32>,
    /// Seed 004's island filter band in metres (enables it).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
    pub island_waterside: Option<f32>,
    /// Rescale heights to MIN:MAX metres, or `off`.
    #[arg(long)]
    pub normalize: Option<String>,
    /// Sea level in metres (enables the sea-level stage).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cli::params::finite_f32)]
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

pub(super) fn generate_defaults(path: &str) -> Option<Value> {
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
        Some(path) => {
            let mut p: GenerateParams = read_ron(path)?;
            p.upgrade_units();
            p
        }
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
        || a.wavelength.is_some()
        || a.amplitude.is_some()
        || a.persistence.is_some()
        || a.lacunarity.is_some()
        || a.interp.is_some()
        || a.warp_strength.is_some()
        || a.warp_wavelength.is_some();
    match &mut p.base {
        Base::Fbm(f) => {
            if let Some(v) = a.octaves {
                f.octaves = v;
            }
            if let Some(v) = a.wavelength {
                f.wavelength_m = v;
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
                f.warp.strength_m = v;
            }
            if let Some(v) = a.warp_wavelength {
                f.warp.wavelength_m = v;
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
            "--octaves/--wavelength/--amplitude/--persistence/--lacunarity/--interp/--warp-* apply to noise generators, not {}",
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
        p.island.get_or_insert_with(Default::default).waterside_m = w;
    }
    if let Some(n) = &a.normalize {
        p.normalize = parse_range(n)?;
    }
    if let Some(l) = a.sea_level {
        p.sea_level.get_or_insert_with(Default::default).level = l;
    }
    apply_sets(&p, &a.sets, &generate_defaults)
}

pub(super) fn cmd_generate(a: GenerateArgs) -> Result<ExitCode, CliError> {
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
        bhef::save_with_sidecar(out, &hm, "")?;
    }
    if let Some(png) = &a.preview {
        let sea = p.sea_level.as_ref().map(|s| s.level).unwrap_or(f32::NEG_INFINITY);
        preview::save_png(png, &preview::render(&hm, sea)).map_err(|e| format!("{}: {e}", png.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

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
}
