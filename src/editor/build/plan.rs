//! What a build will do before it does it: the build's size and cell, one [`PlanStep`] per part
//! of the stack (and of the output), and the memory the whole of it needs at its peak, so a build
//! that cannot fit is refused before anything is allocated ([`check_memory`]).
//!
//! A plan is made once per build, by [`super::prepare`], and the build follows it: the stack's
//! parts are built in the plan's order, each layer the way its [`LayerHow`] says.

use std::fmt;

use serde::Serialize;

use super::error::BuildError;
use super::request::{BuildRequest, Target};
use super::sizes::{build_height, check_side};
use super::{ErosionBuild, tileset};
use crate::core::io::tiles::{self, TileLayout};
use crate::core::resample::cell_for;
use crate::editor::layers::{BaseSource, Layer, LayerKind, LayerStack};

/// How the base is brought to the build's size.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseHow {
    /// A generator that is a function of world position, run again at the build's size.
    Regenerated {
        /// The generator's name (`fbm`, `ridged`, `voronoi island` …).
        kind: &'static str,
        /// Nodes along x.
        width: usize,
        /// Nodes along y.
        height: usize,
    },
    /// A grid generator (another size is another map), resampled.
    GridResampled {
        /// The generator's name.
        kind: &'static str,
    },
    /// Heights without a generator (a file, a flat map), resampled.
    Resampled {
        /// What the base is ([`BaseSource::describe`]).
        what: String,
    },
}

impl fmt::Display for BaseHow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseHow::Regenerated { kind, width, height } => {
                write!(f, "base: generator ({kind}) run again at {width}×{height}")
            }
            BaseHow::GridResampled { kind } => {
                write!(f, "base: {kind} generator resampled (a grid algorithm: another size is another map)")
            }
            BaseHow::Resampled { what } => write!(f, "base: {what} resampled"),
        }
    }
}

/// How one layer is brought to the build's size.
#[derive(Clone, Debug, PartialEq)]
pub enum LayerHow {
    /// A sculpt layer's delta, resampled.
    Sculpt,
    /// An erosion layer's preview result, resampled coarse to fine ([`ErosionBuild::Upsample`]).
    Upsample,
    /// An erosion layer refined on the way up ([`ErosionBuild::Refine`]): brought up ×2 per
    /// level with the model's detail pass at each.
    Refine {
        /// The model's menu name.
        model: &'static str,
        /// The ladder's sides above the preview, smallest first.
        levels: Vec<usize>,
        /// Whether the model has a detail pass (else it is brought up as Upsample brings it).
        pass: bool,
    },
    /// An erosion layer's recipe run again at the build's size ([`ErosionBuild::Rerun`]).
    Rerun {
        /// The model's menu name.
        model: &'static str,
        /// Nodes along x.
        width: usize,
        /// Nodes along y.
        height: usize,
    },
}

impl fmt::Display for LayerHow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerHow::Sculpt => write!(f, "sculpt resampled"),
            LayerHow::Upsample => write!(
                f,
                "the preview's result resampled (coarse to fine: the finer grid's detail kept where the run barely \
                 changed the land)"
            ),
            LayerHow::Refine { model, levels, pass } => {
                let sides: Vec<String> = levels.iter().map(|n| format!("{n}²")).collect();
                if *pass {
                    write!(f, "{model} refined on the way up ({}: a detail pass at each level)", sides.join(", then "))
                } else {
                    write!(f, "{model} brought up {} (no detail pass: resampled, as Upsample)", sides.join(", then "))
                }
            }
            LayerHow::Rerun { model, width, height } => write!(f, "{model} re-run at {width}×{height}"),
        }
    }
}

/// One part of a build, in the order the build does them.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanStep {
    /// The project's own fold, at its own size (a build without a size).
    Fold,
    /// The base.
    Base(BaseHow),
    /// A visible layer.
    Layer {
        /// Its index in the stack.
        index: usize,
        /// Its name.
        name: String,
        /// How it is built.
        how: LayerHow,
    },
    /// The erosion layers' summed change is kept (for a tile set's erosion and deposition maps).
    KeepChange,
    /// A tile set's tiles and maps, written file by file in parallel.
    Tiles {
        /// The tiling.
        layout: TileLayout,
        /// Bytes of the buffers of the files written at once (one a thread).
        buffer_bytes: u64,
    },
    /// A tile set's flow map: the drainage of the whole build.
    Flow {
        /// Bytes while computing it.
        bytes: u64,
    },
}

