//! The data overlay (issue #5, View section): fills [`OverlayTexture`] — one RGBA texel per node,
//! which the terrain material blends over the lit terrain — and draws the overlay's legend at the
//! bottom right of the 3-D view.
//!
//! The image and legend are built by [`crate::editor::overlay::build`] from the heights and the
//! newest [`SimFields`] (the Hardness overlay previews the Erosion section's hardness settings on
//! the current map, i.e. what the next run will use). The overlay is rebuilt when its parameters
//! change (at once), or when the map or the simulation's fields change (at most
//! [`REBUILDS_PER_S`] times a second, so a streaming run does not spend its frames here).
//! Opacity alone only changes [`OverlayTexture::opacity`].

use bevy::asset::RenderAssetUsages;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::commands::EditorCommand;
use super::fields::{OverlayTexture, SimFields};
use super::param_editor::edit_params;
use super::state::PanelState;
use super::state::{EditorTerrain, Look};
use crate::core::erosion::hardness::{HardnessParams, hardness_map};
use crate::editor::look::overlay::{OverlayKind, OverlayParams};
use crate::editor::overlay::{Legend, LegendBody, Overlay, OverlayData, build};

/// Most rebuilds a second caused by data changes (a running simulation, painting).
pub const REBUILDS_PER_S: f64 = 4.0;

/// Keeps the overlay texture and legend in step with the look, the map and the simulation.
pub struct OverlayPlugin;

impl Plugin for OverlayPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<OverlayState>()
            .add_systems(Update, (note_flow_unit, rebuild_overlay).chain())
            .add_systems(EguiPrimaryContextPass, draw_legend);
    }
}

/// What the overlay texture shows now.
#[derive(Resource, Default)]
pub struct OverlayState {
    /// The inputs of the last build.
    built: Option<BuildKey>,
    /// When the last build ran (seconds since start).
    built_at: f64,
    /// The legend of the overlay shown (None when the overlay is off).
    pub legend: Option<Legend>,
    /// True when the texture holds the current overlay (false: hidden, nothing to draw).
    has_image: bool,
    /// The image was replaced last frame: mark [`OverlayTexture`] changed now.
    touch_next_frame: bool,
    /// Unit of the flow field, from the model of the last Simulate.
    flow_unit: &'static str,
}

/// Everything a build depends on (opacity, legend and brush ring excluded).
#[derive(Clone, Debug, PartialEq)]
struct BuildKey {
    params: OverlayParams,
    doc_revision: u64,
    fields_revision: u64,
    size: (usize, usize),
    hardness: Option<HardnessParams>,
}

impl BuildKey {
    /// True when only the data moved on (map or fields), not the user's choices.
    fn same_choices(&self, o: &BuildKey) -> bool {
        self.params == o.params && self.hardness == o.hardness && self.size == o.size
    }
}

/// The overlay parameters a build depends on.
fn build_params(p: &OverlayParams) -> OverlayParams {
    OverlayParams { opacity: 0.0, legend: true, brush_ring: true, ..p.clone() }
}

