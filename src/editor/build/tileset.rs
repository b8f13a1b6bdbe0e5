//! A build written as an engine tile set (issue #27), the last part of a build whose target is
//! [`super::Target::Tiles`]: the project is built once at the set's whole size
//! `W = Kx·(S − 1) + 1`, the flow map's drainage is computed on that global build when it is asked
//! for, and [`crate::core::io::tiles::write_tile_set`] cuts the tiles and maps, file by file in
//! parallel, into a temporary folder renamed at the end (formats, the shared height range and the
//! manifest are documented there). Cut from one build, neighbouring tiles share their edge rows bit
//! for bit.
//!
//! [`layouts`] lists the tilings an engine allows for a project (the dialog's Tiles menu),
//! [`layout_for`] resolves a request's tiling, [`write_set`] writes the set.

use std::sync::atomic::{AtomicBool, Ordering};

use super::error::BuildError;
use super::progress::Phase;
use super::request::{BuildContext, TileTarget};
use super::sizes::{build_height, check_side};
use super::stack::Built;
use crate::core::analysis::flow_log_area;
use crate::core::io::tiles::{self, Engine, Manifest, TileLayout, TileSetInput, tile_sizes};

/// Most tiles across a layout [`layouts`] offers.
pub const MAX_TILES_ACROSS: usize = 32;

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

/// The tiling of `tiles_x` tiles across a build `size` nodes across of a project `w × h` for
/// `engine`, or why there is none (in words, naming the valid sizes).
pub fn layout_for(engine: Engine, w: usize, h: usize, size: usize, tiles_x: usize) -> Result<TileLayout, String> {
    tiles::resolve_layout(
        engine,
        Some(size),
        Some((tiles_x, None)),
        None,
        &|n| build_height(w, h, n).map_err(|e| e.to_string()),
        &|n| check_side(n).is_ok(),
    )
    .map_err(|e| e.to_string())
}

/// What [`write_set`] writes a set from.
pub(super) struct SetInput<'a> {
    /// The build.
    pub built: &'a Built,
    /// The request's tile set.
    pub target: &'a TileTarget,
    /// Its tiling.
    pub layout: TileLayout,
    /// The tiles' name.
    pub name: &'a str,
    /// The sea level the flow map drains to.
    pub sea_level: f32,
    /// The project's context (source, splat bands).
    pub ctx: &'a BuildContext,
}

/// Writes the tile set of `inp` into its folder: the flow map's drainage if asked for, then the
/// tiles and maps; `report(phase, within)` hears of both. A cancel leaves nothing in or beside
/// the folder ([`BuildError::Cancelled`]).
pub(super) fn write_set(
    inp: &SetInput,
    cancel: &AtomicBool,
    report: &(dyn Fn(Phase, f64) + Sync),
) -> Result<Manifest, BuildError> {
    let map = &inp.built.map;
    let maps = inp.target.sorted_maps();
    let flow = if tiles::needs_flow(&maps) {
        report(Phase::Flow { width: map.width, height: map.height }, 0.0);
        let f = flow_log_area(map, inp.sea_level);
        if cancel.load(Ordering::Relaxed) {
            return Err(BuildError::Cancelled);
        }
        Some(f)
    } else {
        None
    };
    let set = TileSetInput {
        map,
        name: inp.name,
        engine: inp.target.engine,
        format: inp.target.tile_format(),
        layout: inp.layout,
        maps: &maps,
        sea_level: inp.sea_level,
        flow: flow.as_ref(),
        erosion_change: inp.built.erosion_change.as_deref(),
        bands: inp.ctx.bands,
        source: &inp.ctx.source,
    };
    let phase = Phase::Tiles { layout: inp.layout, dir: inp.target.dir.clone() };
    report(phase.clone(), 0.0);
    let on_tiles = |f: f64| report(phase.clone(), f);
    Ok(tiles::write_tile_set(&inp.target.dir, &set, inp.target.replace, cancel, &on_tiles)?)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    &|n| build_height(513, 513, n).map_err(|e| e.to_string()),
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
}
