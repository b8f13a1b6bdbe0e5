//! The build loupe (issue #34, item 5): a square of the terrain, picked with the mouse, seen at
//! the build's resolution as the Build… dialog's settings would build it, in seconds, before
//! Build is pressed ([`crate::editor::build::loupe`]).
//!
//! Use: the Build… dialog's "Loupe" section has **Pick a spot** and the side in metres
//! ([`side_range`]: 32 m up to the map's extent or 2 km; [`DEFAULT_SIDE_M`] to start). Pick a
//! spot arms a pick mode (a white square follows the pointer over the terrain, the brush ring is
//! hidden); the next left click on the terrain sets the loupe's centre and starts it. That click
//! never paints: it is taken from the pointer before the brushes see it, as a press that began on
//! the panel is. Esc, a right click or the button again disarms. The spot is the point the
//! brushes' own ray pick finds under the pointer ([`super::view::pick`], window positions as
//! [`super::view`] defines them), so it is where the mouse is whatever the panel's width.
//!
//! The loupe runs on Bevy's `AsyncComputeTaskPool` inside a thread pool of all cores but one, as a
//! build in the Build dialog does; the frame reads its progress from a shared slot and never
//! waits. The "Loupe" window shows its progress and Cancel, then two hill-shaded images side by
//! side at one size ([`LoupeImages`], the hill shading of [`crate::core::io::preview`]): the
//! preview's window, one pixel a preview node, and the build's, one pixel a build node, with
//! their cells and sizes, the time it took, the area built and the loupe's notes. An edit of the
//! project, another size or mode in the dialog, or another side marks the shown loupe outdated
//! ([`LoupeKey`]); Refresh runs it again at the same spot. A cyan square draped on the terrain
//! marks the window shown (grey once outdated), an amber one the loupe running. Errors (a stale
//! layer, a build no finer than the preview, Re-run, a spot off the map) go to the status line and
//! the window; none panics.
//!
//! The generated base at the build's size is kept in one [`BaseCache`] between loupes, so a
//! second loupe of the same project and size costs only its window; it is dropped when the base
//! changes or the Build… dialog closes. A script's `Loupe((centre: (x, y), side: 256.0))` sends
//! the same [`EditorCommand::Loupe`] a pick sends and waits for the result ([`super::script`]);
//! the view report's `loupe` holds its figures ([`LoupeState::report`]).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use bevy_egui::input::EguiWantsInput;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::commands::EditorCommand;
use super::state::SimState;
use super::state::{BuildChoices, EditorTerrain, StatusLine};
use super::state::{Pointer, ReadPointer, ToolSystems};
use crate::editor::build::dialog::metres;
use crate::editor::build::loupe::{DEFAULT_SIDE_M, LoupeBase};
use crate::editor::build::loupe_view::{
    LoupeImages, LoupeKey, LoupeRequest, build_caption, centre_of, mode_label, outline, preview_caption, side_range,
    square_around, summary,
};
use crate::editor::build::{self, BaseCache, BuildError, BuildRequest, Loupe, LoupeSpec};
use crate::editor::job::simulation_threads;
use crate::editor::layers::BaseSource;

/// The loupe: picking its spot, running it, its window and its marker.
pub struct LoupePlugin;

impl Plugin for LoupePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<LoupeState>()
            .add_systems(Update, pick_spot.after(ReadPointer).before(ToolSystems))
            .add_systems(Update, (handle_loupe_commands, poll_loupe).chain())
            .add_systems(Update, draw_loupe_marker.after(ToolSystems))
            .add_systems(EguiPrimaryContextPass, draw_loupe_window);
    }
}

/// What a loupe's worker hands back: the loupe and its images.
type Outcome = Result<(Loupe, LoupeImages), BuildError>;

/// State shared with a loupe's worker.
struct Shared {
    progress: Mutex<f64>,
    cancel: AtomicBool,
    result: Mutex<Option<Outcome>>,
}

/// A loupe in flight.
struct Running {
    shared: Arc<Shared>,
    centre: [f32; 2],
    side: f32,
    key: LoupeKey,
    build_size: usize,
    started: Instant,
}

