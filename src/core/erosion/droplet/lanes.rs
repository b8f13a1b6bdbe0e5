//! The lockstep lane kernel: [`LANES`] droplets of a tile advance together, their steps planned
//! branch-free (SIMD; AVX2 where the CPU has it, same bits) and their map writes applied lane by
//! lane (see the module doc, "Parallel scheme").

use super::super::particles::{self, Books, Rect};
use super::LAND_SPREAD;
use super::brush::{brush_fast, deposit_cell};
use super::step::{Ctx, Drop};
use super::{LANES, SUB, portable_only};

/// [`LANES`] droplets in structure-of-arrays form (see [`Ctx::walk_group`]); the random stream
/// stays in the droplet's slot of the task's slice.
#[derive(Clone, Debug, Default)]
pub(super) struct Lanes {
    pub(super) x: [f32; LANES],
    pub(super) y: [f32; LANES],
    pub(super) dx: [f32; LANES],
    pub(super) dy: [f32; LANES],
    pub(super) speed: [f32; LANES],
    pub(super) water: [f32; LANES],
    pub(super) sed: [f64; LANES],
    pub(super) life: [u32; LANES],
    pub(super) alive: [bool; LANES],
    /// Index of the lane's droplet in the task's slice.
    pub(super) slot: [u32; LANES],
}

impl Lanes {
    #[inline(always)]
    pub(super) fn load(&mut self, l: usize, slot: usize, d: &Drop) {
        (self.x[l], self.y[l], self.dx[l], self.dy[l]) = (d.x, d.y, d.dx, d.dy);
        (self.speed[l], self.water[l], self.sed[l]) = (d.speed, d.water, d.sediment);
        (self.life[l], self.alive[l], self.slot[l]) = (d.life, d.alive, slot as u32);
    }

    #[inline(always)]
    pub(super) fn store(&self, l: usize, ds: &mut [Drop]) {
        let d = &mut ds[self.slot[l] as usize];
        (d.x, d.y, d.dx, d.dy) = (self.x[l], self.y[l], self.dx[l], self.dy[l]);
        (d.speed, d.water, d.sediment) = (self.speed[l], self.water[l], self.sed[l]);
        (d.life, d.alive) = (self.life[l], self.alive[l]);
    }

    /// Takes the planned state for the lanes of `mask`.
    #[inline(always)]
    pub(super) fn commit(&mut self, p: &Plan, mask: u32) {
        for l in 0..LANES {
            if mask & (1 << l) != 0 {
                (self.x[l], self.y[l], self.dx[l], self.dy[l]) = (p.nx[l], p.ny[l], p.dx[l], p.dy[l]);
                (self.speed[l], self.water[l]) = (p.speed[l], p.water[l]);
                self.life[l] += 1;
            }
        }
    }

    /// Empties lane `l` (never stepped). It rests on the first node of `rect` (node 0 without a
    /// tile): [`Ctx::plan`] still reads an empty lane's cell and discards what it read, and inside
    /// the tile that read stays within the nodes this thread owns, so it never meets another
    /// thread's write.
    pub(super) fn park(&mut self, l: usize, rect: Option<Rect>) {
        let (x, y) = rect.map_or((0.0, 0.0), |t| (t.x0 as f32, t.y0 as f32));
        self.load(l, 0, &Drop { x, y, ..Drop::parked() });
    }
}

/// The bilinear cells of [`LANES`] positions (see [`Ctx::corners`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Corners {
    /// Flat index of `h00`, its column and row, the offsets in the cell, the corner heights
    /// `[h00, h10, h01, h11]`.
    pub(super) i: [u32; LANES],
    pub(super) xi: [i32; LANES],
    pub(super) yi: [i32; LANES],
    pub(super) u: [f32; LANES],
    pub(super) v: [f32; LANES],
    pub(super) h: [[f32; LANES]; 4],
}

