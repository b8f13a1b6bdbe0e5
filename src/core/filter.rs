//! Grid filters shared by several models: a separable, deterministic Gaussian blur.
//!
//! The kernel is the sampled Gaussian `w(k) = exp(−k² / 2σ²)` for `|k| ≤ ⌈3σ⌉` (σ in nodes),
//! normalised so `Σ w = 1`. The 2-D blur is two 1-D passes (rows, then columns). Every output
//! value is a fixed-order sum, so the result is bit-identical at any rayon thread count.
//!
//! Edges (a 1-D pass over `n` samples, `N(j) = Σ_{i ∈ [0,n)} w(i − j)` the part of the kernel
//! centred on `j` that falls inside the map):
//!
//! * [`BlurEdge::Renormalize`] — a *gather*: `out(i) = Σ_j w(i − j) v(j) / N(i)`. A constant
//!   field stays exactly constant; the sum of the field is *not* conserved near the edges. This
//!   is the right blur for heights (seed 002 smooths the heightmap after the snowballs).
//! * [`BlurEdge::Conserve`] — a *scatter*: every sample spreads itself over the in-map part of
//!   its kernel, `out(i) = Σ_j w(i − j) v(j) / N(j)`. `Σ out = Σ v` (up to f32 rounding) — the
//!   right blur for a *change* map whose sum is material that must be accounted for (seed 000's
//!   "accumulate the changes separately, smooth them, then apply").
//! * Wrapped axes use periodic indexing (`N ≡ 1`); both modes coincide there and conserve.

use rayon::prelude::*;

/// What the blur does where the kernel overhangs a non-wrapped edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlurEdge {
    /// Gather and renormalise over the in-map part of the kernel (keeps flat fields flat).
    #[default]
    Renormalize,
    /// Scatter each sample over the in-map part of its kernel (keeps the field's sum).
    Conserve,
}

/// Edge handling of a blur.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlurOptions {
    /// Periodic in x (the left and right edges are neighbours).
    pub wrap_x: bool,
    /// Periodic in y.
    pub wrap_y: bool,
    /// What happens at non-wrapped edges.
    pub edge: BlurEdge,
}

/// The normalised, symmetric Gaussian kernel for `sigma` (nodes), from `−r` to `r` with
/// `r = ⌈3σ⌉` capped at `max_radius`. Returns `[1.0]` for a sigma that is not a positive finite
/// number (the identity).
pub fn gaussian_kernel(sigma: f32, max_radius: usize) -> Vec<f32> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return vec![1.0];
    }
    let s = sigma as f64;
    let r = ((3.0 * s).ceil() as usize).min(max_radius).max(1);
    let mut w: Vec<f64> = (0..=2 * r)
        .map(|i| {
            let k = i as f64 - r as f64;
            (-(k * k) / (2.0 * s * s)).exp()
        })
        .collect();
    let sum: f64 = w.iter().sum();
    w.iter_mut().for_each(|x| *x /= sum);
    w.into_iter().map(|x| x as f32).collect()
}

/// Gaussian blur of a row-major `width × height` field in place, sigma in nodes, edges
/// renormalised, no wrap. A sigma that is not a positive finite number, or data whose length is
/// not `width × height`, leaves the field unchanged.
pub fn gaussian_blur(data: &mut [f32], width: usize, height: usize, sigma: f32) {
    gaussian_blur_with(data, width, height, sigma, BlurOptions::default());
}

