//! How water is drawn (issue #5): the sea plane at sea level (seed 004), waves running toward
//! the shore from a distance-to-shore field, an exact Euclidean distance transform (seed 002,
//! [`crate::core::distance`]), and the pipe model's water as its own surface (seed 003).
//!
//! Bevy-free math the shader mirrors (tested here, drawn by `crate::app::water` and
//! `shaders/water.wgsl`):
//!
//! - **Depth colour and opacity** (Beer–Lambert-like): with `z` the water depth along the view
//!   (from the depth prepass), `t_c = 1 − exp(−z / color_depth)` mixes `shallow → deep` colour and
//!   `α = 1 − clarity · exp(−z / opacity_depth)` is the opacity ([`depth_mix`]).
//! - **Fresnel** (Schlick, water `F₀ = 0.02`): `F = F₀ + (1 − F₀)(1 − cos θ)⁵`, scaled by
//!   `fresnel`; it raises opacity and reflection at grazing angles.
//! - **Shore waves**: with `d` the signed distance to the shore (metres, positive at sea,
//!   [`crate::core::distance::shore_distance`]), `k = 2π / wave_length`, `ω = k · wave_speed`,
//!   the crest function is `φ = k·d + ω·t`, `w = ((1 + cos φ) / 2)^4`; its amplitude fades in from
//!   `wave_reach` to the shore ([`shore_wave`]); crests run toward smaller `d`, i.e. landward, and
//!   whiten into foam as they break near the shore.
//! - **Filtering by the pixel's footprint** (issue #35: a 4 km island seen whole must not show
//!   14 m crests as wide aliased stripes): with `f` the metres one pixel covers, the crest
//!   fades to its mean over a cycle, `E[((1 + cos φ)/2)^4] = 35/128`, as `f` grows from `λ/8` to
//!   `λ/4` ([`shore_wave_filtered`]) — the band of breaking water stays, the stripes go.
//! - **Foam** along the waterline, `foam_width` metres wide measured *horizontally* from the
//!   shore (the same `d`), so the band is as wide on a gentle 32 km coast as on a steep island
//!   cliff: `f = 1 − smoothstep(0, max(foam_width, footprint), d)`, scaled by
//!   `min(1, foam_width / footprint)` so a band narrower than a pixel keeps its coverage instead of
//!   flickering ([`waterline_foam`]), then broken by noise. The pipe model's sheet flow has no
//!   shore field: it foams where its depth is under `0.03·foam_width` (9 cm at the default).

use serde::{Deserialize, Serialize};

