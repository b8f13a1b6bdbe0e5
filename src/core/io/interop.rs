//! Exchange with other tools (issue #6): the format registry, the import/export options shared by
//! every format file, the integer value mapping, and the size presets.
//!
//! # Value mapping of the integer formats (PNG 8/16, R16)
//!
//! An integer sample `v` out of full scale `F` (65 535 for 16 bit, 255 for 8 bit) stands for the
//! height
//!
//! ```text
//! h = lo + (v / F) · (hi − lo)            (import)
//! v = round((h − lo) / (hi − lo) · F)     (export, clamped to 0..=F)
//! ```
//!
//! On export `[lo, hi]` is the map's own `[min, max]` ("normalise to full range", the default and
//! the most precise choice), a fixed range the user gives (`--range`, for tiles that must share a
//! scale; heights outside are clipped and counted), or the Unreal range (see [`unreal_range`]).
//! The range, the cell size and the source file go into a JSON sidecar next to the file
//! ([`super::sidecar`]) so our importer restores metres; other tools ignore it. On import the
//! range comes from `--range`, else the sidecar, else `[0, 1]` (the normalised value, which is
//! what Unity and Unreal do without further information). The quantisation error is at most
//! `(hi − lo) / (2F)` plus `f32` rounding.
//!
//! # Orientation
//!
//! Every raster format here is written in image order: the file's first row is our `y = 0`
//! (north, the top of the 2-D view) and each row runs along `+x`. The format files repeat this in
//! their docs and test it with an asymmetric map.

use std::path::Path;

use thiserror::Error;

use crate::core::heightmap::{Heightmap, HeightmapError, Stats};