/// Gaussian blur with explicit edge handling (see the module doc).
pub fn gaussian_blur_with(data: &mut [f32], width: usize, height: usize, sigma: f32, opts: BlurOptions) {
    if width == 0 || height == 0 || width.checked_mul(height) != Some(data.len()) {
        return;
    }
    if !(sigma.is_finite() && sigma > 0.0) {
        return;
    }
    let max_r = width.max(height);
    let kernel = gaussian_kernel(sigma, max_r);
    let r = kernel.len() / 2;
    let mut tmp = vec![0.0f32; data.len()];

    // Pass 1: rows (x). data → tmp.
    let norm_x = edge_norms(&kernel, width, opts.wrap_x);
    data.par_chunks(width).zip(tmp.par_chunks_mut(width)).for_each_init(
        || vec![0.0f32; width],
        |scaled, (src, dst)| {
            let src: &[f32] = if !opts.wrap_x && opts.edge == BlurEdge::Conserve {
                for ((s, &v), &n) in scaled.iter_mut().zip(src).zip(&norm_x) {
                    *s = v / n;
                }
                scaled
            } else {
                src
            };
            blur_line(src, dst, &kernel, r, opts.wrap_x);
            if !opts.wrap_x && opts.edge == BlurEdge::Renormalize {
                for (d, &n) in dst.iter_mut().zip(&norm_x) {
                    *d /= n;
                }
            }
        },
    );

    // Pass 2: columns (y). tmp → data, one output row at a time.
    let norm_y = edge_norms(&kernel, height, opts.wrap_y);
    if !opts.wrap_y && opts.edge == BlurEdge::Conserve {
        tmp.par_chunks_mut(width).zip(&norm_y).for_each(|(row, &n)| row.iter_mut().for_each(|v| *v /= n));
    }
    let tmp = &tmp;
    data.par_chunks_mut(width).enumerate().for_each(|(y, out)| {
        out.iter_mut().for_each(|v| *v = 0.0);
        for (k, &w) in kernel.iter().enumerate() {
            let yy = y as isize + k as isize - r as isize;
            let src_y = if opts.wrap_y {
                yy.rem_euclid(height as isize) as usize
            } else if yy < 0 || yy >= height as isize {
                continue;
            } else {
                yy as usize
            };
            let src = &tmp[src_y * width..(src_y + 1) * width];
            for (o, &s) in out.iter_mut().zip(src) {
                *o += w * s;
            }
        }
        if !opts.wrap_y && opts.edge == BlurEdge::Renormalize {
            let n = norm_y[y];
            out.iter_mut().for_each(|v| *v /= n);
        }
    });
}

/// `N(j)`: the in-map part of the kernel centred on each of `n` positions (all 1 when wrapping).
fn edge_norms(kernel: &[f32], n: usize, wrap: bool) -> Vec<f32> {
    let r = kernel.len() / 2;
    (0..n)
        .map(|j| {
            if wrap {
                return 1.0;
            }
            let mut s = 0.0f32;
            for (k, &w) in kernel.iter().enumerate() {
                let i = j as isize + k as isize - r as isize;
                if i >= 0 && i < n as isize {
                    s += w;
                }
            }
            s
        })
        .collect()
}

