//! The sun, its shadows, the sky and the light shafts (issue #5; seeds 003 and 004).
//!
//! Plain parameters and the Bevy-free math behind them; `crate::app::sky` turns them into Bevy's
//! `DirectionalLight`, cascaded shadow maps, `Atmosphere` and volumetric fog.
//!
//! **Sun direction** (seed 004's "dynamic sky": the time of day is an azimuth and an elevation).
//! World axes are Bevy's: `+y` up, map node `(x, y)` at world `(x·cell, h, y·cell)`. North is
//! `−z` (map row 0), east is `+x`. With azimuth `φ` (clockwise from north) and elevation `θ`
//! (above the horizon), the unit vector from the ground towards the sun is
//!
//! ```text
//! s = (cos θ · sin φ,  sin θ,  −cos θ · cos φ)
//! ```
//!
//! and the light travels along `−s`.
//!
//! **Low-sun warmth** (used only without the atmosphere, which reddens the sun by itself through
//! its transmittance): with `w = clamp(1 − θ / 25°, 0, 1)²·warmth`, the light colour is
//! `c·(1 − w) + c·(1.0, 0.56, 0.28)·w` — about 2 000 K at the horizon.
//!
//! **Cascades fitted to the terrain** (seed 003's shadow maps, Bevy's cascaded shadow maps). The
//! terrain lies in a box `B` (the map's extent, sea level or the lowest node to the highest node).
//! From the camera at `p`, `d_near = dist(p, B)` and `d_far = max over B's corners |p − c|`. The
//! cascades then span
//!
//! ```text
//! max    = d_far · distance_scale
//! first  = d_near + (max − d_near) · first_cascade_fraction
//! min    = min(0.9 · d_near, 0.5 · first)  (at least 0.1 m)
//! ```
//!
//! and Bevy spaces the cascades in between geometrically (`bound_i = first·(max/first)^(i/(n−1))`).
//! They are refitted when `max` or `first` moves by more than [`REFIT_TOLERANCE`] (the camera
//! zoomed or the map changed size), not every frame.

use serde::{Deserialize, Serialize};

/// Relative change of a fitted cascade bound that triggers a refit.
pub const REFIT_TOLERANCE: f32 = 0.1;

crate::params! {
    /// Everything about the light and the sky.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SkyParams {
        /// The sun: where it stands, how bright and what colour.
        pub sun: SunParams = Default::default();
        /// Cascaded shadow maps of the sun.
        pub shadows: ShadowParams = Default::default();
        /// Rayleigh and Mie scattering of the sky (Bevy's `Atmosphere`).
        pub atmosphere: AtmosphereParams = Default::default();
        /// Close-range Mie scattering raymarched against the shadow map (Bevy's volumetric fog).
        pub light_shafts: LightShaftParams = Default::default();
        /// Anti-aliasing, exposure, tone mapping and bloom of the 3-D view.
        pub camera: ViewParams = Default::default();
    }
}

impl SkyParams {
    /// Checks every field (and nested section) against its declared range. The renderer does not
    /// need it (it draws any value); presets and tests do.
    pub fn validate(&self) -> Result<(), crate::core::params::BadParam> {
        self.check_ranges()
    }
}

crate::params! {
    /// The sun (a directional light).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SunParams {
        /// Compass direction of the sun in degrees, clockwise from north (`−z`, the map's first row): 90 =
        /// east (`+x`).
        pub azimuth_deg: f32 = 135.0, range [0.0, 360.0];
        /// Height of the sun above the horizon in degrees (0 = sunrise/sunset, 90 = overhead).
        pub elevation_deg: f32 = 38.0, range [0.0, 90.0];
        /// Sun illuminance in lux before the atmosphere filters it (bright daylight is about 100 000).
        pub illuminance_lux: f32 = 100_000.0, range [0.0, 200000.0];
        /// Sun colour, sRGB `[r, g, b]`.
        pub color: [f32; 3] = [1.0, 0.98, 0.95], range [0.0, 1.0];
        /// How much warmer (redder) the light turns near the horizon when the atmosphere is off (the
        /// atmosphere does this by itself).
        pub low_sun_warmth: f32 = 1.0, range [0.0, 1.0];
        /// Turns the sun around the map, degrees of azimuth per second (0 = still), for a moving time of
        /// day.
        pub spin_deg_per_s: f32 = 0.0, range [-90.0, 90.0];
        /// Size of the sun's disk in the sky as a multiple of the real sun's (0 hides it; the light stays).
        /// Only drawn with the atmosphere.
        pub disk_scale: f32 = 1.0, range [0.0, 20.0];
    }
}

