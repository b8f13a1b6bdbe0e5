//! Why a build could not be planned, run or written: one error type for every entry point (the
//! CLI, the Build… dialog, scripts), with the one cancellation value [`BuildError::Cancelled`].

use std::path::PathBuf;

use crate::core::io::tiles::TileError;

/// Why a build could not run. A cancel is [`BuildError::Cancelled`] wherever it happens (the
/// stale layers' re-run, the base, a layer, the flow map, the tiles); nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The requested size is not one a build can have.
    #[error(transparent)]
    Size(#[from] SizeError),
    /// The build needs more memory than the system has available.
    #[error(
        "a {w}×{h} build needs about {need:.1} GiB of memory, but {avail:.1} GiB is available; \
         close other programs, or build at a smaller size"
    )]
    Memory {
        /// Build width, nodes.
        w: usize,
        /// Build height, nodes.
        h: usize,
        /// Estimated need, GiB.
        need: f64,
        /// Available, GiB.
        avail: f64,
    },
    /// The output (file or folder) cannot take the build.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The tile set asked for is not one the engine has (layout, name).
    #[error("{0}")]
    Tiles(String),
    /// A stale erosion layer could not re-run at the preview size.
    #[error("re-running the stale layers at the preview size: {0}")]
    StaleRerun(String),
    /// A layer's result is stale (its input changed since it ran) and was not re-run first.
    #[error("layer {0:?} is stale (its input changed since it ran): re-simulate it before building")]
    StaleLayer(String),
    /// The base could not be generated again.
    #[error("the base generator failed at the build size: {0}")]
    Base(String),
    /// An erosion layer could not run at the build size.
    #[error("layer {layer:?} could not re-run at the build size: {msg}")]
    Layer {
        /// The layer's name.
        layer: String,
        /// Why.
        msg: String,
    },
    /// Writing the file failed (nothing was left behind: it is written atomically).
    #[error("writing {path}: {msg}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        msg: String,
    },
    /// Writing the tile set failed (nothing was left behind).
    #[error(transparent)]
    TileWrite(TileError),
    /// A build's loupe cannot show the window asked for ([`super::loupe`]).
    #[error(transparent)]
    Loupe(#[from] LoupeError),
    /// Cancelled by the caller; nothing was written.
    #[error("build cancelled")]
    Cancelled,
}

impl From<TileError> for BuildError {
    fn from(e: TileError) -> Self {
        match e {
            TileError::Cancelled => BuildError::Cancelled,
            e => BuildError::TileWrite(e),
        }
    }
}

/// Why a size cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not `2^k + 1` within the range, nor one of Unreal's sizes.
    #[error(
        "a build side must be 2^k + 1 from {min} to {max} (129, 257, 513, 1025, 2049, 4097, 8193, 16385) or one of \
         Unreal's sizes {unreal:?}; {n} is not"
    )]
    NotASide {
        /// The side asked for.
        n: usize,
        /// Smallest side.
        min: usize,
        /// Largest side.
        max: usize,
        /// Unreal's sizes within the range.
        unreal: Vec<usize>,
    },
    /// The project's aspect gives no whole number of nodes down at this width.
    #[error("the project is {w}×{h} nodes; at {width} nodes across its height would not be a whole number of nodes")]
    Aspect {
        /// Project width, nodes.
        w: usize,
        /// Project height, nodes.
        h: usize,
        /// The width asked for.
        width: usize,
    },
    /// A tile set needs a size.
    #[error("a tile set needs the build's size (its tiles across times the tile size)")]
    Missing,
}

/// Why the output cannot take a build.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    /// No file given.
    #[error("choose a file to write the build to")]
    NoFile,
    /// No folder given for a tile set.
    #[error("choose a folder to write the tile set to")]
    NoFolder,
    /// A file was asked for, but the path is a folder.
    #[error("{} is a folder; give a file name", .0.display())]
    IsFolder(PathBuf),
    /// A tile set was asked for, but the path is a file.
    #[error("{} is a file; a tile set is written into a folder", .0.display())]
    IsFile(PathBuf),
    /// The extension names no format a build writes.
    #[error("{}: a build writes {known}; choose a format", .path.display())]
    Format {
        /// The path.
        path: PathBuf,
        /// The extensions a build writes.
        known: String,
    },
    /// The folder the output would go into does not exist.
    #[error("the folder {} does not exist", .0.display())]
    NoParent(PathBuf),
    /// The tile set's folder holds files and Replace was not asked for.
    #[error(
        "{} holds files; choose another folder, or tick Replace to replace it once the new set is complete",
        .0.display()
    )]
    NotEmpty(PathBuf),
    /// The folder could not be read.
    #[error("cannot read the folder {}: {msg}", .path.display())]
    Unreadable {
        /// The folder.
        path: PathBuf,
        /// The operating system's message.
        msg: String,
    },
}

/// Why a build's loupe ([`super::loupe`]) cannot show a window.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LoupeError {
    /// The centre is not a point of the map (outside it, or not a number).
    #[error("the loupe's centre ({x} m, {y} m) is not on the map (0–{width} m × 0–{height} m)")]
    Centre {
        /// Centre, metres along x.
        x: f32,
        /// Centre, metres along y.
        y: f32,
        /// The map's extent along x, metres.
        width: f32,
        /// The map's extent along y, metres.
        height: f32,
    },
    /// The side is not a positive number of metres, or the window would not fit on the map.
    #[error("the loupe's side must be a positive number of metres up to the map's {max} m; {side} m is not")]
    Side {
        /// The side asked for, metres.
        side: f32,
        /// The largest side the map holds, metres.
        max: f32,
    },
    /// The build is not finer than the preview: the loupe would show the preview again.
    #[error(
        "the loupe shows a build finer than the preview ({preview} nodes across); choose a larger build size \
         (this one is {build})"
    )]
    NotFiner {
        /// The preview's nodes across.
        preview: usize,
        /// The build's nodes across (the preview's own when the request has no size).
        build: usize,
    },
    /// A re-run build runs each recipe again over the whole map; a window of it would be another
    /// run on another land.
    #[error(
        "the loupe shows Refine and Upsample builds; a Re-run build runs each recipe again over the whole map, \
         which a window of it cannot show"
    )]
    Rerun,
}
