//! Heightmap generators (SPEC §1): a base generator followed by optional post-processing stages,
//! all deterministic from one `u64` seed.
//!
//! Pipeline order (fixed, each stage optional):
//! `base → hills → normalise → terraces → island filter → radial falloff → sea level`.
//! Normalising before terracing makes the step count independent of the base's amplitude.
//!
//! ## World units
//! A map is the sample of a world of fixed extent: node `(x, y)` is the point `(x·Δx, y·Δx)`
//! metres with `Δx = cell_size`, and the extent is `((width−1)·Δx, (height−1)·Δx)`. Every
//! parameter a user sets is in metres (wavelengths, radii, displacements, band widths), in
//! fractions of the map (falloff radius, coverage, per-map counts: the extent is fixed) or
//! unitless, so the same numbers sampled at 129², 513² or 2049² over the same extent give the same
//! land. The fBm, Voronoi island, hills and flat bases are functions of world position
//! ([`Base::is_resolution_independent`]); diamond-square and the lazy world are grid algorithms
//! (a different node count gives a different random sequence), so a build at another size
//! resamples their map instead of regenerating it. The stages after the base work in metres or in
//! fractions of the map. What is left of the resolution is sampling: a coarse map has less
//! detail, and the normalisation and the sea level's coverage see slightly different extremes
//! and distributions (the default island at 129² differs from 1025² by at most 0.2 m of its
//! 120 m, `tests/generate.rs`). A build of a project at another size takes the project's own
//! range and sea shift instead ([`GridFit`], [`generate_fitted`]), so it holds the project's
//! heights at their shared nodes.
//!
//! Version-1 files gave some of these in grid units; [`GenerateParams::upgrade_units`] converts
//! them with the file's own cell size (see [`crate::core::units`]).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::heightmap::{Heightmap, HeightmapError, MAX_SIDE};
use super::params::{ABOVE_ZERO, BadParam};

pub mod diamond_square;
pub mod fbm;
pub mod gradient;
pub mod hills;
pub mod island_filter;
pub mod lazy_world;
pub mod terrace;
pub mod value_noise;
pub mod voronoi_island;
pub mod warp;

/// Why a map could not be generated.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GenError {
    /// The requested size or cell spacing does not make a valid heightmap.
    #[error(transparent)]
    Size(#[from] HeightmapError),
    /// A generator parameter is outside its accepted range.
    #[error("parameter {name} = {value} is outside its range {range}")]
    BadParam {
        /// The field's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The accepted range, as text.
        range: &'static str,
    },
    /// [`generate_until`] was asked to stop (a newer request replaced this one).
    #[error("generation cancelled")]
    Cancelled,
}

impl From<BadParam> for GenError {
    fn from(BadParam { name, value, range }: BadParam) -> Self {
        GenError::BadParam { name, value, range }
    }
}

/// [`crate::core::params::check`] (the one range check) as a [`GenError`].
pub fn check(name: &'static str, value: f64, lo: f64, hi: f64, range: &'static str) -> Result<(), GenError> {
    Ok(crate::core::params::check(name, value, lo, hi, range)?)
}

use self::diamond_square::DiamondSquareParams;
use self::fbm::FbmParams;
use self::hills::HillsParams;
use self::island_filter::{IslandFilterParams, RadialFalloffParams, SeaLevelParams};
use self::lazy_world::LazyWorldParams;
use self::terrace::TerraceParams;
use self::voronoi_island::VoronoiIslandParams;
use super::rng::mix64;

crate::param_enum! {
    /// The base generator: what makes the first heights.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub enum Base {
        /// Fractal noise (Perlin, simplex, OpenSimplex or value noise; fBm or ridged; optional warp).
        Fbm(FbmParams),
        /// Diamond-square on a 2^n+1 square (seed 001), cropped to the requested size.
        DiamondSquare(DiamondSquareParams),
        /// A window into a lazily evaluated diamond-square world of side up to 2^24 (seed 001).
        LazyWorld(LazyWorldParams),
        /// Voronoi islands with Lloyd relaxation (seed 001).
        VoronoiIsland(VoronoiIslandParams),
        /// Random bumps on flat ground (seed 001).
        Hills(HillsParams),
        /// Flat ground at a height (metres).
        Flat {
            /// Height of the whole map, metres.
            height: f32,
        },
    }
}

