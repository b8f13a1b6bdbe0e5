//! Deterministic random numbers and coordinate hashes.
//!
//! Every generator and erosion model draws from these instead of a crate RNG so that results are
//! bit-identical across crate versions, platforms and thread counts. [`SplitMix64`] (Steele,
//! Lea & Flood 2014) is the sequential stream; [`hash2`]/[`hash3`] are stateless hashes of integer
//! coordinates (used where a value must depend only on *where* it is, e.g. the lazy world), built
//! from the same 64-bit finaliser:
//!
//! `z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9; z = (z ^ (z >> 27)) * 0x94d049bb133111eb; z ^ (z >> 31)`.

/// The SplitMix64 output finaliser: a bijective 64-bit mixer.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Stateless hash of a 2-D integer coordinate and a seed.
#[inline]
pub const fn hash2(x: i64, y: i64, seed: u64) -> u64 {
    let a = mix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let b = mix64(a ^ (x as u64).wrapping_mul(0xd6e8_feb8_6659_fd93));
    mix64(b ^ (y as u64).wrapping_mul(0xa076_1d64_78bd_642f))
}

/// Stateless hash of three integers and a seed.
#[inline]
pub const fn hash3(x: i64, y: i64, z: i64, seed: u64) -> u64 {
    mix64(hash2(x, y, seed) ^ (z as u64).wrapping_mul(0xe703_7ed1_a0b4_28db))
}

/// Maps a hash to a float uniformly in `[0, 1)` (24 random bits, exact in f32).
#[inline]
pub fn unit_f32(h: u64) -> f32 {
    (h >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
}

/// Maps a hash to a float uniformly in `[-1, 1)`.
#[inline]
pub fn signed_f32(h: u64) -> f32 {
    unit_f32(h) * 2.0 - 1.0
}

/// Maps a hash to a double uniformly in `[0, 1)` (53 random bits).
#[inline]
pub fn unit_f64(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A small, fast, splittable PRNG (SplitMix64). Same seed → same stream on every platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream is fully determined by `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// An independent stream for sub-task `index` (e.g. one per batch or row) of a seed.
    pub const fn stream(seed: u64, index: u64) -> Self {
        Self { state: mix64(seed ^ mix64(index.wrapping_add(0x632b_e59b_d9b4_e019))) }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// Uniform in `[0, 1)`.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        unit_f32(self.next_u64())
    }

    /// Uniform in `[0, 1)` with 53 bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }

    /// Uniform in `[lo, hi)`; returns `lo` when the range is empty.
    #[inline]
    pub fn range_f32(&mut self, lo: f32, hi: f32) -> f32 {
        if hi <= lo { lo } else { lo + (hi - lo) * self.next_f32() }
    }

    /// Uniform integer in `0..n` (Lemire's multiply-shift; `n == 0` returns 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// A fresh seed from the operating system's entropy, for "random landscape".
pub fn fresh_seed() -> u64 {
    rand::random::<u64>()
}

/// A seed as a user types it (the CLI's `--seed`, the editor's seed field): a whole number from
/// 0 to 2⁶⁴ − 1, or `random` (any case) for [`fresh_seed`]. The error is a sentence for the user.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    if s.trim().eq_ignore_ascii_case("random") {
        return Ok(fresh_seed());
    }
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("seed `{s}` is not a whole number from 0 to 18446744073709551615 or `random`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_as_typed() {
        assert_eq!(parse_seed(" 42 "), Ok(42));
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_seed("RANDOM").is_ok());
        for bad in ["", "-1", "4.5", "18446744073709551616", "seed"] {
            let e = parse_seed(bad).unwrap_err();
            assert!(e.contains("whole number"), "{bad}: {e}");
        }
    }

    #[test]
    fn stream_is_reproducible_and_seed_dependent() {
        let a: Vec<u64> = {
            let mut r = SplitMix64::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = SplitMix64::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = SplitMix64::new(8);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn unit_values_are_in_range() {
        let mut r = SplitMix64::new(1);
        for _ in 0..10_000 {
            let f = r.next_f32();
            assert!((0.0..1.0).contains(&f));
            let s = signed_f32(r.next_u64());
            assert!((-1.0..1.0).contains(&s));
            assert!(r.below(10) < 10);
        }
        assert!(unit_f32(u64::MAX) < 1.0);
    }

    #[test]
    fn hash_depends_on_every_input() {
        let h = hash2(3, 4, 5);
        assert_ne!(h, hash2(4, 3, 5));
        assert_ne!(h, hash2(3, 4, 6));
        assert_eq!(h, hash2(3, 4, 5));
        assert_ne!(hash3(1, 2, 3, 4), hash3(1, 2, 4, 4));
    }
}
