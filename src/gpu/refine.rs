//! The build's detail passes on the GPU (issue #36 item 1): the stream-power pass of a build that
//! erodes on its way up (`--erosion refine`, issue #34), the same stencils as the CPU pass
//! [`crate::core::erosion::stream_power::refine`] in `shaders/gpu/refine_sp.wgsl`. The equations
//! are in that module's doc; in short, one step of `Δt` (the level's years over its steps) is
//!
//! 1. `receivers`: the steepest receiver's inverse slope `1/S_max` and the MFD normaliser
//!    `1/Σ_k (S_k/S_max)^p` of every node's lower neighbours;
//! 2. `sweep`: the drainage one node further, `A'_i = Δx² + Σ_{j higher} w_{j→i}·A_j`;
//! 3. `incise`: against the flow-weighted receiver height `h_r` of the step before, implicit,
//!    `h'_i = h_r + δ`, `δ − δ₀ + F·δ^n = 0` (`δ = δ₀/(1 + F)` for `n = 1`), then deposition
//!    (`G > 0`: the load `t_i` gathered from the donors' of the step before plus the node's own
//!    incision, `t_i·G·Δx²/A_i/(1 + G·Δx²/A_i)` of it settling, never above the lowest donor),
//!    then `+ U_i·Δt`;
//! 4. `rows_*`, `cols_*`: the CPU's backward-Euler step split by direction, each line solved by
//!    the Thomas algorithm in 64-node segments joined through their separators
//!    (`shaders/gpu/thomas_split.wgsl`, shared with the stream-power model): segments, separators,
//!    then every node.
//!
//! Each kernel gathers from the step before and writes only its own node (or line), so the
//! pass gives the same bits on every run. Against the CPU pass the arithmetic differs only where
//! the GPU rounds differently (WGSL's `pow` in the Newton solve for `n ≠ 1`, f32 instead of f64
//! in the Thomas algorithm, fused multiply-adds on hardware): `tests` holds the two to
//! landform parity and the GPU to itself, bit for bit.
//!
//! A map beyond the adapter's buffer limits, a lost device or any other GPU failure is a
//! [`GpuError`]: the caller (`crate::backend::refine_pass`) runs the CPU pass instead and says
//! why. The level is changed only once the GPU's result is read back, so a failed GPU pass
//! leaves it as it was.

use std::sync::atomic::{AtomicBool, Ordering};

use super::context::{GpuContext, GpuError, groups};
use super::pipe::GpuJobError;
use super::stream_power::LINE_SEG;
use crate::core::erosion::JobInputs;
use crate::core::erosion::refine::{Level, RefineParams};
use crate::core::erosion::stream_power::StreamPowerParams;
use crate::core::erosion::stream_power::refine::{PassUplift, pass_outlets, pass_steps};
use crate::core::erosion::{JobError, check_param};

const SHADER: &str = concat!(
    include_str!("../../shaders/gpu/incision.wgsl"),
    "\n",
    include_str!("../../shaders/gpu/thomas_split.wgsl"),
    "\n",
    include_str!("../../shaders/gpu/refine_sp.wgsl")
);

/// Storage buffers every kernel binds (`refine_sp.wgsl`, bindings 1–11).
const STORAGE_BINDINGS: u32 = 11;

/// Steps recorded into one submission; the cancel flag is read between submissions.
const STEPS_PER_SUBMIT: u32 = 8;

super::uniform::wgsl_uniform! {
    /// The uniform block of `refine_sp.wgsl` (`Params`; checked against it by a test).
    struct RefineGpuParams {
        w: u32,
        h: u32,
        flow_p: u32,
        linear: u32,
        dx: f32,
        dx_diag: f32,
        inv_dx: f32,
        inv_dx_diag: f32,
        cell2: f32,
        k_dt: f32,
        m: f32,
        n: f32,
        a_scale: f32,
        a_back: f32,
        sea: f32,
        dt: f32,
        r_diff: f32,
        g_dep: f32,
        _pad1: f32,
        _pad2: f32,
    }
}

/// OUTLET and SEA_IN of `refine_sp.wgsl`.
const OUTLET: u32 = 1;
const SEA_IN: u32 = 2;

