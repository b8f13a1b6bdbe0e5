//! Erosion on the way up (issue #34): what a build does at each level of its ×2 ladder from the
//! preview to the build's size, so a 4K–16K build holds the preview's landforms *and* the erosion
//! detail its own cells can carry.
//!
//! After Schott, Paris, Fournier, Guérin & Galin (2024), *Terrain Amplification using Multi-scale
//! Erosion*, ACM TOG 43(4): the preview's eroded state is level 0; each level brings the state up
//! ×2 (height, hardness, the drainage where the model keeps it) and runs a short detail pass that
//! adds what that level's cells can hold. Their passes run stream power, thermal erosion and
//! deposition from 256² to 2048² with the stream-power steps roughly halving per level
//! (3000/1500/700/400) while the thermal ones grow; drainage starts afresh at each level, so fine
//! levels carve gullies inside the valleys the coarse levels made and never re-route the map.
//!
//! Here each model states its own pass (a stencil over the level's grid: it bands, tiles and runs
//! on the GPU like the others), in world units — years, degrees, particles per km², metres — so a
//! level at 0.25 m cells and one at 8 m cells ask for the same land. The parameters of the passes
//! are [`RefineParams`]; the ladder itself (levels, bringing the state up, the final blend) is the
//! build's (`editor::build`).

use std::sync::atomic::AtomicBool;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{JobError, JobInputs, ModelParams};
use crate::core::heightmap::Heightmap;

crate::params! {
    /// How a build refines an erosion layer at each level of its ladder (module doc). Stream
    /// power's years are those of the finest level (the build's own size); each level below it
    /// runs `1 / level_decay` times the years of the level above (Schott et al. 2024 halve their
    /// steps from one level to the next finer one), so the finest detail has the same time to form
    /// whatever the number of levels.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct RefineParams {
        /// Stream power: years simulated at the finest level (the build's size), in `[0, 1e6]`; 0
        /// turns the passes off (the levels are only brought up).
        pub stream_power_years: f32 = 10000.0, unit "yr", range [0.0, 1.0e6];
        /// Each finer level runs this share of the years of the level below it, in `[0.1, 1]`.
        pub level_decay: f32 = 0.5, range [0.1, 1.0];
        /// Stream power: time steps per level, in `[1, 10000]`. Each step re-accumulates the
        /// drainage by one sweep, so this is also how far, in nodes, the flow reorganises around
        /// the gullies the level cuts.
        pub stream_power_steps: u32 = 40, range [1.0, 10000.0];
        /// Stream power: the exponent of the pass's multiple flow directions, a whole number in
        /// `[1, 8]`: the drainage of the sweeps splits over the lower neighbours as `S^p`. Larger
        /// values gather the flow into the gullies the level cuts faster (a few sweeps reach what
        /// a full routing would); 8 is close to single-direction flow and draws grid-aligned rills.
        pub flow_exponent: u32 = 4, range [1.0, 8.0];
        /// Stream power: the erodibility `K` of the pass as a multiple of the layer's, in
        /// `[0, 10]`: how hard the short pass cuts gullies into slopes the preview left smooth.
        pub stream_power_strength: f32 = 2.0, range [0.0, 10.0];
        /// Stream power: sweeps of local drainage accumulation before a level's first step, in
        /// `[0, 1000]` (the drainage brought up from the coarser level, re-routed on the finer
        /// heights over this many nodes).
        pub drainage_sweeps: u32 = 8, range [0.0, 1000.0];
        /// Stream power: the deposition coefficient `G` of the pass, dimensionless, in `[0, 10]`
        /// (Davy & Lague 2009; Yuan et al. 2019): the sediment a gully carries settles at
        /// `G·Q_s/A` m/yr (`Q_s` its flux, m³/yr; `A` the drainage area, m²), so gully floors
        /// and the slope breaks below them take an alluvial fill while large rivers carry their
        /// load on. 0 turns deposition off (detachment-limited, the gullies stay V-shaped).
        pub deposition: f32 = 0.0, range [0.0, 10.0];
        /// Width, in cells of the level, of the Gaussian whose share of a pass's change is taken
        /// out again, in `[0, 16]`: that share is what the coarser levels already hold, so the pass
        /// adds detail and moves none of their landforms. 0 keeps the pass's whole change.
        pub coarse_sigma_cells: f32 = 2.0, range [0.0, 16.0];
        /// Thermal erosion: iterations at every level, in `[0, 100000]`, with the layer's talus
        /// angle (degrees) and rate.
        pub thermal_iterations: u32 = 20, range [0.0, 100000.0];
        /// Droplets: particles per km² of the map at every level, in `[0, 1e9]`. A balance,
        /// measured on the default island (2 m cells) built at 2049² and 4097²: the preview's
        /// droplet channels are one node wide and braided, and more droplets at a finer level
        /// re-route them (channel parity 84 / 81 % at 1 000, 83 / 80 % at 1 400, 81 / 77 % at
        /// 2 000 per km², at 2049², with 30 m paths), while fewer leave the finest level short of
        /// rills (fine relief at 4097² 0.44 of a native run's at 1 000, 0.57 at 1 400, 0.74 at
        /// 2 000). Since builds take the project's normalisation, 1 000 and 1 200 per km² gave
        /// 78 / 79 % and 77 / 76 % with 30 m paths; the shorter default path is what holds the
        /// channels (`droplet_path_m`).
        pub droplets_per_km2: f64 = 1400.0, unit "1/km²", range [0.0, 1.0e9];
        /// Droplets: the longest path of a droplet, metres, in `[0, 1e6]`: short, so droplets
        /// carve rills where they land and do not re-route the channels of the coarser levels.
        /// Measured on the default island (2 m cells) at 1 400 per km²: channel parity 89.9 /
        /// 87.7 % at 10 m, 92.5 / 88.7 % at 15 m, 86.8 / 84.7 % at 20 m, 92.1 / 87.5 % at 25 m,
        /// 80.7 / 78.3 % at 30 m (2049²; 4097² gives the same to 0.4 %), fine relief at 4097²
        /// 0.75 of a native run's at 15 m, 0.65 at 20 m, 0.57 at 30 m.
        pub droplet_path_m: f32 = 15.0, unit "m", range [0.0, 1.0e6];
        /// Droplets: the erosion radius in cells of the level, in `[0.5, 16]` (the layer's own
        /// radius, in metres, is the preview's scale; the pass works at the level's).
        pub droplet_radius_cells: f32 = 1.5, range [0.5, 16.0];
        /// Snowballs: particles per km² of the map at every level, in `[0, 1e9]`, with the
        /// layer's speed, offset and blur in metres.
        pub snowballs_per_km2: f64 = 4000.0, unit "1/km²", range [0.0, 1.0e9];
        /// Snowballs: the most iterations of a particle at every level, in `[0, 1e6]` (0: no
        /// pass): short paths groove the slopes where they land.
        pub snowball_iterations: u32 = 20, range [0.0, 1.0e6];
    }
}

