//! The per-node data the look draws besides the heights: what the last (or running) simulation
//! reported — water depth and velocity, flow, eroded and deposited totals — plus the hardness map.
//!
//! [`SimFields`] is filled from each simulation update (the job is asked for its fields and maps
//! when it starts) and kept after the run ends, so the material keeps showing fresh deposits and
//! wet channels and the overlays keep their data. It is cleared when the map is replaced by one of
//! another size. `revision` grows with every change, so drawing plugins re-upload only then.

use bevy::prelude::*;

use super::state::EditorTerrain;
use super::state::SimState;

/// Keeps [`SimFields`] in step with the running simulation.
pub struct FieldsPlugin;

impl Plugin for FieldsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<SimFields>()
            .add_systems(PreStartup, create_overlay_texture)
            .add_systems(Update, drop_fields_of_another_size);
    }
}

/// The data overlay drawn over the terrain: an RGBA image with one texel per node (texel `(x, y)`
/// is node `(x, y)`; alpha is the overlay's own coverage), blended over the lit terrain colour at
/// `opacity` (0 = hidden). The overlay plugin fills it; the terrain material samples it.
#[derive(Resource, Clone, Debug)]
pub struct OverlayTexture {
    /// The Rgba8UnormSrgb image, one texel per node; the overlay plugin replaces its contents under
    /// this same handle. A clear 1 × 1 texel until the first overlay is built.
    pub image: Handle<Image>,
    /// 0 ..= 1; 0 hides the overlay.
    pub opacity: f32,
}

fn create_overlay_texture(mut commands: Commands, mut images: ResMut<Assets<Image>>) {
    use bevy::asset::RenderAssetUsages;
    use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
    let image = Image::new_fill(
        Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
        TextureDimension::D2,
        &[0, 0, 0, 0],
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::default(),
    );
    commands.insert_resource(OverlayTexture { image: images.add(image), opacity: 0.0 });
}

/// One per-node map of [`SimFields`], shared: the view's background builds (the material's data
/// texels) read it without copying it in the frame.
pub type Field = std::sync::Arc<Vec<f32>>;

/// The newest per-node data, row-major like the heightmap (`width × height` values each).
#[derive(Resource, Clone, Debug, Default)]
pub struct SimFields {
    /// Grows with every change.
    pub revision: u64,
    /// Nodes along x of every field below.
    pub width: usize,
    /// Nodes along y of every field below.
    pub height: usize,
    /// Water depth, metres (pipe model).
    pub water: Option<Field>,
    /// Water velocity `(u, v)`, metres per second (pipe model).
    pub velocity: Option<Vec<[f32; 2]>>,
    /// Flow: particles crossing each node (droplet/snowball) or drainage area (stream power).
    pub flow: Option<Field>,
    /// Height removed at each node by the last run, metres (≥ 0).
    pub eroded: Option<Field>,
    /// Height added at each node by the last run, metres (≥ 0).
    pub deposited: Option<Field>,
    /// Erodibility multiplier the last run used (1 = normal, 0 = unerodible).
    pub hardness: Option<Vec<f32>>,
}

impl SimFields {
    /// Takes a simulation update's fields and maps (those it carries).
    pub fn take_update(
        &mut self,
        width: usize,
        height: usize,
        fields: Option<crate::core::erosion::Fields>,
        maps: Option<crate::core::erosion::ErosionMaps>,
    ) {
        if fields.is_none() && maps.is_none() {
            return;
        }
        if (width, height) != (self.width, self.height) {
            *self = Self { revision: self.revision, width, height, ..Default::default() };
        }
        if let Some(f) = fields {
            self.water = f.water.map(Field::new);
            self.velocity = f.velocity;
            self.flow = f.flow.map(Field::new);
        }
        if let Some(m) = maps {
            self.eroded = Some(Field::new(m.eroded));
            self.deposited = Some(Field::new(m.deposited));
        }
        self.revision += 1;
    }

    /// Forgets everything (the map was replaced by one of another size).
    pub fn clear(&mut self) {
        *self = Self { revision: self.revision + 1, ..Default::default() };
    }

    /// True when the fields describe a `width × height` map.
    pub fn fits(&self, width: usize, height: usize) -> bool {
        (self.width, self.height) == (width, height)
    }
}

fn drop_fields_of_another_size(terrain: Res<EditorTerrain>, sim: Res<SimState>, mut fields: ResMut<SimFields>) {
    if !terrain.is_changed() || sim.running() {
        return;
    }
    let m = terrain.map();
    if fields.width != 0 && !fields.fits(m.width, m.height) {
        fields.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::erosion::{ErosionMaps, Fields};

    #[test]
    fn updates_replace_and_size_changes_clear() {
        let mut f = SimFields::default();
        f.take_update(
            2,
            2,
            Some(Fields { water: Some(vec![1.0; 4]), ..Default::default() }),
            Some(ErosionMaps::new(4)),
        );
        assert_eq!(f.revision, 1);
        assert!(f.water.is_some() && f.eroded.is_some());
        f.take_update(2, 2, None, None);
        assert_eq!(f.revision, 1, "an update without data changes nothing");
        f.take_update(3, 1, None, Some(ErosionMaps::new(3)));
        assert!(f.water.is_none(), "another size drops the old fields");
        assert_eq!(f.eroded.as_ref().map(|v| v.len()), Some(3));
        f.clear();
        assert!(f.eroded.is_none() && f.revision == 3);
    }
}
