//! Flow routing for the stream-power model: D8 receivers, the Braun & Willett stack, drainage
//! area, and lake (depression) routing through a basin graph after Cordonnier, Bovy & Braun 2019;
//! multiple-flow-direction area on top of them in [`Mfd`] (Freeman 1991).
//!
//! Besides the `Drain` edges, any node can be made an outlet ([`Router::add_outlets`]: the sea).
//!
//! ## Receivers (D8)
//! Each node's receiver is its steepest-descent neighbour among the eight around it, the slope to
//! a diagonal neighbour being measured over `√2·Δx`. Only strictly lower neighbours count; ties go
//! to the first in the fixed order NW, N, NE, W, E, SW, S, SE. Nodes on a `Drain` edge are
//! *outlets* (base level): they are their own receiver whatever their neighbours. `Wall` edges
//! have no neighbours beyond them; `Wrap` (on both sides of an axis) makes the opposite edge the
//! neighbour. A non-outlet node with no lower neighbour is a *pit*.
//!
//! ## Stack and drainage area
//! A depth-first walk from every root (outlets and pits, in index order) writes the *stack*:
//! every node appears after its receiver. The donors of a node are the neighbours whose receiver
//! it is, found by looking at the eight neighbours (no donor table to build); roots are walked in
//! parallel chunks whose outputs are concatenated in order. Each root's tree is one contiguous
//! *segment* of the stack. Drainage area (in nodes, every node contributing itself) is summed in
//! reverse stack order, `A_r += A_i` for every `i` with receiver `r` — O(n), exact because counts
//! are integers, and parallel over segments because trees are independent.
//!
//! ## Lakes: the basin graph
//! When pits exist, every root's tree is a *basin*; all outlet basins together form the "outside"
//! node 0 of a graph whose other nodes are the pit basins. Two basins are linked by their lowest
//! *pass*: over every pair of neighbouring nodes `(i, j)` with `i` in one basin and `j` in the
//! other, the smallest `e = max(h_i, h_j)` (ties broken by basin ids, then node indices). The
//! minimum spanning tree of that graph is built by Borůvka rounds: each component not yet joined
//! to 0 finds its lowest outgoing pass by a *local flood* — nodes of the component popped from a
//! min-heap in increasing height, starting at its pits, stopping as soon as the next height
//! exceeds the best pass seen (no later pair can be lower) — and those passes are joined in
//! Kruskal order. A flood therefore visits only the nodes below the spill height (the lake and
//! its rim), not the whole catchment upstream of a pit. Oriented away from node 0, the tree tells
//! each pit basin `b` where it overflows (its pass `(i_b, j_b)`, `i_b` inside `b`) and its water
//! level
//!
//! ```text
//! L_b = max(e_b, L_parent(b)),   L_0 = −∞,
//! ```
//!
//! which is exactly the level a priority flood would fill it to (the minimax path height to the
//! outside). Flow is then rerouted by *carving*: the receiver path from `i_b` down to the pit is
//! reversed, and `i_b` sends its water to `j_b`, so every receiver stays a neighbour and every node
//! drains to an outlet. Nodes of `b` lower than `L_b` are *lake nodes* (found by walking up from
//! the pit through donors below `L_b`: receiver paths descend, so they form a subtree); the
//! stream-power law does not erode them, and the model may fill them with sediment (see `Trap`).
//! Each pit basin's nodes are moved into the stack segment of the outlet it finally drains to
//! (after its parent basin, carved path first), so segments stay whole, independent trees.
//!
//! A map with no `Drain` edge has no outlet: its lowest pit (ties by index) becomes the *terminal*
//! basin, which plays the role of node 0 and keeps everything that reaches it (an endorheic basin).

mod lakes;
mod mfd;

pub(crate) use mfd::{Mfd, pow_unit};

use rayon::prelude::*;

use super::super::{Boundary, EdgeMode, Side};
use crate::core::heightmap::Heightmap;

/// Marker for "no value" in `u32` node tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Grid shape and wrapping, with neighbour lookups.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    pub w: usize,
    pub h: usize,
    pub wrap_x: bool,
    pub wrap_y: bool,
}

