//! Engine tile sets at production sizes (issue #36, part 4): wall time of each part of a tile-set
//! build (the build itself, the flow map's drainage, the tiles and maps) and peak resident
//! memory, at several thread counts. The 513² reference project (the default island, a painted
//! ridge, stream power) is built with `--erosion upsample` (the cheap mode, so the tile set's own
//! parts are most of the time) and cut as Unity tiles of `(N − 1)/K + 1` nodes, R16 heights and
//! all six maps. Prints a table (not timed assertions: the machines are shared and noisy).
//!
//! Each run is a fresh process (this binary runs itself with `TALUS_TILES_BENCH_CHILD`) with
//! `RAYON_NUM_THREADS` set, so the peak memory is that run's own (`VmHWM`) and the thread count
//! is rayon's whole pool. Beside each part's wall time, the CPU time all its threads used (user +
//! system, `/proc/self/stat`): the work, which other load on the machine barely moves; wall over
//! CPU shows how well the part used its threads.
//!
//! Run: `cargo bench --no-default-features --bench tiles` (4097² as 4×4 tiles, 1 and 2
//! threads), or `cargo bench --no-default-features --bench tiles -- 8193 --tiles 4 --threads
//! 1,2`.

use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use talus::core::erosion::registry;
use talus::core::io::tiles::{Engine, MapKind};
use talus::editor::build::reference::reference_stack_with;
use talus::editor::build::{BuildContext, BuildRequest, ErosionBuild, Phase, Target, TileTarget, prepare};

const CHILD: &str = "TALUS_TILES_BENCH_CHILD";

/// CPU seconds (user + system) of every thread of this process so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name's closing parenthesis: utime and stime are the 12th and
    // 13th, in clock ticks (100 a second on Linux).
    let f: Vec<f64> =
        stat.rsplit(')').next().unwrap_or("").split_whitespace().map(|v| v.parse().unwrap_or(0.0)).collect();
    f.get(11).zip(f.get(12)).map_or(0.0, |(u, s)| (u + s) / 100.0)
}

fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<u64>().ok()))
        .map_or(0, |k| k * 1024)
}

/// One tile-set build in this process: prints the wall and CPU seconds of the build, the flow map
/// and the tiles, then the peak bytes.
fn child(size: usize, tiles: usize) {
    let mut stack =
        reference_stack_with(513, None, &[(registry::default_model().editor_default)()]).expect("reference project");
    let dir = std::env::temp_dir().join(format!("talus-tiles-bench-{}", std::process::id()));
    let req = BuildRequest {
        size: Some(size),
        erosion: ErosionBuild::Upsample,
        target: Target::Tiles(TileTarget {
            engine: Engine::Unity,
            tiles,
            format: None,
            maps: MapKind::ALL.to_vec(),
            dir: dir.clone(),
            name: Some("ref".into()),
            replace: true,
        }),
        keep_input: false,
        refine: Default::default(),
    };
    let prepared = prepare(&stack, &req, &BuildContext::default()).expect("prepare");
    // When each phase began: the flow map's drainage, then the tiles.
    let marks: Mutex<Vec<(&str, Instant, f64)>> = Mutex::new(Vec::new());
    let (t, c0) = (Instant::now(), cpu_seconds());
    prepared
        .run(&mut stack, &AtomicBool::new(false), &|p| {
            let name = match p.phase {
                Phase::Flow { .. } => "flow",
                Phase::Tiles { .. } => "tiles",
                _ => return,
            };
            let mut m = marks.lock().unwrap();
            if m.last().is_none_or(|l| l.0 != name) {
                m.push((name, Instant::now(), cpu_seconds()));
            }
        })
        .expect("build");
    let (total, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c0);
    let _ = std::fs::remove_dir_all(&dir);
    let m = marks.into_inner().unwrap();
    let at = |name: &str| {
        let l = m.iter().find(|l| l.0 == name).unwrap_or_else(|| panic!("a {name} phase"));
        (l.1.duration_since(t).as_secs_f64(), l.2 - c0)
    };
    let ((flow, flow_cpu), (tiles, tiles_cpu)) = (at("flow"), at("tiles"));
    println!(
        "{total} {flow} {} {} {flow_cpu} {} {} {}",
        tiles - flow,
        total - tiles,
        tiles_cpu - flow_cpu,
        cpu - tiles_cpu,
        peak_rss()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--bench")).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let tiles: usize = value("--tiles").and_then(|v| v.parse().ok()).unwrap_or(4);
    if let Ok(n) = std::env::var(CHILD) {
        child(n.parse().expect("size"), tiles);
        return;
    }
    let threads: Vec<usize> =
        value("--threads").unwrap_or_else(|| "1,2".into()).split(',').filter_map(|v| v.parse().ok()).collect();
    let mut sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !["--tiles", "--threads"].contains(&args[i - 1].as_str()))
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![4097];
    }
    let gib = |b: f64| b / (1u64 << 30) as f64;
    println!("Reference project 513², erosion upsample, Unity {tiles}×{tiles} tiles, R16, all maps");
    println!("| size | threads | wall | build | flow map | tiles and maps | CPU: build / flow / tiles | peak RSS |");
    println!("|---|---|---|---|---|---|---|---|");
    let me = std::env::current_exe().expect("own path");
    for &n in &sizes {
        for &th in &threads {
            let out = Command::new(&me)
                .env(CHILD, n.to_string())
                .env("RAYON_NUM_THREADS", th.to_string())
                .args(std::env::args().skip(1).filter(|a| !a.starts_with("--bench")))
                .output()
                .expect("run the child");
            let text = String::from_utf8_lossy(&out.stdout);
            let f: Vec<f64> = text.split_whitespace().filter_map(|v| v.parse().ok()).collect();
            if !out.status.success() || f.len() != 8 {
                let why = String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string();
                println!("| {n}² | {th} | failed: {why} | | | | | |");
                continue;
            }
            println!(
                "| {n}² | {th} | {:.2} s | {:.2} s | {:.2} s | {:.2} s | {:.1} / {:.1} / {:.1} s | {:.2} GiB |",
                f[0],
                f[1],
                f[2],
                f[3],
                f[4],
                f[5],
                f[6],
                gib(f[7])
            );
        }
    }
}
