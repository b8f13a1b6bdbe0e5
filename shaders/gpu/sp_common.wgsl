// The stream-power model on the GPU: the prelude every kernel of it is compiled with
// (src/gpu/stream_power.rs prepends it). One uniform block, one bind-group layout for all
// kernels, the D8 neighbourhood, and the books. The equations are in the module doc of
// src/gpu/stream_power.rs.
//
// Ping-pong pairs (`*_src` → `*_dst`): the job binds them in one order (group "0") or swapped
// (group "1"); an iterated kernel alternates the two, and every loop runs an even number of
// times, so after it the current values are back in the "0" buffer of the pair.

struct Params {
    w: u32,
    h: u32,
    // Workgroups along x and in total (the books are one slot per workgroup).
    groups_x: u32,
    groups: u32,
    // Effective edge modes: 0 wall, 1 drain, 2 wrap.
    edge_l: u32,
    edge_r: u32,
    edge_t: u32,
    edge_b: u32,
    // bit 0: D8 drainage area (else MFD), bit 1: a sea, bit 2: n = 1 (linear incision),
    // bit 3: lakes keep the sediment that reaches them.
    flags: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    kdt: f32,          // K·Δt·Δx^(2m): drainage area in nodes
    m: f32,            // area exponent
    n: f32,            // slope exponent
    mfd_p: f32,        // MFD exponent p
    inv_dn_card: f32,  // Δx^(−n)
    inv_dn_diag: f32,  // (√2·Δx)^(−n)
    inv_dx: f32,       // 1/Δx
    sea: f32,          // sea level (−3.4e38 without a sea)
    shelf: f32,        // sea − SEA_SHELF: the top of sea deposits
    r_diff: f32,       // κ·Δt/Δx² of the implicit diffusion step (with a wrap edge: of one explicit substep)
    eps_abs: f32,      // the fill's step over a flat: max(eps_abs, eps_rel·|W|)
    eps_rel: f32,
    lake_fill: f32,    // share α of its remaining depth under W a lake node may fill in a step
    _pad3: f32,
    _pad4: f32,
    _pad5: f32,
}

// Per node, fixed for the run: uplift Δt·U (m, 0 on outlets), erodibility c (hardness × sink
// mask), runoff weight (nodes of drainage area the node adds), flags.
struct NodeIn {
    up: f32,
    c: f32,
    runoff: f32,
    flags: u32,
}

// NodeIn.flags
const OUTLET: u32 = 1u;  // base level: drain edge, sea (in the input), sink
const SEA: u32 = 2u;     // at or below the sea in the input
const ANCHOR: u32 = 4u;  // the lowest node of a map without outlets: the fill's fixed point
const FAR_SEA: u32 = 8u; // a sea node more than SEA_SPREAD nodes from the land: nothing settles
// A sea node's distance to the land (bits 12..17, thirds of a cell, chamfer 3-4) and how many
// of its neighbours lie further out (bits 8..11): its load fans out to those.
fn seaward(f: u32) -> u32 { return (f >> 8u) & 15u; }
fn coast_dist(f: u32) -> u32 { return (f >> 12u) & 63u; }

// What the route kernel finds per node (and a few per-step values other kernels leave there,
// since `route` is no ping-pong pair and every kernel may read it at either parity).
struct Route {
    code: f32,      // rcv_h + 16·rcv_w + 256·carry, a small whole number
    _n: f32,        // (unused: the MFD shares are in the chain pair, sp_route.wgsl)
    room: f32,      // how much sediment the node may still take this step (m)
    w: f32,         // W of this step (the fill's result)
    dep: f32,       // sediment settled here this step, added to the height by `deposit`
    h0: f32,        // the height after uplift (the fill's floor)
    _a: f32,        // (sediment, in the sea) how many sea neighbours of the node still have room
    lost: f32,      // sediment that left the map here this step, booked as lost by `deposit`
}

// Route codes: receiver directions 0..7, or
const NONE: u32 = 8u;    // no receiver
const LOSE: u32 = 9u;    // (sediment) leaves the map here
const SPREAD: u32 = 10u; // (sediment, in the sea) shared equally among the seaward neighbours

const BIG: f32 = 3.0e38;
const WG: u32 = 16u;
const WG_N: u32 = 256u;
// Book slots (one double-float accumulator per slot and workgroup).
const SLOT_ERODED: u32 = 0u;
const SLOT_DEPOSITED: u32 = 1u;
const SLOT_LOST: u32 = 2u;
const SLOT_UPLIFT: u32 = 3u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> h_src: array<f32>;
@group(0) @binding(2) var<storage, read_write> h_dst: array<f32>;
// The depression-filled surface W (Planchon–Darboux with a small step over flats).
@group(0) @binding(3) var<storage, read_write> w_src: array<f32>;
@group(0) @binding(4) var<storage, read_write> w_dst: array<f32>;
// Drainage area, nodes.
@group(0) @binding(5) var<storage, read_write> a_src: array<f32>;
@group(0) @binding(6) var<storage, read_write> a_dst: array<f32>;
// Incision chain, as bits: (a, b, pointer, h0) with h'_i = a + b·h'_pointer (n = 1), or
// (iterate, F, receiver, h0) for n ≠ 1.
@group(0) @binding(7) var<storage, read_write> c_src: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read_write> c_dst: array<vec4<u32>>;
// Suspended sediment, metre·nodes.
@group(0) @binding(9) var<storage, read_write> s_src: array<f32>;
@group(0) @binding(10) var<storage, read_write> s_dst: array<f32>;
@group(0) @binding(11) var<storage, read_write> route: array<Route>;
@group(0) @binding(12) var<storage, read_write> nodes: array<NodeIn>;
// Per-node (eroded, deposited) totals.
@group(0) @binding(13) var<storage, read_write> maps: array<vec2<f32>>;
@group(0) @binding(14) var<storage, read_write> books: array<vec2<f32>>;
// The pointer-jumping rounds' control (sp_rounds.wgsl): [0] whether a node of the chain being
// solved will still change in the next round, [1] and [2] the rounds run after the first pair
// (the fill's tree, the incision), in pairs.
@group(0) @binding(15) var<storage, read_write> ctl: array<atomic<u32>>;

