//! The scalar droplet step (steps 1–7 of the module doc, with the edge rules and the sea mode's
//! branches): a droplet's state [`Drop`], the step context [`Ctx`] with raw access to the maps,
//! and the serial walk.

use super::super::particles::{self, Books, Geom, Raw, Rect, Walker};
use super::LAND_SPREAD;
use super::SUB;
use super::brush::{Brush, brush_clipped, brush_fast, deposit4, take};
use crate::core::rng::SplitMix64;

/// One droplet's state.
#[derive(Clone, Debug)]
pub(super) struct Drop {
    pub(super) x: f32,
    pub(super) y: f32,
    pub(super) dx: f32,
    pub(super) dy: f32,
    pub(super) speed: f32,
    pub(super) water: f32,
    /// Carried sediment, f64 so it mirrors the booked height changes exactly.
    pub(super) sediment: f64,
    pub(super) life: u32,
    pub(super) alive: bool,
    pub(super) rng: SplitMix64,
}

impl Walker for Drop {
    fn alive(&self) -> bool {
        self.alive
    }
    fn stalled(&self) -> bool {
        false
    }
}

impl Drop {
    /// A dead droplet at node 0 (an empty lane).
    pub(super) fn parked() -> Self {
        Drop {
            x: 0.0,
            y: 0.0,
            dx: 0.0,
            dy: 0.0,
            speed: 0.0,
            water: 0.0,
            sediment: 0.0,
            life: 0,
            alive: false,
            rng: SplitMix64::new(0),
        }
    }
}

/// Everything a droplet step reads, with raw access to the shared maps.
pub(super) struct Ctx<'a> {
    pub(super) geom: Geom,
    pub(super) raw: Raw,
    pub(super) brush: &'a Brush,
    pub(super) inertia: f32,
    pub(super) min_slope: f32,
    pub(super) capacity: f32,
    pub(super) deposition: f32,
    pub(super) erosion: f32,
    /// One step erodes at most `−Δh · dig` ([`super::DropletGrid::dig`]).
    pub(super) dig: f32,
    pub(super) gravity: f32,
    pub(super) keep_water: f32,
    pub(super) max_life: u32,
    pub(super) min_water: f32,
    /// `min_height` or −∞ (with a sea, at least the sea level).
    pub(super) floor: f32,
    /// The sea level, or −∞ without a sea. A droplet whose position is at or below it has
    /// reached the sea (see [`Ctx::sea_step`]).
    pub(super) sea: f32,
    /// Sea mode (a sea level is set): deposits are spread over a disc ([`LAND_SPREAD`]) instead
    /// of bilinearly over the four corners of the droplet's cell.
    pub(super) spread: bool,
    /// Cells finer than `path_step_m`: every deposit is spread with the erosion brush
    /// ([`super::DropletGrid::wide`]); this wins over `spread`.
    pub(super) wide: bool,
    /// Sink mode of a steering mask: its weights, a padded plane like the heights. A droplet
    /// whose nearest node has weight 0 stops there and drops its load ([`Ctx::step`]).
    pub(super) sink: Option<&'a [f32]>,
}

