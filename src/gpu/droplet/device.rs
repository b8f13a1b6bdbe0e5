//! The device side of a GPU droplet job (see [`super`]): its buffers, pipelines and bind groups
//! ([`Device`]), and the batches of lockstep steps recorded into them ([`GpuDropletCore::run_gpu`]).

use std::sync::Arc;

use super::{
    ACC_WORDS, BOOK_WORDS, DROP_BYTES, FLOW_WORDS, GpuContext, GpuDropletCore, GpuError, SHADER, STEPS_PER_SUBMIT, WG,
    brush_taps,
};

/// A 2-D grid of workgroups covering `threads` threads of `size` per group (a dimension may hold
/// at most 65 535 groups): `(groups_x, groups_y, threads per row)`.
pub(super) fn grid(threads: u32, size: u32) -> (u32, u32, u32) {
    let groups = threads.div_ceil(size).max(1);
    let gx = groups.min(65_535);
    (gx, groups.div_ceil(gx), gx * size)
}

fn entry(binding: u32, buf: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource: buf.as_entire_binding() }
}

/// The GPU side of a job: buffers, pipelines, bind groups.
pub(super) struct Device {
    pub(super) ctx: Arc<GpuContext>,
    pub(super) params: wgpu::Buffer,
    pub(super) hf: wgpu::Buffer,
    pub(super) hq: wgpu::Buffer,
    /// Held only through the bind groups.
    pub(super) _acc: wgpu::Buffer,
    pub(super) books: wgpu::Buffer,
    pub(super) maps: wgpu::Buffer,
    pub(super) flow: wgpu::Buffer,
    pub(super) drops: wgpu::Buffer,
    pub(super) claim: wgpu::Buffer,
    pub(super) walk: wgpu::ComputePipeline,
    pub(super) apply: wgpu::ComputePipeline,
    pub(super) walk_bind: wgpu::BindGroup,
    pub(super) apply_bind: wgpu::BindGroup,
    /// Sea mode: the pass that finishes the steps of droplets at the sea.
    pub(super) sea: Option<(wgpu::ComputePipeline, wgpu::BindGroup)>,
}
impl GpuDropletCore {
    pub(super) fn build_device(&self, ctx: Arc<GpuContext>, nodein: Option<&[[f32; 2]]>) -> Result<Device, GpuError> {
        let n = self.last.len() as u64;
        ctx.check_fits("droplet accumulators", n * ACC_WORDS * 4)?;
        ctx.check_fits("droplet flow", n * FLOW_WORDS * 4)?;
        ctx.check_fits("droplet states", self.in_flight as u64 * DROP_BYTES)?;
        // Storage, not uniform: see the binding in droplet.wgsl (lavapipe recompiles kernels per bind).
        let params = ctx.storage_buffer_init("droplet params", std::slice::from_ref(&self.block))?;
        let hf = ctx.storage_buffer_init("droplet heights f32", &self.last.data)?;
        let hq = ctx.storage_buffer_init("droplet heights fixed", &self.to_units(&self.last.data))?;
        let nodein = match nodein {
            Some(v) => ctx.storage_buffer_init("droplet erodibility and mask", v)?,
            None => ctx.storage_buffer("droplet erodibility and mask (none)", 8)?,
        };
        let (taps, _) = brush_taps(self.grid.radius);
        let brush = ctx.storage_buffer_init("droplet brush", &taps)?;
        let acc = ctx.storage_buffer("droplet accumulators", n * ACC_WORDS * 4)?;
        let books = ctx.storage_buffer("droplet books", BOOK_WORDS as u64 * 4)?;
        let maps = ctx.storage_buffer("droplet maps", n * 8)?;
        let flow = ctx.storage_buffer("droplet flow", n * FLOW_WORDS * 4)?;
        let drops = ctx.storage_buffer("droplet states", self.in_flight as u64 * DROP_BYTES)?;
        let claim = ctx.storage_buffer("droplet claims", n * 8)?;
        let module = ctx.shader("droplet.wgsl", SHADER)?;
        let sea_mode = [("SEA", if self.sea.is_some() { 1.0 } else { 0.0 })];
        let walk = ctx.compute_pipeline_with("droplet walk", &module, "walk", &sea_mode)?;
        let apply = ctx.compute_pipeline_with("droplet apply", &module, "apply", &sea_mode)?;
        // The sea pass only exists in sea mode.
        let sea = match self.sea {
            Some(_) => {
                let pl = ctx.compute_pipeline("droplet sea", &module, "sea")?;
                let bind = ctx.scoped("droplet sea bind group", |d| {
                    d.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("droplet sea"),
                        layout: &pl.get_bind_group_layout(0),
                        entries: &[
                            entry(0, &params),
                            entry(3, &brush),
                            entry(5, &books),
                            entry(6, &hq),
                            entry(8, &flow),
                            entry(9, &drops),
                            entry(10, &claim),
                        ],
                    })
                })?;
                Some((pl, bind))
            }
            None => None,
        };
        let walk_bind = ctx.scoped("droplet walk bind group", |d| {
            d.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("droplet walk"),
                layout: &walk.get_bind_group_layout(0),
                entries: &[
                    entry(0, &params),
                    entry(1, &hf),
                    entry(2, &nodein),
                    entry(3, &brush),
                    entry(4, &acc),
                    entry(5, &books),
                    entry(6, &hq),
                    entry(8, &flow),
                    entry(9, &drops),
                ],
            })
        })?;
        let apply_bind = ctx.scoped("droplet apply bind group", |d| {
            d.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("droplet apply"),
                layout: &apply.get_bind_group_layout(0),
                entries: &[
                    entry(0, &params),
                    entry(1, &hf),
                    entry(3, &brush),
                    entry(4, &acc),
                    entry(5, &books),
                    entry(6, &hq),
                    entry(7, &maps),
                    entry(9, &drops),
                    entry(10, &claim),
                ],
            })
        })?;
        Ok(Device {
            ctx,
            params,
            hf,
            hq,
            _acc: acc,
            books,
            maps,
            flow,
            drops,
            claim,
            walk,
            apply,
            walk_bind,
            apply_bind,
            sea,
        })
    }

    /// Runs droplets `start .. end` on the GPU, in batches of `in_flight` advancing in lockstep:
    /// per step one `walk` and one `apply` dispatch, [`STEPS_PER_SUBMIT`] steps per submission,
    /// stopping early once every droplet of the batch has ended. Waits for the GPU.
    pub(super) fn run_gpu(&mut self, start: u64, end: u64) -> Result<(), GpuError> {
        let Some(dev) = &self.dev else { return Ok(()) };
        let ctx = &dev.ctx;
        let steps = self.grid.max_lifetime.saturating_add(1);
        let mut first = start;
        while first < end {
            let count = (end - first).min(self.in_flight as u64) as u32;
            let (gx, gy, row) = grid(count, WG);
            if self.stamp.checked_add(steps).is_none_or(|s| s == u32::MAX) {
                // Stamps would wrap: forget every claim (0 is never a stamp).
                let mut enc =
                    ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("claims") });
                enc.clear_buffer(&dev.claim, 0, None);
                ctx.queue().submit([enc.finish()]);
                self.stamp = 1;
            }
            self.block.first_lo = first as u32;
            self.block.first_hi = (first >> 32) as u32;
            self.block.count = count;
            self.block.row = row;
            self.block.stamp_base = self.stamp;
            ctx.write(&dev.params, 0, std::slice::from_ref(&self.block));
            // Only a batch longer than one submission checks for an early end (a readback).
            let ended_before = if steps > STEPS_PER_SUBMIT { self.read_books()?[4] } else { 0 };
            let mut step = 0u32;
            while step < steps {
                let upto = (step + STEPS_PER_SUBMIT).min(steps);
                let mut enc =
                    ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("droplets") });
                if step == 0 {
                    enc.clear_buffer(&dev.drops, 0, Some(count as u64 * DROP_BYTES));
                }
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("droplet steps"),
                        timestamp_writes: None,
                    });
                    for _ in step..upto {
                        pass.set_pipeline(&dev.walk);
                        pass.set_bind_group(0, &dev.walk_bind, &[]);
                        pass.dispatch_workgroups(gx, gy, 1);
                        pass.set_pipeline(&dev.apply);
                        pass.set_bind_group(0, &dev.apply_bind, &[]);
                        pass.dispatch_workgroups(gx, gy, 1);
                        if let Some((pl, bind)) = &dev.sea {
                            pass.set_pipeline(pl);
                            pass.set_bind_group(0, bind, &[]);
                            pass.dispatch_workgroups(gx, gy, 1);
                        }
                    }
                }
                ctx.queue().submit([enc.finish()]);
                step = upto;
                if step < steps && self.read_books()?[4] - ended_before >= count as u64 {
                    break;
                }
            }
            self.stamp += steps;
            first += count as u64;
        }
        ctx.wait()
    }
}
