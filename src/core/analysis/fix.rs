//! One-click fixes for what the analysis finds (issue #13, item 6). Each changes only the nodes
//! that must change, deterministically, and reports what it did.
//!
//! - [`fill_pits`]: the priority-flood of Barnes, Lehman & Mulla (2014) (see the parent module):
//!   every depression on land is raised to its spill level, with an optional gradient `ε` so the
//!   filled flats drain (`z_n = max(z_c + ε, next_up(z_c))` when `h_n ≤ z_c`). A node higher
//!   than the node the flood reached it from keeps its height bit for bit; fill only raises.
//! - [`breach_pits`]: breaching by carving (Soille 2004, "Optimal removal of spurious pits in
//!   grid digital elevation models", Water Resources Research 40, W12509; the path is the
//!   priority-flood's, as in Barnes et al. 2014 §4 / Lindsay 2016 "Efficient hybrid breaching-
//!   filling sink removal methods for flow path enforcement in digital elevation models",
//!   Hydrological Processes 30, 846–857, without Lindsay's depth limit): every non-outlet land
//!   node with no strictly lower neighbour is drained by walking the flood's parent chain (the
//!   minimax path to an outlet) and lowering each node on it to just below the previous one
//!   (`h − ε`, at least one `f32` step) until a node is already lower. Only nodes on those paths
//!   change, and only downward; depressions keep their depth, the rim gets a notch.
//! - [`remove_spikes`] / [`raise_pits`]: a single-node spike (higher than all 8 neighbours by more
//!   than `tol`) is lowered to the highest of its neighbours; a single-node pit is raised to the
//!   lowest. Decided on the unchanged map, so the order does not matter; no other node moves.

use serde::Serialize;

use super::{for_neighbours, is_outlet, pits_and_spikes, priority_flood};
use crate::core::Heightmap;

/// What a fix changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FixReport {
    /// Nodes whose height changed.
    pub changed: usize,
    /// Largest |Δh|, metres.
    pub max_change_m: f32,
    /// Σ Δh · cell², m³ (positive: material added).
    pub volume_m3: f64,
}

fn report(before: &[f32], after: &[f32], cell: f32) -> FixReport {
    let mut r = FixReport::default();
    for (a, b) in before.iter().zip(after) {
        if a != b {
            r.changed += 1;
            r.max_change_m = r.max_change_m.max((b - a).abs());
            r.volume_m3 += (b - a) as f64 * (cell as f64).powi(2);
        }
    }
    r
}

/// Fills every depression on land (priority-flood from the sea and the map edges); `epsilon`
/// metres (≥ 0, e.g. 1e-3; 0 leaves filled areas flat) keeps a gradient so they drain.
pub fn fill_pits(hm: &mut Heightmap, sea: f32, epsilon: f32) -> FixReport {
    let fl = priority_flood(hm, sea, epsilon.max(0.0));
    let rep = report(&hm.data, &fl.filled, hm.cell_size);
    hm.data = fl.filled;
    rep
}

/// One `f32` step or `epsilon` below `z`, whichever is lower.
#[inline]
fn below(z: f32, epsilon: f32) -> f32 {
    (z - epsilon).min(z.next_down())
}

/// Breaches every depression on land by carving along the priority-flood path (see the module
/// doc); `epsilon` metres (≥ 0, e.g. 1e-3) is the drop per node along a carved path.
pub fn breach_pits(hm: &mut Heightmap, sea: f32, epsilon: f32) -> FixReport {
    let (w, h) = (hm.width, hm.height);
    let eps = epsilon.max(0.0);
    let fl = priority_flood(hm, sea, 0.0);
    let before = hm.data.clone();
    let outlet: Vec<bool> = (0..hm.len()).map(|i| is_outlet(w, h, i, before[i], sea)).collect();
    let z = &mut hm.data;
    for &i in &fl.order {
        let i = i as usize;
        if outlet[i] {
            continue;
        }
        let mut lower = false;
        for_neighbours(w, h, i, |j, _| lower |= z[j] < z[i]);
        if lower {
            continue;
        }
        let mut cur = i;
        loop {
            let nxt = fl.parent[cur] as usize;
            if z[nxt] < z[cur] {
                break;
            }
            z[nxt] = below(z[cur], eps);
            if outlet[nxt] {
                break;
            }
            cur = nxt;
        }
    }
    report(&before, &hm.data, hm.cell_size)
}

/// Sets each of `nodes` to `pick` over its 8 neighbours on the unchanged map (`init` = the
/// identity of `pick`).
fn level_nodes(hm: &mut Heightmap, nodes: &[usize], init: f32, pick: fn(f32, f32) -> f32) -> FixReport {
    let before = hm.data.clone();
    for &i in nodes {
        let mut m = init;
        for_neighbours(hm.width, hm.height, i, |j, _| m = pick(m, before[j]));
        hm.data[i] = m;
    }
    report(&before, &hm.data, hm.cell_size)
}

