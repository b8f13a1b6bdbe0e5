//! The CPU raycaster of the editor: screen → world ray → heightmap hit (SPEC §3, seed 003:
//! "terrain edition is implemented with a ray caster on CPU: the mouse position is transferred
//! from screen space to world space first, then cast into the height map to estimate the collision
//! location"; seed 004: the hovered area is highlighted and raised or lowered).
//!
//! # World frame
//! The terrain mesh places node `(x, y)` at world position `(x·cell_size, height, y·cell_size)`,
//! y-up as in Bevy: world X = our x, world Y = height (metres), world Z = our y. A [`Ray`] is
//! `p(t) = origin + t·dir` in that frame; `dir` need not be unit length, and `t` (and `max_t`) are
//! measured in multiples of it. A [`Hit`] gives the world point, the same point in grid units
//! (`grid = (X, Z) / cell_size`, directly a brush centre) and `t`.
//!
//! # Surface
//! The surface is the bilinear interpolant of the nodes (what [`Heightmap::sample`] returns), a
//! two-sided sheet: a ray from below hits its underside. Inside the cell with corner heights
//! `h00, h10, h01, h11` and local coordinates `u, v ∈ [0, 1]`:
//!
//! ```text
//! f(u, v) = h00 + p·u + q·v + r·u·v,   p = h10 − h00,  q = h01 − h00,  r = h00 − h10 − h01 + h11
//! ```
//!
//! # Method (exact, nothing missed)
//! 1. Clip the ray to the map's ground extent (slab test on x and z; no pass over the heights, so a
//!    hover ray costs microseconds even on a 4096² map).
//! 2. Walk the cells the ray's ground track crosses, in order (2-D DDA, Amanatides & Woo 1987).
//! 3. In each cell, with the ray entering at `s = 0` at local `(u0, v0)` and height `H0`, moving by
//!    `(a, c, b)` per unit `t` (grid x, height, grid y), the height gap
//!    `g(s) = f(u0 + a s, v0 + b s) − (H0 + c s)` is the quadratic
//!
//!    ```text
//!    g(s) = A s² + B s + C,   A = r a b,   B = p a + q b + r (u0 b + v0 a) − c,
//!                             C = h00 + p u0 + q v0 + r u0 v0 − H0
//!    ```
//!
//!    whose smallest root in `[0, s_exit]` (numerically stable formula, in `f64`) is the hit. No
//!    sampling step can step over a thin ridge. Should rounding lose a root although `g` changes
//!    sign across the cell, bisection on `g` finds it (to 1e-9 of the cell).
//! 4. Cells whose corner-height range the ray's height over the cell does not reach are skipped.
//!
//! A map one node wide along an axis has no area; it is treated as a strip one cell wide centred on
//! its node line (heights constant across it), so it can still be pointed at and painted, and
//! `grid` is then projected onto the node line. NaN or infinite inputs, a zero direction or a
//! negative `max_t` give `None`; non-finite heights are holes the ray passes through.

use serde::{Deserialize, Serialize};

use super::heightmap::Heightmap;

/// A half-line in the world frame: `p(t) = origin + t·dir`, `t ≥ 0`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ray {
    /// Start point (world X, height, world Z), metres.
    pub origin: [f32; 3],
    /// Direction; any non-zero length.
    pub dir: [f32; 3],
}

/// Where a ray meets the terrain.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The point in the world frame (X, height, Z), metres.
    pub world: [f32; 3],
    /// The same point in grid units (node coordinates `x, y`), a brush centre.
    pub grid: [f32; 2],
    /// Ray parameter of the hit, in multiples of `dir`.
    pub t: f32,
}

impl Ray {
    /// A ray from `origin` through `target`, with `dir = target − origin` (so `t = 1` at the target).
    pub fn through(origin: [f32; 3], target: [f32; 3]) -> Self {
        Self { origin, dir: [target[0] - origin[0], target[1] - origin[1], target[2] - origin[2]] }
    }

    /// The point at parameter `t`.
    pub fn at(&self, t: f32) -> [f32; 3] {
        [self.origin[0] + t * self.dir[0], self.origin[1] + t * self.dir[1], self.origin[2] + t * self.dir[2]]
    }

