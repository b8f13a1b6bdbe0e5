//! How the terrain is drawn (issue #5): the splatting material, the water, the sun and sky, and
//! the data overlays. Plain parameter structs, edited by the panel (through [`crate::editor::schema`]),
//! saved in the settings and in presets (`assets/presets/look/`), and set by scripts
//! ([`crate::editor::script::Action::Look`]). The Bevy side (`crate::app::material`, `water`, `sky`,
//! `overlay`) reads them every frame they change.

use serde::{Deserialize, Serialize};

pub mod material;
pub mod overlay;
pub mod sky;
pub mod water;

pub use material::MaterialParams;
pub use overlay::OverlayParams;
pub use sky::SkyParams;
pub use water::WaterParams;

crate::params! {
    /// Everything about how the terrain is drawn. Missing fields take their defaults, so a preset or
    /// script may give only what it changes.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct LookParams {
        /// Terrain layers (sand, grass, dirt, rock, snow, sediment) and how they blend.
        pub material: MaterialParams = Default::default();
        /// The sea plane, its waves and foam, and the pipe model's water surface.
        pub water: WaterParams = Default::default();
        /// Sun, shadows, atmosphere, light shafts, anti-aliasing.
        pub sky: SkyParams = Default::default();
        /// The data overlay drawn over the terrain (flow, water, erosion, masks, hardness).
        pub overlay: OverlayParams = Default::default();
    }
}
