//! The Build… dialog's choices, without the window (`crate::app::build_dialog` draws them): what
//! the user typed and picked ([`DialogSettings`]), how a choice moves the others (a tiling sets
//! the size, an engine its format and folder name, a size the file's name), the line that says
//! what a size means in nodes and metres, and [`DialogSettings::request`], the [`BuildRequest`]
//! its Build button sends (a script's `Build(...)` lands in the same settings through
//! [`DialogSettings::apply`]).
//!
//! The dialog writes one file ([`TargetKind::File`]) or an engine tile set
//! ([`TargetKind::TileSet`]): the engine, a tiling from the engine's tile sizes
//! ([`super::tileset::layouts`]; choosing one sets the build's size), the height tiles' format,
//! the texture maps, the folder and the tiles' name, as `talus build --tiles` takes them. The
//! folder starts beside the project as `island-unity-2049`; one that holds files is refused unless
//! "Replace" is ticked, and then replaced only once the new set is complete.
//!
//! The default side is 4× the preview's resolution, `N = 4 (n − 1) + 1` (a 513² project builds
//! at 2049², a 257² one at 1025²), or the next allowed side above it ([`default_size`]).

use std::path::{Path, PathBuf};

use super::output::{default_output, default_tile_dir, project_stem};
use super::request::{BuildRequest, FileTarget, Target, TileTarget};
use super::sizes::default_size;
use super::{ErosionBuild, tileset};
use crate::core::erosion::refine::RefineParams;
use crate::core::io::interop::Format;
use crate::core::io::tiles::{Engine, MapKind, TileFormat, TileLayout};

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
    pub kind: TargetKind,
    /// The tile set's choices (used when `kind` is [`TargetKind::TileSet`]).
    pub tiles: TileSettings,
    /// The detail passes' settings when erosion layers are refined (years, strength, deposition,
    /// …; `--refine` on the CLI).
    pub refine: RefineParams,
}

/// What the dialog writes (its "Write" choice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TargetKind {
    /// One heightmap file (the format by its extension).
    #[default]
    File,
    /// An engine tile set: tiles, texture maps and a manifest in a folder.
    TileSet,
}

/// The dialog's tile-set choices, as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct TileSettings {
    /// The engine whose conventions the set follows.
    pub engine: Engine,
    /// Tiles across of the chosen tiling (its tile size follows from the build's size).
    pub tiles: usize,
    /// The height tiles' format.
    pub format: TileFormat,
    /// The texture maps written beside the heights.
    pub maps: Vec<MapKind>,
    /// The folder to write, as typed.
    pub dir: String,
    /// File-name prefix of the tiles.
    pub name: String,
    /// Replace a folder that holds files (once the new set is complete).
    pub replace: bool,
}

/// The tiling a layout menu line shows: "2 × 2 tiles of 1025 (2049 × 2049 nodes)".
pub fn layout_line(l: &TileLayout) -> String {
    format!("{} × {} tiles of {} ({} × {} nodes)", l.tiles_x, l.tiles_y, l.tile_size, l.width(), l.height())
}

impl DialogSettings {
    /// The dialog's first settings for a project `side` nodes across saved at `project`.
    pub fn new(side: usize, project: Option<&Path>) -> Self {
        let size = default_size(side);
        let out = default_output(project, size, Format::Png).display().to_string();
        let name = project_stem(project);
        let tiles = TileSettings {
            engine: Engine::Unity,
            tiles: 2,
            format: TileFormat::default_for(Engine::Unity),
            maps: MapKind::ALL.to_vec(),
            dir: default_tile_dir(project, Engine::Unity, size).display().to_string(),
            name: if tileset::check_name(&name).is_ok() { name } else { "terrain".into() },
            replace: false,
        };
        Self {
            size,
            erosion: ErosionBuild::default(),
            out,
            unreal: false,
            side,
            kind: TargetKind::File,
            tiles,
            refine: RefineParams::default(),
        }
    }

