//! Erosion models (SPEC §2) and what they share: boundary conditions, the sediment ledger, the
//! erosion/deposition map, and the [`Simulation`] interface the editor and the CLI drive.
//!
//! Every model works on a [`Heightmap`] in metres; volumes in the ledger are in
//! *metre·nodes* (sum of height changes over nodes); multiply by `cell_size²` for m³.
//!
//! ## The ledger identity
//! For any run, with `Σh` the sum of all heights:
//!
//! ```text
//! Σh_after − Σh_before = deposited − eroded                      (terrain books)
//! eroded + added = deposited + lost_at_border + suspended         (material books)
//! ```
//!
//! `added` is material the model created (e.g. the minimum-height guard lifting a node back up, or
//! uplift in stream-power) and is reported as `clamped`/`uplift` by each model; see [`Ledger`].
//!
//! ## Layout
//! Each model is a directory: `mod.rs` holds the paper, the equations and the scheme,
//! `params.rs` its parameters, then its kernels, job and `tests.rs`. What the models share has
//! its own module: `ledger` (books, maps, fields, snapshots), `error` (job errors and the
//! parameter range check), [`hardness`] (hardness maps and their check), `particles` (geometry
//! and the tile scheduler of droplet and snowball), `stencil` (grid neighbours of thermal and
//! pipe), `simd` (the instruction-set dispatch of the grid kernels) and `setup` (what the jobs'
//! constructors share: the particle models' parameter preamble, the hardness and steering checks
//! and the erodibility they give).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::heightmap::Heightmap;

pub mod droplet;
mod error;
pub mod hardness;
mod ledger;
pub mod masks;
pub(crate) mod particles;
pub mod pipe;
pub mod refine;
pub mod registry;
pub(crate) mod setup;
pub(crate) mod simd;
pub mod snowball;
pub mod steer;
pub(crate) mod stencil;
pub mod stream_power;
pub mod thermal;

pub use error::{JobError, check_param};
pub use ledger::{ErosionMaps, Fields, Ledger, Snapshot};
pub use registry::{GridChange, MODELS, MapSize, ModelEntry, ModelParams};
pub use steer::Steer;

crate::param_enum! {
    /// What happens at one edge of the map.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum EdgeMode {
        /// Closed: nothing leaves; particles/water reflect or stop at the wall.
        Wall,
        /// Open: water and sediment that cross the edge leave the map and are counted as lost.
        #[default]
        Drain,
        /// Periodic: the opposite edge is the neighbour (torus).
        Wrap,
    }
}

crate::params! {
    /// Edge modes of the four sides. `left` is x = 0, `right` x = width−1, `top` y = 0, `bottom` y = height−1.
    /// Wrap must be set on both sides of an axis to take effect; a lone `Wrap` acts as `Wall`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Boundary {
        /// The x = 0 edge: Wall, Drain or Wrap.
        pub left: EdgeMode = EdgeMode::Drain;
        /// The x = width − 1 edge: Wall, Drain or Wrap.
        pub right: EdgeMode = EdgeMode::Drain;
        /// The y = 0 edge: Wall, Drain or Wrap.
        pub top: EdgeMode = EdgeMode::Drain;
        /// The y = height − 1 edge: Wall, Drain or Wrap.
        pub bottom: EdgeMode = EdgeMode::Drain;
    }
}

impl Boundary {
    /// Every combination of edge modes is valid; `Ok` always (here for symmetry with the other
    /// parameter types).
    pub fn validate(&self) -> Result<(), JobError> {
        Ok(self.check_ranges()?)
    }

    /// The same mode on all four sides.
    pub const fn all(mode: EdgeMode) -> Self {
        Self { left: mode, right: mode, top: mode, bottom: mode }
    }
    /// True when x wraps (both left and right are `Wrap`).
    pub fn wrap_x(&self) -> bool {
        self.left == EdgeMode::Wrap && self.right == EdgeMode::Wrap
    }
    /// True when y wraps (both top and bottom are `Wrap`).
    pub fn wrap_y(&self) -> bool {
        self.top == EdgeMode::Wrap && self.bottom == EdgeMode::Wrap
    }
    /// Effective mode of a side, with a lone `Wrap` read as `Wall`.
    pub fn effective(&self, side: Side) -> EdgeMode {
        let (m, wraps) = match side {
            Side::Left => (self.left, self.wrap_x()),
            Side::Right => (self.right, self.wrap_x()),
            Side::Top => (self.top, self.wrap_y()),
            Side::Bottom => (self.bottom, self.wrap_y()),
        };
        if m == EdgeMode::Wrap && !wraps { EdgeMode::Wall } else { m }
    }
}

/// One side of the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Column 0.
    Left,
    /// The last column.
    Right,
    /// Row 0.
    Top,
    /// The last row.
    Bottom,
}

/// How far a job has come, in the model's own unit of work (droplets, time steps, iterations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Units done so far.
    pub done: u64,
    /// Units the job will do in all.
    pub total: u64,
}

