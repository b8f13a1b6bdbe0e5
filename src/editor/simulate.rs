//! Starting a Simulate run from the editor's document, without Bevy: what the Simulate button
//! does between the click and the worker (the app's system only reads the panel, calls
//! [`prepare_run`] and spawns the job it returns).
//!
//! A run starts from the document's map *as it is* (an open brush stroke is closed first, so the
//! run's base includes it). Its inputs are:
//!
//! | input | from |
//! |---|---|
//! | model and its parameters | the panel's model choice |
//! | boundary, seed, backend | the panel |
//! | hardness map | the Erosion section's hardness layer, `None` when it is uniformly 1 |
//! | sea level | the level of the sea drawn in the view: the base level every flow ends at |
//! | steering mask | the Erosion section's "Steer" choice (height, slope or flow of the map; sinks) |
//!
//! A GPU that is missing or fails falls back to the CPU with a note in [`PreparedRun::used`]
//! (never an error); invalid parameters are an error and start nothing. Parameters that still
//! hold version-1 values in grid units (a script's `Simulate` written before world units) are
//! taken as made for the document's map and converted when the run starts
//! ([`ModelParams::upgrade_units`]), so the recipe the layer keeps is in world units.

use crate::backend::{Backend, BackendUsed};
use crate::core::Heightmap;
use crate::core::erosion::hardness::HardnessParams;
use crate::core::erosion::{Boundary, MapSize, ModelParams, Simulation};
use crate::editor::document::{Changed, Document};
use crate::editor::layers::Recipe;
use crate::editor::layers::recipe::BuiltRun;
use crate::editor::layers::recipe::SteerSpec;

/// What the user asked for with Simulate.
#[derive(Clone, Debug)]
pub struct RunRequest<'a> {
    /// The model to run and its parameters.
    pub model: &'a ModelParams,
    /// Edge modes of the four sides.
    pub boundary: Boundary,
    /// Seed of the run's random numbers (the same seed gives the same result).
    pub seed: u64,
    /// Which processor runs it; a GPU that cannot falls back to the CPU with a note.
    pub backend: Backend,
    /// The Erosion section's hardness layer (`None` or neutral: uniform hardness 1).
    pub hardness: Option<&'a HardnessParams>,
    /// The sea level drawn in the view, m.
    pub sea_level: f32,
    /// How the run is steered (the Erosion section's "Steer" choice; `None`: rain everywhere).
    pub steer: Option<SteerSpec>,
}

/// A run ready to be spawned.
pub struct PreparedRun {
    /// The built job, not yet started: the worker drives it step by step.
    pub job: Box<dyn Simulation>,
    /// Where it runs (with the fallback note, if any).
    pub used: BackendUsed,
    /// The map the run starts from: the new erosion layer's input.
    pub base: Heightmap,
    /// The hardness map the run erodes with, for the look's erosion fields.
    pub hardness: Option<Vec<f32>>,
    /// What runs, kept by the erosion layer the run becomes (so it can run again).
    pub recipe: Recipe,
    /// The undo label, e.g. "Stream-power erosion".
    pub label: &'static str,
}

/// Closes any open stroke of `doc` (returned, for the mesh to catch up whatever happens next) and
/// builds the job for `req` from the map that results.
pub fn prepare_run(doc: &mut Document, req: &RunRequest) -> (Changed, Result<PreparedRun, String>) {
    let change = doc.end_stroke();
    (change, build_run(doc.map(), req))
}

/// The recipe of `req` (checked): what a run of it keeps so it can run again.
pub fn recipe_of(req: &RunRequest) -> Result<Recipe, String> {
    let recipe = Recipe {
        model: req.model.clone(),
        boundary: req.boundary,
        seed: req.seed,
        backend: req.backend,
        hardness: req.hardness.filter(|h| !h.is_neutral()).cloned(),
        sea_level: Some(req.sea_level),
        steer: req.steer.clone(),
    };
    recipe.validate()?;
    Ok(recipe)
}

fn build_run(map: &Heightmap, req: &RunRequest) -> Result<PreparedRun, String> {
    let mut recipe = recipe_of(req)?;
    recipe.upgrade_units(MapSize::of(map));
    let base = map.clone();
    let BuiltRun { job, used, hardness } = recipe.build(base.clone())?;
    Ok(PreparedRun { job, used, base, hardness, recipe, label: model_label(req.model) })
}