/// Lowers every single-node spike on land to the highest of its 8 neighbours.
pub fn remove_spikes(hm: &mut Heightmap, sea: f32, tol: f32) -> FixReport {
    let spikes = pits_and_spikes(hm, sea, tol).spikes;
    level_nodes(hm, &spikes, f32::NEG_INFINITY, f32::max)
}

/// Raises every single-node pit on land to the lowest of its 8 neighbours.
pub fn raise_pits(hm: &mut Heightmap, sea: f32, tol: f32) -> FixReport {
    let pits = pits_and_spikes(hm, sea, tol).pits;
    level_nodes(hm, &pits, f32::INFINITY, f32::min)
}

#[cfg(test)]
mod tests {
    use super::super::drainage;
    use super::*;
    use crate::core::rng::SplitMix64;

    /// A rough hill with many depressions: a cone plus strong noise.
    fn rough(w: usize, seed: u64) -> Heightmap {
        let mut r = SplitMix64::new(seed);
        let c = (w / 2) as f32;
        let noise: Vec<f32> = (0..w * w).map(|_| r.range_f32(-3.0, 3.0)).collect();
        Heightmap::from_fn(w, w, 2.0, |x, y| {
            40.0 - 0.5 * ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt() + noise[y * w + x]
        })
        .unwrap()
    }

    /// Every non-outlet node has a strictly lower neighbour (so every land node drains).
    fn all_drain(hm: &Heightmap, sea: f32) -> usize {
        (0..hm.len())
            .filter(|&i| {
                if is_outlet(hm.width, hm.height, i, hm.data[i], sea) {
                    return false;
                }
                let mut lower = false;
                for_neighbours(hm.width, hm.height, i, |j, _| lower |= hm.data[j] < hm.data[i]);
                !lower
            })
            .count()
    }

    #[test]
    fn fill_makes_every_land_node_drain_and_only_raises_depressions() {
        let orig = rough(65, 1);
        assert!(all_drain(&orig, 0.0) > 20, "the test map has depressions");
        let mut hm = orig.clone();
        let rep = fill_pits(&mut hm, 0.0, 1e-3);
        assert_eq!(all_drain(&hm, 0.0), 0);
        assert!(rep.changed > 0 && rep.volume_m3 > 0.0);
        assert!(hm.data.iter().zip(&orig.data).all(|(a, b)| a >= b), "fill only raises");
        // Every node's drainage ends at an outlet with its whole area.
        let dr = drainage(&hm, 0.0);
        let total: f64 = (0..hm.len()).filter(|&i| dr.receiver[i] as usize == i).map(|i| dr.area[i]).sum();
        assert!((total - hm.len() as f64 * 4.0).abs() < 1e-6);
    }

    #[test]
    fn breach_makes_every_land_node_drain_and_only_lowers() {
        let orig = rough(65, 2);
        let mut hm = orig.clone();
        let rep = breach_pits(&mut hm, 0.0, 1e-3);
        assert_eq!(all_drain(&hm, 0.0), 0);
        assert!(rep.changed > 0 && rep.volume_m3 < 0.0);
        assert!(hm.data.iter().zip(&orig.data).all(|(a, b)| a <= b), "breach only lowers");
        // A single-node pit on a slope is drained by notching one neighbour, nothing else.
        let mut s = Heightmap::from_fn(9, 9, 1.0, |x, _| 10.0 + x as f32).unwrap();
        s.set(4, 4, 13.0); // neighbours at 13 (x = 4 column) and 12 (x = 3)
        let r = breach_pits(&mut s, 0.0, 1e-3);
        assert_eq!(all_drain(&s, 0.0), 0);
        assert_eq!(r.changed, 1, "{r:?}");
        assert!((s.get(3, 3) - (13.0 - 1e-3)).abs() < 1e-5);
    }

    #[test]
    fn spike_and_pit_removal_touch_only_the_offending_nodes() {
        let mut hm = Heightmap::from_fn(12, 12, 1.0, |x, y| 5.0 + (x + 2 * y) as f32 * 0.1).unwrap();
        hm.set(3, 3, 20.0);
        hm.set(8, 6, 1.0);
        hm.set(6, 9, 5.0 + 2.4 + 0.3); // within tolerance of its highest neighbour
        let before = hm.clone();
        let rep = remove_spikes(&mut hm, 0.0, 0.5);
        assert_eq!(rep.changed, 1);
        let hi = [(2, 2), (3, 2), (4, 2), (2, 3), (4, 3), (2, 4), (3, 4), (4, 4)]
            .iter()
            .map(|&(x, y)| before.get(x, y))
            .fold(f32::MIN, f32::max);
        assert_eq!(hm.get(3, 3), hi);
        let rep = raise_pits(&mut hm, 0.0, 0.5);
        assert_eq!(rep.changed, 1);
        assert_eq!(hm.get(8, 6), before.get(7, 5));
        let changed: Vec<usize> = (0..hm.len()).filter(|&i| hm.data[i] != before.data[i]).collect();
        assert_eq!(changed, vec![3 * 12 + 3, 6 * 12 + 8]);
        assert_eq!(pits_and_spikes(&hm, 0.0, 0.5), Default::default());
    }
}