/// Everything that can go wrong importing or exporting an exchange format.
#[derive(Debug, Error)]
pub enum InteropError {
    /// The file extension names no format we know.
    #[error("{path}: unknown format (extension `{ext}`); known: {known}")]
    UnknownFormat {
        /// The file, as displayed.
        path: String,
        /// Its extension, lower-cased without the dot; empty when it has none.
        ext: String,
        /// The extensions we know ([`extension_list`]).
        known: String,
    },
    /// The format can be written but not read (meshes, derived maps).
    #[error("{format} files can be exported but not imported")]
    ExportOnly {
        /// Name of the format for the message (`"OBJ"`, `"glTF binary"`).
        format: &'static str,
    },
    /// An operating-system error.
    #[error("could not {op} {path}: {source}")]
    Io {
        /// What was being done, as a verb for the message: `"open"`, `"read"`, `"write"`, `"save"`.
        op: &'static str,
        /// The file, as displayed.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file's length does not match what its size needs.
    #[error("{format}: the file is {actual} bytes but {what} needs {expected}")]
    Length {
        /// What failed, for the message: the format (`"PNG"`, `"R16"`, `"GeoTIFF"`…) or a step (`"export"`, `"mesh"`).
        format: &'static str,
        /// What fixes the expected length, as a phrase (`"a width of 512 (2·512·height bytes)"`).
        what: String,
        /// Length that size needs, bytes.
        expected: u64,
        /// Length of the file, bytes.
        actual: u64,
    },
    /// The size cannot be derived from the file (e.g. a non-square R16 without `--width`).
    #[error("{format}: {msg}")]
    Size {
        /// What failed, for the message: the format (`"PNG"`, `"R16"`, `"GeoTIFF"`…) or a step (`"export"`, `"mesh"`).
        format: &'static str,
        /// Why no size follows, in words.
        msg: String,
    },
    /// The decoder of the format's crate refused the data (truncated, corrupt).
    #[error("{format}: cannot decode: {msg}")]
    Decode {
        /// What failed, for the message: the format (`"PNG"`, `"R16"`, `"GeoTIFF"`…) or a step (`"export"`, `"mesh"`).
        format: &'static str,
        /// The decoder's own message.
        msg: String,
    },
    /// The file holds no channel/sample type we can read as heights.
    #[error("{format}: {msg}")]
    Unsupported {
        /// What failed, for the message: the format (`"PNG"`, `"R16"`, `"GeoTIFF"`…) or a step (`"export"`, `"mesh"`).
        format: &'static str,
        /// What the file holds and why it cannot be read, in words.
        msg: String,
    },
    /// A height, or the range, is not finite.
    #[error("{format}: {msg}")]
    NonFinite {
        /// What failed, for the message: the format (`"PNG"`, `"R16"`, `"GeoTIFF"`…) or a step (`"export"`, `"mesh"`).
        format: &'static str,
        /// Which value is not finite, and where, in words.
        msg: String,
    },
    /// The decoded size is not a valid heightmap.
    #[error(transparent)]
    Heightmap(#[from] HeightmapError),
    /// The sidecar next to the file is unreadable.
    #[error("sidecar {path}: {msg}")]
    Sidecar {
        /// The sidecar file (`….json`), as displayed.
        path: String,
        /// What is wrong with it, in words: bad JSON, an invalid range or cell size, a size unlike the file's.
        msg: String,
    },
    /// The encoder of the format's crate failed.
    #[error("{format}: cannot encode: {msg}")]
    Encode {
        /// What failed, for the message: the format (`"PNG"`, `"R16"`, `"GeoTIFF"`…) or a step (`"export"`, `"mesh"`).
        format: &'static str,
        /// The encoder's own message.
        msg: String,
    },
}

pub(crate) fn io_err(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InteropError {
    let path = path.display().to_string();
    move |source| InteropError::Io { op, path, source }
}

/// The formats `talus convert` knows, chosen by extension (one row each of [`FORMATS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `.bhef`: our native float format.
    Bhef,
    /// `.png`: 8/16-bit greyscale on import, 16-bit greyscale on export.
    Png,
    /// `.r16` / `.raw`: headerless little-endian `u16`.
    R16,
    /// `.exr`: one 32-bit float channel.
    Exr,
    /// `.tif` / `.tiff`: GeoTIFF, Float32.
    GeoTiff,
    /// `.hgt`: SRTM tile (import only).
    Hgt,
    /// `.obj`: Wavefront mesh (export only).
    Obj,
    /// `.glb`: binary glTF mesh (export only).
    Glb,
}

/// What the program knows of one file format: the one place its name, extensions and abilities
/// are written (the CLI's messages, `talus build`, the Build… dialog's format menu and save
/// dialog's filters all read it).
#[derive(Debug)]
pub struct FormatSpec {
    /// The format.
    pub format: Format,
    /// Its name in menus, e.g. `"PNG 16-bit"`.
    pub label: &'static str,
    /// Its extensions without the dot, lower case; the first is the one written.
    pub extensions: &'static [&'static str],
    /// Whether a file of it can be read as a heightmap.
    pub import: bool,
    /// Whether a heightmap can be written as it.
    pub export: bool,
    /// Whether it stores integer samples (and so writes a sidecar with the metres).
    pub integer: bool,
    /// Whether it is a mesh (a triangulated surface rather than a grid of heights).
    pub mesh: bool,
}

/// Every format, in the order menus list them.
pub static FORMATS: &[FormatSpec] = &[
    FormatSpec {
        format: Format::Bhef,
        label: "BHEF (32-bit float)",
        extensions: &["bhef"],
        import: true,
        export: true,
        integer: false,
        mesh: false,
    },
    FormatSpec {
        format: Format::Png,
        label: "PNG 16-bit",
        extensions: &["png"],
        import: true,
        export: true,
        integer: true,
        mesh: false,
    },
    FormatSpec {
        format: Format::R16,
        label: "R16 (raw 16-bit)",
        extensions: &["r16", "raw"],
        import: true,
        export: true,
        integer: true,
        mesh: false,
    },
    FormatSpec {
        format: Format::Exr,
        label: "EXR (32-bit float)",
        extensions: &["exr"],
        import: true,
        export: true,
        integer: false,
        mesh: false,
    },
    FormatSpec {
        format: Format::GeoTiff,
        label: "GeoTIFF (32-bit float)",
        extensions: &["tif", "tiff"],
        import: true,
        export: true,
        integer: false,
        mesh: false,
    },
    FormatSpec {
        format: Format::Hgt,
        label: "SRTM .hgt",
        extensions: &["hgt"],
        import: true,
        export: false,
        integer: true,
        mesh: false,
    },
    FormatSpec {
        format: Format::Obj,
        label: "OBJ mesh",
        extensions: &["obj"],
        import: false,
        export: true,
        integer: false,
        mesh: true,
    },
    FormatSpec {
        format: Format::Glb,
        label: "glTF binary mesh",
        extensions: &["glb"],
        import: false,
        export: true,
        integer: false,
        mesh: true,
    },
];

/// Every extension of [`FORMATS`] with its dot, space-separated (".bhef .png .r16 .raw …"), for
/// messages; `export` keeps only the formats a heightmap can be written as, by their first
/// extension.
pub fn extension_list(export: bool) -> String {
    let mut out: Vec<String> = Vec::new();
    for f in FORMATS.iter().filter(|f| !export || f.export) {
        let exts = if export { &f.extensions[..1] } else { f.extensions };
        out.extend(exts.iter().map(|e| format!(".{e}")));
    }
    out.join(" ")
}

impl Format {
    /// The format's row of [`FORMATS`].
    pub fn spec(self) -> &'static FormatSpec {
        FORMATS.iter().find(|f| f.format == self).unwrap_or(&FORMATS[0])
    }

