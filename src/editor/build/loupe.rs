//! A build's loupe (issue #34, item 5): a window of the project, a square of `side` metres around
//! a point, seen at the build's resolution as the request would build it, in seconds, before the
//! build is started. It answers "what will the build hold there?" (the gullies a Refine build
//! carves, the finer octaves of the base) without building the whole map.
//!
//! # What is built
//! The window is snapped to the preview's nodes (and, for a build whose ratio to the preview is not
//! whole, such as Unreal's sizes, to the fewest preview cells that hold a whole number of build
//! cells) and widened by a margin of preview cells on each side ([`default_margin`]), clipped to
//! the map. The project is cut to that area ([`LayerStack::crop`]) and built there through the
//! build's own path ([`super::stack::build_layers`], the ladder of [`super::refine`] included, at
//! the same levels: the area's nodes are the whole build's nodes), on the base at the build's
//! size cut to the area:
//!
//! - a generator that is a function of world position is generated **whole** at the build's size,
//!   as the build generates it, and cut: its `normalize` range and its sea level's `coverage` are
//!   taken over the whole map, so a window of it cannot be generated alone without differing from
//!   the build by those (0.2 % of the relief on the reference island). The whole base costs what
//!   the build's base costs (about 0.4 s at 4097², 2 s at 8193² on 2 cores) and is kept in a
//!   [`BaseCache`] for the next loupe of the same project and size, which then costs only its
//!   window;
//! - any other base (a file, a grid generator) is resampled in the area, as the build resamples it.
//!
//! What a stencil cannot see from inside the area comes from the whole project
//! ([`super::refine::Extent::Window`]): the drainage the ladder starts from (routed over the whole
//! preview), the range of the fold below (stream power's terrain-following uplift) and the place of
//! the hardness noise.
//!
//! # How close it is to the build
//! Every step of a build is local except those above: Catmull–Rom resampling reads 2 nodes each
//! way, the blurs 3σ, and a detail pass reaches as far as its sweeps and steps carry the flow (one
//! node each), its particles run, or its iterations spread. The margin covers that reach at every
//! level, so inside the window the loupe is the build up to what still crosses it:
//!
//! - **Refine** with a stream-power layer: the whole build's window, to the bit in practice
//!   (`tests/build.rs` builds 256 m windows of a 2 km project at 1025², in the middle and at a
//!   corner, and finds 0.000 mm between them and the whole build); a thermal layer's pass is as
//!   local (an iteration moves material one node) but has no test of its own;
//! - **droplets** and **snowballs** refined: the pass drops particles at the same density over
//!   the area, not the same particles as over the whole map: the rills are alike, not the same ones
//!   ([`Loupe::notes`] says so);
//! - **Upsample**: exact but for the weight of the fine base detail, which uses the RMS of the
//!   detail over the area instead of the whole map;
//! - **Re-run** is not shown ([`LoupeError::Rerun`]): it runs each recipe again over the whole
//!   map, and a run over a window is another run on another land.
//!
//! Stale erosion layers are refused as a build refuses them before re-running them
//! ([`BuildError::StaleLayer`]): re-simulate first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::ErosionBuild;
use super::error::{BuildError, LoupeError};
use super::plan::{BuildPlan, PlanStep, available_memory, check_memory, layer_how, plan};
use super::progress::Phase;
use super::refine::{Extent, levels};
use super::request::{BuildRequest, Target};
use super::stack::{build_base, build_layers};
use crate::core::Heightmap;
use crate::core::erosion::ModelParams;
use crate::core::erosion::refine::RefineParams;
use crate::core::generate::GenerateParams;
use crate::editor::layers::{BaseSource, LayerStack};

/// The side of the window the editor's loupe opens with, metres.
pub const DEFAULT_SIDE_M: f32 = 256.0;

/// Where the loupe looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoupeSpec {
    /// The window's centre, metres from the map's first node (`[x, y]`; node `(x, y)` lies at
    /// `(x·Δx, y·Δx)`).
    pub centre_m: [f32; 2],
    /// The window's side, metres (snapped to whole preview cells).
    pub side_m: f32,
    /// Preview cells built around the window on each side; `None`: [`default_margin`].
    pub margin_cells: Option<usize>,
}

