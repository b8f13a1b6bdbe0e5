//! The terrain's splatting material: an `ExtendedMaterial<StandardMaterial, TerrainExtension>`
//! whose fragment shader (`shaders/terrain.wgsl`) replaces the base colour and roughness with
//! procedural layers and keeps Bevy's PBR lighting, shadows, atmosphere and fog.
//!
//! The layer math (bands, biomes, the data texture) is Bevy-free and tested in
//! [`crate::editor::look::material`], whose module docs write the equations; this plugin only moves
//! data: [`MaterialParams`] and the map's sea level / peak into the uniform, and the per-node data
//! texture (net deposit, normalised flow, distance to water, water depth) rebuilt from the map and
//! [`SimFields`] when either changes, at most [`REBUILDS_PER_SECOND`] times a second, on a thread
//! of its own while the frames go on (in the frame for a first build or a new size). The overlay
//! ([`OverlayTexture`], filled by the overlay plugin) is sampled at node UV and blended over the
//! lit colour with `alpha · opacity`.
//!
//! The panel's "Material" section ([`material_section`]) edits the parameters with the generic
//! parameter editor plus a preset row (`assets/presets/material/*.ron`).

use bevy::asset::RenderAssetUsages;
use bevy::image::ImageSampler;
use bevy::pbr::{ExtendedMaterial, MaterialExtension};
use bevy::prelude::*;
use bevy::render::render_resource::{AsBindGroup, Extent3d, ShaderType, TextureDimension, TextureFormat};
use bevy::shader::ShaderRef;
use bevy_egui::egui;

use super::background::{Background, Polled};
use super::fields::{Field, OverlayTexture, SimFields};
use super::shaders::shader_handle;
use super::state::sea_level;
use super::state::{EditorTerrain, Look, MapSnapshot, ViewWork};
use crate::editor::look::MaterialParams;
use crate::editor::look::material::{SurfaceInputs, TerrainLayer, srgb_to_linear, surface_data, to_rgba16f_bytes};

/// The terrain material type every chunk uses.
pub type TerrainMat = ExtendedMaterial<StandardMaterial, TerrainExtension>;

/// Most data-texture rebuilds per second (a running simulation sends many snapshots).
pub const REBUILDS_PER_SECOND: f32 = 4.0;

const SHADER: &str = "terrain.wgsl";

/// Creates the terrain material and keeps its uniform and data texture current.
pub struct TerrainMaterialPlugin;

impl Plugin for TerrainMaterialPlugin {
    fn build(&self, app: &mut App) {
        crate::register_shader!(app, "terrain.wgsl");
        app.add_plugins(MaterialPlugin::<TerrainMat>::default())
            .init_resource::<ViewWork>()
            .init_resource::<MapSnapshot>()
            .add_systems(Startup, create_material)
            .add_systems(Update, (rebuild_data_texture, update_material).chain());
    }
}

/// The material every terrain chunk shares.
#[derive(Resource)]
pub struct TerrainMaterial(pub Handle<TerrainMat>);

/// The extension's data (bindings 100 ..= 104 of the material group, see `terrain.wgsl`).
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone, Default)]
pub struct TerrainExtension {
    /// The layer parameters and map facts (binding 100).
    #[uniform(100)]
    pub uniform: TerrainUniform,
    /// Per-node data texture, Rgba16Float, linearly sampled: net deposit, normalised flow,
    /// distance to water, water depth (bindings 101 and 102).
    #[texture(101)]
    #[sampler(102)]
    pub data: Handle<Image>,
    /// The data overlay, one sRGB texel per node, from [`OverlayTexture`] (bindings 103 and 104).
    #[texture(103)]
    #[sampler(104)]
    pub overlay: Handle<Image>,
}

impl MaterialExtension for TerrainExtension {
    fn fragment_shader() -> ShaderRef {
        ShaderRef::Handle(shader_handle(SHADER))
    }
}

