//! What outlives a session: user settings (last parameters, recent files, window size) and the
//! autosave that lets a crashed session recover its work.
//!
//! Locations (Linux conventions; every path can be redirected with `TALUS_CONFIG_DIR`, which the
//! tests and the CI script use so they never touch a user's files):
//!
//! | file                   | folder                                              |
//! |------------------------|-----------------------------------------------------|
//! | `settings.ron`         | `$TALUS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/talus`, else `~/.config/talus` |
//! | `autosave.talus` + `autosave.ron` | the same folder (the whole project: layers, look, camera) |
//!
//! Every write is atomic (temporary file + rename), so a crash while saving leaves the previous
//! file. A settings file that does not parse is reported and replaced by defaults (the broken file
//! is kept as `settings.ron.broken` so nothing is lost). The autosave is written when the document
//! has unsaved changes that are newer than the last autosave, every [`AUTOSAVE_EVERY`]; it is
//! removed when the work is saved or deliberately discarded, so its presence at start means the
//! last session ended with unsaved work.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::core::brush::BrushParams;
use crate::core::erosion::{Boundary, ModelParams};
use crate::core::generate::GenerateParams;
use crate::core::io::atomic::write_atomic;
use crate::editor::layers::LayerStack;
use crate::editor::project::{self, Project, ProjectView};

/// How often unsaved work is written to the autosave.
pub const AUTOSAVE_EVERY: Duration = Duration::from_secs(30);
/// Recent files remembered.
pub const MAX_RECENT: usize = 10;

/// The folder settings and the autosave live in.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TALUS_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("talus"));
    }
    std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".config").join("talus"))
}

/// User settings, restored at start and written at exit (and when recent files change).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Window size in logical pixels.
    pub window: [f32; 2],
    /// Most recent first.
    pub recent: Vec<PathBuf>,
    /// Generator parameters last used.
    pub generator: Option<GenerateParams>,
    /// Erosion model and parameters last used, one per model.
    pub models: Vec<ModelParams>,
    /// Index in `models` of the model last selected.
    pub model: usize,
    /// Edge conditions last used.
    pub boundary: Boundary,
    /// Where simulations run (CPU, GPU, or a hardware GPU when present). Default `Auto`.
    pub backend: crate::backend::Backend,
    /// Brush last used.
    pub brush: Option<BrushParams>,
    /// Regenerate as generator sliders move.
    pub live_generate: bool,
    /// How the terrain is drawn (material, water, sky, overlay).
    pub look: crate::editor::look::LookParams,
    /// Hardness (erodibility) map settings last used (simulation input).
    pub hardness: crate::core::erosion::hardness::HardnessParams,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            window: [1280.0, 720.0],
            recent: Vec::new(),
            generator: None,
            models: Vec::new(),
            model: 0,
            boundary: Boundary::default(),
            backend: crate::backend::Backend::Auto,
            brush: None,
            live_generate: true,
            look: Default::default(),
            hardness: Default::default(),
        }
    }
}

impl Settings {
    /// Path of the settings file.
    pub fn path() -> Option<PathBuf> {
        config_dir().map(|d| d.join("settings.ron"))
    }

    /// Loads the settings; a missing file gives defaults, a broken one defaults plus a message
    /// (the broken file is moved aside, not lost).
    pub fn load() -> (Self, Option<String>) {
        let Some(path) = Self::path() else { return (Self::default(), None) };
        Self::load_from(&path)
    }

    /// [`Self::load`] from an explicit path.
    pub fn load_from(path: &Path) -> (Self, Option<String>) {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Self::default(), None),
            Err(e) => return (Self::default(), Some(format!("cannot read {}: {e}", path.display()))),
        };
        match ron::from_str::<Settings>(&text) {
            Ok(mut s) => {
                s.sanitise();
                (s, None)
            }
            Err(e) => {
                let aside = path.with_extension("ron.broken");
                let _ = std::fs::rename(path, &aside);
                (
                    Self::default(),
                    Some(format!(
                        "settings {} did not parse ({e}); kept as {} and started from defaults",
                        path.display(),
                        aside.display()
                    )),
                )
            }
        }
    }

    /// Writes the settings atomically.
    pub fn save(&self) -> Result<(), String> {
        let path = Self::path().ok_or("no folder for settings (HOME is not set)")?;
        self.save_to(&path)
    }

    /// [`Self::save`] to an explicit path.
    pub fn save_to(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default()).map_err(|e| e.to_string())?;
        write_atomic(path, |w| w.write_all(text.as_bytes()))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Puts `path` first in the recent list (no duplicates, at most [`MAX_RECENT`]).
    pub fn add_recent(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_path_buf());
        self.recent.truncate(MAX_RECENT);
    }

    /// Keeps values a hand-edited file could break inside sane bounds.
    fn sanitise(&mut self) {
        for v in &mut self.window {
            if !v.is_finite() {
                *v = 1280.0;
            }
            *v = v.clamp(320.0, 16384.0);
        }
        self.recent.truncate(MAX_RECENT);
        if self.model >= self.models.len() {
            self.model = 0;
        }
        if self.hardness.validate().is_err() {
            self.hardness = Default::default();
        }
        if let Some(g) = &mut self.generator {
            // Version-1 values (grid units) are read with the generator's own cell size.
            g.upgrade_units();
        }
    }
}

