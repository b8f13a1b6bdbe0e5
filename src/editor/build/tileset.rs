//! A build written as an engine tile set (issue #27): what `talus build --tiles` and the Build…
//! dialog's "Engine tile set" both run, so the two write the same files from the same project.
//!
//! The project is built once at the set's whole size `W = Kx·(S − 1) + 1` ([`super::build`]), the
//! flow map's drainage is computed on that global build when it is asked for, and
//! [`crate::core::io::tiles::write_tile_set`] cuts the tiles and maps band by band into a temporary
//! folder renamed at the end (formats, the shared height range and the manifest are documented
//! there). Cut from one build, neighbouring tiles share their edge rows bit for bit.
//!
//! [`layouts`] lists the tilings an engine allows for a project (the dialog's Tiles menu);
//! [`plan`] adds the tile set's parts to the build's plan and memory estimate; [`run`] does it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{
    BuildError, BuildOptions, BuildPlan, BuildProgress, ErosionBuild, build, build_height, check_side, sea_level,
};
use crate::core::analysis::flow_log_area;
use crate::core::io::tiles::{
    self, Engine, Manifest, MapKind, TileError, TileFormat, TileLayout, TileSetInput, tile_sizes,
};
use crate::core::splat::SplatBands;
use crate::editor::layers::LayerStack;

/// Most tiles across a layout [`layouts`] offers.
pub const MAX_TILES_ACROSS: usize = 32;

/// What a tile set is made of: the engine, the height tiles' format, the tiling, the maps, the
/// tiles' file-name prefix, and how erosion layers are rebuilt.
#[derive(Clone, Debug, PartialEq)]
pub struct TileSetRequest {
    /// The engine whose conventions the set follows.
    pub engine: Engine,
    /// The height tiles' file format.
    pub format: TileFormat,
    /// The tiling; its width and height are the build's.
    pub layout: TileLayout,
    /// The texture maps to write beside the heights.
    pub maps: Vec<MapKind>,
    /// File-name prefix of the tiles.
    pub name: String,
    /// How erosion layers are rebuilt at the set's size.
    pub erosion: ErosionBuild,
    /// Replace a folder that is not empty (only once the new set is complete).
    pub force: bool,
}

impl TileSetRequest {
    /// The options of the global build the tiles are cut from (with the erosion change when the
    /// erosion or deposition map is asked for).
    pub fn options(&self) -> BuildOptions {
        BuildOptions {
            width: self.layout.width(),
            erosion: self.erosion,
            keep_input: false,
            erosion_change: tiles::needs_erosion_change(&self.maps),
        }
    }
}

/// Why `name` cannot prefix the tiles' file names, if it cannot.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || name.chars().any(char::is_control) {
        return Err(format!("tile name {name:?}: give a file-name prefix without folders (e.g. \"island\")"));
    }
    Ok(())
}

/// Every tiling `engine` allows for a project of `w × h` nodes, smallest build first (then fewest
/// tiles): tile sizes of the engine, up to [`MAX_TILES_ACROSS`] tiles across, whose whole width
/// is a build size and whose height (the project's aspect) is a whole number of tiles.
pub fn layouts(engine: Engine, w: usize, h: usize) -> Vec<TileLayout> {
    let mut out = Vec::new();
    for &s in tile_sizes(engine) {
        for kx in 1..=MAX_TILES_ACROSS {
            let width = kx * (s - 1) + 1;
            if check_side(width).is_err() {
                continue;
            }
            let Ok(height) = build_height(w, h, width) else { continue };
            if (height - 1).is_multiple_of(s - 1) {
                out.push(TileLayout { tiles_x: kx, tiles_y: (height - 1) / (s - 1), tile_size: s });
            }
        }
    }
    out.sort_by_key(|l| (l.width(), l.tiles_x));
    out
}

