//! `talus build … --tiles KxK --engine unreal|unity --out DIR`: the tile-set flags of `talus build`
//! (an engine tile set of one global build with its texture maps and `manifest.json`, issue #27;
//! formats, equations and the atomic, streamed writing are in [`crate::core::io::tiles`]), turned
//! into the request's [`TileTarget`], and what is printed once the set is written.

use std::path::Path;

use clap::Args;

use super::CliError;
use crate::core::io::tiles::{
    self, ENGINES, Engine, LayoutError, Manifest, MapKind, SizeChoice, TileError, TileFormat, TileLayout,
};
use crate::editor::build::{self, BuildRequest, TileTarget};

/// The tile-set flags of `talus build`.
#[derive(Args, Debug, Default)]
pub struct TileArgs {
    /// Cut the build into an engine tile set: K or KxL tiles (with --size N or --tile-size S);
    /// neighbours share one row and column, so N = K·(S − 1) + 1. Needs --engine.
    #[arg(long, value_name = "K|KxL")]
    pub tiles: Option<String>,
    /// Nodes a side of one tile (Unreal: 127, 253, 505, 1009, 1017, 2017, 2033, 4033, 8129;
    /// Unity: 2^k + 1 from 33 to 4097).
    #[arg(long)]
    pub tile_size: Option<usize>,
    /// The engine of the tile set: `unreal` (PNG16 by default, 32768 = 0 m) or `unity` (R16 by
    /// default, rows south first, the map's own range).
    #[arg(long, value_parser = crate::core::io::tiles::engine_names())]
    pub engine: Option<String>,
    /// Format of the height tiles: `png` (16-bit grey) or `r16` (little-endian RAW).
    #[arg(long, value_parser = ["png", "r16"])]
    pub tile_format: Option<String>,
    /// Texture maps tiled like the heights: a comma-separated list of their names, or `all`.
    #[arg(long, value_name = "LIST", help = crate::core::io::tiles::maps_help())]
    pub maps: Option<String>,
    /// File-name prefix of the tiles (default: the project's file name without extension).
    #[arg(long)]
    pub tile_name: Option<String>,
    /// Replace a non-empty --out folder (only once the new tile set is complete).
    #[arg(long)]
    pub force: bool,
}

impl TileArgs {
    /// Whether the flags ask for a tile set.
    pub(super) fn wanted(&self) -> bool {
        self.tiles.is_some() || self.tile_size.is_some() || self.engine.is_some()
    }

    /// Whether a flag that only a tile set takes is given.
    pub(super) fn set_only(&self) -> bool {
        self.maps.is_some() || self.tile_format.is_some() || self.tile_name.is_some() || self.force
    }

    /// The build's size and the tile set the flags ask for in a project of `w × h` nodes, written
    /// into `out`; the tiling is checked here, with the valid sizes named as flags.
    pub(super) fn target(
        &self,
        size: Option<usize>,
        out: &Path,
        w: usize,
        h: usize,
    ) -> Result<(usize, TileTarget), CliError> {
        let engine = match &self.engine {
            Some(e) => Engine::parse(e).ok_or_else(|| CliError(format!("--engine {e:?}: expected {}", engines(""))))?,
            None => return Err(CliError(format!("a tile set needs {}", engines("--engine ")))),
        };
        let format = match &self.tile_format {
            Some(f) => Some(
                TileFormat::parse(f).ok_or_else(|| CliError(format!("--tile-format {f:?}: expected png or r16")))?,
            ),
            None => None,
        };
        let maps = match &self.maps {
            Some(m) => MapKind::parse_list(m).map_err(|e| CliError(format!("--maps: {e}")))?,
            None => Vec::new(),
        };
        let tiles = self.tiles.as_deref().map(tiles::parse_tiles).transpose().map_err(flagged)?;
        let layout = tiles::resolve_layout(
            engine,
            size,
            tiles,
            self.tile_size,
            &|n| build::build_height(w, h, n).map_err(|e| e.to_string()),
            &|n| build::check_side(n).is_ok(),
        )
        .map_err(flagged)?;
        let target = TileTarget {
            engine,
            tiles: layout.tiles_x,
            format,
            maps,
            dir: out.to_path_buf(),
            name: self.tile_name.clone(),
            replace: self.force,
        };
        Ok((layout.width(), target))
    }
}

