//! Terrain QA (issue #13, item 6): measures that say whether a heightmap reads as real land, and
//! the fixes for what they find. Pure, Bevy-free and deterministic (no randomness, no parallel
//! reductions whose order could change a result).
//!
//! Every function takes a [`Heightmap`] (heights in metres, `cell_size` metres) and a sea level
//! `sea` (metres). A node is **land** when `h > sea`; nodes at or below the sea, and every node on
//! the map's edge, are **outlets** (base level: water reaching them leaves the land).
//!
//! # Drainage: priority-flood, then D8
//! Depressions are filled first with the priority-flood of Barnes, Lehman & Mulla (2014,
//! "Priority-Flood: An optimal depression-filling and watershed-labeling algorithm for digital
//! elevation models", Computers & Geosciences 62, 117–127), Algorithm 2 with ε ("+ε"): all
//! outlets are seeded into a min-heap; each popped node `c` visits its unvisited 8-neighbours `n`
//! and sets
//!
//! ```text
//! z_n = max(h_n, next_up(z_c))     (ε variant: z_n ≤ z_c  ⇒  z_n = max(z_c + ε, next_up(z_c)))
//! ```
//!
//! so every non-outlet node ends strictly above the node that reached it, and drains. Ties in the
//! heap are broken by node index (deterministic). Outlets never change height, so they are not
//! held in the heap: they are sorted once by the same key (in parallel) and merged with a heap
//! that holds only the flood's land front. The pop order, and so every result, is the single
//! heap's (tested); on an island, where the sea is most of the outlets, the heap stays small.
//!
//! On the filled surface `z` each non-outlet node sends its whole area to its steepest-descent neighbour (D8, O'Callaghan & Mark 1984; the
//! diagonal distance is `√2·Δx`), and areas `A` (m², every node contributing `Δx²`) are summed in
//! reverse pop order, which lists every node after its receiver (pop heights never decrease). The
//! stream-power model's router (`erosion::stream_power::routing`) resolves lakes through a basin
//! graph tied to its edge conditions and scratch; the analysis needs the fill itself (for
//! [`fill_pits`]) and the sea as outlet, so it floods directly.
//!
//! [`drainage_area`] and [`flow_log_area`] (a tile set's flow map, up to 16385²) compute the same
//! bits on every core (issue #36): the filled surface is the unique solution of the flood's
//! equations, which strips of rows reach in parallel (`analysis/strip_flood.rs`, after Barnes
//! 2016), and each node's area is its donors' summed in the order above, by dependency counts
//! (`analysis/accumulation.rs`, after Barnes 2017); both modules say why the bits are the
//! serial flood's, and their tests hold them to it at several thread counts.
//!
//! # Slope–area concavity
//! Flint's law (Flint 1974; Whipple & Tucker 1999, eq. 6) for channels at steady state:
//!
//! ```text
//! S = k_s · A^(−θ)        ⇔        log10 S = log10 k_s − θ · log10 A
//! ```
//!
//! `S` is the slope to the D8 receiver on the *original* heights (`(h_i − h_r)/d`, only `S > 0`
//! counts: filled lake floors have no slope), `A` the drainage area in m². Channel nodes are land,
//! non-outlet nodes with `A ≥ A_c` ([`AnalysisParams::channel_area_m2`]). Raw node clouds are
//! dominated by the many small-area nodes and by noisy slopes, so (as Wobus et al. 2006 and
//! Gailleton et al. 2021 do for χ–elevation and slope–area plots) the points are first averaged in
//! [`AnalysisParams::area_bins`] equal bins of `log10 A`: `(mean log10 A, mean log10 S)` per
//! non-empty bin; then an ordinary least-squares line through the bin means gives `−θ` (slope),
//! `log10 k_s` (intercept, `k_s` in m^(2θ)) and `r²` of the binned fit. At least 3 non-empty bins
//! are needed, otherwise there is no fit (`None`). Real rivers give θ ≈ 0.4–0.5 (Whipple & Tucker
//! 1999; median 0.425, Gailleton et al. 2021).
//!
//! # Single-node pits and spikes
//! An interior land node (not on the edge, `h > sea`) is a pit when `h < min(neighbours) − tol`
//! and a spike when `h > max(neighbours) + tol` (all 8 neighbours, `tol` =
//! [`AnalysisParams::pit_tolerance_m`]).
//!
//! # Drainage density
//! `D_d = Σ_channel d_i / (N_land · Δx²)` (Horton 1945), in 1/m: the flow length of every channel
//! node to its receiver (`Δx` or `√2·Δx`) over the land area.
//!
//! # Grid anisotropy
//! See [`spectrum`]: the windowed power spectrum, axis and diagonal power over other directions at
//! the same wavelengths.
//!
//! # Fixes
//! See [`fix`]: [`fill_pits`] (the priority-flood above), [`breach_pits`] (carving along the
//! flood's path, Soille 2004), [`remove_spikes`] and [`raise_pits`] (single nodes only).