impl Drop for Running {
    /// A loupe nobody waits for any more (replaced, cancelled, the editor quits) stops.
    fn drop(&mut self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
    }
}

impl Running {
    fn progress(&self) -> f64 {
        *self.shared.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The loupe shown in the window.
struct Shown {
    loupe: Loupe,
    /// The spot picked (the window is placed around it, inside the map).
    centre: [f32; 2],
    key: LoupeKey,
    /// The images until they are uploaded as textures.
    images: Option<LoupeImages>,
    /// Build nodes a pixel of the build's image.
    build_step: usize,
    textures: Option<(egui::TextureHandle, egui::TextureHandle)>,
    /// Seconds from the pick to the result, as the user waited.
    wall_s: f64,
}

/// The loupe's state: the pick mode, the side, the loupe running and the one shown.
#[derive(Resource)]
pub struct LoupeState {
    /// The next left click on the terrain sets the loupe's centre.
    pub armed: bool,
    /// The side the next loupe has, metres.
    pub side_m: f32,
    running: Option<Running>,
    shown: Option<Shown>,
    /// The Loupe window is open.
    window: bool,
    /// The shown loupe no longer matches the project or the dialog's settings.
    outdated: bool,
    /// Why the last loupe failed, until the next one starts.
    pub last_error: Option<String>,
    /// The generated base kept between loupes of one project and size.
    cache: BaseCache,
    /// The base the cache was filled for.
    cache_base: Option<BaseSource>,
    /// Loupes started since start (a script waits for this to grow after `Loupe`).
    pub started: u64,
    /// Loupes that ended (shown, cancelled or failed) since start.
    pub finished: u64,
}

impl Default for LoupeState {
    fn default() -> Self {
        Self {
            armed: false,
            side_m: DEFAULT_SIDE_M,
            running: None,
            shown: None,
            window: false,
            outdated: false,
            last_error: None,
            cache: BaseCache::default(),
            cache_base: None,
            started: 0,
            finished: 0,
        }
    }
}

impl LoupeState {
    /// True while a loupe runs.
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    /// The spot of the loupe shown (metres from the map's first node), for the view report's
    /// projection of it into the window.
    pub fn shown_centre(&self) -> Option<[f32; 2]> {
        self.shown.as_ref().map(|s| s.centre)
    }

    /// What a script's view report says of the loupe: the pick mode, loupes started and ended,
    /// the last error, and the shown loupe's spot, window, sizes, cells, time and notes.
    pub fn report(&self) -> serde_json::Value {
        let shown = self.shown.as_ref().map(|s| {
            let l = &s.loupe;
            serde_json::json!({
                "centre_m": s.centre,
                "origin_m": l.origin_m(),
                "side_m": l.side_m(),
                "preview": [l.preview.width, l.preview.height],
                "preview_cell": l.preview.cell_size,
                "build": [l.build.width, l.build.height],
                "build_cell": l.build.cell_size,
                "build_origin": l.build_origin,
                "build_size": [l.build_size.0, l.build_size.1],
                "ratio": l.ratio,
                "area_nodes": [l.area_nodes.0, l.area_nodes.1],
                "margin_cells": l.margin_cells,
                "erosion": mode_label(l.erosion),
                "base": format!("{:?}", l.base),
                "seconds": l.seconds,
                "wall_s": s.wall_s,
                "notes": l.notes,
                "outdated": self.outdated,
            })
        });
        serde_json::json!({
            "armed": self.armed,
            "side_setting": self.side_m,
            "running": self.running(),
            "started": self.started,
            "finished": self.finished,
            "last_error": self.last_error,
            "window": self.window,
            "shown": shown,
        })
    }
}

/// The request the dialog would build with, after a loupe request's size and mode are set in it.
fn dialog_request(dialog: &mut BuildChoices, terrain: &EditorTerrain, r: Option<&LoupeRequest>) -> BuildRequest {
    let s = dialog.settings_for(terrain);
    if let Some(r) = r {
        if let Some(n) = r.size {
            s.set_size(n);
        }
        if let Some(m) = r.erosion {
            s.erosion = m;
        }
    }
    s.request()
}

/// Starts a loupe of `state.side_m` around `centre` for `req` on the background pool (a loupe
/// running is replaced).
fn start(
    state: &mut LoupeState,
    terrain: &EditorTerrain,
    sim: &SimState,
    req: &BuildRequest,
    centre: [f32; 2],
) -> Result<(), String> {
    if sim.running() {
        return Err("a simulation is running; wait for it to end or cancel it".into());
    }
    let stack = terrain.doc.stack().clone();
    let side = state.side_m;
    let spec = LoupeSpec::new(centre, side);
    let sea = build::sea_level(&stack);
    let whole = (terrain.stats.min, terrain.stats.max);
    let shared =
        Arc::new(Shared { progress: Mutex::new(0.0), cancel: AtomicBool::new(false), result: Mutex::new(None) });
    let worker = shared.clone();
    let (cache, request) = (state.cache.clone(), req.clone());
    if state.cache_base.as_ref() != Some(&stack.base.source) {
        state.cache.clear();
        state.cache_base = Some(stack.base.source.clone());
    }
    AsyncComputeTaskPool::get()
        .spawn(async move {
            let w = &worker;
            let progress = |f: f64| *w.progress.lock().unwrap_or_else(PoisonError::into_inner) = f;
            let go = || {
                let l = build::loupe_with(&stack, &request, &spec, &cache, &w.cancel, &progress)?;
                let images = LoupeImages::of(&l, sea, whole);
                Ok((l, images))
            };
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(simulation_threads())
                .thread_name(|i| format!("loupe-{i}"))
                .build();
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| match pool {
                Ok(pool) => pool.install(go),
                Err(_) => go(),
            }))
            .unwrap_or_else(|_| {
                Err(BuildError::Layer { layer: "the loupe".into(), msg: "it stopped on an internal error".into() })
            });
            *w.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        })
        .detach();
    let key = LoupeKey::new(terrain.doc.revision(), req, side);
    let build_size = req.size.unwrap_or(terrain.doc.stack().width());
    state.running = Some(Running { shared, centre, side, key, build_size, started: Instant::now() });
    state.started += 1;
    state.last_error = None;
    state.window = true;
    Ok(())
}

