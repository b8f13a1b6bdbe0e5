//! The Generator section holds the document (issue #35): it shows the parameters the map's base
//! was made with, so Generate with nothing changed makes the same land bit for bit (the
//! document then records nothing, [`crate::editor::document::Document::set_base`]), and Live
//! never regenerates a different world under the user's layers.
//!
//! [`follow_document`] copies the document's base into the panel's generator when the base
//! changes: Open, Undo/Redo of a generation, New flat map, Import, a script's Generate, a finished
//! generation. It remembers the base it last followed ([`PanelBase`]) and does nothing while the
//! base stays that one, so an edit in the panel that has not been generated yet stays as typed,
//! frame after frame. It waits while a generation runs or waits, and while a Live edit is about
//! to be sent (the base is about to change again; the newest request wins). A finished generation
//! the panel itself asked for is not copied back: the user may have edited further while it ran,
//! and those edits stay.
//!
//! A base that is not a generator (a BHEF opened or a heightmap imported, a new flat map, an old
//! autosave) has no parameters to show. The panel keeps its generator (seed, base, stages: what an
//! artist would generate next) at the map's size and cell size, so Generate makes land over the
//! same extent and keeps the layers, and the section says that the base is heights from a file
//! (or with no generator) that Generate replaces ([`base_note`]).

use bevy::prelude::*;

use super::generation::GenState;
use super::state::EditorTerrain;
use super::state::PanelBase;
use super::state::PanelState;
use crate::core::generate::GenerateParams;
use crate::editor::layers::BaseSource;

impl PanelBase {
    fn is(&self, source: &BaseSource, size: (usize, usize), cell_size: f32) -> bool {
        self.size == size && self.cell_size.to_bits() == cell_size.to_bits() && self.source == *source
    }
}

/// The generator the panel shows for a base from `source` of `size` nodes at `cell_size`: a
/// generator's own parameters; otherwise `current` (the panel's) at the base's size and cell size.
pub fn generator_for(
    current: &GenerateParams,
    source: &BaseSource,
    size: (usize, usize),
    cell_size: f32,
) -> GenerateParams {
    match source {
        BaseSource::Generator(p) => p.clone(),
        BaseSource::File(_) | BaseSource::Heights => {
            GenerateParams { width: size.0, height: size.1, cell_size, ..current.clone() }
        }
    }
}

impl PanelState {
    /// Follows the document's base (see the module's doc): `generating` is true while a generation
    /// runs or waits. Returns true when the panel's generator was replaced.
    pub fn follow_base(&mut self, source: &BaseSource, size: (usize, usize), cell_size: f32, generating: bool) -> bool {
        if self.synced_base.as_ref().is_some_and(|b| b.is(source, size, cell_size)) {
            // The panel's request made the base as it was (Generate with nothing changed): done.
            if !generating && matches!(source, BaseSource::Generator(p) if self.gen_sent.as_ref() == Some(p)) {
                self.gen_sent = None;
            }
            return false;
        }
        if generating || (self.live && self.gen_edited_at.is_some()) {
            return false;
        }
        self.synced_base = Some(PanelBase { source: source.clone(), size, cell_size });
        let sent = self.gen_sent.take();
        if matches!(source, BaseSource::Generator(p) if sent.as_ref() == Some(p)) {
            // The panel's own request, done: the panel may hold newer edits.
            return false;
        }
        let next = generator_for(&self.generator, source, size, cell_size);
        self.gen_edited_at = None;
        self.gen_error = None;
        if next == self.generator {
            return false;
        }
        self.generator = next;
        true
    }
}

/// Copies the document's base into the Generator section when the base changes (see the
/// module's doc). Runs before the panel is drawn, so the frame shows the document as it is.
pub fn follow_document(terrain: Res<EditorTerrain>, gen_state: Res<GenState>, mut panel: ResMut<PanelState>) {
    let s = terrain.doc.stack();
    let (source, size, cell) = (&s.base.source, (s.width(), s.height()), s.cell_size());
    if panel.gen_sent.is_none() && panel.synced_base.as_ref().is_some_and(|b| b.is(source, size, cell)) {
        return;
    }
    panel.follow_base(source, size, cell, gen_state.busy());
}

