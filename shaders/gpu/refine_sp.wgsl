// The stream-power detail pass of a build that erodes on its way up, on the GPU
// (src/gpu/refine.rs; the CPU reference and the equations are
// src/core/erosion/stream_power/refine.rs). Every kernel is a stencil that gathers from the
// heights of the step before and writes only its own node (or, in the diffusion, its own line),
// so the result does not depend on thread order.
//
// One step:  receivers → sweep (drainage, one node further) → incise (+ deposition, uplift) →
// diffusion along rows → diffusion along columns.
//
// Ping-pong pairs (`*_src` → `*_dst`): the pass binds them in one order (group "0") or swapped
// (group "1") and tracks where the current values are.

struct Params {
    w: u32,
    h: u32,
    flow_p: u32,     // the pass's MFD exponent p, a whole number in [1, 8]
    linear: u32,     // 1: n = 1 (closed-form incision), 0: Newton
    dx: f32,         // cell size Δx (m)
    dx_diag: f32,    // √2·Δx
    inv_dx: f32,     // 1/Δx
    inv_dx_diag: f32,// 1/(√2·Δx)
    cell2: f32,      // Δx², the area a node adds (m²)
    k_dt: f32,       // K·strength·Δt
    m: f32,          // area exponent
    n: f32,          // slope exponent
    a_scale: f32,    // 2^−40: areas are raised as pow_unit(A·2^−40, m)·2^(40m)
    a_back: f32,     // 2^(40m)
    sea: f32,        // sea level, −3.4e38 without a sea
    dt: f32,         // Δt (years)
    r_diff: f32,     // κ·Δt/Δx² of the implicit diffusion step; 0: no diffusion
    g_dep: f32,      // the deposition coefficient G; 0: no deposition
    _pad1: f32,
    _pad2: f32,
}

const OUTLET: u32 = 1u; // a drain edge or the sea in the level's input: takes water, gives none
const SEA_IN: u32 = 2u; // at or below the sea in the level's input: counts at the sea surface

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> h_src: array<f32>;
@group(0) @binding(2) var<storage, read_write> h_dst: array<f32>;
@group(0) @binding(3) var<storage, read_write> a_src: array<f32>;
@group(0) @binding(4) var<storage, read_write> a_dst: array<f32>;
// 1 / the steepest slope (0: no lower neighbour); scratch of the diffusion's line solves, which
// run after the step's last reader of it.
@group(0) @binding(5) var<storage, read_write> steep: array<f32>;
// 1 / the sum of the MFD weights of the lower neighbours; scratch of the diffusion's line solves.
@group(0) @binding(6) var<storage, read_write> norm: array<f32>;
// Per node, fixed for the level: flags, hardness c, the uplift rate U (m/yr).
@group(0) @binding(7) var<storage, read_write> flags: array<u32>;
@group(0) @binding(8) var<storage, read_write> hard: array<f32>;
@group(0) @binding(9) var<storage, read_write> up: array<f32>;
// The sediment each node passed on in the step before (read) and passes on in this one
// (written), m³; a ping-pong pair that swaps with the heights.
@group(0) @binding(10) var<storage, read_write> qs_src: array<f32>;
@group(0) @binding(11) var<storage, read_write> qs_dst: array<f32>;

// D8 offsets in the CPU pass's order.
const NX = array<i32, 8>(-1, 0, 1, -1, 1, -1, 0, 1);
const NY = array<i32, 8>(-1, -1, -1, 0, 0, 1, 1, 1);
const DIAG = array<bool, 8>(true, false, true, false, false, true, false, true);

// Neighbour k of (x, y), or −1 off the map (the pass takes wrap edges as walls).
fn nb(x: i32, y: i32, k: u32) -> i32 {
    let nx = x + NX[k];
    let ny = y + NY[k];
    if (nx < 0 || ny < 0 || nx >= i32(P.w) || ny >= i32(P.h)) { return -1; }
    return ny * i32(P.w) + nx;
}

// x^p for the pass's whole exponent p, by the CPU's products.
fn ipow(x: f32, p: u32) -> f32 {
    let x2 = x * x;
    var r = (x2 * x2) * (x2 * x2);
    switch p {
        case 1u: { r = x; }
        case 2u: { r = x2; }
        case 3u: { r = x2 * x; }
        case 4u: { r = x2 * x2; }
        case 5u: { r = x2 * x2 * x; }
        case 6u: { r = x2 * x2 * x2; }
        case 7u: { r = x2 * x2 * x2 * x; }
        default: {}
    }
    return r;
}