/// Prints what a tile build wrote, and the engines' import numbers, on standard error.
pub(super) fn print_written(out: &Path, l: &TileLayout, m: &Manifest, req: &BuildRequest, secs: f64) {
    let (format, maps) = match &req.target {
        build::Target::Tiles(t) => (t.tile_format(), t.sorted_maps().len()),
        _ => return,
    };
    eprintln!(
        "wrote {} ({} tiles of {}×{} {}, {} map(s), heights {:.3} … {:.3} m as {} … {} m; {:.1} s)",
        out.display(),
        m.tile_files.len(),
        l.tile_size,
        l.tile_size,
        format.ext(),
        maps,
        m.height_range.data_min_m,
        m.height_range.data_max_m,
        m.height_range.min_m,
        m.height_range.max_m,
        secs
    );
    for line in m.import_lines() {
        eprintln!("{line}");
    }
}

/// The engines' names, each after `prefix`, joined by "or" ("unreal or unity").
fn engines(prefix: &str) -> String {
    ENGINES.iter().map(|e| format!("{prefix}{}", e.name)).collect::<Vec<_>>().join(" or ")
}

/// A tile set's error in the words of `talus build`'s flags: the layout's numbers as `--size`,
/// `--tiles` and `--tile-size`, a full folder with `--force` (the core's messages name no flag).
fn flagged(e: impl Into<TileError>) -> CliError {
    CliError(match e.into() {
        TileError::Layout(l) => layout_message(&l),
        TileError::NotEmpty(dir) => {
            format!("{dir} exists and is not empty; choose another folder or pass --force to replace it")
        }
        other => other.to_string(),
    })
}

