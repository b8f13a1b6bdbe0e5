//! Stream-power landscape evolution: detachment-limited river incision with tectonic uplift and
//! optional hillslope diffusion, solved with the implicit O(n) scheme of Braun & Willett (2013),
//! "A very efficient O(n), implicit and parallel method to solve the stream power equation
//! governing fluvial incision and landscape evolution", *Geomorphology* 180–181, and lakes routed
//! through a basin graph after Cordonnier, Bovy & Braun (2019), "A versatile, linear complexity
//! algorithm for flow routing in topographies with depressions", *Earth Surface Dynamics* 7.
//! Drainage area by multiple flow directions after Freeman (1991), "Calculating catchment area
//! with divergent flow based on a regular grid", *Computers & Geosciences* 17(3); uplift that
//! follows the terrain after Cordonnier, Braun, Cani, Benes, Galin, Peytavie & Guérin (2016),
//! "Large scale terrain generation from tectonic uplift and fluvial erosion", *Computer Graphics
//! Forum* 35(2), and Schott, Paris, Fournier, Guérin & Galin (2023), "Large-scale terrain
//! authoring through interactive erosion simulation", *ACM TOG* 42(5).
//! This model goes beyond the five seeds (SPEC §2 names none of it).
//!
//! ## The equation
//!
//! ```text
//! ∂h/∂t = U − K·A^m·S^n + κ·∇²h
//! ```
//!
//! `h` height (m), `U` uplift rate (m/yr, scalar or per node), `K` erodibility
//! (m^(1−2m)/yr, multiplied per node by the hardness map), `A` drainage area (m²), `S` slope to the
//! receiver, `m`, `n` the area and slope exponents, `κ` hillslope diffusivity (m²/yr).
//!
//! ## Base level: edges and the sea
//! *Outlets* are base level: the nodes on a `Drain` edge and, when [`JobInputs::sea_level`] is
//! given, every node at or below the sea in the input (the sea mask is taken once, when the job
//! is built). Outlets are never uplifted, never incised and never diffused; water and sediment
//! that reach them leave the land. A land node whose receiver is a sea node is cut toward the
//! sea *surface* (`max(h_r, sea)` stands for `h_r` below), so rivers grade to the coast and land
//! does not sink into the sea.
//!
//! ## One step (`Δt` years)
//! 1. **Uplift** `h_i ← h_i + U_i·Δt` on every node except outlets. With no outlet at all every
//!    node is uplifted. `U_i` is, in order of precedence: `uplift_map[i]`; with
//!    `UpliftMode::FollowTerrain` (the default) the rate computed once from the input heights
//!    `h⁰`,
//!
//!    ```text
//!    U_i = U · clamp((h⁰_i − b) / (h⁰_max − b), 0, 1)^p       (p = uplift_exponent)
//!    ```
//!
//!    with `b` the sea level (or the map's minimum without a sea): 0 at and below the sea, `U` on
//!    the highest peak, so the relief is sustained where it already is and the island keeps its
//!    outline (uniform uplift would raise the whole sea floor into a square block); with
//!    `UpliftMode::Uniform` `U` everywhere.
//! 2. **Routing** (the `routing` module doc): D8 steepest-descent receivers (diagonals over
//!    `√2·Δx`), the Braun–Willett stack (receiver before donor), pits resolved by the basin graph
//!    of Cordonnier et al. (minimum spanning tree of the lowest passes between basins, found by
//!    local floods; lake levels; rerouting by carving). Drainage area `A_i` in nodes (`A =
//!    count·Δx²` m² in the law): with `FlowMethod::D8` summed along the receivers in reverse
//!    stack order; with `FlowMethod::Mfd` (the default) split over every lower neighbour on the
//!    lake-filled surface in proportion to `S^p` (Freeman's FD8, `p = mfd_exponent`), summed in a
//!    topological order where every donor precedes all its receivers (`routing::Mfd`; lake nodes
//!    keep their single rerouted receiver). MFD spreads the area over hillslopes and removes the
//!    long straight parallel valleys D8 area draws along the grid axes and diagonals.
//! 3. **Incision**, implicit in time, in stack order so the receiver `r` (the steepest one, also
//!    with MFD area) is already at its new height: with `d` the distance to the receiver (`Δx` or
//!    `√2·Δx`) and `F = K_i·Δt·A_i^m / d^n`, the new height `h'_i = h'_r + δ` solves
//!
//!    ```text
//!    δ − δ₀ + F·δ^n = 0,   δ₀ = h_i − h'_r,   0 ≤ δ ≤ δ₀
//!    n = 1:  h'_i = (h_i + F·h'_r) / (1 + F)
//!    ```
//!
//!    For `n ≠ 1` the root is found per node by Newton's method (`g' = 1 + n·F·δ^(n−1)`),
//!    safeguarded by bisection on `[0, δ₀]`, as Braun & Willett describe. Nodes whose receiver is
//!    not lower (`δ₀ ≤ 0`) and lake nodes (below their basin's water level) are not eroded. The
//!    scheme is unconditionally stable and never makes a node lower than its receiver.
//! 4. **Sediment.** Stream power has no explicit sediment; the material eroded at a node (its
//!    height loss, `metre·nodes`) is carried down the receiver tree: `Q_s,r += Q_s,i` in reverse
//!    stack order. Where the flux overflows a lake (at the basin's pass node) the lake keeps
//!    `V = min(Q_s, capacity)`: it fills *from the bottom* to the level `λ` with
//!    `Σ_k max(0, λ − h_k) = V` over its lake nodes (`λ ≤ L_b`; `V ≥ capacity` fills it flat to
//!    `L_b`), and the rest continues downstream. What reaches a `Drain` edge leaves the map.
//!    What reaches the **sea** settles there: after all segments, sea nodes that received
//!    sediment are taken in index order; each fills itself and then the sea nodes within
//!    `SEA_SPREAD` (8) nodes, nearest first, each at most up to `sea − SEA_SHELF` (0.5 m under
//!    the surface, so deposits never move the coastline and never stand as a spike above the
//!    sea); what does not fit leaves the books as `lost_at_border`. On a map
//!    with no outlet the terminal basin keeps everything that reaches it (filled from the bottom,
//!    without a ceiling — only heights beyond the f32 range, `3.4e38` m, could refuse material,
//!    which would then be booked as lost). `lake_deposition = false` lets sediment pass through
//!    lakes (pure Braun–Willett incision; lakes keep their shape) except in the terminal basin.
//! 5. **Diffusion** (`κ > 0`, on by default): one backward-Euler step of `∂h/∂t = ∇·(κ∇h)` with
//!    directional (LOD) splitting, unconditionally stable and monotone at any `Δt` (the
//!    `diffusion` module doc); outlets are fixed values (sea nodes at the sea surface
//!    `max(h, sea)` during the step, their heights untouched, so coasts slope toward the water
//!    and never below it), walls zero-flux, wraps periodic; hardness scales the face
//!    coefficients (harmonic mean). It rounds off the single-node peaks the fluvial law leaves
//!    between channels.
//!
//! ## The books (metre·nodes)
//! * uplift: `Ledger::uplift` and `Ledger::deposited` (material created in place);
//! * incision: `eroded`; lake filling and sea filling: `deposited`; sediment reaching a `Drain`
//!   edge, or the sea beyond what fits within `SEA_SPREAD` of the mouth: `lost_at_border`;
//! * diffusion: its losses `eroded`, its gains `deposited`, and its net exchange with the fixed
//!   outlets `lost_at_border` (negative when outlets feed material in; what the coast sheds into
//!   the sea is in it);
//! * nothing stays in transport between steps: `suspended = 0`.
//!
//! Every change is booked as the f32 change actually applied, per node, in [`ErosionMaps`] too
//! (the deposited map therefore includes uplift). Then
//! `Σh_after − Σh_before = deposited − eroded` and `eroded + uplift = deposited + lost_at_border`.
//!
//! ## Fields
//! `flow` = drainage area **in nodes** (multiply by `cell_size²` for m²; fractional with MFD), as
//! of the last routing;
//! `water` = lake depth `max(0, L_b − h)` (m) of the lakes found by the last routing.
//!
//! ## Parallelism and determinism
//! Uplift, receivers, MFD weights and diffusion run over rows (or lines) in parallel. The stack is
//! walked from the roots in parallel chunks concatenated in order. The MFD order and area, and the
//! sea deposits, are serial. Drainage area, incision and sediment
//! transport run in parallel over stack *segments*: each segment is one outlet's whole tree plus
//! the lakes draining into it, so segments share no node and every value inside one is computed
//! in the same order whatever thread runs it. Partial books are added in row or segment order.
//! Results are therefore bit-identical at any thread count.

