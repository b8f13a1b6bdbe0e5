//! egui pieces the panel's sections and the editor's windows share: the row that loads and saves
//! a parameter preset, and the hotspots a test clicks (where a named widget was last drawn, read
//! into [`super::state::UiHotspots`] by the panel).

use std::path::PathBuf;

use bevy_egui::egui;

use crate::core::io::tiles::EngineSpec;

/// Records where a widget was drawn, for [`UiHotspots`] (read at the panel's next frame; a name
/// must be in [`HOTSPOTS`] or an [`engine_hotspot`]).
pub fn hotspot(ui: &egui::Ui, name: &str, r: &egui::Response) {
    let id = egui::Id::new(("talus_hotspot", name.to_owned()));
    ui.ctx().data_mut(|d| d.insert_temp(id, Some(r.rect)));
}

/// The widgets [`UiHotspots`] reports: the panel's, the Build… dialog's
/// ([`super::build_dialog`], its Loupe section's [`super::loupe`]), besides its engine choices
/// ([`engine_hotspot`]), and the cell-size question's ([`super::files`]).
pub const HOTSPOTS: [&str; 11] = [
    "Generate",
    "Simulate",
    "Cancel",
    "Build…",
    "Build: tile set",
    "Build: Build",
    "Loupe: Pick a spot",
    "Cell size: metres",
    "Cell size: lowest",
    "Cell size: highest",
    "Cell size: Open",
];

/// The hotspot name of the Build… dialog's choice of engine `e`: "Build: Unreal".
pub fn engine_hotspot(e: &EngineSpec) -> String {
    format!("Build: {}", e.label)
}

/// The folder of shipped presets, the first that exists of: `assets/presets` in the working
/// directory (a checkout); `assets/presets` beside the binary (the release tarball, unpacked);
/// `share/talus/presets` beside the binary's `bin/` (the .deb's `/usr`, the tarball's
/// `install.sh` in `~/.local`); the source tree the binary was built from.
pub fn presets_dir() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/presets");
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(PathBuf::from));
    let mut candidates = vec![PathBuf::from("assets/presets")];
    if let Some(d) = exe_dir {
        candidates.push(d.join("assets/presets"));
        candidates.push(d.join("../share/talus/presets"));
    }
    candidates.into_iter().find(|c| c.is_dir()).unwrap_or(built)
}

/// A row to load a shipped preset of kind `sub` (`generate`, `erode`, `brush`) whose file name
/// contains `name_has` (erosion presets are named after their model) into `value`, or save
/// `value` as a preset to the path typed in the panel.
pub fn preset_row<T: serde::Serialize + serde::de::DeserializeOwned>(
    ui: &mut egui::Ui,
    sub: &str,
    name_has: &str,
    value: &mut T,
    path_text: &mut String,
    msg: &mut Option<(String, bool)>,
) -> bool {
    let mut loaded = false;
    ui.horizontal(|ui| {
        let dir = presets_dir().join(sub);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "ron") && p.to_string_lossy().contains(name_has))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        egui::ComboBox::from_id_salt(format!("presets_{sub}")).selected_text("Load preset").show_ui(ui, |ui| {
            for f in &files {
                let name = f.file_stem().map(|n| n.to_string_lossy().replace('_', " ")).unwrap_or_default();
                if ui.selectable_label(false, name).clicked() {
                    match crate::core::io::presets::load::<T>(f) {
                        Ok(v) => {
                            *value = v;
                            loaded = true;
                            *msg = Some((format!("Loaded {}", f.display()), false));
                        }
                        Err(e) => *msg = Some((format!("{e}"), true)),
                    }
                }
            }
            if files.is_empty() {
                ui.label(format!("no presets in {}", dir.display()));
            }
        });
        ui.add(egui::TextEdit::singleline(path_text).desired_width(110.0))
            .on_hover_text("Where Save preset writes (RON)");
        if ui.button("Save preset").clicked() {
            let p = PathBuf::from(path_text.trim());
            *msg = Some(match crate::core::io::presets::save(&p, value) {
                Ok(()) => (format!("Saved preset {}", p.display()), false),
                Err(e) => (format!("{e}"), true),
            });
        }
    });
    loaded
}

/// The message of the last preset loaded or saved under [`preset_row`]: grey, or red for an error.
pub fn preset_message(ui: &mut egui::Ui, msg: &Option<(String, bool)>) {
    if let Some((m, err)) = msg {
        let c = if *err { egui::Color32::LIGHT_RED } else { ui.visuals().weak_text_color() };
        ui.colored_label(c, m);
    }
}
