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
mod tests {
    use super::*;

    /// Walks `value` of type `ty`, recording problems. Enums are walked in every variant,
    /// `Option`s and `Vec`s also through the default of their inner type.
    fn walk(schema: &Schema, ty: &Ty, value: &Value, path: &str, depth: usize, problems: &mut Vec<String>) {
        if depth > 24 {
            problems.push(format!("{path}: nesting too deep"));
            return;
        }
        match ty {
            Ty::Prim(p) => {
                let ok = match p {
                    Prim::Bool => value.is_boolean(),
                    Prim::String => value.is_string(),
                    Prim::F32 | Prim::F64 => value.is_number(),
                    _ if p.is_signed() => value.is_i64(),
                    _ => value.is_u64(),
                };
                if !ok {
                    problems.push(format!("{path}: {value} is not a {p:?}"));
                }
            }
            Ty::Option(inner) => {
                if !value.is_null() {
                    walk(schema, inner, value, path, depth + 1, problems);
                }
                match default_for(inner) {
                    Some(d) => walk(schema, inner, &d, &format!("{path}?"), depth + 1, problems),
                    None => problems.push(format!("{path}: no default_json for {inner:?}")),
                }
            }
            Ty::Vec(inner) => {
                let Some(items) = value.as_array() else {
                    problems.push(format!("{path}: {value} is not an array"));
                    return;
                };
                for (i, v) in items.iter().enumerate() {
                    walk(schema, inner, v, &format!("{path}[{i}]"), depth + 1, problems);
                }
                match default_for(inner) {
                    Some(d) => walk(schema, inner, &d, &format!("{path}[+]"), depth + 1, problems),
                    None => problems.push(format!("{path}: no default_json for {inner:?}")),
                }
            }
            Ty::Array(inner, n) => match value.as_array() {
                Some(items) if items.len() == *n => {
                    for (i, v) in items.iter().enumerate() {
                        walk(schema, inner, v, &format!("{path}[{i}]"), depth + 1, problems);
                    }
                }
                _ => problems.push(format!("{path}: {value} is not an array of {n}")),
            },
            Ty::Unknown(t) => problems.push(format!("{path}: unknown type shape `{t}`")),
            Ty::Named(name) => {
                let Some(def) = schema.get(name) else {
                    problems.push(format!("{path}: type `{name}` not in the schema"));
                    return;
                };
                if default_json(name).is_none() {
                    problems.push(format!("{path}: no default_json for `{name}`"));
                }
                match &def.kind {
                    TypeKind::Struct(fields) => walk_fields(schema, name, fields, value, path, depth, problems),
                    TypeKind::Enum(variants) => {
                        match enum_tag(value) {
                            Some((tag, _)) if variants.iter().any(|v| v.name == tag) => {}
                            _ => problems.push(format!("{path}: {value} is not a `{name}` variant")),
                        }
                        for v in variants {
                            let vp = format!("{path}::{}", v.name);
                            if v.doc.is_empty() {
                                problems.push(format!("{vp}: variant has no doc"));
                            }
                            let Some(d) = variant_default_json(schema, name, &v.name) else {
                                problems.push(format!("{vp}: no default payload"));
                                continue;
                            };
                            // The value being walked, when it is this variant, else the default.
                            let val = match enum_tag(value) {
                                Some((tag, _)) if tag == v.name => value,
                                _ => &d,
                            };
                            let payload = enum_tag(val).and_then(|(_, p)| p);
                            match (&v.payload, payload) {
                                (Payload::Unit, None) => {}
                                (Payload::Tuple(ts), Some(p)) if ts.len() == 1 => {
                                    walk(schema, &Ty::parse(&ts[0]), p, &vp, depth + 1, problems)
                                }
                                (Payload::Tuple(ts), Some(Value::Array(ps))) if ts.len() == ps.len() => {
                                    for (i, (t, p)) in ts.iter().zip(ps).enumerate() {
                                        walk(schema, &Ty::parse(t), p, &format!("{vp}.{i}"), depth + 1, problems);
                                    }
                                }
                                (Payload::Struct(fs), Some(p)) => {
                                    walk_fields(schema, &v.name, fs, p, &vp, depth, problems)
                                }
                                _ => problems.push(format!("{vp}: payload {val} does not match")),
                            }
                        }
                    }
                }
            }
        }
    }

