//! The heightmap: a regular grid of heights, the one data structure every part of Talus shares.
//!
//! Layout: `data[y * width + x]`, row-major, `x` in `0..width` (east), `y` in `0..height`
//! (south, the second horizontal axis). Heights are in metres; `cell_size` is the horizontal
//! distance between neighbouring nodes in metres. All sampling functions take *grid*
//! coordinates (node units), so `(x, y) = (2.5, 1.0)` lies halfway between nodes 2 and 3 of row 1.
//!
//! Bilinear sampling follows seed 000 (Beyer 2015). With `(u, v)` the fractional offsets inside the
//! cell whose top-left node is `h00 = h(x0, y0)`, `h10 = h(x0+1, y0)`, `h01 = h(x0, y0+1)`,
//! `h11 = h(x0+1, y0+1)`:
//!
//! ```text
//! h(u, v) = h00 (1-u)(1-v) + h10 u (1-v) + h01 (1-u) v + h11 u v
//! g       = ( (h10 - h00)(1 - v) + (h11 - h01) v ,  (h01 - h00)(1 - u) + (h11 - h10) u )
//! ```
//!
//! `g` is the exact derivative of `h(u, v)` in metres per node; divide by `cell_size` for a slope.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest side accepted (nodes). 65 536 covers every tool we exchange files with.
pub const MAX_SIDE: usize = 65_536;
/// Largest node count accepted: a 16385² build (the largest size `talus build` makes), about
/// 1 GiB of `f32`. Anything larger is refused up front.
pub const MAX_NODES: usize = 16_385 * 16_385;

/// Why a heightmap could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum HeightmapError {
    /// A side is 0 nodes.
    #[error("heightmap size {width}×{height} is empty: both sides must be at least 1")]
    Empty {
        /// Requested nodes along x.
        width: usize,
        /// Requested nodes along y.
        height: usize,
    },
    /// A side exceeds [`MAX_SIDE`], or the node count exceeds [`MAX_NODES`] (or overflows `usize`).
    #[error("heightmap size {width}×{height} is too large (max side {MAX_SIDE}, max {MAX_NODES} nodes)")]
    TooLarge {
        /// Requested nodes along x.
        width: usize,
        /// Requested nodes along y.
        height: usize,
    },
    /// The cell size (metres, carried in the variant) is zero, negative, NaN, infinite, or a
    /// million metres or more ([`check_cell`]).
    #[error("cell size {0} m is not a distance between nodes: give metres above 0 and below 10⁶")]
    BadCellSize(f32),
    /// The data vector's length is not `width * height`.
    #[error("data holds {got} heights but {width}×{height} needs {expected}")]
    DataLength {
        /// Nodes along x.
        width: usize,
        /// Nodes along y.
        height: usize,
        /// Heights the size needs: `width * height`.
        expected: usize,
        /// Heights the data actually holds.
        got: usize,
    },
    /// A crop rectangle is empty or reaches outside the map.
    #[error("crop {x0},{y0} {w}×{h} does not fit in the {width}×{height} map")]
    BadCrop {
        /// Column of the crop's top-left node.
        x0: usize,
        /// Row of the crop's top-left node.
        y0: usize,
        /// Crop width, nodes.
        w: usize,
        /// Crop height, nodes.
        h: usize,
        /// Nodes along x of the map being cropped.
        width: usize,
        /// Nodes along y of the map being cropped.
        height: usize,
    },
}

/// Checks a size against the limits without allocating anything.
pub fn check_size(width: usize, height: usize) -> Result<(), HeightmapError> {
    if width == 0 || height == 0 {
        return Err(HeightmapError::Empty { width, height });
    }
    if width > MAX_SIDE || height > MAX_SIDE || width.checked_mul(height).is_none_or(|n| n > MAX_NODES) {
        return Err(HeightmapError::TooLarge { width, height });
    }
    Ok(())
}

/// A grid of heights (metres), row-major, with the spacing of its nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heightmap {
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Distance between neighbouring nodes, metres (> 0).
    pub cell_size: f32,
    /// `width * height` heights, `data[y * width + x]`.
    pub data: Vec<f32>,
}

