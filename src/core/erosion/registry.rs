//! The model registry (issue #14 item 2): every erosion model declared once, in [`models!`] at
//! the end of this file, and read by everyone who needs to know which models exist.
//!
//! One entry gives the model's
//!
//! | what | used by |
//! |---|---|
//! | `ModelParams` variant and parameter struct (the serde tag of presets, project files and `--params`) | everything |
//! | CPU job type (its `new(terrain, params, inputs)`) | [`super::build`] |
//! | `name` (the variant's name) | the CLI's summary line and `--report` |
//! | `cli` | `talus erode --model` (values and help) |
//! | `key` | preset file names (`assets/presets/erode/*_<key>.ron`), the panel's widget ids |
//! | `label` | the editor's Model menu |
//! | `params_type` | the editor's parameter schema |
//! | `undo` | the undo step of a run (and the editor's status line) |
//! | `work` field, `unit`, `particles` | `--steps`/`--droplets`, a continuation's work left ([`ModelParams::set_work`]), progress |
//! | `flow_unit` | the overlay's flow legend |
//! | `editor_default` | the parameters the panel starts with |
//! | `build_bytes_per_node` | a build's memory estimate for a re-run of the model ([`ModelParams::build_bytes_per_node`]) |
//! | `to_grid` | a build's re-run at another resolution: per-node inputs and grid-unit fields brought to the build's grid ([`ModelParams::to_grid`]) |
//!
//! The `work` field is a count of time steps or iterations for the grid models and a density
//! per km² for the particle models (droplets, snowballs), so a project erodes the same land at
//! any resolution; [`ModelParams::work`] and [`ModelParams::set_work`] speak in units of work on
//! a given map ([`MapSize`]), which is what progress, timelines, continuations and
//! `--droplets` count. [`ModelParams::upgrade_units`] converts what version-1 files left in grid
//! units (see [`crate::core::units`]), with the map they were made for.
//!
//! What a build needs to know of a model is in its entry too, and no entry may leave it out (the
//! macro's pattern requires both fields, so a missing one is a compile error at the entry, not a
//! catch-all that is silently wrong):
//!
//! - `build_bytes_per_node: |p| …`, a `fn(&Params) -> u64`: the bytes per node the model's CPU
//!   job allocates besides its heightmap (working arrays, its own copies of the hardness and
//!   steering maps, the scratch of its peak step), at their most for `p`. The comment beside it
//!   lists the arrays counted; keep it in step with the job.
//! - `to_grid: path`, a `fn(&mut Params, &GridChange)`: how the parameters move to another grid
//!   over the same extent ([`GridChange`]: the two sizes, the ratio, and
//!   [`GridChange::resample`], the bounded resampling of a per-node map). A model with per-node
//!   inputs (a rain map, an uplift map) resamples them, one with a field in grid units (the pipe
//!   model's own `cell_size`) scales it; a model in world units only says so with
//!   [`no_grid_inputs`].
//!
//! and the macro derives from it the [`ModelParams`] enum, the [`MODELS`] table (in menu order)
//! and the `match`es over `ModelParams` the rest of the crate would otherwise write again:
//! [`ModelParams::entry`], [`ModelParams::set_work`], the CPU build, [`ModelParams::visit_mut`],
//! which hands the typed parameter struct to generic code (the panel's editor and preset row),
//! [`ModelParams::build_bytes_per_node`] and [`ModelParams::to_grid`].
//!
//! ## The GPU half
//! `core` must not see `crate::gpu`, so a model's optional GPU version is declared next to the
//! GPU code: `crate::backend` holds a table of GPU builds keyed by the registry's `name`. A model
//! without a line there runs on the CPU whatever the backend (with a note).
//!
//! ## Adding a model
//! 1. Write its module `erosion/<model>/` (parameters with `Default` and `validate`, declared
//!    with `params!`; a job implementing [`super::Simulation`] whose `new(terrain, params,
//!    inputs)` starts as the others do: a particle model with `setup::prepare_particle_job`, a
//!    grid model with `setup::erodibility` for its hardness and steering checks).
//! 2. Add `pub mod <model>;` in `erosion/mod.rs`.
//! 3. Add one entry to [`models!`] below, every field stated: among them `build_bytes_per_node`
//!    (count the job's per-node arrays) and `to_grid` (its per-node inputs, or
//!    [`no_grid_inputs`]).
//!
//! The CLI, the panel, presets, the backend and builds pick it up. Outside the registry, the
//! model still needs its work rate in `editor::erosion_brush::dab_work` (the compiler asks), its
//! parameter type in the editor's schema and its row in `editor::build::parity_table` (tests
//! ask); the README's Layout section lists every step. A GPU version adds its module under
//! `src/gpu` and a line in the backend's GPU table.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use std::sync::atomic::AtomicBool;