impl Grid {
    #[inline]
    pub fn xm(&self, x: usize) -> Option<usize> {
        if x > 0 {
            Some(x - 1)
        } else if self.wrap_x {
            Some(self.w - 1)
        } else {
            None
        }
    }
    #[inline]
    pub fn xp(&self, x: usize) -> Option<usize> {
        if x + 1 < self.w {
            Some(x + 1)
        } else if self.wrap_x {
            Some(0)
        } else {
            None
        }
    }
    #[inline]
    pub fn ym(&self, y: usize) -> Option<usize> {
        if y > 0 {
            Some(y - 1)
        } else if self.wrap_y {
            Some(self.h - 1)
        } else {
            None
        }
    }
    #[inline]
    pub fn yp(&self, y: usize) -> Option<usize> {
        if y + 1 < self.h {
            Some(y + 1)
        } else if self.wrap_y {
            Some(0)
        } else {
            None
        }
    }

    /// Neighbour `k` (in the fixed D8 order NW, N, NE, W, E, SW, S, SE) of node `(x, y)`;
    /// `None` beyond a wall, or where a wrapped axis of length 1 makes it the node itself.
    #[inline]
    pub fn neighbour(&self, x: usize, y: usize, k: usize) -> Option<usize> {
        const D8: [(i8, i8); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];
        let (dx, dy) = D8[k];
        let nx = match dx {
            -1 => self.xm(x)?,
            0 => x,
            _ => self.xp(x)?,
        };
        let ny = match dy {
            -1 => self.ym(y)?,
            0 => y,
            _ => self.yp(y)?,
        };
        let j = ny * self.w + nx;
        (j != y * self.w + x).then_some(j)
    }

    /// Calls `f(j, diagonal)` for each of the (up to 8) neighbours of node `(x, y)`, in the fixed
    /// D8 order. On a wrapped axis of length 1 or 2 a neighbour can repeat or be the node itself.
    #[inline]
    pub fn for_neighbours(&self, x: usize, y: usize, mut f: impl FnMut(usize, bool)) {
        let w = self.w;
        let (xm, xp) = (self.xm(x), self.xp(x));
        if let Some(ym) = self.ym(y) {
            if let Some(xm) = xm {
                f(ym * w + xm, true);
            }
            f(ym * w + x, false);
            if let Some(xp) = xp {
                f(ym * w + xp, true);
            }
        }
        if let Some(xm) = xm {
            f(y * w + xm, false);
        }
        if let Some(xp) = xp {
            f(y * w + xp, false);
        }
        if let Some(yp) = self.yp(y) {
            if let Some(xm) = xm {
                f(yp * w + xm, true);
            }
            f(yp * w + x, false);
            if let Some(xp) = xp {
                f(yp * w + xp, true);
            }
        }
    }
}

/// Per-node outlet flags (1 = on a `Drain` edge) for a `w × h` map.
pub(crate) fn outlet_mask(w: usize, h: usize, b: &Boundary) -> Vec<u8> {
    let l = b.effective(Side::Left) == EdgeMode::Drain;
    let r = b.effective(Side::Right) == EdgeMode::Drain;
    let t = b.effective(Side::Top) == EdgeMode::Drain;
    let bo = b.effective(Side::Bottom) == EdgeMode::Drain;
    let mut m = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let on = (l && x == 0) || (r && x + 1 == w) || (t && y == 0) || (bo && y + 1 == h);
            m[y * w + x] = on as u8;
        }
    }
    m
}

/// A lake that traps sediment: the overflow node of one pit basin (or the terminal basin of a map
/// without outlets), its water level and its lake nodes (`lake_nodes[start..end]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Trap {
    /// The node through which the basin overflows (the pass node `i_b`, or the terminal root).
    pub node: u32,
    /// Water level `L_b` (metres); `+∞` for the terminal basin.
    pub level: f32,
    /// Volume below the level, `Σ (L_b − h_k)` over the lake nodes (metre·nodes); `+∞` for the
    /// terminal basin.
    pub capacity: f64,
    pub start: u32,
    pub end: u32,
}

