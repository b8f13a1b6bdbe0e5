//! Water (issue #5): the sea plane at sea level (seed 004) with waves running toward the shore
//! (seed 002), and the pipe model's simulated water as its own surface (seed 003), both drawn
//! by `shaders/water.wgsl` — a StandardMaterial extension, so the sun, its shadows and the sky
//! light them like the terrain — and the panel's "Water" section.
//!
//! - **Depth**: the water needs the depth of water between its surface and the ground behind
//!   each fragment. Two sources, chosen by [`WaterParams::depth_prepass`]:
//!   *height field* (default): the ground height under the fragment, bilinear from the field
//!   texture (below), gives the vertical depth `z_v = sea_level − ground`, and the optical path
//!   through a flat-bottomed layer `z = z_v / max(|V_y|, 0.08)`;
//!   *depth prepass*: the orbit camera gets a `DepthPrepass`; the water (alpha-blended, so not in
//!   the prepass itself) reads the ground's depth behind the fragment, reconstructs its world
//!   position and measures `z` exactly (steep shores, overhangs of the view). With MSAA the
//!   prepass depth is multisampled (`texture_depth_multisampled_2d`; Bevy defines
//!   `MULTISAMPLED`, and `prepass_depth` takes a sample index): the shader reads sample 0 rather
//!   than taking `@builtin(sample_index)`, which would run the whole water shader per sample.
//!   **Known problem**: on Mesa's lavapipe (the software Vulkan these machines render with), a
//!   camera with `DepthPrepass` *and* Bevy's `Atmosphere` crashes inside the driver (segfault in
//!   `libvulkan_lvp.so`, reproduced with the water hidden, gone with either one off) — hence the
//!   height field by default.
//!   Colour `mix(shallow, deep, 1 − e^(−z/color_depth))`, opacity
//!   `1 − clarity·e^(−z/opacity_depth)`, raised toward 1 by Schlick's Fresnel term
//!   ([`crate::editor::look::water`]).
//! - **Shore waves**: the signed distance to the shore `d` (metres, positive at sea) is computed
//!   exactly ([`crate::core::distance::shore_distance`]) on a background task whenever the
//!   terrain or the sea level changes (at most [`SHORE_UPDATES_PER_SECOND`], maps larger than
//!   [`SHORE_SIDE`] nodes sampled down), uploaded with the ground heights as an Rg32Float texture (one texel per node),
//!   and read bilinearly in the shader; crests follow `φ = k·d + ω·t` and so run down the
//!   gradient of `d`, toward the coast, breaking into foam in their last stretch.
//! - **Pipe-model water**: when [`SimFields::water`] is present, one mesh at `terrain + depth`
//!   where the depth passes the threshold ([`pipe_surface`]), rebuilt when `revision` changes (at
//!   most [`PIPE_UPDATES_PER_SECOND`] while a simulation runs); vertex colours carry the velocity,
//!   which advects the ripples (a two-phase flow map) and whitens fast water.

use bevy::asset::RenderAssetUsages;
use bevy::core_pipeline::prepass::DepthPrepass;
use bevy::light::NotShadowCaster;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::pbr::{ExtendedMaterial, MaterialExtension};
use bevy::prelude::*;
use bevy::render::render_resource::{AsBindGroup, Extent3d, ShaderType, TextureDimension, TextureFormat};
use bevy::shader::ShaderRef;
use bevy_egui::egui;

use super::background::{Background, Polled};
use super::fields::SimFields;
use super::param_editor::edit_params;
use super::shaders::shader_handle;
use super::state::OrbitCamera;
use super::state::SimState;
use super::state::{EditorTerrain, Look};
use crate::core::Heightmap;
use crate::editor::look::WaterParams;
use crate::editor::look::water::pipe_surface;

/// The water material type (sea plane and pipe water).
pub type WaterMat = ExtendedMaterial<StandardMaterial, WaterExtension>;

