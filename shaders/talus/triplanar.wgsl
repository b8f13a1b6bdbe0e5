// Triplanar projection: a 2D pattern applied on the three axis planes and blended by the normal,
// so steep faces are not stretched (world y is up).
//
// Weights w = |n|^k / Σ|n|^k, k = sharpness (1 ..= 16): the pattern seen along x is sampled at
// p.zy, along y at p.xz, along z at p.xy.
#define_import_path talus::triplanar

#import talus::noise::fbm2

fn triplanar_weights(n: vec3<f32>, sharpness: f32) -> vec3<f32> {
    let w = pow(abs(n) + vec3<f32>(1e-4), vec3<f32>(clamp(sharpness, 1.0, 16.0)));
    return w / (w.x + w.y + w.z);
}

// fbm2 of `p / scale` projected triplanar (range [0, 1]). Planes whose weight is tiny are
// skipped, so flat ground pays for one projection only.
fn triplanar_fbm(p: vec3<f32>, n: vec3<f32>, scale: f32, octaves: i32, sharpness: f32) -> f32 {
    let w = triplanar_weights(n, sharpness);
    let q = p / max(scale, 1e-3);
    var v = 0.0;
    if (w.x > 0.02) { v = v + w.x * fbm2(q.zy, octaves); }
    if (w.y > 0.02) { v = v + w.y * fbm2(q.xz + vec2<f32>(31.7, 11.3), octaves); }
    if (w.z > 0.02) { v = v + w.z * fbm2(q.xy + vec2<f32>(-7.9, 53.1), octaves); }
    // Renormalise what was skipped.
    let used = select(0.0, w.x, w.x > 0.02) + select(0.0, w.y, w.y > 0.02) + select(0.0, w.z, w.z > 0.02);
    return v / max(used, 1e-4);
}