mod accumulation;
pub mod detail;
pub mod fix;
pub mod parity;
pub mod spectrum;
mod strip_flood;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use serde::Serialize;
use thiserror::Error;

use crate::core::Heightmap;

pub use fix::{FixReport, breach_pits, fill_pits, raise_pits, remove_spikes};
pub use spectrum::{Anisotropy, AnisotropyParams, anisotropy};

/// "No node" in `u32` tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Neighbour offsets in a fixed order (NW, N, NE, W, E, SW, S, SE).
const D8: [(isize, isize); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];

/// Calls `f(j, diagonal)` for each in-map 8-neighbour `j` of node `i` of a `w × h` grid.
#[inline]
pub(crate) fn for_neighbours(w: usize, h: usize, i: usize, mut f: impl FnMut(usize, bool)) {
    let (x, y) = ((i % w) as isize, (i / w) as isize);
    for (dx, dy) in D8 {
        let (nx, ny) = (x + dx, y + dy);
        if nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h {
            f(ny as usize * w + nx as usize, dx != 0 && dy != 0);
        }
    }
}

/// Whether node `i` is on the edge of a `w × h` grid.
#[inline]
pub(crate) fn on_edge(w: usize, h: usize, i: usize) -> bool {
    let (x, y) = (i % w, i / w);
    x == 0 || y == 0 || x + 1 == w || y + 1 == h
}

/// Heights as `u32` keys in total order (negative below positive), for the heap.
#[inline]
fn key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
}

/// Tunables of [`analyze`] and [`compare`].
#[derive(Clone, Debug, Serialize)]
pub struct AnalysisParams {
    /// Drainage area from which a node counts as a channel, m² (> 0; default 10 000 m² = 1 ha,
    /// 2 500 nodes at 2 m cells). Used by the concavity fit and the drainage density.
    pub channel_area_m2: f64,
    /// Number of equal `log10 A` bins averaged before the slope–area fit (3…200; default 20).
    pub area_bins: usize,
    /// Height margin of a single-node pit or spike, metres (≥ 0; default 0.5).
    pub pit_tolerance_m: f32,
    /// The anisotropy measure's own tunables.
    pub anisotropy: AnisotropyParams,
}

impl Default for AnalysisParams {
    fn default() -> Self {
        Self { channel_area_m2: 1.0e4, area_bins: 20, pit_tolerance_m: 0.5, anisotropy: AnisotropyParams::default() }
    }
}

/// Why an analysis could not run.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum AnalysisError {
    /// Two maps that must match in size do not.
    #[error("the maps differ in size: {a_w}×{a_h} and {b_w}×{b_h}")]
    SizeMismatch {
        /// Width of the first map, nodes.
        a_w: usize,
        /// Height of the first map, nodes.
        a_h: usize,
        /// Width of the second map, nodes.
        b_w: usize,
        /// Height of the second map, nodes.
        b_h: usize,
    },
    /// A tunable of [`AnalysisParams`] is outside its accepted range.
    #[error("{name} = {value} is out of range ({range})")]
    BadParam {
        /// The field's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The accepted range, as text.
        range: &'static str,
    },
    /// A height (or the sea level) is NaN or infinite.
    #[error("the map holds a height that is not finite")]
    NonFinite,
}

impl From<crate::core::params::BadParam> for AnalysisError {
    fn from(crate::core::params::BadParam { name, value, range }: crate::core::params::BadParam) -> Self {
        AnalysisError::BadParam { name, value, range }
    }
}

impl AnalysisParams {
    /// Checks every tunable against its documented range.
    pub fn validate(&self) -> Result<(), AnalysisError> {
        use crate::core::params::check;
        // `f64::from_bits(1)`, the smallest positive f64: `> 0`.
        check("channel_area_m2", self.channel_area_m2, f64::from_bits(1), f64::MAX, "> 0 m²")?;
        check("area_bins", self.area_bins as f64, 3.0, 200.0, "3…200")?;
        check("pit_tolerance_m", self.pit_tolerance_m as f64, 0.0, f64::MAX, "≥ 0 m")?;
        self.anisotropy.validate()
    }
}

/// Result of a priority-flood: filled heights, the pop order (every node after the node that
/// reached it) and that node (`NONE` for outlets).
pub(crate) struct Flood {
    pub filled: Vec<f32>,
    pub order: Vec<u32>,
    pub parent: Vec<u32>,
}

/// Whether node `i` (height `z`) is an outlet: on the edge or at/below the sea.
#[inline]
pub(crate) fn is_outlet(w: usize, h: usize, i: usize, z: f32, sea: f32) -> bool {
    z <= sea || on_edge(w, h, i)
}

