//! `talus build … --tiles KxK --engine unreal|unity --out DIR`: the tile-set flags of `talus build`
//! (an engine tile set of one global build with its texture maps and `manifest.json`, issue #27;
//! formats, equations and the atomic, streamed writing are in [`crate::core::io::tiles`]), turned
//! into the request's [`TileTarget`], and what is printed once the set is written.

use std::path::Path;

use clap::Args;

use super::CliError;
use crate::core::io::tiles::{self, Engine, Manifest, MapKind, TileFormat, TileLayout};
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
    #[arg(long, value_parser = ["unreal", "unity"])]
    pub engine: Option<String>,
    /// Format of the height tiles: `png` (16-bit grey) or `r16` (little-endian RAW).
    #[arg(long, value_parser = ["png", "r16"])]
    pub tile_format: Option<String>,
    /// Texture maps tiled like the heights: a comma-separated list of flow, erosion, deposition,
    /// slope, normal, splat, or `all`.
    #[arg(long, value_name = "LIST")]
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
            Some(e) => Engine::parse(e).ok_or_else(|| CliError(format!("--engine {e:?}: expected unreal or unity")))?,
            None => return Err(CliError("a tile set needs --engine unreal or --engine unity".into())),
        };
        let format = match &self.tile_format {
            Some(f) => Some(
                TileFormat::parse(f).ok_or_else(|| CliError(format!("--tile-format {f:?}: expected png or r16")))?,
            ),
            None => None,
        };
        let maps = match &self.maps {
            Some(m) => MapKind::parse_list(m).map_err(CliError)?,
            None => Vec::new(),
        };
        let tiles = self.tiles.as_deref().map(tiles::parse_tiles).transpose().map_err(CliError)?;
        let layout = tiles::resolve_layout(
            engine,
            size,
            tiles,
            self.tile_size,
            &|n| build::build_height(w, h, n).map_err(|e| e.to_string()),
            &|n| build::check_side(n).is_ok(),
        )?;
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
    if let Some(u) = &m.unreal {
        eprintln!(
            "Unreal: Import from file {}, scale X/Y {:.4} Z {:.4}, location Z {} cm",
            u.first_tile, u.xy_scale_cm, u.z_scale, u.location_cm[2]
        );
    }
    if let Some(u) = &m.unity {
        eprintln!(
            "Unity: per tile Import Raw (16 bit, Windows, Flip Vertically {}), resolution {}, terrain size {:.3} × {:.3} × {:.3} m",
            if u.flip_vertically { "on" } else { "off" },
            u.heightmap_resolution,
            u.terrain_size_m[0],
            u.terrain_size_m[1],
            u.terrain_size_m[2]
        );
    }
}