crate::params! {
    /// Parameters of the water look.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct WaterParams {
        /// Height of the sea surface, metres. This is the sea level of the whole look (the terrain
        /// material's beach band reads it too).
        pub sea_level: f32 = 0.0, range [-10000.0, 10000.0];
        /// Draw the sea plane.
        pub sea_plane: bool = true;
        /// Measure the water depth with the camera's depth prepass (exact, any ground shape) instead of
        /// from the height field under the surface (flat-bottom approximation). Default `false`: Mesa's
        /// software Vulkan crashes with a depth prepass and the atmosphere together.
        pub depth_prepass: bool = false;
        /// Colour of shallow water (sRGB colour).
        pub shallow_color: [f32; 3] = [0.10, 0.62, 0.60], range [0.0, 1.0];
        /// Colour of deep water (sRGB colour).
        pub deep_color: [f32; 3] = [0.01, 0.09, 0.17], range [0.0, 1.0];
        /// Water depth at which the colour is `1 − 1/e` of the way to `deep_color`, metres.
        pub color_depth: f32 = 10.0, range [0.01, 1000.0];
        /// Water depth at which transparency has fallen to `1/e`, metres.
        pub opacity_depth: f32 = 3.0, range [0.01, 1000.0];
        /// How much of the ground shows through very shallow water.
        pub clarity: f32 = 0.85, range [0.0, 1.0];
        /// Strength of the Fresnel reflection at grazing angles.
        pub fresnel: f32 = 1.0, range [0.0, 1.0];
        /// Perceptual roughness of the surface (0 = mirror).
        pub roughness: f32 = 0.06, range [0.02, 1.0];
        /// How much the animated ripples tilt the normal.
        pub ripple_strength: f32 = 0.35, range [0.0, 1.0];
        /// Wavelength of the largest ripple octave, metres.
        pub ripple_scale: f32 = 9.0, range [0.1, 1000.0];
        /// Speed of the ripples, metres per second.
        pub ripple_speed: f32 = 1.2, range [0.0, 50.0];
        /// Draw foam along the waterline and on breaking shore waves.
        pub foam: bool = true;
        /// Width of the foam band along the waterline, metres measured horizontally from the shore
        /// (pipe water: foam where its depth is under 3 % of this).
        pub foam_width: f32 = 3.0, range [0.0, 50.0];
        /// Foam colour (sRGB colour).
        pub foam_color: [f32; 3] = [0.93, 0.96, 0.97], range [0.0, 1.0];
        /// Draw waves running toward the shore (from the jump-flooded distance to the shore).
        pub shore_waves: bool = true;
        /// Distance between wave crests, metres.
        pub wave_length: f32 = 14.0, range [0.5, 1000.0];
        /// Speed of the crests toward the shore, metres per second.
        pub wave_speed: f32 = 4.0, range [0.0, 100.0];
        /// How strongly crests tilt the surface and whiten near the shore.
        pub wave_strength: f32 = 0.7, range [0.0, 1.0];
        /// Distance from the shore out to which the waves show, metres.
        pub wave_reach: f32 = 90.0, range [0.0, 10000.0];
        /// Draw the pipe model's water (terrain + simulated depth) as its own surface.
        pub pipe_water: bool = true;
        /// Simulated water shallower than this is hidden, metres.
        pub pipe_min_depth: f32 = 0.02, range [0.0, 100.0];
        /// Colour of the simulated water (sRGB colour).
        pub pipe_color: [f32; 3] = [0.16, 0.42, 0.50], range [0.0, 1.0];
        /// Opacity of deep simulated water.
        pub pipe_opacity: f32 = 0.85, range [0.0, 1.0];
    }
}

impl WaterParams {
    /// Checks every field (and nested section) against its declared range. The renderer does not
    /// need it (it draws any value); presets and tests do.
    pub fn validate(&self) -> Result<(), crate::core::params::BadParam> {
        self.check_ranges()
    }
}

impl WaterParams {
    /// A copy with every number clamped into its documented range (NaN → default), so the
    /// shader never sees a division by zero or an absurd slider value.
    pub fn sanitized(&self) -> Self {
        let d = Self::default();
        let c = |v: f32, lo: f32, hi: f32, def: f32| if v.is_nan() { def } else { v.clamp(lo, hi) };
        let col = |v: [f32; 3], def: [f32; 3]| {
            [c(v[0], 0.0, 1.0, def[0]), c(v[1], 0.0, 1.0, def[1]), c(v[2], 0.0, 1.0, def[2])]
        };
        Self {
            sea_level: c(self.sea_level, -10_000.0, 10_000.0, d.sea_level),
            sea_plane: self.sea_plane,
            depth_prepass: self.depth_prepass,
            shallow_color: col(self.shallow_color, d.shallow_color),
            deep_color: col(self.deep_color, d.deep_color),
            color_depth: c(self.color_depth, 0.01, 1000.0, d.color_depth),
            opacity_depth: c(self.opacity_depth, 0.01, 1000.0, d.opacity_depth),
            clarity: c(self.clarity, 0.0, 1.0, d.clarity),
            fresnel: c(self.fresnel, 0.0, 1.0, d.fresnel),
            roughness: c(self.roughness, 0.02, 1.0, d.roughness),
            ripple_strength: c(self.ripple_strength, 0.0, 1.0, d.ripple_strength),
            ripple_scale: c(self.ripple_scale, 0.1, 1000.0, d.ripple_scale),
            ripple_speed: c(self.ripple_speed, 0.0, 50.0, d.ripple_speed),
            foam: self.foam,
            foam_width: c(self.foam_width, 0.0, 50.0, d.foam_width),
            foam_color: col(self.foam_color, d.foam_color),
            shore_waves: self.shore_waves,
            wave_length: c(self.wave_length, 0.5, 1000.0, d.wave_length),
            wave_speed: c(self.wave_speed, 0.0, 100.0, d.wave_speed),
            wave_strength: c(self.wave_strength, 0.0, 1.0, d.wave_strength),
            wave_reach: c(self.wave_reach, 0.0, 10_000.0, d.wave_reach),
            pipe_water: self.pipe_water,
            pipe_min_depth: c(self.pipe_min_depth, 0.0, 100.0, d.pipe_min_depth),
            pipe_color: col(self.pipe_color, d.pipe_color),
            pipe_opacity: c(self.pipe_opacity, 0.0, 1.0, d.pipe_opacity),
        }
    }
}

