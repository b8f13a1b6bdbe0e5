//! Voronoi islands (SPEC §1, seed 001, after A. Patel's "Polygonal Map Generation for Games",
//! 2010, which seed 001 cites).
//!
//! The island is a function of world position: node `(x, y)` is the point `(x·Δx, y·Δx)` of a
//! world whose extent `((W−1)·Δx, (H−1)·Δx)` is fixed, and every step that decides the polygons
//! is defined on that extent, not on the map's nodes, so the same parameters give the same
//! polygons, the same water and the same coast at 129², 513² or 2049². What the resolution still
//! changes is how finely the distances to the coast are sampled (step 6): on the default island
//! a 257² map differs from a 1025² one by about 0.5 m on average and a few metres at most (see
//! `tests/generate.rs`).
//!
//! 1. **Sites.** `points` random positions, uniform over the map's extent: fractions `u, v ∈
//!    [0, 1)` of each side (SplitMix64 from the seed), the same world points at any resolution.
//! 2. **Voronoi diagram on a raster.** Every raster node `p` belongs to the site `i` minimising
//!    `|p − s_i|²` (ties: lowest index). A bucket grid of about two sites per bucket is searched
//!    ring by ring until the distance to the unsearched rings exceeds the best distance found;
//!    on top of it each small tile of nodes keeps the complete list of sites that can be nearest
//!    anywhere in the tile, so a query scans a handful of sites and is still exact.
//! 3. **Lloyd relaxation** (`lloyd_iterations` times), on a lattice over the extent with
//!    `L = clamp(⌈16·√points⌉, 256, 4096)` nodes along the longer side whatever the map's own
//!    node count (about 16 per site spacing): each site moves to the centroid of its lattice
//!    nodes, `s_i ← (Σ_{p∈V_i} ω_p p) / Σ_{p∈V_i} ω_p`, with the trapezoid weights `ω_p` (1
//!    inside, ½ on an edge, ¼ in a corner) so the sums integrate over the extent itself (sums of
//!    `4·ω_p` in integers, so exact at any thread count); an empty cell keeps its site. This
//!    evens out cell sizes ("removes polygons that are too small").
//! 4. **Noisy borders.** The final diagram is looked up at a perturbed position
//!    `p' = p + border_noise_m · (n_x(p), n_y(p))`, with `n_x, n_y ∈ [-1, 1]` two independent
//!    fractal value-noise fields, so polygon borders wiggle by up to `border_noise_m` metres
//!    (`border_noise_m / Δx` nodes). Every map node is labelled so.
//! 5. **Water.** `round(water_fraction · points)` polygons are chosen at random as water (a
//!    partial Fisher–Yates draw); with `border_is_water` every polygon that touches the border is
//!    water too: those met by 16 385 perturbed samples along the longer border (in proportion
//!    along the shorter), the same points at any resolution, and those owning a border node of
//!    the map, so the map's border is always water.
//! 6. **Heights.** An exact Euclidean distance transform (Felzenszwalb & Huttenlocher 2012,
//!    "Distance Transforms of Sampled Functions": 1-D distances along each row by two sweeps,
//!    then per column the lower envelope of the parabolas `(y − v)² + g(v)²`) gives every land
//!    node its distance `d_w` to the nearest water node and every water node its distance `d_l`
//!    to the nearest land node (in nodes; the heights use only ratios of them, so the unit
//!    cancels). The coast lies between a node and its nearest node of the other class, so the
//!    distance to the coast is taken as `d − ½`, which removes the half-node bias a coarse map
//!    would otherwise have. Then
//!    ```text
//!    land : h = H · ((d_w − ½) / (max d_w − ½))^e · (1 + a·n_h(p))
//!    water: h = −H · D · ((d_l − ½) / (max d_l − ½)) · (1 + a·n_h(p))
//!    ```
//!    with `H = height_scale`, `e = height_exponent`, `D = sea_depth`, `a = height_noise` and
//!    `n_h ∈ [-1, 1]` a third noise field: the height noise is proportional to the height, so
//!    the coastline stays at sea level 0 (every node keeps its sign: `d ≥ 1`) and all water lies
//!    below all land (for `a < 1`). A map with no water is a plateau at `H` (times the noise);
//!    one with no land is sea at depth `H·D`.
//!
//! The noise is our own hash-based value noise (quintic-smoothed lattice of
//! [`rng::hash2`](crate::core::rng::hash2) values, 4 octaves, lacunarity 2, gain ½, divided by
//! the amplitude sum so it stays in `[-1, 1]`); `noise_frequency` counts base-octave features
//! across the map's longer extent `max(W−1, H−1)·Δx` (per map: the extent is fixed), i.e.
//! `noise_frequency / max(W−1, H−1)` cycles per node.
//!
//! | parameter | unit | range | default |
//! |---|---|---|---|
//! | `points` | per map | `[1, 65 536]` | 512 |
//! | `lloyd_iterations` | — | `[0, 64]` | 2 |
//! | `water_fraction` | — | `[0, 1]` | 0.25 |
//! | `height_scale` | m | `[0, 1e5]` | 100 |
//! | `height_exponent`, `sea_depth`, `height_noise` | — | `[0.1, 10]`, `[0, 10]`, `[0, 1]` | 1, 0.2, 0.3 |
//! | `border_noise_m` | m | `[0, 1e5]` | 12 (version 1: 6 nodes on the default island's 2 m grid) |
//! | `noise_frequency` | per map | `[0.01, 4096]` | 8 |
//!
//! Version 1 drew the sites over `[−½, W−½)` nodes, relaxed them on the map's own nodes, found
//! the border polygons on the map's border nodes, measured heights from `d` rather than `d − ½`
//! and counted `noise_frequency` across `max(W, H)` nodes: all of it followed the node count, so
//! its islands were not the same land at another resolution, and this version draws different
//! ones (of the same character) from the same seed.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::GenError;
use crate::core::heightmap::{Heightmap, check_cell, check_size};
use crate::core::rng::{SplitMix64, hash2, mix64, signed_f32};
use crate::core::units::Sampling;

