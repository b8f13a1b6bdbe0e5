//! Parameter declarations: every parameter of a generator, erosion model, brush or look is
//! declared once, with its doc, type, default, unit, range and optional slider step, and the rest
//! is derived from that one declaration.
//!
//! [`params!`](crate::params) turns
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! talus::params! {
//!     /// Parameters of a small model.
//!     #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//!     #[serde(default)]
//!     pub struct SlopeParams {
//!         /// Repose angle: steeper slopes shed material.
//!         pub angle: f32 = 30.0, unit "°", range [0.0, 89.9];
//!         /// Optional override of the slope as a tangent.
//!         pub tangent: Option<f32> = None, unit "m/m", range [0.0, 1e4], step 0.01;
//!         /// How many times to apply it.
//!         pub iterations: u32 = 50;
//!     }
//! }
//!
//! use talus::core::params::ParamSchema;
//! let p = SlopeParams::default();
//! assert_eq!((p.angle, p.tangent, p.iterations), (30.0, None, 50));
//! assert!(p.check_ranges().is_ok());
//! let bad = SlopeParams { angle: 95.0, ..p };
//! assert_eq!(bad.check_ranges().unwrap_err().name, "angle");
//! let spec = SlopeParams::spec();
//! assert_eq!(spec.fields()[0].range.map(|r| r.hi), Some(89.9));
//! ```
//!
//! into
//! - the struct itself (doc and attributes passed through, field attributes such as
//!   `#[serde(rename = "…")]` too; the unit, range and default are appended to each field's
//!   rustdoc);
//! - `impl Default` from the `= default` expressions;
//! - `check_ranges(&self) -> Result<(), BadParam>`: every field with a `range [lo, hi]` is
//!   checked (finite and `lo <= value <= hi`, compared as `f64`; `Option`s when set, arrays element
//!   by element), then the `check_ranges` of nested parameter types (through `Option`, `Vec`,
//!   arrays; of an enum, only the ranges declared on its variants, not the payload structs: a
//!   type holding `Base` validates the active generator itself). The hand-written `validate()` of each type calls it and adds only the checks one
//!   range cannot say (cross-field, map-size dependent);
//! - [`ParamSchema`]: a static [`TypeSpec`] (name, doc, fields with name, type text, doc, unit,
//!   range, step and default) that `crate::editor::schema` builds the editor's widgets from, and
//!   [`ParamType::register`], which collects every parameter type reachable through the fields.
//!
//! The optional clauses after the default come in the order `unit`, `range`, `step`, `legacy`.
//! `legacy old: T` keeps the name a field had in version 1, when it was in grid units (nodes,
//! cycles per node): a hidden `pub old: Option<T>` that older files fill and new files never write,
//! which the type's hand-written `upgrade_units(cell_size)` turns into the new field (see
//! [`crate::core::units`]); it is not a parameter (no schema entry, no range check). The
//! generated `has_legacy()` also looks into nested parameter structs (through `Option`s, `Vec`s
//! and arrays), so a struct holding one with version-1 values says so too. A leading
//! `prefix "hills.";` names the checked fields `hills.count`, … in [`BadParam`]. Doc comments
//! must come before other attributes on each field.
//!
//! Enums used as parameters get their schema from [`param_enum!`](crate::param_enum) (unit, tuple
//! and struct variants, an optional range on a one-number tuple variant; the enum and its
//! `Default` are written as usual inside it).
//!
//! So each parameter's unit, range and default live in exactly one place; a test in
//! `crate::editor::schema` proves that every slider range equals what `validate()` accepts.
//!
//! One error value: [`BadParam`] is what every range check returns; the domain errors
//! (`JobError`, `GenError`, `BrushError`, `AnalysisError`) convert from it with `From`.

use serde_json::Value;

/// A field name and what the range check says when that field alone is NaN.
pub type NanProbe = (&'static str, Result<(), BadParam>);

/// A parameter outside its range: the one error value behind every domain error's `BadParam`.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("parameter {name} = {value} is outside its range {range}")]
pub struct BadParam {
    /// The parameter's name (with its prefix, e.g. `hills.count`).
    pub name: &'static str,
    /// The value found.
    pub value: f64,
    /// The accepted range, as text.
    pub range: &'static str,
}

/// The one range check: `Ok` when `value` is finite and `lo <= value <= hi`.
pub fn check(name: &'static str, value: f64, lo: f64, hi: f64, range: &'static str) -> Result<(), BadParam> {
    if value.is_finite() && value >= lo && value <= hi { Ok(()) } else { Err(BadParam { name, value, range }) }
}

/// The smallest positive `f32` (a subnormal), as `f64`: `range [ABOVE_ZERO, hi]` on an `f32` field
/// accepts exactly `0 < value <= hi`.
pub const ABOVE_ZERO: f64 = 1.401298464324817e-45;

/// An inclusive numeric range (bounds may be infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NumRange {
    /// Lower bound, inclusive; may be `-inf`.
    pub lo: f64,
    /// Upper bound, inclusive; may be `inf`.
    pub hi: f64,
}

/// One declared field of a parameter struct (or of a struct-like enum variant).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldSpec {
    /// The field's name (as serde names it, unless a `rename` attribute says otherwise).
    pub name: &'static str,
    /// The type as written (`stringify!`), e.g. `Option < [f32; 2] >`.
    pub ty: &'static str,
    /// The doc comment, one line per `///` line.
    pub doc: &'static str,
    /// Unit of the value (`"m"`, `"°"`, `"1/s"`); empty when dimensionless or not given.
    pub unit: &'static str,
    /// The accepted range (the one `check_ranges` enforces); `None` when unchecked.
    pub range: Option<NumRange>,
    /// Slider step, when the field asks for one.
    pub step: Option<f64>,
    /// The default expression as written.
    pub default: &'static str,
}

