//! What to build: the one request type the CLI (`talus build`), the Build… dialog and scripts
//! (`Build(...)`) all make, and the editor's command carries.
//!
//! A request is plain data (serde, so a script writes it as RON); [`super::prepare`] checks it
//! against the project once and makes the plan the build follows.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ErosionBuild;
use crate::core::erosion::refine::RefineParams;
use crate::core::io::interop::Format;
use crate::core::io::tiles::{Engine, MapKind, TileFormat};
use crate::core::splat::SplatBands;

/// What to build: at which size, how erosion layers are rebuilt, and what is written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuildRequest {
    /// Nodes along x of the build (`2^k + 1` from 129 to 16385, or one of Unreal's sizes); the
    /// height follows the project's aspect. `None`: the project's own size, its layers folded as
    /// they are (no rebuild).
    #[serde(default)]
    pub size: Option<usize>,
    /// How erosion layers are rebuilt at another size.
    #[serde(default)]
    pub erosion: ErosionBuild,
    /// What is written.
    pub target: Target,
    /// Also keep the fold below the first erosion layer at the build's size (one more map in
    /// memory), for the build's own QA (`talus build --parity`).
    #[serde(default)]
    pub keep_input: bool,
    /// The detail passes of [`ErosionBuild::Refine`] (steps and strength per level).
    #[serde(default)]
    pub refine: RefineParams,
}

/// What a build writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// One file, in the format its extension names ([`crate::core::io::interop::FORMATS`]).
    File(FileTarget),
    /// An engine tile set: tiles, texture maps and a manifest in a folder.
    Tiles(TileTarget),
    /// Nothing: the build is only returned (tests, benchmarks, a look before building).
    Memory,
}

/// One file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileTarget {
    /// The file; its extension is the format.
    pub path: PathBuf,
    /// Integer formats (PNG, R16): centre the range on zero the way Unreal reads them.
    #[serde(default)]
    pub unreal_range: bool,
}

impl FileTarget {
    /// The format the path's extension names, if any.
    pub fn format(&self) -> Option<Format> {
        Format::of_path(&self.path)
    }
}

/// An engine tile set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TileTarget {
    /// The engine whose conventions the set follows (`unreal` or `unity`).
    pub engine: Engine,
    /// Tiles across; with the build's size it gives the tile size (`N = K·(S − 1) + 1`).
    pub tiles: usize,
    /// The height tiles' format (`png16` or `r16`); the engine's usual one when absent.
    #[serde(default)]
    pub format: Option<TileFormat>,
    /// The texture maps written beside the heights (`flow`, `erosion`, `deposition`, `slope`,
    /// `normal`, `splat`).
    #[serde(default)]
    pub maps: Vec<MapKind>,
    /// The folder the set is written into.
    pub dir: PathBuf,
    /// File-name prefix of the tiles; the project's name when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Replace a folder that holds files (only once the new set is complete).
    #[serde(default)]
    pub replace: bool,
}

impl TileTarget {
    /// Whether the set needs the erosion layers' summed change (its erosion or deposition map).
    pub fn needs_change(&self) -> bool {
        crate::core::io::tiles::needs_erosion_change(&self.maps)
    }

    /// The height tiles' format: the one asked for, else the engine's usual one.
    pub fn tile_format(&self) -> TileFormat {
        self.format.unwrap_or(TileFormat::default_for(self.engine))
    }

    /// The maps sorted, without repeats.
    pub fn sorted_maps(&self) -> Vec<MapKind> {
        let mut m = self.maps.clone();
        m.sort();
        m.dedup();
        m
    }
}

impl BuildRequest {
    /// A build of `size` nodes across kept in memory only.
    pub fn in_memory(size: usize, erosion: ErosionBuild) -> Self {
        Self { size: Some(size), erosion, target: Target::Memory, keep_input: false, refine: RefineParams::default() }
    }

    /// Where the build writes: the file, the tile set's folder, or nothing.
    pub fn destination(&self) -> Option<&Path> {
        match &self.target {
            Target::File(f) => Some(&f.path),
            Target::Tiles(t) => Some(&t.dir),
            Target::Memory => None,
        }
    }
}

/// What a build takes from the project besides its stack: where it came from and how its material
/// splits into layers. The CLI makes it from the project file it read, the editor from the
/// document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildContext {
    /// Where the project came from (its path, or its title when never saved), recorded in a
    /// file's sidecar and a tile set's manifest.
    pub source: String,
    /// The tiles' name when the request gives none (the project's file name, or `terrain`).
    pub name: String,
    /// The material's splat bands (a tile set's splat map).
    pub bands: SplatBands,
}

impl BuildContext {
    /// The context of a project read from (or saved at) `path`, else titled `title`.
    pub fn of_project(path: Option<&Path>, title: &str, bands: SplatBands) -> Self {
        let name = path
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|n| super::tileset::check_name(n).is_ok())
            .unwrap_or_else(|| "terrain".into());
        let source = path.map_or_else(|| title.to_string(), |p| p.display().to_string());
        Self { source, name, bands }
    }
}
