//! The parameter schema: every field of the generator, erosion and brush parameter types, with its
//! type and the doc comment that gives its meaning, unit, range and default.
//!
//! How: the source files that define those types are embedded with `include_str!` and parsed once
//! ([`Schema::global`]). The parser is small and line/character based; it understands exactly the
//! shapes the parameter types use:
//!
//! - `pub struct Name { /// doc…  pub field: Type, … }` (doc lines may span several lines;
//!   attributes such as `#[serde(default)]` and plain `//` comments are skipped);
//! - `pub enum Name { /// doc  Unit, Tuple(Type, …), Struct { field: Type, … }, … }`.
//!
//! Only items declared at column 0 with `pub struct`/`pub enum` and a braced body are read;
//! tuple structs, private items and nested modules are ignored. Types are kept as their source
//! text with whitespace removed (`Option<[f32;2]>`) and read with [`Ty::parse`].
//!
//! Besides the field list the module offers:
//! - [`parse_range`]: the numeric range written in a doc (`0 ..= 1`, `1..=65 536`, `0 ..= 10⁶`,
//!   `1 ..= 2²⁴`, `0..=u32::MAX`, `[0, 1e3]`, `(0, 1e6)`, `±1e7`, `∞`), for clamping widgets;
//! - [`default_json`]: a default value, as serde JSON (externally tagged enums, like serde's
//!   default), for any type text the parameter types contain — a hand registry of the named
//!   types (`serde_json::to_value(T::default())`) plus the generic shapes (`Option` → `null`,
//!   `Vec` → `[]`, `[T; N]`, primitives). The UI needs it when the user ticks an `Option` on,
//!   adds a `Vec` element or switches an enum variant ([`variant_default_json`]).
//!
//! Pure Rust (no egui, no Bevy); `crate::app::param_editor` draws the widgets from it. The tests
//! walk the default value of every top-level parameter type and fail when a reachable field has
//! no doc or a reachable type is unknown, so the docs stay complete as the code grows.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{Map, Value};

/// The source files parsed by [`Schema::global`], as `(path relative to src/, text)`.
pub const SOURCES: &[(&str, &str)] = &[
    ("core/generate/mod.rs", include_str!("../core/generate/mod.rs")),
    ("core/generate/fbm.rs", include_str!("../core/generate/fbm.rs")),
    ("core/generate/diamond_square.rs", include_str!("../core/generate/diamond_square.rs")),
    ("core/generate/lazy_world.rs", include_str!("../core/generate/lazy_world.rs")),
    ("core/generate/voronoi_island.rs", include_str!("../core/generate/voronoi_island.rs")),
    ("core/generate/hills.rs", include_str!("../core/generate/hills.rs")),
    ("core/generate/terrace.rs", include_str!("../core/generate/terrace.rs")),
    ("core/generate/island_filter.rs", include_str!("../core/generate/island_filter.rs")),
    ("core/generate/value_noise.rs", include_str!("../core/generate/value_noise.rs")),
    ("core/generate/warp.rs", include_str!("../core/generate/warp.rs")),
    ("core/erosion/mod.rs", include_str!("../core/erosion/mod.rs")),
    ("core/erosion/droplet/params.rs", include_str!("../core/erosion/droplet/params.rs")),
    ("core/erosion/snowball/params.rs", include_str!("../core/erosion/snowball/params.rs")),
    ("core/erosion/pipe/params.rs", include_str!("../core/erosion/pipe/params.rs")),
    ("core/erosion/thermal/params.rs", include_str!("../core/erosion/thermal/params.rs")),
    ("core/erosion/hardness.rs", include_str!("../core/erosion/hardness.rs")),
    ("core/erosion/stream_power/params.rs", include_str!("../core/erosion/stream_power/params.rs")),
    ("core/brush.rs", include_str!("../core/brush.rs")),
    ("editor/look/mod.rs", include_str!("look/mod.rs")),
    ("editor/look/material.rs", include_str!("look/material.rs")),
    ("editor/look/water.rs", include_str!("look/water.rs")),
    ("editor/look/sky.rs", include_str!("look/sky.rs")),
    ("editor/look/overlay.rs", include_str!("look/overlay.rs")),
];

