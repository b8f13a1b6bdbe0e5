//! Parameters of the data overlay (issue #5, View section): which per-node quantity is drawn over
//! the terrain, how its values map to colours, and the brush ring. The colour ramps, masks and
//! legends are built in [`crate::editor::overlay`]; `crate::app::overlay` uploads them.

use serde::{Deserialize, Serialize};

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

/// Parameters of the data overlay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OverlayParams {
    /// What to draw: None, Flow, WaterDepth, WaterSpeed, Erosion, RiversLakes or Hardness.
    /// Default `None`.
    pub kind: OverlayKind,
    /// How strongly the overlay covers the terrain (0 = hidden). Range `0 ..= 1`, default `0.85`.
    pub opacity: f32,
    /// Fit the colour range to the data (the 99th percentile, so a few outliers do not wash the
    /// map out); off: use `min` and `max`. Default `true`.
    pub auto_range: bool,
    /// Manual range: the value drawn with the ramp's first colour, in the overlay's unit
    /// (erosion: metres, symmetric about 0 using the larger of |min| and |max|). Range `±1e9`,
    /// default `0`.
    pub min: f32,
    /// Manual range: the value drawn with the ramp's last colour, in the overlay's unit. Range
    /// `±1e9`, default `1`.
    pub max: f32,
    /// Flow on a log scale, `t = ln(1 + f) / ln(1 + f_max)`, so tributaries show beside the trunk
    /// river. Default `true`.
    pub log_flow: bool,
    /// Rivers: a node is river where its log-scaled flow `ln(1 + f) / ln(1 + f_max)` is at least
    /// this. Dimensionless, range `0 ..= 1`, default `0.55`.
    pub river_level: f32,
    /// Lakes: standing water of the pipe model (Water), filled depressions (Depressions), or the
    /// first that has data (Auto). Default `Auto`.
    pub lake_source: LakeSource,
    /// Lakes: least water depth (standing water) or fill depth (depressions) that counts as lake,
    /// metres. Range `0 ..= 1000`, default `0.3`.
    pub lake_min_depth: f32,
    /// Lakes from the pipe model: water slower than this is standing, metres per second. Range
    /// `0 ..= 1000`, default `0.5`.
    pub lake_max_speed: f32,
    /// Show the legend (title, colour bar with range and unit, or swatches) at the bottom right of
    /// the 3-D view. Default `true`.
    pub legend: bool,
    /// Draw the brush ring under the cursor. Default `true`.
    pub brush_ring: bool,
}

impl Default for OverlayParams {
    fn default() -> Self {
        Self {
            kind: OverlayKind::None,
            opacity: 0.85,
            auto_range: true,
            min: 0.0,
            max: 1.0,
            log_flow: true,
            river_level: 0.55,
            lake_source: LakeSource::Auto,
            lake_min_depth: 0.3,
            lake_max_speed: 0.5,
            legend: true,
            brush_ring: true,
        }
    }
}
