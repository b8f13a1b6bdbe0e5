//! Thermal erosion as a [`Simulation`]: one step = one iteration as counted on cells of
//! `iteration_cell_m`, which is [`ThermalParams::kernel_iterations`] iterations of the
//! [`ThermalKernel`] on the map's cells.

use super::super::hardness::{HardnessRule, check_hardness};
use super::super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation};
use super::{ThermalBooks, ThermalKernel, ThermalParams};
use crate::core::heightmap::Heightmap;

/// Thermal erosion as a [`Simulation`]: one step = one iteration on cells of `iteration_cell_m`.
pub struct ThermalJob {
    pub(super) hm: Heightmap,
    pub(super) params: ThermalParams,
    pub(super) kernel: ThermalKernel,
    pub(super) scratch: Vec<f32>,
    pub(super) maps: ErosionMaps,
    pub(super) books: ThermalBooks,
    pub(super) volume_before: f64,
    pub(super) done: u64,
}

impl ThermalJob {
    /// Validates everything and prepares the job.
    pub fn new(terrain: Heightmap, params: ThermalParams, inputs: JobInputs) -> Result<Self, JobError> {
        if terrain.data.len() != terrain.width * terrain.height {
            return Err(JobError::BadParam {
                name: "heightmap data",
                value: terrain.data.len() as f64,
                range: "width × height values",
            });
        }
        if !terrain.all_finite() {
            return Err(JobError::NonFinite);
        }
        // A steering mask scales what each node may give up (an erodibility multiplier).
        let hardness = match &inputs.steer {
            Some(s) => {
                s.check(terrain.len())?;
                if let Some(h) = &inputs.hardness {
                    check_hardness(h, terrain.len(), HardnessRule::NonNegative)?;
                }
                Some(s.scaled(inputs.hardness.as_deref()))
            }
            None => inputs.hardness,
        };
        let kernel =
            ThermalKernel::new(&params, terrain.width, terrain.height, terrain.cell_size, inputs.boundary, hardness)?
                .with_sea(&params, inputs.sea_level, terrain.cell_size);
        let n = terrain.len();
        let volume_before = terrain.sum();
        Ok(Self {
            hm: terrain,
            params,
            kernel,
            scratch: Vec::with_capacity(n),
            maps: ErosionMaps::new(n),
            books: ThermalBooks::default(),
            volume_before,
            done: 0,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &ThermalParams {
        &self.params
    }
}

impl Simulation for ThermalJob {
    fn step(&mut self) {
        if self.done >= self.params.iterations as u64 {
            return;
        }
        for _ in 0..self.params.kernel_iterations(self.hm.cell_size, self.done, 1) {
            let b = self.kernel.step(&mut self.hm.data, &mut self.scratch, Some(&mut self.maps));
            self.books.add(&b);
        }
        self.done += 1;
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.params.iterations as u64 }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger {
            eroded: self.books.eroded,
            deposited: self.books.deposited,
            lost_at_border: self.books.lost,
            clamped: 0.0,
            uplift: 0.0,
            suspended: 0.0,
            volume_before: self.volume_before,
            volume_after: self.hm.sum(),
        }
    }

    fn maps(&self) -> &ErosionMaps {
        &self.maps
    }

    fn fields(&self) -> Fields {
        Fields::default()
    }

    /// Applies the edit and rebases `volume_before` by its Σh change. An edit that changes the
    /// map's size or cell size, or leaves non-finite heights, is undone (the kernel is built for
    /// one geometry).
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        super::super::apply_edit(&mut self.hm, &mut self.volume_before, f);
    }
}
