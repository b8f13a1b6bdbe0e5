//! The sea as the end of every particle flow (issue 13, items 1 and 3): on the default island
//! (`talus demo`'s generator, here at 257² to stay quick), the droplet and snowball defaults with
//! sea level 0 keep the coast (≤ 2 % of the land goes under water, nothing that was land is dug
//! more than a couple of metres below the sea), leave no single-node pits or spikes on land, and
//! close their books. The measurements (land lost, pits, spikes, slope–area concavity θ) are
//! private helpers of this file; `measure_files` prints them for two BHEF files (ignored test).

use std::collections::BinaryHeap;
use std::sync::atomic::AtomicBool;

use talus::core::Heightmap;
use talus::core::erosion::droplet::DropletParams;
use talus::core::erosion::snowball::SnowballParams;
use talus::core::erosion::{self, JobInputs, MapSize, ModelParams, Simulation};

const SEA: f32 = 0.0;

/// Height difference (metres) beyond which a node above or below all 8 neighbours counts as a
/// single-node spike or pit.
const EXTREME: f32 = 0.5;

/// What a run did to the land, against its input.
#[derive(Debug, Clone, Copy)]
struct Figures {
    /// Input land nodes (h > sea).
    land: usize,
    /// Of those, how many end strictly below the sea.
    lost: usize,
    /// Of those, how many end at or below the sea (reaching the water line counts here).
    wet: usize,
    /// Deepest an input land node ends below the sea, metres (0 if none).
    deepest: f32,
    /// Land nodes (after) more than [`EXTREME`] below / above all 8 neighbours.
    pits: usize,
    spikes: usize,
    /// Slope–area concavity θ (−slope of the least-squares line of log S against log A over
    /// land channel nodes), and the number of nodes fitted.
    theta: f64,
    fitted: usize,
}

impl Figures {
    fn lost_pct(&self) -> f64 {
        100.0 * self.lost as f64 / self.land.max(1) as f64
    }
}

/// Single-node pits and spikes on land (interior nodes above the sea).
fn extremes(hm: &Heightmap, sea: f32) -> (usize, usize) {
    let (w, h) = (hm.width, hm.height);
    let (mut pits, mut spikes) = (0, 0);
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let c = hm.data[y * w + x];
            if c <= sea {
                continue;
            }
            let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
            for dy in -1isize..=1 {
                for dx in -1isize..=1 {
                    if dx == 0 && dy == 0 {
                        continue;
                    }
                    let v = hm.data[(y as isize + dy) as usize * w + (x as isize + dx) as usize];
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
            pits += (c < lo - EXTREME) as usize;
            spikes += (c > hi + EXTREME) as usize;
        }
    }
    (pits, spikes)
}

