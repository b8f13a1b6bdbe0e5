//! The wgpu connection every GPU model shares: instance → adapter → device/queue, typed errors,
//! and small helpers (storage buffers, shader modules and compute pipelines under error scopes,
//! blocking readback).
//!
//! Nothing here panics on adapter or driver failure: wgpu's default uncaptured-error handler
//! (which panics) is replaced by one that records the error, device loss is recorded by a
//! callback, and every fallible creation runs inside `push_error_scope` so a shader compile
//! error or an allocation failure comes back as a [`GpuError`] the caller can show and fall back
//! from.

use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

/// Which adapters may be used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdapterChoice {
    /// Hardware GPUs only (discrete, integrated, virtual). Software rasterisers such as Mesa's
    /// lavapipe or WARP are refused: they are slower than the CPU models.
    #[default]
    Hardware,
    /// Any adapter, software ones included (a hardware one is still preferred). Tests use this
    /// to run on lavapipe in CI.
    AllowSoftware,
}

/// What the chosen adapter is, for messages and reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// Adapter name as the driver reports it (e.g. "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 19…)").
    pub name: String,
    /// Backend API: "Vulkan", "Metal", "Dx12"…
    pub backend: String,
    /// "DiscreteGpu", "IntegratedGpu", "VirtualGpu", "Cpu" or "Other".
    pub device_type: String,
    /// Driver name and version, where reported.
    pub driver: String,
    /// True for a CPU (software) adapter.
    pub software: bool,
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        write!(f, ")")
    }
}

/// Why GPU work could not be done. Every variant carries a message fit to show the user.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum GpuError {
    /// No adapter matched the [`AdapterChoice`].
    #[error("no suitable GPU adapter: {0}")]
    NoAdapter(String),
    /// The adapter refused to open a device.
    #[error("could not open the GPU device: {0}")]
    RequestDevice(String),
    /// The device was lost (driver reset, GPU removed, timeout).
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),
    /// A WGSL kernel did not compile or a pipeline did not validate.
    #[error("GPU shader `{label}` failed to compile: {message}")]
    ShaderCompile {
        /// The shader module's or pipeline's label.
        label: String,
        /// wgpu's message (the compiler's or the validator's).
        message: String,
    },
    /// An allocation failed.
    #[error("GPU out of memory while allocating {what}: {message}")]
    OutOfMemory {
        /// The operation that allocated (its label).
        what: String,
        /// wgpu's message.
        message: String,
    },
    /// The map needs a buffer larger than the device allows.
    #[error("{what} needs {bytes} bytes but the GPU allows at most {limit} per buffer")]
    TooLarge {
        /// What does not fit: a buffer, or the map side in workgroups.
        what: String,
        /// Its size: bytes for a buffer (workgroups for the map side).
        bytes: u64,
        /// The device's limit in the same unit: the smaller of `max_buffer_size` and
        /// `max_storage_buffer_binding_size`, or `max_compute_workgroups_per_dimension`.
        limit: u64,
    },
    /// Any other validation or internal error reported by wgpu.
    #[error("GPU error: {0}")]
    Other(String),
}

/// A device and queue on one adapter, with error capture installed.
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: AdapterSummary,
    limits: wgpu::Limits,
    /// Set by the device-lost callback and the uncaptured-error handler.
    fault: Arc<Mutex<Option<GpuError>>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext").field("adapter", &self.info).finish_non_exhaustive()
    }
}