impl LoupeSpec {
    /// A window of `side_m` metres around `centre_m`, with the default margin.
    pub fn new(centre_m: [f32; 2], side_m: f32) -> Self {
        Self { centre_m, side_m, margin_cells: None }
    }
}

/// How the loupe's base was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoupeBase {
    /// The generator run over the whole map at the build's size and cut (`cached`: that whole
    /// base was kept from an earlier loupe).
    Regenerated {
        /// The whole base came from the [`BaseCache`].
        cached: bool,
    },
    /// The preview's base resampled in the area, as the build resamples it.
    Resampled,
}

/// A window of the project at the preview's and at the build's resolution.
#[derive(Clone, Debug)]
pub struct Loupe {
    /// The preview's fold over the window, at the preview's cells.
    pub preview: Heightmap,
    /// The same window as the request builds it, at the build's cells.
    pub build: Heightmap,
    /// The window's first node in the preview, `[x, y]`.
    pub preview_origin: [usize; 2],
    /// The window's first node in the build, `[x, y]`.
    pub build_origin: [usize; 2],
    /// The whole build's size, nodes.
    pub build_size: (usize, usize),
    /// The build's side over the preview's.
    pub ratio: f64,
    /// Preview cells built around the window on each side (fewer where the map ends).
    pub margin_cells: usize,
    /// The area built at the build's size (window and margin), nodes.
    pub area_nodes: (usize, usize),
    /// How the base was made.
    pub base: LoupeBase,
    /// The erosion mode shown.
    pub erosion: ErosionBuild,
    /// Where the loupe may differ from the build beyond the margin's millimetres (module doc),
    /// one sentence each; empty when it does not.
    pub notes: Vec<String>,
    /// Seconds the loupe took.
    pub seconds: f64,
}

impl Loupe {
    /// The window's first node, metres from the map's first node.
    pub fn origin_m(&self) -> [f32; 2] {
        let c = self.preview.cell_size;
        [self.preview_origin[0] as f32 * c, self.preview_origin[1] as f32 * c]
    }

    /// The window's extent, metres (`[x, y]`).
    pub fn side_m(&self) -> [f32; 2] {
        let c = self.preview.cell_size;
        [(self.preview.width - 1) as f32 * c, (self.preview.height - 1) as f32 * c]
    }
}

/// The key of a cached base: the generator and the size it ran at.
type BaseKey = (GenerateParams, usize, usize);

/// A generator base at a build's size, kept between loupes of one project and size (the editor
/// keeps one while its Build… dialog is open): the whole base costs seconds at 8193², its window a
/// moment. Clones share the one slot; it holds one base at most.
#[derive(Clone, Default)]
pub struct BaseCache(Arc<Mutex<Option<(BaseKey, Arc<Heightmap>)>>>);

impl BaseCache {
    /// The base kept for `key`, if it is that one.
    fn get(&self, key: &BaseKey) -> Option<Arc<Heightmap>> {
        let slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.as_ref().filter(|(k, _)| k == key).map(|(_, m)| m.clone())
    }

    fn put(&self, key: BaseKey, map: Arc<Heightmap>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((key, map));
    }

    /// Drops the base kept (its memory: a 8193² base is 256 MiB).
    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Whether a base is kept.
    pub fn is_empty(&self) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }
}

/// The reach of one level's detail pass of `model`, in that level's cells (module doc): how far
/// its sweeps and steps, iterations or particles carry a change, with `cell` the level's cell size.
fn pass_reach(model: &ModelParams, r: &RefineParams, cell: f32) -> f64 {
    match model {
        ModelParams::StreamPower(_) => (r.drainage_sweeps + r.stream_power_steps) as f64,
        ModelParams::Thermal(_) => r.thermal_iterations as f64,
        ModelParams::Droplet(_) => (r.droplet_path_m / cell.max(1e-6)) as f64 + r.droplet_radius_cells as f64,
        ModelParams::Snowball(p) => {
            // A snowball's speed is at most `speed / (1 − friction)` metres per iteration (it
            // gains `speed` along the normal and keeps `friction` of it), plus where it samples
            // the normal and the final blur's 3σ.
            let k = r.snowball_iterations as f64;
            let speed = p.speed_m as f64;
            let path =
                if p.friction < 1.0 { k * speed / (1.0 - p.friction as f64) } else { 0.5 * k * (k + 1.0) * speed };
            (path + p.offset_radius_m as f64 + 3.0 * p.blur_sigma_m as f64) / cell.max(1e-6) as f64
        }
        _ => 0.0,
    }
}

