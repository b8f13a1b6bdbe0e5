//! The parameter schema: every field of the generator, erosion, brush and look parameter types,
//! with its type, doc, unit, range, step and default, for the editor's widgets.
//!
//! How: each parameter type is declared once with [`crate::params!`] / [`crate::param_enum!`]
//! ([`crate::core::params`]), which gives it a static [`TypeSpec`]. [`Schema::global`] collects
//! the specs of every type reachable from [`TOP_LEVEL`] (through [`ParamType::register`]) and turns
//! them into [`TypeDef`]s: field names, type texts (whitespace removed, `Option<[f32;2]>`, read
//! with [`Ty::parse`]), docs, the range `validate()` enforces, and the default values (serde JSON of
//! each type's `Default`). Nothing is parsed from source text.
//!
//! Besides the field list the module offers:
//! - [`default_json`]: a default value, as serde JSON (externally tagged enums, like serde's
//!   default), for any type text the parameter types contain: the named types from their
//!   `Default`, plus the generic shapes (`Option` → `null`, `Vec` → `[]`, `[T; N]`, primitives).
//!   The UI needs it when the user ticks an `Option` on, adds a `Vec` element or switches an enum
//!   variant ([`variant_default_json`]).
//!
//! Pure Rust (no egui, no Bevy); `crate::app::param_editor` draws the widgets from it. The tests
//! walk the default value of every top-level parameter type and fail when a reachable field has
//! no doc or a reachable type is unknown, and prove that every slider range equals what the
//! type's `validate()` accepts.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

pub use crate::core::params::NumRange;
use crate::core::params::{FieldSpec, ParamType, PayloadSpec, ShapeSpec, TypeSpec};

/// The top-level parameter types the editor edits.
pub const TOP_LEVEL: &[&str] = &[
    "GenerateParams",
    "DropletParams",
    "SnowballParams",
    "PipeParams",
    "ThermalParams",
    "StreamPowerParams",
    "Boundary",
    "BrushParams",
    "MaterialParams",
    "WaterParams",
    "SkyParams",
    "OverlayParams",
    "HardnessParams",
];

/// Collects the specs of every parameter type the editor can reach (the [`TOP_LEVEL`] types, the
/// look as a whole, and everything nested in them).
fn register_all(out: &mut Vec<&'static TypeSpec>) {
    use crate::core::brush::BrushParams;
    use crate::core::erosion::Boundary;
    use crate::core::erosion::droplet::DropletParams;
    use crate::core::erosion::hardness::HardnessParams;
    use crate::core::erosion::pipe::PipeParams;
    use crate::core::erosion::refine::RefineParams;
    use crate::core::erosion::snowball::SnowballParams;
    use crate::core::erosion::stream_power::StreamPowerParams;
    use crate::core::erosion::thermal::ThermalParams;
    use crate::core::generate::GenerateParams;
    use crate::editor::look::{LookParams, MaterialParams, OverlayParams, SkyParams, WaterParams};
    GenerateParams::register(out);
    DropletParams::register(out);
    SnowballParams::register(out);
    PipeParams::register(out);
    ThermalParams::register(out);
    StreamPowerParams::register(out);
    RefineParams::register(out);
    Boundary::register(out);
    BrushParams::register(out);
    MaterialParams::register(out);
    WaterParams::register(out);
    SkyParams::register(out);
    OverlayParams::register(out);
    HardnessParams::register(out);
    LookParams::register(out);
}

/// One named field of a struct (or of a struct-like enum variant).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field's name as written (and as serde names it).
    pub name: String,
    /// The type's text with whitespace removed, e.g. `Option<[f32;2]>`.
    pub ty: String,
    /// The doc comment, lines joined by spaces (a blank doc line becomes a paragraph break);
    /// empty when the field has none.
    pub doc: String,
    /// Unit of the value; empty when dimensionless or not given.
    pub unit: String,
    /// The range the type's `validate()` accepts, for the slider. For `f32` fields the bounds are
    /// rounded inwards to `f32` values (so the slider's ends are themselves accepted).
    pub range: Option<NumRange>,
    /// Slider step, when declared.
    pub step: Option<f64>,
}

