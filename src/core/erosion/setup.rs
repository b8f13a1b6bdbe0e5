//! What the jobs' constructors share, written once:
//!
//! - [`particle_grid`], the parameter preamble of a particle model (droplet and snowball, on the
//!   CPU and the GPU): version-1 values converted for the terrain's map, the ranges checked, the
//!   parameters in the map's grid units, the heights checked finite, in that order (so a bad
//!   input is refused with the same error whichever model meets it).
//! - [`erodibility`], the hardness and steering checks of every model but thermal, and the
//!   per-node erodibility they give: the hardness map, times the steering mask's weights in
//!   sink mode ([`Steer::erodibility`]).
//! - [`prepare_particle_job`], both for a particle job, with what the two particle jobs then
//!   derive alike from the setup (the spawner of a steering mask, the sea level).

use super::hardness::{HardnessRule, check_hardness};
use super::particles::Geom;
use super::steer::{Spawner, Steer};
use super::{JobError, JobInputs};
use crate::core::heightmap::Heightmap;
use crate::core::units::{Legacy, MapSize};

/// A particle model's parameters, as its job's setup reads them.
pub(crate) trait ParticleParams: Legacy {
    /// The parameters in the grid units of one map.
    type Grid;
    /// Converts version-1 values for `map`, the map they were made for.
    fn upgrade(&mut self, map: MapSize);
    /// Checks every parameter against its documented range.
    fn check(&self) -> Result<(), JobError>;
    /// The parameters in `map`'s grid units.
    fn grid(&self, map: MapSize) -> Self::Grid;
}

/// [`ParticleParams`] for parameter types with their own `upgrade_units`, `validate` and
/// `in_grid_units`: `Params => Grid`, invoked by each particle model for its own pair.
macro_rules! particle_params {
    ($($params:ty => $grid:ty),* $(,)?) => {$(
        impl $crate::core::erosion::setup::ParticleParams for $params {
            type Grid = $grid;
            fn upgrade(&mut self, map: $crate::core::units::MapSize) {
                self.upgrade_units(map);
            }
            fn check(&self) -> Result<(), $crate::core::erosion::JobError> {
                self.validate()
            }
            fn grid(&self, map: $crate::core::units::MapSize) -> Self::Grid {
                self.in_grid_units(map)
            }
        }
    )*};
}
pub(crate) use particle_params;

/// The parameter preamble of a particle job on `terrain`: version-1 values still in `params`
/// are taken as made for `terrain` and converted, the ranges are checked, and the parameters in
/// `terrain`'s grid units are returned once its heights are found finite.
pub(crate) fn particle_grid<P: ParticleParams>(terrain: &Heightmap, params: &mut P) -> Result<P::Grid, JobError> {
    let map = MapSize::of(terrain);
    if params.has_legacy() {
        params.upgrade(map);
    }
    params.check()?;
    let grid = params.grid(map);
    if !terrain.all_finite() {
        return Err(JobError::NonFinite);
    }
    Ok(grid)
}

/// Checks the hardness map of `inputs` by `rule` and its steering mask against a map of `n`
/// nodes, and takes out the erodibility per node: the hardness, times the mask's weights in
/// sink mode (`None`: 1 everywhere). `inputs.hardness` is left `None` (it is in the result).
pub(crate) fn erodibility(n: usize, inputs: &mut JobInputs, rule: HardnessRule) -> Result<Option<Vec<f32>>, JobError> {
    if let Some(h) = &inputs.hardness {
        check_hardness(h, n, rule)?;
    }
    if let Some(s) = &inputs.steer {
        s.check(n)?;
    }
    let hardness = inputs.hardness.take();
    Ok(match &inputs.steer {
        Some(s) if s.sink => s.erodibility(hardness.as_deref()),
        // No sink: the hardness as it is (moved, where `Steer::erodibility` would copy it).
        _ => hardness,
    })
}

/// What a particle job is built from ([`prepare_particle_job`]).
pub(crate) struct ParticleSetup<G> {
    /// The parameters in the terrain's grid units.
    pub grid: G,
    /// The erodibility per node ([`erodibility`]); `None`: 1 everywhere.
    pub erodibility: Option<Vec<f32>>,
    /// The rest of the job's inputs (their hardness is in `erodibility`).
    pub inputs: JobInputs,
}

impl<G> ParticleSetup<G> {
    /// The steering mask, if the run has one.
    pub fn steer(&self) -> Option<&Steer> {
        self.inputs.steer.as_ref()
    }