const SHADER: &str = "water.wgsl";
/// Most distance-to-shore recomputations per second.
pub const SHORE_UPDATES_PER_SECOND: f64 = 2.0;
/// Most pipe-water mesh rebuilds per second while a simulation runs.
pub const PIPE_UPDATES_PER_SECOND: f64 = 2.0;
/// Largest side (nodes) of the distance-to-shore field; bigger maps are sampled every few nodes.
pub const SHORE_SIDE: usize = 1025;
/// Clamp of the stored shore distance (metres; "no shore anywhere near").
const FAR: f32 = 1.0e4;

/// Draws the sea plane and the simulated water.
pub struct WaterPlugin;

impl Plugin for WaterPlugin {
    fn build(&self, app: &mut App) {
        crate::register_shader!(app, "water.wgsl");
        app.add_plugins(MaterialPlugin::<WaterMat>::default()).add_systems(Startup, spawn_water).add_systems(
            Update,
            (add_depth_prepass, update_shore_field, update_water_material, place_sea_plane, update_pipe_water).chain(),
        );
    }
}

/// The extension's data (bindings 100 and 101 of the material group, see `water.wgsl`).
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone, Default)]
pub struct WaterExtension {
    /// Colours, ripples, shore waves, map extent and sea level (binding 100).
    #[uniform(100)]
    pub uniform: WaterUniform,
    /// Per node: signed distance to the shore and ground height (Rg32Float), read with
    /// `textureLoad`.
    #[texture(101, sample_type = "float", filterable = false)]
    pub shore: Handle<Image>,
}

impl MaterialExtension for WaterExtension {
    fn fragment_shader() -> ShaderRef {
        ShaderRef::Handle(shader_handle(SHADER))
    }
    fn enable_prepass() -> bool {
        false
    }
    fn enable_shadows() -> bool {
        false
    }
}

/// The uniform block of `water.wgsl` (field comments there).
#[derive(ShaderType, Reflect, Debug, Clone, Default, PartialEq)]
pub struct WaterUniform {
    /// Linear RGB of shallow water, clarity (`0 ..= 1`).
    pub shallow: Vec4,
    /// Linear RGB of deep water, colour depth (m).
    pub deep: Vec4,
    /// Linear RGB of foam, foam width (m; 0 = no foam).
    pub foam: Vec4,
    /// Ripple strength (`0 ..= 1`), ripple wavelength (m), ripple speed (m/s), opacity depth (m).
    pub ripple: Vec4,
    /// Shore wave length (m), speed (m/s), strength (0 = off), reach from the shore (m).
    pub waves: Vec4,
    /// Shore texture's extent along x and z (m), unused, surface kind (0 sea, 1 pipe water).
    pub map: Vec4,
    /// Fresnel strength, roughness, opacity scale (1 for the sea), sea level (m).
    pub misc: Vec4,
}

fn lin(c: [f32; 3]) -> Vec3 {
    let l = Color::srgb(c[0], c[1], c[2]).to_linear();
    Vec3::new(l.red, l.green, l.blue)
}

impl WaterUniform {
    /// The sea plane's uniform: parameters clamped to their ranges, `extent` the world size (m)
    /// the shore texture covers.
    pub fn sea(p: &WaterParams, extent: Vec2) -> Self {
        let p = p.sanitized();
        Self {
            shallow: lin(p.shallow_color).extend(p.clarity),
            deep: lin(p.deep_color).extend(p.color_depth),
            foam: lin(p.foam_color).extend(if p.foam { p.foam_width } else { 0.0 }),
            ripple: Vec4::new(p.ripple_strength, p.ripple_scale, p.ripple_speed, p.opacity_depth),
            waves: Vec4::new(
                p.wave_length,
                p.wave_speed,
                if p.shore_waves { p.wave_strength } else { 0.0 },
                p.wave_reach,
            ),
            map: Vec4::new(extent.x.max(1e-3), extent.y.max(1e-3), 0.0, 0.0),
            misc: Vec4::new(p.fresnel, p.roughness, 1.0, p.sea_level),
        }
    }