/// Receivers, stack, drainage area and lakes of one heightmap, with scratch reused across calls.
pub(crate) struct Router {
    pub grid: Grid,
    pub outlet: Vec<u8>,
    pub n_outlets: usize,
    /// Receiver of each node (itself for roots).
    pub rcv: Vec<u32>,
    /// 1 where the receiver is a diagonal neighbour.
    pub diag: Vec<u8>,
    /// Nodes ordered so every node comes after its receiver.
    pub stack: Vec<u32>,
    /// Drainage area in nodes.
    pub area: Vec<u32>,
    /// Lake level of lake nodes, `−∞` elsewhere.
    pub lake_level: Vec<f32>,
    /// Trap index of each trap node, `NONE` elsewhere.
    pub trap_of: Vec<u32>,
    /// One bit per node, set for lake nodes and trap nodes: a compact filter (it stays in cache)
    /// checked before `lake_level` / `trap_of` in the hot loops.
    pub special: Vec<u64>,
    pub traps: Vec<Trap>,
    pub lake_nodes: Vec<u32>,
    /// Pits found by the last routing (before rerouting).
    pub pits: usize,
    // scratch
    /// 1 for nodes on the map's edge (neighbours need the general lookup).
    border: Vec<u8>,
    /// Interior nodes: bit `k` set when neighbour `k` (D8 order) has the node as its receiver
    /// (written by [`Self::build_stack`]; border nodes look at their neighbours instead).
    donors: Vec<u8>,
    roots: Vec<u32>,
    /// Bounds of the stack segments, one per root: segment `s` is `stack[seg[s]..seg[s + 1]]`
    /// and holds that root's whole tree.
    pub seg: Vec<u32>,
    /// Basin id of each stack segment (0 = outside), during lake resolution.
    sid: Vec<u32>,
    /// Flood marks (`== stamp` = seen by the current flood) and the flood's heap.
    visited: Vec<u32>,
    stamp: u32,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    /// Flags the carved path of a basin while its nodes are reordered (reset after use).
    on_path: Vec<u8>,
    path: Vec<u32>,
    new_stack: Vec<u32>,
    new_seg: Vec<u32>,
    /// Segment of every node (written only when there are pits).
    seg_of_node: Vec<u32>,
    // `visited`, `on_path`, `seg_of_node` are allocated the first time pits appear.
}

impl Router {
    pub fn new(w: usize, h: usize, boundary: &Boundary) -> Self {
        let n = w * h;
        let outlet = outlet_mask(w, h, boundary);
        let n_outlets = outlet.iter().filter(|&&o| o != 0).count();
        Self {
            grid: Grid { w, h, wrap_x: boundary.wrap_x(), wrap_y: boundary.wrap_y() },
            outlet,
            n_outlets,
            rcv: vec![0; n],
            diag: vec![0; n],
            stack: Vec::with_capacity(n),
            area: vec![1; n],
            lake_level: vec![f32::NEG_INFINITY; n],
            trap_of: vec![NONE; n],
            special: vec![0; n.div_ceil(64)],
            traps: Vec::new(),
            lake_nodes: Vec::new(),
            pits: 0,
            border: (0..n).map(|i| (i % w == 0 || i % w + 1 == w || i < w || i + w >= n) as u8).collect(),
            donors: vec![0; n],
            roots: Vec::new(),
            seg: Vec::new(),
            sid: Vec::new(),
            visited: Vec::new(),
            stamp: 0,
            heap: std::collections::BinaryHeap::new(),
            on_path: Vec::new(),
            path: Vec::new(),
            new_stack: Vec::new(),
            new_seg: Vec::new(),
            seg_of_node: Vec::new(),
        }
    }

    /// Makes every node with `extra[i] != 0` an outlet too (the sea: base level, its own
    /// receiver, never a pit). `extra` has one entry per node.
    pub fn add_outlets(&mut self, extra: &[u8]) {
        debug_assert_eq!(extra.len(), self.outlet.len());
        for (o, &e) in self.outlet.iter_mut().zip(extra) {
            *o |= (e != 0) as u8;
        }
        self.n_outlets = self.outlet.iter().filter(|&&o| o != 0).count();
    }

    /// Routes flow over `h`: receivers, lakes, stack and drainage area.
    pub fn route(&mut self, h: &[f32]) {
        self.route_without_area(h);
        self.accumulate();
    }

    /// Everything [`Self::route`] does but the drainage area, for callers that accumulate it
    /// themselves (the model does, fused with incision).
    pub fn route_without_area(&mut self, h: &[f32]) {
        debug_assert_eq!(h.len(), self.rcv.len());
        self.clear_lakes();
        self.pits = self.receivers(h);
        if self.pits > 0 && self.seg_of_node.len() != h.len() {
            self.seg_of_node = vec![0; h.len()];
            self.visited = vec![0; h.len()];
            self.on_path = vec![0; h.len()];
        }
        self.build_stack(self.pits > 0);
        if self.pits > 0 {
            self.resolve_lakes(h);
        }
    }

