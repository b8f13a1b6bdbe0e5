//! The terrain's splatting material: which layer (sand, grass, dirt, rock, snow, sediment) covers
//! each point, in which biome colour, wet or dry. Parameters, the Bevy-free math the shader
//! (`shaders/terrain.wgsl`) mirrors, and the per-node data texture it reads.
//!
//! ## Sources
//! - Height-based texture splatting: seed 004 ("the texture depends on a vertex parameter — I made
//!   it depend on height"); slope and erosion/deposition are added to it (SPEC §3).
//! - Fresh deposits drawn as sediment ("sand where deposits pile up") and channels from the
//!   snowball traffic: seed 002's extensions.
//! - Biomes from the height map, the distance to water and the distance to the equator/poles:
//!   seed 001 ("tundra, desert, rainforest … decided from the height map and the distance to
//!   water or to given points (equator/pole)").
//!
//! ## Heights
//! Band heights are **fractions of the peak above sea level**: `f = (h − sea) / (peak − sea)`, so
//! `0` is the shoreline, `1` the highest point of the map (when it was generated or loaded) and
//! negative values are under the sea. A preset therefore fits a 100 m island and a 3 km range
//! alike. Slopes are angles from the horizontal in degrees, `θ = acos(n_y)` of the surface normal.
//!
//! ## Layers (painted in order, each over the previous)
//! With `s(a, b, x)` the smoothstep, `w` the height blend width, `v` the slope blend width and
//! `f' = f + ε·w`, `θ' = θ + ε·v` the height and slope pushed by the edge noise `ε ∈ [−a, a]`
//! (`a` = `edge_noise`), which breaks every boundary into an irregular line:
//!
//! ```text
//! sand  = 1 − s(beach_top − w, beach_top + w, f')
//! dirt  = s(dirt_height − w, dirt_height + w, f')          share of dirt in the land above the beach
//! slope = s(dirt_slope − v, dirt_slope + v, θ')            steep ground loses its grass
//! rock  = s(rock_slope − v, rock_slope + v, θ')
//! snow  = s(snow_line − w, snow_line + w, f') · (1 − s(snow_max_slope − v, snow_max_slope + v, θ))
//! sed   = strength · s(deposit_min, deposit_full, Δ)        Δ = deposited − eroded (m)
//! ```
//!
//! Composition (`over(c, layer, a) = (1 − a)·c + a·layer`): ground = sand / grass / dirt by
//! height, then dirt over it by `slope`, rock by `rock`, snow by `snow`, sediment by `sed`
//! ([`layer_weights`] gives the six resulting weights; they sum to 1). Wet channels then darken
//! the colour: `c ← c · (1 − darkening · s(flow_min, flow_full, q))` with `q` the normalised
//! flow, and lower the roughness the same way.
//!
//! ## Biomes
//! Latitude runs linearly from `latitude_north` at node row 0 to `latitude_south` at the last row
//! (degrees). Temperature (°C) and moisture (0 ..= 1):
//!
//! ```text
//! T = T_pole + (T_equator − T_pole) · cos²(latitude) − lapse · max(f, 0)
//! m = exp(−d / moisture_range)                              d = distance to water (m)
//! ```
//!
//! Tundra weight `1 − s(tundra_temp − 3, tundra_temp + 3, T)`; of the rest, desert
//! `(1 − s(desert_moisture − 0.05, desert_moisture + 0.05, m)) · s(desert_temp − 3, desert_temp + 3, T)`,
//! steppe `1 − s(steppe_moisture − 0.05, steppe_moisture + 0.05, m)` of what is left, temperate the
//! remainder ([`biome_weights`]). The biome chooses the colour of the grass layer (desert ground,
//! steppe grass, temperate grass, tundra) and tints dirt toward the desert ground.
//!
//! ## Data texture
//! One RGBA texel per node (texel `(x, y)` = node `(x, y)`), 16-bit floats ([`surface_data`]):
//! `r` = net deposition `deposited − eroded` (m), `g` = normalised flow
//! `ln(1 + flow) / ln(1 + max flow)` (0 ..= 1), `b` = distance to water (m, capped), `a` = the
//! pipe model's water depth (m). Water = nodes below sea level or under more than
//! `wet_depth` of simulated water; the distance is [`crate::core::distance`]'s exact transform.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::core::Heightmap;

