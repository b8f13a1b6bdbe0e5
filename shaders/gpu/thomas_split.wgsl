// The tridiagonal line solve of the implicit diffusion step split by direction, for the
// stream-power model (sp_diffuse.wgsl) and the build's detail pass (refine_sp.wgsl); src/gpu
// prepends it to both. Each line, the nodes first + k·stride (k < len), solves
// h'_k + a_{k−½}(h'_k − h'_{k−1}) + a_{k+½}(h'_k − h'_{k+1}) = h_k, a fixed node keeping its
// held value, by the Thomas algorithm split so a long line is not one invocation's 2·len
// dependent steps (the partition method: Wang 1981, "A parallel method for tridiagonal
// equations", ACM TOMS 7(2); the "separator" form of Polizzi & Sameh's SPIKE). The line is cut
// into blocks of SPLIT_SEG nodes; the last node of every full block is a separator `z_s`, the
// others are the interior of segment `s` between separators `s−1` and `s`.
//
//   1. split_segment (one invocation per line and segment): the segment's own rows, with the
//      coupling of its first row to `z_{s−1}` and of its last row to `z_s` moved to the right
//      side, solved by the Thomas algorithm for three right sides at once:
//        M·Y = rhs,  M·V = −sub_first·e_first,  M·W = −sup_last·e_last,
//      so every interior node is x_k = Y_k + V_k·z_{s−1} + W_k·z_s.
//   2. split_separators (one invocation per line): each separator's own row, with its
//      neighbours written as above, is tridiagonal in the separators alone,
//        sub_z·V_L·z_{s−1} + (dia_z + sub_z·W_L + sup_z·V_F)·z_s + sup_z·W_F·z_{s+1}
//          = rhs_z − sub_z·Y_L − sup_z·Y_F
//      (L: the last interior node before z_s, F: the first after it), solved by the Thomas
//      algorithm over len / SPLIT_SEG separators.
//   3. split_fill (one invocation per node): x_k = Y_k + V_k·z_{s−1} + W_k·z_s.
//
// The matrix is the diffusion's (diagonally dominant), so every segment's block is regular and
// the split is exact up to f32 rounding; the dependent chain of a line falls from 2·len steps to
// 2·SPLIT_SEG + 2·len/SPLIT_SEG. The including shader defines, for `dir` (its own tag of the
// line's direction):
//   line_rhs(i, dir) -> f32         the height the line starts from;
//   line_fixed(i) -> bool            whether node i is a fixed value (an outlet);
//   line_held(i, v) -> f32           a fixed node's value, v its height;
//   line_face(a, b) -> f32           the face coefficient a = r·c_face between neighbours a and b;
//   line_write(i, v, dir)           takes the solved height v of node i;
//   split_keep(i, v: vec4<f32>)     stores four floats of scratch for node i;
//   split_kept(i) -> vec4<f32>       reads them back.
// Interior nodes keep (c′, Y′, V′, W′) of the forward sweep, then (Y, V, W, 0); separators keep
// (c″, R″, z, 0) of theirs.

const SPLIT_SEG: u32 = 64u;

// Row k of a line (first + k·stride, len nodes): (sub, dia, sup, rhs).
fn split_row(first: u32, stride: u32, len: u32, k: u32, dir: u32) -> vec4<f32> {
    let i = first + k * stride;
    var rhs = line_rhs(i, dir);
    if (line_fixed(i)) {
        return vec4<f32>(0.0, 1.0, 0.0, line_held(i, rhs));
    }
    var left = 0.0;
    var right = 0.0;
    if (k > 0u) { left = line_face(i - stride, i); }
    if (k + 1u < len) { right = line_face(i, i + stride); }
    return vec4<f32>(-left, 1.0 + left + right, -right, rhs);
}

fn split_is_separator(k: u32) -> bool { return k % SPLIT_SEG == SPLIT_SEG - 1u; }

// Step 1 for segment `s` of the line.
fn split_segment(first: u32, stride: u32, len: u32, s: u32, dir: u32) {
    let k0 = s * SPLIT_SEG;
    if (k0 >= len) { return; }
    let k1 = min(k0 + SPLIT_SEG - 1u, len);
    var c_prev = 0.0;
    var d_prev = vec3<f32>(0.0);
    for (var k = k0; k < k1; k = k + 1u) {
        let r = split_row(first, stride, len, k, dir);
        var sub = r.x;
        var sup = r.z;
        var rhs = vec3<f32>(r.w, 0.0, 0.0);
        if (k == k0) { rhs.y = -sub; sub = 0.0; }
        if (k + 1u == k1) { rhs.z = -sup; sup = 0.0; }
        let b = r.y - sub * c_prev;
        c_prev = sup / b;
        d_prev = (rhs - sub * d_prev) / b;
        split_keep(first + k * stride, vec4<f32>(c_prev, d_prev));
    }
    var next = vec3<f32>(0.0);
    for (var k = k1; k > k0; k = k - 1u) {
        let i = first + (k - 1u) * stride;
        let cd = split_kept(i);
        var v = cd.yzw;
        if (k < k1) { v = v - cd.x * next; }
        next = v;
        split_keep(i, vec4<f32>(v, 0.0));
    }
}

// Step 2 for the whole line.
fn split_separators(first: u32, stride: u32, len: u32, dir: u32) {
    let ns = len / SPLIT_SEG;
    var c_prev = 0.0;
    var d_prev = 0.0;
    for (var s = 0u; s < ns; s = s + 1u) {
        let kz = s * SPLIT_SEG + SPLIT_SEG - 1u;
        let r = split_row(first, stride, len, kz, dir);
        let before = split_kept(first + (kz - 1u) * stride);
        var after = vec4<f32>(0.0);
        if (kz + 1u < len) { after = split_kept(first + (kz + 1u) * stride); }
        let sub = r.x * before.y;
        let dia = r.y + r.x * before.z + r.z * after.y;
        let sup = r.z * after.z;
        let rhs = r.w - r.x * before.x - r.z * after.x;
        let b = dia - sub * c_prev;
        c_prev = sup / b;
        d_prev = (rhs - sub * d_prev) / b;
        split_keep(first + kz * stride, vec4<f32>(c_prev, d_prev, 0.0, 0.0));
    }
    var next = 0.0;
    for (var s = ns; s > 0u; s = s - 1u) {
        let kz = (s - 1u) * SPLIT_SEG + SPLIT_SEG - 1u;
        let i = first + kz * stride;
        let cd = split_kept(i);
        var z = cd.y;
        if (s < ns) { z = z - cd.x * next; }
        next = z;
        split_keep(i, vec4<f32>(cd.x, cd.y, z, 0.0));
        line_write(i, z, dir);
    }
}

// Step 3 for node k of the line.
fn split_fill(first: u32, stride: u32, len: u32, k: u32, dir: u32) {
    if (k >= len || split_is_separator(k)) { return; }
    let s = k / SPLIT_SEG;
    let i = first + k * stride;
    let ywv = split_kept(i);
    var zl = 0.0;
    var zr = 0.0;
    if (s > 0u) { zl = split_kept(first + (s * SPLIT_SEG - 1u) * stride).z; }
    if (s * SPLIT_SEG + SPLIT_SEG - 1u < len) { zr = split_kept(first + (s * SPLIT_SEG + SPLIT_SEG - 1u) * stride).z; }
    line_write(i, ywv.x + ywv.y * zl + ywv.z * zr, dir);
}
