// Stream power, one sweep of drainage area (nodes), gathered from the last sweep's values:
//   MFD: A'_i = r_i + Σ_{j: W_j > W_i} S_ji^p/Σ_k S_jk^p · A_j,    D8: A'_i = r_i + Σ_{j: rcv_w(j) = i} A_j
// (r_i the node's runoff weight, 1 without a steering mask). Outlets take and give nothing on.
// The MFD shares S_ji^p/Σ_k S_jk^p are the route kernel's, in the chain pair (sp_route.wgsl):
// the sweeps alternate the area pair only (bind group 2), so the pair's buffers stay in order.

// The share of its drainage node j sends its neighbour in direction k.
fn share(j: u32, k: u32) -> f32 {
    if (k < 4u) { return bitcast<f32>(c_src[j][k]); }
    return bitcast<f32>(c_dst[j][k - 4u]);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    let x = i32(gid.x);
    let y = i32(gid.y);
    let d8 = (P.flags & 1u) != 0u;
    var a = nodes[i].runoff;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        if (j < 0) { continue; }
        if (d8) {
            if (rcv_w(route[j].code) == 7u - k) { a = a + a_src[j]; }
        } else {
            let q = share(u32(j), 7u - k);
            if (q > 0.0) { a = a + q * a_src[j]; }
        }
    }
    a_dst[i] = a;
}
