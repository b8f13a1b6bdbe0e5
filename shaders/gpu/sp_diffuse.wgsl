// Stream power, step 5: hillslope diffusion ∂h/∂t = ∇·(κ∇h). On a map with a wrap edge: one
// explicit substep of the 5-point scheme (`main`, run in substeps),
// h'_i = h_i + r·Σ_faces c_f·(h_j − h_i) with r = κ·Δt_sub/Δx² and c_f = 2·c_i·c_j/(c_i + c_j)
// (the CPU's harmonic face; r·max c ≤ 0.2 keeps it monotone).
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

// ---- Implicit diffusion (the default; maps without a wrap edge) ----
// The CPU model's step (core/erosion/stream_power/diffusion.rs): one backward-Euler step over
// the whole Δt, split by direction (LOD splitting), rows then columns. Each line solves
// h'_k + a_{k−½}(h'_k − h'_{k−1}) + a_{k+½}(h'_k − h'_{k+1}) = h_k, a = r·2c_a c_b/(c_a + c_b)
// with r = κ·Δt/Δx² (P.r_diff), by the Thomas algorithm split into segments of 64 nodes
// (thomas_split.wgsl: segments, then the separators between them, then every node). Outlets are
// fixed values (a sea node at the sea surface max(h, sea)) and keep their own height. Rows read
// h_src and write h_dst, columns solve h_dst in place, and `settle` books h_dst − h_src per node
// and copies it back, so the step ends in h_src as the explicit substeps do. The split solve's
// four floats per node are kept in the incision chain's first buffer (free after `apply`).

// The hooks of thomas_split.wgsl: rows (`ROWS`) read h_src and write h_dst, columns
// (`COLS`) solve h_dst in place.
const ROWS: u32 = 0u;
const COLS: u32 = 1u;

fn line_face(a: u32, b: u32) -> f32 {
    let ca = nodes[a].c;
    let cb = nodes[b].c;
    let s = ca + cb;
    return P.r_diff * select(0.0, 2.0 * ca * cb / s, s > 0.0);
}

fn line_rhs(i: u32, dir: u32) -> f32 {
    if (dir == ROWS) { return h_src[i]; }
    return h_dst[i];
}

fn line_fixed(i: u32) -> bool { return (nodes[i].flags & OUTLET) != 0u; }

fn line_held(i: u32, v: f32) -> f32 {
    if ((nodes[i].flags & SEA) != 0u && has_sea()) { return max(v, P.sea); }
    return v;
}

fn split_keep(i: u32, v: vec4<f32>) { c_src[i] = bitcast<vec4<u32>>(v); }

fn split_kept(i: u32) -> vec4<f32> { return bitcast<vec4<f32>>(c_src[i]); }

fn line_write(i: u32, v: f32, dir: u32) {
    // Outlets keep their own height.
    if (!line_fixed(i) && abs(v) < 3.4e38) {
        h_dst[i] = v;
    } else if (dir == ROWS) {
        h_dst[i] = h_src[i];
    }
}

// Each direction in thomas_split.wgsl's three steps: segments (x: the line, y: its segment),
// separators (x: the line), then every node (the map's 16×16 tiles).
@compute @workgroup_size(64)
fn rows_segments(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.h) { return; }
    split_segment(gid.x * P.w, 1u, P.w, gid.y, ROWS);
}

@compute @workgroup_size(64)
fn rows_separators(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.h) { return; }
    split_separators(gid.x * P.w, 1u, P.w, ROWS);
}

@compute @workgroup_size(16, 16)
fn rows_fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.y >= P.h) { return; }
    split_fill(gid.y * P.w, 1u, P.w, gid.x, ROWS);
}

@compute @workgroup_size(64)
fn cols_segments(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w) { return; }
    split_segment(gid.x, P.w, P.h, gid.y, COLS);
}

@compute @workgroup_size(64)
fn cols_separators(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w) { return; }
    split_separators(gid.x, P.w, P.h, COLS);
}

@compute @workgroup_size(16, 16)
fn cols_fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w) { return; }
    split_fill(gid.x, P.w, P.h, gid.y, COLS);
}

@compute @workgroup_size(16, 16)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(local_invocation_index) lid: u32,
          @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let old = h_src[i];
        let now = h_dst[i];
        let d = now - old;
        if ((nodes[i].flags & OUTLET) == 0u && d != 0.0) {
            maps[i] = maps[i] + vec2<f32>(pos(-d), pos(d));
            acc = vec4<f32>(pos(-d), pos(d), pos(-d) - pos(d), 0.0);
        }
        h_src[i] = now;
    }
    book(lid, wg, acc);
}
