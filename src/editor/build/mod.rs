//! Building a project at another resolution (issue #26): the same world, sampled by `N` nodes a
//! side instead of the preview's `n`, with the same landforms.
//!
//! A project's extent is `(n − 1) · Δx` metres and stays fixed; a build at `N` nodes has cell
//! size `Δx' = Δx · (n − 1) / (N − 1)`. The stack is rebuilt bottom to top:
//!
//! - **Base.** A generator whose output is a function of world position
//!   ([`crate::core::generate::Base::is_resolution_independent`]) is run again at `N` with the
//!   same parameters and `Δx'`; at an integer ratio its nodes on the preview's nodes hold the
//!   preview's values. Any other base (an opened file, a grid generator such as diamond-square,
//!   heights without a recipe) is resampled with the Catmull–Rom kernel of
//!   [`crate::core::resample`] (smooth, no stair steps, exact on the preview's nodes).
//! - **Sculpt layers and masks** are resampled the same way (masks clamped to `[0, 1]`).
//! - **Erosion layers**, in one of two ways ([`ErosionBuild`]):
//!   - `Upsample` (the default, *coarse to fine*): the preview's own result of the layer, its delta
//!     `result − input`, resampled to `N` and added with the layer's strength and mask. The
//!     landforms the preview showed are the build's by construction, at any model's cost; what a
//!     finer grid would add (rills narrower than the preview's cells) is not added.
//!   - `Rerun`: the layer's recipe runs again at `N` on the rebuilt input below it, its world-unit
//!     parameters converted to the finer grid by the model itself ([`crate::core::units`]). The
//!     parity table in the README says which models keep the preview's landforms this way.
//!
//! Nothing is allocated before [`plan`] has estimated the memory the build needs and compared it
//! with what the system has available ([`BuildError::Memory`]). A build can be cancelled between
//! any two rows; a cancelled or failed build returns an error and writes nothing (the caller
//! saves atomically).
//!
//! [`dialog`] holds the editor's Build… dialog choices (sizes, formats, the output path) and what
//! its Build button runs.

pub mod dialog;
pub mod parity_table;
pub mod reference;
pub mod tileset;

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::core::Heightmap;
use crate::core::erosion::{ModelParams, RunEnd, run};
use crate::core::filter::gaussian_blur;
use crate::core::generate::{GenerateParams, generate_until};
use crate::core::io::tiles::{Engine, count_within, sizes_within};
use crate::core::resample::{Resampler, cell_for};
use crate::editor::erosion_brush::Dab;
use crate::editor::layers::recipe::{Recipe, SteerSource, SteerSpec};
use crate::editor::layers::{BaseSource, LayerKind, LayerStack, TileGrid};

/// Smallest and largest build side, nodes.
pub const SIZE_RANGE: [usize; 2] = [129, 16385];

/// Sides Unreal Engine's landscape importer recommends (its section and component layouts),
/// accepted besides `2^k + 1`: the Unreal tile sizes of the engine table
/// ([`crate::core::io::tiles::EngineSpec::tile_sizes`]) within [`SIZE_RANGE`].
pub const UNREAL_SIZES: [usize; count_within(Engine::Unreal.spec().tile_sizes, SIZE_RANGE)] =
    sizes_within(Engine::Unreal.spec().tile_sizes, SIZE_RANGE);

/// How erosion layers are rebuilt (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ErosionBuild {
    /// The preview's result of each layer, resampled (coarse to fine).
    #[default]
    Upsample,
    /// Each layer's recipe run again at the build's resolution.
    Rerun,
}

impl ErosionBuild {
    /// The name the CLI and the dialog use.
    pub fn name(self) -> &'static str {
        match self {
            ErosionBuild::Upsample => "upsample",
            ErosionBuild::Rerun => "rerun",
        }
    }

    /// Reads [`Self::name`].
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "upsample" => Some(ErosionBuild::Upsample),
            "rerun" => Some(ErosionBuild::Rerun),
            _ => None,
        }
    }
}

/// What to build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildOptions {
    /// Nodes along x of the build (its height follows from the project's aspect).
    pub width: usize,
    /// How erosion layers are rebuilt.
    pub erosion: ErosionBuild,
    /// Also keep the fold without the erosion layers (what the erosion ran on), for the QA of the
    /// build (one more map in memory).
    pub keep_input: bool,
    /// Also keep the erosion layers' summed change (`Built::erosion_change`, one more `f32` grid
    /// in memory): the erosion and deposition maps of an engine tile set.
    pub erosion_change: bool,
}