/// Summary statistics of a heightmap.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Lowest height, metres.
    pub min: f32,
    /// Highest height, metres.
    pub max: f32,
    /// Mean height over all `width * height` nodes, metres (summed in `f64`).
    pub mean: f64,
}

/// The heights as a slice, row-major (`data[y * width + x]`).
impl AsRef<[f32]> for Heightmap {
    fn as_ref(&self) -> &[f32] {
        &self.data
    }
}

impl Heightmap {
    /// A flat map of zeros. Refuses empty or absurd sizes and non-positive cell sizes.
    pub fn new(width: usize, height: usize, cell_size: f32) -> Result<Self, HeightmapError> {
        Self::filled(width, height, cell_size, 0.0)
    }

    /// A map with every node at `value`.
    pub fn filled(width: usize, height: usize, cell_size: f32, value: f32) -> Result<Self, HeightmapError> {
        check_size(width, height)?;
        check_cell(cell_size)?;
        Ok(Self { width, height, cell_size, data: vec![value; width * height] })
    }

    /// Wraps existing row-major data, checking its length.
    pub fn from_data(width: usize, height: usize, cell_size: f32, data: Vec<f32>) -> Result<Self, HeightmapError> {
        check_size(width, height)?;
        check_cell(cell_size)?;
        if data.len() != width * height {
            return Err(HeightmapError::DataLength { width, height, expected: width * height, got: data.len() });
        }
        Ok(Self { width, height, cell_size, data })
    }

    /// Builds a map by evaluating `f(x, y)` at every node (rows in parallel; deterministic).
    pub fn from_fn(
        width: usize,
        height: usize,
        cell_size: f32,
        f: impl Fn(usize, usize) -> f32 + Sync,
    ) -> Result<Self, HeightmapError> {
        use rayon::prelude::*;
        let mut hm = Self::new(width, height, cell_size)?;
        hm.data.par_chunks_mut(width).enumerate().for_each(|(y, row)| {
            for (x, v) in row.iter_mut().enumerate() {
                *v = f(x, y);
            }
        });
        Ok(hm)
    }

    /// Number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Always false for a constructed map (kept for API symmetry with `len`).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Flat index of node `(x, y)`.
    #[inline]
    pub fn idx(&self, x: usize, y: usize) -> usize {
        y * self.width + x
    }

    /// Height of node `(x, y)`. Panics if out of range (internal use; see [`Self::get_clamped`]).
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> f32 {
        self.data[y * self.width + x]
    }