mod diffusion;
mod params;
pub mod refine;
pub(crate) mod routing;

pub use params::{FlowMethod, StreamPowerParams, UpliftMode};
pub use routing::{FlowRouting, route_flow};

use rayon::prelude::*;

use self::diffusion::Diffusion;
use self::routing::{Mfd, NONE, Router, Shared};
use super::hardness::HardnessRule;
use super::setup::erodibility;
use super::{ErosionMaps, Fields, JobError, JobInputs, Ledger, Progress, Simulation};
use crate::core::heightmap::Heightmap;

/// Largest drainage area (in nodes) whose `A^m` is tabulated.
const POW_TABLE: usize = 1 << 14;

/// Radius (nodes) around a river mouth over which sediment reaching the sea is spread.
const SEA_SPREAD: i32 = 8;

/// Water depth (m) that sea deposits leave above them: the sea fills up to `sea − SEA_SHELF`
/// (a shelf under shallow water), so deposits never move the coastline.
const SEA_SHELF: f32 = 0.5;

/// A running stream-power simulation.
pub struct StreamPowerJob {
    hm: Heightmap,
    p: StreamPowerParams,
    hardness: Option<Vec<f32>>,
    router: Router,
    /// Multiple-flow-direction area (`routing = Mfd`).
    mfd: Option<Mfd>,
    diffusion: Option<Diffusion>,
    /// Sea level (m), or `−∞` without a sea.
    sea: f32,
    /// 1 for the nodes at or below the sea in the input (outlets); empty without a sea.
    sea_mask: Vec<u8>,
    /// Sea nodes below the sea level, lifted to it during diffusion (their heights saved here).
    sea_lift: Vec<(u32, f32)>,
    /// Neighbourhood of a river mouth in the order it is filled: `(dx, dy)` by distance.
    disk: Vec<(i32, i32)>,
    /// Per-node uplift rate (m/yr) when not uniform: `uplift_map` or the terrain-following rate.
    rate: Option<Vec<f32>>,
    /// `a^m` for drainage areas `a < POW_TABLE`.
    pw: Vec<f64>,
    /// A steering mask's weights: what each node adds to the drainage area (`None` = 1 each).
    runoff: Option<Vec<f32>>,
    /// D8 drainage area from `runoff` (empty without a mask or with MFD).
    warea: Vec<f64>,
    /// Per node in the current step: the height eroded there (metres), then, during transport,
    /// the sediment passing through (metre·nodes).
    qs: Vec<f64>,
    scratch: Vec<f32>,
    ledger: Ledger,
    maps: ErosionMaps,
    done: u64,
}

