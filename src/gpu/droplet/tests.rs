//! Tests of [`super`] (GPU droplets).

use super::*;

#[test]
fn units_are_powers_of_two_with_headroom() {
    assert_eq!(unit_exp(100.0), 6 - 31);
    assert_eq!(unit_exp(1.0), -31);
    assert_eq!(unit_exp(0.0), -20 - 31);
    assert_eq!(pow2(-25), 2f32.powi(-25));
    // 256 units per f32 ulp of the highest node.
    let ulp = f32::from_bits(100f32.to_bits() + 1) - 100.0;
    assert_eq!(ulp / pow2(unit_exp(100.0)), 256.0);
}

#[test]
fn brushes_match_the_cpu_definition() {
    let (taps, n) = brush_taps(5.0);
    assert_eq!(taps.len(), 16 * n as usize);
    for v in taps.chunks(n as usize) {
        let s: f32 = v.iter().map(|t| t[2]).sum();
        assert!((s - 1.0).abs() < 1e-5, "{s}");
        assert!(v.iter().all(|t| t[2] >= 0.0 && (t[0] * t[0] + t[1] * t[1]).sqrt() < 7.0));
    }
}

#[test]
fn the_uniform_block_matches_the_wgsl() {
    crate::gpu::uniform::assert_matches_wgsl::<DropletUniform>(SHADER, "Params");
    assert_eq!(std::mem::size_of::<DropletUniform>(), 160);
}

#[test]
fn dispatch_grids_cover_every_thread() {
    for t in [1u32, 63, 64, 65, 4_194_304, 16_777_216] {
        let (x, y, row) = grid(t, 64);
        assert!(x <= 65_535 && y <= 65_535);
        assert!(x as u64 * y as u64 * 64 >= t as u64 && row == x * 64);
    }
}
