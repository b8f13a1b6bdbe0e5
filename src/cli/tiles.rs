//! `talus build … --tiles KxK --engine unreal|unity --out DIR`: an engine tile set of one global
//! build with its texture maps and `manifest.json` (issue #27; formats, equations and the atomic,
//! streamed writing are in [`crate::core::io::tiles`]).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::CliError;
use super::project::{BuildArgs, peak_rss, print_plan, with_build_bar};
use crate::core::io::tiles::{self, ENGINES, Engine, LayoutError, MapKind, SizeChoice, TileError, TileFormat};
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
        Some(e) => Engine::parse(e).ok_or_else(|| CliError(format!("--engine {e:?}: expected {}", engines(""))))?,
        None => return Err(CliError(format!("a tile set needs {}", engines("--engine ")))),
    };
    let format = match &a.tile_format {
        Some(f) => TileFormat::parse(f).ok_or_else(|| CliError(format!("--tile-format {f:?}: expected png or r16")))?,
        None => TileFormat::default_for(engine),
    };
    let maps = match &a.maps {
        Some(m) => MapKind::parse_list(m).map_err(|e| CliError(format!("--maps: {e}")))?,
        None => Vec::new(),
    };
    if a.parity || a.save_project.is_some() || a.preview.is_some() {
        return Err(CliError(
            "--parity, --save-project and --preview apply to a single-file build, not to --tiles".into(),
        ));
    }
    let tiles = a.tiles.as_deref().map(tiles::parse_tiles).transpose().map_err(flagged)?;
    let (w, h) = (stack.width(), stack.height());
    let layout = tiles::resolve_layout(engine, a.size, tiles, a.tile_size, &|n| build::build_height(w, h, n), &|n| {
        build::check_side(n).is_ok()
    })
    .map_err(flagged)?;
    let name = match &a.tile_name {
        Some(n) => n.clone(),
        None => a.project.file_stem().and_then(|s| s.to_str()).unwrap_or("terrain").to_string(),
    };
    tileset::check_name(&name).map_err(|e| CliError(format!("--tile-name: {e}")))?;
    tiles::check_out_dir(&a.out, a.force).map_err(flagged)?;
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
        Err(tileset::TileSetError::Write(e)) => return Err(flagged(e)),
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
    for line in m.import_lines() {
        eprintln!("{line}");
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
                        let height = |n| build::build_height(w, h, n);
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