use super::refine::{BringUp, Level, RefineParams, Refiner, run_own_job};
use super::{JobError, JobInputs, Simulation, droplet, pipe, snowball, stream_power, thermal};
use crate::core::heightmap::Heightmap;
use crate::core::units::Legacy;

/// What the registry knows about one model (see the module doc for who reads which field).
#[derive(Debug)]
pub struct ModelEntry {
    /// The `ModelParams` variant, e.g. `"StreamPower"`: the serde tag, and how the CLI names the
    /// model in its summary line and report.
    pub name: &'static str,
    /// The value of `talus erode --model`, e.g. `"stream-power"`.
    pub cli: &'static str,
    /// Snake-case key: shipped presets for the model have it in their file name; the panel's
    /// widget ids.
    pub key: &'static str,
    /// The name in the editor's Model menu, e.g. `"Stream power"`.
    pub label: &'static str,
    /// The parameter struct's type name, e.g. `"StreamPowerParams"` (the editor's schema).
    pub params_type: &'static str,
    /// The undo label of a run, e.g. `"Stream-power erosion"`.
    pub undo: &'static str,
    /// The parameter holding the amount of work (`--steps`/`--droplets` set it).
    pub work_field: &'static str,
    /// What one unit of [`super::Progress`] is, e.g. `"droplets"`, `"time steps"`.
    pub unit: &'static str,
    /// A particle model (`--droplets`) rather than a grid model (`--steps`).
    pub particles: bool,
    /// What the model's [`super::Fields::flow`] counts, for the overlay's legend.
    pub flow_unit: &'static str,
    /// The parameters' `Default`.
    pub default: fn() -> ModelParams,
    /// The parameters the editor's panel starts with.
    pub editor_default: fn() -> ModelParams,
    /// Reads the model's own parameter struct from RON (`--params` and presets may hold either
    /// that or a whole [`ModelParams`]).
    pub params_from_ron: fn(&str) -> Result<ModelParams, ron::error::SpannedError>,
}

impl ModelEntry {
    /// This entry's index in [`MODELS`] (the menu order).
    pub fn index(&'static self) -> usize {
        MODELS.iter().position(|e| std::ptr::eq(e, self)).unwrap_or(0)
    }
}

/// The entry whose [`ModelEntry::cli`] is `cli`.
pub fn by_cli(cli: &str) -> Option<&'static ModelEntry> {
    MODELS.iter().find(|e| e.cli == cli)
}

/// The entry whose [`ModelEntry::name`] is `name`.
pub fn by_name(name: &str) -> Option<&'static ModelEntry> {
    MODELS.iter().find(|e| e.name == name)
}

/// What a model's parameter struct is: what generic code (the panel's editor, presets) may rely
/// on. Every parameter struct is one.
pub trait ModelParamsType:
    Serialize + DeserializeOwned + Clone + std::fmt::Debug + Default + PartialEq + Send + Sync + 'static
{
}
impl<T: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Default + PartialEq + Send + Sync + 'static>
    ModelParamsType for T
{
}

