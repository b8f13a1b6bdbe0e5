//! A map-sized grid of `f32` stored in square tiles, only where it differs from a fill value.
//!
//! The layers of a document ([`super`]) keep their deltas and masks here: a sculpt layer that
//! touched one hill holds the few tiles around the hill, a mask that was never painted holds
//! nothing. Tiles are shared (`Arc`) and copied on the first write after a clone
//! ([`Arc::make_mut`]), so an undo snapshot of a whole layer stack costs one pointer per tile and
//! a stroke afterwards copies only the tiles it touches.
//!
//! Tile `(tx, ty)` covers nodes `tx·T ≤ x < (tx+1)·T`, `ty·T ≤ y < (ty+1)·T` with `T` = [`TILE`];
//! edge tiles are stored at full size and their outside part stays at the fill value.

use std::sync::Arc;

use crate::core::brush::DirtyRect;

/// Tile side, nodes (matches the mesh chunks and the undo tiles).
pub const TILE: usize = 64;
/// Nodes in one tile.
pub const TILE_LEN: usize = TILE * TILE;

/// A `width × height` grid of values, stored as tiles where it differs from `fill`.
#[derive(Clone, Debug)]
pub struct TileGrid {
    width: usize,
    height: usize,
    fill: f32,
    tiles: Vec<Option<Arc<[f32]>>>,
}

impl TileGrid {
    /// A grid that is `fill` everywhere (no tile stored).
    pub fn new(width: usize, height: usize, fill: f32) -> Self {
        let n = width.div_ceil(TILE) * height.div_ceil(TILE);
        Self { width, height, fill, tiles: vec![None; n] }
    }

    /// The grid of `data` (`data[y·width + x]`), storing only tiles that differ from `fill` in
    /// some bit.
    pub fn from_dense(width: usize, height: usize, fill: f32, data: &[f32]) -> Self {
        assert_eq!(data.len(), width * height, "dense data must be width × height");
        let mut g = Self::new(width, height, fill);
        for ty in 0..g.tiles_y() {
            for tx in 0..g.tiles_x() {
                let (x0, y0, x1, y1) = g.tile_rect(tx, ty);
                let differs = (y0..y1)
                    .any(|y| data[y * width + x0..y * width + x1].iter().any(|v| v.to_bits() != fill.to_bits()));
                if differs {
                    let t = g.tile_mut(tx, ty);
                    for y in y0..y1 {
                        let row = (y - y0) * TILE;
                        t[row..row + x1 - x0].copy_from_slice(&data[y * width + x0..y * width + x1]);
                    }
                }
            }
        }
        g
    }

    /// The grid of `data` with every tile stored (the base heights: dense by nature, and a
    /// project file then pays in bytes for the size it claims).
    pub fn from_dense_all(width: usize, height: usize, data: &[f32]) -> Self {
        assert_eq!(data.len(), width * height, "dense data must be width × height");
        let mut g = Self::new(width, height, 0.0);
        for ty in 0..g.tiles_y() {
            for tx in 0..g.tiles_x() {
                let (x0, y0, x1, y1) = g.tile_rect(tx, ty);
                let t = g.tile_mut(tx, ty);
                for y in y0..y1 {
                    let row = (y - y0) * TILE;
                    t[row..row + x1 - x0].copy_from_slice(&data[y * width + x0..y * width + x1]);
                }
            }
        }
        g
    }

    /// Nodes along x.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Nodes along y.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The value of every node without a stored tile.
    pub fn fill(&self) -> f32 {
        self.fill
    }

    /// Tiles along x.
    pub fn tiles_x(&self) -> usize {
        self.width.div_ceil(TILE)
    }

    /// Tiles along y.
    pub fn tiles_y(&self) -> usize {
        self.height.div_ceil(TILE)
    }

    /// Number of tile slots (stored or not).
    pub fn tile_count(&self) -> usize {
        self.tiles.len()
    }

    /// Node rectangle `(x0, y0, x1, y1)` (ends exclusive) of tile `(tx, ty)`, clipped to the map.
    pub fn tile_rect(&self, tx: usize, ty: usize) -> (usize, usize, usize, usize) {
        let (x0, y0) = (tx * TILE, ty * TILE);
        (x0, y0, (x0 + TILE).min(self.width), (y0 + TILE).min(self.height))
    }

    /// Stored tile `i` (row-major tile index), if any.
    pub fn tile(&self, i: usize) -> Option<&[f32]> {
        self.tiles.get(i).and_then(|t| t.as_deref())
    }

