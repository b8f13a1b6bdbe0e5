//! Masks that steer an erosion run (issue #16 item 3): [`Steer`], given as
//! [`JobInputs::steer`](super::JobInputs::steer), says where the water comes from and, with
//! `sink`, where it ends; the helpers at the end build masks from the terrain.
//!
//! ## The weights
//! `weights[i] ∈ [0, 1]` (dimensionless, one per node, row-major like the heights). A job checks
//! them when it is built: a wrong length, a value outside `[0, 1]` or a non-finite value is a
//! [`JobError`], never a panic.
//!
//! 1. **Where rain falls / particles spawn.**
//!    * *Droplet, snowball*: spawn positions are drawn uniformly in the bounding box of the nodes
//!      with `w > 0` (positions within half a cell of those nodes, computed once when the job is
//!      built, so a small brush dab does not waste almost every draw); a particle spawned at `p`
//!      then lives with probability `w(nearest node of p)`: it draws `ξ ∈ [0, 1)` from its own
//!      side stream (`SplitMix64::stream(seed ^ salt, index)`, beside its main stream
//!      `SplitMix64::stream(seed, index)`, which it leaves untouched) and lives iff `ξ < w`. The
//!      same seed gives the same bits at any thread count, and a mask of ones on a map without
//!      wrapped edges spawns exactly the particles of an unsteered run. A dead particle does
//!      nothing (its draw is all it costs).
//!    * *Pipe*: the water input of every node (uniform `rain` or `rain_map`, plus the sources) is
//!      multiplied by `w`: `r'_i = w_i·r_i`.
//!    * *Stream power*: the runoff each node adds to the drainage area is `w_i` instead of 1
//!      (`A_i = w_i + Σ_donors A_d`, with D8 and with MFD), so area accumulates only from steered
//!      nodes and a node with `A = 0` is not incised.
//!    * *Thermal* (no rain): `w` multiplies the node's erodibility (as a hardness map does): a
//!      node gives up at most `w_i` times what it would give unsteered. Both with and without
//!      `sink`.
//! 2. **Sinks** (`sink = true`): the mask is also an erodibility multiplier, `k'_i = k_i·w_i`
//!    (`k` the hardness map, 1 without one), so nodes with `w = 0` never erode, and flow that
//!    enters a node with `w = 0` ends there:
//!    * *Droplet, snowball*: a particle whose position's nearest node has `w = 0` stops and drops
//!      its load there, as at the end of its life (droplets run the scalar step in sink mode, not
//!      the lockstep lanes).
//!    * *Pipe*: after each water/erosion sweep the water standing on a sink node is removed and
//!      booked as the sea's intake ([`WaterBudget::sea`](super::pipe::WaterBudget::sea)), and its
//!      suspended sediment settles on the node (booked as deposition; the few ulps the f32 height
//!      cannot take are booked in `clamped`, so [`Ledger::closes`](super::Ledger::closes) holds).
//!    * *Stream power*: sink nodes are base level (outlets, like the sea nodes): never uplifted,
//!      incised or diffused; the sediment that reaches them leaves the books as `lost_at_border`.
//!    * *Thermal*: non-erodible only (`k·w` as above; material may still slide onto them).
//!
//!    With `sink = false`, `w` only steers where the water comes from (and thermal's erodibility).
//! 3. **No mask** (`steer = None`): every model runs exactly as before, to the bit.
//! 4. On the GPU: the droplets and thermal erosion take the mask exactly as above (the droplets
//!    draw the same spawn positions and lives); the pipe model has none yet, so a steered pipe run
//!    on the GPU backend runs on the CPU with a note.
//!
//! ## Generated masks
//! * [`height_mask`]: `w = S(lo, hi, h)` (`S` the smoothstep; `lo > hi` reverses the ramp,
//!   `lo = hi` is a step at `lo`). Heights in metres.
//! * [`slope_mask`]: the same ramp over the slope angle in degrees, the gradient from central
//!   differences (one-sided at the edges) over `cell_size`: `θ = atan(|∇h|)`.
//! * [`flow_mask`]: D8 drainage area `A` in m² (`Δx²` a node; each node counts itself; pits
//!   routed through the lakes of [`route_flow`](super::stream_power::routing::route_flow), drain edges),
//!   ramped over a factor of 2: `w = clamp(log₂(2A / A₁), 0, 1)` (0 below `A₁/2`, 1 from `A₁`, the
//!   threshold in m², so the same threshold marks the same valleys at any cell size).
//! * [`disc_mask`]: a brush dab, `w = F(d / radius)` with `F` the brush [`Falloff`] and `d` the
//!   distance (nodes) to `centre` (grid x, y), 0 outside the disc.

use super::{Boundary, JobError};
use crate::core::brush::Falloff;
use crate::core::heightmap::Heightmap;
use crate::core::rng::SplitMix64;

