// The terrain material: StandardMaterial PBR (lights, shadows, atmosphere, fog) with the base
// colour and roughness replaced by procedural splatting.
//
// The math is documented and unit-tested in src/editor/look/material.rs (`layer_weights`,
// `temperature`, `moisture`, `biome_weights`); keep the two in step. Per-node data comes from a
// data texture (r: net deposit m, g: normalised flow, b: distance to water m, a: water depth m),
// the overlay (issue #5, overlays) from an RGBA texture blended over the lit colour.

#import bevy_pbr::{
    pbr_fragment::pbr_input_from_standard_material,
    pbr_functions::alpha_discard,
}
#import talus::noise::{value2, fbm2}
#import talus::triplanar::triplanar_fbm

#ifdef PREPASS_PIPELINE
#import bevy_pbr::{
    prepass_io::{VertexOutput, FragmentOutput},
    pbr_deferred_functions::deferred_output,
}
#else
#import bevy_pbr::{
    forward_io::{VertexOutput, FragmentOutput},
    pbr_functions::{apply_pbr_lighting, main_pass_post_lighting_processing},
}
#endif

struct TerrainUniform {
    // x: sea level (m), y: peak height above sea level (m), z: cell size (m), w: 1 = splatting on
    map: vec4<f32>,
    // x, y: map size in nodes, z: overlay opacity, w: the map's lowest point (m)
    size: vec4<f32>,
    // beach_top, dirt_height, snow_line, height_blend
    bands_h: vec4<f32>,
    // dirt_slope, rock_slope, snow_max_slope, slope_blend (degrees)
    bands_s: vec4<f32>,
    // edge_noise, edge_scale (m), detail scale (m), triplanar sharpness
    detail: vec4<f32>,
    // strata contrast, strata spacing (m), the map's highest point (m), unused
    strata: vec4<f32>,
    // strength (0 when off), deposit_min, deposit_full, erosion_exposes
    sediment: vec4<f32>,
    // darkening (0 when off), flow_min, flow_full, wet roughness
    wet: vec4<f32>,
    // latitude north, latitude south, T equator, T pole
    biome_a: vec4<f32>,
    // lapse, moisture range, tundra T, desert T
    biome_b: vec4<f32>,
    // desert moisture, steppe moisture, 1 = biomes on, unused
    biome_c: vec4<f32>,
    // sand, grass, dirt, rock, snow, sediment: linear rgb + variation amount
    layer_color: array<vec4<f32>, 6>,
    // the same layers: linear variation rgb + roughness
    layer_var: array<vec4<f32>, 6>,
    // desert, steppe, tundra: linear rgb
    biome_color: array<vec4<f32>, 3>,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(100) var<uniform> terrain: TerrainUniform;
@group(#{MATERIAL_BIND_GROUP}) @binding(101) var data_texture: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(102) var data_sampler: sampler;
@group(#{MATERIAL_BIND_GROUP}) @binding(103) var overlay_texture: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(104) var overlay_sampler: sampler;

const SAND: u32 = 0u;
const GRASS: u32 = 1u;
const DIRT: u32 = 2u;
const ROCK: u32 = 3u;
const SNOW: u32 = 4u;
const SEDIMENT: u32 = 5u;

// Texture coordinate of the texel holding node position `t` (0 ..= 1 across the map) in a
// texture of `dims` texels: node 0 → the first texel's centre, the last node → the last one's.
fn node_uv(t: vec2<f32>, dims: vec2<u32>) -> vec2<f32> {
    let d = vec2<f32>(dims);
    return (clamp(t, vec2<f32>(0.0), vec2<f32>(1.0)) * (d - 1.0) + 0.5) / d;
}

// Layer colour with its noise variation (linear rgb).
fn layer_rgb(k: u32, noise: f32) -> vec3<f32> {
    let c = terrain.layer_color[k];
    let v = terrain.layer_var[k];
    return mix(c.rgb, v.rgb, clamp(noise * c.w, 0.0, 1.0));
}

fn sstep(a: f32, b: f32, x: f32) -> f32 {
    if (b <= a) { return select(0.0, 1.0, x >= a); }
    return smoothstep(a, b, x);
}

// Biome weights (desert, steppe, temperate, tundra) from temperature t (°C) and moisture m.
fn biome_weights(t: f32, m: f32) -> vec4<f32> {
    if (terrain.biome_c.z < 0.5) { return vec4<f32>(0.0, 0.0, 1.0, 0.0); }
    let tundra = 1.0 - sstep(terrain.biome_b.z - 3.0, terrain.biome_b.z + 3.0, t);
    let rest = 1.0 - tundra;
    let desert = rest * (1.0 - sstep(terrain.biome_c.x - 0.05, terrain.biome_c.x + 0.05, m))
        * sstep(terrain.biome_b.w - 3.0, terrain.biome_b.w + 3.0, t);
    let steppe = (rest - desert) * (1.0 - sstep(terrain.biome_c.y - 0.05, terrain.biome_c.y + 0.05, m));
    return vec4<f32>(desert, steppe, rest - desert - steppe, tundra);
}

// Splatted colour (rgb, linear) and roughness (a) at world position p with normal n.
fn splat(p: vec3<f32>, n: vec3<f32>) -> vec4<f32> {
    let sea = terrain.map.x;
    let peak = max(terrain.map.y, 1e-3);
    let cell = max(terrain.map.z, 1e-6);
    let size = max(terrain.size.xy, vec2<f32>(2.0));
    let t = p.xz / cell / (size - 1.0);
    let data = textureSample(data_texture, data_sampler, node_uv(t, textureDimensions(data_texture)));
    let deposit = data.r;
    let flow = data.g;
    let dist = data.b;

    let f = (p.y - sea) / peak;
    let slope = degrees(acos(clamp(n.y, -1.0, 1.0)));

    // Noise: one broad field to break the edges, one fine triplanar field for the detail.
    let edge = fbm2(p.xz / max(terrain.detail.y, 1e-3), 3) * 2.0 - 1.0;
    let fine = triplanar_fbm(p, n, terrain.detail.z, 2, terrain.detail.w);
    let speck = value2(p.xz / max(terrain.detail.z * 0.15, 1e-3));

    // Band weights (layer_weights in material.rs).
    let w = max(terrain.bands_h.w, 1e-4);
    let v = max(terrain.bands_s.w, 1e-3);
    let e = clamp(edge * 1.6, -1.0, 1.0) * terrain.detail.x;
    let fh = f + e * w;
    let th = slope + e * v;
    let sand = 1.0 - sstep(terrain.bands_h.x - w, terrain.bands_h.x + w, fh);
    let dirt_h = sstep(terrain.bands_h.y - w, terrain.bands_h.y + w, fh);
    let slope_dirt = sstep(terrain.bands_s.x - v, terrain.bands_s.x + v, th);
    let rock = sstep(terrain.bands_s.y - v, terrain.bands_s.y + v, th);
    let snow = sstep(terrain.bands_h.z - w, terrain.bands_h.z + w, fh)
        * (1.0 - sstep(terrain.bands_s.z - v, terrain.bands_s.z + v, slope));
    let sed = clamp(terrain.sediment.x, 0.0, 1.0) * sstep(terrain.sediment.y, max(terrain.sediment.z, terrain.sediment.y), deposit);
    let exposed = clamp(-deposit * terrain.sediment.w, 0.0, 0.6) * select(0.0, 1.0, terrain.sediment.x > 0.0);

    // Biome (seed 001): latitude from the row, temperature from latitude and height, moisture
    // from the distance to water.
    let lat = mix(terrain.biome_a.x, terrain.biome_a.y, clamp(t.y, 0.0, 1.0));
    let c = cos(radians(clamp(lat, -90.0, 90.0)));
    let temp = terrain.biome_a.w + (terrain.biome_a.z - terrain.biome_a.w) * c * c - terrain.biome_b.x * max(f, 0.0);
    let moist = exp(-max(dist, 0.0) / max(terrain.biome_b.y, 1.0));
    let bw = biome_weights(temp, moist);

    // Layer colours with detail.
    let grass_t = layer_rgb(GRASS, fine);
    let grass_tint = grass_t / max(terrain.layer_color[GRASS].rgb, vec3<f32>(1e-3));
    let grass = bw.z * grass_t
        + bw.x * terrain.biome_color[0].rgb * mix(0.9, 1.1, fine)
        + bw.y * terrain.biome_color[1].rgb * clamp(grass_tint, vec3<f32>(0.6), vec3<f32>(1.6))
        + bw.w * terrain.biome_color[2].rgb * mix(0.85, 1.1, fine);
    let dirt = mix(layer_rgb(DIRT, fine), terrain.biome_color[0].rgb * 0.85, bw.x * 0.6);
    var rock_c = layer_rgb(ROCK, fine);
    // Strata: horizontal bands, wobbled by the fine noise so they do not read as rulers.
    let strata = sin(6.2831853 * (p.y / max(terrain.strata.y, 1e-3) + fine * 1.3));
    rock_c = rock_c * (1.0 + terrain.strata.x * 0.5 * strata);
    let snow_c = layer_rgb(SNOW, fine);
    // Gravel: fine speckles in the sediment.
    let sed_c = layer_rgb(SEDIMENT, speck * 0.6 + fine * 0.4);
    var sand_c = layer_rgb(SAND, fine);
    // Wet sand toward and under the waterline.
    sand_c = sand_c * mix(1.0, 0.72, 1.0 - sstep(-0.01, 0.008, f));

    // Compose: ground by height, then each layer over it.
    var col = sand * sand_c + (1.0 - sand) * mix(grass, dirt, dirt_h);
    var rough = sand * terrain.layer_var[SAND].w
        + (1.0 - sand) * mix(terrain.layer_var[GRASS].w, terrain.layer_var[DIRT].w, dirt_h);
    let a_dirt = clamp(max(slope_dirt, exposed) * (1.0 - sand), 0.0, 1.0);
    col = mix(col, dirt, a_dirt);
    rough = mix(rough, terrain.layer_var[DIRT].w, a_dirt);
    col = mix(col, rock_c, rock);
    rough = mix(rough, terrain.layer_var[ROCK].w, rock);
    col = mix(col, snow_c, snow);
    rough = mix(rough, terrain.layer_var[SNOW].w, snow);
    col = mix(col, sed_c, sed);
    rough = mix(rough, terrain.layer_var[SEDIMENT].w, sed);

    // Wet channels: darker and shinier where the flow is high (not on snow).
    let wet = terrain.wet.x * sstep(terrain.wet.y, max(terrain.wet.z, terrain.wet.y), flow) * (1.0 - snow);
    col = col * (1.0 - wet);
    rough = mix(rough, terrain.wet.w, wet / max(terrain.wet.x, 1e-3));

    return vec4<f32>(max(col, vec3<f32>(0.0)), clamp(rough, 0.04, 1.0));
}

// The plain look (splatting off): the height ramp of `editor::look::material::plain_color`
// (documented and tested there; keep the two in step), from the map's lowest and highest points.
fn plain_color(h: f32, up: f32) -> vec3<f32> {
    let seabed = vec3<f32>(0.45, 0.40, 0.30);
    let sand = vec3<f32>(0.76, 0.70, 0.50);
    let grass = vec3<f32>(0.30, 0.50, 0.18);
    let forest = vec3<f32>(0.20, 0.36, 0.14);
    let rock = vec3<f32>(0.45, 0.42, 0.40);
    let snow = vec3<f32>(0.95, 0.95, 0.97);
    let low = terrain.size.w;
    let high = terrain.strata.z;
    var top = max(high - low, 1.0);
    var base = low;
    if (high > 0.0) {
        top = high;
        base = 0.0;
    }
    let t = clamp((h - base) / top, -1.0, 1.0);
    var rgb = snow;
    if (t < 0.0) {
        rgb = seabed;
    } else if (t < 0.03) {
        rgb = sand;
    } else if (t < 0.08) {
        rgb = mix(sand, grass, clamp((t - 0.03) / 0.05, 0.0, 1.0));
    } else if (t < 0.45) {
        rgb = mix(grass, forest, clamp((t - 0.08) / 0.37, 0.0, 1.0));
    } else if (t < 0.7) {
        rgb = mix(forest, rock, clamp((t - 0.45) / 0.25, 0.0, 1.0));
    } else if (t < 0.85) {
        rgb = rock;
    } else {
        rgb = mix(rock, snow, clamp((t - 0.85) / 0.05, 0.0, 1.0));
    }
    if (t >= 0.03) {
        rgb = mix(rgb, rock, clamp((0.6 - up) / 0.15, 0.0, 1.0));
    }
    return pow(rgb, vec3<f32>(2.2));
}

@fragment
fn fragment(in: VertexOutput, @builtin(front_facing) is_front: bool) -> FragmentOutput {
    var pbr_input = pbr_input_from_standard_material(in, is_front);
    if (terrain.map.w > 0.5) {
        let s = splat(in.world_position.xyz, normalize(in.world_normal));
        pbr_input.material.base_color = vec4<f32>(s.rgb, 1.0);
        pbr_input.material.perceptual_roughness = s.a;
    } else {
        pbr_input.material.base_color = vec4<f32>(plain_color(in.world_position.y, normalize(in.world_normal).y), 1.0);
    }
    pbr_input.material.base_color = alpha_discard(pbr_input.material, pbr_input.material.base_color);

#ifdef PREPASS_PIPELINE
    let out = deferred_output(in, pbr_input);
#else
    var out: FragmentOutput;
    out.color = apply_pbr_lighting(pbr_input);
    out.color = main_pass_post_lighting_processing(pbr_input, out.color);
    // The data overlay, over the final colour.
    let opacity = terrain.size.z;
    if (opacity > 0.0) {
        let cell = max(terrain.map.z, 1e-6);
        let t = in.world_position.xz / cell / (max(terrain.size.xy, vec2<f32>(2.0)) - 1.0);
        let o = textureSample(overlay_texture, overlay_sampler, node_uv(t, textureDimensions(overlay_texture)));
        out.color = vec4<f32>(mix(out.color.rgb, o.rgb, clamp(o.a * opacity, 0.0, 1.0)), out.color.a);
    }
#endif
    return out;
}