/// Why a build could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// The requested size is not one a build can have.
    #[error("{0}")]
    Size(String),
    /// The build needs more memory than the system has available.
    #[error(
        "a {w}×{h} build needs about {need:.1} GiB of memory, but {avail:.1} GiB is available; \
         close other programs, or build at a smaller size"
    )]
    Memory {
        /// Build width, nodes.
        w: usize,
        /// Build height, nodes.
        h: usize,
        /// Estimated need, GiB.
        need: f64,
        /// Available, GiB.
        avail: f64,
    },
    /// The base could not be generated again.
    #[error("the base generator failed at the build size: {0}")]
    Base(String),
    /// An erosion layer could not run at the build size.
    #[error("layer {layer:?} could not re-run at the build size: {msg}")]
    Layer {
        /// The layer's name.
        layer: String,
        /// Why.
        msg: String,
    },
    /// A layer's result is stale (its input changed since it ran): re-run it at the preview size
    /// first.
    #[error("layer {0:?} is stale (its input changed since it ran): re-simulate it before building")]
    Stale(String),
    /// Cancelled by the caller.
    #[error("build cancelled")]
    Cancelled,
}

/// What [`plan`] found: the build's size and cell, its memory estimate, and what each part of the
/// stack will go through.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BuildPlan {
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Node spacing, metres.
    pub cell_size: f32,
    /// The build's side over the preview's (`(N − 1) / (n − 1)`).
    pub ratio: f64,
    /// Estimated peak memory, bytes.
    pub bytes: u64,
    /// One line per part of the stack: how it is rebuilt.
    pub steps: Vec<String>,
}

/// Progress of a running build: the part being built and how far it is, `0..=1` over the
/// whole build.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildProgress {
    /// What is being built ("base: generator", "Erosion 2: re-run", …).
    pub stage: String,
    /// Fraction of the whole build done.
    pub fraction: f64,
}

/// A finished build.
#[derive(Clone, Debug)]
pub struct Built {
    /// The terrain at the build's size.
    pub map: Heightmap,
    /// The fold below the first erosion layer at the build's size, when asked for.
    pub input: Option<Heightmap>,
    /// The visible erosion layers' summed change at the build's size (metres, negative where
    /// they took material away, positive where they laid it down), row-major like `map`, when
    /// asked for ([`BuildOptions::erosion_change`]): each layer adds `after − before` of its own
    /// step, so sculpt layers above or below do not enter it.
    pub erosion_change: Option<Vec<f32>>,
    /// The plan it followed.
    pub plan: BuildPlan,
}

/// Whether `n` is a side a build may have: `2^k + 1` from 129 to 16385, or one of Unreal's
/// [`UNREAL_SIZES`].
pub fn check_side(n: usize) -> Result<(), String> {
    let pow2 = n > 1 && (n - 1).is_power_of_two();
    if (SIZE_RANGE[0]..=SIZE_RANGE[1]).contains(&n) && (pow2 || UNREAL_SIZES.contains(&n)) {
        return Ok(());
    }
    Err(format!(
        "a build side must be 2^k + 1 from {} to {} (129, 257, 513, 1025, 2049, 4097, 8193, 16385) or one of \
         Unreal's sizes {:?}; {n} is not",
        SIZE_RANGE[0], SIZE_RANGE[1], UNREAL_SIZES
    ))
}

/// The build's height for `width` nodes along x, keeping the project's aspect: `(h − 1)·(W − 1)
/// / (w − 1) + 1`, which must be whole.
pub fn build_height(w: usize, h: usize, width: usize) -> Result<usize, String> {
    if w == h {
        return Ok(width);
    }
    let num = (h - 1) * (width - 1);
    if w < 2 || !num.is_multiple_of(w - 1) {
        return Err(format!(
            "the project is {w}×{h} nodes; at {width} nodes across its height would not be a whole number of nodes"
        ));
    }
    Ok(num / (w - 1) + 1)
}

