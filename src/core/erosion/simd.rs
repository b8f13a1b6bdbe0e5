//! SIMD dispatch for the grid kernels (thermal, pipe): [`simd_dispatch!`] compiles a kernel for
//! AVX-512, AVX2 and the baseline target and picks the best the CPU has at run time, with the
//! test-only tier cap [`SIMD_TIER`]; and the branch-free `max`/`min` helpers that let the
//! compiler vectorise the hot loops.

/// `max(x, 0)`, mapping NaN to 0.
#[inline(always)]
pub(crate) fn pos(x: f32) -> f32 {
    if x > 0.0 { x } else { 0.0 }
}

/// `max(a, b)` as one compare-and-select (no NaN special-casing, so it vectorises to `maxps`).
#[inline(always)]
pub(crate) fn fmax(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// `min(a, b)` as one compare-and-select.
#[inline(always)]
pub(crate) fn fmin(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

/// Highest instruction-set tier the dispatched kernels may use: 2 = AVX-512, 1 = AVX2,
/// 0 = the baseline target. Only lowered by tests (which check that all tiers agree bit for bit).
pub(crate) static SIMD_TIER: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(2);

/// Defines `fn $name(args) -> ret { $body }` that runs `$body` compiled for AVX-512 or AVX2 when
/// the CPU has them, and for the baseline target otherwise. The hot loops are
/// `#[inline(always)]`, so they are compiled into every copy. All copies execute the same IEEE
/// operations in the same order (no FMA contraction, no reassociation, no approximate
/// reciprocals), so their results are bit-identical; a unit test checks it.
macro_rules! simd_dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty $body:block) => {
        $(#[$m])*
        $vis fn $name($($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            {
                let tier = $crate::core::erosion::simd::SIMD_TIER.load(std::sync::atomic::Ordering::Relaxed);
                #[target_feature(enable = "avx512f,avx512vl,avx2")]
                #[allow(clippy::too_many_arguments, clippy::unused_unit)]
                fn with_avx512($($a: $t),*) -> $r $body
                if tier >= 2 && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
                    // SAFETY: the running CPU supports these features, checked just above.
                    return unsafe { with_avx512($($a),*) };
                }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments, clippy::unused_unit)]
                fn with_avx2($($a: $t),*) -> $r $body
                if tier >= 1 && std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the running CPU supports AVX2, checked just above.
                    return unsafe { with_avx2($($a),*) };
                }
            }
            $body
        }
    };
}
pub(crate) use simd_dispatch;