impl Field {
    fn from_spec(f: &FieldSpec) -> Field {
        let ty = normalize_ty(f.ty);
        let range = f.range.map(|r| if is_f32(&Ty::parse(&ty)) { f32_inward(r) } else { r });
        Field { name: f.name.to_string(), ty, doc: join_doc(f.doc), unit: f.unit.to_string(), range, step: f.step }
    }

    /// The hover text: the doc (else the doc of the field's type), then unit, range and default.
    pub fn tooltip(&self, schema: &Schema, default: Option<&Value>) -> String {
        let mut t =
            if self.doc.is_empty() { schema.type_doc(&self.ty).unwrap_or("").to_string() } else { self.doc.clone() };
        let mut facts = Vec::new();
        if !self.unit.is_empty() {
            facts.push(format!("unit {}", self.unit));
        }
        if let Some(r) = self.range {
            facts.push(format!("range {} ..= {}", short(r.lo), short(r.hi)));
        }
        if let Some(d) = default.filter(|d| !(d.is_object() || d.is_array() && self.ty.starts_with("Vec"))) {
            facts.push(format!("default {d}"));
        }
        if !facts.is_empty() {
            if !t.is_empty() {
                t.push_str("\n\n");
            }
            t.push_str(&facts.join("; "));
            t.push('.');
        }
        t
    }
}

/// A bound for display: `1e6`, `0.5`, `−∞`.
fn short(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "∞".into() } else { "−∞".into() };
    }
    // An f32 bound shows as the f32 it is (89.899994, not 89.89999389648438).
    let s = if (x as f32) as f64 == x { format!("{}", x as f32) } else { format!("{x}") };
    if s.len() > 10 { format!("{x:e}") } else { s }
}

/// True when the innermost number of a type is an `f32`.
fn is_f32(ty: &Ty) -> bool {
    match ty {
        Ty::Prim(p) => *p == Prim::F32,
        Ty::Option(t) | Ty::Vec(t) | Ty::Array(t, _) => is_f32(t),
        _ => false,
    }
}

/// The range of `f32` values `x` with `lo <= x as f64 <= hi`: the bounds rounded inwards.
fn f32_inward(r: NumRange) -> NumRange {
    let mut lo = r.lo as f32;
    if (lo as f64) < r.lo {
        lo = lo.next_up();
    }
    let mut hi = r.hi as f32;
    if (hi as f64) > r.hi {
        hi = hi.next_down();
    }
    NumRange { lo: lo as f64, hi: hi as f64 }
}

/// What an enum variant carries.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// `Name` (serialised as the string `"Name"`).
    Unit,
    /// `Name(T, …)`: the types' texts (one type serialises as `{"Name": value}`, several as
    /// `{"Name": [values]}`).
    Tuple(Vec<String>),
    /// `Name { field: T, … }` (serialised as `{"Name": {fields}}`).
    Struct(Vec<Field>),
}

/// One enum variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The variant's name as written (and as serde names it).
    pub name: String,
    /// The variant's doc comment, lines joined by spaces (a blank doc line becomes a paragraph break).
    pub doc: String,
    /// What the variant carries.
    pub payload: Payload,
    /// The accepted range of a one-number tuple variant's payload (rounded inwards for `f32`).
    pub range: Option<NumRange>,
}

/// A struct's fields or an enum's variants.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// A struct: its fields in declaration order.
    Struct(Vec<Field>),
    /// An enum: its variants in declaration order.
    Enum(Vec<Variant>),
}

/// One parameter type.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDef {
    /// The type's name (`"ThermalParams"`), the key it is looked up by.
    pub name: String,
    /// The type's own doc comment.
    pub doc: String,
    /// The fields or variants.
    pub kind: TypeKind,
    /// The type's `Default`, as serde JSON.
    pub default: Value,
}

impl TypeDef {
    /// True for an enum whose variants all carry nothing.
    pub fn is_unit_enum(&self) -> bool {
        matches!(&self.kind, TypeKind::Enum(vs) if vs.iter().all(|v| v.payload == Payload::Unit))
    }