    /// Switches to a tile set or back to a file. For a tile set the size moves to the engine's
    /// nearest tiling of the project `w × h` (see [`Self::set_engine`]).
    pub fn set_kind(&mut self, kind: TargetKind, w: usize, h: usize) {
        self.kind = kind;
        if kind == TargetKind::TileSet {
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
        self.tiles.tiles = l.tiles_x;
        let (old, new) = (format!("-{}", self.size), format!("-{}", l.width()));
        self.rename_dir(&old, &new);
        self.set_size(l.width());
    }

    /// The tiling of the engine nearest the size chosen, chosen.
    fn fit_layout(&mut self, w: usize, h: usize) {
        if let Some(l) = tileset::nearest_layout(self.tiles.engine, w, h, self.size, self.tiles.tiles) {
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
        tileset::layout_for(self.tiles.engine, w, h, self.size, self.tiles.tiles)
    }

    /// The tile set's folder (trimmed).
    pub fn tile_dir(&self) -> PathBuf {
        PathBuf::from(self.tiles.dir.trim())
    }

    /// The output file (trimmed).
    pub fn out_path(&self) -> PathBuf {
        PathBuf::from(self.out.trim())
    }

    /// The request the Build button sends for these settings.
    pub fn request(&self) -> BuildRequest {
        let target = match self.kind {
            TargetKind::File => Target::File(FileTarget { path: self.out_path(), unreal_range: self.unreal }),
            TargetKind::TileSet => Target::Tiles(TileTarget {
                engine: self.tiles.engine,
                tiles: self.tiles.tiles,
                format: Some(self.tiles.format),
                maps: self.tiles.maps.clone(),
                dir: self.tile_dir(),
                name: Some(self.tiles.name.clone()),
                replace: self.tiles.replace,
            }),
        };
        BuildRequest {
            size: Some(self.size),
            erosion: self.erosion,
            target,
            keep_input: false,
            refine: self.refine.clone(),
        }
    }

    /// Takes a script's (or the Build button's) request, so the dialog shows what is built. A
    /// request without a size (the project's own) or kept in memory changes only the erosion mode.
    pub fn apply(&mut self, req: &BuildRequest) {
        self.erosion = req.erosion;
        self.refine = req.refine.clone();
        if let Some(n) = req.size {
            self.size = n;
        }
        match &req.target {
            Target::File(f) => {
                self.kind = TargetKind::File;
                self.out = f.path.display().to_string();
                self.unreal = f.unreal_range;
            }
            Target::Tiles(t) => {
                self.kind = TargetKind::TileSet;
                self.tiles.engine = t.engine;
                self.tiles.tiles = t.tiles;
                self.tiles.format = t.tile_format();
                self.tiles.maps = t.sorted_maps();
                if let Some(n) = &t.name {
                    self.tiles.name = n.clone();
                }
                self.tiles.replace = t.replace;
                self.tiles.dir = t.dir.display().to_string();
            }
            Target::Memory => {}
        }
    }

    /// Where the Build button writes: the file, or the tile set's folder.
    pub fn destination(&self) -> PathBuf {
        match self.kind {
            TargetKind::File => self.out_path(),
            TargetKind::TileSet => self.tile_dir(),
        }
    }

    /// The format the output's extension names.
    pub fn format(&self) -> Option<Format> {
        Format::of_path(Path::new(self.out.trim()))
    }

    /// Changes the output's extension to `format`'s (adds one where there is none).
    pub fn set_format(&mut self, format: Format) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(s.format(), Some(Format::Png));
        s.set_format(Format::Exr);
        assert_eq!(s.out, "/maps/island-2049.exr");
        s.set_size(4097);
        assert_eq!(s.out, "/maps/island-4097.exr");
        s.out = "mine.tiff".into();
        assert_eq!(s.format(), Some(Format::GeoTiff));
        s.set_size(1025);
        assert_eq!(s.out, "mine.tiff", "a name of the user's own stays");
        s.out = "noext".into();
        assert_eq!(s.format(), None);
        s.set_format(Format::R16);
        assert_eq!(s.out, "noext.r16");
        s.out = " ".into();
        s.set_format(Format::Bhef);
        assert_eq!(s.out, "terrain.bhef");
        s.set_format(Format::Glb);
        assert_eq!(s.out, "terrain.glb", "meshes too, as the CLI writes them");
        for f in super::super::output::file_formats() {
            let p = PathBuf::from(format!("x.{}", f.extension()));
            assert_eq!(Format::of_path(&p), Some(f));
            assert!(super::super::output::check_output(&p).is_ok(), "{f:?}");
        }
        assert_eq!(DialogSettings::new(257, None).out, "terrain-1025.png");
    }

    #[test]
    fn tile_settings_follow_the_engine_the_tiling_and_the_folder() {
        let mut s = DialogSettings::new(513, Some(Path::new("/maps/island.talus")));
        assert_eq!((s.kind, s.tiles.engine, s.tiles.format), (TargetKind::File, Engine::Unity, TileFormat::R16));
        assert_eq!(s.tiles.dir, "/maps/island-unity-2049");
        assert_eq!(s.tiles.name, "island");
        assert_eq!(s.tiles.maps, MapKind::ALL.to_vec(), "every map by default");
        assert!(matches!(s.request().target, Target::File(_)));
        assert_eq!(s.destination(), PathBuf::from("/maps/island-2049.png"));

        // Unity at 2049: two tiles of 1025 across.
        s.set_kind(TargetKind::TileSet, 513, 513);
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

        // A chosen tiling sets the size; the request is what `talus build --tiles` builds.
        let four = TileLayout { tiles_x: 4, tiles_y: 4, tile_size: 505 };
        s.set_layout(four);
        assert_eq!((s.size, s.tiles.dir.as_str()), (2017, "/maps/island-unreal-2017"));
        let req = s.request();
        assert_eq!(req.size, Some(2017));
        let Target::Tiles(t) = &req.target else { panic!("a tile set") };
        assert_eq!((t.engine, t.tiles, t.format), (Engine::Unreal, 4, Some(TileFormat::Png16)));
        assert_eq!(tileset::layout_for(t.engine, 513, 513, 2017, t.tiles), Ok(four));

        // A size no tiling of the engine has says why, without the CLI's flags.
        s.size = 2049;
        let e = s.layout(513, 513).unwrap_err();
        assert!(e.contains("not an Unreal tile size") && e.contains("2017 (tiles of 505)") && !e.contains("--"), "{e}");

        // A script's request lands in the same settings, and comes back out the same.
        let mut t = DialogSettings::new(257, None);
        let req = BuildRequest {
            size: Some(1025),
            erosion: ErosionBuild::Rerun,
            target: Target::Tiles(TileTarget {
                engine: Engine::Unity,
                tiles: 2,
                format: None,
                maps: vec![MapKind::Splat, MapKind::Flow, MapKind::Flow],
                dir: "out/set".into(),
                name: Some("isle".into()),
                replace: true,
            }),
            keep_input: false,
            refine: Default::default(),
        };
        t.apply(&req);
        assert_eq!((t.kind, t.size, t.erosion), (TargetKind::TileSet, 1025, ErosionBuild::Rerun));
        assert_eq!(t.tiles.maps, vec![MapKind::Flow, MapKind::Splat]);
        assert_eq!((t.tiles.name.as_str(), t.tiles.replace, t.tiles.format), ("isle", true, TileFormat::R16));
        assert_eq!(t.destination(), PathBuf::from("out/set"));
        assert_eq!(t.layout(257, 257), Ok(TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 513 }));
        let back = t.request();
        let Target::Tiles(b) = &back.target else { panic!("a tile set") };
        assert_eq!(
            (b.maps.as_slice(), b.format, b.replace),
            (&[MapKind::Flow, MapKind::Splat][..], Some(TileFormat::R16), true)
        );
        let file = BuildRequest {
            size: Some(1025),
            erosion: ErosionBuild::Upsample,
            target: Target::File(FileTarget { path: "b.exr".into(), unreal_range: false }),
            keep_input: false,
            refine: Default::default(),
        };
        t.apply(&file);
        assert_eq!((t.kind, t.out.as_str()), (TargetKind::File, "b.exr"));
        assert_eq!(t.request(), file);
    }
}
