//! What an erosion layer ran, so it can run again: the model with its parameters, the edges, the
//! seed, the processor, the hardness layer, the sea level and how the run was steered. Runs are
//! deterministic, so the same recipe on the same input gives the same bits ([`run_to_end`]).
//!
//! ## Steering ([`SteerSpec`])
//! A run can be steered by a mask ([`crate::core::erosion::steer`]: where rain falls and
//! particles spawn, optionally non-erodible sinks where it is 0). The mask is kept as how to make
//! it, not as its values, so a re-run on a new input steers by the same rule:
//!
//! | source | weight of node `i` |
//! |---|---|
//! | `Height { lo, hi }` | smoothstep of the input's height from `lo` to `hi` (m) |
//! | `Slope { lo_deg, hi_deg }` | smoothstep of the input's slope angle (degrees) |
//! | `Drainage { area_m2 }` | 1 where the input's D8 drainage area reaches `area_m2` (m²), ramping from half of it |
//! | `Flow { threshold }` | older projects' form, the area in nodes of the project's map: converted to `Drainage` when the project is read ([`Recipe::upgrade_units`]), never written |
//! | `LayerMask` | the layer's painted mask (which then steers the run instead of blending its result) |
//! | `Stroke` | an erosion-brush stroke: one disc per dab (centre and radius in metres), run dab after dab ([`crate::editor::erosion_brush`]) |
//! | `Dabs` | older projects' form of a stroke, its dabs in nodes of the project's map: converted to `Stroke` when the project is read, never written |

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, BackendUsed, build_with_backend};
use crate::core::Heightmap;
use crate::core::erosion::hardness::{HardnessParams, hardness_map};
use crate::core::erosion::steer::{self, Steer};
use crate::core::erosion::{Boundary, JobInputs, MapSize, ModelParams, RunEnd, Simulation, run};
use crate::editor::erosion_brush::{self, Dab, DabNodes};

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
    /// How the run is steered (`None`: rain everywhere, as unsteered). Absent in projects
    /// written before steering existed.
    #[serde(default)]
    pub steer: Option<SteerSpec>,
}

/// Where a steered run's mask comes from (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SteerSource {
    /// The input's height: 0 at `lo`, 1 at `hi` (m; `lo > hi` reverses the ramp).
    Height {
        /// Height of weight 0, m.
        lo: f32,
        /// Height of weight 1, m.
        hi: f32,
    },
    /// The input's slope angle: 0 at `lo_deg`, 1 at `hi_deg` (degrees, 0 … 90).
    Slope {
        /// Slope of weight 0, degrees.
        lo_deg: f32,
        /// Slope of weight 1, degrees.
        hi_deg: f32,
    },
    /// The input's D8 drainage area: 1 from `area_m2`, 0 below half of it.
    Drainage {
        /// Drainage area of weight 1, m² (> 0).
        area_m2: f32,
    },
    /// Older projects' [`Self::Drainage`], with the area in nodes of the map it was made for;
    /// [`Recipe::upgrade_units`] converts it when a project is read.
    Flow {
        /// Drainage area of weight 1, nodes (> 0).
        threshold: f32,
    },
    /// The layer's painted mask.
    LayerMask,
    /// An erosion-brush stroke, dab by dab, in metres.
    Stroke(Vec<Dab>),
    /// Older projects' form of a stroke, its dabs in grid units of the project's map: converted
    /// to `Stroke` when the project is read ([`Recipe::upgrade_units`]), never written.
    Dabs(Vec<DabNodes>),
}

/// How a run is steered: the mask's source, and whether weight 0 makes sinks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteerSpec {
    /// Where the weights come from.
    pub source: SteerSource,
    /// Nodes of weight 0 are non-erodible sinks where flow ends.
    pub sink: bool,
}

