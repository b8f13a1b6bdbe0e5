//! The erosion brush: erosion that runs under the cursor while the button is held, with the
//! model and parameters chosen in the panel, written into an erosion layer (so its mask and
//! strength apply like any run's).
//!
//! A stroke is a sequence of **dabs**. Dab `i` is a run of the layer's recipe on the heights the
//! dabs before it left, steered ([`crate::core::erosion::steer`]) by the brush's disc
//!
//! ```text
//! w_i(p) = F(|p − c_i| / r)   inside the disc, 0 outside      (F: the brush falloff)
//! ```
//!
//! so droplets and snowballs spawn only inside the disc, the pipe model's rain and sources fall
//! only there, stream power gathers runoff only from there, and thermal moves material only
//! from there. Flow goes on outside the disc as it would (no sink). Each dab does a fixed amount
//! of the model's work ([`dab_work`]) with its own seed ([`dab_seed`]), so a stroke is
//! deterministic: its layer re-runs to the same bits from the same input ([`run_dabs`]), and it
//! re-runs on a new input when what is under it changes.
//!
//! | model | work of one dab (radius `r` metres, held `t` seconds) |
//! |---|---|
//! | droplet, snowball | `⌈DROPLETS_PER_M2_S · π r² · t⌉` particles (at least 1) |
//! | pipe | [`PIPE_STEPS`] time steps |
//! | thermal | [`THERMAL_ITERATIONS`] iterations (counted on `iteration_cell_m`; on coarser cells a fraction of a kernel iteration is drawn from the dab's seed) |
//! | stream power | [`STREAM_POWER_STEPS`] steps |
//!
//! The particles of a dab are a count on the map the stroke is drawn on (the dab runs there with
//! the recipe's density set to give that count, [`ModelParams::set_work`]); their rate is per m²
//! of the disc, so a stroke of the same brush on the same land does the same work at any
//! resolution. (Version 1 counted 2 particles per node of the disc per second: the same on the
//! default island's 2 m cells.)

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, build_with_backend};
use crate::core::Heightmap;
use crate::core::brush::Falloff;
use crate::core::erosion::hardness::{HardnessParams, hardness_map};
use crate::core::erosion::steer::{Steer, disc_mask};
use crate::core::erosion::{Boundary, JobInputs, MapSize, ModelParams, RunEnd, run};
use crate::core::rng::unit_f64;

/// Particles per m² of the disc per second held (droplet, snowball): 2 per node on 2 m cells.
pub const DROPLETS_PER_M2_S: f32 = 0.5;
/// Pipe-model time steps per second held.
pub const PIPE_STEPS_S: f32 = 60.0;
/// Thermal iterations per second held.
pub const THERMAL_ITERATIONS_S: f32 = 20.0;
/// Stream-power steps per second held.
pub const STREAM_POWER_STEPS_S: f32 = 10.0;
/// Seconds of work of a stroke's first dab.
pub const FIRST_DAB_S: f32 = 0.1;
/// Most seconds of work one dab does.
pub const MAX_DAB_S: f32 = 0.25;

/// One dab of an erosion-brush stroke, in metres on the map, so a stroke falls on the same land
/// at any resolution (a build's re-run at another size takes it as it is).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dab {
    /// Centre, metres from the map's first node (x along a row, y down the rows).
    pub centre_m: [f32; 2],
    /// Radius, metres (> 0).
    pub radius_m: f32,
    /// How the weight fades from the centre to the rim.
    pub falloff: Falloff,
    /// Units of the model's work the dab does (droplets, time steps, iterations; ≥ 1).
    pub work: u64,
}

/// A dab as older projects kept it, in grid units of the project's map (centre in node
/// coordinates, radius in nodes): read, then converted to a [`Dab`] with the map's cell size
/// ([`crate::editor::layers::Recipe::upgrade_units`]); never written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DabNodes {
    /// Centre, grid units (x, y).
    pub centre: [f32; 2],
    /// Radius, nodes.
    pub radius: f32,
    /// How the weight fades from the centre to the rim.
    pub falloff: Falloff,
    /// Units of the model's work.
    pub work: u64,
}

impl DabNodes {
    /// The dab in metres on a map of `cell` metre cells.
    pub fn in_metres(&self, cell: f32) -> Dab {
        Dab {
            centre_m: [self.centre[0] * cell, self.centre[1] * cell],
            radius_m: self.radius * cell,
            falloff: self.falloff,
            work: self.work,
        }
    }
}

