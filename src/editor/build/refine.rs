//! Erosion layers refined on the way up ([`super::ErosionBuild::Refine`], issue #34): the ladder
//! from the preview's size to the build's, ×2 per level, and at each level the model's detail pass
//! ([`crate::core::erosion::refine`]).
//!
//! For an erosion layer with input `I` (the fold below it) and preview result `R₀ = I₀ + Δ`:
//!
//! ```text
//! level 0:  R₀, the model's state on it (its drainage)
//! level l:  I_l = the build's fold below the layer, sampled at level l's nodes
//!           R_l = I_l + bring_up(R_{l−1} − I_{l−1})      (the change interpolated, and for
//!                                                          most models smoothed; the finer
//!                                                          detail of I_l kept whole)
//!           the model's state brought up (drainage resampled without overshoot)
//!           R_l ← detail_pass(R_l)                        (the model's own, in world units)
//! the build: map ← I_N + strength · mask · (R_N − I_N)
//! ```
//!
//! Level sizes are `2^l (n − 1) + 1` up to the build's `N`; a build whose ratio is not a power of
//! two takes its last step at less than ×2. A model without a detail pass is brought up as
//! Upsample brings it. Every level is a whole map in memory, so the build's peak is the top level's
//! (the plan counts it).

use std::sync::atomic::AtomicBool;

use rayon::prelude::*;

use super::error::BuildError;
use super::upsample::upsample_erosion;
use crate::core::Heightmap;
use crate::core::erosion::refine::{BringUp, Level, RefineParams, detail_only};
use crate::core::erosion::{JobInputs, ModelParams, hardness::hardness_map_at};
use crate::core::filter::gaussian_blur;
use crate::core::resample::Resampler;
use crate::editor::layers::{ErosionLayer, LayerKind, LayerStack};

/// Bytes per node of the top level besides the build's map, at the peak of `model`'s pass: the
/// layer's state, its copy before the pass and its drainage (4 · 3), and what the pass itself
/// holds (its registry entry's `refine`). A model without a pass holds what Upsample holds (the
/// change, the smoothed map and the blur's scratch).
pub fn bytes_per_node(model: &ModelParams, settings: &RefineParams) -> u64 {
    model.refine_bytes_per_node(settings).map_or(12, |b| 12 + b)
}

/// The sides of the ladder's levels above the preview, `(width, height)`, smallest first, ending
/// at the build's `(nw, nh)`; empty when the build is not larger than the preview.
pub fn levels(w: usize, h: usize, nw: usize, nh: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if nw <= w || w < 2 || h < 2 {
        return out;
    }
    let (mut lw, mut lh) = (w, h);
    while 2 * (lw - 1) + 1 < nw {
        lw = 2 * (lw - 1) + 1;
        lh = 2 * (lh - 1) + 1;
        out.push((lw, lh));
    }
    out.push((nw, nh));
    out
}

/// `src` (`w × h`) resampled to `nw × nh` with the Catmull–Rom kernel (exact on coincident nodes;
/// `bounded`: no overshoot).
fn resample(src: &[f32], (w, h): (usize, usize), (nw, nh): (usize, usize), bounded: bool) -> Vec<f32> {
    let r = Resampler::with_bounds(src, w, h, nw, nh, bounded);
    let mut out = vec![0.0f32; nw * nh];
    out.par_chunks_mut(nw).enumerate().for_each(|(y, row)| r.row(y, row, None));
    out
}

/// The state at a level: the fold below at this level (`input`, its own finer detail kept) plus the
/// change of the level below (`from` nodes) brought up as the model brings it (see
/// [`BringUp`]).
fn bring_up(
    input: &Heightmap,
    change: &[f32],
    from: (usize, usize),
    ratio: f64,
    how: BringUp,
    cancel: &AtomicBool,
) -> Result<Heightmap, BuildError> {
    let (w, h) = (input.width, input.height);
    let mut d = resample(change, from, (w, h), true);
    if how == BringUp::Smooth && ratio > 1.0 {
        gaussian_blur(&mut d, w, h, (0.4 * ratio) as f32);
    }
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(BuildError::Cancelled);
    }
    d.par_iter_mut().zip(&input.data).for_each(|(d, &i)| *d += i);
    Ok(Heightmap { width: w, height: h, cell_size: input.cell_size, data: d })
}