/// A mask that steers an erosion run (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Steer {
    /// One weight per node, in `[0, 1]` (dimensionless): where water comes from (module doc, 1).
    pub weights: Vec<f32>,
    /// Nodes with weight 0 are non-erodible sinks where flow ends (module doc, 2).
    pub sink: bool,
}

impl Steer {
    /// Water from every node with weight `weights[i]`; sinks where the weight is 0 when `sink`.
    pub fn new(weights: Vec<f32>, sink: bool) -> Self {
        Self { weights, sink }
    }

    /// Checks the mask against a map of `n` nodes: one weight per node, each finite in `[0, 1]`.
    pub fn check(&self, n: usize) -> Result<(), JobError> {
        if self.weights.len() != n {
            return Err(JobError::BadParam {
                name: "steer weights length",
                value: self.weights.len() as f64,
                range: "one value per node",
            });
        }
        if let Some(&bad) = self.weights.iter().find(|v| !(v.is_finite() && (0.0..=1.0).contains(*v))) {
            return Err(JobError::BadParam { name: "steer weight", value: bad as f64, range: "[0, 1]" });
        }
        Ok(())
    }

    /// The erodibility of a sink-mode run: `k·w` (`k` the hardness, 1 without one); `None` when
    /// the mask is no sink (the hardness stays as it is: returned cloned).
    pub(crate) fn erodibility(&self, hardness: Option<&[f32]>) -> Option<Vec<f32>> {
        if !self.sink {
            return hardness.map(<[f32]>::to_vec);
        }
        Some(match hardness {
            Some(k) => k.iter().zip(&self.weights).map(|(k, w)| k * w).collect(),
            None => self.weights.clone(),
        })
    }

    /// `k·w` for a model whose erodibility the mask always scales (thermal).
    pub(crate) fn scaled(&self, hardness: Option<&[f32]>) -> Vec<f32> {
        match hardness {
            Some(k) => k.iter().zip(&self.weights).map(|(k, w)| k * w).collect(),
            None => self.weights.clone(),
        }
    }

    /// 1 for the sink nodes (`w == 0`) of a sink mask; `None` otherwise.
    pub(crate) fn sink_mask(&self) -> Option<Vec<u8>> {
        self.sink.then(|| self.weights.iter().map(|&w| (w == 0.0) as u8).collect())
    }
}

/// Where the particles of a steered run spawn and whether they live (module doc, 1).
#[derive(Clone, Debug)]
pub(crate) struct Spawner {
    /// The mask's weights (unpadded, `w` per row).
    pub(crate) weights: Vec<f32>,
    w: usize,
    /// Position box: start and length per axis.
    x0: f32,
    sx: f32,
    y0: f32,
    sy: f32,
}

impl Spawner {
    /// The spawner of `steer` on a `w × h` map whose position domain is `[0, span_x] × [0, span_y]`.
    pub(crate) fn new(steer: &Steer, w: usize, h: usize, span_x: f32, span_y: f32) -> Self {
        let (mut bx0, mut bx1, mut by0, mut by1) = (usize::MAX, 0usize, usize::MAX, 0usize);
        for (i, &v) in steer.weights.iter().enumerate() {
            if v > 0.0 {
                let (x, y) = (i % w.max(1), i / w.max(1));
                bx0 = bx0.min(x);
                bx1 = bx1.max(x);
                by0 = by0.min(y);
                by1 = by1.max(y);
            }
        }
        let axis = |a: usize, b: usize, span: f32| {
            if a > b {
                // No node with w > 0: the whole domain (every particle dies anyway).
                return (0.0, span);
            }
            let lo = (a as f32 - 0.5).max(0.0);
            let hi = (b as f32 + 0.5).min(span);
            (lo, (hi - lo).max(0.0))
        };
        let (x0, sx) = axis(bx0, bx1, span_x);
        let (y0, sy) = axis(by0, by1, span_y);
        let _ = h;
        Self { weights: steer.weights.clone(), w, x0, sx, y0, sy }
    }

    /// The spawn box, `(x0, sx, y0, sy)`: positions are `(x0 + ξ·sx, y0 + ξ'·sy)` (for the GPU
    /// droplets, which draw the same numbers).
    #[cfg(feature = "gpu")]
    pub(crate) fn spawn_box(&self) -> (f32, f32, f32, f32) {
        (self.x0, self.sx, self.y0, self.sy)
    }

    /// A spawn position (before the edge rules), drawn from `rng` as the unsteered spawn does:
    /// x, then y.
    #[inline]
    pub(crate) fn place(&self, rng: &mut SplitMix64) -> (f32, f32) {
        let x = self.x0 + rng.next_f32() * self.sx;
        let y = self.y0 + rng.next_f32() * self.sy;
        (x, y)
    }

