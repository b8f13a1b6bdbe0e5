//! Terrain QA in the editor: after every simulation run the result is analysed the way
//! `talus analyze` does ([`crate::core::analysis`]: slope–area concavity θ with its fit,
//! single-node pits and spikes on land, grid anisotropy, drainage density, and, against the map
//! the run started from, land lost to the sea and the anisotropy of the change), and the panel's
//! top row shows the figures with a one-click fix of the pits and spikes (raise each single-node
//! pit to its lowest neighbour, lower each spike to its highest; one undo step). "Analyse" runs
//! the same on the current map at any time (without the comparison). The analysis runs on the
//! frame, so runs on maps over [`AUTO_MAX_NODES`] are analysed only on request.
//!
//! The sea level is the document's (the water plane's, as the simulation gets it); the tunables
//! are [`AnalysisParams::default`] (channels from 10 000 m², pits and spikes beyond 0.5 m).

use bevy::prelude::*;
use bevy_egui::egui;

use super::commands::EditorCommand;
use super::state::SimState;
use super::state::{EditorTerrain, Look, StatusLine};
use crate::core::Heightmap;
use crate::core::analysis::{self, AnalysisParams, TerrainReport};

/// Analyses finished runs and applies the QA fix.
pub struct QaPlugin;

impl Plugin for QaPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<QaState>().add_systems(Update, (analyse_finished_runs, apply_qa_commands));
    }
}

/// Largest map (nodes) analysed automatically when a run ends: the analysis runs on the frame
/// (about 0.3 s at 513², growing a little faster than the node count), so larger maps are
/// analysed only when asked.
pub const AUTO_MAX_NODES: usize = 1025 * 1025;

/// The newest analysis, and the map revision it describes.
#[derive(Resource, Default)]
pub struct QaState {
    /// The last analysis; `None` until a map is analysed.
    pub report: Option<TerrainReport>,
    /// `EditorTerrain::doc.revision()` of the analysed map: the figures are shown only while the
    /// map is unchanged since.
    pub revision: u64,
    /// `SimState::started` of the run last analysed.
    analysed_run: u64,
}

fn sea(look: Option<&Look>) -> f32 {
    look.map(super::state::sea_level).unwrap_or(0.0)
}

/// Analyses `map` (against `before` when given) with the editor's tunables.
pub fn analyse(map: &Heightmap, before: Option<&Heightmap>, sea: f32) -> Result<TerrainReport, String> {
    let p = AnalysisParams::default();
    match before {
        Some(b) => analysis::compare(b, map, sea, &p),
        None => analysis::analyze(map, sea, &p),
    }
    .map_err(|e| e.to_string())
}

/// Raises single-node pits and lowers single-node spikes on land (the QA fix); returns the nodes
/// changed and the largest change (m).
pub fn fix_pits_and_spikes(map: &mut Heightmap, sea: f32) -> (usize, f32) {
    let tol = AnalysisParams::default().pit_tolerance_m;
    let a = analysis::raise_pits(map, sea, tol);
    let b = analysis::remove_spikes(map, sea, tol);
    (a.changed + b.changed, a.max_change_m.max(b.max_change_m))
}

/// When a run has just ended (its result is the current map), analyses it against the map it
/// started from.
fn analyse_finished_runs(
    mut sim: ResMut<SimState>,
    terrain: Res<EditorTerrain>,
    look: Option<Res<Look>>,
    mut qa: ResMut<QaState>,
    mut status: ResMut<StatusLine>,
) {
    if sim.running() || sim.started == qa.analysed_run {
        return;
    }
    qa.analysed_run = sim.started;
    let Some(before) = sim.last_base.take() else { return };
    if terrain.doc.map().len() > AUTO_MAX_NODES {
        // Too slow to run between two frames; the panel offers "Analyse terrain" instead.
        return;
    }
    match analyse(terrain.doc.map(), Some(&before), sea(look.as_deref())) {
        Ok(r) => {
            qa.report = Some(r);
            qa.revision = terrain.doc.revision();
        }
        Err(e) => status.error(format!("Terrain QA: {e}")),
    }
}

