//! The Build… dialog's choices, without the window (`crate::app::build_dialog` draws them): the
//! sides a build may have, the side it starts at, the output formats and the extension each one
//! sets, the line that says what a size means in nodes and metres, the check of the output path,
//! and [`run`], what the dialog's Build button does on a worker (re-run stale layers at the
//! preview size, build, write).
//!
//! The dialog writes one heightmap file ([`Target::File`]) or an engine tile set
//! ([`Target::TileSet`], [`super::tileset`]): the engine, a tiling from the engine's tile sizes
//! ([`super::tileset::layouts`]; choosing one sets the build's size), the height tiles' format,
//! the texture maps, the folder and the tiles' name, as `talus build --tiles` takes them. The
//! folder starts beside the project as `island-unity-2049`; one that holds files is refused unless
//! "Replace" is ticked, and then replaced only once the new set is complete.
//!
//! The default side is 4× the preview's resolution, `N = 4 (n − 1) + 1` (a 513² project builds
//! at 2049², a 257² one at 1025²), or the next allowed side above it ([`default_size`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::tileset::{self, TileSetRequest};
use super::{
    BuildError, BuildOptions, BuildProgress, ErosionBuild, SIZE_RANGE, UNREAL_SIZES, build, build_height, check_side,
};
use crate::core::io::interop::{self, ExportOptions};
use crate::core::io::tiles::{self, Engine, MapKind, TileFormat, TileLayout};
use crate::core::splat::SplatBands;
use crate::editor::layers::LayerStack;

/// How many times the preview's resolution the dialog starts at.
pub const DEFAULT_FACTOR: usize = 4;

/// How [`run`]'s last stage begins ("writing PATH"): from then on the file is being written and
/// a cancel no longer stops it.
pub const WRITING: &str = "writing";

/// Every side a build may have, smallest first: `2^k + 1` from 129 to 16385 and Unreal's sizes.
pub fn allowed_sizes() -> Vec<usize> {
    let mut v: Vec<usize> = (7..=14).map(|k| (1usize << k) + 1).chain(UNREAL_SIZES).collect();
    v.retain(|&n| check_side(n).is_ok());
    v.sort_unstable();
    v.dedup();
    v
}

/// The side the dialog starts at for a project `side` nodes across: `4 (side − 1) + 1` when it is
/// allowed, else the next allowed side above it (the largest, 16385, when none is).
pub fn default_size(side: usize) -> usize {
    let want = DEFAULT_FACTOR * side.saturating_sub(1) + 1;
    allowed_sizes().into_iter().find(|&n| n >= want).unwrap_or(SIZE_RANGE[1])
}

/// A file format a build writes (the heightmap formats of [`interop::save`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// `.bhef`: Talus's own 32-bit float format.
    Bhef,
    /// `.png`: 16-bit greyscale, with a JSON sidecar holding the metres.
    Png16,
    /// `.r16`: headerless 16-bit, with a JSON sidecar.
    R16,
    /// `.exr`: one 32-bit float channel.
    Exr,
    /// `.tif`: GeoTIFF, 32-bit float.
    GeoTiff,
}

impl OutputFormat {
    /// Every format, in the order the dialog lists them.
    pub const ALL: [OutputFormat; 5] =
        [OutputFormat::Bhef, OutputFormat::Png16, OutputFormat::R16, OutputFormat::Exr, OutputFormat::GeoTiff];

    /// The name the dialog shows.
    pub fn label(self) -> &'static str {
        match self {
            OutputFormat::Bhef => "BHEF (32-bit float)",
            OutputFormat::Png16 => "PNG 16-bit",
            OutputFormat::R16 => "R16 (raw 16-bit)",
            OutputFormat::Exr => "EXR (32-bit float)",
            OutputFormat::GeoTiff => "GeoTIFF (32-bit float)",
        }
    }

    /// The extension the format sets, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Bhef => "bhef",
            OutputFormat::Png16 => "png",
            OutputFormat::R16 => "r16",
            OutputFormat::Exr => "exr",
            OutputFormat::GeoTiff => "tif",
        }
    }

    /// The format `path`'s extension names (case-insensitive; `.raw` and `.tiff` too), if a build
    /// writes it.
    pub fn of_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "bhef" => OutputFormat::Bhef,
            "png" => OutputFormat::Png16,
            "r16" | "raw" => OutputFormat::R16,
            "exr" => OutputFormat::Exr,
            "tif" | "tiff" => OutputFormat::GeoTiff,
            _ => return None,
        })
    }
}