    /// Stores tile `i` as `data` (`TILE_LEN` values; an outside part of an edge tile must hold
    /// the fill value). Used by the project reader.
    pub fn set_tile(&mut self, i: usize, data: Vec<f32>) {
        assert_eq!(data.len(), TILE_LEN);
        self.tiles[i] = Some(data.into());
    }

    /// Tile `(tx, ty)` for writing: stored (at the fill value) if it was not, copied first if an
    /// undo snapshot shares it.
    pub fn tile_mut(&mut self, tx: usize, ty: usize) -> &mut [f32] {
        let i = ty * self.tiles_x() + tx;
        let fill = self.fill;
        let t = self.tiles[i].get_or_insert_with(|| vec![fill; TILE_LEN].into());
        Arc::make_mut(t)
    }

    /// The value at node `(x, y)`.
    pub fn get(&self, x: usize, y: usize) -> f32 {
        let i = (y / TILE) * self.tiles_x() + x / TILE;
        match &self.tiles[i] {
            Some(t) => t[(y % TILE) * TILE + x % TILE],
            None => self.fill,
        }
    }

    /// Sets node `(x, y)` (stores its tile if needed).
    pub fn set(&mut self, x: usize, y: usize, v: f32) {
        if self.get(x, y).to_bits() == v.to_bits() {
            return;
        }
        let t = self.tile_mut(x / TILE, y / TILE);
        t[(y % TILE) * TILE + x % TILE] = v;
    }

    /// The whole grid as `width × height` values.
    pub fn to_dense(&self) -> Vec<f32> {
        let mut out = vec![self.fill; self.width * self.height];
        self.write_rect(&mut out, DirtyRect::new(0, 0, self.width, self.height));
        out
    }

    /// Writes the grid's values inside `rect` into `out` (`width × height`, row-major).
    pub fn write_rect(&self, out: &mut [f32], rect: DirtyRect) {
        let fill = self.fill;
        self.for_rows(rect, |y, x0, len, vals| {
            let o = &mut out[y * self.width + x0..][..len];
            match vals {
                Some(v) => o.copy_from_slice(v),
                None => o.fill(fill),
            }
        });
    }

    /// Calls `f(y, x0, len, values)` for each row segment of `rect` within one tile, with
    /// `values` `None` where the tile is not stored (the segment is at the fill value).
    fn for_rows(&self, rect: DirtyRect, mut f: impl FnMut(usize, usize, usize, Option<&[f32]>)) {
        let (x1, y1) = (rect.x1.min(self.width), rect.y1.min(self.height));
        if rect.x0 >= x1 || rect.y0 >= y1 {
            return;
        }
        for ty in rect.y0 / TILE..y1.div_ceil(TILE) {
            for tx in rect.x0 / TILE..x1.div_ceil(TILE) {
                let (tx0, ty0, tx1, ty1) = self.tile_rect(tx, ty);
                let (ax, bx) = (tx0.max(rect.x0), tx1.min(x1));
                let tile = self.tiles[ty * self.tiles_x() + tx].as_deref();
                for y in ty0.max(rect.y0)..ty1.min(y1) {
                    match tile {
                        Some(t) => {
                            f(y, ax, bx - ax, Some(&t[(y - ty0) * TILE + ax - tx0..(y - ty0) * TILE + bx - tx0]))
                        }
                        None => f(y, ax, bx - ax, None),
                    }
                }
            }
        }
    }

    /// Adds this grid into `out` inside `rect`: `out += scale · self`, or with a mask
    /// `out += scale · mask · self`. Tiles not stored add `scale · fill` (skipped when the fill is 0).
    pub fn add_into(&self, out: &mut [f32], rect: DirtyRect, scale: f32, mask: Option<&TileGrid>) {
        let w = self.width;
        let mut mrow = vec![0.0f32; TILE];
        let fills = [self.fill; TILE];
        self.for_rows(rect, |y, x0, len, vals| {
            let vals = match vals {
                Some(v) => v,
                None if self.fill == 0.0 => return,
                None => &fills[..len],
            };
            let o = &mut out[y * w + x0..][..len];
            match mask {
                None => {
                    if scale == 1.0 {
                        o.iter_mut().zip(vals).for_each(|(o, v)| *o += v);
                    } else {
                        o.iter_mut().zip(vals).for_each(|(o, v)| *o += scale * v);
                    }
                }
                Some(m) => {
                    let mr = &mut mrow[..len];
                    mr.iter_mut().enumerate().for_each(|(i, v)| *v = m.get(x0 + i, y));
                    o.iter_mut().zip(vals).zip(mr.iter()).for_each(|((o, v), m)| *o += scale * m * v);
                }
            }
        });
    }