crate::param_enum! {
    /// How shadow-map texels are filtered (Bevy's `ShadowFilteringMethod`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ShadowFilter {
        /// One hardware 2×2 comparison: fast, hard-edged.
        Hardware2x2,
        /// A 5×5 Gaussian-weighted PCF kernel in 9 taps (The Witness): soft, stable, works with MSAA.
        #[default]
        Gaussian,
        /// 8 taps in a spiral rotated by per-pixel noise that changes every frame: soft only with
        /// temporal anti-aliasing, noisy without.
        Temporal,
    }
}

crate::params! {
    /// Cascaded shadow maps of the sun, fitted to the terrain.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct ShadowParams {
        /// Draw shadows (the sun's shadow maps). Light shafts need them.
        pub enabled: bool = true;
        /// Filtering of the shadow edges (percentage-closer filtering).
        pub filter: ShadowFilter = ShadowFilter::Gaussian;
        /// Number of cascades (shadow maps of growing reach).
        pub cascades: u32 = 3, range [1.0, 4.0];
        /// Side of each cascade's shadow map in texels (rounded up to a power of two).
        pub map_size: u32 = 2048, range [256.0, 8192.0];
        /// Where the first (sharpest) cascade ends, as a fraction of the way from the nearest to the
        /// farthest terrain seen from the camera.
        pub first_cascade_fraction: f32 = 0.15, range [0.01, 0.9];
        /// Shadow reach as a multiple of the distance to the farthest corner of the terrain.
        pub distance_scale: f32 = 1.0, range [0.2, 4.0];
        /// Depth bias against shadow acne, metres along the light.
        pub depth_bias: f32 = 0.3, range [0.0, 10.0];
        /// Bias along the surface normal, in shadow-map texels.
        pub normal_bias: f32 = 1.8, range [0.0, 10.0];
    }
}

crate::params! {
    /// Bevy's physically based atmosphere (Hillaire 2020: Rayleigh + Mie + ozone, look-up tables).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct AtmosphereParams {
        /// Draw the scattering sky and the haze in front of the terrain; off: a plain sky colour and an
        /// ambient light.
        pub enabled: bool = true;
        /// Multiplier of the Rayleigh (air molecule) scattering: deeper blue, redder sunsets.
        pub rayleigh_scale: f32 = 1.0, range [0.0, 10.0];
        /// Multiplier of the Mie (aerosol, haze) scattering and absorption.
        pub mie_scale: f32 = 1.0, range [0.0, 50.0];
        /// Mie phase asymmetry `g` (Henyey-Greenstein-like): how strongly haze glows around the sun.
        pub mie_asymmetry: f32 = 0.8, range [0.0, 0.99];
        /// Metres of air each scene metre counts for (the atmosphere's world scale, inverted): 1 is
        /// physical, so a 1 km island reads clear and a 32 km world hazes with distance; more
        /// exaggerates the haze (a small map seen as a large one).
        pub aerial_scale: f32 = 1.0, range [1.0, 200.0];
        /// Average ground albedo for the multiple scattering.
        pub ground_albedo: f32 = 0.3, range [0.0, 1.0];
        /// Brightness of the light the sky sheds on the terrain (an environment map generated from the
        /// atmosphere; 0 uses the plain ambient light instead).
        pub sky_light: f32 = 1.0, range [0.0, 4.0];
        /// Integrate the sky per pixel by raymarching (slower, sharper) instead of from look-up textures.
        pub raymarched: bool = false;
    }
}

