//! Sculpting brushes: raise, lower, smooth and flatten stamps ("dabs") on a [`Heightmap`], and
//! [`Stroke`], which turns a stream of cursor samples into evenly spaced dabs (SPEC §3, seed 004:
//! "hovering highlights the area under the cursor; the left button raises it, the right button
//! lowers it"; smooth and flatten are the usual companions of those two).
//!
//! # Frames and units
//! Brush centres are in *grid units* (node coordinates, as [`Heightmap::sample`] takes them). The
//! editor's mesh places node `(x, y)` at world position `(x·cell_size, height, y·cell_size)`, y-up
//! (Bevy's convention): world X = our x, world Y = height, world Z = our y; so a
//! [`crate::core::raycast::Hit`]'s `grid` field is exactly a brush centre. The radius is in metres
//! and becomes `r = radius / cell_size` nodes.
//!
//! # One dab
//! A node at distance `d` (nodes) from the centre has the weight `w = F(d / r)` for `d ≤ r` and is
//! untouched otherwise. With `ρ = d / r`, the falloffs `F` are
//!
//! ```text
//! Linear    F(ρ) = 1 − ρ
//! Smooth    F(ρ) = 1 − (3ρ² − 2ρ³)                    (one minus smoothstep)
//! Gaussian  F(ρ) = (e^(−ρ²/2σ²) − e^(−1/2σ²)) / (1 − e^(−1/2σ²)),  σ = 1/3   (zero at the rim)
//! Constant  F(ρ) = 1
//! ```
//!
//! A dab represents `Δt` seconds of brush time (`amount`), with strength `s`:
//!
//! ```text
//! Raise     h ← h + s·Δt·w                            (s in m/s)
//! Lower     h ← h − s·Δt·w
//! Flatten   h ← h + (T − h)·α,  α = 1 − e^(−s·Δt·w)   (s in 1/s; T the target height)
//! Smooth    h ← h + (A − h)·α                         (A the box average around the node)
//! ```
//!
//! Raise/lower add linearly in `Δt` and the blends compose exactly (`1 − α` multiplies), so
//! splitting a dab's time into several dabs at the same place gives the same map: this is what makes
//! a [`Stroke`] independent of the frame rate. The smoothing average `A` is the mean of the finite
//! heights in the `(2k+1)²` box around the node, `k = clamp(round(r / 8), 1, 32)` (3×3 for small
//! brushes), computed separably from a copy of the affected window taken before the dab, so the
//! result does not depend on the order in which nodes are visited (nor on rayon's scheduling:
//! big dabs run rows in parallel, bit-identically).
//!
//! # Robustness
//! Parameters are validated ([`BrushParams::validate`]); a dab never reads or writes outside the
//! map, allocates at most a window of the map (smooth only), never creates NaN (non-finite nodes are
//! left alone, except that smoothing replaces them by their finite neighbours' mean), and keeps
//! raised/lowered heights within ±[`HEIGHT_LIMIT`].

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::heightmap::Heightmap;
use super::params::{ABOVE_ZERO, BadParam, check};

/// Largest accepted brush radius, metres.
pub const MAX_RADIUS: f32 = 100_000.0;
/// Largest accepted strength (m/s for raise/lower, 1/s for smooth/flatten).
pub const MAX_STRENGTH: f32 = 10_000.0;
/// Largest accepted dab spacing, in radii.
pub const MAX_SPACING: f32 = 10.0;
/// Smallest accepted dab spacing, in radii.
pub const MIN_SPACING: f32 = 0.01;
/// Raise and lower never push a height beyond ±this many metres.
pub const HEIGHT_LIMIT: f32 = 1.0e7;
/// Largest brush time one dab may represent, seconds.
pub const MAX_AMOUNT: f32 = 1.0e6;
/// A stroke emits a dab at least this often (seconds of brush time) even when the cursor rests.
pub const DAB_TIME_STEP: f64 = 1.0 / 60.0;
/// The longest time gap between two cursor samples that a stroke honours, seconds: a stalled frame
/// (window dragged, debugger break) must not dump seconds of brush at once.
pub const MAX_SAMPLE_GAP: f64 = 1.0;
/// Dab spacing along a stroke never falls below this many nodes (finer spacing changes nothing
/// visible and would only cost time).
pub const MIN_SPACING_NODES: f64 = 0.125;
/// At most this many distance-triggered dabs per cursor segment; longer jumps space them wider.
pub const MAX_DABS_PER_SEGMENT: f64 = 65_536.0;
/// Dabs whose window holds at least this many nodes run their rows in parallel.
const PARALLEL_NODES: usize = 1 << 16;

/// A rectangle of nodes, `x0..x1 × y0..y1` (inclusive–exclusive), that an operation changed: the
/// mesh rebuilds only the chunks it overlaps. Any rectangle with `x1 <= x0` or `y1 <= y0` is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DirtyRect {
    /// First column, inclusive.
    pub x0: usize,
    /// First row, inclusive.
    pub y0: usize,
    /// Last column, exclusive.
    pub x1: usize,
    /// Last row, exclusive.
    pub y1: usize,
}

impl DirtyRect {
    /// The empty rectangle (the identity of [`Self::union`]).
    pub const EMPTY: Self = Self { x0: 0, y0: 0, x1: 0, y1: 0 };

    /// `x0..x1 × y0..y1`; an empty range on either axis gives [`Self::EMPTY`].
    pub fn new(x0: usize, y0: usize, x1: usize, y1: usize) -> Self {
        if x1 <= x0 || y1 <= y0 { Self::EMPTY } else { Self { x0, y0, x1, y1 } }
    }

    /// Every node of `hm`.
    pub fn full(hm: &Heightmap) -> Self {
        Self::new(0, 0, hm.width, hm.height)
    }

    /// True when the rectangle holds no node.
    pub fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    /// Columns covered.
    pub fn width(&self) -> usize {
        if self.is_empty() { 0 } else { self.x1 - self.x0 }
    }

    /// Rows covered.
    pub fn height(&self) -> usize {
        if self.is_empty() { 0 } else { self.y1 - self.y0 }
    }

    /// Nodes covered.
    pub fn area(&self) -> usize {
        self.width() * self.height()
    }

    /// True when node `(x, y)` lies inside.
    pub fn contains(&self, x: usize, y: usize) -> bool {
        !self.is_empty() && x >= self.x0 && x < self.x1 && y >= self.y0 && y < self.y1
    }

    /// The smallest rectangle holding both (empty rectangles are ignored).
    pub fn union(self, o: Self) -> Self {
        match (self.is_empty(), o.is_empty()) {
            (true, _) => o,
            (_, true) => self,
            _ => Self { x0: self.x0.min(o.x0), y0: self.y0.min(o.y0), x1: self.x1.max(o.x1), y1: self.y1.max(o.y1) },
        }
    }

