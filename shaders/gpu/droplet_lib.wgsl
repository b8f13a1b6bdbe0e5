// Helpers of the GPU droplets (appended to droplet.wgsl by src/gpu/droplet.rs, which declares
// the `Params` block `P`, the bindings and the book slots these use): 64-bit integers as
// vec2<u32>(lo, hi), SplitMix64 with the CPU's streams, and the map geometry of particles::Geom.

// ---------------------------------------------------------------- 64-bit integer helpers

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn is_zero64(a: vec2<u32>) -> bool {
    return a.x == 0u && a.y == 0u;
}

// Unsigned a < b.
fn ult64(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

// Signed a < b.
fn slt64(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}

fn min_u64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return select(b, a, ult64(a, b));
}

// Unsigned value as f32 (rounded).
fn u64_f32(a: vec2<u32>) -> f32 {
    return f32(a.y) * TWO32 + f32(a.x);
}

// Signed value as f32 (rounded).
fn i64_f32(a: vec2<u32>) -> f32 {
    if (bitcast<i32>(a.y) < 0) {
        return -u64_f32(sub64(vec2<u32>(0u, 0u), a));
    }
    return u64_f32(a);
}

// A non-negative count held in an f32 as a u64, rounded to nearest; NaN/negative → 0, capped
// below 2^56 (no amount of a sane run comes near; see the overflow note in droplet.rs).
fn f32_u64(q0: f32) -> vec2<u32> {
    if (!(q0 >= 0.5)) {
        return vec2<u32>(0u, 0u);
    }
    let q = min(q0, 7.2057594e16);
    if (q < 4294967040.0) {
        return vec2<u32>(u32(floor(q + 0.5)), 0u);
    }
    // Here q ≥ 2^31 is an integer; the split is exact (hi < 2^24).
    let hi = floor(q / TWO32);
    return vec2<u32>(u32(q - hi * TWO32), u32(hi));
}

// Atomic 64-bit add: the low word's wrap is carried into the high word. Each add that wraps
// the low word carries exactly once, so the final (lo, hi) is the exact sum in any order.
fn acc_add(i: u32, v: vec2<u32>) {
    if (is_zero64(v)) {
        return;
    }
    let old = atomicAdd(&acc[i], v.x);
    let hi = v.y + select(0u, 1u, old + v.x < old);
    if (hi != 0u) {
        atomicAdd(&acc[i + 1u], hi);
    }
}

fn flow_add(i: u32, v: vec2<u32>) {
    if (is_zero64(v)) {
        return;
    }
    let old = atomicAdd(&flow[i], v.x);
    let hi = v.y + select(0u, 1u, old + v.x < old);
    if (hi != 0u) {
        atomicAdd(&flow[i + 1u], hi);
    }
}

fn book_add(i: u32, v: vec2<u32>) {
    if (is_zero64(v)) {
        return;
    }
    let old = atomicAdd(&books[i], v.x);
    let hi = v.y + select(0u, 1u, old + v.x < old);
    if (hi != 0u) {
        atomicAdd(&books[i + 1u], hi);
    }
}

// ---------------------------------------------------------------- SplitMix64 (same stream as the CPU)

// Full 32×32 → 64-bit product from 16-bit halves.
fn mul32(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = p01 + (p00 >> 16u);
    let mid2 = p10 + (mid & 0xffffu);
    return vec2<u32>((mid2 << 16u) | (p00 & 0xffffu), p11 + (mid >> 16u) + (mid2 >> 16u));
}

// Low 64 bits of a 64×64 product.
fn mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let p = mul32(a.x, b.x);
    return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}

fn xorshr64(a: vec2<u32>, n: u32) -> vec2<u32> {
    return a ^ vec2<u32>((a.x >> n) | (a.y << (32u - n)), a.y >> n);
}

fn mix64(z0: vec2<u32>) -> vec2<u32> {
    var z = mul64(xorshr64(z0, 30u), vec2<u32>(0x1ce4e5b9u, 0xbf58476du));
    z = mul64(xorshr64(z, 27u), vec2<u32>(0x133111ebu, 0x94d049bbu));
    return xorshr64(z, 31u);
}

// SplitMix64::stream(seed, index).
fn rng_stream(seed: vec2<u32>, index: vec2<u32>) -> vec2<u32> {
    return mix64(seed ^ mix64(add64(index, vec2<u32>(0xd9b4e019u, 0x632be59bu))));
}

var<private> rng: vec2<u32>;

fn next_f32() -> f32 {
    rng = add64(rng, vec2<u32>(0x7f4a7c15u, 0x9e3779b9u));
    let z = mix64(rng);
    return f32(z.y >> 8u) * (1.0 / 16777216.0);
}