/// The top-level parameter types the editor edits (each has an entry in [`default_json`]).
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

/// One named field of a struct (or of a struct-like enum variant).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field's name as written (and as serde names it).
    pub name: String,
    /// The type's source text with whitespace removed, e.g. `Option<[f32;2]>`.
    pub ty: String,
    /// The doc comment, lines joined by spaces (a blank doc line becomes a paragraph break);
    /// empty when the field has none.
    pub doc: String,
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
    pub name: String,
    pub doc: String,
    pub payload: Payload,
}

/// A struct's fields or an enum's variants.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    Struct(Vec<Field>),
    Enum(Vec<Variant>),
}

/// One parsed type definition.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDef {
    pub name: String,
    /// The type's own doc comment.
    pub doc: String,
    pub kind: TypeKind,
}

impl TypeDef {
    /// True for an enum whose variants all carry nothing.
    pub fn is_unit_enum(&self) -> bool {
        matches!(&self.kind, TypeKind::Enum(vs) if vs.iter().all(|v| v.payload == Payload::Unit))
    }
}

/// Every parsed type, by name.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    types: HashMap<String, TypeDef>,
}

impl Schema {
    /// The schema of [`SOURCES`], parsed on first use.
    pub fn global() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(|| Schema::parse(SOURCES.iter().map(|(_, text)| *text)))
    }

    /// Parses the given source texts. When two files define the same name, the first wins.
    pub fn parse<'a>(sources: impl IntoIterator<Item = &'a str>) -> Schema {
        let mut types = HashMap::new();
        for src in sources {
            for def in parse_source(src) {
                types.entry(def.name.clone()).or_insert(def);
            }
        }
        Schema { types }
    }

    /// The definition of a type (last path segment, e.g. `"FbmParams"`).
    pub fn get(&self, name: &str) -> Option<&TypeDef> {
        self.types.get(name)
    }

    /// Names of all parsed types (unordered).
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

    /// The numeric range given in a field's doc ([`parse_range`]).
    pub fn range(&self, struct_name: &str, field: &str) -> Option<NumRange> {
        parse_range(self.doc(struct_name, field)?)
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

// ---------------------------------------------------------------------------------------------
// Types.

/// A primitive type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    Bool,
    F32,
    F64,
    U8,
    U16,
    U32,
    U64,
    Usize,
    I8,
    I16,
    I32,
    I64,
    Isize,
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

    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Prim::Bool | Prim::F32 | Prim::F64 | Prim::String)
    }

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
    Prim(Prim),
    Option(Box<Ty>),
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
        if let Some(semi) = top_level_rfind(inner, ';') {
            if let Ok(n) = inner[semi + 1..].replace('_', "").parse::<usize>() {
                return Ty::Array(Box::new(parse_ty(&inner[..semi])), n);
            }
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
// Source parser.

/// Parses every `pub struct Name { … }` / `pub enum Name { … }` declared at column 0.
fn parse_source(src: &str) -> Vec<TypeDef> {
    let mut out = Vec::new();
    let mut doc: Vec<String> = Vec::new();
    let mut offset = 0usize;
    let mut skip_until = 0usize; // byte offset before which lines belong to an item already read
    let mut attr_depth = 0i32; // bracket depth of a multi-line column-0 attribute
    for line in src.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if start < skip_until {
            continue;
        }
        if attr_depth > 0 {
            attr_depth += bracket_delta(line);
            continue;
        }
        if let Some(d) = line.strip_prefix("///") {
            doc.push(doc_line(d));
            continue;
        }
        if line.starts_with("#[") {
            attr_depth = bracket_delta(line).max(0);
            continue;
        }
        let (is_struct, rest) = if let Some(r) = line.strip_prefix("pub struct ") {
            (true, r)
        } else if let Some(r) = line.strip_prefix("pub enum ") {
            (false, r)
        } else {
            doc.clear();
            continue;
        };
        let item_doc = join_doc(&doc);
        doc.clear();
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let after = &rest[name.len()..];
        // Braced body on this line (after optional generics / where clause), not a tuple struct.
        let Some(brace) = after.find('{') else { continue };
        if after[..brace].contains('(') || after[..brace].contains(';') || name.is_empty() {
            continue;
        }
        let open = start + (line.len() - rest.len()) + name.len() + brace;
        let Some(close) = match_brace(src, open) else { continue };
        skip_until = close;
        let body = &src[open + 1..close];
        let kind = if is_struct { TypeKind::Struct(parse_fields(body)) } else { TypeKind::Enum(parse_variants(body)) };
        out.push(TypeDef { name, doc: item_doc, kind });
    }
    out
}