/// The uniform block of `terrain.wgsl` (field comments there).
#[derive(ShaderType, Reflect, Debug, Clone, Default, PartialEq)]
pub struct TerrainUniform {
    /// Sea level (m), peak height above sea level (m, at least 1), cell size (m), 1 when splatting
    /// is on (0: plain base colour).
    pub map: Vec4,
    /// Map size in nodes along x and y, overlay opacity (`0 ..= 1`), the map's lowest point (m).
    pub size: Vec4,
    /// Height bands as fractions of the peak above sea level: beach top, dirt height, snow line,
    /// height blend.
    pub bands_h: Vec4,
    /// Slope bands, degrees: dirt slope, rock slope, snow's steepest slope, slope blend.
    pub bands_s: Vec4,
    /// Edge noise (blend widths), edge noise scale (m), detail scale (m), triplanar sharpness.
    pub detail: Vec4,
    /// Strata contrast (`0 ..= 1`), strata spacing (m), the map's highest point (m), unused. The
    /// lowest and highest points are the plain look's range (`look::material::plain_color`).
    pub strata: Vec4,
    /// Sediment cover strength (0 when off), deposit where it starts and where it is full (m),
    /// cover per metre eroded.
    pub sediment: Vec4,
    /// Wet darkening (0 when off), normalised flow where wetness starts and where it is full,
    /// wet roughness.
    pub wet: Vec4,
    /// Latitude of the first and the last node row (degrees), sea-level temperature at the equator
    /// and at the pole (°C).
    pub biome_a: Vec4,
    /// Lapse from shore to peak (°C), moisture range (m), tundra and desert temperatures (°C).
    pub biome_b: Vec4,
    /// Desert and steppe moisture (`0 ..= 1`), 1 when biomes are on, unused.
    pub biome_c: Vec4,
    /// Sand, grass, dirt, rock, snow, sediment: linear RGB and variation amount (`0 ..= 1`).
    pub layer_color: [Vec4; 6],
    /// The same six layers: linear RGB of the variation colour and roughness (`0 ..= 1`).
    pub layer_var: [Vec4; 6],
    /// Desert, steppe, tundra: linear RGB, alpha 1.
    pub biome_color: [Vec4; 3],
}

/// What the map and view contribute to the uniform besides the parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapFacts {
    /// Sea level, metres.
    pub sea_level: f32,
    /// Highest point of the map, metres.
    pub peak: f32,
    /// Lowest point of the map, metres.
    pub low: f32,
    /// Metres between nodes.
    pub cell: f32,
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Overlay opacity, 0 ..= 1.
    pub overlay_opacity: f32,
}

fn lin(c: [f32; 3]) -> Vec3 {
    Vec3::new(srgb_to_linear(c[0]), srgb_to_linear(c[1]), srgb_to_linear(c[2]))
}

fn finite(x: f32, fallback: f32) -> f32 {
    if x.is_finite() { x } else { fallback }
}

