//! Placeholder filled by issue #5's overlay work.

use serde::{Deserialize, Serialize};

/// Parameters of the overlay look.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OverlayParams {}
