// Stream power, step 4: the eroded material, carried as a suspended load one node per sweep
// along each node's `carry` direction (sp_route.wgsl), settling where there is room:
//   settle (in place): d = min(s_i, room_i); room_i −= d; dep_i += d; s_i −= d;
//                      at a LOSE node the rest leaves the map (lost_i += s_i);
//   targets (in the sea): n_j = how many sea neighbours of j still have room; the load of a
//                      near-sea node goes to those, or, where none has, to its neighbours further
//                      from the land (a shelf fills nearest first and grows outward);
//   carry (gather):    s'_i = [s_i if the node keeps its load] + Σ_{j: carry(j) = i} s_j
//                      + Σ_{j: carry(j) = SPREAD, i one of j's targets} s_j / (j's targets);
//   deposit (once per step): h_i += dep_i, booked as deposited; lost_i booked as lost (so the
//                      sweeps need no workgroup sums).
// A step runs settle once, then per sweep targets and carry; `carry_settle` is carry with the
// next sweep's settle of the same node done on the gathered load (settle reads and writes only
// the node's own load, room, deposit and lost, which no other node's carry reads), so every
// sweep but the last is two dispatches instead of three, with the same arithmetic in the same
// order.
// Nothing is created or lost on the way: what is still moving is `suspended` in the books.

// Settles node i's load `s` where the node has room (route's room and dep updated; at a LOSE
// node the rest leaves the map, into route's lost); returns the load left moving.
fn settle_at(i: u32, s0: f32) -> f32 {
    var s = s0;
    if (s > 0.0) {
        let r = route[i];
        let d = min(s, r.room);
        if (d > 0.0) {
            route[i].room = r.room - d;
            route[i].dep = r.dep + d;
            s = s - d;
        }
        if (carry(r.code) == LOSE) {
            route[i].lost = r.lost + s;
            s = 0.0;
        }
    }
    return s;
}

@compute @workgroup_size(16, 16)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    let s = s_src[i];
    if (s > 0.0) { s_src[i] = settle_at(i, s); }
}

// Whether sea node `i` (flags `fi`, room `ri`) takes a share of SPREAD neighbour `j`'s load.
fn takes_share(fi: u32, ri: f32, fj: u32, room_targets_j: f32) -> bool {
    if ((fi & SEA) == 0u) { return false; }
    if (room_targets_j > 0.0) { return ri > 0.0; }
    return coast_dist(fi) > coast_dist(fj);
}

@compute @workgroup_size(16, 16)
fn targets(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    // Only a near sea outlet spreads (sp_route.wgsl): the node's flags say so before its
    // 32-byte route record is read.
    let f = nodes[i].flags;
    if ((f & (OUTLET | SEA)) != (OUTLET | SEA) || (f & FAR_SEA) != 0u) { return; }
    if (carry(route[i].code) != SPREAD) { return; }
    var k_room = 0u;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(i32(gid.x), i32(gid.y), k);
        if (j >= 0 && (nodes[j].flags & SEA) != 0u && route[j].room > 0.0) { k_room = k_room + 1u; }
    }
    route[i]._a = f32(k_room);
}

// The load node (x, y) holds after a carry: its own if it keeps it, plus what its neighbours
// send it.
fn gathered(x: i32, y: i32, i: u32) -> f32 {
    var s = select(0.0, s_src[i], carry(route[i].code) == NONE);
    let fi = nodes[i].flags;
    for (var k = 0u; k < 8u; k = k + 1u) {
        let j = nb(x, y, k);
        if (j < 0) { continue; }
        let cj = carry(route[j].code);
        if (cj == 7u - k) {
            s = s + s_src[j];
        } else if (cj == SPREAD) {
            let fj = nodes[j].flags;
            let nr = route[j]._a;
            if (takes_share(fi, route[i].room, fj, nr)) {
                s = s + s_src[j] / select(f32(seaward(fj)), nr, nr > 0.0);
            }
        }
    }
    return s;
}

@compute @workgroup_size(16, 16)
fn carry_load(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    s_dst[i] = gathered(i32(gid.x), i32(gid.y), i);
}

// carry_load, then settle on the node's new load (one sweep's carry and the next one's settle).
@compute @workgroup_size(16, 16)
fn carry_settle(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.w || gid.y >= P.h) { return; }
    let i = gid.y * P.w + gid.x;
    s_dst[i] = settle_at(i, gathered(i32(gid.x), i32(gid.y), i));
}

@compute @workgroup_size(16, 16)
fn deposit(@builtin(global_invocation_id) gid: vec3<u32>,
           @builtin(local_invocation_index) lid: u32,
           @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = vec4<f32>(0.0);
    if (gid.x < P.w && gid.y < P.h) {
        let i = gid.y * P.w + gid.x;
        let r = route[i];
        acc.z = r.lost;
        let d = r.dep;
        if (d > 0.0) {
            let old = h_src[i];
            let hn = old + d;
            let ch = hn - old;
            h_src[i] = hn;
            maps[i].y = maps[i].y + ch;
            acc.y = ch;
            // What rounding kept off the height stays in suspension here.
            s_src[i] = s_src[i] + (d - ch);
        }
    }
    book(lid, wg, acc);
}