/// The margin, in preview cells, that keeps the window's interior what the whole build gives:
/// 2 cells for the Catmull–Rom resampling of the base and the sculpts, 4 for an upsampled erosion
/// layer (its blur of 0.4 preview cells and the resampling), and for a refined one, at every level
/// of its ladder, its pass's reach ([`pass_reach`]) plus the blurs that bring the change up and
/// keep the pass's detail (`3σ`) and the resampling, in that level's cells, brought to preview
/// cells and summed over the levels (a change made near the edge at one level spreads again at
/// the next). Layers add up.
pub fn default_margin(stack: &LayerStack, req: &BuildRequest, (nw, nh): (usize, usize)) -> usize {
    let (w, h) = (stack.width(), stack.height());
    let mut cells = 2.0f64;
    for l in stack.layers().iter().filter(|l| l.visible) {
        let Some(e) = l.erosion() else { continue };
        match req.erosion {
            ErosionBuild::Upsample | ErosionBuild::Rerun => cells += 4.0,
            ErosionBuild::Refine => {
                let r = &req.refine;
                let blur = (3.0 * r.coarse_sigma_cells as f64).ceil() + 5.0;
                for (lw, _) in levels(w, h, nw, nh) {
                    let scale = (lw - 1) as f64 / (w - 1) as f64;
                    let cell = stack.cell_size() / scale as f32;
                    let reach = if e.recipe.model.has_refine() { pass_reach(&e.recipe.model, r, cell) } else { 0.0 };
                    cells += (reach + blur) / scale;
                }
            }
        }
    }
    cells.ceil() as usize
}

/// Where the window and its area lie, in preview nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The window's first node, `[x, y]`.
    pub origin: [usize; 2],
    /// The window's cells along each axis (a square unless the map is narrower).
    pub cells: usize,
    /// The area's first node (the window and its margin, clipped to the map).
    pub area_origin: [usize; 2],
    /// The area's nodes, `(w, h)`.
    pub area: (usize, usize),
    /// The margin asked for, preview cells.
    pub margin: usize,
}

/// Greatest common divisor.
fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Places a window of `spec` on a `w × h` preview of `cell` metres built at `nw` nodes across,
/// with `margin` preview cells around it (see the module doc): the window is snapped to multiples
/// of the fewest preview cells that hold a whole number of build cells, and moved inside the map
/// where it would leave it. Errors name what is wrong with the centre or the side.
pub fn place(
    (w, h): (usize, usize),
    cell: f32,
    nw: usize,
    spec: &LoupeSpec,
    margin: usize,
) -> Result<Placement, LoupeError> {
    let (ex, ey) = ((w.max(1) - 1) as f32 * cell, (h.max(1) - 1) as f32 * cell);
    let [cx, cy] = spec.centre_m;
    if !(cx.is_finite() && cy.is_finite() && (0.0..=ex).contains(&cx) && (0.0..=ey).contains(&cy)) {
        return Err(LoupeError::Centre { x: cx, y: cy, width: ex, height: ey });
    }
    let side_err = || LoupeError::Side { side: spec.side_m, max: ex.min(ey) };
    if !(spec.side_m.is_finite() && spec.side_m > 0.0) || w < 2 || h < 2 {
        return Err(side_err());
    }
    // Preview cells per whole number of build cells.
    let q = (w - 1) / gcd(w - 1, nw.max(2) - 1);
    let snap = |v: f64| ((v / q as f64).round() as usize) * q;
    let most = (w - 1).min(h - 1) / q * q;
    let cells = snap(spec.side_m as f64 / cell as f64).max(q).max(2usize.div_ceil(q) * q);
    if cells > most {
        return Err(side_err());
    }
    let at = |c: f32, n: usize| -> usize {
        let first = (c as f64 / cell as f64 - cells as f64 / 2.0).max(0.0);
        snap(first).min((n - 1 - cells) / q * q)
    };
    let origin = [at(cx, w), at(cy, h)];
    let m = margin.div_ceil(q) * q;
    let a0 = [origin[0].saturating_sub(m), origin[1].saturating_sub(m)];
    let a1 = [(origin[0] + cells + m).min(w - 1), (origin[1] + cells + m).min(h - 1)];
    // The far ends are multiples of q: the map's last node is, and so is a window's end.
    Ok(Placement { origin, cells, area_origin: a0, area: (a1[0] - a0[0] + 1, a1[1] - a0[1] + 1), margin: m })
}