/// What is known about an autosave besides its heights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutosaveInfo {
    /// The file the work belonged to, if it had one.
    pub original: Option<PathBuf>,
    /// When it was written, seconds since the Unix epoch.
    pub written_at: u64,
}

/// The autosave slot in `dir`.
#[derive(Clone, Debug)]
pub struct Autosave {
    dir: PathBuf,
}

impl Autosave {
    /// The slot in [`config_dir`], if there is one.
    pub fn standard() -> Option<Self> {
        config_dir().map(|dir| Self { dir })
    }
    /// A slot in an explicit folder.
    pub fn in_dir(dir: &Path) -> Self {
        Self { dir: dir.to_path_buf() }
    }
    fn map_path(&self) -> PathBuf {
        self.dir.join("autosave.talus")
    }
    fn info_path(&self) -> PathBuf {
        self.dir.join("autosave.ron")
    }

    /// Writes the project and its info (project first, so an info file always has its project).
    pub fn write(&self, stack: &LayerStack, view: &ProjectView, original: Option<&Path>) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        project::save(&self.map_path(), stack, view).map_err(|e| format!("autosave: {e}"))?;
        let written_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let info = AutosaveInfo { original: original.map(Path::to_path_buf), written_at };
        let text = ron::to_string(&info).map_err(|e| e.to_string())?;
        write_atomic(&self.info_path(), |w| w.write_all(text.as_bytes())).map_err(|e| format!("autosave: {e}"))
    }

    /// The pending autosave, if one is there: its info, or why it cannot be read.
    pub fn pending(&self) -> Option<Result<AutosaveInfo, String>> {
        let text = match std::fs::read_to_string(self.info_path()) {
            Ok(t) => t,
            Err(_) => return self.map_path().exists().then_some(Ok(AutosaveInfo { original: None, written_at: 0 })),
        };
        Some(ron::from_str(&text).map_err(|e| format!("autosave info does not parse: {e}")))
    }

    /// Reads the autosaved project (the project reader's checks apply).
    pub fn read(&self) -> Result<Project, String> {
        project::load(&self.map_path()).map_err(|e| format!("autosave: {e}"))
    }

    /// Removes the autosave (work saved or deliberately discarded).
    pub fn clear(&self) {
        let _ = std::fs::remove_file(self.info_path());
        let _ = std::fs::remove_file(self.map_path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_recent_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("settings.ron");
        let mut s = Settings::default();
        for i in 0..15 {
            s.add_recent(Path::new(&format!("/maps/{i}.bhef")));
        }
        s.add_recent(Path::new("/maps/3.bhef"));
        assert_eq!(s.recent.len(), MAX_RECENT);
        assert_eq!(s.recent[0], Path::new("/maps/3.bhef"));
        assert_eq!(s.recent.iter().filter(|p| p.ends_with("3.bhef")).count(), 1);
        s.models = vec![ModelParams::Droplet(Default::default()), ModelParams::Pipe(Default::default())];
        s.model = 1;
        s.generator = Some(GenerateParams::default());
        s.save_to(&path).unwrap();
        let (back, msg) = Settings::load_from(&path);
        assert!(msg.is_none());
        assert_eq!(back, s);
    }

    #[test]
    fn a_version_1_generator_is_read_in_world_units() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        std::fs::write(&path, "(generator: Some((cell_size: 2.0, island: Some((waterside: 30)))))").unwrap();
        let (s, msg) = Settings::load_from(&path);
        assert!(msg.is_none(), "{msg:?}");
        let g = s.generator.unwrap();
        assert!(!g.has_legacy_units());
        assert_eq!(g.island.unwrap().waterside_m, 60.0);
    }

    #[test]
    fn a_broken_settings_file_gives_defaults_and_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        std::fs::write(&path, "(window: [12, oops").unwrap();
        let (s, msg) = Settings::load_from(&path);
        assert_eq!(s, Settings::default());
        assert!(msg.unwrap().contains("did not parse"));
        assert!(dir.path().join("settings.ron.broken").exists());
        let (s, msg) = Settings::load_from(&dir.path().join("missing.ron"));
        assert!(msg.is_none() && s == Settings::default());
    }

    #[test]
    fn absurd_values_are_sanitised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        std::fs::write(&path, "(window: (1e30, -5.0), model: 7)").unwrap();
        let (s, msg) = Settings::load_from(&path);
        assert!(msg.is_none(), "{msg:?}");
        assert_eq!(s.window, [16384.0, 320.0]);
        assert_eq!(s.model, 0);
    }

    #[test]
    fn autosave_write_pending_read_clear() {
        let dir = tempfile::tempdir().unwrap();
        let slot = Autosave::in_dir(dir.path());
        assert!(slot.pending().is_none());
        let map = crate::core::Heightmap::from_fn(17, 9, 3.0, |x, y| (x * 10 + y) as f32).unwrap();
        let stack = LayerStack::new(&map, crate::editor::layers::BaseSource::Heights);
        slot.write(&stack, &ProjectView::default(), Some(Path::new("/maps/island.bhef"))).unwrap();
        let info = slot.pending().unwrap().unwrap();
        assert_eq!(info.original.as_deref(), Some(Path::new("/maps/island.bhef")));
        assert!(info.written_at > 0);
        assert_eq!(slot.read().unwrap().stack.compose().data, map.data);
        slot.clear();
        assert!(slot.pending().is_none());
    }
}