impl Default for Base {
    fn default() -> Self {
        Base::Fbm(landscape_fbm())
    }
}

/// The fBm the editor and the CLI start from: 8 octaves of Perlin with the classic
/// persistence 0.5, a first octave of 333 m (about 3 cycles across the 1 km default island;
/// version 1's 0.006 cycles per node on its 2 m grid), and no offset.
/// (`FbmParams::default()` keeps seed 004's own numbers — persistence 0.01, 0.06 cycles per node
/// at 2 m — which give a much blander, busier surface; they stay available as a preset.)
pub fn landscape_fbm() -> FbmParams {
    FbmParams {
        wavelength_m: 1000.0 / 3.0,
        amplitude: 100.0,
        persistence: 0.5,
        offset: [0.0, 0.0],
        ..FbmParams::default()
    }
}

impl Base {
    /// Short name used by the CLI and the UI.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Base::Fbm(p) => match (&p.fractal, &p.noise) {
                (fbm::Fractal::Ridged, _) => "ridged",
                (_, fbm::NoiseKind::Value(_)) => "value",
                (_, fbm::NoiseKind::Simplex) => "simplex",
                (_, fbm::NoiseKind::OpenSimplex) => "opensimplex",
                _ => "fbm",
            },
            Base::DiamondSquare(_) => "diamond-square",
            Base::LazyWorld(_) => "lazy-world",
            Base::VoronoiIsland(_) => "voronoi-island",
            Base::Hills(_) => "hills",
            Base::Flat { .. } => "flat",
        }
    }

    /// Whether this base is a function of world position, so a build at another node count over
    /// the same extent regenerates the same land (fBm, Voronoi island, hills, flat). Diamond-square
    /// and the lazy world are grid algorithms: their random sequence follows the node count, so a
    /// build resamples their map (smoothly) instead.
    pub fn is_resolution_independent(&self) -> bool {
        match self {
            Base::Fbm(_) | Base::VoronoiIsland(_) | Base::Hills(_) | Base::Flat { .. } => true,
            Base::DiamondSquare(_) | Base::LazyWorld(_) => false,
        }
    }

    /// Converts the version-1 values of the active generator (see
    /// [`GenerateParams::upgrade_units`]).
    pub fn upgrade_units(&mut self, cell_size: f32) {
        match self {
            Base::Fbm(p) => p.upgrade_units(cell_size),
            Base::VoronoiIsland(p) => p.upgrade_units(cell_size),
            Base::Hills(p) => p.upgrade_units(cell_size),
            Base::DiamondSquare(_) | Base::LazyWorld(_) | Base::Flat { .. } => {}
        }
    }

    /// Whether the active generator still holds version-1 values.
    pub fn has_legacy_units(&self) -> bool {
        use crate::core::units::Legacy;
        match self {
            Base::Fbm(p) => p.has_legacy() || p.warp.has_legacy(),
            Base::VoronoiIsland(p) => p.has_legacy(),
            Base::Hills(p) => p.has_legacy(),
            Base::DiamondSquare(_) | Base::LazyWorld(_) | Base::Flat { .. } => false,
        }
    }
}

