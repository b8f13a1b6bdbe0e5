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
//   `sea`   — sea mode only, one invocation per droplet: finishes the step of each droplet that
//             stood at the sea (`act` bit 3; CPU droplet/sea.rs `sea_step`): it keeps the shares of
//             its deposit the nodes took, takes back those of nodes that refused them (see `fold`),
//             then ends with its load gone or moves one cell on.
// Integer addition is associative, so the result never depends on the order threads run in.
//
// 64-bit integers are vec2<u32>(lo, hi), two's complement where signed. Their arithmetic, the
// random streams and the geometry are in droplet_lib.wgsl (appended to this source).

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
    // Sea mode (`SEA`): the level in metres and ⌊sea/unit⌋ in height units (i64 lo, hi).
    _pad2: u32,
    sea: f32,
    sea_lo: u32,
    sea_hi: u32,
    // Steering mask (steer.rs): bit 0 = spawn in the box (x0, y0) + (sx, sy)·ξ and live with
    // probability w(nearest node), bit 1 = sinks (a droplet on a node with w = 0 ends there).
    steer: u32,
    spawn_x0: f32,
    spawn_sx: f32,
    spawn_y0: f32,
    spawn_sy: f32,
    // Seed of the side stream a droplet's life is drawn from (seed ^ LIFE_SALT).
    life_lo: u32,
    life_hi: u32,
    // One step erodes at most -dh * dig (droplet/params.rs, DropletGrid::dig).
    dig: f32,
    _pad1: u32,
}

// One droplet between two steps (88 bytes).
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
    // on the cell of (ax, ay), bit 2 = deposit on the cell of (x, y) (in sea mode on the disc
    // around the point instead of its cell), bit 3 = at the sea: deposit shares in the brush
    // footprint at (ax, ay), the step finished by `sea`; `tick` = the step's index.
    act: u32,
    ax: f32,
    ay: f32,
    tick: u32,
    // Books of this droplet so far (u64 height units).
    eroded: vec2<u32>,
    deposited: vec2<u32>,
    // At the sea: the load per unit brush weight, metres (the shares are `sa·w` capped).
    sa: f32,
}

// The block is bound as read-only storage, not as a uniform: lavapipe (Mesa 22.3, the software
// Vulkan of CI and of machines without a GPU) compiles a new copy of a kernel whose loop bounds
// read a uniform (`P.taps` here) at every pipeline bind once inlining the values pays, and never
// frees the copies: with `walk` and `apply` bound in turn every step, a run grew ~100 MB/s.
// Storage reads are never inlined. On hardware GPUs the two read the same.
@group(0) @binding(0) var<storage, read> P: Params;
// Heights (f32 view) after the previous step; `apply` refreshes the nodes it folds.
@group(0) @binding(1) var<storage, read_write> hf: array<f32>;
// Per node: erodibility (read when P.has_hard = 1) and the steering mask's weight (read when
// P.steer ≠ 0); a 1-element dummy when neither.
@group(0) @binding(2) var<storage, read> nodein: array<vec2<f32>>;
// Brush taps: 16 variants × P.taps of (dx, dy, weight, 0).
@group(0) @binding(3) var<storage, read> brush: array<vec4<f32>>;
// Per-node change of the current step, 6 words a node: eroded (lo, hi), deposited (lo, hi) and
// the sea step's deposit shares (lo, hi), u64 height units; cleared by `apply`.
@group(0) @binding(4) var<storage, read_write> acc: array<atomic<u32>>;
// Run totals (u64 each): eroded, deposited, lost at the border, lifted by the guard, droplets
// ended, and the residue of sea droplets (loads under a micrometre, booked as dropped).
@group(0) @binding(5) var<storage, read_write> books: array<atomic<u32>>;
// Fixed-point heights, i64 in height units: the authoritative terrain (xy), and (zw) the height
// before the step that last folded the node (what the sea step's shares were computed from).
@group(0) @binding(6) var<storage, read_write> hq: array<vec4<u32>>;
// Per-node f32 totals of the run: eroded, deposited (m).
@group(0) @binding(7) var<storage, read_write> maps: array<vec2<f32>>;
// Per-node run totals, 4 words a node: visits (lo, hi), water volume (lo, hi) in water units.
@group(0) @binding(8) var<storage, read_write> flow: array<atomic<u32>>;
// The batch's droplets.
@group(0) @binding(9) var<storage, read_write> drops: array<Drop>;
// Per node, 2 words: the stamp of the last step that claimed it in `apply`, and of the last step
// in which it refused the sea step's shares.
@group(0) @binding(10) var<storage, read_write> claim: array<atomic<u32>>;