impl Progress {
    /// Fraction done in `[0, 1]`.
    pub fn fraction(&self) -> f32 {
        if self.total == 0 { 1.0 } else { (self.done as f64 / self.total as f64).min(1.0) as f32 }
    }
}

/// A running erosion job. `step` does one indivisible unit (a batch of particles, one time step)
/// so that the state between calls is always consistent: a cancel between steps leaves a valid map.
pub trait Simulation: Send {
    /// Advances by one unit. Does nothing once [`Self::is_done`].
    fn step(&mut self);
    /// Work done / total.
    fn progress(&self) -> Progress;
    /// True when all requested work is done.
    fn is_done(&self) -> bool {
        let p = self.progress();
        p.done >= p.total
    }
    /// The current terrain.
    fn heightmap(&self) -> &Heightmap;
    /// The books so far.
    fn ledger(&self) -> Ledger;
    /// Per-node erosion/deposition totals so far.
    fn maps(&self) -> &ErosionMaps;
    /// Model-specific fields (water, sediment, flow…), copied.
    fn fields(&self) -> Fields;
    /// Applies end-of-run post-processing (e.g. blur) that must happen once. Called by
    /// [`run`] after the last step, and also on cancel so the map is final-consistent.
    fn finish(&mut self) {}
    /// A consistent copy of everything.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            heightmap: self.heightmap().clone(),
            fields: self.fields(),
            ledger: self.ledger(),
            maps: self.maps().clone(),
            progress: self.progress(),
        }
    }
    /// Replaces the terrain while the job runs (a brush stroke applied to a running simulation).
    /// The difference is booked as `clamped`-free external edit: ledgers rebase `volume_before`.
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap));
    /// What the run has to tell the user so far, oldest first (e.g. a GPU job that lost its
    /// device and went on on the CPU). Library code prints nothing: the CLI prints each note
    /// once, the editor shows the newest in its status line. The CPU models have none.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Applies an external edit (a brush stroke) to a running job's terrain, keeping the books closed:
/// `volume_before` is moved by the edit's Σh change, so the edit is not counted as erosion or
/// deposition. An edit that changes the map's size or cell size, or leaves a non-finite height,
/// is refused and undone whole (a job's buffers are built for one geometry). Returns whether the
/// edit was kept. Every model's [`Simulation::edit_terrain`] goes through here.
pub(crate) fn apply_edit(hm: &mut Heightmap, volume_before: &mut f64, f: &mut dyn FnMut(&mut Heightmap)) -> bool {
    let backup = hm.clone();
    let before = backup.sum();
    f(hm);
    let same_geometry = hm.width == backup.width
        && hm.height == backup.height
        && hm.cell_size == backup.cell_size
        && hm.data.len() == backup.data.len();
    if !same_geometry || !hm.all_finite() {
        *hm = backup;
        return false;
    }
    *volume_before += hm.sum() - before;
    true
}

/// How a [`run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The simulation did all its work.
    Finished,
    /// `cancel` was set; it stopped between two steps.
    Cancelled,
}

/// Drives a simulation to the end, calling `on_step` after every step (for progress bars and
/// snapshots) and stopping between steps as soon as `cancel` is set.
pub fn run(sim: &mut dyn Simulation, cancel: &AtomicBool, mut on_step: impl FnMut(&dyn Simulation)) -> RunEnd {
    while !sim.is_done() {
        if cancel.load(Ordering::Relaxed) {
            sim.finish();
            return RunEnd::Cancelled;
        }
        sim.step();
        on_step(sim);
    }
    sim.finish();
    RunEnd::Finished
}

/// Common inputs of every job besides the model parameters.
#[derive(Clone, Debug, Default)]
pub struct JobInputs {
    /// Per-node erodibility multiplier (1 = normal, 0 = unerodible rock). `None` = all 1.
    pub hardness: Option<Vec<f32>>,
    /// Edge conditions.
    pub boundary: Boundary,
    /// Seed for every random choice of the model.
    pub seed: u64,
    /// Height of the sea (or any base level), metres: the end of every flow. Nodes at or below it
    /// are water; what reaches them settles there. `None` = no sea (only the map edges drain).
    pub sea_level: Option<f32>,
    /// A mask that steers the run: where the water comes from and, with `sink`, where it ends
    /// (see [`steer`]). `None` = every node alike, exactly as without the field.
    pub steer: Option<Steer>,
}

/// Builds the job for `params` over `terrain` (on the CPU; `crate::backend` chooses the GPU).
pub fn build(terrain: Heightmap, params: &ModelParams, inputs: JobInputs) -> Result<Box<dyn Simulation>, JobError> {
    if !terrain.all_finite() {
        return Err(JobError::NonFinite);
    }
    if let Some(h) = &inputs.hardness
        && h.len() != terrain.len()
    {
        return Err(JobError::HardnessSize { expected: terrain.len(), got: h.len() });
    }
    if let Some(s) = &inputs.steer {
        s.check(terrain.len())?;
    }
    // The model's CPU job, as its registry entry declares it.
    params.build_cpu(terrain, inputs)
}
