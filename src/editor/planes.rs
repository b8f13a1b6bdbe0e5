//! Byte-plane packing of 32-bit words, the codec of the project's tiles and of the timeline's
//! frames: the `n` words are split into four planes (all lowest bytes, then all second bytes …),
//! which puts the slowly varying exponent bytes of heights together and the zero bytes of an XOR
//! of two nearby frames together, then deflated (RFC 1951). Unpacking refuses anything that does
//! not inflate to exactly `n` words, so a damaged input can never make it allocate more.

/// Splits `words` into byte planes and deflates them at `level` (0 = store … 10 = smallest;
/// 1 is fast, 6 the usual balance).
pub fn pack(words: &[u32], level: u8) -> Vec<u8> {
    let n = words.len();
    let mut planes = vec![0u8; n * 4];
    for (i, w) in words.iter().enumerate() {
        for (b, byte) in w.to_le_bytes().into_iter().enumerate() {
            planes[b * n + i] = byte;
        }
    }
    miniz_oxide::deflate::compress_to_vec(&planes, level)
}

/// Inflates `data` to exactly `n` words (`None` when it is damaged, shorter or longer) and joins
/// their byte planes.
pub fn unpack(data: &[u8], n: usize) -> Option<Vec<u32>> {
    let planes = miniz_oxide::inflate::decompress_to_vec_with_limit(data, n * 4).ok()?;
    if planes.len() != n * 4 {
        return None;
    }
    Some((0..n).map(|i| u32::from_le_bytes([planes[i], planes[n + i], planes[2 * n + i], planes[3 * n + i]])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_come_back_and_damage_is_refused() {
        let words: Vec<u32> = (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761) ^ (i << 3)).collect();
        for level in [1, 6] {
            let packed = pack(&words, level);
            assert_eq!(unpack(&packed, words.len()).unwrap(), words);
            assert!(unpack(&packed, words.len() - 1).is_none(), "longer than asked is refused");
            assert!(unpack(&packed, words.len() + 1).is_none(), "shorter than asked is refused");
            assert!(unpack(&packed[..packed.len() / 2], words.len()).is_none());
        }
        // Zero words (an XOR of equal frames) pack to almost nothing.
        assert!(pack(&vec![0u32; 1 << 16], 1).len() < 4096);
    }
}
