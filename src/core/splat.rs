//! Splat weights: how much sand, grass, rock and snow covers a node, by the same rule as the
//! editor's terrain material, for the splat maps of an engine tile set (issue #27).
//!
//! The rule is the band part of `splat()` in `shaders/terrain.wgsl` (the lines under "Band
//! weights (layer_weights in material.rs)") and of `editor::look::material::layer_weights`, which
//! the shader mirrors. With `s(a, b, x)` the Hermite smoothstep, `f = (h − sea) / max(peak − sea,
//! 1 m)` the height as a fraction of the peak above the sea, `θ` the slope in degrees
//! (`acos(n_up)` of the unit normal), `w` the height blend and `v` the slope blend, and the
//! edge noise `ε` pushing `f' = f + ε·w`, `θ' = θ + ε·v`:
//!
//! ```text
//! sand  = 1 − s(beach_top − w, beach_top + w, f')
//! dirt  = s(dirt_height − w, dirt_height + w, f')
//! slope = s(dirt_slope − v, dirt_slope + v, θ')
//! rock  = s(rock_slope − v, rock_slope + v, θ')
//! snow  = s(snow_line − w, snow_line + w, f') · (1 − s(snow_max_slope − v, snow_max_slope + v, θ))
//! ```
//!
//! composed as the shader paints them, each layer over what is below (`over(k, a)`: every weight
//! times `1 − a`, then `a` added to layer `k`): ground = sand, grass `(1 − sand)(1 − dirt)`, dirt
//! `(1 − sand)·dirt`; then dirt over it by `slope·(1 − sand)`, rock by `rock`, snow by `snow`.
//!
//! What an exported splat map leaves out, and why: the edge noise (`ε`, a shading detail of the
//! shader's fBm; an exported map uses `ε = 0`, so the boundaries are the bands' smooth lines and an
//! engine adds its own noise), the sediment layer (the deposition map of the tile set carries it)
//! and the wet darkening (a colour, not a layer). Four channels, as engines' splat maps have:
//! **R = sand, G = grass and dirt (soil), B = rock, A = snow**; they sum to 1
//! ([`weights`]), and to 255 in the 8-bit map ([`to_rgba8`]).

/// The bands of the material's layers (`editor::look::material::LayerBands`, whose defaults these
/// are).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplatBands {
    /// Top of the beach: sand below, grass above. Height fraction.
    pub beach_top: f32,
    /// Height where grass gives way to bare dirt. Height fraction.
    pub dirt_height: f32,
    /// Height where snow starts. Height fraction.
    pub snow_line: f32,
    /// Half-width of every height transition. Height fraction.
    pub height_blend: f32,
    /// Slope where grass turns to dirt, degrees.
    pub dirt_slope: f32,
    /// Slope where rock shows, degrees.
    pub rock_slope: f32,
    /// Snow does not hold on slopes steeper than this, degrees.
    pub snow_max_slope: f32,
    /// Half-width of every slope transition, degrees.
    pub slope_blend: f32,
}

impl Default for SplatBands {
    fn default() -> Self {
        Self {
            beach_top: 0.02,
            dirt_height: 0.6,
            snow_line: 0.86,
            height_blend: 0.03,
            dirt_slope: 30.0,
            rock_slope: 40.0,
            snow_max_slope: 42.0,
            slope_blend: 5.0,
        }
    }
}

/// Hermite smoothstep, 0 below `a`, 1 above `b` (a step at `a` when `b <= a`), as the shader's
/// `sstep` (the editor's material uses this one too).
pub fn smoothstep(a: f32, b: f32, x: f32) -> f32 {
    if b <= a {
        return if x < a { 0.0 } else { 1.0 };
    }
    let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The five layer weights (sand, grass, dirt, rock, snow; sum 1) at height fraction `f`, slope
/// `slope` (degrees) and edge noise `noise ∈ [−edge_noise, edge_noise]` (module doc); `exposed`
/// (0 … 1) is dirt a fresh cut bares, painted with the slope's dirt (the editor's sediment rule;
/// 0 for an exported map). The editor's `layer_weights` is this plus its sediment layer.
pub fn layer_weights(b: &SplatBands, f: f32, slope: f32, noise: f32, exposed: f32) -> [f32; 5] {
    let w = b.height_blend.max(1e-4);
    let v = b.slope_blend.max(1e-3);
    let fh = f + noise * w;
    let th = slope + noise * v;
    let sand = 1.0 - smoothstep(b.beach_top - w, b.beach_top + w, fh);
    let dirt_h = smoothstep(b.dirt_height - w, b.dirt_height + w, fh);
    let slope_dirt = smoothstep(b.dirt_slope - v, b.dirt_slope + v, th);
    let rock = smoothstep(b.rock_slope - v, b.rock_slope + v, th);
    let snow = smoothstep(b.snow_line - w, b.snow_line + w, fh)
        * (1.0 - smoothstep(b.snow_max_slope - v, b.snow_max_slope + v, slope));
    let mut wts = [sand, (1.0 - sand) * (1.0 - dirt_h), (1.0 - sand) * dirt_h, 0.0, 0.0];
    let mut over = |k: usize, a: f32| {
        let a = a.clamp(0.0, 1.0);
        for x in wts.iter_mut() {
            *x *= 1.0 - a;
        }
        wts[k] += a;
    };
    over(2, slope_dirt.max(exposed) * (1.0 - sand));
    over(3, rock);
    over(4, snow);
    wts
}

/// The splat map's four weights (sand, soil = grass + dirt, rock, snow; sum 1) with no edge
/// noise.
pub fn weights(b: &SplatBands, f: f32, slope: f32) -> [f32; 4] {
    let l = layer_weights(b, f, slope, 0.0, 0.0);
    [l[0], l[1] + l[2], l[3], l[4]]
}

/// The weights as 8-bit RGBA summing to exactly 255: each rounded, and what rounding lost or
/// added given to or taken from the largest channel (the first of equals).
pub fn to_rgba8(w: [f32; 4]) -> [u8; 4] {
    let mut q = w.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as i32);
    let sum: i32 = q.iter().sum();
    let mut big = 0;
    for k in 1..4 {
        if q[k] > q[big] {
            big = k;
        }
    }
    q[big] = (q[big] + 255 - sum).clamp(0, 255);
    q.map(|v| v as u8)
}

/// Slope in degrees of a unit normal whose second component points up.
pub fn slope_degrees(n: [f32; 3]) -> f32 {
    n[1].clamp(-1.0, 1.0).acos().to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beaches_are_sand_cliffs_rock_peaks_snow_and_weights_sum_to_one() {
        let b = SplatBands::default();
        let top = |w: [f32; 4]| (0..4).max_by(|&i, &j| w[i].total_cmp(&w[j])).unwrap();
        assert_eq!(top(weights(&b, -0.05, 2.0)), 0);
        assert_eq!(top(weights(&b, 0.2, 5.0)), 1);
        assert_eq!(top(weights(&b, 0.3, 60.0)), 2);
        assert_eq!(top(weights(&b, 0.95, 10.0)), 3);
        for f in [-0.1, 0.0, 0.02, 0.3, 0.6, 0.86, 1.0] {
            for s in [0.0, 25.0, 35.0, 40.0, 45.0, 80.0] {
                let w = weights(&b, f, s);
                assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{f} {s} {w:?}");
                let q = to_rgba8(w);
                assert_eq!(q.iter().map(|&v| v as u32).sum::<u32>(), 255, "{w:?} {q:?}");
            }
        }
        assert_eq!(slope_degrees([0.0, 1.0, 0.0]), 0.0);
    }
}