impl StreamPowerJob {
    /// Builds the job: validates `params` and `inputs`, then routes flow once so [`Fields::flow`]
    /// is available before the first step.
    pub fn new(terrain: Heightmap, params: StreamPowerParams, mut inputs: JobInputs) -> Result<Self, JobError> {
        let n = terrain.len();
        if !terrain.all_finite() {
            return Err(JobError::NonFinite);
        }
        params.validate(n)?;
        // Sink mode: the mask multiplies the erodibility; its zero nodes are outlets.
        let hardness = erodibility(n, &mut inputs, HardnessRule::AtMost1e6)?;
        let sink_mask = inputs.steer.as_ref().and_then(|s| s.sink_mask());
        let runoff = inputs.steer.as_ref().map(|s| s.weights.clone());
        // A non-finite sea level (−∞: "no sea") means no sea.
        let sea_level = inputs.sea_level.filter(|s| s.is_finite());
        let sea = sea_level.unwrap_or(f32::NEG_INFINITY);
        let sea_mask: Vec<u8> = match sea_level {
            Some(s) if terrain.data.iter().any(|&v| v <= s) => terrain.data.iter().map(|&v| (v <= s) as u8).collect(),
            _ => Vec::new(),
        };
        let mut router = Router::new(terrain.width, terrain.height, &inputs.boundary);
        if !sea_mask.is_empty() {
            router.add_outlets(&sea_mask);
        }
        if let Some(m) = &sink_mask {
            router.add_outlets(m);
        }
        router.route(&terrain.data);
        let mut mfd = (params.routing == FlowMethod::Mfd).then(|| Mfd::new(n));
        if let Some(f) = mfd.as_mut() {
            f.runoff = runoff.as_ref().map(|r| r.iter().map(|&w| w as f64).collect());
            f.compute(&router, &terrain.data, params.mfd_exponent as f64);
        }
        let diffusion =
            (params.diffusion > 0.0).then(|| Diffusion::new(router.grid, &router.outlet, hardness.as_deref()));
        let rate = match (&params.uplift_map, params.uplift_mode) {
            (Some(u), _) => Some(u.clone()),
            (None, UpliftMode::Uniform) => None,
            (None, UpliftMode::FollowTerrain) => {
                Some(terrain_uplift(&terrain.data, sea_level, params.uplift, params.uplift_exponent))
            }
        };
        let mut disk: Vec<(i32, i32)> = (-SEA_SPREAD..=SEA_SPREAD)
            .flat_map(|dy| (-SEA_SPREAD..=SEA_SPREAD).map(move |dx| (dx, dy)))
            .filter(|&(dx, dy)| dx * dx + dy * dy <= SEA_SPREAD * SEA_SPREAD)
            .collect();
        disk.sort_by_key(|&(dx, dy)| (dx * dx + dy * dy, dy, dx));
        let m = params.m as f64;
        let pw = (0..POW_TABLE.min(n + 1)).map(|a| (a as f64).powf(m)).collect();
        let ledger = Ledger { volume_before: terrain.sum(), volume_after: terrain.sum(), ..Ledger::default() };
        let warea = if runoff.is_some() && mfd.is_none() { vec![0.0; n] } else { Vec::new() };
        Ok(Self {
            runoff,
            warea,
            p: params,
            hardness,
            router,
            mfd,
            diffusion,
            sea,
            sea_mask,
            sea_lift: Vec::new(),
            disk,
            rate,
            pw,
            qs: vec![0.0; n],
            scratch: Vec::new(),
            ledger,
            maps: ErosionMaps::new(n),
            done: 0,
            hm: terrain,
        })
    }