impl TerrainUniform {
    /// Packs the parameters (clamped to their documented ranges) and the map facts.
    pub fn new(p: &MaterialParams, m: MapFacts) -> Self {
        let b = &p.bands;
        let d = &p.detail;
        let s = &p.sediment;
        let w = &p.wet;
        let bi = &p.biome;
        let c = |x: f32, lo: f32, hi: f32, def: f32| finite(x, def).clamp(lo, hi);
        let layer = |l: &TerrainLayer| {
            (
                lin(l.color).extend(c(l.variation_amount, 0.0, 1.0, 0.5)),
                lin(l.variation).extend(c(l.roughness, 0.0, 1.0, 0.9)),
            )
        };
        let layers = [&p.sand, &p.grass, &p.dirt, &p.rock, &p.snow, &s.layer].map(layer);
        let peak_above_sea = (m.peak - m.sea_level).max(1.0);
        Self {
            map: Vec4::new(m.sea_level, peak_above_sea, m.cell.max(1e-6), if p.enabled { 1.0 } else { 0.0 }),
            size: Vec4::new(m.width as f32, m.height as f32, m.overlay_opacity.clamp(0.0, 1.0), finite(m.low, 0.0)),
            bands_h: Vec4::new(
                c(b.beach_top, -1.0, 1.0, 0.02),
                c(b.dirt_height, 0.0, 2.0, 0.6),
                c(b.snow_line, 0.0, 2.0, 0.86),
                c(b.height_blend, 0.0, 0.5, 0.03),
            ),
            bands_s: Vec4::new(
                c(b.dirt_slope, 0.0, 90.0, 30.0),
                c(b.rock_slope, 0.0, 90.0, 40.0),
                c(b.snow_max_slope, 0.0, 90.0, 42.0),
                c(b.slope_blend, 0.0, 45.0, 5.0),
            ),
            detail: Vec4::new(
                c(b.edge_noise, 0.0, 4.0, 1.5),
                c(d.edge_scale, 1.0, 1e4, 40.0),
                c(d.scale, 0.1, 1000.0, 6.0),
                c(d.triplanar_sharpness, 1.0, 16.0, 4.0),
            ),
            strata: Vec4::new(
                c(d.strata, 0.0, 1.0, 0.18),
                c(d.strata_spacing, 0.1, 1000.0, 7.0),
                finite(m.peak, 0.0),
                0.0,
            ),
            sediment: Vec4::new(
                if s.enabled { c(s.strength, 0.0, 1.0, 0.9) } else { 0.0 },
                c(s.deposit_min, 0.0, 100.0, 0.02),
                c(s.deposit_full, 0.0, 100.0, 0.4),
                c(s.erosion_exposes, 0.0, 10.0, 0.15),
            ),
            wet: Vec4::new(
                if w.enabled { c(w.darkening, 0.0, 1.0, 0.45) } else { 0.0 },
                c(w.flow_min, 0.0, 1.0, 0.35),
                c(w.flow_full, 0.0, 1.0, 0.75),
                c(w.roughness, 0.0, 1.0, 0.35),
            ),
            biome_a: Vec4::new(
                c(bi.latitude_north, -90.0, 90.0, 48.0),
                c(bi.latitude_south, -90.0, 90.0, 40.0),
                c(bi.temperature_equator, -50.0, 60.0, 30.0),
                c(bi.temperature_pole, -80.0, 40.0, -25.0),
            ),
            biome_b: Vec4::new(
                c(bi.lapse, 0.0, 100.0, 14.0),
                c(bi.moisture_range, 1.0, 1e5, 220.0),
                c(bi.tundra_temperature, -50.0, 50.0, -2.0),
                c(bi.desert_temperature, -50.0, 60.0, 20.0),
            ),
            biome_c: Vec4::new(
                c(bi.desert_moisture, 0.0, 1.0, 0.05),
                c(bi.steppe_moisture, 0.0, 1.0, 0.15),
                if bi.enabled { 1.0 } else { 0.0 },
                0.0,
            ),
            layer_color: layers.map(|l| l.0),
            layer_var: layers.map(|l| l.1),
            biome_color: [bi.desert_color, bi.steppe_color, bi.tundra_color].map(|c| lin(c).extend(1.0)),
        }
    }
}

fn create_material(
    mut commands: Commands,
    mut materials: ResMut<Assets<TerrainMat>>,
    mut images: ResMut<Assets<Image>>,
    overlay: Option<Res<OverlayTexture>>,
    terrain: Res<EditorTerrain>,
    look: Res<Look>,
) {
    // Built at full size at once: the first frames already show the right layers.
    let map = terrain.map();
    let data = images.add(data_image(
        map.width,
        map.height,
        surface_data(map, sea_level(&look), look.0.material.wet.wet_depth, SurfaceInputs::default()),
    ));
    let overlay = overlay.map(|o| o.image.clone()).unwrap_or_default();
    let handle = materials.add(TerrainMat {
        base: StandardMaterial { base_color: Color::WHITE, perceptual_roughness: 0.9, reflectance: 0.3, ..default() },
        extension: TerrainExtension { uniform: TerrainUniform::default(), data, overlay },
    });
    commands.insert_resource(TerrainMaterial(handle));
}