    /// The [`TypeDef`] of a declared type.
    pub fn from_spec(spec: &TypeSpec) -> TypeDef {
        let kind = match spec.shape {
            ShapeSpec::Struct(fields) => TypeKind::Struct(fields.iter().map(Field::from_spec).collect()),
            ShapeSpec::Enum(variants) => TypeKind::Enum(
                variants
                    .iter()
                    .map(|v| {
                        let doc = join_doc(v.doc);
                        let payload = match v.payload {
                            PayloadSpec::Unit => Payload::Unit,
                            PayloadSpec::Tuple(ts) => Payload::Tuple(ts.iter().map(|t| normalize_ty(t)).collect()),
                            PayloadSpec::Struct(fs) => {
                                let mut fields: Vec<Field> = fs.iter().map(Field::from_spec).collect();
                                // A lone undocumented field of a struct variant is described by
                                // the variant's doc.
                                if fields.len() == 1 && fields[0].doc.is_empty() {
                                    fields[0].doc = doc.clone();
                                }
                                Payload::Struct(fields)
                            }
                        };
                        let range = match (&payload, v.range) {
                            (Payload::Tuple(ts), Some(r)) if ts.len() == 1 && is_f32(&Ty::parse(&ts[0])) => {
                                Some(f32_inward(r))
                            }
                            (_, r) => r,
                        };
                        Variant { name: v.name.to_string(), doc, payload, range }
                    })
                    .collect(),
            ),
        };
        TypeDef { name: spec.name.to_string(), doc: join_doc(spec.doc), kind, default: (spec.default_json)() }
    }
}

/// Every parameter type, by name.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    types: HashMap<String, TypeDef>,
}

impl Schema {
    /// The schema of every parameter type reachable from [`TOP_LEVEL`], built on first use.
    pub fn global() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(|| {
            let mut specs = Vec::new();
            register_all(&mut specs);
            Schema::from_specs(&specs)
        })
    }

    /// A schema of the given specs. When two have the same name, the first wins.
    pub fn from_specs(specs: &[&TypeSpec]) -> Schema {
        let mut types = HashMap::new();
        for s in specs {
            types.entry(s.name.to_string()).or_insert_with(|| TypeDef::from_spec(s));
        }
        Schema { types }
    }

    /// The definition of a type (last path segment, e.g. `"FbmParams"`).
    pub fn get(&self, name: &str) -> Option<&TypeDef> {
        self.types.get(name)
    }

    /// Names of all types (unordered).
    pub fn type_names(&self) -> impl Iterator<Item = &str> {
        self.types.keys().map(String::as_str)
    }

    /// The fields of a struct; `None` for enums and unknown names.
    pub fn fields(&self, struct_name: &str) -> Option<&[Field]> {
        match &self.get(struct_name)?.kind {
            TypeKind::Struct(f) => Some(f),
            TypeKind::Enum(_) => None,
        }
    }

    /// The variants of an enum; `None` for structs and unknown names.
    pub fn variants(&self, enum_name: &str) -> Option<&[Variant]> {
        match &self.get(enum_name)?.kind {
            TypeKind::Enum(v) => Some(v),
            TypeKind::Struct(_) => None,
        }
    }

    /// One field of a struct.
    pub fn field(&self, struct_name: &str, field: &str) -> Option<&Field> {
        self.fields(struct_name)?.iter().find(|f| f.name == field)
    }

    /// One variant of an enum.
    pub fn variant(&self, enum_name: &str, variant: &str) -> Option<&Variant> {
        self.variants(enum_name)?.iter().find(|v| v.name == variant)
    }

    /// The doc of a struct's field; `None` when the field is unknown or undocumented.
    pub fn doc(&self, struct_name: &str, field: &str) -> Option<&str> {
        let f = self.field(struct_name, field)?;
        (!f.doc.is_empty()).then_some(f.doc.as_str())
    }

    /// The declared range of a struct's field (what its `validate()` accepts).
    pub fn range(&self, struct_name: &str, field: &str) -> Option<NumRange> {
        self.field(struct_name, field)?.range
    }

    /// The doc of the named type a type text refers to (`Option<EdgeMode>` → `EdgeMode`'s doc),
    /// used as a fallback tooltip. `None` for primitives and undocumented types.
    pub fn type_doc(&self, type_text: &str) -> Option<&str> {
        let mut ty = Ty::parse(type_text);
        loop {
            ty = match ty {
                Ty::Option(t) | Ty::Vec(t) | Ty::Array(t, _) => *t,
                Ty::Named(n) => {
                    let d = &self.get(&n)?.doc;
                    return (!d.is_empty()).then_some(d.as_str());
                }
                _ => return None,
            }
        }
    }
}

