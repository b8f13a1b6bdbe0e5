//! The pipe-model job: the run's constants ([`Consts`]), the state and the order of the sweeps
//! of one time step, the water books ([`WaterBudget`]), and the [`Simulation`] implementation.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::super::hardness::HardnessRule;
use super::super::setup::erodibility;
use super::super::stencil::Edges;
use super::super::thermal::{ThermalBooks, ThermalKernel};
use super::super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation, check_param};
use super::consts::{Consts, RowB, sum_f64};
use super::transport::{advect_row_fast, maccormack_row_fast, remap_row_fast};
use super::water::{BIn, BOut, flux_row_fast, water_row_fast};
use super::{Advection, PipeParams, add_source, fill_sea, sea_floor};
use crate::core::erosion::registry::MapSize;
use crate::core::heightmap::Heightmap;
use crate::core::units::Sampling;

/// The water books of a run, metres of depth summed over nodes (multiply by `lx·ly` for m³).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WaterBudget {
    /// Water added by rain and sources.
    pub rain: f64,
    /// Water evaporated.
    pub evaporated: f64,
    /// Water that left across drain edges.
    pub drained: f64,
    /// Net water the sea took in (with [`JobInputs::sea_level`]): what flowed and rained into sea
    /// nodes, less the water the sea supplied to hold its level (its initial fill, negative, and
    /// nodes that became sea). 0 without a sea.
    #[serde(default)]
    pub sea: f64,
    /// Water on the map now (the sea's water included).
    pub stored: f64,
}

impl WaterBudget {
    /// `rain − evaporated − drained − sea − stored`: should be ~0 (f32 rounding of the depths).
    pub fn error(&self) -> f64 {
        self.rain - self.evaporated - self.drained - self.sea - self.stored
    }
}

/// The pipe-model job.
pub struct PipeJob {
    pub(super) hm: Heightmap,
    pub(super) params: PipeParams,
    /// Constants of one sub-step.
    pub(super) c: Consts,
    /// Sub-steps per time step ([`super::Stepping`]).
    pub(super) sub_steps: u32,
    pub(super) d: Vec<f32>,
    pub(super) s: Vec<f32>,
    pub(super) fl: Vec<f32>,
    pub(super) fr: Vec<f32>,
    pub(super) ft: Vec<f32>,
    pub(super) fb: Vec<f32>,
    pub(super) u: Vec<f32>,
    pub(super) v: Vec<f32>,
    /// Sediment after erosion/deposition (transport input).
    pub(super) s1: Vec<f32>,
    /// MacCormack's intermediate field.
    pub(super) s2: Vec<f32>,
    /// Second terrain buffer.
    pub(super) b_new: Vec<f32>,
    /// Per-node water input Δt·r (rain map + sources), when not uniform.
    pub(super) water_in: Option<Vec<f32>>,
    /// Σ Δt·r over all nodes, for the water books.
    pub(super) water_in_sum: f64,
    pub(super) hardness: Option<Vec<f32>>,
    pub(super) thermal: Option<(ThermalKernel, Vec<f32>)>,
    /// The cell size the job runs on, metres (`cell_size`, else the map's).
    pub(super) lx: f32,
    pub(super) maps: ErosionMaps,
    pub(super) eroded: f64,
    pub(super) deposited: f64,
    pub(super) lost: f64,
    pub(super) clamped: f64,
    pub(super) suspended: f64,
    pub(super) water: WaterBudget,
    pub(super) volume_before: f64,
    pub(super) done: u64,
    /// Sink nodes of a steering mask ([`JobInputs::steer`] with `sink`): water that reaches them
    /// is removed, their suspended sediment settles. `None` without.
    pub(super) sinks: Option<Vec<u32>>,
}