impl SteerSpec {
    /// The weights over `input` (`layer_mask`: the layer's painted mask, for `LayerMask`). `None`
    /// for an erosion-brush stroke, whose dabs each have their own.
    pub fn weights(&self, input: &Heightmap, layer_mask: Option<&[f32]>) -> Result<Option<Vec<f32>>, String> {
        Ok(Some(match &self.source {
            SteerSource::Height { lo, hi } => steer::height_mask(input, *lo, *hi),
            SteerSource::Slope { lo_deg, hi_deg } => steer::slope_mask(input, *lo_deg, *hi_deg),
            SteerSource::Drainage { area_m2 } => steer::flow_mask(input, *area_m2),
            SteerSource::Flow { threshold } => steer::flow_mask(input, threshold * input.cell_size * input.cell_size),
            SteerSource::LayerMask => match layer_mask {
                Some(m) if m.len() == input.len() => m.iter().map(|v| v.clamp(0.0, 1.0)).collect(),
                _ => return Err("steering by the layer's mask needs the mask".into()),
            },
            SteerSource::Stroke(_) | SteerSource::Dabs(_) => return Ok(None),
        }))
    }

    /// Checks the numbers of the source.
    pub fn validate(&self) -> Result<(), String> {
        let ok = match &self.source {
            SteerSource::Height { lo, hi } => lo.is_finite() && hi.is_finite(),
            SteerSource::Slope { lo_deg, hi_deg } => [lo_deg, hi_deg].iter().all(|v| (0.0..=90.0).contains(*v)),
            SteerSource::Drainage { area_m2: a } | SteerSource::Flow { threshold: a } => a.is_finite() && *a > 0.0,
            SteerSource::LayerMask => true,
            SteerSource::Stroke(d) => d.iter().all(Dab::is_valid),
            SteerSource::Dabs(d) => d.iter().all(|d| d.in_metres(1.0).is_valid()),
        };
        if ok { Ok(()) } else { Err(format!("steering mask: bad numbers in {:?}", self.source)) }
    }

    /// An erosion-brush stroke's dabs, if that is what it is.
    pub fn dabs(&self) -> Option<&[Dab]> {
        match &self.source {
            SteerSource::Stroke(d) => Some(d),
            _ => None,
        }
    }
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
    /// What an erosion-brush stroke's dabs run with: this recipe less its steering.
    pub fn dab_model(&self) -> erosion_brush::DabModel<'_> {
        erosion_brush::DabModel {
            model: &self.model,
            boundary: self.boundary,
            seed: self.seed,
            backend: self.backend,
            hardness: self.hardness.as_ref(),
            sea_level: self.sea_level,
        }
    }

    /// Converts what an older recipe left in grid units (its model's parameters, see
    /// [`crate::core::units`]; a steering drainage area in nodes; an erosion-brush stroke's dabs
    /// in node coordinates) for `map`, the map it was made for.
    pub fn upgrade_units(&mut self, map: MapSize) {
        self.model.upgrade_units(map);
        let cell = map.cell_size;
        if let Some(s) = &mut self.steer {
            match &s.source {
                SteerSource::Flow { threshold } => {
                    s.source = SteerSource::Drainage { area_m2: threshold * cell * cell };
                }
                SteerSource::Dabs(d) => s.source = SteerSource::Stroke(d.iter().map(|d| d.in_metres(cell)).collect()),
                _ => {}
            }
        }
    }

    /// Whether grid-unit values are still to convert ([`Self::upgrade_units`]).
    pub fn has_legacy(&self) -> bool {
        self.model.has_legacy()
            || self.steer.as_ref().is_some_and(|s| matches!(s.source, SteerSource::Flow { .. } | SteerSource::Dabs(_)))
    }

    /// Checks the recipe's inputs besides the model (whose parameters [`Self::build`] checks).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(h) = &self.hardness {
            h.validate().map_err(|e| format!("hardness: {e}"))?;
        }
        if self.sea_level.is_some_and(|s| !s.is_finite()) {
            return Err("sea level must be finite".into());
        }
        if let Some(s) = &self.steer {
            s.validate()?;
        }
        Ok(())
    }

    /// Builds the job over `input`. Invalid parameters are an error; a GPU that is missing falls
    /// back to the CPU with a note. A recipe steered by its layer's mask needs
    /// [`Self::build_with`]; an erosion-brush stroke runs with [`run_to_end`].
    pub fn build(&self, input: Heightmap) -> Result<BuiltRun, String> {
        self.build_with(input, None)
    }

    /// [`Self::build`] with the layer's painted mask (for [`SteerSource::LayerMask`]).
    pub fn build_with(&self, input: Heightmap, layer_mask: Option<&[f32]>) -> Result<BuiltRun, String> {
        let steer = match &self.steer {
            None => None,
            Some(spec) => match spec.weights(&input, layer_mask)? {
                Some(w) => Some(Steer::new(w, spec.sink)),
                None => return Err("an erosion-brush stroke runs dab by dab, not as one job".into()),
            },
        };
        let hardness = match self.hardness.as_ref().filter(|h| !h.is_neutral()) {
            None => None,
            Some(h) => Some(hardness_map(&input, h).map_err(|e| format!("hardness map: {e}"))?),
        };
        let inputs = JobInputs {
            hardness: hardness.clone(),
            boundary: self.boundary,
            seed: self.seed,
            sea_level: self.sea_level,
            steer,
        };
        let (job, used) = build_with_backend(input, &self.model, inputs, self.backend).map_err(|e| e.to_string())?;
        Ok(BuiltRun { job, used, hardness })
    }
}

