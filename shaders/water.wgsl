// Water: StandardMaterial PBR (sun, shadows, sky light, fog) with the colour, opacity and normal
// of water. One shader for two surfaces (`water.map.w`): the sea plane at sea level (0) and the
// pipe model's simulated water (1).
//
// The math is documented and unit-tested in src/editor/look/water.rs (`depth_mix`, `shore_wave`);
// keep the two in step. Inputs:
// - `shore_texture` (Rg32Float, one texel per node): r = signed distance to the shore in metres,
//   positive at sea, from jump flooding (src/core/jfa.rs) — the shore waves run down its
//   gradient; g = ground height (m), for the water depth under the sea plane;
// - with DEPTH_PREPASS (WaterParams::depth_prepass), the ground behind the water from the depth
//   prepass instead: exact optical path and vertical depth;
// - vertex colours of the pipe-water mesh: rg = water velocity (m/s), b = water depth (m).

#import bevy_pbr::{
    pbr_fragment::pbr_input_from_standard_material,
    forward_io::{VertexOutput, FragmentOutput},
    pbr_functions::{apply_pbr_lighting, main_pass_post_lighting_processing},
    mesh_view_bindings::{globals, view},
    view_transformations::{position_ndc_to_world, frag_coord_to_ndc},
}
#ifdef DEPTH_PREPASS
#import bevy_pbr::prepass_utils::prepass_depth
#endif
#import talus::noise::{value2, fbm2}