crate::params! {
    /// Parameters of the terrain material.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct MaterialParams {
        /// Draw the splatted layers. Off: the plain height ramp ([`plain_color`]).
        pub enabled: bool = true;
        /// Where the layers start and end: heights (fractions of the peak above sea level) and slopes
        /// (degrees), the blend widths and the noise that breaks the edges.
        pub bands: LayerBands = LayerBands::default();
        /// Beach and sea-floor sand, below `beach_top`.
        pub sand: TerrainLayer = TerrainLayer { color: [0.80, 0.72, 0.52], variation: [0.68, 0.60, 0.44], variation_amount: 0.5, roughness: 0.85, };
        /// Grass on gentle ground (its colour is the temperate biome's).
        pub grass: TerrainLayer = TerrainLayer { color: [0.33, 0.46, 0.20], variation: [0.42, 0.50, 0.22], variation_amount: 0.6, roughness: 0.9, };
        /// Bare earth on high or moderately steep ground.
        pub dirt: TerrainLayer = TerrainLayer { color: [0.47, 0.38, 0.28], variation: [0.38, 0.31, 0.24], variation_amount: 0.5, roughness: 0.95, };
        /// Rock on steep slopes, with strata.
        pub rock: TerrainLayer = TerrainLayer { color: [0.43, 0.40, 0.37], variation: [0.29, 0.28, 0.27], variation_amount: 0.7, roughness: 0.8, };
        /// Snow on high, flat enough ground.
        pub snow: TerrainLayer = TerrainLayer { color: [0.94, 0.95, 0.98], variation: [0.82, 0.87, 0.95], variation_amount: 0.3, roughness: 0.55, };
        /// Sediment and gravel where the last simulation deposited material (seed 002).
        pub sediment: SedimentParams = SedimentParams::default();
        /// Wet, darker ground along the channels of the flow map.
        pub wet: WetParams = WetParams::default();
        /// Biome choice from latitude, height and distance to water (seed 001).
        pub biome: BiomeParams = BiomeParams::default();
        /// Procedural surface detail: noise scale and strength, strata on rock.
        pub detail: DetailParams = DetailParams::default();
    }
}

impl MaterialParams {
    /// Checks every field (and nested section) against its declared range. The renderer does not
    /// need it (it draws any value); presets and tests do.
    pub fn validate(&self) -> Result<(), crate::core::params::BadParam> {
        self.check_ranges()
    }
}

crate::params! {
    /// One material layer: two colours mixed by noise, and a roughness.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct TerrainLayer {
        /// Main colour (sRGB colour).
        pub color: [f32; 3] = [0.5; 3], range [0.0, 1.0];
        /// Second colour the detail noise mixes in (sRGB colour).
        pub variation: [f32; 3] = [0.4; 3], range [0.0, 1.0];
        /// How far the noise moves from `color` toward `variation`.
        pub variation_amount: f32 = 0.5, range [0.0, 1.0];
        /// Perceptual roughness (0 = mirror, 1 = matte).
        pub roughness: f32 = 0.9, range [0.0, 1.0];
    }
}

crate::params! {
    /// Band limits. Heights are fractions of the peak above sea level (0 = shore, 1 = peak), slopes
    /// degrees from horizontal.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct LayerBands {
        /// Top of the beach: sand below, grass above. Height fraction.
        pub beach_top: f32 = 0.02, range [-1.0, 1.0];
        /// Height where grass gives way to bare dirt. Height fraction.
        pub dirt_height: f32 = 0.6, range [0.0, 2.0];
        /// Height where snow starts. Height fraction.
        pub snow_line: f32 = 0.86, range [0.0, 2.0];
        /// Half-width of every height transition. Height fraction.
        pub height_blend: f32 = 0.03, range [0.0, 0.5];
        /// Slope where grass turns to dirt, degrees.
        pub dirt_slope: f32 = 30.0, range [0.0, 90.0];
        /// Slope where rock shows, degrees.
        pub rock_slope: f32 = 40.0, range [0.0, 90.0];
        /// Snow does not hold on slopes steeper than this, degrees.
        pub snow_max_slope: f32 = 42.0, range [0.0, 90.0];
        /// Half-width of every slope transition, degrees.
        pub slope_blend: f32 = 5.0, range [0.0, 45.0];
        /// How far the noise pushes each boundary, in blend widths.
        pub edge_noise: f32 = 1.5, range [0.0, 4.0];
    }
}

