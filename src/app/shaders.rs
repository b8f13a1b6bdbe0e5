//! Every WGSL file in the top-level `shaders/` folder, embedded in the binary under a stable handle.
//!
//! **How to add a shader** (one line in your plugin's `build`):
//!
//! ```ignore
//! let handle = crate::register_shader!(app, "water.wgsl"); // embeds shaders/water.wgsl
//! // and wherever a `Handle<Shader>` / `ShaderRef` is needed, without access to the App:
//! fn fragment_shader() -> ShaderRef { ShaderRef::Handle(crate::app::shaders::shader_handle("water.wgsl")) }
//! ```
//!
//! The macro `include_str!`s `shaders/<name>` at compile time and puts it into `Assets<Shader>`
//! under [`shader_handle`]`(name)`, a `Handle::Uuid` derived from the name (FNV-1a), so the
//! installed binary works from any directory and never reads the folder. Shared WGSL lives in
//! `shaders/talus/*.wgsl` modules with `#define_import_path talus::<module>`; once registered
//! (the modules below are, by [`ShadersPlugin`]) any shader can `#import talus::noise::value2`.
//! Register your own module the same way: `crate::register_shader!(app, "talus/waves.wgsl")`.
//!
//! Hot reload (debug builds only): when the source folder `$CARGO_MANIFEST_DIR/shaders` exists at
//! run time, [`ShadersPlugin`] polls the registered files' modification times twice a second and
//! re-inserts a changed file under the same handle; Bevy's pipeline cache then recompiles every
//! pipeline that uses it (a broken edit logs the WGSL error and keeps the old pipeline). No Bevy
//! `file_watcher` feature is needed; release builds use only the embedded text.

use std::path::PathBuf;
use std::time::SystemTime;

use bevy::asset::uuid::Uuid;
use bevy::prelude::*;

/// Registers the shared `talus::…` WGSL modules and, in debug builds, reloads edited shaders.
pub struct ShadersPlugin;

impl Plugin for ShadersPlugin {
    fn build(&self, app: &mut App) {
        crate::register_shader!(app, "talus/noise.wgsl");
        crate::register_shader!(app, "talus/triplanar.wgsl");
        app.init_resource::<ShaderRegistry>().add_systems(PreStartup, insert_pending_shaders);
        if cfg!(debug_assertions) && source_dir().is_dir() {
            app.add_systems(Update, reload_edited_shaders);
        }
    }
}

/// Embeds `shaders/<name>` and registers it (see the [module docs](self)); returns its handle.
#[macro_export]
macro_rules! register_shader {
    ($app:expr, $name:literal) => {
        $crate::app::shaders::register(
            $app,
            $name,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $name)),
        )
    };
}

/// The stable handle of `shaders/<name>` (e.g. `"terrain.wgsl"`, `"talus/noise.wgsl"`).
pub const fn shader_handle(name: &str) -> Handle<Shader> {
    Handle::Uuid(Uuid::from_u128(name_hash(name)), std::marker::PhantomData)
}

/// FNV-1a (128-bit) of the name, so each file gets its own fixed UUID.
const fn name_hash(name: &str) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let bytes = name.as_bytes();
    let mut h = OFFSET;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u128;
        h = h.wrapping_mul(PRIME);
        i += 1;
    }
    h
}

/// The registered shaders: name, embedded text, and the modification time last loaded.
#[derive(Resource, Default)]
pub struct ShaderRegistry {
    entries: Vec<Entry>,
}

struct Entry {
    name: &'static str,
    source: &'static str,
    inserted: bool,
    modified: Option<SystemTime>,
}

impl ShaderRegistry {
    /// Names of every registered shader.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.name)
    }
}

/// Registers `source` as `shaders/<name>` (use [`register_shader!`](crate::register_shader)).
/// Safe to call from any plugin's `build`, in any order, more than once.
pub fn register(app: &mut App, name: &'static str, source: &'static str) -> Handle<Shader> {
    let handle = shader_handle(name);
    let inserted = match app.world_mut().get_resource_mut::<Assets<Shader>>() {
        Some(mut shaders) => shaders.insert(handle.id(), make_shader(name, source)).is_ok(),
        None => false, // no render plugin yet (or a headless test): inserted at PreStartup
    };
    let mut reg = app.world_mut().get_resource_or_init::<ShaderRegistry>();
    if let Some(e) = reg.entries.iter_mut().find(|e| e.name == name) {
        e.inserted |= inserted;
    } else {
        let modified = std::fs::metadata(source_dir().join(name)).and_then(|m| m.modified()).ok();
        reg.entries.push(Entry { name, source, inserted, modified });
    }
    handle
}

fn make_shader(name: &str, source: impl Into<std::borrow::Cow<'static, str>>) -> Shader {
    Shader::from_wgsl(source, format!("shaders/{name}"))
}

/// The source folder, for hot reload in debug builds.
fn source_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders"))
}

fn insert_pending_shaders(mut reg: ResMut<ShaderRegistry>, shaders: Option<ResMut<Assets<Shader>>>) {
    let Some(mut shaders) = shaders else { return };
    for e in reg.entries.iter_mut().filter(|e| !e.inserted) {
        e.inserted = shaders.insert(shader_handle(e.name).id(), make_shader(e.name, e.source)).is_ok();
    }
}

fn reload_edited_shaders(
    time: Res<Time<Real>>,
    mut last: Local<f32>,
    mut reg: ResMut<ShaderRegistry>,
    shaders: Option<ResMut<Assets<Shader>>>,
) {
    let now = time.elapsed_secs();
    if now - *last < 0.5 {
        return;
    }
    *last = now;
    let Some(mut shaders) = shaders else { return };
    let dir = source_dir();
    for e in reg.entries.iter_mut() {
        let path = dir.join(e.name);
        let Ok(modified) = std::fs::metadata(&path).and_then(|m| m.modified()) else { continue };
        if e.modified == Some(modified) {
            continue;
        }
        e.modified = Some(modified);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                info!("reloading {}", path.display());
                let _ = shaders.insert(shader_handle(e.name).id(), make_shader(e.name, text));
            }
            Err(err) => warn!("cannot read {}: {err}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_stable_and_distinct() {
        assert_eq!(shader_handle("terrain.wgsl"), shader_handle("terrain.wgsl"));
        assert_ne!(shader_handle("terrain.wgsl"), shader_handle("water.wgsl"));
        assert_ne!(shader_handle("talus/noise.wgsl"), shader_handle("talus/triplanar.wgsl"));
    }

    #[test]
    fn registering_without_a_renderer_defers_and_dedups() {
        let mut app = App::new();
        crate::register_shader!(&mut app, "talus/noise.wgsl");
        crate::register_shader!(&mut app, "talus/noise.wgsl");
        let reg = app.world().resource::<ShaderRegistry>();
        assert_eq!(reg.names().collect::<Vec<_>>(), vec!["talus/noise.wgsl"]);
    }

    #[test]
    fn every_wgsl_file_is_a_module_or_has_a_name() {
        // The shared modules declare their import path (others import them by it).
        for (name, src) in [
            ("talus/noise.wgsl", include_str!("../../shaders/talus/noise.wgsl")),
            ("talus/triplanar.wgsl", include_str!("../../shaders/talus/triplanar.wgsl")),
        ] {
            let module = name.trim_end_matches(".wgsl").replace('/', "::");
            assert!(src.contains(&format!("#define_import_path {module}")), "{name} must declare {module}");
        }
    }
}
