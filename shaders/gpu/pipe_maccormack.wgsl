// Step 5, MacCormack correction (seed 003, Selle et al. 2008): with ŝ the backward pass of s1
// (pipe_advect.wgsl into s2), trace ŝ forward, s = ŝ + (s1 − s̃)/2, clamped to the min/max of the
// 2×2 s1 nodes the backward sample interpolated between.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> s1: array<f32>;
@group(0) @binding(2) var<storage, read> s2: array<f32>;
@group(0) @binding(3) var<storage, read> uv: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<f32>;
@group(0) @binding(5) var<storage, read_write> books: array<vec2<f32>>;

fn taps(a0: f32) -> vec3<f32> {
    let a = fmin(fmax(a0, -1.0), 1.0);
    return vec3<f32>(pos(a), 1.0 - abs(a), pos(-a));
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
        // Forward trace of ŝ: displacement +a, i.e. taps of −a.
        let wx = taps(-a.x);
        let wy = taps(-a.y);
        var r = array<f32, 3>(0.0, 0.0, 0.0);
        for (var k = 0; k < 3; k = k + 1) {
            let o = rows[k] * w;
            r[k] = wx.x * s2[o + cols[0]] + wx.y * s2[o + cols[1]] + wx.z * s2[o + cols[2]];
        }
        let fwd = wy.x * r[0] + wy.y * r[1] + wy.z * r[2];
        let centre = s1[rows[1] * w + cols[1]];
        let corrected = s2[i] + 0.5 * (centre - fwd);
        // Range of the 2×2 nodes the backward sample used (pipe.rs `cell_range`).
        let cx = select(cols[2], cols[0], a.x >= 0.0);
        let ry = select(rows[2], rows[0], a.y >= 0.0);
        let va = centre;
        let vb = s1[rows[1] * w + cx];
        let vc = s1[ry * w + cols[1]];
        let vd = s1[ry * w + cx];
        let lo = fmin(fmin(va, vb), fmin(vc, vd));
        let hi = fmax(fmax(va, vb), fmax(vc, vd));
        let out = fmin(fmax(corrected, lo), hi);
        dst[i] = out;
        acc = vec4<f32>(out, 0.0, 0.0, 0.0);
    }
    let t = wg_sum(lid, acc);
    if (lid == 0u) {
        let g = group_index(wg);
        books[SLOT_SSUM * P.groups + g] = df_add(books[SLOT_SSUM * P.groups + g], t.x);
    }
}
