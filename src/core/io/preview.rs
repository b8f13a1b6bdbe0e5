//! Quick-look images: a hill-shaded, height-coloured preview of a heightmap, a flow map and an
//! erosion/deposition map, as 8-bit RGB PNGs (exchange formats for other tools are separate).
//!
//! Hill shading: with the unit normal `n` (see [`Heightmap::normal`]) and a light direction `l`
//! from the north-west at 45°, brightness = `0.35 + 0.65·max(0, n·l)`. Heights below `sea_level`
//! are tinted blue by depth; above, a ramp from sand through grass and rock to snow.

use std::io;
use std::path::Path;

use image::{ImageBuffer, Rgb, RgbImage};

use super::atomic::write_atomic;
use crate::core::heightmap::Heightmap;

fn lerp3(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

/// Colour of a normalised land height `t ∈ [0, 1]`.
fn land_colour(t: f32) -> [f32; 3] {
    const STOPS: [(f32, [f32; 3]); 5] = [
        (0.0, [0.82, 0.76, 0.55]),
        (0.08, [0.36, 0.55, 0.25]),
        (0.45, [0.30, 0.42, 0.20]),
        (0.75, [0.50, 0.45, 0.40]),
        (1.0, [0.96, 0.96, 0.98]),
    ];
    let t = t.clamp(0.0, 1.0);
    for w in STOPS.windows(2) {
        if t <= w[1].0 {
            return lerp3(w[0].1, w[1].1, (t - w[0].0) / (w[1].0 - w[0].0));
        }
    }
    STOPS[4].1
}

/// A hill-shaded colour image of `hm`, one pixel per node (x right, y down). Pass
/// `f32::NEG_INFINITY` as `sea_level` for a map without sea.
pub fn render(hm: &Heightmap, sea_level: f32) -> RgbImage {
    let s = hm.stats();
    render_range(hm, sea_level, s.min, s.max)
}

/// As [`render`], with the colour ramp spread over heights `lo ..= hi` instead of the map's own
/// range, so that two maps of one place (a window at two resolutions) are coloured alike.
pub fn render_range(hm: &Heightmap, sea_level: f32, lo: f32, hi: f32) -> RgbImage {
    // No sea (−∞ or below the map): colour the whole range as land.
    let sea_level = if sea_level.is_finite() { sea_level } else { lo };
    let top = (hi - sea_level).max(1e-6);
    let deep = (sea_level - lo).max(1e-6);
    let light = {
        let l = [-1.0f32, 1.0, -1.0];
        let n = (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]).sqrt();
        [l[0] / n, l[1] / n, l[2] / n]
    };
    ImageBuffer::from_fn(hm.width as u32, hm.height as u32, |x, y| {
        let h = hm.get(x as usize, y as usize);
        let n = hm.normal(x as usize, y as usize);
        let shade = 0.35 + 0.65 * (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]).max(0.0);
        let c = if h < sea_level {
            lerp3([0.20, 0.45, 0.65], [0.04, 0.12, 0.30], ((sea_level - h) / deep).clamp(0.0, 1.0))
        } else {
            let c = land_colour((h - sea_level) / top);
            [c[0] * shade, c[1] * shade, c[2] * shade]
        };
        Rgb(c.map(|v| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8))
    })
}

/// Flow map: `log(1 + flow)` normalised, drawn as white-blue channels on black.
pub fn render_flow(width: usize, height: usize, flow: &[f32]) -> RgbImage {
    let max = flow.iter().fold(0.0f32, |m, &f| m.max(f)).max(1e-12);
    let norm = (1.0 + max).ln();
    ImageBuffer::from_fn(width as u32, height as u32, |x, y| {
        let f = flow[y as usize * width + x as usize].max(0.0);
        let t = ((1.0 + f).ln() / norm).clamp(0.0, 1.0);
        let c = lerp3([0.0, 0.0, 0.0], [0.55, 0.8, 1.0], t.sqrt());
        Rgb(c.map(|v| (v * 255.0 + 0.5) as u8))
    })
}

/// Erosion/deposition map: red where the net change is negative (eroded), blue where positive
/// (deposited), scaled by the 99th percentile of |change| so a few spikes don't wash it out.
pub fn render_erosion(width: usize, height: usize, net: &[f32]) -> RgbImage {
    let mut mags: Vec<f32> = net.iter().map(|v| v.abs()).filter(|v| v.is_finite()).collect();
    let scale = if mags.is_empty() {
        1.0
    } else {
        let k = ((mags.len() - 1) as f32 * 0.99) as usize;
        let (_, v, _) = mags.select_nth_unstable_by(k, |a, b| a.total_cmp(b));
        v.max(1e-12)
    };
    ImageBuffer::from_fn(width as u32, height as u32, |x, y| {
        let v = net[y as usize * width + x as usize];
        let t = (v / scale).clamp(-1.0, 1.0);
        let c = if t < 0.0 {
            lerp3([0.95, 0.95, 0.95], [0.75, 0.1, 0.05], -t)
        } else {
            lerp3([0.95, 0.95, 0.95], [0.05, 0.25, 0.8], t)
        };
        Rgb(c.map(|v| (v * 255.0 + 0.5) as u8))
    })
}

/// Saves an image as PNG, atomically.
pub fn save_png(path: &Path, img: &RgbImage) -> io::Result<()> {
    write_atomic(path, |w| {
        let mut buf = io::Cursor::new(Vec::new());
        img.write_to(&mut buf, image::ImageFormat::Png).map_err(io::Error::other)?;
        w.write_all(buf.get_ref())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_has_the_map_size_and_shows_relief() {
        let hm =
            Heightmap::from_fn(32, 16, 1.0, |x, y| ((x as f32 * 0.4).sin() + (y as f32 * 0.3).cos()) * 10.0).unwrap();
        let img = render(&hm, 0.0);
        assert_eq!(img.dimensions(), (32, 16));
        let first = img.get_pixel(0, 0);
        assert!(img.pixels().any(|p| p != first), "preview is uniform");
        let f = render_flow(4, 1, &[0.0, 1.0, 10.0, 100.0]);
        assert!(f.get_pixel(3, 0)[2] > f.get_pixel(1, 0)[2]);
        let e = render_erosion(2, 1, &[-1.0, 1.0]);
        assert!(e.get_pixel(0, 0)[0] > e.get_pixel(0, 0)[2] && e.get_pixel(1, 0)[2] > e.get_pixel(1, 0)[0]);
    }
}