// Sea mode (a pipeline constant: a job without a sea compiles none of the sea's code, which
// lavapipe would otherwise run at a great cost even where it is skipped).
override SEA: bool = false;
const ACC_N: u32 = 6u;
const ACC_ERO: u32 = 0u;
const ACC_DEP: u32 = 2u;
const ACC_SEA: u32 = 4u;
const BOOK_ERO: u32 = 0u;
const BOOK_DEP: u32 = 2u;
const BOOK_LOST: u32 = 4u;
const BOOK_LIFT: u32 = 6u;
const BOOK_ENDED: u32 = 8u;
const BOOK_RESIDUE: u32 = 10u;
// Sea mode: radius (nodes) of the disc land deposits are spread over (droplet/sea.rs LAND_SPREAD;
// `deposit_disc` relies on it being 2).
const LAND_SPREAD: f32 = 2.0;
// A sea droplet's load below this (metres) is booked as dropped, not carried on (sea.rs).
const SEA_RESIDUE: f32 = 1e-6;
const TWO32: f32 = 4294967296.0;

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
            take *= nodein[i].x;
        }
        if (P.guard != 0u) {
            take = min(take, max(hf[i] - P.floor, 0.0));
        }
        let q = f32_u64(take * P.inv_unit);
        acc_add(i * ACC_N + ACC_ERO, q);
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
        acc_add(ids[k] * ACC_N + ACC_DEP, part);
    }
    acc_add(ids[big] * ACC_N + ACC_DEP, rest);
}

// The cell a position stands on (its floor, within the map), as particles::Geom::owner_cell.
fn owner(x: f32, y: f32) -> vec2<i32> {
    return vec2<i32>(i32(min(u32(max(x, 0.0)), P.w - 1u)), i32(min(u32(max(y, 0.0)), P.h - 1u)));
}

// Sea mode's land deposit (particles::deposit_disc, uncapped): `d` units over the nodes n within
// LAND_SPREAD = 2 of p = (x, y), weights 2 − |p − n| over the in-map ones; each node gets its
// rounded share, the heaviest one (the first of them) the remainder, so the parts sum to `d`
// exactly. With p in the cell (bx, by) those nodes lie in the 4×4 block bx − 1 … bx + 2,
// by − 1 … by + 2 (the CPU's 6×6 candidates less the rows and columns 2 or more away), which
// `apply` claims whole. (Two passes over the block rather than a list of taps: a function-local
// array slows lavapipe down many times over.)
fn disc_weight(o: vec2<i32>, k: i32, x: f32, y: f32) -> f32 {
    let nx = o.x - 1 + k % 4;
    let ny = o.y - 1 + k / 4;
    let ex = f32(nx) - x;
    let ey = f32(ny) - y;
    let dist = sqrt(ex * ex + ey * ey);
    return select(0.0, LAND_SPREAD - dist, dist < LAND_SPREAD && node(nx, ny) >= 0);
}

fn deposit_disc(x: f32, y: f32, d: vec2<u32>) {
    if (is_zero64(d)) {
        return;
    }
    let o = owner(x, y);
    var sum = 0.0;
    var big = -1;
    var bigw = 0.0;
    for (var k = 0; k < 16; k++) {
        let wk = disc_weight(o, k, x, y);
        sum += wk;
        if (wk > bigw) {
            big = k;
            bigw = wk;
        }
    }
    if (big < 0 || !(sum > 0.0)) {
        // No in-map node within reach (cannot happen inside the map): the cell's corners.
        deposit(cell_at(x, y), d);
        return;
    }
    let a = u64_f32(d) / sum;
    var rest = d;
    for (var k = 0; k < 16; k++) {
        let wk = disc_weight(o, k, x, y);
        if (k == big || !(wk > 0.0)) {
            continue;
        }
        let part = min_u64(f32_u64(a * wk), rest);
        rest = sub64(rest, part);
        acc_add(u32(node(o.x - 1 + k % 4, o.y - 1 + k / 4)) * ACC_N + ACC_DEP, part);
    }
    acc_add(u32(node(o.x - 1 + big % 4, o.y - 1 + big / 4)) * ACC_N + ACC_DEP, rest);
}

// A deposit at p = (x, y) in cell `c`: on the disc around p in sea mode, bilinear otherwise (the
// CPU's `deposit_at`).
fn deposit_at(c: Cell, x: f32, y: f32, d: vec2<u32>) {
    if (SEA) {
        deposit_disc(x, y, d);
    } else {
        deposit(c, d);
    }
}