crate::params! {
    /// Fresh deposits drawn as sediment (seed 002).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct SedimentParams {
        /// Show the sediment layer.
        pub enabled: bool = true;
        /// Net deposit (deposited − eroded) where sediment starts to show, metres.
        pub deposit_min: f32 = 0.02, range [0.0, 100.0];
        /// Net deposit at full cover, metres.
        pub deposit_full: f32 = 0.4, range [0.0, 100.0];
        /// Cover at full deposit.
        pub strength: f32 = 0.9, range [0.0, 1.0];
        /// Freshly eroded ground shows dirt: cover per metre eroded (at most 0.6).
        pub erosion_exposes: f32 = 0.15, range [0.0, 10.0];
        /// The sediment layer's colours and roughness (gravel comes from its noise).
        pub layer: TerrainLayer = TerrainLayer { color: [0.62, 0.55, 0.42], variation: [0.45, 0.42, 0.38], variation_amount: 0.7, roughness: 0.9, };
    }
}

crate::params! {
    /// Wet channels from the flow map.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct WetParams {
        /// Darken the channels.
        pub enabled: bool = true;
        /// Normalised flow (log scale, 1 = the busiest node) where wetness starts.
        pub flow_min: f32 = 0.35, range [0.0, 1.0];
        /// Normalised flow at full wetness.
        pub flow_full: f32 = 0.75, range [0.0, 1.0];
        /// Colour multiplier lost at full wetness.
        pub darkening: f32 = 0.45, range [0.0, 1.0];
        /// Roughness at full wetness (wet ground is shinier).
        pub roughness: f32 = 0.35, range [0.0, 1.0];
        /// Simulated water deeper than this counts as water for the distance to water, metres.
        pub wet_depth: f32 = 0.05, range [0.0, 100.0];
    }
}

crate::params! {
    /// Biomes from latitude, altitude and distance to water (seed 001).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct BiomeParams {
        /// Choose the grass colour by biome; off: temperate everywhere.
        pub enabled: bool = true;
        /// Latitude of the map's first row (top, −z), degrees.
        pub latitude_north: f32 = 48.0, range [-90.0, 90.0];
        /// Latitude of the map's last row (bottom, +z), degrees.
        pub latitude_south: f32 = 40.0, range [-90.0, 90.0];
        /// Sea-level temperature at the equator, °C.
        pub temperature_equator: f32 = 30.0, range [-50.0, 60.0];
        /// Sea-level temperature at the poles, °C.
        pub temperature_pole: f32 = -25.0, range [-80.0, 40.0];
        /// Cooling from the shore to the peak, °C.
        pub lapse: f32 = 14.0, range [0.0, 100.0];
        /// Distance over which moisture falls to 1/e, metres.
        pub moisture_range: f32 = 220.0, range [1.0, 1e5];
        /// Below this temperature the ground is tundra, °C.
        pub tundra_temperature: f32 = -2.0, range [-50.0, 50.0];
        /// Above this temperature dry ground becomes desert, °C.
        pub desert_temperature: f32 = 20.0, range [-50.0, 60.0];
        /// Moisture below which warm ground is desert.
        pub desert_moisture: f32 = 0.05, range [0.0, 1.0];
        /// Moisture below which ground is steppe.
        pub steppe_moisture: f32 = 0.15, range [0.0, 1.0];
        /// Desert ground colour (sRGB colour).
        pub desert_color: [f32; 3] = [0.78, 0.64, 0.44], range [0.0, 1.0];
        /// Steppe grass colour (sRGB colour).
        pub steppe_color: [f32; 3] = [0.56, 0.55, 0.30], range [0.0, 1.0];
        /// Tundra colour (sRGB colour).
        pub tundra_color: [f32; 3] = [0.46, 0.46, 0.36], range [0.0, 1.0];
    }
}

crate::params! {
    /// Procedural detail.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct DetailParams {
        /// Size of the finest noise features, metres.
        pub scale: f32 = 6.0, range [0.1, 1000.0];
        /// Size of the edge-breaking noise, metres.
        pub edge_scale: f32 = 40.0, range [1.0, 1e4];
        /// Triplanar blend sharpness on cliffs (higher = crisper seams).
        pub triplanar_sharpness: f32 = 4.0, range [1.0, 16.0];
        /// Rock strata: contrast of the horizontal bands.
        pub strata: f32 = 0.18, range [0.0, 1.0];
        /// Rock strata spacing, metres.
        pub strata_spacing: f32 = 7.0, range [0.1, 1000.0];
    }
}

