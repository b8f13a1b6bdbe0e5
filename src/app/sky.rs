//! Light and sky (issue #5): the sun with cascaded shadow maps, Bevy's raymarched atmosphere,
//! light shafts, MSAA, exposure and tone mapping — all driven by [`SkyParams`] in the [`Look`]
//! resource, and the panel's "Sky & light" section that edits them.
//!
//! - **Sun**: a `DirectionalLight` turned to the azimuth/elevation of
//!   [`crate::editor::look::sky::sun_direction`] (seed 004's dynamic sky). Without the
//!   atmosphere its colour warms near the horizon ([`sun_color`]); with it, Bevy attenuates the
//!   direct light by the atmosphere's transmittance, which reddens a low sun physically.
//! - **Shadows** (seed 003): Bevy's cascaded shadow maps, with cascades refitted to the terrain box
//!   as the camera zooms or the map changes size ([`fit_cascades`]); percentage-closer filtering by
//!   `ShadowFilteringMethod` on the camera: `Gaussian` (9 taps ≈ a 5×5 kernel, The Witness) by
//!   default, because it is soft and stable without TAA and so works with MSAA.
//! - **Atmosphere** (seed 003's Rayleigh + Mie sky): Bevy's `Atmosphere`, which implements
//!   Hillaire 2020 ("A Scalable and Production Ready Sky and Atmosphere Rendering Technique"): a
//!   transmittance LUT `T(r, μ) = exp(−∫ σ_t(h) ds)`, a multiple-scattering LUT, a sky-view LUT of
//!   `L(v) = ∫ T·σ_s(h)·(p_R(θ)·β_R(h) + p_M(θ)·β_M(h))·E_sun ds` and an aerial-perspective volume
//!   applied in front of the terrain, stretched to the farthest terrain corner when that lies past
//!   Bevy's 32 km ([`fit_aerial_view`]). The medium is Earth's (`ScatteringMedium::earth`) with the
//!   Rayleigh and Mie coefficients scaled by the panel and a Mie phase asymmetry `g`. It sits on
//!   its own entity, planet surface at sea level (`y = 0`); the entity's scale `1 / aerial_scale`
//!   makes each scene metre count for `aerial_scale` metres of air: 1 (the default) is real air,
//!   so a 1 km island reads clear and a 32 km world hazes toward its far shore.
//! - **Haze without the atmosphere** (off by the user, or refused on lavapipe): Bevy's
//!   `DistanceFog` with exponential extinction `β = 3.912 / V` for the panel's visibility `V`
//!   (Koschmieder; [`crate::editor::view_extent`]), in the plain sky's colour, so distance reads
//!   at the map's real scale either way.
//!   The sky also lights the terrain through a small environment map generated from it
//!   (`AtmosphereEnvironmentMapLight`); without it a plain `GlobalAmbientLight` does.
//! - **Light shafts** (seed 003's close-range Mie scattering raymarched against the shadow map):
//!   Bevy's volumetric fog — `VolumetricFog` on the camera, `VolumetricLight` on the sun and one
//!   `FogVolume` box over the terrain. Per pixel it marches `steps` samples between the fog box and
//!   the depth buffer, each adding `σ_s·ρ·Δs·p_HG(g, cos θ)·V(x)·E_sun·T` where `V` is the sun's
//!   shadow-map visibility, and attenuating by Beer–Lambert `exp(−ρ·(σ_a + σ_s)·Δs)`.
//!   *Where it differs from seed 003*: the seed dithers the ray starts with a 4×4 Bayer matrix and
//!   removes the pattern with a depth-aware bilateral blur. Bevy instead offsets each ray by
//!   interleaved gradient noise (`jitter_m` metres, a new pattern every frame, meant to be
//!   averaged by TAA) and has no blur pass; with `jitter_m = 0` (our default) it marches from the
//!   box surface without dithering, at full resolution, so banding is fought with more steps.
//! - **MSAA**: `Msaa` on the camera, 4× by default (seed 004). In Bevy 0.19 both the atmosphere's
//!   sky pass and the volumetric fog pass read a multisampled depth buffer (they have MSAA
//!   pipelines), so every effect works with every sample count; only TAA (which we do not use)
//!   would need MSAA off — which is why `Temporal` shadow filtering is flagged in the panel.
//! - **Exposure / tone mapping / bloom**: `Exposure` (EV100), `Tonemapping` and an optional
//!   `Bloom` on an HDR camera (the atmosphere requires `Hdr`; the camera keeps it either way so
//!   switching the sky does not change the image pipeline).

