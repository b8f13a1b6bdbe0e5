// Stream power, step 3: implicit incision toward the receiver's *new* height (Braun & Willett
// 2013), F = K·c_i·Δt·A_i^m / d^n, δ₀ = h_i − h'_r:
//   n = 1: h'_i = (h_i + F·h'_r)/(1 + F), a linear recurrence along the receiver tree,
//          h'_i = a_i + b_i·h'_{r(i)}, a_i = h_i/(1+F), b_i = F/(1+F), solved exactly by pointer
//          jumping (`jump`, ⌈log₂ n⌉ rounds: (a, b, p) ← (a + b·a_p, b·b_p, p_p)); a record
//          with b = 0 (its chain reached a root) no longer changes, so rounds stop once none is
//          left (`jump_flag`, sp_rounds.wgsl): the same result in ⌈log₂ depth⌉ rounds;
//   n ≠ 1: δ − δ₀ + F·δ^n = 0 per node (Newton, kept in [0, δ₀] by bisection) against the
//          receiver's last iterate (`newton`, Jacobi sweeps).
// Roots of the chains (b = 0) keep their height: outlets (a sea node stands at the sea
// surface), lake nodes (W > h), nodes without a lower neighbour. `apply` clamps
// h' to [h'_r, h] and books the erosion, which goes into suspension.

fn am(a: f32) -> f32 {
    if (P.m == 0.0) { return 1.0; }
    return select(0.0, pow(a, P.m), a > 0.0);
}

fn pack(a: f32, b: f32, p: u32, h0: f32) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(a), bitcast<u32>(b), p, bitcast<u32>(h0));
}

@compute @workgroup_size(16, 16)
fn init(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    clear_live(i);
    let h0 = h_src[i];
    let f = nodes[i].flags;
    let r = rcv_h(route[i].code);
    var a = h0;
    var b = 0.0;
    var p = i;
    if ((f & OUTLET) != 0u) {
        if ((f & SEA) != 0u && has_sea()) { a = max(h0, P.sea); }
    } else if (r != NONE && !(route[i].w > h0)) {
        let j = u32(nb(i32(gid.x), i32(gid.y), r));
        let F = P.kdt * nodes[i].c * am(a_src[i]) * select(P.inv_dn_card, P.inv_dn_diag, is_diag(r));
        if (F > 0.0 && F < BIG) {
            p = j;
            if ((P.flags & 4u) != 0u) {
                a = h0 / (1.0 + F);
                b = F / (1.0 + F);
            } else {
                b = F;
            }
        }
    }
    c_src[i] = pack(a, b, p, h0);
}

// One round at node i: its record composed with its pointer's.
fn jump_round(i: u32) -> vec4<u32> {
    let c = c_src[i];
    var a = bitcast<f32>(c.x);
    var b = bitcast<f32>(c.y);
    var p = c.z;
    if (p != i && b != 0.0) {
        let q = c_src[p];
        a = a + b * bitcast<f32>(q.x);
        b = b * bitcast<f32>(q.y);
        p = q.z;
    }
    let out = pack(a, b, p, bitcast<f32>(c.w));
    c_dst[i] = out;
    return out;
}

@compute @workgroup_size(16, 16)
fn jump(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    jump_round(gid.y * P.w + gid.x);
}

// jump, flagging a record that will change in the next round (b ≠ 0, not a root).
@compute @workgroup_size(16, 16)
fn jump_flag(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    var live = false;
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let c = jump_round(i);
        live = c.z != i && bitcast<f32>(c.y) != 0.0;
    }
    flag_live(lid, live);
}

// `solve_incision` (n ≠ 1) is in incision.wgsl.

@compute @workgroup_size(16, 16)
fn newton(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    let c = c_src[i];
    let h0 = bitcast<f32>(c.w);
    var x = bitcast<f32>(c.x);
    if (c.z != i) {
        let hr = bitcast<f32>(c_src[c.z].x);
        let d0 = h0 - hr;
        x = h0;
        if (d0 > 0.0) { x = clamp(hr + solve_incision(d0, bitcast<f32>(c.y), P.n), hr, h0); }
    }
    c_dst[i] = vec4<u32>(bitcast<u32>(x), c.y, c.z, c.w);
}

@compute @workgroup_size(16, 16)
fn apply(@builtin(global_invocation_id) gid: vec3<u32>,
         @builtin(local_invocation_index) lid: u32,
         @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let c = c_src[i];
        // Only nodes that started a chain erode (outlets, lakes and roots point to themselves).
        if (c.z != i) {
            let h0 = h_src[i];
            let j = u32(nb(i32(gid.x), i32(gid.y), rcv_h(route[i].code)));
            let hr = bitcast<f32>(c_src[j].x);
            let hn = min(h0, max(bitcast<f32>(c.x), hr));
            let e = h0 - hn;
            if (e > 0.0) {
                h_src[i] = hn;
                maps[i].x = maps[i].x + e;
                s_src[i] = s_src[i] + e;
                acc.x = e;
            }
        }
    }
    book(lid, wg, acc);
}