fn bracket_delta(line: &str) -> i32 {
    line.chars()
        .map(|c| match c {
            '[' => 1,
            ']' => -1,
            _ => 0,
        })
        .sum()
}

/// The text of one `///` line (without the marker and one leading space).
fn doc_line(after_marker: &str) -> String {
    let t = after_marker.trim_end_matches(['\n', '\r']);
    t.strip_prefix(' ').unwrap_or(t).trim_end().to_string()
}

/// Joins doc lines with spaces; blank lines become paragraph breaks.
fn join_doc(lines: &[String]) -> String {
    let mut out = String::new();
    for l in lines {
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

/// Byte index of the bracket closing the one at `open` (`{`, `(` or `[`), skipping `//` comments
/// and string literals.
fn match_brace(src: &str, open: usize) -> Option<usize> {
    let bytes = src.as_bytes();
    let (o, c) = match bytes[open] {
        b'{' => (b'{', b'}'),
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0i32;
    let mut i = open;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
        } else if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// A cursor over an item body.
struct Cur<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cur<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }
    fn eof(&self) -> bool {
        self.pos >= self.s.len()
    }
    fn skip_ws(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start().len();
    }
    fn take_line(&mut self) -> &'a str {
        let r = self.rest();
        let end = r.find('\n').map_or(r.len(), |i| i + 1);
        self.pos += end;
        &r[..end]
    }
    fn ident(&mut self) -> Option<&'a str> {
        let r = self.rest();
        let n: usize = r.chars().take_while(|c| c.is_alphanumeric() || *c == '_').map(char::len_utf8).sum();
        if n == 0 {
            return None;
        }
        self.pos += n;
        Some(&r[..n])
    }
    /// At an opening bracket: returns the text inside and moves past the closing one.
    fn balanced(&mut self) -> &'a str {
        match match_brace(self.s, self.pos) {
            Some(close) => {
                let inner = &self.s[self.pos + 1..close];
                self.pos = close + 1;
                inner
            }
            None => {
                let inner = &self.s[(self.pos + 1).min(self.s.len())..];
                self.pos = self.s.len();
                inner
            }
        }
    }
    /// Text up to the next `,` outside brackets (or the end); the comma is consumed.
    fn until_comma(&mut self) -> &'a str {
        let r = self.rest();
        let mut depth = 0i32;
        for (i, ch) in r.char_indices() {
            match ch {
                '<' | '(' | '[' | '{' => depth += 1,
                '>' | ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    self.pos += i + 1;
                    return &r[..i];
                }
                _ => {}
            }
        }
        self.pos = self.s.len();
        r
    }
    /// Skips comments and attributes, collecting `///` lines into `doc`. Returns false at the end.
    fn skip_trivia(&mut self, doc: &mut Vec<String>) -> bool {
        loop {
            self.skip_ws();
            if self.eof() {
                return false;
            }
            let r = self.rest();
            if let Some(d) = r.strip_prefix("///") {
                let line_len = d.find('\n').unwrap_or(d.len());
                doc.push(doc_line(&d[..line_len]));
                self.take_line();
            } else if r.starts_with("//") {
                self.take_line();
            } else if r.starts_with("/*") {
                self.pos += r.find("*/").map_or(r.len(), |i| i + 2);
            } else if r.starts_with("#[") || r.starts_with("#![") {
                self.pos += r.find('[').unwrap_or(0);
                self.balanced();
            } else if r.starts_with("pub") && !r[3..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                self.pos += 3;
                self.skip_ws();
                if self.rest().starts_with('(') {
                    self.balanced();
                }
            } else {
                return true;
            }
        }
    }
}

