//! GPU uniform blocks as named `#[repr(C)]` [`bytemuck::Pod`] structs, one field per member of
//! the WGSL struct they feed (issue #14 item 3): a kernel's parameters are written by name, never
//! by index into a word array.
//!
//! `wgsl_uniform!` declares such a struct and, alongside it, the list of
//! its fields with their byte offsets ([`WgslUniform::FIELDS`]). The test helper
//! `assert_matches_wgsl` parses the shader with naga (the compiler wgpu itself runs) and checks
//! that the WGSL struct has the same members, in the same order, at the same offsets, and the
//! same size: a field added on one side only, two swapped, or a padding mistake fails a test
//! instead of feeding a kernel shifted parameters.
//!
//! Every member of these blocks is a 4-byte scalar (`u32`/`f32`) so the WGSL uniform layout
//! equals the C layout: no implicit padding on either side. The explicit `_pad` members round
//! the block up to a multiple of 16 bytes, as uniform buffers require.

/// A `#[repr(C)]` Pod struct mirroring a WGSL uniform struct (see the module doc).
pub trait WgslUniform: bytemuck::Pod {
    /// Each field's name and byte offset, in declaration order.
    const FIELDS: &'static [(&'static str, usize)];
}

/// Declares a uniform block: a `#[repr(C)]`, `Pod`, `Default` struct with the given fields, and
/// its [`WgslUniform`] field table. Field names must be the WGSL member names.
macro_rules! wgsl_uniform {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
        $vis struct $name {
            $( $(#[$fmeta])* $field: $ty, )*
        }

        impl $crate::gpu::uniform::WgslUniform for $name {
            const FIELDS: &'static [(&'static str, usize)] =
                &[ $( (stringify!($field), ::std::mem::offset_of!($name, $field)) ),* ];
        }
    };
}
pub(crate) use wgsl_uniform;

/// Checks that the WGSL struct `struct_name` in `source` has exactly the members of `T`, in the
/// same order and at the same byte offsets, and the same size (panics with the difference).
#[cfg(test)]
pub(crate) fn assert_matches_wgsl<T: WgslUniform>(source: &str, struct_name: &str) {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("WGSL does not parse: {e}"));
    let ty = module
        .types
        .iter()
        .map(|(_, t)| t)
        .find(|t| t.name.as_deref() == Some(struct_name))
        .unwrap_or_else(|| panic!("no struct {struct_name} in the WGSL"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("{struct_name} is not a struct") };
    let wgsl: Vec<(String, usize)> =
        members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset as usize)).collect();
    let rust: Vec<(String, usize)> = T::FIELDS.iter().map(|&(n, o)| (n.to_string(), o)).collect();
    assert_eq!(rust, wgsl, "{struct_name}: Rust fields (left) differ from the WGSL members (right)");
    assert_eq!(std::mem::size_of::<T>(), *span as usize, "{struct_name}: Rust size vs WGSL size");
    assert_eq!(std::mem::size_of::<T>() % 16, 0, "{struct_name}: a uniform block is a multiple of 16 bytes");
}
