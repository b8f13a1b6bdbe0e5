//! Building a project at another resolution (issue #26): the same world, sampled by `N` nodes a
//! side instead of the preview's `n`, with the same landforms.
//!
//! A project's extent is `(n − 1) · Δx` metres and stays fixed; a build at `N` nodes has cell
//! size `Δx' = Δx · (n − 1) / (N − 1)`. The stack is rebuilt bottom to top:
//!
//! - **Base.** A generator whose output is a function of world position
//!   ([`crate::core::generate::Base::is_resolution_independent`]) is run again at `N` with the
//!   same parameters and `Δx'`, its normalisation and sea shift taken from the project's own grid
//!   ([`crate::core::generate::GridFit`]); at an integer ratio its nodes on the preview's nodes
//!   hold the preview's values (to rounding). Any other base (an opened file, a grid generator
//!   such as diamond-square, heights without a recipe) is resampled with the Catmull–Rom kernel of
//!   [`crate::core::resample`] (smooth, no stair steps, exact on the preview's nodes).
//! - **Sculpt layers and masks** are resampled the same way (masks clamped to `[0, 1]`).
//! - **Erosion layers**, in one of three ways ([`ErosionBuild`]):
//!   - `Refine` (the default, issue #34; [`refine`]): the layer's preview result is level 0 of a
//!     ×2 ladder up to `N`; at each level its change is brought up onto that level's fold below,
//!     and the model's detail pass (its registry entry, in world units: stream power's local
//!     drainage and implicit incision, thermal's talus angle, droplets per km²) adds what that
//!     level's cells can hold, high-passed so it moves nothing the coarser levels made. The
//!     preview's landforms, and erosion at the build's own resolution.
//!   - `Upsample` (*coarse to fine*): the preview's own result of the layer, its delta
//!     `result − input`, resampled to `N` and added with the layer's strength and mask. The
//!     landforms the preview showed are the build's by construction, at any model's cost; what a
//!     finer grid would add (rills narrower than the preview's cells) is not added. A model
//!     without a detail pass is built this way in Refine too.
//!   - `Rerun`: the layer's recipe runs again at `N` on the rebuilt input below it, its world-unit
//!     parameters converted to the finer grid by the model itself ([`crate::core::units`]). The
//!     reference the refined detail is measured against; the parity table in the README says
//!     which models keep the preview's landforms this way.
//!
//! [`loupe`] builds a window of the project this same way, to look at before the build.
//!
//! # One build path
//!
//! The CLI (`talus build`), the Build… dialog and scripts (`Build(...)`) all make a
//! [`BuildRequest`] (size, erosion mode, and a [`Target`]: one file, an engine tile set, or
//! nothing but the map in memory) and build it the same way:
//!
//! 1. [`prepare`] checks it against the project **once**: the size ([`sizes`]), the tiling and
//!    the tiles' name ([`tileset`]), the output file or folder ([`output`]), and the memory the
//!    [`plan`] needs against what is available ([`BuildError::Memory`]); nothing is allocated
//!    before that;
//! 2. [`PreparedBuild::run`] re-runs the stale erosion layers at the preview size, rebuilds the
//!    stack from that plan ([`stack`]) and writes the target, reporting [`Phase`]s as it goes. A
//!    cancel anywhere before the final file write is [`BuildError::Cancelled`] and leaves nothing
//!    behind (files and tile folders are written atomically).
//!
//! [`dialog`] holds the Build… dialog's choices (what the user typed) and turns them into a
//! request; the dialog's window is `crate::app::build_dialog`. [`loupe`] builds a window of the
//! project as a request would build it, in seconds, before the build; [`loupe_view`] is what the
//! editor's Loupe window shows of it (`crate::app::loupe`).

pub mod dialog;
pub mod error;
pub mod loupe;
pub mod loupe_view;
pub mod output;
pub mod parity_table;
pub mod plan;
pub mod progress;
pub mod reference;
pub mod refine;
pub mod request;
mod rerun;
mod run;
pub mod sizes;
mod stack;
pub mod tileset;
mod upsample;

pub use error::{BuildError, LoupeError, OutputError, SizeError};
pub use loupe::{BaseCache, Loupe, LoupeSpec, loupe, loupe_with};
pub use plan::{BaseHow, BuildPlan, LayerHow, PlanStep, available_memory, check_memory, plan};
pub use progress::{BuildProgress, Phase};
pub use request::{BuildContext, BuildRequest, FileTarget, Target, TileTarget};
pub use run::{Finished, PreparedBuild, Written, build_in_memory, check_target, prepare};
pub use sizes::{SIZE_RANGE, UNREAL_SIZES, allowed_sizes, build_height, check_side, default_size};
pub use stack::Built;

use crate::editor::layers::{BaseSource, LayerStack};

/// How erosion layers are rebuilt (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ErosionBuild {
    /// The preview's result brought up ×2 per level, with the model's detail pass at each level
    /// ([`refine`]): the preview's landforms and the erosion the build's cells can hold.
    #[default]
    Refine,
    /// The preview's result of each layer, resampled (coarse to fine).
    Upsample,
    /// Each layer's recipe run again at the build's resolution.
    Rerun,
}

impl ErosionBuild {
    /// Every mode, in the order the dialog offers them.
    pub const ALL: [ErosionBuild; 3] = [ErosionBuild::Refine, ErosionBuild::Upsample, ErosionBuild::Rerun];

    /// The name the CLI and the dialog use.
    pub fn name(self) -> &'static str {
        match self {
            ErosionBuild::Refine => "refine",
            ErosionBuild::Upsample => "upsample",
            ErosionBuild::Rerun => "rerun",
        }
    }

    /// Reads [`Self::name`].
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// The sea level the flow map drains to and the splat map's heights count from: the first
/// erosion layer's, else the base generator's, else 0 m (the level `talus build`, its preview and
/// parity report, and the editor's Build… use alike).
pub fn sea_level(stack: &LayerStack) -> f32 {
    stack
        .layers()
        .iter()
        .find_map(|l| l.erosion().and_then(|e| e.recipe.sea_level))
        .or(match &stack.base.source {
            BaseSource::Generator(p) => p.sea_level.as_ref().map(|s| s.level),
            _ => None,
        })
        .unwrap_or(0.0)
}