/// Priority-flood (Barnes et al. 2014) from every outlet; `epsilon` (metres, ≥ 0) as in the module
/// doc: 0 fills depressions flat, > 0 leaves a gradient of at least `epsilon` per step (and at
/// least one `f32` step, `next_up`).
pub(crate) fn priority_flood(hm: &Heightmap, sea: f32, epsilon: f32) -> Flood {
    use rayon::prelude::*;
    let (w, h, n) = (hm.width, hm.height, hm.len());
    let mut z = hm.data.clone();
    let mut seen = vec![false; n];
    let mut parent = vec![NONE; n];
    // A node's place in the pop order: its key, then its index.
    let packed = |k: u32, i: usize| (u64::from(k) << 32) | i as u64;
    let mut outlets: Vec<u64> = Vec::new();
    for (i, s) in seen.iter_mut().enumerate() {
        if is_outlet(w, h, i, z[i], sea) {
            *s = true;
            outlets.push(packed(key(z[i]), i));
        }
    }
    outlets.par_sort_unstable();
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut next = 0;
    let mut order = Vec::with_capacity(n);
    loop {
        let top = match (outlets.get(next), heap.peek()) {
            (Some(&o), Some(&Reverse(t))) if t < o => heap.pop().map(|r| r.0),
            (Some(&o), _) => {
                next += 1;
                Some(o)
            }
            (None, _) => heap.pop().map(|r| r.0),
        };
        let Some(top) = top else { break };
        let c = (top & 0xffff_ffff) as usize;
        order.push(c as u32);
        let zc = z[c];
        for_neighbours(w, h, c, |j, _| {
            if seen[j] {
                return;
            }
            seen[j] = true;
            parent[j] = c as u32;
            if z[j] <= zc {
                z[j] = if epsilon > 0.0 { (zc + epsilon).max(zc.next_up()) } else { zc };
            }
            heap.push(Reverse(packed(key(z[j]), j)));
        });
    }
    Flood { filled: z, order, parent }
}

/// D8 drainage on the depression-filled surface.
#[derive(Clone, Debug)]
pub struct Drainage {
    /// D8 receiver of each node (itself for outlets).
    pub receiver: Vec<u32>,
    /// Drainage area, m² (each node contributes `cell_size²`).
    pub area: Vec<f64>,
    /// Slope to the receiver on the original heights (`0` for outlets; may be ≤ 0 in filled lakes).
    pub slope: Vec<f32>,
    /// Horizontal distance to the receiver, metres (`0` for outlets).
    pub length: Vec<f32>,
}

/// The D8 receiver of non-outlet node `i` on the filled surface `z` (steepest descent, the flood's
/// parent, `parent()`, when rounding hid every lower neighbour) and the horizontal distance to it,
/// metres.
#[inline]
pub(crate) fn d8_receiver(
    w: usize,
    h: usize,
    dx: f32,
    z: &[f32],
    i: usize,
    parent: impl FnOnce() -> usize,
) -> (usize, f32) {
    let mut best = (0.0f32, NONE, 0.0f32);
    for_neighbours(w, h, i, |j, diag| {
        let d = if diag { dx * std::f32::consts::SQRT_2 } else { dx };
        let s = (z[i] - z[j]) / d;
        if s > best.0 {
            best = (s, j as u32, d);
        }
    });
    // The flood guarantees a strictly lower neighbour; keep the parent if rounding hid it.
    if best.1 == NONE {
        let p = parent();
        (p, if (p % w != i % w) && (p / w != i / w) { dx * std::f32::consts::SQRT_2 } else { dx })
    } else {
        (best.1 as usize, best.2)
    }
}

/// Drainage area of every node with the sea and the map edges as outlets (see the module doc).
pub fn drainage(hm: &Heightmap, sea: f32) -> Drainage {
    let (w, h, n) = (hm.width, hm.height, hm.len());
    let fl = priority_flood(hm, sea, f32::MIN_POSITIVE);
    let dx = hm.cell_size;
    let mut receiver: Vec<u32> = (0..n as u32).collect();
    let mut slope = vec![0.0f32; n];
    let mut length = vec![0.0f32; n];
    for i in 0..n {
        if is_outlet(w, h, i, hm.data[i], sea) {
            continue;
        }
        let (r, d) = d8_receiver(w, h, dx, &fl.filled, i, || fl.parent[i] as usize);
        receiver[i] = r as u32;
        length[i] = d;
        slope[i] = (hm.data[i] - hm.data[r]) / d;
    }
    let cell = (dx as f64) * (dx as f64);
    let mut area = vec![cell; n];
    for &i in fl.order.iter().rev() {
        let r = receiver[i as usize];
        if r != i {
            area[r as usize] += area[i as usize];
        }
    }
    Drainage { receiver, area, slope, length }
}