/// "x m, y m" of a spot.
fn spot(c: [f32; 2]) -> String {
    format!("({} m, {} m)", metres(c[0].round() as f64), metres(c[1].round() as f64))
}

fn handle_loupe_commands(
    mut cmds: MessageReader<EditorCommand>,
    mut state: ResMut<LoupeState>,
    mut dialog: ResMut<BuildChoices>,
    terrain: Res<EditorTerrain>,
    sim: Res<SimState>,
    mut status: ResMut<StatusLine>,
) {
    for cmd in cmds.read() {
        match cmd {
            EditorCommand::Loupe(r) => {
                // As a script's Build does, the loupe shows the dialog it takes its settings from.
                dialog.open = true;
                let req = dialog_request(&mut dialog, &terrain, Some(r));
                state.side_m = r.side;
                state.armed = false;
                let centre = [r.centre.0, r.centre.1];
                match start(&mut state, &terrain, &sim, &req, centre) {
                    Ok(()) => status.info(format!(
                        "Loupe: building {} m around {} as the build of {} nodes across would…",
                        metres(r.side as f64),
                        spot(centre),
                        req.size.unwrap_or(terrain.doc.stack().width())
                    )),
                    Err(e) => {
                        status.error(format!("Loupe: {e}"));
                        state.last_error = Some(e);
                    }
                }
            }
            EditorCommand::CancelLoupe if state.running.take().is_some() => {
                state.finished += 1;
                status.info("Loupe cancelled");
            }
            _ => {}
        }
    }
}