/// Runs `recipe` over `input` to its end (an erosion-brush stroke dab by dab): the result, or
/// `None` when `cancel` was set first. `layer_mask`: the layer's painted mask, for a recipe
/// steered by it.
pub fn run_to_end(
    recipe: &Recipe,
    input: Heightmap,
    layer_mask: Option<&[f32]>,
    cancel: &AtomicBool,
) -> Result<Option<Heightmap>, String> {
    if let Some(dabs) = recipe.steer.as_ref().and_then(SteerSpec::dabs) {
        return erosion_brush::run_dabs(&recipe.dab_model(), dabs, input, cancel);
    }
    let mut built = recipe.build_with(input, layer_mask)?;
    match run(built.job.as_mut(), cancel, |_| {}) {
        RunEnd::Finished => Ok(Some(built.job.heightmap().clone())),
        RunEnd::Cancelled => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::Falloff;
    use crate::core::erosion::droplet::DropletParams;
    use crate::core::erosion::stream_power::StreamPowerParams;
    use crate::core::rng::{hash2, signed_f32};
    use crate::editor::document::Document;

    /// A slope falling toward x = 0 with a little noise.
    fn ramp(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| 0.5 * x as f32 + 0.3 * signed_f32(hash2(x as i64, y as i64, 5))).unwrap()
    }

    /// An erosion-brush layer's recipe: droplets, steered by the stroke's dabs once drawn.
    fn recipe() -> Recipe {
        Recipe {
            model: ModelParams::Droplet(DropletParams::default()),
            boundary: Boundary::default(),
            seed: 3,
            backend: Backend::Cpu,
            hardness: None,
            sea_level: None,
            steer: None,
        }
    }

    /// The live stroke (a dab at a time, each installed in the layer) and the layer's re-run
    /// (all dabs from the input) give the same bits: the stroke is one undo step and re-runs
    /// exactly on the same input.
    #[test]
    fn a_stroke_is_one_layer_that_re_runs_to_the_same_bits() {
        let input = ramp(80);
        let mut doc = Document::new(input.clone());
        let id = doc.begin_erosion_brush(recipe());
        let dabs: Vec<Dab> = (0..4)
            .map(|i| Dab {
                centre_m: [50.0 - 4.0 * i as f32, 40.0],
                radius_m: 8.0,
                falloff: Falloff::Smooth,
                work: 100 + i,
            })
            .collect();
        let mut current = input.clone();
        for (i, dab) in dabs.iter().enumerate() {
            current = erosion_brush::run_dab(&recipe().dab_model(), dab, i, current, &AtomicBool::new(false))
                .unwrap()
                .unwrap();
            assert!(doc.add_dab(id, *dab, &current).is_some());
        }
        assert_eq!(doc.history().undo_len(), 1, "the stroke is one undo step");
        let e = doc.stack().layer(id).unwrap().erosion().unwrap().clone();
        assert_eq!(e.recipe.steer.as_ref().and_then(SteerSpec::dabs).map(<[Dab]>::len), Some(4));
        let rerun = run_to_end(&e.recipe, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
        assert_eq!(rerun.data, current.data, "the layer re-runs to the stroke's bits");
        assert!(doc.map().data.iter().zip(&current.data).all(|(a, b)| (a - b).abs() <= 1e-4));
        doc.undo();
        assert_eq!(doc.map().data, input.data);
        // The recipe round-trips through RON (the project file's description).
        let ron = ron::to_string(&e.recipe).unwrap();
        let back: Recipe = ron::from_str(&ron).unwrap();
        assert_eq!(&back, &e.recipe);
        assert!(matches!(back.steer.unwrap().source, SteerSource::Stroke(d) if d.len() == 4));
    }

    /// An older project's drainage threshold in nodes becomes an area in m² with the project's
    /// cell size, and steers exactly as it did.
    #[test]
    fn a_drainage_threshold_in_nodes_becomes_square_metres_and_steers_the_same() {
        let old = "(source: Flow(threshold: 200.0), sink: true)";
        let spec: SteerSpec = ron::from_str(old).unwrap();
        let mut r = Recipe {
            model: ModelParams::StreamPower(StreamPowerParams::default()),
            boundary: Boundary::default(),
            seed: 1,
            backend: Backend::Cpu,
            hardness: None,
            sea_level: Some(0.0),
            steer: Some(spec.clone()),
        };
        assert!(r.has_legacy());
        let hm = crate::core::generate::generate(&crate::core::generate::GenerateParams {
            width: 65,
            height: 65,
            cell_size: 2.0,
            ..Default::default()
        })
        .unwrap();
        let before = spec.weights(&hm, None).unwrap().unwrap();
        r.upgrade_units(MapSize::of(&hm));
        let s = r.steer.clone().unwrap();
        assert_eq!(s.source, SteerSource::Drainage { area_m2: 800.0 });
        assert!(s.sink && !r.has_legacy());
        assert_eq!(s.weights(&hm, None).unwrap().unwrap(), before);
        // Written again, it is the area.
        let text = ron::to_string(&s).unwrap();
        assert!(text.contains("Drainage(area_m2:800.0)"), "{text}");
        assert_eq!(ron::from_str::<SteerSpec>(&text).unwrap(), s);
        assert!(SteerSpec { source: SteerSource::Drainage { area_m2: f32::NAN }, sink: false }.validate().is_err());
    }

    /// An older project's stroke, its dabs in nodes of the project's map, becomes a stroke in
    /// metres with the project's cell size and erodes the same nodes as it did; written again, it
    /// is in metres.
    #[test]
    fn a_stroke_in_nodes_becomes_metres_and_erodes_the_same_nodes() {
        let old = "(source: Dabs([(centre: (40.0, 30.0), radius: 6.0, falloff: Smooth, work: 60)]), sink: false)";
        let mut r = Recipe { steer: Some(ron::from_str(old).unwrap()), ..recipe() };
        assert!(r.has_legacy());
        // 2 m cells: the old dab's disc is 12 m around (80 m, 60 m).
        let input =
            Heightmap::from_fn(72, 72, 2.0, |x, y| x as f32 + 0.3 * signed_f32(hash2(x as i64, y as i64, 5))).unwrap();
        r.upgrade_units(MapSize::of(&input));
        assert!(!r.has_legacy());
        let dabs = r.steer.as_ref().and_then(SteerSpec::dabs).unwrap();
        assert_eq!(dabs, [Dab { centre_m: [80.0, 60.0], radius_m: 12.0, falloff: Falloff::Smooth, work: 60 }]);
        let out = run_to_end(&r, input.clone(), None, &AtomicBool::new(false)).unwrap().unwrap();
        let changed: Vec<(usize, usize)> =
            (0..input.len()).filter(|&i| out.data[i] != input.data[i]).map(|i| (i % 72, i / 72)).collect();
        assert!(!changed.is_empty());
        // Droplets spawn inside the old disc (nodes (40, 30), radius 6) and flow downhill (−x),
        // so nothing uphill of it moves.
        let reach = 6 + DropletParams::default().radius_m.div_euclid(2.0) as usize + 2;
        assert!(changed.iter().all(|&(x, _)| x <= 40 + reach), "{changed:?}");
        let text = ron::to_string(r.steer.as_ref().unwrap()).unwrap();
        assert!(text.contains("Stroke([(centre_m:(80.0,60.0),radius_m:12.0"), "{text}");
    }
}