    /// The parameters the job runs with.
    pub fn params(&self) -> &StreamPowerParams {
        &self.p
    }

    /// Receivers of the last routing (each node's downstream neighbour; roots point to themselves).
    pub fn receivers(&self) -> &[u32] {
        &self.router.rcv
    }

    /// Drainage area in nodes of the last routing (D8 or MFD, as `routing` says).
    pub fn drainage_area(&self) -> Vec<f64> {
        match &self.mfd {
            Some(f) => f.area.clone(),
            // With a steering mask, the area of its runoff (as of the last step).
            None if !self.warea.is_empty() => self.warea.clone(),
            None => self.router.area.iter().map(|&a| a as f64).collect(),
        }
    }

    /// 1 for the sea nodes (at or below the sea level in the input: outlets), empty without a sea.
    pub fn sea_mask(&self) -> &[u8] {
        &self.sea_mask
    }

    /// The uplift rate of every node, m/yr, as the job applies it (0 on outlets).
    pub fn uplift_rates(&self) -> Vec<f32> {
        (0..self.hm.len())
            .map(|i| if self.router.outlet[i] != 0 { 0.0 } else { self.rate.as_ref().map_or(self.p.uplift, |r| r[i]) })
            .collect()
    }

    /// Lake water levels of the last routing (`−∞` outside lakes).
    pub fn lake_level(&self) -> &[f32] {
        &self.router.lake_level
    }