/// The sea level the flow map drains to and the splat map's heights count from: the first
/// erosion layer's, else the base generator's, else 0 m (the level `talus build`, its preview and
/// parity report, and the editor's Build… use alike).
pub fn sea_level(stack: &LayerStack) -> f32 {
    stack
        .layers()
        .iter()
        .find_map(|l| l.erosion().and_then(|e| e.recipe.sea_level))
        .or(match &stack.base.source {
            BaseSource::Generator(p) => p.sea_level.as_ref().map(|s| s.level),
            _ => None,
        })
        .unwrap_or(0.0)
}

/// Memory the system has available for a build, bytes (`MemAvailable` of `/proc/meminfo`; `None`
/// where it cannot be read).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes per build node a re-run of `recipe` holds besides the map itself (the model's working
/// arrays), a generous estimate.
fn rerun_bytes_per_node(recipe: &Recipe) -> u64 {
    use crate::core::erosion::ModelParams as M;
    match &recipe.model {
        // Receivers, stack, areas, lake levels, fluxes in f64, scratch (module stream_power).
        M::StreamPower(_) => 96,
        // Water, sediment, four outflow fluxes, velocities, the thermal maps.
        M::Pipe(_) => 64,
        // The input, the change maps and the talus deposits.
        M::Thermal(_) => 24,
        // The input and the tile phases' change maps.
        _ => 24,
    }
}

/// Checks the size and estimates the memory of building `stack` with `opts` (see the module doc).
pub fn plan(stack: &LayerStack, opts: &BuildOptions) -> Result<BuildPlan, BuildError> {
    check_side(opts.width).map_err(BuildError::Size)?;
    let (w, h) = (stack.width(), stack.height());
    let height = build_height(w, h, opts.width).map_err(BuildError::Size)?;
    check_side(height).map_err(BuildError::Size)?;
    let cell = cell_for(w, stack.cell_size(), opts.width);
    let nodes = (opts.width * height) as u64;
    let ratio = (opts.width - 1) as f64 / (w.max(2) - 1) as f64;
    // The build map, its generator's scratch (the copy the sea level's coverage selects in) and
    // the encoded file's buffer when it is written.
    let mut bytes = nodes * 4 * 3;
    // Each resampled grid holds its rows resampled along x, in f64.
    let grid_bytes = (h * opts.width * 8) as u64;
    let mut steps = Vec::new();
    steps.push(match &stack.base.source {
        BaseSource::Generator(p) if p.base.is_resolution_independent() => {
            format!("base: generator ({}) run again at {}×{height}", p.base.kind_name(), opts.width)
        }
        BaseSource::Generator(p) => {
            format!("base: {} generator resampled (a grid algorithm: another size is another map)", p.base.kind_name())
        }
        other => format!("base: {} resampled", other.describe()),
    });
    bytes += grid_bytes;
    let mut rerun_extra = 0u64;
    for l in stack.layers().iter().filter(|l| l.visible) {
        match &l.kind {
            LayerKind::Sculpt(_) => steps.push(format!("{}: sculpt resampled", l.name)),
            LayerKind::Erosion(e) => {
                bytes += 2 * grid_bytes;
                match opts.erosion {
                    // The layer's change, the smoothed map and the blur's scratch.
                    ErosionBuild::Upsample => rerun_extra = rerun_extra.max(nodes * 4 * 3),
                    ErosionBuild::Rerun => {}
                }
                match opts.erosion {
                    ErosionBuild::Upsample => steps.push(format!(
                        "{}: the preview's result resampled (coarse to fine: the finer grid's detail kept where the \
                         run barely changed the land)",
                        l.name
                    )),
                    ErosionBuild::Rerun => {
                        rerun_extra = rerun_extra.max(nodes * (4 + rerun_bytes_per_node(&e.recipe)));
                        steps.push(format!(
                            "{}: {} re-run at {}×{height}",
                            l.name,
                            e.recipe.model.entry().label,
                            opts.width
                        ))
                    }
                }
            }
        }
    }
    bytes += rerun_extra;
    if opts.keep_input {
        bytes += nodes * 4;
    }
    if opts.erosion_change {
        bytes += nodes * 4;
        steps.push("the erosion layers' summed change kept (one more f32 grid)".into());
    }
    Ok(BuildPlan { width: opts.width, height, cell_size: cell, ratio, bytes, steps })
}

