//! Geographic grids in metres (issue #13, item 7): DEMs in geographic coordinates (GeoTIFF in
//! EPSG:4326 and the like, SRTM `.hgt`) have their spacing in degrees; a heightmap needs metres
//! and square cells.
//!
//! # Metres per degree on the WGS84 ellipsoid
//! With `a = 6 378 137 m`, `f = 1/298.257 223 563`, `e² = f (2 − f)` (NIMA TR8350.2, WGS 84,
//! 3rd ed., 2000, table 3.1) and the geodetic latitude `φ`, the meridional radius of curvature
//! `M` and the prime-vertical radius `N` are
//!
//! ```text
//! M(φ) = a (1 − e²) / (1 − e² sin²φ)^(3/2)        N(φ) = a / (1 − e² sin²φ)^(1/2)
//! metres per degree of latitude   = π/180 · M(φ)        (north–south, our y)
//! metres per degree of longitude  = π/180 · N(φ) cos φ  (east–west, our x)
//! ```
//!
//! (e.g. Snyder 1987, "Map Projections — A Working Manual", USGS PP 1395, eqs. 4-18, 4-20 and
//! §"The ellipsoid"). At 46° N a 3″ cell is 92.63 m north–south and 64.55 m east–west. The tile's
//! centre latitude is used for the whole tile (the east–west spacing varies by about
//! `tan φ · Δφ` over it, 1.8 % across a 1° tile at 46°).
//!
//! # Square cells
//! A heightmap has one cell size. When the two spacings differ by more than 1 %
//! ([`SQUARE_TOLERANCE`]), the rows are kept (node count and spacing along y, the north–south
//! spacing becomes the cell size) and every row is resampled along x to that spacing by linear
//! interpolation (bilinear interpolation with the row coordinate exact): `w' = round((w − 1) ·
//! dx / dy) + 1` nodes, node `i'` at old `x = i' · dy / dx`. No detail is invented along y and
//! the map's extent is kept within half a cell. Within 1 % the map is kept as it is, with the mean
//! spacing as cell size. With `keep_grid` (`ImportOptions::keep_grid`, `talus convert
//! --keep-grid`) the file's nodes are kept whatever the spacings, the north–south spacing is the
//! cell size and the east–west distances are off by `dx/dy`. Each way a note says what was done.

use super::error::InteropError;
use crate::core::heightmap::{Heightmap, check_size};

/// WGS84 semi-major axis, metres.
pub const WGS84_A: f64 = 6_378_137.0;
/// WGS84 flattening.
pub const WGS84_F: f64 = 1.0 / 298.257_223_563;
/// Relative difference of the x and y spacings above which rows are resampled (1 %).
pub const SQUARE_TOLERANCE: f64 = 0.01;

/// Metres per degree of longitude (x) and of latitude (y) at latitude `lat_deg`.
pub fn metres_per_degree(lat_deg: f64) -> (f64, f64) {
    let e2 = WGS84_F * (2.0 - WGS84_F);
    let phi = lat_deg.to_radians();
    let s = 1.0 - e2 * phi.sin().powi(2);
    let m = WGS84_A * (1.0 - e2) / s.powf(1.5);
    let n = WGS84_A / s.sqrt();
    let k = std::f64::consts::PI / 180.0;
    (k * n * phi.cos(), k * m)
}

