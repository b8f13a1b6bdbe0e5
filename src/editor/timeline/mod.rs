//! The timeline of an erosion run: the heights it had at every snapshot it streamed (about ten a
//! second), kept within a memory budget so the user can scrub back to any of them, keep one as
//! the layer's result, or continue the simulation from it ([`resume`]).
//!
//! ## Storage
//! Frame 0 is the run's input, kept as raw bits. Every later frame `i` is stored as the XOR of
//! its height bits with a reference, split into byte planes and deflated ([`crate::editor::planes`]):
//!
//! ```text
//! stored_i = pack( bits(h_i) XOR bits(h_{i−1}) )     (a delta against the previous kept frame)
//! stored_i = pack( bits(h_i) XOR bits(h_0) )         (a key frame: every KEY_EVERY-th position)
//! ```
//!
//! Between two snapshots a run changes a small part of the map, so most XOR words are zero and a
//! delta costs little; key frames bound the chain a scrub decodes to `KEY_EVERY − 1` deltas.
//! Decoding is exact: a frame comes back with the very bits the run had.
//!
//! ## Budget and thinning
//! Snapshot `s` (the `s`-th the run offers) is kept when `s` is a multiple of the stride
//! ([`Timeline::stride`], 1 at first). When the frames hold more than the budget
//! ([`DEFAULT_BUDGET`], 256 MiB), the stride doubles and every frame between the first and the
//! last whose `s` is off the new grid is dropped (the first and the last never are); the
//! survivors are re-encoded against their new neighbours. The kept moments so stay evenly spread
//! over the run. The budget counts the packed frames and the raw input (and, while recording, the raw
//! newest frame the next delta is taken against); it is respected as long as it can hold the
//! first and the last frame.
//!
//! ## What a frame is
//! The heights the run had after its `done`-th unit of work (droplet, time step, iteration) and
//! the books at that moment ([`Frame::ledger`]). Snapshots streamed during a run are taken
//! between steps, before any end-of-run post-processing; the last frame of a run is its result
//! (after [`crate::core::erosion::Simulation::finish`]), stored at the same `done` as the last
//! streamed one it replaces.

pub mod resume;

use std::sync::Mutex;

use crate::core::Heightmap;
use crate::core::erosion::Ledger;

use super::planes;

/// Default memory budget of one run's timeline, bytes (256 MiB).
pub const DEFAULT_BUDGET: usize = 256 << 20;
/// Every `KEY_EVERY`-th frame is stored against the input instead of its predecessor.
pub const KEY_EVERY: usize = 8;
/// Deflate level of the frames (fast: a frame is packed on the simulation's worker).
const LEVEL: u8 = 1;

/// One kept moment of a run.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Units of work the run had done (droplets, time steps, iterations).
    pub done: u64,
    /// The books at that moment.
    pub ledger: Ledger,
    /// The packed XOR against the reference (empty for frame 0).
    packed: Vec<u8>,
    /// Which offer it was (1 for the first state offered after the input; 0 for the input).
    seq: u64,
}

/// The kept frames of one run (see the module doc).
#[derive(Debug)]
pub struct Timeline {
    width: usize,
    height: usize,
    cell_size: f32,
    total: u64,
    first: Vec<u32>,
    frames: Vec<Frame>,
    /// Bits of the newest frame while recording (empty once [`Self::seal`]ed).
    newest: Vec<u32>,
    stride: u64,
    offered: u64,
    budget: usize,
    /// The last frame decoded, so scrubbing forward decodes one delta.
    cache: Mutex<Option<(usize, Vec<u32>)>>,
}

impl Clone for Timeline {
    fn clone(&self) -> Self {
        Self {
            width: self.width,
            height: self.height,
            cell_size: self.cell_size,
            total: self.total,
            first: self.first.clone(),
            frames: self.frames.clone(),
            newest: self.newest.clone(),
            stride: self.stride,
            offered: self.offered,
            budget: self.budget,
            cache: Mutex::new(None),
        }
    }
}

fn bits(hm: &Heightmap) -> Vec<u32> {
    hm.data.iter().map(|v| v.to_bits()).collect()
}

