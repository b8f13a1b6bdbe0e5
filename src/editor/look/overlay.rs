//! Parameters of the data overlay (issue #5, View section): which per-node quantity is drawn over
//! the terrain, how its values map to colours, and the brush ring. The colour ramps, masks and
//! legends are built in [`crate::editor::overlay`]; `crate::app::overlay` uploads them.

use serde::{Deserialize, Serialize};

crate::param_enum! {
    /// Which quantity the overlay shows.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum OverlayKind {
        /// No overlay.
        #[default]
        None,
        /// Flow heat map (seed 000): particles crossing each node (droplets, snowball) or drainage
        /// area (stream power), log-scaled by default.
        Flow,
        /// Water depth of the pipe model, metres.
        WaterDepth,
        /// Water speed of the pipe model, metres per second.
        WaterSpeed,
        /// Erosion/deposition of the last run: eroded red, deposited blue, symmetric range.
        Erosion,
        /// River mask (flow above a level) and lakes (standing water or filled depressions).
        RiversLakes,
        /// The hardness (erodibility) map of the Erosion section: dark = hard rock.
        Hardness,
    }
}

crate::param_enum! {
    /// Where the lake mask comes from.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum LakeSource {
        /// Standing water of the pipe model when there is some, else the terrain's depressions.
        #[default]
        Auto,
        /// Standing water of the pipe model (deep, slow water).
        Water,
        /// Depressions of the terrain filled to their spill points (priority flood).
        Depressions,
    }
}

crate::params! {
    /// Parameters of the data overlay.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    pub struct OverlayParams {
        /// What to draw: None, Flow, WaterDepth, WaterSpeed, Erosion, RiversLakes or Hardness.
        pub kind: OverlayKind = OverlayKind::None;
        /// How strongly the overlay covers the terrain (0 = hidden).
        pub opacity: f32 = 0.85, range [0.0, 1.0];
        /// Fit the colour range to the data (the 99th percentile, so a few outliers do not wash the map
        /// out); off: use `min` and `max`.
        pub auto_range: bool = true;
        /// Manual range: the value drawn with the ramp's first colour, in the overlay's unit (erosion:
        /// metres, symmetric about 0 using the larger of |min| and |max|).
        pub min: f32 = 0.0, range [-1e9, 1e9];
        /// Manual range: the value drawn with the ramp's last colour, in the overlay's unit.
        pub max: f32 = 1.0, range [-1e9, 1e9];
        /// Flow on a log scale, `t = ln(1 + f) / ln(1 + f_max)`, so tributaries show beside the trunk
        /// river.
        pub log_flow: bool = true;
        /// Rivers: a node is river where its log-scaled flow `ln(1 + f) / ln(1 + f_max)` is at least this.
        /// Dimensionless.
        pub river_level: f32 = 0.55, range [0.0, 1.0];
        /// Lakes: standing water of the pipe model (Water), filled depressions (Depressions), or the first
        /// that has data (Auto).
        pub lake_source: LakeSource = LakeSource::Auto;
        /// Lakes: least water depth (standing water) or fill depth (depressions) that counts as lake,
        /// metres.
        pub lake_min_depth: f32 = 0.3, range [0.0, 1000.0];
        /// Lakes from the pipe model: water slower than this is standing, metres per second.
        pub lake_max_speed: f32 = 0.5, range [0.0, 1000.0];
        /// Show the legend (title, colour bar with range and unit, or swatches) at the bottom right of the
        /// 3-D view.
        pub legend: bool = true;
        /// Draw the brush ring under the cursor.
        pub brush_ring: bool = true;
    }
}

impl OverlayParams {
    /// Checks every field (and nested section) against its declared range. The renderer does not
    /// need it (it draws any value); presets and tests do.
    pub fn validate(&self) -> Result<(), crate::core::params::BadParam> {
        self.check_ranges()
    }
}