crate::params! {
    /// Parameters of [`generate`].
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct VoronoiIslandParams {
        /// Number of Voronoi sites (polygons).
        pub points: u32 = 512, range [1.0, 65_536.0];
        /// Lloyd relaxation passes.
        pub lloyd_iterations: u32 = 2, range [0.0, 64.0];
        /// Fraction of the polygons chosen at random as water (before border polygons are added).
        pub water_fraction: f32 = 0.25, range [0.0, 1.0];
        /// Make every polygon that touches the map border water (gives an island).
        pub border_is_water: bool = true;
        /// Height of the land node farthest from water, metres.
        pub height_scale: f32 = 100.0, unit "m", range [0.0, 100_000.0];
        /// Exponent `e` on the normalised distance to water (1 = linear cones, >1 = flatter lowlands and
        /// sharper peaks).
        pub height_exponent: f32 = 1.0, range [0.1, 10.0];
        /// Depth of the water node farthest from land, as a fraction of `height_scale` (0 = flat sea at
        /// level 0).
        pub sea_depth: f32 = 0.2, range [0.0, 10.0];
        /// Relative height noise `a`: heights are multiplied by `1 + a·n`, `n ∈ [-1, 1]` (at 1 land may
        /// touch sea level).
        pub height_noise: f32 = 0.3, range [0.0, 1.0];
        /// Largest displacement of polygon borders, metres. Default 12 m: version 1's 6 nodes
        /// (`border_noise`) on the default island's 2 m grid.
        pub border_noise_m: f32 = 12.0, unit "m", range [0.0, 1e5], legacy border_noise: f32;
        /// Base-octave noise features across the map's longer extent (per map).
        pub noise_frequency: f32 = 8.0, range [0.01, 4096.0];
    }
}

impl VoronoiIslandParams {
    /// Checks every field; the first offending one is reported.
    pub fn validate(&self) -> Result<(), GenError> {
        self.check_ranges()?;
        Ok(())
    }

    /// Converts a version-1 border noise (nodes) made for a map of this cell size (metres) into
    /// metres.
    pub fn upgrade_units(&mut self, cell_size: f32) {
        if let Some(b) = self.border_noise.take() {
            self.border_noise_m = Sampling::new(cell_size).metres(b as f64) as f32;
        }
    }
}

/// The polygon layout of a Voronoi island: sites, the site owning each node, and which sites
/// are water.
#[derive(Clone, Debug, PartialEq)]
pub struct VoronoiCells {
    /// Map width, nodes.
    pub width: usize,
    /// Map height, nodes.
    pub height: usize,
    /// Site positions after relaxation, in node coordinates.
    pub sites: Vec<[f32; 2]>,
    /// `labels[y * width + x]`: index of the site owning node `(x, y)` (with border noise).
    pub labels: Vec<u32>,
    /// `water[i]`: site `i` is a water polygon.
    pub water: Vec<bool>,
}

impl VoronoiCells {
    /// True when node `(x, y)` lies in a water polygon.
    pub fn is_water(&self, x: usize, y: usize) -> bool {
        self.water[self.labels[y * self.width + x] as usize]
    }

    /// Number of nodes owned by each site.
    pub fn areas(&self) -> Vec<u64> {
        let mut a = vec![0u64; self.sites.len()];
        for &l in &self.labels {
            a[l as usize] += 1;
        }
        a
    }
}

