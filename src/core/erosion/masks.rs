//! River and lake detection (seed 002's extension, seed 000's "flow map rendered as rivers/lakes").
//!
//! * **Rivers**: nodes whose flow (particle count, water volume or drainage area — whatever the
//!   model reports in [`super::Fields::flow`]) is at least `threshold`.
//! * **Lakes** from a water field: nodes deeper than `min_depth` whose speed is below `max_speed`
//!   (standing water in the pipe model).
//! * **Lakes** from the terrain alone: the depressions water would fill. A priority flood
//!   (Barnes, Lehman & Mulla 2014) raises every node to its spill height
//!   `s(p) = max(h(p), min over paths to the border of the highest node on the path)`; the lake
//!   depth is `s(p) − h(p)`. Works for every model, including the particle ones that carry no water.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::core::heightmap::Heightmap;

/// `flow[i] >= threshold`.
pub fn river_mask(flow: &[f32], threshold: f32) -> Vec<bool> {
    flow.iter().map(|&f| f >= threshold).collect()
}

/// Standing water: `water[i] > min_depth` and `|velocity[i]| < max_speed`.
pub fn standing_water_mask(water: &[f32], velocity: &[[f32; 2]], min_depth: f32, max_speed: f32) -> Vec<bool> {
    water.iter().zip(velocity).map(|(&d, v)| d > min_depth && (v[0] * v[0] + v[1] * v[1]).sqrt() < max_speed).collect()
}

#[derive(PartialEq)]
struct Cell(f32, u32);
impl Eq for Cell {}
impl Ord for Cell {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on height, ties broken by index so the order is deterministic.
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}
impl PartialOrd for Cell {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Depth of water each node would hold if every depression filled to its spill point (metres).
/// The map border drains (water leaves there).
pub fn depression_depth(hm: &Heightmap) -> Vec<f32> {
    let (w, h) = (hm.width, hm.height);
    let n = w * h;
    let mut filled = hm.data.clone();
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    for y in 0..h {
        for x in 0..w {
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                let i = y * w + x;
                done[i] = true;
                heap.push(Cell(filled[i], i as u32));
            }
        }
    }
    while let Some(Cell(level, i)) = heap.pop() {
        let (x, y) = ((i as usize) % w, (i as usize) / w);
        for (dx, dy) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                continue;
            }
            let j = ny as usize * w + nx as usize;
            if done[j] {
                continue;
            }
            done[j] = true;
            filled[j] = filled[j].max(level);
            heap.push(Cell(filled[j], j as u32));
        }
    }
    filled.iter().zip(&hm.data).map(|(f, h)| f - h).collect()
}

/// Lakes from the terrain: depressions deeper than `min_depth` metres.
pub fn lake_mask(hm: &Heightmap, min_depth: f32) -> Vec<bool> {
    depression_depth(hm).into_iter().map(|d| d > min_depth).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bowl_fills_to_its_rim() {
        // 5×5 with a rim of 3, an inner ring of 2 and a centre pit of 0; one notch at height 1.
        let mut hm = Heightmap::filled(5, 5, 1.0, 3.0).unwrap();
        for y in 1..4 {
            for x in 1..4 {
                hm.set(x, y, 2.0);
            }
        }
        hm.set(2, 2, 0.0);
        // The border drains, but water must rise to the rim (3) to reach it.
        let d = depression_depth(&hm);
        assert_eq!(d[2 * 5 + 2], 3.0);
        assert_eq!(d[5 + 1], 1.0);
        assert_eq!(d[0], 0.0);
        // A notch in the rim at height 1: the inner ring (2) now spills, the pit fills to 2.
        hm.set(2, 0, 1.0);
        let d = depression_depth(&hm);
        assert_eq!(d[2 * 5 + 2], 2.0);
        assert_eq!(d[5 + 1], 0.0);
        // A channel from the pit to the notch: the pit fills only to the notch (1).
        hm.set(2, 1, 0.5);
        let d = depression_depth(&hm);
        assert_eq!(d[2 * 5 + 2], 1.0);
        assert_eq!(d[5 + 2], 0.5);
        assert_eq!(lake_mask(&hm, 0.1).iter().filter(|&&b| b).count(), 2);
    }

    #[test]
    fn river_and_standing_water_masks() {
        assert_eq!(river_mask(&[0.0, 5.0, 10.0], 5.0), vec![false, true, true]);
        let m = standing_water_mask(&[0.0, 1.0, 1.0], &[[0.0, 0.0], [0.0, 0.01], [3.0, 4.0]], 0.1, 0.5);
        assert_eq!(m, vec![false, true, false]);
    }
}
