//! The 3-D view at the map's scale (issue #35): every distance the view uses follows from the
//! map's extent in metres, so a 1 km island and a 32 km world are both framed whole, orbit and
//! zoom alike, and read at their real size.
//!
//! With `W × H` nodes at cell size `c`, the map spans `X = (W − 1)·c` by `Z = (H − 1)·c` metres;
//! its side is `S = max(X, Z)` (at least 1 m). From it:
//!
//! | what | value | why |
//! |---|---|---|
//! | framing distance | the least `d` with every corner of the terrain box in view ([`ViewExtent::fit_distance`]) | the whole map in view after Generate, Open and Import, whatever the window's shape |
//! | zoom range | `max(2c, 1 m) ..= 6·S` | close enough to see single cells, far enough to see the map as a speck in the sea |
//! | near plane | `clamp(S·10⁻⁴, 0.05 m, 10 m)` | depth precision without clipping the closest zoom |
//! | far plane (culling) | `30·S` | past the sea plane's rim (`20·S` from the centre) seen from the farthest zoom |
//! | pan | `0.0015·d` per pixel at distance `d` | the ground under the cursor moves with it |
//! | brush radius | `max(c, 0.05 m) ..= S/2` | a brush narrower than a cell moves nothing; one wider than half the map is a new map |
//!
//! **Haze** (without the atmosphere, whose own scattering is physical at `aerial_scale = 1`):
//! Koschmieder's law gives the extinction of air of meteorological visibility `V` (the distance
//! at which a black object's contrast against the horizon falls to 2 %) as
//! `β = −ln 0.02 / V ≈ 3.912 / V`, and the transmittance over a distance `d` is `T = e^(−β·d)`.
//! The default `V = 200 km` is the air of the atmosphere the view draws when it can: Bevy's
//! Earth medium at sea level has an extinction of about `1.8·10⁻⁵` per metre at 550 nm (Rayleigh
//! `13.6·10⁻⁶`, Mie `4.4·10⁻⁶`), which is `V ≈ 217 km`; so the two skies agree. The far side of
//! a 1 km island seen whole then keeps `T ≈ 0.96` (it reads clear), while a 32 km world seen
//! whole, about 37 km to its near shore and 70 km to its far one, keeps `T ≈ 0.48` to `0.25`
//! (distance haze, every part still legible). A hazy day is 20 km.

/// The map's extent in metres and what the view derives from it (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewExtent {
    /// Extent along world x (map columns), metres.
    pub x_m: f32,
    /// Extent along world z (map rows), metres.
    pub z_m: f32,
    /// Cell size, metres.
    pub cell_m: f32,
}

/// `−ln(0.02)`: Koschmieder's constant for a 2 % contrast threshold.
pub const KOSCHMIEDER: f32 = 3.912;

impl ViewExtent {
    /// The extent of a `width × height` map at `cell` metres (non-finite or non-positive cells
    /// read as 1 m, fewer than 2 nodes as 2).
    pub fn of(width: usize, height: usize, cell: f32) -> Self {
        let cell = if cell.is_finite() && cell > 0.0 { cell } else { 1.0 };
        let span = |n: usize| (n.max(2) - 1) as f32 * cell;
        ViewExtent { x_m: span(width), z_m: span(height), cell_m: cell }
    }

    /// The longer side, metres (at least 1).
    pub fn side(&self) -> f32 {
        self.x_m.max(self.z_m).max(1.0)
    }

    /// The map's centre on the ground plane, `(x, z)` metres.
    pub fn centre(&self) -> (f32, f32) {
        (self.x_m * 0.5, self.z_m * 0.5)
    }