    /// The pipe water's uniform: its own colour (deep water a darker shade of it), opacity scale.
    pub fn pipe(p: &WaterParams, extent: Vec2) -> Self {
        let mut u = Self::sea(p, extent);
        let s = p.sanitized();
        let c = lin(s.pipe_color);
        u.shallow = c.extend(s.clarity.min(0.9));
        u.deep = (c * 0.35).extend(s.color_depth.min(4.0));
        u.waves.z = 0.0;
        u.map.w = 1.0;
        u.misc.z = s.pipe_opacity;
        u
    }
}

/// A computed shore field: per node `[signed shore distance m, ground height m]`, its nodes along
/// x and y (a sampled map's), and the world extent (m) it covers.
type ShoreField = (Vec<[f32; 2]>, usize, usize, Vec2);

/// Entities, materials and the background shore-distance job.
#[derive(Resource)]
pub struct WaterState {
    sea: Entity,
    pipe: Entity,
    sea_mat: Handle<WaterMat>,
    pipe_mat: Handle<WaterMat>,
    /// World extent (m) of the current shore texture.
    shore_extent: Vec2,
    /// `(sea level, width, height)` the shore field was last asked for.
    shore_for: Option<(f32, usize, usize)>,
    shore_dirty: bool,
    shore_task: Option<Background<ShoreField>>,
    last_shore: f64,
    pipe_revision: u64,
    last_pipe: f64,
    pipe_look: Option<(f32, f32, bool, bool)>,
}

/// The sea mesh entity.
#[derive(Component)]
pub struct SeaPlane;

/// The simulated-water mesh entity.
#[derive(Component)]
pub struct PipeWater;

/// The field texture: per node `(signed shore distance m, ground height m)` as Rg32Float.
fn shore_image(values: &[[f32; 2]], w: usize, h: usize) -> Image {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.iter().flat_map(|c| c.to_le_bytes())).collect();
    Image::new(
        Extent3d { width: w as u32, height: h as u32, depth_or_array_layers: 1 },
        TextureDimension::D2,
        bytes,
        TextureFormat::Rg32Float,
        RenderAssetUsages::RENDER_WORLD,
    )
}

fn base_material() -> StandardMaterial {
    StandardMaterial {
        base_color: Color::WHITE,
        alpha_mode: AlphaMode::Blend,
        perceptual_roughness: 0.06,
        reflectance: 0.5,
        ..default()
    }
}

fn spawn_water(
    mut commands: Commands,
    look: Res<Look>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut images: ResMut<Assets<Image>>,
    mut materials: ResMut<Assets<WaterMat>>,
) {
    let shore = images.add(shore_image(&[[FAR, -FAR]], 1, 1));
    let p = &look.0.water;
    let sea_mat = materials.add(WaterMat {
        base: base_material(),
        extension: WaterExtension { uniform: WaterUniform::sea(p, Vec2::ONE), shore: shore.clone() },
    });
    let pipe_mat = materials.add(WaterMat {
        base: base_material(),
        extension: WaterExtension { uniform: WaterUniform::pipe(p, Vec2::ONE), shore },
    });
    let plane = meshes.add(Plane3d::new(Vec3::Y, Vec2::splat(0.5)).mesh().subdivisions(1));
    let sea = commands
        .spawn((
            SeaPlane,
            Mesh3d(plane),
            MeshMaterial3d(sea_mat.clone()),
            Transform::IDENTITY,
            NotShadowCaster,
            Visibility::Hidden,
        ))
        .id();
    // A valid stand-in (one degenerate triangle) until the simulation reports water: an empty
    // mesh upsets the render world's mesh allocator.
    let empty = meshes.add(pipe_mesh(vec![[0.0; 3]; 3], vec![[0.0, 1.0, 0.0]; 3], vec![[0.0; 4]; 3], vec![0, 1, 2]));
    let pipe = commands
        .spawn((
            PipeWater,
            Mesh3d(empty),
            MeshMaterial3d(pipe_mat.clone()),
            Transform::IDENTITY,
            NotShadowCaster,
            Visibility::Hidden,
        ))
        .id();
    commands.insert_resource(WaterState {
        sea,
        pipe,
        sea_mat,
        pipe_mat,
        shore_extent: Vec2::ONE,
        shore_for: None,
        shore_dirty: true,
        shore_task: None,
        last_shore: f64::NEG_INFINITY,
        pipe_revision: 0,
        last_pipe: f64::NEG_INFINITY,
        pipe_look: None,
    });
}

