// Stream power, step 5: hillslope diffusion ∂h/∂t = ∇·(κ∇h), one explicit substep of the
// 5-point scheme, h'_i = h_i + r·Σ_faces c_f·(h_j − h_i) with r = κ·Δt_sub/Δx² and
// c_f = 2·c_i·c_j/(c_i + c_j) (the CPU's harmonic face; r·max c ≤ 0.2 keeps it monotone).
// Outlets are fixed values (a sea node at the sea surface max(h, sea)), walls and drain edges
// have no face beyond the map, wraps are periodic. Losses and gains are booked per node; their
// difference is what the outlets took (booked as lost).

const CARD = array<u32, 4>(1u, 3u, 4u, 6u);

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let hi = h_src[i];
        let nd = nodes[i];
        var out = hi;
        if ((nd.flags & OUTLET) == 0u) {
            let x = i32(gid.x);
            let y = i32(gid.y);
            var fl = 0.0;
            for (var q = 0u; q < 4u; q = q + 1u) {
                let j = nb(x, y, CARD[q]);
                if (j < 0) { continue; }
                let nj = nodes[j];
                var hj = h_src[j];
                if ((nj.flags & SEA) != 0u && has_sea()) { hj = max(hj, P.sea); }
                let cs = nd.c + nj.c;
                let face = select(0.0, 2.0 * nd.c * nj.c / cs, cs > 0.0);
                fl = fl + face * (hj - hi);
            }
            out = hi + P.r_diff * fl;
            let d = out - hi;
            if (d != 0.0) {
                maps[i] = maps[i] + vec2<f32>(pos(-d), pos(d));
                acc = vec4<f32>(pos(-d), pos(d), pos(-d) - pos(d), 0.0);
            }
        }
        h_dst[i] = out;
    }
    book(lid, wg, acc);
}