    /// Sets node `(x, y)`.
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, h: f32) {
        let w = self.width;
        self.data[y * w + x] = h;
    }

    /// Height of the node nearest to `(x, y)` after clamping to the map.
    #[inline]
    pub fn get_clamped(&self, x: i64, y: i64) -> f32 {
        let xi = x.clamp(0, self.width as i64 - 1) as usize;
        let yi = y.clamp(0, self.height as i64 - 1) as usize;
        self.data[yi * self.width + xi]
    }

    /// Corner nodes and fractional offsets of the cell containing `(x, y)` (clamped to the map).
    #[inline]
    fn cell(&self, x: f32, y: f32) -> ([f32; 4], f32, f32) {
        let maxx = (self.width - 1) as f32;
        let maxy = (self.height - 1) as f32;
        let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, maxx) };
        let y = if y.is_nan() { 0.0 } else { y.clamp(0.0, maxy) };
        let x0 = (x as usize).min(self.width.saturating_sub(2));
        let y0 = (y as usize).min(self.height.saturating_sub(2));
        let x1 = (x0 + 1).min(self.width - 1);
        let y1 = (y0 + 1).min(self.height - 1);
        let u = x - x0 as f32;
        let v = y - y0 as f32;
        let w = self.width;
        let d = &self.data;
        ([d[y0 * w + x0], d[y0 * w + x1], d[y1 * w + x0], d[y1 * w + x1]], u, v)
    }

    /// Bilinear height at grid position `(x, y)`; positions outside the map are clamped to its edge.
    #[inline]
    pub fn sample(&self, x: f32, y: f32) -> f32 {
        let ([h00, h10, h01, h11], u, v) = self.cell(x, y);
        h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v
    }

    /// Bilinear height and gradient (metres per node) at `(x, y)`, seed 000's formula.
    #[inline]
    pub fn height_and_gradient(&self, x: f32, y: f32) -> (f32, [f32; 2]) {
        let ([h00, h10, h01, h11], u, v) = self.cell(x, y);
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let h = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        (h, [gx, gy])
    }

    /// Bilinear gradient (metres per node) at `(x, y)`.
    #[inline]
    pub fn gradient(&self, x: f32, y: f32) -> [f32; 2] {
        self.height_and_gradient(x, y).1
    }

    /// Unit surface normal at node `(x, y)` in a y-up frame `(nx, ny_up, nz)`, where the
    /// horizontal axes are our x and y scaled by `cell_size`. Central differences inside,
    /// one-sided at the border.
    pub fn normal(&self, x: usize, y: usize) -> [f32; 3] {
        let xl = x.saturating_sub(1);
        let xr = (x + 1).min(self.width - 1);
        let yt = y.saturating_sub(1);
        let yb = (y + 1).min(self.height - 1);
        let dx = ((xr - xl).max(1)) as f32 * self.cell_size;
        let dy = ((yb - yt).max(1)) as f32 * self.cell_size;
        let sx = (self.get(xr, y) - self.get(xl, y)) / dx;
        let sy = (self.get(x, yb) - self.get(x, yt)) / dy;
        let n = [-sx, 1.0, -sy];
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        [n[0] / l, n[1] / l, n[2] / l]
    }

    /// Minimum, maximum and mean height (mean accumulated in f64).
    pub fn stats(&self) -> Stats {
        let mut min = f32::INFINITY;
        let mut max = f32::NEG_INFINITY;
        let mut sum = 0.0f64;
        for &h in &self.data {
            min = min.min(h);
            max = max.max(h);
            sum += h as f64;
        }
        Stats { min, max, mean: sum / self.data.len() as f64 }
    }

    /// Lowest and highest height, the bits of [`Heightmap::stats`]'s, on every core (issue #36).
    /// `f32::min` and `f32::max` skip NaN and pick one of two equal values, so in any order they
    /// give the one extreme value, and a non-zero float has one bit pattern; only `−0` and `+0`
    /// are equal with two, so a zero extreme is taken again in the serial order.
    pub fn min_max(&self) -> (f32, f32) {
        use rayon::prelude::*;
        let pair = |a: (f32, f32), b: (f32, f32)| (a.0.min(b.0), a.1.max(b.1));
        let none = || (f32::INFINITY, f32::NEG_INFINITY);
        let (min, max) = self.data.par_iter().fold(none, |a, &h| pair(a, (h, h))).reduce(none, pair);
        if min == 0.0 || max == 0.0 {
            let s = self.stats();
            return (s.min, s.max);
        }
        (min, max)
    }

    /// Sum of all heights in f64 (the "volume" in metre·nodes used by erosion ledgers).
    pub fn sum(&self) -> f64 {
        self.data.iter().map(|&h| h as f64).sum()
    }

    /// Bilinear resampling to `new_width × new_height`; corners map to corners. The cell size is
    /// scaled so the physical extent stays the same.
    pub fn resample(&self, new_width: usize, new_height: usize) -> Result<Self, HeightmapError> {
        check_size(new_width, new_height)?;
        let sx = if new_width > 1 { (self.width - 1) as f32 / (new_width - 1) as f32 } else { 0.0 };
        let sy = if new_height > 1 { (self.height - 1) as f32 / (new_height - 1) as f32 } else { 0.0 };
        let extent = (self.width.max(2) - 1) as f32 * self.cell_size;
        let cell = if new_width > 1 { extent / (new_width - 1) as f32 } else { self.cell_size };
        let cell = if cell.is_finite() && cell > 0.0 { cell } else { self.cell_size };
        Self::from_fn(new_width, new_height, cell, |x, y| self.sample(x as f32 * sx, y as f32 * sy))
    }

    /// The `w × h` window whose top-left node is `(x0, y0)`.
    pub fn crop(&self, x0: usize, y0: usize, w: usize, h: usize) -> Result<Self, HeightmapError> {
        let bad = HeightmapError::BadCrop { x0, y0, w, h, width: self.width, height: self.height };
        if w == 0
            || h == 0
            || x0.checked_add(w).is_none_or(|e| e > self.width)
            || y0.checked_add(h).is_none_or(|e| e > self.height)
        {
            return Err(bad);
        }
        let mut data = Vec::with_capacity(w * h);
        for y in y0..y0 + h {
            data.extend_from_slice(&self.data[y * self.width + x0..y * self.width + x0 + w]);
        }
        Self::from_data(w, h, self.cell_size, data)
    }

    /// Linearly maps the current `[min, max]` onto `[lo, hi]`. A flat map becomes `lo`.
    pub fn normalize(&mut self, lo: f32, hi: f32) {
        let (min, max) = self.min_max();
        self.normalize_from(min, max, lo, hi);
    }

    /// Linearly maps `[min, max]` (a range given, e.g. another grid's of the same world) onto
    /// `[lo, hi]`; heights outside `[min, max]` land outside `[lo, hi]`. An empty or non-finite
    /// range makes every height `lo`, as [`Self::normalize`] does to a flat map.
    pub fn normalize_from(&mut self, min: f32, max: f32, lo: f32, hi: f32) {
        use rayon::prelude::*;
        let span = max - min;
        if !span.is_finite() || span <= 0.0 {
            self.data.par_iter_mut().for_each(|h| *h = lo);
            return;
        }
        let k = (hi - lo) / span;
        self.data.par_iter_mut().for_each(|h| *h = lo + (*h - min) * k);
    }

    /// True when every height is finite.
    pub fn all_finite(&self) -> bool {
        self.data.iter().all(|h| h.is_finite())
    }
}