    /// The format named by `path`'s extension (case-insensitive), if any.
    pub fn of_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        FORMATS.iter().find(|f| f.extensions.contains(&ext.as_str())).map(|f| f.format)
    }

    /// The format named by `path`'s extension (case-insensitive).
    pub fn from_path(path: &Path) -> Result<Format, InteropError> {
        Format::of_path(path).ok_or_else(|| InteropError::UnknownFormat {
            path: path.display().to_string(),
            ext: path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase(),
            known: extension_list(false),
        })
    }

    /// The extension the format is written with, without the dot.
    pub fn extension(self) -> &'static str {
        self.spec().extensions[0]
    }

    /// Whether the format stores integers (and so writes a sidecar).
    pub fn is_integer(self) -> bool {
        self.spec().integer
    }
}

/// How to read a file.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Metres that integer 0 and full scale stand for; overrides the sidecar.
    pub range: Option<[f32; 2]>,
    /// Width in nodes of a headerless R16 file that is not square.
    pub width: Option<usize>,
    /// Metres between nodes; overrides the sidecar and the file.
    pub cell_size: Option<f32>,
    /// Geographic grids (GeoTIFF in degrees, `.hgt`): keep the file's nodes instead of resampling
    /// the rows to square cells (see [`super::geodesy`]).
    pub keep_grid: bool,
}

/// How to write a file.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Metres that integer 0 and full scale stand for (default: the map's min and max).
    pub range: Option<[f32; 2]>,
    /// Centre the integer range on zero the way Unreal reads it (see [`unreal_range`]).
    pub unreal: bool,
    /// Meshes: keep every `decimate`-th node along each axis (0 or 1: all), plus the last one.
    pub decimate: usize,
    /// The file the map came from, recorded in the sidecar.
    pub source: String,
    /// What the import did to the map (e.g. degrees turned into metres), recorded in the sidecar.
    pub notes: Vec<String>,
}

/// What an export did, for the caller to report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportReport {
    /// The `[lo, hi]` an integer format was quantised with.
    pub range: Option<[f32; 2]>,
    /// Heights outside a fixed `range` that were clipped to it.
    pub clipped: usize,
    /// Unreal's landscape Z scale for the file (with `unreal`).
    pub unreal_z_scale: Option<f32>,
}

/// The Unreal range for a map whose largest |height| is `r` metres: `[−r·32768/32767, r]`, so that
/// sample 32768 is exactly 0 m and 65535 is `r`. Unreal reads a 16-bit heightmap as
/// `z_cm = (v − 32768) · ZScale / 128` ("Landscape Technical Guide", Epic Games:
/// <https://dev.epicgames.com/documentation/en-us/unreal-engine/landscape-technical-guide-in-unreal-engine>,
/// "Calculating Heightmap Z Scale"), so the matching import Z scale is returned as well:
/// `ZScale = r · 100 · 128 / 32767` (with XY scale = cell size · 100 cm).
pub fn unreal_range(hm: &Heightmap) -> ([f32; 2], f32) {
    unreal_range_of(&hm.stats())
}

