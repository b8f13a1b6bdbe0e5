//! `talus info`: the size and height statistics of a BHEF file, as text or JSON.

use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;

use super::CliError;
use crate::core::io::bhef;

/// The statistics `info` prints.
#[derive(Serialize, Debug)]
pub struct Info {
    /// The file as given on the command line.
    pub file: String,
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Nodes in all (`width × height`).
    pub nodes: usize,
    /// Size of the BHEF file, `8 + 12 · nodes` bytes.
    pub bytes: u64,
    /// Lowest height, metres.
    pub min: f32,
    /// Highest height, metres.
    pub max: f32,
    /// Mean height, metres.
    pub mean: f64,
    /// Metres between nodes, as the file's sidecar (`FILE.json`) records it; absent when there is
    /// none for this map (BHEF itself stores no cell size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell_size: Option<f32>,
}

pub(super) fn cmd_info(file: &Path, json: bool) -> Result<ExitCode, CliError> {
    let (hm, cell_size) = bhef::load_with_cell(file)?;
    let s = hm.stats();
    let info = Info {
        file: file.display().to_string(),
        width: hm.width,
        height: hm.height,
        nodes: hm.len(),
        bytes: bhef::encoded_len(hm.width, hm.height).unwrap_or(0),
        min: s.min,
        max: s.max,
        mean: s.mean,
        cell_size,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        println!("file:   {}", info.file);
        println!("size:   {} × {} ({} nodes, {} bytes)", info.width, info.height, info.nodes, info.bytes);
        println!("min:    {}", info.min);
        println!("max:    {}", info.max);
        println!("mean:   {}", info.mean);
        match info.cell_size {
            Some(c) => println!("cell:   {c} m (sidecar)"),
            None => println!("cell:   not recorded (no sidecar for this map)"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