impl RefineParams {
    /// Checks every parameter against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        Ok(self.check_ranges()?)
    }

    /// The years of stream power at `level` of `levels` (1 = the first level above the preview,
    /// `levels` = the build's own size).
    pub fn stream_power_years_at(&self, level: usize, levels: usize) -> f32 {
        let below_top = levels.saturating_sub(level) as i32;
        self.stream_power_years / self.level_decay.max(0.1).powi(below_top)
    }
}

/// Keeps only the detail of a pass: with `c = after − before` (the pass's change) and `G` a
/// Gaussian of `σ` cells, `after ← before + c − G * c`. `G * c` is the part of the change the
/// coarser level already holds (its lowering or raising of whole valleys and hillsides), so what
/// stays are the gullies, rills and crests the level's own cells resolve; the landforms of the
/// levels below do not move. `σ ≤ 0` keeps the whole change.
/// `before` is used up as the change's buffer.
pub fn detail_only(mut before: Vec<f32>, after: &mut [f32], w: usize, h: usize, sigma: f32) {
    if sigma <= 0.0 || before.len() != after.len() || after.len() != w * h {
        return;
    }
    before.par_iter_mut().zip(&*after).for_each(|(c, &a)| *c = a - *c);
    crate::core::filter::gaussian_blur(&mut before, w, h, sigma);
    after.par_iter_mut().zip(&before).for_each(|(a, &g)| *a -= g);
}

/// One level of the ladder, as a model's detail pass sees it.
pub struct Level<'a> {
    /// The layer's state at this level (brought up from the coarser level); the pass changes it
    /// in place.
    pub map: &'a mut Heightmap,
    /// The fold below the layer at this level (what the layer ran on, at this resolution): the
    /// sea mask and the terrain-following uplift are taken from it, as the model takes them from
    /// its input.
    pub input: &'a Heightmap,
    /// The drainage area of every node, m², as the model keeps it: brought up from the coarser
    /// level (empty when the model keeps none). The pass leaves its own for the next level.
    pub drainage: &'a mut Vec<f32>,
    /// 1 for the first level above the preview, 2 for the next, … up to `levels`.
    pub index: usize,
    /// How many levels the ladder has (the last is the build's own size).
    pub levels: usize,
    /// The lowest and highest height of the fold below the layer over the whole preview: a pass
    /// that scales by the map's range (stream power's terrain-following uplift) takes it from
    /// here, so that every level of a build and every window of it (a build's loupe,
    /// `editor::build::loupe`) scale by one range. `None`: the level's own input's range.
    pub input_range: Option<(f32, f32)>,
}

