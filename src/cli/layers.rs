//! `talus layers`: what a project file (`.talus`, see `editor::project`) holds, layer by layer:
//! kind, model, seed, strength, whether it is stale, and how many tiles it stores.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::CliError;
use crate::editor::layers::LayerKind;
use crate::editor::project;

/// Arguments of `talus layers`.
#[derive(Args, Debug)]
pub struct LayersArgs {
    /// The project (`.talus`).
    pub project: PathBuf,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn cmd_layers(a: LayersArgs) -> Result<ExitCode, CliError> {
    let mut p = project::load(&a.project).map_err(|e| CliError(format!("{}: {e}", a.project.display())))?;
    p.stack.verify_stale();
    let s = &p.stack;
    let file_bytes = std::fs::metadata(&a.project).map(|m| m.len()).unwrap_or(0);
    let layers: Vec<serde_json::Value> = s
        .layers()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut v = serde_json::json!({
                "index": i + 1, "id": l.id, "name": l.name, "visible": l.visible, "bytes": l.bytes(),
            });
            match &l.kind {
                LayerKind::Sculpt(d) => {
                    v["kind"] = "sculpt".into();
                    v["tiles"] = d.stored().into();
                }
                LayerKind::Erosion(e) => {
                    v["kind"] = "erosion".into();
                    v["model"] = e.recipe.model.entry().cli.into();
                    v["seed"] = e.recipe.seed.into();
                    v["strength"] = e.strength.into();
                    v["stale"] = e.stale.into();
                    v["tiles"] = e.delta.stored().into();
                    v["mask_tiles"] = e.mask.stored().into();
                }
            }
            v
        })
        .collect();
    if a.json {
        let out = serde_json::json!({
            "width": s.width(), "height": s.height(), "cell_size": s.cell_size(),
            "base": s.base.source.describe(), "base_bytes": s.base.heights.bytes(),
            "layers": layers, "memory_bytes": s.bytes(), "file_bytes": file_bytes,
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} × {} nodes, cell {} m", s.width(), s.height(), s.cell_size());
    println!("0  base     {}", s.base.source.describe());
    for l in &layers {
        let extra = match l["kind"].as_str() {
            Some("erosion") => format!(
                "{} seed {}, strength {}, {}{} delta tiles, {} mask tiles",
                l["model"].as_str().unwrap_or(""),
                l["seed"],
                l["strength"],
                if l["stale"].as_bool() == Some(true) { "STALE, " } else { "" },
                l["tiles"],
                l["mask_tiles"]
            ),
            _ => format!("{} tiles", l["tiles"]),
        };
        println!(
            "{:<2} {:<8} {:?}{} — {extra}",
            l["index"],
            l["kind"].as_str().unwrap_or(""),
            l["name"].as_str().unwrap_or(""),
            if l["visible"].as_bool() == Some(false) { " (hidden)" } else { "" },
        );
    }
    println!("memory {:.1} MiB, file {:.1} MiB", s.bytes() as f64 / 1048576.0, file_bytes as f64 / 1048576.0);
    Ok(ExitCode::SUCCESS)
}
