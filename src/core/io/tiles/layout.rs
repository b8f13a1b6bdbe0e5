//! The tiling of a tile set and how it is chosen.
//!
//! Neighbouring tiles share one row and one column of nodes, as both engines expect of landscape
//! tiles, so the global map has `W = Kx·(S − 1) + 1` by `H = Ky·(S − 1) + 1` nodes and tile
//! `(X, Y)` holds nodes `X·(S − 1) ..= X·(S − 1) + S − 1` along x (the same along y). Every tile is
//! cut from the one global map and quantised with one shared height range, so the samples of a
//! shared edge are the same bits in both tiles. The tile sizes `S` are the engine's
//! ([`super::EngineSpec::tile_sizes`]).
//!
//! [`resolve_layout`] finds `(Kx, Ky, S)` from what the caller gave (a build size `N`, tiles
//! across, a tile size) and the project's aspect. Its errors are data ([`LayoutError`]): the
//! numbers and the valid choices, said in plain words; the CLI says them again in its flags'.

use std::fmt;

use super::engine::{Engine, tile_sizes};

/// `Kx × Ky` tiles of `S` nodes a side, sharing edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileLayout {
    /// Tiles along x.
    pub tiles_x: usize,
    /// Tiles along y.
    pub tiles_y: usize,
    /// Nodes a side of one tile.
    pub tile_size: usize,
}

impl TileLayout {
    /// Nodes along x of the whole map, `Kx·(S − 1) + 1`.
    pub fn width(&self) -> usize {
        self.tiles_x * (self.tile_size - 1) + 1
    }

    /// Nodes along y of the whole map, `Ky·(S − 1) + 1`.
    pub fn height(&self) -> usize {
        self.tiles_y * (self.tile_size - 1) + 1
    }
}

/// A build size that does split into the tiles across asked for: `size = K·(tile_size − 1) + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeChoice {
    /// The build's nodes across, `N`.
    pub size: usize,
    /// The engine's tile size `S` that makes it.
    pub tile_size: usize,
}

impl fmt::Display for SizeChoice {
    /// `2017 (tiles of 505)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (tiles of {})", self.size, self.tile_size)
    }
}

/// `choices`, each said by `each`, joined by commas; "none at this tile count" when there are
/// none.
pub fn list_choices(choices: &[SizeChoice], each: impl Fn(&SizeChoice) -> String) -> String {
    if choices.is_empty() {
        "none at this tile count".into()
    } else {
        choices.iter().map(each).collect::<Vec<_>>().join(", ")
    }
}

fn plain(choices: &[SizeChoice]) -> String {
    list_choices(choices, SizeChoice::to_string)
}

fn size_list(engine: &Engine) -> String {
    tile_sizes(*engine).iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
}