/// Refuses a plan whose estimate exceeds 90 % of `available` bytes.
pub fn check_memory(plan: &BuildPlan, available: Option<u64>) -> Result<(), BuildError> {
    match available {
        Some(a) if plan.bytes as f64 > 0.9 * a as f64 => Err(BuildError::Memory {
            w: plan.width,
            h: plan.height,
            need: plan.bytes as f64 / (1u64 << 30) as f64,
            avail: a as f64 / (1u64 << 30) as f64,
        }),
        _ => Ok(()),
    }
}

/// Builds `stack` at the size of `opts` (see the module doc); `progress` hears of every stage and
/// of the rows as they go.
pub fn build(
    stack: &LayerStack,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Built, BuildError> {
    let plan = plan(stack, opts)?;
    check_memory(&plan, available_memory())?;
    if let Some(l) = stack.layers().iter().find(|l| l.visible && l.erosion().is_some_and(|e| e.stale)) {
        return Err(BuildError::Stale(l.name.clone()));
    }
    let (w, h) = (stack.width(), stack.height());
    let (nw, nh) = (plan.width, plan.height);
    let visible: Vec<(usize, _)> = stack.layers().iter().enumerate().filter(|(_, l)| l.visible).collect();
    let stages = 1 + visible.len();
    let report = |k: usize, within: f64, stage: String| {
        progress(BuildProgress { stage, fraction: (k as f64 + within.clamp(0.0, 1.0)) / stages as f64 })
    };
    let stop = || if cancel.load(Ordering::Relaxed) { Err(BuildError::Cancelled) } else { Ok(()) };

    // The base.
    report(0, 0.0, plan.steps[0].clone());
    let mut map = match &stack.base.source {
        BaseSource::Generator(p) if p.base.is_resolution_independent() => {
            let gp = GenerateParams { width: nw, height: nh, cell_size: plan.cell_size, ..p.clone() };
            generate_until(&gp, cancel).map_err(|e| match e {
                crate::core::generate::GenError::Cancelled => BuildError::Cancelled,
                e => BuildError::Base(e.to_string()),
            })?
        }
        _ => {
            let mut m = Heightmap { width: nw, height: nh, cell_size: plan.cell_size, data: vec![0.0; nw * nh] };
            let base = stack.base.heights.to_dense();
            add_resampled(&mut m.data, &[Grid::new(&base, w, h, nw, nh, 1.0)], None, cancel)?;
            m
        }
    };
    stop()?;
    let mut input = None;
    let mut change: Option<Vec<f32>> = opts.erosion_change.then(|| vec![0.0f32; nw * nh]);

    for (k, &(_, l)) in visible.iter().enumerate() {
        let stage = plan.steps.get(k + 1).cloned().unwrap_or_default();
        report(k + 1, 0.0, stage.clone());
        match &l.kind {
            LayerKind::Sculpt(d) => {
                let dense = d.to_dense();
                add_resampled(&mut map.data, &[Grid::new(&dense, w, h, nw, nh, 1.0)], None, cancel)?;
            }
            LayerKind::Erosion(e) => {
                if opts.keep_input && input.is_none() {
                    input = Some(map.clone());
                }
                // The layer's own change: `change += after − before`, without a copy of the map.
                if let Some(c) = change.as_mut() {
                    c.par_iter_mut().zip(&map.data).for_each(|(c, m)| *c -= m);
                }
                let painted = e.mask.stored() > 0 || e.mask.fill() != 1.0;
                let blend = painted && !e.steers_by_mask();
                let mask = blend.then(|| resampled(&e.mask, w, h, nw, nh, Some((0.0, 1.0))));
                match opts.erosion {
                    ErosionBuild::Upsample => {
                        let delta = e.delta.to_dense();
                        upsample_erosion(&mut map, &delta, e.strength, mask.as_deref(), (w, h), plan.ratio, cancel)?;
                    }
                    ErosionBuild::Rerun => {
                        let steer_mask = e.steers_by_mask().then(|| resampled(&e.mask, w, h, nw, nh, Some((0.0, 1.0))));
                        let recipe = scaled_recipe(&e.recipe, plan.ratio, (w, h), (nw, nh));
                        let result =
                            rerun(&recipe, &map, steer_mask.as_deref(), cancel, &|f| report(k + 1, f, stage.clone()))
                                .map_err(|msg| BuildError::Layer { layer: l.name.clone(), msg })?
                                .ok_or(BuildError::Cancelled)?;
                        let s = e.strength;
                        map.data.par_chunks_mut(nw).zip(result.data.par_chunks(nw)).enumerate().for_each(
                            |(y, (row, res))| {
                                for x in 0..nw {
                                    let m = mask.as_ref().map_or(1.0, |m| m[y * nw + x]);
                                    row[x] += s * m * (res[x] - row[x]);
                                }
                            },
                        );
                    }
                }
                if let Some(c) = change.as_mut() {
                    c.par_iter_mut().zip(&map.data).for_each(|(c, m)| *c += m);
                }
            }
        }
        stop()?;
    }
    report(stages, 0.0, "done".into());
    if !map.all_finite() {
        return Err(BuildError::Layer {
            layer: "the stack".into(),
            msg: "the build holds a height that is not finite".into(),
        });
    }
    Ok(Built { map, input, erosion_change: change, plan })
}

/// One grid to resample and add: its dense values, and the factor it is added with.
struct Grid {
    r: Resampler,
    scale: f32,
}

impl Grid {
    fn new(data: &[f32], w: usize, h: usize, nw: usize, nh: usize, scale: f32) -> Self {
        Self { r: Resampler::new(data, w, h, nw, nh), scale }
    }
}

/// Adds an erosion layer coarse to fine (see the module doc). `map` holds the fold below the
/// layer at the build's size, `delta` the layer's preview result minus its preview input
/// (`w × h`), `ratio` the build's side over the preview's. With `up(·)` the bounded Catmull–Rom
/// resampling to the build's size and `G` an isotropic Gaussian of `σ = 0.4·ratio` build nodes
/// (it keeps what the preview resolves and removes the axis-aligned images any separable
/// interpolator leaves above the preview's Nyquist frequency):
///
/// ```text
/// d      = G * (strength · mask · up(delta))   the layer's change at the build's size
/// detail = map − G * map                       what only the finer grid holds
/// w      = exp(−|d| / D),  D = RMS(detail)     how much of it the erosion left
/// map   ← map + d − (1 − w) · detail
/// ```
///
/// Where the layer barely changed the terrain the build keeps the fine detail under it; where it
/// cut a channel, filled a lake or laid a shelf, the smooth surface replaces it, as the erosion
/// replaced the surface there. Building at the preview's size or smaller (`ratio ≤ 1`) adds
/// `up(delta)` alone.
fn upsample_erosion(
    map: &mut Heightmap,
    delta: &[f32],
    strength: f32,
    mask: Option<&[f32]>,
    (w, h): (usize, usize),
    ratio: f64,
    cancel: &AtomicBool,
) -> Result<(), BuildError> {
    let (nw, nh) = (map.width, map.height);
    let up = Resampler::with_bounds(delta, w, h, nw, nh, true);
    let mut d = vec![0.0f32; nw * nh];
    d.par_chunks_mut(nw).enumerate().for_each(|(y, row)| {
        up.row(y, row, None);
        let m = mask.map(|m| &m[y * nw..(y + 1) * nw]);
        for (x, v) in row.iter_mut().enumerate() {
            *v *= strength * m.map_or(1.0, |m| m[x]);
        }
    });
    drop(up);
    if ratio <= 1.0 {
        map.data.par_iter_mut().zip(&d).for_each(|(m, v)| *m += v);
        return Ok(());
    }
    let sigma = (0.4 * ratio) as f32;
    gaussian_blur(&mut d, nw, nh, sigma);
    if cancel.load(Ordering::Relaxed) {
        return Err(BuildError::Cancelled);
    }
    let mut smooth = map.data.clone();
    gaussian_blur(&mut smooth, nw, nh, sigma);
    if cancel.load(Ordering::Relaxed) {
        return Err(BuildError::Cancelled);
    }
    // The RMS of the detail, summed per row and then in row order (the same bits at any thread
    // count).
    let rows: Vec<f64> = map
        .data
        .par_chunks(nw)
        .zip(smooth.par_chunks(nw))
        .map(|(m, s)| m.iter().zip(s).map(|(a, b)| ((a - b) as f64).powi(2)).sum::<f64>())
        .collect();
    let d_rms = (rows.iter().sum::<f64>() / (nw * nh) as f64).sqrt() as f32;
    map.data.par_iter_mut().zip(&d).zip(&smooth).for_each(|((m, &dx), &s)| {
        let detail = *m - s;
        let keep = if d_rms > 0.0 { (-dx.abs() / d_rms).exp() } else { 1.0 };
        *m += dx - (1.0 - keep) * detail;
    });
    Ok(())
}

/// A tile grid resampled to `nw × nh` (clamped when asked), densely.
fn resampled(g: &TileGrid, w: usize, h: usize, nw: usize, nh: usize, clamp: Option<(f32, f32)>) -> Vec<f32> {
    let r = Resampler::new(&g.to_dense(), w, h, nw, nh);
    let mut out = vec![0.0f32; nw * nh];
    out.par_chunks_mut(nw).enumerate().for_each(|(y, row)| r.row(y, row, clamp));
    out
}

/// Adds every grid, resampled to the map's size, row by row (`mask`: a per-node weight over the
/// map); stops with [`BuildError::Cancelled`] when `cancel` is set.
fn add_resampled(out: &mut [f32], grids: &[Grid], mask: Option<&[f32]>, cancel: &AtomicBool) -> Result<(), BuildError> {
    let Some(nw) = grids.first().map(|g| g.r.width()) else { return Ok(()) };
    out.par_chunks_mut(nw).enumerate().for_each_init(Vec::new, |tmp, (y, row)| {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let m = mask.map(|m| &m[y * nw..(y + 1) * nw]);
        for g in grids {
            g.r.add_row(y, row, g.scale, m, tmp);
        }
    });
    if cancel.load(Ordering::Relaxed) { Err(BuildError::Cancelled) } else { Ok(()) }
}

/// A recipe for a re-run `ratio` times finer (`from` → `to` nodes): its steering in grid units
/// (brush dabs, the flow threshold in nodes) scaled to the finer grid, and the per-node inputs of
/// its model (a pipe model's own cell size, its rain map, a stream-power uplift map) brought to
/// the new grid. Model parameters are in world units and convert themselves.
fn scaled_recipe(recipe: &Recipe, ratio: f64, from: (usize, usize), to: (usize, usize)) -> Recipe {
    let r = ratio as f32;
    // Per-node inputs of a model follow the grid: a pipe model's own cell size shrinks with the
    // cells, its rain map and a stream-power uplift map are resampled without overshoot (so a
    // dry area stays dry and a rate keeps its sign).
    let per_node = |m: &[f32]| -> Vec<f32> {
        let rs = Resampler::with_bounds(m, from.0, from.1, to.0, to.1, true);
        let mut out = vec![0.0f32; to.0 * to.1];
        out.par_chunks_mut(to.0).enumerate().for_each(|(y, row)| rs.row(y, row, None));
        out
    };
    let mut model = recipe.model.clone();
    match &mut model {
        ModelParams::Pipe(p) => {
            if let Some(c) = p.cell_size.as_mut() {
                *c /= r;
            }
            if let Some(m) = p.rain_map.as_mut().filter(|m| m.len() == from.0 * from.1) {
                *m = per_node(m);
            }
        }
        ModelParams::StreamPower(p) => {
            if let Some(m) = p.uplift_map.as_mut().filter(|m| m.len() == from.0 * from.1) {
                *m = per_node(m);
            }
        }
        _ => {}
    }
    let steer = recipe.steer.as_ref().map(|s| SteerSpec {
        source: match &s.source {
            SteerSource::Flow { threshold } => SteerSource::Flow { threshold: threshold * r * r },
            SteerSource::Dabs(dabs) => SteerSource::Dabs(
                dabs.iter()
                    .map(|d| Dab { centre: [d.centre[0] * r, d.centre[1] * r], radius: d.radius * r, ..*d })
                    .collect(),
            ),
            other => other.clone(),
        },
        sink: s.sink,
    });
    Recipe { model, steer, ..recipe.clone() }
}

/// Runs `recipe` over `input` to its end with progress (an erosion-brush stroke dab by dab, without
/// progress); `None` when cancelled.
fn rerun(
    recipe: &Recipe,
    input: &Heightmap,
    layer_mask: Option<&[f32]>,
    cancel: &AtomicBool,
    progress: &dyn Fn(f64),
) -> Result<Option<Heightmap>, String> {
    if recipe.steer.as_ref().and_then(SteerSpec::dabs).is_some() {
        return crate::editor::layers::recipe::run_to_end(recipe, input.clone(), layer_mask, cancel);
    }
    let mut built = recipe.build_with(input.clone(), layer_mask)?;
    let end = run(built.job.as_mut(), cancel, |s| {
        let p = s.progress();
        progress(if p.total > 0 { p.done as f64 / p.total as f64 } else { 1.0 });
    });
    Ok(match end {
        RunEnd::Finished => Some(built.job.heightmap().clone()),
        RunEnd::Cancelled => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_brings_per_node_model_inputs_to_the_build_grid() {
        use crate::core::erosion::pipe::PipeParams;
        use crate::core::erosion::stream_power::StreamPowerParams;
        let (w, h, nw, nh) = (5, 3, 9, 5);
        // A dry left half and a wet right half: resampled without overshoot, coincident nodes exact.
        let rain: Vec<f32> = (0..w * h).map(|i| if i % w >= 3 { 0.02 } else { 0.0 }).collect();
        let pipe = PipeParams { cell_size: Some(2.0), rain_map: Some(rain.clone()), ..Default::default() };
        let recipe = |model| Recipe {
            model,
            boundary: Default::default(),
            seed: 1,
            backend: Default::default(),
            hardness: None,
            sea_level: None,
            steer: None,
        };
        let scaled = scaled_recipe(&recipe(ModelParams::Pipe(pipe)), 2.0, (w, h), (nw, nh));
        let ModelParams::Pipe(p) = &scaled.model else { panic!("pipe") };
        assert_eq!(p.cell_size, Some(1.0));
        let m = p.rain_map.as_ref().unwrap();
        assert_eq!(m.len(), nw * nh);
        assert!(m.iter().all(|&v| (0.0..=0.02).contains(&v)), "{m:?}");
        for y in 0..h {
            for x in 0..w {
                assert_eq!(m[2 * y * nw + 2 * x], rain[y * w + x]);
            }
        }
        let uplift: Vec<f32> = (0..w * h).map(|i| i as f32 * 1e-4 - 5e-4).collect();
        let sp = StreamPowerParams { uplift_map: Some(uplift), ..Default::default() };
        let scaled = scaled_recipe(&recipe(ModelParams::StreamPower(sp)), 2.0, (w, h), (nw, nh));
        let ModelParams::StreamPower(p) = &scaled.model else { panic!("stream power") };
        assert_eq!(p.uplift_map.as_ref().map(Vec::len), Some(nw * nh));
    }

    #[test]
    fn sides_and_heights() {
        for n in [129, 257, 513, 1025, 2049, 4097, 8193, 16385, 505, 1009, 2017, 4033, 8129] {
            assert!(check_side(n).is_ok(), "{n}");
        }
        for n in [0, 1, 65, 128, 130, 1000, 32769, usize::MAX] {
            assert!(check_side(n).is_err(), "{n}");
        }
        assert_eq!(build_height(513, 513, 2049), Ok(2049));
        assert_eq!(build_height(513, 257, 2049), Ok(1025));
        assert!(build_height(513, 300, 2017).is_err());
    }

    #[test]
    fn a_plan_over_the_available_memory_is_refused_with_both_figures() {
        let map = Heightmap::new(129, 129, 8.0).unwrap();
        let stack = LayerStack::new(&map, BaseSource::Heights);
        let p = plan(
            &stack,
            &BuildOptions { width: 16385, erosion: ErosionBuild::Upsample, keep_input: false, erosion_change: false },
        )
        .unwrap();
        assert_eq!((p.width, p.height, p.cell_size), (16385, 16385, 0.0625));
        assert!(p.bytes > 2 << 30, "{}", p.bytes);
        let e = check_memory(&p, Some(1 << 30)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("16385×16385") && msg.contains("GiB"), "{msg}");
        assert!(check_memory(&p, Some(64 << 30)).is_ok());
        assert!(check_memory(&p, None).is_ok());
        assert!(matches!(
            plan(
                &stack,
                &BuildOptions {
                    width: 1000,
                    erosion: ErosionBuild::Upsample,
                    keep_input: false,
                    erosion_change: false
                }
            ),
            Err(BuildError::Size(_))
        ));
    }
}
