//! The egui side panel: a Generator section and a status line.
//!
//! The panel edits a [`GeneratorUi`] (kind, seed, size); "Generate" turns it into a
//! [`GenerateParams`] (the demo island's stages with the chosen base) and runs
//! [`generate`] synchronously — fine up to 513², where it takes well under a second. Errors are
//! shown in the panel, never panicked on.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::EditorTerrain;
use crate::core::generate::{self, Base, GenerateParams};

/// Draws the side panel and applies what it asks for.
pub struct UiPlugin;

impl Plugin for UiPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<GeneratorUi>().add_systems(EguiPrimaryContextPass, draw_side_panel);
    }
}

/// Base generators offered in the Generator section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenKind {
    Fbm,
    DiamondSquare,
    VoronoiIsland,
    Hills,
}

impl GenKind {
    pub const ALL: [GenKind; 4] = [GenKind::Fbm, GenKind::DiamondSquare, GenKind::VoronoiIsland, GenKind::Hills];

    /// Label shown in the combo box.
    pub fn label(self) -> &'static str {
        match self {
            GenKind::Fbm => "fBm noise",
            GenKind::DiamondSquare => "Diamond-square",
            GenKind::VoronoiIsland => "Voronoi island",
            GenKind::Hills => "Hills",
        }
    }

    /// The base generator with its default settings.
    pub fn base(self) -> Base {
        match self {
            GenKind::Fbm => Base::Fbm(generate::landscape_fbm()),
            GenKind::DiamondSquare => Base::DiamondSquare(Default::default()),
            GenKind::VoronoiIsland => Base::VoronoiIsland(Default::default()),
            GenKind::Hills => Base::Hills(Default::default()),
        }
    }
}

/// Map sides offered (nodes); 2^n + 1 suits diamond-square.
pub const SIZES: [usize; 4] = [129, 257, 513, 1025];

/// What the Generator section is editing.
#[derive(Resource, Clone, Debug)]
pub struct GeneratorUi {
    pub kind: GenKind,
    /// The seed as typed (a whole number, or `random`).
    pub seed_text: String,
    pub size: usize,
    /// The last generation error, shown under the button.
    pub error: Option<String>,
}

impl Default for GeneratorUi {
    fn default() -> Self {
        Self::from_params(&crate::cli::demo_params(257, 1))
    }
}

impl GeneratorUi {
    /// Mirrors the parameters the current map was made with.
    pub fn from_params(p: &GenerateParams) -> Self {
        let kind = match p.base {
            Base::DiamondSquare(_) => GenKind::DiamondSquare,
            Base::VoronoiIsland(_) => GenKind::VoronoiIsland,
            Base::Hills(_) => GenKind::Hills,
            _ => GenKind::Fbm,
        };
        Self { kind, seed_text: p.seed.to_string(), size: p.width, error: None }
    }

    /// The parameters to generate with, or why the seed is not usable.
    pub fn params(&self) -> Result<GenerateParams, String> {
        let seed = crate::cli::parse_seed(&self.seed_text).map_err(|e| e.0)?;
        Ok(GenerateParams { base: self.kind.base(), ..crate::cli::demo_params(self.size, seed) })
    }
}

fn draw_side_panel(mut contexts: EguiContexts, mut terrain: ResMut<EditorTerrain>, mut gen_ui: ResMut<GeneratorUi>) -> Result {
    let ctx = contexts.ctx_mut()?;
    let mut root = egui::Ui::new(
        ctx.clone(),
        "talus_root".into(),
        egui::UiBuilder::new().layer_id(egui::LayerId::background()).max_rect(ctx.viewport_rect()),
    );
    let mut generate_now = false;
    egui::Panel::left("talus_side_panel").resizable(true).default_size(240.0).show(&mut root, |ui| {
        ui.heading("Talus");
        ui.separator();
        egui::CollapsingHeader::new("Generator").default_open(true).show(ui, |ui| {
            egui::ComboBox::from_label("Kind").selected_text(gen_ui.kind.label()).show_ui(ui, |ui| {
                for k in GenKind::ALL {
                    ui.selectable_value(&mut gen_ui.kind, k, k.label());
                }
            });
            ui.horizontal(|ui| {
                ui.label("Seed");
                ui.add(egui::TextEdit::singleline(&mut gen_ui.seed_text).desired_width(120.0));
                if ui.button("Randomise").clicked() {
                    gen_ui.seed_text = crate::core::rng::fresh_seed().to_string();
                }
            });
            egui::ComboBox::from_label("Size").selected_text(format!("{0}×{0}", gen_ui.size)).show_ui(ui, |ui| {
                for s in SIZES {
                    ui.selectable_value(&mut gen_ui.size, s, format!("{s}×{s}"));
                }
            });
            if ui.button("Generate").clicked() {
                generate_now = true;
            }
            if let Some(err) = &gen_ui.error {
                ui.colored_label(egui::Color32::LIGHT_RED, err);
            }
        });
        ui.with_layout(egui::Layout::bottom_up(egui::Align::LEFT), |ui| {
            let m = &terrain.map;
            let s = &terrain.stats;
            let saved = if terrain.unsaved { " • unsaved" } else { "" };
            ui.label(format!("{}×{} nodes, {} m cells, heights {:.1} … {:.1} m{saved}", m.width, m.height, m.cell_size, s.min, s.max));
            ui.separator();
        });
    });
    if generate_now {
        match gen_ui.params().and_then(|p| generate::generate(&p).map_err(|e| e.to_string())) {
            Ok(map) => {
                terrain.replace(map);
                gen_ui.error = None;
            }
            Err(e) => gen_ui.error = Some(e),
        }
    }
    Ok(())
}
