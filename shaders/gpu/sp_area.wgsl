// Stream power, one sweep of drainage area (nodes), gathered from the last sweep's values:
//   MFD: A'_i = r_i + Σ_{j: W_j > W_i} S_ji^p / Σ_k S_jk^p · A_j,    D8: A'_i = r_i + Σ_{j: rcv_w(j) = i} A_j
// (r_i the node's runoff weight, 1 without a steering mask). Outlets take and give nothing on.

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    let x = i32(gid.x);
    let y = i32(gid.y);
    let wi = route[i].w;
    let d8 = (P.flags & 1u) != 0u;
    var a = nodes[i].runoff;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        if (j < 0) { continue; }
        let rj = route[j];
        if (d8) {
            if (rcv_w(rj.code) == 7u - k) { a = a + a_src[j]; }
        } else if (rj.inv_norm > 0.0) {
            let t = (rj.w - wi) * inv_dist(k);
            if (t > 0.0) { a = a + pow(t, P.mfd_p) * rj.inv_norm * a_src[j]; }
        }
    }
    a_dst[i] = a;
}