fn normalize_ty(t: &str) -> String {
    t.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Fields of a struct body (`[pub] name: Type,` with docs).
fn parse_fields(body: &str) -> Vec<Field> {
    let mut cur = Cur { s: body, pos: 0 };
    let mut out = Vec::new();
    let mut doc = Vec::new();
    while cur.skip_trivia(&mut doc) {
        let Some(name) = cur.ident() else {
            cur.until_comma();
            doc.clear();
            continue;
        };
        cur.skip_ws();
        if !cur.rest().starts_with(':') {
            cur.until_comma();
            doc.clear();
            continue;
        }
        cur.pos += 1;
        let ty = normalize_ty(cur.until_comma());
        out.push(Field { name: name.to_string(), ty, doc: join_doc(&doc) });
        doc.clear();
    }
    out
}

/// Variants of an enum body.
fn parse_variants(body: &str) -> Vec<Variant> {
    let mut cur = Cur { s: body, pos: 0 };
    let mut out = Vec::new();
    let mut doc = Vec::new();
    while cur.skip_trivia(&mut doc) {
        let Some(name) = cur.ident() else {
            cur.until_comma();
            doc.clear();
            continue;
        };
        let vdoc = join_doc(&doc);
        doc.clear();
        cur.skip_ws();
        let payload = if cur.rest().starts_with('(') {
            let inner = cur.balanced();
            let mut types = Vec::new();
            let mut c = Cur { s: inner, pos: 0 };
            while !c.eof() {
                let t = normalize_ty(c.until_comma());
                if !t.is_empty() {
                    types.push(t);
                }
            }
            Payload::Tuple(types)
        } else if cur.rest().starts_with('{') {
            let mut fields = parse_fields(cur.balanced());
            // A lone undocumented field of a struct variant is described by the variant's doc.
            if fields.len() == 1 && fields[0].doc.is_empty() {
                fields[0].doc = vdoc.clone();
            }
            Payload::Struct(fields)
        } else {
            Payload::Unit
        };
        cur.until_comma(); // `= discriminant` if any, and the comma
        out.push(Variant { name: name.to_string(), doc: vdoc, payload });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Ranges.

/// An inclusive numeric range read from a doc (bounds may be infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NumRange {
    pub lo: f64,
    pub hi: f64,
}

/// The first numeric range written in `doc`, or `None`.
///
/// Forms, tried in this order: `lo ..= hi` (spaces optional; `>1..=4` reads as 1..=4), an
/// interval `[lo, hi]` / `(lo, hi]` / `[lo, hi)` / `(lo, hi)` (open ends are read as closed),
/// and `±x`. Numbers may have a sign (`-`, `−`, `+`), thousands grouped by spaces (`65 536`),
/// a decimal exponent (`1e-6`), a superscript power (`10⁶`, `2²⁴`, `10⁻³`) or a `^` power
/// (`2^24`), or be `∞` or `u32::MAX`-style constants. Ranges whose ends are not both numbers
/// (`radius_min..=16384`, `[0, width−1]`) are skipped.
pub fn parse_range(doc: &str) -> Option<NumRange> {
    // 1. `lo ..= hi`.
    let mut from = 0;
    while let Some(i) = doc[from..].find("..=") {
        let at = from + i;
        from = at + 3;
        let (Some(lo), Some(hi)) = (number_before(&doc[..at]), number_after(&doc[at + 3..])) else {
            continue;
        };
        if lo <= hi {
            return Some(NumRange { lo, hi });
        }
    }
    // 2. Intervals.
    for (i, ch) in doc.char_indices() {
        if ch != '[' && ch != '(' {
            continue;
        }
        let r = &doc[i + 1..];
        let Some((lo, n)) = parse_number(r.trim_start()) else { continue };
        let r = r.trim_start()[n..].trim_start();
        let Some(r) = r.strip_prefix(',') else { continue };
        let r = r.trim_start();
        let Some((hi, n)) = parse_number(r) else { continue };
        if r[n..].trim_start().starts_with([']', ')']) && lo <= hi {
            return Some(NumRange { lo, hi });
        }
    }
    // 3. `±x`.
    if let Some(i) = doc.find('±') {
        if let Some((x, _)) = parse_number(&doc[i + '±'.len_utf8()..]) {
            let x = x.abs();
            return Some(NumRange { lo: -x, hi: x });
        }
    }
    None
}

/// The number ending `text` (after trimming), e.g. `"Valid 0"` → 0, ``"`1 000"`` → 1000.
fn number_before(text: &str) -> Option<f64> {
    let t = text.trim_end();
    let mut tokens: Vec<&str> = t.split(' ').collect();
    let mut tok = tokens.pop()?.to_string();
    // Thousands groups: "1 000" → "1000".
    while tok.len() == 3 && tok.chars().all(|c| c.is_ascii_digit()) {
        match tokens.last() {
            Some(p) if (1..=3).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit()) => {
                tok = format!("{p}{tok}");
                tokens.pop();
            }
            Some(p) => {
                // The group may be glued to a marker: "`1 000".
                let digits: String = p.chars().rev().take_while(|c| c.is_ascii_digit()).collect();
                if (1..=3).contains(&digits.len()) && p.len() > digits.len() {
                    let d: String = digits.chars().rev().collect();
                    tok = format!("{d}{tok}");
                }
                break;
            }
            None => break,
        }
    }
    let tok = tok.trim_start_matches(|c: char| "`([>≥≤<*".contains(c));
    let (v, n) = parse_number(tok)?;
    (n == tok.len()).then_some(v)
}

/// The number starting `text` (after trimming).
fn number_after(text: &str) -> Option<f64> {
    let t = text.trim_start();
    let t = t.strip_prefix('`').unwrap_or(t);
    parse_number(t).map(|(v, _)| v)
}

const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// Parses a number at the start of `s`; returns the value and the bytes consumed.
pub fn parse_number(s: &str) -> Option<(f64, usize)> {
    let mut pos = 0;
    let mut sign = 1.0;
    if let Some(c) = s.chars().next() {
        if c == '-' || c == '−' {
            sign = -1.0;
            pos += c.len_utf8();
        } else if c == '+' {
            pos += 1;
        }
    }
    let r = &s[pos..];
    if r.starts_with('∞') {
        return Some((sign * f64::INFINITY, pos + '∞'.len_utf8()));
    }
    for (name, v) in [
        ("u8::MAX", u8::MAX as f64),
        ("u16::MAX", u16::MAX as f64),
        ("u32::MAX", u32::MAX as f64),
        ("u64::MAX", u64::MAX as f64),
        ("usize::MAX", usize::MAX as f64),
        ("i32::MAX", i32::MAX as f64),
        ("i64::MAX", i64::MAX as f64),
        ("f32::MAX", f32::MAX as f64),
        ("f64::MAX", f64::MAX),
    ] {
        if r.starts_with(name) {
            return Some((sign * v, pos + name.len()));
        }
    }
    // Mantissa: digits with optional space-grouped thousands, optional fraction.
    let b = s.as_bytes();
    let mut text = String::new();
    let mut i = pos;
    while i < b.len() && b[i].is_ascii_digit() {
        text.push(b[i] as char);
        i += 1;
    }
    // "65 536": after a first group of 1-3 digits, a space and exactly three digits, repeatedly.
    if (1..=3).contains(&text.len()) {
        while b.get(i) == Some(&b' ')
            && b.get(i + 1..i + 4).is_some_and(|g| g.iter().all(u8::is_ascii_digit))
            && !b.get(i + 4).is_some_and(u8::is_ascii_digit)
        {
            text.push_str(std::str::from_utf8(&b[i + 1..i + 4]).ok()?);
            i += 4;
        }
    }
    if text.is_empty() {
        return None;
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        text.push('.');
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            text.push(b[i] as char);
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if matches!(b.get(j), Some(b'-' | b'+')) {
            exp.push(b[j] as char);
            j += 1;
        }
        let e0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            exp.push(b[j] as char);
            j += 1;
        }
        if j > e0 {
            text.push_str(&exp);
            i = j;
        }
    }
    let mut v: f64 = text.parse().ok()?;
    // Powers: superscripts or `^n`.
    let rest = &s[i..];
    let mut chars = rest.char_indices().peekable();
    let mut neg = false;
    let mut exp: Option<i32> = None;
    let mut used = 0;
    if let Some(&(_, '⁻')) = chars.peek() {
        neg = true;
        chars.next();
        used += '⁻'.len_utf8();
    }
    while let Some(&(_, c)) = chars.peek() {
        let Some(d) = SUPERSCRIPTS.iter().position(|&s| s == c) else { break };
        exp = Some(exp.unwrap_or(0) * 10 + d as i32);
        used += c.len_utf8();
        chars.next();
    }
    if let Some(e) = exp {
        v = v.powi(if neg { -e } else { e });
        i += used;
    } else if let Some(p) = rest.strip_prefix('^') {
        let n: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(e) = n.parse::<i32>() {
            v = v.powi(e);
            i += 1 + n.len();
        }
    }
    Some((sign * v, i))
}