// The sea level in height units, ⌊sea/unit⌋ (so a node at it is at or below the f32 sea).
fn sea_units() -> vec2<u32> {
    return vec2<u32>(P.sea_lo, P.sea_hi);
}

// One tap of the sea step's deposit (sea.rs `deposit_spread`, capped at the sea level): tap `t` of
// brush `b` takes the share `sa·w` of the load, at most its room below the sea level (integer
// units, from its height `before` the step: `hq.xy` in `walk`, `hq.zw` once `apply` folded it) and
// at most `rest`, what the earlier taps left of the load. `node` = −1 for a tap that takes nothing.
// Products only, so `walk` and `sea` compute the same shares to the bit.
struct Share {
    node: i32,
    units: vec2<u32>,
}

fn sea_share(b: Brush, t: u32, sa: f32, rest: vec2<u32>, before: bool) -> Share {
    var r: Share;
    r.node = -1;
    r.units = vec2<u32>(0u, 0u);
    let tap = brush[b.base + t];
    if (tap.z <= 0.0) {
        return r;
    }
    let ni = node(b.bx + i32(tap.x), b.by + i32(tap.y));
    if (ni < 0) {
        return r;
    }
    let q = hq[u32(ni)];
    let h = select(q.xy, q.zw, before);
    let room = sub64(sea_units(), h);
    if (!slt64(vec2<u32>(0u, 0u), room)) {
        return r;
    }
    let u = min_u64(min_u64(f32_u64(sa * tap.z * P.inv_unit), room), rest);
    if (!is_zero64(u)) {
        r.node = ni;
        r.units = u;
    }
    return r;
}

// The steering mask's weight at node i.
fn steer_weight(i: u32) -> f32 {
    return nodein[i].y;
}

fn visit(i: u32, water: f32) {
    flow_add(i * 4u, vec2<u32>(1u, 0u));
    flow_add(i * 4u + 2u, f32_u64(water * P.inv_wunit));
}

// ---------------------------------------------------------------- one step of every droplet