use bevy::camera::{Exposure, Hdr};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::light::atmosphere::{PhaseFunction, ScatteringMedium};
use bevy::light::{
    Atmosphere, AtmosphereEnvironmentMapLight, CascadeShadowConfigBuilder, DirectionalLightShadowMap, FogVolume,
    GeneratedEnvironmentMapLight, ShadowFilteringMethod, SunDisk, VolumetricFog, VolumetricLight,
};
use bevy::pbr::resources::{AtmosphereTextures, AtmosphereTransformsOffset, GpuAtmosphere};
use bevy::pbr::{AtmosphereMode, AtmosphereSettings, DistanceFog, ExtractedAtmosphere, FogFalloff};
use bevy::post_process::bloom::Bloom;
use bevy::prelude::*;
use bevy::render::renderer::RenderAdapterInfo;
use bevy::render::uniform::DynamicUniformIndex;
use bevy::render::{Render, RenderApp, RenderSystems};
use bevy_egui::egui;
use std::sync::atomic::{AtomicBool, Ordering};

use super::param_editor::edit_params;
use super::state::OrbitCamera;
use super::state::{EditorTerrain, Look};
use crate::editor::look::sky::{
    Antialias, CascadeFit, ShadowFilter, SkyParams, ToneMapping, aerial_view_reach, fit_cascades, sun_color,
    sun_direction,
};

/// Earth's radius and the top of its atmosphere, metres (Bevy's `Atmosphere::earth`).
const EARTH_RADIUS: f32 = 6_360_000.0;
const ATMOSPHERE_TOP: f32 = 6_460_000.0;
/// Side of the environment cubemap the atmosphere lights the terrain with (texels).
const SKY_LIGHT_SIZE: u32 = 128;
/// Set when the atmosphere was refused because the renderer is lavapipe (see [`atmosphere_allowed`]).
static ATMOSPHERE_REFUSED: AtomicBool = AtomicBool::new(false);

/// Whether Bevy's atmosphere may run on this adapter.
///
/// Mesa's lavapipe (llvmpipe 22.3, the software Vulkan of our CI and of machines without a GPU)
/// crashes with a segmentation fault in its command-execution thread within the first 5–15
/// frames whenever Bevy 0.19's atmosphere passes run — LUT or raymarched mode, with or without
/// MSAA and dual-source blending (probed with a bare Bevy app: a cube, a sun and `Atmosphere`).
/// On that driver the atmosphere therefore stays off (the panel says so) unless
/// `TALUS_FORCE_ATMOSPHERE=1` is set.
fn atmosphere_allowed(adapter: Option<&RenderAdapterInfo>) -> bool {
    let software = adapter.is_some_and(|a| a.driver.contains("llvmpipe") || a.name.contains("llvmpipe"));
    !software || std::env::var_os("TALUS_FORCE_ATMOSPHERE").is_some_and(|v| v == "1")
}

/// Ambient light colour without the atmosphere (a blue sky's).
const AMBIENT_TINT: Color = Color::srgb(0.75, 0.82, 1.0);

/// Sets up and drives the sun, shadows, sky, light shafts and the camera's image settings.
pub struct SkyPlugin;

