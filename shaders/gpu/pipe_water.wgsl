// Steps 3, 4 and 7 (sweep B), fused: one read of the fluxes gives the new depth, the velocity,
// the erosion/deposition and the evaporation, and the next step's water increment is added.
//   d2 = d1 + Δt·(Σ f_in − Σ f_out)/(lx·ly),  d̄ = (d1 + d2)/2
//   u = (f_R(x−1) − f_L + f_R − f_L(x+1)) / (2·ly·d̄)   (v likewise), clamped to lx/Δt
//   C = Kc·max(sin α, min_tilt)·|v|_f·min(1, d2/max_depth)   (isotropic upwind tilt, RMS face speed)
//   C > s: Δb = −Ks·(C − s)·hardness, else Δb = Kd·(s − C), erosion at most b − sea;  s1 = s − Δb
//   d ← d2·(1 − Ke·Δt) + Δt·r
// At a sea node (b < sea, pipe.rs "The sea"): no erosion, everything suspended settles up to the
// sea level (Δb = min(s, sea − b), b' ≤ sea), d ← sea − b', no evaporation, and the water it took
// in, d1 + Δt·Σf_in/(lx·ly) + Δt·r − (sea − b'), is booked. A shore node (b = sea) is land that
// neither erodes nor rises.
// A sink node of a steering mask (flags bit 5; its water input is marked −1): afterwards its water
// leaves, booked as the sea's intake, and its suspended sediment settles on it (the CPU's
// `drain_sinks`, run after sweep B).
// Books (per workgroup): eroded, deposited, Σs1, Σd2 (land), water drained across drains, water
// the sea (and the sinks) took in.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> b_new: array<f32>;
@group(0) @binding(3) var<storage, read_write> d: array<f32>;
@group(0) @binding(4) var<storage, read> s: array<f32>;
@group(0) @binding(5) var<storage, read> flux: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> uv: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> s1: array<f32>;
// (hardness, Δt·r) per node, read only when the flags say so.
@group(0) @binding(8) var<storage, read> inputs: array<vec2<f32>>;
// (eroded, deposited) totals per node.
@group(0) @binding(9) var<storage, read_write> maps: array<vec2<f32>>;
@group(0) @binding(10) var<storage, read_write> books: array<vec2<f32>>;

// L, R, T, B, TL, TR, BL, BR (pipe.rs DIRS8); the pipes are the first four.
const DX = array<i32, 8>(-1, 1, 0, 0, -1, 1, -1, 1);
const DY = array<i32, 8>(0, 0, -1, 1, -1, -1, 1, 1);

