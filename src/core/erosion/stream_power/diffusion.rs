//! Hillslope diffusion `∂h/∂t = ∇·(κ ∇h)` for the stream-power model, solved implicitly.
//!
//! The 5-point Laplacian is split by direction (locally one-dimensional, "LOD" splitting) and each
//! direction is advanced by one backward-Euler step over the whole `Δt`:
//!
//! ```text
//! (I − Δt·Dxx) h* = h^t,      (I − Δt·Dyy) h^{t+1} = h*
//! ```
//!
//! For a free node `k` on a line with faces `a_{k−½}`, `a_{k+½}` (`a = κ·Δt/Δx² · c_face`):
//! `h'_k + a_{k−½}(h'_k − h'_{k−1}) + a_{k+½}(h'_k − h'_{k+1}) = h_k`, a diagonally dominant
//! tridiagonal system solved by the Thomas algorithm (Sherman–Morrison for periodic lines). Each
//! sweep is unconditionally stable and monotone (an M-matrix: no new extrema, no oscillation at any
//! `Δt`), and conservative: a flux leaves one node and enters its neighbour. Boundary conditions:
//! outlet nodes (Drain edges) are fixed values (Dirichlet) and exchange material with the map;
//! Wall edges have no face (zero flux); Wrap adds the face between the two ends (periodic).
//!
//! Per-node hardness enters through the face coefficient `c_face = 2·c_a·c_b / (c_a + c_b)` (the
//! harmonic mean, 0 when either node is unerodible), so rock with hardness 0 neither sheds nor
//! collects hillslope material.

use rayon::prelude::*;

use super::routing::Grid;

/// Implicit diffusion operator for one map: face coefficients and scratch.
pub(crate) struct Diffusion {
    grid: Grid,
    /// Face between `(x, y)` and its east neighbour (the wrap face at `x = w−1`), row-major.
    fx: Vec<f32>,
    /// Face between `(x, y)` and its south neighbour, stored transposed (`x·h + y`).
    fy_t: Vec<f32>,
    outlet: Vec<u8>,
    outlet_t: Vec<u8>,
    buf_t: Vec<f32>,
}

/// Harmonic mean of two hardness values (0 when either is 0).
#[inline]
fn hmean(a: f32, b: f32) -> f32 {
    let s = a + b;
    if s > 0.0 { 2.0 * a * b / s } else { 0.0 }
}

impl Diffusion {
    pub fn new(grid: Grid, outlet: &[u8], hardness: Option<&[f32]>) -> Self {
        let (w, h) = (grid.w, grid.h);
        let hard = |i: usize| hardness.map_or(1.0, |c| c[i]);
        let mut fx = vec![0.0f32; w * h];
        let mut fy_t = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                if x + 1 < w {
                    fx[i] = hmean(hard(i), hard(i + 1));
                } else if grid.wrap_x && w >= 2 {
                    fx[i] = hmean(hard(i), hard(y * w));
                }
                if y + 1 < h {
                    fy_t[x * h + y] = hmean(hard(i), hard(i + w));
                } else if grid.wrap_y && h >= 2 {
                    fy_t[x * h + y] = hmean(hard(i), hard(x));
                }
            }
        }
        let mut outlet_t = vec![0u8; w * h];
        transpose(outlet, &mut outlet_t, w, h);
        Self { grid, fx, fy_t, outlet: outlet.to_vec(), outlet_t, buf_t: vec![0.0; w * h] }
    }

    /// One implicit step with `r = κ·Δt/Δx²` (dimensionless). `h` is row-major.
    pub fn apply(&mut self, h: &mut [f32], r: f64) {
        if r.is_nan() || r <= 0.0 {
            return;
        }
        let Grid { w, h: rows, wrap_x, wrap_y } = self.grid;
        if w > 1 {
            sweep(h, &self.fx, &self.outlet, w, r, wrap_x);
        }
        if rows > 1 {
            transpose(h, &mut self.buf_t, w, rows);
            sweep(&mut self.buf_t, &self.fy_t, &self.outlet_t, rows, r, wrap_y);
            transpose(&self.buf_t, h, rows, w);
        }
    }
}

