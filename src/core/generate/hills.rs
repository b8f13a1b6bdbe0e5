//! Hills: random bumps laid on top of each other (seed 001, 「手動で」丘を作成する — "creating
//! hills by hand": start from a level surface and keep adding bulges of different heights at
//! arbitrary places).
//!
//! Hill `i` has a centre `c_i` (uniform over the map's extent, metres), a radius
//! `r_i ∈ [radius_min_m, radius_max_m]` (metres) and a height `a_i ∈ [height_min, height_max]`
//! (negative heights dig pits), all drawn in order from one SplitMix64 stream of the seed. The
//! centre is `(u·(W−1)·Δx, v·(H−1)·Δx)` for uniform `u, v ∈ [0, 1)`: a point of the world, not a
//! node, so the same seed puts the same hills in the same places at any resolution of the same
//! extent (`count` is per map, and the extent is fixed). With `p` a world position and
//! `t = |p − c_i| / r_i`:
//!
//! ```text
//! h(p) += a_i · φ(t)     for t < 1 (nothing outside the radius)
//! Cone        φ = 1 − t                                   volume π r² a / 3
//! Paraboloid  φ = 1 − t²                                  volume π r² a / 2
//! Gaussian    φ = (e^{−4.5 t²} − e^{−4.5}) / (1 − e^{−4.5})   (σ = r/3, shifted to reach 0 at r)
//! Cosine      φ = (1 + cos πt) / 2                        volume π r² a (1/2 − 2/π²)
//! ```
//!
//! Node `(x, y)` is the world point `(x·Δx, y·Δx)`; in node space the hill has centre `c_i/Δx`
//! and radius `r_i/Δx` and the same `t`.
//!
//! | parameter | unit | range | default |
//! |---|---|---|---|
//! | `count` | per map | `[0, 1e6]` | 200 |
//! | `radius_min_m` | m | `[0.01, 1e6]` | 16 (version 1: 8 nodes on the default island's 2 m grid) |
//! | `radius_max_m` | m | `[radius_min_m, 1e6]` | 96 (version 1: 48 nodes) |
//! | `height_min`, `height_max` | m | `[-1e5, 1e5]`, `height_max ≥ height_min` | 2, 20 |
//!
//! Cost is proportional to the total area of the bumps (each hill only visits its bounding box),
//! plus a small per-hill overhead. The map is cut into bands of rows processed in parallel; each
//! band applies its hills in index order, so every node sees the same sequence of additions
//! whatever the thread count.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{GenError, check};
use crate::core::heightmap::Heightmap;
use crate::core::rng::{SplitMix64, mix64};
use crate::core::units::Sampling;

crate::param_enum! {
    /// Profile of one hill.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum HillShape {
        /// Straight-sided cone, `1 − t`.
        Cone,
        /// Dome, `1 − t²`.
        Paraboloid,
        /// Bell, σ = r/3, shifted so it reaches 0 at the radius.
        Gaussian,
        /// Raised cosine, `(1 + cos πt)/2` (smooth at the top and at the foot).
        #[default]
        Cosine,
    }
}

impl HillShape {
    /// `φ(t)` for `t ∈ [0, 1]`; 0 for `t ≥ 1`.
    #[inline]
    pub fn profile(self, t: f64) -> f64 {
        if t.is_nan() || t >= 1.0 {
            return 0.0;
        }
        match self {
            HillShape::Cone => 1.0 - t,
            HillShape::Paraboloid => 1.0 - t * t,
            HillShape::Gaussian => {
                let floor = (-4.5f64).exp();
                ((-4.5 * t * t).exp() - floor) / (1.0 - floor)
            }
            HillShape::Cosine => 0.5 * (1.0 + (std::f64::consts::PI * t).cos()),
        }
    }
}

crate::params! {
    prefix "hills.";
    /// Parameters of the hills generator.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct HillsParams {
        /// Number of hills over the map (its extent is fixed).
        pub count: u32 = 200, range [0.0, 1e6];
        /// Smallest hill radius, metres. Default 16 m: version 1's 8 nodes (`radius_min`) on the
        /// default island's 2 m grid.
        pub radius_min_m: f32 = 16.0, unit "m", range [0.01, 1e6], legacy radius_min: f32;
        /// Largest hill radius, metres, at least `radius_min_m`. Default 96 m: version 1's 48 nodes
        /// (`radius_max`) at 2 m.
        pub radius_max_m: f32 = 96.0, unit "m", range [0.01, 1e6], legacy radius_max: f32;
        /// Lowest hill height, metres (negative = pit).
        pub height_min: f32 = 2.0, unit "m", range [-1e5, 1e5];
        /// Highest hill height, at least `height_min`.
        pub height_max: f32 = 20.0, unit "m", range [-1e5, 1e5];
        /// Profile of every hill.
        pub shape: HillShape = HillShape::Cosine;
    }
}