/// `n` with its digits in groups of three ("1 024", "16 385").
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A length in metres as the dialog writes it: whole metres grouped ("1 024"), else at most four
/// decimals without trailing zeros ("0.25", "0.0625").
pub fn metres(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let text = format!("{:.4}", v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = frac.trim_end_matches('0');
    let sign = if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    let int = group_digits(int.parse().unwrap_or(0));
    if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
}

/// What a build of `width × height` nodes `cell` metres apart is: "4097 × 4097 nodes, 0.25 m
/// cells, 1 024 m across" (a rectangle: "… 1 024 × 512 m").
pub fn size_line(width: usize, height: usize, cell: f64) -> String {
    let ex = cell * width.saturating_sub(1) as f64;
    let ey = cell * height.saturating_sub(1) as f64;
    let extent = if width == height {
        format!("{} m across", metres(ex))
    } else {
        format!("{} × {} m", metres(ex), metres(ey))
    };
    format!(
        "{} × {} nodes, {} m cells, {extent}",
        group_digits(width as u64),
        group_digits(height as u64),
        metres(cell)
    )
}

/// Why `path` cannot take a build, if it cannot: empty, a format a build does not write, a
/// folder, or in a folder that does not exist.
pub fn check_output(path: &Path) -> Result<OutputFormat, String> {
    if path.as_os_str().is_empty() {
        return Err("choose a file to write the build to".into());
    }
    if path.is_dir() {
        return Err(format!("{} is a folder; give a file name", path.display()));
    }
    let Some(format) = OutputFormat::of_path(path) else {
        let exts: Vec<String> = OutputFormat::ALL.iter().map(|f| format!(".{}", f.extension())).collect();
        return Err(format!("{}: a build writes a heightmap as {}; choose a format", path.display(), exts.join(" ")));
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(format!("the folder {} does not exist", parent.display()));
    }
    Ok(format)
}

/// The project's file name without its extension, or `terrain` for a project never saved.
fn project_stem(project: Option<&Path>) -> String {
    project.and_then(|p| p.file_stem()).map_or("terrain".into(), |s| s.to_string_lossy().into_owned())
}

/// `name` beside the project, or in the working folder for a project never saved.
fn beside_project(project: Option<&Path>, name: String) -> PathBuf {
    match project.and_then(Path::parent) {
        Some(dir) => dir.join(name),
        None => PathBuf::from(name),
    }
}

/// The file the dialog offers first: beside the project, named after it and the side
/// (`island.talus` → `island-2049.png`), else `terrain-2049.png` in the working folder.
pub fn default_output(project: Option<&Path>, size: usize, format: OutputFormat) -> PathBuf {
    beside_project(project, format!("{}-{size}.{}", project_stem(project), format.extension()))
}

/// What the dialog holds: the choices its Build button builds with.
#[derive(Clone, Debug, PartialEq)]
pub struct DialogSettings {
    /// Nodes along x of the build.
    pub size: usize,
    /// How erosion layers are rebuilt.
    pub erosion: ErosionBuild,
    /// Where to write, as typed; its extension is the format.
    pub out: String,
    /// Centre integer formats (PNG, R16) on zero the way Unreal reads them.
    pub unreal: bool,
    /// The project side these settings were made for (a new project starts them afresh).
    pub side: usize,
    /// One file or an engine tile set.
    pub target: Target,
    /// The tile set's choices (used when `target` is [`Target::TileSet`]).
    pub tiles: TileSettings,
}

/// What a build writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// One heightmap file (the format by its extension).
    #[default]
    File,
    /// An engine tile set: tiles, texture maps and a manifest in a folder.
    TileSet,
}