fn apply_qa_commands(
    mut cmds: MessageReader<EditorCommand>,
    mut terrain: ResMut<EditorTerrain>,
    sim: Res<SimState>,
    look: Option<Res<Look>>,
    mut qa: ResMut<QaState>,
    mut status: ResMut<StatusLine>,
) {
    let sea = sea(look.as_deref());
    for cmd in cmds.read() {
        match cmd {
            EditorCommand::Analyse => match analyse(terrain.doc.map(), None, sea) {
                Ok(r) => {
                    status.info(format!("Terrain QA: {}", summary(&r)));
                    qa.report = Some(r);
                    qa.revision = terrain.doc.revision();
                }
                Err(e) => status.error(format!("Terrain QA: {e}")),
            },
            EditorCommand::FixPitsSpikes => {
                if sim.running() {
                    status.error("Fix pits and spikes: a simulation is running; cancel it or wait for it to finish");
                    continue;
                }
                let mut map = terrain.doc.map().clone();
                let (changed, max) = fix_pits_and_spikes(&mut map, sea);
                if changed == 0 {
                    status.info("Fix pits and spikes: none on land");
                    continue;
                }
                let change = match terrain.doc.apply_edit(map, "Fix pits and spikes") {
                    Ok(c) => c,
                    Err(e) => {
                        status.error(format!("Fix pits and spikes: {e}"));
                        continue;
                    }
                };
                terrain.refresh(change);
                status.info(format!("Fixed pits and spikes: {changed} nodes moved, at most {max:.2} m"));
                if let Ok(r) = analyse(terrain.doc.map(), None, sea) {
                    qa.report = Some(r);
                    qa.revision = terrain.doc.revision();
                }
            }
            _ => {}
        }
    }
}

/// One line of the figures.
pub fn summary(r: &TerrainReport) -> String {
    let mut s = match &r.concavity {
        Some(c) => format!("θ {:.2} (r² {:.2})", c.theta, c.r2),
        None => "θ –".to_owned(),
    };
    s += &format!(" · pits {} · spikes {}", r.pits, r.spikes);
    if let Some(a) = &r.anisotropy {
        s += &format!(" · grid {:.2}/{:.2}", a.axis_ratio, a.diagonal_ratio);
    }
    if let Some(c) = &r.comparison {
        s += &format!(" · land lost {:.2} %", 100.0 * c.land_lost_fraction);
    }
    s
}

/// The QA row of the panel's top bar: the figures of the current map (when analysed) with the fix,
/// or the Analyse button.
pub fn qa_row(ui: &mut egui::Ui, qa: &QaState, revision: u64, running: bool, out: &mut MessageWriter<EditorCommand>) {
    let current = qa.report.as_ref().filter(|_| qa.revision == revision);
    ui.horizontal_wrapped(|ui| {
        match current {
            Some(r) => {
                let tip = format!(
                    "Terrain QA of the current map (as `talus analyze`):\n\
                     θ: slope–area concavity of the channels (real rivers 0.4–0.5; r² of the fit)\n\
                     pits / spikes: land nodes more than 0.5 m below / above all 8 neighbours\n\
                     grid: spectral power along the axes / diagonals over other directions (1 = none preferred)\n\
                     drainage density {:.2} km/km²{}",
                    r.drainage_density_per_m * 1000.0,
                    r.comparison.as_ref().map(|c| format!("\nland lost: land before the run now at or below the sea; mean |Δh| {:.2} m", c.mean_abs_change_m)).unwrap_or_default()
                );
                ui.small(summary(r)).on_hover_text(tip);
                let n = r.pits + r.spikes;
                let fix = ui.add_enabled(n > 0 && !running, egui::Button::new("Fix pits & spikes").small());
                if fix.on_hover_text("Raise each single-node pit to its lowest neighbour and lower each spike to its highest (one undo step)").clicked() {
                    out.write(EditorCommand::FixPitsSpikes);
                }
            }
            None => {
                if ui.add_enabled(!running, egui::Button::new("Analyse terrain").small()).on_hover_text("Concavity, pits and spikes, grid anisotropy, drainage density (as `talus analyze`); the window waits for it (about a second per million nodes)").clicked() {
                    out.write(EditorCommand::Analyse);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fix_removes_single_node_pits_and_spikes_and_nothing_else() {
        let mut map = Heightmap::filled(9, 9, 2.0, 10.0).unwrap();
        for (i, v) in map.data.iter_mut().enumerate() {
            *v += (i % 9) as f32 * 0.1;
        }
        map.set(3, 3, 5.0);
        map.set(6, 5, 20.0);
        let r = analyse(&map, None, 0.0).unwrap();
        assert_eq!((r.pits, r.spikes), (1, 1));
        let before = map.clone();
        let (changed, max) = fix_pits_and_spikes(&mut map, 0.0);
        assert_eq!(changed, 2);
        assert!(max > 4.0);
        let r = analyse(&map, None, 0.0).unwrap();
        assert_eq!((r.pits, r.spikes), (0, 0));
        let moved = map.data.iter().zip(&before.data).filter(|(a, b)| a != b).count();
        assert_eq!(moved, 2);
        assert!(summary(&r).contains("pits 0 · spikes 0"));
    }
}
