// Stream power, the depression-filled surface W (after Planchon & Darboux 2001): the lowest
// surface over h that drains every node to an outlet with a step of at least ε_i = ε(h_i):
//   W_i = max(h_i, min_j W_j + ε_i),    W = h on outlets and on the anchor.
//
// A step finds it in two parts:
// 1. `tree_*`: the same equation along last step's drainage tree (each node's rcv_w), where it
//    is a max-plus recurrence W_i = max(h_i, W_r + ε_i): f_i(x) = max(c_i, x + d_i) compose as
//    (c_i, d_i)∘(c_p, d_p) = (max(c_i, c_p + d_i), d_i + d_p), solved exactly by pointer jumping
//    in ⌈log₂ N⌉+1 rounds (a root is the constant c: d = −∞). A path's value is never below the
//    fill, so this is an upper bound, tight wherever the drainage kept its course. A record whose
//    pointer reached a root (d = −∞) no longer changes, so rounds stop once none is left
//    (`tree_jump_flag`, sp_rounds.wgsl): the same result in ⌈log₂ depth⌉ rounds;
// 2. `main`: Jacobi sweeps of the equation itself, which lower W one node further per sweep
//    where a better course opened (the warm-up runs them alone from W = +∞).

fn root(c: f32, i: u32) -> vec4<u32> {
    return vec4<u32>(bitcast<u32>(c), bitcast<u32>(-BIG), i, 0u);
}

@compute @workgroup_size(16, 16)
fn tree_init(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    clear_live(i);
    let h0 = route[i].h0;
    let rw = rcv_w(route[i].code);
    if ((nodes[i].flags & (OUTLET | ANCHOR)) != 0u) {
        c_src[i] = root(h0, i);
    } else if (rw == NONE) {
        // No course last step: the warm start (last W moved by the node's own change).
        c_src[i] = root(max(h0, w_src[i]), i);
    } else {
        let j = u32(nb(i32(gid.x), i32(gid.y), rw));
        c_src[i] = vec4<u32>(bitcast<u32>(h0), bitcast<u32>(eps(h0)), j, 0u);
    }
}

// One round at node i: its record composed with its pointer's.
fn tree_round(i: u32) -> vec4<u32> {
    var c = c_src[i];
    if (c.z != i) {
        let q = c_src[c.z];
        let d = bitcast<f32>(c.y);
        c = vec4<u32>(bitcast<u32>(max(bitcast<f32>(c.x), bitcast<f32>(q.x) + d)),
                      bitcast<u32>(max(d + bitcast<f32>(q.y), -BIG)), q.z, 0u);
    }
    c_dst[i] = c;
    return c;
}

@compute @workgroup_size(16, 16)
fn tree_jump(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    tree_round(gid.y * P.w + gid.x);
}

// tree_jump, flagging a record that will change in the next round: one not yet at a root.
@compute @workgroup_size(16, 16)
fn tree_jump_flag(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    var live = false;
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let c = tree_round(i);
        live = c.z != i && bitcast<f32>(c.y) > -BIG;
    }
    flag_live(lid, live);
}

@compute @workgroup_size(16, 16)
fn tree_store(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    w_src[i] = bitcast<f32>(c_src[i].x);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    // The height after uplift: h itself until the incision (route's h0 holds the same value,
    // in a 32-byte record). The sweeps swap the fill pair alone (bind group 3), so h_src is
    // the current heights at either parity.
    let hi = h_src[i];
    if ((nodes[i].flags & (OUTLET | ANCHOR)) != 0u) {
        w_dst[i] = hi;
        return;
    }
    let x = i32(gid.x);
    let y = i32(gid.y);
    var lo = BIG;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        if (j >= 0) { lo = min(lo, w_src[j]); }
    }
    w_dst[i] = max(hi, min(lo + eps(hi), BIG));
}
