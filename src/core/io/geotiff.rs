//! GeoTIFF heightmaps for GIS: one Float32 sample per pixel in metres, with the GeoTIFF pixel
//! scale and tiepoint tags, through the `tiff` crate.
//!
//! # Layout and orientation
//!
//! A baseline TIFF, one strip-organised greyscale image, `BitsPerSample = 32`,
//! `SampleFormat = 3` (IEEE float), uncompressed. TIFF rows run top to bottom, so **TIFF row 0
//! is our `y = 0`** (north) and column `c` is our `x = c`; `tests/interop.rs` checks it with an
//! asymmetric map. GeoTIFF tags (GeoTIFF 1.1, OGC 19-008r4,
//! <https://docs.ogc.org/is/19-008r4/19-008r4.html>):
//!
//! ```text
//! ModelPixelScaleTag (33550)  [cell, cell, 0]
//! ModelTiepointTag   (33922)  [0, 0, 0,  0, (height − 1)·cell, 0]   raster (0,0) ↔ model (X, Y, Z)
//! GeoKeyDirectoryTag (34735)  GTModelType = Projected, GTRasterType = PixelIsPoint,
//!                             ProjectedCSType = user-defined, ProjLinearUnits = metre
//! ```
//!
//! So node `(x, y)` lies at model `X = x·cell`, `Y = (height − 1 − y)·cell`: north up, the
//! south-west node at the origin of a local metric plane (we carry no real-world position).
//! `PixelIsPoint` because our heights are samples at nodes, not cell averages. GDAL reads the
//! file as `GTiff` with a local metric (engineering) CRS, `AREA_OR_POINT=Point` and this
//! geotransform (`gdalinfo` prints origin and pixel size; see
//! `tests/interop_tools.rs`), and so do QGIS and other GDAL-based tools.
//!
//! # Values and import
//!
//! Heights in metres, unchanged: the round trip is exact. The importer takes one-sample greyscale
//! images of Float32 (also Float64, Int16, UInt16 and Int32, common for DEMs); any other sample
//! type, colour images and non-finite heights give an [`InteropError`]. The cell size is the
//! x pixel scale when the tag is present (1 m otherwise). The size in the header is checked
//! against the heightmap limits before pixels are decoded; strips that run past the end of the
//! file are a decode error from the `tiff` crate.

use std::io::Cursor;
use std::path::Path;

use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::encoder::{TiffEncoder, colortype::Gray32Float};
use tiff::tags::Tag;
use tiff::ColorType;

use super::atomic::write_atomic;
use super::interop::{InteropError, io_err};
use crate::core::heightmap::{Heightmap, check_size};

const FORMAT: &str = "GeoTIFF";

fn enc(e: tiff::TiffError) -> InteropError {
    InteropError::Encode { format: FORMAT, msg: e.to_string() }
}

fn dec(e: tiff::TiffError) -> InteropError {
    InteropError::Decode { format: FORMAT, msg: e.to_string() }
}

/// Encodes `hm` as a Float32 GeoTIFF.
pub fn encode(hm: &Heightmap) -> Result<Vec<u8>, InteropError> {
    let cell = hm.cell_size as f64;
    let mut buf = Cursor::new(Vec::new());
    {
        let mut tiff = TiffEncoder::new(&mut buf).map_err(enc)?;
        let mut img = tiff.new_image::<Gray32Float>(hm.width as u32, hm.height as u32).map_err(enc)?;
        let e = img.encoder();
        e.write_tag(Tag::ModelPixelScaleTag, &[cell, cell, 0.0][..]).map_err(enc)?;
        e.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, 0.0, (hm.height - 1) as f64 * cell, 0.0][..]).map_err(enc)?;
        // Header (version 1, revision 1.0, 4 keys), then (key, location 0 = inline, count 1, value).
        let keys: [u16; 20] = [1, 1, 0, 4, 1024, 0, 1, 1, 1025, 0, 1, 2, 3072, 0, 1, 32767, 3076, 0, 1, 9001];
        e.write_tag(Tag::GeoKeyDirectoryTag, &keys[..]).map_err(enc)?;
        img.write_data(&hm.data).map_err(enc)?;
    }
    Ok(buf.into_inner())
}

fn unsupported(msg: String) -> InteropError {
    InteropError::Unsupported { format: FORMAT, msg }
}

/// Decodes a GeoTIFF held in memory.
pub fn decode(bytes: &[u8]) -> Result<Heightmap, InteropError> {
    let mut d = Decoder::new(Cursor::new(bytes)).map_err(dec)?;
    let (w, h) = d.dimensions().map_err(dec)?;
    let (w, h) = (w as usize, h as usize);
    check_size(w, h)?;
    let ct = d.colortype().map_err(dec)?;
    // SampleFormat: 1 = unsigned integer (the default), 2 = signed integer, 3 = IEEE float.
    if !matches!(ct, ColorType::Gray(_)) {
        return Err(unsupported(format!("the image is {ct:?}; a heightmap GeoTIFF must have one Float32 sample per pixel")));
    }
    let sf: u16 = d.find_tag_unsigned_vec::<u16>(Tag::SampleFormat).map_err(dec)?.and_then(|v| v.first().copied()).unwrap_or(1);
    let kind = match (ct, sf) {
        (ColorType::Gray(32), 3) => "Float32",
        (ColorType::Gray(64), 3) => "Float64",
        (ColorType::Gray(16), 2) => "Int16",
        (ColorType::Gray(16), 1) => "UInt16",
        (ColorType::Gray(32), 2) => "Int32",
        _ => {
            let fmt = match sf {
                1 => "unsigned integer",
                2 => "signed integer",
                3 => "float",
                _ => "unknown sample format",
            };
            return Err(unsupported(format!(
                "the image is {ct:?} ({fmt}); a heightmap GeoTIFF must have one Float32 sample per pixel (Float64, Int16, UInt16, Int32 are read too)"
            )));
        }
    };
    let cell = match d.get_tag_f64_vec(Tag::ModelPixelScaleTag) {
        Ok(v) if v.first().is_some_and(|c| c.is_finite() && *c > 0.0) => v[0] as f32,
        _ => 1.0,
    };
    let mut d = d.with_limits(Limits::unlimited());
    let data: Vec<f32> = match d.read_image().map_err(dec)? {
        DecodingResult::F32(v) => v,
        DecodingResult::F64(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::I16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::U16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|x| x as f32).collect(),
        _ => return Err(unsupported(format!("{kind} decoded to an unexpected sample type"))),
    };
    if data.len() != w * h {
        return Err(InteropError::Decode { format: FORMAT, msg: format!("{} samples decoded for a {w}×{h} image", data.len()) });
    }
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(InteropError::NonFinite { format: FORMAT, msg: format!("the height at x={}, y={} is {}", i % w, i / w, data[i]) });
    }
    Ok(Heightmap::from_data(w, h, cell, data)?)
}

/// Reads a GeoTIFF heightmap.
pub fn load(path: &Path) -> Result<Heightmap, InteropError> {
    decode(&std::fs::read(path).map_err(io_err("read", path))?)
}

/// Writes `hm` as a Float32 GeoTIFF, atomically.
pub fn save(path: &Path, hm: &Heightmap) -> Result<(), InteropError> {
    let bytes = encode(hm)?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("write", path))
}