crate::params! {
    /// Everything needed to make a map: size, seed, base generator and the optional stages.
    /// This is what presets store (RON) and what the editor's Generator panel edits.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct GenerateParams {
        /// Nodes along x.
        pub width: usize = 513, unit "nodes", range [1, MAX_SIDE];
        /// Nodes along y.
        pub height: usize = 513, unit "nodes", range [1, MAX_SIDE];
        /// Distance between nodes (greater than 0, less than 10⁶: 999 999.94 is the largest f32
        /// below it). Default 2 m, the default island's spacing (version 1: 1 m; a file that
        /// leaves it out now means a 2 m grid, and its version-1 values in nodes are converted with
        /// 2 m, so its heights come out the same).
        pub cell_size: f32 = 2.0, unit "m", range [ABOVE_ZERO, 999_999.937_5];
        /// Seed of every random choice; the same seed gives the same bits.
        pub seed: u64 = 1;
        /// The base generator.
        pub base: Base = Base::default();
        /// Random bumps added on top of the base (seed 001).
        pub hills: Option<HillsParams> = None;
        /// Linear rescale of the result to `[min, max]` metres (`min <= max`) before the later
        /// stages; `None` keeps the generator's own units.
        pub normalize: Option<[f32; 2]> = Some([0.0, 100.0]), unit "m", range [-1.0e6, 1.0e6];
        /// Terraces (seed 003).
        pub terrace: Option<TerraceParams> = None;
        /// Seed 004's island filter.
        pub island: Option<IslandFilterParams> = None;
        /// Radial falloff towards the border.
        pub falloff: Option<RadialFalloffParams> = None;
        /// Sea level (coverage / seabed).
        pub sea_level: Option<SeaLevelParams> = None;
    }
}

impl GenerateParams {
    /// Checks everything [`generate`] checks before it runs a stage: the size and cell size
    /// ([`GenError::Size`]), the declared ranges, and the parameters of the base and of every
    /// stage that is on (the island filter's band width depends on the map and is checked when it
    /// runs).
    pub fn validate(&self) -> Result<(), GenError> {
        super::heightmap::check_size(self.width, self.height)?;
        super::heightmap::check_cell(self.cell_size)?;
        self.check_ranges()?;
        match &self.base {
            Base::Fbm(b) => b.validate()?,
            Base::DiamondSquare(b) => b.validate()?,
            Base::LazyWorld(b) => b.validate()?,
            Base::VoronoiIsland(b) => b.validate()?,
            Base::Hills(b) => b.validate()?,
            Base::Flat { height } => check_flat(*height)?,
        }
        if let Some(h) = &self.hills {
            h.validate()?;
        }
        if let Some([lo, hi]) = self.normalize {
            check_normalize(lo, hi)?;
        }
        if let Some(t) = &self.terrace {
            t.validate()?;
        }
        if let Some(f) = &self.falloff {
            f.validate()?;
        }
        if let Some(s) = &self.sea_level {
            s.validate()?;
        }
        Ok(())
    }

    /// Converts every version-1 value (grid units) in the base and the stages into world units,
    /// with this map's own `cell_size`: the values were made for it. Call it on parameters read
    /// from a file (presets, settings, scripts, projects); it does nothing to version-2 values.
    pub fn upgrade_units(&mut self) {
        let c = self.cell_size;
        self.base.upgrade_units(c);
        if let Some(h) = &mut self.hills {
            h.upgrade_units(c);
        }
        if let Some(i) = &mut self.island {
            i.upgrade_units(c);
        }
    }

    /// Whether the base or a stage still holds version-1 values ([`Self::upgrade_units`] clears
    /// them all). The generated [`crate::core::units::Legacy::has_legacy`] of this type looks at
    /// its own fields only, and it has none.
    pub fn has_legacy_units(&self) -> bool {
        use crate::core::units::Legacy;
        self.base.has_legacy_units()
            || self.hills.as_ref().is_some_and(|h| h.has_legacy())
            || self.island.as_ref().is_some_and(|i| i.has_legacy())
    }

    /// Reads parameters from RON text and converts any version-1 values
    /// ([`Self::upgrade_units`]).
    pub fn from_ron(text: &str) -> Result<Self, ron::error::SpannedError> {
        let mut p: Self = ron::from_str(text)?;
        p.upgrade_units();
        Ok(p)
    }

    /// "Random landscape": the same settings with a fresh seed from the OS.
    pub fn randomized(&self) -> Self {
        Self { seed: super::rng::fresh_seed(), ..self.clone() }
    }

