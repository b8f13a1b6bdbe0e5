//! What can go wrong importing or exporting an exchange format ([`InteropError`]), for every
//! format file and the registry ([`super::interop`]).

use std::path::Path;

use thiserror::Error;

use crate::core::heightmap::HeightmapError;

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
