//! The editor's build loupe without the window (`crate::app::loupe` draws it): what a loupe is
//! asked for ([`LoupeRequest`], a script's `Loupe(...)` and the command a pick sends), the side a
//! user may choose ([`side_range`]), the spot under the pointer in the loupe's metres
//! ([`centre_of`]), when a shown loupe is outdated ([`LoupeKey`]), the square it covers on the
//! map ([`square_around`], [`outline`]), and what the Loupe window shows of a [`Loupe`]: two
//! hill-shaded images in one colour ramp ([`LoupeImages`], by [`preview::render_range`]), their
//! captions and a summary line.
//!
//! Frames: a loupe's metres count from the map's first node, node `(x, y)` at `(x·Δx, y·Δx)`; the
//! editor's world frame puts that node at `(x·Δx, h, y·Δx)` ([`crate::core::raycast`]), so the
//! terrain point a ray meets is the loupe centre `(X, Z)` of its world point.

use image::RgbImage;
use serde::{Deserialize, Serialize};

use super::ErosionBuild;
use super::dialog::metres;
use super::loupe::{DEFAULT_SIDE_M, Loupe, LoupeBase};
use super::request::{BuildRequest, Target};
use crate::core::io::preview;

/// The smallest side the editor offers, metres.
pub const MIN_SIDE_M: f32 = 32.0;
/// The largest side the editor offers, metres (the map's extent where it is smaller).
pub const MAX_SIDE_M: f32 = 2048.0;
/// The longest side of an image the Loupe window shows, pixels: a larger build window is shown
/// averaged over blocks of its nodes (the caption says 1:k).
pub const MAX_IMAGE_SIDE: usize = 2048;

fn default_side() -> f32 {
    DEFAULT_SIDE_M
}

/// A loupe asked for: the spot, the side, and optionally the build's size and erosion mode (the
/// Build… dialog's own when absent). A script writes `Loupe((centre: (600.0, 420.0), side: 256.0))`
/// or `Loupe((centre: (600.0, 420.0), size: 2049, erosion: Upsample))`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoupeRequest {
    /// The window's centre, metres from the map's first node `(x, y)`.
    pub centre: (f32, f32),
    /// The window's side, metres ([`DEFAULT_SIDE_M`] when absent).
    #[serde(default = "default_side")]
    pub side: f32,
    /// The build's nodes across, set in the dialog first (the dialog's size when absent).
    #[serde(default)]
    pub size: Option<usize>,
    /// The build's erosion mode, set in the dialog first (the dialog's when absent).
    #[serde(default)]
    pub erosion: Option<ErosionBuild>,
}

impl LoupeRequest {
    /// A loupe of `side` metres around `centre` with the dialog's size and mode.
    pub fn at(centre: [f32; 2], side: f32) -> Self {
        Self { centre: (centre[0], centre[1]), side, size: None, erosion: None }
    }
}

/// The sides a map of `width_m × height_m` metres offers, `(lo, hi)`: [`MIN_SIDE_M`] up to the
/// smaller of the map's extent and [`MAX_SIDE_M`] (a map narrower than [`MIN_SIDE_M`] offers its
/// own extent only).
pub fn side_range(width_m: f32, height_m: f32) -> (f32, f32) {
    let hi = width_m.min(height_m).clamp(0.0, MAX_SIDE_M);
    (MIN_SIDE_M.min(hi), hi)
}

/// The loupe centre (metres from the map's first node) of the terrain point `world` a ray met
/// (the world frame's `X, Z`).
pub fn centre_of(world: [f32; 3]) -> [f32; 2] {
    [world[0], world[2]]
}

/// The square of `side` metres around `centre`, moved inside a map of `extent` metres where it
/// would leave it (as the loupe places its window, before snapping to nodes): its first corner
/// and its side (the map's smaller extent at most).
pub fn square_around(centre: [f32; 2], side: f32, extent: [f32; 2]) -> ([f32; 2], f32) {
    let side = side.max(0.0).min(extent[0].min(extent[1]).max(0.0));
    let at = |c: f32, e: f32| (c - side * 0.5).clamp(0.0, (e - side).max(0.0));
    ([at(centre[0], extent[0]), at(centre[1], extent[1])], side)
}