/// Generic code run on the typed parameters inside a [`ModelParams`] ([`ModelParams::visit_mut`]).
pub trait ParamsVisitor {
    /// What the visit returns.
    type Out;
    /// Called with the model's entry and its parameter struct.
    fn visit<P: ModelParamsType>(self, entry: &'static ModelEntry, params: &mut P) -> Self::Out;
}

pub use crate::core::units::{GridChange, MapSize};

/// The `to_grid` of a model whose parameters are all in world units, with nothing per node:
/// nothing to bring to a new grid. A registry entry names it to say so.
pub fn no_grid_inputs<P>(_: &mut P, _: &GridChange) {}

/// The type of an amount-of-work field: a count (time steps, iterations) set from a `u64`
/// saturating, or a density per km² (particles) that is a count on a given map.
trait Work: Copy {
    fn from_count(n: u64, map: MapSize) -> Self;
    fn count(self, map: MapSize) -> u64;
}
impl Work for u32 {
    fn from_count(n: u64, _: MapSize) -> Self {
        n.min(u32::MAX as u64) as u32
    }
    fn count(self, _: MapSize) -> u64 {
        self as u64
    }
}
impl Work for u64 {
    fn from_count(n: u64, _: MapSize) -> Self {
        n
    }
    fn count(self, _: MapSize) -> u64 {
        self
    }
}
/// Particles per km².
impl Work for f64 {
    fn from_count(n: u64, map: MapSize) -> Self {
        map.per_km2(n)
    }
    fn count(self, map: MapSize) -> u64 {
        map.count(self)
    }
}

/// Declares the models: see the module doc. Each entry is
/// `/// doc` `Variant(module::Params, module::Job) { work: field, <ModelEntry fields>,
/// build_bytes_per_node: fn(&Params) -> u64, to_grid: fn(&mut Params, &GridChange),
/// refine: Option<Refiner<Params>> }`, every
/// field required and in this order; the doc comment becomes the `ModelParams` variant's.
macro_rules! models {
    ($(
        $(#[doc = $doc:literal])+
        $variant:ident($module:ident :: $params:ident, $job:ident) {
            work: $work:ident,
            cli: $cli:literal,
            key: $key:literal,
            label: $label:literal,
            undo: $undo:literal,
            unit: $unit:literal,
            particles: $particles:literal,
            flow_unit: $flow_unit:literal,
            editor_default: $editor_default:expr,
            build_bytes_per_node: $bytes:expr,
            to_grid: $to_grid:expr,
            refine: $refine:expr $(,)?
        }
    )*) => {
        /// Which model, with its parameters: what presets store and what the CLI/editor build jobs from.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub enum ModelParams {
            $( $(#[doc = $doc])+ $variant($module::$params), )*
        }

        /// Every model, in menu order (the order of [`ModelParams`]'s variants).
        pub static MODELS: &[ModelEntry] = &[
            $(
                ModelEntry {
                    name: stringify!($variant),
                    cli: $cli,
                    key: $key,
                    label: $label,
                    params_type: stringify!($params),
                    undo: $undo,
                    work_field: stringify!($work),
                    unit: $unit,
                    particles: $particles,
                    flow_unit: $flow_unit,
                    default: || ModelParams::$variant(Default::default()),
                    editor_default: || ModelParams::$variant($editor_default),
                    params_from_ron: |text| ron::from_str::<$module::$params>(text).map(ModelParams::$variant),
                },
            )*
        ];

        impl ModelParams {
            /// The model's index in [`MODELS`].
            pub fn index(&self) -> usize {
                let mut i = 0usize;
                $(
                    if let ModelParams::$variant(_) = self {
                        return i;
                    }
                    i += 1;
                )*
                unreachable!("{i} models, all listed")
            }

            /// The model's registry entry.
            pub fn entry(&self) -> &'static ModelEntry {
                &MODELS[self.index()]
            }

            /// The amount of work asked for on `map` (droplets, snowballs, time steps,
            /// iterations): what a job built on that map does ([`super::Progress::total`]).
            /// Version-1 values still present count as made for `map`.
            pub fn work(&self, map: MapSize) -> u64 {
                if self.has_legacy() {
                    let mut p = self.clone();
                    p.upgrade_units(map);
                    return p.work(map);
                }
                match self {
                    $( ModelParams::$variant(p) => Work::count(p.$work, map), )*
                }
            }

            /// Sets the amount of work to `n` units on `map`: a step or iteration count
            /// (saturating where the field is narrower than `u64`), or for a particle model the
            /// density that makes `n` particles on that map. Version-1 values still present are
            /// converted for `map` first (so an old count cannot override the new work).
            pub fn set_work(&mut self, n: u64, map: MapSize) {
                self.upgrade_units(map);
                match self {
                    $( ModelParams::$variant(p) => p.$work = Work::from_count(n, map), )*
                }
            }

            /// Converts what version-1 files left in grid units (see [`crate::core::units`]) for
            /// `map`, the map those values were made for.
            pub fn upgrade_units(&mut self, map: MapSize) {
                match self {
                    $( ModelParams::$variant(p) => p.upgrade_units(map), )*
                }
            }

            /// Whether version-1 values are still to convert ([`Self::upgrade_units`]).
            pub fn has_legacy(&self) -> bool {
                match self {
                    $( ModelParams::$variant(p) => Legacy::has_legacy(p), )*
                }
            }

            /// Runs `v` on the typed parameters.
            pub fn visit_mut<V: ParamsVisitor>(&mut self, v: V) -> V::Out {
                let e = self.entry();
                match self {
                    $( ModelParams::$variant(p) => v.visit(e, p), )*
                }
            }

            /// Bytes per node a CPU job of these parameters allocates besides its heightmap
            /// (its working arrays, its own copies of the hardness and steering maps, the
            /// scratch of its peak step), at their most for these parameters: what a build that
            /// re-runs the model adds to its memory estimate per build node. The entry's
            /// `build_bytes_per_node`.
            pub fn build_bytes_per_node(&self) -> u64 {
                match self {
                    $(
                        ModelParams::$variant(p) => {
                            let bytes: fn(&$module::$params) -> u64 = $bytes;
                            bytes(p)
                        }
                    )*
                }
            }

            /// Brings the parameters to another grid over the same extent (a build re-running
            /// the model at another resolution): per-node inputs resampled to the new grid,
            /// fields in grid units scaled. Parameters in world units stay as they are. The
            /// entry's `to_grid`.
            pub fn to_grid(&mut self, change: &GridChange) {
                match self {
                    $(
                        ModelParams::$variant(p) => {
                            let to_grid: fn(&mut $module::$params, &GridChange) = $to_grid;
                            to_grid(p, change)
                        }
                    )*
                }
            }

            /// Whether the model has a detail pass for a build that erodes on its way up (the
            /// entry's `refine`; without one a build brings the model's result up as Upsample
            /// does).
            pub fn has_refine(&self) -> bool {
                match self {
                    $(
                        ModelParams::$variant(_) => {
                            let r: Option<Refiner<$module::$params>> = $refine;
                            r.is_some()
                        }
                    )*
                }
            }

            /// Bytes per node the model's detail pass holds at its peak besides the level's map
            /// and drainage; `None` without a pass.
            pub fn refine_bytes_per_node(&self, settings: &RefineParams) -> Option<u64> {
                match self {
                    $(
                        ModelParams::$variant(p) => {
                            let r: Option<Refiner<$module::$params>> = $refine;
                            r.map(|r| (r.bytes_per_node)(p, settings))
                        }
                    )*
                }
            }

            /// How the model's change is brought up from one level of a build's ladder to the next
            /// (`Smooth` for a model without a pass, as Upsample brings it).
            pub fn refine_bring_up(&self) -> BringUp {
                match self {
                    $(
                        ModelParams::$variant(_) => {
                            let r: Option<Refiner<$module::$params>> = $refine;
                            r.map_or(BringUp::Smooth, |r| r.bring_up)
                        }
                    )*
                }
            }

            /// The state the model's detail passes start from on the preview's result `map`
            /// (its drainage, m²; empty when it keeps none or has no pass).
            pub fn refine_start(&self, map: &Heightmap, inputs: &JobInputs) -> Result<Vec<f32>, JobError> {
                match self {
                    $(
                        ModelParams::$variant(p) => {
                            let r: Option<Refiner<$module::$params>> = $refine;
                            r.map_or(Ok(Vec::new()), |r| (r.start)(p, map, inputs))
                        }
                    )*
                }
            }

            /// The job a level's detail pass runs when the pass is the model's own job run
            /// briefly ([`Refiner::own_job`]): its parameters and inputs; `None` for other passes,
            /// a model without one, or a level where the pass does nothing.
            pub fn refine_own_job(
                &self,
                settings: &RefineParams,
                level: &Level,
                inputs: &JobInputs,
            ) -> Option<(ModelParams, JobInputs)> {
                match self {
                    $(
                        ModelParams::$variant(p) => {
                            let r: Option<Refiner<$module::$params>> = $refine;
                            r.and_then(|r| r.own_job).and_then(|job| job(p, settings, level, inputs))
                        }
                    )*
                }
            }

            /// Runs the model's detail pass on one level of a build's ladder; `false` when it has
            /// none (the level is left as brought up).
            pub fn refine_pass(
                &self,
                settings: &RefineParams,
                level: &mut Level,
                inputs: &JobInputs,
                cancel: &AtomicBool,
            ) -> Result<bool, JobError> {
                match self {
                    $(
                        ModelParams::$variant(p) => {
                            let r: Option<Refiner<$module::$params>> = $refine;
                            match r {
                                Some(Refiner { pass: Some(pass), .. }) => {
                                    pass(p, settings, level, inputs, cancel).map(|()| true)
                                }
                                Some(Refiner { own_job: Some(job), .. }) => {
                                    run_own_job(job, p, settings, level, inputs, cancel).map(|()| true)
                                }
                                _ => Ok(false),
                            }
                        }
                    )*
                }
            }

            /// The CPU job (after [`super::build`]'s checks of the terrain and inputs).
            pub(super) fn build_cpu(
                &self,
                terrain: Heightmap,
                inputs: JobInputs,
            ) -> Result<Box<dyn Simulation>, JobError> {
                Ok(match self {
                    $( ModelParams::$variant(p) => Box::new($module::$job::new(terrain, p.clone(), inputs)?), )*
                })
            }
        }
    };
}

models! {
    /// Particle hydraulic erosion: droplets that pick up and drop sediment as they run downhill.
    Droplet(droplet::DropletParams, DropletJob) {
        work: droplets_per_km2,
        cli: "droplet",
        key: "droplet",
        label: "Droplets",
        undo: "Droplet erosion",
        unit: "droplets",
        particles: true,
        flow_unit: "particles",
        // Enough to see: 200 000 droplets on the default island (513², 2 m cells, 1.048576 km²).
        editor_default: droplet::DropletParams { droplets_per_km2: 190_734.863_281_25, ..Default::default() },
        // Five padded planes (heights, eroded, deposited, flow, flow volume) and the hardness
        // plane (24); a steering mask's spawn weights and sink plane (8); with a sea, the copies
        // of the two book planes the end's relaxation makes (8). The change blur adds two
        // scratch book planes, the batch's start heights and, at its peak, the change and the
        // blur's buffer instead of those copies (12 more). It was 24, the planes alone;
        // tests/erosion_memory.rs measures 34, and 46 with the blur.
        build_bytes_per_node: |p| if p.blur_m.is_some_and(|b| b > 0.0) { 52 } else { 40 },
        // World units only (a density per km², metres): nothing per node.
        to_grid: no_grid_inputs,
        refine: Some(droplet::refine::REFINER),
    }
    /// Snowball erosion: cheap particles that roll down the surface normal, eroding behind them.
    Snowball(snowball::SnowballParams, SnowballJob) {
        work: snowballs_per_km2,
        cli: "snowball",
        key: "snowball",
        label: "Snowball",
        undo: "Snowball erosion",
        unit: "snowballs",
        particles: true,
        flow_unit: "particles",
        editor_default: Default::default(),
        // The two book maps and the flow map (12), its hardness (4), a steering mask's spawn
        // weights and sink weights (8), and the final blur's copy of the heights with the blur's
        // buffer (8). It was 24, which left out the blur (on by default) and the steering maps;
        // measured: 24 (the caller's maps it copied are gone by the blur).
        build_bytes_per_node: |_| 32,
        // World units only (a density per km², metres): nothing per node.
        to_grid: no_grid_inputs,
        refine: Some(snowball::refine::REFINER),
    }
    /// Grid hydraulic erosion with the virtual-pipe shallow-water model.
    Pipe(pipe::PipeParams, PipeJob) {
        work: steps,
        cli: "pipe",
        key: "pipe",
        label: "Pipe model",
        undo: "Pipe-model erosion",
        unit: "time steps",
        particles: false,
        flow_unit: "particles",
        editor_default: Default::default(),
        // Water, sediment, four outflow fluxes, two velocities, the sediment after erosion,
        // MacCormack's field and the second terrain buffer (44); the per-node water input, the
        // hardness, a sink mask's node list (12); the two book maps (8). Interleaved thermal
        // adds its hardness copy and second buffer (8), a rain map its copy in the job's
        // parameters (4). Measured: 53, and 69 with a rain map, thermal and MacCormack.
        build_bytes_per_node: |p| 64 + if p.thermal.is_some() { 8 } else { 0 } + if p.rain_map.is_some() { 4 } else { 0 },
        // Its own `cell_size` shrinks with the cells; `rain_map` is resampled.
        to_grid: pipe::PipeParams::to_grid,
        // No detail pass yet: a refined build brings its result up as Upsample does.
        refine: None,
    }
    /// Thermal erosion: loose material slides down slopes steeper than the talus angle.
    Thermal(thermal::ThermalParams, ThermalJob) {
        work: iterations,
        cli: "thermal",
        key: "thermal",
        label: "Thermal",
        undo: "Thermal erosion",
        unit: "iterations",
        particles: false,
        flow_unit: "particles",
        editor_default: Default::default(),
        // The hardness (the kernel's copy, or a steering mask's product), the second height
        // buffer and the two book maps. It was 24, 8 more than the job holds; measured: 16.
        build_bytes_per_node: |_| 16,
        // Angles and a rate per iteration: nothing per node.
        to_grid: no_grid_inputs,
        refine: Some(thermal::refine::REFINER),
    }
    /// Stream-power landscape evolution: river incision with uplift and optional hillslope diffusion.
    StreamPower(stream_power::StreamPowerParams, StreamPowerJob) {
        work: steps,
        cli: "stream-power",
        key: "stream_power",
        label: "Stream power",
        undo: "Stream-power erosion",
        unit: "time steps",
        particles: false,
        flow_unit: "m² drained",
        editor_default: Default::default(),
        // D8 routing: receivers, stack, areas, lake levels, trap index, flood marks, segments,
        // the stack rebuilt around lakes, lake nodes and four byte flags (44); the sediment flux
        // and, with a steering mask, the D8 area in f64 (16), the two book maps (8), uplift
        // rates, hardness, a mask's runoff (12), the sea mask (1): 81, and 96 with room for the
        // stack's vectors to grow. MFD routing (the default) adds a record per node of the area,
        // eight 16-bit edge weights and three flags (32), the area, its power `A^m` and the runoff
        // in f64 (24), the order and the walk (8), the edge kinds and masks (2): 66. Diffusion (on
        // by default) adds its two face conductances, its transposed buffer, two outlet copies
        // and the heights' copy (18), and the saved heights of sea nodes (up to 8). It was 96 for
        // every run; measured: 66 with D8 and no diffusion, 137 with the defaults (before the
        // record and `A^m`, which add 7).
        build_bytes_per_node: |p| {
            96 + if p.routing == stream_power::FlowMethod::Mfd { 66 } else { 0 } + if p.diffusion > 0.0 { 26 } else { 0 }
        },
        // `uplift_map` is resampled.
        to_grid: stream_power::StreamPowerParams::to_grid,
        refine: Some(stream_power::refine::REFINER),
    }
}

/// The model Simulate runs on a first start and `talus erode` without `--model`: stream power,
/// whose defaults keep the island's outline, cut a dendritic, concave river network with the sea
/// as base level and leave no single-node pits or spikes (the README's per-model table), in a few
/// seconds at 513².
pub fn default_model() -> &'static ModelEntry {
    by_name("StreamPower").unwrap_or(&MODELS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_unique_and_in_variant_order() {
        for (i, e) in MODELS.iter().enumerate() {
            let p = (e.default)();
            assert_eq!(p.index(), i);
            assert_eq!(p.entry().name, e.name);
            assert_eq!((e.editor_default)().index(), i);
            assert_eq!(e.index(), i);
            assert_eq!(by_cli(e.cli).map(|x| x.name), Some(e.name));
            assert!(MODELS.iter().filter(|o| o.key == e.key || o.label == e.label || o.undo == e.undo).count() == 1);
            // The serde tag is the name.
            assert!(ron::to_string(&p).unwrap().starts_with(e.name), "{}", e.name);
        }
        assert_eq!(default_model().cli, "stream-power");
    }

    #[test]
    fn work_is_set_saturating_and_read_back() {
        let island = MapSize::new(513, 513, 2.0);
        for e in MODELS {
            let mut p = (e.default)();
            p.set_work(17, island);
            assert_eq!(p.work(island), 17);
            if e.particles {
                // A density: the same world at 4× the resolution holds the same count, a map of
                // a quarter of the area a quarter of it.
                assert_eq!(p.work(MapSize::new(2049, 2049, 0.5)), 17);
                p.set_work(4000, island);
                assert_eq!(p.work(MapSize::new(257, 257, 2.0)), 1000);
                // Counts read back exactly, up to 2^34 particles and on odd sizes.
                for (n, map) in [(1 << 34, island), (12_345, MapSize::new(97, 61, 0.3)), (1, MapSize::new(2, 2, 1e-3))]
                {
                    p.set_work(n, map);
                    assert_eq!(p.work(map), n, "{} on {map:?}", e.name);
                }
            } else {
                p.set_work(u64::MAX, island);
                assert!(p.work(island) >= u32::MAX as u64, "{}", e.name);
            }
        }
        // The defaults on the default island are what they were as counts.
        assert_eq!((MODELS[0].default)().work(island), 5000);
        assert_eq!((MODELS[0].editor_default)().work(island), 200_000);
        assert_eq!((MODELS[1].default)().work(island), 35_000);
    }

    #[test]
    fn version_1_params_of_every_model_upgrade_for_their_map() {
        let island = MapSize::new(513, 513, 2.0);
        for (old, work) in [
            ("Droplet((droplets: 5000, radius: 5.0))", 5000),
            ("Snowball((snowballs: 35000, offset_radius: 0.8))", 35_000),
            ("Pipe((steps: 7, sources: [(x: 10.0, y: 20.0, radius: 2.0, intensity: 0.1)]))", 7),
            ("Thermal((iterations: 9))", 9),
            ("StreamPower((steps: 3))", 3),
        ] {
            let mut p: ModelParams = ron::from_str(old).unwrap();
            let grid = !old.starts_with("Thermal") && !old.starts_with("Stream");
            assert_eq!(p.has_legacy(), grid, "{old}");
            p.upgrade_units(island);
            assert!(!p.has_legacy(), "{old}");
            assert_eq!(p.work(island), work, "{old}");
            // On the default island version 1's defaults are the defaults.
            if !old.starts_with("Pipe") {
                let mut d = (p.entry().default)();
                d.set_work(work, island);
                assert_eq!(p, d, "{old}");
            }
            // Written again, the file holds world units only and reads back the same.
            let text = ron::to_string(&p).unwrap();
            assert_eq!(ron::from_str::<ModelParams>(&text).unwrap(), p, "{text}");
        }
        // Work read from or set on version-1 values takes them as made for the map.
        let old: ModelParams = ron::from_str("Droplet((droplets: 300))").unwrap();
        assert_eq!(old.work(island), 300);
        let mut set = old.clone();
        set.set_work(40, island);
        assert!(!set.has_legacy());
        assert_eq!(set.work(island), 40);
        let mut p: ModelParams = ron::from_str("Pipe((sources: [(x: 10.0, y: 20.0, radius: 2.0)]))").unwrap();
        p.upgrade_units(island);
        let ModelParams::Pipe(pp) = &p else { panic!() };
        assert_eq!((pp.sources[0].x_m, pp.sources[0].y_m, pp.sources[0].radius_m), (20.0, 40.0, 4.0));
    }

    #[test]
    fn every_model_states_its_build_memory() {
        for e in MODELS {
            for p in [(e.default)(), (e.editor_default)()] {
                // At least the two book maps every job keeps.
                assert!(p.build_bytes_per_node() >= 8, "{}", e.name);
            }
        }
        // What the parameters switch on costs memory.
        use super::super::stream_power::{FlowMethod, StreamPowerParams};
        let sp = |routing, diffusion| {
            ModelParams::StreamPower(StreamPowerParams { routing, diffusion, ..Default::default() })
                .build_bytes_per_node()
        };
        assert!(sp(FlowMethod::D8, 0.0) < sp(FlowMethod::Mfd, 0.0));
        assert!(sp(FlowMethod::Mfd, 0.0) < sp(FlowMethod::Mfd, 1e-3));
        let droplet = |blur_m| {
            ModelParams::Droplet(droplet::DropletParams { blur_m, ..Default::default() }).build_bytes_per_node()
        };
        assert!(droplet(None) < droplet(Some(2.0)));
        assert_eq!(droplet(None), droplet(Some(0.0)));
        let pipe =
            |thermal| ModelParams::Pipe(pipe::PipeParams { thermal, ..Default::default() }).build_bytes_per_node();
        assert!(pipe(None) < pipe(Some(Default::default())));
    }

    /// `from`'s per-node map of a smooth bump with a dry (0) left third: positive rates, steps.
    fn per_node_map((w, h): (usize, usize)) -> Vec<f32> {
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                if 3 * (i % w) < w { 0.0 } else { 1e-3 * (1.0 + (0.9 * x).sin() * (0.6 * y).cos()) }
            })
            .collect()
    }