/// Peak bytes per node of [`drainage_area`]: the filled heights (4) with the directions, pending
/// counts and `f64` areas of the sum (10); while filling, the filled heights (4) and the strips'
/// heaps and seeds (8 for each node queued at once, at most about one a node).
pub const DRAINAGE_AREA_BYTES_PER_NODE: u64 = 4 + accumulation::BYTES_PER_NODE;

/// [`drainage`]'s `area` alone, bit for bit, without its receiver, slope and length grids, in
/// parallel and with the same bits at any thread count: the filled surface by strips
/// (`strip_flood`), then the areas by dependency counts (`accumulation`; the module docs say why
/// the bits are the serial flood's). For the flow maps of large builds (at most
/// [`DRAINAGE_AREA_BYTES_PER_NODE`] bytes a node, 3.8 GB at 16385², where [`drainage`] holds up
/// to about 53).
pub fn drainage_area(hm: &Heightmap, sea: f32) -> Vec<f64> {
    let z = strip_flood::filled(hm, sea, f32::MIN_POSITIVE);
    accumulation::areas(hm, sea, &z).into_iter().map(|a| f64::from_bits(a.into_inner())).collect()
}

/// Peak bytes per node of [`flow_log_area`]: [`drainage_area`]'s
/// ([`DRAINAGE_AREA_BYTES_PER_NODE`]), and 2 more for the strips' heaps; the kept `f32` grid is
/// made once the filled heights, directions and counts are gone (areas 8 + grid 4).
pub const FLOW_BYTES_PER_NODE: u64 = DRAINAGE_AREA_BYTES_PER_NODE + 2;

/// The log10 of each node's D8 drainage area in m² ([`drainage_area`]), as a map of the same size:
/// an engine tile set's flow map (`core::io::tiles::maps`).
pub fn flow_log_area(map: &Heightmap, sea_level: f32) -> Heightmap {
    use rayon::prelude::*;
    use std::sync::atomic::Ordering;
    let z = strip_flood::filled(map, sea_level, f32::MIN_POSITIVE);
    let area = accumulation::areas(map, sea_level, &z);
    drop(z);
    let data = area
        .par_iter()
        .map(|a| f64::from_bits(a.load(Ordering::Relaxed)).max(f64::MIN_POSITIVE).log10() as f32)
        .collect();
    Heightmap { width: map.width, height: map.height, cell_size: map.cell_size, data }
}

/// The slope–area fit `log10 S = log10 k_s − θ log10 A` (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Concavity {
    /// Concavity index θ (dimensionless).
    pub theta: f64,
    /// Steepness index `k_s`, m^(2θ).
    pub ks: f64,
    /// `r²` of the line through the bin means.
    pub r2: f64,
    /// Channel nodes used.
    pub nodes: usize,
    /// Non-empty bins the line was fitted through.
    pub bins: usize,
}

/// Fits the slope–area relation over the channel nodes of `dr` (land, `A ≥ a_min` m², `S > 0`)
/// with `bins` log-A bins; `None` without at least 3 non-empty bins.
pub fn concavity(hm: &Heightmap, sea: f32, dr: &Drainage, a_min: f64, bins: usize) -> Option<Concavity> {
    let pts: Vec<(f64, f64)> = (0..hm.len())
        .filter(|&i| hm.data[i] > sea && dr.receiver[i] as usize != i && dr.area[i] >= a_min && dr.slope[i] > 0.0)
        .map(|i| (dr.area[i].log10(), (dr.slope[i] as f64).log10()))
        .collect();
    let lo = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if pts.len() < 3 || hi - lo < 1e-9 || bins < 3 {
        return None;
    }
    let mut acc = vec![(0.0f64, 0.0f64, 0usize); bins];
    for &(la, ls) in &pts {
        let b = (((la - lo) / (hi - lo)) * bins as f64).floor().clamp(0.0, (bins - 1) as f64) as usize;
        acc[b].0 += la;
        acc[b].1 += ls;
        acc[b].2 += 1;
    }
    let means: Vec<(f64, f64)> = acc.iter().filter(|a| a.2 > 0).map(|a| (a.0 / a.2 as f64, a.1 / a.2 as f64)).collect();
    if means.len() < 3 {
        return None;
    }
    let m = means.len() as f64;
    let (mx, my) = (means.iter().map(|p| p.0).sum::<f64>() / m, means.iter().map(|p| p.1).sum::<f64>() / m);
    let sxx: f64 = means.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = means.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = means.iter().map(|p| (p.1 - my).powi(2)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let ss_res: f64 = means.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let r2 = if syy > 0.0 { 1.0 - ss_res / syy } else { 1.0 };
    Some(Concavity { theta: -b, ks: 10f64.powf(a), r2, nodes: pts.len(), bins: means.len() })
}

/// Single-node pits and spikes on land (indices, ascending; see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PitsSpikes {
    /// Nodes more than the tolerance below all 8 neighbours.
    pub pits: Vec<usize>,
    /// Nodes more than the tolerance above all 8 neighbours.
    pub spikes: Vec<usize>,
}

