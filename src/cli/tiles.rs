//! `talus build … --tiles KxK --engine unreal|unity --out DIR`: an engine tile set of one global
//! build with its texture maps and `manifest.json` (issue #27; formats, equations and the atomic,
//! streamed writing are in [`crate::core::io::tiles`]).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::CliError;
use super::project::{BuildArgs, peak_rss, print_plan, with_build_bar};
use crate::core::io::tiles::{self, Engine, MapKind, TileFormat};
use crate::core::splat::SplatBands;
use crate::editor::build::tileset::{self, TileSetRequest};
use crate::editor::build::{self, ErosionBuild};
use crate::editor::layers::LayerStack;
use crate::editor::project::Project;

/// Whether `a` asks for a tile set.
pub(super) fn wanted(a: &BuildArgs) -> bool {
    a.tiles.is_some() || a.tile_size.is_some() || a.engine.is_some()
}

/// Checks the tile flags against the project (sizes, the engine's tile sizes, the name, the
/// output folder) before anything is built.
pub(super) fn prepare(a: &BuildArgs, stack: &LayerStack) -> Result<TileSetRequest, CliError> {
    let engine = match &a.engine {
        Some(e) => Engine::parse(e).ok_or_else(|| CliError(format!("--engine {e:?}: expected unreal or unity")))?,
        None => return Err(CliError("a tile set needs --engine unreal or --engine unity".into())),
    };
    let format = match &a.tile_format {
        Some(f) => TileFormat::parse(f).ok_or_else(|| CliError(format!("--tile-format {f:?}: expected png or r16")))?,
        None => TileFormat::default_for(engine),
    };
    let maps = match &a.maps {
        Some(m) => MapKind::parse_list(m).map_err(CliError)?,
        None => Vec::new(),
    };
    if a.parity || a.save_project.is_some() || a.preview.is_some() {
        return Err(CliError(
            "--parity, --save-project and --preview apply to a single-file build, not to --tiles".into(),
        ));
    }
    let tiles = a.tiles.as_deref().map(tiles::parse_tiles).transpose().map_err(CliError)?;
    let (w, h) = (stack.width(), stack.height());
    let layout = tiles::resolve_layout(engine, a.size, tiles, a.tile_size, &|n| build::build_height(w, h, n), &|n| {
        build::check_side(n).is_ok()
    })?;
    let name = match &a.tile_name {
        Some(n) => n.clone(),
        None => a.project.file_stem().and_then(|s| s.to_str()).unwrap_or("terrain").to_string(),
    };
    tileset::check_name(&name).map_err(|e| CliError(format!("--tile-name: {e}")))?;
    tiles::check_out_dir(&a.out, a.force)?;
    let erosion = ErosionBuild::parse(&a.erosion).unwrap_or_default();
    Ok(TileSetRequest { engine, format, layout, maps, name, erosion, force: a.force })
}

/// Builds the project at the tile set's size and writes the set ([`tileset::run`]), with the plan,
/// a progress bar and the engines' import numbers on standard error.
pub(super) fn run(
    a: &BuildArgs,
    req: &TileSetRequest,
    p: &Project,
    cancel: &AtomicBool,
    t: Instant,
) -> Result<ExitCode, CliError> {
    let stack = &p.stack;
    let l = req.layout;
    let plan = tileset::plan(stack, req)?;
    build::check_memory(&plan, build::available_memory())?;
    let head = format!(
        "tile set for {}: {}×{} tiles of {} nodes, a build of ",
        req.engine.name(),
        l.tiles_x,
        l.tiles_y,
        l.tile_size
    );
    print_plan(&head, &plan);
    let bands = p.view.look.as_ref().map_or_else(SplatBands::default, |look| look.material.bands.splat_bands());
    let source = a.project.display().to_string();
    let r = with_build_bar(|progress| tileset::run(stack, req, &a.out, bands, &source, cancel, progress));
    let m = match r {
        Ok(Some(m)) => m,
        Ok(None) => {
            eprintln!("cancelled: nothing written to {}", a.out.display());
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(CliError(e.to_string())),
    };
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "wrote {} ({} tiles of {}×{} {}, {} map(s), heights {:.3} … {:.3} m as {} … {} m; {:.1} s)",
        a.out.display(),
        m.tile_files.len(),
        l.tile_size,
        l.tile_size,
        req.format.ext(),
        req.maps.len(),
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
    if let Some(path) = &a.report {
        write_report(path, a, &plan, &m, secs)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_report(
    path: &Path,
    a: &BuildArgs,
    plan: &build::BuildPlan,
    m: &tiles::Manifest,
    secs: f64,
) -> Result<(), CliError> {
    let report = serde_json::json!({
        "project": a.project.display().to_string(),
        // The build's plan with the tile set's parts (flow, tile buffers) added to its steps and bytes.
        "plan": serde_json::to_value(plan).unwrap_or_default(),
        "tiles": [m.tiles[0], m.tiles[1]],
        "tile_size": m.tile_size,
        "width": m.size[0],
        "height": m.size[1],
        "seconds": secs,
        "peak_rss_bytes": peak_rss().map_or(serde_json::Value::Null, Into::into),
    });
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    std::fs::write(path, text).map_err(|e| CliError(format!("{}: {e}", path.display())))
}