    /// Whether particle `id` of a run seeded `seed`, whose nearest node is `(x, y)`, lives: one
    /// draw `ξ ∈ [0, 1)` from the particle's own side stream, `ξ < w`. The side stream leaves the
    /// particle's main stream as it is, so a mask of ones runs the very same particles, to the
    /// bit, as no mask.
    #[inline]
    pub(crate) fn lives(&self, x: usize, y: usize, seed: u64, id: u64) -> bool {
        let wv = self.weights[y * self.w + x];
        SplitMix64::stream(seed ^ LIFE_SALT, id).next_f32() < wv
    }
}

/// Mixed into the seed of the side stream a particle's life is drawn from.
pub(crate) const LIFE_SALT: u64 = 0x57EE_12A5_C0DE_0016;

/// `S(lo, hi, v)`, the smoothstep ramp (a step at `lo` when `lo == hi`).
fn ramp(lo: f32, hi: f32, v: f32) -> f32 {
    if lo == hi {
        return if v >= lo { 1.0 } else { 0.0 };
    }
    let t = ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
    if t.is_nan() { 0.0 } else { t * t * (3.0 - 2.0 * t) }
}

/// Weights that ramp from 0 at height `lo` to 1 at `hi` (metres; smoothstep; module doc).
pub fn height_mask(hm: &Heightmap, lo: f32, hi: f32) -> Vec<f32> {
    hm.data.iter().map(|&h| ramp(lo, hi, h)).collect()
}

/// Slope angle of every node, degrees, from central differences over `cell_size` (one-sided at
/// the edges).
fn slope_deg(hm: &Heightmap) -> Vec<f32> {
    let (w, h) = (hm.width, hm.height);
    let cs = hm.cell_size;
    let at = |x: usize, y: usize| hm.data[y * w + x];
    let mut out = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let (xa, xb) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let (ya, yb) = (y.saturating_sub(1), (y + 1).min(h - 1));
            let gx = if xb > xa { (at(xb, y) - at(xa, y)) / ((xb - xa) as f32 * cs) } else { 0.0 };
            let gy = if yb > ya { (at(x, yb) - at(x, ya)) / ((yb - ya) as f32 * cs) } else { 0.0 };
            out[y * w + x] = (gx * gx + gy * gy).sqrt().atan().to_degrees();
        }
    }
    out
}

/// Weights that ramp from 0 at slope `lo_deg` to 1 at `hi_deg` (degrees; smoothstep; module doc).
pub fn slope_mask(hm: &Heightmap, lo_deg: f32, hi_deg: f32) -> Vec<f32> {
    slope_deg(hm).into_iter().map(|s| ramp(lo_deg, hi_deg, s)).collect()
}

/// Weights 1 where the D8 drainage area is at least `area_m2`, 0 below `area_m2/2`,
/// `log₂(2A / area_m2)` between (module doc).
pub fn flow_mask(hm: &Heightmap, area_m2: f32) -> Vec<f32> {
    let r = super::stream_power::routing::route_flow(hm, Boundary::default());
    // The threshold in the map's nodes: the routing counts a node's area as 1.
    let cell = hm.cell_size as f64;
    let t = (area_m2 as f64 / (cell * cell)).max(f64::MIN_POSITIVE);
    r.area.iter().map(|&a| (2.0 * a as f64 / t).log2().clamp(0.0, 1.0) as f32).collect()
}

/// A brush dab on a `w × h` map: `F(d / radius)` within `radius` nodes of `centre` (grid x, y), 0
/// outside (module doc).
pub fn disc_mask(w: usize, h: usize, centre: [f32; 2], radius: f32, falloff: Falloff) -> Vec<f32> {
    let r = radius.max(1e-6);
    let mut out = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as f32 - centre[0], y as f32 - centre[1]);
            let rho = (dx * dx + dy * dy).sqrt() / r;
            out[y * w + x] = if rho > 1.0 { 0.0 } else { falloff.weight(rho).clamp(0.0, 1.0) };
        }
    }
    out
}

