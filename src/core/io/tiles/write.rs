//! Writing a tile set: in parallel, streamed and atomic.
//!
//! [`write_tile_set`] measures the whole map once ([`Ranges`]: its statistics, the shared height
//! range, the maps' ranges; the manifest reuses them), then writes every file of the set (a tile's
//! heights, one map of a tile) as its own job on rayon's pool (issue #36: 7 files a tile with all
//! maps, so 16 cores stay busy even with 4 tiles across). Each job computes its file from the
//! global map into its own buffers, encodes it, writes it and drops the buffers, so the set holds
//! at most one file's buffers a thread (a few bytes per node of one tile) and never a second copy
//! of the map. A file's bytes depend only on its tile and kind, so the set is the same, byte for
//! byte, at any thread count and in any order the jobs run. The flow map needs one global
//! computation, kept as one `f32` grid ([`crate::core::analysis::flow_log_area`], itself parallel;
//! its peak while computing is [`crate::core::analysis::FLOW_BYTES_PER_NODE`]).
//!
//! Everything goes into a temporary folder `DIR.tmp-PID-N` next to `DIR`, the manifest last; the
//! folder is renamed to `DIR` at the end ([`crate::core::io::atomic::write_dir_atomic`]). A
//! cancel (checked before each file), a failed write (a full disk) or any other error deletes the
//! temporary folder, so nothing is left; an existing `DIR` that is not empty is refused unless
//! `force`, and is then replaced only once the new set is complete.

use std::fs;
use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use image::{ImageBuffer, Luma, Rgb, Rgba};
use rayon::prelude::*;

use super::engine::{Engine, EngineImport, ImportInput, Placement};
use super::layout::{LayoutError, TileLayout};
use super::manifest::{FORMAT_VERSION, HeightFiles, HeightRange, Manifest, MapInfo, TileEntry};
use super::maps::{Encoding, MapKind, MapRanges, MapSource, needs_flow};
use super::{TileError, TileFormat, io_err};
use crate::core::analysis::FLOW_BYTES_PER_NODE;
use crate::core::heightmap::{Heightmap, Stats};
use crate::core::io::atomic::write_dir_atomic;
use crate::core::io::interop::quantise;
use crate::core::splat::SplatBands;

/// What a tile set is written from.
#[derive(Clone, Copy, Debug)]
pub struct TileSetInput<'a> {
    /// The global build.
    pub map: &'a Heightmap,
    /// File-name prefix of the tiles.
    pub name: &'a str,
    /// The engine.
    pub engine: Engine,
    /// The height tiles' format.
    pub format: TileFormat,
    /// The tiling (its width and height must be the map's).
    pub layout: TileLayout,
    /// The maps to write.
    pub maps: &'a [MapKind],
    /// Sea level, metres (flow outlets, the splat's height fraction).
    pub sea_level: f32,
    /// [`crate::core::analysis::flow_log_area`] of the map, for the maps that need it.
    pub flow: Option<&'a Heightmap>,
    /// The build's erosion layers' summed change, for the maps that need it.
    pub erosion_change: Option<&'a [f32]>,
    /// The material's bands, for the splat map.
    pub bands: SplatBands,
    /// Where the map came from (recorded in the manifest).
    pub source: &'a str,
}

/// What the writer measures over the whole map, once, for every tile and the manifest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranges {
    /// The heights' statistics.
    pub stats: Stats,
    /// The shared height range, by the engine's rule ([`super::EngineSpec::heights`]).
    pub heights: [f32; 2],
    /// The maps' ranges.
    pub maps: MapRanges,
}

impl Ranges {
    /// Measures `inp`: one pass over the heights, one over the flow map and one over the erosion
    /// change where they are given, each on every core. The heights' extremes are
    /// [`Heightmap::stats`]'s bits ([`Heightmap::min_max`]); their mean, which no file holds, is
    /// summed in chunks of 2^16 nodes in order (the same at any thread count).
    pub fn measure(inp: &TileSetInput) -> Self {
        let (min, max) = inp.map.min_max();
        let chunks: Vec<f64> =
            inp.map.data.par_chunks(1 << 16).map(|c| c.iter().map(|&h| h as f64).sum::<f64>()).collect();
        let stats = Stats { min, max, mean: chunks.iter().sum::<f64>() / inp.map.len() as f64 };
        Ranges {
            stats,
            heights: inp.engine.spec().heights.range(&stats),
            maps: MapRanges::measure(&stats, inp.map.cell_size, inp.flow, inp.erosion_change),
        }
    }
}