/// The layout of [`layouts`] for a build about `width` nodes across with `tiles_x` tiles across:
/// the closest width with that many tiles when one lies within a factor of 1.5, else the closest
/// width with about as many tiles (the wider of two as close). Switching engines and back comes
/// back to the same tiling: 2 × 513 (Unity) → 2 × 505 (Unreal) → 2 × 513.
pub fn nearest_layout(engine: Engine, w: usize, h: usize, width: usize, tiles_x: usize) -> Option<TileLayout> {
    let all = layouts(engine, w, h);
    let closest = |it: &mut dyn Iterator<Item = &TileLayout>| {
        it.min_by_key(|l| (l.width().abs_diff(width), usize::MAX - l.width())).copied()
    };
    let near = |l: &TileLayout| {
        let r = l.width() as f64 / width.max(1) as f64;
        (1.0 / 1.5..=1.5).contains(&r)
    };
    if let Some(l) = closest(&mut all.iter().filter(|l| l.tiles_x == tiles_x)).filter(near) {
        return Some(l);
    }
    let target = closest(&mut all.iter())?.width();
    all.into_iter().filter(|l| l.width() == target).min_by_key(|l| l.tiles_x.abs_diff(tiles_x))
}

/// The build's plan for `req`, with the tile set's parts (tile buffers, the flow computation)
/// added to its lines and its memory estimate.
pub fn plan(stack: &LayerStack, req: &TileSetRequest) -> Result<BuildPlan, BuildError> {
    let mut plan = super::plan(stack, &req.options())?;
    let cost = tiles::plan_bytes(&req.layout, &req.maps);
    let l = &req.layout;
    plan.bytes += cost.bytes();
    plan.steps.push(format!(
        "tiles: {}×{} of {} nodes, written band by band ({:.1} MiB of tile buffers)",
        l.tiles_x,
        l.tiles_y,
        l.tile_size,
        cost.band_bytes as f64 / 1048576.0
    ));
    if let Some(flow) = cost.flow_bytes {
        plan.steps.push(format!(
            "flow map: D8 drainage of the whole map, {:.0} MiB while computing, one f32 grid kept",
            flow as f64 / 1048576.0
        ));
    }
    Ok(plan)
}

/// Why a tile set cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum TileSetError {
    /// The build refused or failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Writing the set failed (nothing was left behind).
    #[error(transparent)]
    Write(#[from] TileError),
    /// The request itself is wrong (a name with folders in it).
    #[error("{0}")]
    Request(String),
}