/// What [`Ctx::plan`] worked out for every lane.
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    /// Bit `l`: lane `l` takes a plain step with these values.
    pub(super) plain: u32,
    /// Bit `l`: after this step lane `l`'s droplet ends or stands outside the tile.
    pub(super) attention: u32,
    /// Bit `l`: lane `l`'s padded brush lies in the map.
    pub(super) fits: u32,
    /// Flat index of the node `h00` of the lane's cell (maps have at most 2²⁸ nodes).
    pub(super) cell: [u32; LANES],
    /// Bilinear weights of the cell's four nodes (`[node][lane]`), for a deposit.
    pub(super) wts: [[f32; LANES]; 4],
    /// Brush variant for the position in the cell.
    pub(super) variant: [u32; LANES],
    /// What to deposit (> 0) or erode (> 0) at the old position.
    pub(super) deposit: [f32; LANES],
    pub(super) erode: [f32; LANES],
    /// The new state.
    pub(super) dx: [f32; LANES],
    pub(super) dy: [f32; LANES],
    pub(super) nx: [f32; LANES],
    pub(super) ny: [f32; LANES],
    pub(super) speed: [f32; LANES],
    pub(super) water: [f32; LANES],
    /// Node nearest to the new position (flow map).
    pub(super) visit: [u32; LANES],
}