/// Adds (or removes) the camera's `DepthPrepass` as [`WaterParams::depth_prepass`] asks.
fn add_depth_prepass(
    mut commands: Commands,
    look: Res<Look>,
    cams: Query<(Entity, Has<DepthPrepass>), With<OrbitCamera>>,
) {
    let want = look.0.water.depth_prepass;
    for (cam, has) in &cams {
        if want && !has {
            commands.entity(cam).insert(DepthPrepass);
        } else if !want && has {
            commands.entity(cam).remove::<DepthPrepass>();
        }
    }
}

/// Map extent in metres along x and z.
fn extent(map: &Heightmap) -> Vec2 {
    Vec2::new((map.width.max(2) - 1) as f32 * map.cell_size, (map.height.max(2) - 1) as f32 * map.cell_size)
}

/// Every `stride`-th node of `map`, so no side exceeds `side` nodes; returns the map and stride.
fn sampled(map: &Heightmap, side: usize) -> (Heightmap, usize) {
    let s = map.width.max(map.height).div_ceil(side).max(1);
    if s == 1 {
        return (map.clone(), 1);
    }
    let (w, h) = ((map.width - 1) / s + 1, (map.height - 1) / s + 1);
    let data = (0..w * h).map(|i| map.data[(i / w) * s * map.width + (i % w) * s]).collect();
    (Heightmap::from_data(w, h, map.cell_size * s as f32, data).unwrap_or_else(|_| map.clone()), s)
}

/// Starts the distance-to-shore job when the terrain or sea level changed, and uploads its
/// result.
fn update_shore_field(
    time: Res<Time<Real>>,
    terrain: Res<EditorTerrain>,
    look: Res<Look>,
    mut state: ResMut<WaterState>,
    mut images: ResMut<Assets<Image>>,
    mut materials: ResMut<Assets<WaterMat>>,
) {
    let state = &mut *state;
    let polled = state.shore_task.as_mut().map(|t| t.poll());
    if matches!(polled, Some(Polled::Gone)) {
        state.shore_task = None;
        state.shore_dirty = true;
    }
    if let Some(Polled::Done((values, w, h, ext))) = polled {
        state.shore_task = None;
        let handle = images.add(shore_image(&values, w, h));
        state.shore_extent = ext;
        for m in [&state.sea_mat, &state.pipe_mat] {
            if let Some(mut mat) = materials.get_mut(m) {
                mat.extension.shore = handle.clone();
                mat.extension.uniform.map.x = ext.x;
                mat.extension.uniform.map.y = ext.y;
            }
        }
    }
    let sea = look.0.water.sanitized().sea_level;
    let map = terrain.map();
    let key = (sea, map.width, map.height);
    if terrain.is_changed() || state.shore_for != Some(key) {
        state.shore_dirty = true;
    }
    let now = time.elapsed_secs_f64();
    if !state.shore_dirty || state.shore_task.is_some() || now - state.last_shore < 1.0 / SHORE_UPDATES_PER_SECOND {
        return;
    }
    state.shore_dirty = false;
    state.shore_for = Some(key);
    state.last_shore = now;
    let (small, s) = sampled(map, SHORE_SIDE);
    let ext = Vec2::new((small.width.max(2) - 1) as f32, (small.height.max(2) - 1) as f32) * map.cell_size * s as f32;
    state.shore_task = Some(Background::spawn("shore distance", move || {
        let d = crate::core::distance::shore_distance(&small, sea);
        let values = d
            .into_iter()
            .zip(&small.data)
            .map(|(v, &h)| [if v.is_nan() { FAR } else { v.clamp(-FAR, FAR) }, if h.is_finite() { h } else { 0.0 }])
            .collect();
        (values, small.width, small.height, ext)
    }));
}