/// Solves every line of length `len` of `data` (lines in parallel). Open lines (no wrap) go
/// [`LANES`] at a time through [`solve_open_lines`], the same arithmetic as [`solve_line`] lane by
/// lane (the same bits), with the lanes' elimination chains interleaved so that one line's
/// divisions do not wait on the last.
fn sweep(data: &mut [f32], faces: &[f32], fixed: &[u8], len: usize, r: f64, cyclic: bool) {
    if cyclic {
        data.par_chunks_mut(len)
            .zip(faces.par_chunks(len))
            .zip(fixed.par_chunks(len))
            .for_each_init(LineScratch::default, |s, ((line, f), fx)| solve_line(line, f, fx, r, cyclic, s));
        return;
    }
    let group = len * LANES;
    data.par_chunks_mut(group).zip(faces.par_chunks(group)).zip(fixed.par_chunks(group)).for_each_init(
        || (LineScratch::default(), Vec::new()),
        |(s, lanes), ((lines, f), fx)| {
            if lines.len() == group {
                solve_open_lines(lines, f, fx, len, r, lanes);
            } else {
                for ((line, f), fx) in lines.chunks_mut(len).zip(f.chunks(len)).zip(fx.chunks(len)) {
                    solve_line(line, f, fx, r, false, s);
                }
            }
        },
    );
}

/// Lines solved together by [`solve_open_lines`].
const LANES: usize = 8;

/// [`LANES`] open lines of length `len`, back to back in `lines` (with their `faces` and `fixed`
/// flags alike): for each lane the system and the Thomas algorithm of [`solve_line`] and
/// [`thomas`], operation for operation, with the lanes side by side in `scratch` (`c` and `x`
/// interleaved per position).
fn solve_open_lines(lines: &mut [f32], faces: &[f32], fixed: &[u8], len: usize, r: f64, scratch: &mut Vec<f64>) {
    scratch.clear();
    scratch.resize(2 * LANES * len, 0.0);
    let (cs, xs) = scratch.split_at_mut(LANES * len);
    // The row of the tridiagonal system at position `p` of lane `l`: (sub, dia, sup, rhs).
    let row = |l: usize, p: usize| -> (f64, f64, f64, f64) {
        let k = l * len + p;
        let rhs = lines[k] as f64;
        if fixed[k] != 0 {
            return (0.0, 1.0, 0.0, rhs);
        }
        let left = if p > 0 { r * faces[k - 1] as f64 } else { 0.0 };
        let right = if p + 1 < len { r * faces[k] as f64 } else { 0.0 };
        (-left, 1.0 + left + right, -right, rhs)
    };
    for l in 0..LANES {
        let (_, b, sup, rhs) = row(l, 0);
        cs[l] = sup / b;
        xs[l] = rhs / b;
    }
    for p in 1..len {
        let (prev, cur) = (LANES * (p - 1), LANES * p);
        for l in 0..LANES {
            let (sub, dia, sup, rhs) = row(l, p);
            let b = dia - sub * cs[prev + l];
            cs[cur + l] = sup / b;
            xs[cur + l] = (rhs - sub * xs[prev + l]) / b;
        }
    }
    for p in (0..len - 1).rev() {
        let (cur, next) = (LANES * p, LANES * (p + 1));
        for l in 0..LANES {
            xs[cur + l] -= cs[cur + l] * xs[next + l];
        }
    }
    for l in 0..LANES {
        for p in 0..len {
            let k = l * len + p;
            if fixed[k] == 0 {
                let v = xs[LANES * p + l] as f32;
                if v.is_finite() {
                    lines[k] = v;
                }
            }
        }
    }
}

/// Tiled transpose of a `w × h` row-major `src` into `dst` (`h × w`), output rows in parallel.
pub(crate) fn transpose<T: Copy + Send + Sync>(src: &[T], dst: &mut [T], w: usize, h: usize) {
    const B: usize = 32;
    dst.par_chunks_mut(h * B).enumerate().for_each(|(bx, block)| {
        let x0 = bx * B;
        let xs = block.len() / h;
        for y0 in (0..h).step_by(B) {
            let y1 = (y0 + B).min(h);
            for dx in 0..xs {
                let x = x0 + dx;
                let out = &mut block[dx * h + y0..dx * h + y1];
                for (k, o) in out.iter_mut().enumerate() {
                    *o = src[(y0 + k) * w + x];
                }
            }
        }
    });
}

#[derive(Default)]
struct LineScratch {
    sub: Vec<f64>,
    dia: Vec<f64>,
    sup: Vec<f64>,
    rhs: Vec<f64>,
    tmp: Vec<f64>,
    u: Vec<f64>,
    idx: Vec<usize>,
}