/// A line under the Generator section's buttons saying how the parameters shown stand to the
/// map's base: `None` when they are the base's.
pub fn base_note(generator: &GenerateParams, source: &BaseSource) -> Option<String> {
    match source {
        BaseSource::Generator(p) if p == generator => None,
        BaseSource::Generator(_) => Some("Edited: Generate makes the land from these parameters".into()),
        BaseSource::File(f) => Some(format!(
            "The map's base is heights from {}: Generate replaces them with this generator",
            f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        )),
        BaseSource::Heights => Some(
            "The map's base is heights with no generator (a flat map): Generate replaces them with this generator"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::persist::Settings;

    fn params(seed: u64) -> GenerateParams {
        GenerateParams { width: 257, height: 257, cell_size: 8.0, seed, ..Default::default() }
    }

    /// The panel of a first start, with Live off (each test turns it on where it matters).
    fn panel() -> PanelState {
        PanelState { live: false, ..PanelState::from_settings(&Settings::default()) }
    }

    #[test]
    fn an_opened_generator_base_replaces_the_panels_generator() {
        let mut p = panel();
        p.gen_edited_at = Some(3.0);
        p.gen_error = Some("old".into());
        let base = BaseSource::Generator(params(23));
        assert!(p.follow_base(&base, (257, 257), 8.0, false));
        assert_eq!(p.generator, params(23));
        assert_eq!((p.gen_edited_at, p.gen_error.as_deref()), (None, None));
        // The same base next frame: an edit typed since stays.
        p.generator.seed = 99;
        assert!(!p.follow_base(&base, (257, 257), 8.0, false));
        assert_eq!(p.generator.seed, 99);
        // Undo to another base: followed.
        assert!(p.follow_base(&BaseSource::Generator(params(5)), (257, 257), 8.0, false));
        assert_eq!(p.generator, params(5));
    }

    #[test]
    fn it_waits_for_generations_and_live_edits() {
        let mut p = panel();
        let base = BaseSource::Generator(params(23));
        assert!(!p.follow_base(&base, (257, 257), 8.0, true), "a generation runs");
        p.live = true;
        p.gen_edited_at = Some(1.0);
        assert!(!p.follow_base(&base, (257, 257), 8.0, false), "a Live edit is about to go");
        // Live off: an edit never sent does not hold back a new document.
        p.live = false;
        assert!(p.follow_base(&base, (257, 257), 8.0, false));
        assert_eq!(p.generator.seed, 23);
    }

    #[test]
    fn the_panels_own_generation_keeps_edits_made_while_it_ran() {
        let mut p = panel();
        p.follow_base(&BaseSource::Generator(params(1)), (257, 257), 8.0, false);
        p.gen_sent = Some(params(2));
        p.generator = params(3);
        assert!(!p.follow_base(&BaseSource::Generator(params(2)), (257, 257), 8.0, false));
        assert_eq!(p.generator.seed, 3);
        // Undo, then Redo of that generation: both followed.
        assert!(p.follow_base(&BaseSource::Generator(params(1)), (257, 257), 8.0, false));
        assert!(p.follow_base(&BaseSource::Generator(params(2)), (257, 257), 8.0, false));
        assert_eq!(p.generator, params(2));
        // Generate with nothing changed leaves the base as it was: the request is done all the
        // same, and a later Redo to it is followed.
        p.gen_sent = Some(params(2));
        assert!(!p.follow_base(&BaseSource::Generator(params(2)), (257, 257), 8.0, true));
        assert!(p.gen_sent.is_some(), "still running");
        assert!(!p.follow_base(&BaseSource::Generator(params(2)), (257, 257), 8.0, false));
        assert_eq!(p.gen_sent, None);
    }

    #[test]
    fn imported_heights_keep_the_generator_at_their_size() {
        let mut p = panel();
        p.generator = GenerateParams { seed: 42, ..params(42) };
        assert!(p.follow_base(&BaseSource::File("dem.bhef".into()), (1025, 513), 2.5, false));
        assert_eq!(
            (p.generator.width, p.generator.height, p.generator.cell_size, p.generator.seed),
            (1025, 513, 2.5, 42)
        );
        // A new flat map of the same size and cell size is another base, but shows the same.
        assert!(!p.follow_base(&BaseSource::Heights, (1025, 513), 2.5, false));
        let note = base_note(&p.generator, &BaseSource::File("x/dem.bhef".into())).unwrap();
        assert!(note.contains("dem.bhef"), "{note}");
        assert_eq!(base_note(&params(3), &BaseSource::Generator(params(3))), None);
        assert!(base_note(&params(3), &BaseSource::Generator(params(4))).is_some());
    }
}