// ---------------------------------------------------------------------------------------------
// The math the shader mirrors (keep `shaders/terrain.wgsl` in step).

pub use crate::core::splat::smoothstep;

/// Index of the sand layer in [`layer_weights`].
pub const SAND: usize = 0;
/// Index of the grass layer in [`layer_weights`].
pub const GRASS: usize = 1;
/// Index of the dirt layer in [`layer_weights`].
pub const DIRT: usize = 2;
/// Index of the rock layer in [`layer_weights`].
pub const ROCK: usize = 3;
/// Index of the snow layer in [`layer_weights`].
pub const SNOW: usize = 4;
/// Index of the sediment layer in [`layer_weights`].
pub const SEDIMENT: usize = 5;

/// Weights of sand, grass, dirt, rock, snow and sediment (sum 1) at height fraction `f`, slope
/// `slope` (degrees), net deposit `deposit` (m) and edge noise `noise ∈ [−1, 1]` (module docs).
pub fn layer_weights(p: &MaterialParams, f: f32, slope: f32, deposit: f32, noise: f32) -> [f32; 6] {
    let b = &p.bands;
    let s = &p.sediment;
    let (sed, exposed) = if s.enabled {
        (
            s.strength.clamp(0.0, 1.0) * smoothstep(s.deposit_min, s.deposit_full.max(s.deposit_min), deposit),
            (-deposit * s.erosion_exposes).clamp(0.0, 0.6),
        )
    } else {
        (0.0, 0.0)
    };
    // The bands (ground by height, dirt, rock and snow over it) are the exported splat maps' rule.
    let e = noise.clamp(-1.0, 1.0) * b.edge_noise;
    let g = crate::core::splat::layer_weights(&b.splat_bands(), f, slope, e, exposed);
    let mut wts = [g[SAND], g[GRASS], g[DIRT], g[ROCK], g[SNOW], 0.0];
    // Fresh sediment is painted over everything below it.
    let a = sed.clamp(0.0, 1.0);
    for x in wts.iter_mut() {
        *x *= 1.0 - a;
    }
    wts[SEDIMENT] += a;
    wts
}

impl LayerBands {
    /// The bands as the core's splat rule takes them (all but the edge noise's width).
    pub fn splat_bands(&self) -> crate::core::splat::SplatBands {
        crate::core::splat::SplatBands {
            beach_top: self.beach_top,
            dirt_height: self.dirt_height,
            snow_line: self.snow_line,
            height_blend: self.height_blend,
            dirt_slope: self.dirt_slope,
            rock_slope: self.rock_slope,
            snow_max_slope: self.snow_max_slope,
            slope_blend: self.slope_blend,
        }
    }
}

/// Temperature in °C at `latitude` (degrees) and height fraction `f` (module docs).
pub fn temperature(b: &BiomeParams, latitude: f32, f: f32) -> f32 {
    let c = latitude.clamp(-90.0, 90.0).to_radians().cos();
    b.temperature_pole + (b.temperature_equator - b.temperature_pole) * c * c - b.lapse * f.max(0.0)
}

/// Moisture `exp(−d / range)` at distance `d` (m) from water, 0 ..= 1.
pub fn moisture(b: &BiomeParams, d: f32) -> f32 {
    (-d.max(0.0) / b.moisture_range.max(1.0)).exp()
}

/// Latitude (degrees) of node row `y` of `rows`.
pub fn latitude(b: &BiomeParams, y: f32, rows: usize) -> f32 {
    let t = if rows > 1 { (y / (rows - 1) as f32).clamp(0.0, 1.0) } else { 0.5 };
    b.latitude_north + (b.latitude_south - b.latitude_north) * t
}

/// Index of the desert biome in [`biome_weights`].
pub const DESERT: usize = 0;
/// Index of the steppe biome in [`biome_weights`].
pub const STEPPE: usize = 1;
/// Index of the temperate biome in [`biome_weights`].
pub const TEMPERATE: usize = 2;
/// Index of the tundra biome in [`biome_weights`].
pub const TUNDRA: usize = 3;

