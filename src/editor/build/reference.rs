//! The reference project of the parity table and of the build benchmark (issue #26, item 3):
//! the default island (`core::generate::demo_params`, 1 024 m across), a ridge painted across it
//! with the raise brush, and erosion layers run on it with the editor's defaults, as an artist
//! makes a project before building it.

use std::sync::atomic::AtomicBool;

use crate::backend::Backend;
use crate::core::brush::{self, BrushKind, BrushParams};
use crate::core::erosion::{Boundary, ModelParams};
use crate::core::generate::{demo_params, generate};
use crate::editor::layers::recipe::{Recipe, run_to_end};
use crate::editor::layers::{BaseSource, LayerStack};

/// The ridge the reference project paints, world metres from the map's first node: a stroke
/// across the island's middle, as a user drags it.
pub const STROKE_M: [[f32; 2]; 3] = [[300.0, 420.0], [512.0, 470.0], [720.0, 430.0]];

/// The brush of that stroke: raise, 60 m radius, 8 m of height per second at its centre, held
/// for 2 s along the path.
pub fn stroke_brush() -> BrushParams {
    BrushParams { kind: BrushKind::Raise, radius: 60.0, strength: 8.0, ..Default::default() }
}

/// The reference stack at `size` nodes a side (the island's extent stays 1 024 m): the island, one
/// sculpt layer holding the stroke, then one erosion layer per entry of `models`, each run to its
/// end on the fold below it (seed 1, the island's sea level, CPU).
pub fn reference_stack(size: usize, models: &[ModelParams]) -> Result<LayerStack, String> {
    reference_stack_with(size, None, models)
}

/// [`reference_stack`] with `cell` metres between nodes instead of the island's 1 024 m across, as
/// a user who sets the Generator's cell size makes it (a 513² map at 8 m cells is 4 096 m across;
/// the stroke keeps its place on the island, scaled with the extent).
pub fn reference_stack_with(size: usize, cell: Option<f32>, models: &[ModelParams]) -> Result<LayerStack, String> {
    let mut p = demo_params(size, 1);
    if let Some(c) = cell {
        if !(c.is_finite() && c > 0.0) {
            return Err(format!("cell size {c} m: give a positive number of metres"));
        }
        p.cell_size = c;
    }
    let scale = p.cell_size * (size.max(2) - 1) as f32 / 1024.0;
    let sea = p.sea_level.as_ref().map_or(0.0, |s| s.level);
    let map = generate(&p).map_err(|e| e.to_string())?;
    let mut stack = LayerStack::new(&map, BaseSource::Generator(p));
    // The stroke: dabs every quarter radius along the path, 2 s of brush time in all.
    let b = stroke_brush();
    let current = stack.compose();
    let mut target = current.clone();
    let cell = current.cell_size;
    let pts: Vec<[f32; 2]> = STROKE_M.iter().map(|q| [q[0] * scale / cell, q[1] * scale / cell]).collect();
    let len: f32 = pts.windows(2).map(|w| ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt()).sum();
    let step = (b.spacing * b.radius / cell).max(0.5);
    let n = (len / step).ceil().max(1.0) as usize;
    let amount = 2.0 / n as f32;
    for w in pts.windows(2) {
        let seg = ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt();
        let k = (seg / step).ceil().max(1.0) as usize;
        for i in 0..k {
            let t = i as f32 / k as f32;
            let c = [w[0][0] + t * (w[1][0] - w[0][0]), w[0][1] + t * (w[1][1] - w[0][1])];
            brush::try_dab(&mut target, c, &b, amount).map_err(|e| e.to_string())?;
        }
    }
    let i = stack.top_sculpt();
    stack.add_edit(i, &current, &target);
    for model in models {
        let input = stack.compose();
        let recipe = Recipe {
            model: model.clone(),
            boundary: Boundary::default(),
            seed: 1,
            backend: Backend::Cpu,
            hardness: None,
            sea_level: Some(sea),
            steer: None,
        };
        let result = run_to_end(&recipe, input.clone(), None, &AtomicBool::new(false))?
            .ok_or_else(|| "the reference run was cancelled".to_string())?;
        let label = model.entry().label;
        stack.push_erosion(recipe, &input, &result, label);
    }
    Ok(stack)
}