fn data_image(width: usize, height: usize, texels: Vec<[f32; 4]>) -> Image {
    let mut image = Image::new(
        Extent3d { width: width as u32, height: height as u32, depth_or_array_layers: 1 },
        TextureDimension::D2,
        to_rgba16f_bytes(&texels),
        TextureFormat::Rgba16Float,
        RenderAssetUsages::default(),
    );
    image.sampler = ImageSampler::linear();
    image
}

/// Which inputs the current data texture was built from.
#[derive(Default, PartialEq, Clone, Copy, Debug)]
struct DataKey {
    fields_revision: u64,
    doc_revision: u64,
    width: usize,
    height: usize,
    sea_level_bits: u32,
    wet_depth_bits: u32,
}

/// The data texture's state: what it shows, when it was last started, and the build running on a
/// background task.
#[derive(Default)]
struct DataTexture {
    shown: Option<DataKey>,
    started_at: f32,
    task: Option<(DataKey, Background<Image>)>,
}

/// What the data texture is built from, owned (a background build outlives the frame).
struct DataInputs {
    map: std::sync::Arc<crate::core::Heightmap>,
    sea: f32,
    wet_depth: f32,
    water: Option<Field>,
    flow: Option<Field>,
    eroded: Option<Field>,
    deposited: Option<Field>,
}

impl DataInputs {
    /// The texture's image (the texels of [`surface_data`]).
    fn image(&self) -> Image {
        let inputs = SurfaceInputs {
            water: self.water.as_deref().map(Vec::as_slice),
            flow: self.flow.as_deref().map(Vec::as_slice),
            eroded: self.eroded.as_deref().map(Vec::as_slice),
            deposited: self.deposited.as_deref().map(Vec::as_slice),
        };
        let texels = surface_data(&self.map, self.sea, self.wet_depth, inputs);
        data_image(self.map.width, self.map.height, texels)
    }
}

/// Rebuilds the data texture when the map, the simulation fields or the wetness threshold changed
/// (at most [`REBUILDS_PER_SECOND`] times a second). A first build and a new size are built in the
/// frame, so the terrain never shows a texture of another size; a simulation's snapshot or a
/// stroke is built on a thread of its own ([`Background`]; at 2049² the texels take 140 ms on 2
/// cores: the distance to water of every node) and shown in the frame it is done, while the
/// frames go on. [`ViewWork::texels`] says a newer texture is on its way (a script's screenshot
/// waits for it).
#[allow(clippy::too_many_arguments)]
fn rebuild_data_texture(
    time: Res<Time<Real>>,
    mut state: Local<DataTexture>,
    terrain: Res<EditorTerrain>,
    fields: Res<SimFields>,
    look: Res<Look>,
    material: Option<Res<TerrainMaterial>>,
    mut materials: ResMut<Assets<TerrainMat>>,
    mut images: ResMut<Assets<Image>>,
    mut work: ResMut<ViewWork>,
    mut snapshot: ResMut<MapSnapshot>,
) {
    let Some(material) = material else { return };
    let state = &mut *state;
    if let Some((key, task)) = &mut state.task {
        match task.poll() {
            Polled::Running => {}
            Polled::Done(image) => {
                let key = *key;
                state.task = None;
                debug!("terrain data texture built off the frame is done (fields revision {})", key.fields_revision);
                show_data_image(&material, &mut materials, &mut images, image);
                work.texels_shown += 1;
                state.shown = Some(key);
            }
            Polled::Gone => state.task = None,
        }
    }
    let map = terrain.map();
    let sea = sea_level(&look);
    let wet_depth = look.0.material.wet.wet_depth;
    let key = DataKey {
        fields_revision: fields.revision,
        doc_revision: terrain.doc.revision(),
        width: map.width,
        height: map.height,
        sea_level_bits: sea.to_bits(),
        wet_depth_bits: wet_depth.to_bits(),
    };
    work.texels = state.task.is_some() || state.shown != Some(key);
    if state.shown == Some(key) || state.task.as_ref().is_some_and(|(k, _)| *k == key) {
        return;
    }
    let now = time.elapsed_secs();
    // A new size or a first build goes at once, in the frame; snapshots and strokes wait for the
    // throttle and for the build under way.
    let urgent = state.shown.is_none_or(|s| (s.width, s.height) != (key.width, key.height));
    if !urgent && (state.task.is_some() || now - state.started_at < 1.0 / REBUILDS_PER_SECOND) {
        return;
    }
    state.started_at = now;
    let fits = fields.fits(map.width, map.height);
    // The fields are shared, not copied; the map is the copy the meshes share.
    let owned = |v: &Option<Field>| v.as_ref().filter(|_| fits).cloned();
    let inputs = DataInputs {
        map: snapshot.of(&terrain, terrain.last_changed()),
        sea,
        wet_depth,
        water: owned(&fields.water),
        flow: owned(&fields.flow),
        eroded: owned(&fields.eroded),
        deposited: owned(&fields.deposited),
    };
    if urgent {
        // A build of the old size still running is dropped (its thread ends unheard).
        state.task = None;
        let started = std::time::Instant::now();
        show_data_image(&material, &mut materials, &mut images, inputs.image());
        work.texels_shown += 1;
        state.shown = Some(key);
        work.texels = false;
        debug!(
            "terrain data texture {}×{} built in the frame in {:.1} ms",
            map.width,
            map.height,
            started.elapsed().as_secs_f64() * 1e3
        );
    } else {
        state.task = Some((key, Background::spawn("terrain data texture", move || inputs.image())));
    }
}