/// One line: `faces[k]` couples node `k` to `k+1` (`faces[n−1]` is the wrap face, used only when
/// `cyclic`); `fixed[k] != 0` holds node `k`.
fn solve_line(line: &mut [f32], faces: &[f32], fixed: &[u8], r: f64, cyclic: bool, s: &mut LineScratch) {
    let n = line.len();
    if n < 2 || fixed.iter().all(|&f| f != 0) {
        return;
    }
    // Order the unknowns: a periodic line with a fixed node is cut open at that node (the node is
    // repeated at both ends), a periodic line of 2 folds its two faces into one.
    s.idx.clear();
    let mut face_of = |k: usize| -> f64 { r * faces[k] as f64 };
    let mut wrap_face = 0.0;
    let mut periodic = false;
    if cyclic && n >= 3 {
        if let Some(f0) = fixed.iter().position(|&f| f != 0) {
            s.idx.extend((0..=n).map(|k| (f0 + k) % n));
        } else {
            s.idx.extend(0..n);
            periodic = true;
            wrap_face = face_of(n - 1);
        }
    } else {
        s.idx.extend(0..n);
    }
    let m = s.idx.len();
    for v in [&mut s.sub, &mut s.dia, &mut s.sup, &mut s.rhs] {
        v.clear();
        v.resize(m, 0.0);
    }
    // Face between position p and p+1 along `idx`.
    let pair_face = |p: usize, idx: &[usize], face_of: &mut dyn FnMut(usize) -> f64| -> f64 {
        let (a, b) = (idx[p], idx[p + 1]);
        if b == (a + 1) % n && (a + 1 < n || cyclic) {
            let mut f = face_of(a);
            if n == 2 && cyclic {
                f += face_of(1);
            }
            f
        } else {
            0.0
        }
    };
    let mut left = 0.0;
    for p in 0..m {
        let k = s.idx[p];
        let right = if p + 1 < m { pair_face(p, &s.idx, &mut face_of) } else { 0.0 };
        s.rhs[p] = line[k] as f64;
        if fixed[k] != 0 {
            s.dia[p] = 1.0;
        } else {
            let (l, rr) = if periodic {
                (if p == 0 { wrap_face } else { left }, if p + 1 == m { wrap_face } else { right })
            } else {
                (left, right)
            };
            s.dia[p] = 1.0 + l + rr;
            s.sub[p] = -l;
            s.sup[p] = -rr;
        }
        left = right;
    }
    if periodic {
        // Sherman–Morrison: corners A[0][m−1] = A[m−1][0] = −wrap_face.
        let alpha = -wrap_face; // A[0][m-1]
        let beta = -wrap_face; // A[m-1][0]
        let gamma = -s.dia[0];
        s.dia[0] -= gamma;
        s.dia[m - 1] -= alpha * beta / gamma;
        s.u.clear();
        s.u.resize(m, 0.0);
        s.u[0] = gamma;
        s.u[m - 1] = beta;
        thomas(&s.sub, &s.dia, &s.sup, &mut s.rhs, &mut s.tmp);
        thomas(&s.sub, &s.dia, &s.sup, &mut s.u, &mut s.tmp);
        let fact = (s.rhs[0] + alpha * s.rhs[m - 1] / gamma) / (1.0 + s.u[0] + alpha * s.u[m - 1] / gamma);
        for p in 0..m {
            s.rhs[p] -= fact * s.u[p];
        }
    } else {
        thomas(&s.sub, &s.dia, &s.sup, &mut s.rhs, &mut s.tmp);
    }
    for p in 0..m {
        let k = s.idx[p];
        if fixed[k] == 0 {
            let v = s.rhs[p] as f32;
            if v.is_finite() {
                line[k] = v;
            }
        }
    }
}