    /// The nodes in both.
    pub fn intersect(self, o: Self) -> Self {
        Self::new(self.x0.max(o.x0), self.y0.max(o.y0), self.x1.min(o.x1), self.y1.min(o.y1))
    }

    /// Clipped to a `width × height` map.
    pub fn clamp_to(self, width: usize, height: usize) -> Self {
        self.intersect(Self::new(0, 0, width, height))
    }

    /// Grown by `n` nodes on every side, clipped to a `width × height` map (normals depend on
    /// neighbours, so a mesh rebuild wants the rectangle grown by one).
    pub fn grow(self, n: usize, width: usize, height: usize) -> Self {
        if self.is_empty() {
            return Self::EMPTY;
        }
        Self::new(
            self.x0.saturating_sub(n),
            self.y0.saturating_sub(n),
            self.x1.saturating_add(n),
            self.y1.saturating_add(n),
        )
        .clamp_to(width, height)
    }

    /// Coordinates `(cx, cy)` of the `chunk × chunk` tiles the rectangle overlaps, row by row.
    /// `chunk` 0 is treated as 1.
    pub fn chunks(self, chunk: usize) -> impl Iterator<Item = (usize, usize)> {
        let c = chunk.max(1);
        let (cx0, cy0, cx1, cy1) = if self.is_empty() {
            (0, 0, 0, 0)
        } else {
            (self.x0 / c, self.y0 / c, (self.x1 - 1) / c + 1, (self.y1 - 1) / c + 1)
        };
        (cy0..cy1).flat_map(move |cy| (cx0..cx1).map(move |cx| (cx, cy)))
    }
}

/// Why brush parameters or a dab request were refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BrushError {
    /// A brush parameter is outside its accepted range.
    #[error("brush parameter {name} = {value} is outside its range {range}")]
    BadParam {
        /// The field's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The accepted range, as text.
        range: &'static str,
    },
}

impl From<BadParam> for BrushError {
    fn from(BadParam { name, value, range }: BadParam) -> Self {
        BrushError::BadParam { name, value, range }
    }
}

crate::param_enum! {
    /// What a dab does.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum BrushKind {
        /// Adds height (left button, seed 004).
        #[default]
        Raise,
        /// Removes height (right button, seed 004).
        Lower,
        /// Blends towards the local box average.
        Smooth,
        /// Blends towards a target height.
        Flatten,
    }
}

crate::param_enum! {
    /// How the effect fades from the centre (weight 1) to the rim (see the module doc).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum Falloff {
        /// `1 − ρ`: a cone.
        Linear,
        /// `1 − smoothstep(ρ)`: flat top, soft rim, no crease at either.
        #[default]
        Smooth,
        /// A Gaussian (σ = r/3) shifted and scaled to reach 0 at the rim.
        Gaussian,
        /// 1 everywhere inside the radius: a cylinder.
        Constant,
    }
}

/// `e^(−1/(2σ²))` for σ = 1/3, the Gaussian's value at the rim.
const GAUSS_RIM: f32 = 0.011_108_996;

impl Falloff {
    /// Weight at `ρ = distance / radius`: 1 at the centre, 0 outside (`ρ > 1`) and for NaN.
    #[inline]
    pub fn weight(self, rho: f32) -> f32 {
        if rho.is_nan() || rho > 1.0 {
            return 0.0;
        }
        let r = rho.max(0.0);
        match self {
            Falloff::Linear => 1.0 - r,
            Falloff::Smooth => 1.0 - r * r * (3.0 - 2.0 * r),
            Falloff::Gaussian => (((-4.5 * r * r).exp() - GAUSS_RIM) / (1.0 - GAUSS_RIM)).max(0.0),
            Falloff::Constant => 1.0,
        }
    }
}

crate::params! {
    /// A brush: what it does, how big, how strong, how it fades and how densely a stroke stamps it.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct BrushParams {
        /// Raise, lower, smooth or flatten.
        pub kind: BrushKind = BrushKind::Raise;
        /// Radius of the affected disc (greater than 0).
        pub radius: f32 = 16.0, unit "m", range [ABOVE_ZERO, MAX_RADIUS];
        /// Metres per second at the centre for raise/lower; blend rate per second (1/s, the fraction
        /// `1 − e^(−strength·t)` of the way to the target after `t` seconds) for smooth/flatten.
        pub strength: f32 = 10.0, range [0.0, MAX_STRENGTH];
        /// Fade from centre to rim.
        pub falloff: Falloff = Falloff::Smooth;
        /// Distance between successive dabs of a stroke, as a fraction of the radius.
        pub spacing: f32 = 0.25, unit "radii", range [MIN_SPACING, MAX_SPACING];
        /// Target of `Flatten`; `None` = the height under the stroke's first dab (for a lone
        /// [`dab`], the height under its centre).
        pub flatten_height: Option<f32> = None, unit "m", range [-HEIGHT_LIMIT, HEIGHT_LIMIT];
    }
}

impl BrushParams {
    /// Checks every field against its declared range.
    pub fn validate(&self) -> Result<(), BrushError> {
        Ok(self.check_ranges()?)
    }

    /// Radius in nodes on `hm`.
    pub fn radius_nodes(&self, hm: &Heightmap) -> f32 {
        self.radius / hm.cell_size
    }
}

/// The inclusive node window `[x0, x1] × [y0, y1]` of a disc of `r` nodes around `c`, clipped to the
/// map, or `None` when it holds no node.
fn window(hm: &Heightmap, c: [f32; 2], r: f32) -> Option<(usize, usize, usize, usize)> {
    if !(c[0].is_finite() && c[1].is_finite() && r.is_finite() && r >= 0.0) {
        return None;
    }
    let lo_x = ((c[0] - r).ceil() as f64).max(0.0);
    let hi_x = ((c[0] + r).floor() as f64).min((hm.width - 1) as f64);
    let lo_y = ((c[1] - r).ceil() as f64).max(0.0);
    let hi_y = ((c[1] + r).floor() as f64).min((hm.height - 1) as f64);
    if lo_x > hi_x || lo_y > hi_y {
        return None;
    }
    Some((lo_x as usize, lo_y as usize, hi_x as usize, hi_y as usize))
}

/// The rectangle of nodes a dab at `centre` may change (the disc's bounding box on the map). Call
/// it to snapshot for undo *before* [`dab`]; empty when the disc misses the map or `p` is invalid.
pub fn dab_bounds(hm: &Heightmap, centre: [f32; 2], p: &BrushParams) -> DirtyRect {
    if p.validate().is_err() {
        return DirtyRect::EMPTY;
    }
    match window(hm, centre, p.radius_nodes(hm)) {
        Some((x0, y0, x1, y1)) => DirtyRect::new(x0, y0, x1 + 1, y1 + 1),
        None => DirtyRect::EMPTY,
    }
}

