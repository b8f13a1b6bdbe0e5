// Thermal erosion, pass 1 (thermal.rs; Musgrave et al. 1989 in the form of Št'ava et al. 2008,
// seed 003 "max slippage"): over the 8 neighbours j (talus drop T·Δ_ij),
//   e(i→j) = max(0, h_i − h_j − T·Δ_ij),  E_i = Σ_j e(i→j),  M_i = max_j e(i→j)
//   s_i = a_i·M_i/(2·E_i)                       donor factor, a_i = min(1, rate·hardness_i)
//   q_i = min(1, max_j e(j→i)/(a_max·Σ_j e(j→i)))   receiver limit
// A drain neighbour is the terrain continued linearly (2h_i − h_opposite); walls do not exist.
// With a sea (thermal alone, flags bit 4) a pair of nodes both at or below it uses the underwater
// talus drop W·Δ_ij instead of T·Δ_ij (`talus_pair`; the same number on both sides of a pair).

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> hgt: array<f32>;
@group(0) @binding(2) var<storage, read> inputs: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> sq: array<vec2<f32>>;

const DX = array<i32, 8>(-1, 1, 0, 0, -1, 1, -1, 1);
const DY = array<i32, 8>(0, 0, -1, 1, -1, -1, 1, 1);

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let x = i32(gid.x);
    let y = i32(gid.y);
    let i = gid.y * P.w + gid.x;
    let c = hgt[i];
    var es = 0.0;
    var em = 0.0;
    var isum = 0.0;
    var im = 0.0;
    for (var j = 0; j < 8; j = j + 1) {
        let t = select(P.t_diag, P.t_card, j < 4);
        let o = node(x, y, DX[j], DY[j]);
        if (o >= 0) {
            let hn = hgt[o];
            let diff = c - hn;
            let tp = talus_pair(j, c, hn);
            let eo = pos(diff - tp);
            let ei = pos(-diff - tp);
            es = es + eo;
            em = fmax(em, eo);
            isum = isum + ei;
            im = fmax(im, ei);
        } else if (o == NB_OUT) {
            let op = node(x, y, -DX[j], -DY[j]);
            var vh = c;
            if (op >= 0) { vh = 2.0 * c - hgt[op]; }
            let eo = pos((c - vh) - t);
            es = es + eo;
            em = fmax(em, eo);
        }
    }
    var a = P.th_rate;
    if ((P.flags & 1u) != 0u) { a = fmin(P.th_rate * inputs[i].x, 1.0); }
    let sv = select(0.0, a * em / (2.0 * es), es > 0.0);
    let qv = select(1.0, fmin(im * P.th_inv_amax / isum, 1.0), isum > 0.0);
    sq[i] = vec2<f32>(sv, qv);
}