/// Builds `stack` for `req` and writes the tile set into `dir`: the build (its stages and
/// fractions reported as [`super::build`] reports them), the flow map's drainage if asked for,
/// then the tiles ("tiles: …", the fraction of tiles written). `bands` are the material's splat
/// bands; `source` is recorded in the manifest. `Ok(None)` when `cancel` stopped it: nothing is
/// left in or beside `dir`. The memory is checked against what is available before anything is
/// allocated.
pub fn run(
    stack: &LayerStack,
    req: &TileSetRequest,
    dir: &Path,
    bands: SplatBands,
    source: &str,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Option<Manifest>, TileSetError> {
    check_name(&req.name).map_err(TileSetError::Request)?;
    tiles::check_out_dir(dir, req.force)?;
    let plan = plan(stack, req)?;
    super::check_memory(&plan, super::available_memory())?;
    let opts = req.options();
    let built = match build(stack, &opts, cancel, progress) {
        Ok(b) => b,
        Err(BuildError::Cancelled) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if cancel.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let sea = sea_level(stack);
    let flow = if tiles::needs_flow(&req.maps) {
        progress(BuildProgress {
            stage: format!("flow: D8 drainage of {}×{} nodes", built.map.width, built.map.height),
            fraction: 0.0,
        });
        let f = flow_log_area(&built.map, sea);
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        Some(f)
    } else {
        None
    };
    let l = req.layout;
    let inp = TileSetInput {
        map: &built.map,
        name: &req.name,
        engine: req.engine,
        format: req.format,
        layout: l,
        maps: &req.maps,
        sea_level: sea,
        flow: flow.as_ref(),
        erosion_change: built.erosion_change.as_deref(),
        bands,
        source,
    };
    let stage = format!("tiles: {}×{} of {} nodes into {}", l.tiles_x, l.tiles_y, l.tile_size, dir.display());
    progress(BuildProgress { stage: stage.clone(), fraction: 0.0 });
    let on_tiles = |f: f64| progress(BuildProgress { stage: stage.clone(), fraction: f });
    match tiles::write_tile_set(dir, &inp, req.force, cancel, &on_tiles) {
        Ok(m) => Ok(Some(m)),
        Err(TileError::Cancelled) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Heightmap;
    use crate::editor::layers::BaseSource;

    fn stack(w: usize, h: usize) -> LayerStack {
        let mut map = Heightmap::new(w, h, 8.0).unwrap();
        for y in 0..h {
            for x in 0..w {
                map.set(x, y, ((x as f32) * 0.1).sin() * 20.0 + y as f32 * 0.3);
            }
        }
        LayerStack::new(&map, BaseSource::Heights)
    }

    #[test]
    fn layouts_are_the_engines_tilings_of_build_sizes() {
        let unity = layouts(Engine::Unity, 257, 257);
        assert!(unity.contains(&TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 513 }));
        assert!(unity.contains(&TileLayout { tiles_x: 8, tiles_y: 8, tile_size: 2049 }));
        assert!(unity.windows(2).all(|p| (p[0].width(), p[0].tiles_x) < (p[1].width(), p[1].tiles_x)));
        for l in &unity {
            assert!(check_side(l.width()).is_ok() && tile_sizes(Engine::Unity).contains(&l.tile_size), "{l:?}");
            assert_eq!(l.tiles_x, l.tiles_y);
        }
        let unreal = layouts(Engine::Unreal, 513, 513);
        assert!(unreal.contains(&TileLayout { tiles_x: 4, tiles_y: 4, tile_size: 505 }), "2017 = 4·504 + 1");
        assert!(unreal.iter().all(|l| check_side(l.width()).is_ok()));
        // A 2:1 project: twice as many tiles across as down.
        let wide = layouts(Engine::Unity, 257, 129);
        assert!(!wide.is_empty());
        assert!(wide.iter().all(|l| l.tiles_x == 2 * l.tiles_y), "{wide:?}");
        // Every layout resolves as the CLI would resolve it.
        for (engine, list) in [(Engine::Unity, &unity), (Engine::Unreal, &unreal)] {
            for l in list {
                let r = tiles::resolve_layout(
                    engine,
                    Some(l.width()),
                    Some((l.tiles_x, None)),
                    None,
                    &|n| build_height(513, 513, n),
                    &|n| check_side(n).is_ok(),
                )
                .unwrap();
                assert_eq!(r, *l);
            }
        }
    }

    #[test]
    fn the_nearest_layout_keeps_the_tiles_across_and_comes_back() {
        let l = nearest_layout(Engine::Unity, 513, 513, 2049, 2).unwrap();
        assert_eq!(l, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 1025 });
        let ue = nearest_layout(Engine::Unreal, 513, 513, 2049, 2).unwrap();
        assert_eq!(ue, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 1017 }, "2033 is Unreal's closest");
        let back = nearest_layout(Engine::Unity, 513, 513, ue.width(), ue.tiles_x).unwrap();
        assert_eq!(back, l, "Unity again: the same size");
        let ue = nearest_layout(Engine::Unreal, 257, 257, 1025, 2).unwrap();
        assert_eq!(ue, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 505 }, "two tiles across kept");
        let back = nearest_layout(Engine::Unity, 257, 257, ue.width(), 2).unwrap();
        assert_eq!(back, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 513 });
        // Unreal's largest build, 8129, as 8 tiles of 1017 for Unity's 8 × 2049.
        let big = nearest_layout(Engine::Unreal, 513, 513, 16385, 8).unwrap();
        assert_eq!(big, TileLayout { tiles_x: 8, tiles_y: 8, tile_size: 1017 });
        // 32 across exists for neither near 300 nodes: the closest width instead.
        let few = nearest_layout(Engine::Unity, 513, 513, 300, 32).unwrap();
        assert_eq!(few.width(), 257);
        // Two as close: the wider.
        let all = layouts(Engine::Unity, 513, 513);
        assert!(all.iter().any(|l| l.width() == 257) && all.iter().any(|l| l.width() == 513));
        assert_eq!(nearest_layout(Engine::Unity, 513, 513, 385, 1).unwrap().width(), 513);
        let widest = nearest_layout(Engine::Unity, 513, 513, 100_000, 1).unwrap();
        assert_eq!(widest.width(), layouts(Engine::Unity, 513, 513).last().unwrap().width());
    }

    #[test]
    fn names_with_folders_are_refused() {
        assert!(check_name("island").is_ok());
        for bad in ["", "a/b", "a\\b", ".hidden", "a\nb"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn run_writes_a_set_that_reassembles_to_the_build_and_a_cancel_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = stack(129, 129);
        let req = TileSetRequest {
            engine: Engine::Unity,
            format: TileFormat::R16,
            layout: TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 129 },
            maps: vec![MapKind::Slope, MapKind::Splat],
            name: "t".into(),
            erosion: ErosionBuild::Upsample,
            force: false,
        };
        let p = plan(&s, &req).unwrap();
        assert_eq!((p.width, p.height), (257, 257));
        assert!(p.steps.iter().any(|l| l.starts_with("tiles: 2×2")), "{:?}", p.steps);
        let stages = std::sync::Mutex::new(Vec::new());
        let out = dir.path().join("set");
        let m = run(&s, &req, &out, SplatBands::default(), "test", &AtomicBool::new(false), &|p: BuildProgress| {
            stages.lock().unwrap().push(p.stage)
        })
        .unwrap()
        .unwrap();
        assert_eq!(m.tile_files.len(), 4);
        assert!(stages.lock().unwrap().last().unwrap().starts_with("tiles: 2×2 of 129"));
        let whole = tiles::read_tile_set(&out.join("manifest.json")).unwrap();
        let built = build(&s, &req.options(), &AtomicBool::new(false), &|_| {}).unwrap().map;
        let (lo, hi) = (m.height_range.min_m, m.height_range.max_m);
        let step = (hi - lo) / 65535.0;
        assert_eq!((whole.width, whole.height), (257, 257));
        for (a, b) in whole.data.iter().zip(&built.data) {
            assert!(((a - b) as f64).abs() <= step * 0.51 + 1e-6, "{a} vs {b}");
        }
        // A second run into the same (now full) folder is refused; with force it replaces it.
        let e = run(&s, &req, &out, SplatBands::default(), "test", &AtomicBool::new(false), &|_| {}).unwrap_err();
        assert!(e.to_string().contains("not empty"), "{e}");
        let forced = TileSetRequest { force: true, ..req.clone() };
        assert!(run(&s, &forced, &out, SplatBands::default(), "test", &AtomicBool::new(false), &|_| {}).is_ok());
        // Cancelled: nothing new beside the set.
        let other = dir.path().join("other");
        let r = run(&s, &req, &other, SplatBands::default(), "test", &AtomicBool::new(true), &|_| {}).unwrap();
        assert!(r.is_none());
        assert!(!other.exists());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("set")], "only the finished set is left");
        // A bad name is refused before anything is built.
        let bad = TileSetRequest { name: "a/b".into(), ..req };
        let e = run(&s, &bad, &other, SplatBands::default(), "test", &AtomicBool::new(false), &|_| {}).unwrap_err();
        assert!(e.to_string().contains("without folders"), "{e}");
    }
}