/// One stamp of the brush at `centre` (grid units) representing `amount` seconds of brush time.
/// Returns the rectangle of nodes whose bits changed (empty if none, or if `p`, `centre` or
/// `amount` is invalid; see [`try_dab`] for the reason).
pub fn dab(hm: &mut Heightmap, centre: [f32; 2], p: &BrushParams, amount: f32) -> DirtyRect {
    try_dab(hm, centre, p, amount).unwrap_or(DirtyRect::EMPTY)
}

/// [`dab`], reporting invalid input instead of ignoring it.
pub fn try_dab(hm: &mut Heightmap, centre: [f32; 2], p: &BrushParams, amount: f32) -> Result<DirtyRect, BrushError> {
    p.validate()?;
    check("amount", amount as f64, 0.0, MAX_AMOUNT as f64, "[0, 1e6] s")?;
    check("centre.x", centre[0] as f64, f64::MIN, f64::MAX, "finite grid units")?;
    check("centre.y", centre[1] as f64, f64::MIN, f64::MAX, "finite grid units")?;
    if hm.data.len() != hm.width * hm.height || hm.cell_size.is_nan() || hm.cell_size <= 0.0 {
        return Ok(DirtyRect::EMPTY);
    }
    Ok(dab_unchecked(hm, centre, p, amount))
}

fn dab_unchecked(hm: &mut Heightmap, centre: [f32; 2], p: &BrushParams, amount: f32) -> DirtyRect {
    let r = p.radius_nodes(hm);
    let Some((x0, y0, x1, y1)) = window(hm, centre, r) else {
        return DirtyRect::EMPTY;
    };
    if amount == 0.0 || p.strength == 0.0 {
        return DirtyRect::EMPTY;
    }
    let k = p.strength * amount; // m (raise/lower) or dimensionless rate·time (blends)
    let shape = Shape { cx: centre[0], cy: centre[1], r2: r * r, inv_r: 1.0 / r, falloff: p.falloff, x0 };
    let (xe, ye) = (x1 + 1, y1 + 1);
    match p.kind {
        BrushKind::Raise | BrushKind::Lower => {
            let d = if p.kind == BrushKind::Raise { k } else { -k };
            apply_rows(hm, x0, xe, y0, ye, &shape, |h, w, _, _| {
                if !h.is_finite() {
                    return h;
                }
                let n = h + d * w;
                if d > 0.0 {
                    if h >= HEIGHT_LIMIT { h } else { n.min(HEIGHT_LIMIT) }
                } else if h <= -HEIGHT_LIMIT {
                    h
                } else {
                    n.max(-HEIGHT_LIMIT)
                }
            })
        }
        BrushKind::Flatten => {
            let target = match p.flatten_height {
                Some(t) => t,
                None => hm.sample(centre[0], centre[1]),
            };
            if !target.is_finite() {
                return DirtyRect::EMPTY;
            }
            apply_rows(hm, x0, xe, y0, ye, &shape, |h, w, _, _| {
                if !h.is_finite() {
                    return h;
                }
                h + (target - h) * blend(k * w)
            })
        }
        BrushKind::Smooth => {
            let kr = ((r / 8.0).round() as usize).clamp(1, 32);
            let avg = BoxAverage::new(hm, x0, xe, y0, ye, kr);
            apply_rows(hm, x0, xe, y0, ye, &shape, |h, w, x, y| {
                let Some(a) = avg.at(x, y) else { return h };
                if !h.is_finite() {
                    return a;
                }
                h + (a - h) * blend(k * w)
            })
        }
    }
}

/// `1 − e^(−x)`, accurate for small `x`, 1 for `x = ∞`.
#[inline]
fn blend(x: f32) -> f32 {
    -(-x).exp_m1()
}

/// The disc a dab covers.
struct Shape {
    cx: f32,
    cy: f32,
    r2: f32,
    inv_r: f32,
    falloff: Falloff,
    x0: usize,
}

/// Runs `op(old, weight, x, y) -> new` on every node of the window inside the disc, rows in
/// parallel when the window is large, and returns the rectangle of nodes whose bits changed.
fn apply_rows(
    hm: &mut Heightmap,
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
    s: &Shape,
    op: impl Fn(f32, f32, usize, usize) -> f32 + Sync,
) -> DirtyRect {
    let w = hm.width;
    let rows = &mut hm.data[y0 * w..y1 * w];
    let row = |(i, row): (usize, &mut [f32])| -> Option<(usize, usize)> {
        let y = y0 + i;
        let dy = y as f32 - s.cy;
        let dy2 = dy * dy;
        let mut span: Option<(usize, usize)> = None;
        for (j, h) in row[x0..x1].iter_mut().enumerate() {
            let x = s.x0 + j;
            let dx = x as f32 - s.cx;
            let d2 = dx * dx + dy2;
            if d2 > s.r2 {
                continue;
            }
            // Inside the disc by `d2 <= r2`; clamp ρ so rounding cannot drop rim nodes.
            let wt = s.falloff.weight((d2.sqrt() * s.inv_r).min(1.0));
            if wt <= 0.0 {
                continue;
            }
            let old = *h;
            let new = op(old, wt, x, y);
            if new.to_bits() != old.to_bits() {
                *h = new;
                span = Some(match span {
                    None => (x, x),
                    Some((a, _)) => (a, x),
                });
            }
        }
        span
    };
    let spans: Vec<Option<(usize, usize)>> = if (x1 - x0) * (y1 - y0) >= PARALLEL_NODES {
        rows.par_chunks_mut(w).enumerate().map(row).collect()
    } else {
        rows.chunks_mut(w).enumerate().map(row).collect()
    };
    let mut rect = DirtyRect::EMPTY;
    for (i, s) in spans.into_iter().enumerate() {
        if let Some((a, b)) = s {
            rect = rect.union(DirtyRect::new(a, y0 + i, b + 1, y0 + i + 1));
        }
    }
    rect
}

/// Box averages of the finite heights in `(2k+1)²` neighbourhoods (clipped to the map) for every
/// node of a window, computed separably from the map before the dab changes it.
struct BoxAverage {
    x0: usize,
    y0: usize,
    w: usize,
    avg: Vec<f32>,
    valid: Vec<bool>,
}

