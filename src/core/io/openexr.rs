//! OpenEXR heightmaps: one 32-bit float channel in metres, through the `exr` crate.
//!
//! # Layout and orientation
//!
//! A single-part scan-line image with one `FLOAT` channel named `Y` (the luminance channel name,
//! which Blender, Godot and Gaea show as greyscale), ZIP-compressed (lossless), data window
//! `(0, 0)…(width − 1, height − 1)`. EXR's `y` grows downwards (OpenEXR "Technical
//! Introduction", data window, <https://openexr.com/en/latest/TechnicalIntroduction.html>), so
//! **EXR line 0 is our `y = 0`** and pixel `x` is our `x`; `tests/interop.rs` checks it with an
//! asymmetric map. The cell size travels in a custom `float` header attribute `talusCellSize`
//! (readers ignore unknown attributes), so no sidecar is needed.
//!
//! # Values
//!
//! Heights in metres, stored as they are: the round trip is exact. On import the channel `Y`
//! is used, else the only channel of the first layer; `HALF` and `UINT` channels are widened to
//! `f32`. A file with no channel, or several channels none of which is `Y`, gives
//! [`InteropError::Unsupported`]. The layer size is checked against the heightmap limits from the
//! header before any pixel is decoded.
//!
//! # Tools
//!
//! Godot imports EXR as a float image (`Image.load_exr_from_buffer`, HTerrain/Terrain3D height
//! import), Blender reads it as a non-colour float texture for the Displace modifier, Gaea imports
//! 32-bit EXR heightfields.

use std::io::Cursor;
use std::path::Path;

use exr::prelude::*;
// The prelude brings its own `Result`; ours is the standard one.
use std::result::Result;

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};
use crate::core::heightmap::{Heightmap, check_size};

const FORMAT: &str = "EXR";
/// The custom header attribute holding the cell size in metres.
pub const CELL_SIZE_ATTRIBUTE: &str = "talusCellSize";

fn dec(e: exr::error::Error) -> InteropError {
    InteropError::Decode { format: FORMAT, msg: e.to_string() }
}

/// Encodes `hm` as a one-channel float EXR.
pub fn encode(hm: &Heightmap) -> Result<Vec<u8>, InteropError> {
    let mut attrs = LayerAttributes::named("height");
    attrs.other.insert(Text::from(CELL_SIZE_ATTRIBUTE), AttributeValue::F32(hm.cell_size));
    let channel = AnyChannel::new("Y", FlatSamples::F32(hm.data.clone()));
    let layer = Layer::new(
        (hm.width, hm.height),
        attrs,
        Encoding::SMALL_LOSSLESS,
        AnyChannels::sort(SmallVec::from_elem(channel, 1)),
    );
    let mut buf = Cursor::new(Vec::new());
    Image::from_layer(layer)
        .write()
        .to_buffered(&mut buf)
        .map_err(|e| InteropError::Encode { format: FORMAT, msg: e.to_string() })?;
    Ok(buf.into_inner())
}

/// Decodes an EXR held in memory (see the module doc for the channel choice).
pub fn decode(bytes: &[u8]) -> Result<Heightmap, InteropError> {
    // The header first: refuse sizes past the limits before the pixels are allocated.
    let meta = exr::meta::MetaData::read_from_buffered(Cursor::new(bytes), false).map_err(dec)?;
    let header = meta
        .headers
        .first()
        .ok_or_else(|| InteropError::Unsupported { format: FORMAT, msg: "the file has no layer".into() })?;
    check_size(header.layer_size.0, header.layer_size.1)?;
    if header.channels.list.is_empty() {
        return Err(InteropError::Unsupported { format: FORMAT, msg: "the file has no channel".into() });
    }
    let image = read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .from_buffered(Cursor::new(bytes))
        .map_err(dec)?;
    let layer = image.layer_data;
    let (w, h) = (layer.size.0, layer.size.1);
    check_size(w, h)?;
    let list = &layer.channel_data.list;
    let names: Vec<String> = list.iter().map(|c| c.name.to_string()).collect();
    let channel = match list.iter().find(|c| c.name.eq("Y")) {
        Some(c) => c,
        None if list.len() == 1 => &list[0],
        None => {
            return Err(InteropError::Unsupported {
                format: FORMAT,
                msg: if names.is_empty() {
                    "the file has no channel".into()
                } else {
                    format!("no `Y` height channel and more than one channel to choose from: {names:?}")
                },
            });
        }
    };
    let data: Vec<f32> = match &channel.sample_data {
        FlatSamples::F32(v) => v.clone(),
        FlatSamples::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
        FlatSamples::U32(v) => v.iter().map(|&x| x as f32).collect(),
    };
    let cell = match layer.attributes.other.get(&Text::from(CELL_SIZE_ATTRIBUTE)) {
        Some(AttributeValue::F32(c)) if c.is_finite() && *c > 0.0 => *c,
        _ => 1.0,
    };
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(InteropError::NonFinite {
            format: FORMAT,
            msg: format!("the height at x={}, y={} is {}", i % w, i / w, data[i]),
        });
    }
    Ok(Heightmap::from_data(w, h, cell, data)?)
}

/// Whether the EXR at `path` carries a cell size (Talus's `talusCellSize` attribute, which a file
/// from another tool lacks: it then reads as 1 m cells). Reads the header only.
pub fn records_cell_size(path: &Path) -> Result<bool, InteropError> {
    let file = std::fs::File::open(path).map_err(io_err("read", path))?;
    let meta = exr::meta::MetaData::read_from_buffered(std::io::BufReader::new(file), false).map_err(dec)?;
    Ok(meta.headers.first().is_some_and(|h| {
        matches!(h.own_attributes.other.get(&Text::from(CELL_SIZE_ATTRIBUTE)),
            Some(AttributeValue::F32(c)) if c.is_finite() && *c > 0.0)
    }))
}

/// Reads an EXR heightmap.
pub fn load(path: &Path) -> Result<Heightmap, InteropError> {
    decode(&std::fs::read(path).map_err(io_err("read", path))?)
}

/// Writes `hm` as EXR, atomically.
pub fn save(path: &Path, hm: &Heightmap) -> Result<(), InteropError> {
    let bytes = encode(hm)?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("write", path))
}