// ---------------------------------------------------------------------------------------------
// Default values.

fn to_json<T: Serialize>(v: T) -> Option<Value> {
    serde_json::to_value(v).ok()
}

/// A default value for a type text, as serde JSON: primitives 0/false/"", `Option` null, `Vec`
/// empty, `[T; N]` N defaults, and the named parameter types from their `Default`. `None` for
/// a named type missing from the registry (the tests make sure none the parameters reach is).
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
        Ty::Named(n) => named_default(n),
        Ty::Unknown(_) => None,
    }
}

/// The hand registry: `serde_json::to_value(T::default())` for every named parameter type.
fn named_default(name: &str) -> Option<Value> {
    use crate::core::brush::{BrushKind, BrushParams, Falloff};
    use crate::core::erosion::droplet::DropletParams;
    use crate::core::erosion::pipe::{Advection, PipeParams, RiverSource};
    use crate::core::erosion::snowball::SnowballParams;
    use crate::core::erosion::stream_power::{FlowMethod, StreamPowerParams, UpliftMode};
    use crate::core::erosion::thermal::ThermalParams;
    use crate::core::erosion::{Boundary, EdgeMode, ModelParams};
    use crate::core::generate::diamond_square::{DiamondSquareParams, DsEdge};
    use crate::core::generate::fbm::{FbmParams, Fractal, NoiseKind};
    use crate::core::generate::hills::{HillShape, HillsParams};
    use crate::core::generate::island_filter::{IslandFilterParams, IslandMode, RadialFalloffParams, SeaLevelParams};
    use crate::core::generate::lazy_world::LazyWorldParams;
    use crate::core::generate::terrace::TerraceParams;
    use crate::core::generate::value_noise::Interpolation;
    use crate::core::generate::voronoi_island::VoronoiIslandParams;
    use crate::core::generate::warp::WarpParams;
    use crate::core::generate::{Base, GenerateParams};
    match name {
        // Generation.
        "GenerateParams" => to_json(GenerateParams::default()),
        "Base" => to_json(Base::default()),
        "FbmParams" => to_json(FbmParams::default()),
        "NoiseKind" => to_json(NoiseKind::default()),
        "Fractal" => to_json(Fractal::default()),
        "Interpolation" => to_json(Interpolation::default()),
        "WarpParams" => to_json(WarpParams::default()),
        "DiamondSquareParams" => to_json(DiamondSquareParams::default()),
        "DsEdge" => to_json(DsEdge::default()),
        "LazyWorldParams" => to_json(LazyWorldParams::default()),
        "VoronoiIslandParams" => to_json(VoronoiIslandParams::default()),
        "HillsParams" => to_json(HillsParams::default()),
        "HillShape" => to_json(HillShape::default()),
        "TerraceParams" => to_json(TerraceParams::default()),
        "IslandFilterParams" => to_json(IslandFilterParams::default()),
        "IslandMode" => to_json(IslandMode::default()),
        "RadialFalloffParams" => to_json(RadialFalloffParams::default()),
        "SeaLevelParams" => to_json(SeaLevelParams::default()),
        // Erosion.
        "ModelParams" => to_json(ModelParams::Droplet(DropletParams::default())),
        "DropletParams" => to_json(DropletParams::default()),
        "SnowballParams" => to_json(SnowballParams::default()),
        "PipeParams" => to_json(PipeParams::default()),
        "RiverSource" => to_json(RiverSource::default()),
        "Advection" => to_json(Advection::default()),
        "ThermalParams" => to_json(ThermalParams::default()),
        "StreamPowerParams" => to_json(StreamPowerParams::default()),
        "UpliftMode" => to_json(UpliftMode::default()),
        "FlowMethod" => to_json(FlowMethod::default()),
        "Boundary" => to_json(Boundary::default()),
        "EdgeMode" => to_json(EdgeMode::default()),
        // Brush.
        "BrushParams" => to_json(BrushParams::default()),
        "BrushKind" => to_json(BrushKind::default()),
        "Falloff" => to_json(Falloff::default()),
        // Look (issue #5). Each look file registers its nested types here too.
        "LookParams" => to_json(crate::editor::look::LookParams::default()),
        "MaterialParams" => to_json(crate::editor::look::MaterialParams::default()),
        "TerrainLayer" => to_json(crate::editor::look::material::TerrainLayer::default()),
        "LayerBands" => to_json(crate::editor::look::material::LayerBands::default()),
        "SedimentParams" => to_json(crate::editor::look::material::SedimentParams::default()),
        "WetParams" => to_json(crate::editor::look::material::WetParams::default()),
        "BiomeParams" => to_json(crate::editor::look::material::BiomeParams::default()),
        "DetailParams" => to_json(crate::editor::look::material::DetailParams::default()),
        "WaterParams" => to_json(crate::editor::look::WaterParams::default()),
        "SkyParams" => to_json(crate::editor::look::SkyParams::default()),
        "SunParams" => to_json(crate::editor::look::sky::SunParams::default()),
        "ShadowParams" => to_json(crate::editor::look::sky::ShadowParams::default()),
        "ShadowFilter" => to_json(crate::editor::look::sky::ShadowFilter::default()),
        "AtmosphereParams" => to_json(crate::editor::look::sky::AtmosphereParams::default()),
        "LightShaftParams" => to_json(crate::editor::look::sky::LightShaftParams::default()),
        "ViewParams" => to_json(crate::editor::look::sky::ViewParams::default()),
        "Antialias" => to_json(crate::editor::look::sky::Antialias::default()),
        "ToneMapping" => to_json(crate::editor::look::sky::ToneMapping::default()),
        "OverlayParams" => to_json(crate::editor::look::OverlayParams::default()),
        "OverlayKind" => to_json(crate::editor::look::overlay::OverlayKind::default()),
        "LakeSource" => to_json(crate::editor::look::overlay::LakeSource::default()),
        "HardnessParams" => to_json(crate::core::erosion::hardness::HardnessParams::default()),
        "HardnessMode" => to_json(crate::core::erosion::hardness::HardnessMode::default()),
        _ => None,
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
    if let Some(d) = named_default(enum_name) {
        if enum_tag(&d).is_some_and(|(tag, _)| tag == variant) {
            return Some(d);
        }
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
    fn range_parser_on_real_docs() {
        let r = |lo, hi| Some(NumRange { lo, hi });
        assert_eq!(parse_range("Fraction, `0 ..= 1`; default 0.3."), r(0.0, 1.0));
        assert_eq!(parse_range("Nodes, `1 ..= 64`; default 5."), r(1.0, 64.0));
        assert_eq!(parse_range("Metres per node, `0 ..= 10⁶`; default 0.01."), r(0.0, 1e6));
        assert_eq!(parse_range("Droplets per step. `1 ..= 2²⁴`; default 4096."), r(1.0, 16_777_216.0));
        assert_eq!(parse_range("Count, `0 ..= 2³⁴`; default 5000."), r(0.0, 17_179_869_184.0));
        assert_eq!(parse_range("Nodes along x. Range 1..=65 536; default 513."), r(1.0, 65_536.0));
        assert_eq!(parse_range("Number of hills, 0..=1 000 000. Default 200."), r(0.0, 1e6));
        assert_eq!(parse_range("Lowest hill height, metres, −1e5..=1e5 (negative = pit)."), r(-1e5, 1e5));
        assert_eq!(parse_range("Frequency, cycles per node, 1e-6..=1. Default 0.06."), r(1e-6, 1.0));
        assert_eq!(parse_range("Frequency ratio between consecutive octaves, >1..=4. Default 2."), r(1.0, 4.0));
        assert_eq!(parse_range("Largest hill radius, nodes, radius_min..=16384. Default 48."), None);
        assert_eq!(parse_range("Valid 0..=100 000 m. Default 100 m."), r(0.0, 1e5));
        assert_eq!(parse_range("Number of iterations. Range `0..=u32::MAX`, default `50`."), r(0.0, u32::MAX as f64));
        assert_eq!(parse_range("Time step Δt, seconds. Range `[1e-6, 10]`, default `0.1`."), r(1e-6, 10.0));
        assert_eq!(parse_range("Distance between nodes, metres. Range (0, 1e6); default 1."), r(0.0, 1e6));
        assert_eq!(parse_range("Radius of the affected disc, metres. Range (0, 100 000]; default 16."), r(0.0, 1e5));
        assert_eq!(parse_range("Centre, grid x (nodes), within `[0, width−1]`."), None);
        assert_eq!(parse_range("Target of `Flatten`, metres. Range ±1e7 when set; default `None`."), r(-1e7, 1e7));
        assert_eq!(parse_range("Slope, `0 ..= ∞`"), r(0.0, f64::INFINITY));
        assert_eq!(parse_range("Rate, `10⁻³ ..= 1`"), r(1e-3, 1.0));
        assert_eq!(
            parse_range("Apply every this many steps. Range `[1, u32::MAX]`, default `1`."),
            r(1.0, u32::MAX as f64)
        );
        assert_eq!(parse_range("Nothing here (seed 003), default 5."), None);
        assert_eq!(parse_range(""), None);
        // Through the schema: the first `..=` wins over a non-range `[0, 1)` earlier in the doc.
        let s = Schema::global();
        assert_eq!(s.range("DiamondSquareParams", "roughness"), r(0.0, 16.0));
        assert_eq!(s.range("DropletParams", "batch"), r(1.0, 16_777_216.0));
        assert_eq!(s.range("PipeParams", "evaporation"), r(0.0, 1e3));
        assert_eq!(s.range("StreamPowerParams", "steps"), None);
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

    #[test]
    fn detects_a_missing_doc() {
        let src = "/// A thing.\n#[derive(Clone)]\n#[serde(default)]\npub struct Thing {\n    /// Documented,\n    /// over two lines.\n    #[serde(rename = \"x\")]\n    pub a: f32,\n    pub b: Option<Vec<u8>>,\n}\n\npub enum E {\n    /// One.\n    A,\n    B(u32, f32),\n    C {\n        /// Inner.\n        x: [f64; 3],\n        y: bool,\n    },\n    D = 4,\n}\npub struct Tuple(u32);\n";
        let s = Schema::parse([src]);
        assert_eq!(s.get("Thing").unwrap().doc, "A thing.");
        assert_eq!(s.doc("Thing", "a"), Some("Documented, over two lines."));
        assert_eq!(s.doc("Thing", "b"), None);
        assert_eq!(s.field("Thing", "b").unwrap().ty, "Option<Vec<u8>>");
        let v = s.variants("E").unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[1].payload, Payload::Tuple(vec!["u32".into(), "f32".into()]));
        match &v[2].payload {
            Payload::Struct(f) => {
                assert_eq!(f.len(), 2);
                assert_eq!((f[0].doc.as_str(), f[0].ty.as_str(), f[1].doc.as_str()), ("Inner.", "[f64;3]", ""));
            }
            p => panic!("{p:?}"),
        }
        assert_eq!((v[3].name.as_str(), &v[3].payload), ("D", &Payload::Unit));
        assert!(s.get("Tuple").is_none());
        // The walk reports the undocumented field.
        let mut problems = Vec::new();
        let value = serde_json::json!({"a": 1.0, "b": null});
        walk_fields(&s, "Thing", s.fields("Thing").unwrap(), &value, "Thing", 0, &mut problems);
        assert!(problems.iter().any(|p| p.contains("Thing.b: field has no doc")), "{problems:?}");
    }
}