// x^p for x ∈ (0, 1], the CPU's `pow_unit`: 2^(p·log₂ x) with the same polynomials, so A^m
// has the CPU's bits where the GPU does not fuse multiply-adds.
fn pow_unit(x0: f32, p: f32) -> f32 {
    let x = max(x0, 1.17549435e-38);
    let b = bitcast<u32>(x);
    let e = i32((b >> 23u) & 0xffu) - 127;
    let t = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u) - 1.0;
    let l = t * (1.4418798 + t * (-0.7088639 + t * (0.415241 + t * (-0.1935104 + t * 0.045265505))));
    let y = max(p * (f32(e) + l), -127.0);
    let fi = i32(floor(y));
    let f = y - f32(fi);
    let q = 1.0 + f * (0.6931546 + f * (0.2401408 + f * (0.05586326 + f * (0.008946225 + f * 0.0018951086))));
    return q * bitcast<f32>(u32(fi + 127) << 23u);
}

// Step 1: the steepest receiver's inverse slope and the MFD normaliser of the lower neighbours.
@compute @workgroup_size(16, 16)
fn receivers(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let x = i32(gid.x);
    let y = i32(gid.y);
    let i = gid.y * P.w + gid.x;
    steep[i] = 0.0;
    norm[i] = 0.0;
    if ((flags[i] & OUTLET) != 0u) { return; }
    let hi = h_src[i];
    var slope: array<f32, 8>;
    var best = 0.0;
    for (var k = 0u; k < 8u; k = k + 1u) {
        slope[k] = 0.0;
        let j = nb(x, y, k);
        if (j < 0) { continue; }
        let s = (hi - h_src[j]) * select(P.inv_dx, P.inv_dx_diag, DIAG[k]);
        slope[k] = s;
        if (s > best) { best = s; }
    }
    if (!(best > 0.0)) { return; }
    let inv = 1.0 / best;
    var sum = 0.0;
    for (var k = 0u; k < 8u; k = k + 1u) {
        if (slope[k] > 0.0) { sum = sum + ipow(slope[k] * inv, P.flow_p); }
    }
    steep[i] = inv;
    norm[i] = 1.0 / sum;
}

// The share w_{j→i} of its flow that neighbour j (direction k) sends node i at height hi, or
// −1 when j is not a donor of i (off the map, not higher, or with no lower neighbour): the CPU
// pass's `Donors`. The drainage sweep and the deposition's load gather through it.
fn donor_share(hi: f32, j: i32, k: u32) -> f32 {
    if (j < 0) { return -1.0; }
    let nj = norm[j];
    let s = (h_src[j] - hi) * select(P.inv_dx, P.inv_dx_diag, DIAG[k]);
    if (nj > 0.0 && s > 0.0) { return ipow(s * steep[j], P.flow_p) * nj; }
    return -1.0;
}

// Step 2: one sweep of the drainage, A'_i = Δx² + Σ_{j higher} w_{j→i}·A_j.
@compute @workgroup_size(16, 16)
fn sweep(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let x = i32(gid.x);
    let y = i32(gid.y);
    let i = gid.y * P.w + gid.x;
    let hi = h_src[i];
    var a = P.cell2;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        let wj = donor_share(hi, j, k);
        if (wj >= 0.0) { a = a + wj * a_src[j]; }
    }
    a_dst[i] = a;
}

// `solve_incision` (n ≠ 1) is in incision.wgsl.

// Step 4, deposition at node i incised to `new_h`: the load t it takes (its donors' of the step
// before along the drainage's weights, plus its own incision), the share G·Δx²/A of it that
// settles, never above its lowest donor; what it passes on goes to qs_dst. Returns the height.
fn deposit(x: i32, y: i32, i: u32, new_h: f32, drains: bool) -> f32 {
    let hi = h_src[i];
    var t = max(hi - new_h, 0.0) * P.cell2;
    var lowest = 3.4e38;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        let wj = donor_share(hi, j, k);
        if (wj >= 0.0) {
            t = t + wj * qs_src[j];
            lowest = min(lowest, h_src[j]);
        }
    }
    var q = 0.0;
    if (drains) { q = t / (1.0 + P.g_dep * P.cell2 / a_src[i]); }
    let room = max(lowest - new_h, 0.0);
    let d = min((t - q) / P.cell2, room);
    qs_dst[i] = t - d * P.cell2;
    return new_h + d;
}