    /// The least distance from `focus` at which the terrain box `[0, X] × [lo, hi] × [0, Z]` is
    /// wholly in view, for a camera at `yaw` around +Y and `pitch` above the horizon (radians,
    /// [`orbit_back`]) with vertical field of view `fov_y` (radians) and `aspect` = width /
    /// height, plus 4 % of margin.
    ///
    /// With `b` the unit vector from the focus to the camera, `r = normalize(ŷ × b)` and
    /// `u = b × r`, a corner `p` (relative to the focus) lies at depth `d − p·b` in front of a
    /// camera at distance `d`, and is in view when `|p·r| ≤ tan(fov_x/2)·(d − p·b)` and
    /// `|p·u| ≤ tan(fov_y/2)·(d − p·b)`; so `d ≥ p·b + max(|p·r| / tan(fov_x/2), |p·u| / tan(fov_y/2))`
    /// over the eight corners.
    #[allow(clippy::too_many_arguments)]
    pub fn fit_distance(
        &self,
        focus: [f32; 3],
        lo: f32,
        hi: f32,
        yaw: f32,
        pitch: f32,
        fov_y: f32,
        aspect: f32,
    ) -> f32 {
        let b = orbit_back(yaw, pitch);
        let rn = (b[2] * b[2] + b[0] * b[0]).sqrt().max(1e-6);
        let r = [b[2] / rn, 0.0, -b[0] / rn];
        let u = [b[1] * r[2] - b[2] * r[1], b[2] * r[0] - b[0] * r[2], b[0] * r[1] - b[1] * r[0]];
        let dot = |a: [f32; 3], c: [f32; 3]| a[0] * c[0] + a[1] * c[1] + a[2] * c[2];
        let fov_y = if fov_y.is_finite() { fov_y.clamp(0.05, 3.0) } else { std::f32::consts::FRAC_PI_4 };
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect.clamp(0.1, 10.0) } else { 16.0 / 9.0 };
        let ty = (fov_y * 0.5).tan();
        let tx = ty * aspect;
        let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo.min(hi), lo.max(hi)) } else { (0.0, 0.0) };
        let mut d = 0.0f32;
        for x in [0.0, self.x_m] {
            for z in [0.0, self.z_m] {
                for y in [lo, hi] {
                    let p = [x - focus[0], y - focus[1], z - focus[2]];
                    d = d.max(dot(p, b) + (dot(p, r).abs() / tx).max(dot(p, u).abs() / ty));
                }
            }
        }
        (d * 1.04).max(self.side() * 0.1)
    }

    /// Closest and farthest the orbit camera may stand from its focus, metres.
    pub fn zoom_range(&self) -> (f32, f32) {
        let far = self.side() * 6.0;
        ((2.0 * self.cell_m).max(1.0).min(far * 0.5), far)
    }

    /// The projection's near and far planes, metres.
    pub fn clip_planes(&self) -> (f32, f32) {
        ((self.side() * 1e-4).clamp(0.05, 10.0), self.side() * 30.0)
    }

    /// How far the focus moves per pixel of a pan drag at camera distance `distance`.
    pub fn pan_per_pixel(distance: f32) -> f32 {
        distance * 0.0015
    }

    /// Smallest and largest useful brush radius, metres.
    pub fn brush_radius_range(&self) -> (f32, f32) {
        let lo = self.cell_m.max(0.05);
        (lo, (self.side() * 0.5).max(lo * 2.0))
    }

    /// Whether `other` is a map of another extent (the camera reframes for it).
    pub fn differs(&self, other: &ViewExtent) -> bool {
        let rel = |a: f32, b: f32| (a - b).abs() > 1e-4 * a.abs().max(b.abs()).max(1e-6);
        rel(self.x_m, other.x_m) || rel(self.z_m, other.z_m) || rel(self.cell_m, other.cell_m)
    }
}

/// Unit vector from the orbit's focus to the camera at `yaw` around +Y (0: on the +z side) and
/// `pitch` above the horizon.
pub fn orbit_back(yaw: f32, pitch: f32) -> [f32; 3] {
    [pitch.cos() * yaw.sin(), pitch.sin(), pitch.cos() * yaw.cos()]
}

/// Extinction coefficient (per metre) of air with meteorological visibility `visibility_m`.
pub fn extinction(visibility_m: f32) -> f32 {
    KOSCHMIEDER / visibility_m.max(1.0)
}