/// [`unreal_range`] of a map whose statistics are `s` (a caller that has them already saves a
/// pass over the map).
pub fn unreal_range_of(s: &Stats) -> ([f32; 2], f32) {
    let r = s.min.abs().max(s.max.abs()).max(1e-3) as f64;
    let lo = -r * 32768.0 / 32767.0;
    ([lo as f32, r as f32], (r * 100.0 * 128.0 / 32767.0) as f32)
}

/// The `[lo, hi]` an integer export uses, with the Unreal Z scale when asked for.
pub fn export_range(hm: &Heightmap, opts: &ExportOptions) -> Result<([f32; 2], Option<f32>), InteropError> {
    let (range, z) = if opts.unreal {
        let (r, z) = unreal_range(hm);
        (r, Some(z))
    } else if let Some(r) = opts.range {
        (r, None)
    } else {
        let s = hm.stats();
        ([s.min, s.max], None)
    };
    if !(range[0].is_finite() && range[1].is_finite() && range[0] <= range[1]) {
        return Err(InteropError::NonFinite {
            format: "export",
            msg: format!("range {}:{} is not a finite MIN:MAX", range[0], range[1]),
        });
    }
    Ok((range, z))
}

/// Quantises `h` to `0..=full` over `[lo, hi]`; returns the samples and how many were clipped.
pub fn quantise(data: &[f32], [lo, hi]: [f32; 2], full: u32) -> (Vec<u32>, usize) {
    let (lo, hi) = (lo as f64, hi as f64);
    let span = hi - lo;
    let mut clipped = 0;
    let out = data
        .iter()
        .map(|&h| {
            let t = if span > 0.0 { (h as f64 - lo) / span } else { 0.0 };
            if !(-1e-9..=1.0 + 1e-9).contains(&t) {
                clipped += 1;
            }
            (t.clamp(0.0, 1.0) * full as f64).round() as u32
        })
        .collect();
    (out, clipped)
}

/// The height of integer sample `v` out of `full` over `[lo, hi]`.
#[inline]
pub fn dequantise(v: u32, [lo, hi]: [f32; 2], full: u32) -> f32 {
    (lo as f64 + (v as f64 / full as f64) * (hi as f64 - lo as f64)) as f32
}

/// The import range: `--range`, else the sidecar's, else `[0, 1]`.
pub fn import_range(opts: &ImportOptions, sidecar: Option<&super::sidecar::Sidecar>) -> [f32; 2] {
    opts.range.or(sidecar.map(|s| [s.min, s.max])).unwrap_or([0.0, 1.0])
}

/// The size in `sizes` nearest to `n` (ties go to the larger): `talus convert --resize unity` or
/// `unreal` with an engine's sizes ([`super::tiles::tile_sizes`], the program's one list of them).
pub fn nearest_size(sizes: &[usize], n: usize) -> usize {
    let mut best = sizes[0];
    for &s in sizes {
        if s.abs_diff(n) <= best.abs_diff(n) {
            best = s;
        }
    }
    best
}

/// Loads any importable format; see each format file for what `opts` means to it.
pub fn load(path: &Path, opts: &ImportOptions) -> Result<Heightmap, InteropError> {
    Ok(load_with_notes(path, opts)?.0)
}

/// Loads any importable format, with notes that say what the import did beyond reading heights
/// (geographic GeoTIFF and `.hgt`: degrees turned into metres, rows resampled to square cells; a
/// cell size given in `opts` that replaces the file's). Callers print them; integer exports
/// record them in the sidecar ([`ExportOptions::notes`]).
pub fn load_with_notes(path: &Path, opts: &ImportOptions) -> Result<(Heightmap, Vec<String>), InteropError> {
    let fmt = Format::from_path(path)?;
    let mut notes = Vec::new();
    let mut hm = match fmt {
        Format::Bhef => {
            super::bhef::load(path).map_err(|e| InteropError::Decode { format: "BHEF", msg: e.to_string() })?
        }
        Format::Png => super::png16::load(path, opts)?,
        Format::R16 => super::r16::load(path, opts)?,
        Format::Exr => super::openexr::load(path)?,
        Format::GeoTiff => {
            let (hm, n) = super::geotiff::load_with_notes(path, opts.keep_grid)?;
            notes = n;
            hm
        }
        Format::Hgt => {
            let (hm, n) = super::hgt::load_with_notes(path, opts.keep_grid)?;
            notes = n;
            hm
        }
        Format::Obj => return Err(InteropError::ExportOnly { format: "OBJ" }),
        Format::Glb => return Err(InteropError::ExportOnly { format: "glTF binary" }),
    };
    if let Some(c) = opts.cell_size {
        if !notes.is_empty() {
            notes.push(format!("cell size {c} m given by the caller replaces the {} m above", hm.cell_size));
        }
        hm = Heightmap::from_data(hm.width, hm.height, c, hm.data)?;
    }
    Ok((hm, notes))
}