// Steps 3 and 4: incision against the flow-weighted receiver's height of the step before,
// implicit, deposition, then uplift. Reads h_src, a_src (this step's drainage) and qs_src,
// writes h_dst and qs_dst.
@compute @workgroup_size(16, 16)
fn incise(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let x = i32(gid.x);
    let y = i32(gid.y);
    let i = gid.y * P.w + gid.x;
    let hi = h_src[i];
    if ((flags[i] & OUTLET) != 0u) {
        h_dst[i] = hi; // and passes no load on: its qs_dst stays 0
        return;
    }
    let inv_s = steep[i];
    var new_h = hi;
    var drains = false;
    if (inv_s > 0.0) {
        var sw = 0.0;
        var shr = 0.0;
        var sd = 0.0;
        for (var k = 0u; k < 8u; k = k + 1u) {
            let j = nb(x, y, k);
            if (j < 0) { continue; }
            var hj = h_src[j];
            if ((flags[j] & SEA_IN) != 0u) { hj = max(hj, P.sea); }
            let dk = select(P.dx, P.dx_diag, DIAG[k]);
            let s = (hi - hj) / dk;
            if (s > 0.0) {
                let wk = ipow(s * inv_s, P.flow_p);
                sw = sw + wk;
                shr = shr + wk * hj;
                sd = sd + wk * dk;
            }
        }
        if (sw > 0.0) {
            drains = true;
            let hr = shr / sw;
            let dr = sd / sw;
            let am = pow_unit(min(a_src[i] * P.a_scale, 1.0), P.m) * P.a_back;
            let d0 = hi - hr;
            if (P.linear != 0u) {
                let f = P.k_dt * hard[i] * am / dr;
                if (f > 0.0 && f < 3.4e38 && d0 > 0.0) { new_h = clamp(hr + d0 / (1.0 + f), hr, hi); }
            } else {
                let f = P.k_dt * hard[i] * am / pow(dr, P.n);
                if (f > 0.0 && f < 3.4e38 && d0 > 0.0) { new_h = clamp(hr + solve_incision(d0, f, P.n), hr, hi); }
            }
        }
    }
    if (P.g_dep > 0.0) { new_h = deposit(x, y, i, new_h, drains); }
    h_dst[i] = new_h + up[i] * P.dt;
}

// Step 4: one backward-Euler diffusion step split by direction (the CPU's LOD splitting):
// each line is solved in 64-node segments joined through their separators (thomas_split.wgsl),
// in place on h_src, with a = r·2c_a c_b/(c_a + c_b). Outlets are fixed values, a sea node at
// the sea surface max(h, sea) while the line is solved (its own height is kept). The split
// solve's four floats per node are kept in `steep`, `norm`, `h_dst` and `a_dst`: the step's
// incision and sweep have written the current heights and drainage to the other buffers of
// those pairs, and the next step's sweep and incision overwrite these before anything reads
// them (the sediment's pair cannot serve: it is one node long without deposition, and an outlet
// relies on its load staying 0). Its hooks:

fn line_rhs(i: u32, dir: u32) -> f32 { return h_src[i]; }

fn line_fixed(i: u32) -> bool { return (flags[i] & OUTLET) != 0u; }

fn line_held(i: u32, v: f32) -> f32 { return select(v, max(v, P.sea), (flags[i] & SEA_IN) != 0u); }

fn line_face(a: u32, b: u32) -> f32 {
    let ca = hard[a];
    let cb = hard[b];
    let s = ca + cb;
    return P.r_diff * select(0.0, 2.0 * ca * cb / s, s > 0.0);
}

fn split_keep(i: u32, v: vec4<f32>) {
    steep[i] = v.x;
    norm[i] = v.y;
    h_dst[i] = v.z;
    a_dst[i] = v.w;
}

fn split_kept(i: u32) -> vec4<f32> { return vec4<f32>(steep[i], norm[i], h_dst[i], a_dst[i]); }

fn line_write(i: u32, v: f32, dir: u32) {
    // Fixed nodes keep their height.
    if (!line_fixed(i) && abs(v) < 3.4e38) { h_src[i] = v; }
}

// Each direction in thomas_split.wgsl's three steps: segments (x: the line, y: its segment),
// separators (x: the line), then every node (the map's 16×16 tiles).
@compute @workgroup_size(64)
fn rows_segments(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.h) { return; }
    split_segment(gid.x * P.w, 1u, P.w, gid.y, 0u);
}

@compute @workgroup_size(64)
fn rows_separators(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.h) { return; }
    split_separators(gid.x * P.w, 1u, P.w, 0u);
}

@compute @workgroup_size(16, 16)
fn rows_fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.y >= P.h) { return; }
    split_fill(gid.y * P.w, 1u, P.w, gid.x, 0u);
}

@compute @workgroup_size(64)
fn cols_segments(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w) { return; }
    split_segment(gid.x, P.w, P.h, gid.y, 0u);
}

@compute @workgroup_size(64)
fn cols_separators(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w) { return; }
    split_separators(gid.x, P.w, P.h, 0u);
}

@compute @workgroup_size(16, 16)
fn cols_fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w) { return; }
    split_fill(gid.x, P.w, P.h, gid.y, 0u);
}
