//! Binary glTF 2.0 (`.glb`) mesh export of the Y-up grid of [`super::mesh`], built with the
//! `gltf` crate's JSON types and its GLB container writer.
//!
//! # Layout
//!
//! One buffer (the GLB `BIN` chunk) holding, in order, `POSITION` (`VEC3` float, with the
//! `min`/`max` the specification requires), `NORMAL` (`VEC3` float, unit length), `TEXCOORD_0`
//! (`VEC2` float, top-left origin as glTF defines it) and the `u32` triangle indices, each in its
//! own buffer view; one mesh with one `TRIANGLES` primitive, one node, one scene. glTF is Y-up,
//! right-handed, metres, counter-clockwise front faces (glTF 2.0 specification §3.4 "Coordinate
//! System and Units", §3.7.2.1, <https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html>),
//! which is exactly [`super::mesh`]'s frame: node `(x, y)` → `(x·cell, h, y·cell)`.
//!
//! `tests/interop_tools.rs` runs the Khronos glTF validator (0 errors required) and Assimp on the
//! result. Godot, Blender, Unity (glTFast) and Unreal (Interchange) import `.glb` directly.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use gltf::json;
use json::validation::Checked::Valid;
use json::validation::USize64;

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};
use super::mesh;
use crate::core::heightmap::Heightmap;

fn enc(msg: impl std::fmt::Display) -> InteropError {
    InteropError::Encode { format: "glTF", msg: msg.to_string() }
}

/// The `.glb` bytes of `hm`'s grid.
pub fn encode(hm: &Heightmap, decimate: usize) -> Result<Vec<u8>, InteropError> {
    let m = mesh::build(hm, decimate)?;
    let mut bin: Vec<u8> = Vec::with_capacity(m.positions.len() * 32 + m.indices.len() * 4);
    let mut root = json::Root {
        asset: json::Asset {
            generator: Some(concat!("talus ", env!("CARGO_PKG_VERSION")).into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let buffer = json::Index::<json::Buffer>::new(0);

    // Appends one array to the BIN chunk and returns its buffer view.
    let mut push_view = |root: &mut json::Root, bytes: &[u8], target: json::buffer::Target| {
        let offset = bin.len();
        bin.extend_from_slice(bytes);
        root.push(json::buffer::View {
            buffer,
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            extensions: Default::default(),
            extras: Default::default(),
            name: None,
            target: Some(Valid(target)),
        })
    };
    let floats = |v: &[[f32; 3]]| -> Vec<u8> { v.iter().flatten().flat_map(|f| f.to_le_bytes()).collect() };
    let pos_view = push_view(&mut root, &floats(&m.positions), json::buffer::Target::ArrayBuffer);
    let nrm_view = push_view(&mut root, &floats(&m.normals), json::buffer::Target::ArrayBuffer);
    let uv_bytes: Vec<u8> = m.uvs.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
    let uv_view = push_view(&mut root, &uv_bytes, json::buffer::Target::ArrayBuffer);
    let idx_bytes: Vec<u8> = m.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let idx_view = push_view(&mut root, &idx_bytes, json::buffer::Target::ElementArrayBuffer);

    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in &m.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let accessor = |view, count: usize, ty, ct, min: Option<json::Value>, max: Option<json::Value>| json::Accessor {
        buffer_view: Some(view),
        byte_offset: Some(USize64(0)),
        count: USize64::from(count),
        component_type: Valid(json::accessor::GenericComponentType(ct)),
        extensions: Default::default(),
        extras: Default::default(),
        type_: Valid(ty),
        min,
        max,
        name: None,
        normalized: false,
        sparse: None,
    };
    use json::accessor::{ComponentType as C, Type as T};
    let n = m.positions.len();
    let pos = root.push(accessor(
        pos_view,
        n,
        T::Vec3,
        C::F32,
        Some(json::Value::from(lo.to_vec())),
        Some(json::Value::from(hi.to_vec())),
    ));
    let nrm = root.push(accessor(nrm_view, n, T::Vec3, C::F32, None, None));
    let uv = root.push(accessor(uv_view, n, T::Vec2, C::F32, None, None));
    let idx = root.push(accessor(idx_view, m.indices.len(), T::Scalar, C::U32, None, None));
    root.push(json::Buffer {
        byte_length: USize64::from(bin.len()),
        extensions: Default::default(),
        extras: Default::default(),
        name: None,
        uri: None,
    });

    let mut attributes = BTreeMap::new();
    attributes.insert(Valid(json::mesh::Semantic::Positions), pos);
    attributes.insert(Valid(json::mesh::Semantic::Normals), nrm);
    attributes.insert(Valid(json::mesh::Semantic::TexCoords(0)), uv);
    let primitive = json::mesh::Primitive {
        attributes,
        extensions: Default::default(),
        extras: Default::default(),
        indices: Some(idx),
        material: None,
        mode: Valid(json::mesh::Mode::Triangles),
        targets: None,
    };
    let mesh = root.push(json::Mesh {
        extensions: Default::default(),
        extras: Default::default(),
        name: Some("terrain".into()),
        primitives: vec![primitive],
        weights: None,
    });
    let node = root.push(json::Node { mesh: Some(mesh), name: Some("terrain".into()), ..Default::default() });
    let scene = root.push(json::Scene {
        extensions: Default::default(),
        extras: Default::default(),
        name: None,
        nodes: vec![node],
    });
    root.scene = Some(scene);

    let text = json::serialize::to_vec(&root).map_err(enc)?;
    let total = 12 + 8 + text.len().next_multiple_of(4) + 8 + bin.len().next_multiple_of(4);
    let length = u32::try_from(total)
        .map_err(|_| enc(format!("{total} bytes exceed the 4 GiB limit of a .glb; decimate the mesh")))?;
    let glb = gltf::binary::Glb {
        header: gltf::binary::Header { magic: *b"glTF", version: 2, length },
        json: Cow::Owned(text),
        bin: Some(Cow::Owned(bin)),
    };
    glb.to_vec().map_err(enc)
}

/// Writes `hm` as `.glb`, atomically.
pub fn save(path: &Path, hm: &Heightmap, decimate: usize) -> Result<(), InteropError> {
    let bytes = encode(hm, decimate)?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("write", path))
}