fn xor(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

impl Timeline {
    /// A timeline whose frame 0 is `input` (a run of `total` units starts from it), keeping at
    /// most `budget` bytes.
    pub fn new(input: &Heightmap, total: u64, budget: usize) -> Self {
        let first = bits(input);
        Self {
            width: input.width,
            height: input.height,
            cell_size: input.cell_size,
            total,
            newest: first.clone(),
            first,
            frames: vec![Frame { done: 0, ledger: Ledger::default(), packed: Vec::new(), seq: 0 }],
            stride: 1,
            offered: 0,
            budget,
            cache: Mutex::new(None),
        }
    }

    /// The size of the map the timeline records (what its units of work count on).
    pub fn map_size(&self) -> crate::core::erosion::MapSize {
        crate::core::erosion::MapSize::new(self.width, self.height, self.cell_size)
    }

    /// Number of kept frames (at least 1: the input).
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Always false: frame 0 is the input.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The kept frames, oldest first (their `done` and books).
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The run's whole work, in its unit.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Keep one snapshot out of this many offered (1 until the first thinning, then doubling).
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// The memory budget, bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes held: packed frames, the raw input and the raw newest frame while recording.
    pub fn bytes(&self) -> usize {
        (self.first.len() + self.newest.len()) * 4
            + self.frames.iter().map(|f| f.packed.len() + std::mem::size_of::<Frame>()).sum::<usize>()
    }

    /// Offers the run's state after `done` units. Kept when it is the `stride`-th offer since the
    /// last kept one or when `last` is set (the run's end); a state at the `done` of the newest
    /// frame replaces it (the end-of-run post-processing), one at a smaller `done` is ignored.
    pub fn offer(&mut self, hm: &Heightmap, done: u64, ledger: Ledger, last: bool) {
        if hm.width != self.width || hm.height != self.height {
            return;
        }
        let newest = self.frames.len() - 1;
        let newest_done = self.frames[newest].done;
        if done < newest_done || (done == newest_done && newest == 0) {
            return;
        }
        let seq = if done == newest_done {
            // The same moment again: the end-of-run version replaces the streamed one.
            let seq = self.frames[newest].seq;
            self.pop();
            seq
        } else {
            self.offered += 1;
            if !last && !self.offered.is_multiple_of(self.stride) {
                return;
            }
            // A newest frame kept off the stride's grid (the end of an earlier thinning's range)
            // gives way, so the kept frames stay evenly spread.
            if newest > 0 && !self.frames[newest].seq.is_multiple_of(self.stride) {
                self.pop();
            }
            self.offered
        };
        self.append(bits(hm), done, ledger, seq);
        while self.bytes() > self.budget && self.frames.len() > 2 {
            self.thin();
        }
    }

    /// Drops the newest frame (never frame 0); the one before becomes the reference.
    fn pop(&mut self) {
        if self.frames.len() > 1 {
            self.frames.pop();
            self.newest = self.decode(self.frames.len() - 1);
        }
    }

    fn append(&mut self, b: Vec<u32>, done: u64, ledger: Ledger, seq: u64) {
        if self.newest.is_empty() {
            self.newest = self.decode(self.frames.len() - 1);
        }
        let position = self.frames.len();
        let reference = if position.is_multiple_of(KEY_EVERY) { &self.first } else { &self.newest };
        let packed = planes::pack(&xor(&b, reference), LEVEL);
        self.frames.push(Frame { done, ledger, packed, seq });
        self.newest = b;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Doubles the stride, drops the frames between the first and the last that are off its grid
    /// and re-encodes the rest.
    fn thin(&mut self) {
        let n = self.frames.len();
        let old = std::mem::replace(&mut self.frames, Vec::with_capacity(n / 2 + 2));
        let mut current = self.first.clone();
        let mut reference = self.first.clone();
        for (i, f) in old.into_iter().enumerate() {
            if i == 0 {
                self.frames.push(f);
                continue;
            }
            current = self.apply(i, &f.packed, current);
            if i != n - 1 && !f.seq.is_multiple_of(2 * self.stride) {
                continue;
            }
            let position = self.frames.len();
            let against = if position.is_multiple_of(KEY_EVERY) { &self.first } else { &reference };
            let packed = planes::pack(&xor(&current, against), LEVEL);
            self.frames.push(Frame { packed, ..f });
            reference.clone_from(&current);
        }
        self.stride *= 2;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The bits of frame `i` from the bits of the frame before it (`previous`), by the position
    /// rule of the encoding.
    fn apply(&self, position: usize, packed: &[u8], previous: Vec<u32>) -> Vec<u32> {
        let words = planes::unpack(packed, self.first.len()).expect("a frame this timeline packed unpacks");
        let base = if position.is_multiple_of(KEY_EVERY) { &self.first } else { &previous };
        xor(&words, base)
    }

    fn decode(&self, i: usize) -> Vec<u32> {
        let i = i.min(self.frames.len() - 1);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let key = i - i % KEY_EVERY;
        let (mut at, mut current) = match cache.take() {
            Some((j, b)) if j >= key && j <= i => (j, b),
            _ => {
                (key, if key == 0 { self.first.clone() } else { self.apply(key, &self.frames[key].packed, Vec::new()) })
            }
        };
        while at < i {
            at += 1;
            current = self.apply(at, &self.frames[at].packed, current);
        }
        *cache = Some((i, current.clone()));
        current
    }

    /// The heights of frame `i` (clamped to the newest), bit for bit as the run had them.
    pub fn heights(&self, i: usize) -> Heightmap {
        let data = self.decode(i).into_iter().map(f32::from_bits).collect();
        Heightmap { width: self.width, height: self.height, cell_size: self.cell_size, data }
    }

    /// The frames `0 ..= i` only (what "Keep from here" and "Continue from here" leave), ready to
    /// record more.
    pub fn truncated(&self, i: usize) -> Timeline {
        let i = i.min(self.frames.len() - 1);
        let mut t = self.clone();
        t.frames.truncate(i + 1);
        t.newest = self.decode(i);
        t.offered = t.frames[i].seq;
        t
    }

    /// Drops the raw newest frame kept for recording (the run is over). Recording again decodes it.
    pub fn seal(&mut self) {
        self.newest = Vec::new();
    }

    /// Sets the whole work of the run (a continuation may run further than the first run did).
    pub fn set_total(&mut self, total: u64) {
        self.total = total;
    }
}

#[cfg(test)]
mod tests;
