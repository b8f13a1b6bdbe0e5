//! Lake (depression) routing (see "Lakes: the basin graph" in the module doc): the minimum
//! spanning tree of the basins by Borůvka rounds of local floods, the carving of each pit basin's
//! receiver path to its pass, and the lake nodes.

use super::{NONE, Router, Trap, is_diag};

/// A pass between basins `lo < hi` (basin ids, 0 = outside): node `a` lies in `hi`, `b` in `lo`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub(super) e: f32,
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) a: u32,
    pub(super) b: u32,
}

pub(super) fn cmp_edge(x: &Edge, y: &Edge) -> std::cmp::Ordering {
    x.e.total_cmp(&y.e).then(x.lo.cmp(&y.lo)).then(x.hi.cmp(&y.hi)).then(x.a.cmp(&y.a)).then(x.b.cmp(&y.b))
}

impl Router {
    /// Basin graph, minimum spanning tree, lake levels, traps, carving and the new stack (module
    /// doc). Apart from one copy of the stack, the work is proportional to the lakes: passes are
    /// found by local floods that stop at the spill height, lake nodes by walking up from the pit.
    #[inline(never)]
    pub(super) fn resolve_lakes(&mut self, h: &[f32]) {
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

    /// The lowest pass out of the component made of the basins `group` (pairs `(uf root,
    /// basin)`): a flood from their pits in increasing height, over nodes of the component,
    /// stopping once the next height exceeds the best pass found (no later pair can be lower).
    /// Passes compare by `(e, lo, hi, a, b)`, so ties resolve the same way on every run.
    pub(super) fn lowest_pass(
        &mut self,
        group: &[(u32, u32)],
        uf: &mut UnionFind,
        seg_of: &[u32],
        h: &[f32],
    ) -> Option<Edge> {
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

/// A key that orders f32 heights like `total_cmp` (negative heights included).
#[inline]
pub(super) fn height_key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
}

/// Union–find with path halving and union by size.
pub(super) struct UnionFind {
    pub(super) parent: Vec<u32>,
    pub(super) size: Vec<u32>,
}

impl UnionFind {
    pub(super) fn new(n: usize) -> Self {
        Self { parent: (0..n as u32).collect(), size: vec![1; n] }
    }
    pub(super) fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let p = self.parent[x] as usize;
            self.parent[x] = self.parent[p];
            x = self.parent[x] as usize;
        }
        x
    }
    /// Joins the sets of `a` and `b`; false when they were already one.
    pub(super) fn union(&mut self, a: usize, b: usize) -> bool {
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
