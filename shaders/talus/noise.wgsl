// Hash and value noise shared by the talus shaders.
//
// hash21: a 2D integer-lattice hash to [0, 1) (an integer mix in the style of PCG, so it is
// identical on every GPU and on lavapipe); value2: bilinear value noise with the quintic fade
// u = t³(6t² − 15t + 10) (C² continuous), range [0, 1]; fbm2: Σ_{i<n} 0.5^i · value2(2^i · p)
// renormalised by Σ 0.5^i, range [0, 1]. Cheap on purpose: the terrain calls a handful per pixel.
#define_import_path talus::noise

fn hash_u32(x: u32) -> u32 {
    var h = x * 747796405u + 2891336453u;
    h = ((h >> ((h >> 28u) + 4u)) ^ h) * 277803737u;
    return (h >> 22u) ^ h;
}

// Hash of the lattice point `c` to [0, 1).
fn hash21(c: vec2<i32>) -> f32 {
    let h = hash_u32(bitcast<u32>(c.x) ^ hash_u32(bitcast<u32>(c.y) + 0x9e3779b9u));
    return f32(h >> 8u) * (1.0 / 16777216.0);
}

fn fade(t: vec2<f32>) -> vec2<f32> {
    return t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
}

// Value noise at `p`, in [0, 1].
fn value2(p: vec2<f32>) -> f32 {
    let i = floor(p);
    let f = p - i;
    let c = vec2<i32>(i);
    let a = hash21(c);
    let b = hash21(c + vec2<i32>(1, 0));
    let d = hash21(c + vec2<i32>(0, 1));
    let e = hash21(c + vec2<i32>(1, 1));
    let u = fade(f);
    return mix(mix(a, b, u.x), mix(d, e, u.x), u.y);
}

// Fractal sum of `octaves` (1 ..= 6) octaves of value noise, in [0, 1].
fn fbm2(p: vec2<f32>, octaves: i32) -> f32 {
    var sum = 0.0;
    var amp = 1.0;
    var norm = 0.0;
    var q = p;
    for (var i = 0; i < clamp(octaves, 1, 6); i = i + 1) {
        sum = sum + amp * value2(q);
        norm = norm + amp;
        amp = amp * 0.5;
        // Rotate a little between octaves so the lattice does not line up.
        q = mat2x2<f32>(1.6, 1.2, -1.2, 1.6) * q + vec2<f32>(17.3, -9.1);
    }
    return sum / norm;
}