    #[inline(never)]
    fn clear_lakes(&mut self) {
        for t in &self.traps {
            self.trap_of[t.node as usize] = NONE;
            self.special[t.node as usize >> 6] = 0;
        }
        for &k in &self.lake_nodes {
            self.lake_level[k as usize] = f32::NEG_INFINITY;
            self.special[k as usize >> 6] = 0;
        }
        self.traps.clear();
        self.lake_nodes.clear();
    }

    /// D8 steepest-descent receivers, rows in parallel; also lists the roots (outlets and pits)
    /// in index order. Returns the number of pits.
    #[inline(never)]
    fn receivers(&mut self, h: &[f32]) -> usize {
        let g = self.grid;
        let w = g.w;
        let outlet = &self.outlet;
        let rows: Vec<(usize, Vec<u32>)> = self
            .rcv
            .par_chunks_mut(w)
            .zip(self.diag.par_chunks_mut(w))
            .enumerate()
            .map(|(y, (rrow, drow))| {
                let pits = receivers_row(&g, outlet, h, y, rrow, drow);
                let base = (y * w) as u32;
                let roots = (base..).zip(rrow.iter()).filter(|&(i, &r)| r == i).map(|(i, _)| i).collect();
                (pits, roots)
            })
            .collect();
        self.roots.clear();
        let mut pits = 0;
        for (p, roots) in rows {
            pits += p;
            self.roots.extend_from_slice(&roots);
        }
        pits
    }

    /// [`Self::donors`] of the interior nodes, rows in parallel: one byte per node for the stack's
    /// walk to read, rather than the receivers of eight neighbours (a loop per direction over
    /// the row, which vectorises).
    #[inline(never)]
    fn donor_masks(&mut self) {
        let g = self.grid;
        let (w, h) = (g.w, g.h);
        let rcv = &self.rcv;
        if w < 3 || h < 3 {
            return;
        }
        let off = mfd::offsets(w);
        self.donors.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            if y == 0 || y + 1 == h {
                return;
            }
            let c = y * w + 1;
            let run = &mut row[1..w - 1];
            run.fill(0);
            for (k, &o) in off.iter().enumerate() {
                let from = (c as isize + o) as usize;
                for (x, (d, &r)) in run.iter_mut().zip(&rcv[from..from + w - 2]).enumerate() {
                    *d |= ((r == (c + x) as u32) as u8) << k;
                }
            }
        });
    }

    /// The depth-first stack from every root (as listed by [`Self::receivers`], in index order):
    /// roots in parallel chunks, each walking its trees (the donors of `v` are the neighbours
    /// whose receiver is `v`, pushed in the fixed D8 order), chunks concatenated in order. Fills
    /// `seg` with the segment bounds (one per root) and, when `label_segments`, `seg_of_node`
    /// with every node's segment.
    #[inline(never)]
    fn build_stack(&mut self, label_segments: bool) {
        self.donor_masks();
        let (g, rcv, border, donors) = (self.grid, &self.rcv, &self.border, &self.donors);
        let offs = mfd::offsets(g.w);
        let seg_of_node = Shared::new(&mut self.seg_of_node);
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = self
            .roots
            .par_chunks(ROOT_CHUNK)
            .enumerate()
            .map(|(c, roots)| {
                let mut out = Vec::new();
                let mut starts = Vec::with_capacity(roots.len());
                let mut dfs = Vec::new();
                let mut near = [0usize; 8];
                for (k, &root) in roots.iter().enumerate() {
                    starts.push(out.len() as u32);
                    let s = (c * ROOT_CHUNK + k) as u32;
                    dfs.push(root);
                    while let Some(v) = dfs.pop() {
                        out.push(v);
                        let vi = v as usize;
                        if label_segments {
                            // SAFETY: every node lies in exactly one root's tree, and each root
                            // is walked by exactly one task, so no two tasks write the same entry.
                            unsafe { seg_of_node.write(vi, s) };
                        }
                        if border[vi] == 0 {
                            // Interior node: its donors' directions, in the D8 order.
                            let mut m = donors[vi];
                            while m != 0 {
                                let k = m.trailing_zeros() as usize;
                                m &= m - 1;
                                dfs.push((vi as isize + offs[k]) as u32);
                            }
                        } else {
                            // Border node: wraps may repeat a neighbour (or give the node
                            // itself) on axes of length 1 or 2; take each once, never itself.
                            let mut m = 0;
                            g.for_neighbours(vi % g.w, vi / g.w, |u, _| {
                                if u != vi && rcv[u] == v && !near[..m].contains(&u) {
                                    near[m] = u;
                                    m += 1;
                                }
                            });
                            dfs.extend(near[..m].iter().map(|&u| u as u32));
                        }
                    }
                }
                (out, starts)
            })
            .collect();
        self.stack.clear();
        self.seg.clear();
        for (out, starts) in chunks {
            let base = self.stack.len() as u32;
            self.seg.extend(starts.iter().map(|s| s + base));
            self.stack.extend_from_slice(&out);
        }
        self.seg.push(self.stack.len() as u32);
    }

    /// Drainage area in nodes: reverse stack order within each segment, segments in parallel.
    #[inline(never)]
    fn accumulate(&mut self) {
        let (rcv, stack, seg) = (&self.rcv, &self.stack, &self.seg);
        let area = Shared::new(&mut self.area);
        (0..seg.len() - 1).into_par_iter().for_each(|s| {
            let nodes = &stack[seg[s] as usize..seg[s + 1] as usize];
            // SAFETY: a segment holds whole trees (every node with its receiver), segments are
            // disjoint, and each is handled by one task: the entries touched here (nodes of the
            // segment) are touched by no other task.
            unsafe {
                for &v in nodes {
                    area.write(v as usize, 1);
                }
                for &v in nodes.iter().rev() {
                    let i = v as usize;
                    let r = rcv[i] as usize;
                    if r != i {
                        area.write(r, area.read(r) + area.read(i));
                    }
                }
            }
        });
    }

    /// True when node `i` may be a lake node or a trap node (see `special`).
    #[inline]
    pub fn is_special(&self, i: usize) -> bool {
        self.special[i >> 6] >> (i & 63) & 1 != 0
    }
}