    /// Step 1: uplift of every non-outlet node, rows in parallel.
    #[inline(never)]
    fn uplift(&mut self) {
        let dt = self.p.dt as f64;
        let w = self.hm.width;
        let scalar = (self.p.uplift as f64 * dt) as f32;
        let umap = self.rate.as_deref();
        let outlet = &self.router.outlet;
        let rows: Vec<f64> = self
            .hm
            .data
            .par_chunks_mut(w)
            .zip(self.maps.deposited.par_chunks_mut(w))
            .enumerate()
            .map(|(y, (hrow, drow))| {
                let base = y * w;
                let orow = &outlet[base..base + w];
                let mut sum = 0.0f64;
                for (x, (h, d)) in hrow.iter_mut().zip(drow.iter_mut()).enumerate() {
                    if orow[x] != 0 {
                        continue;
                    }
                    let du = match umap {
                        Some(u) => (u[base + x] as f64 * dt) as f32,
                        None => scalar,
                    };
                    let old = *h;
                    let new = old + du;
                    let change = new as f64 - old as f64;
                    *h = new;
                    *d += change as f32;
                    sum += change;
                }
                sum
            })
            .collect();
        let total: f64 = rows.iter().sum();
        self.ledger.uplift += total;
        self.ledger.deposited += total;
    }