crate::params! {
    /// Light shafts: a fog volume over the terrain, lit by the sun through its shadow map.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct LightShaftParams {
        /// Draw the light shafts (needs shadows).
        pub enabled: bool = false;
        /// Fog density, per metre of ray (extinction = density × (absorption + scattering)).
        pub density: f32 = 0.002, range [0.0, 0.05];
        /// Fraction of the light the fog absorbs.
        pub absorption: f32 = 0.05, range [0.0, 1.0];
        /// Fraction of the light the fog scatters.
        pub scattering: f32 = 0.4, range [0.0, 1.0];
        /// Henyey-Greenstein asymmetry `g`: above 0 the shafts glow looking towards the sun.
        pub asymmetry: f32 = 0.7, range [-0.95, 0.95];
        /// Raymarching steps per pixel.
        pub steps: u32 = 48, range [4.0, 256.0];
        /// Random offset of each ray's start, metres (interleaved gradient noise, new each frame): trades
        /// banding for noise.
        pub jitter_m: f32 = 0.0, range [0.0, 50.0];
        /// Ambient light in the fog (without the sun).
        pub ambient: f32 = 0.0, range [0.0, 1.0];
        /// Artistic brightness multiplier of the scattered sun light.
        pub intensity: f32 = 1.0, range [0.0, 20.0];
        /// Height of the fog layer above the highest terrain, metres.
        pub headroom_m: f32 = 60.0, range [1.0, 5000.0];
        /// Fog colour, sRGB `[r, g, b]`.
        pub color: [f32; 3] = [1.0, 1.0, 1.0], range [0.0, 1.0];
    }
}

crate::param_enum! {
    /// Multisample anti-aliasing of the 3-D view.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Antialias {
        /// No multisampling.
        Off,
        /// 2 samples per pixel.
        X2,
        /// 4 samples per pixel (seed 004).
        #[default]
        X4,
        /// 8 samples per pixel (where the GPU offers it; 4 otherwise).
        X8,
    }
}

impl Antialias {
    /// Samples per pixel.
    pub fn samples(self) -> u32 {
        match self {
            Antialias::Off => 1,
            Antialias::X2 => 2,
            Antialias::X4 => 4,
            Antialias::X8 => 8,
        }
    }
}

crate::param_enum! {
    /// How HDR colours are mapped to the screen.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ToneMapping {
        /// Troy Sobotka's AgX: natural, desaturates bright light.
        AgX,
        /// Tomasz Stachowiak's TonyMcMapface: neutral, Bevy's default.
        #[default]
        TonyMcMapface,
        /// ACES fitted: contrasty, filmic.
        AcesFitted,
        /// Blender Filmic.
        BlenderFilmic,
        /// Reinhard on luminance.
        ReinhardLuminance,
        /// No tone mapping (clips).
        None,
    }
}

crate::params! {
    /// The 3-D view's image: anti-aliasing, exposure, tone mapping, bloom, ambient light.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct ViewParams {
        /// Multisample anti-aliasing.
        pub msaa: Antialias = Antialias::X4;
        /// Camera exposure, EV at ISO 100 (higher = darker; 15 is "sunny 16").
        pub exposure_ev100: f32 = 13.5, range [5.0, 20.0];
        /// Tone mapping curve.
        pub tonemapping: ToneMapping = ToneMapping::TonyMcMapface;
        /// Bloom strength (glow around the sun and bright snow; 0 = off).
        pub bloom: f32 = 0.0, range [0.0, 1.0];
        /// Ambient light brightness in cd/m², used without the atmosphere's sky light.
        pub ambient: f32 = 6000.0, range [0.0, 100000.0];
        /// Plain sky (clear) colour without the atmosphere, sRGB `[r, g, b]`.
        pub sky_color: [f32; 3] = [0.55, 0.70, 0.88], range [0.0, 1.0];
        /// Meteorological visibility of the air without the atmosphere, km: the distance at which
        /// haze leaves 2 % of a dark hill's contrast (extinction `3.912 / V`, Koschmieder). 200 km is
        /// the sea-level air of the atmosphere drawn when it is on (Bevy's Earth medium), so a 1 km
        /// island reads clear and a 32 km world hazes toward its far shore; 20 km is a hazy day.
        pub visibility_km: f32 = 200.0, range [0.5, 1000.0];
    }
}

