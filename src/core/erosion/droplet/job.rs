//! The droplet job: its padded map planes ([`Planes`]), batches run serially or in parallel tile
//! phases, the books, and the [`Simulation`] implementation.

use rayon::prelude::*;

use super::super::particles::{self, Books, EXTREME_TOLERANCE, Geom, Raw, TileGrid};
use super::super::setup::prepare_particle_job;
use super::super::steer::Spawner;
use super::super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation};
use super::brush::Brush;
use super::step::{Ctx, Drop};
use super::{DropletGrid, DropletParams, SERIAL_TAIL};
use crate::core::filter::{BlurEdge, BlurOptions, gaussian_blur_with};
use crate::core::heightmap::Heightmap;
use crate::core::rng::SplitMix64;

/// The maps the droplets work on, in one allocation: planes of `h` rows of `pitch ≥ w` values.
/// Pitch and plane stride are odd numbers of 64-byte lines, so the rows of a brush, and the
/// planes at one node, fall into different cache sets: unpadded, a row of 1024 heights is 4 KiB
/// and every row of every map competes for the same few sets and TLB entries.
#[derive(Clone, Debug)]
pub(super) struct Planes {
    pub(super) data: Vec<f32>,
    pub(super) w: usize,
    pub(super) h: usize,
    pub(super) pitch: usize,
    pub(super) stride: usize,
}

/// Plane numbers in [`Planes`].
pub(super) const P_H: usize = 0;
pub(super) const P_ERO: usize = 1;
pub(super) const P_DEP: usize = 2;
pub(super) const P_FLOW: usize = 3;
pub(super) const P_FVOL: usize = 4;
/// Hardness (when given), or the blur mode's throw-away per-node books.
pub(super) const P_HARD: usize = 5;
pub(super) const P_SCRATCH: usize = 6;

impl Planes {
    pub(super) fn new(w: usize, h: usize, count: usize) -> Self {
        let odd_lines = |n: usize| (n.div_ceil(16) | 1) * 16;
        let pitch = odd_lines(w);
        let stride = odd_lines(pitch * h);
        Self { data: vec![0.0; stride * count], w, h, pitch, stride }
    }

    pub(super) fn plane(&self, k: usize) -> &[f32] {
        &self.data[k * self.stride..][..self.pitch * self.h]
    }

    pub(super) fn plane_mut(&mut self, k: usize) -> &mut [f32] {
        &mut self.data[k * self.stride..][..self.pitch * self.h]
    }

    /// Start of plane `k` (null when there is no such plane).
    pub(super) fn ptr(&mut self, k: usize) -> *mut f32 {
        if (k + 1) * self.stride <= self.data.len() {
            self.data[k * self.stride..].as_mut_ptr()
        } else {
            std::ptr::null_mut()
        }
    }

    /// Copies a `w × h` row-major map into plane `k`.
    pub(super) fn import(&mut self, k: usize, src: &[f32]) {
        let (w, pitch) = (self.w, self.pitch);
        for (row, s) in self.plane_mut(k).chunks_mut(pitch).zip(src.chunks(w)) {
            row[..w].copy_from_slice(s);
        }
    }

    /// Plane `k` as a `w × h` row-major map, into `dst`.
    pub(super) fn export_into(&self, k: usize, dst: &mut [f32]) {
        for (d, row) in dst.chunks_mut(self.w).zip(self.plane(k).chunks(self.pitch)) {
            d.copy_from_slice(&row[..self.w]);
        }
    }

    pub(super) fn export(&self, k: usize) -> Vec<f32> {
        let mut v = vec![0.0; self.w * self.h];
        self.export_into(k, &mut v);
        v
    }
}

/// A running droplet-erosion job (see the module doc).
pub struct DropletJob {
    /// The terrain, kept equal to the height plane after every step.
    pub(super) hm: Heightmap,
    /// The maps being worked on (heights, books, flow, hardness); see [`Planes`].
    pub(super) planes: Planes,
    /// The height plane must be reloaded from `hm` (which was edited or blurred).
    pub(super) stale: bool,
    /// `maps()`, exported from the planes when first asked for after a step.
    pub(super) maps: std::sync::OnceLock<ErosionMaps>,
    pub(super) params: DropletParams,
    /// The parameters in this map's grid units.
    pub(super) grid_p: DropletGrid,
    pub(super) seed: u64,
    pub(super) has_hardness: bool,
    pub(super) ledger: Ledger,
    pub(super) done: u64,
    pub(super) brush: Brush,
    pub(super) grid: TileGrid,
    pub(super) geom: Geom,
    /// Blur mode: the heights at the start of the batch.
    pub(super) base: Vec<f32>,
    /// Maps with fewer than 2 nodes along a side have no cells: nothing to erode.
    pub(super) degenerate: bool,
    /// The erosion floor: `min_height`, or the input's minimum (`floor_at_input_min`), or −∞;
    /// with a sea, at least the sea level.
    pub(super) floor: f32,
    /// The sea level ([`JobInputs::sea_level`]).
    pub(super) sea: Option<f32>,
    /// Where particles spawn and whether they live, with a steering mask ([`JobInputs::steer`]).
    pub(super) spawner: Option<Spawner>,
    /// Sink mode: the mask's weights as a padded plane (`pitch` per row); a droplet whose
    /// nearest node has weight 0 ends there.
    pub(super) sink: Option<Vec<f32>>,
}

