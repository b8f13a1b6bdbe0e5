//! The layer stack rebuilt at the build's size, bottom to top, the way the plan says (the module
//! doc of [`super`] has the rules).

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::error::BuildError;
use super::plan::{BuildPlan, LayerHow, PlanStep};
use super::progress::Phase;
use super::refine::Extent;
use super::rerun;
use super::upsample::{Grid, add_resampled, resampled, upsample_erosion};
use crate::core::Heightmap;
use crate::core::erosion::refine::RefineParams;
use crate::core::generate::{GenError, GenerateParams, generate_fitted};
use crate::editor::layers::{BaseSource, LayerKind, LayerStack};

/// A finished build of the stack.
#[derive(Clone, Debug)]
pub struct Built {
    /// The terrain at the build's size.
    pub map: Heightmap,
    /// The fold below the first erosion layer at the build's size, when asked for.
    pub input: Option<Heightmap>,
    /// The visible erosion layers' summed change at the build's size (metres, negative where
    /// they took material away, positive where they laid it down), row-major like `map`, when
    /// the plan keeps it ([`PlanStep::KeepChange`]): each layer adds `after − before` of its own
    /// step, so sculpt layers above or below do not enter it.
    pub erosion_change: Option<Vec<f32>>,
    /// Where each refined layer's detail passes ran, one line per layer (`"Stream power: GPU:
    /// <adapter>"`, or `CPU` with the reason where the GPU was asked for and could not).
    pub passes_ran_on: Vec<String>,
}

/// Reports a phase and how far it is, `within ∈ [0, 1]` of the stack's stage `k`.
pub(super) type StageReport<'a> = &'a (dyn Fn(usize, f64, Phase) + Sync);

/// Builds `stack` along `plan` (see [`super`]); `report(k, within, phase)` hears of each of the
/// plan's stack stages (`k` from 0, the base, to one per visible layer) and of the rows as they
/// go. A stale visible erosion layer is refused ([`BuildError::StaleLayer`]): [`super::PreparedBuild::run`]
/// re-runs those first.
pub(super) fn build_stack(
    stack: &LayerStack,
    plan: &BuildPlan,
    keep_input: bool,
    refine: &RefineParams,
    cancel: &AtomicBool,
    report: StageReport,
) -> Result<Built, BuildError> {
    let stop = || if cancel.load(Ordering::Relaxed) { Err(BuildError::Cancelled) } else { Ok(()) };
    if plan.is_fold() {
        report(0, 0.0, Phase::Base(super::plan::BaseHow::Resampled { what: stack.base.source.describe() }));
        let map = stack.compose();
        stop()?;
        let input = keep_input.then(|| {
            let first = stack.layers().iter().position(|l| l.visible && l.erosion().is_some());
            stack.input_of(first.unwrap_or(stack.layers().len()))
        });
        return Ok(Built { map, input, erosion_change: None, passes_ran_on: Vec::new() });
    }
    if let Some(l) = stack.layers().iter().find(|l| l.visible && l.erosion().is_some_and(|e| e.stale)) {
        return Err(BuildError::StaleLayer(l.name.clone()));
    }
    let Some(PlanStep::Base(base_how)) = plan.steps.first() else {
        return Err(BuildError::Base("the plan has no base step".into()));
    };
    report(0, 0.0, Phase::Base(base_how.clone()));
    let map = build_base(stack, plan.width, plan.height, plan.cell_size, cancel)?;
    stop()?;
    build_layers(stack, Extent::Whole, plan, map, keep_input, refine, cancel, report)
}

/// The base of `stack` at `nw × nh` nodes of `cell` metres (see [`super`]): a generator that is a
/// function of world position run again, anything else resampled.
pub(super) fn build_base(
    stack: &LayerStack,
    nw: usize,
    nh: usize,
    cell: f32,
    cancel: &AtomicBool,
) -> Result<Heightmap, BuildError> {
    let (w, h) = (stack.width(), stack.height());
    Ok(match &stack.base.source {
        BaseSource::Generator(p) if p.base.is_resolution_independent() => {
            let failed = |e| match e {
                GenError::Cancelled => BuildError::Cancelled,
                e => BuildError::Base(e.to_string()),
            };
            // The project's own grid decides the normalisation and the sea's shift (`GridFit`), so
            // the build's base agrees with the project's at the nodes they share.
            let fit = if (nw, nh) == (p.width, p.height) && cell == p.cell_size {
                None
            } else {
                Some(generate_fitted(p, None, cancel).map_err(failed)?.1)
            };
            let gp = GenerateParams { width: nw, height: nh, cell_size: cell, ..p.clone() };
            generate_fitted(&gp, fit.as_ref(), cancel).map_err(failed)?.0
        }
        _ => {
            let mut m = Heightmap { width: nw, height: nh, cell_size: cell, data: vec![0.0; nw * nh] };
            let base = stack.base.heights.to_dense();
            add_resampled(&mut m.data, &[Grid::new(&base, w, h, nw, nh, 1.0)], None, cancel)?;
            m
        }
    })
}

