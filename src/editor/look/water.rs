//! Placeholder filled by issue #5's water work.

use serde::{Deserialize, Serialize};

/// Parameters of the water look.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WaterParams {}