/// Thomas algorithm: solves the tridiagonal system in place in `x` (the right-hand side on entry).
fn thomas(sub: &[f64], dia: &[f64], sup: &[f64], x: &mut [f64], c: &mut Vec<f64>) {
    let m = x.len();
    c.clear();
    c.resize(m, 0.0);
    let mut b = dia[0];
    c[0] = sup[0] / b;
    x[0] /= b;
    for p in 1..m {
        b = dia[p] - sub[p] * c[p - 1];
        c[p] = sup[p] / b;
        x[p] = (x[p] - sub[p] * x[p - 1]) / b;
    }
    for p in (0..m - 1).rev() {
        x[p] -= c[p] * x[p + 1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(w: usize, h: usize, wx: bool, wy: bool) -> Grid {
        Grid { w, h, wrap_x: wx, wrap_y: wy }
    }

    #[test]
    fn walls_conserve_and_smooth() {
        let (w, h) = (9, 7);
        let g = grid(w, h, false, false);
        let outlet = vec![0u8; w * h];
        let mut d = Diffusion::new(g, &outlet, None);
        let mut hm: Vec<f32> = (0..w * h).map(|i| if i == 31 { 100.0 } else { 0.0 }).collect();
        let before: f64 = hm.iter().map(|&v| v as f64).sum();
        d.apply(&mut hm, 5.0);
        let after: f64 = hm.iter().map(|&v| v as f64).sum();
        assert!((before - after).abs() < 1e-3, "{before} {after}");
        assert!(hm[31] < 100.0 && hm[31] > 0.0);
        assert!(hm.iter().all(|v| (0.0..=100.0).contains(v)), "monotone: no new extrema");
    }

    #[test]
    fn backward_euler_matches_the_1d_formula() {
        // 3 free nodes between two fixed ends: solve by hand.
        let g = grid(5, 1, false, false);
        let outlet = vec![1u8, 0, 0, 0, 1];
        let mut d = Diffusion::new(g, &outlet, None);
        let mut hm = vec![0.0f32, 0.0, 6.0, 0.0, 0.0];
        d.apply(&mut hm, 1.0);
        // (1+2)x1 − x2 = 0, −x1 + 3x2 − x3 = 6, −x2 + 3x3 = 0 → x2 = 6·3/7, x1 = x3 = 6/7.
        assert!((hm[2] - 18.0 / 7.0).abs() < 1e-5 && (hm[1] - 6.0 / 7.0).abs() < 1e-5);
        assert_eq!(hm[0], 0.0);
    }

    #[test]
    fn periodic_line_conserves_and_is_symmetric() {
        let g = grid(8, 1, true, false);
        let outlet = vec![0u8; 8];
        let mut d = Diffusion::new(g, &outlet, None);
        let mut hm = vec![0.0f32; 8];
        hm[0] = 8.0;
        d.apply(&mut hm, 2.0);
        let s: f32 = hm.iter().sum();
        assert!((s - 8.0).abs() < 1e-5);
        // Neighbours through the wrap get the same as inside neighbours.
        assert!((hm[1] - hm[7]).abs() < 1e-6 && (hm[2] - hm[6]).abs() < 1e-6);
    }

    #[test]
    fn unerodible_nodes_do_not_exchange() {
        let g = grid(5, 1, false, false);
        let outlet = vec![0u8; 5];
        let hard = [1.0f32, 1.0, 0.0, 1.0, 1.0];
        let mut d = Diffusion::new(g, &outlet, Some(&hard));
        let mut hm = vec![0.0f32, 0.0, 10.0, 0.0, 0.0];
        d.apply(&mut hm, 3.0);
        assert_eq!(hm, vec![0.0, 0.0, 10.0, 0.0, 0.0]);
    }

    #[test]
    fn open_lines_side_by_side_are_the_one_line_solve_bit_for_bit() {
        // 8 lanes and a remainder of 3 lines, outlets and hardness 0 in places, r over 5 decades.
        let (len, lines) = (37, LANES + 3);
        let v = |i: usize, k: u64| crate::core::rng::unit_f32(crate::core::rng::hash2(i as i64, 0, k));
        let faces: Vec<f32> = (0..len * lines).map(|i| if v(i, 1) < 0.1 { 0.0 } else { 2.0 * v(i, 2) }).collect();
        let fixed: Vec<u8> = (0..len * lines).map(|i| u8::from(v(i, 3) < 0.08)).collect();
        let data: Vec<f32> = (0..len * lines).map(|i| 100.0 * v(i, 4) - 20.0).collect();
        for r in [1e-3, 0.37, 4.0, 250.0] {
            let mut together = data.clone();
            sweep(&mut together, &faces, &fixed, len, r, false);
            let mut alone = data.clone();
            let mut s = LineScratch::default();
            for ((line, f), fx) in alone.chunks_mut(len).zip(faces.chunks(len)).zip(fixed.chunks(len)) {
                solve_line(line, f, fx, r, false, &mut s);
            }
            assert_ne!(alone, data, "r = {r}: the solve changed nothing");
            let bits = |d: &[f32]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&together), bits(&alone), "r = {r}");
        }
    }

    #[test]
    fn transpose_round_trips() {
        let (w, h) = (37, 70);
        let a: Vec<u32> = (0..(w * h) as u32).collect();
        let mut t = vec![0; w * h];
        transpose(&a, &mut t, w, h);
        assert_eq!(t[5 * h + 3], a[3 * w + 5]);
        let mut b = vec![0; w * h];
        transpose(&t, &mut b, h, w);
        assert_eq!(a, b);
    }
}
