//! Parameter presets as RON files: generator ([`crate::core::generate::GenerateParams`]),
//! erosion (each model's parameters or [`crate::core::erosion::ModelParams`]) and brush
//! ([`crate::core::brush::BrushParams`]) settings. Every parameter struct is `#[serde(default)]`,
//! so a preset may name only the fields it changes. Saving is atomic and pretty-printed.
//!
//! The repository ships a few in `assets/presets/` (`generate/alpine.ron`,
//! `desert_canyons.ron`, `archipelago.ron`, `rolling_hills.ron`; `erode/…`; `brush/…`) that
//! `talus generate --preset` and `talus erode --params` accept (`tests/presets.rs`).
//!
//! An erosion preset holds either a whole [`ModelParams`] or one model's own parameter struct;
//! [`model_from_ron`] reads both, the second through the model registry
//! ([`crate::core::erosion::registry`]). The editor lists the shipped presets of a model by the
//! registry's `key` contained in their file names (`erode/alpine_droplets.ron` for `droplet`).

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use thiserror::Error;

use super::atomic::write_atomic;
use crate::core::erosion::{MapSize, ModelEntry, ModelParams};

/// Why a preset could not be read or written.
#[derive(Debug, Error)]
pub enum PresetError {
    /// The file could not be read or written.
    #[error("could not {op} preset {path}: {source}")]
    Io {
        /// `"read"` or `"write"`.
        op: &'static str,
        /// The preset file.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not RON of the preset's type, or the value could not be written as RON.
    #[error("preset {path}: {msg}")]
    Parse {
        /// The preset file.
        path: String,
        /// RON's message.
        msg: String,
    },
}

/// Reads a preset of type `T` from RON.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, PresetError> {
    let text = std::fs::read_to_string(path).map_err(|source| PresetError::Io {
        op: "read",
        path: path.display().to_string(),
        source,
    })?;
    ron::from_str(&text).map_err(|e| PresetError::Parse { path: path.display().to_string(), msg: e.to_string() })
}

/// Reads generator parameters ([`GenerateParams`](crate::core::generate::GenerateParams)) from a
/// RON preset and converts any version-1 values (grid units) with the preset's own cell size
/// ([`GenerateParams::upgrade_units`](crate::core::generate::GenerateParams::upgrade_units)).
pub fn load_generate(path: &Path) -> Result<crate::core::generate::GenerateParams, PresetError> {
    let mut p: crate::core::generate::GenerateParams = load(path)?;
    p.upgrade_units();
    Ok(p)
}

/// Writes `value` as a pretty RON preset, atomically.
pub fn save<T: Serialize>(path: &Path, value: &T) -> Result<(), PresetError> {
    let text = ron::ser::to_string_pretty(value, ron::ser::PrettyConfig::default())
        .map_err(|e| PresetError::Parse { path: path.display().to_string(), msg: e.to_string() })?;
    write_atomic(path, |w| w.write_all(text.as_bytes())).map_err(|source| PresetError::Io {
        op: "write",
        path: path.display().to_string(),
        source,
    })
}

/// Reads erosion parameters from RON `text`: a whole [`ModelParams`] (whichever model it names),
/// or else `model`'s own parameter struct; the error is the latter's. Values of an older file in
/// grid units stay to convert ([`ModelParams::has_legacy`]); see [`model_from_ron_on`].
pub fn model_from_ron(text: &str, model: &ModelEntry) -> Result<ModelParams, ron::error::SpannedError> {
    if let Ok(mp) = ron::from_str::<ModelParams>(text) {
        return Ok(mp);
    }
    (model.params_from_ron)(text)
}

/// [`model_from_ron`] for a run on `map`: values of an older file in grid units (nodes, a
/// particle count per map) are taken as made for that map and converted to world units
/// ([`ModelParams::upgrade_units`]).
pub fn model_from_ron_on(
    text: &str,
    model: &ModelEntry,
    map: MapSize,
) -> Result<ModelParams, ron::error::SpannedError> {
    let mut p = model_from_ron(text, model)?;
    p.upgrade_units(map);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::BrushParams;
    use crate::core::generate::GenerateParams;

    #[test]
    fn presets_round_trip_and_bad_ones_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b.ron");
        let b = BrushParams { radius: 3.5, flatten_height: Some(-2.0), ..Default::default() };
        save(&p, &b).unwrap();
        assert_eq!(load::<BrushParams>(&p).unwrap(), b);
        let g = GenerateParams { seed: 99, ..Default::default() };
        save(&p, &g).unwrap();
        assert_eq!(load::<GenerateParams>(&p).unwrap(), g);
        std::fs::write(&p, "(radius: \"big\")").unwrap();
        assert!(matches!(load::<BrushParams>(&p), Err(PresetError::Parse { .. })));
        assert!(matches!(load::<BrushParams>(&d.path().join("none.ron")), Err(PresetError::Io { .. })));
    }

    #[test]
    fn erosion_presets_hold_a_model_or_its_own_struct() {
        use crate::core::erosion::registry::by_cli;
        use crate::core::erosion::thermal::ThermalParams;
        let thermal = by_cli("thermal").unwrap();
        let own = ThermalParams { iterations: 7, ..Default::default() };
        let text = ron::to_string(&own).unwrap();
        assert_eq!(model_from_ron(&text, thermal).unwrap(), ModelParams::Thermal(own.clone()));
        // A whole `ModelParams` names its model, whatever the one asked for.
        let whole = ron::to_string(&ModelParams::Thermal(own.clone())).unwrap();
        assert_eq!(model_from_ron(&whole, by_cli("pipe").unwrap()).unwrap(), ModelParams::Thermal(own));
        assert!(model_from_ron("(iterations: \"many\")", thermal).is_err());
        // Every shipped erosion preset reads as the model its file name says.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets/erode");
        for f in std::fs::read_dir(dir).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_stem().unwrap().to_string_lossy().to_string();
            let m = crate::core::erosion::MODELS.iter().find(|m| name.contains(m.key)).expect("named after a model");
            let p = model_from_ron(&std::fs::read_to_string(&f).unwrap(), m).unwrap();
            assert_eq!(p.entry().name, m.name, "{name}");
            assert!(!p.has_legacy(), "{name} is not in world units");
        }
    }

    #[test]
    fn an_older_preset_in_grid_units_is_converted_for_the_map_it_runs_on() {
        use crate::core::erosion::droplet::DropletParams;
        use crate::core::erosion::registry::by_cli;
        let droplet = by_cli("droplet").unwrap();
        // Version 1's alpine preset, made for the default island.
        let old = "(droplets: 200000, inertia: 0.05, radius: 3.0)";
        let island = MapSize::new(513, 513, 2.0);
        let p = model_from_ron_on(old, droplet, island).unwrap();
        let want =
            DropletParams { droplets_per_km2: 190_734.863_281_25, inertia: 0.05, radius_m: 6.0, ..Default::default() };
        assert_eq!(p, ModelParams::Droplet(want.clone()));
        assert_eq!(p.work(island), 200_000);
        // The shipped preset says the same in world units.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets/erode");
        let shipped = std::fs::read_to_string(dir.join("alpine_droplets.ron")).unwrap();
        assert_eq!(model_from_ron(&shipped, droplet).unwrap(), ModelParams::Droplet(want));
        // Read for a map of 1 m cells, the same nodes are half the metres.
        let ModelParams::Droplet(d) = model_from_ron_on(old, droplet, MapSize::new(513, 513, 1.0)).unwrap() else {
            panic!()
        };
        assert_eq!(d.radius_m, 3.0);
    }
}