    /// Steps 2b–4, one task per stack segment (a segment is a whole outlet tree with the lakes
    /// draining into it, so trees are independent): drainage area in reverse stack order,
    /// implicit incision in stack order (receivers first), then the sediment carried down in
    /// reverse order, lakes filled on the way, the rest lost at the outlet. Per-segment books are
    /// added in segment order.
    #[inline(never)]
    fn erode(&mut self) {
        let dx = self.hm.cell_size as f64;
        let (m, n) = (self.p.m as f64, self.p.n as f64);
        let kdt = self.p.k as f64 * self.p.dt as f64 * dx.powf(2.0 * m);
        let inv_dn = [dx.powf(-n), (std::f64::consts::SQRT_2 * dx).powf(-n)];
        let linear = self.p.n == 1.0;
        let deposit_in_lakes = self.p.lake_deposition;
        let lake_nodes = Shared::new(&mut self.router.lake_nodes);
        let area = Shared::new(&mut self.router.area);
        let runoff = if self.mfd.is_none() { self.runoff.as_deref() } else { None };
        let warea = Shared::new(&mut self.warea);
        let r = &self.router;
        let has_lakes = !r.traps.is_empty();
        let (pw, hard) = (&self.pw, self.hardness.as_deref());
        // `A^m` of the MFD area, computed for every node beforehand (vectorised).
        let mfd_area_m = self.mfd.as_ref().map(|f| f.area_m.as_slice());
        let (sea, sea_mask) = (self.sea, self.sea_mask.as_slice());
        let has_sea = !sea_mask.is_empty();
        let h = Shared::new(&mut self.hm.data);
        let qs = Shared::new(&mut self.qs);
        let map_e = Shared::new(&mut self.maps.eroded);
        let map_d = Shared::new(&mut self.maps.deposited);
        let books: Vec<[f64; 3]> = (0..r.seg.len() - 1)
            .into_par_iter()
            // SAFETY: (every access in the closure) segment `s` holds whole trees — each node
            // together with its receiver — and the lakes whose trap node lies in it (a lake's
            // nodes are in the same pit basin as its trap node, so in the same segment); segments
            // are disjoint and each is processed by exactly one task. So a task reads and writes
            // only entries of its own nodes in `h`, `area`, `qs`, the maps, and only its own
            // traps' `lake_nodes` ranges; no task reads `r.area` or `r.lake_nodes` through `r`.
            // The MFD area's powers are only read. All indices are node indices (< n) from `r.stack`.
            .map(|s| unsafe {
                let nodes = &r.stack[r.seg[s] as usize..r.seg[s + 1] as usize];
                if mfd_area_m.is_none() {
                    for &v in nodes {
                        area.write(v as usize, 1);
                    }
                    for &v in nodes.iter().rev() {
                        let i = v as usize;
                        let rc = r.rcv[i] as usize;
                        if rc != i {
                            area.write(rc, area.read(rc) + area.read(i));
                        }
                    }
                    if let Some(ro) = runoff {
                        // A steering mask: each node adds its weight instead of 1.
                        for &v in nodes {
                            warea.write(v as usize, ro[v as usize] as f64);
                        }
                        for &v in nodes.iter().rev() {
                            let i = v as usize;
                            let rc = r.rcv[i] as usize;
                            if rc != i {
                                warea.write(rc, warea.read(rc) + warea.read(i));
                            }
                        }
                    }
                }
                let mut eroded = 0.0f64;
                for &v in nodes {
                    let i = v as usize;
                    qs.write(i, 0.0);
                    let rc = r.rcv[i] as usize;
                    let hi = h.read(i);
                    if rc == i || (has_lakes && r.is_special(i) && hi < r.lake_level[i]) {
                        continue;
                    }
                    // A sea receiver is base level: the river cuts down to the sea surface, not
                    // to the sea floor.
                    let mut hr = h.read(rc);
                    if has_sea && sea_mask[rc] != 0 {
                        hr = hr.max(sea);
                    }
                    let d0 = hi as f64 - hr as f64;
                    if d0.is_nan() || d0 <= 0.0 {
                        continue;
                    }
                    let am = match mfd_area_m {
                        Some(fa) => fa[i],
                        None if runoff.is_some() => warea.read(i).powf(m),
                        None => {
                            let a = area.read(i) as usize;
                            if a < pw.len() { pw[a] } else { (a as f64).powf(m) }
                        }
                    };
                    let k = match hard {
                        Some(c) => kdt * c[i] as f64,
                        None => kdt,
                    };
                    let f = k * am * inv_dn[r.diag[i] as usize];
                    if f.is_nan() || f <= 0.0 {
                        continue;
                    }
                    let delta = if !f.is_finite() {
                        0.0
                    } else if linear {
                        d0 / (1.0 + f)
                    } else {
                        solve_incision(d0, f, n)
                    };
                    // hr + δ ≤ hi in f64, so the rounded f32 never rises above the old height,
                    // and never drops below the receiver.
                    let new = ((hr as f64 + delta) as f32).clamp(hr, hi);
                    let e = hi as f64 - new as f64;
                    h.write(i, new);
                    qs.write(i, e);
                    map_e.write(i, map_e.read(i) + e as f32);
                    eroded += e;
                }
                // Reverse order: every donor has added its flux to `qs[i]` before `i` is reached.
                let (mut deposited, mut lost) = (0.0f64, 0.0f64);
                for &v in nodes.iter().rev() {
                    let i = v as usize;
                    let mut q = qs.read(i);
                    if has_lakes && q > 0.0 && r.is_special(i) {
                        let t = r.trap_of[i];
                        if t != NONE {
                            let trap = r.traps[t as usize];
                            if deposit_in_lakes || trap.capacity.is_infinite() {
                                let lake = lake_nodes.slice_mut(trap.start as usize, trap.end as usize);
                                let d = fill_lake(&h, lake, trap.level, trap.capacity, q, &map_d);
                                deposited += d;
                                q -= d;
                            }
                        }
                    }
                    let rc = r.rcv[i] as usize;
                    if rc == i {
                        if has_sea && sea_mask[i] != 0 {
                            // Settles in the sea after the segments (it spreads over them).
                            qs.write(i, q);
                        } else {
                            lost += q;
                        }
                    } else {
                        qs.write(rc, qs.read(rc) + q);
                    }
                }
                [eroded, deposited, lost]
            })
            .collect();
        for b in books {
            self.ledger.eroded += b[0];
            self.ledger.deposited += b[1];
            self.ledger.lost_at_border += b[2];
        }
        if has_sea {
            self.settle_at_sea();
        }
    }