// Salts separating the random streams drawn from one seed.
const SALT_SITES: u64 = 0x5173_e5a1_0000_0001;
const SALT_WATER: u64 = 0x5173_e5a1_0000_0002;
const SALT_NOISE_X: u64 = 0x5173_e5a1_0000_0003;
const SALT_NOISE_Y: u64 = 0x5173_e5a1_0000_0004;
const SALT_NOISE_H: u64 = 0x5173_e5a1_0000_0005;

/// Quintic smoothstep `6t⁵ − 15t⁴ + 10t³`.
#[inline]
fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Fractal value noise in `[-1, 1]`: 4 octaves, lacunarity 2, gain ½.
#[derive(Clone, Copy, Debug)]
struct ValueNoise {
    seed: u64,
    freq: f64,
}

impl ValueNoise {
    const OCTAVES: u32 = 4;

    fn lattice(&self, i: i64, j: i64, octave: u32) -> f64 {
        signed_f32(hash2(i, j, mix64(self.seed ^ octave as u64))) as f64
    }

    /// One octave at a point (the reference [`Self::fill_row`] is tested against).
    fn octave(&self, x: f64, y: f64, octave: u32) -> f64 {
        let fx = x.floor();
        let fy = y.floor();
        let (i, j) = (fx as i64, fy as i64);
        let (u, v) = (fade(x - fx), fade(y - fy));
        let a = self.lattice(i, j, octave);
        let b = self.lattice(i.wrapping_add(1), j, octave);
        let c = self.lattice(i, j.wrapping_add(1), octave);
        let d = self.lattice(i.wrapping_add(1), j.wrapping_add(1), octave);
        let top = a + (b - a) * u;
        let bottom = c + (d - c) * u;
        top + (bottom - top) * v
    }

    /// Per octave, the lattice column and smoothed offset of every node `x` in `0..width`:
    /// shared by all rows (and by every field with the same frequency).
    fn x_plan(&self, width: usize) -> Vec<Vec<(i64, f64)>> {
        let mut f = self.freq;
        (0..Self::OCTAVES)
            .map(|_| {
                let plan = (0..width)
                    .map(|x| {
                        let xx = x as f64 * f;
                        let fx = xx.floor();
                        (fx as i64, fade(xx - fx))
                    })
                    .collect();
                f *= 2.0;
                plan
            })
            .collect()
    }

    /// The noise at nodes `(0..out.len(), y)`, identical bit for bit to [`Self::at`] but with
    /// the lattice values of each octave fetched once per lattice cell instead of per node.
    fn fill_row(&self, plan: &[Vec<(i64, f64)>], y: f64, out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o = 0.0);
        let (mut amp, mut norm, mut f) = (1.0, 0.0, self.freq);
        for (o, xs) in (0..Self::OCTAVES).zip(plan) {
            let yy = y * f;
            let fy = yy.floor();
            let j = fy as i64;
            let v = fade(yy - fy);
            let mut cached = None;
            let (mut a, mut b, mut c, mut d) = (0.0, 0.0, 0.0, 0.0);
            for (out, &(i, u)) in out.iter_mut().zip(xs) {
                if cached != Some(i) {
                    a = self.lattice(i, j, o);
                    b = self.lattice(i.wrapping_add(1), j, o);
                    c = self.lattice(i, j.wrapping_add(1), o);
                    d = self.lattice(i.wrapping_add(1), j.wrapping_add(1), o);
                    cached = Some(i);
                }
                let top = a + (b - a) * u;
                let bottom = c + (d - c) * u;
                *out += amp * (top + (bottom - top) * v);
            }
            norm += amp;
            amp *= 0.5;
            f *= 2.0;
        }
        out.iter_mut().for_each(|o| *o = (*o / norm).clamp(-1.0, 1.0));
    }

    /// The noise at one point (node coordinates, fractions allowed).
    fn at(&self, x: f64, y: f64) -> f64 {
        let (mut sum, mut amp, mut norm, mut f) = (0.0, 1.0, 0.0, self.freq);
        for o in 0..Self::OCTAVES {
            sum += amp * self.octave(x * f, y * f, o);
            norm += amp;
            amp *= 0.5;
            f *= 2.0;
        }
        (sum / norm).clamp(-1.0, 1.0)
    }
}

/// Bucket grid over the sites for exact nearest-site queries.
struct SiteGrid<'a> {
    sites: &'a [[f32; 2]],
    cell: f32,
    gw: i64,
    gh: i64,
    start: Vec<u32>,
    items: Vec<u32>,
}

