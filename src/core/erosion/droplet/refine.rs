//! The droplet model's detail pass for a build that erodes on its way up (issue #34; the ladder
//! is [`crate::core::erosion::refine`]): the model itself, run at every level with a density of
//! its own (`droplets_per_km2`, particles per km² of the map) and short paths (`droplet_path_m`,
//! metres), and its erosion radius at the level's scale (`droplet_radius_cells` of the level's
//! cells), so the droplets carve rills the level's cells resolve inside the channels the coarser
//! levels made and do not run across the map. Like the radius, the layer's rates (`inertia`,
//! `erosion`, …) are taken per step of one of the level's cells (`path_step_m` = the level's cell
//! size), so each level's loads are what its cells hold. Each level draws its own droplets (the
//! layer's seed plus the level).

use super::DropletParams;
use crate::core::erosion::refine::{BringUp, Level, RefineParams, Refiner, no_state, own_job_bytes};
use crate::core::erosion::{JobInputs, ModelParams};

/// The model's registry entry's `refine`.
pub const REFINER: Refiner<DropletParams> = Refiner {
    start: no_state,
    pass: None,
    bytes_per_node: |p, _| own_job_bytes(&ModelParams::Droplet(p.clone())),
    bring_up: BringUp::Exact,
    own_job: Some(job),
};

/// One level's job (module doc): the layer's droplets with the pass's density, path length and
/// radius in cells of the level, the seed moved on by the level's index.
pub fn job(p: &DropletParams, r: &RefineParams, lv: &Level, inputs: &JobInputs) -> Option<(ModelParams, JobInputs)> {
    if r.droplets_per_km2 <= 0.0 {
        return None;
    }
    let cell = lv.map.cell_size;
    let mut d = DropletParams {
        droplets_per_km2: r.droplets_per_km2,
        max_path_m: r.droplet_path_m,
        radius_m: (r.droplet_radius_cells * cell).max(1.0e-3),
        ..p.clone()
    };
    // The layer's rates per step of one of the level's cells, as its radius is in cells.
    d.keep_rates_per_node(cell);
    let model = ModelParams::Droplet(d);
    Some((model, JobInputs { seed: inputs.seed.wrapping_add(lv.index as u64), ..inputs.clone() }))
}
