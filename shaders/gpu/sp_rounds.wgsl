// Stream power: how many pointer-jumping rounds a chain solve runs (sp_fill.wgsl's tree,
// sp_incise.wgsl's incision). A solve is dispatched as pairs of rounds, at most ⌈log₂ N⌉+1 in
// all; the second round of a pair raises ctl[0] where a record will still change. Before each
// later pair this kernel turns that flag into the pair's indirect dispatch: the whole grid, or
// no workgroup at all once every chain reached its root, and clears it. A skipped round would
// have copied every record, so the result is the same bits as running all of them; a round
// costs a full pass over the map, and a chain needs only ⌈log₂ (its longest path)⌉.

struct Grid {
    x: u32,
    y: u32,
    // Which counter of `ctl` counts the pairs run: 1 the fill's tree, 2 the incision.
    counter: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> G: Grid;
@group(0) @binding(1) var<storage, read_write> ctl: array<atomic<u32>>;
// The indirect dispatch of the next pair: workgroups along x, y, z.
@group(0) @binding(2) var<storage, read_write> args: array<u32>;

@compute @workgroup_size(1)
fn main() {
    let live = atomicExchange(&ctl[0], 0u);
    if (live != 0u) {
        atomicAdd(&ctl[G.counter], 1u);
        args[0] = G.x;
        args[1] = G.y;
        args[2] = 1u;
    } else {
        args[0] = 0u;
        args[1] = 0u;
        args[2] = 0u;
    }
}