impl HillsParams {
    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), GenError> {
        self.check_ranges()?;
        check("hills.radius_max_m", self.radius_max_m as f64, self.radius_min_m as f64, 1e6, "radius_min_m..=1e6 m")?;
        check("hills.height_max", self.height_max as f64, self.height_min as f64, 1e5, "height_min..=1e5 m")
    }

    /// Converts version-1 radii (nodes) made for a map of this cell size (metres) into metres.
    pub fn upgrade_units(&mut self, cell_size: f32) {
        let s = Sampling::new(cell_size);
        if let Some(r) = self.radius_min.take() {
            self.radius_min_m = s.metres(r as f64) as f32;
        }
        if let Some(r) = self.radius_max.take() {
            self.radius_max_m = s.metres(r as f64) as f32;
        }
    }
}

/// One drawn hill, in world coordinates (metres from node `(0, 0)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hill {
    /// Centre along x, metres.
    pub x: f64,
    /// Centre along y, metres.
    pub y: f64,
    /// Radius, metres.
    pub radius: f64,
    /// Height at the centre, metres.
    pub height: f64,
}

impl Hill {
    /// The hill in the node space of a map sampled as `s` (centre and radius in nodes).
    pub fn in_nodes(self, s: Sampling) -> Self {
        Self { x: s.nodes(self.x), y: s.nodes(self.y), radius: s.nodes(self.radius), height: self.height }
    }
}

/// The hills `apply` would add to a `width × height` map with nodes `cell_size` metres apart,
/// in the order they are added (world coordinates).
pub fn draw(width: usize, height: usize, cell_size: f32, p: &HillsParams, seed: u64) -> Result<Vec<Hill>, GenError> {
    p.validate()?;
    let mut rng = SplitMix64::new(mix64(seed ^ 0x4849_4c4c_5321));
    let s = Sampling::new(cell_size);
    let (wx, wy) = (s.metres((width.max(1) - 1) as f64), s.metres((height.max(1) - 1) as f64));
    let (r0, r1) = (p.radius_min_m as f64, p.radius_max_m as f64);
    let (h0, h1) = (p.height_min as f64, p.height_max as f64);
    Ok((0..p.count)
        .map(|_| {
            let x = rng.next_f64() * wx;
            let y = rng.next_f64() * wy;
            let radius = r0 + (r1 - r0) * rng.next_f64();
            let height = h0 + (h1 - h0) * rng.next_f64();
            Hill { x, y, radius, height }
        })
        .collect())
}

/// Rows per parallel band.
const BAND: usize = 32;

/// Inclusive node range `[lo, hi]` covered by `c ± r` inside `0..n`, or `None`.
fn span(c: f64, r: f64, n: usize) -> Option<(usize, usize)> {
    let lo = (c - r).ceil().max(0.0);
    let hi = (c + r).floor().min((n - 1) as f64);
    (lo <= hi).then_some((lo as usize, hi as usize))
}

/// Adds `p.count` random hills to `hm` (see the module docs).
pub fn apply(hm: &mut Heightmap, p: &HillsParams, seed: u64) -> Result<(), GenError> {
    let s = Sampling::of(hm);
    let hills: Vec<Hill> =
        draw(hm.width, hm.height, hm.cell_size, p, seed)?.into_iter().map(|h| h.in_nodes(s)).collect();
    let (w, h) = (hm.width, hm.height);
    let bands = h.div_ceil(BAND);
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); bands];
    for (i, hill) in hills.iter().enumerate() {
        if let Some((y0, y1)) = span(hill.y, hill.radius, h) {
            for list in &mut lists[y0 / BAND..=y1 / BAND] {
                list.push(i as u32);
            }
        }
    }
    let shape = p.shape;
    hm.data.par_chunks_mut(w * BAND).zip(lists.par_iter()).enumerate().for_each(|(b, (band, list))| {
        let first = b * BAND;
        let rows = band.len() / w;
        for &i in list {
            let hill = &hills[i as usize];
            let Some((y0, y1)) = span(hill.y, hill.radius, h) else { continue };
            let Some((x0, x1)) = span(hill.x, hill.radius, w) else { continue };
            let inv_r = 1.0 / hill.radius;
            for y in y0.max(first)..=y1.min(first + rows - 1) {
                let dy = y as f64 - hill.y;
                let row = &mut band[(y - first) * w..(y - first + 1) * w];
                for (x, v) in row.iter_mut().enumerate().take(x1 + 1).skip(x0) {
                    let dx = x as f64 - hill.x;
                    let t = (dx * dx + dy * dy).sqrt() * inv_r;
                    if t < 1.0 {
                        *v += (hill.height * shape.profile(t)) as f32;
                    }
                }
            }
        }
    });
    Ok(())
}