/// Colour mix toward the deep colour and opacity for water `depth` metres deep (the shader's
/// `depth_mix`): `(1 − e^(−z/color_depth), 1 − clarity·e^(−z/opacity_depth))`.
pub fn depth_mix(p: &WaterParams, depth: f32) -> (f32, f32) {
    let z = depth.max(0.0);
    let t = 1.0 - (-z / p.color_depth.max(1e-3)).exp();
    let a = 1.0 - p.clarity.clamp(0.0, 1.0) * (-z / p.opacity_depth.max(1e-3)).exp();
    (t, a)
}

/// The shore-wave crest height in `0 ..= 1` at signed shore distance `d` metres (positive at
/// sea) and time `t` seconds (the shader's `shore_wave`):
/// `((1 + cos(k·d + ω·t)) / 2)^4 · fade(d)`, `fade = smoothstep(reach, 0.6·reach, d) ·
/// smoothstep(−0.5, 0.5, d)`. Zero on land and beyond `wave_reach`.
pub fn shore_wave(p: &WaterParams, d: f32, t: f32) -> f32 {
    let k = std::f32::consts::TAU / p.wave_length.max(1e-3);
    let phase = k * d + k * p.wave_speed * t;
    let crest = ((1.0 + phase.cos()) * 0.5).powi(4);
    let reach = p.wave_reach.max(1e-3);
    crest * smoothstep(reach, 0.6 * reach, d) * smoothstep(-0.5, 0.5, d)
}

/// Mean of the crest shape `((1 + cos φ) / 2)^4` over a cycle.
pub const CREST_MEAN: f32 = 35.0 / 128.0;

/// [`shore_wave`] filtered for a pixel covering `footprint` metres: the crest fades to its mean
/// over a cycle ([`CREST_MEAN`]) as the footprint grows from `λ/8` to `λ/4` (the shader's
/// `wave_lod`), so crests too fine for the pixels do not alias into stripes.
pub fn shore_wave_filtered(p: &WaterParams, d: f32, t: f32, footprint: f32) -> f32 {
    let lod = 1.0 - smoothstep(p.wave_length / 8.0, p.wave_length / 4.0, footprint);
    let reach = p.wave_reach.max(1e-3);
    let fade = smoothstep(reach, 0.6 * reach, d) * smoothstep(-0.5, 0.5, d);
    CREST_MEAN * fade + (shore_wave(p, d, t) - CREST_MEAN * fade) * lod
}

/// Foam coverage `0 ..= 1` (before its noise) at horizontal distance `d` metres from the shore
/// (positive at sea) for a pixel covering `footprint` metres (the shader's waterline foam).
pub fn waterline_foam(p: &WaterParams, d: f32, footprint: f32) -> f32 {
    if !p.foam || p.foam_width <= 0.0 {
        return 0.0;
    }
    let f = footprint.max(1e-4);
    (1.0 - smoothstep(0.0, p.foam_width.max(f), d.max(0.0))) * (p.foam_width / f).min(1.0)
}

