//! Erosion layers run again at the build's size ([`super::ErosionBuild::Rerun`]): the recipe
//! brought to the finer grid, and run to its end.

use std::sync::atomic::AtomicBool;

use crate::core::Heightmap;
use crate::core::erosion::{GridChange, RunEnd, run};
use crate::editor::layers::recipe::{Recipe, SteerSource, SteerSpec};

/// A recipe for a re-run `ratio` times finer (`from` → `to` nodes): the per-node inputs of its
/// model (a pipe model's own cell size, its rain map, a stream-power uplift map) brought to the
/// new grid, and an older project's drainage threshold in nodes, were a recipe not read through
/// [`Recipe::upgrade_units`], scaled to it. Model parameters, steering areas and brush strokes
/// are in world units and stay as they are (an older stroke in nodes runs only once read).
pub(super) fn scaled_recipe(recipe: &Recipe, ratio: f64, from: (usize, usize), to: (usize, usize)) -> Recipe {
    let r = ratio as f32;
    // Per-node inputs of a model follow the grid, as its registry entry says (`to_grid`).
    let mut model = recipe.model.clone();
    model.to_grid(&GridChange { from, to, ratio });
    let steer = recipe.steer.as_ref().map(|s| SteerSpec {
        source: match &s.source {
            SteerSource::Flow { threshold } => SteerSource::Flow { threshold: threshold * r * r },
            other => other.clone(),
        },
        sink: s.sink,
    });
    Recipe { model, steer, ..recipe.clone() }
}

/// Runs `recipe` over `input` to its end with progress (an erosion-brush stroke dab by dab, without
/// progress); `None` when cancelled.
pub(super) fn rerun(
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
    use crate::core::erosion::ModelParams;

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
}