/// [`loupe_with`] with the default margin, no cache and no progress: the window of `side_m`
/// metres around `centre_m` (metres from the map's first node) of `stack`, at the preview's and at
/// the resolution `req` builds, as `req` builds it.
pub fn loupe(
    stack: &LayerStack,
    req: &BuildRequest,
    centre_m: [f32; 2],
    side_m: f32,
    cancel: &AtomicBool,
) -> Result<Loupe, BuildError> {
    loupe_with(stack, req, &LoupeSpec::new(centre_m, side_m), &BaseCache::default(), cancel, &|_| {})
}

/// A build's loupe (module doc): the window `spec` of `stack` at the preview's resolution and as
/// `req` builds it (its size, erosion mode and refine settings; its target is not written), with
/// a generator base kept in `cache` for the next loupe. `progress(f)` hears how far it is,
/// `f ∈ [0, 1]`; `cancel` stops it with [`BuildError::Cancelled`]. Never panics on a bad centre or
/// side: [`LoupeError`] says what is wrong.
pub fn loupe_with(
    stack: &LayerStack,
    req: &BuildRequest,
    spec: &LoupeSpec,
    cache: &BaseCache,
    cancel: &AtomicBool,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Loupe, BuildError> {
    let t = Instant::now();
    let cut_err = |e: crate::core::heightmap::HeightmapError| BuildError::Base(format!("the loupe's window: {e}"));
    let stop = || if cancel.load(Ordering::Relaxed) { Err(BuildError::Cancelled) } else { Ok(()) };
    let (w, h) = (stack.width(), stack.height());
    if req.erosion == ErosionBuild::Rerun {
        return Err(LoupeError::Rerun.into());
    }
    let Some(size) = req.size.filter(|&n| n > w) else {
        return Err(LoupeError::NotFiner { preview: w, build: req.size.unwrap_or(w) }.into());
    };
    // The whole build's plan checks the size and gives its height, cell and ratio.
    let whole =
        plan(stack, &BuildRequest { size: Some(size), target: Target::Memory, keep_input: false, ..req.clone() })?;
    let (nw, nh) = (whole.width, whole.height);
    if let Some(l) = stack.layers().iter().find(|l| l.visible && l.erosion().is_some_and(|e| e.stale)) {
        return Err(BuildError::StaleLayer(l.name.clone()));
    }
    let margin = spec.margin_cells.unwrap_or_else(|| default_margin(stack, req, (nw, nh)));
    let p = place((w, h), stack.cell_size(), nw, spec, margin)?;
    // Build nodes per preview cell (a whole number of them over the area, see `place`).
    let ratio = whole.ratio;
    let to_build = |v: usize| ((v as f64 * ratio).round()) as usize;
    let (aw, ah) = (to_build(p.area.0 - 1) + 1, to_build(p.area.1 - 1) + 1);
    let a0 = [to_build(p.area_origin[0]), to_build(p.area_origin[1])];
    let regenerated = matches!(&stack.base.source, BaseSource::Generator(g) if g.base.is_resolution_independent());
    // Memory: a regenerated base at the build's size (and its generator's copy) and the area's
    // build, its fold, its levels and what a refine pass holds.
    let area_nodes = (aw * ah) as u64;
    let mut need = area_nodes * 4 * 12;
    if regenerated {
        need += (nw * nh) as u64 * 4 * 2;
    }
    let check = BuildPlan { bytes: need, ..whole.clone() };
    check_memory(&check, available_memory())?;
    let area = stack
        .crop(p.area_origin[0], p.area_origin[1], p.area.0, p.area.1)
        .ok_or_else(|| BuildError::Base("the loupe's area does not fit on the map".into()))?;
    stop()?;

    // The base at the build's size over the area.
    progress(0.0);
    let (base, how) = if let BaseSource::Generator(g) = &stack.base.source
        && regenerated
    {
        let key = (g.clone(), nw, nh);
        let (full, cached) = match cache.get(&key) {
            Some(m) => (m, true),
            None => {
                let m = Arc::new(build_base(stack, nw, nh, whole.cell_size, cancel)?);
                cache.put(key, m.clone());
                (m, false)
            }
        };
        (full.crop(a0[0], a0[1], aw, ah).map_err(cut_err)?, LoupeBase::Regenerated { cached })
    } else {
        (build_base(&area, aw, ah, whole.cell_size, cancel)?, LoupeBase::Resampled)
    };
    stop()?;

    // The area's layers, through the build's path.
    let mut steps = vec![PlanStep::Base(
        whole
            .steps
            .first()
            .and_then(|s| match s {
                PlanStep::Base(b) => Some(b.clone()),
                _ => None,
            })
            .ok_or_else(|| BuildError::Base("the plan has no base step".into()))?,
    )];
    for (index, l) in area.layers().iter().enumerate().filter(|(_, l)| l.visible) {
        let how = layer_how(l, req.erosion, p.area, aw, ah);
        steps.push(PlanStep::Layer { index, name: l.name.clone(), how });
    }
    let stages = steps.len().max(1) as f64;
    let area_plan = BuildPlan { width: aw, height: ah, bytes: need, steps, layout: None, ..whole.clone() };
    let report = |k: usize, within: f64, _: Phase| progress((k as f64 + within.clamp(0.0, 1.0)) / stages);
    let extent = Extent::Window { whole: stack, origin: p.area_origin };
    let built = build_layers(&area, extent, &area_plan, base, false, &req.refine, cancel, &report)?;
    stop()?;

    // The window, cut from the area.
    let k = p.cells;
    let wo = [p.origin[0] - p.area_origin[0], p.origin[1] - p.area_origin[1]];
    let kb = to_build(k);
    let bo = [to_build(wo[0]), to_build(wo[1])];
    let build = built.map.crop(bo[0], bo[1], kb + 1, kb + 1).map_err(cut_err)?;
    let preview = area.compose().crop(wo[0], wo[1], k + 1, k + 1).map_err(cut_err)?;
    // Where the detail passes ran, when on the GPU or fallen back from it.
    let mut notes: Vec<String> =
        built.passes_ran_on.iter().filter(|l| !l.ends_with(": CPU")).map(|l| format!("detail passes: {l}")).collect();
    for l in stack.layers().iter().filter(|l| l.visible) {
        let Some(e) = l.erosion() else { continue };
        match req.erosion {
            ErosionBuild::Refine if matches!(e.recipe.model, ModelParams::Droplet(_) | ModelParams::Snowball(_)) => {
                notes.push(format!(
                    "{}: the {} pass drops particles at the build's density over the window, not the same ones as \
                     over the whole map: the rills are alike, not the same",
                    l.name,
                    if matches!(e.recipe.model, ModelParams::Droplet(_)) { "droplets'" } else { "snowballs'" }
                ))
            }
            ErosionBuild::Upsample => notes.push(format!(
                "{}: the fine base detail under the erosion is weighed by its RMS over the window, not the whole map",
                l.name
            )),
            _ => {}
        }
    }
    progress(1.0);
    Ok(Loupe {
        preview,
        build,
        preview_origin: p.origin,
        build_origin: [to_build(p.origin[0]), to_build(p.origin[1])],
        build_size: (nw, nh),
        ratio,
        margin_cells: p.margin,
        area_nodes: (aw, ah),
        base: how,
        erosion: req.erosion,
        notes,
        seconds: t.elapsed().as_secs_f64(),
    })
}