/// The dialog's tile-set choices.
#[derive(Clone, Debug, PartialEq)]
pub struct TileSettings {
    /// The engine whose conventions the set follows.
    pub engine: Engine,
    /// Tiles across of the chosen tiling (its tile size follows from the build's size).
    pub tiles_x: usize,
    /// The height tiles' format.
    pub format: TileFormat,
    /// The texture maps written beside the heights.
    pub maps: Vec<MapKind>,
    /// The folder to write, as typed.
    pub dir: String,
    /// File-name prefix of the tiles.
    pub name: String,
    /// Replace a folder that holds files (once the new set is complete).
    pub force: bool,
}

/// A tile set as a script's `Build` (and the dialog's Build button) asks for one; the build's
/// `out` is then the folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileChoice {
    /// The engine: `unreal` or `unity`.
    pub engine: Engine,
    /// Tiles across; with the build's size it gives the tile size.
    pub tiles: usize,
    /// The height tiles' format (`png16` or `r16`); the engine's usual one when absent.
    #[serde(default)]
    pub format: Option<TileFormat>,
    /// The texture maps, by their names in [`crate::core::io::tiles::MAPS`] (`flow`, `splat`, …).
    #[serde(default)]
    pub maps: Vec<MapKind>,
    /// File-name prefix of the tiles; the project's name when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Replace a folder that holds files.
    #[serde(default)]
    pub force: bool,
}

/// The folder the dialog offers first for a tile set: beside the project, named after it, the
/// engine and the side (`island.talus` → `island-unity-2049`), else `terrain-unity-2049` in the
/// working folder.
pub fn default_tile_dir(project: Option<&Path>, engine: Engine, size: usize) -> PathBuf {
    beside_project(project, format!("{}-{}-{size}", project_stem(project), engine.name()))
}

/// Why `dir` cannot take a tile set, if it cannot: empty, a file, in a folder that does not exist,
/// or a folder with files in it without `force`.
pub fn check_tile_dir(dir: &Path, force: bool) -> Result<(), String> {
    if dir.as_os_str().is_empty() || dir.file_name().is_none() {
        return Err("choose a folder to write the tile set to".into());
    }
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{} is a file; a tile set is written into a folder", dir.display()));
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(format!("the folder {} does not exist", parent.display()));
    }
    match tiles::check_out_dir(dir, force) {
        Err(tiles::TileError::NotEmpty(_)) => Err(format!(
            "{} holds files; choose another folder, or tick Replace to replace it once the new set is complete",
            dir.display()
        )),
        Err(e) => Err(e.to_string()),
        Ok(()) => Ok(()),
    }
}

/// The tiling a layout menu line shows: "2 × 2 tiles of 1025 (2049 × 2049 nodes)".
pub fn layout_line(l: &TileLayout) -> String {
    format!("{} × {} tiles of {} ({} × {} nodes)", l.tiles_x, l.tiles_y, l.tile_size, l.width(), l.height())
}

impl DialogSettings {
    /// The dialog's first settings for a project `side` nodes across saved at `project`.
    pub fn new(side: usize, project: Option<&Path>) -> Self {
        let size = default_size(side);
        let out = default_output(project, size, OutputFormat::Png16).display().to_string();
        let name = project_stem(project);
        let tiles = TileSettings {
            engine: Engine::Unity,
            tiles_x: 2,
            format: TileFormat::default_for(Engine::Unity),
            maps: MapKind::ALL.to_vec(),
            dir: String::new(),
            name: if tileset::check_name(&name).is_ok() { name } else { "terrain".into() },
            force: false,
        };
        let mut s =
            Self { size, erosion: ErosionBuild::Upsample, out, unreal: false, side, target: Target::File, tiles };
        s.tiles.dir = default_tile_dir(project, Engine::Unity, size).display().to_string();
        s
    }

    /// Switches to a tile set or back to a file. For a tile set the size moves to the engine's
    /// nearest tiling of the project `w × h` (see [`Self::set_engine`]).
    pub fn set_target(&mut self, target: Target, w: usize, h: usize) {
        self.target = target;
        if target == Target::TileSet {
            self.fit_layout(w, h);
        }
    }

