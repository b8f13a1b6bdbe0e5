//! Unattended runs: with `TALUS_SCREENSHOT=path.png` set, the editor saves a frame after 60
//! frames and exits after 120, so the real window can be checked under Xvfb.

use std::path::PathBuf;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};

/// Frame at which the screenshot is requested.
const SHOT_FRAME: u32 = 60;
/// Frame at which the app exits (the screenshot needs a few frames to be read back).
const EXIT_FRAME: u32 = 120;

/// Takes the requested screenshot, then quits.
pub struct AutomationPlugin;

impl Plugin for AutomationPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ScreenshotRequest>().add_systems(Update, take_screenshot_and_exit);
    }
}

/// Where to save the automatic screenshot (`None`: an ordinary interactive run).
#[derive(Resource, Default, Clone, Debug)]
pub struct ScreenshotRequest {
    pub path: Option<PathBuf>,
    pub frames: u32,
}

impl ScreenshotRequest {
    /// Reads `TALUS_SCREENSHOT`; empty or unset means no screenshot.
    pub fn from_env() -> Self {
        let path = std::env::var_os("TALUS_SCREENSHOT").filter(|p| !p.is_empty()).map(PathBuf::from);
        Self { path, frames: 0 }
    }
}

fn take_screenshot_and_exit(mut commands: Commands, mut req: ResMut<ScreenshotRequest>, mut exit: MessageWriter<AppExit>) {
    let Some(path) = req.path.clone() else { return };
    req.frames += 1;
    if req.frames == SHOT_FRAME {
        commands.spawn(Screenshot::primary_window()).observe(save_to_disk(path));
    }
    if req.frames == EXIT_FRAME {
        exit.write(AppExit::Success);
    }
}
