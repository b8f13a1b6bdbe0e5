//! Thermal erosion's detail pass for a build that erodes on its way up (issue #34; the ladder is
//! [`crate::core::erosion::refine`]): the model itself, its talus angle in degrees and its rate,
//! run for `thermal_iterations` iterations at every level, so the gully walls and crests a
//! finer level resolves settle to the same angle of repose the preview's slopes did. The count
//! is per level, on the level's own cells (`iteration_cell_m` = the level's cell size): each
//! level settles the few cells of detail it brings, not the layer's whole reach again.

use super::ThermalParams;
use crate::core::erosion::refine::{BringUp, Level, RefineParams, Refiner, no_state, own_job_bytes};
use crate::core::erosion::{JobInputs, ModelParams};

/// The model's registry entry's `refine`.
pub const REFINER: Refiner<ThermalParams> = Refiner {
    start: no_state,
    pass: None,
    bytes_per_node: |p, _| own_job_bytes(&ModelParams::Thermal(p.clone())),
    bring_up: BringUp::Smooth,
    own_job: Some(job),
};

/// One level's job: the layer's thermal parameters with `thermal_iterations` iterations on the
/// level's cells (none with 0).
pub fn job(p: &ThermalParams, r: &RefineParams, l: &Level, inputs: &JobInputs) -> Option<(ModelParams, JobInputs)> {
    (r.thermal_iterations > 0).then(|| {
        let mut t = ThermalParams { iterations: r.thermal_iterations, ..p.clone() };
        t.keep_iterations_per_node(l.map.cell_size);
        (ModelParams::Thermal(t), inputs.clone())
    })
}