/// One level's stream-power detail pass on the GPU of `ctx`, with the CPU pass's meaning
/// ([`crate::core::erosion::stream_power::refine::pass`]): the same checks and settings, the
/// level's map and drainage changed in place. A cancel leaves the level as it was brought up.
pub fn stream_power_pass(
    ctx: &GpuContext,
    p: &StreamPowerParams,
    r: &RefineParams,
    lv: &mut Level,
    inputs: &JobInputs,
    cancel: &AtomicBool,
) -> Result<(), GpuJobError> {
    let Some((dt, steps)) = pass_steps(r, lv)? else { return Ok(()) };
    let (w, h) = (lv.map.width, lv.map.height);
    let n = w * h;
    let dx = lv.map.cell_size;
    check_param("cell_size", dx as f64, 1.0e-6, 1.0e6, "[1e-6, 1e6] m")?;
    if let Some(c) = &inputs.hardness
        && c.len() != n
    {
        return Err(JobError::BadParam { name: "hardness length", value: c.len() as f64, range: "one per node" }.into());
    }
    let sea_level = inputs.sea_level.filter(|s| s.is_finite());
    let input = &lv.input.data;

    // Per node: outlets and the sea in the input, hardness, uplift rate.
    let outlet = pass_outlets(input, w, h, inputs);
    let flags: Vec<u32> = outlet
        .iter()
        .zip(input)
        .map(|(&o, &v)| {
            let sea_in = sea_level.is_some_and(|s| v <= s);
            ((o != 0) as u32 * OUTLET) | (sea_in as u32 * SEA_IN)
        })
        .collect();
    drop(outlet);
    let hard: Vec<f32> = inputs.hardness.clone().unwrap_or_else(|| vec![1.0; n]);
    let up = PassUplift::new(p, input, sea_level, lv.input_range).rates(input);

    let m = p.m;
    let gp = RefineGpuParams {
        w: w as u32,
        h: h as u32,
        flow_p: r.flow_exponent.clamp(1, 8),
        linear: (p.n == 1.0) as u32,
        dx,
        dx_diag: std::f32::consts::SQRT_2 * dx,
        inv_dx: 1.0 / dx,
        inv_dx_diag: 1.0 / (std::f32::consts::SQRT_2 * dx),
        cell2: dx * dx,
        k_dt: p.k * r.stream_power_strength * dt,
        m,
        n: p.n,
        a_scale: 2f32.powi(-40),
        a_back: 2f64.powf(40.0 * m as f64) as f32,
        sea: sea_level.unwrap_or(-3.4e38),
        dt,
        r_diff: if p.diffusion > 0.0 {
            let r = p.diffusion as f64 * dt as f64 / (dx as f64 * dx as f64);
            if r.is_nan() || r <= 0.0 { 0.0 } else { r as f32 }
        } else {
            0.0
        },
        g_dep: r.deposition,
        ..Default::default()
    };

    // Limits first: a map too large is a typed error the caller falls back from.
    let (gx, gy) = (groups(w as u32, 16), groups(h as u32, 16));
    let lines = groups(w.max(h) as u32, 64);
    let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
    if gx.max(gy).max(lines) > max_groups {
        return Err(GpuError::TooLarge {
            what: "map side (workgroups per dimension)".into(),
            bytes: gx.max(gy).max(lines) as u64,
            limit: max_groups as u64,
        }
        .into());
    }
    let have = ctx.limits().max_storage_buffers_per_shader_stage;
    if have < STORAGE_BINDINGS {
        return Err(GpuError::Other(format!(
            "the refine kernels bind {STORAGE_BINDINGS} storage buffers, the adapter allows {have}"
        ))
        .into());
    }
    let nb = n as u64 * 4;
    ctx.check_fits("refine height buffer", nb)?;

    let params = ctx.uniform_buffer("refine params", &gp)?;
    let h0 = ctx.storage_buffer_init("refine heights 0", &lv.map.data)?;
    let h1 = ctx.storage_buffer("refine heights 1", nb)?;
    let a0 = ctx.storage_buffer_init("refine drainage 0", lv.drainage.as_slice())?;
    let a1 = ctx.storage_buffer("refine drainage 1", nb)?;
    let steep = ctx.storage_buffer("refine steepest slope", nb)?;
    let norm = ctx.storage_buffer("refine MFD normaliser", nb)?;
    let flags_buf = ctx.storage_buffer_init("refine flags", &flags)?;
    let hard_buf = ctx.storage_buffer_init("refine hardness", &hard)?;
    let up_buf = ctx.storage_buffer_init("refine uplift", &up)?;
    // The sediment's loads (zero at the level's start); one node's worth when there is no
    // deposition, as the kernels still bind them.
    let qb = if r.deposition > 0.0 { nb } else { 4 };
    let q0 = ctx.storage_buffer("refine sediment 0", qb)?;
    let q1 = ctx.storage_buffer("refine sediment 1", qb)?;
    drop((flags, hard, up));

    let module = ctx.shader("refine_sp", SHADER)?;
    let layout = ctx.kernel_layout("refine layout", STORAGE_BINDINGS)?;
    // Four groups: heights (with the sediment) and drainage each in order (0) or swapped (1),
    // `[hp][ap]`.
    let hs = [&h0, &h1];
    let qs = [&q0, &q1];
    let as_ = [&a0, &a1];
    let mut bind: Vec<wgpu::BindGroup> = Vec::with_capacity(4);
    for hp in 0..2 {
        for ap in 0..2 {
            let list = [
                &params,
                hs[hp],
                hs[1 - hp],
                as_[ap],
                as_[1 - ap],
                &steep,
                &norm,
                &flags_buf,
                &hard_buf,
                &up_buf,
                qs[hp],
                qs[1 - hp],
            ];
            bind.push(layout.bind(ctx, &format!("refine group {hp}{ap}"), &list)?);
        }
    }
    let pipeline = |entry: &str| layout.pipeline(ctx, &format!("refine_sp {entry}"), &module, entry);
    let receivers = pipeline("receivers")?;
    let sweep = pipeline("sweep")?;
    let incise = pipeline("incise")?;
    let rows = [pipeline("rows_segments")?, pipeline("rows_separators")?, pipeline("rows_fill")?];
    let cols = [pipeline("cols_segments")?, pipeline("cols_separators")?, pipeline("cols_fill")?];
    ctx.check()?;

    // Where the current heights and drainage are (0: buffer 0).
    let (mut hc, mut ac) = (0usize, 0usize);
    /// What a dispatch covers: the map's 16×16 tiles, or `lines` lines of `len` nodes (by
    /// their 64-node segments where `segments`).
    enum Grid {
        Nodes,
        Lines { lines: u32, len: u32, segments: bool },
    }
    let submit = |list: &[(&wgpu::ComputePipeline, usize, usize, Grid)]| -> Result<(), GpuError> {
        let mut enc =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("refine steps") });
        {
            let mut cp =
                enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("refine"), timestamp_writes: None });
            for (pl, hp, ap, grid) in list {
                cp.set_pipeline(pl);
                cp.set_bind_group(0, &bind[hp * 2 + ap], &[]);
                match grid {
                    Grid::Nodes => cp.dispatch_workgroups(gx, gy, 1),
                    Grid::Lines { lines, len, segments } => cp.dispatch_workgroups(
                        groups(*lines, 64),
                        if *segments { groups(*len, LINE_SEG) } else { 1 },
                        1,
                    ),
                }
            }
        }
        ctx.queue().submit([enc.finish()]);
        ctx.wait()
    };
    // The drainage re-routed on the level's heights before the first step.
    let mut list = vec![(&receivers, hc, ac, Grid::Nodes)];
    for _ in 0..r.drainage_sweeps {
        list.push((&sweep, hc, ac, Grid::Nodes));
        ac ^= 1;
    }
    submit(&list)?;
    let mut done = 0;
    while done < steps {
        if cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        let k = STEPS_PER_SUBMIT.min(steps - done);
        let mut list = Vec::new();
        for _ in 0..k {
            list.push((&receivers, hc, ac, Grid::Nodes));
            list.push((&sweep, hc, ac, Grid::Nodes));
            ac ^= 1;
            list.push((&incise, hc, ac, Grid::Nodes));
            hc ^= 1;
            if gp.r_diff > 0.0 {
                let (w, h) = (w as u32, h as u32);
                list.push((&rows[0], hc, ac, Grid::Lines { lines: h, len: w, segments: true }));
                list.push((&rows[1], hc, ac, Grid::Lines { lines: h, len: w, segments: false }));
                list.push((&rows[2], hc, ac, Grid::Nodes));
                list.push((&cols[0], hc, ac, Grid::Lines { lines: w, len: h, segments: true }));
                list.push((&cols[1], hc, ac, Grid::Lines { lines: w, len: h, segments: false }));
                list.push((&cols[2], hc, ac, Grid::Nodes));
            }
        }
        submit(&list)?;
        done += k;
    }
    let data = ctx.read_f32(hs[hc], 0, n)?;
    let drainage = ctx.read_f32(as_[ac], 0, n)?;
    if data.iter().any(|v| !v.is_finite()) {
        return Err(JobError::NonFinite.into());
    }
    lv.map.data = data;
    *lv.drainage = drainage;
    Ok(())
}

#[cfg(test)]
mod tests;