    /// The ray under a cursor: unprojects the normalised device coordinates `ndc` (x right, y up,
    /// both in `[-1, 1]`) at two depths with the inverse view-projection matrix `inv_view_proj`
    /// (column-major, `m[column][row]`, as glam's `Mat4::to_cols_array_2d`). `near_depth` and
    /// `far_depth` are NDC depths of two points in front of the camera, the first nearer: `1.0` and
    /// `0.5` for Bevy's reverse-Z projections (perspective, infinite or not, and orthographic), or
    /// `0.0`/`1.0` for a conventional `[0, 1]` depth range. The origin is the nearer point and `dir`
    /// is unit length. `None` when the matrix or the input is degenerate or non-finite.
    pub fn from_ndc(inv_view_proj: &[[f32; 4]; 4], ndc: [f32; 2], near_depth: f32, far_depth: f32) -> Option<Self> {
        let unproject = |z: f32| -> Option<[f64; 3]> {
            let v = [ndc[0] as f64, ndc[1] as f64, z as f64, 1.0];
            let mut o = [0.0f64; 4];
            for (row, out) in o.iter_mut().enumerate() {
                *out = (0..4).map(|col| inv_view_proj[col][row] as f64 * v[col]).sum();
            }
            let w = o[3];
            if !w.is_finite() || w.abs() < 1e-30 {
                return None;
            }
            let p = [o[0] / w, o[1] / w, o[2] / w];
            p.iter().all(|c| c.is_finite()).then_some(p)
        };
        let a = unproject(near_depth)?;
        let b = unproject(far_depth)?;
        let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if !(len > 0.0 && len.is_finite()) {
            return None;
        }
        let ray = Self {
            origin: [a[0] as f32, a[1] as f32, a[2] as f32],
            dir: [(d[0] / len) as f32, (d[1] / len) as f32, (d[2] / len) as f32],
        };
        (ray.origin.iter().chain(&ray.dir).all(|c| c.is_finite())).then_some(ray)
    }
}

/// Extent of the map along one axis in grid units: `lo`, and the number of cells `n`.
#[derive(Clone, Copy)]
struct Axis {
    lo: f64,
    cells: usize,
    nodes: usize,
}

impl Axis {
    fn new(nodes: usize) -> Self {
        if nodes >= 2 { Self { lo: 0.0, cells: nodes - 1, nodes } } else { Self { lo: -0.5, cells: 1, nodes } }
    }
    fn hi(&self) -> f64 {
        self.lo + self.cells as f64
    }
    /// Node indices of the two sides of cell `i`.
    fn nodes_of(&self, i: usize) -> (usize, usize) {
        if self.nodes >= 2 { (i, i + 1) } else { (0, 0) }
    }
    /// Cell containing coordinate `p` (clamped).
    fn cell_of(&self, p: f64) -> usize {
        let c = (p - self.lo).floor();
        if c.is_nan() || c < 0.0 { 0 } else { (c as usize).min(self.cells - 1) }
    }
    /// A grid coordinate as reported in a hit (on the node line for a one-node axis).
    fn report(&self, p: f64) -> f32 {
        if self.nodes >= 2 { p.clamp(0.0, (self.nodes - 1) as f64) as f32 } else { 0.0 }
    }
}

/// Narrows `[tn, tf]` to where `o + t·d` lies in `[lo, hi]`; false when that is empty.
fn slab(o: f64, d: f64, lo: f64, hi: f64, tn: &mut f64, tf: &mut f64) -> bool {
    if d == 0.0 {
        return o >= lo && o <= hi;
    }
    let (a, b) = ((lo - o) / d, (hi - o) / d);
    *tn = tn.max(a.min(b));
    *tf = tf.min(a.max(b));
    *tn <= *tf
}

/// The smallest root of `A s² + B s + C` in `[0, len]`, if any.
fn first_root(a: f64, b: f64, c: f64, len: f64) -> Option<f64> {
    let tol = 1e-12 * (1.0 + len);
    let pick = |r: f64| (r >= -tol && r <= len + tol).then(|| r.clamp(0.0, len));
    if c == 0.0 {
        return Some(0.0);
    }
    if a == 0.0 {
        if b == 0.0 {
            return None;
        }
        return pick(-c / b);
    }
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return None;
    }
    let sq = disc.sqrt();
    let q = -0.5 * (b + if b >= 0.0 { sq } else { -sq });
    let r1 = q / a;
    let r2 = if q != 0.0 { c / q } else { r1 };
    match (pick(r1.min(r2)), pick(r1.max(r2))) {
        (Some(r), _) => Some(r),
        (None, r) => r,
    }
}