impl Ctx<'_> {
    /// Advances the droplets of one tile until each has ended or stepped out of it, [`LANES`] at a
    /// time in lockstep. Every turn
    ///
    /// 1. [`Ctx::plan`]s the step of all lanes together: steps 1–4, the amount to deposit or
    ///    erode, the new speed, water and position, and whether the droplet ends or leaves the
    ///    tile — branch-free, so it runs as SIMD and the lanes' memory accesses overlap;
    /// 2. applies the planned changes to the maps lane by lane, in lane order (deposit, brush,
    ///    flow map), and commits the planned droplet states;
    /// 3. ends the lanes' droplets that are done (dropping their sediment) and lets go of those
    ///    that left the tile, in lane order, each lane taking the next droplet of `ds`.
    ///
    /// A step that is not plain — a cell next to the last row or column, a random direction, an
    /// edge to confine — is run by [`Ctx::step`] instead, in its place in step 2, from the
    /// current heights. With `rect = None` (the whole map is this task's) nothing leaves.
    ///
    /// So a lane reads the heights before the other lanes' steps of the same turn were applied:
    /// within a turn the lanes' steps are concurrent, across turns sequential.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    pub(super) unsafe fn walk_group(&self, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) {
        if self.sink.is_some() {
            // Sink mode runs the scalar step (which ends droplets on sink nodes), each droplet
            // until it ends or leaves the tile, in slice order.
            for d in ds.iter_mut() {
                // SAFETY: `step` has this function's contract.
                while unsafe { self.step(d, rect, b) } {}
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && !portable_only() {
            // SAFETY: the CPU has AVX2; otherwise as this function.
            return unsafe { self.walk_lanes_avx2(ds, rect, b) };
        }
        // SAFETY: as this function.
        unsafe { self.walk_lanes_any(ds, rect, b) }
    }

    /// [`Ctx::walk_lanes_any`] compiled for AVX2 (8 lanes per vector instead of 4). Only vector
    /// width and instruction encoding differ — IEEE single precision, no fused multiply-add — so
    /// the results are the same bits.
    ///
    /// # Safety
    /// As [`Ctx::step`], on a CPU with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn walk_lanes_avx2(&self, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) {
        // SAFETY: as this function.
        unsafe { self.walk_lanes_any(ds, rect, b) }
    }

    /// Dispatches [`Ctx::walk_lanes`] on hardness and the `min_height` guard.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[inline(always)]
    pub(super) unsafe fn walk_lanes_any(&self, ds: &mut [Drop], rect: Option<Rect>, b: &mut Books) {
        let guard = self.floor > f32::NEG_INFINITY;
        // `HARD` is set exactly when `raw.hard` is non-null, so the monomorphised kernel only
        // reads the hardness map when there is one.
        match (self.raw.hard.is_null(), guard) {
            // SAFETY: `walk_lanes` has this function's contract (as `Ctx::step`).
            (true, false) => unsafe { self.walk_lanes::<false, false>(ds, rect, b) },
            // SAFETY: as the arm above.
            (true, true) => unsafe { self.walk_lanes::<false, true>(ds, rect, b) },
            // SAFETY: as above; `HARD` with a non-null `raw.hard`.
            (false, false) => unsafe { self.walk_lanes::<true, false>(ds, rect, b) },
            // SAFETY: as above; `HARD` with a non-null `raw.hard`.
            (false, true) => unsafe { self.walk_lanes::<true, true>(ds, rect, b) },
        }
    }

    /// [`Ctx::walk_group`], monomorphised on hardness and the `min_height` guard.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[inline(always)]
    pub(super) unsafe fn walk_lanes<const HARD: bool, const GUARD: bool>(
        &self,
        ds: &mut [Drop],
        rect: Option<Rect>,
        b: &mut Books,
    ) {
        // The tile as a position range: a plain step ends in the tile iff its position does.
        let area = match rect {
            Some(t) => [t.x0 as f32, t.x1 as f32, t.y0 as f32, t.y1 as f32],
            None => [0.0, f32::INFINITY, 0.0, f32::INFINITY],
        };
        let mut s = Lanes::default();
        let mut next = 0usize;
        let mut live = 0u32;
        for l in 0..LANES {
            // SAFETY: `fill` has this function's contract (as `Ctx::step`), which the caller upholds.
            if unsafe { self.fill(&mut s, l, ds, &mut next, rect, b) } {
                live |= 1 << l;
            }
        }
        while live != 0 {
            // SAFETY: every live lane was loaded by `fill` (or kept by `keeps`/the attention
            // mask) only while its droplet stands in `rect`, so the nodes it reads — its cell and
            // the cell one step on — lie within `Ctx::margin` of the tile, which no other thread
            // touches (this function's contract). A parked lane (bit clear in `live`) is read too
            // and its result discarded; it rests on the tile's first node (`Lanes::park`), so
            // that read stays within the tile as well.
            let p = unsafe { self.plan(&s, &area) };
            let plain = p.plain & live;
            // Lanes to end or let go after this turn.
            let mut out = p.attention & plain;
            for l in 0..LANES {
                if live & (1 << l) == 0 {
                    continue;
                }
                if plain & (1 << l) != 0 {
                    // SAFETY: lane `l` is live, so its droplet stands in the tile and its planned
                    // cell is inside it (`apply`'s contract); otherwise as this function.
                    unsafe { self.apply::<HARD, GUARD>(&mut s, &p, l, b) };
                } else {
                    // SAFETY: `step_lane` and `keeps` have this function's contract (as `Ctx::step`).
                    let goes_on = unsafe { self.step_lane(&mut s, l, ds, rect, b) && self.keeps(&mut s, l, rect, b) };
                    if !goes_on {
                        out |= 1 << l;
                    }
                }
            }
            s.commit(&p, plain);
            while out != 0 {
                let l = out.trailing_zeros() as usize;
                out &= out - 1;
                if plain & (1 << l) != 0 && (s.water[l] < self.min_water || s.life[l] >= self.max_life) {
                    // SAFETY: as this function. The droplet stands one plain step (one cell, kept
                    // strictly inside the map by `plan`) from a cell in the tile, so the nodes
                    // `settle` writes lie in the map within the margin, as in a scalar step.
                    unsafe { self.settle_lane(&mut s, l, b) };
                }
                s.store(l, ds);
                // SAFETY: as the first `fill` above.
                if !unsafe { self.fill(&mut s, l, ds, &mut next, rect, b) } {
                    live &= !(1 << l);
                }
            }
        }
    }

    /// Loads the next droplet of `ds` that can step in `rect` into lane `l`; droplets that are
    /// dead, out of the tile or at the end of their life (settled here) are passed over.
    /// Returns `false` when `ds` is used up (the lane is then parked on the tile's first node).
    ///
    /// # Safety
    /// As [`Ctx::step`].
    pub(super) unsafe fn fill(
        &self,
        s: &mut Lanes,
        l: usize,
        ds: &mut [Drop],
        next: &mut usize,
        rect: Option<Rect>,
        b: &mut Books,
    ) -> bool {
        while *next < ds.len() {
            let i = *next;
            *next += 1;
            let d = &mut ds[i];
            if !d.alive {
                continue;
            }
            if d.life >= self.max_life {
                // SAFETY: as this function (`settle`'s contract). `ds` is this tile's queue, so
                // the droplet stands in the tile.
                unsafe { self.settle(d, b) };
                continue;
            }
            if let Some(t) = rect {
                let (cx, cy) = self.geom.owner_cell(d.x, d.y);
                if !t.owns(cx, cy) {
                    continue;
                }
            }
            s.load(l, i, d);
            return true;
        }
        s.park(l, rect);
        false
    }

    /// After a step of lane `l` run by [`Ctx::step`]: ends a droplet that reached its lifetime
    /// (dropping its sediment) and lets go of one that left the tile. Returns whether the lane
    /// steps on.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    pub(super) unsafe fn keeps(&self, s: &mut Lanes, l: usize, rect: Option<Rect>, b: &mut Books) -> bool {
        if s.life[l] >= self.max_life {
            // SAFETY: as this function; the droplet has just taken a step that started in the
            // tile, so it stands within the margin.
            unsafe { self.settle_lane(s, l, b) };
            return false;
        }
        match rect {
            Some(t) => {
                let (cx, cy) = self.geom.owner_cell(s.x[l], s.y[l]);
                t.owns(cx, cy)
            }
            None => true,
        }
    }

    /// Plans one step for every lane at once (see [`Ctx::walk_group`]): the same arithmetic as
    /// [`Ctx::step`], so a plain step gives the same bits either way. `area` is the tile as
    /// `[x0, x1, y0, y1]`.
    ///
    /// # Safety
    /// `self.raw` holds the maps and no other thread writes the nodes the lanes read.
    #[inline(always)]
    pub(super) unsafe fn plan(&self, s: &Lanes, area: &[f32; 4]) -> Plan {
        let g = &self.geom;
        let (xlast, ylast) = ((g.w - 1) as f32, (g.h - 1) as f32);
        let mut p = Plan::default();
        // 1. Height and gradient at the position.
        // SAFETY: `corners` has this function's contract.
        let old = unsafe { self.corners(&s.x, &s.y) };
        let (u, v, [h00, h10, h01, h11]) = (old.u, old.v, old.h);
        let (mut sx, mut sy) = ([0.0f32; LANES], [0.0f32; LANES]);
        let mut h_old = [0.0f32; LANES];
        let mut plain = [0u32; LANES];
        for l in 0..LANES {
            let (u, v) = (u[l], v[l]);
            let (h00, h10, h01, h11) = (h00[l], h10[l], h01[l], h11[l]);
            let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
            let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
            h_old[l] = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
            // 2. Direction.
            let dx = s.dx[l] * self.inertia - gx * (1.0 - self.inertia);
            let dy = s.dy[l] * self.inertia - gy * (1.0 - self.inertia);
            let len = (dx * dx + dy * dy).sqrt();
            let (dx, dy) = (dx / len, dy / len);
            // 3. Plain: a real direction, and the old and new cells strictly inside the last
            // row and column (no edge, seam or clamp involved).
            let (x, y) = (s.x[l], s.y[l]);
            let (px, py) = (x + dx, y + dy);
            let ok = (1e-6..=f32::MAX).contains(&len) & (x < xlast) & (y < ylast);
            let ok = ok & (px >= 0.0) & (px < xlast) & (py >= 0.0) & (py < ylast);
            plain[l] = ok as u32;
            (p.dx[l], p.dy[l], p.nx[l], p.ny[l]) = (dx, dy, px, py);
            (sx[l], sy[l]) = if ok { (px, py) } else { (x, y) };
        }
        // 4. Height at the new position.
        // SAFETY: `corners` has this function's contract; `sx, sy` is the planned position
        // (one cell on) or the old one.
        let new = unsafe { self.corners(&sx, &sy) };
        let (un, vn, [n00, n10, n01, n11]) = (new.u, new.v, new.h);
        let r = self.brush.reach as i32;
        let (xend, yend) = (g.w as i32, g.h as i32);
        let (lo, hi) = (self.brush.lo as i32, self.brush.hi as i32);
        let w = g.pitch as i32;
        let (mut attention, mut fits) = ([false; LANES], [false; LANES]);
        for l in 0..LANES {
            let (u1, v1) = (un[l], vn[l]);
            let h_new = n00[l] * (1.0 - u1) * (1.0 - v1)
                + n10[l] * u1 * (1.0 - v1)
                + n01[l] * (1.0 - u1) * v1
                + n11[l] * u1 * v1;
            let dh = h_new - h_old[l];
            // At sea (never with sea = −∞): the scalar step takes over.
            plain[l] &= (h_old[l] > self.sea) as u32;
            // 5. Deposit or erode.
            let (speed, water, sed) = (s.speed[l], s.water[l], s.sed[l] as f32);
            let cap = ((-dh).max(self.min_slope) * speed * water * self.capacity).min(1e30);
            let fill = sed > cap;
            let up = dh > 0.0;
            let on_fill = if fill { (sed - cap) * self.deposition } else { 0.0 };
            p.deposit[l] = if up { sed.min(dh) } else { on_fill };
            let dig = ((cap - sed) * self.erosion).min(-dh * self.dig);
            p.erode[l] = if up | fill { 0.0 } else { dig };
            // 6. Where: bilinear weights, and the brush variant and whether it fits the map.
            let (u, v) = (u[l], v[l]);
            p.wts[0][l] = (1.0 - u) * (1.0 - v);
            p.wts[1][l] = u * (1.0 - v);
            p.wts[2][l] = (1.0 - u) * v;
            p.wts[3][l] = u * v;
            let (bx, by) = (old.xi[l], old.yi[l]);
            // SAFETY: `u = x − xi`, `xi` the floor of `x` clamped to `0..=w − 2` (`corners`); a
            // lane's `x` is a position in the domain (`[0, w)` at most; a parked lane's too), so `u`
            // is finite in `[0, 2)` and `u·SUB` fits `i32`.
            let qx = unsafe { (u * SUB as f32).to_int_unchecked::<i32>() }.min(SUB as i32 - 1);
            // SAFETY: as `qx`, with `v` finite in `[0, 2)`.
            let qy = unsafe { (v * SUB as f32).to_int_unchecked::<i32>() }.min(SUB as i32 - 1);
            p.variant[l] = (qy * SUB as i32 + qx) as u32;
            fits[l] = (bx + lo >= 0) & (bx + hi < xend) & (by >= r) & (by + r + 1 < yend);
            // 7. Speed and water; visit and what happens next.
            p.speed[l] = (speed * speed - dh * self.gravity).clamp(0.0, 1e30).sqrt();
            p.water[l] = water * self.keep_water;
            let (nx, ny) = (p.nx[l], p.ny[l]);
            // SAFETY: `max(0.0)` turns NaN into 0 and `min(xlast)` caps it, so the value is
            // finite, in `[0, w − 1]`, and fits `i32`.
            let xi = unsafe { (nx + 0.5).max(0.0).min(xlast).to_int_unchecked::<i32>() };
            // SAFETY: as `xi`, in `[0, h − 1]`.
            let yi = unsafe { (ny + 0.5).max(0.0).min(ylast).to_int_unchecked::<i32>() };
            p.visit[l] = (yi * w + xi) as u32;
            let stays = (nx >= area[0]) & (nx < area[1]) & (ny >= area[2]) & (ny < area[3]);
            let ends = (p.water[l] < self.min_water) | (s.life[l] as i64 + 1 >= self.max_life as i64);
            attention[l] = ends | !stays;
        }
        for l in 0..LANES {
            p.plain |= plain[l] << l;
            p.fits |= (fits[l] as u32) << l;
            p.attention |= (attention[l] as u32) << l;
        }
        p.cell = old.i;
        p
    }

    /// The bilinear cells of the lanes' positions (clamped into the map). Equals [`Geom::cell`](super::super::particles::Geom::cell)
    /// for positions strictly inside the last row and column.
    ///
    /// # Safety
    /// As [`Ctx::plan`].
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub(super) unsafe fn corners(&self, x: &[f32; LANES], y: &[f32; LANES]) -> Corners {
        let g = &self.geom;
        let (xlast, ylast) = ((g.w - 1) as f32, (g.h - 1) as f32);
        let (xcell, ycell, w) = (g.w as i32 - 2, g.h as i32 - 2, g.pitch as i32);
        let mut c = Corners::default();
        for l in 0..LANES {
            // SAFETY: `max` first: NaN becomes 0, and `min(xlast)` caps it, so the value is
            // finite and in `[0, w − 1]` whatever the lane holds: the conversion is in range.
            let xi = unsafe { x[l].max(0.0).min(xlast).to_int_unchecked::<i32>() }.min(xcell);
            // SAFETY: as `xi`, in `[0, h − 1]`.
            let yi = unsafe { y[l].max(0.0).min(ylast).to_int_unchecked::<i32>() }.min(ycell);
            // < 2²⁸ nodes, so no overflow.
            c.i[l] = (yi * w + xi) as u32;
            (c.xi[l], c.yi[l]) = (xi, yi);
            c.u[l] = x[l] - xi as f32;
            c.v[l] = y[l] - yi as f32;
        }
        let h = self.raw.h as *const f32;
        let w = g.pitch;
        for l in 0..LANES {
            let k = c.i[l] as usize;
            // SAFETY: column ≤ w − 2 and row ≤ h − 2, so all four nodes are in the map.
            unsafe {
                c.h[0][l] = *h.add(k);
                c.h[1][l] = *h.add(k + 1);
                c.h[2][l] = *h.add(k + w);
                c.h[3][l] = *h.add(k + w + 1);
            }
        }
        c
    }

    /// Applies the planned step of plain lane `l` to the maps: the deposit or the erosion at its
    /// old position and the visit at the new one; books it and updates the carried sediment.
    ///
    /// # Safety
    /// As [`Ctx::step`]; the lane's cell is inside the task's tile.
    #[inline(always)]
    pub(super) unsafe fn apply<const HARD: bool, const GUARD: bool>(
        &self,
        s: &mut Lanes,
        p: &Plan,
        l: usize,
        b: &mut Books,
    ) {
        let raw = &self.raw;
        let i = p.cell[l] as usize;
        if p.deposit[l] > 0.0 {
            let put = if self.wide {
                // SAFETY: a live lane's position lies in the map and in the tile; the brush
                // reaches at most `reach + 1` nodes from its cell, within the margin.
                unsafe { self.deposit_spread(s.x[l], s.y[l], p.deposit[l], f32::INFINITY) }
            } else if self.spread {
                // SAFETY: the position is a live lane's, in the map and in the tile; the disc
                // reaches ⌈LAND_SPREAD⌉ + 1 = 3 nodes from its cell, within the margin
                // (`reach + 3`) no other thread touches.
                unsafe {
                    particles::deposit_disc(raw, &self.geom, s.x[l], s.y[l], p.deposit[l], LAND_SPREAD, f32::INFINITY)
                }
            } else {
                let ws = [p.wts[0][l], p.wts[1][l], p.wts[2][l], p.wts[3][l]];
                // SAFETY: a plain step's cell `i` has its column ≤ w − 2 and row ≤ h − 2
                // (`corners`), so its four nodes are in the map; the cell is in the tile.
                unsafe { deposit_cell(raw, i, self.geom.pitch, ws, p.deposit[l]) }
            };
            b.deposited += put;
            s.sed[l] -= put;
        } else if p.erode[l] > 0.0 {
            let got = if p.fits & (1 << l) != 0 {
                let var = &self.brush.variants[p.variant[l] as usize];
                // SAFETY: the padded brush fits the map (planned) and lies in the task's margin.
                (unsafe { brush_fast::<HARD, GUARD>(raw, var, i, p.erode[l], self.floor) }) as f64
            } else {
                // SAFETY: as this function; a live lane's position lies in the map.
                unsafe { self.erode(s.x[l], s.y[l], p.erode[l]) }
            };
            b.eroded += got;
            s.sed[l] += got;
        }
        // SAFETY: `visit` is the node nearest to the planned position, clamped to the map in
        // `plan`, one step from a cell in the tile: within the margin.
        unsafe { raw.visit(p.visit[l] as usize, p.water[l]) };
    }

    /// Runs one [`Ctx::step`] for lane `l` (a step that is not plain). Returns `false` when the
    /// droplet ended.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[cold]
    pub(super) unsafe fn step_lane(
        &self,
        s: &mut Lanes,
        l: usize,
        ds: &mut [Drop],
        rect: Option<Rect>,
        b: &mut Books,
    ) -> bool {
        s.store(l, ds);
        let d = &mut ds[s.slot[l] as usize];
        // SAFETY: `step` has this function's contract.
        let go = unsafe { self.step(d, rect, b) };
        s.load(l, s.slot[l] as usize, d);
        go && d.alive
    }

    /// Drops the sediment of lane `l` where it stands and ends the droplet.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    pub(super) unsafe fn settle_lane(&self, s: &mut Lanes, l: usize, b: &mut Books) {
        let mut d = Drop { x: s.x[l], y: s.y[l], sediment: s.sed[l], ..Drop::parked() };
        // SAFETY: `settle` has this function's contract (as `Ctx::step`).
        unsafe { self.settle(&mut d, b) };
        s.sed[l] = 0.0;
        s.alive[l] = false;
    }
}