impl BoxAverage {
    fn new(hm: &Heightmap, x0: usize, x1: usize, y0: usize, y1: usize, k: usize) -> Self {
        let mw = hm.width;
        let sy0 = y0.saturating_sub(k);
        let sy1 = (y1 + k).min(hm.height);
        let ww = x1 - x0;
        // Horizontal pass over rows sy0..sy1: sum and count of finite values in [x-k, x+k].
        let hpass = |sy: usize| -> (Vec<f32>, Vec<u32>) {
            let row = &hm.data[sy * mw..(sy + 1) * mw];
            let mut sums = Vec::with_capacity(ww);
            let mut cnts = Vec::with_capacity(ww);
            for x in x0..x1 {
                let a = x.saturating_sub(k);
                let b = (x + k + 1).min(mw);
                let (mut s, mut n) = (0.0f32, 0u32);
                for &v in &row[a..b] {
                    if v.is_finite() {
                        s += v;
                        n += 1;
                    }
                }
                sums.push(s);
                cnts.push(n);
            }
            (sums, cnts)
        };
        let big = ww * (sy1 - sy0) >= PARALLEL_NODES;
        let hrows: Vec<(Vec<f32>, Vec<u32>)> =
            if big { (sy0..sy1).into_par_iter().map(hpass).collect() } else { (sy0..sy1).map(hpass).collect() };
        // Vertical pass over the window rows.
        let vpass = |y: usize| -> (Vec<f32>, Vec<bool>) {
            let a = y.saturating_sub(k).max(sy0) - sy0;
            let b = (y + k + 1).min(sy1) - sy0;
            let mut out = Vec::with_capacity(ww);
            let mut ok = Vec::with_capacity(ww);
            for j in 0..ww {
                let (mut s, mut n) = (0.0f32, 0u32);
                for (hs, hc) in &hrows[a..b] {
                    s += hs[j];
                    n += hc[j];
                }
                let v = if n > 0 { s / n as f32 } else { 0.0 };
                ok.push(n > 0 && v.is_finite());
                out.push(v);
            }
            (out, ok)
        };
        let vrows: Vec<(Vec<f32>, Vec<bool>)> =
            if big { (y0..y1).into_par_iter().map(vpass).collect() } else { (y0..y1).map(vpass).collect() };
        let mut avg = Vec::with_capacity(ww * (y1 - y0));
        let mut valid = Vec::with_capacity(ww * (y1 - y0));
        for (a, v) in vrows {
            avg.extend_from_slice(&a);
            valid.extend_from_slice(&v);
        }
        Self { x0, y0, w: ww, avg, valid }
    }

    #[inline]
    fn at(&self, x: usize, y: usize) -> Option<f32> {
        let i = (y - self.y0) * self.w + (x - self.x0);
        if self.valid[i] { Some(self.avg[i]) } else { None }
    }
}

/// One dab placed by a [`Stroke`]: where, and how many seconds of brush time it carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dab {
    /// Centre, grid units.
    pub centre: [f32; 2],
    /// Brush time, seconds.
    pub amount: f32,
}

/// A brush stroke: cursor samples `(position in grid units, time in seconds)` in, evenly spaced dabs
/// out.
///
/// The cursor path is the polyline through the samples, traversed at constant speed between
/// samples. Walking it, a dab is placed whenever the path length since the previous dab reaches
/// `spacing · radius` (in nodes, at least [`MIN_SPACING_NODES`]) or the time since the previous dab
/// reaches [`DAB_TIME_STEP`] (so a resting cursor keeps raising); each dab carries the time elapsed
/// since the previous one, and [`Self::finish`] stamps the remainder at the last position. Dabs thus
/// depend on the path and its timing, not on how often it was sampled, and the brush time of all
/// dabs adds up to the stroke's duration: raise/lower add `strength × duration × Σ weights` of
/// volume whatever the frame rate. Time gaps above [`MAX_SAMPLE_GAP`] are cut to it; times that go
/// backwards count as no time; non-finite samples are ignored.
#[derive(Clone, Debug)]
pub struct Stroke {
    params: BrushParams,
    last: Option<([f64; 2], f64)>,
    dist: f64,
    time: f64,
    dirty: DirtyRect,
    dabs: usize,
}

impl Stroke {
    /// Starts a stroke with validated parameters.
    pub fn new(params: BrushParams) -> Result<Self, BrushError> {
        params.validate()?;
        Ok(Self { params, last: None, dist: 0.0, time: 0.0, dirty: DirtyRect::EMPTY, dabs: 0 })
    }

    /// The parameters (with `flatten_height` filled in once the first flatten dab fixed it).
    pub fn params(&self) -> &BrushParams {
        &self.params
    }

    /// The flatten target in use, once known.
    pub fn flatten_target(&self) -> Option<f32> {
        self.params.flatten_height
    }

    /// Union of every rectangle this stroke changed so far.
    pub fn dirty(&self) -> DirtyRect {
        self.dirty
    }

    /// Dabs stamped so far.
    pub fn dab_count(&self) -> usize {
        self.dabs
    }

    /// Adds a cursor sample and stamps the dabs it completes; returns the rectangle they changed.
    pub fn add_point(&mut self, hm: &mut Heightmap, pos: [f32; 2], time: f64) -> DirtyRect {
        self.add_point_with(hm, pos, time, |_, _| {})
    }

    /// [`Self::add_point`], calling `before(hm, rect)` ahead of each dab with the rectangle it may
    /// change (e.g. [`crate::core::undo::UndoStack::touch`]).
    pub fn add_point_with(
        &mut self,
        hm: &mut Heightmap,
        pos: [f32; 2],
        time: f64,
        mut before: impl FnMut(&Heightmap, DirtyRect),
    ) -> DirtyRect {
        if !(pos[0].is_finite()
            && pos[1].is_finite()
            && time.is_finite()
            && hm.cell_size.is_finite()
            && hm.cell_size > 0.0)
        {
            return DirtyRect::EMPTY;
        }
        let p1 = [pos[0] as f64, pos[1] as f64];
        let Some((p0, t0)) = self.last else {
            self.last = Some((p1, time));
            return DirtyRect::EMPTY;
        };
        self.last = Some((p1, time.max(t0)));
        let len = ((p1[0] - p0[0]).powi(2) + (p1[1] - p0[1]).powi(2)).sqrt();
        let dur = (time - t0).clamp(0.0, MAX_SAMPLE_GAP);
        let mut spacing = ((self.params.spacing as f64) * (self.params.radius_nodes(hm) as f64)).max(MIN_SPACING_NODES);
        spacing = spacing.max(len / MAX_DABS_PER_SEGMENT);
        let mut rect = DirtyRect::EMPTY;
        let mut f = 0.0f64; // how far along this segment, 0..1
        // After a dab both counters restart from 0, so the next event is at least
        // min(spacing / len, DAB_TIME_STEP / dur) ≥ 1 / MAX_DABS_PER_SEGMENT further on: the loop
        // ends after at most MAX_DABS_PER_SEGMENT + MAX_SAMPLE_GAP / DAB_TIME_STEP + 1 dabs.
        loop {
            let f_dist = if len > 0.0 { f + (spacing - self.dist).max(0.0) / len } else { f64::INFINITY };
            let f_time = if dur > 0.0 { f + (DAB_TIME_STEP - self.time).max(0.0) / dur } else { f64::INFINITY };
            let fe = f_dist.min(f_time);
            if fe.is_nan() || fe > 1.0 {
                self.dist += (1.0 - f) * len;
                self.time += (1.0 - f) * dur;
                break;
            }
            let amount = self.time + (fe - f) * dur;
            let c = [(p0[0] + fe * (p1[0] - p0[0])) as f32, (p0[1] + fe * (p1[1] - p0[1])) as f32];
            rect = rect.union(self.stamp(hm, Dab { centre: c, amount: amount as f32 }, &mut before));
            self.dist = 0.0;
            self.time = 0.0;
            f = fe;
        }
        rect
    }

