// Step 2 (sweep A): outflow flux through the four virtual pipes of every node.
//   f_k ← max(0, f_k + Δt·A·g·Δh_k / l),  Δh_k = (b + d) − (b_k + d_k)
//   K = min(1, d·lx·ly / (Σ_k f_k·Δt)),  f_k ← K·f_k
// Beyond a drain the terrain continues linearly (2b − b_opposite) with no water; walls are shut.
// A sea node (b < sea) has no outflow: the sea is a reservoir at a fixed level.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> d: array<f32>;
@group(0) @binding(3) var<storage, read_write> flux: array<vec4<f32>>;

const DX = array<i32, 4>(-1, 1, 0, 0);
const DY = array<i32, 4>(0, 0, -1, 1);

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let x = i32(gid.x);
    let y = i32(gid.y);
    let i = gid.y * P.w + gid.x;
    let bc = b[i];
    let dc = d[i];
    let hc = bc + dc;
    let f = flux[i];
    let fo = array<f32, 4>(f.x, f.y, f.z, f.w);
    var o = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
    var sum = 0.0;
    let shut = is_sea(bc);
    for (var j = 0; j < 4; j = j + 1) {
        let nb = node(x, y, DX[j], DY[j]);
        var hn = 0.0;
        var open = true;
        if (nb >= 0) {
            hn = b[nb] + d[nb];
        } else if (nb == NB_WALL) {
            open = false;
        } else {
            let op = node(x, y, -DX[j], -DY[j]);
            hn = bc;
            if (op >= 0) { hn = 2.0 * bc - b[op]; }
        }
        let v = fmin(pos(fo[j] + P.kflux * (hc - hn)), FLUX_MAX);
        o[j] = select(0.0, v, open && !shut);
        sum = sum + o[j];
    }
    let cap = dc * P.area_dt;
    let k = select(1.0, cap / sum, sum > cap);
    flux[i] = vec4<f32>(o[0] * k, o[1] * k, o[2] * k, o[3] * k);
}