/// How a model's change is brought up one level (module doc): interpolated with the bounded
/// Catmull–Rom kernel (no overshoot, exact on the coarser level's nodes), then, for `Smooth`,
/// blurred by a Gaussian of `σ = 0.4·ratio` cells, which takes out the axis-aligned images any
/// separable interpolator leaves above the coarser level's Nyquist frequency. The finer level's
/// own detail of the fold below (the base's finer octaves, a lower layer's refined gullies) is
/// kept in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BringUp {
    /// Interpolated and smoothed: for models whose change is smooth at the preview's scale
    /// (stream power, thermal erosion).
    Smooth,
    /// Interpolated only: for models whose channels are one node wide and braided (droplets),
    /// where a blur shifts their heights on the coarser level's nodes enough to re-route them.
    Exact,
}

/// A model's detail pass, its registry entry's `refine` (`None`: the model has none, and a build
/// brings its result up as Upsample does).
pub struct Refiner<P> {
    /// The state the passes start from on the preview's result (the drainage, m², where the
    /// model keeps it; empty otherwise).
    pub start: fn(&P, &Heightmap, &JobInputs) -> Result<Vec<f32>, JobError>,
    /// One level's pass of its own: the model's parameters (as the layer ran them), the refine
    /// settings, the level, the model's inputs at the level (hardness at this resolution,
    /// boundary, sea, seed), and a cancel flag read between steps. `None` for a model whose pass
    /// is its [`Refiner::own_job`], run to its end ([`run_own_job`]).
    pub pass: Option<fn(&P, &RefineParams, &mut Level, &JobInputs, &AtomicBool) -> Result<(), JobError>>,
    /// Bytes per node the pass holds at its peak besides the level's map and drainage, with the
    /// build's refine settings (a build's memory estimate).
    pub bytes_per_node: fn(&P, &RefineParams) -> u64,
    /// How the model's change is brought up from one level to the next.
    pub bring_up: BringUp,
    /// For a pass that is the model's own job run briefly with the level's settings
    /// ([`run_own`]): that job's parameters and inputs at a level (`None` from the function: no
    /// pass at this level). A backend runs such a job where the model's Simulate runs, GPU
    /// included (`crate::backend::refine_pass`).
    pub own_job: Option<OwnJob<P>>,
}

/// The level's job of a pass that runs the model's own job ([`Refiner::own_job`]).
pub type OwnJob<P> = fn(&P, &RefineParams, &Level, &JobInputs) -> Option<(ModelParams, JobInputs)>;

/// The CPU pass of a model whose pass is its own job: the level's job from `job` (none: no
/// pass at this level) run to its end with [`run_own`].
pub fn run_own_job<P>(
    job: OwnJob<P>,
    p: &P,
    r: &RefineParams,
    lv: &mut Level,
    inputs: &JobInputs,
    cancel: &AtomicBool,
) -> Result<(), JobError> {
    match job(p, r, lv, inputs) {
        Some((model, inputs)) => run_own(&model, lv, &inputs, cancel),
        None => Ok(()),
    }
}

/// The `start` of a model that keeps no state between levels.
pub fn no_state<P>(_: &P, _: &Heightmap, _: &JobInputs) -> Result<Vec<f32>, JobError> {
    Ok(Vec::new())
}

/// The `bytes_per_node` of a pass that runs the model's own job ([`run_own`]): the job's map and
/// its working arrays.
pub fn own_job_bytes(model: &ModelParams) -> u64 {
    4 + model.build_bytes_per_node()
}

/// Runs the model `model`'s own CPU job on the level's map to its end (the passes of thermal
/// erosion and droplets are their models run briefly with the level's settings); a cancel stops
/// it where it is.
pub fn run_own(model: &ModelParams, lv: &mut Level, inputs: &JobInputs, cancel: &AtomicBool) -> Result<(), JobError> {
    let mut job = super::build(lv.map.clone(), model, inputs.clone())?;
    let _ = super::run(job.as_mut(), cancel, |_| {});
    lv.map.data.copy_from_slice(&job.heightmap().data);
    Ok(())
}