/// Why the sizes given do not make a tile set for the engine. The numbers are the caller's; the
/// messages name no flag (the CLI says them with its own, `src/cli/tiles.rs`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A tile count that is not `K` or `KxL` (each 1 to 1024).
    #[error("tile count {text:?}: expected K or KxL (e.g. 4 or 4x4), each at least 1")]
    Tiles {
        /// What was given.
        text: String,
    },
    /// The build size does not split into the tiles across.
    #[error(
        "{size} does not split into {tiles_x} tiles across that share edges (N = K·(S − 1) + 1); \
         for {} with {tiles_x} tiles across: {}", .engine.name(), plain(.choices)
    )]
    NotSplit {
        /// The build's nodes across.
        size: usize,
        /// The tiles across.
        tiles_x: usize,
        /// The engine.
        engine: Engine,
        /// The build sizes that do.
        choices: Vec<SizeChoice>,
    },
    /// The build size is not a whole number of tiles of the tile size.
    #[error("{size} is not a whole number of tiles of {tile_size} nodes sharing edges (N = K·(S − 1) + 1)")]
    NotWhole {
        /// The build's nodes across.
        size: usize,
        /// The tile size.
        tile_size: usize,
    },
    /// Too little was given to choose a tiling.
    #[error(
        "a tile set needs the tiles across with the build's size or the tile size, or the build's size with \
         the tile size"
    )]
    Missing,
    /// The tile size is not one of the engine's.
    #[error(
        "tiles of {tile_size} nodes are not {} tile size ({}); with {tiles_x} tiles across: {}",
        .engine.spec().a_name, size_list(.engine), plain(.choices)
    )]
    NotEngineSize {
        /// The tile size.
        tile_size: usize,
        /// The engine.
        engine: Engine,
        /// The tiles across.
        tiles_x: usize,
        /// The build sizes the engine's tile sizes make with that many tiles across.
        choices: Vec<SizeChoice>,
    },
    /// The build size given is not the tiles' width.
    #[error("{size} does not match {tiles_x} tiles of {tile_size} nodes ({width} nodes across)")]
    SizeMismatch {
        /// The build size given.
        size: usize,
        /// The tiles across.
        tiles_x: usize,
        /// The tile size.
        tile_size: usize,
        /// Their width, `Kx·(S − 1) + 1`.
        width: usize,
    },
    /// The tiles' width is not a side a build may have.
    #[error(
        "{tiles_x} tiles of {tile_size} nodes make a {width}-node build, which is not a build size; \
         for {} with {tiles_x} tiles across: {}", .engine.name(), plain(.choices)
    )]
    NotBuildSize {
        /// The tiles across.
        tiles_x: usize,
        /// The tile size.
        tile_size: usize,
        /// Their width.
        width: usize,
        /// The engine.
        engine: Engine,
        /// The build sizes that are.
        choices: Vec<SizeChoice>,
    },
    /// The project's aspect gives no height at this width (the caller's message).
    #[error("{0}")]
    Height(String),
    /// The build's height is not a whole number of tiles.
    #[error(
        "the build is {width}×{height} nodes; {height} is not a whole number of tiles of {tile_size} nodes down \
         (the project's aspect)"
    )]
    Aspect {
        /// The build's nodes across.
        width: usize,
        /// Its nodes down.
        height: usize,
        /// The tile size.
        tile_size: usize,
    },
    /// The tiles down given are not the project's aspect's.
    #[error("{tiles_x}x{asked}: the project's aspect gives {tiles_x}x{tiles_y} tiles of {tile_size} nodes")]
    TilesDown {
        /// The tiles across.
        tiles_x: usize,
        /// The tiles down asked for.
        asked: usize,
        /// The tiles down the aspect gives.
        tiles_y: usize,
        /// The tile size.
        tile_size: usize,
    },
    /// The map is not the layout's size (a writer's input).
    #[error(
        "{}×{} tiles of {} nodes need a {}×{} map; the build is {width}×{height}",
        .layout.tiles_x, .layout.tiles_y, .layout.tile_size, .layout.width(), .layout.height()
    )]
    MapSize {
        /// The layout.
        layout: TileLayout,
        /// The map's nodes across.
        width: usize,
        /// The map's nodes down.
        height: usize,
    },
}

/// Reads `K` or `KxL` (tiles along x and y).
pub fn parse_tiles(s: &str) -> Result<(usize, Option<usize>), LayoutError> {
    let bad = || LayoutError::Tiles { text: s.to_string() };
    let num = |v: &str| v.trim().parse::<usize>().ok().filter(|&n| (1..=1024).contains(&n)).ok_or_else(bad);
    match s.split_once(['x', 'X', '×']) {
        Some((a, b)) => Ok((num(a)?, Some(num(b)?))),
        None => Ok((num(s)?, None)),
    }
}