fn face(q: f32, inv: f32) -> f32 { return fmin(abs(q * inv), P.vmax); }

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wg: vec3<u32>) {
    var acc_a = vec4<f32>(0.0);   // eroded, deposited, Σs1, Σd2
    var drained_acc = 0.0;
    var sea_acc = 0.0;
    if (gid.x < P.w && gid.y < P.h) {
        let x = i32(gid.x);
        let y = i32(gid.y);
        let i = gid.y * P.w + gid.x;
        let bc = b[i];
        let fv = flux[i];
        let f = array<f32, 4>(fv.x, fv.y, fv.z, fv.w);
        var fin = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
        var nb_b = array<f32, 8>(bc, bc, bc, bc, bc, bc, bc, bc);
        var has = array<bool, 8>(false, false, false, false, false, false, false, false);
        var drained = 0.0;
        for (var j = 0; j < 8; j = j + 1) {
            let o = node(x, y, DX[j], DY[j]);
            if (o >= 0) {
                if (j < 4) {
                    let g = flux[o];
                    // The neighbour's flux towards us: its R for our L, its L for our R, …
                    fin[j] = select(select(select(g.z, g.w, j == 2), g.x, j == 1), g.y, j == 0);
                }
                nb_b[j] = b[o];
                has[j] = true;
            } else if (o == NB_OUT && j < 4) {
                drained = drained + f[j];
            }
        }
        // Beyond a wall or drain the tilt sees the terrain extrapolated from the opposite side.
        var nb = nb_b;
        let opp = array<i32, 8>(1, 0, 3, 2, 7, 6, 5, 4);
        for (var j = 0; j < 8; j = j + 1) {
            if (!has[j] && has[opp[j]]) { nb[j] = 2.0 * bc - nb_b[opp[j]]; }
        }
        var hard = 1.0;
        var rain = P.rain_dt;
        var sink = false;
        if ((P.flags & 3u) != 0u) {
            let inp = inputs[i];
            if ((P.flags & 1u) != 0u) { hard = inp.x; }
            if ((P.flags & 2u) != 0u) {
                sink = (P.flags & 32u) != 0u && inp.y < 0.0;
                rain = select(inp.y, 0.0, sink);
            }
        }
        let d1 = d[i];
        let sc = s[i];
        // --- water_cell ---
        let fout = f[0] + f[1] + f[2] + f[3];
        let fsum_in = fin[0] + fin[1] + fin[2] + fin[3];
        let d2 = pos(d1 + P.dt_area * (fsum_in - fout));
        let dbar = 0.5 * (d1 + d2);
        let wx = 0.5 * (fin[0] - f[0] + f[1] - fin[1]);
        let wy = 0.5 * (fin[2] - f[2] + f[3] - fin[3]);
        let inv = select(0.0, P.inv_l / dbar, dbar > DEPTH_EPS);
        let u = fmin(fmax(wx * inv, -P.vmax), P.vmax);
        let v = fmin(fmax(wy * inv, -P.vmax), P.vmax);
        // Isotropic upwind tilt: the mean of the Godunov gradients in the axis and 45° frames.
        let gx = fmax(fmax(bc - nb[0], bc - nb[1]), 0.0) * P.inv_l;
        let gy = fmax(fmax(bc - nb[2], bc - nb[3]), 0.0) * P.inv_l;
        let gp = fmax(fmax(bc - nb[4], bc - nb[7]), 0.0) * P.inv_l;
        let gq = fmax(fmax(bc - nb[5], bc - nb[6]), 0.0) * P.inv_l;
        let g2 = fmin(0.5 * (gx * gx + gy * gy) + 0.25 * (gp * gp + gq * gq), 1.0e30);
        let sn = sqrt(g2 / (1.0 + g2));
        let sin_t = select(P.min_tilt, sn, sn > P.min_tilt);
        let ul = face(fin[0] - f[0], inv);
        let ur = face(f[1] - fin[1], inv);
        let vt = face(fin[2] - f[2], inv);
        let vb = face(f[3] - fin[3], inv);
        let speed = sqrt(0.5 * (ul * ul + ur * ur + vt * vt + vb * vb));
        var lim = 1.0;
        if ((P.flags & 4u) != 0u) { lim = fmin(d2 * P.inv_max_depth, 1.0); }
        let cap = P.kc * sin_t * speed * lim;
        let diff = cap - sc;
        // Never below the sea (the base level), nothing from under water.
        let ero = fmin(P.ks * pos(diff) * hard, pos(bc - P.sea));
        let dep_land = P.kd * pos(-diff);
        // A sea node: still water, everything suspended settles, up to the sea level; a shore
        // node neither erodes nor rises.
        let sea = is_sea(bc);
        let dep = select(dep_land, fmin(sc, pos(P.sea - bc)), sea);
        let bl = bc - ero + dep;
        let bn = select(bl, fmin(bl, P.sea), is_wet(bc));
        let s1v = pos(sc + (bc - bn));
        let d_land = d2 * P.keep + rain;
        let d_sea = P.sea - bn;
        let took = (d1 - d_sea) + P.dt_area * (fsum_in - fout) + rain;
        var dn = select(d_land, d_sea, sea);
        var sea_in = select(0.0, took, sea);
        // A sink: its water leaves, its suspended sediment settles (`put`, booked as deposition).
        var bs = bn;
        var s1o = s1v;
        if (sink) {
            sea_in = sea_in + dn;
            dn = 0.0;
            if (s1v > 0.0) {
                bs = bn + s1v;
                s1o = 0.0;
            }
        }
        let put = bs - bn;
        b_new[i] = bs;
        d[i] = dn;
        uv[i] = vec2<f32>(u, v);
        s1[i] = s1o;
        let dh = bn - bc;
        let m = maps[i];
        maps[i] = vec2<f32>(m.x + pos(-dh), m.y + pos(dh) + put);
        acc_a = vec4<f32>(pos(-dh), pos(dh) + put, s1o, select(d2, 0.0, sea));
        drained_acc = drained * P.dt_area;
        sea_acc = sea_in;
    }
    let t = wg_sum(lid, acc_a);
    let t2 = wg_sum(lid, vec4<f32>(drained_acc, sea_acc, 0.0, 0.0));
    if (lid == 0u) {
        let g = group_index(wg);
        let G = P.groups;
        books[SLOT_ERODED * G + g] = df_add(books[SLOT_ERODED * G + g], t.x);
        books[SLOT_DEPOSITED * G + g] = df_add(books[SLOT_DEPOSITED * G + g], t.y);
        books[SLOT_S1 * G + g] = df_add(books[SLOT_S1 * G + g], t.z);
        books[SLOT_D2 * G + g] = df_add(books[SLOT_D2 * G + g], t.w);
        books[SLOT_DRAINED * G + g] = df_add(books[SLOT_DRAINED * G + g], t2.x);
        if ((P.flags & 40u) != 0u) {
            books[SLOT_SEA * G + g] = df_add(books[SLOT_SEA * G + g], t2.y);
        }
    }
}