/// Takes a finished loupe, marks the shown one outdated when the project or the dialog's settings
/// moved on, and drops the kept base when it can no longer serve (the dialog closed, another
/// base).
fn poll_loupe(
    mut state: ResMut<LoupeState>,
    mut dialog: ResMut<BuildChoices>,
    terrain: Res<EditorTerrain>,
    mut status: ResMut<StatusLine>,
) {
    let state = &mut *state;
    if !dialog.open {
        state.armed = false;
    }
    let idle = state.running.is_none();
    let base_moved = state.cache_base.as_ref().is_some_and(|b| *b != terrain.doc.stack().base.source);
    if (base_moved || (!dialog.open && idle)) && !state.cache.is_empty() {
        state.cache.clear();
        state.cache_base = None;
    }
    if let Some(shown) = &state.shown {
        let key = LoupeKey::new(terrain.doc.revision(), &dialog_request(&mut dialog, &terrain, None), state.side_m);
        state.outdated = key != shown.key;
    }
    let Some(r) = &state.running else { return };
    let done = r.shared.result.lock().unwrap_or_else(PoisonError::into_inner).take();
    let Some(outcome) = done else { return };
    let Some(r) = state.running.take() else { return };
    state.finished += 1;
    let wall_s = r.started.elapsed().as_secs_f64();
    match outcome {
        Ok((loupe, images)) => {
            status.info(format!(
                "Loupe: {} m around {} at {} m cells ({}×{}) in {:.1} s",
                metres(r.side as f64),
                spot(r.centre),
                metres(loupe.build.cell_size as f64),
                loupe.build.width,
                loupe.build.height,
                loupe.seconds
            ));
            let build_step = images.build_step;
            state.shown = Some(Shown {
                loupe,
                centre: r.centre,
                key: r.key.clone(),
                images: Some(images),
                build_step,
                textures: None,
                wall_s,
            });
            state.outdated = false;
            state.window = true;
        }
        Err(BuildError::Cancelled) => status.info(format!("Loupe cancelled after {wall_s:.1} s")),
        Err(e) => {
            let e = e.to_string();
            status.error(format!("Loupe: {e}"));
            state.last_error = Some(e);
            state.window = true;
        }
    }
}

/// In pick mode, the first press of this frame on the terrain: a left click sets the loupe's
/// centre and starts it, a right click disarms; either way no brush sees the press (its samples
/// are disarmed, as a press that began on the panel). Esc disarms too.
#[allow(clippy::too_many_arguments)]
fn pick_spot(
    mut state: ResMut<LoupeState>,
    mut pointer: ResMut<Pointer>,
    keys: Res<ButtonInput<KeyCode>>,
    egui_input: Res<EguiWantsInput>,
    cams: Query<(&Camera, &GlobalTransform), With<super::state::OrbitCamera>>,
    terrain: Res<EditorTerrain>,
    mut out: MessageWriter<EditorCommand>,
    mut status: ResMut<StatusLine>,
) {
    if !state.armed {
        return;
    }
    if keys.just_pressed(KeyCode::Escape) && !egui_input.wants_any_keyboard_input() {
        state.armed = false;
        status.info("Loupe: no spot picked");
        return;
    }
    let alt = keys.any_pressed([KeyCode::AltLeft, KeyCode::AltRight]);
    // Alt+left orbits the camera; the middle button is the camera's.
    let press = pointer.samples.iter().find(|s| s.armed && ((s.held[0] && !alt) || s.held[1])).copied();
    let Some(press) = press else { return };
    for s in &mut pointer.samples {
        s.armed = false;
    }
    pointer.armed = false;
    if press.held[1] {
        state.armed = false;
        status.info("Loupe: no spot picked");
        return;
    }
    let Ok((camera, tf)) = cams.single() else { return };
    match super::view::pick(camera, tf, terrain.map(), press.pos) {
        Some(hit) => {
            state.armed = false;
            out.write(EditorCommand::Loupe(LoupeRequest::at(centre_of(hit.world), state.side_m)));
        }
        None => status.info("Loupe: no terrain under the pointer; click on the terrain (Esc: no spot)"),
    }
}

