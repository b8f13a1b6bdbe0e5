//! Grid hydraulic erosion with the virtual-pipe shallow-water model (SPEC §2c, seed 003).
//!
//! After Mei, Decaudin & Hu 2007, "Fast Hydraulic Erosion Simulation and Visualization on GPU",
//! with the capacity depth limit and the interleaved thermal step of Št'ava et al. 2008, and the
//! MacCormack option seed 003 added (Selle et al. 2008, "An Unconditionally Stable MacCormack
//! Method"). Per node: terrain `b`, water depth `d`, suspended sediment `s` (metres of material),
//! outflow fluxes `f_L, f_R, f_T, f_B` (m³/s; T = towards y−1, B = towards y+1) and velocity
//! `(u, v)` (m/s). `lx = ly` is the cell size.
//!
//! ## One time step
//!
//! ```text
//! 1  water:      d1 = d + Δt·r                       (r: rain + river sources, m/s)
//! 2  flux:       f_k ← max(0, f_k + Δt·A·g·Δh_k / l),  Δh_k = (b + d1) − (b_k + d1_k)
//!                K = min(1, d1·lx·ly / (Σ_k f_k · Δt)),  f_k ← K·f_k
//! 3  water/vel:  d2 = d1 + Δt·(Σ f_in − Σ f_out)/(lx·ly),  d̄ = (d1 + d2)/2
//!                u = (f_R(x−1) − f_L + f_R − f_L(x+1)) / (2·ly·d̄),   v likewise with T/B
//! 4  erosion:    C = Kc · max(sin α, min_tilt) · |v|_f · min(1, d2 / max_depth)
//!                C > s:  Δb = −min(Ks·(C − s)·hardness, max(0, b − sea)),
//!                else    Δb = Kd·(s − C);                          s1 = s − Δb
//! 5  transport:  s = s1(x − u·Δt/lx, y − v·Δt/ly)             (semi-Lagrangian, bilinear)
//!                or MacCormack: ŝ = back(s1), s̃ = forward(ŝ), s = ŝ + (s1 − s̃)/2,
//!                clamped to the min/max of the 4 nodes the backward sample used
//!                or (our addition) a conservative forward remap: s1 at each node moves to
//!                x + u·Δt/lx and is shared bilinearly among the nodes around that point
//! 6  thermal:    optional, see [`super::thermal`] (every `thermal_every` steps)
//! 7  evaporation d = d2·(1 − Ke·Δt)
//! ```
//!
//! With a sea level `z_s`, sea nodes (`b < z_s`) follow *The sea* below in steps 2, 4 and 7, and
//! shore nodes (`b = z_s`) in step 4.
//!
//! `sin α = |∇b| / √(1 + |∇b|²)` and the speed `|v|_f` are discretised so that they see
//! odd–even (checkerboard) modes, see *Grid-scale rills* below, and the same in every direction,
//! see *Isotropic upwind tilt*.
//!
//! ## Grid-scale rills (why the tilt is upwind and the speed comes from the faces)
//!
//! Seed 003 takes `∇b` by central differences and `|v|` from the cell-centre velocity `(u, v)`.
//! Both are blind to an odd–even mode `b + ε(−1)^x`: the central difference skips the node, and
//! the opposite face fluxes of a ridge node (water sheeting off both sides) or a rill node
//! (water arriving from both sides) cancel in `u`. Nothing in step 4 then damps grid-scale
//! relief, while the depth-independent capacity lets a one-cell rill that collects its
//! neighbours' water keep its speed: without thermal erosion, steep terrain grew axis-aligned
//! one-cell rills and checkerboards (test `steep_slope_without_thermal_grows_no_grid_scale_rills`:
//! second-difference roughness of a noisy 0.5 slope ×280 in 800 steps, now ×11). Erosion lowers
//! the surface at a rate that grows with `|∇b|`, a Hamilton–Jacobi term `∂b/∂t = −F(|∇b|)`, whose
//! monotone discretisation is the upwind (Godunov, Rouy–Tourin) gradient:
//!
//! ```text
//! ∂b/∂x ≈ max(b − b_L, b − b_R, 0)/lx,   ∂b/∂y ≈ max(b − b_T, b − b_B, 0)/ly
//! ```
//!
//! the steepest one-sided descent along each axis, i.e. towards where the water on the node can
//! go. On a plane it equals the central difference; a bump or ridge node gets a steeper tilt (it
//! erodes faster), a pit or rill node a gentler one (it fills). The speed is the root mean square
//! of the four face velocities, each the net flux through the face over `l·d̄` and clamped to
//! `lx/Δt` like `u`, `v`:
//!
//! ```text
//! u_L = (f_R(x−1) − f_L)/(ly·d̄),  u_R = (f_R − f_L(x+1))/(ly·d̄),  v_T, v_B likewise
//! |v|_f = √(½·(u_L² + u_R² + v_T² + v_B²))
//! ```
//!
//! which is `|(u, v)|` for uniform flow and counts the water that a ridge sheds on both sides.
//! Either change alone leaves the rills growing (slower); together the erosion change on that
//! slope keeps a second-difference roughness of ~0.12× its depth (1.4× before). Transport still
//! uses the cell-centre `(u, v)` (the seed's schemes). Beyond a wall or drain the tilt sees the
//! terrain extrapolated from the opposite neighbour (`2b − b_opposite`), so the one-sided descent
//! there is the slope towards the inner neighbour.
//!
//! ## Isotropic upwind tilt (issue #13: axis streaks)
//!
//! The per-axis upwind gradient above is exact on any plane, but its response to relief at the
//! grid scale depends on how that relief lies on the grid: it is a function of the L, R, T, B
//! differences only. On the default island (513², 2 m, 2000 steps) it was the cause of straight
//! streaks along the flow wherever the flow ran along a grid axis (the north, south, east and west
//! flanks), none on the flanks facing a diagonal: the power of the change `Δh` along the axes was
//! 1.44× (the map's 4.05×) that of other directions at the same wavelength (`talus analyze`).
//! Found by switching one ingredient at a time: the upwind tilt taken isotropically brought it
//! to 1.07× (map 1.35×); eight pipes instead of four (diagonals of length `√2·l`, equal
//! cross-sections `A/(1 + √2)`, same net flow on a plane) only to 1.19× (map 2.23×) at ~1.5× the
//! run time, and with the tilt fixed to 1.11× (map 1.27×); no transport at all, 0.88× (map
//! 1.46×), but a different model; central differences, checkerboard spikes. So the seed's four
//! pipes stay. (With 1 m cells, i.e. twice as steep, fine streaks remain on the steepest coasts:
//! map 1.81×, 1.41× with eight pipes.) The tilt is the mean of the upwind gradients in the axis
//! frame and in the frame turned by 45°, whose differences span `√2·l`:
//!
//! ```text
//! g_x = max(b − b_L, b − b_R, 0)/lx,      g_y = max(b − b_T, b − b_B, 0)/ly
//! g_p = max(b − b_TL, b − b_BR, 0)/lx,    g_q = max(b − b_TR, b − b_BL, 0)/lx
//! |∇b|² = ½·(g_x² + g_y²) + ¼·(g_p² + g_q²)
//! ```
//!
//! Both frames give `|∇b|²` exactly on a plane, so smooth slopes erode as before; a bump or ridge
//! node still gets a steeper tilt, a pit or rill node a gentler one, now whichever way the rill
//! runs. Beyond an edge a diagonal neighbour is extrapolated from the opposite diagonal like the
//! axis ones (a corner's outward diagonals, with no opposite inside, count as level).
//! Test `slopes_grow_the_same_rills_whichever_way_they_face`: on a noisy 0.3 slope the rill
//! roughness was 0.22–0.24 facing an axis against 0.12–0.16 facing a diagonal, now 0.05–0.06
//! in every direction.
//!
//! ## Choices the papers leave open (documented here)
//!
//! * **Minimum tilt**: `sin α` is raised to `min_tilt` (seed 003 uses 0.1) so flowing water on
//!   flat ground still picks up a little sediment; without it flat river beds never deepen.
//! * **Depth limit**: capacity is scaled by `min(1, d2/max_depth)` (Št'ava et al.'s ramp): thin
//!   sheets of rain water, whose pipe-model velocity is large, carry little; `max_depth = 0`
//!   switches the limit off (seed 003's behaviour).
//! * **Velocity and sub-steps**: where `d̄ < 1e-6 m` the velocity is 0 (no water to move), and
//!   each component is clamped to `vmax = min(max_speed, lx/Δt)`, a CFL number of at most 1: the
//!   back-traced point stays within one cell, which the transport relies on. The seed clamps to
//!   `lx/Δt`, which caps the flow N× lower on N× finer cells; here a time step `dt` is taken as
//!   `n = ⌈max_speed·dt/lx⌉` sub-steps of `Δt = dt/n`, each steps 1–5 and 7 above, so flow up to
//!   `max_speed` is followed at any cell size. `Ks` and `Kd` are fractions per time step, so a
//!   sub-step takes `1 − (1 − K)^(1/n)`; the thermal step 6 runs once per time step
//!   ([`Stepping`]). On the default island (2 m, 0.1 s, 20 m/s) `n = 1` and nothing changes.
//! * **Sea** ([`JobInputs::sea_level`](super::JobInputs::sea_level)): erosion never takes a node below the sea, nor anything
//!   from a node at or under it (the sea is the base level every river ends at, as in the
//!   droplet and snowball models), and the sea is a water body at a fixed level, see *The sea*.
//!   Without the floor the default island lost 3.3 % of its land to the sea in 2000 steps,
//!   0.35 % with it, 0.49 % with the sea as a water body (the coast now drains into the sea
//!   instead of lying under water backed up from it).
//! * **Drain edges**: outside the map the terrain continues by linear extrapolation of the edge
//!   node and its inner neighbour (`b_out = 2·b − b_inner`) and holds no water; water flowing
//!   there leaves (booked in [`WaterBudget::drained`]). Sediment leaves with the flow: an edge
//!   node loses the part of its sediment the outward Courant number `c = |u_out|·Δt/lx` carries
//!   across (`s·(1 − (1 − c_x)(1 − c_y))`), booked as `lost_at_border`. **Walls** have zero flux
//!   and lose nothing; **wrap** makes the opposite node the neighbour.
//! * **Advection is not conservative**: bilinear back-tracing conserves mass only in uniform
//!   flow. The difference `Σs_after − Σs_before + lost` of each transport pass is booked,
//!   signed, as `clamped`, so the sediment books close and the numerical gain or loss (including
//!   the MacCormack limiter's clamp) stays visible.
//! * **Order**: the water increment of the next step is fused into this step's last pass
//!   (`d ← d2·(1 − Ke·Δt) + Δt·r`), so the exposed water field already holds the rain of the
//!   coming step; the job applies the first increment when it is built. Thermal moves terrain
//!   only and transport does not read `d`, so evaporation before transport changes nothing.
//!
//! ## The sea: a reservoir at a fixed level (issue #13)
//!
//! Mei et al. and Št'ava et al. model water on land only; a map with a sea needs the sea as a
//! water body. Here it is a constant-head (Dirichlet) boundary of the shallow-water system: the
//! water surface of every sea node is held at the sea level `z_s`, so the sea takes in whatever
//! runs or rains into it (an unbounded reservoir) and never flows, onto the land or anywhere.
//! A node is a sea node while its bed is under the sea level, decided from the bed at the start
//! of each step (so a basin below the sea level inland counts as sea too, as in the other
//! models). A node whose bed is exactly at the sea level is *shore*: water flows over it as on
//! land, but it neither erodes (the floor) nor rises (the cap), so what it carries moves on.
//!
//! ```text
//! sea node (b < z_s):
//! 2  flux:    f_k = 0                                       (nothing flows out of the sea)
//! 3  water:   d2 = d1 + Δt·Σf_in/(lx·ly)                     (velocity as on land)
//! 4  bed:     C = 0 (still water), no erosion;  Δb = min(s, z_s − b),  b' = min(b + Δb, z_s)
//!             s1 = s − (b' − b)
//! 7  level:   d = z_s − b'                                  (no evaporation, the rain joins the sea)
//!    books:   sea += d1 + Δt·Σf_in/(lx·ly) + Δt·r − (z_s − b')
//! start:      d = z_s − b;   sea += Δt·r − (z_s − b)
//! shore (b = z_s):  every step as on land, then b' = min(b', z_s)  (erosion is 0 there already)
//! ```
//!
//! A land node next to the sea sees a neighbour surface at exactly `z_s` (up to the rounding of
//! `b + (z_s − b)`) and drains into it; whatever arrives is booked in [`WaterBudget::sea`] and the
//! level is reset, so `rain = evaporated + drained + sea + stored` still holds (`stored` includes
//! the sea's water). Suspended sediment that reaches a sea node settles there at once, as a
//! river's load drops where its jet spreads into standing water (Wright 1977, "Sediment
//! transport and deposition at river mouths: a synthesis", GSA Bulletin 88), so deltas build
//! next to the mouths, up to the sea level and no higher. A filled node is shore: the river
//! flows on over it and drops its load at the next sea node, so the delta grows seawards with a
//! flat top at the sea level (a sea node whose bed stayed at the sea level would swallow the
//! river there and keep its load in suspension for ever). Whatever a sea node cannot hold stays
//! suspended (booked in `suspended`) and moves with the water. The sea level is
//! [`JobInputs::sea_level`](super::JobInputs::sea_level): metres, any finite value, default `None` (no sea; a non-finite
//! value is no sea too, and the model is then bit for bit the one without these rules).
//! Thermal erosion (step 6) moves material as it would without a sea, and may pile a sea node
//! above the sea level, which makes it land.
//!
//! Before, the sea nodes were land under water: rain and rivers filled them to about 0.9 m
//! (where rain and evaporation balance) and the water ran on across the sea to the map's edges,
//! carrying and creating sediment. On the default island (513², 2 m cells, 2000 steps, sea level
//! 0) that raised the sea floor by 1.0·10⁶ m·nodes (411 sea nodes rose above the sea), sent
//! 6.2·10⁶ m·nodes out across the edges and booked +7.0·10⁶ as `clamped` (the semi-Lagrangian
//! scheme's gain in that flow). Now the sea floor rises by 6·10⁴ m·nodes, all within 20 nodes of
//! the coast and 96 % within 10 (10 806 sea nodes filled to the sea level: a beach-like strand
//! round the island), nothing leaves across the edges, and `clamped` is −3.8·10⁵ (a third of the
//! 1.2·10⁶ eroded): the semi-Lagrangian scheme's net loss, to which the coast adds, since the
//! back-trace of a sea node, whose deep water moves slowly, takes in less than the coast node
//! sends (the `Conservative` scheme loses nothing). Land lost 0.49 % (0.35 %), no pits or spikes,
//! map anisotropy 1.20 / 1.04 (1.32 / 0.98). A step costs the same without a sea (the sea rules
//! are compiled out of the loops) and about 5 % more with one.
//!
//! ## Implementation
//!
//! Flat `f32` fields; three sweeps per step, each parallel over rows with rayon: (A) flux,
//! (B) water, velocity, erosion/deposition, evaporation and the next rain (writes a second
//! terrain buffer so the slope reads stay unmodified), (C) transport (two sweeps for
//! MacCormack). Interior rows use bounds-check-free loops over equal-length slices; the
//! boundary ring goes through one boundary-aware path. Every value is a pure function of the
//! previous fields and every sum is taken per row in a fixed order, so results are bit-identical
//! for any number of threads.

mod consts;
mod job;
mod params;
mod transport;
mod water;

pub use job::{PipeJob, WaterBudget};
pub use params::{Advection, MAX_SUB_STEPS, PipeParams, RiverSource, Stepping};
pub(crate) use water::{add_source, fill_sea, sea_floor};

/// Upper bound on a pipe flux before the `K` scaling (keeps `inf·0` out of extreme inputs).
const FLUX_MAX: f32 = 1.0e30;
/// Mean depth below which the water is considered still (metres).
const DEPTH_EPS: f32 = 1.0e-6;

#[cfg(test)]
mod tests;