/// What an enum variant carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PayloadSpec {
    /// `Name`.
    Unit,
    /// `Name(T, …)`: the types as written.
    Tuple(&'static [&'static str]),
    /// `Name { field: T, … }`.
    Struct(&'static [FieldSpec]),
}

/// One enum variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VariantSpec {
    /// The variant's name as written (`"Constant"`).
    pub name: &'static str,
    /// The doc comment, one line per `///` line.
    pub doc: &'static str,
    /// What the variant carries.
    pub payload: PayloadSpec,
    /// The accepted range of a one-number tuple variant (`Constant(f32) range [-100.0, 100.0]`).
    pub range: Option<NumRange>,
}

/// A struct's fields or an enum's variants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeSpec {
    /// A struct: its fields in declaration order.
    Struct(&'static [FieldSpec]),
    /// An enum: its variants in declaration order.
    Enum(&'static [VariantSpec]),
}

/// The static description of one parameter type.
#[derive(Clone, Copy, Debug)]
pub struct TypeSpec {
    /// The type's name (`"ThermalParams"`).
    pub name: &'static str,
    /// The type's doc comment.
    pub doc: &'static str,
    /// The fields or variants.
    pub shape: ShapeSpec,
    /// The type's `Default`, as serde JSON.
    pub default_json: fn() -> Value,
    /// [`ParamSchema::nan_probes`] of the type.
    pub nan_probes: fn() -> Vec<NanProbe>,
}

impl TypeSpec {
    /// The fields of a struct (empty for an enum).
    pub fn fields(&self) -> &'static [FieldSpec] {
        match self.shape {
            ShapeSpec::Struct(f) => f,
            ShapeSpec::Enum(_) => &[],
        }
    }
}