/// `v` when finite, else `fallback`, then clamped to `lo ..= hi`.
fn clampf(v: f32, lo: f32, hi: f32, fallback: f32) -> f32 {
    if v.is_finite() { v.clamp(lo, hi) } else { fallback }
}

fn clamp_rgb(c: [f32; 3], fallback: [f32; 3]) -> [f32; 3] {
    [clampf(c[0], 0.0, 1.0, fallback[0]), clampf(c[1], 0.0, 1.0, fallback[1]), clampf(c[2], 0.0, 1.0, fallback[2])]
}

impl SkyParams {
    /// The same parameters with every number brought into its documented range (non-finite
    /// values take the default): what the renderer uses, so no slider or script value can make
    /// it fail. Azimuth wraps into `0 ..= 360`.
    pub fn sanitized(&self) -> SkyParams {
        let d = SkyParams::default();
        let (s, ds) = (&self.sun, &d.sun);
        let az = if s.azimuth_deg.is_finite() { s.azimuth_deg.rem_euclid(360.0) } else { ds.azimuth_deg };
        let sun = SunParams {
            azimuth_deg: az,
            elevation_deg: clampf(s.elevation_deg, 0.0, 90.0, ds.elevation_deg),
            illuminance_lux: clampf(s.illuminance_lux, 0.0, 200_000.0, ds.illuminance_lux),
            color: clamp_rgb(s.color, ds.color),
            low_sun_warmth: clampf(s.low_sun_warmth, 0.0, 1.0, ds.low_sun_warmth),
            spin_deg_per_s: clampf(s.spin_deg_per_s, -90.0, 90.0, 0.0),
            disk_scale: clampf(s.disk_scale, 0.0, 20.0, ds.disk_scale),
        };
        let (h, dh) = (&self.shadows, &d.shadows);
        let shadows = ShadowParams {
            enabled: h.enabled,
            filter: h.filter,
            cascades: h.cascades.clamp(1, 4),
            map_size: shadow_map_size(h.map_size),
            first_cascade_fraction: clampf(h.first_cascade_fraction, 0.01, 0.9, dh.first_cascade_fraction),
            distance_scale: clampf(h.distance_scale, 0.2, 4.0, dh.distance_scale),
            depth_bias: clampf(h.depth_bias, 0.0, 10.0, dh.depth_bias),
            normal_bias: clampf(h.normal_bias, 0.0, 10.0, dh.normal_bias),
        };
        let (a, da) = (&self.atmosphere, &d.atmosphere);
        let atmosphere = AtmosphereParams {
            enabled: a.enabled,
            rayleigh_scale: clampf(a.rayleigh_scale, 0.0, 10.0, da.rayleigh_scale),
            mie_scale: clampf(a.mie_scale, 0.0, 50.0, da.mie_scale),
            mie_asymmetry: clampf(a.mie_asymmetry, 0.0, 0.99, da.mie_asymmetry),
            aerial_scale: clampf(a.aerial_scale, 1.0, 200.0, da.aerial_scale),
            ground_albedo: clampf(a.ground_albedo, 0.0, 1.0, da.ground_albedo),
            sky_light: clampf(a.sky_light, 0.0, 4.0, da.sky_light),
            raymarched: a.raymarched,
        };
        let (l, dl) = (&self.light_shafts, &d.light_shafts);
        let light_shafts = LightShaftParams {
            enabled: l.enabled,
            density: clampf(l.density, 0.0, 0.05, dl.density),
            absorption: clampf(l.absorption, 0.0, 1.0, dl.absorption),
            scattering: clampf(l.scattering, 0.0, 1.0, dl.scattering),
            asymmetry: clampf(l.asymmetry, -0.95, 0.95, dl.asymmetry),
            steps: l.steps.clamp(4, 256),
            jitter_m: clampf(l.jitter_m, 0.0, 50.0, 0.0),
            ambient: clampf(l.ambient, 0.0, 1.0, 0.0),
            intensity: clampf(l.intensity, 0.0, 20.0, dl.intensity),
            headroom_m: clampf(l.headroom_m, 1.0, 5000.0, dl.headroom_m),
            color: clamp_rgb(l.color, dl.color),
        };
        let (v, dv) = (&self.camera, &d.camera);
        let camera = ViewParams {
            msaa: v.msaa,
            exposure_ev100: clampf(v.exposure_ev100, 5.0, 20.0, dv.exposure_ev100),
            tonemapping: v.tonemapping,
            bloom: clampf(v.bloom, 0.0, 1.0, 0.0),
            ambient: clampf(v.ambient, 0.0, 100_000.0, dv.ambient),
            sky_color: clamp_rgb(v.sky_color, dv.sky_color),
            visibility_km: clampf(v.visibility_km, 0.5, 1000.0, dv.visibility_km),
        };
        SkyParams { sun, shadows, atmosphere, light_shafts, camera }
    }