impl Plugin for SkyPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(GlobalAmbientLight { color: AMBIENT_TINT, brightness: 0.0, ..default() })
            .insert_resource(ClearColor(Color::BLACK))
            .init_resource::<SkyState>()
            .add_systems(Startup, spawn_sun)
            .add_systems(Update, (apply_sky, fit_shadow_cascades, fit_aerial_view, place_fog_volume).chain());
        if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
            render_app.add_systems(Render, drop_stale_atmosphere.in_set(RenderSystems::Prepare));
        }
    }
}

/// Lets the atmosphere be switched off at run time.
///
/// Bevy 0.19 removes `ExtractedAtmosphere` from a camera's render entity when the `Atmosphere`
/// goes away, but not the uniforms, offsets and textures its prepare systems added; the sky and
/// LUT passes, which query those, would go on drawing the last sky (and fail validation once
/// the MSAA sample count changes: `render_sky_pipeline_4` in a 1-sample pass). Removing them
/// from views without an atmosphere makes both passes skip; Bevy adds them back when it returns.
fn drop_stale_atmosphere(
    mut commands: Commands,
    views: Query<Entity, (With<AtmosphereTransformsOffset>, Without<ExtractedAtmosphere>)>,
) {
    for view in &views {
        commands.entity(view).remove::<(
            AtmosphereTransformsOffset,
            GpuAtmosphere,
            DynamicUniformIndex<GpuAtmosphere>,
            AtmosphereTextures,
        )>();
    }
}

/// The sun.
#[derive(Component)]
pub struct Sun;

/// The entity carrying Bevy's `Atmosphere`.
#[derive(Component)]
pub struct SkyAtmosphere;

/// The fog box the light shafts are drawn in.
#[derive(Component)]
pub struct ShaftVolume;

/// What was last applied, so work happens only on change.
#[derive(Resource, Default)]
pub struct SkyState {
    /// The sanitised parameters last applied (`None`: nothing yet).
    applied: Option<SkyParams>,
    /// The camera entity they were applied to.
    camera: Option<Entity>,
    /// The scattering medium the atmosphere uses (edited in place).
    medium: Option<Handle<ScatteringMedium>>,
    /// Azimuth added by `spin_deg_per_s`, degrees.
    spin_deg: f32,
    /// Cascades last given to the sun.
    cascades: Option<CascadeFit>,
    /// Fog box last placed: `(centre, size)`.
    fog_box: Option<(Vec3, Vec3)>,
    /// The sky's environment light while switched off.
    parked_sky_light: Option<GeneratedEnvironmentMapLight>,
}

fn spawn_sun(mut commands: Commands) {
    commands.spawn((Sun, DirectionalLight { shadow_maps_enabled: true, ..default() }, Transform::default()));
}

/// The terrain's box in world coordinates: the map's extent, from below sea level (or the lowest
/// node) to the highest node.
fn terrain_box(terrain: &EditorTerrain) -> (Vec3, Vec3) {
    let m = terrain.map();
    let ex = (m.width.max(2) - 1) as f32 * m.cell_size;
    let ez = (m.height.max(2) - 1) as f32 * m.cell_size;
    let (lo, hi) = (terrain.stats.min.min(0.0), terrain.stats.max.max(0.0) + 1.0);
    let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    (Vec3::new(0.0, lo, 0.0), Vec3::new(ex, hi, ez))
}

fn srgb(c: [f32; 3]) -> Color {
    Color::srgb(c[0], c[1], c[2])
}

/// The Earth medium with the panel's Rayleigh/Mie scales and Mie asymmetry.
fn medium(p: &SkyParams) -> ScatteringMedium {
    let a = &p.atmosphere;
    let mut m = ScatteringMedium::earth(256, 256).with_label("talus_atmosphere");
    // Terms of `earth`: 0 Rayleigh, 1 Mie, 2 ozone.
    if let Some(r) = m.terms.get_mut(0) {
        r.scattering *= a.rayleigh_scale;
    }
    if let Some(mie) = m.terms.get_mut(1) {
        mie.scattering *= a.mie_scale;
        mie.absorption *= a.mie_scale;
        mie.phase = PhaseFunction::Mie { asymmetry: a.mie_asymmetry };
    }
    m
}

