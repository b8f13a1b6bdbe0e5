//! The thermal model's parameters ([`ThermalParams`]): fields, defaults, validation and the
//! talus slope they give.

use serde::{Deserialize, Serialize};

use super::super::registry::MapSize;
use super::super::{JobError, check_param};

crate::params! {
    /// Parameters of thermal erosion.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct ThermalParams {
        /// Talus (repose) angle in degrees: slopes steeper than this shed material.
        pub talus_angle: f32 = 30.0, unit "°", range [0.0, 89.9];
        /// The talus slope given directly as a tangent (metres of drop per metre), overriding `talus_angle`
        /// when set.
        pub talus_tan: Option<f32> = None, unit "m/m", range [0.0, 1.0e4];
        /// Fraction of a node's largest excess `M` removed per iteration: the node sheds `rate·M/2` of
        /// material, which lowers the difference to a lone steep neighbour by `rate·M` (so `rate = 1`
        /// removes it in one iteration). Dimensionless (seed 003's thermal rate).
        pub rate: f32 = 0.5, range [0.0, 1.0];
        /// Number of iterations (the job's unit of work), counted on cells of `iteration_cell_m`. When
        /// nested in the pipe model: iterations per application.
        pub iterations: u32 = 50;
        /// The cell size `iterations` is counted for, metres. A map of `Δx` cells runs
        /// `(iteration_cell_m/Δx)²` kernel iterations per iteration ([`ThermalParams::kernel_iterations`]),
        /// so a run relaxes slopes over the same metres at any resolution; on cells of this size the
        /// count is run as it is.
        pub iteration_cell_m: f32 = 2.0, unit "m", range [0.0, 1.0e6];
        /// Talus (repose) angle under water in degrees: where the job has a sea level, a pair of neighbours
        /// both at or below it settles to this angle instead of `talus_angle` (saturated sediment rests
        /// flatter).
        pub underwater_angle: f32 = 20.0, unit "°", range [0.0, 89.9];
    }
}

/// Most kernel iterations one iteration may ask on fine cells ([`ThermalParams::check_cells`]).
pub const MAX_ITERATION_SCALE: f64 = 4096.0;

impl ThermalParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), JobError> {
        self.check_ranges()?;
        Ok(())
    }

    /// Version-1 values to convert (see [`crate::core::units`]): none. The angles are angles and
    /// the kernel turns them into height differences with the map's cell size; `rate` is a
    /// fraction per iteration; the iteration count is scaled with the cells
    /// ([`Self::kernel_iterations`]).
    pub fn upgrade_units(&mut self, _map: MapSize) {}

    /// Kernel iterations per iteration asked on cells of `lx` metres: `(iteration_cell_m/lx)²`.
    ///
    /// Why the square: the update moves `a·M/2` between neighbours whose excess over the talus
    /// drop `T·Δx` is `M`, so on a slope `s > T` a node's change per iteration is
    /// `≈ (a/2)·Δx²·∂ₓ(s − T)₊`: a diffusion of the excess slope with a diffusivity of `a·Δx²/2`
    /// per iteration. `k` iterations reach `∝ Δx·√k`, and the same reach on `N×` finer cells
    /// takes `N²·k` iterations. Measured: a 12 m cliff sheds the same 8 m apron after 25 / 100 /
    /// 400 iterations at 2 / 1 / 0.5 m cells (test `the_same_iterations_relax_a_cliff_over_the_same_metres_at_any_cell_size`).
    pub fn iteration_scale(&self, lx: f32) -> f64 {
        let r = self.iteration_cell_m as f64 / lx as f64;
        r * r
    }

    /// Kernel iterations the `a`-th (from 0) group of `per` iterations runs on cells of `lx`
    /// metres: `round((a+1)·per·f) − round(a·per·f)` with `f` = [`Self::iteration_scale`], so
    /// any number of groups runs `round(groups·per·f)` iterations in all, spread evenly (the
    /// thermal job's step is a group of one; the pipe model's interleaved pass one of
    /// `iterations`). With `f = 1` every group is `per`, bit for bit as before the scale.
    pub fn kernel_iterations(&self, lx: f32, a: u64, per: u64) -> u64 {
        let f = self.iteration_scale(lx);
        if f == 1.0 {
            return per;
        }
        let upto = |i: u64| (i as f64 * per as f64 * f).round() as u64;
        upto(a + 1).saturating_sub(upto(a))
    }

    /// What `iterations` come to on cells of `lx` metres when they are not counted on those
    /// cells: one line for the CLI, e.g. "thermal: 50 iterations counted on 2 m cells run as 3
    /// kernel iterations on these 8 m cells (iteration_cell_m)"; `None` on cells of
    /// `iteration_cell_m`.
    pub fn count_note(&self, lx: f32) -> Option<String> {
        let f = self.iteration_scale(lx);
        (f != 1.0).then(|| {
            let n = (self.iterations as f64 * f).round() as u64;
            format!(
                "thermal: {} iterations counted on {} m cells run as {n} kernel iterations on these {lx} m cells (iteration_cell_m)",
                self.iterations, self.iteration_cell_m
            )
        })
    }

    /// Turns the count into what it comes to on cells of `lx` metres, counted on those cells (a
    /// run of its own that owes a fraction of a kernel iteration, as an erosion-brush dab on
    /// coarse cells does: 5 iterations counted on 2 m cells are 0.31 of one on 8 m cells). The
    /// count becomes `⌊k·f⌋`, plus one when `u` (uniform in `[0, 1)`, drawn by the caller) is
    /// below the fraction, so many such runs relax the same metres on average.
    pub fn count_on_own_cells(&mut self, lx: f32, u: f64) {
        let k = self.iterations as f64 * self.iteration_scale(lx);
        let whole = k.floor();
        let n = whole + if u < k - whole { 1.0 } else { 0.0 };
        self.iterations = n.min(u32::MAX as f64) as u32;
        self.keep_iterations_per_node(lx);
    }

    /// Refuses cells so much finer than `iteration_cell_m` that one iteration would run more
    /// than [`MAX_ITERATION_SCALE`] kernel iterations.
    pub fn check_cells(&self, lx: f32) -> Result<(), JobError> {
        check_param(
            "kernel iterations per iteration ((iteration_cell_m/cell_size)²)",
            self.iteration_scale(lx),
            0.0,
            MAX_ITERATION_SCALE,
            "≤ 4096: iteration_cell_m at most 64 cells; lower it, or set it to the map's cell size",
        )
    }

    /// Keeps the iteration count per node, as projects of format 5 and older ran it
    /// (`iteration_cell_m` = their cell size): they relax their own map bit for bit as before.
    pub fn keep_iterations_per_node(&mut self, cell_size: f32) {
        self.iteration_cell_m = cell_size.min(1.0e6);
    }

    /// The talus slope as a tangent (`talus_tan`, or `tan(talus_angle)`).
    pub fn talus_slope(&self) -> f32 {
        match self.talus_tan {
            Some(t) => t,
            None => (self.talus_angle as f64).to_radians().tan() as f32,
        }
    }
}
