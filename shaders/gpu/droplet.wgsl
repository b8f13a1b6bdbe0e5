// Particle (droplet) erosion on the GPU — SPEC §2a, seed 000 (after H. T. Beyer 2015).
// Host side and the full description: src/gpu/droplet.rs. The CPU model
// (src/core/erosion/droplet.rs) is the reference; this kernel follows its steps 1–7 line by line.
//
// The droplets of a batch advance in lockstep, one step per dispatch pair:
//   `walk`  — one invocation per droplet: one step (spawning it on the first), reading the f32
//             heights `hf` as they were after the previous step and adding what it erodes and
//             deposits to per-node 64-bit fixed-point accumulators with integer atomics;
//   `apply` — one invocation per droplet again: every node the droplet's step touched is claimed
//             with atomicExchange (one claimer per node and step), and the claimer folds the
//             node's accumulated change into the fixed-point heights `hq` (exact integers), holds
//             the min-height guard, refreshes `hf` and the f32 erosion/deposition maps, and clears
//             the accumulators. Who claims a node does not matter: the whole sum is applied.
// Integer addition is associative, so the result never depends on the order threads run in.
//
// 64-bit integers are vec2<u32>(lo, hi), two's complement where signed.

struct Params {
    w: u32,
    h: u32,
    wrap_x: u32,
    wrap_y: u32,
    // 1 = drain, 0 = wall (reflect); ignored on a wrapped axis.
    drain_left: u32,
    drain_right: u32,
    drain_top: u32,
    drain_bottom: u32,
    span_x: f32,
    span_y: f32,
    inertia: f32,
    min_slope: f32,
    capacity: f32,
    deposition: f32,
    erosion: f32,
    gravity: f32,
    keep_water: f32,
    min_water: f32,
    initial_water: f32,
    initial_speed: f32,
    max_life: u32,
    // Erosion floor (f32 heights) and the same in height units (i64 lo, hi); `guard` = 0: none.
    floor: f32,
    guard: u32,
    has_hard: u32,
    floor_lo: u32,
    floor_hi: u32,
    // Height unit = 2^k metres (exact power of two): `inv_unit` = 1/unit, `unit`.
    inv_unit: f32,
    unit: f32,
    // Water unit of the flow-volume map.
    inv_wunit: f32,
    wunit: f32,
    seed_lo: u32,
    seed_hi: u32,
    // Index of the batch's first droplet (u64) and the number of droplets in it.
    first_lo: u32,
    first_hi: u32,
    count: u32,
    // Brush: ceil(radius), and taps per sub-cell variant (16 variants, zero-weight padded).
    reach: u32,
    taps: u32,
    // Threads per row of the 2-D dispatch grid (workgroups in x × workgroup size).
    row: u32,
    // Claim stamp of the batch's step 0 (step j claims with stamp_base + j).
    stamp_base: u32,
    _pad: u32,
}

// One droplet between two steps (80 bytes).
struct Drop {
    x: f32,
    y: f32,
    dx: f32,
    dy: f32,
    speed: f32,
    water: f32,
    // Carried sediment, height units (u64).
    sed: vec2<u32>,
    // 0 = not spawned yet, 1 = alive, 2 = ended.
    status: u32,
    life: u32,
    rng: vec2<u32>,
    // What the last step changed, for `apply`: bit 0 = erosion brush at (ax, ay), bit 1 = deposit
    // on the cell of (ax, ay), bit 2 = deposit on the cell of (x, y); `tick` = the step's index.
    act: u32,
    ax: f32,
    ay: f32,
    tick: u32,
    // Books of this droplet so far (u64 height units).
    eroded: vec2<u32>,
    deposited: vec2<u32>,
}

@group(0) @binding(0) var<uniform> P: Params;
// Heights (f32 view) after the previous step; `apply` refreshes the nodes it folds.
@group(0) @binding(1) var<storage, read_write> hf: array<f32>;
// Erodibility per node (only read when P.has_hard = 1; a 1-element dummy otherwise).
@group(0) @binding(2) var<storage, read> hard: array<f32>;
// Brush taps: 16 variants × P.taps of (dx, dy, weight, 0).
@group(0) @binding(3) var<storage, read> brush: array<vec4<f32>>;
// Per-node change of the current step, 4 words a node: eroded (lo, hi), deposited (lo, hi), u64
// height units; cleared by `apply`.
@group(0) @binding(4) var<storage, read_write> acc: array<atomic<u32>>;
// Run totals (u64 each): eroded, deposited, lost at the border, lifted by the guard, droplets ended.
@group(0) @binding(5) var<storage, read_write> books: array<atomic<u32>>;
// Fixed-point heights, i64 in height units: the authoritative terrain.
@group(0) @binding(6) var<storage, read_write> hq: array<vec2<u32>>;
// Per-node f32 totals of the run: eroded, deposited (m).
@group(0) @binding(7) var<storage, read_write> maps: array<vec2<f32>>;
// Per-node run totals, 4 words a node: visits (lo, hi), water volume (lo, hi) in water units.
@group(0) @binding(8) var<storage, read_write> flow: array<atomic<u32>>;
// The batch's droplets.
@group(0) @binding(9) var<storage, read_write> drops: array<Drop>;
// Per node: stamp of the last step that claimed it in `apply`.
@group(0) @binding(10) var<storage, read_write> claim: array<atomic<u32>>;