fn tonemapping(t: ToneMapping) -> Tonemapping {
    match t {
        ToneMapping::AgX => Tonemapping::AgX,
        ToneMapping::TonyMcMapface => Tonemapping::TonyMcMapface,
        ToneMapping::AcesFitted => Tonemapping::AcesFitted,
        ToneMapping::BlenderFilmic => Tonemapping::BlenderFilmic,
        ToneMapping::ReinhardLuminance => Tonemapping::ReinhardLuminance,
        ToneMapping::None => Tonemapping::None,
    }
}

fn msaa(a: Antialias) -> Msaa {
    match a {
        Antialias::Off => Msaa::Off,
        Antialias::X2 => Msaa::Sample2,
        Antialias::X4 => Msaa::Sample4,
        Antialias::X8 => Msaa::Sample8,
    }
}

fn shadow_filter(f: ShadowFilter) -> ShadowFilteringMethod {
    match f {
        ShadowFilter::Hardware2x2 => ShadowFilteringMethod::Hardware2x2,
        ShadowFilter::Gaussian => ShadowFilteringMethod::Gaussian,
        ShadowFilter::Temporal => ShadowFilteringMethod::Temporal,
    }
}

/// Applies the sky parameters when they (or the camera) change; turns the sun when it spins.
#[allow(clippy::too_many_arguments)]
fn apply_sky(
    mut commands: Commands,
    look: Res<Look>,
    time: Res<Time>,
    mut state: ResMut<SkyState>,
    cameras: Query<
        (Entity, Option<&mut GeneratedEnvironmentMapLight>, Has<AtmosphereEnvironmentMapLight>),
        With<OrbitCamera>,
    >,
    mut suns: Query<(Entity, &mut DirectionalLight, &mut Transform), With<Sun>>,
    atmospheres: Query<Entity, With<SkyAtmosphere>>,
    mut media: ResMut<Assets<ScatteringMedium>>,
    mut shadow_map: ResMut<DirectionalLightShadowMap>,
    mut clear: ResMut<ClearColor>,
    mut ambient: ResMut<GlobalAmbientLight>,
    adapter: Option<Res<RenderAdapterInfo>>,
) {
    let mut p = look.0.sky.sanitized();
    if p.atmosphere.enabled && !atmosphere_allowed(adapter.as_deref()) {
        p.atmosphere.enabled = false;
        if !ATMOSPHERE_REFUSED.swap(true, Ordering::Relaxed) {
            warn!(
                "the atmosphere is off: Bevy 0.19's atmosphere crashes this software renderer (set TALUS_FORCE_ATMOSPHERE=1 to try anyway)"
            );
        }
    }
    if p.sun.spin_deg_per_s != 0.0 {
        state.spin_deg = (state.spin_deg + p.sun.spin_deg_per_s * time.delta_secs()).rem_euclid(360.0);
    }
    // The sun turns every frame (cheap), everything else only on change.
    let azimuth = p.sun.azimuth_deg + state.spin_deg;
    let s = Vec3::from_array(sun_direction(azimuth, p.sun.elevation_deg));
    for (_, _, mut transform) in &mut suns {
        let rotation = Quat::from_rotation_arc(Vec3::NEG_Z, -s);
        if transform.rotation != rotation {
            transform.rotation = rotation;
        }
    }
    let mut cameras = cameras;
    let camera = cameras.iter().next().map(|(e, ..)| e);
    if state.applied.as_ref() == Some(&p) && state.camera == camera {
        return;
    }
    let old = state.applied.clone();
    let atmosphere_on = p.atmosphere.enabled;
    let sky_light_on = atmosphere_on && p.atmosphere.sky_light > 0.0;
    let shafts_on = p.light_shafts.enabled && p.shadows.enabled;

    // Sun.
    let colour =
        if atmosphere_on { p.sun.color } else { sun_color(p.sun.color, p.sun.elevation_deg, p.sun.low_sun_warmth) };
    for (entity, mut light, _) in &mut suns {
        light.color = srgb(colour);
        light.illuminance = p.sun.illuminance_lux;
        light.shadow_maps_enabled = p.shadows.enabled;
        light.shadow_depth_bias = p.shadows.depth_bias;
        light.shadow_normal_bias = p.shadows.normal_bias;
        let disk = SunDisk {
            angular_size: SunDisk::EARTH.angular_size * p.sun.disk_scale,
            intensity: if p.sun.disk_scale > 0.0 { 1.0 } else { 0.0 },
        };
        let mut e = commands.entity(entity);
        e.insert(disk);
        if shafts_on {
            e.insert(VolumetricLight);
        } else {
            e.remove::<VolumetricLight>();
        }
    }
    if shadow_map.size != p.shadows.map_size as usize {
        shadow_map.size = p.shadows.map_size as usize;
    }

    // Sky: the atmosphere entity exists only while it is on.
    let handle = state.medium.get_or_insert_with(|| media.add(medium(&p))).clone();
    if old.as_ref().is_none_or(|o| o.atmosphere != p.atmosphere)
        && let Some(mut m) = media.get_mut(&handle)
    {
        *m = medium(&p);
    }
    let respawn = old.as_ref().is_none_or(|o| o.atmosphere != p.atmosphere)
        || atmospheres.iter().count() != usize::from(atmosphere_on);
    if respawn {
        for e in &atmospheres {
            commands.entity(e).despawn();
        }
    }
    if respawn && atmosphere_on {
        let scale = 1.0 / p.atmosphere.aerial_scale;
        commands.spawn((
            SkyAtmosphere,
            Atmosphere {
                inner_radius: EARTH_RADIUS,
                outer_radius: ATMOSPHERE_TOP,
                ground_albedo: Vec3::splat(p.atmosphere.ground_albedo),
                medium: handle,
            },
            Transform::from_translation(Vec3::NEG_Y * EARTH_RADIUS * scale).with_scale(Vec3::splat(scale)),
        ));
    }
    clear.0 = if atmosphere_on { Color::BLACK } else { srgb(p.camera.sky_color) };
    ambient.color = AMBIENT_TINT;
    ambient.brightness = if sky_light_on { 0.0 } else { p.camera.ambient };

    // Camera.
    for (entity, generated, has_sky_light) in &mut cameras {
        let mut e = commands.entity(entity);
        e.insert((
            Hdr,
            msaa(p.camera.msaa),
            Exposure { ev100: p.camera.exposure_ev100 },
            tonemapping(p.camera.tonemapping),
            shadow_filter(p.shadows.filter),
            AtmosphereSettings {
                rendering_method: if p.atmosphere.raymarched {
                    AtmosphereMode::Raymarched
                } else {
                    AtmosphereMode::LookupTexture
                },
                ..default()
            },
        ));
        if atmosphere_on {
            e.remove::<DistanceFog>();
        } else {
            e.insert(DistanceFog {
                color: srgb(p.camera.sky_color),
                falloff: FogFalloff::Exponential {
                    density: crate::editor::view_extent::extinction(p.camera.visibility_km * 1000.0),
                },
                ..default()
            });
        }
        if p.camera.bloom > 0.0 {
            e.insert(Bloom { intensity: p.camera.bloom, ..Bloom::NATURAL });
        } else {
            e.remove::<Bloom>();
        }
        // Bevy turns `AtmosphereEnvironmentMapLight` into a cubemap plus a
        // `GeneratedEnvironmentMapLight` once; switching the sky light off parks the latter (so
        // its filtering stops) and switching on brings it back.
        if sky_light_on {
            match generated {
                Some(mut g) => g.intensity = p.atmosphere.sky_light,
                None => match state.parked_sky_light.take() {
                    Some(mut g) => {
                        g.intensity = p.atmosphere.sky_light;
                        e.insert(g);
                    }
                    None if !has_sky_light => {
                        e.insert(AtmosphereEnvironmentMapLight {
                            intensity: p.atmosphere.sky_light,
                            size: UVec2::splat(SKY_LIGHT_SIZE),
                            ..default()
                        });
                    }
                    None => {}
                },
            }
        } else if let Some(g) = generated {
            state.parked_sky_light = Some(g.clone());
            e.remove::<GeneratedEnvironmentMapLight>();
        }
        if shafts_on {
            let l = &p.light_shafts;
            e.insert(VolumetricFog {
                ambient_color: AMBIENT_TINT,
                ambient_intensity: l.ambient,
                jitter: l.jitter_m,
                step_count: l.steps,
            });
        } else {
            e.remove::<VolumetricFog>();
        }
    }
    // The fog box and the cascades follow from the new parameters.
    if old.as_ref().is_none_or(|o| o.light_shafts != p.light_shafts || o.shadows.enabled != p.shadows.enabled) {
        state.fog_box = None;
    }
    if old.as_ref().is_none_or(|o| o.shadows != p.shadows) {
        state.cascades = None;
    }
    state.applied = Some(p);
    state.camera = camera;
}

