// Stream power, step 1: uplift h ← h + U·Δt (0 on outlets), booked as uplift and deposit; the
// fill's warm start W ← max(h, W + (h − h_last)), h_last the height after the last step's uplift
// (outlets and the anchor: W = h): a node that drained keeps W = h however much it was cut, a
// lake keeps its level moved by its own change, and the sweeps settle the rest.

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let nd = nodes[i];
        let old = h_src[i];
        let hn = old + nd.up;
        let ch = hn - old;
        if (ch != 0.0) {
            h_src[i] = hn;
            maps[i].y = maps[i].y + ch;
        }
        acc = vec4<f32>(0.0, ch, 0.0, ch);
        let last = route[i].h0;
        route[i].h0 = hn;
        if ((nd.flags & (OUTLET | ANCHOR)) != 0u) {
            w_src[i] = hn;
        } else {
            w_src[i] = max(hn, w_src[i] + (hn - last));
        }
    }
    book(lid, wg, acc);
}
