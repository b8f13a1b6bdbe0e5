//! The sides a build may have: `2^k + 1` from 129 to 16385, and Unreal's landscape sizes within
//! that range (from the engine table, [`crate::core::io::tiles`]); the height a side gives a
//! project of another aspect; the side the Build… dialog starts at.

use super::error::SizeError;
use crate::core::io::tiles::{Engine, count_within, sizes_within};

/// Smallest and largest build side, nodes.
pub const SIZE_RANGE: [usize; 2] = [129, 16385];

/// Sides Unreal Engine's landscape importer recommends (its section and component layouts),
/// accepted besides `2^k + 1`: the Unreal tile sizes of the engine table
/// ([`crate::core::io::tiles::EngineSpec::tile_sizes`]) within [`SIZE_RANGE`].
pub const UNREAL_SIZES: [usize; count_within(Engine::Unreal.spec().tile_sizes, SIZE_RANGE)] =
    sizes_within(Engine::Unreal.spec().tile_sizes, SIZE_RANGE);

/// How many times the preview's resolution the dialog starts at.
pub const DEFAULT_FACTOR: usize = 4;

/// Whether `n` is a side a build may have: `2^k + 1` from 129 to 16385, or one of Unreal's
/// [`UNREAL_SIZES`].
pub fn check_side(n: usize) -> Result<(), SizeError> {
    let pow2 = n > 1 && (n - 1).is_power_of_two();
    if (SIZE_RANGE[0]..=SIZE_RANGE[1]).contains(&n) && (pow2 || UNREAL_SIZES.contains(&n)) {
        return Ok(());
    }
    Err(SizeError::NotASide { n, min: SIZE_RANGE[0], max: SIZE_RANGE[1], unreal: UNREAL_SIZES.to_vec() })
}

/// The build's height for `width` nodes along x, keeping the project's aspect: `(h − 1)·(W − 1)
/// / (w − 1) + 1`, which must be whole.
pub fn build_height(w: usize, h: usize, width: usize) -> Result<usize, SizeError> {
    if w == h {
        return Ok(width);
    }
    let num = (h - 1) * (width - 1);
    if w < 2 || !num.is_multiple_of(w - 1) {
        return Err(SizeError::Aspect { w, h, width });
    }
    Ok(num / (w - 1) + 1)
}

/// Every side a build may have, smallest first: `2^k + 1` from 129 to 16385 and Unreal's sizes.
pub fn allowed_sizes() -> Vec<usize> {
    let mut v: Vec<usize> = (7..=14).map(|k| (1usize << k) + 1).chain(UNREAL_SIZES).collect();
    v.retain(|&n| check_side(n).is_ok());
    v.sort_unstable();
    v.dedup();
    v
}

/// The side the dialog starts at for a project `side` nodes across: `4 (side − 1) + 1` when it is
/// allowed, else the next allowed side above it (the largest, 16385, when none is).
pub fn default_size(side: usize) -> usize {
    let want = DEFAULT_FACTOR * side.saturating_sub(1) + 1;
    allowed_sizes().into_iter().find(|&n| n >= want).unwrap_or(SIZE_RANGE[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_and_heights() {
        for n in [129, 257, 513, 1025, 2049, 4097, 8193, 16385, 505, 1009, 2017, 4033, 8129] {
            assert!(check_side(n).is_ok(), "{n}");
        }
        for n in [0, 1, 65, 128, 130, 1000, 32769, usize::MAX] {
            assert!(check_side(n).is_err(), "{n}");
        }
        assert!(check_side(1000).unwrap_err().to_string().contains("2^k + 1"));
        assert_eq!(build_height(513, 513, 2049), Ok(2049));
        assert_eq!(build_height(513, 257, 2049), Ok(1025));
        assert!(build_height(513, 300, 2017).is_err());
    }

    #[test]
    fn sizes_are_the_allowed_sides_in_order() {
        let s = allowed_sizes();
        assert_eq!(s.first(), Some(&129));
        assert_eq!(s.last(), Some(&16385));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        for n in [129, 257, 513, 1025, 2049, 4097, 8193, 16385] {
            assert!(s.contains(&n), "{n}");
        }
        for n in UNREAL_SIZES {
            assert!(s.contains(&n), "{n}");
        }
        assert!(s.iter().all(|&n| check_side(n).is_ok()));
    }

    #[test]
    fn the_default_is_four_times_the_preview_or_the_next_side_above() {
        assert_eq!(default_size(513), 2049);
        assert_eq!(default_size(257), 1025);
        assert_eq!(default_size(129), 513);
        // 4·299 + 1 = 1197: the next allowed side is Unreal's 2017.
        assert_eq!(default_size(300), 2017);
        assert_eq!(default_size(4097), 16385);
        assert_eq!(default_size(8193), 16385);
        assert_eq!(default_size(2), 129);
        assert_eq!(default_size(0), 129);
    }
}