    /// Chooses the tile set's engine: its usual format, and its tiling nearest the size chosen
    /// (the closest width, with about as many tiles across); a folder named after the old engine
    /// (`island-unity-2049`) follows.
    pub fn set_engine(&mut self, engine: Engine, w: usize, h: usize) {
        if engine != self.tiles.engine {
            let old = format!("-{}-", self.tiles.engine.name());
            let new = format!("-{}-", engine.name());
            self.rename_dir(&old, &new);
            self.tiles.engine = engine;
            self.tiles.format = TileFormat::default_for(engine);
        }
        self.fit_layout(w, h);
    }

    /// Chooses tiling `l`: the build's size becomes its width (a folder or file named after the
    /// old size follows).
    pub fn set_layout(&mut self, l: TileLayout) {
        self.tiles.tiles_x = l.tiles_x;
        let (old, new) = (format!("-{}", self.size), format!("-{}", l.width()));
        self.rename_dir(&old, &new);
        self.set_size(l.width());
    }

    /// The tiling of the engine nearest the size chosen, chosen.
    fn fit_layout(&mut self, w: usize, h: usize) {
        if let Some(l) = tileset::nearest_layout(self.tiles.engine, w, h, self.size, self.tiles.tiles_x) {
            self.set_layout(l);
        }
    }

    /// Replaces the last `old` in the folder's name by `new` when the name ends in `old` followed
    /// by digits only or holds `old` as an engine part (`-unity-`).
    fn rename_dir(&mut self, old: &str, new: &str) {
        let p = PathBuf::from(self.tiles.dir.trim());
        let Some(name) = p.file_name().and_then(|s| s.to_str()) else { return };
        let renamed = if old.ends_with('-') {
            name.rfind(old).map(|i| format!("{}{new}{}", &name[..i], &name[i + old.len()..]))
        } else {
            name.strip_suffix(old).map(|head| format!("{head}{new}"))
        };
        if let Some(r) = renamed {
            self.tiles.dir = p.with_file_name(r).display().to_string();
        }
    }

    /// The tiling the settings ask for in a project of `w × h` nodes, or why there is none.
    pub fn layout(&self, w: usize, h: usize) -> Result<TileLayout, String> {
        tiles::resolve_layout(
            self.tiles.engine,
            Some(self.size),
            Some((self.tiles.tiles_x, None)),
            None,
            &|n| build_height(w, h, n),
            &|n| check_side(n).is_ok(),
        )
        .map_err(|e| e.to_string())
    }

    /// The tile set these settings ask for in a project of `w × h` nodes (the tiles' folder is
    /// [`Self::tile_dir`]), or why they cannot make one.
    pub fn tile_request(&self, w: usize, h: usize) -> Result<TileSetRequest, String> {
        tileset::check_name(&self.tiles.name)?;
        Ok(TileSetRequest {
            engine: self.tiles.engine,
            format: self.tiles.format,
            layout: self.layout(w, h)?,
            maps: self.tiles.maps.clone(),
            name: self.tiles.name.clone(),
            erosion: self.erosion,
            force: self.tiles.force,
        })
    }

    /// The tile set's folder (trimmed).
    pub fn tile_dir(&self) -> PathBuf {
        PathBuf::from(self.tiles.dir.trim())
    }

    /// Takes a script's (or the Build button's) request: `size`, `out` (a file, or with `choice`
    /// the tile set's folder) and `erosion`.
    pub fn apply(&mut self, size: usize, out: &Path, erosion: ErosionBuild, choice: Option<&TileChoice>) {
        self.size = size;
        self.erosion = erosion;
        match choice {
            None => {
                self.target = Target::File;
                self.out = out.display().to_string();
            }
            Some(c) => {
                self.target = Target::TileSet;
                self.tiles.engine = c.engine;
                self.tiles.tiles_x = c.tiles;
                self.tiles.format = c.format.unwrap_or(TileFormat::default_for(c.engine));
                self.tiles.maps = c.maps.clone();
                self.tiles.maps.sort();
                self.tiles.maps.dedup();
                if let Some(n) = &c.name {
                    self.tiles.name = n.clone();
                }
                self.tiles.force = c.force;
                self.tiles.dir = out.display().to_string();
            }
        }
    }

