//! A generic egui editor for the parameter structs: every field of a `Serialize + Deserialize`
//! parameter type gets a widget and a tooltip without a hand-written widget per field.
//!
//! How: [`edit_params`] serialises the value to serde JSON, walks the JSON next to the type's
//! description in [`crate::editor::schema::Schema`] (field names, type texts, docs, units, ranges
//! and defaults, from each type's one declaration in [`crate::core::params`]) with [`edit_value`],
//! and deserialises the JSON back when a widget changed it. The walk, by type shape:
//!
//! - struct: a two-column [`egui::Grid`] (humanised name | widget; the hover text is the doc, then
//!   unit, range and default);
//!   fields that need more room (nested structs, `Option<struct>`, enums with a struct payload,
//!   `Vec<struct>`) break the grid and get a collapsing section of their own, in field order;
//! - `f32`/`f64`: a [`egui::DragValue`], speed scaled to the value's magnitude (or the declared
//!   step), clamped to the declared range when there is one (existing values are never clamped
//!   silently); the range is the one `validate()` enforces;
//! - integers: a `DragValue` limited to the type's bounds and the declared range; `bool`: a checkbox;
//! - `Option<T>`: a checkbox that creates `default_json(T)` / sets `null`, then T's editor;
//!   `Option<Vec<f32>>` (per-node maps) shows "map of N values" with a Clear button;
//! - enums: a ComboBox of the variants (hover = variant doc); switching fills the variant's
//!   default payload, then the payload's editor; `[T; N]`: a row of editors;
//!   `Vec<struct>`: a list with Remove / Add buttons; `Vec<f32>`: "map of N values", read-only;
//! - `[f32; 3]` fields whose doc says "colour": a colour button with egui's sRGB picker;
//! - anything else: a read-only label (never a panic).
//!
//! Widget ids are kept unique by `push_id` with the caller's `id_salt` and each field name /
//! list index on the way down.

use bevy_egui::egui;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::editor::schema::{
    Field, NumRange, Payload, Prim, Schema, Ty, TypeKind, Variant, default_for, enum_payload_mut, enum_tag,
    variant_default_json,
};

/// Edits `value` (of the schema type `type_name`, e.g. `"PipeParams"`) in `ui`.
///
/// Returns `Ok(true)` when the user changed something (and `value` now holds it), `Ok(false)`
/// when nothing changed, and `Err` with a message when the edited value no longer deserialises
/// (then `value` is left untouched). `id_salt` keeps the widgets of two editors apart.
pub fn edit_params<T: Serialize + DeserializeOwned>(
    ui: &mut egui::Ui,
    id_salt: &str,
    type_name: &str,
    value: &mut T,
) -> Result<bool, String> {
    let mut json = serde_json::to_value(&*value).map_err(|e| format!("{type_name}: cannot serialise: {e}"))?;
    let changed = ui.push_id(id_salt, |ui| edit_value(ui, Schema::global(), type_name, &mut json)).inner;
    if !changed {
        return Ok(false);
    }
    apply_json(type_name, json, value)
}

/// Deserialises `json` into `value`: `Ok(true)` on success, `Err` (value untouched) otherwise.
pub fn apply_json<T: DeserializeOwned>(type_name: &str, json: Value, value: &mut T) -> Result<bool, String> {
    match serde_json::from_value::<T>(json) {
        Ok(v) => {
            *value = v;
            Ok(true)
        }
        Err(e) => Err(format!("{type_name}: the edited value is not valid: {e}")),
    }
}

/// Edits a JSON `value` of the type written `type_text` (`"FbmParams"`, `"Option<[f32;2]>"`, …);
/// true when the user changed it.
pub fn edit_value(ui: &mut egui::Ui, schema: &Schema, type_text: &str, value: &mut Value) -> bool {
    edit_ty(ui, schema, &Ty::parse(type_text), value, None)
}

