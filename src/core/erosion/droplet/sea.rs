//! Sea mode (issue 13, see the module doc): deposits on land spread over a disc of radius
//! [`LAND_SPREAD`](super::LAND_SPREAD), and the step of a droplet that has reached the sea and drops its load up to
//! the water line.

use super::super::particles::{self, Books};
use super::SUB;
use super::step::{Ctx, Drop};

impl Ctx<'_> {
    /// Spreads `amount` with the erosion brush centred at `(x, y)` (the same footprint the
    /// droplet erodes with, renormalised over the in-map nodes), never raising a node above
    /// `cap`: node `n` receives `min(amount·w(n), max(0, cap − h(n)))`. Returns what the heights
    /// received (less than `amount` where nodes reached `cap`).
    ///
    /// # Safety
    /// As [`Ctx::walk`]; `(x, y)` lies in the map.
    pub(super) unsafe fn deposit_spread(&self, x: f32, y: f32, amount: f32, cap: f32) -> f64 {
        let g = &self.geom;
        let (bx, by) = g.owner_cell(x, y);
        let qx = (((x - bx as f32) * SUB as f32) as usize).min(SUB - 1);
        let qy = (((y - by as f32) * SUB as f32) as usize).min(SUB - 1);
        let var = &self.brush.variants[qy * SUB + qx];
        let raw = &self.raw;
        let node = |dx: i32, dy: i32| g.node(bx as isize + dx as isize, by as isize + dy as isize);
        let inside = bx >= self.brush.reach
            && by >= self.brush.reach
            && bx + self.brush.reach + 1 < g.w
            && by + self.brush.reach + 1 < g.h;
        let sum =
            if inside { 1.0 } else { var.taps.iter().filter(|t| node(t.0, t.1).is_some()).map(|t| t.2).sum::<f32>() };
        if sum <= 0.0 {
            return 0.0;
        }
        let a = amount / sum;
        let mut put = 0.0f64;
        // Inside, every tap is a node of the map: its index without the edge-mode look-up.
        let (base, pitch) = ((by * g.pitch + bx) as isize, g.pitch as isize);
        for &(dx, dy, w) in &var.taps {
            let n = if inside { Some((base + dy as isize * pitch + dx as isize) as usize) } else { node(dx, dy) };
            if let Some(i) = n {
                // SAFETY: in-map indices (`node`, or inside the map by `inside`), within the brush's reach.
                unsafe {
                    let h = &mut *raw.h.add(i);
                    let old = *h;
                    let t = (a * w).min((cap - old).max(0.0));
                    let new = old + t;
                    *h = new;
                    *raw.dep.add(i) += new - old;
                    put += new as f64 - old as f64;
                }
            }
        }
        put
    }

    /// One step of a droplet that has reached the sea (its position's height `≤ sea`; `gx, gy`
    /// the gradient there): it never erodes, drops what the brush footprint can take below the
    /// sea level ([`Ctx::deposit_spread`] capped at the sea: a delta or a beach builds up to the
    /// water line, never above it) and, while it still carries sediment, moves on one cell
    /// downhill to drop the rest farther out. It ends when its load is gone (or at the end of
    /// its life, dropping what is left). Returns whether it goes on.
    ///
    /// # Safety
    /// As [`Ctx::step`].
    #[cold]
    pub(super) unsafe fn sea_step(&self, d: &mut Drop, gx: f32, gy: f32, b: &mut Books) -> bool {
        if d.sediment > 0.0 {
            // SAFETY: as this function; the droplet stands in the tile (`step` checked), so
            // `(d.x, d.y)` is in the map and the brush stays within the margin.
            let put = unsafe { self.deposit_spread(d.x, d.y, d.sediment as f32, self.sea) };
            b.deposited += put;
            d.sediment -= put;
        }
        // Below a micrometre·node the rest is booked (as f32 rounding is), not carried on.
        if d.sediment < 1e-6 {
            b.residue(d.sediment);
            d.sediment = 0.0;
            d.alive = false;
            return false;
        }
        let mut dx = d.dx * self.inertia - gx * (1.0 - self.inertia);
        let mut dy = d.dy * self.inertia - gy * (1.0 - self.inertia);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-6 || !len.is_finite() {
            (dx, dy) = particles::random_unit(&mut d.rng);
        } else {
            dx /= len;
            dy /= len;
        }
        match self.geom.confine(d.x + dx, d.y + dy) {
            particles::Confined::Exit => {
                b.lost += d.sediment;
                d.sediment = 0.0;
                d.alive = false;
                return false;
            }
            particles::Confined::Inside { x, y, flip_x, flip_y } => {
                d.dx = if flip_x { -dx } else { dx };
                d.dy = if flip_y { -dy } else { dy };
                d.x = x;
                d.y = y;
            }
        }
        d.life += 1;
        // SAFETY: `nearest` of the confined position is an in-map node, one cell from the start
        // cell in the tile: within the margin.
        unsafe { self.raw.visit(self.geom.nearest(d.x, d.y), d.water) };
        if d.life >= self.max_life {
            // SAFETY: as this function; the droplet moved one cell from its cell in the tile,
            // and `settle` writes within the margin of that cell, as in `Ctx::step`.
            unsafe { self.settle(d, b) };
            return false;
        }
        true
    }
}