    /// What the Build button sends for these settings: the tile set's choice when the target is
    /// one.
    pub fn choice(&self) -> Option<TileChoice> {
        (self.target == Target::TileSet).then(|| TileChoice {
            engine: self.tiles.engine,
            tiles: self.tiles.tiles_x,
            format: Some(self.tiles.format),
            maps: self.tiles.maps.clone(),
            name: Some(self.tiles.name.clone()),
            force: self.tiles.force,
        })
    }

    /// Where the Build button writes: the file, or the tile set's folder.
    pub fn destination(&self) -> PathBuf {
        match self.target {
            Target::File => self.out_path(),
            Target::TileSet => self.tile_dir(),
        }
    }

    /// The format the output's extension names.
    pub fn format(&self) -> Option<OutputFormat> {
        OutputFormat::of_path(Path::new(self.out.trim()))
    }

    /// Changes the output's extension to `format`'s (adds one where there is none).
    pub fn set_format(&mut self, format: OutputFormat) {
        let mut p = PathBuf::from(self.out.trim());
        if p.as_os_str().is_empty() {
            p = PathBuf::from("terrain");
        }
        p.set_extension(format.extension());
        self.out = p.display().to_string();
    }

    /// Chooses side `size`; a file name that ends in the old side (`island-2049.png`) follows it.
    pub fn set_size(&mut self, size: usize) {
        let p = PathBuf::from(self.out.trim());
        let old = format!("-{}", self.size);
        if let Some(stem) = p.file_stem().and_then(|s| s.to_str())
            && let Some(head) = stem.strip_suffix(&old)
        {
            let mut name = format!("{head}-{size}");
            if let Some(ext) = p.extension().and_then(|e| e.to_str()) {
                name = format!("{name}.{ext}");
            }
            self.out = p.with_file_name(name).display().to_string();
        }
        self.size = size;
    }

    /// The build options these settings ask for.
    pub fn options(&self) -> BuildOptions {
        BuildOptions { width: self.size, erosion: self.erosion, keep_input: false, erosion_change: false }
    }

    /// The output path (trimmed).
    pub fn out_path(&self) -> PathBuf {
        PathBuf::from(self.out.trim())
    }
}

/// What a finished [`run`] or [`run_tiles`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    /// Nodes along x and y.
    pub size: (usize, usize),
    /// Erosion layers that were stale and re-ran at the preview size first, by name.
    pub rerun: Vec<String>,
    /// For a tile set: its tiles across and down, tile size, and the files written (tiles, maps
    /// and the manifest).
    pub tiles: Option<(TileLayout, usize)>,
}