/// Min-heap entry of the priority flood.
#[derive(PartialEq)]
struct Open(f32, usize);
impl Eq for Open {}
impl PartialOrd for Open {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Open {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

/// Slope–area concavity: drainage follows the priority-flood tree (Barnes 2014: outlets are the
/// sea nodes and the map border; each node drains to the node it was reached from, which routes
/// across pits and flats), area = upstream node count × cell², slope = drop to the receiver on
/// the *unfilled* heights over the distance. Fits log S = k − θ log A over land nodes with area
/// ≥ 64 nodes and a positive slope. Returns (θ, nodes fitted).
fn concavity(hm: &Heightmap, sea: f32) -> (f64, usize) {
    let (w, h, n) = (hm.width, hm.height, hm.data.len());
    let mut rcv = vec![usize::MAX; n];
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut fill = hm.data.clone();
    let mut heap = BinaryHeap::new();
    for i in 0..n {
        let (x, y) = (i % w, i / w);
        if hm.data[i] <= sea || x == 0 || y == 0 || x == w - 1 || y == h - 1 {
            seen[i] = true;
            rcv[i] = i;
            heap.push(Open(fill[i], i));
        }
    }
    while let Some(Open(z, i)) = heap.pop() {
        order.push(i);
        let (x, y) = ((i % w) as isize, (i / w) as isize);
        for dy in -1isize..=1 {
            for dx in -1isize..=1 {
                let (nx, ny) = (x + dx, y + dy);
                if (dx == 0 && dy == 0) || nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if seen[j] {
                    continue;
                }
                seen[j] = true;
                rcv[j] = i;
                fill[j] = fill[j].max(z + 1e-4);
                heap.push(Open(fill[j], j));
            }
        }
    }
    let mut area = vec![1.0f64; n];
    for &i in order.iter().rev() {
        if rcv[i] != i {
            area[rcv[i]] += area[i];
        }
    }
    let cs = hm.cell_size as f64;
    let (mut sx, mut sy, mut sxx, mut sxy, mut k) = (0.0, 0.0, 0.0, 0.0, 0usize);
    for i in 0..n {
        let r = rcv[i];
        if r == i || hm.data[i] <= sea || area[i] < 64.0 {
            continue;
        }
        let (dx, dy) = ((i % w) as f64 - (r % w) as f64, (i / w) as f64 - (r / w) as f64);
        let dist = (dx * dx + dy * dy).sqrt() * cs;
        let s = (hm.data[i] as f64 - hm.data[r] as f64) / dist;
        if s <= 1e-5 {
            continue;
        }
        let (la, ls) = ((area[i] * cs * cs).ln(), s.ln());
        sx += la;
        sy += ls;
        sxx += la * la;
        sxy += la * ls;
        k += 1;
    }
    let kf = k as f64;
    let slope = (kf * sxy - sx * sy) / (kf * sxx - sx * sx);
    (-slope, k)
}

fn figures(before: &Heightmap, after: &Heightmap, sea: f32) -> Figures {
    let (mut land, mut lost, mut wet, mut deepest) = (0, 0, 0, 0.0f32);
    for (&a, &b) in before.data.iter().zip(&after.data) {
        if a > sea {
            land += 1;
            wet += (b <= sea) as usize;
            if b < sea {
                lost += 1;
                deepest = deepest.max(sea - b);
            }
        }
    }
    let (pits, spikes) = extremes(after, sea);
    let (theta, fitted) = concavity(after, sea);
    Figures { land, lost, wet, deepest, pits, spikes, theta, fitted }
}

/// The default island at `size`² (the demo's generator and seed).
fn island(size: usize) -> Heightmap {
    erosion_input(size, 1)
}

fn erosion_input(size: usize, seed: u64) -> Heightmap {
    talus::core::generate::generate(&talus::cli::demo_params(size, seed)).unwrap()
}

fn run(hm: &Heightmap, params: ModelParams) -> Box<dyn Simulation> {
    let inputs = JobInputs { seed: 1, sea_level: Some(SEA), ..Default::default() };
    let mut sim = erosion::build(hm.clone(), &params, inputs).unwrap();
    erosion::run(sim.as_mut(), &AtomicBool::new(false), |_| {});
    sim
}

fn check(name: &str, before: &Heightmap, sim: &dyn Simulation) {
    let l = sim.ledger();
    assert!(l.closes(1e-4), "{name}: books do not close: {l:?}");
    let f = figures(before, sim.heightmap(), SEA);
    let f0 = figures(before, before, SEA);
    eprintln!("{name}: input {f0:?}\n{name}: after {f:?}");
    eprintln!(
        "{name}: land lost {:.2} %, θ {:.3} over {} nodes (input θ {:.3})",
        f.lost_pct(),
        f.theta,
        f.fitted,
        f0.theta
    );
    assert!(f.lost_pct() <= 2.0, "{name}: {:.2} % of the land went under water", f.lost_pct());
    assert!(f.wet as f64 <= 0.02 * f.land as f64, "{name}: {} land nodes reached the water line", f.wet);
    assert!(f.deepest <= 2.0, "{name}: land dug {} m below the sea", f.deepest);
    assert!(f.pits + f.spikes <= 5, "{name}: {} pits and {} spikes on land", f.pits, f.spikes);
}

#[test]
fn droplet_default_keeps_the_coast_and_leaves_no_pits_or_spikes() {
    let hm = island(257);
    // The demo's density: one droplet per two nodes.
    let p = DropletParams { droplets_per_km2: MapSize::of(&hm).per_km2(257 * 257 / 2), ..DropletParams::default() };
    let sim = run(&hm, ModelParams::Droplet(p));
    check("droplet", &hm, sim.as_ref());
}

#[test]
fn snowball_default_keeps_the_coast_and_leaves_no_pits_or_spikes() {
    let hm = island(257);
    let sim = run(&hm, ModelParams::Snowball(SnowballParams::default()));
    check("snowball", &hm, sim.as_ref());
}

#[test]
fn sea_runs_are_deterministic() {
    let hm = island(65);
    let p = ModelParams::Droplet(DropletParams {
        droplets_per_km2: MapSize::of(&hm).per_km2(2000),
        ..DropletParams::default()
    });
    let a = run(&hm, p.clone());
    let b = run(&hm, p);
    assert_eq!(a.heightmap().data, b.heightmap().data);
}

/// Prints the figures of `TALUS_BEFORE` → `TALUS_AFTER` (BHEF files; cell size `TALUS_CELL`,
/// default 2 m): `TALUS_BEFORE=a.bhef TALUS_AFTER=b.bhef cargo test --release --test erosion_sea
/// measure_files -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_files() {
    let (Ok(a), Ok(b)) = (std::env::var("TALUS_BEFORE"), std::env::var("TALUS_AFTER")) else { return };
    let cs: f32 = std::env::var("TALUS_CELL").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let mut before = talus::core::io::bhef::load(std::path::Path::new(&a)).unwrap();
    let mut after = talus::core::io::bhef::load(std::path::Path::new(&b)).unwrap();
    before.cell_size = cs;
    after.cell_size = cs;
    let f0 = figures(&before, &before, SEA);
    let f = figures(&before, &after, SEA);
    println!("input: {f0:?}");
    println!("after: {f:?}; land lost {:.2} %, θ {:.3} over {} nodes", f.lost_pct(), f.theta, f.fitted);
}
