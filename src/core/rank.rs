//! Order statistics of `f32` values in [`f32::total_cmp`] order, counted on every core (issue
//! #36): a radix selection. One pass counts the finite values by the top 16 bits of their order
//! key; the value of rank `r` then lies in the bucket where the running count passes `r`, and a
//! second pass counts that bucket's values by their bottom 16 bits. Counts are the same in any
//! order, and in a total order the value of a rank is one bit pattern, so the result is the bits
//! a sort or `select_nth_unstable_by(f32::total_cmp)` gives, at any thread count.

use rayon::prelude::*;

/// Buckets of one counting pass (16 bits of the key).
const BUCKETS: usize = 1 << 16;

/// Values a job counts.
const CHUNK: usize = 1 << 16;

/// The key of `x` whose unsigned order is [`f32::total_cmp`]'s.
#[inline]
fn key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
}

/// The value of key `k` ([`key`]'s inverse).
#[inline]
fn value(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// Counts of `keys` of `data`'s finite values into `n` tables of [`BUCKETS`], in parallel:
/// `slot(key)` names the table and bucket of a key, or `None`.
fn count(data: &[f32], n: usize, slot: impl Fn(u32) -> Option<usize> + Sync) -> Vec<u64> {
    data.par_chunks(CHUNK)
        .fold(
            || vec![0u64; n * BUCKETS],
            |mut c, part| {
                for &x in part {
                    if x.is_finite()
                        && let Some(s) = slot(key(x))
                    {
                        c[s] += 1;
                    }
                }
                c
            },
        )
        .reduce(
            || vec![0u64; n * BUCKETS],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// The finite values of a slice, counted for selecting by rank.
pub struct Ranks<'a> {
    data: &'a [f32],
    /// `below[b]`: finite values whose key's top 16 bits are under `b` (`BUCKETS + 1` entries).
    below: Vec<u64>,
}

impl<'a> Ranks<'a> {
    /// Counts the finite values of `data` (one parallel pass).
    pub fn finite(data: &'a [f32]) -> Self {
        let counts = count(data, 1, |k| Some((k >> 16) as usize));
        let mut below = Vec::with_capacity(BUCKETS + 1);
        below.push(0u64);
        for c in counts {
            below.push(below.last().expect("non-empty") + c);
        }
        Ranks { data, below }
    }

    /// How many values are finite.
    pub fn len(&self) -> usize {
        *self.below.last().expect("non-empty") as usize
    }

    /// Whether no value is finite.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The finite values of ranks `ranks` (0-based, in [`f32::total_cmp`] order; each below
    /// [`Ranks::len`]), with one parallel pass for all of them.
    pub fn values<const N: usize>(&self, ranks: [usize; N]) -> [f32; N] {
        // Each rank's bucket (of the top 16 bits) and its rank within the bucket.
        let at = ranks.map(|r| {
            assert!(r < self.len(), "rank {r} of {} values", self.len());
            let b = self.below.partition_point(|&c| c <= r as u64) - 1;
            (b as u32, r as u64 - self.below[b])
        });
        let counts = count(self.data, N, |k| {
            at.iter().position(|a| a.0 == k >> 16).map(|t| t * BUCKETS + (k & 0xffff) as usize)
        });
        let mut out = [0.0f32; N];
        for (o, &(b, r)) in out.iter_mut().zip(&at) {
            let t = at.iter().position(|a| a.0 == b).expect("its own bucket");
            let table = &counts[t * BUCKETS..(t + 1) * BUCKETS];
            let mut seen = 0u64;
            let low = table
                .iter()
                .position(|&c| {
                    seen += c;
                    seen > r
                })
                .expect("the rank lies in its bucket");
            *o = value((b << 16) | low as u32);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The values of every rank by sorting, for comparison.
    fn sorted_finite(v: &[f32]) -> Vec<f32> {
        let mut s: Vec<f32> = v.iter().copied().filter(|x| x.is_finite()).collect();
        s.sort_by(f32::total_cmp);
        s
    }

    #[test]
    fn keys_order_as_total_cmp_and_come_back() {
        let v = [f32::NEG_INFINITY, -3.5, -f32::MIN_POSITIVE, -0.0, 0.0, 1e-45, 2.0, f32::MAX, f32::INFINITY];
        for p in v.windows(2) {
            assert!(key(p[0]) < key(p[1]) && p[0].total_cmp(&p[1]).is_lt(), "{p:?}");
        }
        for x in v {
            assert_eq!(value(key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn every_rank_is_the_sorted_value_on_any_pool() {
        let mut v: Vec<f32> = (0..200_000).map(|i| ((i * 7919 % 4001) as f32 - 2000.0) * 0.013).collect();
        v.extend([0.0, -0.0, -0.0, f32::NAN, f32::INFINITY, -f32::NAN, 1e-40, -1e-40]);
        let s = sorted_finite(&v);
        for threads in [1, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let r = Ranks::finite(&v);
                assert_eq!(r.len(), s.len());
                for k in [0, 1, 99_999, 100_000, 100_001, s.len() - 2, s.len() - 1] {
                    let [a, b] = r.values([k, (k + 1).min(s.len() - 1)]);
                    assert_eq!((a.to_bits(), b.to_bits()), (s[k].to_bits(), s[(k + 1).min(s.len() - 1)].to_bits()));
                }
            });
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        /// Few distinct values (ties), signed zeros, any two ranks.
        #[test]
        fn any_ranks_are_the_sorted_values(
            raw in proptest::collection::vec(-4i32..4, 1..300), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>(),
        ) {
            let v: Vec<f32> = raw.iter().map(|&i| if i == -4 { -0.0 } else { i as f32 * 0.5 }).collect();
            let s = sorted_finite(&v);
            let (a, b) = (a.index(s.len()), b.index(s.len()));
            let [x, y] = Ranks::finite(&v).values([a, b]);
            prop_assert_eq!((x.to_bits(), y.to_bits()), (s[a].to_bits(), s[b].to_bits()));
        }
    }
}