/// Geometry of the pipe model's water surface (see [`pipe_surface`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PipeSurface {
    /// World positions `(x·cell, surface, y·cell)` (Bevy is y-up).
    pub positions: Vec<[f32; 3]>,
    /// Unit normals of the water surface.
    pub normals: Vec<[f32; 3]>,
    /// Per vertex `[u, v, depth, 1]`: velocity (m/s) along x and z and water depth (m), which the
    /// shader reads as the vertex colour.
    pub colors: Vec<[f32; 4]>,
    /// Triangles; only those with at least one wet corner.
    pub indices: Vec<u32>,
}

/// Largest side (vertices) of the pipe-water mesh: bigger maps are sampled every `stride` nodes.
pub const PIPE_MESH_SIDE: usize = 513;

/// The pipe model's water as a surface over the terrain: vertex `(i, j)` samples node
/// `(i·s, j·s)` (`s` = `stride`, so no side exceeds [`PIPE_MESH_SIDE`]) at height
/// `terrain + depth` where the depth is at least `min_depth` (and, when `sea_level` is given,
/// the surface is above it: the sea plane draws that water), and `terrain − drop` elsewhere with
/// `drop = max(0.05 m, 0.05·cell·s)`, so the surface dives under the ground between a wet and a
/// dry node and the depth test draws the waterline. Triangles with three dry corners are left
/// out. Returns an empty surface when `water` (or `velocity`, when given) does not have one
/// value per node.
pub fn pipe_surface(
    map: &crate::core::Heightmap,
    water: &[f32],
    velocity: Option<&[[f32; 2]]>,
    min_depth: f32,
    sea_level: Option<f32>,
) -> PipeSurface {
    let (w, h) = (map.width, map.height);
    if water.len() != w * h || velocity.is_some_and(|v| v.len() != w * h) {
        return PipeSurface::default();
    }
    let stride = w.max(h).div_ceil(PIPE_MESH_SIDE).max(1);
    let (mw, mh) = ((w - 1) / stride + 1, (h - 1) / stride + 1);
    let cell = map.cell_size * stride as f32;
    let drop = (0.05 * cell).max(0.05);
    let min_depth = if min_depth.is_finite() { min_depth.max(0.0) } else { 0.0 };
    let mut wet = vec![false; mw * mh];
    let mut surf = vec![0.0f32; mw * mh];
    let mut out = PipeSurface {
        positions: Vec::with_capacity(mw * mh),
        normals: Vec::with_capacity(mw * mh),
        colors: Vec::with_capacity(mw * mh),
        indices: Vec::new(),
    };
    for j in 0..mh {
        for i in 0..mw {
            let n = (j * stride) * w + i * stride;
            let (b, d) = (map.data[n], water[n]);
            let d = if d.is_finite() { d.max(0.0) } else { 0.0 };
            let above_sea = sea_level.is_none_or(|s| b + d > s + 0.01);
            let is_wet = d >= min_depth && d > 0.0 && above_sea;
            let y = if is_wet { b + d } else { b - drop };
            wet[j * mw + i] = is_wet;
            surf[j * mw + i] = y;
            let v = velocity.map_or([0.0, 0.0], |v| v[n]);
            let v = [if v[0].is_finite() { v[0] } else { 0.0 }, if v[1].is_finite() { v[1] } else { 0.0 }];
            out.positions.push([(i * stride) as f32 * map.cell_size, y, (j * stride) as f32 * map.cell_size]);
            out.colors.push([v[0], v[1], if is_wet { d } else { 0.0 }, 1.0]);
        }
    }
    for j in 0..mh {
        for i in 0..mw {
            let at = |i: usize, j: usize| surf[j * mw + i];
            let (il, ir) = (i.saturating_sub(1), (i + 1).min(mw - 1));
            let (jd, ju) = (j.saturating_sub(1), (j + 1).min(mh - 1));
            let dx = (at(ir, j) - at(il, j)) / (((ir - il).max(1)) as f32 * cell);
            let dz = (at(i, ju) - at(i, jd)) / (((ju - jd).max(1)) as f32 * cell);
            let len = (dx * dx + 1.0 + dz * dz).sqrt();
            out.normals.push([-dx / len, 1.0 / len, -dz / len]);
        }
    }
    for j in 0..mh.saturating_sub(1) {
        for i in 0..mw.saturating_sub(1) {
            let a = j * mw + i;
            let (b, c, d) = (a + 1, a + mw, a + mw + 1);
            if wet[a] || wet[b] || wet[c] || wet[d] {
                // Counter-clockwise seen from above (+y) with x east and z south.
                out.indices.extend([a as u32, c as u32, b as u32, b as u32, c as u32, d as u32]);
            }
        }
    }
    out
}