    /// Why an effect the user turned on is not drawn, for the panel (`None`: all as asked).
    pub fn conflicts(&self) -> Option<&'static str> {
        if self.light_shafts.enabled && !self.shadows.enabled {
            return Some("Light shafts are raymarched against the shadow map: turn shadows on to see them.");
        }
        if self.shadows.filter == ShadowFilter::Temporal {
            return Some(
                "Temporal shadow filtering is meant for TAA, which MSAA excludes: edges look noisy; Gaussian is smoother here.",
            );
        }
        None
    }
}

/// A shadow-map side: a power of two in `256 ..= 8192` (Bevy requires powers of two).
pub fn shadow_map_size(requested: u32) -> u32 {
    requested.clamp(256, 8192).next_power_of_two().min(8192)
}

/// Unit vector from the ground towards the sun, world axes (`+y` up, north `−z`, east `+x`);
/// see the module doc. Non-finite angles read as 0.
pub fn sun_direction(azimuth_deg: f32, elevation_deg: f32) -> [f32; 3] {
    let az = if azimuth_deg.is_finite() { azimuth_deg.to_radians() } else { 0.0 };
    let el = if elevation_deg.is_finite() { elevation_deg.clamp(-90.0, 90.0).to_radians() } else { 0.0 };
    [el.cos() * az.sin(), el.sin(), -el.cos() * az.cos()]
}

/// The sun's light colour (linear multiplier per channel, sRGB primaries) after the low-sun
/// warmth of the module doc.
pub fn sun_color(color: [f32; 3], elevation_deg: f32, warmth: f32) -> [f32; 3] {
    let t = (1.0 - elevation_deg.max(0.0) / 25.0).clamp(0.0, 1.0);
    let w = t * t * warmth.clamp(0.0, 1.0);
    const WARM: [f32; 3] = [1.0, 0.56, 0.28];
    [0, 1, 2].map(|i| color[i] * (1.0 - w + WARM[i] * w))
}

/// Cascade bounds fitted to the terrain, metres from the camera (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CascadeFit {
    /// Number of cascades.
    pub cascades: u32,
    /// Nearer than this nothing is shadowed.
    pub minimum_distance: f32,
    /// Far bound of the first cascade.
    pub first_far_bound: f32,
    /// Far bound of the last cascade.
    pub maximum_distance: f32,
}

impl CascadeFit {
    /// True when `other` differs enough from `self` to be worth rebuilding the cascades.
    pub fn differs(&self, other: &CascadeFit) -> bool {
        let rel = |a: f32, b: f32| (a - b).abs() > REFIT_TOLERANCE * a.abs().max(b.abs()).max(1e-3);
        self.cascades != other.cascades
            || rel(self.first_far_bound, other.first_far_bound)
            || rel(self.maximum_distance, other.maximum_distance)
    }
}