/// Finds the interior land nodes more than `tol` metres below (pits) or above (spikes) all 8
/// neighbours.
pub fn pits_and_spikes(hm: &Heightmap, sea: f32, tol: f32) -> PitsSpikes {
    let (w, h) = (hm.width, hm.height);
    let mut out = PitsSpikes::default();
    if w < 3 || h < 3 {
        return out;
    }
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let hi = hm.data[i];
            if hi <= sea {
                continue;
            }
            let (mut lo_n, mut hi_n) = (f32::INFINITY, f32::NEG_INFINITY);
            for_neighbours(w, h, i, |j, _| {
                lo_n = lo_n.min(hm.data[j]);
                hi_n = hi_n.max(hm.data[j]);
            });
            if hi < lo_n - tol {
                out.pits.push(i);
            } else if hi > hi_n + tol {
                out.spikes.push(i);
            }
        }
    }
    out
}

/// Channel length per land area, 1/m (channels: land nodes with `A ≥ a_min` m²); 0 without land.
pub fn drainage_density(hm: &Heightmap, sea: f32, dr: &Drainage, a_min: f64) -> f64 {
    let land = hm.data.iter().filter(|&&v| v > sea).count();
    if land == 0 {
        return 0.0;
    }
    let len: f64 =
        (0..hm.len()).filter(|&i| hm.data[i] > sea && dr.area[i] >= a_min).map(|i| dr.length[i] as f64).sum();
    len / (land as f64 * (hm.cell_size as f64).powi(2))
}

/// Land of `input` (`h > sea`) that is at or below the sea in `output`: `(lost nodes, input land
/// nodes)`.
pub fn land_lost(input: &Heightmap, output: &Heightmap, sea: f32) -> Result<(usize, usize), AnalysisError> {
    same_size(input, output)?;
    let land = input.data.iter().filter(|&&v| v > sea).count();
    let lost = input.data.iter().zip(&output.data).filter(|&(&a, &b)| a > sea && b <= sea).count();
    Ok((lost, land))
}

fn same_size(a: &Heightmap, b: &Heightmap) -> Result<(), AnalysisError> {
    if (a.width, a.height) != (b.width, b.height) {
        return Err(AnalysisError::SizeMismatch { a_w: a.width, a_h: a.height, b_w: b.width, b_h: b.height });
    }
    Ok(())
}

/// What changed between an input map and the analysed one.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Land nodes of the input (`h > sea`).
    pub input_land_nodes: usize,
    /// Input land nodes now at or below the sea.
    pub land_lost_nodes: usize,
    /// `land_lost_nodes / input_land_nodes` (0 without input land).
    pub land_lost_fraction: f64,
    /// Single-node pits of the input, for reference.
    pub input_pits: usize,
    /// Single-node spikes of the input, for reference.
    pub input_spikes: usize,
    /// Concavity of the input.
    pub input_concavity: Option<Concavity>,
    /// Anisotropy of the height change (analysed − input).
    pub change_anisotropy: Option<Anisotropy>,
    /// Mean |Δh| over all nodes, metres.
    pub mean_abs_change_m: f64,
}

/// Everything `talus analyze` reports.
#[derive(Clone, Debug, Serialize)]
pub struct TerrainReport {
    /// Map width, nodes.
    pub width: usize,
    /// Map height, nodes.
    pub height: usize,
    /// Spacing between nodes, metres.
    pub cell_size_m: f32,
    /// The sea level the analysis used, metres.
    pub sea_level_m: f32,
    /// Lowest height, metres.
    pub min_m: f32,
    /// Highest height, metres.
    pub max_m: f32,
    /// Nodes above the sea.
    pub land_nodes: usize,
    /// `land_nodes` over all nodes, 0 to 1.
    pub land_fraction: f64,
    /// Slope–area fit over channels (`None`: too few channel nodes).
    pub concavity: Option<Concavity>,
    /// Single-node pits on land.
    pub pits: usize,
    /// Single-node spikes on land.
    pub spikes: usize,
    /// Channel length per land area, 1/m.
    pub drainage_density_per_m: f64,
    /// Anisotropy of the map's own heights.
    pub anisotropy: Option<Anisotropy>,
    /// Present with [`compare`].
    pub comparison: Option<Comparison>,
    /// The tunables used.
    pub params: AnalysisParams,
}

