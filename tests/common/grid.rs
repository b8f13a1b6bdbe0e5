//! Height-field helpers for the model tests: exact comparison, thread-count control, terrains.

use talus::core::Heightmap;

/// The bit patterns of a height field (a [`Heightmap`], a `Vec<f32>` or a slice), so two runs can
/// be compared exactly, NaN payloads and signed zeros included.
pub fn bits<T: AsRef<[f32]> + ?Sized>(v: &T) -> Vec<u32> {
    v.as_ref().iter().map(|x| x.to_bits()).collect()
}

/// Runs `f` on a private rayon pool of `threads` workers (determinism tests run each job at
/// several thread counts).
pub fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

/// A hilly test terrain with `cell_size` 1: a tilted bowl plus four octaves of sines
/// (deterministic, no RNG). Shared by the CPU and GPU particle tests so they see the same land.
pub fn sine_hills(w: usize, h: usize) -> Heightmap {
    Heightmap::from_fn(w, h, 1.0, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        let mut v = 0.0;
        let mut amp = 8.0;
        let mut f = 0.05;
        for o in 0..4 {
            v += amp * ((fx * f + o as f32 * 1.3).sin() * (fy * f * 1.1 + o as f32 * 0.7).cos());
            amp *= 0.5;
            f *= 2.03;
        }
        let (cx, cy) = (fx - w as f32 * 0.5, fy - h as f32 * 0.5);
        v + 0.002 * (cx * cx + cy * cy) + 0.05 * fx
    })
    .unwrap()
}