/// Refits the sun's cascades to the terrain seen from the camera when the view moved enough.
fn fit_shadow_cascades(
    mut commands: Commands,
    look: Res<Look>,
    terrain: Res<EditorTerrain>,
    mut state: ResMut<SkyState>,
    cameras: Query<&Transform, With<OrbitCamera>>,
    suns: Query<Entity, With<Sun>>,
) {
    let Some(camera) = cameras.iter().next() else { return };
    let p = look.0.sky.sanitized();
    let (lo, hi) = terrain_box(&terrain);
    let fit = fit_cascades(camera.translation.to_array(), lo.to_array(), hi.to_array(), &p.shadows);
    if state.cascades.is_some_and(|c| !c.differs(&fit)) {
        return;
    }
    // `fit_cascades` guarantees what the builder asserts (0 < min < first < max, n ≥ 1).
    let config = CascadeShadowConfigBuilder {
        num_cascades: fit.cascades as usize,
        minimum_distance: fit.minimum_distance,
        maximum_distance: fit.maximum_distance,
        first_cascade_far_bound: fit.first_far_bound,
        overlap_proportion: 0.2,
    }
    .build();
    for sun in &suns {
        commands.entity(sun).insert(config.clone());
    }
    state.cascades = Some(fit);
}

/// Stretches the atmosphere's aerial-perspective volume over the terrain seen from the camera
/// ([`aerial_view_reach`]), so a world farther than Bevy's 32 km is hazed to its far shore.
fn fit_aerial_view(
    look: Res<Look>,
    terrain: Res<EditorTerrain>,
    mut cameras: Query<(&Transform, &mut AtmosphereSettings), With<OrbitCamera>>,
) {
    let scale = look.0.sky.atmosphere.aerial_scale;
    let (lo, hi) = terrain_box(&terrain);
    for (camera, mut settings) in &mut cameras {
        let reach = aerial_view_reach(camera.translation.to_array(), lo.to_array(), hi.to_array(), scale);
        // Refitted when it moves by more than a slice's hundredth, not every frame the camera turns.
        if (settings.aerial_view_lut_max_distance - reach).abs() > reach * 3e-4 {
            settings.aerial_view_lut_max_distance = reach;
        }
    }
}

