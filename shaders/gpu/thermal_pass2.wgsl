// Thermal erosion, pass 2 ("slippage flux → apply"): flux(i→j) = s_i·e(i→j)·q_j, gathered so
// each node writes only itself (double buffered, race-free, conservative):
//   h_i' = h_i − s_i·Σ_j e(i→j)·q_j + q_i·Σ_j s_j·e(j→i)
// Material sliding across a drain is booked as lost; eroded/deposited go to the books and maps.
// The talus drop of a pair is pass 1's (`talus_pair`: underwater below the sea).

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> hgt: array<f32>;
@group(0) @binding(2) var<storage, read> sq: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> h_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> maps: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> books: array<vec2<f32>>;

const DX = array<i32, 8>(-1, 1, 0, 0, -1, 1, -1, 1);
const DY = array<i32, 8>(0, 0, -1, 1, -1, -1, 1, 1);

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let x = i32(gid.x);
        let y = i32(gid.y);
        let i = gid.y * P.w + gid.x;
        let c = hgt[i];
        let own = sq[i];
        var out = 0.0;
        var inn = 0.0;
        var lost = 0.0;
        for (var j = 0; j < 8; j = j + 1) {
            let t = select(P.t_diag, P.t_card, j < 4);
            let o = node(x, y, DX[j], DY[j]);
            if (o >= 0) {
                let hn = hgt[o];
                let diff = c - hn;
                let tp = talus_pair(j, c, hn);
                let eo = pos(diff - tp);
                let ei = pos(-diff - tp);
                let nsq = sq[o];
                out = out + eo * nsq.y;
                inn = inn + nsq.x * ei;
            } else if (o == NB_OUT) {
                let op = node(x, y, -DX[j], -DY[j]);
                var vh = c;
                if (op >= 0) { vh = 2.0 * c - hgt[op]; }
                let eo = pos((c - vh) - t);
                out = out + eo;
                lost = lost + own.x * eo;
            }
        }
        let hn = c - own.x * out + own.y * inn;
        h_out[i] = hn;
        let dh = hn - c;
        let m = maps[i];
        maps[i] = vec2<f32>(m.x + pos(-dh), m.y + pos(dh));
        acc = vec4<f32>(pos(-dh), pos(dh), lost, 0.0);
    }
    let t = wg_sum(lid, acc);
    if (lid == 0u) {
        let g = group_index(wg);
        let G = P.groups;
        books[SLOT_ERODED * G + g] = df_add(books[SLOT_ERODED * G + g], t.x);
        books[SLOT_DEPOSITED * G + g] = df_add(books[SLOT_DEPOSITED * G + g], t.y);
        books[SLOT_TH_LOST * G + g] = df_add(books[SLOT_TH_LOST * G + g], t.z);
    }
}