// Books a droplet that ended: its erosion, deposits, what left the map, the residue of a sea
// droplet, and one more droplet ended.
fn book_end(s: Drop, lost: vec2<u32>, residue: vec2<u32>) {
    book_add(BOOK_ERO, s.eroded);
    book_add(BOOK_DEP, s.deposited);
    book_add(BOOK_LOST, lost);
    book_add(BOOK_RESIDUE, residue);
    book_add(BOOK_ENDED, vec2<u32>(1u, 0u));
}

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
        // Spawn (as DropletJob::spawn): two draws from the droplet's own stream (in the mask's
        // box with a steering mask), the edge rules.
        let id = add64(vec2<u32>(P.first_lo, P.first_hi), vec2<u32>(k, 0u));
        rng = rng_stream(vec2<u32>(P.seed_lo, P.seed_hi), id);
        var sx: f32;
        var sy: f32;
        if ((P.steer & 1u) != 0u) {
            sx = P.spawn_x0 + next_f32() * P.spawn_sx;
            sy = P.spawn_y0 + next_f32() * P.spawn_sy;
        } else {
            sx = next_f32() * P.span_x;
            sy = next_f32() * P.span_y;
        }
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
        s.sa = 0.0;
        if ((P.steer & 1u) != 0u) {
            // A steered droplet lives with probability w of its nearest node: one draw from its
            // side stream, which leaves the main stream as it is (Spawner::lives).
            let main = rng;
            rng = rng_stream(vec2<u32>(P.life_lo, P.life_hi), id);
            let xi = next_f32();
            rng = main;
            if (!(xi < steer_weight(nearest(s.x, s.y)))) {
                s.status = 2u;
                s.act = 0u;
                s.rng = rng;
                book_add(BOOK_ENDED, vec2<u32>(1u, 0u));
                drops[k] = s;
                return;
            }
        }
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
    // The step's one deposit (units; at (ax, ay), or where the droplet ends when it settles): one
    // call of `deposit_at` in the kernel, as lavapipe runs every copy of its loops.
    var dep = vec2<u32>(0u, 0u);
    if (s.life >= P.max_life) {
        ended = true;
        settle = true;
    } else if ((P.steer & 2u) != 0u && steer_weight(nearest(s.x, s.y)) == 0.0) {
        // A sink (steering mask): the flow ends here, the load is dropped.
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
        if (SEA && h_old <= P.sea) {
            // At the sea (sea.rs `sea_step`): no erosion; the load is dropped with the erosion
            // brush, each node taking at most its room below the sea level. The shares go to the
            // nodes' sea accumulators; `apply` folds them where they fit, and `sea` takes back
            // the refused ones and moves the droplet along the new direction.
            s.dx = ndx;
            s.dy = ndy;
            s.sa = 0.0;
            if (!is_zero64(s.sed)) {
                let b = brush_at(s.x, s.y);
                s.sa = u64_f32(s.sed) * P.unit * b.norm;
                var rest = s.sed;
                for (var t = 0u; t < P.taps; t++) {
                    let sh = sea_share(b, t, s.sa, rest, false);
                    if (sh.node >= 0) {
                        rest = sub64(rest, sh.units);
                        acc_add(u32(sh.node) * ACC_N + ACC_SEA, sh.units);
                    }
                }
            }
            s.act |= 8u;
        } else {
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
                        dep = min_u64(f32_u64(a * P.inv_unit), s.sed);
                    }
                } else {
                    let cap = min(max(-dh, P.min_slope) * s.speed * s.water * P.capacity, 1e30);
                    if (sf > cap) {
                        let a = (sf - cap) * P.deposition;
                        if (a > 0.0) {
                            dep = min_u64(f32_u64(a * P.inv_unit), s.sed);
                        }
                    } else {
                        let a = min((cap - sf) * P.erosion, -dh * P.dig);
                        if (a > 0.0) {
                            let got = erode(s.x, s.y, a);
                            s.eroded = add64(s.eroded, got);
                            s.sed = add64(s.sed, got);
                            s.act |= 1u;
                        }
                    }
                }
                if (!is_zero64(dep)) {
                    s.deposited = add64(s.deposited, dep);
                    s.sed = sub64(s.sed, dep);
                    s.act |= 2u;
                }
                // 7. Speed and water.
                s.speed = sqrt(clamp(s.speed * s.speed - dh * P.gravity, 0.0, 1e30));
                s.water *= P.keep_water;
                s.life += 1u;
                s.x = nx;
                s.y = ny;
                visit(nearest(nx, ny), s.water);
                if (s.water < P.min_water) {
                    if (is_zero64(dep)) {
                        ended = true;
                        settle = true;
                    } else {
                        // Deposited this step already: it drops the rest where it stands at
                        // the start of the next turn (as at the end of its life).
                        s.life = P.max_life;
                    }
                }
            }
        }
    }
    if (ended) {
        // At the end of its life (max lifetime, dried up or a sink) a droplet drops what it
        // carries where it stands.
        if (settle && !is_zero64(s.sed)) {
            dep = s.sed;
            s.deposited = add64(s.deposited, s.sed);
            s.sed = vec2<u32>(0u, 0u);
            s.act |= 4u;
        }
        s.status = 2u;
        book_end(s, lost, vec2<u32>(0u, 0u));
    }
    if (!is_zero64(dep)) {
        // At (ax, ay) for a step's deposit (act bit 1), where it stands when it settles (bit 2).
        let px = select(s.ax, s.x, (s.act & 4u) != 0u);
        let py = select(s.ay, s.y, (s.act & 4u) != 0u);
        deposit_at(cell_at(px, py), px, py, dep);
    }
    s.rng = rng;
    drops[k] = s;
}

// ---------------------------------------------------------------- folding a step into the terrain

// Folds node i's accumulated change of the step `stamp` into the terrain and clears it. The sea
// step's shares go in whole when they fit below the sea level (after the step's other changes),
// else none of them does and the node records the refusal (`sea` then gives each droplet its
// share back): exact, and the same whatever order the droplets ran in.
fn fold(i: u32, stamp: u32) {
    let b = i * ACC_N;
    let e = vec2<u32>(atomicLoad(&acc[b + 0u]), atomicLoad(&acc[b + 1u]));
    let d = vec2<u32>(atomicLoad(&acc[b + 2u]), atomicLoad(&acc[b + 3u]));
    let sw = vec2<u32>(atomicLoad(&acc[b + 4u]), atomicLoad(&acc[b + 5u]));
    let old = hq[i].xy;
    if (is_zero64(e) && is_zero64(d) && is_zero64(sw)) {
        hq[i] = vec4<u32>(old, old);
        return;
    }
    for (var k = 0u; k < ACC_N; k++) {
        atomicStore(&acc[b + k], 0u);
    }
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
    var put = vec2<u32>(0u, 0u);
    if (!is_zero64(sw)) {
        if (slt64(sub64(sea_units(), nh), sw)) {
            atomicStore(&claim[2u * i + 1u], stamp);
        } else {
            put = sw;
            nh = add64(nh, sw);
        }
    }
    hq[i] = vec4<u32>(nh, old);
    hf[i] = i64_f32(nh) * P.unit;
    var m = maps[i];
    m.x += u64_f32(e) * P.unit;
    m.y += u64_f32(add64(add64(d, lift), put)) * P.unit;
    maps[i] = m;
}