impl DropletJob {
    /// Prepares a job. Fails on parameters outside their documented ranges, a hardness map of the
    /// wrong size or with values outside `0 ..= 1000`, or non-finite heights. Version-1 values
    /// still in `params` are taken as made for `terrain` ([`DropletParams::upgrade_units`]).
    pub fn new(terrain: Heightmap, mut params: DropletParams, inputs: JobInputs) -> Result<Self, JobError> {
        // Sink mode: the mask multiplies the erodibility (the hardness plane).
        let setup = prepare_particle_job(&terrain, &mut params, inputs)?;
        let (grid_p, hardness) = (setup.grid, setup.erodibility.as_deref());
        let n = terrain.len();
        let (w, h) = (terrain.width, terrain.height);
        let degenerate = w < 2 || h < 2;
        let blur = grid_p.blur.is_some_and(|s| s > 0.0);
        // Hardness, then the blur mode's scratch books, after the five planes every job has.
        let count = if blur {
            P_SCRATCH + 2
        } else if hardness.is_some() {
            P_HARD + 1
        } else {
            P_HARD
        };
        let mut planes = Planes::new(w, h, count);
        planes.import(P_H, &terrain.data);
        if let Some(hard) = hardness {
            planes.import(P_HARD, hard);
        }
        let geom = Geom::new(w, h, &setup.inputs.boundary).with_pitch(planes.pitch);
        let brush = Brush::new(grid_p.radius, planes.pitch);
        let margin = brush.reach + 3;
        let grid = TileGrid::new(w, h, particles::tile_size(w, h, margin), geom.wrap_x, geom.wrap_y);
        let volume = terrain.sum();
        let floor = match (params.min_height, params.floor_at_input_min) {
            (Some(m), _) => m,
            (None, true) => terrain.stats().min,
            (None, false) => f32::NEG_INFINITY,
        };
        // With a sea, erosion never takes a node below it (nor lowers one already under water).
        let floor = match setup.inputs.sea_level {
            Some(s) => floor.max(s),
            None => floor,
        };
        let spawner = setup.spawner(&geom);
        let sink = setup.steer().filter(|s| s.sink).map(|s| {
            let mut p = Planes::new(w, h, 1);
            p.import(0, &s.weights);
            p.data
        });
        Ok(Self {
            spawner,
            sink,
            floor,
            sea: setup.sea(),
            params,
            grid_p,
            seed: setup.inputs.seed,
            has_hardness: hardness.is_some(),
            planes,
            stale: false,
            maps: std::sync::OnceLock::new(),
            ledger: Ledger { volume_before: volume, volume_after: volume, ..Ledger::default() },
            done: 0,
            brush,
            grid,
            geom,
            base: if blur { vec![0.0; n] } else { Vec::new() },
            degenerate,
            hm: terrain,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &DropletParams {
        &self.params
    }

    /// The parameters in the grid units of the job's map.
    pub fn grid_params(&self) -> DropletGrid {
        self.grid_p
    }

    /// Raw access to the planes the droplets write: the books go to the scratch planes in blur
    /// mode.
    pub(super) fn raw(&mut self) -> Raw {
        let blur = !self.base.is_empty();
        let pl = &mut self.planes;
        let (ero, dep) = if blur { (pl.ptr(P_SCRATCH), pl.ptr(P_SCRATCH + 1)) } else { (pl.ptr(P_ERO), pl.ptr(P_DEP)) };
        Raw {
            h: pl.ptr(P_H),
            ero,
            dep,
            flow: pl.ptr(P_FLOW),
            fvol: pl.ptr(P_FVOL),
            hard: if self.has_hardness { pl.ptr(P_HARD) } else { std::ptr::null_mut() },
            n: pl.pitch * pl.h,
        }
    }

    /// Droplet `id` as it starts: its position from its own random stream (in the mask's box
    /// with a steering mask) and, with a mask, whether it lives (`ξ < w`, see [`super::super::steer`]).
    pub(super) fn spawn(&self, id: u64) -> Drop {
        let mut rng = SplitMix64::stream(self.seed, id);
        let (x, y) = match &self.spawner {
            None => (rng.next_f32() * self.geom.span_x, rng.next_f32() * self.geom.span_y),
            Some(s) => s.place(&mut rng),
        };
        let (x, y) = match self.geom.confine(x, y) {
            particles::Confined::Inside { x, y, .. } => (x, y),
            particles::Confined::Exit => (0.0, 0.0),
        };
        let alive = match &self.spawner {
            None => true,
            Some(s) => {
                let k = self.geom.nearest(x, y);
                let pitch = self.geom.pitch;
                s.lives(k % pitch, k / pitch, self.seed, id)
            }
        };
        Drop {
            x,
            y,
            dx: 0.0,
            dy: 0.0,
            speed: self.params.initial_speed,
            water: self.params.initial_water,
            sediment: 0.0,
            life: 0,
            alive,
            rng,
        }
    }

    /// Simulates droplets `start .. end`; returns the scalar books of the batch.
    pub(super) fn run_batch(&mut self, start: u64, end: u64) -> Books {
        if self.stale {
            self.planes.import(P_H, &self.hm.data);
            self.stale = false;
        }
        let raw = self.raw();
        let p = &self.params;
        let drops: Vec<Drop> = (start..end).map(|id| self.spawn(id)).collect();
        let ctx = Ctx {
            geom: self.geom,
            raw,
            brush: &self.brush,
            inertia: self.grid_p.inertia,
            min_slope: self.grid_p.min_slope,
            capacity: self.grid_p.capacity,
            deposition: self.grid_p.deposition,
            erosion: self.grid_p.erosion,
            dig: self.grid_p.dig,
            gravity: p.gravity,
            keep_water: self.grid_p.keep_water,
            max_life: self.grid_p.max_lifetime,
            min_water: (p.initial_water * 1e-20).max(1e-30),
            floor: self.floor,
            sea: self.sea.unwrap_or(f32::NEG_INFINITY),
            spread: self.sea.is_some(),
            wide: self.grid_p.wide,
            sink: self.sink.as_deref(),
        };
        let mut books = Books::default();
        // Mark the start nodes in the flow map (every droplet visits where it lands).
        for d in drops.iter().filter(|d| d.alive) {
            // SAFETY: exclusive access here; `nearest` returns an in-map index.
            unsafe { raw.visit(self.geom.nearest(d.x, d.y), d.water) };
        }
        if p.parallel {
            // A bounded number of droplets in flight at once (see `particles::in_flight`).
            let sub = particles::in_flight(&self.grid, self.hm.len());
            let (grid, geom) = (&self.grid, self.geom);
            let mut drops = drops;
            // On a worker thread of the pool, so the many short phases of a batch are forked from
            // inside the pool instead of each waking it from outside (and, on one thread, run
            // without any hand-over).
            rayon::scope(|_| {
                while !drops.is_empty() {
                    let rest = drops.split_off(sub.min(drops.len()));
                    let chunk = std::mem::replace(&mut drops, rest);
                    particles::run(
                        grid,
                        chunk,
                        SERIAL_TAIL,
                        |d: &Drop| geom.owner_cell(d.x, d.y),
                        // SAFETY: `particles::run` hands each task a tile whose margin (2·margin
                        // wide tiles, margin = reach + 3) no concurrent task touches, or runs
                        // serially.
                        |rect, ds: &mut [Drop], b: &mut Books| unsafe { ctx.walk_group(ds, rect, b) },
                        |b| books.add(&b),
                    );
                }
            });
        } else {
            for mut d in drops {
                // SAFETY: serial, `&mut self` gives exclusive access to every map.
                unsafe { ctx.walk(&mut d, &mut books) };
            }
        }
        self.planes.export_into(P_H, &mut self.hm.data);
        books
    }

    /// Blur mode: blur the batch's change (conserving its sum), apply it, book it. Returns
    /// `(eroded, deposited, lift, net)`: `net` is the droplets' own change `Σ(h − base)` before
    /// the blur, which the caller holds against the droplets' books.
    pub(super) fn apply_blurred_change(&mut self, sigma: f32) -> (f64, f64, f64, f64) {
        let (w, h) = (self.hm.width, self.hm.height);
        let mut delta: Vec<f32> = self.hm.data.iter().zip(&self.base).map(|(a, b)| a - b).collect();
        let opts = BlurOptions { wrap_x: self.geom.wrap_x, wrap_y: self.geom.wrap_y, edge: BlurEdge::Conserve };
        gaussian_blur_with(&mut delta, w, h, sigma, opts);
        let floor = self.params.min_height.unwrap_or(f32::NEG_INFINITY);
        let pitch = self.planes.pitch;
        let (books, _) = self.planes.data.split_at_mut(P_FLOW * self.planes.stride);
        let (eroded, deposited) = books.split_at_mut(P_DEP * self.planes.stride);
        let (eroded, deposited) = (&mut eroded[P_ERO * self.planes.stride..][..pitch * h], &mut deposited[..pitch * h]);
        let rows: Vec<(f64, f64, f64, f64)> = self
            .hm
            .data
            .par_chunks_mut(w)
            .zip(self.base.par_chunks(w))
            .zip(delta.par_chunks(w))
            .zip(eroded.par_chunks_mut(pitch))
            .zip(deposited.par_chunks_mut(pitch))
            .map(|((((hs, bs), ds), es), ps)| {
                let (mut ero, mut dep, mut lift, mut net) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
                for ((((hv, &old), &dv), e), p) in hs.iter_mut().zip(bs).zip(ds).zip(es.iter_mut()).zip(ps.iter_mut()) {
                    net += *hv as f64 - old as f64;
                    let free = old + dv;
                    // What the f32 delta, blur and sum gained or lost against the droplets'
                    // change is material created outside the budget: booked with the lift.
                    lift += (free as f64 - old as f64) - (*hv as f64 - old as f64);
                    // Erosion may not take a node below the guard (or lower one already below it).
                    let new = if dv < 0.0 { free.max(old.min(floor)) } else { free };
                    lift += new as f64 - free as f64;
                    *hv = new;
                    let change = new as f64 - old as f64;
                    if change < 0.0 {
                        *e -= (new - old).min(0.0);
                        ero -= change;
                    } else {
                        *p += new - old;
                        dep += change;
                    }
                }
                (ero, dep, lift, net)
            })
            .collect();
        self.stale = true;
        rows.iter().fold((0.0, 0.0, 0.0, 0.0), |a, r| (a.0 + r.0, a.1 + r.1, a.2 + r.2, a.3 + r.3))
    }
}

impl Simulation for DropletJob {
    fn step(&mut self) {
        let total = self.grid_p.droplets;
        if self.done >= total {
            return;
        }
        let start = self.done;
        let end = (start + self.params.batch as u64).min(total);
        if self.degenerate {
            self.done = end;
            return;
        }
        self.maps.take();
        let blur = self.grid_p.blur.filter(|&s| s > 0.0);
        if blur.is_some() {
            self.base.copy_from_slice(&self.hm.data);
        }
        let books = self.run_batch(start, end);
        self.ledger.lost_at_border += books.lost;
        self.ledger.clamped += books.clamped;
        if let Some(sigma) = blur {
            let (ero, dep, lift, net) = self.apply_blurred_change(sigma);
            self.ledger.eroded += ero;
            self.ledger.deposited += dep;
            // Only the batch's net change reaches the books here, but the droplets may have
            // churned far more (a high-capacity droplet on km-high heights moves thousands of
            // metre·nodes to change a few): what their f32 brush sums lost against the heights
            // over that churn is material made outside the budget, booked with the lift.
            self.ledger.clamped += lift + (net - (books.deposited - books.eroded));
        } else {
            self.ledger.eroded += books.eroded;
            self.ledger.deposited += books.deposited;
        }
        self.done = end;
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.grid_p.droplets }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger { volume_after: self.hm.sum(), ..self.ledger }
    }

    fn maps(&self) -> &ErosionMaps {
        self.maps
            .get_or_init(|| ErosionMaps { eroded: self.planes.export(P_ERO), deposited: self.planes.export(P_DEP) })
    }

    fn fields(&self) -> Fields {
        Fields {
            flow: Some(self.planes.export(P_FLOW)),
            flow_volume: Some(self.planes.export(P_FVOL)),
            ..Fields::default()
        }
    }

    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        if super::super::apply_edit(&mut self.hm, &mut self.ledger.volume_before, f) {
            self.stale = true;
        }
    }

    fn finish(&mut self) {
        let Some(sea) = self.sea else { return };
        if self.degenerate || self.done == 0 {
            return;
        }
        let (w, pitch) = (self.hm.width, self.planes.pitch);
        let mut ero = self.planes.plane(P_ERO).to_vec();
        let mut dep = self.planes.plane(P_DEP).to_vec();
        let (e, d) = particles::relax_extremes(&mut self.hm, sea, EXTREME_TOLERANCE, &mut |i, dh| {
            let k = (i / w) * pitch + i % w;
            if dh < 0.0 { ero[k] -= dh } else { dep[k] += dh }
        });
        self.planes.plane_mut(P_ERO).copy_from_slice(&ero);
        self.planes.plane_mut(P_DEP).copy_from_slice(&dep);
        self.ledger.eroded += e;
        self.ledger.deposited += d;
        // The f32 rounding of the trades (a few ulps) is material made or lost: booked.
        self.ledger.clamped += d - e;
        self.maps.take();
        self.stale = true;
    }
}