/// Analyses one map (see the module doc).
pub fn analyze(hm: &Heightmap, sea: f32, p: &AnalysisParams) -> Result<TerrainReport, AnalysisError> {
    p.validate()?;
    if !hm.all_finite() || !sea.is_finite() {
        return Err(AnalysisError::NonFinite);
    }
    let dr = drainage(hm, sea);
    let ps = pits_and_spikes(hm, sea, p.pit_tolerance_m);
    let land = hm.data.iter().filter(|&&v| v > sea).count();
    let s = hm.stats();
    Ok(TerrainReport {
        width: hm.width,
        height: hm.height,
        cell_size_m: hm.cell_size,
        sea_level_m: sea,
        min_m: s.min,
        max_m: s.max,
        land_nodes: land,
        land_fraction: land as f64 / hm.len() as f64,
        concavity: concavity(hm, sea, &dr, p.channel_area_m2, p.area_bins),
        pits: ps.pits.len(),
        spikes: ps.spikes.len(),
        drainage_density_per_m: drainage_density(hm, sea, &dr, p.channel_area_m2),
        anisotropy: anisotropy(&hm.data, hm.width, hm.height, &p.anisotropy),
        comparison: None,
        params: p.clone(),
    })
}

/// Analyses `output` and compares it with `input` (same size): land lost to the sea and the
/// anisotropy of the change `output − input`.
pub fn compare(
    input: &Heightmap,
    output: &Heightmap,
    sea: f32,
    p: &AnalysisParams,
) -> Result<TerrainReport, AnalysisError> {
    same_size(input, output)?;
    let mut rep = analyze(output, sea, p)?;
    if !input.all_finite() {
        return Err(AnalysisError::NonFinite);
    }
    let (lost, land) = land_lost(input, output, sea)?;
    let diff: Vec<f32> = output.data.iter().zip(&input.data).map(|(o, i)| o - i).collect();
    let ps = pits_and_spikes(input, sea, p.pit_tolerance_m);
    let dr = drainage(input, sea);
    rep.comparison = Some(Comparison {
        input_land_nodes: land,
        land_lost_nodes: lost,
        land_lost_fraction: if land > 0 { lost as f64 / land as f64 } else { 0.0 },
        input_pits: ps.pits.len(),
        input_spikes: ps.spikes.len(),
        input_concavity: concavity(input, sea, &dr, p.channel_area_m2, p.area_bins),
        change_anisotropy: anisotropy(&diff, input.width, input.height, &p.anisotropy),
        mean_abs_change_m: diff.iter().map(|d| d.abs() as f64).sum::<f64>() / diff.len() as f64,
    });
    Ok(rep)
}

fn fmt_concavity(c: &Option<Concavity>) -> String {
    match c {
        Some(c) => format!(
            "θ = {:.3}, k_s = {:.3e}, r² = {:.3} ({} channel nodes, {} bins)",
            c.theta, c.ks, c.r2, c.nodes, c.bins
        ),
        None => "no fit (fewer than 3 log-area bins of channel nodes)".into(),
    }
}

fn fmt_aniso(a: &Option<Anisotropy>) -> String {
    match a {
        Some(a) => format!(
            "axes {:.2}×, diagonals {:.2}× the power of other directions ({} bands)",
            a.axis_ratio, a.diagonal_ratio, a.bands
        ),
        None => "not measurable (flat or too small)".into(),
    }
}

