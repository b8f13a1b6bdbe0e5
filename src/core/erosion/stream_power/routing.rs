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

use rayon::prelude::*;

use super::super::{Boundary, EdgeMode, Side};

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

/// A pass between basins `lo < hi` (basin ids, 0 = outside): node `a` lies in `hi`, `b` in `lo`.
#[derive(Clone, Copy, Debug)]
struct Edge {
    e: f32,
    lo: u32,
    hi: u32,
    a: u32,
    b: u32,
}

fn cmp_edge(x: &Edge, y: &Edge) -> std::cmp::Ordering {
    x.e.total_cmp(&y.e).then(x.lo.cmp(&y.lo)).then(x.hi.cmp(&y.hi)).then(x.a.cmp(&y.a)).then(x.b.cmp(&y.b))
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

    /// The depth-first stack from every root (as listed by [`Self::receivers`], in index order):
    /// roots in parallel chunks, each walking its trees (the donors of `v` are the neighbours
    /// whose receiver is `v`, pushed in the fixed D8 order), chunks concatenated in order. Fills
    /// `seg` with the segment bounds (one per root) and, when `label_segments`, `seg_of_node`
    /// with every node's segment.
    #[inline(never)]
    fn build_stack(&mut self, label_segments: bool) {
        let (g, rcv, border) = (self.grid, &self.rcv, &self.border);
        let w = g.w as isize;
        let offs: [isize; 8] = [-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1];
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
                            // Interior node: all eight neighbours exist at fixed offsets.
                            for o in offs {
                                let u = (vi as isize + o) as usize;
                                if rcv[u] == v {
                                    dfs.push(u as u32);
                                }
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

    /// Basin graph, minimum spanning tree, lake levels, traps, carving and the new stack (module
    /// doc). Apart from one copy of the stack, the work is proportional to the lakes: passes are
    /// found by local floods that stop at the spill height, lake nodes by walking up from the pit.
    #[inline(never)]
    fn resolve_lakes(&mut self, h: &[f32]) {
        let nseg = self.roots.len();
        // Terminal basin when there is no outlet: the lowest root (ties: lowest index).
        let terminal = if self.n_outlets == 0 {
            let mut best = 0usize;
            for s in 1..nseg {
                if h[self.roots[s] as usize] < h[self.roots[best] as usize] {
                    best = s;
                }
            }
            Some(best)
        } else {
            None
        };
        // Basin ids: 0 = outside (all outlet basins, or the terminal basin), 1.. = pit basins.
        let mut seg_of = vec![0u32; 1];
        self.sid.clear();
        for s in 0..nseg {
            let outside = self.outlet[self.roots[s] as usize] != 0 || Some(s) == terminal;
            self.sid.push(if outside { 0 } else { seg_of.len() as u32 });
            if !outside {
                seg_of.push(s as u32);
            }
        }
        let nb = seg_of.len();
        // Minimum spanning tree of the basin graph by Borůvka rounds: every component not yet
        // joined to 0 finds its lowest pass by a local flood, and those passes are joined in
        // Kruskal order. Each round at least halves the components left.
        let mut uf = UnionFind::new(nb);
        let mut tree: Vec<Edge> = Vec::with_capacity(nb.saturating_sub(1));
        let mut members: Vec<(u32, u32)> = Vec::new();
        let mut cands: Vec<Edge> = Vec::new();
        loop {
            let root0 = uf.find(0);
            members.clear();
            for b in 1..nb {
                let r = uf.find(b);
                if r != root0 {
                    members.push((r as u32, b as u32));
                }
            }
            if members.is_empty() {
                break;
            }
            // Components in order of their smallest basin id, members in id order.
            members.sort_unstable_by_key(|&(r, b)| (r, b));
            let mut groups: Vec<&[(u32, u32)]> = members.chunk_by(|x, y| x.0 == y.0).collect();
            groups.sort_unstable_by_key(|g| g[0].1);
            cands.clear();
            for g in groups {
                if let Some(e) = self.lowest_pass(g, &mut uf, &seg_of, h) {
                    cands.push(e);
                }
            }
            if cands.is_empty() {
                // Components without any way out (impossible on a connected grid).
                break;
            }
            cands.sort_unstable_by(cmp_edge);
            for e in &cands {
                if uf.union(e.lo as usize, e.hi as usize) {
                    tree.push(*e);
                }
            }
        }
        // Orient from 0: CSR adjacency of the tree, then breadth-first (parents before children).
        // Each pit basin also learns the outside segment it finally drains into (`home`).
        let mut deg = vec![0u32; nb + 1];
        for e in &tree {
            deg[e.lo as usize + 1] += 1;
            deg[e.hi as usize + 1] += 1;
        }
        for k in 0..nb {
            deg[k + 1] += deg[k];
        }
        let mut cur = deg.clone();
        let mut adj = vec![0u32; 2 * tree.len()];
        for (t, e) in tree.iter().enumerate() {
            for end in [e.lo, e.hi] {
                adj[cur[end as usize] as usize] = t as u32;
                cur[end as usize] += 1;
            }
        }
        let mut level = vec![f32::NEG_INFINITY; nb];
        let mut pass = vec![(NONE, NONE); nb];
        let mut home = vec![NONE; nb];
        let mut seen = vec![false; nb];
        let mut order = Vec::with_capacity(nb);
        order.push(0u32);
        seen[0] = true;
        let mut qi = 0;
        while qi < order.len() {
            let u = order[qi] as usize;
            qi += 1;
            for &t in &adj[deg[u] as usize..deg[u + 1] as usize] {
                let e = tree[t as usize];
                // The child and its pass node on each side.
                let (c, ic, jp) = if e.lo as usize == u { (e.hi, e.a, e.b) } else { (e.lo, e.b, e.a) };
                let c = c as usize;
                if seen[c] {
                    continue;
                }
                seen[c] = true;
                level[c] = if u == 0 { e.e } else { e.e.max(level[u]) };
                pass[c] = (ic, jp);
                home[c] = if u == 0 { self.seg_of_node[jp as usize] } else { home[u] };
                order.push(c as u32);
            }
        }
        // Lakes: the nodes of each basin below its level. Receiver paths descend to the pit, so
        // they form a subtree at the pit: walk up from it through donors while below the level.
        let g = self.grid;
        for &p in &order[1..] {
            let p = p as usize;
            let (ic, lev) = (pass[p].0, level[p]);
            let pit = self.roots[seg_of[p] as usize] as usize;
            let start = self.lake_nodes.len();
            let mut cap = 0.0f64;
            if h[pit] < lev {
                self.lake_nodes.push(pit as u32);
                let mut k = start;
                while k < self.lake_nodes.len() {
                    let v = self.lake_nodes[k] as usize;
                    k += 1;
                    cap += lev as f64 - h[v] as f64;
                    self.lake_level[v] = lev;
                    let (rcv, sid, son, lake) = (&self.rcv, &self.sid, &self.seg_of_node, &mut self.lake_nodes);
                    g.for_neighbours(v % g.w, v / g.w, |u, _| {
                        if u != v && rcv[u] as usize == v && h[u] < lev && sid[son[u] as usize] as usize == p {
                            lake.push(u as u32);
                        }
                    });
                }
            }
            let end = self.lake_nodes.len() as u32;
            self.trap_of[ic as usize] = self.traps.len() as u32;
            self.traps.push(Trap { node: ic, level: lev, capacity: cap, start: start as u32, end });
        }
        // Pit basins grouped by home segment, in breadth-first order within a group.
        let mut first = vec![0u32; nseg + 1];
        for &c in &order[1..] {
            first[home[c as usize] as usize + 1] += 1;
        }
        for s in 0..nseg {
            first[s + 1] += first[s];
        }
        let mut fill = first.clone();
        let mut grouped = vec![0u32; order.len() - 1];
        for &c in &order[1..] {
            let hs = home[c as usize] as usize;
            grouped[fill[hs] as usize] = c;
            fill[hs] += 1;
        }
        // The new stack, one segment per outside root: its old segment, then each of its pit
        // basins (after their parents): the carved path first (outflow node down to the pit),
        // then the basin's other nodes in their old order (their receivers are unchanged and come
        // earlier in that order, or lie on the path).
        self.new_stack.clear();
        self.new_seg.clear();
        for s in 0..nseg {
            if self.sid[s] != 0 {
                continue;
            }
            self.new_seg.push(self.new_stack.len() as u32);
            self.new_stack.extend_from_slice(&self.stack[self.seg[s] as usize..self.seg[s + 1] as usize]);
            for &p in &grouped[first[s] as usize..first[s + 1] as usize] {
                let p = p as usize;
                let (ic, jp) = pass[p];
                let ps = seg_of[p] as usize;
                // Carve: reverse the receiver path ic → … → pit and send ic to jp.
                self.path.clear();
                let mut prev = jp as usize;
                let mut at = ic as usize;
                loop {
                    let next = self.rcv[at] as usize;
                    self.rcv[at] = prev as u32;
                    self.diag[at] = is_diag(&g, at, prev) as u8;
                    self.path.push(at as u32);
                    self.on_path[at] = 1;
                    if next == at {
                        break;
                    }
                    prev = at;
                    at = next;
                }
                self.new_stack.extend_from_slice(&self.path);
                let on_path = &self.on_path;
                let nodes = &self.stack[self.seg[ps] as usize..self.seg[ps + 1] as usize];
                self.new_stack.extend(nodes.iter().filter(|&&v| on_path[v as usize] == 0));
                for &v in &self.path {
                    self.on_path[v as usize] = 0;
                }
            }
        }
        // Basins the spanning tree did not reach (impossible on a connected grid) keep their pit
        // as a root rather than being dropped from the stack.
        for p in 1..nb {
            if !seen[p] {
                let s = seg_of[p] as usize;
                self.new_seg.push(self.new_stack.len() as u32);
                self.new_stack.extend_from_slice(&self.stack[self.seg[s] as usize..self.seg[s + 1] as usize]);
            }
        }
        self.new_seg.push(self.new_stack.len() as u32);
        if let Some(t) = terminal {
            // The terminal basin keeps whatever reaches its root, filled from the bottom over all
            // its nodes; their lake level stays −∞: they erode normally and hold no standing water.
            let root = self.roots[t];
            let start = self.lake_nodes.len() as u32;
            let (a, b) = (self.seg[t] as usize, self.seg[t + 1] as usize);
            self.lake_nodes.extend_from_slice(&self.stack[a..b]);
            let end = self.lake_nodes.len() as u32;
            self.trap_of[root as usize] = self.traps.len() as u32;
            self.traps.push(Trap { node: root, level: f32::INFINITY, capacity: f64::INFINITY, start, end });
        }
        for t in &self.traps {
            self.special[t.node as usize >> 6] |= 1 << (t.node & 63);
        }
        for &k in &self.lake_nodes {
            self.special[k as usize >> 6] |= 1 << (k & 63);
        }
        std::mem::swap(&mut self.stack, &mut self.new_stack);
        std::mem::swap(&mut self.seg, &mut self.new_seg);
    }

    /// True when node `i` may be a lake node or a trap node (see `special`).
    #[inline]
    pub fn is_special(&self, i: usize) -> bool {
        self.special[i >> 6] >> (i & 63) & 1 != 0
    }

    /// The lowest pass out of the component made of the basins `group` (pairs `(uf root,
    /// basin)`): a flood from their pits in increasing height, over nodes of the component,
    /// stopping once the next height exceeds the best pass found (no later pair can be lower).
    /// Passes compare by `(e, lo, hi, a, b)`, so ties resolve the same way on every run.
    fn lowest_pass(&mut self, group: &[(u32, u32)], uf: &mut UnionFind, seg_of: &[u32], h: &[f32]) -> Option<Edge> {
        let g = self.grid;
        let comp = group[0].0 as usize;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.visited.iter_mut().for_each(|v| *v = 0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        self.heap.clear();
        for &(_, b) in group {
            let pit = self.roots[seg_of[b as usize] as usize];
            self.visited[pit as usize] = stamp;
            self.heap.push(std::cmp::Reverse((height_key(h[pit as usize]), pit)));
        }
        let mut best: Option<Edge> = None;
        while let Some(std::cmp::Reverse((_, c))) = self.heap.pop() {
            let c = c as usize;
            let hc = h[c];
            if best.is_some_and(|b| hc > b.e) {
                break;
            }
            let lc = self.sid[self.seg_of_node[c] as usize];
            let (sid, son, visited, heap) = (&self.sid, &self.seg_of_node, &mut self.visited, &mut self.heap);
            g.for_neighbours(c % g.w, c / g.w, |u, _| {
                if visited[u] == stamp {
                    return;
                }
                let lu = sid[son[u] as usize];
                if uf.find(lu as usize) == comp {
                    visited[u] = stamp;
                    heap.push(std::cmp::Reverse((height_key(h[u]), u as u32)));
                } else {
                    let (lo, hi, a, b) =
                        if lu < lc { (lu, lc, c as u32, u as u32) } else { (lc, lu, u as u32, c as u32) };
                    let e = Edge { e: hc.max(h[u]), lo, hi, a, b };
                    if best.is_none_or(|b| cmp_edge(&e, &b).is_lt()) {
                        best = Some(e);
                    }
                }
            });
        }
        best
    }
}

/// A node of [`Mfd`] with no edge (a root).
const EDGES_NONE: u8 = 0;
/// All of its area to the (lake-rerouted) D8 receiver.
const EDGES_SINGLE: u8 = 1;
/// Split over its lower neighbours.
const EDGES_MULTI: u8 = 2;
/// In-degree marker of a node already taken by the sort.
const TAKEN: u8 = u8::MAX;

/// Multiple-flow-direction drainage area (Freeman 1991, "Calculating catchment area with
/// divergent flow based on a regular grid", *Computers & Geosciences* 17(3), FD8), on top of a
/// [`Router`]'s D8 receivers and lakes.
///
/// ## Edges
/// Let `z = max(h, L)` be the lake-filled surface (`L` the lake level of lake nodes, `−∞`
/// elsewhere). A node that is neither a root, a lake node nor a lake's overflow (trap) node
/// sends its area to every neighbour `j` strictly lower on `z`, in proportion to
///
/// ```text
/// w_j = S_j^p / Σ_k S_k^p,      S_j = (h_i − z_j) / d_j     (d = Δx or √2·Δx)
/// ```
///
/// (`p` the exponent; Freeman uses 1.1). Lake nodes, trap nodes and nodes with no strictly lower
/// neighbour on `z` keep the router's single receiver (lakes stay rerouted through their pass;
/// the router keeps every receiver a neighbour). The powers are taken of `S_j / max_k S_k ∈ (0, 1]`
/// with [`pow_unit`] (relative error below 3·10⁻⁵, far inside what the weights need; the
/// library `powf` was a quarter of the step). Edges and weights are computed for all nodes in
/// parallel rows; each node's depend on its own neighbourhood only.
///
/// ## Order and area, in one pass
/// Every node must come after all its donors. The in-degrees are counted over the edges, then the
/// nodes are taken by a depth-first Kahn sort: the nodes are scanned in index order, and each one
/// with no donor left starts a walk that takes a node, hands its (now final) area `A_i` to its
/// receivers, `A_j += w_j·A_i`, and goes on with the receivers that have no donor left (last
/// released first, so a walk runs down its valley and the reads stay near each other). Serial,
/// so the order and every f64 sum never depend on the thread count. Every node contributes
/// itself (`A_i = 1` node); the last edge of a node takes the remainder `A_i − Σ_{earlier} w·A_i`,
/// so the total area arriving at the roots equals the node count up to f64 rounding.
///
/// Equal heights can close a cycle through single-receiver edges; the nodes the sort cannot take
/// are then switched to their single D8 receiver and the pass is repeated (each round removes at
/// least one multi-edge node of a cycle, and the D8 receivers alone are acyclic), so every node
/// is ordered.
pub(crate) struct Mfd {
    kind: Vec<u8>,
    /// Multi-edge nodes: bit `k` set when the node sends area to its neighbour `k` (D8 order).
    mask: Vec<u8>,
    /// Multi-edge nodes: the weight of the edge to neighbour `k` (meaningful where `mask` has
    /// bit `k`).
    wts: Vec<[f32; 8]>,
    indeg: Vec<u8>,
    walk: Vec<u32>,
    /// Nodes, every donor before its receivers.
    pub order: Vec<u32>,
    /// Drainage area in nodes.
    pub area: Vec<f64>,
    /// Multi-edge nodes switched to their D8 receiver by the last call (cycles).
    pub fallback: usize,
}

impl Mfd {
    pub fn new(n: usize) -> Self {
        Self {
            kind: vec![EDGES_NONE; n],
            mask: vec![0; n],
            wts: vec![[0.0; 8]; n],
            indeg: vec![0; n],
            walk: Vec::new(),
            order: Vec::with_capacity(n),
            area: vec![1.0; n],
            fallback: 0,
        }
    }

    /// Edges, order and drainage area of the heights `h` already routed by `r` (which must have
    /// routed exactly these heights), with the slope exponent `p`.
    pub fn compute(&mut self, r: &Router, h: &[f32], p: f64) {
        self.compute_edges(r, h, p);
        self.fallback = 0;
        let mut rounds = 0;
        while !self.sort_and_accumulate(r) {
            rounds += 1;
            // Every node the sort could not take has a donor left (it lies on a cycle or below
            // one): send those back to their single D8 receiver. After too many rounds, all.
            for i in 0..h.len() {
                if ((self.indeg[i] != TAKEN && self.indeg[i] > 0) || rounds > 16) && self.kind[i] == EDGES_MULTI {
                    self.kind[i] = EDGES_SINGLE;
                    set_single(r, i, &mut self.mask[i], &mut self.wts[i]);
                    self.fallback += 1;
                }
            }
        }
    }

    /// Every node's kind, edges and weights (type doc), rows in parallel. A single edge is
    /// stored like a multi edge of weight 1 (the router's receivers are neighbours), so the sort
    /// reads one form.
    fn compute_edges(&mut self, r: &Router, h: &[f32], p: f64) {
        let g = r.grid;
        let (w, hh) = (g.w, g.h);
        debug_assert_eq!(h.len(), r.rcv.len());
        let p = p as f32;
        let interior_ok = w >= 3 && hh >= 3;
        self.kind
            .par_chunks_mut(w)
            .zip(self.mask.par_chunks_mut(w))
            .zip(self.wts.par_chunks_mut(w))
            .enumerate()
            .for_each_init(
                || vec![0.0f32; 10 * w],
                |scratch, (y, ((kr, mr), wr))| {
                    if interior_ok && y > 0 && y + 1 < hh {
                        edges_interior_row(
                            r,
                            h,
                            p,
                            y,
                            scratch,
                            &mut kr[1..w - 1],
                            &mut mr[1..w - 1],
                            &mut wr[1..w - 1],
                        );
                        for x in [0, w - 1] {
                            edges_generic(r, h, p, x, y, &mut kr[x], &mut mr[x], &mut wr[x]);
                        }
                    } else {
                        for x in 0..w {
                            edges_generic(r, h, p, x, y, &mut kr[x], &mut mr[x], &mut wr[x]);
                        }
                    }
                },
            );
    }

    /// In-degrees, then the depth-first Kahn walk that writes `order` and `area` (type doc).
    /// False when some node could not be taken (those keep an in-degree `> 0`, not [`TAKEN`]).
    fn sort_and_accumulate(&mut self, r: &Router) -> bool {
        let n = self.kind.len();
        let g = r.grid;
        let w = g.w;
        let off = offsets(w);
        let mut deg = std::mem::take(&mut self.indeg);
        // In-degrees gathered from the neighbours, rows in parallel: an interior node's donors
        // are plain neighbours (wrapped neighbours are always border nodes), so bit `7 − q` of
        // the neighbour in direction `q` says whether it sends to the node.
        {
            let mask = &self.mask;
            let hh = g.h;
            let count_border = |j: usize, x: usize, y: usize| -> u8 {
                // Each distinct neighbour once, each of its edges that lands on `j`.
                let mut near = [usize::MAX; 8];
                let mut m = 0;
                let mut c = 0u8;
                g.for_neighbours(x, y, |i, _| {
                    if i != j && !near[..m].contains(&i) {
                        near[m] = i;
                        m += 1;
                        let (xi, yi) = (i % w, i / w);
                        for k in 0..8 {
                            if mask[i] >> k & 1 != 0 && g.neighbour(xi, yi, k) == Some(j) {
                                c = c.saturating_add(1);
                            }
                        }
                    }
                });
                c
            };
            deg.par_chunks_mut(w).enumerate().for_each(|(y, dr)| {
                if w >= 3 && y > 0 && y + 1 < hh {
                    // Interior run x = 1 … w−2, as byte loops over the row (they vectorise).
                    let (c, m) = (y * w + 1, w - 2);
                    let run = &mut dr[1..w - 1];
                    run.fill(0);
                    for q in 0..8 {
                        let o = (c as isize + off[q]) as usize;
                        let bit = 1u8 << (7 - q);
                        for (d, &mk) in run.iter_mut().zip(&mask[o..o + m]) {
                            *d += (mk & bit).min(1);
                        }
                    }
                    for x in [0, w - 1] {
                        dr[x] = count_border(y * w + x, x, y);
                    }
                } else {
                    for (x, d) in dr.iter_mut().enumerate() {
                        *d = count_border(y * w + x, x, y);
                    }
                }
            });
        }
        let mut area = std::mem::take(&mut self.area);
        area.iter_mut().for_each(|a| *a = 1.0);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        let mut walk = std::mem::take(&mut self.walk);
        // A stack slot per node at most (plus the branch-free push's spare slot); its contents
        // are always written before they are read, so it is only grown, never cleared.
        if walk.len() < n + 16 {
            walk.resize(n + 16, 0);
        }
        let (mask, wts, border) = (&self.mask, &self.wts, &r.border);
        for s in 0..n {
            if deg[s] != 0 {
                continue;
            }
            deg[s] = TAKEN;
            walk[0] = s as u32;
            let mut top = 1usize;
            while top > 0 {
                top -= 1;
                let i = walk[top] as usize;
                order.push(i as u32);
                let mut m = mask[i];
                if m == 0 {
                    continue;
                }
                let a = area[i];
                let wt = &wts[i];
                // Every edge but the last gets `w·A`, the last the remainder (exact conservation).
                let mut left = a;
                if border[i] == 0 {
                    loop {
                        let k = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let j = (i as isize + off[k]) as usize;
                        let give = if m == 0 { left.max(0.0) } else { a * wt[k] as f64 };
                        area[j] += give;
                        left -= give;
                        let d = deg[j] - 1;
                        // Released: pushed (the slot is overwritten when it is not) and taken.
                        walk[top] = j as u32;
                        top += (d == 0) as usize;
                        deg[j] = if d == 0 { TAKEN } else { d };
                        if m == 0 {
                            break;
                        }
                    }
                } else {
                    let (x, y) = (i % w, i / w);
                    while m != 0 {
                        let k = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let Some(j) = g.neighbour(x, y, k) else { continue };
                        let give = if m == 0 { left.max(0.0) } else { a * wt[k] as f64 };
                        area[j] += give;
                        left -= give;
                        deg[j] -= 1;
                        if deg[j] == 0 {
                            deg[j] = TAKEN;
                            walk[top] = j as u32;
                            top += 1;
                        }
                    }
                }
            }
        }
        let done = order.len() == n;
        self.indeg = deg;
        self.area = area;
        self.order = order;
        self.walk = walk;
        done
    }

    /// Calls `f(j, weight)` for each edge of node `i`, in the D8 order.
    #[cfg(test)]
    fn for_edges(&self, r: &Router, i: usize, mut f: impl FnMut(usize, f32)) {
        let g = r.grid;
        for k in 0..8 {
            if self.mask[i] >> k & 1 != 0
                && let Some(j) = g.neighbour(i % g.w, i / g.w, k)
            {
                f(j, self.wts[i][k]);
            }
        }
    }
}

/// Is neighbour `k` (D8 order) a diagonal one?
#[inline(always)]
fn is_diag_k(k: usize) -> bool {
    matches!(k, 0 | 2 | 5 | 7)
}

/// Edges of the interior nodes `x = 1 … w−2` of row `y` (`kr`, `mr`, `wr` hold exactly those),
/// written as loops over the row so that they vectorise; `scratch` holds `10·w` floats.
#[allow(clippy::too_many_arguments)]
fn edges_interior_row(
    r: &Router,
    h: &[f32],
    p: f32,
    y: usize,
    scratch: &mut [f32],
    kr: &mut [u8],
    mr: &mut [u8],
    wr: &mut [[f32; 8]],
) {
    let w = r.grid.w;
    let m = w - 2;
    let c = y * w + 1;
    let off = offsets(w);
    let (s, rest) = scratch.split_at_mut(8 * w);
    let (smax, rest) = rest.split_at_mut(w);
    let tot = &mut rest[..m];
    let smax = &mut smax[..m];
    let hi = &h[c..c + m];
    let ll = &r.lake_level;
    smax.fill(0.0);
    // Slopes to the neighbours strictly lower on the lake-filled surface (0 for the others).
    for k in 0..8 {
        let o = (c as isize + off[k]) as usize;
        let dk = if is_diag_k(k) { std::f32::consts::FRAC_1_SQRT_2 } else { 1.0 };
        let sk = &mut s[k * w..k * w + m];
        for (((sv, &a), &hj), &lj) in sk.iter_mut().zip(hi).zip(&h[o..o + m]).zip(&ll[o..o + m]) {
            let d = a - hj.max(lj);
            *sv = if d > 0.0 && d < f32::INFINITY { d * dk } else { 0.0 };
        }
        for (mx, &sv) in smax.iter_mut().zip(sk.iter()) {
            *mx = mx.max(sv);
        }
    }
    tot.fill(0.0);
    mr.fill(0);
    // One division per node: the reciprocal of the steepest slope (∞ where there is none; its
    // products are masked out below).
    for mx in smax.iter_mut() {
        *mx = 1.0 / *mx;
    }
    for k in 0..8 {
        let sk = &mut s[k * w..k * w + m];
        for (((sv, &inv), t), mk) in sk.iter_mut().zip(smax.iter()).zip(tot.iter_mut()).zip(mr.iter_mut()) {
            let on = *sv > 0.0;
            let v = pow_unit((*sv * inv).min(1.0), p);
            let v = if on { v } else { 0.0 };
            *sv = v;
            *t += v;
            *mk |= (on as u8) << k;
        }
    }
    for t in tot.iter_mut() {
        *t = if *t > 0.0 { 1.0 / *t } else { 0.0 };
    }
    for k in 0..8 {
        let sk = &s[k * w..k * w + m];
        for ((wx, &v), &it) in wr.iter_mut().zip(sk).zip(tot.iter()) {
            wx[k] = v * it;
        }
    }
    // Roots, lake and trap nodes, and nodes with no lower neighbour: the router's receiver.
    for x in 0..m {
        let i = c + x;
        let rc = r.rcv[i] as usize;
        if rc == i {
            kr[x] = EDGES_NONE;
            mr[x] = 0;
        } else if mr[x] == 0 || (r.is_special(i) && (r.lake_level[i] > f32::NEG_INFINITY || r.trap_of[i] != NONE)) {
            kr[x] = EDGES_SINGLE;
            set_single(r, i, &mut mr[x], &mut wr[x]);
        } else {
            kr[x] = EDGES_MULTI;
        }
    }
}

/// Edges of any node (border nodes, and every node of a map narrower than 3).
fn edges_generic(r: &Router, h: &[f32], p: f32, x: usize, y: usize, kr: &mut u8, mr: &mut u8, wr: &mut [f32; 8]) {
    let g = r.grid;
    let i = y * g.w + x;
    *mr = 0;
    if r.rcv[i] as usize == i {
        *kr = EDGES_NONE;
        return;
    }
    *kr = EDGES_SINGLE;
    if !(r.is_special(i) && (r.lake_level[i] > f32::NEG_INFINITY || r.trap_of[i] != NONE)) {
        let hi = h[i];
        let mut s = [0.0f32; 8];
        let (mut m, mut smax) = (0u8, 0.0f32);
        for k in 0..8 {
            let Some(j) = g.neighbour(x, y, k) else { continue };
            let d = hi - h[j].max(r.lake_level[j]);
            if d > 0.0 && d < f32::INFINITY {
                s[k] = d * if is_diag_k(k) { std::f32::consts::FRAC_1_SQRT_2 } else { 1.0 };
                m |= 1 << k;
                smax = smax.max(s[k]);
            }
        }
        if m != 0 {
            let mut tot = 0.0f32;
            for k in 0..8 {
                if m >> k & 1 != 0 {
                    s[k] = pow_unit(s[k] / smax, p);
                    tot += s[k];
                }
            }
            *kr = EDGES_MULTI;
            *mr = m;
            for k in 0..8 {
                wr[k] = if m >> k & 1 != 0 { s[k] / tot } else { 0.0 };
            }
            return;
        }
    }
    set_single(r, i, mr, wr);
}

/// Writes node `i`'s single edge to its receiver (a neighbour, the first direction that reaches
/// it) as a weight-1 edge.
fn set_single(r: &Router, i: usize, mr: &mut u8, wr: &mut [f32; 8]) {
    let g = r.grid;
    let rc = r.rcv[i] as usize;
    let k = if r.border[i] == 0 {
        let (off, dlt) = (offsets(g.w), rc as isize - i as isize);
        (0..8).find(|&k| off[k] == dlt)
    } else {
        (0..8).find(|&k| g.neighbour(i % g.w, i / g.w, k) == Some(rc))
    };
    debug_assert!(k.is_some(), "receiver {rc} of {i} is not a neighbour");
    *wr = [0.0; 8];
    *mr = 0;
    if let Some(k) = k {
        *mr = 1 << k;
        wr[k] = 1.0;
    }
}

/// The index offsets of the eight neighbours of an interior node, in the D8 order.
#[inline]
fn offsets(w: usize) -> [isize; 8] {
    let w = w as isize;
    [-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1]
}

/// `x^p` for `x ∈ (0, 1]` and `p ≥ 0`, as `2^(p·log₂ x)` with polynomial `log₂` and `2^f` on the
/// mantissa and the fraction (least-squares fits on Chebyshev nodes: `log₂(1+t)` to 1.7·10⁻⁵,
/// `2^f` to 2·10⁻⁷ relative), so about 3·10⁻⁵·p relative in all. Plain f32 arithmetic, no fused
/// operations: the same bits on every machine. Exact at `x = 1`; 0 when the result is below
/// f32's normal range; subnormal `x` are taken as the smallest normal.
#[inline]
pub(crate) fn pow_unit(x: f32, p: f32) -> f32 {
    // Branch-free, so that row loops calling it vectorise.
    let x = x.max(f32::MIN_POSITIVE);
    let b = x.to_bits();
    let e = ((b >> 23) & 0xff) as i32 - 127;
    let t = f32::from_bits((b & 0x007f_ffff) | 0x3f80_0000) - 1.0;
    let l = t * (1.441_879_8 + t * (-0.708_863_9 + t * (0.415_241 + t * (-0.193_510_4 + t * 0.045_265_505))));
    let y = (p * (e as f32 + l)).max(-127.0);
    // floor(y) (truncation rounds toward zero; `floor` is a libm call without SSE4.1).
    let fi = (y as i32) - (((y as i32) as f32 > y) as i32);
    let f = y - fi as f32;
    let q =
        1.0 + f * (0.693_154_6 + f * (0.240_140_8 + f * (0.055_863_26 + f * (0.008_946_225 + f * 0.001_895_108_6))));
    // fi = −127 (below the normal range) gives the exponent field 0: a zero.
    q * f32::from_bits(((fi + 127) as u32) << 23)
}

/// A key that orders f32 heights like `total_cmp` (negative heights included).
#[inline]
fn height_key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
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

// SAFETY: `Shared` is only used for disjoint per-task access (see the uses); T itself is Send.
unsafe impl<T: Send> Send for Shared<T> {}
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
        unsafe { *self.ptr.add(i) }
    }
    /// # Safety
    /// `i < len`, and no other task accesses entry `i` concurrently.
    #[inline]
    pub unsafe fn write(&self, i: usize, v: T) {
        debug_assert!(i < self.len);
        unsafe { *self.ptr.add(i) = v }
    }
    /// # Safety
    /// The range is in bounds and no other task accesses it concurrently.
    #[inline]
    #[allow(clippy::mut_from_ref)] // the point of the type; the contract above makes it sound
    pub unsafe fn slice_mut(&self, start: usize, end: usize) -> &mut [T] {
        debug_assert!(start <= end && end <= self.len);
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

/// Union–find with path halving and union by size.
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self { parent: (0..n as u32).collect(), size: vec![1; n] }
    }
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let p = self.parent[x] as usize;
            self.parent[x] = self.parent[p];
            x = self.parent[x] as usize;
        }
        x
    }
    /// Joins the sets of `a` and `b`; false when they were already one.
    fn union(&mut self, a: usize, b: usize) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra] < self.size[rb] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb] = ra as u32;
        self.size[ra] += self.size[rb];
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router(w: usize, h: usize, data: &[f32], b: Boundary) -> Router {
        let mut r = Router::new(w, h, &b);
        r.route(data);
        r
    }

    /// Follows receivers from `i` to its root, failing on a cycle.
    fn root_of(r: &Router, mut i: usize) -> usize {
        for _ in 0..=r.rcv.len() {
            let n = r.rcv[i] as usize;
            if n == i {
                return i;
            }
            i = n;
        }
        panic!("receiver cycle");
    }

    /// Every MFD edge of every node, as `(i, j, weight)`.
    fn mfd_edges(m: &Mfd, r: &Router) -> Vec<(usize, usize, f32)> {
        let mut e = Vec::new();
        for i in 0..r.rcv.len() {
            m.for_edges(r, i, |j, w| e.push((i, j, w)));
        }
        e
    }

    fn mfd(w: usize, h: usize, data: &[f32], b: Boundary, p: f64) -> (Router, Mfd) {
        let r = router(w, h, data, b);
        let mut m = Mfd::new(w * h);
        m.compute(&r, data, p);
        (r, m)
    }

    /// Rough terrain with many pits.
    fn noisy(w: usize, h: usize, seed: u64) -> Vec<f32> {
        use crate::core::rng::{hash2, unit_f32};
        (0..w * h).map(|i| (i % w) as f32 * 0.7 + 8.0 * unit_f32(hash2((i % w) as i64, (i / w) as i64, seed))).collect()
    }

    #[test]
    fn mfd_area_sums_to_the_node_count_on_a_plane_and_a_cone() {
        // Tilted plane draining left (walls elsewhere): every node's area reaches the left column.
        let (w, h) = (12, 9);
        let plane: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * 2.0).collect();
        let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
        let (r, m) = mfd(w, h, &plane, b, 1.1);
        let at_outlets: f64 = (0..w * h).filter(|&i| r.outlet[i] == 1).map(|i| m.area[i]).sum();
        assert!((at_outlets - (w * h) as f64).abs() < 1e-9, "{at_outlets}");
        // Interior nodes split between W (slope 2) and NW/SW (slope 2/√2): weights sum to 1.
        let e = mfd_edges(&m, &r);
        let mid = 4 * w + 6;
        let out: Vec<_> = e.iter().filter(|x| x.0 == mid).collect();
        assert_eq!(out.len(), 3);
        assert!((out.iter().map(|x| x.2 as f64).sum::<f64>() - 1.0).abs() < 1e-6);
        let west = out.iter().find(|x| x.1 == mid - 1).unwrap().2 as f64;
        let diag = 2f64.powf(-0.5 * 1.1);
        // Within `pow_unit`'s error (a few 10⁻⁵).
        assert!((west - 1.0 / (1.0 + 2.0 * diag)).abs() < 5e-5, "{west}");
        // A cone draining to all four edges: the total arrives at the edges, and the area is
        // symmetric under the cone's mirror symmetries.
        let n = 21;
        let cone: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32 - 10.0, (i / n) as f32 - 10.0);
                100.0 - (x * x + y * y).sqrt()
            })
            .collect();
        let (r, m) = mfd(n, n, &cone, Boundary::all(EdgeMode::Drain), 1.1);
        let total: f64 = (0..n * n).filter(|&i| r.outlet[i] == 1).map(|i| m.area[i]).sum();
        assert!((total - (n * n) as f64).abs() < 1e-9, "{total}");
        assert!(m.area.iter().all(|&a| a >= 1.0));
        for (x, y) in [(3usize, 7usize), (5, 10), (8, 2)] {
            let a = m.area[y * n + x];
            for (u, v) in [(n - 1 - x, y), (x, n - 1 - y), (y, x)] {
                assert!(
                    (m.area[v * n + u] - a).abs() <= 1e-4 * a,
                    "({x},{y}) vs ({u},{v}): {a} vs {}",
                    m.area[v * n + u]
                );
            }
        }
        // Area spreads: nodes off the axes collect flow from more than one uphill line.
        assert_eq!(m.fallback, 0);
    }

    #[test]
    fn pow_unit_matches_powf() {
        for p in [0.0f32, 0.5, 1.0, 1.1, 2.0, 4.5, 10.0] {
            assert_eq!(pow_unit(1.0, p), 1.0);
            let mut x = 1.0f32;
            while x > 1e-30 {
                let want = (x as f64).powf(p as f64);
                let got = pow_unit(x, p) as f64;
                if want > 1e-37 {
                    assert!((got - want).abs() <= 4e-5 * p.max(1.0) as f64 * want, "{x}^{p}: {got} vs {want}");
                }
                x *= 0.937;
            }
        }
        // Far below f32's range: zero, not garbage.
        assert_eq!(pow_unit(1e-30, 10.0), 0.0);
        assert_eq!(pow_unit(0.0, 1.1), pow_unit(f32::MIN_POSITIVE, 1.1));
    }

    #[test]
    fn mfd_order_puts_every_donor_before_its_receivers() {
        for (seed, b) in [
            (1u64, Boundary::default()),
            (2, Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall }),
            (3, Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Wall }),
            (4, Boundary::all(EdgeMode::Wall)),
        ] {
            let (w, h) = (37, 29);
            let mut d = noisy(w, h, seed);
            // Flats (equal heights) and a plateau to stress the tie handling.
            for x in 10..20 {
                d[14 * w + x] = 12.0;
                d[15 * w + x] = 12.0;
            }
            let (r, m) = mfd(w, h, &d, b, 1.1);
            assert!(r.pits > 10, "test terrain needs pits ({})", r.pits);
            let mut pos = vec![usize::MAX; w * h];
            for (k, &v) in m.order.iter().enumerate() {
                assert_eq!(pos[v as usize], usize::MAX, "node listed twice");
                pos[v as usize] = k;
            }
            assert!(pos.iter().all(|&p| p != usize::MAX), "node missing from the order");
            for (i, j, wt) in mfd_edges(&m, &r) {
                assert!(pos[i] < pos[j], "edge {i} -> {j} goes against the order");
                assert!(wt > 0.0 && wt <= 1.0);
                // Lake nodes keep their single rerouted receiver.
                if r.lake_level[i] > f32::NEG_INFINITY {
                    assert_eq!(j, r.rcv[i] as usize);
                }
            }
            // Total area at the roots = node count (the terminal pit on the closed map).
            let roots: f64 = (0..w * h).filter(|&i| r.rcv[i] as usize == i).map(|i| m.area[i]).sum();
            assert!((roots - (w * h) as f64).abs() < 1e-6, "{roots}");
        }
    }

    #[test]
    fn sea_outlets_are_roots() {
        let (w, h) = (9, 7);
        let d: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 - 3.0).collect();
        let sea: Vec<u8> = d.iter().map(|&v| (v <= 0.0) as u8).collect();
        let mut r = Router::new(w, h, &Boundary::all(EdgeMode::Wall));
        r.add_outlets(&sea);
        r.route(&d);
        assert_eq!(r.pits, 0);
        for i in 0..w * h {
            if sea[i] == 1 {
                assert_eq!(r.rcv[i] as usize, i, "sea node {i} is not a root");
            } else {
                assert_ne!(r.rcv[i] as usize, i);
            }
        }
        // Land drains into the sea column x = 3 (the first at or below 0).
        let into_sea: u32 = (0..h).map(|y| r.area[y * w + 3]).sum();
        assert_eq!(into_sea as usize, (w - 3) * h);
    }

    #[test]
    fn plane_drains_straight_to_the_low_edge() {
        // h = x on a 6×4 map, only the left edge drains.
        let (w, h) = (6, 4);
        let data: Vec<f32> = (0..w * h).map(|i| (i % w) as f32).collect();
        let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
        let r = router(w, h, &data, b);
        assert_eq!(r.pits, 0);
        for i in 0..w * h {
            let x = i % w;
            if x == 0 {
                assert_eq!(r.rcv[i] as usize, i);
                assert_eq!(r.area[i] as usize, w);
            } else {
                assert_eq!(r.rcv[i] as usize, i - 1, "node {i}");
                assert_eq!(r.diag[i], 0);
                assert_eq!(r.area[i] as usize, w - x);
            }
        }
        // Stack: receiver before donor.
        let mut pos = vec![0; w * h];
        for (k, &v) in r.stack.iter().enumerate() {
            pos[v as usize] = k;
        }
        for i in 0..w * h {
            assert!(pos[r.rcv[i] as usize] <= pos[i]);
        }
    }

    #[test]
    fn diagonal_is_measured_over_root_two() {
        // Centre 10, straight neighbour 8 (drop 2), diagonal 7 (drop 3/√2 ≈ 2.12): diagonal wins;
        // with the diagonal at 7.5 (drop 1.77) the straight one wins.
        let b = Boundary::all(EdgeMode::Drain);
        let mut d = vec![20.0f32; 9];
        d[4] = 10.0;
        d[5] = 8.0;
        d[0] = 7.0;
        let r = router(3, 3, &d, b);
        assert_eq!((r.rcv[4], r.diag[4]), (0, 1));
        d[0] = 7.5;
        let r = router(3, 3, &d, b);
        assert_eq!((r.rcv[4], r.diag[4]), (5, 0));
    }

    #[test]
    fn pit_is_routed_over_its_pass_and_gets_a_lake_level() {
        // 5×5, drains on all sides; a bowl with rim 5 and a pit of 1 at the centre, one low rim
        // node at 3 on the right.
        let b = Boundary::all(EdgeMode::Drain);
        let mut d = vec![0.0f32; 25];
        for y in 1..4 {
            for x in 1..4 {
                d[y * 5 + x] = 5.0;
            }
        }
        d[12] = 1.0;
        d[13] = 3.0; // (3, 2): the pass into the right edge
        let r = router(5, 5, &d, b);
        assert_eq!(r.pits, 1);
        for i in 0..25 {
            let root = root_of(&r, i);
            assert_eq!(r.outlet[root], 1, "node {i} ends at a non-outlet");
        }
        // The pit lies below the level of its pass (3, the lower of the two rim heights... the
        // pass e = max(h_i, h_j) = max(3, 0) = 3).
        assert_eq!(r.lake_level[12], 3.0);
        assert_eq!(r.traps.len(), 1);
        assert!((r.traps[0].capacity - 2.0).abs() < 1e-12);
        let total: u32 = (0..25).filter(|&i| r.outlet[i] == 1).map(|i| r.area[i]).sum();
        assert_eq!(total, 25);
    }

    #[test]
    fn nested_pits_take_the_higher_level() {
        // 1-D 7×1: [0, 9, 2, 6, 1, 8, 9], drain on the left only. Basin of node 4 (h=1) overflows
        // over 6 into basin of node 2 (h=2), which overflows over 9 to the outlet: both levels 9.
        let b = Boundary { left: EdgeMode::Drain, right: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall };
        let d = [0.0f32, 9.0, 2.0, 6.0, 1.0, 8.0, 9.0];
        let r = router(7, 1, &d, b);
        assert_eq!(r.pits, 2);
        assert_eq!(r.lake_level[2], 9.0);
        assert_eq!(r.lake_level[4], 9.0);
        assert_eq!(r.lake_level[3], 9.0);
        for i in 0..7 {
            assert_eq!(root_of(&r, i), 0);
        }
        assert_eq!(r.area[0], 7);
    }

    #[test]
    fn closed_map_drains_to_its_lowest_pit() {
        let b = Boundary::all(EdgeMode::Wall);
        let d = [3.0f32, 1.0, 4.0, 1.5, 5.0, 0.5, 2.0, 6.0, 0.7];
        let r = router(3, 3, &d, b);
        for i in 0..9 {
            assert_eq!(root_of(&r, i), 5);
        }
        assert_eq!(r.area[5], 9);
        assert_eq!(r.traps.iter().filter(|t| t.capacity.is_infinite()).count(), 1);
    }

    #[test]
    fn wrap_links_opposite_edges() {
        // 4×3, x wraps, top/bottom drain; node (0,1) is lowest among its row via the wrap.
        let b = Boundary { left: EdgeMode::Wrap, right: EdgeMode::Wrap, top: EdgeMode::Drain, bottom: EdgeMode::Drain };
        let mut d = vec![10.0f32; 12];
        d[4] = 5.0; // (0,1)
        d[7] = 1.0; // (3,1): west neighbour of (0,1) through the wrap
        for x in 0..4 {
            d[x] = 9.0;
            d[8 + x] = 9.0;
        }
        d[3] = 0.0; // (3,0): where (3,1) drains
        let r = router(4, 3, &d, b);
        assert_eq!(r.pits, 0);
        assert_eq!(r.rcv[4], 7);
        assert_eq!(r.rcv[7], 3);
        // Made a pit again, (3,1) overflows over its lowest pass and still reaches a drain row.
        d[3] = 9.0;
        let r = router(4, 3, &d, b);
        assert_eq!(r.pits, 1);
        let root = root_of(&r, 4);
        assert_eq!(r.outlet[root], 1);
    }
}
