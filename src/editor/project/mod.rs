//! The project file (`.talus`): the whole layer stack ([`super::layers`]) with its parameters,
//! seeds, deltas and masks, and the look and camera, so reopening gives the same heights bit for
//! bit without re-running anything.
//!
//! # Layout (versions 1 and 2), all integers little-endian
//!
//! | offset        | size | field                                                            |
//! |---------------|------|------------------------------------------------------------------|
//! | 0             | 8    | magic `TALUSPRJ`                                                 |
//! | 8             | 4    | format version (u32) = [`VERSION`]                               |
//! | 12            | 4    | `M`: length of the description (u32, at most [`MAX_META`])       |
//! | 16            | 8    | `B`: length of the tile data (u64)                                |
//! | 24            | `M`  | description: RON text of the stack without its tiles (`Meta`)    |
//! | 24 + M        | `B`  | tile data: each stored tile, compressed on its own                |
//! | 24 + M + B    | 4    | CRC-32 (IEEE) of every byte before it                             |
//!
//! The file is exactly `28 + M + B` bytes. A grid (the base heights, a delta, a mask) is described
//! by its fill value and the list of its stored tiles, each `(tile index, offset in the tile data,
//! compressed length)`. A tile is the [`TILE`]² values of [`super::layers::tiles`] as
//! little-endian `f32`, split into four byte planes (all first bytes, then all second bytes …,
//! which puts the slowly varying exponent bytes together) and deflate-compressed (RFC 1951).
//!
//! # Reading untrusted files
//! Nothing is allocated from a length before it is checked against the file: the lengths must
//! add up to the file's size, the checksum must match, the map size must be one a
//! heightmap may have, the base must store every tile (so a claimed size is paid for in bytes), every tile reference must lie inside the tile data, name a tile of its grid
//! once, and inflate to exactly one tile (the decoder stops at that size). Values must be
//! finite, the masks in `[0, 1]`, strengths in [`STRENGTH_RANGE`]. A file from a newer version
//! is refused with its version named. Every failure is a [`ProjectError`]; the reader never
//! panics (fuzzed in `tests`).
//!
//! Saving is atomic (temporary file, fsync, rename): a failed save leaves the previous file.
//!
//! # Versions
//! Version 2 (issue #26) has the same layout; every parameter in its description is in world
//! units (metres, per km²). Version 1 gave some in grid units under their old names (`frequency`,
//! `radius`, `droplets`, …); the reader converts them with the project's own map size and cell
//! size ([`crate::core::units`]), so a version-1 project opens as the same land and builds at any
//! size. It is written back as the current version.
//!
//! Version 3 gives the droplet model's rates (`inertia`, `erosion`, `deposition`, `evaporation`,
//! `capacity`) per `path_step_m` metres of path instead of per step of one node
//! ([`crate::core::erosion::droplet::DropletParams`]). A version-1 or -2 project's droplet layers
//! are read with `path_step_m` = the project's cell size, which is what their rates meant: they
//! erode the project's own map bit for bit as before.
//!
//! Version 4 gives the snowball model's `erosion_rate` over ground of `footprint_m` metres
//! ([`crate::core::erosion::snowball::SnowballParams`]) instead of on the 4 nodes of whatever map
//! it ran on. An older project's snowball layers are read with `footprint_m` = the project's cell
//! size, which is what their rate meant, so they erode their own map bit for bit as before.
//!
//! Version 5 gives the pipe model a velocity clamp in m/s (`max_speed`, with sub-steps on cells
//! it would cross in less than `dt`) instead of the seed's `cell/dt`
//! ([`crate::core::erosion::pipe::Stepping`]). An older project's pipe layers are read with
//! `max_speed = 0`, the seed's clamp, so they erode their own map bit for bit as before.
//!
//! Version 6 counts thermal iterations (a thermal layer's, and the pipe model's interleaved
//! ones) on cells of `iteration_cell_m` metres, scaled as `(iteration_cell_m/Δx)²` on a map of
//! `Δx` cells ([`crate::core::erosion::thermal::ThermalParams::kernel_iterations`]). An older
//! project's are read with `iteration_cell_m` = the cells they ran on, so they relax their own
//! map bit for bit as before. Version 6 also gives the pipe model's interleaved thermal step the
//! sea's underwater talus (`thermal_sea`); an older project's pipe layers are read without it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::core::heightmap::check_size;
use crate::core::io::atomic::write_atomic;
use crate::core::units::MapSize;
use crate::editor::layers::tiles::{TILE, TILE_LEN};
use crate::editor::layers::{
    Base, BaseSource, ErosionLayer, Layer, LayerKind, LayerStack, Recipe, STRENGTH_RANGE, TileGrid,
};
use crate::editor::look::LookParams;