/// Checks a cell size: finite, `0 < cell_size < 10⁶` metres.
pub fn check_cell(cell_size: f32) -> Result<(), HeightmapError> {
    if cell_size.is_finite() && cell_size > 0.0 && cell_size < 1.0e6 {
        Ok(())
    } else {
        Err(HeightmapError::BadCellSize(cell_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp() -> Heightmap {
        // h = 2x + 3y
        Heightmap::from_fn(5, 4, 1.0, |x, y| 2.0 * x as f32 + 3.0 * y as f32).unwrap()
    }

    #[test]
    fn refuses_bad_sizes() {
        assert!(matches!(Heightmap::new(0, 5, 1.0), Err(HeightmapError::Empty { .. })));
        assert!(matches!(Heightmap::new(MAX_SIDE + 1, 1, 1.0), Err(HeightmapError::TooLarge { .. })));
        assert!(matches!(Heightmap::new(60_000, 60_000, 1.0), Err(HeightmapError::TooLarge { .. })));
        // The largest build fits; one more row does not.
        assert!(check_size(16_385, 16_385).is_ok());
        assert!(matches!(check_size(16_385, 16_386), Err(HeightmapError::TooLarge { .. })));
        assert!(matches!(Heightmap::new(4, 4, 0.0), Err(HeightmapError::BadCellSize(_))));
        assert!(matches!(Heightmap::new(4, 4, f32::NAN), Err(HeightmapError::BadCellSize(_))));
        assert!(matches!(Heightmap::from_data(2, 2, 1.0, vec![0.0; 3]), Err(HeightmapError::DataLength { .. })));
    }

    #[test]
    fn bilinear_reproduces_a_plane_and_its_gradient() {
        let hm = ramp();
        for &(x, y) in &[(0.0, 0.0), (1.25, 2.5), (3.99, 2.01), (4.0, 3.0)] {
            let (h, g) = hm.height_and_gradient(x, y);
            assert!((h - (2.0 * x + 3.0 * y)).abs() < 1e-4, "h at {x},{y}");
            assert!((g[0] - 2.0).abs() < 1e-5 && (g[1] - 3.0).abs() < 1e-5);
        }
    }

    #[test]
    fn gradient_matches_seed_000_formula_on_a_saddle() {
        let hm = Heightmap::from_data(2, 2, 1.0, vec![0.0, 1.0, 2.0, 7.0]).unwrap();
        let (u, v) = (0.3f32, 0.6f32);
        let (h00, h10, h01, h11) = (0.0f32, 1.0, 2.0, 7.0);
        let g = hm.gradient(u, v);
        assert!((g[0] - ((h10 - h00) * (1.0 - v) + (h11 - h01) * v)).abs() < 1e-6);
        assert!((g[1] - ((h01 - h00) * (1.0 - u) + (h11 - h10) * u)).abs() < 1e-6);
        // The gradient is the derivative of the bilinear height.
        let e = 1e-3;
        let num = (hm.sample(u + e, v) - hm.sample(u - e, v)) / (2.0 * e);
        assert!((num - g[0]).abs() < 1e-2);
    }

    #[test]
    fn sampling_outside_is_clamped_not_a_panic() {
        let hm = ramp();
        assert_eq!(hm.sample(-5.0, -5.0), 0.0);
        assert_eq!(hm.sample(100.0, 100.0), hm.get(4, 3));
        assert!(hm.sample(f32::NAN, 1.0).is_finite());
        let one = Heightmap::filled(1, 1, 1.0, 4.0).unwrap();
        assert_eq!(one.sample(0.3, 0.7), 4.0);
    }

    #[test]
    fn normal_of_a_plane_is_exact() {
        let hm = Heightmap::from_fn(5, 5, 2.0, |x, _| x as f32).unwrap();
        let n = hm.normal(2, 2);
        // slope 1 m per node over 2 m → 0.5
        let l = (0.25f32 + 1.0).sqrt();
        assert!((n[0] + 0.5 / l).abs() < 1e-6 && (n[1] - 1.0 / l).abs() < 1e-6 && n[2].abs() < 1e-6);
    }

    #[test]
    fn min_max_is_the_serial_stats_bits_on_any_pool() {
        let mut cases: Vec<Vec<f32>> = vec![
            (0..100_000).map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 0.37).collect(),
            vec![0.0, -0.0, 1.0, -0.0, 0.0],
            vec![-0.0, 0.0, -1.0],
            vec![f32::NAN, 2.0, f32::NAN, -3.0],
            vec![f32::NAN; 4],
        ];
        cases.push((0..70_000).map(|i| if i % 3 == 0 { -0.0 } else { (i % 5) as f32 }).collect());
        for data in cases {
            let hm = Heightmap { width: data.len(), height: 1, cell_size: 1.0, data };
            let s = hm.stats();
            for threads in [1, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (lo, hi) = pool.install(|| hm.min_max());
                assert_eq!((lo.to_bits(), hi.to_bits()), (s.min.to_bits(), s.max.to_bits()), "{:?}", &hm.data[..3]);
            }
        }
    }

    #[test]
    fn stats_crop_resample_normalize() {
        let hm = ramp();
        let s = hm.stats();
        assert_eq!((s.min, s.max), (0.0, 17.0));
        let c = hm.crop(1, 1, 3, 2).unwrap();
        assert_eq!(c.data, vec![5.0, 7.0, 9.0, 8.0, 10.0, 12.0]);
        assert!(hm.crop(3, 0, 3, 1).is_err());
        assert!(hm.crop(usize::MAX, 0, 3, 1).is_err());
        let r = hm.resample(9, 7).unwrap();
        assert_eq!(r.get(8, 6), hm.get(4, 3));
        assert!((r.get(1, 1) - hm.sample(0.5, 0.5)).abs() < 1e-5);
        assert!((r.cell_size - 0.5).abs() < 1e-6);
        let mut n = hm.clone();
        n.normalize(-1.0, 1.0);
        let s = n.stats();
        assert_eq!((s.min, s.max), (-1.0, 1.0));
    }
}
