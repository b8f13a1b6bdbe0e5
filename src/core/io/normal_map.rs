//! Normal maps as 8-bit RGB PNG, for texturing the terrain in other tools.
//!
//! One pixel per node, file row 0 = our `y = 0` (as every raster export here). The normal is
//! [`Heightmap::normal`] (central differences over the real cell size), written in tangent space
//! with the **OpenGL (`Y+`) convention** that Blender, Godot and Unity expect: red = `+x`
//! (east, right in the image), green = up the image (north, our `−y`), blue = out of the surface,
//! each `c = round((n + 1) / 2 · 255)`. Unreal expects DirectX (`Y−`): tick "Flip Green Channel"
//! there (Unreal "Texture Properties", Compression, "Flip Green Channel").

use std::path::Path;

use image::{ImageBuffer, Rgb, RgbImage};

use super::error::InteropError;
use super::preview::save_png;
use crate::core::heightmap::Heightmap;

/// The normal map's pixel of node `(x, y)` of `hm` (its neighbours in `hm` enter the
/// differences, so a tile cut from a larger map gets the same pixels as the whole map).
pub fn pixel(hm: &Heightmap, x: usize, y: usize) -> [u8; 3] {
    let n = hm.normal(x, y);
    let t = [n[0], -n[2], n[1]];
    t.map(|v| ((v.clamp(-1.0, 1.0) + 1.0) * 0.5 * 255.0).round() as u8)
}

/// The tangent-space normal map of `hm`.
pub fn render(hm: &Heightmap) -> RgbImage {
    ImageBuffer::from_fn(hm.width as u32, hm.height as u32, |x, y| Rgb(pixel(hm, x as usize, y as usize)))
}

/// Writes the normal map of `hm` as PNG, atomically.
pub fn save(path: &Path, hm: &Heightmap) -> Result<(), InteropError> {
    save_png(path, &render(hm)).map_err(super::interop::io_err("write", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slope_rising_east_and_north_tilts_red_down_and_green_down() {
        // h grows with x (east) and shrinks with y (so grows towards north): the surface faces
        // west and south, i.e. −x and −(north) in tangent space.
        let hm = Heightmap::from_fn(5, 5, 1.0, |x, y| x as f32 - 0.5 * y as f32).unwrap();
        let img = render(&hm);
        let p = img.get_pixel(2, 2);
        assert!(p[0] < 128 && p[1] < 128 && p[2] > 128, "{p:?}");
        let flat = render(&Heightmap::filled(3, 3, 1.0, 7.0).unwrap());
        assert_eq!(flat.get_pixel(1, 1).0, [128, 128, 255]);
    }
}