/// Saves `hm` in the format named by `path`'s extension (atomically, with a sidecar for the
/// integer formats).
pub fn save(path: &Path, hm: &Heightmap, opts: &ExportOptions) -> Result<ExportReport, InteropError> {
    if !hm.all_finite() {
        return Err(InteropError::NonFinite {
            format: "export",
            msg: "the map holds a height that is not finite".into(),
        });
    }
    match Format::from_path(path)? {
        Format::Bhef => {
            super::bhef::save_atomic(path, hm)
                .map_err(|e| InteropError::Encode { format: "BHEF", msg: e.to_string() })?;
            Ok(ExportReport::default())
        }
        Format::Png => super::png16::save(path, hm, opts),
        Format::R16 => super::r16::save(path, hm, opts),
        Format::Exr => super::openexr::save(path, hm).map(|_| ExportReport::default()),
        Format::GeoTiff => super::geotiff::save(path, hm).map(|_| ExportReport::default()),
        Format::Hgt => Err(InteropError::Unsupported {
            format: "SRTM",
            msg: ".hgt is an import format; export GeoTIFF for GIS".into(),
        }),
        Format::Obj => super::obj::save(path, hm, opts.decimate).map(|_| ExportReport::default()),
        Format::Glb => super::glb::save(path, hm, opts.decimate).map(|_| ExportReport::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::io::tiles::{Engine, tile_sizes};

    #[test]
    fn quantisation_round_trips_within_half_a_step_and_counts_clips() {
        let data = [-2.0f32, 0.0, 0.3, 1.0, 5.0];
        let (q, clipped) = quantise(&data, [0.0, 1.0], 65535);
        assert_eq!(clipped, 2);
        assert_eq!((q[0], q[1], q[3], q[4]), (0, 0, 65535, 65535));
        assert!((dequantise(q[2], [0.0, 1.0], 65535) - 0.3).abs() <= 0.5 / 65535.0 + 1e-7);
    }

    #[test]
    fn unreal_range_puts_zero_at_32768() {
        let hm = Heightmap::from_data(2, 1, 1.0, vec![-10.0, 300.0]).unwrap();
        let (r, z) = unreal_range(&hm);
        let (q, clipped) = quantise(&[0.0, 300.0], r, 65535);
        assert_eq!((q[0], q[1], clipped), (32768, 65535, 0));
        // Unreal's own formula: z_cm = (v − 32768) · ZScale / 128.
        assert!(((65535.0 - 32768.0) * z / 128.0 - 30_000.0).abs() < 0.5);
    }

    #[test]
    fn formats_come_from_the_extension_and_sizes_snap() {
        assert_eq!(Format::from_path(Path::new("a.R16")).unwrap(), Format::R16);
        assert_eq!(Format::from_path(Path::new("a.tiff")).unwrap(), Format::GeoTiff);
        assert!(matches!(Format::from_path(Path::new("a.xyz")), Err(InteropError::UnknownFormat { .. })));
        let (unity, unreal) = (tile_sizes(Engine::Unity), tile_sizes(Engine::Unreal));
        assert_eq!(nearest_size(unity, 500), 513);
        assert_eq!(nearest_size(unity, 10_000), 4097);
        assert_eq!(nearest_size(unreal, 1000), 1009);
        // 1017 and 2033 are Unreal sizes too (Epic's 254-quad components).
        assert_eq!((nearest_size(unreal, 1025), nearest_size(unreal, 2049)), (1017, 2033));
    }
}