/// Pushes the look's water parameters into both materials when they change.
fn update_water_material(look: Res<Look>, state: Res<WaterState>, mut materials: ResMut<Assets<WaterMat>>) {
    if !look.is_changed() {
        return;
    }
    let p = &look.0.water;
    for (m, pipe) in [(&state.sea_mat, false), (&state.pipe_mat, true)] {
        let u = if pipe { WaterUniform::pipe(p, state.shore_extent) } else { WaterUniform::sea(p, state.shore_extent) };
        if let Some(mat) = materials.get(m)
            && mat.extension.uniform == u
        {
            continue;
        }
        if let Some(mut mat) = materials.get_mut(m) {
            mat.extension.uniform = u;
            mat.base.perceptual_roughness = p.sanitized().roughness;
        }
    }
}

/// Puts the sea plane at sea level over the map and far beyond it (to the horizon).
fn place_sea_plane(
    terrain: Res<EditorTerrain>,
    look: Res<Look>,
    state: Res<WaterState>,
    mut q: Query<(&mut Transform, &mut Visibility), With<SeaPlane>>,
) {
    if !terrain.is_changed() && !look.is_changed() {
        return;
    }
    let Ok((mut tf, mut vis)) = q.get_mut(state.sea) else { return };
    let p = look.0.water.sanitized();
    let ext = extent(terrain.map());
    let side = ext.max_element().max(1.0) * 40.0;
    let t = Transform::from_translation(Vec3::new(ext.x * 0.5, p.sea_level, ext.y * 0.5))
        .with_scale(Vec3::new(side, 1.0, side));
    if *tf != t {
        *tf = t;
    }
    let v = if p.sea_plane { Visibility::Inherited } else { Visibility::Hidden };
    if *vis != v {
        *vis = v;
    }
}

/// Rebuilds the simulated-water mesh when the simulation reports new fields.
fn update_pipe_water(
    time: Res<Time<Real>>,
    terrain: Res<EditorTerrain>,
    look: Res<Look>,
    fields: Res<SimFields>,
    sim: Res<SimState>,
    mut state: ResMut<WaterState>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut q: Query<(&mut Mesh3d, &mut Visibility), With<PipeWater>>,
) {
    let p = look.0.water.sanitized();
    let look_key = (p.pipe_min_depth, p.sea_level, p.sea_plane, p.pipe_water);
    let now = time.elapsed_secs_f64();
    let stale = fields.revision != state.pipe_revision || state.pipe_look != Some(look_key);
    if !stale || (sim.running() && now - state.last_pipe < 1.0 / PIPE_UPDATES_PER_SECOND) {
        return;
    }
    state.pipe_revision = fields.revision;
    state.pipe_look = Some(look_key);
    state.last_pipe = now;
    let Ok((mut mesh3d, mut vis)) = q.get_mut(state.pipe) else { return };
    let map = terrain.map();
    let water = fields
        .water
        .as_deref()
        .map(Vec::as_slice)
        .filter(|w| p.pipe_water && fields.fits(map.width, map.height) && w.len() == map.len());
    let Some(water) = water else {
        *vis = Visibility::Hidden;
        return;
    };
    let s = pipe_surface(map, water, fields.velocity.as_deref(), p.pipe_min_depth, p.sea_plane.then_some(p.sea_level));
    if s.indices.is_empty() {
        *vis = Visibility::Hidden;
        return;
    }
    mesh3d.0 = meshes.add(pipe_mesh(s.positions, s.normals, s.colors, s.indices));
    *vis = Visibility::Inherited;
}

