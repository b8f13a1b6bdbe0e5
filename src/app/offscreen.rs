//! Rendering without presenting (`TALUS_OFFSCREEN=1`): the editor draws its 3-D view and its
//! panel into an image instead of the window's swapchain, and a script's screenshots read that
//! image.
//!
//! For machines whose GPU driver cannot present to the display the editor runs on. NVIDIA's
//! Vulkan driver (580.159, an H200 without a monitor, the window on Xvfb) crashes inside
//! `vkGetPhysicalDeviceSurfaceCapabilitiesKHR` for an Xvfb window, before the first frame. In
//! this mode the window still exists (its size, the script's input events, egui's context), but
//! it gets no surface: its raw handle is removed before the render world extracts windows, so
//! Bevy never asks the driver for a swapchain. Every camera that targets a window renders into
//! one image of the window's physical size instead. The renderer, the look and the simulation
//! run as they do in a window, so a script's frame report measures the GPU's frames (without
//! waiting for a display's refresh).
//!
//! The window is created unmapped (`visible: false`): Bevy's winit runner then updates without
//! waiting for redraw events, which a window without a surface never gets. Interactive use needs
//! a real window: nothing is shown on screen in this mode.

use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::window::{PrimaryWindow, RawHandleWrapper};

/// Whether the editor renders off screen (`TALUS_OFFSCREEN=1`).
pub fn enabled() -> bool {
    std::env::var_os("TALUS_OFFSCREEN").is_some_and(|v| v == "1")
}

/// The image every camera renders into in off-screen mode (present only in that mode).
#[derive(Resource, Clone, Debug)]
pub struct OffscreenTarget(pub Handle<Image>);

/// Adds off-screen rendering when [`enabled`].
pub struct OffscreenPlugin;

impl Plugin for OffscreenPlugin {
    fn build(&self, app: &mut App) {
        if !enabled() {
            return;
        }
        info!("off-screen rendering (TALUS_OFFSCREEN=1): the window gets no surface; frames go to an image");
        app.add_systems(First, (drop_window_surfaces, retarget_cameras).chain());
    }
}

/// Takes the raw window handles away, so the render world never creates a surface for a window.
fn drop_window_surfaces(mut commands: Commands, windows: Query<Entity, With<RawHandleWrapper>>) {
    for w in &windows {
        commands.entity(w).remove::<RawHandleWrapper>();
    }
}

/// Makes the target image (once, at the primary window's physical size) and points every camera
/// that renders to a window at it.
fn retarget_cameras(
    mut commands: Commands,
    target: Option<Res<OffscreenTarget>>,
    window: Query<&Window, With<PrimaryWindow>>,
    mut images: ResMut<Assets<Image>>,
    cams: Query<(Entity, Option<&RenderTarget>), With<Camera>>,
) {
    let handle = match target {
        Some(t) => t.0.clone(),
        None => {
            let Ok(w) = window.single() else { return };
            let (width, height) = (w.physical_width().max(1), w.physical_height().max(1));
            let handle = images.add(Image::new_target_texture(width, height, TextureFormat::Rgba8UnormSrgb, None));
            commands.insert_resource(OffscreenTarget(handle.clone()));
            handle
        }
    };
    for (cam, t) in &cams {
        if t.is_none_or(|t| matches!(t, RenderTarget::Window(_))) {
            commands.entity(cam).insert(RenderTarget::Image(handle.clone().into()));
        }
    }
}