    /// Checks a map brought from `from` to `change.to`: its length, its values on the nodes both
    /// grids share (exact), and no value outside the source's range (no overshoot).
    fn check_brought(name: &str, src: &[f32], out: &[f32], change: &GridChange, step: usize) {
        let ((w, h), (nw, nh)) = (change.from, change.to);
        assert_eq!(out.len(), nw * nh, "{name}");
        for y in 0..h {
            for x in 0..w {
                assert_eq!(out[step * y * nw + step * x].to_bits(), src[y * w + x].to_bits(), "{name} ({x}, {y})");
            }
        }
        let (lo, hi) = src.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(out.iter().all(|v| (lo..=hi).contains(v)), "{name}: overshoot");
        // The dry third stays dry, to its last shared node.
        assert!((0..nh).all(|y| out[y * nw..y * nw + 2 * (w / 3)].iter().all(|&v| v == 0.0)), "{name}: wet");
    }

    #[test]
    fn every_model_brings_its_per_node_inputs_to_a_finer_grid() {
        let (from, step) = ((13, 9), 4);
        let to = (step * (from.0 - 1) + 1, step * (from.1 - 1) + 1);
        let change = GridChange::new(from, to);
        assert_eq!(change.ratio, 4.0);
        let src = per_node_map(from);
        for e in MODELS {
            // Defaults hold no per-node input and no grid-unit field: nothing moves.
            let mut p = (e.default)();
            p.to_grid(&change);
            assert_eq!(p, (e.default)(), "{}", e.name);
            // With every per-node input a model has set, each is brought along.
            let mut p = (e.default)();
            match &mut p {
                ModelParams::Pipe(pp) => {
                    pp.rain_map = Some(src.clone());
                    pp.cell_size = Some(2.0);
                }
                ModelParams::StreamPower(sp) => sp.uplift_map = Some(src.clone()),
                // World units only (`no_grid_inputs`).
                ModelParams::Droplet(_) | ModelParams::Snowball(_) | ModelParams::Thermal(_) => {}
            }
            let before = p.clone();
            p.to_grid(&change);
            match &p {
                ModelParams::Pipe(pp) => {
                    check_brought(e.name, &src, pp.rain_map.as_deref().unwrap(), &change, step);
                    assert_eq!(pp.cell_size, Some(0.5));
                }
                ModelParams::StreamPower(sp) => {
                    check_brought(e.name, &src, sp.uplift_map.as_deref().unwrap(), &change, step)
                }
                _ => assert_eq!(p, before, "{}", e.name),
            }
            // A map made for another grid is left for the job to refuse.
            let mut wrong = before.clone();
            match &mut wrong {
                ModelParams::Pipe(pp) => pp.rain_map = Some(vec![0.0; 5]),
                ModelParams::StreamPower(sp) => sp.uplift_map = Some(vec![0.0; 5]),
                _ => {}
            }
            let kept = wrong.clone();
            wrong.to_grid(&change);
            match (&wrong, &kept) {
                (ModelParams::Pipe(a), ModelParams::Pipe(b)) => assert_eq!(a.rain_map, b.rain_map),
                (ModelParams::StreamPower(a), ModelParams::StreamPower(b)) => assert_eq!(a.uplift_map, b.uplift_map),
                _ => {}
            }
        }
        // The same grid: every map exactly as it was.
        let same = GridChange::new(from, from);
        assert_eq!(same.resample(&src).as_deref(), Some(&src[..]));
        // A side of fewer than 2 nodes has no ratio to speak of.
        assert_eq!(GridChange::new((1, 1), (5, 5)).ratio, 1.0);
    }

    #[test]
    fn a_models_own_struct_reads_as_its_params() {
        struct Own;
        impl ParamsVisitor for Own {
            type Out = String;
            fn visit<P: ModelParamsType>(self, _: &'static ModelEntry, params: &mut P) -> String {
                ron::to_string(params).unwrap()
            }
        }
        for e in MODELS {
            let own = (e.default)().visit_mut(Own);
            assert_eq!((e.params_from_ron)(&own).unwrap(), (e.default)(), "{}", e.name);
        }
    }
}