/// `e` with the flags that gave its numbers.
fn layout_message(e: &LayoutError) -> String {
    let choices = |c: &[SizeChoice]| tiles::list_choices(c, |c| format!("--size {c}"));
    match e {
        LayoutError::Tiles { text } => format!("--tiles {text:?}: expected K or KxL (e.g. 4 or 4x4), each at least 1"),
        LayoutError::NotSplit { size, tiles_x, engine, choices: c } => format!(
            "--size {size} does not split into {tiles_x} tiles across that share edges (N = K·(S − 1) + 1); \
             for {} with {tiles_x} tiles across: {}",
            engine.name(),
            choices(c)
        ),
        LayoutError::NotWhole { size, tile_size } => format!(
            "--size {size} is not a whole number of tiles of {tile_size} nodes sharing edges (N = K·(S − 1) + 1)"
        ),
        LayoutError::Missing => {
            "a tile set needs --tiles K (or KxL) with --size N or --tile-size S, or --size N with --tile-size S".into()
        }
        LayoutError::NotEngineSize { tile_size, engine, tiles_x, choices: c } => format!(
            "tiles of {tile_size} nodes are not {} tile size ({}); with {tiles_x} tiles across: {}",
            engine.spec().a_name,
            tiles::tile_sizes(*engine).iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            choices(c)
        ),
        LayoutError::SizeMismatch { size, tiles_x, tile_size, width } => {
            format!("--size {size} does not match {tiles_x} tiles of {tile_size} nodes ({width} nodes across)")
        }
        LayoutError::NotBuildSize { tiles_x, tile_size, width, engine, choices: c } => format!(
            "{tiles_x} tiles of {tile_size} nodes make a {width}-node build, which is not a build size; for {} with \
             {tiles_x} tiles across: {}",
            engine.name(),
            choices(c)
        ),
        LayoutError::TilesDown { tiles_x, asked, tiles_y, tile_size } => {
            format!(
                "--tiles {tiles_x}x{asked}: the project's aspect gives {tiles_x}x{tiles_y} tiles of {tile_size} nodes"
            )
        }
        LayoutError::Height(_) | LayoutError::Aspect { .. } | LayoutError::MapSize { .. } => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages `talus build --tiles` printed when the core named the flags itself.
    #[test]
    fn layout_errors_name_the_flags() {
        let square = |w: usize| Ok(w);
        let any = |_: usize| true;
        let msg = |engine, size, tiles, tile_size| {
            layout_message(&tiles::resolve_layout(engine, size, tiles, tile_size, &square, &any).unwrap_err())
        };
        let m = msg(Engine::Unreal, Some(257), Some((2, None)), None);
        assert!(m.contains("129") && m.contains("--size 253 (tiles of 127)"), "{m}");
        assert!(msg(Engine::Unity, Some(258), Some((2, None)), None).contains("--size 257 (tiles of 129)"));
        assert_eq!(
            msg(Engine::Unity, Some(258), Some((2, None)), None),
            "--size 258 does not split into 2 tiles across that share edges (N = K·(S − 1) + 1); for unity with 2 \
             tiles across: --size 65 (tiles of 33), --size 129 (tiles of 65), --size 257 (tiles of 129), --size 513 \
             (tiles of 257), --size 1025 (tiles of 513), --size 2049 (tiles of 1025), --size 4097 (tiles of 2049), \
             --size 8193 (tiles of 4097)"
        );
        assert_eq!(
            msg(Engine::Unreal, Some(258), None, Some(127)),
            "--size 258 is not a whole number of tiles of 127 nodes sharing edges (N = K·(S − 1) + 1)"
        );
        assert_eq!(
            msg(Engine::Unreal, None, None, None),
            "a tile set needs --tiles K (or KxL) with --size N or --tile-size S, or --size N with --tile-size S"
        );
        assert_eq!(
            msg(Engine::Unity, Some(257), Some((2, None)), Some(65)),
            "--size 257 does not match 2 tiles of 65 nodes (129 nodes across)"
        );
        assert_eq!(
            msg(Engine::Unity, Some(257), Some((2, Some(3))), None),
            "--tiles 2x3: the project's aspect gives 2x2 tiles of 129 nodes"
        );
        let e = tiles::resolve_layout(Engine::Unity, Some(257), Some((2, None)), None, &square, &|n| n != 257);
        assert_eq!(
            layout_message(&e.unwrap_err()),
            "2 tiles of 129 nodes make a 257-node build, which is not a build size; for unity with 2 tiles across: \
             --size 65 (tiles of 33), --size 129 (tiles of 65), --size 513 (tiles of 257), --size 1025 (tiles of \
             513), --size 2049 (tiles of 1025), --size 4097 (tiles of 2049), --size 8193 (tiles of 4097)"
        );
        assert_eq!(
            layout_message(&tiles::parse_tiles("ax2").unwrap_err()),
            "--tiles \"ax2\": expected K or KxL (e.g. 4 or 4x4), each at least 1"
        );
        assert_eq!(engines("--engine "), "--engine unreal or --engine unity");
    }

    /// The Build… dialog showed these messages with the flags taken out; the core's plain words
    /// are that text, for every error the dialog's choices (a size and tiles across) can meet.
    #[test]
    fn the_dialogs_words_are_the_flags_taken_out() {
        let mut seen = 0;
        for engine in Engine::ALL {
            for size in [129, 253, 257, 505, 513, 1017, 1025, 2017, 2033, 2049, 4097, 8129, 16385] {
                for kx in 1..=8 {
                    for (w, h) in [(513, 513), (257, 129), (513, 385)] {
                        let height = |n| build::build_height(w, h, n).map_err(|e| e.to_string());
                        let side = |n| build::check_side(n).is_ok();
                        if let Err(e) =
                            tiles::resolve_layout(engine, Some(size), Some((kx, None)), None, &height, &side)
                        {
                            let flagged = layout_message(&e).replace("--size ", "").replace("--tiles ", "");
                            assert_eq!(e.to_string(), flagged);
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert!(seen > 100, "{seen}");
    }
}
