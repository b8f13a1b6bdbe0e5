// Step 5, conservative forward remap (our addition, pipe.rs `Advection::Conservative`): the
// sediment of each node moves by (u, v)·Δt and is shared bilinearly among the nodes around its
// landing point. Written as a gather (each receiver sums the shares its 3×3 neighbours send it),
// so no atomics and no race. What would cross a wall stays in its node; what crosses a drain
// leaves the map and is booked as lost.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read> uv: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
@group(0) @binding(4) var<storage, read_write> books: array<vec2<f32>>;

// Shares a node at `p` (axis of length n) sends to its −1, 0, +1 neighbours, what would cross a
// wall kept in the node.
fn shares_at(a0: f32, p: i32, n: i32, lo_wall: bool, hi_wall: bool) -> vec3<f32> {
    let a = fmin(fmax(a0, -1.0), 1.0);
    var sh = vec3<f32>(pos(-a), 1.0 - abs(a), pos(a));
    if (p == 0 && lo_wall) {
        sh.y = sh.y + sh.x;
        sh.x = 0.0;
    }
    if (p + 1 == n && hi_wall) {
        sh.y = sh.y + sh.z;
        sh.z = 0.0;
    }
    return sh;
}

fn pick(v: vec3<f32>, k: i32) -> f32 { return select(select(v.z, v.y, k == 1), v.x, k == 0); }

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let x = i32(gid.x);
        let y = i32(gid.y);
        let w = i32(P.w);
        let h = i32(P.h);
        let lw = P.edge_l == WALL;
        let rw = P.edge_r == WALL;
        let tw = P.edge_t == WALL;
        let bw = P.edge_b == WALL;
        let k = P.courant;
        var out = 0.0;
        for (var dy = -1; dy <= 1; dy = dy + 1) {
            for (var dx = -1; dx <= 1; dx = dx + 1) {
                let o = node(x, y, dx, dy);
                var term = 0.0;
                if (o >= 0) {
                    let ox = o % w;
                    let oy = o / w;
                    let a = uv[o] * k;
                    // The neighbour at offset dx sends its share for offset −dx to us.
                    let sx = pick(shares_at(a.x, ox, w, lw, rw), 1 - dx);
                    let sy = pick(shares_at(a.y, oy, h, tw, bw), 1 - dy);
                    term = src[o] * sx * sy;
                }
                out = out + term;
            }
        }
        let i = gid.y * P.w + gid.x;
        dst[i] = out;
        // This node's own shares that cross a drain edge leave the map.
        let a = uv[i] * k;
        let sx = shares_at(a.x, x, w, lw, rw);
        let sy = shares_at(a.y, y, h, tw, bw);
        var gx = 0.0;
        if (col(x, -1) == NB_OUT) { gx = gx + sx.x; }
        if (col(x, 1) == NB_OUT) { gx = gx + sx.z; }
        var gy = 0.0;
        if (row(y, -1) == NB_OUT) { gy = gy + sy.x; }
        if (row(y, 1) == NB_OUT) { gy = gy + sy.z; }
        gx = min(gx, 1.0);
        gy = min(gy, 1.0);
        acc = vec4<f32>(out, src[i] * (1.0 - (1.0 - gx) * (1.0 - gy)), 0.0, 0.0);
    }
    let t = wg_sum(lid, acc);
    if (lid == 0u) {
        let g = group_index(wg);
        let G = P.groups;
        books[SLOT_SSUM * G + g] = df_add(books[SLOT_SSUM * G + g], t.x);
        books[SLOT_LOST * G + g] = df_add(books[SLOT_LOST * G + g], t.y);
    }
}