    /// Ends the stroke: stamps the brush time not yet placed at the last position. Returns the
    /// rectangle it changed. The stroke may go on afterwards as if freshly started.
    pub fn finish(&mut self, hm: &mut Heightmap) -> DirtyRect {
        self.finish_with(hm, |_, _| {})
    }

    /// [`Self::finish`] with a `before` hook as in [`Self::add_point_with`].
    pub fn finish_with(&mut self, hm: &mut Heightmap, mut before: impl FnMut(&Heightmap, DirtyRect)) -> DirtyRect {
        let mut rect = DirtyRect::EMPTY;
        if let Some((p, _)) = self.last
            && self.time > 0.0
        {
            let d = Dab { centre: [p[0] as f32, p[1] as f32], amount: self.time as f32 };
            rect = self.stamp(hm, d, &mut before);
        }
        self.last = None;
        self.dist = 0.0;
        self.time = 0.0;
        rect
    }

    fn stamp(&mut self, hm: &mut Heightmap, d: Dab, before: &mut impl FnMut(&Heightmap, DirtyRect)) -> DirtyRect {
        if self.params.kind == BrushKind::Flatten && self.params.flatten_height.is_none() {
            let h = hm.sample(d.centre[0], d.centre[1]);
            if h.is_finite() {
                self.params.flatten_height = Some(h.clamp(-HEIGHT_LIMIT, HEIGHT_LIMIT));
            }
        }
        self.dabs += 1;
        let bounds = dab_bounds(hm, d.centre, &self.params);
        if bounds.is_empty() {
            return DirtyRect::EMPTY;
        }
        before(hm, bounds);
        let r = dab(hm, d.centre, &self.params, d.amount.min(MAX_AMOUNT));
        self.dirty = self.dirty.union(r);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::{SplitMix64, hash2, signed_f32};

    fn noise_map(w: usize, h: usize, seed: u64) -> Heightmap {
        Heightmap::from_fn(w, h, 1.0, |x, y| 10.0 * signed_f32(hash2(x as i64, y as i64, seed))).unwrap()
    }

    fn raise(radius: f32, falloff: Falloff) -> BrushParams {
        BrushParams { radius, strength: 2.0, falloff, ..Default::default() }
    }

    /// Every changed node lies in `rect`, and `rect` is the tight box of the changes.
    fn assert_tight(before: &Heightmap, after: &Heightmap, rect: DirtyRect) {
        let mut tight = DirtyRect::EMPTY;
        for y in 0..before.height {
            for x in 0..before.width {
                if before.get(x, y).to_bits() != after.get(x, y).to_bits() {
                    tight = tight.union(DirtyRect::new(x, y, x + 1, y + 1));
                }
            }
        }
        assert_eq!(tight, rect);
    }

    #[test]
    fn falloffs_run_from_one_to_zero_and_decrease() {
        for f in [Falloff::Linear, Falloff::Smooth, Falloff::Gaussian, Falloff::Constant] {
            assert_eq!(f.weight(0.0), 1.0, "{f:?}");
            assert_eq!(f.weight(1.0001), 0.0);
            assert_eq!(f.weight(f32::NAN), 0.0);
            assert_eq!(f.weight(-0.5), 1.0);
            let mut prev = 1.0;
            for i in 0..=100 {
                let w = f.weight(i as f32 / 100.0);
                assert!((0.0..=1.0).contains(&w) && w <= prev, "{f:?} at {i}");
                prev = w;
            }
            if f != Falloff::Constant {
                assert!(f.weight(1.0).abs() < 1e-6, "{f:?} rim");
            }
        }
        assert!((Falloff::Linear.weight(0.25) - 0.75).abs() < 1e-6);
        assert!((Falloff::Smooth.weight(0.5) - 0.5).abs() < 1e-6);
        let g = (((-4.5f32 * 0.25).exp() - GAUSS_RIM) / (1.0 - GAUSS_RIM)).max(0.0);
        assert!((Falloff::Gaussian.weight(0.5) - g).abs() < 1e-6);
        assert!((GAUSS_RIM - (-4.5f32).exp()).abs() < 1e-7);
    }

    #[test]
    fn raise_and_lower_follow_strength_time_and_falloff() {
        let base = Heightmap::filled(64, 48, 2.0, 5.0).unwrap();
        let p = raise(20.0, Falloff::Linear); // 10 nodes
        let mut hm = base.clone();
        let rect = dab(&mut hm, [30.0, 20.0], &p, 0.5);
        assert_eq!(hm.get(30, 20), 6.0); // 5 + 2 m/s · 0.5 s · 1
        assert!((hm.get(35, 20) - (5.0 + 0.5)).abs() < 1e-6); // ρ = 0.5
        assert_eq!(hm.get(40, 20), 5.0); // on the rim: weight 0
        assert_eq!(hm.get(30, 31), 5.0); // outside
        assert_eq!(rect, DirtyRect::new(21, 11, 40, 30));
        assert_tight(&base, &hm, rect);
        let mut low = base.clone();
        dab(&mut low, [30.0, 20.0], &BrushParams { kind: BrushKind::Lower, ..p.clone() }, 0.5);
        assert_eq!(low.get(30, 20), 4.0);
        for i in 0..hm.len() {
            assert!(((hm.data[i] - 5.0) + (low.data[i] - 5.0)).abs() < 1e-5);
        }
        // Constant falloff covers exactly the disc.
        let mut c = base.clone();
        let rc = dab(&mut c, [10.0, 10.0], &BrushParams { radius: 6.0, falloff: Falloff::Constant, ..p }, 1.0);
        let inside = c.data.iter().filter(|&&h| h == 7.0).count();
        let expect = (7..=13).flat_map(|y| (7..=13).map(move |x| (x, y))).filter(|&(x, y)| {
            let (dx, dy) = (x as f32 - 10.0, y as f32 - 10.0);
            dx * dx + dy * dy <= 9.0
        });
        assert_eq!(inside, expect.count());
        assert_eq!(rc, DirtyRect::new(7, 7, 14, 14));
    }

    #[test]
    fn flatten_moves_towards_its_target_at_the_documented_rate() {
        let base = noise_map(40, 40, 3);
        let p = BrushParams {
            kind: BrushKind::Flatten,
            radius: 8.0,
            strength: 3.0,
            flatten_height: Some(2.5),
            ..Default::default()
        };
        let mut hm = base.clone();
        let rect = dab(&mut hm, [20.0, 20.0], &p, 0.2);
        let a = 1.0 - (-3.0f32 * 0.2).exp();
        let expect = base.get(20, 20) + (2.5 - base.get(20, 20)) * a;
        assert!((hm.get(20, 20) - expect).abs() < 1e-5);
        assert_tight(&base, &hm, rect);
        // Splitting the time into pieces at the same spot gives the same result.
        let mut split = base.clone();
        for _ in 0..4 {
            dab(&mut split, [20.0, 20.0], &p, 0.05);
        }
        for i in 0..hm.len() {
            assert!((hm.data[i] - split.data[i]).abs() < 1e-4);
        }
        // A long dab reaches the target at the centre; without a target it uses the centre height.
        let mut long = base.clone();
        dab(&mut long, [20.0, 20.0], &p, 100.0);
        assert!((long.get(20, 20) - 2.5).abs() < 1e-6);
        let mut own = base.clone();
        dab(&mut own, [20.0, 20.0], &BrushParams { flatten_height: None, ..p }, 100.0);
        assert!((own.get(21, 20) - base.get(20, 20)).abs() < 1e-3);
    }

    /// Straightforward reference: box mean of finite in-map neighbours, from the original map.
    fn smooth_reference(base: &Heightmap, c: [f32; 2], p: &BrushParams, amount: f32) -> Heightmap {
        let mut out = base.clone();
        let r = p.radius / base.cell_size;
        let k = ((r / 8.0).round() as i64).clamp(1, 32);
        for y in 0..base.height {
            for x in 0..base.width {
                let (dx, dy) = (x as f32 - c[0], y as f32 - c[1]);
                let d2 = dx * dx + dy * dy;
                if d2 > r * r {
                    continue;
                }
                let w = p.falloff.weight(d2.sqrt() / r);
                if w <= 0.0 {
                    continue;
                }
                let (mut s, mut n) = (0.0f64, 0);
                for yy in (y as i64 - k).max(0)..=(y as i64 + k).min(base.height as i64 - 1) {
                    for xx in (x as i64 - k).max(0)..=(x as i64 + k).min(base.width as i64 - 1) {
                        let v = base.get(xx as usize, yy as usize);
                        if v.is_finite() {
                            s += v as f64;
                            n += 1;
                        }
                    }
                }
                let a = (s / n as f64) as f32;
                let h = base.get(x, y);
                out.set(x, y, if h.is_finite() { h + (a - h) * (1.0 - (-p.strength * amount * w).exp()) } else { a });
            }
        }
        out
    }

    #[test]
    fn smooth_matches_a_direct_box_mean_and_reduces_roughness() {
        for (radius, c) in [(5.0, [20.0, 20.0]), (24.0, [3.5, 30.2]), (3.0, [0.0, 0.0])] {
            let base = noise_map(48, 40, 7);
            let p = BrushParams {
                kind: BrushKind::Smooth,
                radius,
                strength: 4.0,
                falloff: Falloff::Gaussian,
                ..Default::default()
            };
            let mut hm = base.clone();
            let rect = dab(&mut hm, c, &p, 0.3);
            let reference = smooth_reference(&base, c, &p, 0.3);
            for i in 0..hm.len() {
                assert!((hm.data[i] - reference.data[i]).abs() < 1e-4, "r {radius} node {i}");
            }
            assert_tight(&base, &hm, rect);
        }
        // Roughness (sum of squared neighbour differences) drops inside the brush.
        let base = noise_map(32, 32, 9);
        let mut hm = base.clone();
        let p = BrushParams {
            kind: BrushKind::Smooth,
            radius: 12.0,
            strength: 50.0,
            falloff: Falloff::Constant,
            ..Default::default()
        };
        dab(&mut hm, [16.0, 16.0], &p, 1.0);
        let rough = |m: &Heightmap| -> f32 { (10..22).map(|x| (m.get(x + 1, 16) - m.get(x, 16)).powi(2)).sum() };
        assert!(rough(&hm) < 0.2 * rough(&base));
        // A plane is a fixed point of the box mean away from the border.
        let plane = Heightmap::from_fn(40, 40, 1.0, |x, y| 0.5 * x as f32 - 0.25 * y as f32).unwrap();
        let mut pm = plane.clone();
        dab(&mut pm, [20.0, 20.0], &BrushParams { radius: 10.0, ..p }, 1.0);
        for i in 0..pm.len() {
            assert!((pm.data[i] - plane.data[i]).abs() < 1e-4);
        }
    }

    #[test]
    fn non_finite_nodes_never_spread() {
        let mut hm = noise_map(20, 20, 1);
        hm.set(10, 10, f32::NAN);
        hm.set(11, 10, f32::INFINITY);
        for kind in [BrushKind::Raise, BrushKind::Lower, BrushKind::Flatten] {
            let mut m = hm.clone();
            dab(&mut m, [10.0, 10.0], &BrushParams { kind, radius: 5.0, ..Default::default() }, 1.0);
            assert_eq!(m.data.iter().filter(|h| !h.is_finite()).count(), 2, "{kind:?}");
        }
        let mut m = hm.clone();
        dab(&mut m, [10.0, 10.0], &BrushParams { kind: BrushKind::Smooth, radius: 5.0, ..Default::default() }, 1.0);
        assert!(m.all_finite(), "smooth heals non-finite nodes from their finite neighbours");
        // Flatten with no target on a NaN centre does nothing.
        let mut f = hm.clone();
        let p = BrushParams { kind: BrushKind::Flatten, radius: 0.5, ..Default::default() };
        assert!(dab(&mut f, [10.0, 10.0], &p, 1.0).is_empty());
        // Raise saturates at the height limit instead of overflowing.
        let mut big = Heightmap::filled(5, 5, 1.0, HEIGHT_LIMIT - 1.0).unwrap();
        let p = BrushParams { radius: 3.0, strength: MAX_STRENGTH, ..Default::default() };
        dab(&mut big, [2.0, 2.0], &p, MAX_AMOUNT);
        assert!(big.data.iter().all(|&h| h <= HEIGHT_LIMIT && h.is_finite()));
        assert_eq!(big.get(2, 2), HEIGHT_LIMIT);
    }

    #[test]
    fn invalid_parameters_are_refused_without_panicking() {
        assert!(BrushParams::default().validate().is_ok());
        let bad = [
            BrushParams { radius: 0.0, ..Default::default() },
            BrushParams { radius: -1.0, ..Default::default() },
            BrushParams { radius: f32::NAN, ..Default::default() },
            BrushParams { radius: f32::INFINITY, ..Default::default() },
            BrushParams { radius: 1e9, ..Default::default() },
            BrushParams { strength: -1.0, ..Default::default() },
            BrushParams { strength: f32::NAN, ..Default::default() },
            BrushParams { strength: 1e20, ..Default::default() },
            BrushParams { spacing: 0.0, ..Default::default() },
            BrushParams { spacing: f32::INFINITY, ..Default::default() },
            BrushParams { flatten_height: Some(f32::NAN), ..Default::default() },
            BrushParams { flatten_height: Some(1e30), ..Default::default() },
        ];
        let mut hm = noise_map(16, 16, 2);
        let before = hm.clone();
        for p in &bad {
            assert!(matches!(p.validate(), Err(BrushError::BadParam { .. })), "{p:?}");
            assert!(try_dab(&mut hm, [8.0, 8.0], p, 1.0).is_err());
            assert!(dab(&mut hm, [8.0, 8.0], p, 1.0).is_empty());
            assert!(Stroke::new(p.clone()).is_err());
            assert!(dab_bounds(&hm, [8.0, 8.0], p).is_empty());
        }
        let p = BrushParams::default();
        for amount in [f32::NAN, -1.0, f32::INFINITY, 1e9] {
            assert!(try_dab(&mut hm, [8.0, 8.0], &p, amount).is_err());
        }
        for c in [[f32::NAN, 1.0], [1.0, f32::INFINITY]] {
            assert!(try_dab(&mut hm, c, &p, 1.0).is_err());
        }
        assert_eq!(hm, before);
        // Zero strength or zero time: nothing changes.
        assert!(dab(&mut hm, [8.0, 8.0], &BrushParams { strength: 0.0, ..p.clone() }, 1.0).is_empty());
        assert!(dab(&mut hm, [8.0, 8.0], &p, 0.0).is_empty());
        assert_eq!(hm, before);
    }

    #[test]
    fn dabs_off_or_across_the_border_stay_on_the_map() {
        let base = noise_map(30, 20, 5);
        let mut hm = base.clone();
        let p = BrushParams { radius: 6.0, ..Default::default() };
        assert!(dab(&mut hm, [-7.0, 5.0], &p, 1.0).is_empty());
        assert!(dab(&mut hm, [5.0, 1e30], &p, 1.0).is_empty());
        assert!(dab(&mut hm, [-1e30, -1e30], &p, 1.0).is_empty());
        assert_eq!(hm, base);
        let r = dab(&mut hm, [-2.0, 19.5], &p, 1.0);
        assert_eq!((r.x0, r.y1), (0, 20));
        assert_tight(&base, &hm, r);
        // A radius far larger than the map touches the whole map and nothing else.
        let mut all = base.clone();
        let r =
            dab(&mut all, [15.0, 10.0], &BrushParams { radius: MAX_RADIUS, kind: BrushKind::Smooth, ..p.clone() }, 1.0);
        assert_eq!(r, DirtyRect::full(&base));
        assert_eq!(dab_bounds(&base, [15.0, 10.0], &BrushParams { radius: MAX_RADIUS, ..p }), DirtyRect::full(&base));
        // 1×N maps work too.
        let mut thin = Heightmap::new(1, 9, 1.0).unwrap();
        let r = dab(&mut thin, [0.0, 4.0], &BrushParams { radius: 2.0, ..Default::default() }, 0.1);
        assert_eq!(r, DirtyRect::new(0, 3, 1, 6));
    }

    #[test]
    fn large_dabs_are_identical_at_any_thread_count() {
        let base = noise_map(300, 300, 11);
        let run = |threads: usize, kind: BrushKind| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut hm = base.clone();
                let p = BrushParams { kind, radius: 150.0, strength: 1.0, ..Default::default() };
                let r = dab(&mut hm, [150.0, 140.0], &p, 0.5);
                (hm, r)
            })
        };
        for kind in [BrushKind::Raise, BrushKind::Smooth] {
            let (a, ra) = run(1, kind);
            let (b, rb) = run(4, kind);
            assert_eq!(ra, rb);
            assert!(a.data.iter().zip(&b.data).all(|(x, y)| x.to_bits() == y.to_bits()), "{kind:?}");
            assert_ne!(a, base);
        }
    }

    #[test]
    fn dirty_rect_algebra() {
        let a = DirtyRect::new(2, 3, 5, 7);
        assert_eq!(a.area(), 12);
        assert!(DirtyRect::new(3, 3, 3, 9).is_empty());
        assert_eq!(a.union(DirtyRect::EMPTY), a);
        assert_eq!(DirtyRect::EMPTY.union(a), a);
        assert_eq!(a.union(DirtyRect::new(10, 0, 11, 1)), DirtyRect::new(2, 0, 11, 7));
        assert_eq!(a.intersect(DirtyRect::new(4, 0, 9, 4)), DirtyRect::new(4, 3, 5, 4));
        assert!(a.intersect(DirtyRect::new(5, 0, 9, 9)).is_empty());
        assert_eq!(a.grow(3, 6, 100), DirtyRect::new(0, 0, 6, 10));
        assert!(a.contains(4, 6) && !a.contains(5, 6));
        let chunks: Vec<_> = DirtyRect::new(3, 0, 9, 5).chunks(4).collect();
        assert_eq!(chunks, vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
        assert_eq!(DirtyRect::EMPTY.chunks(4).count(), 0);
    }

    /// Plays a stroke along `path(s)` (s from 0 to 1 over `duration` seconds) sampled at `hz`.
    fn play(
        base: &Heightmap,
        p: &BrushParams,
        hz: f64,
        duration: f64,
        path: impl Fn(f64) -> [f32; 2],
    ) -> (Heightmap, DirtyRect, Stroke) {
        let mut hm = base.clone();
        let mut s = Stroke::new(p.clone()).unwrap();
        let n = (hz * duration).round() as usize;
        let mut rect = DirtyRect::EMPTY;
        for i in 0..=n {
            let t = i as f64 / hz;
            rect = rect.union(s.add_point(&mut hm, path(t / duration), 10.0 + t));
        }
        rect = rect.union(s.finish(&mut hm));
        assert_eq!(rect, s.dirty());
        (hm, rect, s)
    }

    fn max_diff(a: &Heightmap, b: &Heightmap) -> f32 {
        a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
    }

    #[test]
    fn strokes_do_not_depend_on_the_frame_rate() {
        let base = Heightmap::filled(96, 96, 1.0, 0.0).unwrap();
        let p = BrushParams { radius: 8.0, strength: 4.0, ..Default::default() };
        // Straight line: identical dab positions, so results agree to rounding.
        let line = |s: f64| [(16.0 + 60.0 * s) as f32, 40.0];
        let (a, ra, sa) = play(&base, &p, 10.0, 1.0, line);
        let (b, rb, sb) = play(&base, &p, 200.0, 1.0, line);
        assert!(max_diff(&a, &b) < 1e-4, "{}", max_diff(&a, &b));
        assert_eq!(ra, rb);
        // The same dabs, give or take one at the very end (a remainder of rounding size).
        assert!(sa.dab_count().abs_diff(sb.dab_count()) <= 1, "{} vs {}", sa.dab_count(), sb.dab_count());
        // The brush time adds up: volume = strength × duration × Σ weights (same for every dab).
        let wsum: f32 = (-8..=8)
            .flat_map(|y: i32| (-8..=8).map(move |x: i32| (x, y)))
            .map(|(x, y)| p.falloff.weight(((x * x + y * y) as f32).sqrt() / 8.0))
            .sum();
        let vol: f32 = a.data.iter().sum();
        assert!((vol - 4.0 * 1.0 * wsum).abs() < 1e-3 * vol, "{vol} vs {}", 4.0 * wsum);
        // A quarter circle: the 10 Hz polyline cuts corners slightly, the maps still agree closely.
        let arc = |s: f64| {
            let a = s * std::f64::consts::FRAC_PI_2;
            [(20.0 + 50.0 * a.cos()) as f32, (20.0 + 50.0 * a.sin()) as f32]
        };
        let (c, _, _) = play(&base, &p, 10.0, 1.5, arc);
        let (d, _, _) = play(&base, &p, 200.0, 1.5, arc);
        let peak = d.data.iter().cloned().fold(0.0, f32::max);
        assert!(peak > 0.1);
        assert!(max_diff(&c, &d) < 0.05 * peak, "{} vs peak {peak}", max_diff(&c, &d));
        // Holding still for one second raises the centre by strength × 1 s at any rate.
        for hz in [7.0, 60.0, 240.0] {
            let (h, _, s) = play(&base, &p, hz, 1.0, |_| [50.0, 50.0]);
            assert!((h.get(50, 50) - 4.0).abs() < 1e-4, "{hz} Hz: {}", h.get(50, 50));
            assert!(s.dab_count() >= 60);
        }
    }

    #[test]
    fn stroke_spacing_hooks_and_odd_samples() {
        let base = noise_map(64, 64, 4);
        let p = BrushParams { radius: 8.0, spacing: 0.5, ..Default::default() };
        // A fast move (60 nodes in 0.01 s) is dominated by spacing: one dab every 4 nodes.
        let mut hm = base.clone();
        let mut s = Stroke::new(p.clone()).unwrap();
        s.add_point(&mut hm, [2.0, 30.0], 0.0);
        s.add_point(&mut hm, [63.0, 30.0], 0.01);
        assert_eq!(s.dab_count(), 15);
        // The before-hook sees every rectangle before it changes, on the unchanged map.
        let mut hm = base.clone();
        let mut s = Stroke::new(BrushParams { kind: BrushKind::Smooth, ..p.clone() }).unwrap();
        let mut seen = DirtyRect::EMPTY;
        let mut calls = 0;
        for i in 0..20 {
            let pos = [10.0 + 2.0 * i as f32, 20.0 + i as f32];
            s.add_point_with(&mut hm, pos, i as f64 * 0.02, |m, r| {
                calls += 1;
                seen = seen.union(r);
                assert!(!r.is_empty() && r.x1 <= m.width && r.y1 <= m.height);
            });
        }
        assert!(calls > 0);
        let last = s.finish_with(&mut hm, |_, r| seen = seen.union(r));
        assert!(!s.dirty().is_empty());
        assert_eq!(seen.union(s.dirty()), seen, "changes outside the announced rectangles");
        assert_eq!(seen.union(last), seen);
        assert_tight(&base, &hm, s.dirty());
        // Non-finite samples and time going backwards do nothing harmful.
        let mut hm = base.clone();
        let mut s = Stroke::new(p.clone()).unwrap();
        assert!(s.add_point(&mut hm, [f32::NAN, 3.0], 0.0).is_empty());
        assert!(s.add_point(&mut hm, [10.0, 10.0], f64::INFINITY).is_empty());
        s.add_point(&mut hm, [10.0, 10.0], 5.0);
        s.add_point(&mut hm, [10.0, 10.0], 4.0);
        s.add_point(&mut hm, [10.0, 10.0], 1e12);
        s.finish(&mut hm);
        assert!(hm.all_finite());
        assert!((hm.get(10, 10) - base.get(10, 10) - p.strength * MAX_SAMPLE_GAP as f32).abs() < 1e-3);
        // A huge jump is capped in dab count.
        let mut s = Stroke::new(BrushParams { radius: 0.001, spacing: 0.01, ..p }).unwrap();
        s.add_point(&mut hm, [0.0, 0.0], 0.0);
        s.add_point(&mut hm, [1e7, 0.0], 0.0);
        assert!(s.dab_count() <= MAX_DABS_PER_SEGMENT as usize + 1);
    }

    #[test]
    fn flatten_stroke_takes_the_first_dab_height() {
        let base = noise_map(64, 64, 8);
        let p = BrushParams { kind: BrushKind::Flatten, radius: 6.0, strength: 60.0, ..Default::default() };
        let mut hm = base.clone();
        let mut s = Stroke::new(p).unwrap();
        let mut rng = SplitMix64::new(3);
        s.add_point(&mut hm, [20.0, 20.0], 0.0);
        let mut t = 0.0;
        for i in 1..=40 {
            t += 0.02 + 0.01 * rng.next_f64();
            s.add_point(&mut hm, [20.0 + i as f32 * 0.5, 20.0], t);
        }
        s.finish(&mut hm);
        let target = s.flatten_target().unwrap();
        // The first dab lies within one spacing (1.5 nodes) of the start along row 20, where the
        // bilinear surface is piecewise linear between nodes 20, 21 and 22.
        let row = [base.get(20, 20), base.get(21, 20), base.sample(21.5, 20.0)];
        let (lo, hi) = (row.iter().cloned().fold(f32::MAX, f32::min), row.iter().cloned().fold(f32::MIN, f32::max));
        assert!(target >= lo - 1e-5 && target <= hi + 1e-5, "target {target} not in [{lo}, {hi}]");
        assert_ne!(target, base.get(20, 20), "the target comes from the first dab, not the first sample");
        assert!((hm.get(30, 20) - target).abs() < 0.05, "{} vs {target}", hm.get(30, 20));
    }

    #[test]
    fn params_round_trip_and_fill_defaults() {
        let p = BrushParams {
            kind: BrushKind::Flatten,
            falloff: Falloff::Gaussian,
            flatten_height: Some(3.0),
            ..Default::default()
        };
        let s = ron::to_string(&p).unwrap();
        assert_eq!(ron::from_str::<BrushParams>(&s).unwrap(), p);
        let partial: BrushParams = ron::from_str("(radius: 4.0)").unwrap();
        assert_eq!(partial, BrushParams { radius: 4.0, ..Default::default() });
        let j = serde_json::to_string(&DirtyRect::new(1, 2, 3, 4)).unwrap();
        assert_eq!(serde_json::from_str::<DirtyRect>(&j).unwrap(), DirtyRect::new(1, 2, 3, 4));
    }
}