/// Where `ray` first meets the terrain surface within `t ∈ [0, max_t]` (`max_t` may be infinite).
pub fn raycast(hm: &Heightmap, ray: &Ray, max_t: f32) -> Option<Hit> {
    let finite = ray.origin.iter().chain(&ray.dir).all(|c| c.is_finite());
    if !finite || max_t.is_nan() || max_t < 0.0 || hm.data.len() != hm.width * hm.height || hm.data.is_empty() {
        return None;
    }
    let cs = hm.cell_size as f64;
    if !(cs > 0.0 && cs.is_finite()) {
        return None;
    }
    // Grid frame: x and z divided by the cell size; heights stay in metres; t is unchanged.
    let o = [ray.origin[0] as f64 / cs, ray.origin[1] as f64, ray.origin[2] as f64 / cs];
    let d = [ray.dir[0] as f64 / cs, ray.dir[1] as f64, ray.dir[2] as f64 / cs];
    if d == [0.0; 3] {
        return None;
    }
    // Tolerance of the clipping (the root test itself is exact): the ground extent is padded by
    // 1e-4 cell so that a ray aimed exactly at a border is not clipped away by f32 rounding.
    let gpad = 1e-4;
    let ax = Axis::new(hm.width);
    let ay = Axis::new(hm.height);
    let (mut t0, mut t1) = (0.0f64, max_t as f64);
    if !(slab(o[0], d[0], ax.lo - gpad, ax.hi() + gpad, &mut t0, &mut t1)
        && slab(o[2], d[2], ay.lo - gpad, ay.hi() + gpad, &mut t0, &mut t1))
    {
        return None;
    }

    // DDA over the cells of the ground track.
    let (mut i, mut j) = (ax.cell_of(o[0] + t0 * d[0]), ay.cell_of(o[2] + t0 * d[2]));
    let step_x: isize = if d[0] > 0.0 { 1 } else { -1 };
    let step_y: isize = if d[2] > 0.0 { 1 } else { -1 };
    let next_x = |i: usize| -> f64 {
        if d[0] == 0.0 {
            f64::INFINITY
        } else {
            let edge = ax.lo + i as f64 + if d[0] > 0.0 { 1.0 } else { 0.0 };
            (edge - o[0]) / d[0]
        }
    };
    let next_y = |j: usize| -> f64 {
        if d[2] == 0.0 {
            f64::INFINITY
        } else {
            let edge = ay.lo + j as f64 + if d[2] > 0.0 { 1.0 } else { 0.0 };
            (edge - o[2]) / d[2]
        }
    };
    let mut tc = t0;
    for _ in 0..(ax.cells + ay.cells + 4) {
        let (tx, ty) = (next_x(i), next_y(j));
        // The last cell before the ray leaves the grid is tested up to the clipped exit, which
        // reaches the padding beyond the border: a ray aimed at a point on the border meets it
        // at its edge, where rounding can put the cell's own exit a hair before the root.
        let leaving = if tx <= ty {
            i as isize + step_x < 0 || (i as isize + step_x) as usize >= ax.cells
        } else {
            j as isize + step_y < 0 || (j as isize + step_y) as usize >= ay.cells
        };
        let te = if leaving { t1.max(tc) } else { tx.min(ty).min(t1).max(tc) };
        if let Some(t) = cell_hit(hm, &ax, &ay, i, j, &o, &d, tc, te) {
            let gx = o[0] + t * d[0];
            let gy = o[2] + t * d[2];
            let world = [
                (ray.origin[0] as f64 + t * ray.dir[0] as f64) as f32,
                (ray.origin[1] as f64 + t * ray.dir[1] as f64) as f32,
                (ray.origin[2] as f64 + t * ray.dir[2] as f64) as f32,
            ];
            return Some(Hit { world, grid: [ax.report(gx), ay.report(gy)], t: t as f32 });
        }
        if te >= t1 {
            return None;
        }
        if tx <= ty {
            let ni = i as isize + step_x;
            if ni < 0 || ni as usize >= ax.cells {
                return None;
            }
            i = ni as usize;
        } else {
            let nj = j as isize + step_y;
            if nj < 0 || nj as usize >= ay.cells {
                return None;
            }
            j = nj as usize;
        }
        tc = te;
    }
    None
}