/// The square's edge from `origin` with `side` metres, `per_edge` points an edge, as a closed
/// loop of points in metres (the first point again at the end), for a marker draped on the
/// terrain.
pub fn outline(origin: [f32; 2], side: f32, per_edge: usize) -> Vec<[f32; 2]> {
    let n = per_edge.max(1);
    let corners = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]];
    let mut pts = Vec::with_capacity(4 * n + 1);
    for w in corners.windows(2) {
        let (a, b): ([f32; 2], [f32; 2]) = (w[0], w[1]);
        for k in 0..n {
            let t = k as f32 / n as f32;
            pts.push([origin[0] + side * (a[0] + (b[0] - a[0]) * t), origin[1] + side * (a[1] + (b[1] - a[1]) * t)]);
        }
    }
    pts.push(origin);
    pts
}

/// What a loupe shows: the document's revision, the build asked for (its size, mode and refine
/// settings; not where it would be written) and the side. A shown loupe whose key is no longer the
/// dialog's is outdated.
#[derive(Clone, Debug, PartialEq)]
pub struct LoupeKey {
    revision: u64,
    request: BuildRequest,
    side_bits: u32,
}

impl LoupeKey {
    /// The key of a loupe of `side` metres for `req` on revision `revision` of the document.
    pub fn new(revision: u64, req: &BuildRequest, side: f32) -> Self {
        let request = BuildRequest { target: Target::Memory, keep_input: false, ..req.clone() };
        Self { revision, request, side_bits: side.to_bits() }
    }
}

/// The Loupe window's two images of a loupe, hill-shaded in one colour ramp (the heights of both
/// windows): the preview's window, one pixel a preview node, and the build's, one pixel a build
/// node (or the mean of `k × k` nodes where the window is wider than [`MAX_IMAGE_SIDE`]).
#[derive(Clone, Debug)]
pub struct LoupeImages {
    /// The preview's window.
    pub preview: RgbImage,
    /// The build's window.
    pub build: RgbImage,
    /// Build nodes a pixel of `build` along each axis (1: every node).
    pub build_step: usize,
}

impl LoupeImages {
    /// The images of `loupe`, water below `sea_level` (the build's, [`super::sea_level`]), coloured
    /// by the ramp of heights `whole` (the project's `(min, max)`, as the 3-D view colours them)
    /// widened to both windows' heights.
    pub fn of(loupe: &Loupe, sea_level: f32, whole: (f32, f32)) -> Self {
        let (a, b) = (loupe.preview.stats(), loupe.build.stats());
        let (lo, hi) = (whole.0.min(a.min).min(b.min), whole.1.max(a.max).max(b.max));
        let preview = preview::render_range(&loupe.preview, sea_level, lo, hi);
        let (build, build_step) = shrink(&preview::render_range(&loupe.build, sea_level, lo, hi), MAX_IMAGE_SIDE);
        Self { preview, build, build_step }
    }
}

/// `img` averaged over blocks of `k × k` pixels, with the least `k` that makes its sides at most
/// `max_side` (the image itself for `k = 1`), and `k`.
pub fn shrink(img: &RgbImage, max_side: usize) -> (RgbImage, usize) {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let k = w.max(h).div_ceil(max_side.max(1)).max(1);
    if k == 1 {
        return (img.clone(), 1);
    }
    let (sw, sh) = (w.div_ceil(k), h.div_ceil(k));
    let out = RgbImage::from_fn(sw as u32, sh as u32, |x, y| {
        let (x0, y0) = (x as usize * k, y as usize * k);
        let (x1, y1) = ((x0 + k).min(w), (y0 + k).min(h));
        let mut sum = [0u32; 3];
        for yy in y0..y1 {
            for xx in x0..x1 {
                let p = img.get_pixel(xx as u32, yy as u32);
                for c in 0..3 {
                    sum[c] += p[c] as u32;
                }
            }
        }
        let n = ((x1 - x0) * (y1 - y0)) as u32;
        image::Rgb(sum.map(|s| ((s + n / 2) / n) as u8))
    });
    (out, k)
}

/// The name of a build mode in the dialog and the loupe ("Refine", "Upsample", "Re-run").
pub fn mode_label(mode: ErosionBuild) -> &'static str {
    match mode {
        ErosionBuild::Refine => "Refine",
        ErosionBuild::Upsample => "Upsample",
        ErosionBuild::Rerun => "Re-run",
    }
}