/// Fits the cascades to the terrain box `lo ..= hi` seen from `camera` (world coordinates).
/// Always returns bounds Bevy accepts: `0 < minimum < first < maximum`, all finite.
pub fn fit_cascades(camera: [f32; 3], lo: [f32; 3], hi: [f32; 3], p: &ShadowParams) -> CascadeFit {
    let finite = |v: [f32; 3]| v.iter().all(|c| c.is_finite());
    let (camera, lo, hi) = if finite(camera) && finite(lo) && finite(hi) {
        (camera, lo, hi)
    } else {
        ([0.0, 1.0, 0.0], [0.0; 3], [1.0; 3])
    };
    // Beyond ±10 000 km nothing is a terrain any more; keeps the squares below f32::MAX.
    let (camera, lo, hi) =
        (camera.map(|c| c.clamp(-1e7, 1e7)), lo.map(|c| c.clamp(-1e7, 1e7)), hi.map(|c| c.clamp(-1e7, 1e7)));
    let (lo, hi) = ([0, 1, 2].map(|i| lo[i].min(hi[i])), [0, 1, 2].map(|i| lo[i].max(hi[i])));
    // Nearest point of the box, then the farthest corner.
    let near_sq: f32 = (0..3).map(|i| (camera[i] - camera[i].clamp(lo[i], hi[i])).powi(2)).sum();
    let far_sq: f32 = (0..3).map(|i| (camera[i] - lo[i]).abs().max((camera[i] - hi[i]).abs()).powi(2)).sum();
    let d_near = near_sq.sqrt();
    let d_far = far_sq.sqrt().max(1.0);
    let scale = clampf(p.distance_scale, 0.2, 4.0, 1.0);
    let fraction = clampf(p.first_cascade_fraction, 0.01, 0.9, 0.15);
    let maximum = (d_far * scale).max(2.0);
    let near = d_near.min(maximum * 0.5);
    let first = (near + (maximum - near) * fraction).clamp(0.5, maximum * 0.95);
    let minimum = (0.9 * near).min(0.5 * first).max(0.1);
    CascadeFit {
        cascades: p.cascades.clamp(1, 4),
        minimum_distance: minimum,
        first_far_bound: first,
        maximum_distance: maximum,
    }
}

/// Bevy's own reach of the aerial-perspective volume, metres of air: 32 slices of 1 km.
pub const AERIAL_REACH_MIN_M: f32 = 3.2e4;