/// The first `t` in `[ta, tb]` where the ray meets the patch of cell `(i, j)`.
#[allow(clippy::too_many_arguments)]
fn cell_hit(
    hm: &Heightmap,
    ax: &Axis,
    ay: &Axis,
    i: usize,
    j: usize,
    o: &[f64; 3],
    d: &[f64; 3],
    ta: f64,
    tb: f64,
) -> Option<f64> {
    let (x0, x1) = ax.nodes_of(i);
    let (y0, y1) = ay.nodes_of(j);
    let h00 = hm.get(x0, y0) as f64;
    let h10 = hm.get(x1, y0) as f64;
    let h01 = hm.get(x0, y1) as f64;
    let h11 = hm.get(x1, y1) as f64;
    if !(h00.is_finite() && h10.is_finite() && h01.is_finite() && h11.is_finite()) {
        return None;
    }
    let ha = o[1] + ta * d[1];
    let hb = o[1] + tb * d[1];
    let (cmin, cmax) = (h00.min(h10).min(h01).min(h11), h00.max(h10).max(h01).max(h11));
    // Culling only (padded by a relative 1e-5 against rounding); the root test below is exact.
    let pad = 1e-5 * (1.0 + cmin.abs().max(cmax.abs()));
    if ha.max(hb) < cmin - pad || ha.min(hb) > cmax + pad {
        return None;
    }
    let (p, q, r) = (h10 - h00, h01 - h00, h00 - h10 - h01 + h11);
    let u0 = o[0] + ta * d[0] - (ax.lo + i as f64);
    let v0 = o[2] + ta * d[2] - (ay.lo + j as f64);
    let (a, b, c) = (d[0], d[2], d[1]);
    let qa = r * a * b;
    let qb = p * a + q * b + r * (u0 * b + v0 * a) - c;
    let qc = h00 + p * u0 + q * v0 + r * u0 * v0 - ha;
    let len = tb - ta;
    let g = |s: f64| (qa * s + qb) * s + qc;
    if let Some(s) = first_root(qa, qb, qc, len) {
        return Some(ta + s);
    }
    // Rounding lost a root although g changes sign over the cell: bisect.
    let (g0, g1) = (g(0.0), g(len));
    if g0 == 0.0 || g1 == 0.0 || (g0 < 0.0) != (g1 < 0.0) {
        let (mut lo, mut hi) = (0.0, len);
        let neg_lo = g0 < 0.0;
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            let gm = g(mid);
            if gm == 0.0 {
                return Some(ta + mid);
            }
            if (gm < 0.0) == neg_lo {
                lo = mid
            } else {
                hi = mid
            }
            if (hi - lo) * (a.abs() + b.abs()) < 1e-9 && hi - lo < 1e-9 * (1.0 + len) {
                break;
            }
        }
        return Some(ta + 0.5 * (lo + hi));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::{SplitMix64, hash2, unit_f32};
    use proptest::prelude::*;

    fn rough(w: usize, h: usize, cell: f32, seed: u64) -> Heightmap {
        Heightmap::from_fn(w, h, cell, |x, y| 20.0 * unit_f32(hash2(x as i64, y as i64, seed))).unwrap()
    }

    /// The hit lies on the surface and agrees with its own grid coordinates.
    fn on_surface(hm: &Heightmap, hit: &Hit, tol: f32) {
        let s = hm.sample(hit.grid[0], hit.grid[1]);
        assert!((s - hit.world[1]).abs() < tol, "height {} vs surface {s}", hit.world[1]);
        if hm.width > 1 {
            assert!((hit.grid[0] * hm.cell_size - hit.world[0]).abs() < tol);
        }
        if hm.height > 1 {
            assert!((hit.grid[1] * hm.cell_size - hit.world[2]).abs() < tol);
        }
    }

    /// First sign change of the height gap along the ray by fine marching (reference).
    fn march(hm: &Heightmap, ray: &Ray, max_t: f32, steps: usize) -> Option<f32> {
        let inside = |p: [f32; 3]| {
            let (gx, gy) = (p[0] / hm.cell_size, p[2] / hm.cell_size);
            gx >= 0.0 && gy >= 0.0 && gx <= (hm.width - 1) as f32 && gy <= (hm.height - 1) as f32
        };
        let gap = |t: f32| {
            let p = ray.at(t);
            inside(p).then(|| p[1] - hm.sample(p[0] / hm.cell_size, p[2] / hm.cell_size))
        };
        let mut prev = gap(0.0);
        for k in 1..=steps {
            let t = max_t * k as f32 / steps as f32;
            let g = gap(t);
            if let (Some(a), Some(b)) = (prev, g)
                && (a <= 0.0) != (b <= 0.0)
            {
                return Some(t);
            }
            prev = g;
        }
        None
    }

    #[test]
    fn straight_down_hits_the_bilinear_height() {
        let hm = rough(9, 7, 2.0, 1);
        for &(gx, gy) in &[(0.0f32, 0.0f32), (3.3, 2.7), (8.0, 6.0), (5.5, 0.0), (7.99, 3.01)] {
            let ray = Ray { origin: [gx * 2.0, 100.0, gy * 2.0], dir: [0.0, -1.0, 0.0] };
            let hit = raycast(&hm, &ray, f32::INFINITY).expect("vertical ray hits");
            let h = hm.sample(gx, gy);
            assert!((hit.world[1] - h).abs() < 1e-4, "{gx},{gy}: {} vs {h}", hit.world[1]);
            assert!((hit.t - (100.0 - h)).abs() < 1e-3);
            assert!((hit.grid[0] - gx).abs() < 1e-5 && (hit.grid[1] - gy).abs() < 1e-5);
            // Limited by max_t: no hit before the surface.
            assert!(raycast(&hm, &ray, 100.0 - h - 0.01).is_none());
        }
        // Outside the map: vertical rays miss.
        let ray = Ray { origin: [-0.1, 100.0, 3.0], dir: [0.0, -1.0, 0.0] };
        assert!(raycast(&hm, &ray, f32::INFINITY).is_none());
    }

    #[test]
    fn from_below_and_underground_origins_hit_the_underside() {
        let hm = Heightmap::filled(5, 5, 1.0, 3.0).unwrap();
        let up = Ray { origin: [2.0, -5.0, 2.0], dir: [0.1, 1.0, 0.05] };
        let hit = raycast(&hm, &up, f32::INFINITY).unwrap();
        assert!((hit.world[1] - 3.0).abs() < 1e-5 && (hit.t - 8.0).abs() < 1e-4);
        // Pointing down from below: nothing.
        let down = Ray { origin: [2.0, -5.0, 2.0], dir: [0.0, -1.0, 0.0] };
        assert!(raycast(&hm, &down, f32::INFINITY).is_none());
        // Pointing up from above: nothing.
        let away = Ray { origin: [2.0, 5.0, 2.0], dir: [0.3, 1.0, 0.0] };
        assert!(raycast(&hm, &away, f32::INFINITY).is_none());
        // Starting on the surface: t = 0.
        let on = Ray { origin: [1.5, 3.0, 1.5], dir: [1.0, -1.0, 0.0] };
        assert_eq!(raycast(&hm, &on, 1.0).unwrap().t, 0.0);
    }

    #[test]
    fn non_normalised_directions_scale_t_only() {
        let hm = rough(16, 16, 1.5, 2);
        let base = Ray { origin: [-4.0, 40.0, -3.0], dir: [0.6, -0.5, 0.55] };
        let h1 = raycast(&hm, &base, f32::INFINITY).unwrap();
        for k in [1e-3f32, 0.25, 7.0, 1e4] {
            let r = Ray { dir: base.dir.map(|c| c * k), ..base };
            let h = raycast(&hm, &r, f32::INFINITY).unwrap();
            assert!((h.t * k - h1.t).abs() < 1e-4 * h1.t, "k {k}");
            for a in 0..3 {
                assert!((h.world[a] - h1.world[a]).abs() < 1e-3);
            }
        }
        on_surface(&hm, &h1, 1e-3);
    }

    #[test]
    fn axis_parallel_and_horizontal_rays() {
        // A ridge along x = 5 of a flat map: a horizontal ray at height 1 hits its flank.
        let hm = Heightmap::from_fn(11, 6, 1.0, |x, _| if x == 5 { 4.0 } else { 0.0 }).unwrap();
        let r = Ray { origin: [0.0, 1.0, 2.5], dir: [1.0, 0.0, 0.0] };
        let hit = raycast(&hm, &r, f32::INFINITY).unwrap();
        assert!((hit.grid[0] - 4.25).abs() < 1e-5, "{hit:?}");
        assert!((hit.grid[1] - 2.5).abs() < 1e-6);
        // Going the other way it hits the other flank.
        let r = Ray { origin: [10.0, 1.0, 2.5], dir: [-3.0, 0.0, 0.0] };
        assert!((raycast(&hm, &r, f32::INFINITY).unwrap().grid[0] - 5.75).abs() < 1e-5);
        // Parallel to z along the ridge top at 4.5 m: above everything, misses.
        let r = Ray { origin: [5.0, 4.5, -2.0], dir: [0.0, 0.0, 1.0] };
        assert!(raycast(&hm, &r, f32::INFINITY).is_none());
        // Along z exactly on the ridge line, at its height: touches at the map edge (within the
        // 1e-4 cell border tolerance).
        let r = Ray { origin: [5.0, 4.0, -2.0], dir: [0.0, 0.0, 1.0] };
        let hit = raycast(&hm, &r, f32::INFINITY).unwrap();
        assert!((hit.t - 2.0).abs() <= 2e-4 && hit.grid == [5.0, 0.0], "{hit:?}");
        // Along the diagonal through cell corners.
        let plane = Heightmap::from_fn(8, 8, 1.0, |x, y| (x + y) as f32).unwrap();
        let r = Ray { origin: [0.0, 20.0, 0.0], dir: [1.0, -1.0, 1.0] };
        let hit = raycast(&plane, &r, f32::INFINITY).unwrap();
        assert!((hit.grid[0] - 20.0 / 3.0).abs() < 1e-4 && (hit.grid[1] - 20.0 / 3.0).abs() < 1e-4);
    }

    #[test]
    fn grazing_rays_do_not_miss_thin_ridges() {
        // One spike node in a flat map, seen by a nearly horizontal ray just below its tip.
        let mut hm = Heightmap::new(64, 64, 1.0).unwrap();
        hm.set(40, 30, 1.0);
        let r = Ray { origin: [0.0, 0.999, 30.0], dir: [1.0, -1e-6, 0.0] };
        let hit = raycast(&hm, &r, f32::INFINITY).expect("spike");
        assert!(hit.grid[0] > 39.0 && hit.grid[0] < 40.0, "{hit:?}");
        on_surface(&hm, &hit, 1e-5);
        // Just above the tip: miss.
        let r = Ray { origin: [0.0, 1.0001, 30.0], dir: [1.0, 0.0, 0.0] };
        assert!(raycast(&hm, &r, f32::INFINITY).is_none());
        // Grazing a sloped plane at a shallow angle over a long distance, checked against marching.
        let plane = Heightmap::from_fn(256, 8, 1.0, |x, _| 0.01 * x as f32).unwrap();
        let r = Ray { origin: [0.0, 0.5, 3.3], dir: [1.0, 0.008, 0.001] };
        let hit = raycast(&plane, &r, f32::INFINITY).unwrap();
        // 0.5 + 0.008 t = 0.01 t  →  t = 250.
        assert!((hit.t - 250.0).abs() < 1e-2, "{hit:?}");
        on_surface(&plane, &hit, 1e-5);
    }

    #[test]
    fn misses_bad_inputs_and_degenerate_maps() {
        let hm = rough(8, 8, 1.0, 3);
        let good = Ray { origin: [4.0, 50.0, 4.0], dir: [0.0, -1.0, 0.0] };
        assert!(raycast(&hm, &good, f32::INFINITY).is_some());
        let nan = f32::NAN;
        for r in [
            Ray { origin: [nan, 50.0, 4.0], ..good },
            Ray { dir: [0.0, nan, 0.0], ..good },
            Ray { origin: [4.0, f32::INFINITY, 4.0], ..good },
            Ray { dir: [0.0, 0.0, 0.0], ..good },
            Ray { dir: [0.0, f32::NEG_INFINITY, 0.0], ..good },
        ] {
            assert!(raycast(&hm, &r, f32::INFINITY).is_none(), "{r:?}");
        }
        assert!(raycast(&hm, &good, f32::NAN).is_none());
        assert!(raycast(&hm, &good, -1.0).is_none());
        assert!(raycast(&hm, &good, 0.0).is_none());
        // Rays that pass beside, above or start beyond the map.
        assert!(raycast(&hm, &Ray { origin: [-5.0, 10.0, -5.0], dir: [-1.0, -0.1, 0.0] }, f32::INFINITY).is_none());
        assert!(raycast(&hm, &Ray { origin: [-5.0, 100.0, 4.0], dir: [1.0, 0.0, 0.0] }, f32::INFINITY).is_none());
        let far = Ray { origin: [1e30, 1e30, 1e30], dir: [-1.0, -1.0, -1.0] };
        assert!(raycast(&hm, &far, f32::INFINITY).is_none_or(|h| h.world.iter().all(|c| c.is_finite())));
        let huge = Ray { origin: [4.0, 50.0, 4.0], dir: [1e-30, -3e38, 1e-30] };
        assert!(raycast(&hm, &huge, f32::INFINITY).is_some_and(|h| h.t > 0.0 && h.t < 1e-36));
        // Holes: non-finite heights are passed through; an all-NaN map is never hit.
        let mut holes = hm.clone();
        holes.data.iter_mut().for_each(|h| *h = f32::NAN);
        assert!(raycast(&holes, &good, f32::INFINITY).is_none());
        let mut one_hole = Heightmap::filled(4, 4, 1.0, 1.0).unwrap();
        one_hole.set(1, 1, f32::NAN);
        let r = Ray { origin: [0.5, 9.0, 0.5], dir: [0.0, -1.0, 0.0] };
        assert!(raycast(&one_hole, &r, f32::INFINITY).is_none());
        let r = Ray { origin: [2.5, 9.0, 2.5], dir: [0.0, -1.0, 0.0] };
        assert!(raycast(&one_hole, &r, f32::INFINITY).is_some());
        // An inconsistent map (data length wrong) is refused, not indexed out of bounds.
        let broken = Heightmap { width: 4, height: 4, cell_size: 1.0, data: vec![0.0; 3] };
        assert!(raycast(&broken, &good, f32::INFINITY).is_none());
    }

    #[test]
    fn one_node_wide_maps_are_strips() {
        let hm = Heightmap::from_fn(1, 9, 2.0, |_, y| y as f32).unwrap();
        let r = Ray { origin: [0.4, 50.0, 7.0], dir: [0.0, -1.0, 0.0] };
        let hit = raycast(&hm, &r, f32::INFINITY).unwrap();
        assert!((hit.world[1] - 3.5).abs() < 1e-5 && hit.grid == [0.0, 3.5]);
        let r = Ray { origin: [1.1, 50.0, 7.0], dir: [0.0, -1.0, 0.0] };
        assert!(raycast(&hm, &r, f32::INFINITY).is_none(), "beyond half a cell");
        // Slanted across the strip.
        let r = Ray { origin: [-5.0, 10.0, 4.0], dir: [1.0, -1.6, 0.0] };
        let hit = raycast(&hm, &r, f32::INFINITY).unwrap();
        assert!((hit.world[1] - 2.0).abs() < 1e-5 && (hit.world[0] - 0.0).abs() < 1e-4, "{hit:?}");
        // 1×1 and N×1.
        let dot = Heightmap::filled(1, 1, 1.0, 2.0).unwrap();
        let r = Ray { origin: [0.2, 5.0, -0.3], dir: [0.0, -2.0, 0.0] };
        let hit = raycast(&dot, &r, f32::INFINITY).unwrap();
        assert_eq!(hit.grid, [0.0, 0.0]);
        assert!((hit.t - 1.5).abs() < 1e-6);
        let row = Heightmap::from_fn(6, 1, 1.0, |x, _| x as f32).unwrap();
        let r = Ray { origin: [2.5, 9.0, 0.2], dir: [0.0, -1.0, 0.0] };
        assert!((raycast(&row, &r, f32::INFINITY).unwrap().world[1] - 2.5).abs() < 1e-5);
    }

    #[test]
    fn first_hit_agrees_with_dense_marching() {
        let hm = rough(24, 20, 1.0, 5);
        let mut rng = SplitMix64::new(77);
        let mut hits = 0;
        for _ in 0..200 {
            let origin = [rng.range_f32(-10.0, 34.0), rng.range_f32(-5.0, 40.0), rng.range_f32(-10.0, 30.0)];
            let target = [rng.range_f32(0.0, 23.0), rng.range_f32(0.0, 20.0), rng.range_f32(0.0, 19.0)];
            let ray = Ray::through(origin, target);
            let max_t = 3.0;
            let cast = raycast(&hm, &ray, max_t);
            let marched = march(&hm, &ray, max_t, 20_000);
            match (cast, marched) {
                (Some(h), Some(m)) => {
                    hits += 1;
                    // Never later than the first sign change marching sees (marching may step
                    // over a pair of crossings close together; the raycaster may not).
                    assert!(h.t <= m + 1e-4, "cast {} marched {m}", h.t);
                    on_surface(&hm, &h, 1e-3);
                }
                (Some(h), None) => {
                    // Only tangencies (touching without crossing) may escape the march.
                    on_surface(&hm, &h, 1e-3);
                    let step = max_t / 20_000.0;
                    let before = ray.at((h.t - step).max(0.0));
                    let after = ray.at((h.t + step).min(max_t));
                    let g = |p: [f32; 3]| p[1] - hm.sample(p[0], p[2]);
                    assert!(g(before) * g(after) >= -1e-3 || h.t + step > max_t, "missed crossing at {}", h.t);
                }
                (None, Some(m)) => panic!("raycast missed a crossing at t = {m}: {ray:?}"),
                (None, None) => {}
            }
        }
        assert!(hits > 50, "only {hits} hits");
    }

    /// Column-major 4×4 product and inverse (test helpers for the unprojection test).
    fn mul(a: &[[f64; 4]; 4], b: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
        let mut m = [[0.0; 4]; 4];
        for (c, col) in m.iter_mut().enumerate() {
            for (r, v) in col.iter_mut().enumerate() {
                *v = (0..4).map(|k| a[k][r] * b[c][k]).sum();
            }
        }
        m
    }

    fn invert(m: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
        // Gauss–Jordan on rows of the row-major form.
        let mut a = [[0.0f64; 8]; 4];
        for r in 0..4 {
            for c in 0..4 {
                a[r][c] = m[c][r];
            }
            a[r][4 + r] = 1.0;
        }
        for c in 0..4 {
            let p = (c..4).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs())).unwrap();
            a.swap(c, p);
            let d = a[c][c];
            a[c].iter_mut().for_each(|v| *v /= d);
            for r in 0..4 {
                if r != c {
                    let f = a[r][c];
                    let row_c = a[c];
                    a[r].iter_mut().zip(row_c).for_each(|(v, w)| *v -= f * w);
                }
            }
        }
        let mut inv = [[0.0; 4]; 4];
        for r in 0..4 {
            for c in 0..4 {
                inv[c][r] = a[r][4 + c];
            }
        }
        inv
    }

    #[test]
    fn unprojected_cursor_rays_pass_through_the_projected_point() {
        // Bevy-style reverse-Z infinite perspective and a camera at (10, 30, 40) looking at (12, 0, 10).
        let (fov, aspect, near) = (0.8f64, 1.5f64, 0.1f64);
        let f = 1.0 / (fov / 2.0).tan();
        let proj = [[f / aspect, 0.0, 0.0, 0.0], [0.0, f, 0.0, 0.0], [0.0, 0.0, 0.0, -1.0], [0.0, 0.0, near, 0.0]];
        let eye = [10.0f64, 30.0, 40.0];
        let at = [12.0f64, 0.0, 10.0];
        let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        let cross = |a: [f64; 3], b: [f64; 3]| {
            [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
        };
        let norm = |a: [f64; 3]| {
            let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
            [a[0] / l, a[1] / l, a[2] / l]
        };
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let fwd = norm(sub(at, eye));
        let right = norm(cross(fwd, [0.0, 1.0, 0.0]));
        let up = cross(right, fwd);
        let view = [
            [right[0], up[0], -fwd[0], 0.0],
            [right[1], up[1], -fwd[1], 0.0],
            [right[2], up[2], -fwd[2], 0.0],
            [-dot(right, eye), -dot(up, eye), dot(fwd, eye), 1.0],
        ];
        let vp = mul(&proj, &view);
        let inv = invert(&vp);
        let inv32 = inv.map(|c| c.map(|v| v as f32));
        for p in [[12.0f64, 0.0, 10.0], [5.0, 3.0, 8.0], [20.0, -2.0, 0.0]] {
            let clip: Vec<f64> = (0..4).map(|r| (0..4).map(|c| vp[c][r] * [p[0], p[1], p[2], 1.0][c]).sum()).collect();
            let ndc = [(clip[0] / clip[3]) as f32, (clip[1] / clip[3]) as f32];
            let ray = Ray::from_ndc(&inv32, ndc, 1.0, 0.5).unwrap();
            let len = (ray.dir.iter().map(|c| c * c).sum::<f32>()).sqrt();
            assert!((len - 1.0).abs() < 1e-5);
            // Distance from p to the ray's line, and p lies ahead of the origin.
            let w = sub(p, ray.origin.map(|c| c as f64));
            let d = ray.dir.map(|c| c as f64);
            let along = dot(w, d);
            assert!(along > 0.0);
            let perp = sub(w, [d[0] * along, d[1] * along, d[2] * along]);
            assert!(dot(perp, perp).sqrt() < 1e-3, "{p:?}: {}", dot(perp, perp).sqrt());
        }
        // The centre of the screen looks along the camera's forward axis.
        let c = Ray::from_ndc(&inv32, [0.0, 0.0], 1.0, 0.5).unwrap();
        assert!(dot(c.dir.map(|v| v as f64), fwd) > 0.9999);
        // A singular matrix gives None.
        assert!(Ray::from_ndc(&[[0.0; 4]; 4], [0.0, 0.0], 1.0, 0.5).is_none());
        assert!(Ray::from_ndc(&inv32, [f32::NAN, 0.0], 1.0, 0.5).is_none());
    }

    /// A ray from `dist` metres away (azimuth `az`, elevation `el`, radians) aimed at the surface
    /// point over grid point `(gx, gy)`, with that point.
    fn aimed(hm: &Heightmap, gx: f32, gy: f32, dist: f32, az: f32, el: f32) -> (Ray, [f32; 3]) {
        let cell = hm.cell_size;
        let target = [gx * cell, hm.sample(gx, gy), gy * cell];
        let origin = [
            target[0] + dist * el.cos() * az.cos(),
            target[1] + dist * el.sin(),
            target[2] + dist * el.cos() * az.sin(),
        ];
        (Ray::through(origin, target), target)
    }

    /// A ray aimed at a point on the map's border meets it there: the last cell before the ray
    /// leaves the grid is tested up to the clipped exit (a case proptest found, where rounding put
    /// the cell's own exit a hair before the root and the ray missed the map).
    #[test]
    fn a_ray_aimed_at_a_border_point_hits_it() {
        let (w, h, cell, seed, amp) = (11usize, 21usize, 3.5919516f32, 12496864765441003982u64, 21.386932f32);
        let hm = Heightmap::from_fn(w, h, cell, |x, y| amp * unit_f32(hash2(x as i64, y as i64, seed))).unwrap();
        let (dist, az, el) = (120.65317f32, 2.859083f32, 0.96148276f32);
        for (gx, gy) in [(6.53079f32, 0.0f32), (0.0, 7.25), (10.0, 13.5), (4.75, 20.0)] {
            let (ray, _) = aimed(&hm, gx, gy, dist, az, el);
            let hit = raycast(&hm, &ray, f32::INFINITY).unwrap_or_else(|| panic!("no hit at ({gx}, {gy})"));
            on_surface(&hm, &hit, 1e-2);
            assert!(hit.t <= 1.0 + 1e-4, "({gx}, {gy}): {hit:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

        /// A ray aimed from above at a random surface point hits it, unless something nearer
        /// occludes it, in which case the hit is earlier and on the surface.
        #[test]
        fn rays_aimed_at_the_surface_hit_it(
            w in 1usize..24, h in 1usize..24, cell in 0.25f32..4.0, seed in any::<u64>(),
            amp in 0.0f32..30.0, fx in 0.0f32..=1.0, fy in 0.0f32..=1.0,
            dist in 1.0f32..200.0, az in 0.0f32..std::f32::consts::TAU, el in 0.05f32..std::f32::consts::FRAC_PI_2,
        ) {
            let hm = Heightmap::from_fn(w, h, cell, |x, y| amp * unit_f32(hash2(x as i64, y as i64, seed))).unwrap();
            let (ray, target) = aimed(&hm, fx * (w - 1) as f32, fy * (h - 1) as f32, dist, az, el);
            let hit = raycast(&hm, &ray, f32::INFINITY);
            prop_assert!(hit.is_some(), "no hit for {:?}", ray);
            let hit = hit.unwrap();
            let err = (0..3).map(|a| (hit.world[a] - target[a]).powi(2)).sum::<f32>().sqrt();
            let scale = 1.0 + amp.max(dist) * 1e-5;
            if err > 1e-3 * scale {
                let s = hm.sample(hit.grid[0], hit.grid[1]);
                prop_assert!((s - hit.world[1]).abs() < 1e-3 * scale, "hit not on the surface: {hit:?} surface {s}");
                if hit.t > 1.0 {
                    // Beyond the target only where the ray grazes the surface there: aimed in f32,
                    // it may pass a hair above the target, and a tangent ray then meets the
                    // surface a little further on. It never dips below the surface on the way.
                    for k in 0..=16 {
                        let t = 1.0 + (hit.t - 1.0) * k as f32 / 16.0;
                        let p = ray.at(t);
                        let below = hm.sample(p[0] / cell, p[2] / cell) - p[1];
                        prop_assert!(below < 1e-4 * scale, "the ray passed under the surface at t = {t} before {hit:?}");
                    }
                }
            }
        }
    }
}
