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
//! type, colour images and non-finite heights give an [`InteropError`]. The size in the header is
//! checked against the heightmap limits before pixels are decoded; strips that run past the end of
//! the file are a decode error from the `tiff` crate.
//!
//! # Units of the cell size (issue #13, item 7)
//!
//! The GeoKey directory decides what the pixel scale `[sx, sy]` means:
//!
//! - **Geographic** (`GTModelTypeGeoKey` (1024) = 2, or no model type but a
//!   `GeographicTypeGeoKey` (2048, e.g. 4326) and no `ProjectedCSTypeGeoKey` (3072)): the scale is
//!   in degrees. The tile's centre latitude comes from the tiepoint, `φ = Y − ((h − 1)/2 − J)·sy`
//!   (tiepoint `[I, J, K, X, Y, Z]`; 0° with a note when there is none), and
//!   [`super::geodesy`] turns `sx`, `sy` into metres on WGS84 and resamples the rows to square
//!   cells when they differ by more than 1 %.
//! - **Projected** in feet (`ProjLinearUnitsGeoKey` (3076) = 9002 international foot, 9003 US
//!   survey foot): the scale is multiplied by 0.3048 (1200/3937) m.
//! - Otherwise (metres, or no keys) the x pixel scale is the cell size as it is (1 m without the
//!   tag), as before.
//!
//! What was done is returned as notes ([`decode_with_notes`]), which `talus convert` / `analyze`
//! print and the sidecar of an integer export records.

use std::io::Cursor;
use std::path::Path;

use tiff::ColorType;
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::encoder::{TiffEncoder, colortype::Gray32Float};
use tiff::tags::Tag;

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};
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
        e.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, 0.0, (hm.height - 1) as f64 * cell, 0.0][..])
            .map_err(enc)?;
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

/// Decodes a GeoTIFF held in memory (notes dropped; see [`decode_with_notes`]).
pub fn decode(bytes: &[u8]) -> Result<Heightmap, InteropError> {
    Ok(decode_with_notes(bytes)?.0)
}

/// The value of GeoKey `id` in a GeoKeyDirectory (inline SHORT values only).
fn geo_key(dir: &[u16], id: u16) -> Option<u16> {
    let n = *dir.get(3)? as usize;
    (0..n).filter_map(|k| dir.get(4 + 4 * k..8 + 4 * k)).find(|e| e[0] == id && e[1] == 0).map(|e| e[3])
}

/// How the pixel scale is to be read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Units {
    /// Metres (or unknown: taken as metres).
    Metres,
    /// Projected, this many metres per unit.
    Linear(f64, &'static str),
    /// Geographic: degrees; the GeographicTypeGeoKey when given.
    Degrees(Option<u16>),
}

fn units(dir: Option<&[u16]>) -> Units {
    let Some(dir) = dir else { return Units::Metres };
    let model = geo_key(dir, 1024);
    let geog = geo_key(dir, 2048);
    if model == Some(2) || (model.is_none() && geog.is_some() && geo_key(dir, 3072).is_none()) {
        return Units::Degrees(geog);
    }
    match geo_key(dir, 3076) {
        Some(9002) => Units::Linear(0.3048, "international feet"),
        Some(9003) => Units::Linear(1200.0 / 3937.0, "US survey feet"),
        _ => Units::Metres,
    }
}

/// Decodes a GeoTIFF held in memory; the notes say how the cell size was obtained when it was not
/// simply the pixel scale in metres (see the module doc).
pub fn decode_with_notes(bytes: &[u8]) -> Result<(Heightmap, Vec<String>), InteropError> {
    decode_geo(bytes, false)
}

