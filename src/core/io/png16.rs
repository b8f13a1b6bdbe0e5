//! PNG heightmaps: 16-bit greyscale export, 8- or 16-bit greyscale import, through the `image`
//! crate's PNG codec.
//!
//! # Layout and orientation
//!
//! One greyscale channel, one pixel per node, `width × height` pixels. PNG rows run top to bottom
//! (PNG spec §4.1.1, image "scanlines"), so **file row 0 is our `y = 0`** (north, the top of the
//! 2-D view) and pixel column `c` is our `x = c`. `tests/interop.rs` checks this with a map whose
//! corners all differ.
//!
//! # Values
//!
//! A sample `v` out of `F` (65 535, or 255 for an 8-bit import) is `lo + v/F · (hi − lo)`
//! metres, with `[lo, hi]` from [`super::interop`] (export: the map's min/max by default, a fixed
//! `--range`, or Unreal's zero-centred range); the range, cell size and source go into the
//! [`super::sidecar`]. Precision: `(hi − lo) / 131 070` metres.
//!
//! # Tools
//!
//! * Unreal Engine imports 16-bit greyscale PNG landscapes and reads 32 768 as zero height:
//!   `z_cm = (v − 32768) · ZScale / 128` ("Landscape Technical Guide",
//!   <https://dev.epicgames.com/documentation/en-us/unreal-engine/landscape-technical-guide-in-unreal-engine>).
//!   Export with `unreal` for that mapping; the sidecar records the Z scale to type in.
//! * Blender (Displace modifier with a 16-bit image texture), Gaea and World Machine read the same
//!   16-bit greyscale file as a normalised 0…1 height; scale it by `max − min` from the sidecar.
//!
//! Bad files (truncated, not a PNG, a colour PNG, a size past the limits) give an
//! [`InteropError`]; the size in the header is checked against the limits before the pixels are
//! decoded.

use std::io::Cursor;
use std::path::Path;

use image::codecs::png::PngDecoder;
use image::{ColorType, DynamicImage, ImageBuffer, ImageDecoder, Luma};

use super::atomic::write_atomic;
use super::error::{InteropError, io_err};
use super::mapping::{ExportOptions, ExportReport, ImportOptions, dequantise, export_range, import_range, quantise};
use super::sidecar;
use crate::core::heightmap::{Heightmap, check_size};

const FORMAT: &str = "PNG";

/// Encodes `hm` as a 16-bit greyscale PNG over `range`; returns the bytes and the clip count.
pub fn encode(hm: &Heightmap, range: [f32; 2]) -> Result<(Vec<u8>, usize), InteropError> {
    let (q, clipped) = quantise(&hm.data, range, 65535);
    let px: Vec<u16> = q.into_iter().map(|v| v as u16).collect();
    let img: ImageBuffer<Luma<u16>, Vec<u16>> = ImageBuffer::from_raw(hm.width as u32, hm.height as u32, px)
        .ok_or_else(|| InteropError::Encode { format: FORMAT, msg: "buffer size mismatch".into() })?;
    let mut buf = Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png)
        .map_err(|e| InteropError::Encode { format: FORMAT, msg: e.to_string() })?;
    Ok((buf.into_inner(), clipped))
}

/// Decodes a greyscale PNG (8 or 16 bit, an alpha channel is ignored) into samples and their
/// full scale, without interpreting them as metres.
pub fn decode_samples(bytes: &[u8]) -> Result<(usize, usize, Vec<u32>, u32), InteropError> {
    let dec =
        PngDecoder::new(Cursor::new(bytes)).map_err(|e| InteropError::Decode { format: FORMAT, msg: e.to_string() })?;
    let (w, h) = dec.dimensions();
    check_size(w as usize, h as usize)?;
    let ct = dec.color_type();
    if !matches!(ct, ColorType::L8 | ColorType::L16 | ColorType::La8 | ColorType::La16) {
        return Err(InteropError::Unsupported {
            format: FORMAT,
            msg: format!("the image is {ct:?}; a heightmap PNG must be greyscale (8 or 16 bit)"),
        });
    }
    let img =
        DynamicImage::from_decoder(dec).map_err(|e| InteropError::Decode { format: FORMAT, msg: e.to_string() })?;
    let (samples, full) = match img {
        DynamicImage::ImageLuma8(b) => (b.into_raw().into_iter().map(u32::from).collect(), 255),
        DynamicImage::ImageLumaA8(b) => (b.pixels().map(|p| p.0[0] as u32).collect(), 255),
        DynamicImage::ImageLuma16(b) => (b.into_raw().into_iter().map(u32::from).collect(), 65535),
        DynamicImage::ImageLumaA16(b) => (b.pixels().map(|p| p.0[0] as u32).collect(), 65535),
        other => {
            return Err(InteropError::Unsupported {
                format: FORMAT,
                msg: format!("decoded as {:?}, not greyscale", other.color()),
            });
        }
    };
    Ok((w as usize, h as usize, samples, full))
}

/// Decodes a greyscale PNG held in memory over `range` metres with `cell_size`.
pub fn decode(bytes: &[u8], range: [f32; 2], cell_size: f32) -> Result<Heightmap, InteropError> {
    let (w, h, s, full) = decode_samples(bytes)?;
    Ok(Heightmap::from_data(w, h, cell_size, s.into_iter().map(|v| dequantise(v, range, full)).collect())?)
}

/// Reads a PNG heightmap; the range and cell size come from `opts`, else the sidecar, else
/// `[0, 1]` and 1 m.
pub fn load(path: &Path, opts: &ImportOptions) -> Result<Heightmap, InteropError> {
    let bytes = std::fs::read(path).map_err(io_err("read", path))?;
    let sc = sidecar::read(path)?;
    let hm = decode(&bytes, import_range(opts, sc.as_ref()), sc.as_ref().map_or(1.0, |s| s.cell_size))?;
    check_sidecar_size(path, sc.as_ref(), &hm)?;
    Ok(hm)
}

/// A sidecar describing another size than the file is stale: refuse it rather than guess.
pub(crate) fn check_sidecar_size(
    path: &Path,
    sc: Option<&sidecar::Sidecar>,
    hm: &Heightmap,
) -> Result<(), InteropError> {
    match sc {
        Some(s) if (s.width, s.height) != (hm.width, hm.height) => Err(InteropError::Sidecar {
            path: sidecar::path_for(path).display().to_string(),
            msg: format!("describes a {}×{} map but the file is {}×{}", s.width, s.height, hm.width, hm.height),
        }),
        _ => Ok(()),
    }
}

/// Writes `hm` as a 16-bit greyscale PNG plus its sidecar, both atomically.
pub fn save(path: &Path, hm: &Heightmap, opts: &ExportOptions) -> Result<ExportReport, InteropError> {
    let (range, z) = export_range(hm, opts)?;
    let (bytes, clipped) = encode(hm, range)?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(io_err("write", path))?;
    let mut sc = sidecar::for_export("png16", hm.width, hm.height, range, hm.cell_size, &opts.source, z);
    sc.notes = opts.notes.clone();
    sidecar::write(path, &sc)?;
    Ok(ExportReport { range: Some(range), clipped, unreal_z_scale: z })
}