/// Roots walked per parallel task when building the stack.
const ROOT_CHUNK: usize = 64;

/// A raw view of a slice that parallel tasks may write through, each task touching its own
/// disjoint set of entries (every use states why the sets are disjoint).
#[derive(Clone, Copy)]
pub(crate) struct Shared<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: `Shared` is a pointer and a length into a slice its creator keeps borrowed while tasks
// run; every access goes through an `unsafe` method whose caller guarantees disjoint per-task
// entries (see the uses), and `T: Send`, so handing entries to another thread is sound.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as for `Send`: `&Shared` only gives access through those `unsafe` methods, whose
// contract (no concurrent access to one entry) rules out data races.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T: Copy> Shared<T> {
    pub fn new(v: &mut [T]) -> Self {
        Self { ptr: v.as_mut_ptr(), len: v.len() }
    }
    /// # Safety
    /// `i < len`, and no other task accesses entry `i` concurrently.
    #[inline]
    pub unsafe fn read(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        // SAFETY: `i < len` (caller), inside the slice `ptr` was taken from; no concurrent access
        // to entry `i` (caller).
        unsafe { *self.ptr.add(i) }
    }
    /// # Safety
    /// `i < len`, and no other task accesses entry `i` concurrently.
    #[inline]
    pub unsafe fn write(&self, i: usize, v: T) {
        debug_assert!(i < self.len);
        // SAFETY: `i < len` (caller), inside the slice `ptr` was taken from; no other task
        // accesses entry `i` meanwhile (caller).
        unsafe { *self.ptr.add(i) = v }
    }
    /// # Safety
    /// The range is in bounds and no other task accesses it concurrently.
    #[inline]
    #[allow(clippy::mut_from_ref)] // the point of the type; the contract above makes it sound
    pub unsafe fn slice_mut(&self, start: usize, end: usize) -> &mut [T] {
        debug_assert!(start <= end && end <= self.len);
        // SAFETY: `start <= end <= len` (caller), so the range lies in the original slice (valid,
        // aligned, initialised `T`s); no one else accesses it while the returned slice lives
        // (caller), so the `&mut` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), end - start) }
    }
}

/// True when `j` is a diagonal neighbour of `i`.
#[inline]
fn is_diag(g: &Grid, i: usize, j: usize) -> bool {
    i % g.w != j % g.w && i / g.w != j / g.w
}