fn summary(info: &wgpu::AdapterInfo) -> AdapterSummary {
    let driver = [info.driver.as_str(), info.driver_info.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    AdapterSummary {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver,
        software: info.device_type == wgpu::DeviceType::Cpu,
    }
}

/// Preference order of adapter kinds (lower is better).
fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

impl GpuContext {
    /// Opens the best adapter allowed by `choice` (discrete > integrated > virtual > other >
    /// software) and a device on it with the adapter's own limits (large maps need more than
    /// the WebGPU defaults). The backends can be narrowed with `WGPU_BACKEND` as usual.
    pub fn new(choice: AdapterChoice) -> Result<Self, GpuError> {
        // wgpu can panic deep inside a broken driver stack; keep that from taking the caller down.
        match std::panic::catch_unwind(|| Self::open(choice)) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic while opening the adapter".into());
                Err(GpuError::NoAdapter(msg))
            }
        }
    }

    fn open(choice: AdapterChoice) -> Result<Self, GpuError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        desc.flags = wgpu::InstanceFlags::empty().with_env();
        let instance = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let seen: Vec<String> = adapters.iter().map(|a| summary(&a.get_info()).to_string()).collect();
        let adapter = adapters
            .into_iter()
            .filter(|a| choice == AdapterChoice::AllowSoftware || a.get_info().device_type != wgpu::DeviceType::Cpu)
            .min_by_key(|a| rank(a.get_info().device_type))
            .ok_or_else(|| {
                GpuError::NoAdapter(if seen.is_empty() {
                    "no Vulkan/Metal/DX12 adapter found (is a GPU driver installed?)".into()
                } else {
                    format!("only software adapters found ({}), used only when allowed (talus erode --gpu-software, or TALUS_GPU_SOFTWARE=1)", seen.join("; "))
                })
            })?;
        let info = summary(&adapter.get_info());
        let limits = adapter.limits();
        let dd = wgpu::DeviceDescriptor {
            label: Some("talus-gpu"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&dd)).map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let fault: Arc<Mutex<Option<GpuError>>> = Arc::new(Mutex::new(None));
        {
            let f = fault.clone();
            device.set_device_lost_callback(move |reason, msg| {
                if let Ok(mut g) = f.lock() {
                    g.get_or_insert(GpuError::DeviceLost(format!("{reason:?}: {msg}")));
                }
            });
            let f = fault.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                if let Ok(mut g) = f.lock() {
                    g.get_or_insert(classify(&e, "uncaptured"));
                }
            }));
        }
        Ok(Self { device, queue, info, limits, fault })
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// What the adapter is.
    pub fn info(&self) -> &AdapterSummary {
        &self.info
    }

    /// The device limits (the adapter's own).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The first fault recorded outside an error scope (device lost, uncaptured error), if any.
    pub fn check(&self) -> Result<(), GpuError> {
        match self.fault.lock() {
            Ok(g) => match &*g {
                Some(e) => Err(e.clone()),
                None => Ok(()),
            },
            Err(_) => Err(GpuError::Other("error state poisoned".into())),
        }
    }

    /// Refuses a buffer of `bytes` that the device cannot hold as one storage binding.
    pub fn check_fits(&self, what: &str, bytes: u64) -> Result<(), GpuError> {
        let limit = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        if bytes > limit {
            return Err(GpuError::TooLarge { what: what.into(), bytes, limit });
        }
        Ok(())
    }

    /// Runs `f` inside out-of-memory and validation error scopes and returns its value or the
    /// first captured error (`what` names the work in the message).
    pub fn scoped<T>(&self, what: &str, f: impl FnOnce(&wgpu::Device) -> T) -> Result<T, GpuError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f(&self.device);
        let ve = pollster::block_on(val.pop());
        let oe = pollster::block_on(oom.pop());
        if let Some(e) = oe {
            return Err(classify(&e, what));
        }
        if let Some(e) = ve {
            return Err(classify(&e, what));
        }
        self.check()?;
        Ok(out)
    }

    /// A zeroed storage buffer of `bytes` (rounded up to 4) with `COPY_SRC | COPY_DST` besides
    /// `STORAGE`, after checking the size against the limits.
    pub fn storage_buffer(&self, label: &str, bytes: u64) -> Result<wgpu::Buffer, GpuError> {
        let size = bytes.max(4).next_multiple_of(4);
        self.check_fits(label, size)?;
        self.scoped(label, |d| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// A zeroed buffer of `words` u32 that kernels write as storage and dispatches read as their
    /// indirect arguments (`INDIRECT`), `COPY_SRC | COPY_DST` too.
    pub fn indirect_buffer(&self, label: &str, words: u64) -> Result<wgpu::Buffer, GpuError> {
        self.scoped(label, |d| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: words.max(1) * 4,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// A storage buffer holding `data` (`COPY_SRC | COPY_DST` too).
    pub fn storage_buffer_init<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> Result<wgpu::Buffer, GpuError> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.is_empty() {
            return self.storage_buffer(label, 4);
        }
        self.check_fits(label, bytes.len() as u64)?;
        self.scoped(label, |d| {
            d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            })
        })
    }

    /// A uniform buffer holding `data` (`COPY_DST` so it can be rewritten).
    pub fn uniform_buffer<T: bytemuck::Pod>(&self, label: &str, data: &T) -> Result<wgpu::Buffer, GpuError> {
        self.scoped(label, |d| {
            d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::bytes_of(data),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            })
        })
    }

    /// Compiles WGSL `source`; a compile error comes back as [`GpuError::ShaderCompile`].
    pub fn shader(&self, label: &str, source: &str) -> Result<wgpu::ShaderModule, GpuError> {
        self.scoped(label, |d| {
            d.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            })
        })
        .map_err(|e| as_shader_error(e, label))
    }

    /// A compute pipeline for `entry` of `module` with an automatic layout.
    pub fn compute_pipeline(
        &self,
        label: &str,
        module: &wgpu::ShaderModule,
        entry: &str,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        self.compute_pipeline_with(label, module, entry, &[])
    }

    /// [`Self::compute_pipeline`] with values for the module's `override` constants.
    pub fn compute_pipeline_with(
        &self,
        label: &str,
        module: &wgpu::ShaderModule,
        entry: &str,
        constants: &[(&str, f64)],
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        self.scoped(label, |d| {
            d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions { constants, ..Default::default() },
                cache: None,
            })
        })
        .map_err(|e| as_shader_error(e, label))
    }

    /// A bind group of `buffers` in binding order (binding `i` is `buffers[i]`, whole) on `layout`.
    pub fn bind_buffers(
        &self,
        label: &str,
        layout: &wgpu::BindGroupLayout,
        buffers: &[&wgpu::Buffer],
    ) -> Result<wgpu::BindGroup, GpuError> {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        self.scoped(label, |d| {
            d.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout, entries: &entries })
        })
    }

    /// One layout for every kernel of a model: binding 0 its uniform block, bindings
    /// `1..=storage` read-write storage buffers (the stream-power model and the build's detail
    /// passes bind their buffers this way, swapping ping-pong pairs between bind groups).
    pub fn kernel_layout(&self, label: &str, storage: u32) -> Result<KernelLayout, GpuError> {
        let entries: Vec<wgpu::BindGroupLayoutEntry> = (0..=storage)
            .map(|b| wgpu::BindGroupLayoutEntry {
                binding: b,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: if b == 0 {
                        wgpu::BufferBindingType::Uniform
                    } else {
                        wgpu::BufferBindingType::Storage { read_only: false }
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let group = self.scoped(label, |d| {
            d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(label), entries: &entries })
        })?;
        let pipeline = self.scoped(label, |d| {
            d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(&group)],
                immediate_size: 0,
            })
        })?;
        Ok(KernelLayout { group, pipeline })
    }

    /// Wall-clock seconds one dispatch of `pipeline` over a `grid` of workgroups takes, the
    /// kernel run alone `reps` times in one compute pass after one warm-up submit (for the
    /// benches' per-kernel profiles; repeating a kernel alone changes the buffers it writes, so
    /// a job is not fit to continue after it).
    pub fn time_dispatches(
        &self,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        grid: (u32, u32),
        reps: u32,
    ) -> Result<f64, GpuError> {
        let submit = |n: u32| -> Result<(), GpuError> {
            let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("timing") });
            {
                let mut cp = enc
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("timing"), timestamp_writes: None });
                cp.set_pipeline(pipeline);
                cp.set_bind_group(0, group, &[]);
                for _ in 0..n {
                    cp.dispatch_workgroups(grid.0, grid.1, 1);
                }
            }
            self.queue.submit([enc.finish()]);
            self.wait()
        };
        submit(1)?;
        let t = std::time::Instant::now();
        submit(reps.max(1))?;
        Ok(t.elapsed().as_secs_f64() / reps.max(1) as f64)
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::DeviceLost(e.to_string()))?;
        self.check()
    }

    /// Copies `bytes` bytes from `src` at `offset` to the host (blocking). `offset` and `bytes`
    /// must be multiples of 4.
    pub fn read_bytes(&self, src: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>, GpuError> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = self.scoped("readback staging", |d| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback staging"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
        enc.copy_buffer_to_buffer(src, offset, &staging, 0, bytes);
        self.queue.submit([enc.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(GpuError::Other(format!("readback failed: {e}"))),
            Err(_) => return Err(GpuError::DeviceLost("readback never completed".into())),
        }
        let out = staging.get_mapped_range(..).to_vec();
        staging.unmap();
        Ok(out)
    }

    /// Reads `count` f32 values from `src` starting at element `first`.
    pub fn read_f32(&self, src: &wgpu::Buffer, first: u64, count: usize) -> Result<Vec<f32>, GpuError> {
        let b = self.read_bytes(src, first * 4, count as u64 * 4)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Reads `count` u32 values from `src` starting at element `first`.
    pub fn read_u32(&self, src: &wgpu::Buffer, first: u64, count: usize) -> Result<Vec<u32>, GpuError> {
        let b = self.read_bytes(src, first * 4, count as u64 * 4)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Reads `count` i32 values from `src` starting at element `first`.
    pub fn read_i32(&self, src: &wgpu::Buffer, first: u64, count: usize) -> Result<Vec<i32>, GpuError> {
        let b = self.read_bytes(src, first * 4, count as u64 * 4)?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Overwrites `dst` from element `first` with `data`.
    pub fn write<T: bytemuck::Pod>(&self, dst: &wgpu::Buffer, first: u64, data: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if !bytes.is_empty() {
            self.queue.write_buffer(dst, first * std::mem::size_of::<T>() as u64, bytes);
        }
    }
}

fn classify(e: &wgpu::Error, what: &str) -> GpuError {
    match e {
        wgpu::Error::OutOfMemory { .. } => GpuError::OutOfMemory { what: what.into(), message: e.to_string() },
        wgpu::Error::Validation { description, .. } => GpuError::Other(format!("{what}: {description}")),
        wgpu::Error::Internal { description, .. } => GpuError::Other(format!("{what}: {description}")),
    }
}

fn as_shader_error(e: GpuError, label: &str) -> GpuError {
    match e {
        GpuError::Other(message) => GpuError::ShaderCompile { label: label.into(), message },
        other => other,
    }
}

/// A bind-group layout with its pipeline layout ([`GpuContext::kernel_layout`]).
pub struct KernelLayout {
    group: wgpu::BindGroupLayout,
    pipeline: wgpu::PipelineLayout,
}

impl KernelLayout {
    /// A bind group of `buffers` in binding order (the uniform block first).
    pub fn bind(&self, ctx: &GpuContext, label: &str, buffers: &[&wgpu::Buffer]) -> Result<wgpu::BindGroup, GpuError> {
        ctx.bind_buffers(label, &self.group, buffers)
    }

    /// The compute pipeline of `entry` in `module` with this layout.
    pub fn pipeline(
        &self,
        ctx: &GpuContext,
        label: &str,
        module: &wgpu::ShaderModule,
        entry: &str,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        ctx.scoped(label, |d| {
            d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&self.pipeline),
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        })
    }
}

/// Number of workgroups of `size` threads that cover `n` items.
pub fn groups(n: u32, size: u32) -> u32 {
    n.div_ceil(size.max(1))
}

/// True when the GPU tests must find an adapter (CI sets `TALUS_REQUIRE_GPU_TESTS=1`): without
/// it a test that cannot open one prints a notice and skips.
pub fn gpu_tests_required() -> bool {
    std::env::var("TALUS_REQUIRE_GPU_TESTS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Opens a context for a test (software adapters allowed). `None` means skip: only when no
/// adapter exists and [`gpu_tests_required`] is false. When required, a missing adapter panics
/// (the test fails).
#[doc(hidden)]
pub fn test_context() -> Option<GpuContext> {
    match GpuContext::new(AdapterChoice::AllowSoftware) {
        Ok(c) => Some(c),
        Err(e) => {
            if gpu_tests_required() {
                panic!("TALUS_REQUIRE_GPU_TESTS is set but no GPU adapter opened: {e}");
            }
            eprintln!("NOTICE: skipping GPU test, no adapter ({e}); set TALUS_REQUIRE_GPU_TESTS=1 to make this fail");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_round_trip_and_limits_are_enforced() {
        let Some(ctx) = test_context() else { return };
        let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 3.0).collect();
        let buf = ctx.storage_buffer_init("rt", &data).unwrap();
        assert_eq!(ctx.read_f32(&buf, 0, data.len()).unwrap(), data);
        assert_eq!(ctx.read_f32(&buf, 10, 5).unwrap(), data[10..15]);
        ctx.write(&buf, 2, &[42.0f32, 43.0]);
        assert_eq!(ctx.read_f32(&buf, 0, 5).unwrap(), vec![-3.0, -2.5, 42.0, 43.0, -1.0]);
        let e = ctx.storage_buffer("huge", u64::MAX / 2).unwrap_err();
        assert!(matches!(e, GpuError::TooLarge { .. }), "{e}");
        assert!(!ctx.info().name.is_empty());
    }

    #[test]
    fn a_broken_shader_is_a_typed_error_not_a_panic() {
        let Some(ctx) = test_context() else { return };
        let e = ctx.shader("broken", "@compute @workgroup_size(1) fn main() { let x: f32 = ; }").unwrap_err();
        assert!(matches!(e, GpuError::ShaderCompile { .. }), "{e}");
        // The context stays usable afterwards.
        let ok = ctx.shader("fine", "@compute @workgroup_size(1) fn main() {}").unwrap();
        ctx.compute_pipeline("fine", &ok, "main").unwrap();
        let e = ctx.compute_pipeline("missing entry", &ok, "nope").unwrap_err();
        assert!(matches!(e, GpuError::ShaderCompile { .. }), "{e}");
    }

    #[test]
    fn hardware_choice_refuses_software_adapters() {
        // On a machine with only lavapipe, `Hardware` must fail with a message naming it; on a
        // machine with a GPU it must not pick a CPU adapter.
        match GpuContext::new(AdapterChoice::Hardware) {
            Ok(c) => assert!(!c.info().software, "{}", c.info()),
            Err(e) => assert!(matches!(e, GpuError::NoAdapter(_)), "{e}"),
        }
    }
}
