//! A build's loupe at production sizes (issue #34, item 5): a window of side `S` metres at the
//! middle of the reference project at 513² with 8 m cells (4 096 m across; stream power, as
//! `talus demo --project p.talus --size 513 --cell-size 8 --layers stream-power` makes it), seen
//! at 4097² and 8193² as the default build (Refine) makes it. Prints the time of a first loupe
//! (the whole base generated at the build's size), of a second one elsewhere (the base kept), the
//! area built, and, with `--compare`, the largest and RMS difference of the loupe's window from
//! the same window of the whole build (which takes minutes at 4097² and more at 8193²). A table,
//! not timed assertions: the machines are shared and noisy.
//!
//! Run: `cargo bench --no-default-features --bench loupe` (4097² and 8193², 256 m), or with sizes
//! and options: `cargo bench --no-default-features --bench loupe -- 4097 --side 512 --compare`.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use talus::core::erosion::registry;
use talus::editor::build::loupe::{BaseCache, LoupeSpec, loupe_with};
use talus::editor::build::reference::reference_stack_with;
use talus::editor::build::{BuildRequest, ErosionBuild, build_in_memory};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--bench")).collect();
    let compare = args.iter().any(|a| a == "--compare");
    let side: f32 = args
        .iter()
        .position(|a| a == "--side")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(256.0);
    let mut sizes: Vec<usize> =
        args.iter().filter(|a| !a.starts_with("--")).filter_map(|a| a.parse().ok()).filter(|&n| n > 513).collect();
    if sizes.is_empty() {
        sizes = vec![4097, 8193];
    }
    let t = Instant::now();
    let stack = reference_stack_with(513, Some(8.0), &[(registry::default_model().editor_default)()])
        .expect("reference project");
    println!(
        "Reference project 513² at 8 m (stream power), made in {:.1} s; a {side} m loupe, Refine",
        t.elapsed().as_secs_f64()
    );
    println!(
        "| build | first loupe | second loupe (base kept) | area built | margin | vs the whole build: max / RMS |"
    );
    println!("|---|---|---|---|---|---|");
    let no = AtomicBool::new(false);
    for n in sizes {
        let req = BuildRequest::in_memory(n, ErosionBuild::Refine);
        let cache = BaseCache::default();
        let centre = [2048.0, 2048.0];
        let a = loupe_with(&stack, &req, &LoupeSpec::new(centre, side), &cache, &no, &|_| {}).expect("loupe");
        let b = loupe_with(&stack, &req, &LoupeSpec::new([1500.0, 2600.0], side), &cache, &no, &|_| {}).expect("loupe");
        let diff = if compare {
            let full = build_in_memory(&stack, &req, &no, &|_| {}).expect("build").map;
            let (mut max, mut sum) = (0.0f64, 0.0f64);
            let [x0, y0] = a.build_origin;
            for y in 0..a.build.height {
                for x in 0..a.build.width {
                    let d = (a.build.get(x, y) - full.get(x0 + x, y0 + y)) as f64;
                    max = max.max(d.abs());
                    sum += d * d;
                }
            }
            let rms = (sum / (a.build.width * a.build.height) as f64).sqrt();
            format!("{:.2} / {:.2} mm", max * 1e3, rms * 1e3)
        } else {
            "(--compare)".into()
        };
        println!(
            "| {n}² | {:.2} s | {:.2} s | {}×{} nodes | {} cells | {diff} |",
            a.seconds, b.seconds, a.area_nodes.0, a.area_nodes.1, a.margin_cells
        );
    }
}