/// Re-runs the stale erosion layers of `stack` at the preview size, bottom first (as `talus build`
/// does), telling `progress`; the names of those re-run, or `None` when `cancel` stopped it.
fn rerun_stale(
    stack: &mut LayerStack,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Option<Vec<String>>, String> {
    let mut rerun = Vec::new();
    let rebuilt = stack.rebuild(cancel, |l| {
        progress(BuildProgress {
            stage: format!("{}: re-run at the preview size (it was stale)", l.name),
            fraction: 0.0,
        });
        rerun.push(l.name.clone());
    })?;
    Ok(rebuilt.then_some(rerun))
}

/// What the dialog's Build does: re-runs the stale erosion layers of `stack` at the preview size
/// (bottom first, as `talus build` does), builds it with `opts`, and writes it to `out` atomically.
/// `Ok(None)` when `cancel` stopped it, with nothing written; `progress` hears of every stage.
pub fn run(
    stack: &mut LayerStack,
    opts: &BuildOptions,
    out: &Path,
    export: &ExportOptions,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Option<Written>, String> {
    check_output(out)?;
    let Some(rerun) = rerun_stale(stack, cancel, progress)? else { return Ok(None) };
    let built = match build(stack, opts, cancel, progress) {
        Ok(b) => b,
        Err(BuildError::Cancelled) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if cancel.load(Ordering::Relaxed) {
        return Ok(None);
    }
    progress(BuildProgress { stage: format!("{WRITING} {}", out.display()), fraction: 1.0 });
    interop::save(out, &built.map, export).map_err(|e| format!("writing {}: {e}", out.display()))?;
    Ok(Some(Written { size: (built.map.width, built.map.height), rerun, tiles: None }))
}

/// What the dialog's Build does for a tile set: re-runs the stale erosion layers of `stack` at the
/// preview size, then [`tileset::run`] into `dir` with the material's splat `bands`. `Ok(None)`
/// when `cancel` stopped it, with nothing left in or beside `dir`.
pub fn run_tiles(
    stack: &mut LayerStack,
    req: &TileSetRequest,
    dir: &Path,
    bands: SplatBands,
    source: &str,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Option<Written>, String> {
    check_tile_dir(dir, req.force)?;
    let Some(rerun) = rerun_stale(stack, cancel, progress)? else { return Ok(None) };
    match tileset::run(stack, req, dir, bands, source, cancel, progress) {
        Ok(Some(m)) => {
            let l = req.layout;
            let files = m.tile_files.len() * (1 + req.maps.len()) + 1;
            Ok(Some(Written { size: (l.width(), l.height()), rerun, tiles: Some((l, files)) }))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Heightmap;
    use crate::editor::layers::BaseSource;

    #[test]
    fn sizes_are_the_allowed_sides_in_order() {
        let s = allowed_sizes();
        assert_eq!(s.first(), Some(&129));
        assert_eq!(s.last(), Some(&16385));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        for n in [129, 257, 513, 1025, 2049, 4097, 8193, 16385] {
            assert!(s.contains(&n), "{n}");
        }
        for n in UNREAL_SIZES {
            assert!(s.contains(&n), "{n}");
        }
        assert!(s.iter().all(|&n| check_side(n).is_ok()));
    }

    #[test]
    fn the_default_is_four_times_the_preview_or_the_next_side_above() {
        assert_eq!(default_size(513), 2049);
        assert_eq!(default_size(257), 1025);
        assert_eq!(default_size(129), 513);
        // 4·299 + 1 = 1197: the next allowed side is Unreal's 2017.
        assert_eq!(default_size(300), 2017);
        assert_eq!(default_size(4097), 16385);
        assert_eq!(default_size(8193), 16385);
        assert_eq!(default_size(2), 129);
        assert_eq!(default_size(0), 129);
    }

    #[test]
    fn the_size_line_says_nodes_cells_and_extent() {
        assert_eq!(size_line(4097, 4097, 0.25), "4 097 × 4 097 nodes, 0.25 m cells, 1 024 m across");
        assert_eq!(size_line(2049, 1025, 0.5), "2 049 × 1 025 nodes, 0.5 m cells, 1 024 × 512 m");
        assert_eq!(size_line(129, 129, 8.0), "129 × 129 nodes, 8 m cells, 1 024 m across");
        assert_eq!(metres(0.0625), "0.0625");
        assert_eq!(metres(1_048_576.0), "1 048 576");
        assert_eq!(metres(1023.5), "1 023.5");
        assert_eq!(metres(-2.0), "-2");
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(100), "100");
        assert_eq!(group_digits(16385), "16 385");
    }

    #[test]
    fn formats_set_and_follow_the_extension() {
        let mut s = DialogSettings::new(513, Some(Path::new("/maps/island.talus")));
        assert_eq!(s.size, 2049);
        assert_eq!(s.out, "/maps/island-2049.png");
        assert_eq!(s.format(), Some(OutputFormat::Png16));
        s.set_format(OutputFormat::Exr);
        assert_eq!(s.out, "/maps/island-2049.exr");
        s.set_size(4097);
        assert_eq!(s.out, "/maps/island-4097.exr");
        s.out = "mine.tiff".into();
        assert_eq!(s.format(), Some(OutputFormat::GeoTiff));
        s.set_size(1025);
        assert_eq!(s.out, "mine.tiff", "a name of the user's own stays");
        s.out = "noext".into();
        assert_eq!(s.format(), None);
        s.set_format(OutputFormat::R16);
        assert_eq!(s.out, "noext.r16");
        s.out = " ".into();
        s.set_format(OutputFormat::Bhef);
        assert_eq!(s.out, "terrain.bhef");
        for f in OutputFormat::ALL {
            let p = PathBuf::from(format!("x.{}", f.extension()));
            assert_eq!(OutputFormat::of_path(&p), Some(f));
            // The core writer takes every extension the dialog sets.
            assert!(interop::Format::from_path(&p).is_ok());
        }
        assert_eq!(OutputFormat::of_path(Path::new("a.RAW")), Some(OutputFormat::R16));
        assert_eq!(DialogSettings::new(257, None).out, "terrain-1025.png");
    }

    #[test]
    fn bad_outputs_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_output(Path::new("")).unwrap_err().contains("choose a file"));
        let e = check_output(&dir.path().join("b.obj")).unwrap_err();
        assert!(e.contains(".bhef .png .r16 .exr .tif"), "{e}");
        let e = check_output(dir.path()).unwrap_err();
        assert!(e.contains("is a folder"), "{e}");
        let missing = dir.path().join("no-such-folder").join("b.bhef");
        let e = check_output(&missing).unwrap_err();
        assert!(e.contains("does not exist") && e.contains("no-such-folder"), "{e}");
        assert_eq!(check_output(&dir.path().join("b.bhef")), Ok(OutputFormat::Bhef));
        assert_eq!(check_output(Path::new("b.exr")), Ok(OutputFormat::Exr));
    }

    #[test]
    fn tile_settings_follow_the_engine_the_tiling_and_the_folder() {
        let mut s = DialogSettings::new(513, Some(Path::new("/maps/island.talus")));
        assert_eq!((s.target, s.tiles.engine, s.tiles.format), (Target::File, Engine::Unity, TileFormat::R16));
        assert_eq!(s.tiles.dir, "/maps/island-unity-2049");
        assert_eq!(s.tiles.name, "island");
        assert_eq!(s.tiles.maps, MapKind::ALL.to_vec(), "every map by default");
        assert_eq!(s.choice(), None);
        assert_eq!(s.destination(), PathBuf::from("/maps/island-2049.png"));

        // Unity at 2049: two tiles of 1025 across.
        s.set_target(Target::TileSet, 513, 513);
        assert_eq!(s.layout(513, 513), Ok(TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 1025 }));
        assert_eq!(s.destination(), PathBuf::from("/maps/island-unity-2049"));

        // Unreal has no tiling of 2049: the closest one (2 × 1017 = 2033), its format, the
        // folder renamed; and back to Unity, the same 2049 again.
        s.set_engine(Engine::Unreal, 513, 513);
        let l = s.layout(513, 513).unwrap();
        assert_eq!(l, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 1017 });
        assert_eq!(s.size, 2033);
        s.set_engine(Engine::Unity, 513, 513);
        assert_eq!((s.size, s.tiles.dir.as_str()), (2049, "/maps/island-unity-2049"));
        assert_eq!(s.tiles.format, TileFormat::R16);
        s.set_engine(Engine::Unreal, 513, 513);
        assert_eq!(s.tiles.format, TileFormat::Png16);
        assert_eq!(s.tiles.dir, format!("/maps/island-unreal-{}", s.size));
        assert_eq!(s.out, format!("/maps/island-{}.png", s.size), "the file name follows the size too");

        // A chosen tiling sets the size; the request is what `talus build --tiles` resolves.
        let four = TileLayout { tiles_x: 4, tiles_y: 4, tile_size: 505 };
        s.set_layout(four);
        assert_eq!((s.size, s.tiles.dir.as_str()), (2017, "/maps/island-unreal-2017"));
        let req = s.tile_request(513, 513).unwrap();
        assert_eq!((req.engine, req.layout, req.format), (Engine::Unreal, four, TileFormat::Png16));
        let c = s.choice().unwrap();
        assert_eq!((c.engine, c.tiles, c.format), (Engine::Unreal, 4, Some(TileFormat::Png16)));

        // A size no tiling of the engine has, and a bad name, say why.
        s.size = 2049;
        let e = s.layout(513, 513).unwrap_err();
        assert!(e.contains("not an Unreal tile size") && e.contains("2017 (tiles of 505)") && !e.contains("--"), "{e}");
        s.size = 2017;
        s.tiles.name = "a/b".into();
        assert!(s.tile_request(513, 513).unwrap_err().contains("without folders"));

        // A script's request lands in the same settings.
        let mut t = DialogSettings::new(257, None);
        let choice = TileChoice {
            engine: Engine::Unity,
            tiles: 2,
            format: None,
            maps: vec![MapKind::Splat, MapKind::Flow, MapKind::Flow],
            name: Some("isle".into()),
            force: true,
        };
        t.apply(1025, Path::new("out/set"), ErosionBuild::Rerun, Some(&choice));
        assert_eq!((t.target, t.size, t.erosion), (Target::TileSet, 1025, ErosionBuild::Rerun));
        assert_eq!(t.tiles.maps, vec![MapKind::Flow, MapKind::Splat]);
        assert_eq!((t.tiles.name.as_str(), t.tiles.force, t.tiles.format), ("isle", true, TileFormat::R16));
        assert_eq!(t.destination(), PathBuf::from("out/set"));
        assert_eq!(t.tile_request(257, 257).unwrap().layout, TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 513 });
        t.apply(1025, Path::new("b.exr"), ErosionBuild::Upsample, None);
        assert_eq!((t.target, t.out.as_str()), (Target::File, "b.exr"));
    }

    #[test]
    fn tile_folders_are_checked_as_the_writer_will_find_them() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_tile_dir(Path::new(""), false).unwrap_err().contains("choose a folder"));
        assert_eq!(check_tile_dir(&dir.path().join("new"), false), Ok(()));
        let e = check_tile_dir(&dir.path().join("no").join("set"), false).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        assert!(check_tile_dir(&dir.path().join("f"), false).unwrap_err().contains("is a file"));
        let e = check_tile_dir(dir.path(), false).unwrap_err();
        assert!(e.contains("holds files") && e.contains("Replace"), "{e}");
        assert_eq!(check_tile_dir(dir.path(), true), Ok(()));
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(check_tile_dir(&empty, false), Ok(()));
        assert_eq!(default_tile_dir(None, Engine::Unreal, 2017), PathBuf::from("terrain-unreal-2017"));
    }

    fn small_stack() -> LayerStack {
        let mut map = Heightmap::new(129, 129, 8.0).unwrap();
        for y in 0..129 {
            for x in 0..129 {
                map.set(x, y, ((x as f32) * 0.1).sin() * 20.0 + y as f32 * 0.3);
            }
        }
        LayerStack::new(&map, BaseSource::Heights)
    }

    #[test]
    fn run_writes_the_build_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("b.bhef");
        let opts =
            BuildOptions { width: 257, erosion: ErosionBuild::Upsample, keep_input: false, erosion_change: false };
        let stages = std::sync::Mutex::new(Vec::new());
        let progress = |p: BuildProgress| stages.lock().unwrap().push(p.stage);
        let mut stack = small_stack();
        let w = run(&mut stack, &opts, &out, &ExportOptions::default(), &AtomicBool::new(false), &progress)
            .unwrap()
            .unwrap();
        assert_eq!(w, Written { size: (257, 257), rerun: vec![], tiles: None });
        let want = build(&small_stack(), &opts, &AtomicBool::new(false), &|_| {}).unwrap().map;
        let got = crate::core::io::bhef::load(&out).unwrap();
        assert_eq!((got.width, got.height), (257, 257));
        assert!(got.data.iter().map(|v| v.to_bits()).eq(want.data.iter().map(|v| v.to_bits())));
        assert!(stages.lock().unwrap().last().unwrap().starts_with(WRITING));
    }

    #[test]
    fn a_cancelled_or_failed_run_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("b.png");
        let opts =
            BuildOptions { width: 257, erosion: ErosionBuild::Upsample, keep_input: false, erosion_change: false };
        let r = run(&mut small_stack(), &opts, &out, &ExportOptions::default(), &AtomicBool::new(true), &|_| {});
        assert_eq!(r, Ok(None));
        assert!(!out.exists());
        let bad = dir.path().join("missing").join("b.png");
        let e = run(&mut small_stack(), &opts, &bad, &ExportOptions::default(), &AtomicBool::new(false), &|_| {})
            .unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let odd = BuildOptions { width: 1000, ..opts };
        let e = run(&mut small_stack(), &odd, &out, &ExportOptions::default(), &AtomicBool::new(false), &|_| {})
            .unwrap_err();
        assert!(e.contains("2^k + 1"), "{e}");
        assert!(!out.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no temporary file left behind");
    }
}