/// Builds a heightmap with square cells from a `w × h` grid whose nodes are `dx` (x) and `dy`
/// (y) metres apart (see the module doc), or keeps the grid with `keep_grid`; pushes a note
/// saying what was done.
pub fn square_cells(
    data: Vec<f32>,
    w: usize,
    h: usize,
    dx: f64,
    dy: f64,
    keep_grid: bool,
    notes: &mut Vec<String>,
) -> Result<Heightmap, InteropError> {
    let bad = |msg: String| InteropError::Unsupported { format: "geographic grid", msg };
    if !(dx.is_finite() && dy.is_finite() && dx > 0.0 && dy > 0.0) {
        return Err(bad(format!("the spacing {dx} m × {dy} m is not positive")));
    }
    if (dx / dy - 1.0).abs() <= SQUARE_TOLERANCE || w < 2 {
        let cell = if w < 2 { dy } else { 0.5 * (dx + dy) };
        notes.push(format!(
            "spacings {dx:.2} m (x) and {dy:.2} m (y) differ by under 1 %: kept {w}×{h} nodes, cell {cell:.2} m"
        ));
        return Ok(Heightmap::from_data(w, h, cell as f32, data)?);
    }
    if keep_grid {
        notes.push(format!(
            "grid kept as asked: {w}×{h} nodes, cell {dy:.2} m (the north–south spacing); east–west distances are {dx:.2} m in truth, not corrected"
        ));
        return Ok(Heightmap::from_data(w, h, dy as f32, data)?);
    }
    let w2 = ((w - 1) as f64 * dx / dy).round() as usize + 1;
    check_size(w2.max(2), h)?;
    let w2 = w2.max(2);
    let mut out = vec![0.0f32; w2 * h];
    for y in 0..h {
        let row = &data[y * w..(y + 1) * w];
        for (i, o) in out[y * w2..(y + 1) * w2].iter_mut().enumerate() {
            let x = (i as f64 * dy / dx).min((w - 1) as f64);
            let x0 = (x.floor() as usize).min(w - 2);
            let t = x - x0 as f64;
            *o = (row[x0] as f64 * (1.0 - t) + row[x0 + 1] as f64 * t) as f32;
        }
    }
    notes.push(format!(
        "cells were {dx:.2} m (x) × {dy:.2} m (y): each row resampled (linear) from {w} to {w2} nodes so cells are square, {dy:.2} m; the {h} rows are kept"
    ));
    Ok(Heightmap::from_data(w2, h, dy as f32, out)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgs84_metres_per_degree_match_known_values() {
        // Equator: N = a, M = a(1 − e²); pole: cos φ = 0.
        let (x0, y0) = metres_per_degree(0.0);
        assert!((x0 - 111_319.49).abs() < 0.1 && (y0 - 110_574.28).abs() < 0.1, "{x0} {y0}");
        let (x46, y46) = metres_per_degree(46.0);
        assert!((y46 / 1200.0 - 92.63).abs() < 0.01 && (x46 / 1200.0 - 64.55).abs() < 0.01, "{x46} {y46}");
        assert!(metres_per_degree(90.0).0.abs() < 1e-6);
    }

    #[test]
    fn rows_are_resampled_to_square_cells_linearly() {
        // A ramp along x stays a ramp in metres: h = x_metres.
        let (w, h, dx, dy) = (11, 3, 5.0, 10.0);
        let data: Vec<f32> = (0..w * h).map(|i| ((i % w) as f64 * dx) as f32).collect();
        let mut notes = Vec::new();
        let hm = square_cells(data.clone(), w, h, dx, dy, false, &mut notes).unwrap();
        assert_eq!((hm.width, hm.height, hm.cell_size), (6, 3, 10.0));
        assert!((0..6).all(|i| (hm.get(i, 2) - i as f32 * 10.0).abs() < 1e-4));
        assert!(notes[0].contains("from 11 to 6 nodes"), "{notes:?}");
        let kept = square_cells(data.clone(), w, h, dx, dy, true, &mut notes).unwrap();
        assert_eq!((kept.width, kept.cell_size, kept.data == data), (11, 10.0, true));
        assert!(notes[1].contains("grid kept"), "{notes:?}");
        let same = square_cells(data, w, h, 10.0, 10.05, false, &mut notes).unwrap();
        assert_eq!((same.width, same.height), (11, 3));
        assert!(square_cells(vec![0.0; 4], 2, 2, 0.0, 1.0, false, &mut notes).is_err());
    }
}