    /// Where the particles spawn and whether they live, with a steering mask, on the position
    /// domain of `geom`.
    pub fn spawner(&self, geom: &Geom) -> Option<Spawner> {
        self.steer().map(|s| Spawner::new(s, geom.w, geom.h, geom.span_x, geom.span_y))
    }

    /// The sea level, where it is a finite one.
    pub fn sea(&self) -> Option<f32> {
        self.inputs.sea_level.filter(|s| s.is_finite())
    }
}

/// The setup both particle jobs start with: [`particle_grid`], then [`erodibility`] with the
/// particle models' hardness rule (`0 ..= 1000` per node).
pub(crate) fn prepare_particle_job<P: ParticleParams>(
    terrain: &Heightmap,
    params: &mut P,
    mut inputs: JobInputs,
) -> Result<ParticleSetup<P::Grid>, JobError> {
    let grid = particle_grid(terrain, params)?;
    let erodibility = erodibility(terrain.len(), &mut inputs, HardnessRule::AtMost1000)?;
    Ok(ParticleSetup { grid, erodibility, inputs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::erosion::droplet::DropletParams;
    use crate::core::erosion::snowball::SnowballParams;

    fn terrain() -> Heightmap {
        Heightmap::from_data(4, 3, 2.0, (0..12).map(|v| v as f32).collect()).unwrap()
    }

    #[test]
    fn checks_come_in_one_order_for_both_particle_models() {
        // Bad parameters are refused before bad heights, bad heights before a bad hardness map,
        // a bad hardness map before a bad mask.
        let mut nan = terrain();
        nan.data[5] = f32::NAN;
        let bad_mask = || Some(Steer::new(vec![2.0; 12], false));
        let bad_hardness = || Some(vec![-1.0; 12]);
        let inputs = |hardness, steer| JobInputs { hardness, steer, ..Default::default() };
        let mut d = DropletParams { inertia: 2.0, ..Default::default() };
        let mut s = SnowballParams { friction: 2.0, ..Default::default() };
        let e = prepare_particle_job(&nan, &mut d, inputs(bad_hardness(), bad_mask())).err();
        assert!(matches!(e, Some(JobError::BadParam { name: "inertia", .. })), "{e:?}");
        let e = prepare_particle_job(&nan, &mut s, inputs(bad_hardness(), bad_mask())).err();
        assert!(matches!(e, Some(JobError::BadParam { name: "friction", .. })), "{e:?}");
        let (mut d, mut s) = (DropletParams::default(), SnowballParams::default());
        let e = prepare_particle_job(&nan, &mut d, inputs(bad_hardness(), bad_mask())).err();
        assert!(matches!(e, Some(JobError::NonFinite)), "{e:?}");
        let e = prepare_particle_job(&terrain(), &mut s, inputs(bad_hardness(), bad_mask())).err();
        assert!(matches!(e, Some(JobError::BadParam { name: "hardness", .. })), "{e:?}");
        let e = prepare_particle_job(&terrain(), &mut d, inputs(None, bad_mask())).err();
        assert!(matches!(e, Some(JobError::BadParam { name: "steer weight", .. })), "{e:?}");
    }

    #[test]
    fn a_sink_mask_multiplies_the_hardness_and_version_1_values_are_converted() {
        let mut weights = vec![1.0; 12];
        weights[3] = 0.0;
        weights[4] = 0.5;
        let inputs = JobInputs {
            hardness: Some(vec![2.0; 12]),
            steer: Some(Steer::new(weights.clone(), true)),
            sea_level: Some(f32::NEG_INFINITY),
            ..Default::default()
        };
        let mut d: DropletParams = ron::from_str("(droplets: 12, radius: 1.5)").unwrap();
        let setup = prepare_particle_job(&terrain(), &mut d, inputs).unwrap();
        assert!(!d.has_legacy());
        assert_eq!(d.radius_m, 3.0);
        assert_eq!(setup.grid.radius, 1.5);
        let k = setup.erodibility.as_deref().unwrap();
        assert_eq!((k[0], k[3], k[4]), (2.0, 0.0, 1.0));
        assert_eq!(setup.inputs.hardness, None);
        assert_eq!(setup.sea(), None);
        // Not a sink: the hardness as it is.
        let inputs =
            JobInputs { hardness: Some(vec![2.0; 12]), steer: Some(Steer::new(weights, false)), ..Default::default() };
        let setup = prepare_particle_job(&terrain(), &mut SnowballParams::default(), inputs).unwrap();
        assert_eq!(setup.erodibility, Some(vec![2.0; 12]));
        assert!(setup.steer().is_some());
    }
}
