//! Every model's default run on the default island (issue #13): the sea stays the end of every
//! flow (at most 2 % of the land goes under), no grid direction stands out (anisotropy of the map
//! and of the change ≤ 1.5 along the axes and the diagonals), and no single-node pits or spikes
//! are left on land (at most 5). Measured with the same analysis `talus analyze` prints
//! (`talus::core::analysis`); the figures are printed, the README's per-model table holds them.
//!
//! Stream power's default has its own, stricter test (concavity too) in
//! `tests/erosion_stream_power.rs`.

use std::sync::atomic::AtomicBool;

use talus::core::Heightmap;
use talus::core::analysis::{self, AnalysisParams, TerrainReport};
use talus::core::erosion::droplet::DropletParams;
use talus::core::erosion::pipe::PipeParams;
use talus::core::erosion::{self, JobInputs, ModelParams};

/// The default island (the demo's generator and seed) and its sea level.
fn island() -> (Heightmap, f32) {
    let gp = talus::cli::demo_params(513, 1);
    let hm = talus::core::generate::generate(&gp).unwrap();
    let sea = gp.sea_level.as_ref().map(|s| s.level).expect("the default island has a sea");
    (hm, sea)
}

/// Runs `params` to the end on the island and analyses the result against it.
fn run(name: &str, params: ModelParams) -> TerrainReport {
    let (hm, sea) = island();
    let inputs = JobInputs { seed: 1, sea_level: Some(sea), ..Default::default() };
    let mut sim = erosion::build(hm.clone(), &params, inputs).unwrap();
    erosion::run(sim.as_mut(), &AtomicBool::new(false), |_| {});
    let l = sim.ledger();
    assert!(l.closes(1e-4), "{name}: the books do not close: {l:?}");
    let rep = analysis::compare(&hm, sim.heightmap(), sea, &AnalysisParams::default()).unwrap();
    let c = rep.comparison.as_ref().unwrap();
    eprintln!(
        "{name}: θ {:?}, pits {} / spikes {}, anisotropy map {:?}, change {:?}, land lost {:.2} %, mean |Δh| {:.2} m",
        rep.concavity.as_ref().map(|k| k.theta),
        rep.pits,
        rep.spikes,
        rep.anisotropy.as_ref().map(|a| (a.axis_ratio, a.diagonal_ratio)),
        c.change_anisotropy.as_ref().map(|a| (a.axis_ratio, a.diagonal_ratio)),
        100.0 * c.land_lost_fraction,
        c.mean_abs_change_m,
    );
    assert!(
        c.land_lost_fraction <= 0.02,
        "{name}: {:.2} % of the land went under the sea",
        100.0 * c.land_lost_fraction
    );
    assert!(
        rep.pits <= 5 && rep.spikes <= 5,
        "{name}: {} single-node pits and {} spikes on land",
        rep.pits,
        rep.spikes
    );
    for (what, a) in [("map", rep.anisotropy.as_ref()), ("change", c.change_anisotropy.as_ref())] {
        let a = a.unwrap_or_else(|| panic!("{name}: no anisotropy of the {what}"));
        assert!(
            a.axis_ratio <= 1.5 && a.diagonal_ratio <= 1.5,
            "{name}: the {what} has a preferred grid direction: {a:?}"
        );
    }
    assert!(c.mean_abs_change_m > 0.01, "{name}: the default run changed almost nothing ({} m)", c.mean_abs_change_m);
    rep
}

#[test]
fn droplets_default_editor_count() {
    // The editor's default count (`default_models`): one droplet per 1.3 nodes.
    // 200 000 droplets on the island's 1.048576 km².
    run(
        "droplets 200 000",
        ModelParams::Droplet(DropletParams { droplets_per_km2: 190_734.863_281_25, ..Default::default() }),
    );
}

#[test]
fn droplets_default() {
    run("droplets", ModelParams::Droplet(DropletParams::default()));
}

#[test]
fn snowball_default() {
    run("snowball", ModelParams::Snowball(Default::default()));
}

#[test]
fn pipe_default_2000_steps() {
    // Issue #13 judges the pipe model on 2000 steps (its default is 1000).
    run("pipe, 2000 steps", ModelParams::Pipe(PipeParams { steps: 2000, ..Default::default() }));
}

#[test]
fn thermal_default() {
    run("thermal", ModelParams::Thermal(Default::default()));
}