fn normalize_ty(t: &str) -> String {
    t.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Joins doc lines (one `///` line each) with spaces; blank lines become paragraph breaks.
fn join_doc(text: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        let l = l.trim();
        if l.is_empty() {
            if !out.is_empty() && !out.ends_with("\n\n") {
                out.push_str("\n\n");
            }
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(l);
        }
    }
    out.trim_end().to_string()
}

// ---------------------------------------------------------------------------------------------
// Types.

/// A primitive type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    /// `bool`.
    Bool,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `usize`.
    Usize,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `isize`.
    Isize,
    /// `String`.
    String,
}

impl Prim {
    /// The primitive named `name` (`"f32"`, `"usize"`, `"String"`, …).
    pub fn from_name(name: &str) -> Option<Prim> {
        Some(match name {
            "bool" => Prim::Bool,
            "f32" => Prim::F32,
            "f64" => Prim::F64,
            "u8" => Prim::U8,
            "u16" => Prim::U16,
            "u32" => Prim::U32,
            "u64" => Prim::U64,
            "usize" => Prim::Usize,
            "i8" => Prim::I8,
            "i16" => Prim::I16,
            "i32" => Prim::I32,
            "i64" => Prim::I64,
            "isize" => Prim::Isize,
            "String" => Prim::String,
            _ => return None,
        })
    }

    /// `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }

    /// Any integer type, signed or unsigned.
    pub fn is_int(self) -> bool {
        !matches!(self, Prim::Bool | Prim::F32 | Prim::F64 | Prim::String)
    }

    /// A signed integer type (`i8` … `isize`); floats do not count.
    pub fn is_signed(self) -> bool {
        matches!(self, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64 | Prim::Isize)
    }

    /// Bounds of an integer type as `(min, max)` (`usize` taken as 64-bit); `None` otherwise.
    pub fn int_bounds(self) -> Option<(i128, i128)> {
        Some(match self {
            Prim::U8 => (0, u8::MAX as i128),
            Prim::U16 => (0, u16::MAX as i128),
            Prim::U32 => (0, u32::MAX as i128),
            Prim::U64 | Prim::Usize => (0, u64::MAX as i128),
            Prim::I8 => (i8::MIN as i128, i8::MAX as i128),
            Prim::I16 => (i16::MIN as i128, i16::MAX as i128),
            Prim::I32 => (i32::MIN as i128, i32::MAX as i128),
            Prim::I64 | Prim::Isize => (i64::MIN as i128, i64::MAX as i128),
            _ => return None,
        })
    }

    /// The default value (`false`, `0`, `0.0`, `""`).
    pub fn default_json(self) -> Value {
        match self {
            Prim::Bool => Value::Bool(false),
            Prim::F32 | Prim::F64 => Value::from(0.0),
            Prim::String => Value::String(String::new()),
            _ => Value::from(0u64),
        }
    }
}

/// The shape of a type text.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// A primitive.
    Prim(Prim),
    /// `Option<T>`.
    Option(Box<Ty>),
    /// `Vec<T>`.
    Vec(Box<Ty>),
    /// `[T; N]`.
    Array(Box<Ty>, usize),
    /// A struct or enum, by its last path segment (look it up in the [`Schema`]).
    Named(String),
    /// Anything else (generic types other than `Option`/`Vec`, slices, references, tuples…).
    Unknown(String),
}

impl Ty {
    /// Reads a type text (whitespace is ignored; paths are reduced to their last segment).
    pub fn parse(text: &str) -> Ty {
        let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        parse_ty(&s)
    }
}