impl<'a> SiteGrid<'a> {
    /// Node coordinates are shifted by ½ so the map `[-½, w-½) × [-½, h-½)` maps to buckets.
    fn new(sites: &'a [[f32; 2]], width: usize, height: usize) -> Self {
        let area = width as f64 * height as f64;
        let cell = ((2.0 * area / sites.len().max(1) as f64).sqrt()).max(1.0) as f32;
        let gw = ((width as f32 / cell).ceil() as i64).max(1);
        let gh = ((height as f32 / cell).ceil() as i64).max(1);
        let bucket = |s: &[f32; 2]| -> usize {
            let bx = (((s[0] + 0.5) / cell).floor() as i64).clamp(0, gw - 1);
            let by = (((s[1] + 0.5) / cell).floor() as i64).clamp(0, gh - 1);
            (by * gw + bx) as usize
        };
        let nb = (gw * gh) as usize;
        let mut start = vec![0u32; nb + 1];
        for s in sites {
            start[bucket(s) + 1] += 1;
        }
        for i in 0..nb {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut items = vec![0u32; sites.len()];
        for (i, s) in sites.iter().enumerate() {
            let b = bucket(s);
            items[fill[b] as usize] = i as u32;
            fill[b] += 1;
        }
        SiteGrid { sites, cell, gw, gh, start, items }
    }

    #[inline]
    fn scan(&self, bx: i64, by: i64, px: f32, py: f32, best: &mut (f32, u32)) {
        if bx < 0 || by < 0 || bx >= self.gw || by >= self.gh {
            return;
        }
        let b = (by * self.gw + bx) as usize;
        for &i in &self.items[self.start[b] as usize..self.start[b + 1] as usize] {
            let s = self.sites[i as usize];
            let (dx, dy) = (s[0] - px, s[1] - py);
            let d = dx * dx + dy * dy;
            if d < best.0 || (d == best.0 && i < best.1) {
                *best = (d, i);
            }
        }
    }

    /// Index of the site nearest to `(px, py)` (ties: lowest index). Exact.
    fn nearest(&self, px: f32, py: f32) -> u32 {
        let ux = (px + 0.5) / self.cell;
        let uy = (py + 0.5) / self.cell;
        let cx = (ux.floor() as i64).clamp(0, self.gw - 1);
        let cy = (uy.floor() as i64).clamp(0, self.gh - 1);
        let mut best = (f32::INFINITY, u32::MAX);
        let rmax = self.gw.max(self.gh);
        for r in 0..=rmax {
            if r == 0 {
                self.scan(cx, cy, px, py, &mut best);
            } else {
                for bx in cx - r..=cx + r {
                    self.scan(bx, cy - r, px, py, &mut best);
                    self.scan(bx, cy + r, px, py, &mut best);
                }
                for by in cy - r + 1..=cy + r - 1 {
                    self.scan(cx - r, by, px, py, &mut best);
                    self.scan(cx + r, by, px, py, &mut best);
                }
            }
            // Every unscanned site lies outside the block of buckets cx±r, cy±r.
            let covers = cx - r <= 0 && cy - r <= 0 && cx + r >= self.gw - 1 && cy + r >= self.gh - 1;
            if covers {
                break;
            }
            let m = (ux - (cx - r) as f32)
                .min((cx + r + 1) as f32 - ux)
                .min(uy - (cy - r) as f32)
                .min((cy + r + 1) as f32 - uy)
                * self.cell;
            if m > 0.0 && m * m > best.0 {
                break;
            }
        }
        best.1
    }
}

/// Per-tile candidate lists on top of [`SiteGrid`]: for a square tile of nodes, every site that
/// can be the nearest one to *any* point of the tile. With `s_c` the site nearest to the tile's
/// centre and `D` its largest distance to the tile, a site nearer than `s_c` to some point of the
/// tile is within `D` of the tile, so `{ s : dist(tile, s) ≤ D }` is a complete list (computed
/// with a small safety margin). Queries scan only that list, a handful of sites.
struct Nearest<'a> {
    grid: SiteGrid<'a>,
    tile: f32,
    tw: i64,
    th: i64,
    start: Vec<u32>,
    items: Vec<u32>,
}

impl<'a> Nearest<'a> {
    fn new(sites: &'a [[f32; 2]], width: usize, height: usize) -> Self {
        let grid = SiteGrid::new(sites, width, height);
        let spacing = (width as f64 * height as f64 / sites.len().max(1) as f64).sqrt();
        let tile = (spacing / 4.0).clamp(4.0, 32.0).floor() as f32;
        let tw = ((width as f32 / tile).ceil() as i64).max(1);
        let th = ((height as f32 / tile).ceil() as i64).max(1);
        let lists: Vec<Vec<u32>> = (0..th)
            .into_par_iter()
            .map(|ty| {
                let mut row = Vec::new();
                let mut counts = Vec::with_capacity(tw as usize);
                for tx in 0..tw {
                    let before = row.len();
                    Self::candidates(&grid, tile, tx, ty, &mut row);
                    counts.push((row.len() - before) as u32);
                }
                // Prefix the row with its per-tile counts so it can be flattened in order.
                let mut out = counts;
                out.extend_from_slice(&row);
                out
            })
            .collect();
        let ntiles = (tw * th) as usize;
        let mut start = Vec::with_capacity(ntiles + 1);
        let mut items = Vec::new();
        start.push(0u32);
        for list in &lists {
            let (counts, rest) = list.split_at(tw as usize);
            let mut k = 0usize;
            for &c in counts {
                items.extend_from_slice(&rest[k..k + c as usize]);
                k += c as usize;
                start.push(items.len() as u32);
            }
        }
        Nearest { grid, tile, tw, th, start, items }
    }

