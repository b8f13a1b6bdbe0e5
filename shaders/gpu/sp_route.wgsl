// Stream power, routing of one step (on the uplifted heights h and the filled surface W):
// - rcv_h: the steepest lower neighbour on h, the receiver incision cuts toward (the CPU's D8);
// - rcv_w: the steepest lower neighbour on W; with MFD (Freeman 1991), the share S_k^p/Σ S^p
//   of its drainage the node sends each neighbour k lower on W, S = (W_i − W_j)/d (0 to the
//   others, and all 0 at an outlet or with no lower neighbour), into the chain pair (k < 4: the
//   first buffer's lanes, else the second's; free until the incision), which the area sweeps
//   read;
// - carry: where this node's suspended sediment goes (rcv_h; a lake-bottom node or, without lake
//   deposition, a lake node: rcv_w across the lake; a sea node within SEA_SPREAD nodes of the
//   land: SPREAD, shared equally among its neighbours further from the land, so a river's load
//   fans out from its mouth ring by ring and fills the nearest sea first; a sea node further
//   out, a drain or a sink: LOSE);
// - room: what the node may take this step: a near sea node up to the shelf (sea − 0.5 m); a
//   lake node (below W) a share α of its depth, min(W, b + α·(W − b)) − h with b = max(h, lo)
//   and lo its lowest neighbour (a lake-bottom node, with no lower neighbour, fills toward its
//   rim), so the load settles on its way down to the bottom, most where the lake is deepest.

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    let x = i32(gid.x);
    let y = i32(gid.y);
    let hi = h_src[i];
    let wi = w_src[i];
    let f = nodes[i].flags;
    var rh = NONE;
    var sh = 0.0;
    var rw = NONE;
    var sw = 0.0;
    var norm = 0.0;
    var lo = BIG;
    var pw = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        if (j < 0) { continue; }
        let d = inv_dist(k);
        let hj = h_src[j];
        lo = min(lo, hj);
        let s = (hi - hj) * d;
        if (s > sh) { sh = s; rh = k; }
        let t = (wi - w_src[j]) * d;
        if (t > 0.0) {
            pw[k] = pow(t, P.mfd_p);
            norm = norm + pw[k];
            if (t > sw) { sw = t; rw = k; }
        }
    }
    var room = 0.0;
    var cy = rh;
    if ((f & OUTLET) != 0u) {
        rh = NONE;
        rw = NONE;
        norm = 0.0;
        cy = LOSE;
        if ((f & SEA) != 0u && has_sea() && (f & FAR_SEA) == 0u && seaward(f) > 0u) {
            room = pos(P.shelf - hi);
            cy = SPREAD;
        }
    } else if ((f & ANCHOR) != 0u) {
        // The terminal basin of a map without outlets keeps everything that reaches it.
        room = BIG;
        cy = NONE;
    } else {
        let lake = wi > hi;
        let keep = (P.flags & 8u) != 0u;
        if (keep && lake) {
            // Every node under the lake's surface takes a share α of its depth there, a pit
            // measured from its lowest neighbour: the load settles on its way down to the
            // bottom, most where the lake is deepest.
            let base = max(lo, hi);
            room = pos(min(wi, base + P.lake_fill * (wi - base)) - hi);
        }
        if (rh == NONE) {
            cy = rw;
        } else if (lake && !keep && rw != NONE) {
            cy = rw;
        }
    }
    route[i].code = f32(rh + 16u * rw + 256u * cy);
    if ((P.flags & 1u) == 0u) {
        let inv = select(0.0, 1.0 / norm, norm > 0.0);
        // A share is 0 where the node gives nothing on (an outlet, no lower neighbour).
        var sh8 = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        if (inv > 0.0) {
            for (var k = 0u; k < 8u; k = k + 1u) { sh8[k] = pw[k] * inv; }
        }
        c_src[i] = bitcast<vec4<u32>>(vec4<f32>(sh8[0], sh8[1], sh8[2], sh8[3]));
        c_dst[i] = bitcast<vec4<u32>>(vec4<f32>(sh8[4], sh8[5], sh8[6], sh8[7]));
    }
    route[i].room = room;
    route[i].w = wi;
    route[i].dep = 0.0;
    route[i].lost = 0.0;
}