/// The preview image's caption: "Preview · 8 m cells · 33×33".
pub fn preview_caption(l: &Loupe) -> String {
    format!("Preview · {} m cells · {}×{}", metres(l.preview.cell_size as f64), l.preview.width, l.preview.height)
}

/// The build image's caption: "Build (Refine) · 2 m cells · 129×129", with "shown at 1:k" when
/// the image averages blocks of nodes.
pub fn build_caption(l: &Loupe, step: usize) -> String {
    let shown = if step > 1 { format!(" (shown at 1:{step})") } else { String::new() };
    format!(
        "Build ({}) · {} m cells · {}×{}{shown}",
        mode_label(l.erosion),
        metres(l.build.cell_size as f64),
        l.build.width,
        l.build.height
    )
}

/// Where the window lies and how it was built: "256 m around (600, 420) m: x 472–728 m, y
/// 292–548 m · built 545×545 nodes (the window and 17 preview cells around it) of the 2049×2049
/// build in 1.4 s · base generated at the build's size".
pub fn summary(l: &Loupe) -> String {
    let [x0, y0] = l.origin_m();
    let [sx, sy] = l.side_m();
    let base = match l.base {
        LoupeBase::Regenerated { cached: false } => "base generated at the build's size",
        LoupeBase::Regenerated { cached: true } => "base generated at the build's size (kept from the last loupe)",
        LoupeBase::Resampled => "base resampled as the build resamples it",
    };
    format!(
        "x {}–{} m, y {}–{} m · built {}×{} nodes (the window and {} preview cells around it) of the {}×{} build in \
         {:.1} s · {base}",
        metres(x0 as f64),
        metres((x0 + sx) as f64),
        metres(y0 as f64),
        metres((y0 + sy) as f64),
        l.area_nodes.0,
        l.area_nodes.1,
        l.margin_cells,
        l.build_size.0,
        l.build_size.1,
        l.seconds
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::core::Heightmap;
    use crate::core::raycast::{Ray, raycast};
    use crate::editor::build::loupe;
    use crate::editor::layers::{BaseSource, LayerStack};

    #[test]
    fn the_side_runs_from_32_m_to_the_map_or_2_km() {
        assert_eq!(side_range(1024.0, 1024.0), (32.0, 1024.0));
        assert_eq!(side_range(8192.0, 4096.0), (32.0, 2048.0));
        assert_eq!(side_range(20.0, 100.0), (20.0, 20.0), "a tiny map offers its own extent");
        assert_eq!(side_range(0.0, 0.0), (0.0, 0.0));
    }

    /// The pick: the terrain point under a ray, in the loupe's metres, is where the ray lands,
    /// whatever the ray's slant (the brush's pick, [`raycast`], gives the world point).
    #[test]
    fn the_spot_under_the_pointer_is_the_loupe_centre_in_metres() {
        let map = Heightmap::from_fn(65, 33, 4.0, |x, y| 10.0 + x as f32 * 0.5 - y as f32 * 0.25).unwrap();
        // Straight down over (100 m, 60 m).
        let down = Ray { origin: [100.0, 500.0, 60.0], dir: [0.0, -1.0, 0.0] };
        let hit = raycast(&map, &down, f32::INFINITY).unwrap();
        let c = centre_of(hit.world);
        assert!((c[0] - 100.0).abs() < 1e-3 && (c[1] - 60.0).abs() < 1e-3, "{c:?}");
        // A slanted ray: the centre is the grid point times the cell, on the surface.
        let slant = Ray { origin: [-50.0, 300.0, -20.0], dir: [1.0, -1.2, 0.6] };
        let hit = raycast(&map, &slant, f32::INFINITY).unwrap();
        let c = centre_of(hit.world);
        assert!((c[0] - hit.grid[0] * 4.0).abs() < 1e-3 && (c[1] - hit.grid[1] * 4.0).abs() < 1e-3);
        let h = map.sample(hit.grid[0], hit.grid[1]);
        assert!((h - hit.world[1]).abs() < 1e-2, "the point is on the surface: {h} vs {}", hit.world[1]);
    }

    #[test]
    fn the_square_stays_on_the_map_and_its_outline_closes() {
        assert_eq!(square_around([512.0, 512.0], 256.0, [1024.0, 1024.0]), ([384.0, 384.0], 256.0));
        assert_eq!(square_around([10.0, 1020.0], 256.0, [1024.0, 1024.0]), ([0.0, 768.0], 256.0));
        assert_eq!(square_around([10.0, 10.0], 4096.0, [1024.0, 512.0]), ([0.0, 0.0], 512.0));
        let o = outline([10.0, 20.0], 100.0, 4);
        assert_eq!(o.len(), 17);
        assert_eq!(o.first(), o.last());
        for c in [[10.0, 20.0], [110.0, 20.0], [110.0, 120.0], [10.0, 120.0]] {
            assert!(o.contains(&c), "corner {c:?} missing from {o:?}");
        }
        assert!(o.iter().all(|p| (10.0..=110.0).contains(&p[0]) && (20.0..=120.0).contains(&p[1])));
    }

    #[test]
    fn the_key_follows_the_build_and_the_side_but_not_the_output() {
        let mut s = super::super::dialog::DialogSettings::new(257, None);
        let k = LoupeKey::new(3, &s.request(), 256.0);
        s.out = "elsewhere.exr".into();
        assert_eq!(LoupeKey::new(3, &s.request(), 256.0), k, "where a build is written does not change it");
        assert_ne!(LoupeKey::new(4, &s.request(), 256.0), k, "an edit");
        assert_ne!(LoupeKey::new(3, &s.request(), 128.0), k, "another side");
        s.erosion = ErosionBuild::Upsample;
        assert_ne!(LoupeKey::new(3, &s.request(), 256.0), k, "another mode");
        s.erosion = ErosionBuild::Refine;
        s.set_size(2049);
        assert_ne!(LoupeKey::new(3, &s.request(), 256.0), k, "another size");
        let k = LoupeKey::new(3, &s.request(), 256.0);
        s.refine.deposition = 0.5;
        assert_ne!(LoupeKey::new(3, &s.request(), 256.0), k, "another detail pass (the dialog's refine settings)");
    }

    #[test]
    fn shrinking_averages_blocks() {
        let img = RgbImage::from_fn(5, 3, |x, _| image::Rgb([x as u8 * 10, 0, 255]));
        assert_eq!(shrink(&img, 8).1, 1);
        let (s, k) = shrink(&img, 2);
        assert_eq!((k, s.dimensions()), (3, (2, 1)));
        assert_eq!(s.get_pixel(0, 0).0, [10, 0, 255], "the mean of 0, 10 and 20");
        assert_eq!(s.get_pixel(1, 0).0, [35, 0, 255], "the mean of 30 and 40 (the last block is short)");
    }

    /// A loupe of a 129² generated project at 4×: the images are the windows' sizes, in one
    /// ramp, and the captions and summary name the cells and sizes.
    #[test]
    fn a_loupe_is_shown_as_two_images_with_captions() {
        let p = crate::core::generate::demo_params(129, 1);
        let map = crate::core::generate::generate(&p).unwrap();
        let stack = LayerStack::new(&map, BaseSource::Generator(p));
        let req = BuildRequest::in_memory(513, ErosionBuild::Refine);
        let l = loupe::loupe(&stack, &req, [500.0, 400.0], 256.0, &AtomicBool::new(false)).unwrap();
        let s = map.stats();
        let img = LoupeImages::of(&l, 0.0, (s.min, s.max));
        assert_eq!(img.preview.dimensions(), (l.preview.width as u32, l.preview.height as u32));
        assert_eq!(img.build.dimensions(), (l.build.width as u32, l.build.height as u32));
        assert_eq!(img.build_step, 1);
        assert_eq!(preview_caption(&l), "Preview · 8 m cells · 33×33");
        assert_eq!(build_caption(&l, 1), "Build (Refine) · 2 m cells · 129×129");
        assert_eq!(build_caption(&l, 2), "Build (Refine) · 2 m cells · 129×129 (shown at 1:2)");
        let s = summary(&l);
        assert!(s.starts_with("x 376–632 m, y 272–528 m · built 145×145 nodes (the window and 2 preview cells"), "{s}");
        assert!(s.contains("of the 513×513 build"), "{s}");
        // One ramp: the corner node, the same height in both windows, looks alike in both (its
        // shade differs a little with the finer slopes).
        let first_p = img.preview.get_pixel(0, 0);
        let first_b = img.build.get_pixel(0, 0);
        let d: i32 = first_p.0.iter().zip(first_b.0).map(|(a, b)| (*a as i32 - b as i32).abs()).sum();
        assert!(d < 60, "the corner node looks alike in both: {first_p:?} vs {first_b:?}");
    }
}