impl Ctx<'_> {
    /// Runs droplet `d` to its end (the classic serial algorithm).
    ///
    /// # Safety
    /// `self.raw` points at live maps of `geom.w × geom.h` nodes and the caller has exclusive
    /// access to them.
    pub(super) unsafe fn walk(&self, d: &mut Drop, b: &mut Books) {
        // SAFETY: the caller has exclusive access to the live maps, which is `step`'s contract
        // with `rect = None`.
        while unsafe { self.step(d, None, b) } {}
    }

    /// One step of droplet `d` (SPEC §2a steps 1–7). Returns `false` when the droplet has ended,
    /// or (with `rect`) when it does not stand in that tile — then it took no step.
    ///
    /// # Safety
    /// `self.raw` points at live maps of `geom.w × geom.h` nodes. With `rect = Some(t)` no other
    /// thread may touch a node within [`Ctx::margin`] of `t` while this runs: every node a step
    /// reads or writes lies within that margin of the cell the droplet stands on when it starts,
    /// and it only starts from cells inside `t`. With `None` the caller must have exclusive access
    /// to the maps.
    #[inline(always)]
    pub(super) unsafe fn step(&self, d: &mut Drop, rect: Option<Rect>, b: &mut Books) -> bool {
        let g = &self.geom;
        let raw = &self.raw;
        if !d.alive {
            return false;
        }
        if d.life >= self.max_life {
            // SAFETY: the maps are live, and the droplet stands in this task's tile (a tile's
            // queue holds only droplets standing in it, and lanes are loaded from that queue)
            // or the caller has exclusive access: `settle` writes within the margin.
            unsafe { self.settle(d, b) };
            return false;
        }
        if let Some(t) = rect {
            let (cx, cy) = g.owner_cell(d.x, d.y);
            if !t.owns(cx, cy) {
                return false;
            }
        }
        if let Some(s) = self.sink
            && s[g.nearest(d.x, d.y)] == 0.0
        {
            // A sink (steering mask): the flow ends here, the load is dropped.
            // SAFETY: as the `settle` above: the droplet stands in the tile.
            unsafe { self.settle(d, b) };
            return false;
        }
        // 1. Height and gradient at the old position.
        let (idx, u, v) = g.cell(d.x, d.y);
        // SAFETY: `cell` clamps (or wraps) into the map, so the indices are < `raw.n`; the
        // droplet's cell is in the tile, so no other thread writes these nodes.
        let [h00, h10, h01, h11] = unsafe { [raw.h(idx[0]), raw.h(idx[1]), raw.h(idx[2]), raw.h(idx[3])] };
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let h_old = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        if h_old <= self.sea {
            // SAFETY: `sea_step` has this function's contract; the droplet stands in the tile.
            return unsafe { self.sea_step(d, gx, gy, b) };
        }
        // 2. New direction.
        let mut dx = d.dx * self.inertia - gx * (1.0 - self.inertia);
        let mut dy = d.dy * self.inertia - gy * (1.0 - self.inertia);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-6 || !len.is_finite() {
            (dx, dy) = particles::random_unit(&mut d.rng);
        } else {
            dx /= len;
            dy /= len;
        }
        // 3. One cell along it; the edges decide what leaving means.
        let (nx, ny) = match g.confine(d.x + dx, d.y + dy) {
            particles::Confined::Exit => {
                b.lost += d.sediment;
                d.sediment = 0.0;
                d.alive = false;
                return false;
            }
            particles::Confined::Inside { x, y, flip_x, flip_y } => {
                if flip_x {
                    dx = -dx;
                }
                if flip_y {
                    dy = -dy;
                }
                (x, y)
            }
        };
        d.dx = dx;
        d.dy = dy;
        // 4. Height difference.
        // SAFETY: `confine` put `(nx, ny)` in the domain, one cell from the droplet's cell in
        // the tile: in the map and within the margin, so nobody writes it concurrently.
        let h_new = unsafe { g.sample(raw, nx, ny) };
        let dh = h_new - h_old;
        // 5./6. Deposit or erode at the old position.
        let sed = d.sediment as f32;
        if dh > 0.0 {
            let a = sed.min(dh);
            if a > 0.0 {
                // SAFETY: `(d.x, d.y)` is in the map (in the tile), `idx` its in-map cell.
                let put = unsafe { self.deposit_at(d.x, d.y, idx, u, v, a) };
                b.deposited += put;
                d.sediment -= put;
            }
        } else {
            let cap = ((-dh).max(self.min_slope) * d.speed * d.water * self.capacity).min(1e30);
            if sed > cap {
                let a = (sed - cap) * self.deposition;
                if a > 0.0 {
                    // SAFETY: `(d.x, d.y)` is in the map (in the tile), `idx` its in-map cell.
                    let put = unsafe { self.deposit_at(d.x, d.y, idx, u, v, a) };
                    b.deposited += put;
                    d.sediment -= put;
                }
            } else {
                let a = ((cap - sed) * self.erosion).min(-dh * self.dig);
                if a > 0.0 {
                    // SAFETY: `(d.x, d.y)` is in the map and its cell in the tile; the brush
                    // reaches at most `reach + 3` nodes, within the margin.
                    let got = unsafe { self.erode(d.x, d.y, a) };
                    b.eroded += got;
                    d.sediment += got;
                }
            }
        }
        // 7. Speed and water.
        d.speed = (d.speed * d.speed - dh * self.gravity).clamp(0.0, 1e30).sqrt();
        d.water *= self.keep_water;
        d.life += 1;
        d.x = nx;
        d.y = ny;
        // SAFETY: `nearest` of a position in the domain is an in-map node, one cell from the
        // start cell: within the margin.
        unsafe { raw.visit(g.nearest(nx, ny), d.water) };
        if d.water < self.min_water {
            // SAFETY: the droplet stands one cell from its start cell in the tile; `settle`'s
            // writes stay within the margin.
            unsafe { self.settle(d, b) };
            return false;
        }
        true
    }

    /// Drops all remaining sediment at the droplet's position and ends it.
    ///
    /// # Safety
    /// As [`Ctx::walk`].
    pub(super) unsafe fn settle(&self, d: &mut Drop, b: &mut Books) {
        let mut put = 0.0;
        if d.sediment > 0.0 {
            let (idx, u, v) = self.geom.cell(d.x, d.y);
            // SAFETY: as this function; `(d.x, d.y)` is a droplet position (in the map) and
            // `idx` its in-map cell.
            put = unsafe { self.deposit_at(d.x, d.y, idx, u, v, d.sediment as f32) };
            b.deposited += put;
        }
        // What f32 heights could not represent (a few ulps at most) is booked, not lost.
        b.residue(d.sediment - put);
        d.sediment = 0.0;
        d.alive = false;
    }

    /// A deposit of `amount` at `(x, y)` (cell `idx`, offsets `u, v`): spread over a disc of
    /// [`LAND_SPREAD`] nodes in sea mode, bilinear otherwise. Returns what the heights received.
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(x, y)` lies in the map.
    #[inline(always)]
    pub(super) unsafe fn deposit_at(&self, x: f32, y: f32, idx: [usize; 4], u: f32, v: f32, amount: f32) -> f64 {
        if self.wide {
            // SAFETY: `(x, y)` is in the map (caller); the brush reaches at most `reach + 1`
            // nodes from its cell, within the margin the caller may write.
            unsafe { self.deposit_spread(x, y, amount, f32::INFINITY) }
        } else if self.spread {
            // SAFETY: `(x, y)` is in the map (caller); the disc reaches ⌈LAND_SPREAD⌉ + 1 = 3
            // nodes from its cell, within the margin the caller may write.
            unsafe { particles::deposit_disc(&self.raw, &self.geom, x, y, amount, LAND_SPREAD, f32::INFINITY) }
        } else {
            // SAFETY: `idx` is the in-map cell of `(x, y)`, which the caller may write.
            unsafe { deposit4(&self.raw, idx, u, v, amount) }
        }
    }

    /// Erodes `amount` with the brush centred at `(x, y)`; returns what was actually removed.
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(x, y)` lies in the map.
    pub(super) unsafe fn erode(&self, x: f32, y: f32, amount: f32) -> f64 {
        let g = &self.geom;
        let (bx, by) = g.owner_cell(x, y);
        let qx = (((x - bx as f32) * SUB as f32) as usize).min(SUB - 1);
        let qy = (((y - by as f32) * SUB as f32) as usize).min(SUB - 1);
        let var = &self.brush.variants[qy * SUB + qx];
        let r = self.brush.reach;
        let raw = &self.raw;
        let mut got = 0.0f64;
        let br = self.brush;
        if bx as isize + br.lo >= 0 && by >= r && bx as isize + br.hi < g.w as isize && by + r + 1 < g.h {
            // Fast path: the whole padded brush is inside the map.
            let base = by * g.pitch + bx;
            let guard = self.floor > f32::NEG_INFINITY;
            // The chunks span bx+lo..=bx+hi × by−r..=by+r+1, inside the map (checked above) and
            // within this task's margin. `HARD` is set exactly when `raw.hard` is non-null.
            got = match (raw.hard.is_null(), guard) {
                // SAFETY: every chunk of `var` at `base` is in the map (the `if` above) and
                // within the margin the caller may write.
                (true, false) => unsafe { brush_fast::<false, false>(raw, var, base, amount, self.floor) },
                // SAFETY: as the arm above.
                (true, true) => unsafe { brush_fast::<false, true>(raw, var, base, amount, self.floor) },
                // SAFETY: as above; `HARD` reads the non-null hardness map at the same nodes.
                (false, false) => unsafe { brush_fast::<true, false>(raw, var, base, amount, self.floor) },
                // SAFETY: as above; `HARD` reads the non-null hardness map at the same nodes.
                (false, true) => unsafe { brush_fast::<true, true>(raw, var, base, amount, self.floor) },
            } as f64;
        } else if !g.wrap_x && !g.wrap_y {
            // Clipped by the map edge: renormalise over the in-map nodes.
            let guard = self.floor > f32::NEG_INFINITY;
            // `brush_clipped` touches in-map nodes of the brush only. `HARD` is set exactly when
            // `raw.hard` is non-null.
            got = match (raw.hard.is_null(), guard) {
                // SAFETY: `brush_clipped` has this function's contract, and `(bx, by)` (the
                // owner cell of an in-map position) is a node of the map.
                (true, false) => unsafe {
                    brush_clipped::<false, false>(&self.geom, &self.raw, self.floor, var, bx, by, amount)
                },
                // SAFETY: as the arm above.
                (true, true) => unsafe {
                    brush_clipped::<false, true>(&self.geom, &self.raw, self.floor, var, bx, by, amount)
                },
                // SAFETY: as above; `HARD` with a non-null hardness map.
                (false, false) => unsafe {
                    brush_clipped::<true, false>(&self.geom, &self.raw, self.floor, var, bx, by, amount)
                },
                // SAFETY: as above; `HARD` with a non-null hardness map.
                (false, true) => unsafe {
                    brush_clipped::<true, true>(&self.geom, &self.raw, self.floor, var, bx, by, amount)
                },
            };
        } else {
            // Slow path: clip (renormalising over the in-map nodes) or wrap.
            let mut sum = 0.0f32;
            for &(dx, dy, w) in &var.taps {
                if g.node(bx as isize + dx as isize, by as isize + dy as isize).is_some() {
                    sum += w;
                }
            }
            if sum <= 0.0 {
                return 0.0;
            }
            for &(dx, dy, w) in &var.taps {
                if let Some(i) = g.node(bx as isize + dx as isize, by as isize + dy as isize) {
                    // SAFETY: `node` only returns in-map indices (< `raw.n`).
                    let k = unsafe { raw.hard(i) };
                    // SAFETY: `node` only returns in-map indices.
                    let (h, e) = unsafe { (&mut *raw.h.add(i), &mut *raw.ero.add(i)) };
                    got += take(h, e, amount * (w / sum) * k, self.floor);
                }
            }
        }
        got
    }
}