    /// Appends the candidate sites of tile `(tx, ty)` to `out`.
    fn candidates(grid: &SiteGrid, tile: f32, tx: i64, ty: i64, out: &mut Vec<u32>) {
        let (x0, y0) = (tx as f32 * tile - 0.5, ty as f32 * tile - 0.5);
        let (x1, y1) = (x0 + tile, y0 + tile);
        let (cx, cy) = (x0 + 0.5 * tile, y0 + 0.5 * tile);
        let c = grid.sites[grid.nearest(cx, cy) as usize];
        let far = |a: f32, lo: f32, hi: f32| (a - lo).abs().max((a - hi).abs());
        let (fx, fy) = (far(c[0], x0, x1), far(c[1], y0, y1));
        let d = (fx * fx + fy * fy).sqrt() * (1.0 + 1e-4) + 1e-3;
        let bucket = |v: f32, n: i64| (((v + 0.5) / grid.cell).floor() as i64).clamp(0, n - 1);
        let (bx0, bx1) = (bucket(x0 - d, grid.gw), bucket(x1 + d, grid.gw));
        let (by0, by1) = (bucket(y0 - d, grid.gh), bucket(y1 + d, grid.gh));
        let near = |a: f32, lo: f32, hi: f32| {
            if a < lo {
                lo - a
            } else if a > hi {
                a - hi
            } else {
                0.0
            }
        };
        for by in by0..=by1 {
            for bx in bx0..=bx1 {
                let b = (by * grid.gw + bx) as usize;
                for &i in &grid.items[grid.start[b] as usize..grid.start[b + 1] as usize] {
                    let s = grid.sites[i as usize];
                    let (nx, ny) = (near(s[0], x0, x1), near(s[1], y0, y1));
                    if nx * nx + ny * ny <= d * d {
                        out.push(i);
                    }
                }
            }
        }
    }

    /// Index of the site nearest to `(px, py)` (ties: lowest index). Exact.
    #[inline]
    fn nearest(&self, px: f32, py: f32) -> u32 {
        // Truncation is the floor for the non-negative values that pass the check.
        let fx = (px + 0.5) / self.tile;
        let fy = (py + 0.5) / self.tile;
        if !(fx >= 0.0 && fy >= 0.0 && (fx as i64) < self.tw && (fy as i64) < self.th) {
            return self.grid.nearest(px, py);
        }
        let t = (fy as i64 * self.tw + fx as i64) as usize;
        let mut best = (f32::INFINITY, u32::MAX);
        for &i in &self.items[self.start[t] as usize..self.start[t + 1] as usize] {
            let s = self.grid.sites[i as usize];
            let (dx, dy) = (s[0] - px, s[1] - py);
            let d = dx * dx + dy * dy;
            if d < best.0 || (d == best.0 && i < best.1) {
                best = (d, i);
            }
        }
        best.1
    }
}

/// Labels every node of a `width × height` grid with its nearest site (`near`), optionally at
/// noise-perturbed positions.
fn label_nodes(near: &Nearest, width: usize, height: usize, warp: Option<&BorderNoise>) -> Vec<u32> {
    let plan = warp.map(|b| b.nx.x_plan(width)).unwrap_or_default();
    let mut labels = vec![0u32; width * height];
    labels.par_chunks_mut(width).enumerate().for_each_init(
        || (vec![0.0f64; width], vec![0.0f64; width]),
        |(wx, wy), (y, row)| {
            if let Some(b) = warp {
                b.nx.fill_row(&plan, y as f64, wx);
                b.ny.fill_row(&plan, y as f64, wy);
                for (x, l) in row.iter_mut().enumerate() {
                    *l = near.nearest(x as f32 + b.amp * wx[x] as f32, y as f32 + b.amp * wy[x] as f32);
                }
            } else {
                for (x, l) in row.iter_mut().enumerate() {
                    *l = near.nearest(x as f32, y as f32);
                }
            }
        },
    );
    labels
}

/// The border noise: amplitude (nodes) and the two displacement fields.
struct BorderNoise {
    amp: f32,
    nx: ValueNoise,
    ny: ValueNoise,
}

