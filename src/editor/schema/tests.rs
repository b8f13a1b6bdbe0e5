//! Tests of [`super`] (schema).

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
                            (Payload::Struct(fs), Some(p)) => walk_fields(schema, &v.name, fs, p, &vp, depth, problems),
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

/// The panel edits a model's parameters through the schema, by the registry's `params_type`: every
/// model's parameter type is a top-level type, so a new model cannot be left out of it.
#[test]
fn every_models_parameters_are_a_top_level_type() {
    for e in crate::core::erosion::MODELS {
        assert!(TOP_LEVEL.contains(&e.params_type), "{} is not in TOP_LEVEL", e.params_type);
        assert!(Schema::global().get(e.params_type).is_some(), "{} is not registered (register_all)", e.params_type);
    }
}

#[test]
fn parses_the_shapes() {
    let s = Schema::global();
    let f = s.field("GenerateParams", "normalize").unwrap();
    assert_eq!(f.ty, "Option<[f32;2]>");
    assert!(f.doc.contains("Linear rescale") && f.doc.contains("generator's own units"), "{}", f.doc);
    assert_eq!(Ty::parse(&f.ty), Ty::Option(Box::new(Ty::Array(Box::new(Ty::Prim(Prim::F32)), 2))));
    assert_eq!(s.fields("GenerateParams").unwrap().len(), 11);
    assert_eq!(s.fields("DropletParams").unwrap().len(), 18);
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
    assert!(tip.starts_with("Talus (repose) angle") && tip.contains("unit °") && tip.contains("default 30"), "{tip}");
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
        "PipeParams" => job(de::<PipeParams>(v)?.validate(64, 64, 1.0)),
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
    ("HillsParams", "radius_min_m", "radius_max_m >= radius_min_m"),
    ("HillsParams", "radius_max_m", "radius_max_m >= radius_min_m"),
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
                                sites(s, &Ty::parse(&f.ty), &whole, &format!("{vp}/{}", f.name), &p, depth + 1, out);
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