impl PipeJob {
    /// Validates everything and prepares the job (applies the first water increment). Version-1
    /// values still in `params` (river sources in nodes) are taken as made for `terrain`
    /// ([`PipeParams::upgrade_units`]).
    pub fn new(terrain: Heightmap, mut params: PipeParams, mut inputs: JobInputs) -> Result<Self, JobError> {
        let (w, h) = (terrain.width, terrain.height);
        if w == 0 || h == 0 || terrain.data.len() != w * h {
            return Err(JobError::BadParam {
                name: "heightmap data",
                value: terrain.data.len() as f64,
                range: "width × height values",
            });
        }
        if !terrain.all_finite() {
            return Err(JobError::NonFinite);
        }
        params.check_ranges()?;
        let lx = params.cell_size.unwrap_or(terrain.cell_size);
        check_param("cell_size", lx as f64, 1.0e-6, 1.0e6, "[1e-6, 1e6] m")?;
        if crate::core::units::Legacy::has_legacy(&params) {
            params.upgrade_units(MapSize::of(&terrain));
        }
        params.validate(w, h, lx)?;
        let n = w * h;
        // Sink mode: the mask multiplies the erodibility (of the flow and the interleaved thermal).
        let hardness = erodibility(n, &mut inputs, HardnessRule::NonNegative)?;
        let sinks = inputs.steer.as_ref().filter(|s| s.sink).map(|s| {
            s.weights.iter().enumerate().filter(|(_, w)| **w == 0.0).map(|(i, _)| i as u32).collect::<Vec<u32>>()
        });
        // Every constant is per sub-step (`Stepping`): `dt` below is the sub-step's.
        let st = params.stepping(lx);
        let dt = st.dt;
        let c = Consts {
            w,
            h,
            kflux: dt * params.pipe_area * params.gravity / params.pipe_length,
            area_dt: lx * lx / dt,
            dt_area: dt / (lx * lx),
            inv_l: 1.0 / lx,
            vmax: st.vmax,
            courant: dt / lx,
            kc: params.capacity,
            ks: st.erosion,
            kd: st.deposition,
            min_tilt: params.min_tilt,
            depth_on: params.max_depth > 0.0,
            inv_max_depth: if params.max_depth > 0.0 { 1.0 / params.max_depth } else { 0.0 },
            keep: (1.0 - params.evaporation * dt).max(0.0),
            rain_dt: dt * params.rain,
            sea: sea_floor(inputs.sea_level),
            sea_on: inputs.sea_level.is_some_and(f32::is_finite),
            edges: Edges::new(&inputs.boundary),
        };
        // Water input per node: rain (uniform or map) plus sources.
        let water_in = if params.rain_map.is_some() || !params.sources.is_empty() || inputs.steer.is_some() {
            let mut r: Vec<f32> = match &params.rain_map {
                Some(m) => m.clone(),
                None => vec![params.rain; n],
            };
            for src in &params.sources {
                add_source(&mut r, w, h, src, Sampling::new(lx));
            }
            // A steering mask: the water input of each node times its weight.
            if let Some(s) = &inputs.steer {
                r.iter_mut().zip(&s.weights).for_each(|(v, k)| *v *= k);
            }
            r.iter_mut().for_each(|v| *v *= dt);
            Some(r)
        } else {
            None
        };
        let water_in_sum = match &water_in {
            Some(r) => r.iter().map(|&v| v as f64).sum(),
            None => c.rain_dt as f64 * n as f64,
        };
        let mut d = match &water_in {
            Some(r) => r.clone(),
            None => vec![c.rain_dt; n],
        };
        // The sea starts full: its level is the sea level, and the first rain on it joins it.
        let sea_fill = fill_sea(&terrain.data, &mut d, c.sea, c.sea_on);
        let thermal = match &params.thermal {
            Some(tp) => {
                let sea = if params.thermal_sea { inputs.sea_level } else { None };
                let k = ThermalKernel::new(tp, w, h, lx, inputs.boundary, hardness.clone())?.with_sea(tp, sea, lx);
                Some((k, Vec::with_capacity(n)))
            }
            None => None,
        };
        let volume_before = terrain.sum();
        let s2 = if params.advection == Advection::MacCormack { vec![0.0; n] } else { Vec::new() };
        Ok(Self {
            hm: terrain,
            params,
            c,
            sub_steps: st.n,
            water: WaterBudget { rain: water_in_sum, sea: sea_fill, ..Default::default() },
            d,
            s: vec![0.0; n],
            fl: vec![0.0; n],
            fr: vec![0.0; n],
            ft: vec![0.0; n],
            fb: vec![0.0; n],
            u: vec![0.0; n],
            v: vec![0.0; n],
            s1: vec![0.0; n],
            s2,
            b_new: vec![0.0; n],
            water_in,
            water_in_sum,
            hardness,
            sinks,
            thermal,
            lx,
            maps: ErosionMaps::new(n),
            eroded: 0.0,
            deposited: 0.0,
            lost: 0.0,
            clamped: 0.0,
            suspended: 0.0,
            volume_before,
            done: 0,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &PipeParams {
        &self.params
    }

    /// Water depth per node, metres.
    pub fn water(&self) -> &[f32] {
        &self.d
    }

    /// Suspended sediment per node, metres.
    pub fn sediment(&self) -> &[f32] {
        &self.s
    }

    /// Velocity components per node, m/s (`u` along +x, `v` along +y).
    pub fn velocity(&self) -> (&[f32], &[f32]) {
        (&self.u, &self.v)
    }

    /// The water books so far.
    pub fn water_budget(&self) -> WaterBudget {
        WaterBudget { stored: sum_f64(&self.d), ..self.water }
    }

    /// Sub-steps per time step ([`super::Stepping`]): 1 unless `max_speed` crosses more than
    /// a cell in `dt`.
    pub fn sub_steps(&self) -> u32 {
        self.sub_steps
    }

    /// One full time step: its sub-steps (sweeps A, B and C each), then the optional thermal
    /// pass.
    pub(super) fn advance(&mut self) {
        for _ in 0..self.sub_steps {
            self.sub_step();
        }
        self.done += 1;
        self.thermal_pass();
    }

    /// One sub-step of the flow: sweeps A, B and C, and their books.
    pub(super) fn sub_step(&mut self) {
        self.sweep_flux();
        let mut rb = self.sweep_water_erosion();
        std::mem::swap(&mut self.hm.data, &mut self.b_new);
        if self.sinks.is_some() {
            self.drain_sinks(&mut rb);
        }
        let (s_sum, lost) = match self.params.advection {
            Advection::SemiLagrangian => self.sweep_semi_lagrangian(),
            Advection::MacCormack => self.sweep_maccormack(),
            Advection::Conservative => self.sweep_conservative(),
        };
        self.eroded += rb.eroded;
        self.deposited += rb.deposited;
        self.lost += lost;
        self.clamped += s_sum - rb.s1 + lost;
        self.suspended = s_sum;
        self.water.evaporated += rb.evaporated;
        self.water.drained += rb.drained;
        self.water.rain += rb.rain;
        self.water.sea += rb.sea;
    }

    /// The interleaved thermal pass, after every `thermal_every` time steps.
    fn thermal_pass(&mut self) {
        if let Some((k, scratch)) = &mut self.thermal {
            let every = self.params.thermal_every.max(1) as u64;
            if self.done.is_multiple_of(every) {
                // The application's kernel iterations on these cells (the thermal module doc).
                let iters = self
                    .params
                    .thermal
                    .as_ref()
                    .map_or(0, |t| t.kernel_iterations(self.lx, self.done / every - 1, t.iterations as u64));
                let mut tb = ThermalBooks::default();
                for _ in 0..iters {
                    let b = k.step(&mut self.hm.data, scratch, Some(&mut self.maps));
                    tb.eroded += b.eroded;
                    tb.deposited += b.deposited;
                    tb.lost += b.lost;
                }
                self.eroded += tb.eroded;
                self.deposited += tb.deposited;
                self.lost += tb.lost;
            }
        }
    }

    /// Sink nodes of a steering mask, after sweep B: the water on them leaves (booked as the
    /// sea's intake) and their suspended sediment settles on them (booked as deposition; the
    /// f32 rounding of the new height in `clamped`, so the books stay closed).
    pub(super) fn drain_sinks(&mut self, rb: &mut RowB) {
        let Some(sinks) = &self.sinks else { return };
        for &k in sinks {
            let i = k as usize;
            rb.sea += self.d[i] as f64;
            self.d[i] = 0.0;
            let s = self.s1[i];
            if s > 0.0 {
                let old = self.hm.data[i];
                let new = old + s;
                self.hm.data[i] = new;
                self.maps.deposited[i] += new - old;
                let put = new as f64 - old as f64;
                rb.deposited += put;
                rb.s1 -= s as f64;
                self.clamped += put - s as f64;
                self.s1[i] = 0.0;
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Sweep A: outflow flux.

    pub(super) fn sweep_flux(&mut self) {
        let c = self.c;
        let (b, d) = (&self.hm.data[..], &self.d[..]);
        let w = c.w;
        self.fl
            .par_chunks_mut(w)
            .zip(self.fr.par_chunks_mut(w))
            .zip(self.ft.par_chunks_mut(w))
            .zip(self.fb.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (((fl, fr), ft), fb))| flux_row_fast(&c, y, b, d, fl, fr, ft, fb));
    }

    // -----------------------------------------------------------------------------------------
    // Sweep B: water, velocity, erosion/deposition, evaporation, next rain.

    pub(super) fn sweep_water_erosion(&mut self) -> RowB {
        let c = self.c;
        let w = c.w;
        let inp = BIn {
            b: &self.hm.data,
            s: &self.s,
            fl: &self.fl,
            fr: &self.fr,
            ft: &self.ft,
            fb: &self.fb,
            hard: self.hardness.as_deref(),
            water_in: self.water_in.as_deref(),
        };
        let rows: Vec<RowB> = self
            .b_new
            .par_chunks_mut(w)
            .zip(self.d.par_chunks_mut(w))
            .zip(self.u.par_chunks_mut(w))
            .zip(self.v.par_chunks_mut(w))
            .zip(self.s1.par_chunks_mut(w))
            .zip(self.maps.eroded.par_chunks_mut(w))
            .zip(self.maps.deposited.par_chunks_mut(w))
            .enumerate()
            .map_init(
                || vec![0.0f32; w],
                |tmp, (y, ((((((bn, d), u), v), s1), er), dep))| {
                    let out = BOut { b: bn, d, u, v, s1 };
                    water_row_fast(&c, y, &inp, out, tmp, er, dep)
                },
            )
            .collect();
        let mut t = RowB::default();
        for r in &rows {
            t.eroded += r.eroded;
            t.deposited += r.deposited;
            t.s1 += r.s1;
            t.evaporated += r.evaporated;
            t.drained += r.drained;
            t.sea += r.sea;
        }
        t.rain = self.water_in_sum;
        t
    }

    // -----------------------------------------------------------------------------------------
    // Sweep C: transport. Returns (Σ s after, sediment lost across drains).

    pub(super) fn sweep_semi_lagrangian(&mut self) -> (f64, f64) {
        let c = self.c;
        let w = c.w;
        let (src, u, v) = (&self.s1[..], &self.u[..], &self.v[..]);
        let rows: Vec<(f64, f64)> = self
            .s
            .par_chunks_mut(w)
            .enumerate()
            .map(|(y, out)| {
                let lost = advect_row_fast(&c, y, src, u, v, out);
                (sum_f64(out), lost)
            })
            .collect();
        fold_pairs(&rows)
    }

    pub(super) fn sweep_maccormack(&mut self) -> (f64, f64) {
        let c = self.c;
        let w = c.w;
        let (s1, u, v) = (&self.s1[..], &self.u[..], &self.v[..]);
        // Backward pass into s2 (the drain loss is booked from this pass).
        let lost: Vec<f64> =
            self.s2.par_chunks_mut(w).enumerate().map(|(y, out)| advect_row_fast(&c, y, s1, u, v, out)).collect();
        let s2 = &self.s2[..];
        let sums: Vec<f64> = self
            .s
            .par_chunks_mut(w)
            .enumerate()
            .map(|(y, out)| {
                maccormack_row_fast(&c, y, s1, s2, u, v, out);
                sum_f64(out)
            })
            .collect();
        (sums.iter().sum(), lost.iter().sum())
    }
}

impl PipeJob {
    pub(super) fn sweep_conservative(&mut self) -> (f64, f64) {
        let c = self.c;
        let w = c.w;
        let (src, u, v) = (&self.s1[..], &self.u[..], &self.v[..]);
        let rows: Vec<(f64, f64)> = self
            .s
            .par_chunks_mut(w)
            .enumerate()
            .map(|(y, out)| {
                let lost = remap_row_fast(&c, y, src, u, v, out);
                (sum_f64(out), lost)
            })
            .collect();
        fold_pairs(&rows)
    }
}

pub(super) fn fold_pairs(rows: &[(f64, f64)]) -> (f64, f64) {
    let mut a = (0.0, 0.0);
    for r in rows {
        a.0 += r.0;
        a.1 += r.1;
    }
    a
}

impl Simulation for PipeJob {
    fn step(&mut self) {
        if self.done < self.params.steps as u64 {
            self.advance();
        }
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.params.steps as u64 }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger {
            eroded: self.eroded,
            deposited: self.deposited,
            lost_at_border: self.lost,
            clamped: self.clamped,
            uplift: 0.0,
            suspended: self.suspended,
            volume_before: self.volume_before,
            volume_after: self.hm.sum(),
        }
    }

    fn maps(&self) -> &ErosionMaps {
        &self.maps
    }

    fn fields(&self) -> Fields {
        Fields {
            water: Some(self.d.clone()),
            velocity: Some(self.u.iter().zip(&self.v).map(|(&a, &b)| [a, b]).collect()),
            sediment: Some(self.s.clone()),
            flow: None,
            flow_volume: None,
        }
    }

    /// Applies the edit and rebases `volume_before` by its Σh change. Edits that change the
    /// map's size or cell size, or leave non-finite heights, are undone.
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        super::super::apply_edit(&mut self.hm, &mut self.volume_before, f);
    }
}