impl BorderNoise {
    /// The displaced position of node-space point `(x, y)`.
    fn displace(&self, x: f64, y: f64) -> (f32, f32) {
        (x as f32 + self.amp * self.nx.at(x, y) as f32, y as f32 + self.amp * self.ny.at(x, y) as f32)
    }
}

/// Samples of the relaxation lattice along the map's longer side: about 16 per site spacing.
fn lloyd_side(points: usize) -> usize {
    ((16.0 * (points as f64).sqrt()).ceil() as usize).clamp(256, 4096)
}

/// Samples along the map's longer border that decide which polygons touch the border.
const BORDER_SAMPLES: usize = 16_385;

/// Lloyd relaxation on a `lw × lh` lattice (node units of the lattice): each site moves to the
/// trapezoid-weighted centroid of its lattice nodes; an empty cell keeps its site.
fn relax(sites: &mut [[f32; 2]], lw: usize, lh: usize, iterations: u32) {
    for _ in 0..iterations {
        let labels = label_nodes(&Nearest::new(sites, lw, lh), lw, lh, None);
        let mut sum = vec![(0u64, 0u64, 0u64); sites.len()];
        for (i, &l) in labels.iter().enumerate() {
            let (x, y) = (i % lw, i / lw);
            let wgt = axis_weight(x, lw) * axis_weight(y, lh);
            let e = &mut sum[l as usize];
            e.0 += x as u64 * wgt;
            e.1 += y as u64 * wgt;
            e.2 += wgt;
        }
        for (s, &(sx, sy, c)) in sites.iter_mut().zip(&sum) {
            if c > 0 {
                *s = [(sx as f64 / c as f64) as f32, (sy as f64 / c as f64) as f32];
            }
        }
    }
}

/// The trapezoid weight of node `i` of `n` along one axis, times 2: 1 at an end, 2 inside (a
/// one-node axis has weight 2).
#[inline]
fn axis_weight(i: usize, n: usize) -> u64 {
    if n > 1 && (i == 0 || i == n - 1) { 1 } else { 2 }
}

/// Noise frequency in cycles per node: `noise_frequency` across the longer extent.
fn noise_cycles_per_node(p: &VoronoiIslandParams, width: usize, height: usize) -> f64 {
    p.noise_frequency as f64 / (width.max(height) - 1).max(1) as f64
}

/// Builds the (relaxed, noise-bordered) Voronoi polygons of a `width × height` map with nodes
/// `cell_size` metres apart and picks the water polygons.
///
/// Everything that decides the polygons is defined on the world's extent, not on the map's
/// nodes, so it is the same at any resolution: the sites are drawn as fractions of the extent,
/// relaxed on a lattice of `clamp(⌈16·√points⌉, 256, 4096)` samples along the longer side
/// (whatever the map's node count), and the polygons that touch the border are found by 16 385
/// samples along the longer border (and every border node of the map, so the border is always
/// water). See the module doc.
pub fn cells(
    width: usize,
    height: usize,
    cell_size: f32,
    p: &VoronoiIslandParams,
    seed: u64,
) -> Result<VoronoiCells, GenError> {
    check_size(width, height)?;
    check_cell(cell_size)?;
    p.validate()?;
    let n = p.points as usize;
    // The longer side, in node steps, and each side as a fraction of it (exact ratios, so the
    // same at any resolution of the same extent).
    let m = (width.max(height) - 1).max(1) as f64;
    let (rx, ry) = ((width - 1) as f64 / m, (height - 1) as f64 / m);
    let side = lloyd_side(n);
    let span = (side - 1) as f64;
    let (lw, lh) = ((rx * span).round() as usize + 1, (ry * span).round() as usize + 1);
    let mut rng = SplitMix64::stream(seed, SALT_SITES);
    let mut sites: Vec<[f32; 2]> = (0..n)
        .map(|_| {
            let (u, v) = (rng.next_f32() as f64, rng.next_f32() as f64);
            [(u * rx * span) as f32, (v * ry * span) as f32]
        })
        .collect();
    relax(&mut sites, lw, lh, p.lloyd_iterations);
    // Lattice units to the map's node units.
    let to_nodes = m / span;
    for s in &mut sites {
        *s = [(s[0] as f64 * to_nodes) as f32, (s[1] as f64 * to_nodes) as f32];
    }
    let freq = noise_cycles_per_node(p, width, height);
    // At most 10⁹ nodes (far beyond any map) keeps the displaced positions finite.
    let amp = Sampling::new(cell_size).nodes(p.border_noise_m as f64).min(1e9) as f32;
    let warp = (amp > 0.0).then_some(BorderNoise {
        amp,
        nx: ValueNoise { seed: seed ^ SALT_NOISE_X, freq },
        ny: ValueNoise { seed: seed ^ SALT_NOISE_Y, freq },
    });
    let near = Nearest::new(&sites, width, height);
    let labels = label_nodes(&near, width, height, warp.as_ref());

    // Water polygons: a random subset, then (optionally) everything on the border.
    let mut water = vec![false; n];
    let k = ((p.water_fraction as f64 * n as f64).round() as usize).min(n);
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut wrng = SplitMix64::stream(seed, SALT_WATER);
    for i in 0..k {
        let j = i + wrng.below((n - i) as u64) as usize;
        order.swap(i, j);
        water[order[i] as usize] = true;
    }
    if p.border_is_water {
        let label_at = |x: f64, y: f64| match &warp {
            Some(b) => {
                let (px, py) = b.displace(x, y);
                near.nearest(px, py)
            }
            None => near.nearest(x as f32, y as f32),
        };
        let (ex, ey) = ((width - 1) as f64, (height - 1) as f64);
        for along_x in [true, false] {
            let (len, rel) = if along_x { (ex, rx) } else { (ey, ry) };
            let count = (rel * (BORDER_SAMPLES - 1) as f64).round() as usize + 1;
            for i in 0..count {
                let t = if count > 1 { i as f64 / (count - 1) as f64 * len } else { 0.0 };
                let ends = if along_x { [(t, 0.0), (t, ey)] } else { [(0.0, t), (ex, t)] };
                for (x, y) in ends {
                    water[label_at(x, y) as usize] = true;
                }
            }
        }
        for x in 0..width {
            water[labels[x] as usize] = true;
            water[labels[(height - 1) * width + x] as usize] = true;
        }
        for y in 0..height {
            water[labels[y * width] as usize] = true;
            water[labels[y * width + width - 1] as usize] = true;
        }
    }
    Ok(VoronoiCells { width, height, sites, labels, water })
}

