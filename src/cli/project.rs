//! `talus build` and `talus layers`: project files (`.talus`, see `editor::project`) from the
//! command line. `build` flattens a project into any export format, re-running the erosion layers
//! whose input changed; with `--set` it first changes a value of the base generator, so a batch
//! job can rebuild a whole stack from a new seed or size of feature.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use clap::Args;

use super::CliError;
use super::generate::generate_defaults;
use super::params::apply_sets;
use crate::core::generate::generate;
use crate::core::io::interop;
use crate::editor::layers::{BaseSource, LayerKind, LayerStack};
use crate::editor::project;

/// Arguments of `talus build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The project (`.talus`).
    pub project: PathBuf,
    /// The flattened terrain, in the format of its extension (.bhef .png .r16 .exr .tif .obj .glb).
    #[arg(long)]
    pub out: PathBuf,
    /// Change a value of the base generator first, `PATH=VALUE` as in `talus generate --set`
    /// (e.g. `--set seed=8`, `--set base.octaves=6`); repeatable. The size must stay the same.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Also write the updated project (re-run layers, new base) here.
    #[arg(long)]
    pub save_project: Option<PathBuf>,
}

/// Arguments of `talus layers`.
#[derive(Args, Debug)]
pub struct LayersArgs {
    /// The project (`.talus`).
    pub project: PathBuf,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn read(path: &std::path::Path) -> Result<project::Project, CliError> {
    project::load(path).map_err(|e| CliError(format!("{}: {e}", path.display())))
}

/// Applies `--set` to the base generator and regenerates it (same size only).
fn set_base(stack: &mut LayerStack, sets: &[String]) -> Result<(), CliError> {
    if sets.is_empty() {
        return Ok(());
    }
    let BaseSource::Generator(p) = &stack.base.source else {
        return Err(CliError(format!(
            "--set changes the base generator, but the base is {}",
            stack.base.source.describe()
        )));
    };
    let p = apply_sets(p, sets, &generate_defaults)?;
    p.validate()?;
    let map = generate(&p)?;
    if (map.width, map.height) != (stack.width(), stack.height()) {
        return Err(CliError(format!(
            "--set changed the map size to {}×{}; the project's layers are {}×{}",
            map.width,
            map.height,
            stack.width(),
            stack.height()
        )));
    }
    stack.set_base(&map, BaseSource::Generator(p));
    Ok(())
}

pub(super) fn cmd_build(a: BuildArgs) -> Result<ExitCode, CliError> {
    let out_fmt = interop::Format::from_path(&a.out)?;
    let mut p = read(&a.project)?;
    p.stack.verify_stale();
    set_base(&mut p.stack, &a.sets)?;
    let cancel = AtomicBool::new(false);
    let t = Instant::now();
    let mut ran = Vec::new();
    p.stack.rebuild(&cancel, |l| {
        eprintln!("re-running {:?} (its input changed)", l.name);
        ran.push(l.name.clone());
    })?;
    let hm = p.stack.compose();
    let eo = interop::ExportOptions { source: a.project.display().to_string(), ..Default::default() };
    if out_fmt.is_integer() {
        eprintln!("note: integer formats quantise the heights (the sidecar holds their metres)");
    }
    interop::save(&a.out, &hm, &eo)?;
    let s = hm.stats();
    eprintln!(
        "wrote {} ({}×{}, heights {:.3} … {:.3} m; {} layer(s) re-run in {:.1} s)",
        a.out.display(),
        hm.width,
        hm.height,
        s.min,
        s.max,
        ran.len(),
        t.elapsed().as_secs_f64()
    );
    if let Some(path) = &a.save_project {
        project::save(path, &p.stack, &p.view).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn cmd_layers(a: LayersArgs) -> Result<ExitCode, CliError> {
    let mut p = read(&a.project)?;
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