/// The tile layout for `engine` from what the caller gave: the build's width `size`, the tiles
/// along x and y, the tile size. `height_for(W)` is the build's height at width `W` (the project's
/// aspect) or an error; `side_ok(n)` says whether a build may have `n` nodes a side. A size
/// that does not fit gives an error holding the valid choices.
pub fn resolve_layout(
    engine: Engine,
    size: Option<usize>,
    tiles: Option<(usize, Option<usize>)>,
    tile_size: Option<usize>,
    height_for: &dyn Fn(usize) -> Result<usize, String>,
    side_ok: &dyn Fn(usize) -> bool,
) -> Result<TileLayout, LayoutError> {
    let sizes = tile_sizes(engine);
    let choices = |kx: usize| -> Vec<SizeChoice> {
        sizes.iter().map(|&s| SizeChoice { size: kx * (s - 1) + 1, tile_size: s }).filter(|c| side_ok(c.size)).collect()
    };
    let (kx, s) = match (tiles, tile_size, size) {
        (Some((kx, _)), Some(s), _) => (kx, s),
        (Some((kx, _)), None, Some(n)) => {
            if n < 2 || !(n - 1).is_multiple_of(kx) {
                return Err(LayoutError::NotSplit { size: n, tiles_x: kx, engine, choices: choices(kx) });
            }
            (kx, (n - 1) / kx + 1)
        }
        (None, Some(s), Some(n)) => {
            if s < 2 || n < 2 || !(n - 1).is_multiple_of(s - 1) {
                return Err(LayoutError::NotWhole { size: n, tile_size: s });
            }
            ((n - 1) / (s - 1), s)
        }
        _ => return Err(LayoutError::Missing),
    };
    if !sizes.contains(&s) {
        return Err(LayoutError::NotEngineSize { tile_size: s, engine, tiles_x: kx, choices: choices(kx) });
    }
    let w = kx * (s - 1) + 1;
    if let Some(n) = size.filter(|&n| n != w) {
        return Err(LayoutError::SizeMismatch { size: n, tiles_x: kx, tile_size: s, width: w });
    }
    if !side_ok(w) {
        return Err(LayoutError::NotBuildSize { tiles_x: kx, tile_size: s, width: w, engine, choices: choices(kx) });
    }
    let h = height_for(w).map_err(LayoutError::Height)?;
    if !(h - 1).is_multiple_of(s - 1) {
        return Err(LayoutError::Aspect { width: w, height: h, tile_size: s });
    }
    let ky = (h - 1) / (s - 1);
    if let Some((_, Some(l))) = tiles.filter(|(_, l)| l.is_some_and(|l| l != ky)) {
        return Err(LayoutError::TilesDown { tiles_x: kx, asked: l, tiles_y: ky, tile_size: s });
    }
    Ok(TileLayout { tiles_x: kx, tiles_y: ky, tile_size: s })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_side_limit(_: usize) -> bool {
        true
    }

    #[test]
    fn layouts_resolve_and_bad_sizes_name_the_choices() {
        let square = |w: usize| Ok(w);
        let l = resolve_layout(Engine::Unity, Some(257), Some((2, None)), None, &square, &no_side_limit).unwrap();
        assert_eq!(l, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 129 });
        let l = resolve_layout(Engine::Unreal, None, Some((4, None)), Some(127), &square, &no_side_limit).unwrap();
        assert_eq!((l.width(), l.height()), (505, 505));
        let l = resolve_layout(Engine::Unreal, Some(2017), None, Some(505), &square, &no_side_limit).unwrap();
        assert_eq!(l.tiles_x, 4);
        let e = resolve_layout(Engine::Unreal, Some(257), Some((2, None)), None, &square, &no_side_limit).unwrap_err();
        let LayoutError::NotEngineSize { tile_size: 129, engine: Engine::Unreal, tiles_x: 2, choices } = &e else {
            panic!("{e:?}")
        };
        assert!(choices.contains(&SizeChoice { size: 253, tile_size: 127 }), "{choices:?}");
        let msg = e.to_string();
        assert!(msg.contains("129") && msg.contains("253 (tiles of 127)") && !msg.contains("--"), "{msg}");
        let e = resolve_layout(Engine::Unity, Some(258), Some((2, None)), None, &square, &no_side_limit).unwrap_err();
        assert!(e.to_string().contains("257 (tiles of 129)") && !e.to_string().contains("--"), "{e}");
        let half = |w: usize| Ok((w - 1) / 2 + 1);
        let l = resolve_layout(Engine::Unity, Some(513), Some((4, None)), None, &half, &no_side_limit).unwrap();
        assert_eq!((l.tiles_x, l.tiles_y), (4, 2));
        assert!(resolve_layout(Engine::Unity, Some(513), Some((4, Some(4))), None, &half, &no_side_limit).is_err());
        assert_eq!(parse_tiles("4x2"), Ok((4, Some(2))));
        assert!(parse_tiles("0").is_err() && parse_tiles("ax2").is_err());
        assert_eq!(parse_tiles("ax2"), Err(LayoutError::Tiles { text: "ax2".into() }));
    }

    #[test]
    fn no_message_names_a_flag() {
        let square = |w: usize| Ok(w);
        let none = |_: usize| false;
        let no_height = |_: usize| Err("no height".to_string());
        let errors = [
            resolve_layout(Engine::Unreal, Some(258), Some((2, None)), None, &square, &no_side_limit),
            resolve_layout(Engine::Unreal, Some(258), None, Some(127), &square, &no_side_limit),
            resolve_layout(Engine::Unreal, None, None, None, &square, &no_side_limit),
            resolve_layout(Engine::Unity, Some(257), Some((2, None)), Some(65), &square, &no_side_limit),
            resolve_layout(Engine::Unity, Some(257), Some((2, None)), None, &square, &none),
            resolve_layout(Engine::Unity, Some(257), Some((2, None)), None, &no_height, &no_side_limit),
            resolve_layout(Engine::Unity, Some(257), Some((2, None)), None, &|_| Ok(200), &no_side_limit),
            resolve_layout(Engine::Unity, Some(257), Some((2, Some(3))), None, &square, &no_side_limit),
        ];
        for e in errors {
            let e = e.unwrap_err();
            assert!(!e.to_string().contains("--"), "{e}");
        }
        assert_eq!(list_choices(&[], SizeChoice::to_string), "none at this tile count");
    }
}