/// The Build… dialog's "Loupe" section: Pick a spot, the side, and what the pick mode or the last
/// loupe says.
pub(super) fn loupe_section(
    ui: &mut egui::Ui,
    state: &mut LoupeState,
    extent: [f32; 2],
    out: &mut MessageWriter<EditorCommand>,
) {
    ui.horizontal(|ui| {
        ui.strong("Loupe");
        let label = if state.armed { "Click the terrain… (Esc)" } else { "Pick a spot" };
        let b = ui.add(egui::Button::new(label).selected(state.armed)).on_hover_text(
            "See a square of the terrain at the build's resolution, as these settings build it, before pressing \
             Build: click here, then on the terrain",
        );
        super::widgets::hotspot(ui, "Loupe: Pick a spot", &b);
        if b.clicked() {
            state.armed = !state.armed;
        }
        ui.label("side");
        let (lo, hi) = side_range(extent[0], extent[1]);
        ui.add(egui::DragValue::new(&mut state.side_m).range(lo..=hi).speed(2.0).suffix(" m"))
            .on_hover_text("The square's side, metres");
        if let Some(r) = &state.running {
            ui.add(egui::Spinner::new());
            ui.small(format!("{:.0} %", 100.0 * r.progress()));
            if ui.button("Cancel").clicked() {
                out.write(EditorCommand::CancelLoupe);
            }
        } else if state.shown.is_some() && !state.window && ui.button("Show").clicked() {
            state.window = true;
        }
    });
    if state.armed {
        ui.small("Click a spot on the terrain: the loupe shows the square around it. Esc or a right click: no spot.");
    } else if let Some(e) = &state.last_error {
        ui.colored_label(egui::Color32::LIGHT_RED, format!("The loupe failed: {e}"));
    }
}

