//! Placeholder filled by issue #5's material work.

use serde::{Deserialize, Serialize};

/// Parameters of the material look.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MaterialParams {}
