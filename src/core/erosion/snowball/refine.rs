//! The snowball model's detail pass for a build that erodes on its way up (issue #34; the ladder
//! is [`crate::core::erosion::refine`]): the model itself, run at every level with a density of
//! its own (`snowballs_per_km2`, particles per km² of the map) and short paths
//! (`snowball_iterations` per particle), with the layer's lengths in metres (speed, sampling
//! offset, final blur) kept as they are, so the level's cells resolve the grooves and the
//! smoothing the model makes at its own scale. The erosion rate is one of a node of the level's
//! cells (`footprint_m` = the level's cell size), so each iteration grooves the level's own cells
//! instead of spreading the layer's footprint over many of them. Each level draws its own
//! snowballs (the layer's seed plus the level).

use super::SnowballParams;
use crate::core::erosion::refine::{BringUp, Level, RefineParams, Refiner, no_state, own_job_bytes};
use crate::core::erosion::{JobInputs, ModelParams};

/// The model's registry entry's `refine`.
pub const REFINER: Refiner<SnowballParams> = Refiner {
    start: no_state,
    pass: None,
    bytes_per_node: |p, _| own_job_bytes(&ModelParams::Snowball(p.clone())),
    bring_up: BringUp::Smooth,
    own_job: Some(job),
};

/// One level's job (module doc): the layer's snowballs with the pass's density and path length,
/// the seed moved on by the level's index. `None` (no pass) with a density or a path of 0.
pub fn job(p: &SnowballParams, r: &RefineParams, lv: &Level, inputs: &JobInputs) -> Option<(ModelParams, JobInputs)> {
    if r.snowballs_per_km2 <= 0.0 || r.snowball_iterations == 0 {
        return None;
    }
    let mut s =
        SnowballParams { snowballs_per_km2: r.snowballs_per_km2, max_iterations: r.snowball_iterations, ..p.clone() };
    s.keep_rate_per_node(lv.map.cell_size);
    let model = ModelParams::Snowball(s);
    Some((model, JobInputs { seed: inputs.seed.wrapping_add(lv.index as u64), ..inputs.clone() }))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::core::Heightmap;
    use crate::core::erosion::refine::run_own_job;

    /// A rough hillside (1 m cells): a slope with fine noise on it, the finer grid's detail a
    /// build's base brings before the pass.
    fn rough(n: usize) -> Heightmap {
        Heightmap::from_fn(n, n, 1.0, |x, y| {
            let (x, y) = (x as f32, y as f32);
            0.3 * y + 0.8 * ((x * 1.7).sin() * (y * 2.3).cos()) + 0.5 * ((x * 0.9 + y * 1.3).sin())
        })
        .unwrap()
    }

    fn run(r: &RefineParams, index: usize) -> (Heightmap, bool) {
        let input = rough(96);
        let mut map = input.clone();
        let mut drainage = Vec::new();
        let mut lv =
            Level { map: &mut map, input: &input, drainage: &mut drainage, index, levels: 2, input_range: None };
        let ran = job(&SnowballParams::default(), r, &lv, &JobInputs::default()).is_some();
        run_own_job(job, &SnowballParams::default(), r, &mut lv, &JobInputs::default(), &AtomicBool::new(false))
            .unwrap();
        (map, ran)
    }

    /// The pass smooths and grooves the grid's own detail as the model does at that scale: the
    /// roughness between neighbours falls, the map stays finite, and the same level gives the
    /// same bits (another level draws other snowballs).
    #[test]
    fn the_pass_wears_down_the_finer_grids_detail_and_is_deterministic() {
        let r = RefineParams::default();
        let before = rough(96);
        let (a, ran) = run(&r, 1);
        assert!(ran);
        assert!(a.all_finite());
        let roughness = |m: &Heightmap| {
            let mut s = 0.0f64;
            for y in 1..m.height - 1 {
                for x in 1..m.width - 1 {
                    let lap = 4.0 * m.get(x, y) - m.get(x - 1, y) - m.get(x + 1, y) - m.get(x, y - 1) - m.get(x, y + 1);
                    s += (lap as f64).powi(2);
                }
            }
            s
        };
        assert!(roughness(&a) < 0.5 * roughness(&before), "{} vs {}", roughness(&a), roughness(&before));
        let (b, _) = run(&r, 1);
        assert_eq!(a.data, b.data);
        let (c, _) = run(&r, 2);
        assert_ne!(a.data, c.data, "each level draws its own snowballs");
    }

    #[test]
    fn no_density_or_no_path_is_no_pass() {
        for r in [
            RefineParams { snowballs_per_km2: 0.0, ..Default::default() },
            RefineParams { snowball_iterations: 0, ..Default::default() },
        ] {
            let (m, ran) = run(&r, 1);
            assert!(!ran);
            assert_eq!(m.data, rough(96).data);
        }
    }
}