/// Keeps one fog box over the terrain while the light shafts are on.
fn place_fog_volume(
    mut commands: Commands,
    look: Res<Look>,
    terrain: Res<EditorTerrain>,
    mut state: ResMut<SkyState>,
    volumes: Query<Entity, With<ShaftVolume>>,
) {
    let p = look.0.sky.sanitized();
    let l = &p.light_shafts;
    let on = l.enabled && p.shadows.enabled;
    let (lo, hi) = terrain_box(&terrain);
    // The fog reaches one map width beyond each edge, so the surrounding sea is hazy too and the
    // box's far edge does not cut a hard line across the view.
    let side = (hi.x - lo.x).max(hi.z - lo.z);
    let margin = Vec3::new(side, 0.0, side);
    let (lo, hi) = (lo - margin, Vec3::new(hi.x, hi.y + l.headroom_m, hi.z) + margin);
    let placed = ((lo + hi) * 0.5, (hi - lo).max(Vec3::splat(1.0)));
    let count = volumes.iter().count();
    if (on && count == 1 && state.fog_box == Some(placed)) || (!on && count == 0) {
        return;
    }
    for e in &volumes {
        commands.entity(e).despawn();
    }
    state.fog_box = None;
    if on {
        commands.spawn((
            ShaftVolume,
            FogVolume {
                fog_color: srgb(l.color),
                density_factor: l.density,
                absorption: l.absorption,
                scattering: l.scattering,
                scattering_asymmetry: l.asymmetry,
                light_intensity: l.intensity,
                ..default()
            },
            Transform::from_translation(placed.0).with_scale(placed.1),
        ));
        state.fog_box = Some(placed);
    }
}