/// Weights of desert, steppe, temperate and tundra (sum 1) for temperature `t` (°C) and moisture
/// `m` (module docs).
pub fn biome_weights(b: &BiomeParams, t: f32, m: f32) -> [f32; 4] {
    if !b.enabled {
        return [0.0, 0.0, 1.0, 0.0];
    }
    let tundra = 1.0 - smoothstep(b.tundra_temperature - 3.0, b.tundra_temperature + 3.0, t);
    let rest = 1.0 - tundra;
    let desert = rest
        * (1.0 - smoothstep(b.desert_moisture - 0.05, b.desert_moisture + 0.05, m))
        * smoothstep(b.desert_temperature - 3.0, b.desert_temperature + 3.0, t);
    let steppe = (rest - desert) * (1.0 - smoothstep(b.steppe_moisture - 0.05, b.steppe_moisture + 0.05, m));
    let temperate = rest - desert - steppe;
    [desert, steppe, temperate, tundra]
}

/// sRGB colour component (0 ..= 1) to linear light, as the shader expects.
pub fn srgb_to_linear(c: f32) -> f32 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

/// The plain look's colour (splatting off, [`MaterialParams::enabled`] false), linear RGB, at
/// height `h` (metres) on ground whose normal has vertical component `up`, on a map whose lowest
/// and highest points are `low` and `high`: below 0 m (the sea) wet sand; above, sand → grass →
/// forest → rock → snow by the fraction `t = h / high` of the map's height (`t = (h − low) /
/// max(high − low, 1)` on a map wholly under 0 m); slopes steeper than about 55° (`up < 0.6`,
/// fully rock at `up ≤ 0.45`) show rock. `shaders/terrain.wgsl` (`plain_color`) computes it per
/// pixel from the uniform's lowest and highest points; keep the two in step.
pub fn plain_color(h: f32, up: f32, low: f32, high: f32) -> [f32; 3] {
    const SEABED: [f32; 3] = [0.45, 0.40, 0.30];
    const SAND: [f32; 3] = [0.76, 0.70, 0.50];
    const GRASS: [f32; 3] = [0.30, 0.50, 0.18];
    const FOREST: [f32; 3] = [0.20, 0.36, 0.14];
    const ROCK: [f32; 3] = [0.45, 0.42, 0.40];
    const SNOW: [f32; 3] = [0.95, 0.95, 0.97];
    let mix = |a: [f32; 3], b: [f32; 3], t: f32| {
        let t = t.clamp(0.0, 1.0);
        [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
    };
    let top = if high > 0.0 { high } else { (high - low).max(1.0) };
    let base = if high > 0.0 { 0.0 } else { low };
    let t = ((h - base) / top).clamp(-1.0, 1.0);
    let mut rgb = if t < 0.0 {
        SEABED
    } else if t < 0.03 {
        SAND
    } else if t < 0.08 {
        mix(SAND, GRASS, (t - 0.03) / 0.05)
    } else if t < 0.45 {
        mix(GRASS, FOREST, (t - 0.08) / 0.37)
    } else if t < 0.7 {
        mix(FOREST, ROCK, (t - 0.45) / 0.25)
    } else if t < 0.85 {
        ROCK
    } else {
        mix(ROCK, SNOW, (t - 0.85) / 0.05)
    };
    if t >= 0.03 {
        rgb = mix(rgb, ROCK, (0.6 - up) / 0.15);
    }
    // The constants are sRGB-ish; the shader works in linear light.
    rgb.map(|v| v.powf(2.2))
}

// ---------------------------------------------------------------------------------------------
// The per-node data texture.

/// Inputs of [`surface_data`] besides the map: the simulation's per-node fields (each `None` or
/// `width × height` values).
#[derive(Clone, Copy, Debug, Default)]
pub struct SurfaceInputs<'a> {
    /// Water depth, metres; a node deeper than the wet depth counts as water.
    pub water: Option<&'a [f32]>,
    /// Flow, any non-negative unit; shown on a log scale relative to its largest value.
    pub flow: Option<&'a [f32]>,
    /// Material removed, metres.
    pub eroded: Option<&'a [f32]>,
    /// Material laid down, metres.
    pub deposited: Option<&'a [f32]>,
}

/// Distances to water are capped at this many metres (f16 keeps them exact enough below it).
pub const MAX_WATER_DISTANCE: f32 = 60_000.0;