    fn walk_fields(
        schema: &Schema,
        owner: &str,
        fields: &[Field],
        value: &Value,
        path: &str,
        depth: usize,
        problems: &mut Vec<String>,
    ) {
        let Some(obj) = value.as_object() else {
            problems.push(format!("{path}: {value} is not an object"));
            return;
        };
        for key in obj.keys() {
            if !fields.iter().any(|f| &f.name == key) {
                problems.push(format!("{path}.{key}: serialised but not parsed from `{owner}`"));
            }
        }
        for f in fields {
            let fp = format!("{path}.{}", f.name);
            if f.doc.is_empty() {
                problems.push(format!("{fp}: field has no doc comment (in `{owner}`)"));
            }
            match obj.get(&f.name) {
                Some(v) => walk(schema, &Ty::parse(&f.ty), v, &fp, depth + 1, problems),
                None => problems.push(format!("{fp}: missing from the serialised value")),
            }
        }
    }

    #[test]
    fn every_reachable_field_is_documented_and_every_type_known() {
        let schema = Schema::global();
        let mut problems = Vec::new();
        for name in TOP_LEVEL {
            let value = default_json(name).unwrap_or_else(|| panic!("no default_json for {name}"));
            walk(schema, &Ty::Named(name.to_string()), &value, name, 0, &mut problems);
        }
        assert!(problems.is_empty(), "schema problems:\n{}", problems.join("\n"));
    }

    #[test]
    fn parses_the_shapes() {
        let s = Schema::global();
        let f = s.field("GenerateParams", "normalize").unwrap();
        assert_eq!(f.ty, "Option<[f32;2]>");
        assert!(f.doc.contains("Linear rescale") && f.doc.contains("generator's own units"), "{}", f.doc);
        assert_eq!(Ty::parse(&f.ty), Ty::Option(Box::new(Ty::Array(Box::new(Ty::Prim(Prim::F32)), 2))));
        assert_eq!(s.fields("GenerateParams").unwrap().len(), 11);
        assert_eq!(s.fields("DropletParams").unwrap().len(), 17);
        assert_eq!(
            Ty::parse(&s.field("PipeParams", "rain_map").unwrap().ty),
            Ty::Option(Box::new(Ty::Vec(Box::new(Ty::Prim(Prim::F32)))))
        );
        assert_eq!(s.field("PipeParams", "sources").unwrap().ty, "Vec<RiverSource>");
        // Data enum: tuple and struct variants.
        let base = s.variants("Base").unwrap();
        assert_eq!(
            base.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["Fbm", "DiamondSquare", "LazyWorld", "VoronoiIsland", "Hills", "Flat"]
        );
        assert_eq!(base[0].payload, Payload::Tuple(vec!["FbmParams".into()]));
        match &base[5].payload {
            Payload::Struct(fs) => assert_eq!((fs[0].name.as_str(), fs[0].ty.as_str()), ("height", "f32")),
            p => panic!("{p:?}"),
        }
        // Unit enum with #[default] attributes in between.
        let nk = s.variants("NoiseKind").unwrap();
        assert_eq!(nk.len(), 5);
        assert_eq!(nk[0].name, "Perlin");
        assert_eq!(nk[4].payload, Payload::Tuple(vec!["Interpolation".into()]));
        assert!(s.get("Advection").unwrap().is_unit_enum());
        assert!(s.variant("Advection", "Conservative").unwrap().doc.starts_with("Forward remap"));
        assert_eq!(s.doc("ThermalParams", "rate").map(|d| d.starts_with("Fraction of a node's")), Some(true));
        assert_eq!(s.doc("ThermalParams", "nope"), None);
        assert_eq!(s.type_doc("Option<EdgeMode>"), Some("What happens at one edge of the map."));
    }

    #[test]
    fn ty_parse() {
        assert_eq!(Ty::parse("u64"), Ty::Prim(Prim::U64));
        assert_eq!(Ty::parse("Vec < f32 >"), Ty::Vec(Box::new(Ty::Prim(Prim::F32))));
        assert_eq!(Ty::parse("[i64; 2]"), Ty::Array(Box::new(Ty::Prim(Prim::I64)), 2));
        assert_eq!(Ty::parse("crate::core::erosion::Boundary"), Ty::Named("Boundary".into()));
        assert_eq!(
            Ty::parse("std::option::Option<ThermalParams>"),
            Ty::Option(Box::new(Ty::Named("ThermalParams".into())))
        );
        assert!(matches!(Ty::parse("HashMap<String,f32>"), Ty::Unknown(_)));
        assert!(matches!(Ty::parse("&[f32]"), Ty::Unknown(_)));
        assert!(matches!(Ty::parse("(f32,f32)"), Ty::Unknown(_)));
    }