/// The panel's "Sky & light" section: quick sun sliders, every [`SkyParams`] field, presets
/// (`assets/presets/sky/`). Writes `look` only when something changed, so the drawing plugins
/// are not woken every frame.
pub fn sky_section(
    ui: &mut egui::Ui,
    look: &mut ResMut<Look>,
    preset_path: &mut String,
    preset_msg: &mut Option<(String, bool)>,
) -> bool {
    let mut p = look.0.sky.clone();
    let mut changed = false;
    egui::CollapsingHeader::new("Sky & light").default_open(false).show(ui, |ui| {
        egui::Grid::new("sky_quick").num_columns(2).show(ui, |ui| {
            ui.label("Sun azimuth").on_hover_text("Compass direction of the sun, degrees clockwise from north (−z)");
            changed |= ui.add(egui::Slider::new(&mut p.sun.azimuth_deg, 0.0..=360.0).suffix("°")).changed();
            ui.end_row();
            ui.label("Sun elevation").on_hover_text("Height of the sun above the horizon, degrees");
            changed |= ui.add(egui::Slider::new(&mut p.sun.elevation_deg, 0.0..=90.0).suffix("°")).changed();
            ui.end_row();
        });
        ui.horizontal(|ui| {
            changed |= ui.checkbox(&mut p.shadows.enabled, "Shadows").changed();
            changed |= ui.checkbox(&mut p.atmosphere.enabled, "Atmosphere").changed();
            changed |= ui.checkbox(&mut p.light_shafts.enabled, "Light shafts").changed();
        });
        if let Some(why) = p.conflicts() {
            ui.colored_label(egui::Color32::YELLOW, why);
        }
        if p.atmosphere.enabled && ATMOSPHERE_REFUSED.load(Ordering::Relaxed) {
            ui.colored_label(egui::Color32::YELLOW, "Atmosphere off: Bevy 0.19's atmosphere crashes this software renderer (Mesa lavapipe); plain sky and ambient light instead. TALUS_FORCE_ATMOSPHERE=1 tries anyway.");
        }
        ui.small("MSAA works with every effect here (Bevy 0.19's sky and fog passes read multisampled depth).");
        if crate::app::widgets::preset_row(ui, "sky", "", &mut p, preset_path, preset_msg) {
            changed = true;
        }
        crate::app::widgets::preset_message(ui, preset_msg);
        match edit_params(ui, "sky", "SkyParams", &mut p) {
            Ok(c) => changed |= c,
            Err(e) => *preset_msg = Some((e, true)),
        }
        if ui.small_button("Reset sky & light to defaults").clicked() {
            p = SkyParams::default();
            changed = true;
        }
    });
    if changed && p != look.0.sky {
        look.0.sky = p;
        return true;
    }
    false
}
