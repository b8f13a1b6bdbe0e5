// Shared by every pipe-model / thermal kernel (prepended to each kernel's source by src/gpu/pipe.rs).
// Mirrors src/core/erosion/pipe.rs and thermal.rs: the CPU code is the reference, the arithmetic
// below follows it operation for operation (same order, same selects), so the two agree to f32
// rounding (GPU drivers may fuse a*b+c and use ≤2.5 ulp division; see the module doc).

struct Params {
    w: u32,
    h: u32,
    // Workgroups along x and in total (the books are one slot per workgroup).
    groups_x: u32,
    groups: u32,
    // Effective edge modes: 0 wall, 1 drain, 2 wrap (a lone wrap is already read as wall).
    edge_l: u32,
    edge_r: u32,
    edge_t: u32,
    edge_b: u32,
    // bit 0: per-node hardness, bit 1: per-node water input, bit 2: depth limit on,
    // bit 3: a sea (nodes with b < sea hold their water surface at the sea level),
    // bit 4: thermal erosion alone with a sea (pairs at or below `sea` use the underwater talus).
    flags: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    kflux: f32,      // Δt·A·g/l
    area_dt: f32,    // lx·ly/Δt
    dt_area: f32,    // Δt/(lx·ly)
    inv_l: f32,      // 1/lx
    vmax: f32,       // lx/Δt
    courant: f32,    // Δt/lx
    kc: f32,
    ks: f32,
    kd: f32,
    min_tilt: f32,
    inv_max_depth: f32,
    keep: f32,       // 1 − Ke·Δt
    rain_dt: f32,    // Δt·rain (uniform input)
    t_card: f32,     // thermal talus drop, cardinal neighbour
    t_diag: f32,     // thermal talus drop, diagonal neighbour
    th_rate: f32,
    th_inv_amax: f32,
    sea: f32,        // erosion floor and sea level: the sea level, or −3.4e38 without a sea
    w_card: f32,     // thermal underwater talus drop, cardinal neighbour (flags bit 4)
    w_diag: f32,     // thermal underwater talus drop, diagonal neighbour
}

const WALL: u32 = 0u;
const DRAIN: u32 = 1u;
const WRAP: u32 = 2u;
// Neighbour codes besides a flat index ≥ 0.
const NB_WALL: i32 = -1;
const NB_OUT: i32 = -2;
const FLUX_MAX: f32 = 1.0e30;
const DEPTH_EPS: f32 = 1.0e-6;
const WG: u32 = 16u;
const WG_N: u32 = 256u;
// Book slots (one double-float accumulator per slot and workgroup).
const SLOT_ERODED: u32 = 0u;
const SLOT_DEPOSITED: u32 = 1u;
const SLOT_S1: u32 = 2u;
const SLOT_D2: u32 = 3u;
const SLOT_DRAINED: u32 = 4u;
const SLOT_SSUM: u32 = 5u;
const SLOT_LOST: u32 = 6u;
const SLOT_TH_LOST: u32 = 7u;
const SLOT_SEA: u32 = 8u;

// A sea node (pipe.rs `sea_on & (b < sea)`): its water surface is held at the sea level.
fn is_sea(b: f32) -> bool { return (P.flags & 8u) != 0u && b < P.sea; }
// A sea or shore node (`b ≤ sea`): deposits never raise it above the sea level.
fn is_wet(b: f32) -> bool { return (P.flags & 8u) != 0u && b <= P.sea; }

// The thermal talus drop toward neighbour j (0–3 cardinal, 4–7 diagonal) between heights c and n
// (thermal kernel.rs `talus_pair`): the underwater drop when both are at or below the sea
// (flags bit 4: thermal alone with a sea), the talus drop otherwise.
fn talus_pair(j: i32, c: f32, n: f32) -> f32 {
    if ((P.flags & 16u) != 0u && fmax(c, n) <= P.sea) {
        return select(P.w_diag, P.w_card, j < 4);
    }
    return select(P.t_diag, P.t_card, j < 4);
}

// max(x, 0) with NaN → 0, as `pos` in thermal.rs.
fn pos(x: f32) -> f32 { return select(0.0, x, x > 0.0); }
fn fmax(a: f32, b: f32) -> f32 { return select(b, a, a > b); }
fn fmin(a: f32, b: f32) -> f32 { return select(b, a, a < b); }

// One step along an axis: the coordinate, or NB_WALL / NB_OUT (Edges::axis).
fn axis(c: i32, d: i32, n: i32, lo: u32, hi: u32) -> i32 {
    if (d == 0) { return c; }
    if (d < 0) {
        if (c > 0) { return c - 1; }
        if (lo == WRAP) { return n - 1; }
        return select(NB_OUT, NB_WALL, lo == WALL);
    }
    if (c + 1 < n) { return c + 1; }
    if (hi == WRAP) { return 0; }
    return select(NB_OUT, NB_WALL, hi == WALL);
}

fn col(x: i32, dx: i32) -> i32 { return axis(x, dx, i32(P.w), P.edge_l, P.edge_r); }
fn row(y: i32, dy: i32) -> i32 { return axis(y, dy, i32(P.h), P.edge_t, P.edge_b); }

// The neighbour (x+dx, y+dy): flat index, or NB_WALL if either axis hits a wall, else NB_OUT.
fn node(x: i32, y: i32, dx: i32, dy: i32) -> i32 {
    let cx = col(x, dx);
    let cy = row(y, dy);
    if (cx == NB_WALL || cy == NB_WALL) { return NB_WALL; }
    if (cx == NB_OUT || cy == NB_OUT) { return NB_OUT; }
    return cy * i32(P.w) + cx;
}

// Neighbour column/row for sampling: walls and drains clamp to the node itself (pipe.rs `stencil`).
fn col_in(x: i32, dx: i32) -> i32 { let c = col(x, dx); return select(x, c, c >= 0); }
fn row_in(y: i32, dy: i32) -> i32 { let r = row(y, dy); return select(y, r, r >= 0); }

// ---- Books: per-workgroup tree sum (fixed order) added to a double-float accumulator. ----

var<workgroup> red: array<array<f32, 4>, 256>;

// Error-free sum of two floats (Knuth's TwoSum): a + b = s + e exactly.
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    return vec2<f32>(s, e);
}

// (hi, lo) + x, renormalised.
fn df_add(acc: vec2<f32>, x: f32) -> vec2<f32> {
    let t = two_sum(acc.x, x);
    let lo = t.y + acc.y;
    return two_sum(t.x, lo);
}

// Sums v over the workgroup; thread 0 gets the totals. Must be called in uniform control flow.
fn wg_sum(lid: u32, v: vec4<f32>) -> vec4<f32> {
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
    let r = red[0];
    return vec4<f32>(r[0], r[1], r[2], r[3]);
}

fn group_index(wg: vec3<u32>) -> u32 { return wg.y * P.groups_x + wg.x; }
