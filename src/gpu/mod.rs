//! GPU erosion with wgpu compute shaders (issue #7). No Bevy here: the CLI uses it too.
//!
//! * [`context`]: instance → adapter → device/queue, typed [`GpuError`]s, buffer helpers.
//! * [`droplet`]: particle (droplet) erosion (seed 000, Beyer 2015), deterministic fixed-point books.
//! * [`fallback`]: the one wrapper every GPU model runs in: a GPU failure mid-run continues on
//!   the CPU from the last state read back, books continued, with a note as a value.
//! * [`uniform`]: uniform blocks as named `#[repr(C)]` Pod structs checked against their WGSL.
//! * [`pipe`]: the pipe model (Mei et al. 2007, Št'ava et al. 2008, seed 003) and thermal erosion.
//! * [`stream_power`]: the stream-power model, the default Simulate (Schott et al. 2023, pointer
//!   jumping after FastFlow, Jain et al. 2024).
//! * [`refine`]: the build's detail passes (a build that erodes on its way up, issue #34): the
//!   stream-power pass's stencils.
//!
//! The WGSL kernels live in the top-level `shaders/gpu/` folder and are embedded with
//! `include_str!`, so the binary runs anywhere. The CPU models in [`crate::core::erosion`] are the
//! reference; every GPU model implements the same [`crate::core::erosion::Simulation`] trait.

pub mod context;
pub mod fallback;
pub mod uniform;

pub use context::{AdapterChoice, AdapterSummary, GpuContext, GpuError};
pub use fallback::{GpuJob, Handover, ResilientGpuJob};
pub mod pipe;

pub use pipe::{GpuErosionJob, GpuJobError};
pub mod droplet;

pub use droplet::{GpuDropletError, GpuDropletJob, GpuDropletOptions};
pub mod refine;
pub mod stream_power;

pub use stream_power::{GpuStreamPowerJob, GpuStreamPowerOptions};