/// [`decode_with_notes`], keeping a geographic file's grid with `keep_grid` (see
/// [`super::geodesy`]).
pub fn decode_geo(bytes: &[u8], keep_grid: bool) -> Result<(Heightmap, Vec<String>), InteropError> {
    let mut d = Decoder::new(Cursor::new(bytes)).map_err(dec)?;
    let (w, h) = d.dimensions().map_err(dec)?;
    let (w, h) = (w as usize, h as usize);
    check_size(w, h)?;
    let ct = d.colortype().map_err(dec)?;
    // SampleFormat: 1 = unsigned integer (the default), 2 = signed integer, 3 = IEEE float.
    if !matches!(ct, ColorType::Gray(_)) {
        return Err(unsupported(format!(
            "the image is {ct:?}; a heightmap GeoTIFF must have one Float32 sample per pixel"
        )));
    }
    let sf: u16 =
        d.find_tag_unsigned_vec::<u16>(Tag::SampleFormat).map_err(dec)?.and_then(|v| v.first().copied()).unwrap_or(1);
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
    let scale: Option<Vec<f64>> = match d.get_tag_f64_vec(Tag::ModelPixelScaleTag) {
        Ok(v) if v.first().is_some_and(|c| c.is_finite() && *c > 0.0) => Some(v),
        _ => None,
    };
    let tie: Option<Vec<f64>> =
        d.get_tag_f64_vec(Tag::ModelTiepointTag).ok().filter(|t| t.len() >= 6 && t.iter().all(|v| v.is_finite()));
    let keys: Option<Vec<u16>> = d.find_tag_unsigned_vec::<u16>(Tag::GeoKeyDirectoryTag).ok().flatten();
    let units = units(keys.as_deref());
    let cell = scale.as_ref().map_or(1.0, |v| v[0] as f32);
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
        return Err(InteropError::Decode {
            format: FORMAT,
            msg: format!("{} samples decoded for a {w}×{h} image", data.len()),
        });
    }
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(InteropError::NonFinite {
            format: FORMAT,
            msg: format!("the height at x={}, y={} is {}", i % w, i / w, data[i]),
        });
    }
    let mut notes = Vec::new();
    match (units, scale) {
        (Units::Degrees(code), Some(sc)) => {
            let sy = sc.get(1).copied().filter(|v| v.is_finite() && *v > 0.0).unwrap_or(sc[0]);
            let lat = match &tie {
                Some(t) => (t[4] - ((h as f64 - 1.0) / 2.0 - t[1]) * sy).clamp(-90.0, 90.0),
                None => {
                    notes.push("geographic GeoTIFF without a tiepoint: latitude unknown, 0° assumed".into());
                    0.0
                }
            };
            let (mx, my) = super::geodesy::metres_per_degree(lat);
            let crs =
                code.map_or("geographic coordinates".to_string(), |c| format!("geographic coordinates (EPSG:{c})"));
            let hemi = if lat >= 0.0 { "N" } else { "S" };
            notes.push(format!(
                "{crs}: pixel {:.7}° × {sy:.7}° is {:.2} m (x) × {:.2} m (y) at the tile's centre latitude {:.4}° {hemi} (WGS84)",
                sc[0],
                sc[0] * mx,
                sy * my,
                lat.abs()
            ));
            let hm = super::geodesy::square_cells(data, w, h, sc[0] * mx, sy * my, keep_grid, &mut notes)?;
            Ok((hm, notes))
        }
        (Units::Degrees(_), None) => {
            notes.push("geographic GeoTIFF without a pixel scale: cell size 1 m assumed (use --cell-size)".into());
            Ok((Heightmap::from_data(w, h, 1.0, data)?, notes))
        }
        (Units::Linear(k, name), Some(sc)) => {
            let c = sc[0] * k;
            notes.push(format!("pixel scale {} {name} = {c:.4} m", sc[0]));
            Ok((Heightmap::from_data(w, h, c as f32, data)?, notes))
        }
        _ => Ok((Heightmap::from_data(w, h, cell, data)?, notes)),
    }
}

/// Reads a GeoTIFF heightmap.
pub fn load(path: &Path) -> Result<Heightmap, InteropError> {
    Ok(load_with_notes(path, false)?.0)
}

/// Reads a GeoTIFF heightmap with the notes of [`decode_geo`].
pub fn load_with_notes(path: &Path, keep_grid: bool) -> Result<(Heightmap, Vec<String>), InteropError> {
    decode_geo(&std::fs::read(path).map_err(io_err("read", path))?, keep_grid)
}