/// Where a ladder climbs: over the whole project (a build), or over a window of it (a build's
/// loupe, [`super::loupe`]). The ladder is the same; a window only takes from the whole project
/// what a stencil cannot see from inside it.
#[derive(Clone, Copy)]
pub(super) enum Extent<'a> {
    /// The stack given is the project's own.
    Whole,
    /// The stack given is `whole` cut to a window (its margin included) whose first node is node
    /// `origin` (`[x, y]`) of `whole`. The state the ladder starts from on the preview's result
    /// (the drainage, routed over the whole map), the range of the fold below (stream power's
    /// terrain-following uplift) and the place of the hardness noise come from `whole`.
    Window {
        /// The project.
        whole: &'a LayerStack,
        /// The window's first node in `whole`.
        origin: [usize; 2],
    },
}

/// `src` (`sw` nodes a row) cut to the `w × h` nodes from `(x0, y0)`.
pub(super) fn crop(src: &[f32], sw: usize, [x0, y0]: [usize; 2], (w, h): (usize, usize)) -> Vec<f32> {
    let mut out = Vec::with_capacity(w * h);
    for y in y0..y0 + h {
        out.extend_from_slice(&src[y * sw + x0..y * sw + x0 + w]);
    }
    out
}

/// Refines erosion layer `e` (index `index` of `stack`) on `map`, the fold below it at the build's
/// size: `map` becomes that fold plus the layer's refined change (see the module doc), blended
/// with the layer's strength and `mask` (resampled to the build). `extent` says whether `stack` is
/// the project or a window of it. `report(f)` hears how far the ladder is. Returns where the
/// passes ran (the last level's backend; `None` when no pass ran).
#[allow(clippy::too_many_arguments)]
pub(super) fn refine_layer(
    map: &mut Heightmap,
    stack: &LayerStack,
    extent: Extent,
    index: usize,
    e: &ErosionLayer,
    mask: Option<&[f32]>,
    params: &RefineParams,
    cancel: &AtomicBool,
    report: &(dyn Fn(f64) + Sync),
) -> Result<Option<crate::backend::BackendUsed>, BuildError> {
    let layer_err = |msg: String| BuildError::Layer { layer: stack.layers()[index].name.clone(), msg };
    let (w, h) = (stack.width(), stack.height());
    let (nw, nh) = (map.width, map.height);
    let input0 = stack.input_of(index);
    let delta = e.delta.to_dense();
    let mut prev_input = input0.data.clone();
    let mut prev: Vec<f32> = prev_input.iter().zip(&delta).map(|(a, d)| a + d).collect();
    let mut prev_size = (w, h);
    let recipe = &e.recipe;
    let origin = match extent {
        Extent::Whole => [0.0, 0.0],
        Extent::Window { origin, .. } => [origin[0] as f64, origin[1] as f64],
    };
    // The model's inputs on `hm`, a level `scale` times finer than the preview, whose first node is
    // node `at` (preview nodes) of the map the hardness noise lies on.
    let inputs_at = |hm: &Heightmap, at: [f64; 2], scale: f64| -> Result<JobInputs, BuildError> {
        let hardness = match recipe.hardness.as_ref().filter(|p| !p.is_neutral()) {
            Some(p) => Some(
                hardness_map_at(hm, p, [at[0] * scale, at[1] * scale])
                    .map_err(|e| layer_err(format!("hardness map: {e}")))?,
            ),
            None => None,
        };
        Ok(JobInputs {
            hardness,
            boundary: recipe.boundary,
            seed: recipe.seed,
            sea_level: recipe.sea_level,
            steer: None,
        })
    };
    let model = &recipe.model;
    let opts = crate::backend::BackendOptions::from_env();
    let mut ran_on = None;
    // The range of the fold below over the whole preview: every level and every window of the
    // project scales by the one range (stream power's terrain-following uplift).
    let range_of = |d: &[f32]| d.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let mut input_range = Some(range_of(&input0.data));
    // The model's state on the preview's result, over the whole project (cut to the window).
    let mut drainage = if model.has_refine() {
        let start = |input: &Heightmap, result: Vec<f32>| -> Result<Vec<f32>, BuildError> {
            let r0 = Heightmap { data: result, ..input.clone() };
            model.refine_start(&r0, &inputs_at(input, [0.0, 0.0], 1.0)?).map_err(|e| layer_err(e.to_string()))
        };
        match extent {
            Extent::Whole => start(&input0, prev.clone())?,
            Extent::Window { whole, origin } => {
                let Some(LayerKind::Erosion(we)) = whole.layers().get(index).map(|l| &l.kind) else {
                    return Err(layer_err("the window's layer is not in the project".into()));
                };
                let whole_input = whole.input_of(index);
                let whole_delta = we.delta.to_dense();
                input_range = Some(range_of(&whole_input.data));
                let result: Vec<f32> = whole_input.data.iter().zip(&whole_delta).map(|(a, d)| a + d).collect();
                let d = start(&whole_input, result)?;
                if d.is_empty() { d } else { crop(&d, whole.width(), origin, (w, h)) }
            }
        }
    } else {
        Vec::new()
    };
    let ladder = levels(w, h, nw, nh);
    let total = ladder.iter().map(|&(a, b)| (a * b) as f64).sum::<f64>().max(1.0);
    let mut done = 0.0;
    for (k, &(lw, lh)) in ladder.iter().enumerate() {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(BuildError::Cancelled);
        }
        let top = (lw, lh) == (nw, nh);
        let cell = map.cell_size * (nw - 1) as f32 / (lw - 1) as f32;
        // The fold below at this level: the build's own at the top, sampled below it.
        let sampled = (!top).then(|| Heightmap {
            width: lw,
            height: lh,
            cell_size: cell,
            data: resample(&map.data, (nw, nh), (lw, lh), false),
        });
        let input: &Heightmap = sampled.as_ref().unwrap_or(map);
        let change: Vec<f32> = prev.iter().zip(&prev_input).map(|(r, i)| r - i).collect();
        let ratio = (lw - 1) as f64 / (prev_size.0 - 1) as f64;
        let mut state = bring_up(input, &change, prev_size, ratio, model.refine_bring_up(), cancel)?;
        drop(change);
        if model.has_refine() {
            if !drainage.is_empty() {
                drainage = resample(&drainage, prev_size, (lw, lh), true);
            }
            let inputs = inputs_at(input, origin, (lw - 1) as f64 / (w - 1) as f64)?;
            let before = state.data.clone();
            let mut lv = Level {
                map: &mut state,
                input,
                drainage: &mut drainage,
                index: k + 1,
                levels: ladder.len(),
                input_range,
            };
            // On the layer's backend: the GPU pass where the model has one and a GPU runs it.
            let (ran, used) =
                crate::backend::refine_pass(model, params, &mut lv, &inputs, cancel, recipe.backend, opts)
                    .map_err(|e| layer_err(e.to_string()))?;
            if ran {
                ran_on = Some(used);
            }
            detail_only(before, &mut state.data, lw, lh, params.coarse_sigma_cells);
        }
        done += (lw * lh) as f64;
        report(done / total);
        prev_size = (lw, lh);
        if let Some(s) = sampled {
            prev_input = s.data;
        }
        prev = state.data;
    }
    if ladder.is_empty() {
        // Not larger than the preview: the preview's change, as Upsample adds it.
        let change: Vec<f32> = prev.iter().zip(&prev_input).map(|(r, i)| r - i).collect();
        let ratio = (nw - 1) as f64 / (w.max(2) - 1) as f64;
        let base = map.data.clone();
        upsample_erosion(map, &change, 1.0, None, (w, h), ratio, cancel)?;
        prev = std::mem::replace(&mut map.data, base);
    }
    let s = e.strength;
    map.data.par_chunks_mut(nw).zip(prev.par_chunks(nw)).enumerate().for_each(|(y, (row, res))| {
        for x in 0..nw {
            let m = mask.map_or(1.0, |m| m[y * nw + x]);
            row[x] += s * m * (res[x] - row[x]);
        }
    });
    Ok(ran_on)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_doubles_up_to_the_build() {
        assert_eq!(levels(513, 513, 2049, 2049), vec![(1025, 1025), (2049, 2049)]);
        assert_eq!(levels(513, 257, 4097, 2049), vec![(1025, 513), (2049, 1025), (4097, 2049)]);
        assert_eq!(levels(513, 513, 2017, 2017), vec![(1025, 1025), (2017, 2017)]);
        assert_eq!(levels(513, 513, 1025, 1025), vec![(1025, 1025)]);
        assert!(levels(513, 513, 513, 513).is_empty());
        assert!(levels(513, 513, 257, 257).is_empty());
    }
}