/// Puts `image` in the material's data texture.
fn show_data_image(
    material: &TerrainMaterial,
    materials: &mut Assets<TerrainMat>,
    images: &mut Assets<Image>,
    image: Image,
) {
    let Some(data) = materials.get(&material.0).map(|m| m.extension.data.clone()) else { return };
    let same_size = images.get(&data).is_some_and(|old| old.texture_descriptor.size == image.texture_descriptor.size);
    if same_size {
        // Same size: Bevy writes the new texels into the existing texture, whose view the
        // material's bind group keeps, so the material itself is left unchanged (a changed
        // material has every chunk's pipelines specialized again).
        let _ = images.insert(data.id(), image);
    } else if let Some(mut mat) = materials.get_mut(&material.0) {
        // Another size: a new texture under a new handle, so the material's bind group is rebuilt
        // (replacing a bound texture in place with one of another size crashed lavapipe).
        mat.extension.data = images.add(image);
    }
}

/// Writes the uniform when the look, the map's range or the overlay changed.
fn update_material(
    look: Res<Look>,
    terrain: Res<EditorTerrain>,
    overlay: Option<Res<OverlayTexture>>,
    material: Option<Res<TerrainMaterial>>,
    mut materials: ResMut<Assets<TerrainMat>>,
    mut last: Local<Option<TerrainUniform>>,
) {
    let Some(material) = material else { return };
    let map = terrain.map();
    let facts = MapFacts {
        sea_level: sea_level(&look),
        peak: terrain.stats.max,
        low: terrain.stats.min,
        cell: map.cell_size,
        width: map.width,
        height: map.height,
        overlay_opacity: overlay.as_ref().map_or(0.0, |o| o.opacity),
    };
    let uniform = TerrainUniform::new(&look.0.material, facts);
    let overlay_changed = overlay.as_ref().is_some_and(|o| o.is_changed());
    if last.as_ref() == Some(&uniform) && !overlay_changed {
        return;
    }
    let Some(mut mat) = materials.get_mut(&material.0) else { return };
    mat.extension.uniform = uniform.clone();
    if let Some(o) = &overlay {
        mat.extension.overlay = o.image.clone();
    }
    *last = Some(uniform);
}

