//! The one way a build runs, whoever asks for it: [`prepare`] checks a [`BuildRequest`] against
//! the project once (the size, the tiling and the tiles' name, the output file or folder, the
//! memory the plan needs against what is available) and returns a [`PreparedBuild`];
//! [`PreparedBuild::run`] then re-runs the stale erosion layers at the preview size, builds the
//! stack from that plan and writes the target (atomically: a cancelled or failed build leaves
//! nothing behind).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::BuildError;
use super::output::{check_output, check_tile_dir};
use super::plan::{BuildPlan, PlanStep, available_memory, check_memory, plan};
use super::progress::{BuildProgress, Phase};
use super::request::{BuildContext, BuildRequest, Target};
use super::stack::{Built, build_stack};
use super::tileset::{self, SetInput};
use crate::core::io::interop::{self, ExportOptions, Format};
use crate::core::io::tiles::{Manifest, TileLayout};
use crate::editor::layers::LayerStack;

/// A request checked against its project and planned: what [`PreparedBuild::run`] builds.
#[derive(Clone, Debug)]
pub struct PreparedBuild {
    request: BuildRequest,
    plan: BuildPlan,
    ctx: BuildContext,
    /// The file's format (a file target).
    format: Option<Format>,
    /// The tiles' name (a tile set).
    name: String,
}

/// What a finished build wrote.
#[derive(Clone, Debug, PartialEq)]
pub enum Written {
    /// Nothing (a build kept in memory).
    Nothing,
    /// One file.
    File {
        /// The file.
        path: PathBuf,
        /// What the export did (an integer format's range, Unreal's Z scale).
        report: interop::ExportReport,
    },
    /// A tile set.
    Tiles {
        /// The folder.
        dir: PathBuf,
        /// The tiling.
        layout: TileLayout,
        /// Files written: tiles, maps and the manifest.
        files: usize,
        /// The manifest written.
        manifest: Box<Manifest>,
    },
}

/// A finished build: the map and what was written.
#[derive(Clone, Debug)]
pub struct Finished {
    /// The build.
    pub built: Built,
    /// Erosion layers that were stale and re-ran at the preview size first, by name.
    pub rerun: Vec<String>,
    /// What was written.
    pub written: Written,
}

/// Checks `req` against `stack` and plans it: the size, the tiling and the tiles' name, the
/// output (the file's format and folder, or the tile set's folder), and the plan's memory against
/// what the system has available. Reads the disk (the output's folder) but writes nothing.
pub fn prepare(stack: &LayerStack, req: &BuildRequest, ctx: &BuildContext) -> Result<PreparedBuild, BuildError> {
    let (format, name) = check_target(req, ctx)?;
    let plan = plan(stack, req)?;
    check_memory(&plan, available_memory())?;
    Ok(PreparedBuild { request: req.clone(), plan, ctx: ctx.clone(), format, name })
}

/// Checks what `req` writes (without the project): the file's format and folder, or the tile set's
/// name and folder; the file's format and the tiles' name.
pub fn check_target(req: &BuildRequest, ctx: &BuildContext) -> Result<(Option<Format>, String), BuildError> {
    match &req.target {
        Target::File(f) => Ok((Some(check_output(&f.path)?), String::new())),
        Target::Tiles(t) => {
            let name = t.name.clone().unwrap_or_else(|| ctx.name.clone());
            tileset::check_name(&name).map_err(BuildError::Tiles)?;
            check_tile_dir(&t.dir, t.replace)?;
            Ok((None, name))
        }
        Target::Memory => Ok((None, String::new())),
    }
}

impl PreparedBuild {
    /// The plan the build follows.
    pub fn plan(&self) -> &BuildPlan {
        &self.plan
    }

    /// The request it was prepared from.
    pub fn request(&self) -> &BuildRequest {
        &self.request
    }

