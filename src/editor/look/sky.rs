//! Placeholder filled by issue #5's sky work.

use serde::{Deserialize, Serialize};

/// Parameters of the sky look.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkyParams {}