/// Share of light that crosses `distance_m` of air of visibility `visibility_m`.
pub fn transmittance(distance_m: f32, visibility_m: f32) -> f32 {
    (-extinction(visibility_m) * distance_m.max(0.0)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extent_is_the_span_between_the_outer_nodes() {
        let e = ViewExtent::of(513, 257, 8.0);
        assert_eq!((e.x_m, e.z_m, e.side()), (4096.0, 2048.0, 4096.0));
        assert_eq!(e.centre(), (2048.0, 1024.0));
        let bad = ViewExtent::of(0, 1, f32::NAN);
        assert_eq!((bad.x_m, bad.z_m, bad.cell_m), (1.0, 1.0, 1.0));
    }

    #[test]
    fn every_distance_scales_with_the_world() {
        let island = ViewExtent::of(513, 513, 2.0);
        let world = ViewExtent::of(513, 513, 64.0);
        let fit = |e: &ViewExtent| e.fit_distance([e.x_m / 2.0, 0.0, e.z_m / 2.0], 0.0, 0.0, 0.6, 0.65, 0.785, 1.5);
        assert!((fit(&world) / fit(&island) - 32.0).abs() < 1e-3);
        assert!((world.zoom_range().1 / island.zoom_range().1 - 32.0).abs() < 1e-4);
        assert!((world.clip_planes().1 / island.clip_planes().1 - 32.0).abs() < 1e-4);
        // The closest zoom and the far plane keep the whole range usable at both ends.
        for e in [island, world, ViewExtent::of(4097, 4097, 0.25), ViewExtent::of(1025, 1025, 100.0)] {
            let (near, far) = e.clip_planes();
            let (lo, hi) = e.zoom_range();
            assert!(near < lo * 0.5, "{e:?}: near {near} vs closest zoom {lo}");
            assert!(far > hi + 20.0 * e.side(), "{e:?}: the sea's rim is culled from the farthest zoom");
            let d = e.fit_distance([e.x_m / 2.0, 0.0, e.z_m / 2.0], -50.0, 300.0, 0.6, 0.65, 0.785, 1.2);
            assert!(lo < d && d < hi, "{e:?}: framing at {d}");
            let (r0, r1) = e.brush_radius_range();
            assert!(r0 >= e.cell_m.min(0.05) && r1 >= e.side() * 0.5 - 1e-3, "{e:?}");
        }
    }

    #[test]
    fn the_fitted_distance_puts_every_corner_in_view() {
        let e = ViewExtent::of(513, 257, 8.0);
        let focus = [e.x_m / 2.0, 40.0, e.z_m / 2.0];
        for (yaw, pitch, aspect) in [(0.6, 0.65, 1.2), (0.0, 1.5, 0.5), (2.5, 0.1, 2.4), (-1.0, 0.4, 1.0)] {
            let fov = std::f32::consts::FRAC_PI_4;
            let d = e.fit_distance(focus, -20.0, 150.0, yaw, pitch, fov, aspect);
            // Project each corner as a camera at that distance sees it.
            let b = orbit_back(yaw, pitch);
            let cam = [focus[0] + b[0] * d, focus[1] + b[1] * d, focus[2] + b[2] * d];
            let f = [-b[0], -b[1], -b[2]];
            let rn = (f[2] * f[2] + f[0] * f[0]).sqrt();
            let r = [-f[2] / rn, 0.0, f[0] / rn];
            let u = [r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]];
            let dot = |a: [f32; 3], c: [f32; 3]| a[0] * c[0] + a[1] * c[1] + a[2] * c[2];
            let mut widest = 0.0f32;
            for (x, y, z) in [(0.0, -20.0, 0.0), (e.x_m, 150.0, 0.0), (0.0, 150.0, e.z_m), (e.x_m, -20.0, e.z_m)] {
                let v = [x - cam[0], y - cam[1], z - cam[2]];
                let depth = dot(v, f);
                assert!(depth > 0.0);
                let (sx, sy) = (dot(v, r) / depth / (fov / 2.0).tan() / aspect, dot(v, u) / depth / (fov / 2.0).tan());
                assert!(sx.abs() <= 1.0 && sy.abs() <= 1.0, "yaw {yaw} pitch {pitch}: corner at ({sx}, {sy})");
                widest = widest.max(sx.abs()).max(sy.abs());
            }
            assert!(widest > 0.85, "yaw {yaw} pitch {pitch}: the map fills the view ({widest})");
        }
    }

    #[test]
    fn another_cell_size_is_another_extent() {
        let a = ViewExtent::of(513, 513, 2.0);
        assert!(a.differs(&ViewExtent::of(513, 513, 8.0)), "same nodes, four times the world");
        assert!(!a.differs(&ViewExtent::of(513, 513, 2.0)));
        assert!(a.differs(&ViewExtent::of(257, 513, 2.0)));
    }

    #[test]
    fn clear_air_keeps_an_island_clear_and_hazes_a_large_world() {
        let v = 200_000.0;
        assert!((transmittance(v, v) - 0.02).abs() < 1e-3, "2 % contrast at the visibility");
        let island = ViewExtent::of(513, 513, 2.0);
        let world = ViewExtent::of(513, 513, 64.0);
        let far_side = |e: &ViewExtent| {
            e.fit_distance([e.x_m / 2.0, 0.0, e.z_m / 2.0], 0.0, 0.0, 0.6, 0.65, 0.785, 1.5) + e.side() * 0.5
        };
        assert!(transmittance(far_side(&island), v) > 0.95, "{}", transmittance(far_side(&island), v));
        assert!(transmittance(far_side(&world), v) < 0.3, "{}", transmittance(far_side(&world), v));
        assert_eq!(transmittance(-5.0, v), 1.0);
    }
}