impl fmt::Display for PlanStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanStep::Fold => write!(f, "the project's layers folded at its own size"),
            PlanStep::Base(how) => write!(f, "{how}"),
            PlanStep::Layer { name, how, .. } => write!(f, "{name}: {how}"),
            PlanStep::KeepChange => write!(f, "the erosion layers' summed change kept (one more f32 grid)"),
            PlanStep::Tiles { layout: l, buffer_bytes } => write!(
                f,
                "tiles: {}×{} of {} nodes, written file by file in parallel ({:.1} MiB of file buffers)",
                l.tiles_x,
                l.tiles_y,
                l.tile_size,
                *buffer_bytes as f64 / 1048576.0
            ),
            PlanStep::Flow { bytes } => write!(
                f,
                "flow map: D8 drainage of the whole map, {:.0} MiB while computing, one f32 grid kept",
                *bytes as f64 / 1048576.0
            ),
        }
    }
}

/// What [`plan`] found: the build's size and cell, its memory estimate, and its steps.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    /// The parts of the build, in order (in a report: one line each).
    #[serde(serialize_with = "as_lines")]
    pub steps: Vec<PlanStep>,
    /// The tiling, for a tile set.
    #[serde(skip)]
    pub layout: Option<TileLayout>,
}

fn as_lines<S: serde::Serializer>(steps: &[PlanStep], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(steps.iter().map(ToString::to_string))
}

impl BuildPlan {
    /// Whether the build is at the project's own size without rebuilding the stack.
    pub fn is_fold(&self) -> bool {
        self.steps.first() == Some(&PlanStep::Fold)
    }

    /// Whether the erosion layers' summed change is kept.
    pub fn keeps_change(&self) -> bool {
        self.steps.contains(&PlanStep::KeepChange)
    }

    /// Whether a flow map is computed.
    pub fn has_flow(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, PlanStep::Flow { .. }))
    }
}

/// How `layer` is built with `erosion` at `width × height` in a project `w × h` (the one rule the
/// plan and the build share).
pub fn layer_how(
    layer: &Layer,
    erosion: ErosionBuild,
    (w, h): (usize, usize),
    width: usize,
    height: usize,
) -> LayerHow {
    match (&layer.kind, erosion) {
        (LayerKind::Sculpt(_), _) => LayerHow::Sculpt,
        (LayerKind::Erosion(e), ErosionBuild::Refine) => LayerHow::Refine {
            model: e.recipe.model.entry().label,
            levels: super::refine::levels(w, h, width, height).into_iter().map(|l| l.0).collect(),
            pass: e.recipe.model.has_refine(),
        },
        (LayerKind::Erosion(_), ErosionBuild::Upsample) => LayerHow::Upsample,
        (LayerKind::Erosion(e), ErosionBuild::Rerun) => {
            LayerHow::Rerun { model: e.recipe.model.entry().label, width, height }
        }
    }
}

/// The width `req` builds at in a project `w` nodes across: its size, else the project's own.
fn width_of(req: &BuildRequest, w: usize) -> usize {
    req.size.unwrap_or(w)
}

/// The tiling of a tile-set request in `stack`, or why there is none.
pub(super) fn tile_layout(stack: &LayerStack, req: &BuildRequest) -> Result<Option<TileLayout>, BuildError> {
    let Target::Tiles(t) = &req.target else { return Ok(None) };
    let size = req.size.ok_or(BuildError::Size(super::SizeError::Missing))?;
    tileset::layout_for(t.engine, stack.width(), stack.height(), size, t.tiles).map(Some).map_err(BuildError::Tiles)
}

