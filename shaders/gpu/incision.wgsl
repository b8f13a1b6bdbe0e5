// Root δ ∈ [0, δ₀] of δ − δ₀ + F·δ^n = 0 (δ₀ > 0, F > 0), the implicit stream-power incision
// for n ≠ 1: Newton from min(δ₀, (δ₀/F)^(1/n)), kept in a shrinking bracket by bisection (the
// CPU's `solve_incision`, in f32). Shared by the stream-power model's kernels (sp_incise.wgsl)
// and the build's detail pass (refine_sp.wgsl); src/gpu prepends it to both.
fn solve_incision(d0: f32, F: f32, n: f32) -> f32 {
    var lo = 0.0;
    var hi = d0;
    var x = min(pow(d0 / F, 1.0 / n), d0);
    if (!(x > 0.0)) { x = 0.5 * d0; }
    for (var it = 0; it < 40; it = it + 1) {
        let p = pow(x, n - 1.0);
        let g = x - d0 + F * p * x;
        if (g == 0.0) { return x; }
        if (g > 0.0) { hi = x; } else { lo = x; }
        var nx = x - g / (1.0 + n * F * p);
        if (!(nx > lo && nx < hi)) { nx = 0.5 * (lo + hi); }
        if (abs(nx - x) <= 1.0e-7 * x || hi - lo <= 1.0e-7 * d0) { return clamp(nx, 0.0, d0); }
        x = nx;
    }
    return clamp(x, 0.0, d0);
}