/// Squared Euclidean distance transform along one line (Felzenszwalb–Huttenlocher). `f` holds
/// 0 at sources and `+∞` elsewhere (or the previous pass's squared distances); `out` receives
/// `min_v (q − v)² + f(v)`, `+∞` when no `f(v)` is finite. `v`/`z` are scratch buffers.
fn edt_1d(f: &[f64], out: &mut [f64], v: &mut Vec<usize>, z: &mut Vec<f64>) {
    v.clear();
    z.clear();
    for (q, &fq) in f.iter().enumerate() {
        if !fq.is_finite() {
            continue;
        }
        if v.is_empty() {
            v.push(q);
            z.push(f64::NEG_INFINITY);
            z.push(f64::INFINITY);
            continue;
        }
        let qf = q as f64;
        loop {
            let p = *v.last().unwrap();
            let pf = p as f64;
            let s = ((fq + qf * qf) - (f[p] + pf * pf)) / (2.0 * qf - 2.0 * pf);
            let k = v.len() - 1;
            if s <= z[k] {
                // Parabola p is hidden; z[0] = −∞ guarantees the first one never is.
                v.pop();
                z.pop();
                continue;
            }
            z[k + 1] = s;
            v.push(q);
            z.push(f64::INFINITY);
            break;
        }
    }
    if v.is_empty() {
        out.iter_mut().for_each(|o| *o = f64::INFINITY);
        return;
    }
    let mut k = 0;
    for (q, o) in out.iter_mut().enumerate() {
        let qf = q as f64;
        while z[k + 1] < qf {
            k += 1;
        }
        let d = qf - v[k] as f64;
        *o = d * d + f[v[k]];
    }
}

/// Distance along a row from every node to the nearest node whose mask equals `target`
/// (`u32::MAX` when the row has none): two linear sweeps.
fn row_distance(mask: &[bool], target: bool, out: &mut [u32]) {
    let mut last: Option<usize> = None;
    for (x, o) in out.iter_mut().enumerate() {
        if mask[x] == target {
            last = Some(x);
        }
        *o = last.map_or(u32::MAX, |l| (x - l) as u32);
    }
    last = None;
    for x in (0..out.len()).rev() {
        if mask[x] == target {
            last = Some(x);
        }
        if let Some(l) = last {
            out[x] = out[x].min((l - x) as u32);
        }
    }
}

/// Columns per task of the column pass.
const COL_BLOCK: usize = 16;