impl fmt::Display for TerrainReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "size:              {} × {}, cell {} m, heights {:.2} … {:.2} m",
            self.width, self.height, self.cell_size_m, self.min_m, self.max_m
        )?;
        writeln!(
            f,
            "sea level:         {} m; land {} nodes ({:.1} %)",
            self.sea_level_m,
            self.land_nodes,
            self.land_fraction * 100.0
        )?;
        writeln!(
            f,
            "concavity:         {} (channels: A ≥ {} m²)",
            fmt_concavity(&self.concavity),
            self.params.channel_area_m2
        )?;
        writeln!(
            f,
            "pits / spikes:     {} / {} single nodes on land (> {} m beyond all 8 neighbours)",
            self.pits, self.spikes, self.params.pit_tolerance_m
        )?;
        writeln!(
            f,
            "drainage density:  {:.3e} 1/m ({:.3} km/km²)",
            self.drainage_density_per_m,
            self.drainage_density_per_m * 1000.0
        )?;
        write!(f, "anisotropy (map):  {}", fmt_aniso(&self.anisotropy))?;
        if let Some(c) = &self.comparison {
            writeln!(f)?;
            writeln!(
                f,
                "land lost:         {} of {} input land nodes ({:.2} %)",
                c.land_lost_nodes,
                c.input_land_nodes,
                c.land_lost_fraction * 100.0
            )?;
            writeln!(
                f,
                "input:             pits / spikes {} / {}; concavity {}",
                c.input_pits,
                c.input_spikes,
                fmt_concavity(&c.input_concavity)
            )?;
            writeln!(f, "mean |change|:     {:.3} m", c.mean_abs_change_m)?;
            write!(f, "anisotropy (Δh):   {}", fmt_aniso(&c.change_anisotropy))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A converging valley draining to the south edge: hillslopes fall sideways (slope `side`)
    /// into the channel column `c`, whose area at row `y` is `y·(w − 2)` cells, and the channel
    /// falls `k·A^(−θ)` per cell, so `S = k A^(−θ)` holds exactly on the channel.
    pub(crate) fn valley(w: usize, h: usize, dx: f32, theta: f64, k: f64, side: f32) -> Heightmap {
        let c = w / 2;
        let mut hc = vec![0.0f64; h];
        for y in (0..h - 1).rev() {
            let a = (y.max(1) * (w - 2)) as f64 * (dx as f64).powi(2);
            hc[y] = hc[y + 1] + k * a.powf(-theta) * dx as f64;
        }
        Heightmap::from_fn(w, h, dx, |x, y| hc[y] as f32 + 10.0 + side * dx * x.abs_diff(c) as f32).unwrap()
    }

    #[test]
    fn concavity_is_recovered_from_a_steady_state_valley() {
        for theta in [0.3, 0.45, 0.6] {
            let hm = valley(101, 400, 10.0, theta, 2.0, 0.5);
            let dr = drainage(&hm, 0.0);
            let c = concavity(&hm, 0.0, &dr, 2.0e4, 20).expect("a fit");
            assert!((c.theta - theta).abs() < 0.05, "θ {} for {theta}", c.theta);
            assert!(c.r2 > 0.95 && c.nodes > 100, "{c:?}");
        }
    }

    /// [`drainage_area`] before #36, kept as the reference of the parallel one: the serial flood,
    /// then each non-outlet node's area added to its receiver's in the pop order reversed.
    pub(crate) fn drainage_area_serial(hm: &Heightmap, sea: f32) -> Vec<f64> {
        let (w, h) = (hm.width, hm.height);
        let fl = priority_flood(hm, sea, f32::MIN_POSITIVE);
        let dx = hm.cell_size;
        let cell = (dx as f64) * (dx as f64);
        let mut area = vec![cell; hm.len()];
        for &i in fl.order.iter().rev() {
            let i = i as usize;
            if is_outlet(w, h, i, hm.data[i], sea) {
                continue;
            }
            let (r, _) = d8_receiver(w, h, dx, &fl.filled, i, || fl.parent[i] as usize);
            area[r] += area[i];
        }
        area
    }

    #[test]
    fn drainage_area_alone_equals_the_full_drainage_bit_for_bit() {
        for (seed, sea) in [(3u64, 0.0f32), (11, 20.0), (29, -1e9)] {
            let hm = Heightmap::from_fn(97, 61, 2.5, |x, y| {
                let (fx, fy) = (x as f32, y as f32);
                40.0 * (fx * 0.11).sin() * (fy * 0.07).cos() + 0.3 * fx - 0.2 * fy
                    + 3.0 * crate::core::rng::unit_f32(crate::core::rng::hash2(x as i64, y as i64, seed))
            })
            .unwrap();
            assert_eq!(drainage_area(&hm, sea), drainage(&hm, sea).area, "seed {seed}, sea {sea}");
        }
    }

    /// The flood as one min-heap seeded with every outlet (Barnes et al. 2014, Algorithm 2 + ε):
    /// what [`priority_flood`]'s merge of sorted outlets and a land-front heap must equal.
    fn single_heap_flood(hm: &Heightmap, sea: f32, epsilon: f32) -> Flood {
        let (w, h, n) = (hm.width, hm.height, hm.len());
        let mut z = hm.data.clone();
        let mut seen = vec![false; n];
        let mut parent = vec![NONE; n];
        let mut heap = BinaryHeap::new();
        for (i, s) in seen.iter_mut().enumerate() {
            if is_outlet(w, h, i, z[i], sea) {
                *s = true;
                heap.push(Reverse((key(z[i]), i as u32)));
            }
        }
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse((_, c))) = heap.pop() {
            let c = c as usize;
            order.push(c as u32);
            let zc = z[c];
            for_neighbours(w, h, c, |j, _| {
                if !seen[j] {
                    seen[j] = true;
                    parent[j] = c as u32;
                    if z[j] <= zc {
                        z[j] = if epsilon > 0.0 { (zc + epsilon).max(zc.next_up()) } else { zc };
                    }
                    heap.push(Reverse((key(z[j]), j as u32)));
                }
            });
        }
        Flood { filled: z, order, parent }
    }

    #[test]
    fn the_merged_flood_pops_in_the_single_heaps_order() {
        // A raw fBm with its pits, an island with sea (most outlets inside the map), a flat map
        // (every key ties: index order decides), negative heights.
        let fbm = crate::core::generate::fbm::generate(129, 97, 2.0, &Default::default(), 5).unwrap();
        let isle = Heightmap::from_fn(120, 90, 2.0, |x, y| {
            let r = ((x as f32 - 60.0).powi(2) + (y as f32 - 45.0).powi(2)).sqrt();
            30.0 - r + 2.0 * crate::core::rng::unit_f32(crate::core::rng::hash2(x as i64, y as i64, 9))
        })
        .unwrap();
        let flat = Heightmap::from_fn(40, 30, 1.0, |_, _| 7.0).unwrap();
        let low = Heightmap::from_fn(50, 50, 1.0, |x, y| -100.0 + ((x * 7 + y * 13) % 17) as f32).unwrap();
        for (name, hm, sea) in [
            ("fbm", &fbm, -1e9),
            ("fbm sea", &fbm, 0.0),
            ("island", &isle, 0.0),
            ("flat", &flat, 0.0),
            ("low", &low, -95.0),
        ] {
            for eps in [0.0, f32::MIN_POSITIVE, 0.01] {
                let a = priority_flood(hm, sea, eps);
                let b = single_heap_flood(hm, sea, eps);
                assert_eq!(a.order, b.order, "{name}, ε {eps}: pop order");
                assert_eq!(a.parent, b.parent, "{name}, ε {eps}: parents");
                assert!(
                    a.filled.iter().map(|v| v.to_bits()).eq(b.filled.iter().map(|v| v.to_bits())),
                    "{name}, ε {eps}"
                );
            }
        }
    }

    #[test]
    fn drainage_sums_every_land_node_into_outlets_after_filling() {
        // A bowl: a pit in the middle of a hill must still drain to the edge.
        let hm = Heightmap::from_fn(33, 33, 1.0, |x, y| {
            let r = ((x as f32 - 16.0).powi(2) + (y as f32 - 16.0).powi(2)).sqrt();
            if r < 4.0 { 5.0 } else { 20.0 - r * 0.5 }
        })
        .unwrap();
        let dr = drainage(&hm, 0.0);
        let outlets_area: f64 = (0..hm.len()).filter(|&i| dr.receiver[i] as usize == i).map(|i| dr.area[i]).sum();
        assert_eq!(outlets_area, hm.len() as f64, "all area reaches an outlet");
        for i in 0..hm.len() {
            let mut j = i;
            for _ in 0..hm.len() {
                if dr.receiver[j] as usize == j {
                    break;
                }
                j = dr.receiver[j] as usize;
            }
            assert!(is_outlet(33, 33, j, hm.data[j], 0.0), "node {i} ends at {j}");
        }
    }

    #[test]
    fn pits_and_spikes_are_counted_on_land_only() {
        let mut hm = Heightmap::from_fn(20, 20, 1.0, |x, _| 10.0 + x as f32 * 0.1).unwrap();
        hm.set(5, 5, 2.0); // pit
        hm.set(10, 10, 30.0); // spike
        hm.set(15, 5, 10.0 + 1.5 + 0.4); // 0.4 m over the highest neighbour: within tol
        hm.set(0, 7, 50.0); // on the edge: not counted
        let mut sea = Heightmap::filled(20, 20, 1.0, -5.0).unwrap();
        sea.set(8, 8, -10.0); // pit below the sea: not counted
        let ps = pits_and_spikes(&hm, 0.0, 0.5);
        assert_eq!((ps.pits, ps.spikes), (vec![5 * 20 + 5], vec![10 * 20 + 10]));
        assert_eq!(pits_and_spikes(&sea, 0.0, 0.5), PitsSpikes::default());
    }

    #[test]
    fn land_lost_and_density_and_report() {
        let a = valley(41, 60, 5.0, 0.45, 2.0, 0.5);
        let mut b = a.clone();
        let land = a.data.iter().filter(|&&v| v > 0.0).count();
        for v in b.data.iter_mut().take(41 * 3) {
            *v = -1.0;
        }
        assert_eq!(land_lost(&a, &b, 0.0).unwrap(), (41 * 3, land));
        let rep = compare(&a, &b, 0.0, &AnalysisParams { channel_area_m2: 2000.0, ..Default::default() }).unwrap();
        let c = rep.comparison.as_ref().unwrap();
        assert!((c.land_lost_fraction - 123.0 / land as f64).abs() < 1e-12);
        // One channel column of ~57 nodes over 5 m, on (41·60 − 123) land nodes of 25 m².
        assert!(
            rep.drainage_density_per_m > 0.0 && rep.drainage_density_per_m < 0.01,
            "{}",
            rep.drainage_density_per_m
        );
        let text = rep.to_string();
        assert!(text.contains("land lost") && text.contains("concavity"), "{text}");
        let small = Heightmap::new(4, 4, 1.0).unwrap();
        assert!(matches!(
            compare(&a, &small, 0.0, &AnalysisParams::default()),
            Err(AnalysisError::SizeMismatch { .. })
        ));
        assert!(analyze(&a, 0.0, &AnalysisParams { area_bins: 1, ..Default::default() }).is_err());
    }
}
