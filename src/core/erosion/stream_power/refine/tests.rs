//! The pass's deposition (module doc, step 4) on a hillside above a plain: where the load settles,
//! that it makes no pit, and that `G = 0` is the detachment-limited pass.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::core::erosion::{Boundary, EdgeMode};

const W: usize = 96;
const H: usize = 48;
/// The foot of the hillside, in nodes from the west edge.
const FOOT: usize = 40;
const CELL: f32 = 2.0;

/// A hillside (a drop of 0.5 m per node, with shallow hollows across it so water gathers into
/// gullies) down to a plain that falls 1 cm per node to a drain edge in the east; the other
/// edges are walls.
fn hillside() -> Heightmap {
    Heightmap::from_fn(W, H, CELL, |x, y| {
        let hollow = 0.8 * (1.0 - ((y as f32) * std::f32::consts::TAU / 12.0).cos());
        let plain = 0.01 * (W - 1 - x) as f32;
        if x < FOOT { plain + 0.5 * (FOOT - x) as f32 + hollow * (FOOT - x) as f32 / FOOT as f32 } else { plain }
    })
    .unwrap()
}

fn inputs() -> JobInputs {
    let b = Boundary { left: EdgeMode::Wall, top: EdgeMode::Wall, bottom: EdgeMode::Wall, right: EdgeMode::Drain };
    JobInputs { boundary: b, seed: 1, ..Default::default() }
}

/// The pass with deposition `g` on the hillside: the heights after it.
fn run(g: f32) -> Heightmap {
    let input = hillside();
    let mut map = input.clone();
    let mut drainage = vec![CELL * CELL; W * H];
    let mut lv =
        Level { map: &mut map, input: &input, drainage: &mut drainage, index: 1, levels: 1, input_range: None };
    let p = StreamPowerParams { uplift: 0.0, diffusion: 0.0, ..Default::default() };
    let r = RefineParams { deposition: g, stream_power_years: 40_000.0, drainage_sweeps: 64, ..Default::default() };
    pass(&p, &r, &mut lv, &inputs(), &AtomicBool::new(false)).unwrap();
    map
}

/// Land nodes lower than all eight neighbours (the interior only).
fn pits(m: &Heightmap) -> usize {
    let mut n = 0;
    for y in 1..H - 1 {
        for x in 1..W - 1 {
            let v = m.get(x, y);
            let lowest = (0..9).filter(|&k| k != 4).all(|k| m.get(x + k % 3 - 1, y + k / 3 - 1) > v);
            n += lowest as usize;
        }
    }
    n
}

#[test]
fn the_load_settles_at_the_foot_of_the_slope() {
    let bare = hillside();
    let cut = run(0.0);
    let filled = run(1.0);
    // Without deposition the pass only lowers; with it, the gullies' load builds an apron on the
    // plain below the foot, and the hillside keeps more of its height than the material it sheds.
    assert!(cut.data.iter().zip(&bare.data).all(|(c, b)| c <= b));
    let apron: f64 = (0..H)
        .flat_map(|y| (FOOT..FOOT + 12).map(move |x| (x, y)))
        .map(|(x, y)| (filled.get(x, y) - cut.get(x, y)) as f64)
        .sum();
    let raised = (0..W * H).filter(|&i| filled.data[i] > bare.data[i] + 1e-4).count();
    assert!(apron > 0.0 && raised > 0, "apron {apron} m, {raised} nodes raised");
    let lost = |m: &Heightmap| -> f64 { bare.data.iter().zip(&m.data).map(|(b, v)| (b - v) as f64).sum() };
    assert!(lost(&filled) < lost(&cut), "deposition keeps material on the map: {} vs {}", lost(&filled), lost(&cut));
    // No pit made: the apron never rises above the donors that feed it.
    assert_eq!(pits(&filled), pits(&bare), "pits");
    assert!(filled.data.iter().all(|v| v.is_finite()));
}

#[test]
fn no_deposition_is_the_detachment_limited_pass_and_runs_are_the_same_bits() {
    let a = run(0.0);
    let b = run(0.0);
    assert_eq!(a.data, b.data);
    let c = run(0.5);
    let d = run(0.5);
    assert!(c.data.iter().zip(&d.data).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert_ne!(a.data, c.data);
    // More deposition, more of the hillside kept.
    let kept = |m: &Heightmap| -> f64 { m.data.iter().map(|&v| v as f64).sum() };
    assert!(kept(&run(2.0)) > kept(&c) && kept(&c) > kept(&a));
}

#[test]
fn deposition_out_of_range_is_refused() {
    let input = hillside();
    let mut map = input.clone();
    let mut drainage = vec![CELL * CELL; W * H];
    let mut lv =
        Level { map: &mut map, input: &input, drainage: &mut drainage, index: 1, levels: 1, input_range: None };
    let r = RefineParams { deposition: -1.0, ..Default::default() };
    assert!(pass(&StreamPowerParams::default(), &r, &mut lv, &inputs(), &AtomicBool::new(false)).is_err());
    assert_eq!(map.data, input.data);
}