/// One 1-D convolution `dst(i) = Σ_k w(k) src(i + k − r)` with zero (or periodic) outside.
fn blur_line(src: &[f32], dst: &mut [f32], kernel: &[f32], r: usize, wrap: bool) {
    let n = src.len();
    for (i, d) in dst.iter_mut().enumerate() {
        let mut acc = 0.0f32;
        if !wrap && i >= r && i + r < n {
            // Interior: the whole kernel is inside; plain slices, no index checks per tap.
            for (&w, &s) in kernel.iter().zip(&src[i - r..=i + r]) {
                acc += w * s;
            }
        } else {
            for (k, &w) in kernel.iter().enumerate() {
                let j = i as isize + k as isize - r as isize;
                if wrap {
                    acc += w * src[j.rem_euclid(n as isize) as usize];
                } else if j >= 0 && j < n as isize {
                    acc += w * src[j as usize];
                }
            }
        }
        *d = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(w: usize, h: usize) -> Vec<f32> {
        (0..w * h).map(|i| ((i * 7919) % 101) as f32 * 0.1 - 3.0).collect()
    }

    #[test]
    fn kernel_is_normalised_symmetric_and_gaussian() {
        let k = gaussian_kernel(1.5, 100);
        assert_eq!(k.len(), 2 * 5 + 1);
        let s: f32 = k.iter().sum();
        assert!((s - 1.0).abs() < 1e-6);
        for i in 0..k.len() {
            assert_eq!(k[i], k[k.len() - 1 - i]);
        }
        // Ratio of neighbouring taps follows exp(−(2k+1)/2σ²).
        let r = k.len() / 2;
        let ratio = k[r + 1] / k[r];
        assert!((ratio - (-1.0f32 / (2.0 * 2.25)).exp()).abs() < 1e-5);
        assert_eq!(gaussian_kernel(f32::NAN, 10), vec![1.0]);
        assert_eq!(gaussian_kernel(-1.0, 10), vec![1.0]);
        assert_eq!(gaussian_kernel(1e30, 4).len(), 9);
    }

    #[test]
    fn renormalised_blur_keeps_a_constant_field_constant() {
        let (w, h) = (13, 9);
        let mut d = vec![2.5f32; w * h];
        gaussian_blur(&mut d, w, h, 2.0);
        for v in d {
            assert!((v - 2.5).abs() < 1e-5, "{v}");
        }
    }

    #[test]
    fn conservative_blur_keeps_the_sum() {
        let (w, h) = (17, 11);
        let src = field(w, h);
        let before: f64 = src.iter().map(|&v| v as f64).sum();
        let mut d = src.clone();
        gaussian_blur_with(&mut d, w, h, 1.7, BlurOptions { edge: BlurEdge::Conserve, ..Default::default() });
        let after: f64 = d.iter().map(|&v| v as f64).sum();
        assert!((after - before).abs() < 1e-3, "{before} {after}");
        assert_ne!(d, src);
        // The renormalising blur does not conserve the sum of a field with a spike at the edge.
        let mut e = vec![0.0f32; w * h];
        e[0] = 1.0;
        gaussian_blur(&mut e, w, h, 1.7);
        let s: f32 = e.iter().sum();
        assert!((s - 1.0).abs() > 0.1);
    }

    #[test]
    fn wrapped_blur_conserves_and_is_translation_invariant() {
        let (w, h) = (12, 10);
        let mut a = vec![0.0f32; w * h];
        a[0] = 1.0;
        let mut b = vec![0.0f32; w * h];
        b[5 * w + 6] = 1.0;
        let o = BlurOptions { wrap_x: true, wrap_y: true, edge: BlurEdge::Renormalize };
        gaussian_blur_with(&mut a, w, h, 1.0, o);
        gaussian_blur_with(&mut b, w, h, 1.0, o);
        let sa: f32 = a.iter().sum();
        assert!((sa - 1.0).abs() < 1e-5);
        for y in 0..h {
            for x in 0..w {
                let shifted = b[((y + 5) % h) * w + (x + 6) % w];
                assert!((a[y * w + x] - shifted).abs() < 1e-6);
            }
        }
        // The spike wraps around: its left neighbour is the last column.
        assert!(a[w - 1] > 0.05 && (a[w - 1] - a[1]).abs() < 1e-6);
    }

    #[test]
    fn blur_matches_direct_2d_convolution() {
        let (w, h) = (9, 8);
        let src = field(w, h);
        let mut d = src.clone();
        gaussian_blur(&mut d, w, h, 0.8);
        let k = gaussian_kernel(0.8, 9);
        let r = (k.len() / 2) as isize;
        for y in 0..h as isize {
            for x in 0..w as isize {
                let (mut acc, mut norm) = (0.0f64, 0.0f64);
                for dy in -r..=r {
                    for dx in -r..=r {
                        let (xx, yy) = (x + dx, y + dy);
                        if xx >= 0 && yy >= 0 && xx < w as isize && yy < h as isize {
                            let wt = k[(dx + r) as usize] as f64 * k[(dy + r) as usize] as f64;
                            acc += wt * src[(yy * w as isize + xx) as usize] as f64;
                            norm += wt;
                        }
                    }
                }
                let got = d[(y * w as isize + x) as usize] as f64;
                assert!((got - acc / norm).abs() < 1e-4, "{x},{y}: {got} vs {}", acc / norm);
            }
        }
    }

    #[test]
    fn bad_inputs_are_ignored_and_results_are_thread_independent() {
        let mut d = field(6, 5);
        let orig = d.clone();
        gaussian_blur(&mut d, 6, 5, 0.0);
        gaussian_blur(&mut d, 6, 5, f32::NAN);
        gaussian_blur(&mut d, 6, 5, -3.0);
        gaussian_blur(&mut d, 7, 5, 1.0);
        assert_eq!(d, orig);
        gaussian_blur(&mut d, 6, 5, f32::INFINITY);
        assert_eq!(d, orig);
        let mut huge = orig.clone();
        gaussian_blur(&mut huge, 6, 5, 1e20);
        assert!(huge.iter().all(|v| v.is_finite()));
        let mut one = vec![3.0f32];
        gaussian_blur(&mut one, 1, 1, 2.0);
        assert!((one[0] - 3.0).abs() < 1e-5);

        let (w, h) = (64, 48);
        let src = field(w, h);
        let run = |n: usize| {
            let mut d = src.clone();
            rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(|| {
                gaussian_blur_with(
                    &mut d,
                    w,
                    h,
                    2.3,
                    BlurOptions { wrap_x: true, wrap_y: false, edge: BlurEdge::Conserve },
                )
            });
            d
        };
        let a = run(1);
        let b = run(2);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