// ---------------------------------------------------------------------------------------------
// Panel.

/// The panel's "Material" section: presets and every [`MaterialParams`] field. Edits show at once.
pub fn material_section(ui: &mut egui::Ui, look: &mut ResMut<Look>) {
    egui::CollapsingHeader::new("Material").default_open(false).show(ui, |ui| {
        let id = ui.make_persistent_id("material_section_state");
        let (mut path, mut msg): (String, Option<(String, bool)>) =
            ui.data_mut(|d| d.get_temp(id)).unwrap_or_else(|| ("my_material.ron".to_string(), None));
        let mut p = look.bypass_change_detection().0.material.clone();
        let mut changed = super::widgets::preset_row(ui, "material", "", &mut p, &mut path, &mut msg);
        ui.horizontal(|ui| {
            if ui.button("Defaults").on_hover_text("Reset every material parameter").clicked() {
                p = MaterialParams::default();
                changed = true;
            }
        });
        super::widgets::preset_message(ui, &msg);
        match super::param_editor::edit_params(ui, "material", "MaterialParams", &mut p) {
            Ok(c) => changed |= c,
            Err(e) => {
                ui.colored_label(egui::Color32::LIGHT_RED, e);
            }
        }
        if changed && look.0.material != p {
            look.0.material = p;
        }
        ui.data_mut(|d| d.insert_temp(id, (path, msg)));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> MapFacts {
        MapFacts { sea_level: 0.0, peak: 120.0, low: -30.0, cell: 2.0, width: 513, height: 257, overlay_opacity: 0.5 }
    }

    #[test]
    fn uniform_packs_map_and_switches() {
        let p = MaterialParams::default();
        let u = TerrainUniform::new(&p, facts());
        assert_eq!(u.map, Vec4::new(0.0, 120.0, 2.0, 1.0));
        assert_eq!(u.size, Vec4::new(513.0, 257.0, 0.5, -30.0));
        assert_eq!(u.strata.z, 120.0, "the plain look's range: the map's highest point");
        assert!((u.layer_color[0].x - srgb_to_linear(p.sand.color[0])).abs() < 1e-6);
        let off = MaterialParams { enabled: false, ..p.clone() };
        assert_eq!(TerrainUniform::new(&off, facts()).map.w, 0.0);
        let mut no_sed = p.clone();
        no_sed.sediment.enabled = false;
        no_sed.wet.enabled = false;
        let u = TerrainUniform::new(&no_sed, facts());
        assert_eq!((u.sediment.x, u.wet.x), (0.0, 0.0));
    }

    #[test]
    fn absurd_values_are_clamped_not_passed_on() {
        let mut p = MaterialParams::default();
        p.bands.snow_line = f32::NAN;
        p.bands.rock_slope = 1e9;
        p.detail.scale = -5.0;
        p.grass.roughness = 7.0;
        p.biome.moisture_range = 0.0;
        let u = TerrainUniform::new(&p, MapFacts { peak: -50.0, overlay_opacity: 9.0, ..facts() });
        assert_eq!(u.bands_h.z, 0.86, "NaN falls back to the default");
        assert_eq!(u.bands_s.y, 90.0);
        assert_eq!(u.detail.z, 0.1);
        assert_eq!(u.layer_var[1].w, 1.0);
        assert_eq!(u.biome_b.y, 1.0);
        assert_eq!(u.map.y, 1.0, "a map below the sea still has a positive height range");
        assert_eq!(u.size.z, 1.0);
    }

    #[test]
    fn shader_is_registered_under_its_stable_handle() {
        assert!(
            matches!(TerrainExtension::fragment_shader(), ShaderRef::Handle(h) if h == shader_handle("terrain.wgsl"))
        );
        let src = include_str!("../../shaders/terrain.wgsl");
        for binding in ["@binding(100)", "@binding(101)", "@binding(102)", "@binding(103)", "@binding(104)"] {
            assert!(src.contains(binding), "terrain.wgsl declares {binding}");
        }
    }
}