/// The Loupe window: progress and Cancel while it runs; the two images with their captions, the
/// summary and the notes; outdated with Refresh; the last error.
fn draw_loupe_window(
    mut contexts: EguiContexts,
    mut state: ResMut<LoupeState>,
    mut out: MessageWriter<EditorCommand>,
) -> Result {
    if !state.window {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?.clone();
    let state = &mut *state;
    if let Some(s) = &mut state.shown
        && let Some(img) = s.images.take()
    {
        let tex = |name: &str, i: &image::RgbImage, filter| {
            let c = egui::ColorImage::from_rgb([i.width() as usize, i.height() as usize], i.as_raw());
            ctx.load_texture(name, c, filter)
        };
        // The preview's nodes as blocks, the build's smooth.
        s.textures = Some((
            tex("talus_loupe_preview", &img.preview, egui::TextureOptions::NEAREST),
            tex("talus_loupe_build", &img.build, egui::TextureOptions::LINEAR),
        ));
    }
    let mut open = true;
    // In the window's bottom-right corner, as wide as the screen right of the panel allows (up to
    // images of about 540 px: a 256 m window built at 0.5 m cells about 1:1), over the Build…
    // dialog on a small screen (a click on the dialog brings it back to the front).
    let screen = ctx.content_rect();
    egui::Window::new("Loupe")
        .id(egui::Id::new("talus_loupe_window"))
        .open(&mut open)
        .collapsible(false)
        .resizable(true)
        .pivot(egui::Align2::RIGHT_BOTTOM)
        .default_pos([screen.max.x - 8.0, screen.max.y - 8.0])
        .default_width((screen.width() - 350.0).clamp(440.0, 1100.0))
        .show(&ctx, |ui| {
            if let Some(r) = &state.running {
                ui.label(format!(
                    "Building {} m around {} as the build of {} nodes across would…",
                    metres(r.side as f64),
                    spot(r.centre),
                    r.build_size
                ));
                ui.horizontal(|ui| {
                    ui.add(egui::ProgressBar::new(r.progress() as f32).desired_width(360.0).text(format!(
                        "{:.0} % · {:.1} s",
                        100.0 * r.progress(),
                        r.started.elapsed().as_secs_f64()
                    )));
                    if ui.button("Cancel").clicked() {
                        out.write(EditorCommand::CancelLoupe);
                    }
                });
                ui.separator();
            }
            if let Some(e) = &state.last_error {
                ui.colored_label(egui::Color32::LIGHT_RED, format!("The loupe failed: {e}"));
            }
            let Some(s) = &state.shown else {
                if state.running.is_none() && state.last_error.is_none() {
                    ui.label("No loupe yet: Pick a spot in File ▸ Build….");
                }
                return;
            };
            let l = &s.loupe;
            ui.label(format!(
                "{} m around {}, as the {}×{} build ({}) would build it",
                metres(l.side_m()[0] as f64),
                spot(s.centre),
                l.build_size.0,
                l.build_size.1,
                mode_label(l.erosion)
            ));
            if state.outdated {
                ui.horizontal(|ui| {
                    ui.colored_label(
                        egui::Color32::from_rgb(230, 180, 60),
                        "Outdated: the project or the build's settings changed since.",
                    );
                    let b = ui.add_enabled(state.running.is_none(), egui::Button::new("Refresh"));
                    if b.on_hover_text("Run the loupe again at the same spot").clicked() {
                        out.write(EditorCommand::Loupe(LoupeRequest::at(s.centre, state.side_m)));
                    }
                });
            }
            if let Some((p, b)) = &s.textures {
                let side = ((ui.available_width() - 12.0) / 2.0).clamp(160.0, 1024.0);
                ui.horizontal_top(|ui| {
                    for (t, caption) in [(p, preview_caption(l)), (b, build_caption(l, s.build_step))] {
                        ui.vertical(|ui| {
                            ui.add(egui::Image::from_texture(egui::load::SizedTexture::new(
                                t.id(),
                                egui::vec2(side, side * l.preview.height as f32 / l.preview.width.max(1) as f32),
                            )));
                            ui.small(caption);
                        });
                    }
                });
            }
            ui.small(summary(l));
            if s.wall_s > l.seconds + 0.5 {
                ui.small(format!("{:.1} s from the pick to the picture", s.wall_s));
            }
            if matches!(l.base, LoupeBase::Regenerated { cached: false }) {
                ui.small("The base at the build's size is kept: the next loupe of this size takes only its window.");
            }
            for n in &l.notes {
                ui.colored_label(egui::Color32::from_rgb(230, 180, 60), format!("Note: {n}"));
            }
        });
    if !open {
        // Closed: a loupe running stops; the one shown stays for the dialog's Show.
        state.window = false;
        state.last_error = None;
        if state.running.take().is_some() {
            state.finished += 1;
        }
    }
    Ok(())
}

/// The loupe's square draped on the terrain: white under the pointer in pick mode, amber while a
/// loupe runs, cyan for the one shown (grey once outdated).
fn draw_loupe_marker(state: Res<LoupeState>, pointer: Res<Pointer>, terrain: Res<EditorTerrain>, mut gizmos: Gizmos) {
    let map = terrain.map();
    let c = map.cell_size;
    let extent = [(map.width.max(1) - 1) as f32 * c, (map.height.max(1) - 1) as f32 * c];
    let mut squares: Vec<([f32; 2], f32, Color)> = Vec::new();
    if let Some(s) = &state.shown
        && state.window
    {
        let colour = if state.outdated { Color::srgb(0.6, 0.6, 0.6) } else { Color::srgb(0.3, 0.9, 1.0) };
        squares.push((s.loupe.origin_m(), s.loupe.side_m()[0], colour));
    }
    if let Some(r) = &state.running {
        let (o, side) = square_around(r.centre, r.side, extent);
        squares.push((o, side, Color::srgb(1.0, 0.65, 0.2)));
    }
    if state.armed
        && let Some(hit) = pointer.hit
    {
        let (o, side) = square_around(centre_of(hit.world), state.side_m, extent);
        squares.push((o, side, Color::WHITE));
    }
    for (o, side, colour) in squares {
        let lift = (side * 0.004).max(c * 0.1);
        let per_edge = ((side / c).ceil() as usize).clamp(8, 256);
        let pts = outline(o, side, per_edge).into_iter().map(|[x, z]| {
            let (gx, gz) = ((x / c).clamp(0.0, (map.width - 1) as f32), (z / c).clamp(0.0, (map.height - 1) as f32));
            Vec3::new(x, map.sample(gx, gz) + lift, z)
        });
        gizmos.linestrip(pts, colour);
    }
}