/// A field name for display: `"min_slope"` → `"min slope"`.
pub fn humanise(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    name.split('_').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
thread_local! {
    /// Tests open every collapsible section so that their bodies run too.
    static FORCE_OPEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn open_by_default(open: bool) -> bool {
    #[cfg(test)]
    if FORCE_OPEN.with(|f| f.get()) {
        return true;
    }
    open
}

// ---------------------------------------------------------------------------------------------
// Dispatch.

fn edit_ty(ui: &mut egui::Ui, schema: &Schema, ty: &Ty, v: &mut Value, range: Option<NumRange>) -> bool {
    match ty {
        Ty::Prim(p) => edit_prim(ui, *p, v, range),
        Ty::Option(inner) => edit_option(ui, schema, inner, v, range),
        Ty::Vec(inner) => edit_vec(ui, schema, inner, v),
        Ty::Array(inner, _) => edit_array(ui, schema, inner, v, range),
        Ty::Named(name) => match schema.get(name).map(|d| &d.kind) {
            Some(TypeKind::Struct(fields)) => edit_struct(ui, schema, fields, schema.get(name).map(|d| &d.default), v),
            Some(TypeKind::Enum(variants)) => edit_enum(ui, schema, name, variants, v, None),
            None => read_only(ui, v),
        },
        Ty::Unknown(_) => read_only(ui, v),
    }
}

/// True when a type's editor fits in one grid cell.
fn is_row(schema: &Schema, ty: &Ty) -> bool {
    match ty {
        Ty::Prim(_) | Ty::Unknown(_) => true,
        Ty::Array(inner, _) | Ty::Vec(inner) => matches!(**inner, Ty::Prim(_)),
        Ty::Option(inner) => match &**inner {
            Ty::Vec(e) => matches!(**e, Ty::Prim(_)),
            t => is_row(schema, t),
        },
        Ty::Named(n) => match schema.get(n).map(|d| &d.kind) {
            None => true,
            Some(TypeKind::Struct(_)) => false,
            Some(TypeKind::Enum(vs)) => vs.iter().all(|v| payload_inline(schema, &v.payload)),
        },
    }
}

/// True when a variant's payload fits next to its ComboBox (nothing, numbers, unit enums).
fn payload_inline(schema: &Schema, p: &Payload) -> bool {
    match p {
        Payload::Unit => true,
        Payload::Tuple(ts) => ts.iter().all(|t| match Ty::parse(t) {
            Ty::Prim(_) => true,
            Ty::Named(n) => schema.get(&n).is_some_and(|d| d.is_unit_enum()),
            _ => false,
        }),
        Payload::Struct(_) => false,
    }
}

fn read_only(ui: &mut egui::Ui, v: &Value) -> bool {
    let mut text = v.to_string();
    if text.chars().count() > 60 {
        text = text.chars().take(57).collect::<String>() + "…";
    }
    ui.weak(text).on_hover_text("Not editable here");
    false
}

/// The hover text of a field: its doc (else the doc of its type), then unit, range and default
/// (`defaults`: the owner type's default value).
fn tooltip(schema: &Schema, f: &Field, defaults: Option<&Value>) -> String {
    f.tooltip(schema, defaults.and_then(|d| d.get(&f.name)))
}

fn label_with_doc(ui: &mut egui::Ui, text: impl Into<egui::WidgetText>, doc: &str) -> egui::Response {
    let r = ui.label(text);
    if doc.is_empty() { r } else { r.on_hover_text(doc) }
}

// ---------------------------------------------------------------------------------------------
// Structs.

fn edit_struct(ui: &mut egui::Ui, schema: &Schema, fields: &[Field], defaults: Option<&Value>, v: &mut Value) -> bool {
    let Some(obj) = v.as_object_mut() else { return read_only(ui, v) };
    let mut changed = false;
    let mut i = 0;
    let mut segment = 0;
    while i < fields.len() {
        let start = i;
        while i < fields.len() && is_row(schema, &Ty::parse(&fields[i].ty)) {
            i += 1;
        }
        if i > start {
            egui::Grid::new(("fields", segment)).num_columns(2).show(ui, |ui| {
                for f in &fields[start..i] {
                    label_with_doc(ui, humanise(&f.name), &tooltip(schema, f, defaults));
                    match obj.get_mut(&f.name) {
                        Some(fv) => {
                            let ty = Ty::parse(&f.ty);
                            let range = f.range;
                            changed |= ui
                                .push_id(&f.name, |ui| match (&ty, f.step) {
                                    _ if is_colour(f) => edit_colour(ui, fv),
                                    (Ty::Prim(p), Some(step)) if p.is_float() => {
                                        edit_float(ui, *p, fv, range, Some(step))
                                    }
                                    _ => edit_ty(ui, schema, &ty, fv, range),
                                })
                                .inner;
                        }
                        None => {
                            ui.weak("(missing)");
                        }
                    }
                    ui.end_row();
                }
            });
            segment += 1;
        }
        if i < fields.len() {
            let f = &fields[i];
            i += 1;
            match obj.get_mut(&f.name) {
                Some(fv) => changed |= ui.push_id(&f.name, |ui| field_block(ui, schema, f, defaults, fv)).inner,
                None => {
                    label_with_doc(ui, format!("{} (missing)", humanise(&f.name)), &tooltip(schema, f, defaults));
                }
            }
        }
    }
    changed
}

/// A field whose editor needs more than a grid cell, with its own header.
fn field_block(ui: &mut egui::Ui, schema: &Schema, f: &Field, defaults: Option<&Value>, v: &mut Value) -> bool {
    let ty = Ty::parse(&f.ty);
    let label = humanise(&f.name);
    let doc = tooltip(schema, f, defaults);
    let doc = doc.as_str();
    let range = f.range;
    match &ty {
        Ty::Option(inner) => {
            let was_on = !v.is_null();
            let mut on = was_on;
            let can_create = default_for(inner).is_some();
            let id = ui.make_persistent_id("option_block");
            let state =
                egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, open_by_default(true));
            let mut header = state.show_header(ui, |ui| {
                let r = ui.add_enabled(was_on || can_create, egui::Checkbox::new(&mut on, label.as_str()));
                if !doc.is_empty() {
                    r.on_hover_text(doc);
                }
            });
            let mut changed = false;
            if on != was_on {
                *v = if on { default_for(inner).unwrap_or(Value::Null) } else { Value::Null };
                changed = true;
                if on {
                    header.set_open(true);
                }
            }
            header.body(|ui| {
                if v.is_null() {
                    ui.weak("off");
                } else {
                    changed |= edit_ty(ui, schema, inner, v, range);
                }
            });
            changed
        }
        Ty::Named(name) => match schema.get(name).map(|d| &d.kind) {
            Some(TypeKind::Enum(variants)) => edit_enum(ui, schema, name, variants, v, Some((&label, doc))),
            Some(TypeKind::Struct(fields)) => {
                let mut changed = false;
                egui::CollapsingHeader::new(label)
                    .id_salt("struct_block")
                    .default_open(open_by_default(false))
                    .show(ui, |ui| changed |= edit_struct(ui, schema, fields, schema.get(name).map(|d| &d.default), v))
                    .header_response
                    .on_hover_text(doc);
                changed
            }
            None => {
                ui.horizontal(|ui| {
                    label_with_doc(ui, label, doc);
                    read_only(ui, v)
                })
                .inner
            }
        },
        Ty::Vec(_) | Ty::Array(..) => {
            let n = v.as_array().map_or(0, Vec::len);
            let mut changed = false;
            egui::CollapsingHeader::new(format!("{label} ({n})"))
                .id_salt("list_block")
                .default_open(open_by_default(true))
                .show(ui, |ui| changed |= edit_ty(ui, schema, &ty, v, range))
                .header_response
                .on_hover_text(doc);
            changed
        }
        _ => {
            ui.horizontal(|ui| {
                label_with_doc(ui, label, doc);
                edit_ty(ui, schema, &ty, v, range)
            })
            .inner
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Enums.

fn edit_enum(
    ui: &mut egui::Ui,
    schema: &Schema,
    enum_name: &str,
    variants: &[Variant],
    v: &mut Value,
    label: Option<(&str, &str)>,
) -> bool {
    let Some((tag, _)) = enum_tag(v) else { return read_only(ui, v) };
    let tag = tag.to_string();
    let current = variants.iter().find(|x| x.name == tag);
    let inline = current.is_none_or(|x| payload_inline(schema, &x.payload));
    let mut changed = false;
    let mut switch_to: Option<String> = None;
    ui.horizontal(|ui| {
        if let Some((text, doc)) = label {
            label_with_doc(ui, text, doc);
        }
        let combo = egui::ComboBox::from_id_salt("variant").selected_text(tag.as_str()).show_ui(ui, |ui| {
            for x in variants {
                let r = ui.selectable_label(x.name == tag, x.name.as_str());
                let r = if x.doc.is_empty() { r } else { r.on_hover_text(x.doc.as_str()) };
                if r.clicked() && x.name != tag {
                    switch_to = Some(x.name.clone());
                }
            }
        });
        if let Some(cur) = current.filter(|c| !c.doc.is_empty()) {
            combo.response.on_hover_text(cur.doc.as_str());
        }
        if inline
            && switch_to.is_none()
            && let Some(cur) = current
        {
            changed |= ui.push_id("payload", |ui| edit_payload(ui, schema, cur, v)).inner;
        }
    });
    if let Some(new) = switch_to {
        if let Some(nv) = variant_default_json(schema, enum_name, &new) {
            *v = nv;
            changed = true;
        }
    } else if !inline && let Some(cur) = current {
        egui::CollapsingHeader::new(format!("{} settings", cur.name))
            .id_salt(("payload", cur.name.as_str()))
            .default_open(open_by_default(true))
            .show(ui, |ui| changed |= edit_payload(ui, schema, cur, v));
    }
    changed
}

/// Edits the payload of the data variant `variant` held in `v`.
fn edit_payload(ui: &mut egui::Ui, schema: &Schema, variant: &Variant, v: &mut Value) -> bool {
    let Some((_, payload)) = enum_payload_mut(v) else { return false };
    match &variant.payload {
        Payload::Unit => false,
        Payload::Tuple(ts) if ts.len() == 1 => edit_ty(ui, schema, &Ty::parse(&ts[0]), payload, variant.range),
        Payload::Tuple(ts) => match payload.as_array_mut() {
            Some(items) if items.len() == ts.len() => {
                let mut changed = false;
                for (i, (t, item)) in ts.iter().zip(items.iter_mut()).enumerate() {
                    changed |= ui.push_id(i, |ui| edit_ty(ui, schema, &Ty::parse(t), item, None)).inner;
                }
                changed
            }
            _ => read_only(ui, payload),
        },
        Payload::Struct(fields) => edit_struct(ui, schema, fields, None, payload),
    }
}

// ---------------------------------------------------------------------------------------------
// Option, Vec, arrays.

fn edit_option(ui: &mut egui::Ui, schema: &Schema, inner: &Ty, v: &mut Value, range: Option<NumRange>) -> bool {
    // Per-node maps are made by tools, not typed in: show their size and let the user drop them.
    if let Ty::Vec(e) = inner
        && matches!(**e, Ty::Prim(_))
    {
        let Some(n) = v.as_array().map(Vec::len) else {
            ui.weak("none");
            return false;
        };
        let clear = ui
            .horizontal(|ui| {
                ui.label(format!("map of {n} values"));
                ui.small_button("Clear").on_hover_text("Remove the map").clicked()
            })
            .inner;
        if clear {
            *v = Value::Null;
        }
        return clear;
    }
    let was_on = !v.is_null();
    let mut on = was_on;
    let can_create = default_for(inner).is_some();
    let row = is_row(schema, inner);
    let mut changed = false;
    ui.horizontal(|ui| {
        ui.add_enabled(was_on || can_create, egui::Checkbox::without_text(&mut on));
        if on != was_on {
            *v = if on { default_for(inner).unwrap_or(Value::Null) } else { Value::Null };
            changed = true;
        }
        if !v.is_null() && row {
            changed |= edit_ty(ui, schema, inner, v, range);
        }
    });
    if !v.is_null() && !row {
        changed |= ui.indent("option", |ui| edit_ty(ui, schema, inner, v, range)).inner;
    }
    changed
}

fn edit_vec(ui: &mut egui::Ui, schema: &Schema, inner: &Ty, v: &mut Value) -> bool {
    let Some(items) = v.as_array_mut() else { return read_only(ui, v) };
    if matches!(inner, Ty::Prim(_)) {
        ui.label(format!("map of {} values", items.len()));
        return false;
    }
    let mut changed = false;
    let mut remove = None;
    for (i, item) in items.iter_mut().enumerate() {
        ui.push_id(i, |ui| {
            ui.group(|ui| {
                ui.horizontal(|ui| {
                    ui.strong(format!("#{}", i + 1));
                    if ui.small_button("Remove").clicked() {
                        remove = Some(i);
                    }
                });
                changed |= edit_ty(ui, schema, inner, item, None);
            });
        });
    }
    if let Some(i) = remove {
        items.remove(i);
        changed = true;
    }
    if let Some(d) = default_for(inner)
        && ui.button("Add").clicked()
    {
        items.push(d);
        changed = true;
    }
    changed
}

fn edit_array(ui: &mut egui::Ui, schema: &Schema, inner: &Ty, v: &mut Value, range: Option<NumRange>) -> bool {
    let Some(items) = v.as_array_mut() else { return read_only(ui, v) };
    let mut changed = false;
    let mut add = |ui: &mut egui::Ui| {
        for (i, item) in items.iter_mut().enumerate() {
            changed |= ui.push_id(i, |ui| edit_ty(ui, schema, inner, item, range)).inner;
        }
    };
    if matches!(inner, Ty::Prim(_)) {
        ui.horizontal(add);
    } else {
        add(ui);
    }
    changed
}

// ---------------------------------------------------------------------------------------------
// Colours.

/// True for an `[f32; 3]` field whose doc calls it a colour (sRGB, each channel `0 ..= 1`).
fn is_colour(f: &Field) -> bool {
    f.ty == "[f32;3]" && {
        let d = f.doc.to_lowercase();
        d.contains("colour") || d.contains("color")
    }
}

/// A colour button with egui's picker (sRGB), plus the three numbers on hover. Values outside
/// `0 ..= 1` or not numbers show clamped and are written back only when the user picks a colour.
fn edit_colour(ui: &mut egui::Ui, v: &mut Value) -> bool {
    let Some(items) = v.as_array_mut().filter(|a| a.len() == 3) else { return read_only(ui, v) };
    let mut rgb = [0u8; 3];
    for (c, item) in rgb.iter_mut().zip(items.iter()) {
        *c = (item.as_f64().unwrap_or(0.0).clamp(0.0, 1.0) * 255.0).round() as u8;
    }
    let before = rgb;
    let text = format!("sRGB {:.2}, {:.2}, {:.2}", rgb[0] as f32 / 255.0, rgb[1] as f32 / 255.0, rgb[2] as f32 / 255.0);
    ui.color_edit_button_srgb(&mut rgb).on_hover_text(text);
    if rgb == before {
        return false;
    }
    for (c, item) in rgb.iter().zip(items.iter_mut()) {
        // Two decimals are exact enough for a colour and keep presets readable.
        *item = Value::from(((*c as f64 / 255.0) * 1000.0).round() / 1000.0);
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Primitives.

/// Drag speed for a float: half a percent of its magnitude per point, or a thousandth of the
/// declared range when the value is zero.
fn float_speed(x: f64, range: Option<NumRange>) -> f64 {
    let span = range.map(|r| r.hi - r.lo).filter(|s| s.is_finite() && *s > 0.0);
    let s = if x != 0.0 && x.is_finite() { x.abs() * 5e-3 } else { span.map_or(0.01, |s| s * 1e-3) };
    let s = match span {
        Some(span) => s.min(span * 5e-3),
        None => s,
    };
    s.max(1e-9)
}

fn int_speed(x: f64) -> f64 {
    (x.abs() * 5e-3).max(0.1)
}

/// The integer range allowed for `p`: its bounds, narrowed to the declared range.
fn int_range(p: Prim, range: Option<NumRange>) -> (i128, i128) {
    let (mut lo, mut hi) = p.int_bounds().unwrap_or((i64::MIN as i128, i64::MAX as i128));
    if let Some(r) = range {
        if r.lo.is_finite() && r.lo.ceil() > lo as f64 {
            lo = r.lo.ceil() as i128;
        }
        if r.hi.is_finite() && r.hi.floor() < hi as f64 {
            hi = r.hi.floor() as i128;
        }
    }
    if lo > hi { p.int_bounds().unwrap_or((lo, lo)) } else { (lo, hi) }
}

/// A float's `DragValue`: clamped to `range` for new input, dragged by `step` when the field
/// declares one (else by [`float_speed`]).
fn edit_float(ui: &mut egui::Ui, p: Prim, v: &mut Value, range: Option<NumRange>, step: Option<f64>) -> bool {
    let Some(mut x) = v.as_f64() else { return read_only(ui, v) };
    let speed = step.unwrap_or_else(|| float_speed(x, range));
    let mut dv = egui::DragValue::new(&mut x).speed(speed).clamp_existing_to_range(false);
    let limit = if p == Prim::F32 { f32::MAX as f64 } else { f64::MAX };
    let (lo, hi) = range.map_or((-limit, limit), |r| (r.lo.max(-limit), r.hi.min(limit)));
    dv = dv.range(lo..=hi);
    if p == Prim::F32 {
        // Show the f32's shortest form (0.3, not 0.30000001192092896).
        dv = dv.custom_formatter(|n, _| format!("{}", n as f32));
    }
    if ui.add(dv).changed() && x.is_finite() {
        *v = Value::from(x);
        return true;
    }
    false
}

fn edit_prim(ui: &mut egui::Ui, p: Prim, v: &mut Value, range: Option<NumRange>) -> bool {
    match p {
        Prim::Bool => {
            let Some(mut b) = v.as_bool() else { return read_only(ui, v) };
            if ui.checkbox(&mut b, "").changed() {
                *v = Value::Bool(b);
                return true;
            }
            false
        }
        Prim::F32 | Prim::F64 => edit_float(ui, p, v, range, None),
        Prim::String => {
            let Some(mut s) = v.as_str().map(str::to_string) else { return read_only(ui, v) };
            if ui.text_edit_singleline(&mut s).changed() {
                *v = Value::String(s);
                return true;
            }
            false
        }
        _ if p.is_signed() => {
            let Some(mut x) = v.as_i64() else { return read_only(ui, v) };
            let (lo, hi) = int_range(p, range);
            let speed = int_speed(x as f64);
            let dv =
                egui::DragValue::new(&mut x).speed(speed).range(lo as i64..=hi as i64).clamp_existing_to_range(false);
            if ui.add(dv).changed() {
                *v = Value::from(x);
                return true;
            }
            false
        }
        _ => {
            let Some(mut x) = v.as_u64() else { return read_only(ui, v) };
            let (lo, hi) = int_range(p, range);
            let speed = int_speed(x as f64);
            let dv = egui::DragValue::new(&mut x)
                .speed(speed)
                .range(lo.max(0) as u64..=hi.max(0) as u64)
                .clamp_existing_to_range(false);
            if ui.add(dv).changed() {
                *v = Value::from(x);
                return true;
            }
            false
        }
    }
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::brush::BrushParams;
    use crate::core::erosion::Boundary;
    use crate::core::erosion::droplet::DropletParams;
    use crate::core::erosion::pipe::{PipeParams, RiverSource};
    use crate::core::erosion::snowball::SnowballParams;
    use crate::core::erosion::stream_power::StreamPowerParams;
    use crate::core::erosion::thermal::ThermalParams;
    use crate::core::generate::{Base, GenerateParams};

    /// Runs `edit_params` headless for a few frames (every section open) and returns the results.
    fn run_frames<T: Serialize + DeserializeOwned>(type_name: &str, value: &mut T) -> Vec<Result<bool, String>> {
        FORCE_OPEN.with(|f| f.set(true));
        let ctx = egui::Context::default();
        let mut results = Vec::new();
        for _ in 0..3 {
            ctx.run_ui(egui::RawInput::default(), |ui| {
                results.push(edit_params(ui, "test", type_name, value));
            })
            .drop_without_applying_deltas();
        }
        results
    }

    fn assert_untouched<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug + Clone>(name: &str, value: T) {
        let mut v = value.clone();
        let results = run_frames(name, &mut v);
        assert!(results.iter().all(|r| r == &Ok(false)), "{name}: {results:?}");
        assert_eq!(v, value, "{name} changed without input");
        // And the JSON round trip itself is the identity.
        let mut back = value.clone();
        assert_eq!(apply_json(name, serde_json::to_value(&value).unwrap(), &mut back), Ok(true));
        assert_eq!(back, value);
    }

    #[test]
    fn humanise_names() {
        assert_eq!(humanise("min_slope"), "min slope");
        assert_eq!(humanise("k"), "k");
        assert_eq!(humanise("floor_at_input_min"), "floor at input min");
        assert_eq!(humanise("r#type"), "type");
    }

    #[test]
    fn defaults_round_trip_without_input() {
        assert_untouched("GenerateParams", GenerateParams::default());
        assert_untouched("DropletParams", DropletParams::default());
        assert_untouched("SnowballParams", SnowballParams::default());
        assert_untouched("PipeParams", PipeParams::default());
        assert_untouched("ThermalParams", ThermalParams::default());
        assert_untouched("StreamPowerParams", StreamPowerParams::default());
        assert_untouched("Boundary", Boundary::default());
        assert_untouched("BrushParams", BrushParams::default());
    }

    #[test]
    fn every_option_and_variant_draws_without_change() {
        // All options on, values outside the doc ranges (must not be clamped silently).
        let mut g = GenerateParams {
            hills: Some(Default::default()),
            terrace: Some(Default::default()),
            island: Some(Default::default()),
            falloff: Some(Default::default()),
            sea_level: Some(crate::core::generate::island_filter::SeaLevelParams {
                coverage: Some(0.3),
                seabed_depth: Some(5.0),
                ..Default::default()
            }),
            seed: u64::MAX - 1,
            cell_size: 1e9,
            ..Default::default()
        };
        assert_untouched("GenerateParams", g.clone());
        for base in [
            Base::DiamondSquare(Default::default()),
            Base::LazyWorld(crate::core::generate::lazy_world::LazyWorldParams {
                origin: [-5, 7],
                ..Default::default()
            }),
            Base::VoronoiIsland(Default::default()),
            Base::Hills(Default::default()),
            Base::Flat { height: 3.5 },
        ] {
            g.base = base;
            assert_untouched("GenerateParams", g.clone());
        }
        let pipe = PipeParams {
            rain_map: Some(vec![0.1; 16]),
            sources: vec![
                RiverSource { x_m: 1.0, y_m: 2.0, radius_m: 3.0, intensity: 0.5, ..Default::default() },
                RiverSource::default(),
            ],
            thermal: Some(ThermalParams { talus_tan: Some(0.7), ..Default::default() }),
            cell_size: Some(2.0),
            ..Default::default()
        };
        assert_untouched("PipeParams", pipe);
        assert_untouched(
            "StreamPowerParams",
            StreamPowerParams { uplift_map: Some(vec![0.0; 4]), ..Default::default() },
        );
        assert_untouched(
            "DropletParams",
            DropletParams { min_height: Some(-3.0), blur_m: Some(1.5), ..Default::default() },
        );
        assert_untouched("BrushParams", BrushParams { flatten_height: Some(12.0), ..Default::default() });
    }

    #[test]
    fn material_colours_get_pickers_and_draw_without_change() {
        use crate::editor::look::MaterialParams;
        assert_untouched("MaterialParams", MaterialParams::default());
        // Out-of-range colours are shown clamped but not rewritten without input.
        let mut m = MaterialParams::default();
        m.sand.color = [1.5, -0.2, 0.5];
        assert_untouched("MaterialParams", m);
        let schema = Schema::global();
        let Some(TypeKind::Struct(fields)) = schema.get("TerrainLayer").map(|d| &d.kind) else {
            panic!("TerrainLayer not parsed")
        };
        let colours: Vec<&str> = fields.iter().filter(|f| is_colour(f)).map(|f| f.name.as_str()).collect();
        assert_eq!(colours, ["color", "variation"]);
    }

    #[test]
    fn invalid_json_is_refused_and_value_kept() {
        let mut p = ThermalParams::default();
        let mut json = serde_json::to_value(&p).unwrap();
        json["iterations"] = Value::from(-1);
        let err = apply_json("ThermalParams", json, &mut p).unwrap_err();
        assert!(err.starts_with("ThermalParams:"), "{err}");
        assert_eq!(p, ThermalParams::default());
    }

    #[test]
    fn unknown_types_are_read_only() {
        FORCE_OPEN.with(|f| f.set(true));
        let ctx = egui::Context::default();
        let schema = Schema::global();
        ctx.run_ui(egui::RawInput::default(), |ui| {
            let mut v = serde_json::json!({"a": 1});
            assert!(!edit_value(ui, schema, "HashMap<String, u32>", &mut v));
            assert!(!edit_value(ui, schema, "NoSuchType", &mut v));
            // A shape that does not match its type is shown, not edited.
            let mut s = serde_json::json!("text");
            assert!(!edit_value(ui, schema, "f32", &mut s));
            assert!(!edit_value(ui, schema, "FbmParams", &mut s));
            assert!(!edit_value(ui, schema, "Base", &mut serde_json::json!(5)));
            assert_eq!(s, serde_json::json!("text"));
        })
        .drop_without_applying_deltas();
    }

    #[test]
    fn speeds_and_ranges() {
        assert_eq!(float_speed(200.0, None), 1.0);
        assert_eq!(float_speed(0.0, Some(NumRange { lo: 0.0, hi: 10.0 })), 0.01);
        assert!(float_speed(1e9, Some(NumRange { lo: 0.0, hi: 1.0 })) <= 5e-3);
        assert_eq!(int_range(Prim::U32, Some(NumRange { lo: 1.0, hi: 16.0 })), (1, 16));
        assert_eq!(int_range(Prim::U32, Some(NumRange { lo: 0.0, hi: 1e12 })), (0, u32::MAX as i128));
        assert_eq!(int_range(Prim::I64, None), (i64::MIN as i128, i64::MAX as i128));
        assert_eq!(int_range(Prim::U8, Some(NumRange { lo: 0.5, hi: 2.5 })), (1, 2));
    }
}
