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
mod tests;
