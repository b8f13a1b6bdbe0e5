//! Builds of the reference project at production sizes (issue #26, item 4): time and peak resident
//! memory of `editor::build` taking the 513² reference project (the default island, a painted
//! ridge, the default Simulate: stream power) to 4097², 8193² and 16385², and writing the result
//! as BHEF. Prints a table (not timed assertions: the machines are shared and noisy).
//!
//! Each size runs in a fresh process (this binary runs itself with `TALUS_BUILD_BENCH_CHILD`), so
//! the peak memory of one build is not the sum of the ones before it; the child reports its own
//! `VmHWM`. The parent prints the memory estimate the build checked before allocating, beside
//! what it used.
//!
//! Run: `cargo bench --no-default-features --bench build` (4097² and 8193², the default build
//! mode, Refine), or with sizes: `cargo bench --no-default-features --bench build -- 4097 8193
//! 16385`; `-- --upsample` or `--rerun` for the other modes, and `--cell-size 8` for the
//! reference project at 8 m cells (4 096 m across, a world size users ship) instead of the
//! 1 024 m island.

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use talus::core::erosion::registry;
use talus::editor::build::reference::reference_stack_with;
use talus::editor::build::{BuildRequest, ErosionBuild, build_in_memory, plan};

const CHILD: &str = "TALUS_BUILD_BENCH_CHILD";

fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<u64>().ok()))
        .map_or(0, |k| k * 1024)
}

/// One build in this process: prints `seconds build_seconds peak_bytes estimate_bytes`.
fn child(size: usize, erosion: ErosionBuild, cell: Option<f32>) {
    let stack =
        reference_stack_with(513, cell, &[(registry::default_model().editor_default)()]).expect("reference project");
    let opts = BuildRequest::in_memory(size, erosion);
    let estimate = plan(&stack, &opts).expect("plan").bytes;
    let t = Instant::now();
    let built = build_in_memory(&stack, &opts, &AtomicBool::new(false), &|_| {}).expect("build");
    let build_s = t.elapsed().as_secs_f64();
    let dir = std::env::temp_dir().join(format!("talus-build-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("build.bhef");
    talus::core::io::bhef::save_atomic(&out, &built.map).expect("write");
    let total_s = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    println!("{total_s} {build_s} {} {estimate}", peak_rss());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--bench")).collect();
    let erosion = if args.iter().any(|a| a == "--rerun") {
        ErosionBuild::Rerun
    } else if args.iter().any(|a| a == "--upsample") {
        ErosionBuild::Upsample
    } else {
        ErosionBuild::Refine
    };
    let cell: Option<f32> =
        args.iter().position(|a| a == "--cell-size").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok());
    if let Ok(n) = std::env::var(CHILD) {
        child(n.parse().expect("size"), erosion, cell);
        return;
    }
    let mut sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || args[i - 1] != "--cell-size")
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![4097, 8193];
    }
    let gib = |b: f64| b / (1u64 << 30) as f64;
    println!(
        "Reference project 513² at {} (stream power), erosion layers: {}",
        cell.map_or("2 m cells (1 024 m)".to_string(), |c| format!("{c} m cells")),
        erosion.name()
    );
    println!("| build | wall (build + BHEF write) | build alone | peak RSS | estimate |");
    println!("|---|---|---|---|---|");
    let me = std::env::current_exe().expect("own path");
    for n in sizes {
        let mut cmd = Command::new(&me);
        cmd.env(CHILD, n.to_string());
        cmd.args(std::env::args().skip(1).filter(|a| !a.starts_with("--bench")));
        let out = cmd.output().expect("run the child");
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<f64> = text.split_whitespace().filter_map(|v| v.parse().ok()).collect();
        if !out.status.success() || f.len() != 4 {
            println!("| {n}² | failed: {} | | | |", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
            continue;
        }
        println!("| {n}² | {:.1} s | {:.1} s | {:.2} GiB | {:.2} GiB |", f[0], f[1], gib(f[2]), gib(f[3]));
    }
}
