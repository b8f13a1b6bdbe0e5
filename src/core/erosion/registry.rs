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
//!
//! and the macro derives from it the [`ModelParams`] enum, the [`MODELS`] table (in menu order)
//! and the `match`es over `ModelParams` the rest of the crate would otherwise write again:
//! [`ModelParams::entry`], [`ModelParams::set_work`], the CPU build, and
//! [`ModelParams::visit_mut`], which hands the typed parameter struct to generic code (the
//! panel's editor and preset row).
//!
//! ## The GPU half
//! `core` must not see `crate::gpu`, so a model's optional GPU version is declared next to the
//! GPU code: `crate::backend` holds a table of GPU builds keyed by the registry's `name`. A model
//! without a line there runs on the CPU whatever the backend (with a note).
//!
//! ## Adding a model
//! Write its module (parameters with `Default`, `validate`, a job implementing
//! [`super::Simulation`]), add `pub mod` in `erosion/mod.rs` and one entry to [`models!`] below;
//! the CLI, the panel, presets and the backend pick it up. A GPU version adds its module under
//! `src/gpu` and a line in the backend's GPU table.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{JobError, JobInputs, Simulation, droplet, pipe, snowball, stream_power, thermal};
use crate::core::heightmap::Heightmap;

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

/// The type of an amount-of-work field, set from a `u64` saturating.
trait Work: Copy {
    fn saturating_from(n: u64) -> Self;
    fn to_u64(self) -> u64;
}
impl Work for u32 {
    fn saturating_from(n: u64) -> Self {
        n.min(u32::MAX as u64) as u32
    }
    fn to_u64(self) -> u64 {
        self as u64
    }
}
impl Work for u64 {
    fn saturating_from(n: u64) -> Self {
        n
    }
    fn to_u64(self) -> u64 {
        self
    }
}

/// Declares the models: see the module doc. Each entry is
/// `/// doc` `Variant(module::Params, module::Job) { work: field, <ModelEntry fields> }`; the doc
/// comment becomes the `ModelParams` variant's.
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
            editor_default: $editor_default:expr $(,)?
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

            /// The amount of work asked for (droplets, snowballs, time steps, iterations).
            pub fn work(&self) -> u64 {
                match self {
                    $( ModelParams::$variant(p) => Work::to_u64(p.$work), )*
                }
            }

            /// Sets the amount of work (saturating where the field is narrower than `u64`).
            pub fn set_work(&mut self, n: u64) {
                match self {
                    $( ModelParams::$variant(p) => p.$work = Work::saturating_from(n), )*
                }
            }

            /// Runs `v` on the typed parameters.
            pub fn visit_mut<V: ParamsVisitor>(&mut self, v: V) -> V::Out {
                let e = self.entry();
                match self {
                    $( ModelParams::$variant(p) => v.visit(e, p), )*
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
        work: droplets,
        cli: "droplet",
        key: "droplet",
        label: "Droplets",
        undo: "Droplet erosion",
        unit: "droplets",
        particles: true,
        flow_unit: "particles",
        // Enough to see on a 513² map.
        editor_default: droplet::DropletParams { droplets: 200_000, ..Default::default() },
    }
    /// Snowball erosion: cheap particles that roll down the surface normal, eroding behind them.
    Snowball(snowball::SnowballParams, SnowballJob) {
        work: snowballs,
        cli: "snowball",
        key: "snowball",
        label: "Snowball",
        undo: "Snowball erosion",
        unit: "snowballs",
        particles: true,
        flow_unit: "particles",
        editor_default: Default::default(),
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
        for e in MODELS {
            let mut p = (e.default)();
            p.set_work(17);
            assert_eq!(p.work(), 17);
            p.set_work(u64::MAX);
            assert!(p.work() >= u32::MAX as u64, "{}", e.name);
        }
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