/// File magic.
pub const MAGIC: &[u8; 8] = b"TALUSPRJ";
/// The format version this build writes and the newest it reads.
pub const VERSION: u32 = 6;
/// Largest description accepted, bytes.
pub const MAX_META: u32 = 64 << 20;
const HEADER: usize = 24;

/// Where the camera was: orbit focus (world metres), yaw and pitch (radians), distance (metres).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CameraPose {
    /// The point the camera orbits, world metres.
    pub focus: [f32; 3],
    /// Angle around +Y, radians.
    pub yaw: f32,
    /// Angle above the horizon, radians.
    pub pitch: f32,
    /// Distance from the focus, metres.
    pub distance: f32,
}

/// What a project carries besides the terrain: how it was drawn and seen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProjectView {
    /// The look (material, water, sky, overlay).
    pub look: Option<LookParams>,
    /// The camera.
    pub camera: Option<CameraPose>,
}

/// A project read from disk.
#[derive(Clone, Debug)]
pub struct Project {
    /// The layers.
    pub stack: LayerStack,
    /// Look and camera.
    pub view: ProjectView,
}

/// Why a project could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Not a project file.
    #[error("not a Talus project (the file does not start with TALUSPRJ)")]
    NotAProject,
    /// Written by a newer Talus.
    #[error("written by a newer Talus (project format {0}; this build reads up to {VERSION})")]
    NewerVersion(u32),
    /// The file is cut short, too long, or fails its checksum.
    #[error("damaged project file: {0}")]
    Damaged(String),
}

fn damaged(msg: impl Into<String>) -> ProjectError {
    ProjectError::Damaged(msg.into())
}

#[derive(Serialize, Deserialize)]
struct Meta {
    width: usize,
    height: usize,
    cell_size: f32,
    base_source: BaseSource,
    base: GridMeta,
    layers: Vec<LayerMeta>,
    next_id: u64,
    view: ProjectView,
}

#[derive(Serialize, Deserialize)]
struct GridMeta {
    fill: f32,
    /// `(tile index, offset in the tile data, compressed length)`.
    tiles: Vec<(u32, u64, u32)>,
}

#[derive(Serialize, Deserialize)]
struct LayerMeta {
    id: u64,
    name: String,
    visible: bool,
    kind: KindMeta,
}

#[derive(Serialize, Deserialize)]
enum KindMeta {
    Sculpt { delta: GridMeta },
    Erosion { recipe: Box<Recipe>, strength: f32, input_hash: u64, stale: bool, delta: GridMeta, mask: GridMeta },
}

/// Splits a tile into byte planes and deflates it ([`crate::editor::planes`]).
fn pack_tile(t: &[f32]) -> Vec<u8> {
    let bits: Vec<u32> = t.iter().map(|v| v.to_bits()).collect();
    crate::editor::planes::pack(&bits, 6)
}

/// Inflates one tile (refusing anything but exactly one tile) and joins its byte planes.
fn unpack_tile(data: &[u8]) -> Result<Vec<f32>, ProjectError> {
    let bits =
        crate::editor::planes::unpack(data, TILE_LEN).ok_or_else(|| damaged("a tile does not inflate to its size"))?;
    Ok(bits.into_iter().map(f32::from_bits).collect())
}

fn write_grid(g: &TileGrid, blob: &mut Vec<u8>) -> GridMeta {
    let mut tiles = Vec::new();
    for i in 0..g.tile_count() {
        if let Some(t) = g.tile(i) {
            let packed = pack_tile(t);
            tiles.push((i as u32, blob.len() as u64, packed.len() as u32));
            blob.extend_from_slice(&packed);
        }
    }
    GridMeta { fill: g.fill(), tiles }
}