/// GLSL/WGSL `smoothstep` (works with `e0 > e1` too: a falling edge).
pub fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    if e0 == e1 {
        return if x < e0 { 0.0 } else { 1.0 };
    }
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_mix_goes_from_clear_shallow_to_opaque_deep() {
        let p = WaterParams::default();
        let (t0, a0) = depth_mix(&p, 0.0);
        assert_eq!(t0, 0.0);
        assert!((a0 - (1.0 - p.clarity)).abs() < 1e-6);
        let (t1, a1) = depth_mix(&p, 1000.0);
        assert!(t1 > 0.999 && a1 > 0.999);
        let (_, a_neg) = depth_mix(&p, -5.0);
        assert_eq!(a_neg, a0, "negative depth (terrain in front) counts as zero");
    }

    #[test]
    fn crests_move_toward_the_shore() {
        let p = WaterParams::default();
        // Find the crest (phase 0 mod 2π) nearest 40 m out at t = 0, then a little later.
        let crest_at = |t: f32| {
            (0..4000)
                .map(|i| 30.0 + i as f32 * 0.005)
                .max_by(|a, b| shore_wave(&p, *a, t).total_cmp(&shore_wave(&p, *b, t)))
                .unwrap()
        };
        let d0 = crest_at(0.0);
        let d1 = crest_at(0.5);
        assert!(d1 < d0, "crest moved from {d0} to {d1}");
        assert!(((d0 - d1) - p.wave_speed * 0.5).abs() < 0.05, "at wave_speed");
        assert_eq!(shore_wave(&p, -3.0, 0.0), 0.0, "no waves on land");
        assert_eq!(shore_wave(&p, p.wave_reach + 1.0, 0.0), 0.0, "none beyond the reach");
    }

    #[test]
    fn crests_too_fine_for_the_pixels_fade_to_their_mean() {
        let p = WaterParams::default();
        // 6 ..= 48 m: inside the reach's full strength (below 0.6 · 90 m).
        let ds: Vec<f32> = (0..4200).map(|i| 6.0 + i as f32 * 0.01).collect();
        // Close up: the crests as they are.
        assert!(ds.iter().all(|&d| (shore_wave_filtered(&p, d, 0.3, 0.1) - shore_wave(&p, d, 0.3)).abs() < 1e-6));
        // Seen from far (pixels a third of a wavelength wide): no stripes left, only the band.
        let far: Vec<f32> = ds.iter().map(|&d| shore_wave_filtered(&p, d, 0.3, p.wave_length / 3.0)).collect();
        let (lo, hi) = far.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(hi - lo < 1e-3, "flat within the reach: {lo} ..= {hi}");
        // The mean over whole cycles is kept: the band is as bright as the crests average.
        let n = (p.wave_length * 3.0 / 0.01) as usize;
        let mean: f32 = ds[..n].iter().map(|&d| shore_wave(&p, d, 0.3)).sum::<f32>() / n as f32;
        assert!((mean - CREST_MEAN).abs() < 2e-3, "{mean}");
        assert!((far[0] - CREST_MEAN).abs() < 1e-3);
    }

    #[test]
    fn the_foam_band_is_metres_wide_whatever_the_coast() {
        let p = WaterParams::default();
        // Its width is measured from the shore, not by depth: the same on any slope.
        assert_eq!(waterline_foam(&p, 0.0, 0.05), 1.0);
        assert!(waterline_foam(&p, p.foam_width * 0.5, 0.05) > 0.4);
        assert_eq!(waterline_foam(&p, p.foam_width + 0.1, 0.05), 0.0);
        // Pixels wider than the band: the band's share of the pixel, not a flickering full line.
        let wide = waterline_foam(&p, 0.0, p.foam_width * 4.0);
        assert!((wide - 0.25).abs() < 1e-6, "{wide}");
        assert_eq!(waterline_foam(&WaterParams { foam: false, ..p.clone() }, 0.0, 1.0), 0.0);
    }

    #[test]
    fn sanitized_clamps_absurd_values() {
        let p = WaterParams {
            color_depth: 0.0,
            opacity_depth: -3.0,
            clarity: f32::NAN,
            wave_length: 1e9,
            shallow_color: [2.0, -1.0, 0.5],
            ..Default::default()
        };
        let s = p.sanitized();
        assert_eq!(s.color_depth, 0.01);
        assert_eq!(s.opacity_depth, 0.01);
        assert_eq!(s.clarity, WaterParams::default().clarity);
        assert_eq!(s.wave_length, 1000.0);
        assert_eq!(s.shallow_color, [1.0, 0.0, 0.5]);
        assert_eq!(WaterParams::default().sanitized(), WaterParams::default());
    }

    #[test]
    fn pipe_surface_covers_only_wet_ground() {
        let map = crate::core::Heightmap::from_fn(5, 4, 2.0, |x, _| x as f32).unwrap();
        let mut water = vec![0.0; 20];
        water[5 + 1] = 0.5; // one wet node: (1, 1) on a 5-wide map
        let s = pipe_surface(&map, &water, None, 0.02, None);
        assert_eq!(s.positions.len(), 20);
        assert_eq!(s.positions[6], [2.0, 1.5, 2.0], "wet node: terrain + depth");
        assert!(s.positions[7][1] < map.data[7], "dry nodes dive under the terrain");
        assert_eq!(s.indices.len() / 6, 4, "the four quads around the wet node");
        assert_eq!(s.colors[6][2], 0.5);
        assert!(s.normals.iter().all(|n| (n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0).abs() < 1e-5));
        // Water under the sea plane is left to the sea.
        assert!(pipe_surface(&map, &water, None, 0.02, Some(5.0)).indices.is_empty());
        // Threshold and bad input.
        assert!(pipe_surface(&map, &water, None, 0.6, None).indices.is_empty());
        assert_eq!(pipe_surface(&map, &water[..19], None, 0.0, None), PipeSurface::default());
        let nan = vec![f32::NAN; 20];
        assert!(pipe_surface(&map, &nan, None, 0.0, None).indices.is_empty());
    }

    #[test]
    fn big_maps_are_sampled() {
        let map = crate::core::Heightmap::new(1100, 600, 1.0).unwrap();
        let s = pipe_surface(&map, &vec![1.0; 1100 * 600], None, 0.0, None);
        assert_eq!(s.positions.len(), 367 * 200);
        assert_eq!(s.positions.last().unwrap(), &[1098.0, 1.0, 597.0]);
    }

    #[test]
    fn presets_parse() {
        for name in ["tropical", "lake"] {
            let path =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/presets/water/{name}.ron"));
            let text = std::fs::read_to_string(&path).unwrap();
            let p: WaterParams = ron::from_str(&text).unwrap();
            assert_eq!(p.sanitized(), p, "{name} stays inside the documented ranges");
        }
    }
}