/// The memory a tile set adds to its build's: the buffers of the files being written at once,
/// and the flow map's computation when a map needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSetCost {
    /// Bytes of the files' buffers in flight (one file a thread).
    pub buffer_bytes: u64,
    /// Peak bytes of the flow map's computation, when a map needs it.
    pub flow_bytes: Option<u64>,
}

impl TileSetCost {
    /// Both parts together.
    pub fn bytes(&self) -> u64 {
        self.buffer_bytes + self.flow_bytes.unwrap_or(0)
    }
}

/// Bytes of one file's buffers, per node of its tile: the heights (`f32`), their samples (`u32`,
/// `u16`) and the encoded file; a map's pixels (at most 4 bytes) and its PNG are fewer.
const FILE_BYTES_PER_NODE: u64 = 16;

/// What a tile set of `layout` with `maps` adds to its build's memory on rayon's pool, for the
/// build's plan.
pub fn plan_bytes(layout: &TileLayout, maps: &[MapKind]) -> TileSetCost {
    let nodes = (layout.width() * layout.height()) as u64;
    let s2 = (layout.tile_size * layout.tile_size) as u64;
    let files = (layout.tiles_x * layout.tiles_y * (1 + maps.len())) as u64;
    let at_once = files.min(rayon::current_num_threads() as u64);
    TileSetCost {
        buffer_bytes: at_once * s2 * FILE_BYTES_PER_NODE,
        flow_bytes: needs_flow(maps).then_some(nodes * FLOW_BYTES_PER_NODE),
    }
}