/// The project's bytes.
pub fn encode(stack: &LayerStack, view: &ProjectView) -> Result<Vec<u8>, ProjectError> {
    let mut blob = Vec::new();
    let base = write_grid(&stack.base.heights, &mut blob);
    let layers = stack
        .layers()
        .iter()
        .map(|l| LayerMeta {
            id: l.id,
            name: l.name.clone(),
            visible: l.visible,
            kind: match &l.kind {
                LayerKind::Sculpt(d) => KindMeta::Sculpt { delta: write_grid(d, &mut blob) },
                LayerKind::Erosion(e) => KindMeta::Erosion {
                    recipe: Box::new(e.recipe.clone()),
                    strength: e.strength,
                    input_hash: e.input_hash,
                    stale: e.stale,
                    delta: write_grid(&e.delta, &mut blob),
                    mask: write_grid(&e.mask, &mut blob),
                },
            },
        })
        .collect();
    let meta = Meta {
        width: stack.width(),
        height: stack.height(),
        cell_size: stack.cell_size(),
        base_source: stack.base.source.clone(),
        base,
        layers,
        next_id: stack.next_id(),
        view: view.clone(),
    };
    let text = ron::to_string(&meta).map_err(|e| damaged(format!("cannot describe the project: {e}")))?;
    if text.len() > MAX_META as usize {
        return Err(damaged("the project's description is too large"));
    }
    let mut out = Vec::with_capacity(HEADER + text.len() + blob.len() + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&blob);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Saves atomically.
pub fn save(path: &Path, stack: &LayerStack, view: &ProjectView) -> Result<(), ProjectError> {
    let bytes = encode(stack, view)?;
    write_atomic(path, |w| w.write_all(&bytes))?;
    Ok(())
}

/// Reads a project file.
pub fn load(path: &Path) -> Result<Project, ProjectError> {
    decode(&std::fs::read(path)?)
}

fn read_grid(
    g: &GridMeta,
    width: usize,
    height: usize,
    blob: &[u8],
    range: [f32; 2],
    what: &str,
) -> Result<TileGrid, ProjectError> {
    let bad = |m: &str| damaged(format!("{what}: {m}"));
    if !(g.fill >= range[0] && g.fill <= range[1]) {
        return Err(bad("fill value out of range"));
    }
    let mut grid = TileGrid::new(width, height, g.fill);
    if g.tiles.len() > grid.tile_count() {
        return Err(bad("more tiles than the map has"));
    }
    let mut seen = vec![false; grid.tile_count()];
    for &(i, off, len) in &g.tiles {
        let i = i as usize;
        if i >= grid.tile_count() || std::mem::replace(&mut seen[i], true) {
            return Err(bad("a tile index is out of range or repeated"));
        }
        let end = off
            .checked_add(len as u64)
            .filter(|&e| e <= blob.len() as u64)
            .ok_or_else(|| bad("a tile lies outside the file"))?;
        let vals = unpack_tile(&blob[off as usize..end as usize])?;
        let (tx, ty) = (i % grid.tiles_x(), i / grid.tiles_x());
        let (x0, y0, x1, y1) = grid.tile_rect(tx, ty);
        for (k, v) in vals.iter().enumerate() {
            let (x, y) = (x0 + k % TILE, y0 + k / TILE);
            let inside = x < x1 && y < y1;
            if inside && !(*v >= range[0] && *v <= range[1]) {
                return Err(bad("a value is not finite or out of range"));
            }
            if !inside && v.to_bits() != g.fill.to_bits() {
                return Err(bad("an edge tile holds values outside the map"));
            }
        }
        grid.set_tile(i, vals);
    }
    Ok(grid)
}

/// Reads a project from its bytes (see the module doc for what is checked).
pub fn decode(bytes: &[u8]) -> Result<Project, ProjectError> {
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err(ProjectError::NotAProject);
    }
    if bytes.len() < HEADER + 4 {
        return Err(damaged("cut short in its header"));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version > VERSION {
        return Err(ProjectError::NewerVersion(version));
    }
    if version == 0 {
        return Err(damaged("format version 0"));
    }
    let m = u32_at(12);
    let b = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    if m > MAX_META {
        return Err(damaged("the description is too long"));
    }
    let expected = (HEADER as u64 + m as u64).checked_add(b).and_then(|n| n.checked_add(4));
    if expected != Some(bytes.len() as u64) {
        return Err(damaged(format!("its lengths say {expected:?} bytes, the file has {}", bytes.len())));
    }
    let body = bytes.len() - 4;
    if crc32fast::hash(&bytes[..body]) != u32_at(body) {
        return Err(damaged("checksum mismatch"));
    }
    let meta_end = HEADER + m as usize;
    let text = std::str::from_utf8(&bytes[HEADER..meta_end]).map_err(|_| damaged("the description is not UTF-8"))?;
    let mut meta: Meta = ron::from_str(text).map_err(|e| damaged(format!("the description does not parse: {e}")))?;
    // Version 1 held some parameters in grid units: the generator's are read with its own cell
    // size, the erosion recipes' with the project's map (see `crate::core::units`).
    if let BaseSource::Generator(g) = &mut meta.base_source {
        g.upgrade_units();
    }
    let map = MapSize::new(meta.width, meta.height, meta.cell_size);
    for l in &mut meta.layers {
        if let KindMeta::Erosion { recipe, .. } = &mut l.kind {
            recipe.upgrade_units(map);
            // Versions 1 and 2: the droplets' rates were per step of one node (module doc).
            // Versions 1 to 3: the snowballs' erosion rate was per node.
            // Versions 1 to 4: the pipe model clamped its flow to one cell per step.
            // Versions 1 to 5: thermal iterations (alone, or the pipe model's) were per node, and
            // the pipe model's thermal step had no underwater talus.
            match &mut recipe.model {
                crate::core::erosion::ModelParams::Droplet(p) if version < 3 => p.keep_rates_per_node(meta.cell_size),
                crate::core::erosion::ModelParams::Snowball(p) if version < 4 => p.keep_rate_per_node(meta.cell_size),
                crate::core::erosion::ModelParams::Pipe(p) => {
                    if version < 5 {
                        p.keep_cfl_per_cell();
                    }
                    if version < 6 {
                        p.keep_format_5_thermal(p.cell_size.unwrap_or(meta.cell_size));
                    }
                }
                crate::core::erosion::ModelParams::Thermal(p) if version < 6 => {
                    p.keep_iterations_per_node(meta.cell_size)
                }
                _ => {}
            }
        }
    }
    let blob = &bytes[meta_end..body];
    let (w, h) = (meta.width, meta.height);
    check_size(w, h).map_err(|e| damaged(e.to_string()))?;
    if !(meta.cell_size.is_finite() && meta.cell_size > 0.0) {
        return Err(damaged("cell size must be finite and positive"));
    }
    let any = [f32::MIN, f32::MAX];
    if meta.base.tiles.len() != w.div_ceil(TILE) * h.div_ceil(TILE) {
        return Err(damaged("the base does not store every tile"));
    }
    let heights = read_grid(&meta.base, w, h, blob, any, "base")?;
    let mut layers = Vec::with_capacity(meta.layers.len().min(1024));
    for l in &meta.layers {
        let kind = match &l.kind {
            KindMeta::Sculpt { delta } => LayerKind::Sculpt(read_grid(delta, w, h, blob, any, &l.name)?),
            KindMeta::Erosion { recipe, strength, input_hash, stale, delta, mask } => {
                if !(*strength >= STRENGTH_RANGE[0] && *strength <= STRENGTH_RANGE[1]) {
                    return Err(damaged(format!("{}: strength {strength}", l.name)));
                }
                recipe.validate().map_err(|e| damaged(format!("{}: {e}", l.name)))?;
                LayerKind::Erosion(Box::new(ErosionLayer {
                    recipe: (**recipe).clone(),
                    delta: read_grid(delta, w, h, blob, any, &l.name)?,
                    mask: read_grid(mask, w, h, blob, [0.0, 1.0], &l.name)?,
                    strength: *strength,
                    input_hash: *input_hash,
                    stale: *stale,
                    timeline: None,
                    frame: 0,
                }))
            }
        };
        layers.push(Layer { id: l.id, name: l.name.clone(), visible: l.visible, kind });
    }
    let stack =
        LayerStack::from_parts(meta.cell_size, Base { source: meta.base_source, heights }, layers, meta.next_id)
            .map_err(damaged)?;
    Ok(Project { stack, view: meta.view })
}

#[cfg(test)]
mod tests;