/// What the models' sink tests check (a sink band `b0 ≤ x < b1` across a slope falling toward
/// x = 0, water from `x ≥ b1`): no node of the band is lowered, and nothing past it (`x < b0`)
/// changes at all.
#[cfg(test)]
pub(crate) fn assert_sink_band(before: &[f32], after: &[f32], n: usize, b0: usize, b1: usize) {
    for (i, (a, b)) in before.iter().zip(after).enumerate() {
        let x = i % n;
        if x < b1 {
            assert!(b >= a, "sink node ({x}, {}) lowered", i / n);
        }
        if x < b0 {
            assert_eq!(a.to_bits(), b.to_bits(), "node ({x}, {}) past the band changed", i / n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_unit(v: &[f32]) -> bool {
        v.iter().all(|w| w.is_finite() && (0.0..=1.0).contains(w))
    }

    #[test]
    fn bad_masks_are_refused() {
        let good = Steer::new(vec![0.5; 4], false);
        assert_eq!(good.check(4), Ok(()));
        assert!(matches!(good.check(5), Err(JobError::BadParam { name: "steer weights length", .. })));
        for bad in [f32::NAN, 1.5, -0.1, f32::INFINITY] {
            let s = Steer::new(vec![0.0, 1.0, bad, 0.5], true);
            assert!(matches!(s.check(4), Err(JobError::BadParam { name: "steer weight", .. })), "{bad}");
        }
    }

    #[test]
    fn height_mask_ramps_between_lo_and_hi() {
        let hm = Heightmap::from_data(5, 1, 1.0, vec![0.0, 10.0, 15.0, 20.0, 30.0]).unwrap();
        let m = height_mask(&hm, 10.0, 20.0);
        assert_eq!(m, vec![0.0, 0.0, 0.5, 1.0, 1.0]);
        // Reversed: low ground.
        let r = height_mask(&hm, 20.0, 10.0);
        assert_eq!(r, vec![1.0, 1.0, 0.5, 0.0, 0.0]);
        assert_eq!(height_mask(&hm, 15.0, 15.0), vec![0.0, 0.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn slope_mask_reads_degrees_with_the_cell_size() {
        // A plane rising 1 m per node along x: 45° with cell size 1, atan(0.5) = 26.6° with 2.
        let data: Vec<f32> = (0..25).map(|i| (i % 5) as f32).collect();
        let hm = Heightmap::from_data(5, 5, 1.0, data.clone()).unwrap();
        let m = slope_mask(&hm, 40.0, 50.0);
        assert!(m.iter().all(|&w| (w - 0.5).abs() < 1e-3), "{m:?}");
        let hm2 = Heightmap::from_data(5, 5, 2.0, data).unwrap();
        assert!(slope_mask(&hm2, 30.0, 60.0).iter().all(|&w| w == 0.0));
        assert!(slope_mask(&hm2, 20.0, 25.0).iter().all(|&w| w == 1.0));
        let flat = Heightmap::filled(4, 4, 1.0, 3.0).unwrap();
        assert!(slope_mask(&flat, 1.0, 5.0).iter().all(|&w| w == 0.0));
    }

    #[test]
    fn flow_mask_marks_the_valley() {
        // A V valley along y, draining to the bottom edge: the centre column gathers the area.
        let (w, h) = (9usize, 40usize);
        let data: Vec<f32> =
            (0..w * h).map(|i| ((i % w) as f32 - 4.0).abs() * 2.0 + (h - i / w) as f32 * 0.1).collect();
        let hm = Heightmap::from_data(w, h, 1.0, data).unwrap();
        let m = flow_mask(&hm, 40.0);
        assert!(in_unit(&m));
        // The valley floor near the outlet carries far more than 40 m² (40 nodes of 1 m); the
        // ridges carry 1.
        assert_eq!(m[(h - 2) * w + 4], 1.0);
        assert_eq!(m[10 * w], 0.0);
        assert_eq!(m[10 * w + 8], 0.0);
        // The threshold is an area: the same land sampled at 2 m cells (a quarter of the nodes in
        // each m², the same slopes) gives the same mask for the same m², and ramps where 1 m cells
        // would for a quarter of it.
        let hm2 = Heightmap { cell_size: 2.0, data: hm.data.iter().map(|v| v * 2.0).collect(), ..hm.clone() };
        assert_eq!(flow_mask(&hm2, 160.0), m);
        assert_ne!(flow_mask(&hm2, 40.0), m);
    }

    #[test]
    fn disc_mask_is_a_brush_dab() {
        let m = disc_mask(21, 21, [10.0, 10.0], 5.0, Falloff::Smooth);
        assert!(in_unit(&m));
        assert_eq!(m[10 * 21 + 10], 1.0);
        assert_eq!(m[10 * 21 + 15], 0.0);
        assert_eq!(m[0], 0.0);
        assert!(m[10 * 21 + 12] > m[10 * 21 + 13] && m[10 * 21 + 13] > 0.0);
        let c = disc_mask(21, 21, [10.0, 10.0], 5.0, Falloff::Constant);
        assert_eq!(c.iter().filter(|&&v| v == 1.0).count(), 81);
    }

    #[test]
    fn spawner_draws_in_the_box_of_the_mask() {
        let m = disc_mask(64, 64, [20.0, 40.0], 4.0, Falloff::Smooth);
        let s = Spawner::new(&Steer::new(m, false), 64, 64, 63.0, 63.0);
        for i in 0..1000 {
            let mut rng = SplitMix64::stream(3, i);
            let (x, y) = s.place(&mut rng);
            assert!((15.5..=24.5).contains(&x) && (35.5..=44.5).contains(&y), "{x} {y}");
        }
    }
}