    /// The `w × h` nodes from `(x0, y0)` as a grid of their own, with the same fill (tiles stored
    /// only where the window differs from it). `None` when the window is empty or leaves the grid.
    pub fn crop(&self, x0: usize, y0: usize, w: usize, h: usize) -> Option<TileGrid> {
        if w == 0 || h == 0 || x0 + w > self.width || y0 + h > self.height {
            return None;
        }
        let mut data = vec![self.fill; w * h];
        self.for_rows(DirtyRect::new(x0, y0, x0 + w, y0 + h), |y, sx, len, vals| {
            if let Some(v) = vals {
                data[(y - y0) * w + sx - x0..][..len].copy_from_slice(v);
            }
        });
        Some(TileGrid::from_dense(w, h, self.fill, &data))
    }

    /// Drops stored tiles whose every node equals the fill (bit for bit).
    pub fn prune(&mut self) {
        let fill = self.fill.to_bits();
        for t in &mut self.tiles {
            if t.as_ref().is_some_and(|d| d.iter().all(|v| v.to_bits() == fill)) {
                *t = None;
            }
        }
    }

    /// Tiles stored.
    pub fn stored(&self) -> usize {
        self.tiles.iter().filter(|t| t.is_some()).count()
    }

    /// Bytes the stored tiles hold.
    pub fn bytes(&self) -> usize {
        self.stored() * TILE_LEN * std::mem::size_of::<f32>()
    }

    /// Bytes of tiles stored here that `other` does not share (the memory an undo snapshot
    /// holding `self` costs while `other` is current).
    pub fn bytes_not_shared_with(&self, other: &TileGrid) -> usize {
        let shared = |i: usize| match (&self.tiles[i], other.tiles.get(i).and_then(|t| t.as_ref())) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        (0..self.tiles.len()).filter(|&i| self.tiles[i].is_some() && !shared(i)).count()
            * TILE_LEN
            * std::mem::size_of::<f32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_round_trip_stores_only_tiles_that_differ() {
        let (w, h) = (150, 70);
        let mut data = vec![0.0f32; w * h];
        data[3 * w + 140] = 2.5; // tile (2, 0)
        data[69 * w + 5] = -1.0; // tile (0, 1)
        let g = TileGrid::from_dense(w, h, 0.0, &data);
        assert_eq!(g.stored(), 2);
        assert_eq!(g.to_dense(), data);
        assert_eq!(g.get(140, 3), 2.5);
        assert_eq!(g.get(0, 0), 0.0);
    }

    #[test]
    fn add_into_with_mask_and_scale() {
        let (w, h) = (100, 80);
        let data: Vec<f32> = (0..w * h).map(|i| (i % 7) as f32).collect();
        let g = TileGrid::from_dense(w, h, 0.0, &data);
        let mut mask = TileGrid::new(w, h, 1.0);
        mask.set(10, 10, 0.0);
        mask.set(90, 70, 0.5);
        let mut out = vec![1.0f32; w * h];
        g.add_into(&mut out, DirtyRect::new(0, 0, w, h), 2.0, Some(&mask));
        for y in 0..h {
            for x in 0..w {
                let m = mask.get(x, y);
                assert_eq!(out[y * w + x], 1.0 + 2.0 * m * data[y * w + x], "({x}, {y})");
            }
        }
        // A partial rectangle touches nothing outside it.
        let mut part = vec![0.0f32; w * h];
        g.add_into(&mut part, DirtyRect::new(60, 20, 70, 30), 1.0, None);
        for y in 0..h {
            for x in 0..w {
                let inside = (60..70).contains(&x) && (20..30).contains(&y);
                assert_eq!(part[y * w + x], if inside { data[y * w + x] } else { 0.0 });
            }
        }
    }

    #[test]
    fn a_clone_shares_tiles_until_written() {
        let mut a = TileGrid::new(200, 200, 0.0);
        a.set(5, 5, 1.0);
        a.set(150, 150, 1.0);
        let snapshot = a.clone();
        assert_eq!(snapshot.bytes_not_shared_with(&a), 0);
        a.set(6, 6, 2.0);
        assert_eq!(snapshot.get(6, 6), 0.0, "the snapshot kept its value");
        assert_eq!(snapshot.bytes_not_shared_with(&a), TILE_LEN * 4, "one tile copied");
        a.set(6, 6, 0.0);
        a.set(5, 5, 0.0);
        a.prune();
        assert_eq!(a.stored(), 1);
    }
}