fn parse_ty(s: &str) -> Ty {
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if let Some(semi) = top_level_rfind(inner, ';')
            && let Ok(n) = inner[semi + 1..].replace('_', "").parse::<usize>()
        {
            return Ty::Array(Box::new(parse_ty(&inner[..semi])), n);
        }
        return Ty::Unknown(s.to_string());
    }
    if let Some(lt) = s.find('<') {
        if !s.ends_with('>') {
            return Ty::Unknown(s.to_string());
        }
        let head = s[..lt].rsplit("::").next().unwrap_or("");
        let inner = &s[lt + 1..s.len() - 1];
        return match head {
            "Option" => Ty::Option(Box::new(parse_ty(inner))),
            "Vec" => Ty::Vec(Box::new(parse_ty(inner))),
            "Box" => parse_ty(inner),
            _ => Ty::Unknown(s.to_string()),
        };
    }
    let base = s.rsplit("::").next().unwrap_or("");
    if base.is_empty() || !base.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Ty::Unknown(s.to_string());
    }
    match Prim::from_name(base) {
        Some(p) => Ty::Prim(p),
        None => Ty::Named(base.to_string()),
    }
}

/// Byte index of the last `c` outside any `<>`, `()`, `[]`.
fn top_level_rfind(s: &str, c: char) -> Option<usize> {
    let mut depth = 0i32;
    let mut found = None;
    for (i, ch) in s.char_indices() {
        match ch {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            _ if ch == c && depth == 0 => found = Some(i),
            _ => {}
        }
    }
    found
}

// ---------------------------------------------------------------------------------------------
// Default values.

/// A default value for a type text, as serde JSON: primitives 0/false/"", `Option` null, `Vec`
/// empty, `[T; N]` N defaults, and the named parameter types from their `Default`. `None` for
/// a named type the schema does not know (the tests make sure none the parameters reach is).
pub fn default_json(type_text: &str) -> Option<Value> {
    default_for(&Ty::parse(type_text))
}

/// [`default_json`] for a parsed type.
pub fn default_for(ty: &Ty) -> Option<Value> {
    match ty {
        Ty::Prim(p) => Some(p.default_json()),
        Ty::Option(_) => Some(Value::Null),
        Ty::Vec(_) => Some(Value::Array(Vec::new())),
        Ty::Array(t, n) => {
            let d = default_for(t)?;
            Some(Value::Array(vec![d; *n]))
        }
        Ty::Named(n) => Schema::global().get(n).map(|d| d.default.clone()),
        Ty::Unknown(_) => None,
    }
}

/// Splits an externally tagged enum value into its variant name and payload:
/// `"Wrap"` → `("Wrap", None)`, `{"Fbm": {…}}` → `("Fbm", Some({…}))`.
pub fn enum_tag(value: &Value) -> Option<(&str, Option<&Value>)> {
    match value {
        Value::String(s) => Some((s, None)),
        Value::Object(m) if m.len() == 1 => m.iter().next().map(|(k, v)| (k.as_str(), Some(v))),
        _ => None,
    }
}

/// Mutable form of [`enum_tag`]: the payload of an externally tagged data variant.
pub fn enum_payload_mut(value: &mut Value) -> Option<(String, &mut Value)> {
    match value {
        Value::Object(m) if m.len() == 1 => m.iter_mut().next().map(|(k, v)| (k.clone(), v)),
        _ => None,
    }
}

/// A whole default value of `enum_name` set to `variant` (externally tagged). When the enum's
/// own default is that variant, its payload is used (e.g. `Base::Fbm` gets the landscape fBm);
/// otherwise the payload is built from [`default_json`] of its type(s)/fields.
pub fn variant_default_json(schema: &Schema, enum_name: &str, variant: &str) -> Option<Value> {
    let v = schema.variant(enum_name, variant)?;
    if let Some(d) = schema.get(enum_name).map(|d| d.default.clone())
        && enum_tag(&d).is_some_and(|(tag, _)| tag == variant)
    {
        return Some(d);
    }
    let payload = match &v.payload {
        Payload::Unit => return Some(Value::String(variant.to_string())),
        Payload::Tuple(types) if types.len() == 1 => default_json(&types[0])?,
        Payload::Tuple(types) => Value::Array(types.iter().map(|t| default_json(t)).collect::<Option<Vec<_>>>()?),
        Payload::Struct(fields) => {
            let mut m = Map::new();
            for f in fields {
                m.insert(f.name.clone(), default_json(&f.ty)?);
            }
            Value::Object(m)
        }
    };
    let mut m = Map::new();
    m.insert(variant.to_string(), payload);
    Some(Value::Object(m))
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests;