    /// Step 4 at the sea (module doc): the sediment that reached each sea node (in `qs`), mouths
    /// in index order, fills the mouth and then the sea nodes around it, nearest first, each up
    /// to the sea level at most; what does not fit within [`SEA_SPREAD`] is lost. Serial (the
    /// fills of neighbouring mouths overlap), so the result is the same at any thread count.
    #[inline(never)]
    fn settle_at_sea(&mut self) {
        let (w, hgt) = (self.hm.width as i32, self.hm.height as i32);
        let top = self.sea - SEA_SHELF;
        let (mut deposited, mut lost) = (0.0f64, 0.0f64);
        for i in 0..self.qs.len() {
            if self.sea_mask[i] == 0 || self.router.rcv[i] as usize != i {
                continue;
            }
            let mut q = self.qs[i];
            if q.is_nan() || q <= 0.0 {
                continue;
            }
            self.qs[i] = 0.0;
            let (x, y) = ((i as i32) % w, (i as i32) / w);
            for &(dx, dy) in &self.disk {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w || ny >= hgt {
                    continue;
                }
                let j = (ny * w + nx) as usize;
                let old = self.hm.data[j];
                if self.sea_mask[j] == 0 || old >= top {
                    continue;
                }
                let room = top as f64 - old as f64;
                let new = if q >= room { top } else { ((old as f64 + q) as f32).min(top) };
                let c = new as f64 - old as f64;
                if c > 0.0 {
                    self.hm.data[j] = new;
                    self.maps.deposited[j] += c as f32;
                    deposited += c;
                    q -= c;
                }
                if q <= 0.0 {
                    break;
                }
            }
            if q > 0.0 {
                lost += q;
            }
        }
        self.ledger.deposited += deposited;
        self.ledger.lost_at_border += lost;
    }

    /// Step 5: implicit hillslope diffusion, booked per node.
    #[inline(never)]
    fn diffuse(&mut self) {
        let Some(d) = self.diffusion.as_mut() else { return };
        let dx = self.hm.cell_size as f64;
        let r = self.p.diffusion as f64 * self.p.dt as f64 / (dx * dx);
        // The sea is a fixed value at the sea surface: coasts slope toward the water, never
        // below it (the scheme is monotone), and the sea floor is not moved.
        self.sea_lift.clear();
        for (i, &s) in self.sea_mask.iter().enumerate() {
            let v = self.hm.data[i];
            if s != 0 && v < self.sea {
                self.sea_lift.push((i as u32, v));
                self.hm.data[i] = self.sea;
            }
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.hm.data);
        d.apply(&mut self.hm.data, r);
        for &(i, v) in &self.sea_lift {
            self.hm.data[i as usize] = v;
            self.scratch[i as usize] = v;
        }
        let w = self.hm.width;
        let rows: Vec<(f64, f64)> = self
            .hm
            .data
            .par_chunks(w)
            .zip(self.scratch.par_chunks(w))
            .zip(self.maps.eroded.par_chunks_mut(w).zip(self.maps.deposited.par_chunks_mut(w)))
            .map(|((new, old), (er, de))| {
                let (mut lo, mut gain) = (0.0f64, 0.0f64);
                for x in 0..new.len() {
                    let c = new[x] as f64 - old[x] as f64;
                    if c < 0.0 {
                        er[x] -= c as f32;
                        lo -= c;
                    } else if c > 0.0 {
                        de[x] += c as f32;
                        gain += c;
                    }
                }
                (lo, gain)
            })
            .collect();
        let (lo, gain) = rows.iter().fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        self.ledger.eroded += lo;
        self.ledger.deposited += gain;
        self.ledger.lost_at_border += lo - gain;
    }
}

/// Terrain-following uplift rates, m/yr (module doc, step 1): `u · clamp((h − b)/(h_max − b), 0,
/// 1)^p` with `b` the sea level, or the lowest height without a sea.
pub(crate) fn terrain_uplift(h: &[f32], sea: Option<f32>, u: f32, p: f32) -> Vec<f32> {
    let base = sea.unwrap_or_else(|| h.iter().copied().fold(f32::INFINITY, f32::min)) as f64;
    let top = h.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let span = top - base;
    h.iter()
        .map(|&v| {
            let t = (v as f64 - base) / span;
            if t > 0.0 && span.is_finite() { (u as f64 * t.min(1.0).powf(p as f64)) as f32 } else { 0.0 }
        })
        .collect()
}

/// Root `δ ∈ [0, δ₀]` of `δ − δ₀ + F·δ^n = 0` (`δ₀ > 0`, `F > 0` finite): Newton's method from
/// `min(δ₀, (δ₀/F)^(1/n))`, kept inside a shrinking bracket by bisection.
fn solve_incision(d0: f64, f: f64, n: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, d0);
    let mut x = (d0 / f).powf(1.0 / n).min(d0);
    if x.is_nan() || x <= 0.0 {
        x = 0.5 * d0;
    }
    for _ in 0..100 {
        let p = x.powf(n - 1.0);
        let g = x - d0 + f * p * x;
        if g == 0.0 {
            return x;
        }
        if g > 0.0 {
            hi = x;
        } else {
            lo = x;
        }
        let dg = 1.0 + n * f * p;
        let mut nx = x - g / dg;
        if !(nx > lo && nx < hi) {
            nx = 0.5 * (lo + hi);
        }
        if (nx - x).abs() <= 1e-14 * x.max(1e-300) || hi - lo <= 1e-15 * d0 {
            return nx.clamp(0.0, d0);
        }
        x = nx;
    }
    x.clamp(0.0, d0)
}