// Claims node i for this step; the first claimer folds it.
fn claim_fold(i: u32, stamp: u32) {
    if (atomicExchange(&claim[2u * i], stamp) != stamp) {
        fold(i, stamp);
    }
}

// Node `j` of those a deposit at (x, y) may reach: the cell's four corners, or in sea mode the
// 4×4 block of `deposit_disc`; −1 outside the map.
fn deposit_node(x: f32, y: f32, j: u32) -> i32 {
    if (SEA) {
        let o = owner(x, y);
        return node(o.x - 1 + i32(j % 4u), o.y - 1 + i32(j / 4u));
    }
    let c = cell_at(x, y);
    return i32(select(select(c.i00, c.i10, j == 1u), select(c.i01, c.i11, j == 3u), j >= 2u));
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
    // Every node the step touched, in one loop (one copy of `fold` in the kernel): the brush at
    // (ax, ay) for erosion or the sea's shares, then the nodes of the deposit.
    let b = brush_at(s.ax, s.ay);
    let brushed = (s.act & 1u) != 0u || ((s.act & 8u) != 0u && !is_zero64(s.sed));
    let nb = select(0u, P.taps, brushed);
    let nd = select(0u, select(4u, 16u, SEA), (s.act & 6u) != 0u);
    let px = select(s.ax, s.x, (s.act & 4u) != 0u);
    let py = select(s.ay, s.y, (s.act & 4u) != 0u);
    for (var t = 0u; t < nb + nd; t++) {
        var ni = -1;
        if (t < nb) {
            let tap = brush[b.base + t];
            if (tap.z > 0.0) {
                ni = node(b.bx + i32(tap.x), b.by + i32(tap.y));
            }
        } else {
            ni = deposit_node(px, py, t - nb);
        }
        if (ni >= 0) {
            claim_fold(u32(ni), stamp);
        }
    }
}

// ---------------------------------------------------------------- the rest of a sea step

@compute @workgroup_size(64)
fn sea(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.y * P.row + gid.x;
    if (k >= P.count) {
        return;
    }
    var s = drops[k];
    if ((s.act & 8u) == 0u || s.status != 1u) {
        return;
    }
    s.act = s.act & ~8u;
    // The shares `walk` gave (the same numbers, from the heights before the step), less those
    // of the nodes that refused them.
    if (!is_zero64(s.sed)) {
        let stamp = P.stamp_base + s.tick;
        let b = brush_at(s.ax, s.ay);
        var rest = s.sed;
        var back = vec2<u32>(0u, 0u);
        for (var t = 0u; t < P.taps; t++) {
            let sh = sea_share(b, t, s.sa, rest, true);
            if (sh.node >= 0) {
                rest = sub64(rest, sh.units);
                if (atomicLoad(&claim[2u * u32(sh.node) + 1u]) == stamp) {
                    back = add64(back, sh.units);
                }
            }
        }
        let put = sub64(sub64(s.sed, rest), back);
        s.deposited = add64(s.deposited, put);
        s.sed = sub64(s.sed, put);
    }
    var ended = false;
    var lost = vec2<u32>(0u, 0u);
    var residue = vec2<u32>(0u, 0u);
    if (u64_f32(s.sed) * P.unit < SEA_RESIDUE) {
        // The load is (all but) gone: the droplet ends, the few units left are booked as dropped.
        residue = s.sed;
        s.sed = vec2<u32>(0u, 0u);
        ended = true;
    } else {
        // One cell on along the new direction, to drop the rest farther out.
        let mx = move_axis(s.x + s.dx, P.span_x, P.wrap_x != 0u, P.drain_left != 0u, P.drain_right != 0u);
        let my = move_axis(s.y + s.dy, P.span_y, P.wrap_y != 0u, P.drain_top != 0u, P.drain_bottom != 0u);
        if (mx.z > 0.0 || my.z > 0.0) {
            lost = s.sed;
            s.sed = vec2<u32>(0u, 0u);
            ended = true;
        } else {
            if (mx.y > 0.0) {
                s.dx = -s.dx;
            }
            if (my.y > 0.0) {
                s.dy = -s.dy;
            }
            s.x = mx.x;
            s.y = my.x;
            // (At the end of its life the next `walk` drops the rest where it stands.)
            s.life += 1u;
            visit(nearest(s.x, s.y), s.water);
        }
    }
    if (ended) {
        s.status = 2u;
        book_end(s, lost, residue);
    }
    drops[k] = s;
}