const ACC_ERO: u32 = 0u;
const ACC_DEP: u32 = 2u;
const BOOK_ERO: u32 = 0u;
const BOOK_DEP: u32 = 2u;
const BOOK_LOST: u32 = 4u;
const BOOK_LIFT: u32 = 6u;
const BOOK_ENDED: u32 = 8u;
const TWO32: f32 = 4294967296.0;

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

// ---------------------------------------------------------------- erosion and deposition

// The brush of the sub-cell of (x, y): base index of its taps, its base node, and the factor that
// renormalises it where a map edge clips it (1 inside).
struct Brush {
    base: u32,
    bx: i32,
    by: i32,
    norm: f32,
}

fn brush_at(x: f32, y: f32) -> Brush {
    let bx = min(u32(max(x, 0.0)), P.w - 1u);
    let by = min(u32(max(y, 0.0)), P.h - 1u);
    let qx = min(u32(max((x - f32(bx)) * 4.0, 0.0)), 3u);
    let qy = min(u32(max((y - f32(by)) * 4.0, 0.0)), 3u);
    var b: Brush;
    b.base = (qy * 4u + qx) * P.taps;
    b.bx = i32(bx);
    b.by = i32(by);
    b.norm = 1.0;
    let r = P.reach;
    let inside_x = P.wrap_x != 0u || (bx >= r && bx + r + 1u < P.w);
    let inside_y = P.wrap_y != 0u || (by >= r && by + r + 1u < P.h);
    if (!(inside_x && inside_y)) {
        // Clipped by a map edge: renormalise over the in-map nodes.
        var sum = 0.0;
        for (var t = 0u; t < P.taps; t++) {
            let tap = brush[b.base + t];
            if (tap.z > 0.0 && node(b.bx + i32(tap.x), b.by + i32(tap.y)) >= 0) {
                sum += tap.z;
            }
        }
        b.norm = select(0.0, 1.0 / sum, sum > 0.0);
    }
    return b;
}

// Erodes `amount` with the brush of (x, y); returns the units taken (exactly what the nodes'
// accumulators received).
fn erode(x: f32, y: f32, amount: f32) -> vec2<u32> {
    let b = brush_at(x, y);
    let a = amount * b.norm;
    var got = vec2<u32>(0u, 0u);
    if (!(a > 0.0)) {
        return got;
    }
    for (var t = 0u; t < P.taps; t++) {
        let tap = brush[b.base + t];
        if (tap.z <= 0.0) {
            continue;
        }
        let ni = node(b.bx + i32(tap.x), b.by + i32(tap.y));
        if (ni < 0) {
            continue;
        }
        let i = u32(ni);
        var take = a * tap.z;
        if (P.has_hard != 0u) {
            take *= hard[i];
        }
        if (P.guard != 0u) {
            take = min(take, max(hf[i] - P.floor, 0.0));
        }
        let q = f32_u64(take * P.inv_unit);
        acc_add(i * 4u + ACC_ERO, q);
        got = add64(got, q);
    }
    return got;
}

