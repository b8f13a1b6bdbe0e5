//! Where a build goes: the checks of an output file or a tile set's folder (made once, when the
//! build is prepared, and by the dialog as the user types), and the names a build starts with
//! beside the project (`island.talus` → `island-2049.png`, `island-unity-2049`).

use std::path::{Path, PathBuf};

use super::error::OutputError;
use crate::core::io::interop::{FORMATS, Format};
use crate::core::io::tiles::Engine;

/// The formats a build writes, in menu order (the exportable rows of [`FORMATS`]).
pub fn file_formats() -> impl Iterator<Item = Format> {
    FORMATS.iter().filter(|f| f.export).map(|f| f.format)
}

/// What a build writes, for messages: "a heightmap as .bhef .png … or a mesh as .obj .glb".
fn known_formats() -> String {
    let list = |mesh: bool| {
        FORMATS
            .iter()
            .filter(|f| f.export && f.mesh == mesh)
            .map(|f| format!(".{}", f.extensions[0]))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!("a heightmap as {} or a mesh as {}", list(false), list(true))
}

/// Why `path` cannot take a build, if it cannot: empty, a format a build does not write, a
/// folder, or in a folder that does not exist.
pub fn check_output(path: &Path) -> Result<Format, OutputError> {
    if path.as_os_str().is_empty() {
        return Err(OutputError::NoFile);
    }
    if path.is_dir() {
        return Err(OutputError::IsFolder(path.into()));
    }
    let Some(format) = Format::of_path(path).filter(|f| f.spec().export) else {
        return Err(OutputError::Format { path: path.into(), known: known_formats() });
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(OutputError::NoParent(parent.into()));
    }
    Ok(format)
}

/// Why `dir` cannot take a tile set, if it cannot: empty, a file, in a folder that does not exist,
/// or a folder with files in it without `replace`.
pub fn check_tile_dir(dir: &Path, replace: bool) -> Result<(), OutputError> {
    if dir.as_os_str().is_empty() || dir.file_name().is_none() {
        return Err(OutputError::NoFolder);
    }
    if dir.exists() && !dir.is_dir() {
        return Err(OutputError::IsFile(dir.into()));
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(OutputError::NoParent(parent.into()));
    }
    match std::fs::read_dir(dir) {
        Ok(mut it) => {
            if !replace && it.next().is_some() {
                return Err(OutputError::NotEmpty(dir.into()));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(OutputError::Unreadable { path: dir.into(), msg: e.to_string() }),
    }
}

/// The project's file name without its extension, or `terrain` for a project never saved.
pub fn project_stem(project: Option<&Path>) -> String {
    project.and_then(|p| p.file_stem()).map_or("terrain".into(), |s| s.to_string_lossy().into_owned())
}

/// `name` beside the project, or in the working folder for a project never saved.
fn beside_project(project: Option<&Path>, name: String) -> PathBuf {
    match project.and_then(Path::parent) {
        Some(dir) => dir.join(name),
        None => PathBuf::from(name),
    }
}

/// The file a build starts with: beside the project, named after it and the side
/// (`island.talus` → `island-2049.png`), else `terrain-2049.png` in the working folder.
pub fn default_output(project: Option<&Path>, size: usize, format: Format) -> PathBuf {
    beside_project(project, format!("{}-{size}.{}", project_stem(project), format.extension()))
}

/// The folder a tile set starts with: beside the project, named after it, the engine and the side
/// (`island.talus` → `island-unity-2049`), else `terrain-unity-2049` in the working folder.
pub fn default_tile_dir(project: Option<&Path>, engine: Engine, size: usize) -> PathBuf {
    beside_project(project, format!("{}-{}-{size}", project_stem(project), engine.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_outputs_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_output(Path::new("")).unwrap_err().to_string().contains("choose a file"));
        let e = check_output(&dir.path().join("b.xyz")).unwrap_err().to_string();
        assert!(e.contains("a heightmap as .bhef .png .r16 .exr .tif or a mesh as .obj .glb"), "{e}");
        let e = check_output(&dir.path().join("b.hgt")).unwrap_err().to_string();
        assert!(e.contains("choose a format"), "an import-only format: {e}");
        let e = check_output(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        let missing = dir.path().join("no-such-folder").join("b.bhef");
        let e = check_output(&missing).unwrap_err().to_string();
        assert!(e.contains("does not exist") && e.contains("no-such-folder"), "{e}");
        assert_eq!(check_output(&dir.path().join("b.bhef")), Ok(Format::Bhef));
        assert_eq!(check_output(Path::new("b.exr")), Ok(Format::Exr));
        assert_eq!(check_output(Path::new("b.glb")), Ok(Format::Glb), "meshes are builds too, as the CLI writes them");
        assert_eq!(check_output(Path::new("a.RAW")), Ok(Format::R16));
        let listed: Vec<Format> = file_formats().collect();
        assert!(!listed.contains(&Format::Hgt) && listed.contains(&Format::Obj));
    }

    #[test]
    fn tile_folders_are_checked_as_the_writer_will_find_them() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_tile_dir(Path::new(""), false).unwrap_err().to_string().contains("choose a folder"));
        assert_eq!(check_tile_dir(&dir.path().join("new"), false), Ok(()));
        let e = check_tile_dir(&dir.path().join("no").join("set"), false).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        assert!(check_tile_dir(&dir.path().join("f"), false).unwrap_err().to_string().contains("is a file"));
        let e = check_tile_dir(dir.path(), false).unwrap_err().to_string();
        assert!(e.contains("holds files") && e.contains("Replace"), "{e}");
        assert_eq!(check_tile_dir(dir.path(), true), Ok(()));
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(check_tile_dir(&empty, false), Ok(()));
        assert_eq!(default_tile_dir(None, Engine::Unreal, 2017), PathBuf::from("terrain-unreal-2017"));
        assert_eq!(
            default_output(Some(Path::new("/maps/island.talus")), 2049, Format::Png),
            PathBuf::from("/maps/island-2049.png")
        );
    }
}