/// Every type that may appear in a parameter: the parameter types themselves and the primitives
/// and containers around them. [`ParamType::register`] collects the parameter types reachable
/// from `Self` (each once, in first-seen order).
pub trait ParamType {
    /// Adds `Self`'s [`TypeSpec`] (when it has one) and those of every type it contains.
    fn register(_out: &mut Vec<&'static TypeSpec>) {}
    /// The range check of a nested parameter struct (`check_ranges`), through `Option`s, `Vec`s
    /// and arrays; `Ok` for numbers and enums.
    fn check_nested(&self) -> Result<(), BadParam> {
        Ok(())
    }
    /// Whether a nested parameter struct still holds version-1 values
    /// ([`crate::core::units::Legacy::has_legacy`]), through `Option`s, `Vec`s and arrays; `false`
    /// for numbers and enums.
    fn legacy_nested(&self) -> bool {
        false
    }
}

macro_rules! plain_param_types {
    ($($t:ty),*) => { $(impl ParamType for $t {})* };
}
plain_param_types!(bool, f32, f64, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, String);

impl<T: ParamType> ParamType for Option<T> {
    fn register(out: &mut Vec<&'static TypeSpec>) {
        T::register(out)
    }
    fn check_nested(&self) -> Result<(), BadParam> {
        self.iter().try_for_each(T::check_nested)
    }
    fn legacy_nested(&self) -> bool {
        self.iter().any(T::legacy_nested)
    }
}
impl<T: ParamType> ParamType for Vec<T> {
    fn register(out: &mut Vec<&'static TypeSpec>) {
        T::register(out)
    }
    fn check_nested(&self) -> Result<(), BadParam> {
        self.iter().try_for_each(T::check_nested)
    }
    fn legacy_nested(&self) -> bool {
        self.iter().any(T::legacy_nested)
    }
}
impl<T: ParamType, const N: usize> ParamType for [T; N] {
    fn register(out: &mut Vec<&'static TypeSpec>) {
        T::register(out)
    }
    fn check_nested(&self) -> Result<(), BadParam> {
        self.iter().try_for_each(T::check_nested)
    }
    fn legacy_nested(&self) -> bool {
        self.iter().any(T::legacy_nested)
    }
}

/// A parameter type with a static description (made by [`params!`](crate::params) or
/// [`param_enum!`](crate::param_enum)).
pub trait ParamSchema: ParamType {
    /// The description.
    fn spec() -> &'static TypeSpec;
    /// The generated range check (`Ok` for types without ranged fields).
    fn check_ranges(&self) -> Result<(), BadParam> {
        Ok(())
    }
    /// For each ranged floating-point field: its name and what [`Self::check_ranges`] says when
    /// that field alone is NaN (JSON cannot carry NaN, so the schema test asks here).
    fn nan_probes() -> Vec<NanProbe> {
        Vec::new()
    }
}

/// Adds `spec` to `out` unless a type of that name is there; true when it was added.
pub fn register_once(spec: &'static TypeSpec, out: &mut Vec<&'static TypeSpec>) -> bool {
    if out.iter().any(|s| s.name == spec.name) {
        return false;
    }
    out.push(spec);
    true
}

/// A value the generated range check understands: numbers, `Option`s of them (checked when set)
/// and arrays of them (element by element).
pub trait CheckRange {
    /// Checks the value (see [`check`]).
    fn check_range(&self, name: &'static str, lo: f64, hi: f64, range: &'static str) -> Result<(), BadParam>;
    /// The value with NaN in it, for a float field; `None` for integers.
    fn nan(&self) -> Option<Self>
    where
        Self: Sized;
}

macro_rules! check_range_num {
    ($($t:ty: $nan:expr),*) => {$(
        impl CheckRange for $t {
            fn check_range(&self, name: &'static str, lo: f64, hi: f64, range: &'static str) -> Result<(), BadParam> {
                check(name, *self as f64, lo, hi, range)
            }
            fn nan(&self) -> Option<Self> {
                $nan
            }
        }
    )*};
}
check_range_num!(f32: Some(f32::NAN), f64: Some(f64::NAN), u8: None, u16: None, u32: None, u64: None, usize: None,
    i8: None, i16: None, i32: None, i64: None, isize: None);

impl<T: CheckRange> CheckRange for Option<T> {
    fn check_range(&self, name: &'static str, lo: f64, hi: f64, range: &'static str) -> Result<(), BadParam> {
        match self {
            Some(v) => v.check_range(name, lo, hi, range),
            None => Ok(()),
        }
    }
    fn nan(&self) -> Option<Self> {
        match self {
            Some(v) => v.nan().map(Some),
            None => None,
        }
    }
}

impl<T: CheckRange + Clone, const N: usize> CheckRange for [T; N] {
    fn check_range(&self, name: &'static str, lo: f64, hi: f64, range: &'static str) -> Result<(), BadParam> {
        self.iter().try_for_each(|v| v.check_range(name, lo, hi, range))
    }
    fn nan(&self) -> Option<Self> {
        let mut out = self.clone();
        for v in out.iter_mut() {
            *v = v.nan()?;
        }
        Some(out)
    }
}

/// `Some(NaN)` for an `Option<f32>`/`Option<f64>` field, whatever it holds.
pub fn option_nan<T: CheckRange + Default>(v: &Option<T>) -> Option<Option<T>> {
    match v {
        Some(x) => x.nan().map(Some),
        None => T::default().nan().map(Some),
    }
}

#[doc(hidden)]
pub use serde_json as __serde_json;

/// Joins the `#[doc]` attributes among the given attributes (internal to the macros).
#[doc(hidden)]
#[macro_export]
macro_rules! __params_doc {
    (@acc [$($acc:expr),*]) => { concat!($($acc),*) };
    (@acc [$($acc:expr),*] #[doc = $d:literal] $($rest:tt)*) => {
        $crate::__params_doc!(@acc [$($acc,)* $d, "\n"] $($rest)*)
    };
    (@acc [$($acc:expr),*] #[$($other:tt)*] $($rest:tt)*) => { $crate::__params_doc!(@acc [$($acc),*] $($rest)*) };
    ($($attrs:tt)*) => { $crate::__params_doc!(@acc [""] $($attrs)*) };
}

/// `None` / `Some(x as f64)` (internal to the macros).
#[doc(hidden)]
#[macro_export]
macro_rules! __params_opt_f64 {
    () => {
        None
    };
    ($x:expr) => {
        Some(($x) as f64)
    };
}

/// `None` / `Some(NumRange)` (internal to the macros).
#[doc(hidden)]
#[macro_export]
macro_rules! __params_range {
    () => {
        None
    };
    ($lo:expr, $hi:expr) => {
        Some($crate::core::params::NumRange { lo: ($lo) as f64, hi: ($hi) as f64 })
    };
}

/// `""` / the unit (internal to the macros).
#[doc(hidden)]
#[macro_export]
macro_rules! __params_str {
    () => {
        ""
    };
    ($s:literal) => {
        $s
    };
}

/// Declares a parameter struct once: see the [module doc](crate::core::params).
#[macro_export]
macro_rules! params {
    (
        prefix $prefix:literal;
        $(#[$($attr:tt)*])*
        $vis:vis struct $name:ident {
            $(
                $(#[$($fattr:tt)*])*
                $fvis:vis $field:ident : $fty:ty = $default:expr
                $(, unit $unit:literal)?
                $(, range [$lo:expr, $hi:expr])?
                $(, step $step:expr)?
                $(, legacy $old:ident : $lty:ty)?
                ;
            )*
        }
    ) => {
        $(#[$($attr)*])*
        $vis struct $name {
            $(
                $(#[$($fattr)*])*
                #[doc = ""]
                $(#[doc = concat!("Unit: ", $unit, ".")])?
                $(#[doc = concat!("Range `[", stringify!($lo), ", ", stringify!($hi), "]`.")])?
                #[doc = concat!("Default `", stringify!($default), "`.")]
                $fvis $field: $fty,
            )*
            $($(
                #[doc = concat!(
                    "Version 1's `", stringify!($old), "` (in grid units), read from older files and never written: ",
                    "`upgrade_units` turns it into `", stringify!($field), "` (see [`crate::core::units`]).",
                )]
                #[serde(default, skip_serializing, deserialize_with = "crate::core::units::legacy_value")]
                pub $old: Option<$lty>,
            )?)*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $($field: $default,)* $($($old: None,)?)* }
            }
        }

        impl $crate::core::units::Legacy for $name {
            fn has_legacy(&self) -> bool {
                false $($(|| self.$old.is_some())?)*
                    $(|| $crate::core::params::ParamType::legacy_nested(&self.$field))*
            }
        }

        impl $name {
            /// Checks every field declared with a range, then the nested parameter structs (see
            /// [`crate::core::params`]).
            #[allow(unused_imports)]
            pub fn check_ranges(&self) -> Result<(), $crate::core::params::BadParam> {
                use $crate::core::params::CheckRange;
                $($(
                    self.$field.check_range(
                        concat!($prefix, stringify!($field)),
                        ($lo) as f64,
                        ($hi) as f64,
                        concat!("[", stringify!($lo), ", ", stringify!($hi), "]"),
                    )?;
                )?)*
                $($crate::core::params::ParamType::check_nested(&self.$field)?;)*
                Ok(())
            }
        }

        impl $crate::core::params::ParamType for $name {
            fn register(out: &mut Vec<&'static $crate::core::params::TypeSpec>) {
                if $crate::core::params::register_once(<Self as $crate::core::params::ParamSchema>::spec(), out) {
                    $(<$fty as $crate::core::params::ParamType>::register(out);)*
                }
            }
            fn check_nested(&self) -> Result<(), $crate::core::params::BadParam> {
                self.check_ranges()
            }
            fn legacy_nested(&self) -> bool {
                $crate::core::units::Legacy::has_legacy(self)
            }
        }

        impl $crate::core::params::ParamSchema for $name {
            fn spec() -> &'static $crate::core::params::TypeSpec {
                const FIELDS: &[$crate::core::params::FieldSpec] = &[$(
                    $crate::core::params::FieldSpec {
                        name: stringify!($field),
                        ty: stringify!($fty),
                        doc: $crate::__params_doc!($(#[$($fattr)*])*),
                        unit: $crate::__params_str!($($unit)?),
                        range: $crate::__params_range!($($lo, $hi)?),
                        step: $crate::__params_opt_f64!($($step)?),
                        default: stringify!($default),
                    }
                ),*];
                static SPEC: $crate::core::params::TypeSpec = $crate::core::params::TypeSpec {
                    name: stringify!($name),
                    doc: $crate::__params_doc!($(#[$($attr)*])*),
                    shape: $crate::core::params::ShapeSpec::Struct(FIELDS),
                    default_json: || $crate::core::params::__serde_json::to_value(<$name as Default>::default()).unwrap_or_default(),
                    nan_probes: <$name as $crate::core::params::ParamSchema>::nan_probes,
                };
                &SPEC
            }

            fn check_ranges(&self) -> Result<(), $crate::core::params::BadParam> {
                $name::check_ranges(self)
            }

            #[allow(unused_mut, unused_imports)]
            fn nan_probes() -> Vec<$crate::core::params::NanProbe> {
                use $crate::core::params::CheckRange;
                let mut out = Vec::new();
                $($(
                    let _ = ($lo, $hi);
                    let d = <Self as Default>::default();
                    if let Some(v) = $crate::core::params::NanField::nan_field(&d.$field) {
                        let p = Self { $field: v, ..d };
                        out.push((stringify!($field), p.check_ranges()));
                    }
                )?)*
                out
            }
        }
    };
    ($($body:tt)*) => {
        $crate::params!(prefix ""; $($body)*);
    };
}

/// The NaN probe of a field: NaN for a float, `Some(NaN)` for an `Option` of one (also when the
/// default is `None`), NaN in every element of an array; `None` for integer fields.
pub trait NanField: Sized {
    /// The field's value with NaN in it.
    fn nan_field(&self) -> Option<Self>;
}

macro_rules! nan_field_num {
    ($($t:ty),*) => {$(
        impl NanField for $t {
            fn nan_field(&self) -> Option<Self> {
                self.nan()
            }
        }
        impl NanField for Option<$t> {
            fn nan_field(&self) -> Option<Self> {
                option_nan(self)
            }
        }
        impl<const N: usize> NanField for [$t; N] {
            fn nan_field(&self) -> Option<Self> {
                self.nan()
            }
        }
        impl<const N: usize> NanField for Option<[$t; N]> {
            fn nan_field(&self) -> Option<Self> {
                match self {
                    Some(a) => a.nan().map(Some),
                    None => <$t>::default().nan().map(|x| Some([x; N])),
                }
            }
        }
    )*};
}
nan_field_num!(f32, f64, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// Declares an enum used as a parameter and its schema: see the [module doc](crate::core::params).
/// Variants may be unit, tuple or struct-like; the enum's `Default` is written as usual (derive with
/// `#[default]` or a hand `impl`). Doc comments must come before other attributes. A tuple variant
/// holding one number may declare its range after it (`Constant(f32) range [-100.0, 100.0],`),
/// checked by the enum's `check_ranges` (and so by the `check_ranges` of a struct holding it).
#[macro_export]
macro_rules! param_enum {
    (
        $(#[$($attr:tt)*])*
        $vis:vis enum $name:ident {
            $(
                $(#[$($vattr:tt)*])*
                $variant:ident
                $(( $($tty:ty),* $(,)? ))?
                $({ $( $(#[$($fattr:tt)*])* $field:ident : $fty:ty ),* $(,)? })?
                $(range [$lo:expr, $hi:expr])?
            ),* $(,)?
        }
    ) => {
        $(#[$($attr)*])*
        $vis enum $name {
            $(
                $(#[$($vattr)*])*
                $variant
                $(( $($tty),* ))?
                $({ $( $(#[$($fattr)*])* $field : $fty ),* })?
            ),*
        }

        impl $crate::core::params::ParamType for $name {
            fn register(out: &mut Vec<&'static $crate::core::params::TypeSpec>) {
                if $crate::core::params::register_once(<Self as $crate::core::params::ParamSchema>::spec(), out) {
                    $(
                        $($(<$tty as $crate::core::params::ParamType>::register(out);)*)?
                        $($(<$fty as $crate::core::params::ParamType>::register(out);)*)?
                    )*
                }
            }

            #[allow(unreachable_patterns)]
            fn check_nested(&self) -> Result<(), $crate::core::params::BadParam> {
                match self {
                    $($(
                        Self::$variant(v) => $crate::core::params::CheckRange::check_range(
                            v,
                            stringify!($variant),
                            ($lo) as f64,
                            ($hi) as f64,
                            concat!("[", stringify!($lo), ", ", stringify!($hi), "]"),
                        ),
                    )?)*
                    _ => Ok(()),
                }
            }
        }

        impl $crate::core::params::ParamSchema for $name {
            fn check_ranges(&self) -> Result<(), $crate::core::params::BadParam> {
                $crate::core::params::ParamType::check_nested(self)
            }

            #[allow(unused_mut)]
            fn nan_probes() -> Vec<$crate::core::params::NanProbe> {
                let mut out = Vec::new();
                $($(
                    let _ = ($lo, $hi);
                    let p = Self::$variant(f64::NAN as _);
                    out.push((stringify!($variant), $crate::core::params::ParamType::check_nested(&p)));
                )?)*
                out
            }

            fn spec() -> &'static $crate::core::params::TypeSpec {
                #[allow(unused_mut, unused_assignments)]
                const VARIANTS: &[$crate::core::params::VariantSpec] = &[$(
                    $crate::core::params::VariantSpec {
                        name: stringify!($variant),
                        doc: $crate::__params_doc!($(#[$($vattr)*])*),
                        range: $crate::__params_range!($($lo, $hi)?),
                        payload: $crate::__params_payload!(
                            [$($($tty),*)?]
                            [$($({ $(#[$($fattr)*])* $field : $fty })*)?]
                            $([ $($tty)* ])?
                            $({ $($field)* })?
                        ),
                    }
                ),*];
                static SPEC: $crate::core::params::TypeSpec = $crate::core::params::TypeSpec {
                    name: stringify!($name),
                    doc: $crate::__params_doc!($(#[$($attr)*])*),
                    shape: $crate::core::params::ShapeSpec::Enum(VARIANTS),
                    default_json: || $crate::core::params::__serde_json::to_value(<$name as Default>::default()).unwrap_or_default(),
                    nan_probes: <$name as $crate::core::params::ParamSchema>::nan_probes,
                };
                &SPEC
            }
        }
    };
}

/// The [`PayloadSpec`] of one variant (internal to [`param_enum!`](crate::param_enum)).
#[doc(hidden)]
#[macro_export]
macro_rules! __params_payload {
    // Tuple variant: `[types] [] [marker]`.
    ([$($tty:ty),*] [] [$($m:tt)*]) => {
        $crate::core::params::PayloadSpec::Tuple(&[$(stringify!($tty)),*])
    };
    // Struct variant: `[] [fields] {marker}`.
    ([] [$({ $(#[$($fattr:tt)*])* $field:ident : $fty:ty })*] { $($m:tt)* }) => {
        $crate::core::params::PayloadSpec::Struct(&[$(
            $crate::core::params::FieldSpec {
                name: stringify!($field),
                ty: stringify!($fty),
                doc: $crate::__params_doc!($(#[$($fattr)*])*),
                unit: "",
                range: None,
                step: None,
                default: "",
            }
        ),*])
    };
    // Unit variant.
    ([] []) => {
        $crate::core::params::PayloadSpec::Unit
    };
}
