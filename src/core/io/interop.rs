//! Exchange with other tools (issue #6): the format registry (which file a path's extension
//! names, and the load and save that dispatch to it) and the size presets. The import/export
//! options every format file shares and the integer value mapping are [`super::mapping`]'s, the
//! errors [`super::error`]'s; both are named here too, for the callers.
//!
//! # Orientation
//!
//! Every raster format here is written in image order: the file's first row is our `y = 0`
//! (north, the top of the 2-D view) and each row runs along `+x`. The format files repeat this in
//! their docs and test it with an asymmetric map.

use std::path::Path;

pub use super::error::InteropError;
pub(crate) use super::error::io_err;
pub use super::mapping::{
    ExportOptions, ExportReport, ImportOptions, dequantise, export_range, import_range, quantise, unreal_range,
    unreal_range_of,
};
use crate::core::heightmap::Heightmap;

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

/// [`load`], and whether the file says how far apart its nodes are ([`records_cell_size`]), in
/// one read of the heights: a BHEF's sidecar is checked against the heights just read, the
/// other formats' record is in a sidecar or a header.
pub fn load_recording_cell_size(path: &Path, opts: &ImportOptions) -> Result<(Heightmap, bool), InteropError> {
    match Format::from_path(path)? {
        Format::Bhef => {
            let (mut hm, cell) = super::bhef::load_with_cell(path)
                .map_err(|e| InteropError::Decode { format: "BHEF", msg: e.to_string() })?;
            if let Some(c) = opts.cell_size {
                hm = Heightmap::from_data(hm.width, hm.height, c, hm.data)?;
            }
            Ok((hm, cell.is_some()))
        }
        _ => {
            let hm = load(path, opts)?;
            // The heights read: a record that cannot be read then counts as given (the map
            // keeps what the load made of it).
            Ok((hm, records_cell_size(path).unwrap_or(true)))
        }
    }
}

/// Whether the file at `path` says how far apart its nodes are: GeoTIFF and `.hgt` always do; a
/// BHEF, PNG or R16 when a Talus sidecar describes it; an EXR when it carries Talus's cell-size
/// attribute. A file that does not is read at 1 m cells unless [`ImportOptions::cell_size`]
/// gives one (the editor asks the user first). Errors are the reading's (a broken sidecar).
pub fn records_cell_size(path: &Path) -> Result<bool, InteropError> {
    Ok(match Format::from_path(path)? {
        Format::Bhef => super::bhef::load_with_cell(path)
            .map_err(|e| InteropError::Decode { format: "BHEF", msg: e.to_string() })?
            .1
            .is_some(),
        Format::Png | Format::R16 => super::sidecar::read(path)?.is_some(),
        Format::Exr => super::openexr::records_cell_size(path)?,
        Format::GeoTiff | Format::Hgt => true,
        Format::Obj => return Err(InteropError::ExportOnly { format: "OBJ" }),
        Format::Glb => return Err(InteropError::ExportOnly { format: "glTF binary" }),
    })
}

/// Whether the file at `path` says what heights its integers stand for: the 16-bit formats (PNG,
/// R16) when a Talus sidecar describes them (else 0 and full scale read as 0 and 1 m unless
/// [`ImportOptions::range`] gives them); the float and DEM formats always.
pub fn records_height_range(path: &Path) -> Result<bool, InteropError> {
    Ok(match Format::from_path(path)? {
        Format::Png | Format::R16 => super::sidecar::read(path)?.is_some(),
        _ => true,
    })
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
            super::bhef::save_with_sidecar(path, hm, &opts.source)
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

    #[test]
    fn a_file_says_its_cell_size_when_talus_wrote_it_or_its_format_records_it() {
        let dir = tempfile::tempdir().unwrap();
        let hm = Heightmap::from_fn(9, 7, 8.0, |x, y| (x * 3 + y) as f32).unwrap();
        for ext in ["bhef", "png", "r16", "exr", "tif"] {
            let p = dir.path().join(format!("m.{ext}"));
            save(&p, &hm, &ExportOptions::default()).unwrap();
            assert!(records_cell_size(&p).unwrap(), "{ext} saved by Talus");
            assert_eq!(load(&p, &ImportOptions::default()).unwrap().cell_size, 8.0, "{ext}");
            let (got, rec) = load_recording_cell_size(&p, &ImportOptions::default()).unwrap();
            assert!(rec && got.cell_size == 8.0, "{ext}");
        }
        // Without the sidecar another tool would not write, BHEF, PNG and R16 do not.
        for ext in ["bhef", "png", "r16"] {
            let p = dir.path().join(format!("m.{ext}"));
            std::fs::remove_file(super::super::sidecar::path_for(&p)).unwrap();
            assert!(!records_cell_size(&p).unwrap(), "{ext} without its sidecar");
            // The 16-bit ones then do not say what heights their integers stand for either.
            assert_eq!(records_height_range(&p).unwrap(), ext == "bhef", "{ext}");
        }
        assert!(records_height_range(&dir.path().join("m.exr")).unwrap());
        // An EXR without Talus's attribute does not either.
        let plain = dir.path().join("plain.exr");
        {
            use exr::prelude::*;
            let channel = AnyChannel::new("Y", FlatSamples::F32(hm.data.clone()));
            let layer = Layer::new(
                (9, 7),
                LayerAttributes::named("height"),
                Encoding::SMALL_LOSSLESS,
                AnyChannels::sort(SmallVec::from_elem(channel, 1)),
            );
            Image::from_layer(layer).write().to_file(&plain).unwrap();
        }
        assert_eq!(load(&plain, &ImportOptions::default()).unwrap().cell_size, 1.0);
        assert!(!records_cell_size(&plain).unwrap());
        // One read gives the map and the answer (R16 left out: without its sidecar this
        // non-square one needs its width given).
        for ext in ["bhef", "png", "exr", "tif"] {
            let p = dir.path().join(format!("m.{ext}"));
            let (hm, rec) = load_recording_cell_size(&p, &ImportOptions::default()).unwrap();
            assert_eq!(rec, records_cell_size(&p).unwrap(), "{ext}");
            assert_eq!(hm.data, load(&p, &ImportOptions::default()).unwrap().data, "{ext}");
            let given = ImportOptions { cell_size: Some(3.5), ..Default::default() };
            assert_eq!(load_recording_cell_size(&p, &given).unwrap().0.cell_size, 3.5, "{ext}");
        }
        let (_, rec) = load_recording_cell_size(&plain, &ImportOptions::default()).unwrap();
        assert!(!rec);
        assert!(matches!(records_cell_size(Path::new("m.obj")), Err(InteropError::ExportOnly { .. })));
    }
}