    #[test]
    fn declared_ranges() {
        let r = |lo, hi| Some(NumRange { lo, hi });
        let s = Schema::global();
        assert_eq!(s.range("DiamondSquareParams", "roughness"), r(0.0, 16.0));
        assert_eq!(s.range("DropletParams", "batch"), r(1.0, 16_777_216.0));
        assert_eq!(s.range("PipeParams", "evaporation"), r(0.0, 1e3));
        assert_eq!(s.range("StreamPowerParams", "steps"), None);
        // A one-number tuple variant carries its range too.
        assert_eq!(s.variant("DsEdge", "Constant").unwrap().range, r(-100.0, 100.0));
        // f32 bounds are rounded inwards: 89.9 is not an f32, the largest f32 below it is.
        assert_eq!(s.range("ThermalParams", "talus_angle"), r(0.0, 89.9f32.next_down() as f64));
        assert_eq!(s.field("ThermalParams", "talus_angle").unwrap().unit, "°");
        let tip = s.field("ThermalParams", "talus_angle").unwrap().tooltip(s, Some(&Value::from(30.0)));
        assert!(
            tip.starts_with("Talus (repose) angle") && tip.contains("unit °") && tip.contains("default 30"),
            "{tip}"
        );
        assert!(tip.contains("range 0 ..= 89.899994"), "{tip}");
    }

    #[test]
    fn defaults_and_variants() {
        let s = Schema::global();
        assert_eq!(default_json("Option<HillsParams>"), Some(Value::Null));
        assert_eq!(default_json("[f32; 2]"), Some(serde_json::json!([0.0, 0.0])));
        assert_eq!(default_json("Vec<RiverSource>"), Some(serde_json::json!([])));
        assert_eq!(default_json("NotAType"), None);
        assert_eq!(default_json("EdgeMode"), Some(serde_json::json!("Drain")));
        assert_eq!(variant_default_json(s, "Base", "Flat",), Some(serde_json::json!({"Flat": {"height": 0.0}})));
        assert_eq!(variant_default_json(s, "DsEdge", "Wrap"), Some(serde_json::json!("Wrap")));
        assert_eq!(variant_default_json(s, "NoiseKind", "Value"), Some(serde_json::json!({"Value": "Cosine"})));
        // The enum's own default variant keeps its default payload (the landscape fBm).
        let fbm = variant_default_json(s, "Base", "Fbm").unwrap();
        assert_eq!(fbm, default_json("Base").unwrap());
        let base: crate::core::generate::Base = serde_json::from_value(fbm).unwrap();
        assert_eq!(base, crate::core::generate::Base::default());
        let hills: crate::core::generate::Base =
            serde_json::from_value(variant_default_json(s, "Base", "Hills").unwrap()).unwrap();
        assert_eq!(hills, crate::core::generate::Base::Hills(Default::default()));
    }