/// The layers of `stack` built on `map` (its base at the plan's size) along the plan's layer
/// steps, bottom to top; `extent` says whether `stack` is the project or a window of it (a build's
/// loupe). `report(k, within, phase)` hears of each layer (`k` from 1).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_layers(
    stack: &LayerStack,
    extent: Extent,
    plan: &BuildPlan,
    mut map: Heightmap,
    keep_input: bool,
    refine: &RefineParams,
    cancel: &AtomicBool,
    report: StageReport,
) -> Result<Built, BuildError> {
    let stop = || if cancel.load(Ordering::Relaxed) { Err(BuildError::Cancelled) } else { Ok(()) };
    let (w, h) = (stack.width(), stack.height());
    let (nw, nh) = (plan.width, plan.height);
    let mut input = None;
    let mut change: Option<Vec<f32>> = plan.keeps_change().then(|| vec![0.0f32; nw * nh]);
    let mut passes_ran_on = Vec::new();

    let layer_steps = plan.steps.iter().filter_map(|s| match s {
        PlanStep::Layer { index, name, how } => Some((*index, name, how)),
        _ => None,
    });
    for (k, (index, name, how)) in layer_steps.enumerate() {
        let stage = k + 1;
        let Some(l) = stack.layers().get(index) else {
            return Err(BuildError::Layer { layer: name.clone(), msg: "the layer is gone from the stack".into() });
        };
        let phase = || Phase::Layer { name: name.clone(), how: how.clone() };
        report(stage, 0.0, phase());
        match &l.kind {
            LayerKind::Sculpt(d) => {
                let dense = d.to_dense();
                add_resampled(&mut map.data, &[Grid::new(&dense, w, h, nw, nh, 1.0)], None, cancel)?;
            }
            LayerKind::Erosion(e) => {
                if keep_input && input.is_none() {
                    input = Some(map.clone());
                }
                // The layer's own change: `change += after − before`, without a copy of the map.
                if let Some(c) = change.as_mut() {
                    c.par_iter_mut().zip(&map.data).for_each(|(c, m)| *c -= m);
                }
                let painted = e.mask.stored() > 0 || e.mask.fill() != 1.0;
                let blend = painted && !e.steers_by_mask();
                let mask = blend.then(|| resampled(&e.mask, w, h, nw, nh, Some((0.0, 1.0))));
                match how {
                    // A model without a detail pass is brought up as Upsample brings it.
                    LayerHow::Upsample | LayerHow::Sculpt | LayerHow::Refine { pass: false, .. } => {
                        let delta = e.delta.to_dense();
                        upsample_erosion(&mut map, &delta, e.strength, mask.as_deref(), (w, h), plan.ratio, cancel)?;
                    }
                    LayerHow::Refine { .. } => {
                        let used = super::refine::refine_layer(
                            &mut map,
                            stack,
                            extent,
                            index,
                            e,
                            mask.as_deref(),
                            refine,
                            cancel,
                            &|f| report(stage, f, phase()),
                        )?;
                        if let Some(used) = used {
                            passes_ran_on.push(format!("{}: {used}", l.name));
                        }
                    }
                    LayerHow::Rerun { .. } => {
                        let steer_mask = e.steers_by_mask().then(|| resampled(&e.mask, w, h, nw, nh, Some((0.0, 1.0))));
                        let recipe = rerun::scaled_recipe(&e.recipe, plan.ratio, (w, h), (nw, nh));
                        let result =
                            rerun::rerun(&recipe, &map, steer_mask.as_deref(), cancel, &|f| report(stage, f, phase()))
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
    if !map.all_finite() {
        return Err(BuildError::Layer {
            layer: "the stack".into(),
            msg: "the build holds a height that is not finite".into(),
        });
    }
    Ok(Built { map, input, erosion_change: change, passes_ran_on })
}
