// The Thomas algorithm along one line of the map, the nodes first + k·stride (k < len), for the
// implicit diffusion step split by direction: each line solves
// h'_k + a_{k−½}(h'_k − h'_{k−1}) + a_{k+½}(h'_k − h'_{k+1}) = h_k, a fixed node keeping its
// held value, one line per invocation. Used by the build's detail pass (refine_sp.wgsl, which
// src/gpu prepends it to); the stream-power model solves the same lines split into segments
// (thomas_split.wgsl, with the same hooks). The including shader defines, for `dir` (its
// own tag of the line's direction):
//   line_rhs(i, dir) -> f32      the height the line starts from;
//   line_fixed(i) -> bool         whether node i is a fixed value (an outlet);
//   line_held(i, v) -> f32        a fixed node's value, v its height;
//   line_face(a, b) -> f32        the face coefficient a = r·c_face between neighbours a and b;
//   line_keep(i, c, d)            stores the forward sweep's c′ and d′ of node i;
//   line_kept(i) -> vec2<f32>     reads them back as (c′, d′);
//   line_write(i, v, dir)        takes the solved height v of node i.

fn solve_line(first: u32, stride: u32, len: u32, dir: u32) {
    // Forward: c′_k = sup_k / b_k, d′_k = (rhs_k − sub_k·d′_{k−1}) / b_k, b_k = dia_k − sub_k·c′_{k−1}.
    var left = 0.0;
    var c_prev = 0.0;
    var d_prev = 0.0;
    for (var k = 0u; k < len; k = k + 1u) {
        let i = first + k * stride;
        var right = 0.0;
        if (k + 1u < len) { right = line_face(i, i + stride); }
        var rhs = line_rhs(i, dir);
        var dia = 1.0;
        var sub = 0.0;
        var sup = 0.0;
        if (line_fixed(i)) {
            rhs = line_held(i, rhs);
        } else {
            dia = 1.0 + left + right;
            sub = -left;
            sup = -right;
        }
        let b = dia - sub * c_prev;
        c_prev = sup / b;
        d_prev = (rhs - sub * d_prev) / b;
        line_keep(i, c_prev, d_prev);
        left = right;
    }
    // Backward: x_k = d′_k − c′_k·x_{k+1}.
    var next = 0.0;
    for (var k = len; k > 0u; k = k - 1u) {
        let i = first + (k - 1u) * stride;
        let cd = line_kept(i);
        var v = cd.y;
        if (k < len) { v = v - cd.x * next; }
        next = v;
        line_write(i, v, dir);
    }
}