/// Writes `hm` as a Float32 GeoTIFF, atomically.
pub fn save(path: &Path, hm: &Heightmap) -> Result<(), InteropError> {
    let bytes = encode(hm)?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("write", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Float32 GeoTIFF with the given pixel scale, tiepoint and GeoKeys.
    fn tif(w: u32, h: u32, data: &[f32], scale: [f64; 3], tie: [f64; 6], keys: &[u16]) -> Vec<u8> {
        let mut buf = Cursor::new(Vec::new());
        {
            let mut t = TiffEncoder::new(&mut buf).unwrap();
            let mut img = t.new_image::<Gray32Float>(w, h).unwrap();
            let e = img.encoder();
            e.write_tag(Tag::ModelPixelScaleTag, &scale[..]).unwrap();
            e.write_tag(Tag::ModelTiepointTag, &tie[..]).unwrap();
            e.write_tag(Tag::GeoKeyDirectoryTag, keys).unwrap();
            img.write_data(data).unwrap();
        }
        buf.into_inner()
    }

    #[test]
    fn a_4326_tile_at_46_north_gets_metres_and_square_cells() {
        let (w, h) = (121u32, 121u32);
        let deg = 3.0 / 3600.0;
        // A ramp along x: 1 m per column.
        let data: Vec<f32> = (0..w * h).map(|i| (i % w) as f32).collect();
        // Tile centred on 46° N: the north edge (row 0) at 46° + 60 cells.
        let keys = [1u16, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 2, 2048, 0, 1, 4326];
        let bytes = tif(w, h, &data, [deg, deg, 0.0], [0.0, 0.0, 0.0, 7.0, 46.0 + 60.0 * deg, 0.0], &keys);
        let (hm, notes) = decode_with_notes(&bytes).unwrap();
        assert!((hm.cell_size - 92.63).abs() < 0.01, "{}", hm.cell_size);
        // x: 120 intervals of 64.55 m = 7746 m → 83.6 → 85 nodes at 92.63 m.
        assert_eq!((hm.width, hm.height), (85, 121));
        let text = notes.join("\n");
        assert!(text.contains("EPSG:4326") && text.contains("92.63 m (y)") && text.contains("64.55 m (x)"), "{text}");
        assert!(text.contains("resampled") && text.contains("from 121 to 85 nodes"), "{text}");
        // The ramp is resampled, not shifted: node i lies at old column i · 92.63 / 64.55.
        assert!((hm.get(10, 5) - 10.0 * 92.63 / 64.55).abs() < 0.02, "{}", hm.get(10, 5));
        // A model type without a GeographicTypeGeoKey is geographic too; no tiepoint → 0° noted.
        let only_model = [1u16, 1, 0, 1, 1024, 0, 1, 2];
        let mut b = Cursor::new(Vec::new());
        {
            let mut t = TiffEncoder::new(&mut b).unwrap();
            let mut img = t.new_image::<Gray32Float>(4, 4).unwrap();
            img.encoder().write_tag(Tag::ModelPixelScaleTag, &[deg, deg, 0.0][..]).unwrap();
            img.encoder().write_tag(Tag::GeoKeyDirectoryTag, &only_model[..]).unwrap();
            img.write_data(&[0.0f32; 16]).unwrap();
        }
        let (eq, notes) = decode_with_notes(&b.into_inner()).unwrap();
        assert!(
            notes.iter().any(|n| n.contains("0° assumed")) && (eq.cell_size - 92.5).abs() < 0.5,
            "{notes:?} {}",
            eq.cell_size
        );
    }

    #[test]
    fn a_projected_metric_tiff_is_unchanged_and_feet_are_converted() {
        let data: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let hm = Heightmap::from_data(8, 8, 30.0, data.clone()).unwrap();
        let (back, notes) = decode_with_notes(&encode(&hm).unwrap()).unwrap();
        assert_eq!(back, hm);
        assert!(notes.is_empty(), "{notes:?}");
        let feet = [1u16, 1, 0, 2, 1024, 0, 1, 1, 3076, 0, 1, 9002];
        let (f, notes) = decode_with_notes(&tif(8, 8, &data, [10.0, 10.0, 0.0], [0.0; 6], &feet)).unwrap();
        assert!((f.cell_size - 3.048).abs() < 1e-6 && f.width == 8 && notes[0].contains("feet"), "{notes:?}");
    }
}