/// Exact Euclidean distance (nodes) from every node to the nearest node of the *other* class:
/// land nodes get their distance to water, water nodes their distance to land; `+∞` when the
/// other class is absent. Row pass: 1-D distances by two sweeps; column pass: the lower envelope
/// of parabolas ([`edt_1d`]) over the squared row distances, per class.
fn opposite_distance(water: &[bool], width: usize, height: usize) -> Vec<f32> {
    let n = width * height;
    let mut gw = vec![0u32; n];
    let mut gl = vec![0u32; n];
    gw.par_chunks_mut(width).zip(gl.par_chunks_mut(width)).enumerate().for_each(|(y, (rw, rl))| {
        let m = &water[y * width..(y + 1) * width];
        row_distance(m, true, rw);
        row_distance(m, false, rl);
    });
    let sq = |g: u32| if g == u32::MAX { f64::INFINITY } else { g as f64 * g as f64 };
    let blocks: Vec<Vec<f32>> = (0..width.div_ceil(COL_BLOCK))
        .into_par_iter()
        .map_init(
            || {
                (
                    vec![0.0f64; COL_BLOCK * height],
                    vec![0.0f64; COL_BLOCK * height],
                    vec![0.0f64; height],
                    Vec::new(),
                    Vec::new(),
                )
            },
            |(fw, fl, out, v, z), bi| {
                let x0 = bi * COL_BLOCK;
                let bw = COL_BLOCK.min(width - x0);
                // Gather the block's columns (contiguous reads of bw values per row).
                for y in 0..height {
                    let r = y * width + x0;
                    for c in 0..bw {
                        fw[c * height + y] = sq(gw[r + c]);
                        fl[c * height + y] = sq(gl[r + c]);
                    }
                }
                let mut res = vec![0.0f32; bw * height];
                for c in 0..bw {
                    let col = c * height..(c + 1) * height;
                    edt_1d(&fw[col.clone()], out, v, z);
                    for y in 0..height {
                        if !water[y * width + x0 + c] {
                            res[y * bw + c] = out[y].sqrt() as f32;
                        }
                    }
                    edt_1d(&fl[col], out, v, z);
                    for y in 0..height {
                        if water[y * width + x0 + c] {
                            res[y * bw + c] = out[y].sqrt() as f32;
                        }
                    }
                }
                res
            },
        )
        .collect();
    // Each block is a row-major `bw × height` tile: copy its rows into place.
    let mut d = vec![0.0f32; n];
    d.par_chunks_mut(width).enumerate().for_each(|(y, row)| {
        for (bi, block) in blocks.iter().enumerate() {
            let x0 = bi * COL_BLOCK;
            let bw = COL_BLOCK.min(width - x0);
            row[x0..x0 + bw].copy_from_slice(&block[y * bw..(y + 1) * bw]);
        }
    });
    d
}

/// A Voronoi island of `width × height` nodes (see the module docs).
pub fn generate(
    width: usize,
    height: usize,
    cell_size: f32,
    p: &VoronoiIslandParams,
    seed: u64,
) -> Result<Heightmap, GenError> {
    check_size(width, height)?;
    let mut hm = Heightmap::new(width, height, cell_size)?;
    let c = cells(width, height, cell_size, p, seed)?;
    let is_water: Vec<bool> = c.labels.iter().map(|&l| c.water[l as usize]).collect();
    let dist = opposite_distance(&is_water, width, height);
    let max_over = |class: bool| {
        dist.par_iter()
            .zip(is_water.par_iter())
            .filter(|(d, w)| **w == class && d.is_finite())
            .map(|(d, _)| *d)
            .reduce(|| 0.0f32, f32::max)
    };
    let max_land = max_over(false) as f64;
    let max_water = max_over(true) as f64;
    let freq = noise_cycles_per_node(p, width, height);
    let noise = ValueNoise { seed: seed ^ SALT_NOISE_H, freq };
    let (hs, e, depth, a) =
        (p.height_scale as f64, p.height_exponent as f64, p.sea_depth as f64, p.height_noise as f64);
    let plan = if a > 0.0 { noise.x_plan(width) } else { Vec::new() };
    let shape = |t: f64| if e == 1.0 { t } else { t.powf(e) };
    hm.data.par_chunks_mut(width).enumerate().for_each_init(
        || vec![0.0f64; width],
        |nrow, (y, row)| {
            if a > 0.0 {
                noise.fill_row(&plan, y as f64, nrow);
            }
            for (x, h) in row.iter_mut().enumerate() {
                let i = y * width + x;
                let n = if a > 0.0 { 1.0 + a * nrow[x] } else { 1.0 };
                let d = dist[i] as f64;
                let v = if is_water[i] {
                    let t = if max_water > 0.0 && d.is_finite() { (d - 0.5) / (max_water - 0.5) } else { 1.0 };
                    -hs * depth * t * n
                } else {
                    let t = if max_land > 0.0 && d.is_finite() { (d - 0.5) / (max_land - 0.5) } else { 1.0 };
                    hs * shape(t) * n
                };
                *h = v as f32;
            }
        },
    );
    Ok(hm)
}

#[cfg(test)]
mod tests;