impl Dab {
    /// Whether its numbers can run: a finite centre, a positive radius, some work.
    pub fn is_valid(&self) -> bool {
        self.radius_m.is_finite() && self.radius_m > 0.0 && self.centre_m.iter().all(|c| c.is_finite()) && self.work > 0
    }
}

/// What the dabs of a stroke run: the erosion layer's model and the settings of its recipe
/// ([`crate::editor::layers::Recipe::dab_model`]) apart from its steering, which each dab's disc
/// takes.
#[derive(Clone, Copy, Debug)]
pub struct DabModel<'a> {
    /// The model and its parameters.
    pub model: &'a ModelParams,
    /// The map's edges.
    pub boundary: Boundary,
    /// The stroke's seed; dab `i` runs with [`dab_seed`]`(seed, i)`.
    pub seed: u64,
    /// The processor.
    pub backend: Backend,
    /// The hardness layer, if any.
    pub hardness: Option<&'a HardnessParams>,
    /// The sea level, metres, if any.
    pub sea_level: Option<f32>,
}

/// The work a dab of radius `radius_m` metres owes for `seconds` held with `model` (see the
/// module doc's table; `seconds` is clamped to `0 ..= MAX_DAB_S`). At least 1.
pub fn dab_work(model: &ModelParams, radius_m: f32, seconds: f32) -> u64 {
    let t = if seconds.is_finite() { seconds.clamp(0.0, MAX_DAB_S) } else { MAX_DAB_S };
    let r = if radius_m.is_finite() { radius_m.max(0.0) } else { 0.0 };
    let area = std::f32::consts::PI * r * r;
    let units = match model {
        ModelParams::Droplet(_) | ModelParams::Snowball(_) => DROPLETS_PER_M2_S * area * t,
        ModelParams::Pipe(_) => PIPE_STEPS_S * t,
        ModelParams::Thermal(_) => THERMAL_ITERATIONS_S * t,
        ModelParams::StreamPower(_) => STREAM_POWER_STEPS_S * t,
    };
    // (`as` saturates: an absurd disc asks for the most work a dab can, not for wrapped-round work.)
    (units.ceil() as u64).max(1)
}