/// The data texture's texels `[net deposit m, flow 0..1, distance to water m, water depth m]`
/// per node, row-major (module docs). Inputs of the wrong length are ignored.
pub fn surface_data(map: &Heightmap, sea_level: f32, wet_depth: f32, inputs: SurfaceInputs) -> Vec<[f32; 4]> {
    let n = map.width * map.height;
    fn fit(v: Option<&[f32]>, n: usize) -> Option<&[f32]> {
        v.filter(|v| v.len() == n)
    }
    let (water, flow, eroded, deposited) =
        (fit(inputs.water, n), fit(inputs.flow, n), fit(inputs.eroded, n), fit(inputs.deposited, n));
    let is_water: Vec<bool> = (0..n)
        .into_par_iter()
        .map(|i| map.data[i] < sea_level || water.is_some_and(|w| w[i] > wet_depth.max(0.0)))
        .collect();
    let dist = water_distance(map, &is_water);
    // Flow on a log scale relative to its largest value (a maximum: the same at any thread count).
    let flow_k = flow.map(|f| {
        let max = f.par_iter().copied().filter(|x| x.is_finite()).reduce(|| 0.0f32, f32::max);
        if max > 0.0 { 1.0 / (1.0 + max).ln() } else { 0.0 }
    });
    (0..n)
        .into_par_iter()
        .map(|i| {
            let net = deposited.map_or(0.0, |d| d[i]) - eroded.map_or(0.0, |e| e[i]);
            let depth = water.map_or(0.0, |w| w[i].max(0.0));
            let q = match (flow, flow_k) {
                (Some(f), Some(k)) if f[i].is_finite() && f[i] > 0.0 => ((1.0 + f[i]).ln() * k).min(1.0),
                _ => 0.0,
            };
            [
                if net.is_finite() { net } else { 0.0 },
                q,
                dist[i].min(MAX_WATER_DISTANCE),
                if depth.is_finite() { depth } else { 0.0 },
            ]
        })
        .collect()
}

/// Distance (m) from each node to the nearest water node (0 on water; capped when there is none).
fn water_distance(map: &Heightmap, is_water: &[bool]) -> Vec<f32> {
    let d = crate::core::distance::distance_field(map.width, map.height, map.cell_size, is_water);
    if d.len() != is_water.len() {
        return vec![MAX_WATER_DISTANCE; is_water.len()];
    }
    d.into_iter().map(|d| if d.is_finite() { d } else { MAX_WATER_DISTANCE }).collect()
}

/// `x` as IEEE half-precision bits (round to nearest even; overflow → ±∞, NaN → NaN).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal: shift the mantissa (with its implicit 1) into place, rounding to nearest even.
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1u32 << shift) - 1);
        let mut h = m >> shift;
        if rest > half || (rest == half && h & 1 == 1) {
            h += 1;
        }
        return sign | h as u16;
    }
    let mut h = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1; // may carry into the exponent, which is still correct (up to ∞)
    }
    sign | h as u16
}