/// A flat (0 m) `width × height` map with hills added.
pub fn generate(
    width: usize,
    height: usize,
    cell_size: f32,
    p: &HillsParams,
    seed: u64,
) -> Result<Heightmap, GenError> {
    p.validate()?;
    let mut hm = Heightmap::new(width, height, cell_size)?;
    apply(&mut hm, p, seed)?;
    Ok(hm)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [HillShape; 4] = [HillShape::Cone, HillShape::Paraboloid, HillShape::Gaussian, HillShape::Cosine];

    fn one(shape: HillShape, r: f32, a: f32) -> HillsParams {
        HillsParams {
            count: 1,
            radius_min_m: r,
            radius_max_m: r,
            height_min: a,
            height_max: a,
            shape,
            ..Default::default()
        }
    }

    #[test]
    fn profiles_peak_at_one_and_vanish_at_the_radius() {
        for s in SHAPES {
            assert!((s.profile(0.0) - 1.0).abs() < 1e-12, "{s:?}");
            assert!(s.profile(0.999_999).abs() < 1e-4, "{s:?}");
            assert_eq!(s.profile(1.0), 0.0);
            assert_eq!(s.profile(7.0), 0.0);
            assert_eq!(s.profile(f64::NAN), 0.0);
            for k in 0..100 {
                let t = k as f64 / 100.0;
                assert!(s.profile(t + 0.01) <= s.profile(t) + 1e-12, "{s:?} not decreasing");
            }
        }
    }

    #[test]
    fn a_hill_changes_only_nodes_within_its_radius() {
        for s in SHAPES {
            let p = one(s, 9.5, 4.0);
            let hm = generate(48, 40, 1.0, &p, 3).unwrap();
            let hill = draw(48, 40, 1.0, &p, 3).unwrap()[0];
            let mut inside = 0;
            for y in 0..40 {
                for x in 0..48 {
                    let d = ((x as f64 - hill.x).powi(2) + (y as f64 - hill.y).powi(2)).sqrt();
                    let v = hm.get(x, y);
                    if d >= hill.radius {
                        assert_eq!(v, 0.0, "{s:?} leaked to ({x},{y}) at d = {d}");
                    } else if d < hill.radius * 0.9 {
                        assert!(v > 0.0 && v <= 4.0, "{s:?} ({x},{y}) = {v}");
                        inside += 1;
                    }
                }
            }
            assert!(inside > 100);
        }
    }

    #[test]
    fn volumes_match_the_continuous_bumps() {
        use std::f64::consts::PI;
        let r = 20.0;
        let a = 3.0;
        for (s, frac) in
            [(HillShape::Cone, 1.0 / 3.0), (HillShape::Paraboloid, 0.5), (HillShape::Cosine, 0.5 - 2.0 / (PI * PI))]
        {
            // Pick a seed whose single hill lies wholly inside the 101×101 map.
            let p = one(s, r as f32, a as f32);
            let seed = (0..100)
                .find(|&sd| {
                    let h = draw(101, 101, 1.0, &p, sd).unwrap()[0];
                    h.x > r && h.x < 100.0 - r && h.y > r && h.y < 100.0 - r
                })
                .unwrap();
            let hm = generate(101, 101, 1.0, &p, seed).unwrap();
            let want = PI * r * r * a * frac;
            let got = hm.sum();
            assert!((got - want).abs() / want < 0.02, "{s:?}: volume {got} vs {want}");
        }
    }

    #[test]
    fn pits_and_layering() {
        let pit = generate(32, 32, 1.0, &one(HillShape::Paraboloid, 6.0, -5.0), 1).unwrap();
        assert!(pit.stats().min < -4.0 && pit.stats().max == 0.0);
        // Hills add up: every node is the sum of all bumps over it.
        let p = HillsParams { count: 30, ..HillsParams::default() };
        let hm = generate(64, 64, 1.0, &p, 8).unwrap();
        let hills = draw(64, 64, 1.0, &p, 8).unwrap();
        for &(x, y) in &[(3usize, 5usize), (40, 40), (63, 0), (20, 50)] {
            let want: f64 = hills
                .iter()
                .map(|h| {
                    let t = ((x as f64 - h.x).powi(2) + (y as f64 - h.y).powi(2)).sqrt() / h.radius;
                    h.height * p.shape.profile(t)
                })
                .sum();
            assert!((hm.get(x, y) as f64 - want).abs() < 1e-3);
        }
    }

    #[test]
    fn deterministic_across_thread_counts_and_seeded() {
        let p = HillsParams { count: 400, radius_min_m: 2.0, radius_max_m: 30.0, ..HillsParams::default() };
        let a = generate(100, 130, 1.0, &p, 4).unwrap();
        let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = one_thread.install(|| generate(100, 130, 1.0, &p, 4).unwrap());
        let c = generate(100, 130, 1.0, &p, 5).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Zero hills: flat.
        let flat = generate(10, 10, 1.0, &HillsParams { count: 0, ..p }, 4).unwrap();
        assert!(flat.data.iter().all(|&h| h == 0.0));
    }

    #[test]
    fn tiny_and_thin_maps_work() {
        for (w, h) in [(1, 1), (1, 70), (70, 1), (2, 33)] {
            let hm = generate(w, h, 1.0, &HillsParams::default(), 0).unwrap();
            assert!(hm.all_finite());
            assert!(hm.stats().max > 0.0);
        }
    }

    #[test]
    fn rejects_bad_params() {
        for p in [
            HillsParams { count: 2_000_000, ..HillsParams::default() },
            HillsParams { radius_min_m: 0.0, ..HillsParams::default() },
            HillsParams { radius_min_m: f32::NAN, ..HillsParams::default() },
            HillsParams { radius_max_m: 4.0, ..HillsParams::default() },
            HillsParams { radius_max_m: f32::INFINITY, ..HillsParams::default() },
            HillsParams { height_min: -1e9, ..HillsParams::default() },
            HillsParams { height_max: 1.0, ..HillsParams::default() },
        ] {
            assert!(matches!(generate(8, 8, 1.0, &p, 0), Err(GenError::BadParam { .. })), "{p:?}");
        }
        assert!(matches!(generate(0, 8, 1.0, &HillsParams::default(), 0), Err(GenError::Size(_))));
    }

    #[test]
    fn the_same_seed_puts_the_same_hills_in_the_same_places_at_any_resolution() {
        // A 256 m square at 4 m, 1 m and 0.5 m: the hills are the same in metres, and every
        // common world point gets the same height.
        let p = HillsParams { count: 40, ..HillsParams::default() };
        let coarse = generate(65, 65, 4.0, &p, 6).unwrap();
        let fine = generate(257, 257, 1.0, &p, 6).unwrap();
        assert_eq!(draw(65, 65, 4.0, &p, 6).unwrap(), draw(513, 513, 0.5, &p, 6).unwrap());
        let mut most = 0.0f32;
        for y in 0..65 {
            for x in 0..65 {
                let d = (coarse.get(x, y) - fine.get(4 * x, 4 * y)).abs();
                assert!(d < 1e-4, "({x}, {y}): {d}");
                most = most.max(coarse.get(x, y));
            }
        }
        assert!(most > 5.0, "no hills: {most}");
    }

    #[test]
    fn version_1_radii_upgrade_to_metres() {
        use crate::core::units::Legacy;
        let mut p: HillsParams = ron::from_str("(count: 3, radius_min: 4.0, radius_max: 10.0)").unwrap();
        assert!(p.has_legacy());
        p.upgrade_units(2.5);
        assert!(!p.has_legacy());
        assert_eq!((p.count, p.radius_min_m, p.radius_max_m), (3, 10.0, 25.0));
        // On its own 2.5 m grid the hills are those version 1 drew in nodes.
        for h in draw(40, 30, 2.5, &p, 1).unwrap() {
            let n = h.in_nodes(Sampling::new(2.5));
            assert!(n.radius >= 4.0 - 1e-9 && n.radius <= 10.0 + 1e-9);
            assert!(n.x >= 0.0 && n.x <= 39.0 && n.y >= 0.0 && n.y <= 29.0);
        }
    }
}