/// Writes the tile set of `inp` into `dir` (module doc: streamed, atomic, nothing left on error
/// or cancel); `progress` hears the fraction of files written.
pub fn write_tile_set(
    dir: &Path,
    inp: &TileSetInput,
    force: bool,
    cancel: &AtomicBool,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Manifest, TileError> {
    let l = inp.layout;
    if (l.width(), l.height()) != (inp.map.width, inp.map.height) {
        return Err(LayoutError::MapSize { layout: l, width: inp.map.width, height: inp.map.height }.into());
    }
    write_dir_atomic(dir, force, |tmp| write_into(tmp, inp, cancel, progress))
}

/// One file of the set: tile `(tx, ty)`'s heights (`map: None`) or one of its maps.
#[derive(Clone, Copy, Debug)]
struct File {
    tx: usize,
    ty: usize,
    map: Option<MapKind>,
}

fn write_into(
    tmp: &Path,
    inp: &TileSetInput,
    cancel: &AtomicBool,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Manifest, TileError> {
    let l = inp.layout;
    let r = Ranges::measure(inp);
    let src = source(inp, &r.maps)?;
    let kinds: Vec<Option<MapKind>> = std::iter::once(None).chain(inp.maps.iter().copied().map(Some)).collect();
    let files: Vec<File> = (0..l.tiles_y)
        .flat_map(|ty| (0..l.tiles_x).map(move |tx| (tx, ty)))
        .flat_map(|(tx, ty)| kinds.iter().map(move |&map| File { tx, ty, map }))
        .collect();
    let total = files.len() as f64;
    let done = AtomicU64::new(0);
    // One file a job (module doc); rayon runs one job a thread at a time.
    files.par_iter().with_max_len(1).try_for_each(|&f| -> Result<(), TileError> {
        if cancel.load(Ordering::Relaxed) {
            return Err(TileError::Cancelled);
        }
        let (name, bytes) = match f.map {
            None => height_file(inp, f.tx, f.ty, r.heights)?,
            Some(kind) => map_file(inp, &src, kind, f.tx, f.ty)?,
        };
        let p = tmp.join(&name);
        let mut file = fs::File::create(&p).map_err(io_err("create", &p))?;
        file.write_all(&bytes).map_err(io_err("write", &p))?;
        file.sync_all().map_err(io_err("write", &p))?;
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(d as f64 / total);
        Ok(())
    })?;
    if cancel.load(Ordering::Relaxed) {
        return Err(TileError::Cancelled);
    }
    let m = manifest(inp, &r);
    let p = tmp.join("manifest.json");
    let text = serde_json::to_string_pretty(&m).map_err(|e| TileError::Encode(format!("manifest: {e}")))?;
    fs::write(&p, text).map_err(io_err("write", &p))?;
    Ok(m)
}

/// The maps' source for `inp`, with the inputs its maps need present and of the map's size.
fn source<'a>(inp: &'a TileSetInput, ranges: &'a MapRanges) -> Result<MapSource<'a>, TileError> {
    let n = inp.map.len();
    let wanted = |needed: bool, grid: Option<&'a [f32]>, missing: &str| -> Result<&'a [f32], TileError> {
        match grid {
            _ if !needed => Ok(&[]),
            Some(g) if g.len() == n => Ok(g),
            Some(g) => Err(TileError::Encode(format!("{missing}: {} values for {n} nodes", g.len()))),
            None => Err(TileError::Encode(missing.into())),
        }
    };
    let specs = || inp.maps.iter().map(|k| k.spec());
    Ok(MapSource {
        map: inp.map,
        flow: wanted(
            specs().any(|m| m.needs_flow),
            inp.flow.map(|f| f.data.as_slice()),
            "the flow map was not computed",
        )?,
        erosion_change: wanted(
            specs().any(|m| m.needs_erosion_change),
            inp.erosion_change,
            "the build's erosion change was not kept",
        )?,
        ranges,
        sea_level: inp.sea_level,
        bands: &inp.bands,
    })
}

fn encode<P: image::Pixel<Subpixel = S> + image::PixelWithColorType, S: image::Primitive>(
    s: usize,
    data: Vec<S>,
    what: &str,
) -> Result<Vec<u8>, TileError>
where
    [S]: image::EncodableLayout,
{
    let img: ImageBuffer<P, Vec<S>> =
        ImageBuffer::from_raw(s as u32, s as u32, data).ok_or_else(|| TileError::Encode(what.into()))?;
    let mut buf = Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png).map_err(|e| TileError::Encode(format!("{what}: {e}")))?;
    Ok(buf.into_inner())
}

/// Quantises `v ∈ [lo, hi]` to 16 bits, as [`quantise`] does one value (without its buffer).
#[inline]
fn q16(v: f32, [lo, hi]: [f32; 2]) -> u16 {
    let (lo, hi) = (lo as f64, hi as f64);
    let span = hi - lo;
    let t = if span > 0.0 { (v as f64 - lo) / span } else { 0.0 };
    (t.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// The heights of tile `(tx, ty)`, quantised over `range`: file name and bytes.
fn height_file(inp: &TileSetInput, tx: usize, ty: usize, range: [f32; 2]) -> Result<(String, Vec<u8>), TileError> {
    let s = inp.layout.tile_size;
    let (x0, y0) = (tx * (s - 1), ty * (s - 1));
    let map = inp.map;
    let w = map.width;
    let mut hts: Vec<f32> = Vec::with_capacity(s * s);
    for y in y0..y0 + s {
        hts.extend_from_slice(&map.data[y * w + x0..y * w + x0 + s]);
    }
    let (q, _) = quantise(&hts, range, 65535);
    drop(hts);
    let hfile = inp.format.file(inp.name, tx, ty);
    let bytes = match inp.format {
        TileFormat::Png16 => encode::<Luma<u16>, u16>(s, q.into_iter().map(|v| v as u16).collect(), &hfile)?,
        TileFormat::R16 => {
            let rows = inp.engine.spec().rows(TileFormat::R16);
            let mut b = Vec::with_capacity(2 * s * s);
            for r in 0..s {
                let row = rows.file_row(r, s);
                b.extend(q[row * s..(row + 1) * s].iter().flat_map(|&v| (v as u16).to_le_bytes()));
            }
            b
        }
    };
    Ok((hfile, bytes))
}

/// Map `kind` of tile `(tx, ty)`: file name and bytes.
fn map_file(
    inp: &TileSetInput,
    src: &MapSource,
    kind: MapKind,
    tx: usize,
    ty: usize,
) -> Result<(String, Vec<u8>), TileError> {
    let s = inp.layout.tile_size;
    let (x0, y0) = (tx * (s - 1), ty * (s - 1));
    let nodes = || (0..s * s).map(move |i| (x0 + i % s, y0 + i / s));
    let file = kind.file(inp.name, tx, ty);
    let bytes = match kind.spec().encoding {
        Encoding::Grey16 { value, range } => {
            let range = range(src.ranges);
            encode::<Luma<u16>, u16>(s, nodes().map(|(x, y)| q16(value(src, x, y), range)).collect(), &file)?
        }
        Encoding::Rgb8(pixel) => {
            encode::<Rgb<u8>, u8>(s, nodes().flat_map(|(x, y)| pixel(src, x, y)).collect(), &file)?
        }
        Encoding::Rgba8(pixel) => {
            encode::<Rgba<u8>, u8>(s, nodes().flat_map(|(x, y)| pixel(src, x, y)).collect(), &file)?
        }
    };
    Ok((file, bytes))
}

/// The manifest of `inp`, whose whole-map ranges `r` the writer measured ([`Ranges::measure`]);
/// nothing is written.
pub fn manifest(inp: &TileSetInput, r: &Ranges) -> Manifest {
    let map = inp.map;
    let spec = inp.engine.spec();
    let l = inp.layout;
    let s = l.tile_size;
    let cell = map.cell_size as f64;
    let range = r.heights;
    let tile_m = (s - 1) as f64 * cell;
    let mut tiles = Vec::new();
    for ty in 0..l.tiles_y {
        for tx in 0..l.tiles_x {
            let (px, py) = (tx * (s - 1), ty * (s - 1));
            let place =
                Placement { tile: [tx, ty], tiles: [l.tiles_x, l.tiles_y], offset_px: [px, py], cell, tile_m, range };
            tiles.push(TileEntry {
                x: tx,
                y: ty,
                file: inp.format.file(inp.name, tx, ty),
                offset_px: [px, py],
                size_nodes: [s, s],
                size_m: [tile_m, tile_m],
                position_m: [px as f64 * cell, py as f64 * cell],
                engine_position: (spec.place)(&place),
                maps: inp.maps.iter().map(|&k| (k.name().to_string(), k.file(inp.name, tx, ty))).collect(),
            });
        }
    }
    let maps = inp
        .maps
        .iter()
        .map(|&kind| {
            let m = kind.spec();
            MapInfo {
                kind,
                pixels: m.pixels(),
                files: kind.file_pattern(inp.name),
                range: m.range(&r.maps),
                unit: m.unit.into(),
                meaning: m.meaning.into(),
            }
        })
        .collect();
    let (w, h) = (map.width, map.height);
    let import = (spec.import)(&ImportInput {
        name: inp.name,
        format: inp.format,
        cell,
        size: [w, h],
        tile_size: s,
        tile_m,
        range,
        stats: &r.stats,
    });
    // One object per engine, the others null (the manifest's schema asks for all of them).
    let (unreal, unity) = match import {
        EngineImport::Unreal(u) => (Some(u), None),
        EngineImport::Unity(u) => (None, Some(u)),
    };
    Manifest {
        format: "talus-tiles".into(),
        format_version: FORMAT_VERSION,
        engine: inp.engine,
        name: inp.name.into(),
        source: inp.source.into(),
        size: [w, h],
        tiles: [l.tiles_x, l.tiles_y],
        tile_size: s,
        cell_size: cell,
        extent_m: [(w - 1) as f64 * cell, (h - 1) as f64 * cell],
        sea_level_m: inp.sea_level as f64,
        heights: HeightFiles {
            format: inp.format,
            rows: spec.rows(inp.format).name().into(),
            byte_order: inp.format.byte_order().into(),
        },
        height_range: HeightRange {
            min_m: range[0] as f64,
            max_m: range[1] as f64,
            data_min_m: r.stats.min as f64,
            data_max_m: r.stats.max as f64,
            mapping: "h = min_m + v/65535·(max_m − min_m), v = round((h − min_m)/(max_m − min_m)·65535)".into(),
            zero_sample: spec.heights.zero_sample(),
        },
        maps,
        tile_files: tiles,
        unreal,
        unity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q16_is_quantise() {
        for (v, r) in
            [(0.3f32, [0.0f32, 1.0]), (-5.0, [0.0, 1.0]), (7.0, [0.0, 1.0]), (12.345, [-3.0, 90.0]), (1.0, [1.0, 1.0])]
        {
            assert_eq!(q16(v, r) as u32, quantise(&[v], r, 65535).0[0], "{v} {r:?}");
        }
    }

    #[test]
    fn the_cost_has_a_flow_part_only_for_maps_that_need_it() {
        let l = TileLayout { tiles_x: 2, tiles_y: 2, tile_size: 129 };
        let c = plan_bytes(&l, &[MapKind::Slope]);
        let files = 8.min(rayon::current_num_threads() as u64);
        assert_eq!(c, TileSetCost { buffer_bytes: files * 129 * 129 * 16, flow_bytes: None });
        let f = plan_bytes(&l, &[MapKind::Flow]);
        assert_eq!(f.flow_bytes, Some(257 * 257 * FLOW_BYTES_PER_NODE));
        assert_eq!(f.bytes(), f.buffer_bytes + 257 * 257 * FLOW_BYTES_PER_NODE);
    }
}