/// Receivers of row `y`. Returns the number of pits in the row.
#[inline(never)]
fn receivers_row(g: &Grid, outlet: &[u8], h: &[f32], y: usize, rrow: &mut [u32], drow: &mut [u8]) -> usize {
    let w = g.w;
    let base = y * w;
    let orow = &outlet[base..base + w];
    let mut pits = 0;
    // Interior fast path: both neighbour rows exist and 1 ≤ x ≤ w − 2, so the 3×3 window is
    // three `windows(3)` of the rows and no index can leave them.
    if let (Some(ym), Some(yp), true) = (g.ym(y), g.yp(y), w >= 3) {
        let up = &h[ym * w..ym * w + w];
        let cur = &h[base..base + w];
        let dn = &h[yp * w..yp * w + w];
        // Candidate k, in the D8 order, is node `rows[k] + x + cols[k] − 1`.
        let rows = [ym * w, ym * w, ym * w, base, base, yp * w, yp * w, yp * w];
        const COLS: [usize; 8] = [0, 1, 2, 0, 2, 0, 1, 2];
        let wins = up.windows(3).zip(cur.windows(3)).zip(dn.windows(3));
        let outs = rrow[1..w - 1].iter_mut().zip(drow[1..w - 1].iter_mut()).zip(&orow[1..w - 1]);
        for (x, (((u, c), d), ((r, dg), &o))) in (1..w - 1).zip(wins.zip(outs)) {
            let i = base + x;
            if o != 0 {
                *r = i as u32;
                *dg = 0;
                continue;
            }
            let hi = c[1];
            const D: f32 = std::f32::consts::FRAC_1_SQRT_2;
            let drops = [
                (hi - u[0]) * D,
                hi - u[1],
                (hi - u[2]) * D,
                hi - c[0],
                hi - c[2],
                (hi - d[0]) * D,
                hi - d[1],
                (hi - d[2]) * D,
            ];
            let mut best = 0.0f32;
            let mut k = 8usize;
            for (j, &s) in drops.iter().enumerate() {
                if s > best {
                    best = s;
                    k = j;
                }
            }
            if k == 8 {
                *r = i as u32;
                *dg = 0;
                pits += 1;
            } else {
                *r = (rows[k] + x + COLS[k] - 1) as u32;
                *dg = (k == 0 || k == 2 || k == 5 || k == 7) as u8;
            }
        }
        for x in [0, w - 1] {
            pits += receiver_generic(g, orow[x] != 0, h, x, y, &mut rrow[x], &mut drow[x]);
        }
    } else {
        for x in 0..w {
            pits += receiver_generic(g, orow[x] != 0, h, x, y, &mut rrow[x], &mut drow[x]);
        }
    }
    pits
}

/// Receiver of one node through the general neighbour lookup (borders, wraps, tiny maps).
/// Returns 1 for a pit.
fn receiver_generic(g: &Grid, outlet: bool, h: &[f32], x: usize, y: usize, r: &mut u32, dg: &mut u8) -> usize {
    const D: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let i = y * g.w + x;
    *r = i as u32;
    *dg = 0;
    if outlet {
        return 0;
    }
    let hi = h[i];
    let mut best = 0.0f32;
    g.for_neighbours(x, y, |j, diag| {
        let drop = hi - h[j];
        let s = if diag { drop * D } else { drop };
        if s > best {
            best = s;
            *r = j as u32;
            *dg = diag as u8;
        }
    });
    (*r as usize == i) as usize
}

/// Flow routing of a heightmap as the stream-power model sees it (see [`route_flow`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRouting {
    /// Receiver of each node; outlets (and, on a map without outlets, the terminal pit) are their
    /// own receiver.
    pub receivers: Vec<u32>,
    /// Nodes in an order where every node comes after its receiver.
    pub stack: Vec<u32>,
    /// Drainage area in nodes (each node counts itself).
    pub area: Vec<u32>,
    /// Water level of lake nodes (m), `−∞` for nodes not in a lake.
    pub lake_level: Vec<f32>,
    /// 1 for outlet nodes (on a `Drain` edge).
    pub outlet: Vec<u8>,
    /// Pits (non-outlet nodes without a lower neighbour) before lake routing.
    pub pits: usize,
}

/// D8 receivers, stack, drainage area and lakes of `hm` under `boundary` (routing module doc).
pub fn route_flow(hm: &Heightmap, boundary: Boundary) -> FlowRouting {
    let mut r = Router::new(hm.width, hm.height, &boundary);
    r.route(&hm.data);
    FlowRouting {
        receivers: r.rcv,
        stack: r.stack,
        area: r.area,
        lake_level: r.lake_level,
        outlet: r.outlet,
        pits: r.pits,
    }
}

#[cfg(test)]
mod tests;