struct WaterUniform {
    // linear rgb of shallow water, clarity (0 ..= 1)
    shallow: vec4<f32>,
    // linear rgb of deep water, colour depth (m)
    deep: vec4<f32>,
    // linear rgb of foam, foam width (m; 0 = no foam)
    foam: vec4<f32>,
    // ripple strength, ripple wavelength (m), ripple speed (m/s), opacity depth (m)
    ripple: vec4<f32>,
    // shore wave length (m), speed (m/s), strength (0 = off), reach (m)
    waves: vec4<f32>,
    // map extent along x (m), along z (m), unused, surface kind (0 sea, 1 pipe water)
    map: vec4<f32>,
    // fresnel strength, roughness, opacity scale, sea level (m)
    misc: vec4<f32>,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(100) var<uniform> water: WaterUniform;
@group(#{MATERIAL_BIND_GROUP}) @binding(101) var shore_texture: texture_2d<f32>;

const TAU: f32 = 6.2831853;
const FAR: f32 = 1.0e4;
// Mean of the crest shape ((1 + cos φ) / 2)^4 over a cycle (`CREST_MEAN` in water.rs).
const CREST_MEAN: f32 = 0.2734375;

// Signed shore distance (m), its gradient (per m) and the ground height (m) at world xz,
// bilinear over the node texture. Outside the map the distance keeps growing with the distance
// from the map edge and the ground is the edge's.
fn shore_sample(xz: vec2<f32>) -> vec4<f32> {
    let dims = vec2<i32>(textureDimensions(shore_texture));
    let last = vec2<f32>(max(dims - vec2<i32>(1), vec2<i32>(1)));
    let cell = max(water.map.xy, vec2<f32>(1e-3)) / last;
    let g = xz / cell;
    let gc = clamp(g, vec2<f32>(0.0), vec2<f32>(dims - vec2<i32>(1)));
    let i0 = vec2<i32>(floor(gc));
    let i1 = min(i0 + vec2<i32>(1), dims - vec2<i32>(1));
    let f = gc - vec2<f32>(i0);
    let ta = textureLoad(shore_texture, i0, 0).rg;
    let tb = textureLoad(shore_texture, vec2<i32>(i1.x, i0.y), 0).rg;
    let tc = textureLoad(shore_texture, vec2<i32>(i0.x, i1.y), 0).rg;
    let td = textureLoad(shore_texture, i1, 0).rg;
    let a = ta.x;
    let b = tb.x;
    let c = tc.x;
    let d = td.x;
    let v = mix(mix(a, b, f.x), mix(c, d, f.x), f.y);
    let ground = mix(mix(ta.y, tb.y, f.x), mix(tc.y, td.y, f.x), f.y);
    let gx = mix(b - a, d - c, f.y) / cell.x;
    let gz = mix(c - a, d - b, f.x) / cell.y;
    let out = (g - gc) * cell;
    let outside = length(out);
    if (outside > 0.0) {
        return vec4<f32>(v + outside, out / outside, ground);
    }
    return vec4<f32>(v, gx, gz, ground);
}

// Crest height 0 ..= 1 of the shore waves and its derivative along d (see `shore_wave` in
// water.rs): w = ((1 + cos(k·d + ω·t)) / 2)^4 · fade(d).
fn shore_wave(d: f32, t: f32) -> vec2<f32> {
    let k = TAU / max(water.waves.x, 1e-3);
    let phase = k * d + k * water.waves.y * t;
    let c = 0.5 * (1.0 + cos(phase));
    let reach = max(water.waves.w, 1e-3);
    let fade = smoothstep(reach, 0.6 * reach, d) * smoothstep(-0.5, 0.5, d);
    let w = c * c * c * c * fade;
    let dw = 4.0 * c * c * c * (-0.5 * sin(phase) * k) * fade;
    return vec2<f32>(w, dw);
}

// Slope (dh/dx, dh/dz) of a few scrolling directional ripple octaves, normalised to ~1. Octaves
// shorter than ~3 pixels (`footprint` = metres per pixel) fade out, so the distant sea does not
// sparkle with aliased normals.
fn ripple_slope(p: vec2<f32>, t: f32, footprint: f32) -> vec2<f32> {
    var dirs = array<vec2<f32>, 5>(
        vec2<f32>(0.80, 0.60), vec2<f32>(-0.62, 0.78), vec2<f32>(0.95, -0.31),
        vec2<f32>(-0.42, -0.91), vec2<f32>(0.17, 0.98),
    );
    let l0 = max(water.ripple.y, 0.1);
    // A slow warp so the octaves do not read as a regular grid.
    let warp = vec2<f32>(value2(p / (4.0 * l0)), value2(p / (4.0 * l0) + vec2<f32>(17.3, 5.1))) - 0.5;
    let q = p + warp * 2.0 * l0;
    var s = vec2<f32>(0.0);
    var amp = 1.0;
    var len = l0;
    var total = 0.0;
    for (var i = 0; i < 5; i = i + 1) {
        let k = TAU / len;
        let omega = k * water.ripple.z * (1.0 + 0.35 * f32(i));
        let ph = dot(dirs[i], q) * k + omega * t + 1.7 * f32(i);
        let lod = 1.0 - smoothstep(len / 6.0, len / 3.0, footprint);
        s = s + dirs[i] * cos(ph) * amp * lod;
        total = total + amp;
        amp = amp * 0.62;
        len = len * 0.57;
    }
    // Plus the gradient of drifting value noise at the largest ripple scale: breaks the sines'
    // regularity into patches (central differences, half a noise cell apart).
    let nl = 0.7 * l0;
    let lodn = 1.0 - smoothstep(nl / 6.0, nl / 3.0, footprint);
    let np = p / nl + vec2<f32>(0.31, -0.17) * t * water.ripple.z / nl;
    let e = 0.5;
    let ng = vec2<f32>(fbm2(np + vec2<f32>(e, 0.0), 2) - fbm2(np - vec2<f32>(e, 0.0), 2), fbm2(np + vec2<f32>(0.0, e), 2) - fbm2(np - vec2<f32>(0.0, e), 2));
    return s / total * 0.7 + ng * 1.6 * lodn;
}

@fragment
fn fragment(in: VertexOutput, @builtin(front_facing) is_front: bool) -> FragmentOutput {
    var pbr_input = pbr_input_from_standard_material(in, is_front);
    let world = in.world_position.xyz;
    let xz = world.xz;
    let t = globals.time;
    let pipe = water.map.w > 0.5;

    let footprint = max(length(fwidth(xz)), 1e-4);
    let field = shore_sample(xz);
    // The sea plane draws nothing over land. Inside the map the terrain hides it there, except
    // where the view passes under a skirt that does not reach down to the sea (a map whose edge
    // stands above its sea level, such as a mountain tile); beyond the map's edge there is no
    // ground, and the shore field carried out from a land edge would draw a phantom coast. Both
    // showed as planes of foam specks. Inside, land is what lies further from the water than the
    // foam band and two of the field's cells (the band and the waterline are kept); beyond the
    // edge, where the ground carried out from it stands above the water.
    if (!pipe) {
        let beyond = any(xz < vec2<f32>(0.0)) || any(xz > water.map.xy);
        let dims = vec2<f32>(textureDimensions(shore_texture));
        let field_cell = max(water.map.x / max(dims.x - 1.0, 1.0), water.map.y / max(dims.y - 1.0, 1.0));
        let inland = field.x < -(water.foam.w + 2.0 * field_cell);
        if ((beyond && field.w >= world.y) || (!beyond && inland)) {
            discard;
        }
    }
    let v = normalize(view.world_position.xyz - world);
    // Water thickness: vertical depth and optical path through it.
    var vdepth = FAR;
#ifdef VERTEX_COLORS
    if (pipe) {
        vdepth = max(in.color.b, 0.0);
    }
#endif
    if (!pipe) {
        vdepth = max(world.y - field.w, 0.0);
    }
    var path = vdepth / max(abs(v.y), 0.08);
#ifdef DEPTH_PREPASS
    // The ground behind this fragment. Sample 0 of a multisampled prepass (MSAA): reading per
    // sample would run this shader for every sample.
    let raw = prepass_depth(in.position, 0u);
    if (raw > 0.0) {
        let ground = position_ndc_to_world(vec3<f32>(frag_coord_to_ndc(in.position).xy, raw));
        path = distance(ground, world);
        vdepth = max(world.y - ground.y, 0.0);
    } else {
        path = FAR;
        vdepth = FAR;
    }
#endif

    // Surface slope: ripples (+ shore waves on the sea, + the current on pipe water).
    var slope = ripple_slope(xz, t, footprint) * water.ripple.x;
    var foam = 0.0;
    var crest = 0.0;
    let n1 = fbm2(xz * 0.35 + vec2<f32>(t * 0.15, -t * 0.11), 3);
    if (!pipe) {
        if (water.waves.z > 0.0) {
            let s = field;
            let w = shore_wave(s.x, t);
            // Crests tilt the surface along the shore-distance gradient.
            let wave_lod = 1.0 - smoothstep(water.waves.x / 8.0, water.waves.x / 4.0, footprint);
            slope = slope + s.yz * w.y * water.waves.z * 0.25 * water.waves.x / TAU * wave_lod;
            // Crests finer than the pixels fade to their mean over a cycle (35/128 of the
            // envelope; `shore_wave_filtered` in water.rs), so a far coast shows a band of
            // breaking water instead of aliased stripes.
            let reach = max(water.waves.w, 1e-3);
            let envelope = smoothstep(reach, 0.6 * reach, s.x) * smoothstep(-0.5, 0.5, s.x);
            let crest_f = mix(CREST_MEAN * envelope, w.x, wave_lod);
            // Crests break into foam in the last part of their run.
            let breaking = smoothstep(0.45 * water.waves.w, 0.05 * water.waves.w, s.x);
            foam = foam + crest_f * water.waves.z * (0.5 + 1.0 * breaking);
            // Crests are thinner water toward the light: a brighter, greener face.
            crest = crest_f * water.waves.z;
        }
    } else {
#ifdef VERTEX_COLORS
        let vel = in.color.rg;
        let speed = length(vel);
        // Flow-map trick: two ripple phases advected along the current, cross-faded.
        let period = 2.0;
        let f0 = fract(t / period);
        let f1 = fract(t / period + 0.5);
        let a = ripple_slope(xz - vel * f0 * period, t, footprint);
        let b = ripple_slope(xz - vel * f1 * period + vec2<f32>(3.7, 1.3), t, footprint);
        let wgt = abs(1.0 - 2.0 * f0);
        slope = mix(b, a, wgt) * water.ripple.x * (1.0 + min(speed, 3.0));
        // White water where it runs fast.
        foam = foam + smoothstep(4.0, 12.0, speed) * 0.8;
#endif
    }
    // Foam along the waterline: on the sea a band `foam.w` metres wide measured horizontally from
    // the shore (`waterline_foam` in water.rs), its coverage kept when it is narrower than a
    // pixel; sheet flow on pipe water is shallow everywhere, so only its last few centimetres
    // (3 % of the width, as depth: 9 cm at the default) foam.
    let foam_width = water.foam.w;
    if (foam_width > 0.0) {
        var edge = 0.0;
        if (pipe) {
            edge = 1.0 - smoothstep(0.0, foam_width * 0.03, vdepth);
        } else {
            edge = (1.0 - smoothstep(0.0, max(foam_width, footprint), max(field.x, 0.0)))
                * min(foam_width / footprint, 1.0);
        }
        foam = foam + edge * 1.2;
        foam = smoothstep(0.45, 0.85, foam * (0.45 + 1.1 * n1));
    } else {
        foam = 0.0;
    }

    // The mesh normal (flat for the sea, the surface's for pipe water) tilted by the slopes.
    let n = normalize(normalize(in.world_normal) + vec3<f32>(-slope.x, 0.0, -slope.y));
    pbr_input.N = n;
    pbr_input.world_normal = n;

    // Depth colour and opacity (water.rs `depth_mix`), Fresnel (Schlick, F0 = 0.02).
    let tc = 1.0 - exp(-path / max(water.deep.w, 1e-3));
    var alpha = 1.0 - water.shallow.w * exp(-path / max(water.ripple.w, 1e-3));
    let cos_t = clamp(dot(n, v), 0.0, 1.0);
    let fresnel = (0.02 + 0.98 * pow(1.0 - cos_t, 5.0)) * water.misc.x;
    alpha = mix(alpha, 1.0, fresnel);
    var color = mix(water.shallow.rgb, water.deep.rgb, tc);
    color = mix(color, water.shallow.rgb * 1.2, 0.45 * crest);
    color = mix(color, water.foam.rgb, foam);
    alpha = mix(alpha, 1.0, foam) * water.misc.z;
    // Pipe water: fade out the last centimetres so its edge meets the ground softly.
    if (pipe) {
        alpha = alpha * smoothstep(0.0, 0.15, vdepth + 0.02);
    }

    pbr_input.material.base_color = vec4<f32>(color, clamp(alpha, 0.0, 1.0));
    pbr_input.material.perceptual_roughness = mix(water.misc.y, 0.85, foam);

    var out: FragmentOutput;
    out.color = apply_pbr_lighting(pbr_input);
    out.color = main_pass_post_lighting_processing(pbr_input, out.color);
    return out;
}
