//! Each model's `build_bytes_per_node` (its registry entry: what a build's memory estimate adds
//! per node for a re-run) covers what its CPU job really holds: the peak of the heap while the job
//! is built, run to its end and finished, less what was there before (the terrain and the
//! inputs), per node of the map. Counted by a global allocator, with every option that costs
//! memory switched on: a hardness map, a sink-mode steering mask, a sea level, and each model's
//! costly parameters (the droplets' change blur, the pipe model's rain map, interleaved thermal
//! and MacCormack advection, stream power's MFD routing and diffusion).
//!
//! One test in its own binary, so that no other test allocates while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use talus::core::Heightmap;
use talus::core::erosion::droplet::DropletParams;
use talus::core::erosion::pipe::{Advection, PipeParams};
use talus::core::erosion::snowball::SnowballParams;
use talus::core::erosion::steer::Steer;
use talus::core::erosion::stream_power::{FlowMethod, StreamPowerParams};
use talus::core::erosion::thermal::ThermalParams;
use talus::core::erosion::{self, JobInputs, ModelParams};

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the same arguments; the counters are atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `System.alloc`, whose contract the caller keeps.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `System.alloc_zeroed`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `System.dealloc`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `System.realloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Both blocks may be live during the move: count the new one before the old one goes.
            let live = LIVE.fetch_add(new_size, Ordering::SeqCst) + new_size;
            PEAK.fetch_max(live, Ordering::SeqCst);
            LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const W: usize = 385;
const H: usize = 321;

/// An island with ridges, below the sea at its rim.
fn island() -> Heightmap {
    let data = (0..W * H)
        .map(|i| {
            let (x, y) = ((i % W) as f32 / (W - 1) as f32, (i / W) as f32 / (H - 1) as f32);
            let r2 = (x - 0.5).powi(2) + (y - 0.5).powi(2);
            120.0 * (1.0 - 3.0 * r2) + 6.0 * (23.0 * x).sin() * (17.0 * y).cos() + 2.0 * (61.0 * x + 7.0 * y).sin()
        })
        .collect();
    Heightmap::from_data(W, H, 2.0, data).unwrap()
}

/// Hardness in `[0.3, 1.3]` and a sink-mode mask of weights 0, ½ and 1.
fn inputs() -> JobInputs {
    let hardness = (0..W * H).map(|i| 0.3 + (i % 11) as f32 / 10.0).collect();
    let weights = (0..W * H).map(|i| [0.0, 0.5, 1.0, 1.0][i % 4]).collect();
    JobInputs {
        hardness: Some(hardness),
        boundary: Default::default(),
        seed: 3,
        sea_level: Some(20.0),
        steer: Some(Steer::new(weights, true)),
    }
}

/// Bytes per node the job of `params` holds at its peak beyond what was live before it.
fn measured(params: &ModelParams) -> f64 {
    let (terrain, inputs) = (island(), inputs());
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let mut job = erosion::build(terrain, params, inputs).unwrap();
    erosion::run(job.as_mut(), &AtomicBool::new(false), |_| {});
    assert!(job.progress().done > 0, "{}", params.entry().name);
    drop(job);
    (PEAK.load(Ordering::SeqCst) - base) as f64 / (W * H) as f64
}

#[test]
fn each_models_build_estimate_covers_its_jobs_measured_peak() {
    // Rayon's pool and its threads' first allocations, before anything is measured.
    rayon::scope(|_| {});
    let rain: Vec<f32> = (0..W * H).map(|i| if i % W < W / 3 { 0.0 } else { 2e-5 }).collect();
    let cases = [
        ("droplet", ModelParams::Droplet(DropletParams { droplets_per_km2: 40_000.0, ..Default::default() })),
        (
            "droplet, change blur",
            ModelParams::Droplet(DropletParams { droplets_per_km2: 40_000.0, blur_m: Some(3.0), ..Default::default() }),
        ),
        ("snowball", ModelParams::Snowball(SnowballParams { snowballs_per_km2: 40_000.0, ..Default::default() })),
        ("pipe", ModelParams::Pipe(PipeParams { steps: 20, ..Default::default() })),
        (
            "pipe, rain map, thermal, MacCormack",
            ModelParams::Pipe(PipeParams {
                steps: 20,
                rain_map: Some(rain),
                thermal: Some(ThermalParams::default()),
                advection: Advection::MacCormack,
                ..Default::default()
            }),
        ),
        ("thermal", ModelParams::Thermal(ThermalParams { iterations: 10, ..Default::default() })),
        (
            "stream power, D8, no diffusion",
            ModelParams::StreamPower(StreamPowerParams {
                steps: 5,
                routing: FlowMethod::D8,
                diffusion: 0.0,
                ..Default::default()
            }),
        ),
        (
            "stream power (MFD, diffusion)",
            ModelParams::StreamPower(StreamPowerParams { steps: 5, ..Default::default() }),
        ),
    ];
    let mut short = Vec::new();
    for (name, params) in &cases {
        let got = measured(params);
        let stated = params.build_bytes_per_node();
        eprintln!("{name}: measured {got:.1} B/node, stated {stated}");
        // A few fixed tables (stream power's A^m table: 128 KiB) are not per node.
        if got > stated as f64 + 4.0 {
            short.push(format!("{name}: measured {got:.1} B/node, stated {stated}"));
        }
    }
    assert!(short.is_empty(), "estimates below the measured peak: {short:?}");
}