// Uniform unit vector by rejection (as particles::random_unit; bounded, then a fixed fallback).
fn random_unit() -> vec2<f32> {
    for (var k = 0; k < 256; k++) {
        let a = next_f32() * 2.0 - 1.0;
        let b = next_f32() * 2.0 - 1.0;
        let l2 = a * a + b * b;
        if (l2 > 1e-4 && l2 <= 1.0) {
            let l = sqrt(l2);
            return vec2<f32>(a / l, b / l);
        }
    }
    return vec2<f32>(1.0, 0.0);
}

// ---------------------------------------------------------------- geometry (as particles::Geom)

struct AxisCell {
    i0: u32,
    i1: u32,
    f: f32,
}

fn axis_cell(p: f32, n: u32, wrap: bool) -> AxisCell {
    var c: AxisCell;
    if (wrap) {
        c.i0 = min(u32(max(p, 0.0)), n - 1u);
        c.i1 = select(c.i0 + 1u, 0u, c.i0 + 1u == n);
    } else {
        c.i0 = min(u32(max(p, 0.0)), n - 2u);
        c.i1 = min(c.i0 + 1u, n - 1u);
    }
    c.f = clamp(p - f32(c.i0), 0.0, 1.0);
    return c;
}

struct Cell {
    i00: u32,
    i10: u32,
    i01: u32,
    i11: u32,
    u: f32,
    v: f32,
}

fn cell_at(x: f32, y: f32) -> Cell {
    let cx = axis_cell(x, P.w, P.wrap_x != 0u);
    let cy = axis_cell(y, P.h, P.wrap_y != 0u);
    var c: Cell;
    c.i00 = cy.i0 * P.w + cx.i0;
    c.i10 = cy.i0 * P.w + cx.i1;
    c.i01 = cy.i1 * P.w + cx.i0;
    c.i11 = cy.i1 * P.w + cx.i1;
    c.u = cx.f;
    c.v = cy.f;
    return c;
}

fn bilinear(c: Cell) -> f32 {
    let u = c.u;
    let v = c.v;
    return hf[c.i00] * (1.0 - u) * (1.0 - v) + hf[c.i10] * u * (1.0 - v) + hf[c.i01] * (1.0 - u) * v + hf[c.i11] * u * v;
}

fn nearest(x: f32, y: f32) -> u32 {
    var xi = u32(x + 0.5);
    var yi = u32(y + 0.5);
    if (xi >= P.w) {
        xi = select(P.w - 1u, 0u, P.wrap_x != 0u);
    }
    if (yi >= P.h) {
        yi = select(P.h - 1u, 0u, P.wrap_y != 0u);
    }
    return yi * P.w + xi;
}

// p mod span in [0, span).
fn wrap_into(p: f32, span: f32) -> f32 {
    if (p >= 0.0 && p < span) {
        return p;
    }
    let r = p - span * floor(p / span);
    return select(0.0, r, r >= 0.0 && r < span);
}

// One axis of a move: x = new position, y = 1 if it bounced, z = 1 if it left through a drain.
fn move_axis(p: f32, span: f32, wrap: bool, low_drain: bool, high_drain: bool) -> vec3<f32> {
    if (wrap) {
        return vec3<f32>(wrap_into(p, span), 0.0, 0.0);
    }
    if (p < 0.0) {
        if (low_drain) {
            return vec3<f32>(0.0, 0.0, 1.0);
        }
        return vec3<f32>(clamp(-p, 0.0, span), 1.0, 0.0);
    }
    if (p > span) {
        if (high_drain) {
            return vec3<f32>(0.0, 0.0, 1.0);
        }
        return vec3<f32>(clamp(2.0 * span - p, 0.0, span), 1.0, 0.0);
    }
    if (p != p) {
        return vec3<f32>(0.0, 0.0, 1.0);
    }
    return vec3<f32>(p, 0.0, 0.0);
}

// Node (x, y) by signed coordinates, wrapped on wrapped axes; -1 outside the map.
fn node(x: i32, y: i32) -> i32 {
    let w = i32(P.w);
    let h = i32(P.h);
    var xx = x;
    var yy = y;
    if (P.wrap_x != 0u) {
        xx = ((x % w) + w) % w;
    } else if (x < 0 || x >= w) {
        return -1;
    }
    if (P.wrap_y != 0u) {
        yy = ((y % h) + h) % h;
    } else if (y < 0 || y >= h) {
        return -1;
    }
    return yy * w + xx;
}