    /// Runs the build (see the module doc): the stale erosion layers of `stack` re-run at the
    /// preview size first (`stack` keeps their new results), then the stack at the build's size,
    /// then the target written. `progress` hears of every phase; `cancel` stops it anywhere before
    /// the final write of a file, with [`BuildError::Cancelled`] and nothing written.
    pub fn run(
        &self,
        stack: &mut LayerStack,
        cancel: &AtomicBool,
        progress: &(dyn Fn(BuildProgress) + Sync),
    ) -> Result<Finished, BuildError> {
        let stopped = || cancel.load(Ordering::Relaxed);
        let mut rerun = Vec::new();
        let done = stack
            .rebuild(cancel, |l| {
                progress(BuildProgress { phase: Phase::Stale { layer: l.name.clone() }, fraction: 0.0 });
                rerun.push(l.name.clone());
            })
            .map_err(BuildError::StaleRerun)?;
        if !done || stopped() {
            return Err(BuildError::Cancelled);
        }
        // The whole build in stages of equal weight: the base, each layer, then the target's own
        // (the flow map and the tiles of a tile set).
        let layers = self.plan.steps.iter().filter(|s| matches!(s, PlanStep::Layer { .. })).count();
        let out_stages = match &self.request.target {
            Target::Tiles(_) => 1 + usize::from(self.plan.has_flow()),
            _ => 0,
        };
        let stages = (1 + layers + out_stages) as f64;
        let at = |k: usize, within: f64, phase: Phase| {
            progress(BuildProgress { phase, fraction: (k as f64 + within.clamp(0.0, 1.0)) / stages })
        };
        let built = build_stack(stack, &self.plan, self.request.keep_input, &self.request.refine, cancel, &at)?;
        if stopped() {
            return Err(BuildError::Cancelled);
        }
        let written = match &self.request.target {
            Target::Memory => Written::Nothing,
            Target::File(f) => {
                at(1 + layers, 0.0, Phase::Writing { path: f.path.clone() });
                let export =
                    ExportOptions { unreal: f.unreal_range, source: self.ctx.source.clone(), ..Default::default() };
                debug_assert!(self.format.is_some());
                let report = interop::save(&f.path, &built.map, &export)
                    .map_err(|e| BuildError::Write { path: f.path.clone(), msg: e.to_string() })?;
                Written::File { path: f.path.clone(), report }
            }
            Target::Tiles(t) => {
                let layout = self.plan.layout.ok_or_else(|| BuildError::Tiles("no tiling was planned".into()))?;
                let first = 1 + layers;
                let report = |phase: Phase, within: f64| {
                    let k = if matches!(phase, Phase::Flow { .. }) { first } else { first + out_stages - 1 };
                    at(k, within, phase)
                };
                let inp = SetInput {
                    built: &built,
                    target: t,
                    layout,
                    name: &self.name,
                    sea_level: super::sea_level(stack),
                    ctx: &self.ctx,
                };
                let manifest = tileset::write_set(&inp, cancel, &report)?;
                let files = manifest.tile_files.len() * (1 + t.sorted_maps().len()) + 1;
                Written::Tiles { dir: t.dir.clone(), layout, files, manifest: Box::new(manifest) }
            }
        };
        progress(BuildProgress { phase: Phase::Done, fraction: 1.0 });
        Ok(Finished { built, rerun, written })
    }
}

/// Builds the request `req` of `stack` and returns the build, whatever its target ([`prepare`]
/// with an empty context, then [`PreparedBuild::run`] on a copy of the stack): for tests,
/// benchmarks and measurements, which mostly ask for [`Target::Memory`].
pub fn build_in_memory(
    stack: &LayerStack,
    req: &BuildRequest,
    cancel: &AtomicBool,
    progress: &(dyn Fn(BuildProgress) + Sync),
) -> Result<Built, BuildError> {
    let prepared = prepare(stack, req, &BuildContext::default())?;
    Ok(prepared.run(&mut stack.clone(), cancel, progress)?.built)
}