// Adds `d` units bilinearly over the cell's four nodes: three get their rounded share, the node
// with the largest weight the exact remainder, so the four parts sum to `d`.
fn deposit(c: Cell, d: vec2<u32>) {
    if (is_zero64(d)) {
        return;
    }
    let u = c.u;
    let v = c.v;
    let ws = array<f32, 4>((1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v);
    let ids = array<u32, 4>(c.i00, c.i10, c.i01, c.i11);
    var big = 0u;
    for (var k = 1u; k < 4u; k++) {
        if (ws[k] > ws[big]) {
            big = k;
        }
    }
    let df = u64_f32(d);
    var rest = d;
    for (var k = 0u; k < 4u; k++) {
        if (k == big) {
            continue;
        }
        let part = min_u64(f32_u64(df * ws[k]), rest);
        rest = sub64(rest, part);
        acc_add(ids[k] * 4u + ACC_DEP, part);
    }
    acc_add(ids[big] * 4u + ACC_DEP, rest);
}

fn visit(i: u32, water: f32) {
    flow_add(i * 4u, vec2<u32>(1u, 0u));
    flow_add(i * 4u + 2u, f32_u64(water * P.inv_wunit));
}

// ---------------------------------------------------------------- one step of every droplet

@compute @workgroup_size(64)
fn walk(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.y * P.row + gid.x;
    if (k >= P.count) {
        return;
    }
    var s = drops[k];
    if (s.status == 2u) {
        if (s.act != 0u) {
            drops[k].act = 0u;
        }
        return;
    }
    if (s.status == 0u) {
        // Spawn (as DropletJob::spawn): two draws from the droplet's own stream, the edge rules.
        rng = rng_stream(vec2<u32>(P.seed_lo, P.seed_hi), add64(vec2<u32>(P.first_lo, P.first_hi), vec2<u32>(k, 0u)));
        let sx = next_f32() * P.span_x;
        let sy = next_f32() * P.span_y;
        s.x = move_axis(sx, P.span_x, P.wrap_x != 0u, false, false).x;
        s.y = move_axis(sy, P.span_y, P.wrap_y != 0u, false, false).x;
        s.dx = 0.0;
        s.dy = 0.0;
        s.speed = P.initial_speed;
        s.water = P.initial_water;
        s.sed = vec2<u32>(0u, 0u);
        s.status = 1u;
        s.life = 0u;
        s.eroded = vec2<u32>(0u, 0u);
        s.deposited = vec2<u32>(0u, 0u);
        visit(nearest(s.x, s.y), s.water);
    } else {
        rng = s.rng;
    }
    s.act = 0u;
    s.tick = s.life;
    s.ax = s.x;
    s.ay = s.y;
    var ended = false;
    var settle = false;
    var lost = vec2<u32>(0u, 0u);
    if (s.life >= P.max_life) {
        ended = true;
        settle = true;
    } else {
        // 1. Height and gradient at the old position.
        let c = cell_at(s.x, s.y);
        let h00 = hf[c.i00];
        let h10 = hf[c.i10];
        let h01 = hf[c.i01];
        let h11 = hf[c.i11];
        let u = c.u;
        let v = c.v;
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let h_old = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        // 2. New direction.
        var ndx = s.dx * P.inertia - gx * (1.0 - P.inertia);
        var ndy = s.dy * P.inertia - gy * (1.0 - P.inertia);
        let len = sqrt(ndx * ndx + ndy * ndy);
        if (len < 1e-6 || !(len <= 3.0e38)) {
            let r = random_unit();
            ndx = r.x;
            ndy = r.y;
        } else {
            ndx /= len;
            ndy /= len;
        }
        // 3. One cell along it; the edges decide what leaving means.
        let mx = move_axis(s.x + ndx, P.span_x, P.wrap_x != 0u, P.drain_left != 0u, P.drain_right != 0u);
        let my = move_axis(s.y + ndy, P.span_y, P.wrap_y != 0u, P.drain_top != 0u, P.drain_bottom != 0u);
        if (mx.z > 0.0 || my.z > 0.0) {
            // Left through a drain: the sediment leaves the map.
            lost = s.sed;
            s.sed = vec2<u32>(0u, 0u);
            ended = true;
        } else {
            if (mx.y > 0.0) {
                ndx = -ndx;
            }
            if (my.y > 0.0) {
                ndy = -ndy;
            }
            s.dx = ndx;
            s.dy = ndy;
            let nx = mx.x;
            let ny = my.x;
            // 4. Height difference.
            let dh = bilinear(cell_at(nx, ny)) - h_old;
            // 5./6. Deposit or erode at the old position.
            let sf = u64_f32(s.sed) * P.unit;
            if (dh > 0.0) {
                let a = min(sf, dh);
                if (a > 0.0) {
                    let d = min_u64(f32_u64(a * P.inv_unit), s.sed);
                    deposit(c, d);
                    s.deposited = add64(s.deposited, d);
                    s.sed = sub64(s.sed, d);
                    s.act |= 2u;
                }
            } else {
                let cap = min(max(-dh, P.min_slope) * s.speed * s.water * P.capacity, 1e30);
                if (sf > cap) {
                    let a = (sf - cap) * P.deposition;
                    if (a > 0.0) {
                        let d = min_u64(f32_u64(a * P.inv_unit), s.sed);
                        deposit(c, d);
                        s.deposited = add64(s.deposited, d);
                        s.sed = sub64(s.sed, d);
                        s.act |= 2u;
                    }
                } else {
                    let a = min((cap - sf) * P.erosion, -dh);
                    if (a > 0.0) {
                        let got = erode(s.x, s.y, a);
                        s.eroded = add64(s.eroded, got);
                        s.sed = add64(s.sed, got);
                        s.act |= 1u;
                    }
                }
            }
            // 7. Speed and water.
            s.speed = sqrt(clamp(s.speed * s.speed - dh * P.gravity, 0.0, 1e30));
            s.water *= P.keep_water;
            s.life += 1u;
            s.x = nx;
            s.y = ny;
            visit(nearest(nx, ny), s.water);
            if (s.water < P.min_water) {
                ended = true;
                settle = true;
            }
        }
    }
    if (ended) {
        // At the end of its life (max lifetime or dried up) a droplet drops what it carries where
        // it stands.
        if (settle && !is_zero64(s.sed)) {
            deposit(cell_at(s.x, s.y), s.sed);
            s.deposited = add64(s.deposited, s.sed);
            s.sed = vec2<u32>(0u, 0u);
            s.act |= 4u;
        }
        s.status = 2u;
        book_add(BOOK_ERO, s.eroded);
        book_add(BOOK_DEP, s.deposited);
        book_add(BOOK_LOST, lost);
        book_add(BOOK_ENDED, vec2<u32>(1u, 0u));
    }
    s.rng = rng;
    drops[k] = s;
}

// ---------------------------------------------------------------- folding a step into the terrain

// Folds node i's accumulated change into the terrain and clears it.
fn fold(i: u32) {
    let b = i * 4u;
    let e = vec2<u32>(atomicLoad(&acc[b + 0u]), atomicLoad(&acc[b + 1u]));
    let d = vec2<u32>(atomicLoad(&acc[b + 2u]), atomicLoad(&acc[b + 3u]));
    if (is_zero64(e) && is_zero64(d)) {
        return;
    }
    for (var k = 0u; k < 4u; k++) {
        atomicStore(&acc[b + k], 0u);
    }
    let old = hq[i];
    let free = sub64(add64(old, d), e);
    var nh = free;
    var lift = vec2<u32>(0u, 0u);
    if (P.guard != 0u && ult64(d, e)) {
        // Erosion never takes a node below the floor (or lowers one already below it). Each
        // droplet's guard saw the heights before this step, so droplets eroding one node in the
        // same step can overshoot together; the excess is put back and booked as `clamped`.
        let fl = vec2<u32>(P.floor_lo, P.floor_hi);
        let low = select(fl, old, slt64(old, fl));
        if (slt64(free, low)) {
            nh = low;
            lift = sub64(low, free);
            book_add(BOOK_LIFT, lift);
        }
    }
    hq[i] = nh;
    hf[i] = i64_f32(nh) * P.unit;
    var m = maps[i];
    m.x += u64_f32(e) * P.unit;
    m.y += u64_f32(add64(d, lift)) * P.unit;
    maps[i] = m;
}

// Claims node i for this step; the first claimer folds it.
fn claim_fold(i: u32, stamp: u32) {
    if (atomicExchange(&claim[i], stamp) != stamp) {
        fold(i);
    }
}

fn claim_cell(c: Cell, stamp: u32) {
    claim_fold(c.i00, stamp);
    claim_fold(c.i10, stamp);
    claim_fold(c.i01, stamp);
    claim_fold(c.i11, stamp);
}

@compute @workgroup_size(64)
fn apply(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.y * P.row + gid.x;
    if (k >= P.count) {
        return;
    }
    let s = drops[k];
    if (s.act == 0u) {
        return;
    }
    let stamp = P.stamp_base + s.tick;
    if ((s.act & 1u) != 0u) {
        let b = brush_at(s.ax, s.ay);
        for (var t = 0u; t < P.taps; t++) {
            let tap = brush[b.base + t];
            if (tap.z <= 0.0) {
                continue;
            }
            let ni = node(b.bx + i32(tap.x), b.by + i32(tap.y));
            if (ni >= 0) {
                claim_fold(u32(ni), stamp);
            }
        }
    }
    if ((s.act & 2u) != 0u) {
        claim_cell(cell_at(s.ax, s.ay), stamp);
    }
    if ((s.act & 4u) != 0u) {
        claim_cell(cell_at(s.x, s.y), stamp);
    }
}