    /// Seed of one pipeline stage, derived from the main seed so stages are independent.
    fn stage_seed(&self, stage: u64) -> u64 {
        mix64(self.seed ^ stage.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
}

/// The height of a [`Base::Flat`].
fn check_flat(height: f32) -> Result<(), GenError> {
    check("flat.height", height as f64, -1.0e6, 1.0e6, "[-1e6, 1e6] m")
}

/// `normalize = [min, max]`: each within the declared range, and `min <= max`.
fn check_normalize(lo: f32, hi: f32) -> Result<(), GenError> {
    let p = GenerateParams { normalize: Some([lo, hi]), ..GenerateParams::default() };
    p.check_ranges()?;
    check("normalize.max", hi as f64, lo as f64, 1.0e6, "[min, 1e6] m")
}

/// Runs the whole pipeline (see the module doc for the order).
pub fn generate(p: &GenerateParams) -> Result<Heightmap, GenError> {
    generate_until(p, &AtomicBool::new(false))
}

/// [`generate`] that gives up with [`GenError::Cancelled`] soon after `cancel` is set: between
/// stages, and between rows of the fBm base (the costly one). The editor's live sliders use it so a
/// newer request stops a stale one. The result, when there is one, is the same as [`generate`]'s.
pub fn generate_until(p: &GenerateParams, cancel: &AtomicBool) -> Result<Heightmap, GenError> {
    generate_fitted(p, None, cancel).map(|(hm, _)| hm)
}

/// What the two stages that read the whole map took from it: the base's `[min, max]` that
/// `normalize` mapped onto its range, and the shift that put the sea level's coverage at its
/// level. Each is `None` where its stage is off.
///
/// A grid of the same world at another size sees slightly other extremes and another height
/// distribution (a finer grid finds higher crests and deeper troughs between the coarse nodes),
/// so it would map and shift its heights a little differently: the 513² default island at 16 m
/// generated at 2049² stands a median 0.32 m (99th percentile 1.1 m, at most 1.7 m) off the 513²
/// one at their shared nodes, enough to lift an inland node the preview's erosion left just below
/// the sea above it and close the valley that drained to it (README, *Detail at ship size*). A
/// build takes its project's fit instead ([`generate_fitted`]), so its base agrees with the
/// project's at every node they share.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GridFit {
    /// `[min, max]` of the base before `normalize`.
    pub range: Option<[f32; 2]>,
    /// Metres added by the sea level's coverage.
    pub sea_shift: Option<f32>,
}

/// [`generate_until`] that takes the whole-map values of its stages from `fit` where given (a
/// build of a project at another size passes the project's own) rather than from this grid, and
/// returns the fit it used.
pub fn generate_fitted(
    p: &GenerateParams,
    fit: Option<&GridFit>,
    cancel: &AtomicBool,
) -> Result<(Heightmap, GridFit), GenError> {
    super::heightmap::check_size(p.width, p.height)?;
    let mut used = GridFit::default();
    let stop = || if cancel.load(Ordering::Relaxed) { Err(GenError::Cancelled) } else { Ok(()) };
    let (w, h, c) = (p.width, p.height, p.cell_size);
    let mut hm = match &p.base {
        Base::Fbm(b) => fbm::generate_until(w, h, c, b, p.seed, cancel)?,
        Base::DiamondSquare(b) => diamond_square::generate(w, h, c, b, p.seed)?,
        Base::LazyWorld(b) => lazy_world::generate(w, h, c, b, p.seed)?,
        Base::VoronoiIsland(b) => voronoi_island::generate(w, h, c, b, p.seed)?,
        Base::Hills(b) => hills::generate(w, h, c, b, p.seed)?,
        Base::Flat { height } => {
            check_flat(*height)?;
            Heightmap::filled(w, h, c, *height)?
        }
    };
    stop()?;
    if let Some(hp) = &p.hills {
        hills::apply(&mut hm, hp, p.stage_seed(1))?;
    }
    stop()?;
    if let Some([lo, hi]) = p.normalize {
        check_normalize(lo, hi)?;
        let [min, max] = match fit.and_then(|f| f.range) {
            Some(r) => r,
            None => {
                let (min, max) = hm.min_max();
                [min, max]
            }
        };
        hm.normalize_from(min, max, lo, hi);
        used.range = Some([min, max]);
    }
    stop()?;
    if let Some(t) = &p.terrace {
        terrace::apply(&mut hm, t)?;
    }
    stop()?;
    if let Some(i) = &p.island {
        island_filter::island_filter(&mut hm, i)?;
    }
    stop()?;
    if let Some(f) = &p.falloff {
        island_filter::radial_falloff(&mut hm, f)?;
    }
    stop()?;
    if let Some(s) = &p.sea_level {
        used.sea_shift = island_filter::apply_sea_level_with(&mut hm, s, fit.and_then(|f| f.sea_shift))?;
    }
    stop()?;
    if !hm.all_finite() {
        // Every stage validates its parameters, so this is a bug guard, reported, not a panic.
        return Err(GenError::BadParam { name: "result", value: f64::NAN, range: "finite heights" });
    }
    Ok((hm, used))
}

/// The default terrain a newcomer sees (`talus demo`, the editor's start and its Reset): an fBm
/// island about 1 km across (the cell size follows the resolution) with up to ~100 m of relief,
/// a radial falloff and a sea covering 40 %.
pub fn demo_params(size: usize, seed: u64) -> GenerateParams {
    GenerateParams {
        width: size,
        height: size,
        cell_size: 1024.0 / (size.max(2) - 1) as f32,
        seed,
        falloff: Some(island_filter::RadialFalloffParams { depth: 20.0, ..Default::default() }),
        sea_level: Some(island_filter::SeaLevelParams { level: 0.0, coverage: Some(0.4), seabed_depth: None }),
        ..GenerateParams::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(base: Base) -> GenerateParams {
        GenerateParams { width: 65, height: 33, base, ..Default::default() }
    }

    #[test]
    fn a_cancelled_generation_stops_and_an_uncancelled_one_matches() {
        let p = GenerateParams { width: 300, height: 200, ..Default::default() };
        let flag = AtomicBool::new(true);
        assert!(matches!(generate_until(&p, &flag), Err(GenError::Cancelled)));
        let a = generate_until(&p, &AtomicBool::new(false)).unwrap();
        assert_eq!(a.data, generate(&p).unwrap().data);
    }

    #[test]
    fn every_base_generates_deterministically_within_range() {
        let bases = vec![
            Base::default(),
            Base::DiamondSquare(Default::default()),
            Base::LazyWorld(Default::default()),
            Base::VoronoiIsland(Default::default()),
            Base::Hills(Default::default()),
        ];
        for b in bases {
            let p = small(b.clone());
            let a = generate(&p).unwrap();
            let again = generate(&p).unwrap();
            assert_eq!(a, again, "{}", b.kind_name());
            assert_eq!((a.width, a.height), (65, 33));
            let s = a.stats();
            assert!(s.min >= 0.0 && s.max <= 100.0, "{}: {s:?}", b.kind_name());
            assert!(s.max > s.min, "{} is flat", b.kind_name());
            let other = generate(&GenerateParams { seed: 2, ..p }).unwrap();
            assert_ne!(a.data, other.data, "{} ignores the seed", b.kind_name());
        }
    }

    #[test]
    fn flat_with_stages_and_bad_params() {
        let p = GenerateParams { base: Base::Flat { height: 5.0 }, normalize: None, ..small(Base::default()) };
        let hm = generate(&p).unwrap();
        assert!(hm.data.iter().all(|&h| h == 5.0));
        let bad = GenerateParams { normalize: Some([10.0, 0.0]), ..small(Base::default()) };
        assert!(matches!(generate(&bad), Err(GenError::BadParam { .. })));
        let bad = GenerateParams { width: 0, ..small(Base::default()) };
        assert!(matches!(generate(&bad), Err(GenError::Size(_))));
    }

    #[test]
    fn params_round_trip_through_ron() {
        let p = GenerateParams {
            terrace: Some(Default::default()),
            island: Some(Default::default()),
            ..Default::default()
        };
        let s = ron::ser::to_string_pretty(&p, Default::default()).unwrap();
        let back: GenerateParams = ron::from_str(&s).unwrap();
        assert_eq!(p, back);
        // Missing fields fall back to defaults.
        let partial: GenerateParams = ron::from_str("(width: 17, seed: 9)").unwrap();
        assert_eq!((partial.width, partial.height, partial.seed), (17, 513, 9));
    }
}
