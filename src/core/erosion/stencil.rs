//! Grid stencils shared by the thermal and pipe models: neighbour resolution across the map's
//! edges ([`Edges`], [`Nb`]), the order the 8-neighbourhood is visited in ([`DIRS`]), and the
//! deterministic booking of one row's change ([`book_row`]).

use super::simd::pos;
use super::{Boundary, EdgeMode, Side};

/// Where one step along an axis (or to a neighbour node) leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nb {
    /// A node of the map (index along the axis, or flat node index).
    In(usize),
    /// Across a wall: no neighbour.
    Wall,
    /// Across a drain edge: outside the map.
    Out,
}

/// The effective edge modes of the four sides.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edges {
    pub left: EdgeMode,
    pub right: EdgeMode,
    pub top: EdgeMode,
    pub bottom: EdgeMode,
}

impl Edges {
    pub fn new(b: &Boundary) -> Self {
        Self {
            left: b.effective(Side::Left),
            right: b.effective(Side::Right),
            top: b.effective(Side::Top),
            bottom: b.effective(Side::Bottom),
        }
    }

    #[inline]
    fn axis(c: usize, d: isize, n: usize, lo: EdgeMode, hi: EdgeMode) -> Nb {
        let cross = |m: EdgeMode, wrapped: usize| match m {
            EdgeMode::Wrap => Nb::In(wrapped),
            EdgeMode::Wall => Nb::Wall,
            EdgeMode::Drain => Nb::Out,
        };
        match d {
            0 => Nb::In(c),
            d if d < 0 => {
                if c > 0 {
                    Nb::In(c - 1)
                } else {
                    cross(lo, n - 1)
                }
            }
            _ => {
                if c + 1 < n {
                    Nb::In(c + 1)
                } else {
                    cross(hi, 0)
                }
            }
        }
    }

    /// Column reached from `x` by `dx ∈ {−1, 0, 1}` on a map `w` wide.
    #[inline]
    pub fn col(&self, x: usize, dx: isize, w: usize) -> Nb {
        Self::axis(x, dx, w, self.left, self.right)
    }

    /// Row reached from `y` by `dy ∈ {−1, 0, 1}` on a map `h` high.
    #[inline]
    pub fn row(&self, y: usize, dy: isize, h: usize) -> Nb {
        Self::axis(y, dy, h, self.top, self.bottom)
    }

    /// The neighbour `(x+dx, y+dy)`: `In(flat index)`, or `Wall` if either axis hits a wall,
    /// else `Out` if either axis leaves through a drain.
    #[inline]
    pub fn node(&self, x: usize, y: usize, dx: isize, dy: isize, w: usize, h: usize) -> Nb {
        match (self.col(x, dx, w), self.row(y, dy, h)) {
            (Nb::Wall, _) | (_, Nb::Wall) => Nb::Wall,
            (Nb::Out, _) | (_, Nb::Out) => Nb::Out,
            (Nb::In(cx), Nb::In(cy)) => Nb::In(cy * w + cx),
        }
    }
}
/// Directions in the order every loop visits them: W, E, N, S, NW, NE, SW, SE (first 4 cardinal).
/// The pipe model's tilt reads its neighbours in the same order.
pub(crate) const DIRS: [(isize, isize); 8] = [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)];

/// Books one row's change `old → new` (exact f64 differences, 8 fixed lanes so the sum is
/// vectorisable yet deterministic) and records it in the maps. Returns (eroded, deposited).
#[inline(always)]
pub(crate) fn book_row(old: &[f32], new: &[f32], maps: Option<(&mut [f32], &mut [f32])>) -> (f64, f64) {
    let n = old.len().min(new.len());
    let (old, new) = (&old[..n], &new[..n]);
    let mut er = [0.0f64; 8];
    let mut de = [0.0f64; 8];
    let oc = old.chunks_exact(8);
    let nc = new.chunks_exact(8);
    let (or, nr) = (oc.remainder(), nc.remainder());
    for (o8, n8) in oc.zip(nc) {
        for l in 0..8 {
            let d = n8[l] as f64 - o8[l] as f64;
            er[l] += if d < 0.0 { -d } else { 0.0 };
            de[l] += if d > 0.0 { d } else { 0.0 };
        }
    }
    for (l, (o, nn)) in or.iter().zip(nr).enumerate() {
        let d = *nn as f64 - *o as f64;
        er[l] += if d < 0.0 { -d } else { 0.0 };
        de[l] += if d > 0.0 { d } else { 0.0 };
    }
    if let Some((me, md)) = maps {
        let (me, md) = (&mut me[..n], &mut md[..n]);
        for k in 0..n {
            let d = new[k] - old[k];
            me[k] += pos(-d);
            md[k] += pos(d);
        }
    }
    (er.iter().sum(), de.iter().sum())
}
