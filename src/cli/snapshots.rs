//! `talus erode --snapshots DIR --every N`: the run's time series as numbered files, so batch
//! users get what the editor's timeline shows.
//!
//! A snapshot is written for the input (work 0), whenever the work done crosses a multiple of
//! `N` units (droplets for the particle models, time steps or iterations for the grid models; a
//! step that does a batch writes one snapshot however many multiples it crosses), and for the
//! result. Files are `DIR/snapshot-<work done, 10 digits>.<bhef|png>`, so they sort in time
//! order. PNG16 snapshots all use one height range, the input's `[min, max]` widened by a quarter
//! of its span each way, so their grey levels compare across the series (a height outside it is
//! clipped and counted in the summary).

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::CliError;
use crate::core::Heightmap;
use crate::core::io::interop::ExportOptions;
use crate::core::io::{bhef, png16};

/// File format of `--snapshots`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SnapshotFormat {
    /// BHEF: exact `f32` heights.
    #[default]
    Bhef,
    /// 16-bit greyscale PNG (with its sidecar), one range for the whole series.
    Png,
}

/// Writes the snapshots of one run.
pub struct Snapshots {
    dir: PathBuf,
    every: u64,
    format: SnapshotFormat,
    range: [f32; 2],
    /// The multiple of `every` and the work done of the last snapshot written.
    last: Option<(u64, u64)>,
    /// Files written.
    pub written: usize,
    /// Heights clipped to the PNG range over the whole series.
    pub clipped: usize,
}

impl Snapshots {
    /// Prepares `dir` (created if missing) for a run of `total` units starting from `input`;
    /// `every` defaults to a tenth of the run. `every = 0` is refused.
    pub fn new(
        dir: &Path,
        every: Option<u64>,
        total: u64,
        format: SnapshotFormat,
        input: &Heightmap,
    ) -> Result<Self, CliError> {
        let every = every.unwrap_or((total / 10).max(1));
        if every == 0 {
            return Err(CliError("--every must be at least 1".into()));
        }
        std::fs::create_dir_all(dir).map_err(|e| CliError(format!("{}: {e}", dir.display())))?;
        let s = input.stats();
        let pad = 0.25 * (s.max - s.min).max(1.0);
        Ok(Self {
            dir: dir.to_path_buf(),
            every,
            format,
            range: [s.min - pad, s.max + pad],
            last: None,
            written: 0,
            clipped: 0,
        })
    }

    /// Writes `hm` (the state after `done` units) when `done` has crossed a multiple of `every`
    /// since the last snapshot, or always when `force` (the input and the result).
    pub fn offer(&mut self, hm: &Heightmap, done: u64, force: bool) -> Result<(), CliError> {
        let multiple = done / self.every;
        if !force && self.last.is_some_and(|(m, _)| multiple <= m) {
            return Ok(());
        }
        // The result at the work of the last streamed snapshot replaces that file.
        let again = self.last.is_some_and(|(_, d)| d == done);
        self.last = Some((multiple, done));
        let ext = match self.format {
            SnapshotFormat::Bhef => "bhef",
            SnapshotFormat::Png => "png",
        };
        let path = self.dir.join(format!("snapshot-{done:010}.{ext}"));
        match self.format {
            SnapshotFormat::Bhef => bhef::save_atomic(&path, hm)?,
            SnapshotFormat::Png => {
                let opts = ExportOptions { range: Some(self.range), ..Default::default() };
                self.clipped += png16::save(&path, hm, &opts)?.clipped;
            }
        }
        if !again {
            self.written += 1;
        }
        Ok(())
    }
}
