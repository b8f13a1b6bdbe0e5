//! Atomic file replacement, shared by every writer: write to a temporary file in the target's
//! folder (a hidden name unique per process and per call, opened create-new so two saves never
//! share it), flush and fsync it, rename it over the target, then fsync the folder so the rename
//! itself is durable. A crash or an error part-way leaves the old file intact, no half-written
//! target, and no temporary file behind.
//!
//! Folders the same way ([`write_dir_atomic`], engine tile sets): fill a temporary sibling
//! `DIR.tmp-PID-N`, then rename it to `DIR`; an existing `DIR` is replaced only when asked
//! ([`check_dir`]), and only once the new folder is complete (moved aside to `DIR.old-PID-N`,
//! removed after the swap). An error or a cancel part-way removes the temporary folder.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `path` atomically with the bytes produced by `fill`.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let name =
        path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (tmp, file) = loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp.{}.{n}", std::process::id()));
        let tmp = dir.join(tmp_name);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_dir(&dir);
    Ok(())
}

/// Why [`write_dir_atomic`] or [`check_dir`] refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// The path names no folder (`/`, `..`).
    #[error("{}: not a folder name", .0.display())]
    NotAFolder(PathBuf),
    /// The folder exists and holds files, and replacing it was not asked for.
    #[error("{} exists and is not empty", .0.display())]
    NotEmpty(PathBuf),
    /// An operating-system error.
    #[error("could not {op} {}: {source}", path.display())]
    Io {
        /// What was being done: `"open"`, `"create"`, `"rename"`.
        op: &'static str,
        /// The folder.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

fn dir_err(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> DirError {
    let path = path.to_path_buf();
    move |source| DirError::Io { op, path, source }
}

/// Refuses a folder that exists and is not empty (unless `replace`), or that is a file; a folder
/// that does not exist is fine.
pub fn check_dir(dir: &Path, replace: bool) -> Result<(), DirError> {
    match fs::read_dir(dir) {
        Ok(mut it) => {
            if !replace && it.next().is_some() {
                return Err(DirError::NotEmpty(dir.to_path_buf()));
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(dir_err("open", dir)(e)),
    }
}

/// `dir` with `suffix` appended to its last component.
fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    dir.with_file_name(name)
}

/// Writes the folder `dir` atomically with the files `fill` puts into the folder it is given: a
/// new sibling `DIR.tmp-PID-N`, renamed to `dir` once `fill` succeeded (the folders are fsynced
/// around the rename, best effort, as [`write_atomic`] does). When `fill` or a rename fails, the
/// temporary folder is removed and `dir` is as it was. An existing `dir` that holds files is
/// refused ([`DirError::NotEmpty`], before `fill` and again before the swap) unless `replace`;
/// an existing `dir` is moved aside to `DIR.old-PID-N`, the new folder renamed into its place (the
/// old one put back if that fails), and the old one removed.
pub fn write_dir_atomic<T, E: From<DirError>>(
    dir: &Path,
    replace: bool,
    fill: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    if dir.file_name().is_none() {
        return Err(DirError::NotAFolder(dir.to_path_buf()).into());
    }
    check_dir(dir, replace)?;
    let tmp = loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let t = sibling(dir, &format!(".tmp-{}-{n}", std::process::id()));
        match fs::create_dir(&t) {
            Ok(()) => break t,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(dir_err("create", &t)(e).into()),
        }
    };
    let result = fill(&tmp).and_then(|v| {
        swap_into_place(&tmp, dir, replace)?;
        Ok(v)
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

/// Renames the filled `tmp` to `dir`, moving an existing `dir` aside first and removing it once
/// the new one is in its place.
fn swap_into_place(tmp: &Path, dir: &Path, replace: bool) -> Result<(), DirError> {
    sync_dir(tmp);
    let old = if dir.exists() {
        check_dir(dir, replace)?;
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let o = sibling(dir, &format!(".old-{}-{n}", std::process::id()));
        fs::rename(dir, &o).map_err(dir_err("rename", dir))?;
        Some(o)
    } else {
        None
    };
    if let Err(e) = fs::rename(tmp, dir) {
        if let Some(o) = &old {
            let _ = fs::rename(o, dir);
        }
        return Err(dir_err("rename", tmp)(e));
    }
    if let Some(o) = old {
        let _ = fs::remove_dir_all(o);
    }
    if let Some(parent) = dir.parent() {
        sync_dir(if parent.as_os_str().is_empty() { Path::new(".") } else { parent });
    }
    Ok(())
}

/// Flushes a folder's entries to disk (best effort; a no-op where folders cannot be opened).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        fs::write(&p, b"old").unwrap();
        write_atomic(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        // A failing writer keeps the old content and cleans up.
        let err = write_atomic(&p, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("boom"))
        });
        assert!(err.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // A missing folder is an error, not a panic.
        assert!(write_atomic(&dir.path().join("no/such/dir/x"), |w| w.write_all(b"x")).is_err());
    }

    fn names(p: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(p).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    }

    #[test]
    fn folders_are_filled_aside_and_replaced_only_when_asked() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("set");
        let put = |name: &'static str| {
            move |tmp: &Path| -> Result<usize, DirError> {
                fs::write(tmp.join(name), b"x").unwrap();
                Ok(1)
            }
        };
        assert_eq!(write_dir_atomic(&dir, false, put("a")).unwrap(), 1);
        assert_eq!(names(&dir), ["a"]);
        // Full: refused without replace, and left as it was; replaced with it.
        let e = write_dir_atomic(&dir, false, put("b")).unwrap_err();
        assert!(matches!(&e, DirError::NotEmpty(p) if p == &dir), "{e}");
        assert_eq!(names(&dir), ["a"]);
        write_dir_atomic(&dir, true, put("b")).unwrap();
        assert_eq!(names(&dir), ["b"]);
        assert_eq!(names(root.path()), ["set"], "no temporary or old folder is left");
        // A failing fill leaves the old folder and nothing beside it.
        let e = write_dir_atomic(&dir, true, |tmp: &Path| -> Result<(), DirError> {
            fs::write(tmp.join("half"), b"x").unwrap();
            Err(DirError::NotAFolder(tmp.to_path_buf()))
        });
        assert!(e.is_err());
        assert_eq!((names(&dir), names(root.path())), (vec!["b".to_string()], vec!["set".to_string()]));
        // An empty folder is filled; a path that names no folder, or under a file, is an error.
        fs::create_dir(root.path().join("empty")).unwrap();
        write_dir_atomic(&root.path().join("empty"), false, put("c")).unwrap();
        assert_eq!(names(&root.path().join("empty")), ["c"]);
        assert!(matches!(write_dir_atomic(Path::new("/"), true, put("d")), Err(DirError::NotAFolder(_))));
        fs::write(root.path().join("file"), b"x").unwrap();
        let e = write_dir_atomic(&root.path().join("file/set"), false, put("d")).unwrap_err();
        assert!(e.to_string().contains("file/set"), "{e}");
        assert!(check_dir(&root.path().join("file"), true).is_err(), "a file is not a folder");
        assert!(check_dir(&root.path().join("none"), false).is_ok());
    }
}