/// Undo label of a model's run (the registry's `undo`).
pub fn model_label(m: &ModelParams) -> &'static str {
    m.entry().undo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::{BrushKind, BrushParams};
    use crate::core::erosion::stream_power::StreamPowerParams;
    use crate::core::erosion::thermal::ThermalParams;

    fn doc() -> Document {
        let map = Heightmap::from_fn(33, 33, 2.0, |x, y| {
            let (dx, dy) = (x as f32 - 16.0, y as f32 - 16.0);
            20.0 - 0.05 * (dx * dx + dy * dy)
        })
        .unwrap();
        Document::new(map)
    }

    fn req(model: &ModelParams) -> RunRequest<'_> {
        RunRequest {
            model,
            boundary: Boundary::default(),
            seed: 7,
            backend: Backend::Cpu,
            hardness: None,
            sea_level: 0.0,
            steer: None,
        }
    }

    #[test]
    fn a_run_starts_from_the_map_with_the_open_stroke_closed() {
        let mut d = doc();
        let params = BrushParams { kind: BrushKind::Raise, radius: 4.0, strength: 1.0, ..Default::default() };
        d.begin_stroke(params, "Raise").unwrap();
        d.stroke_to([16.0, 16.0], 0.0);
        d.stroke_to([16.0, 16.0], 0.5);
        assert!(d.in_stroke());
        let model = ModelParams::StreamPower(StreamPowerParams { steps: 3, ..Default::default() });
        let (_, run) = prepare_run(&mut d, &req(&model));
        let run = run.unwrap();
        assert!(!d.in_stroke(), "the stroke is closed before the run");
        assert_eq!(run.base.data, d.map().data, "the base is the map with the stroke in it");
        assert!(run.base.get(16, 16) > 20.0);
        assert_eq!(run.label, "Stream-power erosion");
        assert_eq!(run.used.backend, Backend::Cpu);
        assert!(run.hardness.is_none());
        // The stroke is one undo step of its own, before the run's.
        assert!(d.history().can_undo());
    }

    #[test]
    fn the_sea_drawn_in_the_view_is_the_runs_base_level() {
        // Thermal under a high sea settles at its underwater angle; with the sea below the map
        // it uses the land angle: the two runs differ only by the sea level passed in.
        let model = ModelParams::Thermal(ThermalParams { iterations: 20, ..Default::default() });
        let mut results = Vec::new();
        for sea in [-100.0f32, 30.0] {
            let mut d = doc();
            let (_, run) = prepare_run(&mut d, &RunRequest { sea_level: sea, ..req(&model) });
            let mut job = run.unwrap().job;
            while !job.is_done() {
                job.step();
            }
            results.push(job.heightmap().data.clone());
        }
        assert_ne!(results[0], results[1]);
    }

    #[test]
    fn a_script_in_grid_units_runs_in_world_units_for_the_documents_map() {
        // Version 1's `Simulate(model: Droplet((droplets: 40, radius: 2.0)))` on the 33² map of
        // 2 m cells: 40 droplets and a 4 m brush, and the layer keeps world units.
        let model: ModelParams = ron::from_str("Droplet((droplets: 40, radius: 2.0))").unwrap();
        let mut d = doc();
        let (_, run) = prepare_run(&mut d, &req(&model));
        let run = run.unwrap();
        assert_eq!(run.job.progress().total, 40);
        assert!(!run.recipe.has_legacy());
        let ModelParams::Droplet(p) = &run.recipe.model else { panic!() };
        assert_eq!((p.radius_m, run.recipe.model.work(MapSize::of(d.map()))), (4.0, 40));
        assert!(!ron::to_string(&run.recipe).unwrap().contains("droplets:"));
    }

    #[test]
    fn bad_parameters_start_nothing_and_say_why() {
        let mut d = doc();
        let model = ModelParams::StreamPower(StreamPowerParams { mfd_exponent: -1.0, ..Default::default() });
        let (_, run) = prepare_run(&mut d, &req(&model));
        let e = run.err().expect("refused");
        assert!(e.contains("mfd_exponent"), "{e}");
        let neutral = HardnessParams::default();
        let model = ModelParams::StreamPower(StreamPowerParams { steps: 1, ..Default::default() });
        let (_, run) = prepare_run(&mut d, &RunRequest { hardness: Some(&neutral), ..req(&model) });
        assert!(run.unwrap().hardness.is_none(), "a neutral hardness layer gives no map");
    }
}
