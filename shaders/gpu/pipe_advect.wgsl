// Step 5 (sweep C), semi-Lagrangian transport (Mei et al. 2007): s = s1(x − u·Δt/lx, y − v·Δt/ly),
// bilinear. The velocity clamp keeps the back-traced point within one cell, so bilinear sampling
// is a separable 3-tap filter over the 3×3 neighbourhood with taps (max(a,0), 1−|a|, max(−a,0)).
// An edge node loses across a drain the part s·(1 − (1 − c_x)(1 − c_y)) its outward Courant
// numbers c carry (booked as lost). Also MacCormack's backward pass (BOOK_SUM = false: only the
// loss is booked, the corrected sum comes from pipe_maccormack.wgsl).

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read> uv: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
@group(0) @binding(4) var<storage, read_write> books: array<vec2<f32>>;

override BOOK_SUM: bool = true;

fn taps(a0: f32) -> vec3<f32> {
    let a = fmin(fmax(a0, -1.0), 1.0);
    return vec3<f32>(pos(a), 1.0 - abs(a), pos(-a));
}

fn drain_loss(x: i32, y: i32, sv: f32, ax: f32, ay: f32) -> f32 {
    var cx = 0.0;
    var cy = 0.0;
    if (x == 0 && P.edge_l == DRAIN) { cx = cx + pos(-ax); }
    if (x + 1 == i32(P.w) && P.edge_r == DRAIN) { cx = cx + pos(ax); }
    if (y == 0 && P.edge_t == DRAIN) { cy = cy + pos(-ay); }
    if (y + 1 == i32(P.h) && P.edge_b == DRAIN) { cy = cy + pos(ay); }
    cx = min(cx, 1.0);
    cy = min(cy, 1.0);
    return sv * (1.0 - (1.0 - cx) * (1.0 - cy));
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let x = i32(gid.x);
        let y = i32(gid.y);
        let w = i32(P.w);
        let i = gid.y * P.w + gid.x;
        let a = uv[i] * P.courant;
        let cols = array<i32, 3>(col_in(x, -1), x, col_in(x, 1));
        let rows = array<i32, 3>(row_in(y, -1), y, row_in(y, 1));
        let wx = taps(a.x);
        let wy = taps(a.y);
        var r = array<f32, 3>(0.0, 0.0, 0.0);
        for (var k = 0; k < 3; k = k + 1) {
            let o = rows[k] * w;
            r[k] = wx.x * src[o + cols[0]] + wx.y * src[o + cols[1]] + wx.z * src[o + cols[2]];
        }
        let out = wy.x * r[0] + wy.y * r[1] + wy.z * r[2];
        dst[i] = out;
        acc = vec4<f32>(out, drain_loss(x, y, src[i], a.x, a.y), 0.0, 0.0);
    }
    let t = wg_sum(lid, acc);
    if (lid == 0u) {
        let g = group_index(wg);
        let G = P.groups;
        if (BOOK_SUM) {
            books[SLOT_SSUM * G + g] = df_add(books[SLOT_SSUM * G + g], t.x);
        }
        books[SLOT_LOST * G + g] = df_add(books[SLOT_LOST * G + g], t.y);
    }
}