/// The texels of [`surface_data`] as `Rgba16Float` bytes (little-endian).
pub fn to_rgba16f_bytes(texels: &[[f32; 4]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(texels.len() * 8);
    for t in texels {
        for c in t {
            out.extend_from_slice(&f32_to_f16(*c).to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_look_ramps_from_seabed_to_snow_with_rock_on_steep_ground() {
        let lin = |c: [f32; 3]| c.map(|v: f32| v.powf(2.2));
        let near = |a: [f32; 3], b: [f32; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5);
        let (low, high) = (-40.0, 200.0);
        assert!(near(plain_color(-5.0, 1.0, low, high), lin([0.45, 0.40, 0.30])), "seabed");
        assert!(near(plain_color(3.0, 1.0, low, high), lin([0.76, 0.70, 0.50])), "beach");
        assert!(near(plain_color(150.0, 1.0, low, high), lin([0.45, 0.42, 0.40])), "bare rock band");
        assert!(near(plain_color(200.0, 1.0, low, high), lin([0.95, 0.95, 0.97])), "snow at the top");
        // Grass at 10 % of the height turns to rock on a 60° slope (up = cos 60° = 0.5 < 0.6).
        let flat = plain_color(20.0, 1.0, low, high);
        let steep = plain_color(20.0, 0.4, low, high);
        assert!(flat[1] > flat[0], "grass is green: {flat:?}");
        assert!(near(steep, lin([0.45, 0.42, 0.40])), "steep ground is rock: {steep:?}");
        // A map wholly under 0 m ramps over its own range instead of showing all seabed.
        assert_ne!(plain_color(-10.0, 1.0, -100.0, -5.0), plain_color(-90.0, 1.0, -100.0, -5.0));
    }

    fn sum(w: &[f32]) -> f32 {
        w.iter().sum()
    }

    #[test]
    fn smoothstep_edges() {
        assert_eq!(smoothstep(0.0, 1.0, -1.0), 0.0);
        assert_eq!(smoothstep(0.0, 1.0, 2.0), 1.0);
        assert!((smoothstep(0.0, 1.0, 0.5) - 0.5).abs() < 1e-6);
        assert_eq!(smoothstep(1.0, 1.0, 0.5), 0.0, "a zero-width band is a step, not NaN");
        assert_eq!(smoothstep(1.0, 1.0, 1.5), 1.0);
    }

    #[test]
    fn bands_pick_the_expected_layer() {
        let p = MaterialParams::default();
        let top = |w: [f32; 6]| w.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i).unwrap();
        assert_eq!(top(layer_weights(&p, -0.05, 2.0, 0.0, 0.0)), SAND, "under the sea and on the beach: sand");
        assert_eq!(top(layer_weights(&p, 0.2, 5.0, 0.0, 0.0)), GRASS, "low flat ground: grass");
        assert_eq!(top(layer_weights(&p, 0.72, 5.0, 0.0, 0.0)), DIRT, "high ground below the snow: dirt");
        assert_eq!(top(layer_weights(&p, 0.3, 60.0, 0.0, 0.0)), ROCK, "cliffs: rock");
        assert_eq!(top(layer_weights(&p, 0.95, 10.0, 0.0, 0.0)), SNOW, "high flat ground: snow");
        assert_eq!(top(layer_weights(&p, 0.9, 70.0, 0.0, 0.0)), ROCK, "snow slides off steep peaks");
        assert_eq!(top(layer_weights(&p, 0.2, 5.0, 1.0, 0.0)), SEDIMENT, "fresh deposits: sediment");
        assert_eq!(top(layer_weights(&p, 0.2, 5.0, -5.0, 0.0)), DIRT, "deep fresh cuts expose dirt");
    }

    #[test]
    fn weights_sum_to_one_and_stay_finite_for_absurd_input() {
        let mut p = MaterialParams::default();
        p.bands.height_blend = 0.0;
        p.bands.slope_blend = -3.0;
        p.sediment.deposit_full = -1.0;
        p.sediment.strength = 7.0;
        for f in [-10.0, -0.01, 0.0, 0.3, 0.72, 5.0, f32::INFINITY] {
            for s in [0.0, 24.0, 36.0, 89.0] {
                for d in [-5.0, 0.0, 0.03, 10.0] {
                    for e in [-3.0, 0.0, 1.0] {
                        let w = layer_weights(&p, f, s, d, e);
                        assert!(w.iter().all(|x| x.is_finite() && *x >= 0.0), "{w:?}");
                        assert!((sum(&w) - 1.0).abs() < 1e-4, "{f} {s} {d}: {w:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn edge_noise_moves_the_boundary() {
        let p = MaterialParams::default();
        let at = p.bands.snow_line;
        let lo = layer_weights(&p, at, 5.0, 0.0, -1.0)[SNOW];
        let hi = layer_weights(&p, at, 5.0, 0.0, 1.0)[SNOW];
        assert!(lo < 0.1 && hi > 0.9, "noise ±1 pushes the snow line by 1.5 blend widths: {lo} {hi}");
    }

    #[test]
    fn biomes_follow_temperature_and_moisture() {
        let b = BiomeParams::default();
        let top = |w: [f32; 4]| w.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i).unwrap();
        assert_eq!(top(biome_weights(&b, 28.0, 0.0)), DESERT);
        assert_eq!(top(biome_weights(&b, 10.0, 0.05)), STEPPE);
        assert_eq!(top(biome_weights(&b, 10.0, 0.8)), TEMPERATE);
        assert_eq!(top(biome_weights(&b, -15.0, 0.8)), TUNDRA);
        for t in [-60.0, -2.0, 0.0, 20.0, 60.0] {
            for m in [0.0, 0.05, 0.2, 1.0] {
                let w = biome_weights(&b, t, m);
                assert!((sum(&w) - 1.0).abs() < 1e-5 && w.iter().all(|x| *x >= -1e-6), "{w:?}");
            }
        }
        let off = BiomeParams { enabled: false, ..b };
        assert_eq!(biome_weights(&off, 40.0, 0.0), [0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn climate_from_latitude_altitude_and_water() {
        let b = BiomeParams::default();
        assert!((temperature(&b, 0.0, 0.0) - b.temperature_equator).abs() < 1e-4);
        assert!((temperature(&b, 90.0, 0.0) - b.temperature_pole).abs() < 1e-3);
        assert!(temperature(&b, 45.0, 1.0) < temperature(&b, 45.0, 0.0) - 10.0, "peaks are colder");
        assert!(temperature(&b, 45.0, -0.5) == temperature(&b, 45.0, 0.0), "the sea floor is not warmer");
        assert_eq!(moisture(&b, 0.0), 1.0);
        assert!((moisture(&b, b.moisture_range) - (-1.0f32).exp()).abs() < 1e-6);
        assert_eq!(latitude(&b, 0.0, 11), b.latitude_north);
        assert_eq!(latitude(&b, 10.0, 11), b.latitude_south);
        assert_eq!(latitude(&b, 3.0, 1), (b.latitude_north + b.latitude_south) / 2.0);
    }

    #[test]
    fn shipped_presets_load_and_differ() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets/material");
        let mut loaded = Vec::new();
        for name in ["temperate", "alpine", "desert"] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.ron"))).unwrap();
            let p: MaterialParams = ron::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            loaded.push(p);
        }
        assert_eq!(loaded[0], MaterialParams::default(), "temperate is the default look");
        assert!(loaded[1].bands.snow_line < loaded[0].bands.snow_line, "alpine snow comes lower");
        assert!(loaded[2].bands.snow_line > 1.0, "no snow in the desert");
    }

    #[test]
    fn half_floats_round_trip() {
        let back = |h: u16| {
            let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
            let e = ((h >> 10) & 0x1f) as i32;
            let m = (h & 0x3ff) as f32;
            match e {
                0 => s * m * 2f32.powi(-24),
                31 => {
                    if m == 0.0 {
                        s * f32::INFINITY
                    } else {
                        f32::NAN
                    }
                }
                _ => s * (1.0 + m / 1024.0) * 2f32.powi(e - 15),
            }
        };
        assert_eq!(f32_to_f16(0.0), 0);
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(1e6), 0x7c00);
        assert!(back(f32_to_f16(f32::NAN)).is_nan());
        for x in [0.1f32, 0.333, 12.5, 250.7, 6.1e-5, 1e-6, -0.02, 4000.0] {
            let y = back(f32_to_f16(x));
            assert!((y - x).abs() <= x.abs() * 1e-3 + 6e-8, "{x} → {y}");
        }
    }

    #[test]
    fn surface_data_packs_deposits_flow_and_distance() {
        // A 5×1 strip: node 0 under the sea, the others 10 m up; cell 2 m.
        let map = Heightmap::from_fn(5, 1, 2.0, |x, _| if x == 0 { -1.0 } else { 10.0 }).unwrap();
        let flow = [0.0, 0.0, 99.0, 9.0, 0.0];
        let eroded = [0.0, 0.5, 0.0, 0.0, 0.0];
        let deposited = [0.0, 0.0, 0.3, 0.0, 0.0];
        let water = [0.0, 0.0, 0.0, 0.0, 1.0];
        let t = surface_data(
            &map,
            0.0,
            0.05,
            SurfaceInputs {
                water: Some(&water),
                flow: Some(&flow),
                eroded: Some(&eroded),
                deposited: Some(&deposited),
            },
        );
        assert_eq!(t.len(), 5);
        assert_eq!(t[1][0], -0.5);
        assert_eq!(t[2][0], 0.3);
        assert!((t[2][1] - 1.0).abs() < 1e-6, "the busiest node has flow 1");
        assert!((t[3][1] - 0.5).abs() < 1e-6, "log scale: ln 10 / ln 100");
        let d: Vec<f32> = t.iter().map(|x| x[2]).collect();
        assert_eq!(d, vec![0.0, 2.0, 4.0, 2.0, 0.0], "distance to the sea (node 0) or the pond (node 4)");
        assert_eq!(t[4][3], 1.0);
        // Missing or mis-sized inputs are ignored.
        let t = surface_data(&map, 0.0, 0.05, SurfaceInputs { flow: Some(&[1.0; 3]), ..Default::default() });
        assert!(t.iter().all(|x| x[0] == 0.0 && x[1] == 0.0 && x[3] == 0.0));
        // No water anywhere: capped distance.
        let t = surface_data(&map, -100.0, 0.05, SurfaceInputs::default());
        assert!(t.iter().all(|x| x[2] == MAX_WATER_DISTANCE));
        assert_eq!(to_rgba16f_bytes(&t).len(), 5 * 8);
    }
}