/// Checks the size of `req` and estimates the memory of building `stack` with it (see the module
/// doc); reads nothing from disk.
pub fn plan(stack: &LayerStack, req: &BuildRequest) -> Result<BuildPlan, BuildError> {
    let (w, h) = (stack.width(), stack.height());
    let layout = tile_layout(stack, req)?;
    if req.size.is_none() {
        let nodes = (w * h) as u64;
        return Ok(BuildPlan {
            width: w,
            height: h,
            cell_size: stack.cell_size(),
            ratio: 1.0,
            // The fold and the encoded file's buffer.
            bytes: nodes * 4 * 2,
            steps: vec![PlanStep::Fold],
            layout,
        });
    }
    let width = width_of(req, w);
    check_side(width)?;
    let height = build_height(w, h, width)?;
    check_side(height)?;
    let cell = cell_for(w, stack.cell_size(), width);
    let nodes = (width * height) as u64;
    let ratio = (width - 1) as f64 / (w.max(2) - 1) as f64;
    // The build map, its generator's scratch (the copy the sea level's coverage selects in) and
    // the encoded file's buffer when it is written.
    let mut bytes = nodes * 4 * 3;
    // Each resampled grid holds its rows resampled along x, in f64.
    let grid_bytes = (h * width * 8) as u64;
    let mut steps = vec![PlanStep::Base(match &stack.base.source {
        BaseSource::Generator(p) if p.base.is_resolution_independent() => {
            BaseHow::Regenerated { kind: p.base.kind_name(), width, height }
        }
        BaseSource::Generator(p) => BaseHow::GridResampled { kind: p.base.kind_name() },
        other => BaseHow::Resampled { what: other.describe() },
    })];
    bytes += grid_bytes;
    let mut layer_extra = 0u64;
    for (index, l) in stack.layers().iter().enumerate().filter(|(_, l)| l.visible) {
        let how = layer_how(l, req.erosion, (w, h), width, height);
        if let LayerKind::Erosion(e) = &l.kind {
            bytes += 2 * grid_bytes;
            layer_extra = layer_extra.max(match how {
                // The layer's change, the smoothed map and the blur's scratch.
                LayerHow::Upsample => nodes * 4 * 3,
                LayerHow::Rerun { .. } => nodes * (4 + e.recipe.model.build_bytes_per_node()),
                LayerHow::Refine { .. } => nodes * super::refine::bytes_per_node(&e.recipe.model, &req.refine),
                LayerHow::Sculpt => 0,
            });
        }
        steps.push(PlanStep::Layer { index, name: l.name.clone(), how });
    }
    bytes += layer_extra;
    if req.keep_input {
        bytes += nodes * 4;
    }
    if let (Some(l), Target::Tiles(t)) = (layout, &req.target) {
        if t.needs_change() {
            bytes += nodes * 4;
            steps.push(PlanStep::KeepChange);
        }
        let cost = tiles::plan_bytes(&l, &t.maps);
        bytes += cost.buffer_bytes;
        steps.push(PlanStep::Tiles { layout: l, buffer_bytes: cost.buffer_bytes });
        if let Some(f) = cost.flow_bytes {
            bytes += f;
            steps.push(PlanStep::Flow { bytes: f });
        }
    }
    Ok(BuildPlan { width, height, cell_size: cell, ratio, bytes, steps, layout })
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

/// Memory the system has available for a build, bytes (`MemAvailable` of `/proc/meminfo`; `None`
/// where it cannot be read).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Heightmap;

    #[test]
    fn a_plan_over_the_available_memory_is_refused_with_both_figures() {
        let map = Heightmap::new(129, 129, 8.0).unwrap();
        let stack = LayerStack::new(&map, BaseSource::Heights);
        let p = plan(&stack, &BuildRequest::in_memory(16385, ErosionBuild::Upsample)).unwrap();
        assert_eq!((p.width, p.height, p.cell_size), (16385, 16385, 0.0625));
        assert!(p.bytes > 2 << 30, "{}", p.bytes);
        let e = check_memory(&p, Some(1 << 30)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("16385×16385") && msg.contains("GiB"), "{msg}");
        assert!(check_memory(&p, Some(64 << 30)).is_ok());
        assert!(check_memory(&p, None).is_ok());
        assert!(matches!(
            plan(&stack, &BuildRequest::in_memory(1000, ErosionBuild::Upsample)),
            Err(BuildError::Size(_))
        ));
    }

    #[test]
    fn the_estimate_counts_what_the_detail_passes_hold_with_these_settings() {
        use crate::core::erosion::ModelParams;
        let model = ModelParams::StreamPower(Default::default());
        let stack = super::super::reference::reference_stack(65, &[model]).unwrap();
        let req = BuildRequest::in_memory(257, ErosionBuild::Refine);
        let plain = plan(&stack, &req).unwrap().bytes;
        let mut with = req.clone();
        with.refine.deposition = 0.5;
        // Deposition holds the sediment's two loads, 4 bytes each, at every node of the top level.
        assert_eq!(plan(&stack, &with).unwrap().bytes, plain + 8 * 257 * 257);
    }
}
