//! What an erosion layer ran, so it can run again: the model with its parameters, the edges, the
//! seed, the processor, the hardness layer and the sea level. Runs are deterministic, so the same
//! recipe on the same input gives the same bits ([`run_to_end`]).

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, BackendUsed, build_with_backend};
use crate::core::Heightmap;
use crate::core::erosion::hardness::{HardnessParams, hardness_map};
use crate::core::erosion::{Boundary, JobInputs, ModelParams, RunEnd, Simulation, run};

/// An erosion run's inputs apart from the terrain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    /// The model and its parameters.
    pub model: ModelParams,
    /// Edge modes of the four sides.
    pub boundary: Boundary,
    /// Seed of the run's random numbers.
    pub seed: u64,
    /// Which processor runs it (a GPU that cannot falls back to the CPU with a note).
    pub backend: Backend,
    /// The hardness layer (`None` or neutral: uniform hardness 1).
    pub hardness: Option<HardnessParams>,
    /// Base level every flow ends at, m (`None`: only the map edges drain).
    pub sea_level: Option<f32>,
}

/// A job built from a recipe, not yet started.
pub struct BuiltRun {
    /// The job: the caller drives it step by step (or [`run_to_end`] does).
    pub job: Box<dyn Simulation>,
    /// Where it runs, with the fallback note if any.
    pub used: BackendUsed,
    /// The hardness map the run erodes with (`None`: uniform).
    pub hardness: Option<Vec<f32>>,
}

impl Recipe {
    /// Checks the recipe's inputs besides the model (whose parameters [`Self::build`] checks).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(h) = &self.hardness {
            h.validate().map_err(|e| format!("hardness: {e}"))?;
        }
        if self.sea_level.is_some_and(|s| !s.is_finite()) {
            return Err("sea level must be finite".into());
        }
        Ok(())
    }

    /// Builds the job over `input`. Invalid parameters are an error; a GPU that is missing falls
    /// back to the CPU with a note.
    pub fn build(&self, input: Heightmap) -> Result<BuiltRun, String> {
        let hardness = match self.hardness.as_ref().filter(|h| !h.is_neutral()) {
            None => None,
            Some(h) => Some(hardness_map(&input, h).map_err(|e| format!("hardness map: {e}"))?),
        };
        let inputs = JobInputs {
            hardness: hardness.clone(),
            boundary: self.boundary,
            seed: self.seed,
            sea_level: self.sea_level,
            steer: None,
        };
        let (job, used) = build_with_backend(input, &self.model, inputs, self.backend).map_err(|e| e.to_string())?;
        Ok(BuiltRun { job, used, hardness })
    }
}

/// Runs `recipe` over `input` to its end: the result, or `None` when `cancel` was set first.
pub fn run_to_end(recipe: &Recipe, input: Heightmap, cancel: &AtomicBool) -> Result<Option<Heightmap>, String> {
    let mut built = recipe.build(input)?;
    match run(built.job.as_mut(), cancel, |_| {}) {
        RunEnd::Finished => Ok(Some(built.job.heightmap().clone())),
        RunEnd::Cancelled => Ok(None),
    }
}