/// How far, in metres of air, the aerial-perspective volume must reach for the terrain box
/// `lo ..= hi` seen from `camera` (scene coordinates, each scene metre `aerial_scale` metres of
/// air): the farthest corner's distance with 5 % to spare, never below Bevy's 32 km.
///
/// Bevy stores the in-scattered light `L_in(t)` along each view ray in a volume of 32 slices out
/// to this distance and clamps beyond it, while the terrain's transmittance `T(t)` is computed to
/// its true distance. Past the reach a pixel gets the haze of 32 km and the dimming of its own
/// distance: on a 32 km world seen from 50 km, the far land lost its light to `T` (blue first,
/// Rayleigh's λ⁻⁴) without all of the blue haze that should replace it.
pub fn aerial_view_reach(camera: [f32; 3], lo: [f32; 3], hi: [f32; 3], aerial_scale: f32) -> f32 {
    let finite = |v: [f32; 3]| v.iter().all(|c| c.is_finite());
    if !(finite(camera) && finite(lo) && finite(hi)) {
        return AERIAL_REACH_MIN_M;
    }
    let far_sq: f32 = (0..3)
        .map(|i| {
            let (a, b) = ((camera[i] - lo[i]) as f64, (camera[i] - hi[i]) as f64);
            a.abs().max(b.abs()).powi(2) as f32
        })
        .sum();
    let air = far_sq.sqrt() * clampf(aerial_scale, 1.0, 200.0, 1.0) * 1.05;
    // Past the Earth's horizon from orbit nothing of a terrain is left to haze.
    air.clamp(AERIAL_REACH_MIN_M, 5.0e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aerial_volume_reaches_the_farthest_terrain() {
        // The 1 km island from 2 km: Bevy's 32 km already covers it.
        assert_eq!(
            aerial_view_reach([500.0, 800.0, 2500.0], [0.0; 3], [1024.0, 100.0, 1024.0], 1.0),
            AERIAL_REACH_MIN_M
        );
        // A 32 km world from 50 km: to the far corner (≈ 67 km) and a little more.
        let c = [16_000.0, 24_000.0, 16_000.0 + 44_000.0];
        let far = (16_768.0f32.powi(2) + 24_000.0f32.powi(2) + 60_000.0f32.powi(2)).sqrt();
        let r = aerial_view_reach(c, [0.0; 3], [32_768.0, 1600.0, 32_768.0], 1.0);
        assert!(r >= far && r <= far * 1.06, "{r} for a far corner at {far}");
        // Each scene metre is aerial_scale metres of air.
        assert!((aerial_view_reach(c, [0.0; 3], [32_768.0, 1600.0, 32_768.0], 3.0) - 3.0 * r).abs() < 1.0);
        // Nonsense reads as Bevy's own.
        assert_eq!(aerial_view_reach([f32::NAN, 0.0, 0.0], [0.0; 3], [1.0; 3], 1.0), AERIAL_REACH_MIN_M);
        assert_eq!(aerial_view_reach([1e30, 0.0, 0.0], [0.0; 3], [1.0; 3], 1.0), 5.0e6);
    }

    fn close(a: [f32; 3], b: [f32; 3]) -> bool {
        (0..3).all(|i| (a[i] - b[i]).abs() < 1e-5)
    }

    #[test]
    fn sun_direction_follows_the_compass() {
        assert!(close(sun_direction(0.0, 0.0), [0.0, 0.0, -1.0]), "north is -z");
        assert!(close(sun_direction(90.0, 0.0), [1.0, 0.0, 0.0]), "east is +x");
        assert!(close(sun_direction(180.0, 0.0), [0.0, 0.0, 1.0]));
        assert!(close(sun_direction(123.0, 90.0), [0.0, 1.0, 0.0]), "zenith whatever the azimuth");
        let s = sun_direction(200.0, 30.0);
        assert!(((s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt() - 1.0).abs() < 1e-6);
        assert!((s[1] - 0.5).abs() < 1e-6, "sin 30° = 0.5");
        assert!(sun_direction(f32::NAN, f32::INFINITY).iter().all(|c| c.is_finite()));
    }

    #[test]
    fn the_sun_warms_only_near_the_horizon() {
        let white = [1.0, 1.0, 1.0];
        assert_eq!(sun_color(white, 60.0, 1.0), white);
        assert_eq!(sun_color(white, 0.0, 0.0), white);
        let low = sun_color(white, 0.0, 1.0);
        assert_eq!(low, [1.0, 0.56, 0.28]);
        let mid = sun_color(white, 10.0, 1.0);
        assert!(mid[2] > low[2] && mid[2] < 1.0);
    }

    #[test]
    fn cascades_cover_the_terrain_from_near_to_far() {
        let p = ShadowParams::default();
        // Camera 1 000 m south of a 1 024 m map, 600 m up.
        let f = fit_cascades([512.0, 600.0, 1800.0], [0.0, 0.0, 0.0], [1024.0, 90.0, 1024.0], &p);
        let far = (512.0f32.powi(2) + 600.0f32.powi(2) + 1800.0f32.powi(2)).sqrt();
        assert!((f.maximum_distance - far).abs() < 1.0, "{f:?}");
        assert!(
            f.minimum_distance > 0.0
                && f.minimum_distance < f.first_far_bound
                && f.first_far_bound < f.maximum_distance
        );
        let near = ((600.0f32 - 90.0).powi(2) + 776.0f32.powi(2)).sqrt();
        assert!(f.minimum_distance <= near && f.first_far_bound > near, "{f:?} near {near}");
        // Inside the box: the first cascade starts at the camera.
        let g = fit_cascades([500.0, 10.0, 500.0], [0.0, 0.0, 0.0], [1024.0, 90.0, 1024.0], &p);
        assert_eq!(g.minimum_distance, 0.1);
        assert!(g.first_far_bound < f.first_far_bound);
    }

    #[test]
    fn refits_only_when_the_view_moves_enough() {
        let p = ShadowParams::default();
        let (lo, hi) = ([0.0, 0.0, 0.0], [1024.0, 90.0, 1024.0]);
        let a = fit_cascades([512.0, 600.0, 1800.0], lo, hi, &p);
        let b = fit_cascades([512.0, 600.0, 1810.0], lo, hi, &p);
        let c = fit_cascades([512.0, 300.0, 900.0], lo, hi, &p);
        assert!(!a.differs(&b));
        assert!(a.differs(&c));
        let d = fit_cascades([512.0, 600.0, 1800.0], [0.0; 3], [4096.0, 90.0, 4096.0], &p);
        assert!(a.differs(&d), "a bigger map refits");
    }

    #[test]
    fn absurd_values_are_clamped_never_passed_on() {
        let mut s = SkyParams::default();
        s.sun.azimuth_deg = -30.0;
        s.sun.elevation_deg = 400.0;
        s.sun.illuminance_lux = f32::NAN;
        s.sun.color = [2.0, -1.0, f32::INFINITY];
        s.shadows.cascades = 0;
        s.shadows.map_size = 3000;
        s.shadows.first_cascade_fraction = 7.0;
        s.light_shafts.steps = 100_000;
        s.light_shafts.density = -1.0;
        s.camera.exposure_ev100 = 1e9;
        let c = s.sanitized();
        assert_eq!(c.sun.azimuth_deg, 330.0);
        assert_eq!(c.sun.elevation_deg, 90.0);
        assert_eq!(c.sun.illuminance_lux, SunParams::default().illuminance_lux);
        assert_eq!(c.sun.color, [1.0, 0.0, 0.95]);
        assert_eq!(c.shadows.cascades, 1);
        assert_eq!(c.shadows.map_size, 4096);
        assert_eq!(c.shadows.first_cascade_fraction, 0.9);
        assert_eq!(c.light_shafts.steps, 256);
        assert_eq!(c.light_shafts.density, 0.0);
        assert_eq!(c.camera.exposure_ev100, 20.0);
        assert_eq!(SkyParams::default().sanitized(), SkyParams::default());
        // Whatever comes in, the cascades stay valid for Bevy's builder.
        let bad = ShadowParams { distance_scale: f32::NAN, first_cascade_fraction: -3.0, cascades: 99, ..c.shadows };
        for cam in [[0.0, 0.0, 0.0], [f32::NAN, 1.0, 2.0], [1e30, 1e30, 1e30], [5.0, 5.0, 5.0]] {
            let f = fit_cascades(cam, [0.0; 3], [10.0, 0.0, 10.0], &bad);
            assert!(
                f.minimum_distance > 0.0
                    && f.minimum_distance < f.first_far_bound
                    && f.first_far_bound < f.maximum_distance,
                "{cam:?}: {f:?}"
            );
            assert!(f.maximum_distance.is_finite() && (1..=4).contains(&f.cascades));
        }
    }

    #[test]
    fn shadow_map_sizes_are_powers_of_two() {
        assert_eq!(shadow_map_size(0), 256);
        assert_eq!(shadow_map_size(2048), 2048);
        assert_eq!(shadow_map_size(2049), 4096);
        assert_eq!(shadow_map_size(u32::MAX), 8192);
    }

    #[test]
    fn conflicts_are_explained() {
        let mut s = SkyParams::default();
        assert_eq!(s.conflicts(), None);
        s.light_shafts.enabled = true;
        s.shadows.enabled = false;
        assert!(s.conflicts().unwrap().contains("shadows"));
    }

    #[test]
    fn shipped_sky_presets_load_within_their_ranges() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets/sky");
        for name in ["noon", "golden_hour", "low_sun_shafts"] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.ron"))).unwrap();
            let s: SkyParams = ron::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.sanitized(), s, "{name} has a value out of range");
        }
    }

    #[test]
    fn partial_ron_takes_defaults() {
        let s: SkyParams = ron::from_str("(sun: (elevation_deg: 5.0), light_shafts: (enabled: true))").unwrap();
        assert_eq!(s.sun.elevation_deg, 5.0);
        assert_eq!(s.sun.azimuth_deg, 135.0);
        assert!(s.light_shafts.enabled && s.shadows.enabled);
    }
}