    crate::params! {
        /// A thing.
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default)]
        pub struct Thing {
            /// Documented,
            /// over two lines.
            #[serde(rename = "x")]
            pub a: f32 = 1.0, unit "m", range [0.0, 2.0], step 0.1;
            pub b: Option<Vec<u8>> = None;
        }
    }

    crate::param_enum! {
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        pub enum E {
            /// One.
            #[default]
            A,
            B(u32, f32),
            C {
                /// Inner.
                x: [f64; 3],
                y: bool,
            },
        }
    }

    #[test]
    fn detects_a_missing_doc() {
        use crate::core::params::ParamSchema;
        let s = Schema::from_specs(&[Thing::spec(), E::spec()]);
        assert_eq!(s.get("Thing").unwrap().doc, "A thing.");
        assert_eq!(s.doc("Thing", "a"), Some("Documented, over two lines."));
        let a = s.field("Thing", "a").unwrap();
        assert_eq!((a.unit.as_str(), a.range, a.step), ("m", Some(NumRange { lo: 0.0, hi: 2.0 }), Some(0.1)));
        assert_eq!(s.doc("Thing", "b"), None);
        assert_eq!(s.field("Thing", "b").unwrap().ty, "Option<Vec<u8>>");
        assert_eq!(Thing::default(), Thing { a: 1.0, b: None });
        assert!(Thing { a: 2.5, b: None }.check_ranges().is_err());
        assert_eq!(Thing::nan_probes().len(), 1);
        let v = s.variants("E").unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].payload, Payload::Tuple(vec!["u32".into(), "f32".into()]));
        match &v[2].payload {
            Payload::Struct(f) => {
                assert_eq!(f.len(), 2);
                assert_eq!((f[0].doc.as_str(), f[0].ty.as_str(), f[1].doc.as_str()), ("Inner.", "[f64;3]", ""));
            }
            p => panic!("{p:?}"),
        }
        // The walk reports the undocumented field (the serialised name of `a` is `x`, so the
        // walk also reports the renamed key).
        let mut problems = Vec::new();
        let value = serde_json::json!({"a": 1.0, "b": null});
        walk_fields(&s, "Thing", s.fields("Thing").unwrap(), &value, "Thing", 0, &mut problems);
        assert!(problems.iter().any(|p| p.contains("Thing.b: field has no doc")), "{problems:?}");
    }

    // -----------------------------------------------------------------------------------------
    // Slider ranges equal validation.

    /// What a top-level type's `validate()` says: `Err(Some(name))` for a `BadParam`, `Err(None)`
    /// for another refusal (a size error). `None` when the JSON does not deserialise.
    fn validate_json(top: &str, v: Value) -> Option<Result<(), Option<&'static str>>> {
        use crate::core::brush::{BrushError, BrushParams};
        use crate::core::erosion::droplet::DropletParams;
        use crate::core::erosion::hardness::HardnessParams;
        use crate::core::erosion::pipe::PipeParams;
        use crate::core::erosion::snowball::SnowballParams;
        use crate::core::erosion::stream_power::StreamPowerParams;
        use crate::core::erosion::thermal::ThermalParams;
        use crate::core::erosion::{Boundary, JobError};
        use crate::core::generate::{GenError, GenerateParams};
        use crate::editor::look::{MaterialParams, OverlayParams, SkyParams, WaterParams};
        fn de<T: serde::de::DeserializeOwned>(v: Value) -> Option<T> {
            serde_json::from_value(v).ok()
        }
        let job = |r: Result<(), JobError>| {
            r.map_err(|e| match e {
                JobError::BadParam { name, .. } => Some(name),
                _ => None,
            })
        };
        let bad = |r: Result<(), crate::core::params::BadParam>| r.map_err(|e| Some(e.name));
        Some(match top {
            "GenerateParams" => de::<GenerateParams>(v)?.validate().map_err(|e| match e {
                GenError::BadParam { name, .. } => Some(name),
                _ => None,
            }),
            "DropletParams" => job(de::<DropletParams>(v)?.validate()),
            "SnowballParams" => job(de::<SnowballParams>(v)?.validate()),
            "PipeParams" => job(de::<PipeParams>(v)?.validate(64, 64)),
            "ThermalParams" => job(de::<ThermalParams>(v)?.validate()),
            "StreamPowerParams" => job(de::<StreamPowerParams>(v)?.validate(64 * 64)),
            "Boundary" => job(de::<Boundary>(v)?.validate()),
            "HardnessParams" => job(de::<HardnessParams>(v)?.validate()),
            "BrushParams" => de::<BrushParams>(v)?.validate().map_err(|BrushError::BadParam { name, .. }| Some(name)),
            "MaterialParams" => bad(de::<MaterialParams>(v)?.validate()),
            "WaterParams" => bad(de::<WaterParams>(v)?.validate()),
            "SkyParams" => bad(de::<SkyParams>(v)?.validate()),
            "OverlayParams" => bad(de::<OverlayParams>(v)?.validate()),
            _ => panic!("no validate for {top}"),
        })
    }

    /// Bounds another field's rule may refuse at the defaults (the range itself is still checked
    /// just outside): `(type, field, the rule)`.
    const CROSS_FIELD: &[(&str, &str, &str)] = &[
        ("HillsParams", "radius_min", "radius_max >= radius_min"),
        ("HillsParams", "radius_max", "radius_max >= radius_min"),
        ("HillsParams", "height_min", "height_max >= height_min"),
        ("HillsParams", "height_max", "height_max >= height_min"),
        ("PipeParams", "evaporation", "evaporation · dt <= 1"),
    ];

    /// One ranged field reached from a top-level value: the whole value (with every `Option` on
    /// the way switched on and every enum on the way set to the variant), the JSON pointer of
    /// the field, its type and owner.
    struct Site {
        value: Value,
        pointer: String,
        field: Field,
        owner: String,
        path: String,
    }

    /// Collects every ranged field reachable from `value` at `pointer` (type `ty`).
    fn sites(s: &Schema, ty: &Ty, value: &Value, pointer: &str, path: &str, depth: usize, out: &mut Vec<Site>) {
        assert!(depth < 24, "{path}: nesting too deep");
        let here = value.pointer(pointer).cloned().unwrap_or(Value::Null);
        let with = |v: Value| {
            let mut whole = value.clone();
            *whole.pointer_mut(pointer).unwrap() = v;
            whole
        };
        match ty {
            Ty::Option(inner) => {
                let on = if here.is_null() { with(default_for(inner).unwrap()) } else { value.clone() };
                sites(s, inner, &on, pointer, &format!("{path}?"), depth + 1, out);
            }
            Ty::Vec(inner) if matches!(**inner, Ty::Named(_)) => {
                let one = with(Value::Array(vec![default_for(inner).unwrap()]));
                sites(s, inner, &one, &format!("{pointer}/0"), &format!("{path}[0]"), depth + 1, out);
            }
            Ty::Named(name) => match &s.get(name).unwrap_or_else(|| panic!("{path}: unknown {name}")).kind {
                TypeKind::Struct(fields) => {
                    for f in fields {
                        let fp = format!("{pointer}/{}", f.name);
                        if f.range.is_some() {
                            out.push(Site {
                                value: value.clone(),
                                pointer: fp.clone(),
                                field: f.clone(),
                                owner: name.clone(),
                                path: format!("{path}.{}", f.name),
                            });
                        }
                        sites(s, &Ty::parse(&f.ty), value, &fp, &format!("{path}.{}", f.name), depth + 1, out);
                    }
                }
                TypeKind::Enum(variants) => {
                    for v in variants {
                        let whole = with(variant_default_json(s, name, &v.name).unwrap());
                        let vp = format!("{pointer}/{}", v.name);
                        match &v.payload {
                            Payload::Unit => {}
                            Payload::Tuple(ts) if ts.len() == 1 => {
                                let p = format!("{path}::{}", v.name);
                                if let Some(range) = v.range {
                                    let field = Field {
                                        name: v.name.clone(),
                                        ty: ts[0].clone(),
                                        doc: v.doc.clone(),
                                        unit: String::new(),
                                        range: Some(range),
                                        step: None,
                                    };
                                    let (pointer, owner) = (vp.clone(), name.clone());
                                    out.push(Site { value: whole.clone(), pointer, field, owner, path: p.clone() });
                                }
                                sites(s, &Ty::parse(&ts[0]), &whole, &vp, &p, depth + 1, out)
                            }
                            Payload::Tuple(ts) => {
                                for (i, t) in ts.iter().enumerate() {
                                    let p = format!("{path}::{}.{i}", v.name);
                                    sites(s, &Ty::parse(t), &whole, &format!("{vp}/{i}"), &p, depth + 1, out);
                                }
                            }
                            Payload::Struct(fs) => {
                                for f in fs {
                                    assert!(f.range.is_none(), "{path}::{}: variant fields have no ranges", v.name);
                                    let p = format!("{path}::{}.{}", v.name, f.name);
                                    sites(
                                        s,
                                        &Ty::parse(&f.ty),
                                        &whole,
                                        &format!("{vp}/{}", f.name),
                                        &p,
                                        depth + 1,
                                        out,
                                    );
                                }
                            }
                        }
                    }
                }
            },
            _ => {}
        }
    }

    /// The number type inside a ranged field's type.
    fn number(ty: &Ty) -> Prim {
        match ty {
            Ty::Prim(p) => *p,
            Ty::Option(t) | Ty::Array(t, _) => number(t),
            t => panic!("ranged field of type {t:?}"),
        }
    }

    /// The JSON of a ranged field set to `x` (`Some(x)`, or every element `x`).
    fn field_json(ty: &Ty, x: Value) -> Value {
        match ty {
            Ty::Option(t) => field_json(t, x),
            Ty::Array(t, n) => Value::Array(vec![field_json(t, x); *n]),
            _ => x,
        }
    }

    /// `x` as a value of `p`, or `None` when `p` cannot hold it.
    fn num_json(p: Prim, x: f64) -> Option<Value> {
        if p.is_float() {
            return x.is_finite().then(|| Value::from(x));
        }
        let (lo, hi) = p.int_bounds().unwrap();
        (x.fract() == 0.0 && x >= lo as f64 && x <= hi as f64)
            .then(|| if x < 0.0 { Value::from(x as i64) } else { Value::from(x as u64) })
    }

    /// The nearest value of `p` beyond `x` (downwards when `down`).
    fn outside(p: Prim, x: f64, down: bool) -> f64 {
        match p {
            Prim::F32 => (if down { (x as f32).next_down() } else { (x as f32).next_up() }) as f64,
            Prim::F64 => {
                if down {
                    x.next_down()
                } else {
                    x.next_up()
                }
            }
            _ => {
                if down {
                    x - 1.0
                } else {
                    x + 1.0
                }
            }
        }
    }

    #[test]
    fn every_slider_range_equals_validation() {
        let s = Schema::global();
        let mut problems = Vec::new();
        let mut checked = 0;
        for top in TOP_LEVEL {
            let default = default_json(top).unwrap();
            assert_eq!(validate_json(top, default.clone()), Some(Ok(())), "{top}: the default does not validate");
            let mut found = Vec::new();
            sites(s, &Ty::Named(top.to_string()), &default, "", top, 0, &mut found);
            for site in found {
                let ty = Ty::parse(&site.field.ty);
                let p = number(&ty);
                let r = site.field.range.unwrap();
                let cross = CROSS_FIELD.iter().any(|(t, f, _)| *t == site.owner && *f == site.field.name);
                let run = |x: Value| {
                    let mut v = site.value.clone();
                    *v.pointer_mut(&site.pointer).unwrap() = field_json(&ty, x);
                    validate_json(top, v)
                };
                // The containing value as found validates.
                if validate_json(top, site.value.clone()) != Some(Ok(())) {
                    problems.push(format!("{}: the defaults around it do not validate", site.path));
                    continue;
                }
                for (bound, down) in [(r.lo, true), (r.hi, false)] {
                    if let Some(x) = num_json(p, bound) {
                        match run(x) {
                            Some(Ok(())) => {}
                            Some(Err(Some(_))) if cross => {}
                            other => problems.push(format!("{}: the bound {bound} is refused: {other:?}", site.path)),
                        }
                    }
                    let beyond = outside(p, bound, down);
                    if let Some(x) = num_json(p, beyond)
                        && let Some(Ok(())) = run(x)
                    {
                        problems.push(format!("{}: {beyond}, just outside {bound}, is accepted", site.path));
                    }
                    checked += 1;
                }
            }
        }
        // NaN cannot travel in JSON: each type's own range check is asked directly.
        let mut specs = Vec::new();
        register_all(&mut specs);
        let mut nans = 0;
        for spec in &specs {
            for (field, verdict) in (spec.nan_probes)() {
                nans += 1;
                if verdict.is_ok() {
                    problems.push(format!("{}.{field}: NaN is accepted", spec.name));
                }
            }
            // Every float field (or one-number variant) with a range has a probe.
            let floats = match spec.shape {
                ShapeSpec::Struct(fs) => {
                    fs.iter().filter(|f| f.range.is_some() && number(&Ty::parse(f.ty)).is_float()).count()
                }
                ShapeSpec::Enum(vs) => vs
                    .iter()
                    .filter(|v| match v.payload {
                        PayloadSpec::Tuple([t]) => v.range.is_some() && number(&Ty::parse(t)).is_float(),
                        _ => false,
                    })
                    .count(),
            };
            let probes = (spec.nan_probes)().len();
            if floats != probes {
                problems.push(format!("{}: {floats} ranged float fields but {probes} NaN probes", spec.name));
            }
        }
        assert!(problems.is_empty(), "slider range ≠ validation:\n{}", problems.join("\n"));
        assert!(checked > 300 && nans > 150, "only {checked} bounds and {nans} NaN probes checked");
    }
}