fn pipe_mesh(positions: Vec<[f32; 3]>, normals: Vec<[f32; 3]>, colors: Vec<[f32; 4]>, indices: Vec<u32>) -> Mesh {
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, colors)
        .with_inserted_indices(Indices::U32(indices))
}

/// The panel's "Water" section: quick toggles, every [`WaterParams`] field, presets
/// (`assets/presets/water/`). Writes `look` only when something changed.
pub fn water_section(
    ui: &mut egui::Ui,
    look: &mut ResMut<Look>,
    preset_path: &mut String,
    preset_msg: &mut Option<(String, bool)>,
) -> bool {
    let mut p = look.0.water.clone();
    let mut changed = false;
    egui::CollapsingHeader::new("Water").default_open(false).show(ui, |ui| {
        ui.horizontal(|ui| {
            changed |= ui.checkbox(&mut p.sea_plane, "Sea").changed();
            changed |= ui.checkbox(&mut p.shore_waves, "Shore waves").changed();
            changed |= ui.checkbox(&mut p.foam, "Foam").changed();
            changed |= ui.checkbox(&mut p.pipe_water, "Simulated water").changed();
        });
        egui::Grid::new("water_quick").num_columns(2).show(ui, |ui| {
            ui.label("Sea level").on_hover_text("Height of the sea surface, metres");
            changed |= ui
                .add(egui::DragValue::new(&mut p.sea_level).speed(0.1).range(-10_000.0..=10_000.0).suffix(" m"))
                .changed();
            ui.end_row();
        });
        if crate::app::widgets::preset_row(ui, "water", "", &mut p, preset_path, preset_msg) {
            changed = true;
        }
        crate::app::widgets::preset_message(ui, preset_msg);
        match edit_params(ui, "water", "WaterParams", &mut p) {
            Ok(c) => changed |= c,
            Err(e) => *preset_msg = Some((e, true)),
        }
        if ui.small_button("Reset water to defaults").clicked() {
            p = WaterParams::default();
            changed = true;
        }
    });
    if changed && p != look.0.water {
        look.0.water = p;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniforms_pack_the_parameters() {
        let p = WaterParams { shore_waves: false, foam: false, ..Default::default() };
        let u = WaterUniform::sea(&p, Vec2::new(100.0, 50.0));
        assert_eq!(u.waves.z, 0.0, "waves off");
        assert_eq!(u.foam.w, 0.0, "foam off");
        assert_eq!(u.map, Vec4::new(100.0, 50.0, 0.0, 0.0));
        let q = WaterUniform::pipe(&WaterParams::default(), Vec2::ONE);
        assert_eq!(q.map.w, 1.0);
        assert_eq!(q.misc.z, WaterParams::default().pipe_opacity);
        // Absurd values are clamped, never NaN.
        let bad = WaterParams { color_depth: f32::NAN, wave_length: -1.0, ..Default::default() };
        let u = WaterUniform::sea(&bad, Vec2::ZERO);
        assert!(u.deep.w.is_finite() && u.waves.x > 0.0 && u.map.x > 0.0);
    }

    #[test]
    fn big_maps_are_sampled_for_the_shore_field() {
        let map = Heightmap::from_fn(2100, 30, 0.5, |x, _| x as f32).unwrap();
        let (small, s) = sampled(&map, SHORE_SIDE);
        assert_eq!(s, 3);
        assert_eq!((small.width, small.height), (700, 10));
        assert_eq!(small.get(5, 2), 15.0);
        assert_eq!(small.cell_size, 1.5);
        let (same, one) = sampled(&small, SHORE_SIDE);
        assert_eq!((same.width, one), (700, 1));
    }
}