/// Fills a lake from the bottom with `v` metre·nodes (module doc, step 4). Returns the volume
/// actually added (the sum of the applied f32 changes), also added to the deposition map `dep`.
///
/// # Safety
/// The caller has exclusive access to the entries of `nodes` in `h` and `dep`, all in bounds.
unsafe fn fill_lake(h: &Shared<f32>, nodes: &mut [u32], level: f32, capacity: f64, v: f64, dep: &Shared<f32>) -> f64 {
    if nodes.is_empty() || v.is_nan() || v <= 0.0 {
        return 0.0;
    }
    let raise = |k: u32, to: f32| -> f64 {
        let k = k as usize;
        // SAFETY: exclusive access to the lake's entries (caller's contract).
        unsafe {
            let old = h.read(k);
            if to > old {
                h.write(k, to);
                let c = to as f64 - old as f64;
                dep.write(k, dep.read(k) + c as f32);
                c
            } else {
                0.0
            }
        }
    };
    // SAFETY: as above.
    let height = |k: u32| unsafe { h.read(k as usize) };
    if v >= capacity {
        return nodes.iter().map(|&k| raise(k, level)).sum();
    }
    nodes.sort_unstable_by(|&a, &b| height(a).total_cmp(&height(b)).then(a.cmp(&b)));
    let mut sum = 0.0f64;
    let mut lambda = level as f64;
    let mut count = nodes.len();
    for j in 0..nodes.len() {
        sum += height(nodes[j]) as f64;
        let next = if j + 1 < nodes.len() { height(nodes[j + 1]) as f64 } else { level as f64 };
        if (j + 1) as f64 * next - sum >= v {
            lambda = (v + sum) / (j + 1) as f64;
            count = j + 1;
            break;
        }
    }
    // The terminal basin has no ceiling: keep the level inside the f32 range (what does not fit
    // is returned undeposited and booked by the caller).
    let to = (lambda.min(f32::MAX as f64) as f32).min(level);
    nodes[..count].iter().map(|&k| raise(k, to)).sum()
}

impl Simulation for StreamPowerJob {
    fn step(&mut self) {
        if self.done >= self.p.steps {
            return;
        }
        self.uplift();
        self.router.route_without_area(&self.hm.data);
        if let Some(f) = self.mfd.as_mut() {
            f.compute(&self.router, &self.hm.data, self.p.mfd_exponent as f64);
            f.power_of_area(self.p.m as f64);
        }
        self.erode();
        self.diffuse();
        self.done += 1;
    }

    fn progress(&self) -> Progress {
        Progress { done: self.done, total: self.p.steps }
    }

    fn heightmap(&self) -> &Heightmap {
        &self.hm
    }

    fn ledger(&self) -> Ledger {
        Ledger { volume_after: self.hm.sum(), ..self.ledger }
    }

    fn maps(&self) -> &ErosionMaps {
        &self.maps
    }

    fn fields(&self) -> Fields {
        let flow = match &self.mfd {
            Some(f) => f.area.iter().map(|&a| a as f32).collect(),
            None if !self.warea.is_empty() => self.warea.iter().map(|&a| a as f32).collect(),
            None => self.router.area.iter().map(|&a| a as f32).collect(),
        };
        let water =
            self.hm.data.iter().zip(&self.router.lake_level).map(|(&h, &l)| if l > h { l - h } else { 0.0 }).collect();
        Fields { flow: Some(flow), water: Some(water), ..Fields::default() }
    }

    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) {
        super::apply_edit(&mut self.hm, &mut self.ledger.volume_before, f);
    }
}

#[cfg(test)]
mod tests;