fn note_flow_unit(mut cmds: MessageReader<EditorCommand>, mut state: ResMut<OverlayState>) {
    for c in cmds.read() {
        if let EditorCommand::Simulate { model, .. } = c {
            state.flow_unit = model.entry().flow_unit;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn rebuild_overlay(
    look: Res<Look>,
    terrain: Res<EditorTerrain>,
    fields: Res<SimFields>,
    panel: Option<Res<PanelState>>,
    time: Res<Time<Real>>,
    mut state: ResMut<OverlayState>,
    tex: Option<ResMut<OverlayTexture>>,
    mut images: ResMut<Assets<Image>>,
) {
    let Some(mut tex) = tex else { return };
    // The material re-binds the texture when the resource reports a change. Bevy prepares
    // materials and images in no fixed order within a frame, so a material re-bound in the frame
    // the image was replaced may keep the old texture: report the change one frame later.
    if state.touch_next_frame {
        state.touch_next_frame = false;
        tex.set_changed();
    }
    let default_hardness = HardnessParams::default();
    let hardness = panel.as_deref().map_or(&default_hardness, |p| &p.hardness);
    let p = &look.0.overlay;
    let map = terrain.map();
    let key = BuildKey {
        params: build_params(p),
        doc_revision: terrain.doc.revision(),
        fields_revision: fields.revision,
        size: (map.width, map.height),
        hardness: (p.kind == OverlayKind::Hardness).then(|| hardness.clone()),
    };
    let now = time.elapsed_secs_f64();
    let stale = state.built.as_ref() != Some(&key);
    if stale {
        let throttled =
            state.built.as_ref().is_some_and(|b| b.same_choices(&key)) && now - state.built_at < 1.0 / REBUILDS_PER_S;
        if !throttled {
            let (overlay, shown) = build_now(p, map, &fields, hardness, state.flow_unit);
            state.legend = overlay.legend;
            state.has_image = shown;
            if let Some(img) = overlay.image {
                let size = Extent3d { width: img.width as u32, height: img.height as u32, depth_or_array_layers: 1 };
                let image = Image::new(
                    size,
                    TextureDimension::D2,
                    img.rgba,
                    TextureFormat::Rgba8UnormSrgb,
                    RenderAssetUsages::default(),
                );
                match images.insert(&tex.image, image) {
                    Ok(()) => state.touch_next_frame = true,
                    Err(e) => warn!("overlay: cannot replace the overlay image: {e}"),
                }
            }
            state.built = Some(key);
            state.built_at = now;
        }
    }
    let opacity = if p.kind != OverlayKind::None && state.has_image && p.opacity.is_finite() {
        p.opacity.clamp(0.0, 1.0)
    } else {
        0.0
    };
    if tex.opacity != opacity {
        tex.opacity = opacity;
    }
}

/// Builds the overlay from the current data; the bool is true when it has an image.
fn build_now(
    p: &OverlayParams,
    map: &crate::core::Heightmap,
    fields: &SimFields,
    hardness: &HardnessParams,
    flow_unit: &'static str,
) -> (Overlay, bool) {
    let fits = fields.fits(map.width, map.height);
    fn pick(v: &Option<super::fields::Field>, fits: bool) -> Option<&[f32]> {
        v.as_deref().map(Vec::as_slice).filter(|_| fits)
    }
    let mut data = OverlayData {
        map,
        water: pick(&fields.water, fits),
        velocity: fields.velocity.as_deref().filter(|_| fits),
        flow: pick(&fields.flow, fits),
        flow_unit: if flow_unit.is_empty() { "particles" } else { flow_unit },
        eroded: pick(&fields.eroded, fits),
        deposited: pick(&fields.deposited, fits),
        hardness: None,
    };
    let hard_map;
    let mut hard_error = None;
    if p.kind == OverlayKind::Hardness {
        match hardness_map(map, hardness) {
            Ok(h) => {
                hard_map = h;
                data.hardness = Some(&hard_map);
            }
            Err(e) => hard_error = Some(format!("The hardness settings are not valid: {e}")),
        }
    }
    let mut overlay = build(p, &data);
    if let (Some(msg), Some(l)) = (hard_error, overlay.legend.as_mut()) {
        l.note = Some(msg);
    }
    let shown = overlay.image.is_some();
    (overlay, shown)
}

/// Overlay names for the View section, in menu order.
pub const OVERLAY_NAMES: [(OverlayKind, &str); 7] = [
    (OverlayKind::None, "None"),
    (OverlayKind::Flow, "Flow heat map"),
    (OverlayKind::WaterDepth, "Water depth"),
    (OverlayKind::WaterSpeed, "Water speed"),
    (OverlayKind::Erosion, "Erosion / deposition"),
    (OverlayKind::RiversLakes, "Rivers and lakes"),
    (OverlayKind::Hardness, "Hardness"),
];

/// The View section: which overlay, its opacity, legend and brush ring, and every overlay
/// parameter. Writes the look only when something changed (other plugins react to the change).
pub fn view_section(ui: &mut egui::Ui, look: &mut ResMut<Look>) {
    let mut p = look.0.overlay.clone();
    let mut error = None;
    egui::CollapsingHeader::new("View").default_open(true).show(ui, |ui| {
        let name = OVERLAY_NAMES.iter().find(|(k, _)| *k == p.kind).map_or("?", |(_, n)| n);
        egui::ComboBox::from_label("Overlay").selected_text(name).show_ui(ui, |ui| {
            for (k, n) in OVERLAY_NAMES {
                ui.selectable_value(&mut p.kind, k, n);
            }
        });
        ui.add(egui::Slider::new(&mut p.opacity, 0.0..=1.0).text("opacity"));
        ui.horizontal(|ui| {
            ui.checkbox(&mut p.legend, "Legend");
            ui.checkbox(&mut p.brush_ring, "Brush ring");
        });
        ui.collapsing("Overlay settings", |ui| {
            if let Err(e) = edit_params(ui, "overlay", "OverlayParams", &mut p) {
                error = Some(e);
            }
            if ui.small_button("Reset overlay settings").clicked() {
                p = OverlayParams { kind: p.kind, ..Default::default() };
            }
        });
        if let Some(e) = &error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
    });
    if p != look.0.overlay {
        look.0.overlay = p;
    }
}

/// The Erosion section's Hardness editor: the erodibility map the next run uses.
pub fn hardness_editor(ui: &mut egui::Ui, panel: &mut PanelState) {
    ui.small("Erodibility per node (1 = normal, 0 = unerodible rock); View ▸ Hardness previews it.");
    let mut h = panel.hardness.clone();
    if super::widgets::preset_row(ui, "hardness", "", &mut h, &mut panel.preset_path, &mut panel.preset_msg) {
        panel.hardness = h.clone();
    }
    match edit_params(ui, "hardness", "HardnessParams", &mut h) {
        Ok(true) => match h.validate() {
            Ok(()) => panel.hardness = h,
            Err(e) => panel.model_error = Some(format!("Hardness: {e}")),
        },
        Ok(false) => {}
        Err(e) => panel.model_error = Some(e),
    }
}

/// The legend: an egui area at the bottom right of the 3-D view.
fn draw_legend(mut contexts: EguiContexts, look: Res<Look>, state: Res<OverlayState>) -> Result {
    let p = &look.0.overlay;
    if !p.legend || p.kind == OverlayKind::None {
        return Ok(());
    }
    let Some(legend) = &state.legend else { return Ok(()) };
    let ctx = contexts.ctx_mut()?;
    let text = egui::Color32::from_gray(235);
    let weak = egui::Color32::from_gray(185);
    egui::Area::new(egui::Id::new("talus_overlay_legend"))
        .anchor(egui::Align2::RIGHT_BOTTOM, [-12.0, -12.0])
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::new().fill(egui::Color32::from_black_alpha(200)).corner_radius(6.0).inner_margin(10.0).show(
                ui,
                |ui| {
                    ui.set_max_width(250.0);
                    ui.label(egui::RichText::new(&legend.title).strong().color(text));
                    match &legend.body {
                        LegendBody::Ramp { ramp, labels, unit } => {
                            let (rect, _) = ui.allocate_exact_size(egui::vec2(230.0, 14.0), egui::Sense::hover());
                            let painter = ui.painter().clone();
                            const STEPS: usize = 64;
                            for i in 0..STEPS {
                                let t0 = i as f32 / STEPS as f32;
                                let t1 = (i + 1) as f32 / STEPS as f32;
                                let c = ramp.at((t0 + t1) * 0.5);
                                let r = egui::Rect::from_min_max(
                                    egui::pos2(rect.left() + t0 * rect.width(), rect.top()),
                                    egui::pos2(rect.left() + t1 * rect.width() + 0.5, rect.bottom()),
                                );
                                painter.rect_filled(r, 0.0, egui::Color32::from_rgb(c[0], c[1], c[2]));
                            }
                            let (lrect, _) = ui.allocate_exact_size(egui::vec2(230.0, 14.0), egui::Sense::hover());
                            let font = egui::FontId::proportional(11.0);
                            // End labels first, then the inner ticks that do not collide with them.
                            let mut order: Vec<&(f32, String)> = labels.iter().collect();
                            order.sort_by_key(|(t, _)| !(*t <= 0.0 || *t >= 1.0));
                            let mut taken: Vec<(f32, f32)> = Vec::new();
                            for (t, s) in order {
                                let x = lrect.left() + t.clamp(0.0, 1.0) * lrect.width();
                                let (align, x0, x1) = if *t <= 0.0 {
                                    (egui::Align2::LEFT_TOP, x, x + 7.0 * s.len() as f32)
                                } else if *t >= 1.0 {
                                    (egui::Align2::RIGHT_TOP, x - 7.0 * s.len() as f32, x)
                                } else {
                                    (egui::Align2::CENTER_TOP, x - 3.5 * s.len() as f32, x + 3.5 * s.len() as f32)
                                };
                                if taken.iter().any(|&(a, b)| x0 < b + 4.0 && a < x1 + 4.0) {
                                    continue;
                                }
                                taken.push((x0, x1));
                                painter.line_segment(
                                    [egui::pos2(x, rect.bottom()), egui::pos2(x, rect.bottom() + 3.0)],
                                    egui::Stroke::new(1.0, text),
                                );
                                painter.text(egui::pos2(x, lrect.top() + 2.0), align, s, font.clone(), text);
                            }
                            if !unit.is_empty() {
                                ui.label(egui::RichText::new(unit).small().color(weak));
                            }
                        }
                        LegendBody::Swatches(items) => {
                            for (c, name) in items {
                                ui.horizontal(|ui| {
                                    let (r, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
                                    ui.painter().rect_filled(r, 2.0, egui::Color32::from_rgb(c[0], c[1], c[2]));
                                    ui.label(egui::RichText::new(name).color(text));
                                });
                            }
                        }
                        LegendBody::Empty => {}
                    }
                    if let Some(n) = &legend.note {
                        let colour = if legend.body == LegendBody::Empty {
                            egui::Color32::from_rgb(255, 200, 120)
                        } else {
                            weak
                        };
                        ui.label(egui::RichText::new(n).small().color(colour));
                    }
                },
            );
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_data_changes_are_throttled() {
        let k = BuildKey {
            params: OverlayParams::default(),
            doc_revision: 1,
            fields_revision: 1,
            size: (3, 3),
            hardness: None,
        };
        let data = BuildKey { fields_revision: 2, ..k.clone() };
        assert!(k.same_choices(&data), "new simulation data: throttled");
        let choice = BuildKey { params: OverlayParams { kind: OverlayKind::Flow, ..Default::default() }, ..k.clone() };
        assert!(!k.same_choices(&choice), "a new overlay choice: at once");
        // Opacity, legend and brush ring do not cause a rebuild.
        let p = OverlayParams { opacity: 0.2, legend: false, brush_ring: false, ..Default::default() };
        assert_eq!(build_params(&p), build_params(&OverlayParams::default()));
    }

    #[test]
    fn builds_from_sim_fields_of_the_map_size_only() {
        let map = crate::core::Heightmap::new(4, 4, 1.0).unwrap();
        let p = OverlayParams { kind: OverlayKind::Flow, ..Default::default() };
        let mut f = SimFields {
            width: 4,
            height: 4,
            flow: Some(crate::app::fields::Field::new(vec![3.0; 16])),
            ..Default::default()
        };
        assert!(build_now(&p, &map, &f, &HardnessParams::default(), "particles").1);
        f.width = 5;
        assert!(
            !build_now(&p, &map, &f, &HardnessParams::default(), "particles").1,
            "fields of another size are ignored"
        );
        let hard = OverlayParams { kind: OverlayKind::Hardness, ..Default::default() };
        assert!(
            build_now(&hard, &map, &f, &HardnessParams::default(), "particles").1,
            "hardness previews the panel settings"
        );
        let bad = HardnessParams { thickness: -1.0, ..Default::default() };
        let (o, shown) = build_now(&hard, &map, &f, &bad, "particles");
        assert!(!shown && o.legend.unwrap().note.unwrap().contains("not valid"));
    }
}
