//! A running build's progress: the phase it is in (an enum, so callers match on it rather than on
//! text) and how far the whole build is.

use std::fmt;
use std::path::PathBuf;

use super::plan::{BaseHow, LayerHow};
use crate::core::io::tiles::TileLayout;

/// What a build is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Not started yet.
    Starting,
    /// A stale erosion layer re-runs at the preview size before the build.
    Stale {
        /// The layer's name.
        layer: String,
    },
    /// The base at the build's size.
    Base(BaseHow),
    /// A layer of the stack at the build's size.
    Layer {
        /// The layer's name.
        name: String,
        /// How it is built.
        how: LayerHow,
    },
    /// The flow map's drainage over the whole build.
    Flow {
        /// Nodes along x.
        width: usize,
        /// Nodes along y.
        height: usize,
    },
    /// Tiles and maps, file by file in parallel (a cancel still stops it).
    Tiles {
        /// The tiling.
        layout: TileLayout,
        /// The folder.
        dir: PathBuf,
    },
    /// The file is being written: from here on a cancel no longer stops the build.
    Writing {
        /// The file.
        path: PathBuf,
    },
    /// Finished.
    Done,
}

impl Phase {
    /// Whether a cancel can still stop the build (everything but the final file write).
    pub fn cancellable(&self) -> bool {
        !matches!(self, Phase::Writing { .. } | Phase::Done)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Starting => write!(f, "starting"),
            Phase::Stale { layer } => write!(f, "{layer}: re-run at the preview size (it was stale)"),
            Phase::Base(how) => write!(f, "{how}"),
            Phase::Layer { name, how } => write!(f, "{name}: {how}"),
            Phase::Flow { width, height } => write!(f, "flow: D8 drainage of {width}×{height} nodes"),
            Phase::Tiles { layout: l, dir } => {
                write!(f, "tiles: {}×{} of {} nodes into {}", l.tiles_x, l.tiles_y, l.tile_size, dir.display())
            }
            Phase::Writing { path } => write!(f, "writing {}", path.display()),
            Phase::Done => write!(f, "done"),
        }
    }
}

/// Progress of a running build: its phase and how far it is, `0..=1` over the whole build.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildProgress {
    /// What is being built.
    pub phase: Phase,
    /// Fraction of the whole build done.
    pub fraction: f64,
}

impl BuildProgress {
    /// A build that has not started.
    pub fn starting() -> Self {
        Self { phase: Phase::Starting, fraction: 0.0 }
    }
}