// D8 offsets (the CPU's order), diagonal flags; the direction back is 7 − k.
const DX = array<i32, 8>(-1, 0, 1, -1, 1, -1, 0, 1);
const DY = array<i32, 8>(-1, -1, -1, 0, 0, 1, 1, 1);
fn is_diag(k: u32) -> bool { return k == 0u || k == 2u || k == 5u || k == 7u; }

const WALL: u32 = 0u;
const WRAP: u32 = 2u;

// One step along an axis: the coordinate, or −1 past a wall or a drain edge.
fn axis(c: i32, d: i32, n: i32, lo: u32, hi: u32) -> i32 {
    if (d == 0) { return c; }
    if (d < 0) {
        if (c > 0) { return c - 1; }
        return select(-1, n - 1, lo == WRAP);
    }
    if (c + 1 < n) { return c + 1; }
    return select(-1, 0, hi == WRAP);
}

// The neighbour in direction k of (x, y): flat index, or −1 off the map.
fn nb(x: i32, y: i32, k: u32) -> i32 {
    let cx = axis(x, DX[k], i32(P.w), P.edge_l, P.edge_r);
    let cy = axis(y, DY[k], i32(P.h), P.edge_t, P.edge_b);
    if (cx < 0 || cy < 0) { return -1; }
    return cy * i32(P.w) + cx;
}

// 1/distance to neighbour k.
fn inv_dist(k: u32) -> f32 { return select(P.inv_dx, P.inv_dx * 0.70710678, is_diag(k)); }

// The fill's step over a flat from a neighbour at `v` (above f32 rounding at any height).
fn eps(v: f32) -> f32 { return max(P.eps_abs, abs(v) * P.eps_rel); }

fn has_sea() -> bool { return (P.flags & 2u) != 0u; }

fn pos(x: f32) -> f32 { return select(0.0, x, x > 0.0); }

// Route codes of a node.
fn rcv_h(code: f32) -> u32 { return u32(code) & 15u; }
fn rcv_w(code: f32) -> u32 { return (u32(code) >> 4u) & 15u; }
fn carry(code: f32) -> u32 { return u32(code) >> 8u; }

// ---- Pointer jumping: whether a chain is solved. ----

var<workgroup> wg_live: atomic<u32>;

// Raises ctl[0] when `live` holds at a node of the workgroup (one global atomic per workgroup at
// most). Must be called in uniform control flow.
fn flag_live(lid: u32, live: bool) {
    if (live) { atomicOr(&wg_live, 1u); }
    workgroupBarrier();
    if (lid == 0u && atomicLoad(&wg_live) != 0u && atomicLoad(&ctl[0]) == 0u) { atomicOr(&ctl[0], 1u); }
}

// The first kernel of a chain clears the flag.
fn clear_live(i: u32) {
    if (i == 0u) { atomicStore(&ctl[0], 0u); }
}

// ---- Books: per-workgroup tree sum (fixed order) added to a double-float accumulator. ----

var<workgroup> red: array<array<f32, 4>, 256>;

// Error-free sum of two floats (Knuth's TwoSum): a + b = s + e exactly.
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    return vec2<f32>(s, e);
}

fn df_add(acc: vec2<f32>, x: f32) -> vec2<f32> {
    let t = two_sum(acc.x, x);
    let lo = t.y + acc.y;
    return two_sum(t.x, lo);
}

// Sums v over the workgroup in a fixed tree and adds it to the workgroup's slots (eroded,
// deposited, lost, uplift). Must be called in uniform control flow.
fn book(lid: u32, wg: vec3<u32>, v: vec4<f32>) {
    workgroupBarrier();
    red[lid] = array<f32, 4>(v.x, v.y, v.z, v.w);
    workgroupBarrier();
    for (var stride = WG_N / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            for (var k = 0u; k < 4u; k = k + 1u) {
                red[lid][k] = red[lid][k] + red[lid + stride][k];
            }
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        let g = wg.y * P.groups_x + wg.x;
        let G = P.groups;
        let r = red[0];
        for (var k = 0u; k < 4u; k = k + 1u) {
            if (r[k] != 0.0) {
                books[k * G + g] = df_add(books[k * G + g], r[k]);
            }
        }
    }
}