/// The seed of dab `index` of a stroke whose recipe has `seed` (SplitMix64's finaliser of the
/// pair, so neighbouring dabs draw unrelated numbers).
pub fn dab_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed ^ (index as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs dab `index` of a stroke of `recipe` (its model, edges, seed, backend, hardness and sea)
/// on `input`: the heights after it, or `None` when `cancel` was set first. A dab outside the
/// map changes nothing.
pub fn run_dab(
    recipe: &DabModel,
    dab: &Dab,
    index: usize,
    input: Heightmap,
    cancel: &AtomicBool,
) -> Result<Option<Heightmap>, String> {
    if !dab.is_valid() {
        return Err(format!("erosion brush: a dab needs a positive radius and work and a finite centre, got {dab:?}"));
    }
    // The disc on this map's grid.
    let cell = input.cell_size;
    let centre = [dab.centre_m[0] / cell, dab.centre_m[1] / cell];
    let weights = disc_mask(input.width, input.height, centre, dab.radius_m / cell, dab.falloff);
    if weights.iter().all(|&w| w == 0.0) {
        return Ok(Some(input));
    }
    let mut model = recipe.model.clone();
    model.set_work(dab.work, MapSize::of(&input));
    // Thermal iterations are counted on 2 m cells (`iteration_cell_m`): on coarser cells a dab
    // owes a fraction of a kernel iteration, drawn from its seed so a stroke relaxes the same
    // metres on average.
    if let ModelParams::Thermal(t) = &mut model {
        t.count_on_own_cells(cell, unit_f64(dab_seed(recipe.seed, index) ^ 0x7468_6572_6d61_6c00));
    }
    let hardness = match recipe.hardness.filter(|h| !h.is_neutral()) {
        None => None,
        Some(h) => Some(hardness_map(&input, h).map_err(|e| format!("hardness map: {e}"))?),
    };
    let inputs = JobInputs {
        hardness,
        boundary: recipe.boundary,
        seed: dab_seed(recipe.seed, index),
        sea_level: recipe.sea_level,
        steer: Some(Steer::new(weights, false)),
    };
    let (mut job, _) = build_with_backend(input, &model, inputs, recipe.backend).map_err(|e| e.to_string())?;
    Ok(match run(job.as_mut(), cancel, |_| {}) {
        RunEnd::Finished => Some(job.heightmap().clone()),
        RunEnd::Cancelled => None,
    })
}

/// Runs a whole stroke's `dabs` in order from `input` (what an erosion-brush layer re-runs):
/// the heights after the last, or `None` when cancelled.
pub fn run_dabs(
    recipe: &DabModel,
    dabs: &[Dab],
    input: Heightmap,
    cancel: &AtomicBool,
) -> Result<Option<Heightmap>, String> {
    let mut h = input;
    for (i, dab) in dabs.iter().enumerate() {
        match run_dab(recipe, dab, i, h, cancel)? {
            Some(next) => h = next,
            None => return Ok(None),
        }
    }
    Ok(Some(h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::erosion::droplet::DropletParams;
    use crate::core::rng::{hash2, signed_f32};

    /// A slope falling toward x = 0 with a little noise.
    fn ramp(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| 0.5 * x as f32 + 0.3 * signed_f32(hash2(x as i64, y as i64, 5))).unwrap()
    }

    fn recipe(model: &ModelParams) -> DabModel<'_> {
        DabModel {
            model,
            boundary: Boundary::default(),
            seed: 3,
            backend: Backend::Cpu,
            hardness: None,
            sea_level: None,
        }
    }

    #[test]
    fn a_dab_erodes_inside_its_disc_and_downhill_only() {
        let input = ramp(96);
        let d = ModelParams::Droplet(DropletParams::default());
        // The work of a 0.2 s dab of radius 20 m: version 1's 126 droplets for 10 nodes.
        let dab =
            Dab { centre_m: [60.0, 48.0], radius_m: 10.0, falloff: Falloff::Smooth, work: dab_work(&d, 20.0, 0.2) };
        assert_eq!(dab.work, 126);
        let out = run_dab(&recipe(&d), &dab, 0, input.clone(), &AtomicBool::new(false)).unwrap().unwrap();
        // The brush radius in nodes (1 m cells) and its bilinear reach.
        let r = DropletParams::default().radius_m.ceil() as usize + 2;
        let mut inside = 0.0f64;
        for y in 0..96 {
            for x in 0..96 {
                let i = y * 96 + x;
                let d = ((x as f32 - 60.0).powi(2) + (y as f32 - 48.0).powi(2)).sqrt();
                let changed = out.data[i].to_bits() != input.data[i].to_bits();
                // Uphill of the disc (larger x) nothing moves: droplets spawn only inside it and
                // flow downhill, toward x = 0.
                if x > 60 + 10 + r {
                    assert!(!changed, "changed at ({x}, {y}), uphill of the dab");
                }
                if d <= 10.0 {
                    inside += (out.data[i] - input.data[i]).abs() as f64;
                }
            }
        }
        assert!(inside > 0.1, "the dab eroded inside its disc ({inside} m·nodes)");
        // A dab off the map changes nothing; a dab with no radius is a clear error.
        let off = Dab { centre_m: [500.0, 500.0], ..dab };
        let same = run_dab(&recipe(&d), &off, 1, input.clone(), &AtomicBool::new(false)).unwrap().unwrap();
        assert_eq!(same.data, input.data);
        assert!(run_dab(&recipe(&d), &Dab { radius_m: 0.0, ..dab }, 0, input, &AtomicBool::new(false)).is_err());
    }

    #[test]
    fn dab_work_follows_the_disc_and_the_time_held() {
        let d = ModelParams::Droplet(DropletParams::default());
        let area = std::f32::consts::PI * 100.0;
        assert_eq!(dab_work(&d, 10.0, 0.1), (DROPLETS_PER_M2_S * area * 0.1).ceil() as u64);
        // Version 1's 2 particles per node per second on the default island's 2 m cells.
        assert_eq!(DROPLETS_PER_M2_S * 2.0 * 2.0, 2.0);
        assert_eq!(dab_work(&d, 0.0, 0.1), 1);
        assert_eq!(dab_work(&d, f32::NAN, 0.1), 1);
        assert!(dab_work(&d, 20.0, 0.1) > 3 * dab_work(&d, 10.0, 0.1));
        assert_eq!(dab_work(&d, 10.0, 5.0), dab_work(&d, 10.0, MAX_DAB_S), "a stall never dumps a burst");
        assert_eq!(dab_work(&d, 10.0, f32::NAN), dab_work(&d, 10.0, MAX_DAB_S));
        let t = ModelParams::Thermal(Default::default());
        assert_eq!(dab_work(&t, 10.0, 0.0), 1);
        assert_eq!(dab_work(&t, 10.0, 0.1), 2);
        assert_ne!(dab_seed(1, 0), dab_seed(1, 1));
    }
}
