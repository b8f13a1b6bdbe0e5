//! The data overlays of the View section (issue #5), without Bevy: colour ramps, the per-node
//! RGBA image the terrain material blends over the lit terrain, and the legend that explains it.
//!
//! The image has one texel per node, row-major: texel `(x, y)` is node `(x, y)`, at byte
//! `4·(y·width + x)`. Colours are sRGB bytes; alpha is the overlay's own coverage (the material
//! multiplies it by the opacity slider), so quantities that are zero almost everywhere (flow,
//! erosion, water) leave the terrain visible between their features.
//!
//! Each overlay maps its value `v` to `t ∈ [0, 1]` and `t` to a colour on a ramp (piecewise
//! linear between evenly spaced stops):
//!
//! * **Flow** (seed 000's flow map): `t = (ln(1 + f) − ln(1 + lo)) / (ln(1 + hi) − ln(1 + lo))`
//!   (log scale, on by default; auto range from the median flowing node to the largest flow;
//!   linear `t = (f − lo)/(hi − lo)` when off), heat ramp, alpha `min(1, t / 0.35)`.
//! * **Water depth / speed** (pipe model): `t = (v − lo)/(hi − lo)`, blue / viridis ramps, drawn
//!   only where the water is deeper than [`WET_DEPTH`].
//! * **Erosion/deposition**: the net change `v = deposited − eroded` on a diverging ramp over the
//!   symmetric range `[−r, r]`: `t = ½ + v / (2r)`; eroded red, deposited blue, alpha
//!   `min(1, |v| / (0.15·r))`.
//! * **Rivers and lakes**: masks from [`crate::core::erosion::masks`] — rivers where
//!   `ln(1 + f)/ln(1 + f_max) ≥ river_level`, lakes from the pipe model's standing water
//!   (deep and slow) or the terrain's depressions filled to their spill points (priority flood).
//! * **Hardness**: the erodibility multiplier `k ∈ [0, 1]` (dark = hard rock).
//!
//! Auto ranges use the 99th percentile of the magnitudes (the flow's log scale uses the true
//! maximum, the trunk river being the point of it, and starts at the median so hillslopes stay
//! clear), so a handful of extreme nodes do not wash the map out. When the chosen overlay has no data the image is `None` and the legend says why.

use crate::core::Heightmap;
use crate::core::erosion::masks;
use crate::editor::look::overlay::{LakeSource, OverlayKind, OverlayParams};

/// Water shallower than this (metres) counts as dry for the water overlays.
pub const WET_DEPTH: f32 = 0.005;

/// A colour ramp: sRGB stops, evenly spaced over `t ∈ [0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ramp(pub &'static [[u8; 3]]);

/// Flow heat map: black-purple-red-orange-yellow (inferno-like, reads well over green and grey).
pub const HEAT: Ramp =
    Ramp(&[[20, 11, 52], [87, 16, 110], [159, 42, 99], [212, 72, 66], [245, 125, 21], [250, 193, 39], [252, 255, 164]]);
/// Water depth: pale cyan (shallow) to deep navy.
pub const DEPTH: Ramp = Ramp(&[[190, 240, 255], [90, 180, 235], [30, 110, 200], [12, 50, 140], [5, 18, 70]]);
/// Water speed: viridis.
pub const SPEED: Ramp = Ramp(&[[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]]);
/// Erosion/deposition, diverging: eroded red (t = 0), unchanged white (½), deposited blue (1).
pub const DIVERGING: Ramp = Ramp(&[[178, 24, 43], [239, 138, 98], [247, 247, 247], [103, 169, 207], [33, 102, 172]]);
/// Hardness: hard rock dark slate (k = 0) to soft ground pale sand (k = 1).
pub const HARDNESS: Ramp = Ramp(&[[40, 36, 58], [110, 96, 110], [190, 160, 120], [245, 228, 185]]);
/// River mask colour.
pub const RIVER: [u8; 3] = [40, 200, 255];
/// Lake mask colour.
pub const LAKE: [u8; 3] = [20, 60, 210];

impl Ramp {
    /// The colour at `t` (clamped to `[0, 1]`; NaN reads as 0).
    pub fn at(&self, t: f32) -> [u8; 3] {
        let s = self.0;
        if s.len() == 1 {
            return s[0];
        }
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let x = t * (s.len() - 1) as f32;
        let i = (x.floor() as usize).min(s.len() - 2);
        let f = x - i as f32;
        let mut out = [0u8; 3];
        for c in 0..3 {
            out[c] = (s[i][c] as f32 + (s[i + 1][c] as f32 - s[i][c] as f32) * f).round() as u8;
        }
        out
    }
}

/// The RGBA overlay image: one texel per node, texel `(x, y)` = node `(x, y)`.
#[derive(Clone, Debug, PartialEq)]
pub struct OverlayImage {
    /// Texels per row: the map's nodes along x.
    pub width: usize,
    /// Rows of texels: the map's nodes along y.
    pub height: usize,
    /// `4·width·height` bytes, sRGB colour + coverage alpha.
    pub rgba: Vec<u8>,
}

impl OverlayImage {
    /// The texel of node `(x, y)`.
    pub fn texel(&self, x: usize, y: usize) -> [u8; 4] {
        let i = 4 * (y * self.width + x);
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2], self.rgba[i + 3]]
    }
}

/// What the legend draws under its title.
#[derive(Clone, Debug, PartialEq)]
pub enum LegendBody {
    /// A colour bar: the ramp, labels at positions `0 ..= 1` along it, and the unit.
    Ramp {
        /// The ramp the image was painted with.
        ramp: Ramp,
        /// Tick labels: position along the bar (`0` = low end, `1` = high end) and the value as text.
        labels: Vec<(f32, String)>,
        /// Unit of the labelled values: `m`, `m/s`, `particles`, `m²`…
        unit: String,
    },
    /// Mask colours with their meaning.
    Swatches(Vec<([u8; 3], String)>),
    /// No data to draw (the note says why).
    Empty,
}

/// The legend of an overlay.
#[derive(Clone, Debug, PartialEq)]
pub struct Legend {
    /// The overlay's name, shown at the top (`Flow`, `Water depth`…).
    pub title: String,
    /// What is drawn under the title: a colour bar, swatches or nothing.
    pub body: LegendBody,
    /// A line under the body: the scale used, or why there is nothing to draw.
    pub note: Option<String>,
}

/// An overlay ready to upload: the image (`None`: nothing to draw) and its legend (`None` when
/// the overlay is off).
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    /// The per-node RGBA image; `None` when there is nothing to draw.
    pub image: Option<OverlayImage>,
    /// The legend; `None` only when the overlay is off.
    pub legend: Option<Legend>,
}

/// The per-node data an overlay may draw, each `width × height` of `map` (a slice of another
/// length counts as missing).
#[derive(Clone, Copy, Debug)]
pub struct OverlayData<'a> {
    /// The terrain the overlay covers; its size fixes the length of every slice below.
    pub map: &'a Heightmap,
    /// Water depth per node, metres (pipe model; stream power for depth only).
    pub water: Option<&'a [f32]>,
    /// Water velocity `(u, v)` per node along x and y, metres per second (pipe model).
    pub velocity: Option<&'a [[f32; 2]]>,
    /// Flow per node: particles that crossed it (droplets, snowball) or drainage area (stream power).
    pub flow: Option<&'a [f32]>,
    /// Unit of `flow` for the legend: `particles` (droplets, snowball) or `m²` (drainage area).
    pub flow_unit: &'a str,
    /// Height removed at each node by the last run, metres (≥ 0).
    pub eroded: Option<&'a [f32]>,
    /// Height added at each node by the last run, metres (≥ 0).
    pub deposited: Option<&'a [f32]>,
    /// Erodibility multiplier per node, `[0, 1]` (1 = normal, 0 = unerodible).
    pub hardness: Option<&'a [f32]>,
}

impl<'a> OverlayData<'a> {
    /// Only the heights; everything else missing.
    pub fn heights(map: &'a Heightmap) -> Self {
        Self {
            map,
            water: None,
            velocity: None,
            flow: None,
            flow_unit: "particles",
            eroded: None,
            deposited: None,
            hardness: None,
        }
    }
    fn n(&self) -> usize {
        self.map.width * self.map.height
    }
    fn fit<T>(&self, s: Option<&'a [T]>) -> Option<&'a [T]> {
        s.filter(|s| s.len() == self.n() && !s.is_empty())
    }
}

/// A value for a legend label: whole numbers as they are, else 3 significant digits; scientific
/// outside `[0.01, 10 000)`.
pub fn format_value(v: f32) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() { "0".into() } else { format!("{v}") };
    }
    if !(0.01..10_000.0).contains(&a) {
        return format!("{v:.2e}");
    }
    if v.fract() == 0.0 {
        return format!("{v:.0}");
    }
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$}")
}

/// The `q`-quantile (`0 ..= 1`) of the finite values of `v` (0 when there are none).
pub fn quantile(v: impl Iterator<Item = f32>, q: f32) -> f32 {
    let mut xs: Vec<f32> = v.filter(|x| x.is_finite()).collect();
    if xs.is_empty() {
        return 0.0;
    }
    let k = ((xs.len() - 1) as f32 * q.clamp(0.0, 1.0)).round() as usize;
    let (_, x, _) = xs.select_nth_unstable_by(k, f32::total_cmp);
    *x
}

/// `(lo, hi)` with `hi > lo`, from the params' manual range or `auto`.
fn range(p: &OverlayParams, auto: (f32, f32)) -> (f32, f32) {
    let (lo, hi) = if p.auto_range { auto } else { (p.min, p.max) };
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let hi = if hi.is_finite() { hi } else { lo + 1.0 };
    if hi > lo { (lo, hi) } else { (lo, lo + 1e-6_f32.max(lo.abs() * 1e-6)) }
}

fn unit_t(v: f32, lo: f32, hi: f32) -> f32 {
    ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
}

fn empty(title: &str, why: &str) -> Overlay {
    Overlay {
        image: None,
        legend: Some(Legend { title: title.into(), body: LegendBody::Empty, note: Some(why.into()) }),
    }
}

fn paint(n: usize, mut f: impl FnMut(usize) -> ([u8; 3], f32)) -> Vec<u8> {
    let mut rgba = Vec::with_capacity(4 * n);
    for i in 0..n {
        let (c, a) = f(i);
        let a = if a.is_nan() { 0.0 } else { a.clamp(0.0, 1.0) };
        rgba.extend_from_slice(&[c[0], c[1], c[2], (a * 255.0).round() as u8]);
    }
    rgba
}

fn labels(lo: f32, hi: f32) -> Vec<(f32, String)> {
    vec![(0.0, format_value(lo)), (1.0, format_value(hi))]
}

/// The unit a flow legend reads in and the divisor from `unit` to it, for flows up to `hi`:
/// drainage areas (`m²`) of a world of many kilometres read in hectares or km² ("2.5 km²", not
/// "2.50e6 m²"); other units stay.
pub fn flow_display_unit(unit: &str, hi: f32) -> (f32, String) {
    match unit {
        "m²" if hi >= 1.0e6 => (1.0e6, "km²".into()),
        "m²" if hi >= 1.0e4 => (1.0e4, "ha".into()),
        _ => (1.0, unit.into()),
    }
}

/// Builds the overlay `p.kind` from `d`.
pub fn build(p: &OverlayParams, d: &OverlayData) -> Overlay {
    let (w, h) = (d.map.width, d.map.height);
    let n = d.n();
    let image = |rgba: Vec<u8>| Some(OverlayImage { width: w, height: h, rgba });
    match p.kind {
        OverlayKind::None => Overlay { image: None, legend: None },
        OverlayKind::Flow => {
            let title = "Flow";
            let Some(flow) = d.fit(d.flow) else {
                return empty(
                    title,
                    "No flow yet: run Droplets, Snowball or Stream power (the pipe model reports water depth and speed instead).",
                );
            };
            let fmax = flow.iter().copied().filter(|f| f.is_finite()).fold(0.0f32, f32::max);
            if fmax <= 0.0 {
                return empty(title, "The last run reported no flow anywhere.");
            }
            if p.log_flow {
                // Auto: from the median of the flowing nodes, so hillslopes stay clear and the
                // drainage network stands out.
                let (lo, hi) = range(p, (quantile(flow.iter().copied().filter(|&f| f > 0.0), 0.5), fmax));
                let lo = lo.max(0.0);
                let hi = hi.max(lo + 1e-6);
                let (l0, l1) = ((1.0 + lo).ln(), (1.0 + hi).ln());
                let rgba = paint(n, |i| {
                    let t = (((1.0 + flow[i].max(0.0)).ln() - l0) / (l1 - l0)).clamp(0.0, 1.0);
                    (HEAT.at(t), t / 0.35)
                });
                // Labels at the decades between lo and hi, in a unit that suits the world's size.
                let (div, unit) = flow_display_unit(d.flow_unit, hi);
                let mut values = vec![lo, hi];
                let mut dec = 10f32;
                while dec < hi * 0.5 {
                    if dec > lo * 2.0 {
                        values.push(dec);
                    }
                    dec *= 100.0;
                }
                let ls = values
                    .iter()
                    .map(|&v| ((((1.0 + v).ln() - l0) / (l1 - l0)).clamp(0.0, 1.0), format_value(v / div)))
                    .collect();
                Overlay {
                    image: image(rgba),
                    legend: Some(Legend {
                        title: title.into(),
                        body: LegendBody::Ramp { ramp: HEAT, labels: ls, unit },
                        note: Some("log scale: ln(1 + flow)".into()),
                    }),
                }
            } else {
                let (lo, hi) = range(p, (0.0, quantile(flow.iter().copied().filter(|&f| f > 0.0), 0.99)));
                let (div, unit) = flow_display_unit(d.flow_unit, hi);
                let rgba = paint(n, |i| {
                    let t = unit_t(flow[i], lo, hi);
                    (HEAT.at(t), t / 0.35)
                });
                Overlay {
                    image: image(rgba),
                    legend: Some(Legend {
                        title: title.into(),
                        body: LegendBody::Ramp { ramp: HEAT, labels: labels(lo / div, hi / div), unit },
                        note: Some("linear scale".into()),
                    }),
                }
            }
        }
        OverlayKind::WaterDepth | OverlayKind::WaterSpeed => {
            let depth = p.kind == OverlayKind::WaterDepth;
            let title = if depth { "Water depth" } else { "Water speed" };
            let Some(water) = d.fit(d.water) else {
                return empty(title, "No water yet: run the Pipe model (or Stream power for depth).");
            };
            let vel = d.fit(d.velocity);
            if !depth && vel.is_none() {
                return empty(title, "No water velocity: only the Pipe model reports it.");
            }
            let value = |i: usize| {
                if depth { water[i] } else { vel.map_or(0.0, |v| (v[i][0] * v[i][0] + v[i][1] * v[i][1]).sqrt()) }
            };
            let wet = |i: usize| water[i] > WET_DEPTH;
            let wet_count = (0..n).filter(|&i| wet(i)).count();
            if wet_count == 0 {
                return empty(title, "The map is dry (no water deeper than 5 mm).");
            }
            let auto = (0.0, quantile((0..n).filter(|&i| wet(i)).map(value), 0.99));
            let (lo, hi) = range(p, auto);
            let ramp = if depth { DEPTH } else { SPEED };
            let rgba = paint(n, |i| {
                let a = ((water[i] - 0.001) / (0.02 - 0.001)).clamp(0.0, 1.0);
                (ramp.at(unit_t(value(i), lo, hi)), a)
            });
            let unit = if depth { "m" } else { "m/s" };
            let note = format!("wet: {:.1} % of the map", 100.0 * wet_count as f32 / n as f32);
            Overlay {
                image: image(rgba),
                legend: Some(Legend {
                    title: title.into(),
                    body: LegendBody::Ramp { ramp, labels: labels(lo, hi), unit: unit.into() },
                    note: Some(note),
                }),
            }
        }
        OverlayKind::Erosion => {
            let title = "Erosion / deposition";
            let (Some(er), Some(de)) = (d.fit(d.eroded), d.fit(d.deposited)) else {
                return empty(title, "No erosion map yet: run a simulation.");
            };
            let net = |i: usize| de[i] - er[i];
            let r = if p.auto_range {
                quantile((0..n).map(|i| net(i).abs()).filter(|&v| v > 0.0), 0.99)
            } else {
                p.min.abs().max(p.max.abs())
            };
            if r.is_nan() || r <= 0.0 || !r.is_finite() {
                return empty(title, "The last run moved no material.");
            }
            let rgba = paint(n, |i| {
                let v = net(i);
                (DIVERGING.at(0.5 + v / (2.0 * r)), v.abs() / (0.15 * r))
            });
            let ls = vec![(0.0, format_value(-r)), (0.5, "0".into()), (1.0, format_value(r))];
            Overlay {
                image: image(rgba),
                legend: Some(Legend {
                    title: title.into(),
                    body: LegendBody::Ramp { ramp: DIVERGING, labels: ls, unit: "m".into() },
                    note: Some("red eroded · blue deposited (net height change)".into()),
                }),
            }
        }
        OverlayKind::RiversLakes => {
            let title = "Rivers and lakes";
            let mut notes = Vec::new();
            let rivers = match d.fit(d.flow) {
                Some(flow) => {
                    let fmax = flow.iter().copied().filter(|f| f.is_finite()).fold(0.0f32, f32::max);
                    let level = p.river_level.clamp(0.0, 1.0);
                    let threshold = ((1.0 + fmax).ln() * level).exp() - 1.0;
                    let threshold = if level > 0.0 { threshold.max(f32::MIN_POSITIVE) } else { threshold };
                    let (div, unit) = flow_display_unit(d.flow_unit, threshold);
                    notes.push(format!("river: flow ≥ {} {unit}", format_value(threshold / div)));
                    Some(masks::river_mask(flow, threshold))
                }
                None => {
                    notes.push("no flow yet, so no rivers (run Droplets, Snowball or Stream power)".into());
                    None
                }
            };
            let water = d.fit(d.water).zip(d.fit(d.velocity));
            let min_depth = if p.lake_min_depth.is_finite() { p.lake_min_depth.max(0.0) } else { 0.0 };
            let max_speed = if p.lake_max_speed.is_finite() { p.lake_max_speed.max(0.0) } else { 0.0 };
            let lakes = match (p.lake_source, water) {
                (LakeSource::Auto | LakeSource::Water, Some((wa, ve))) => {
                    notes.push(format!("lake: standing water deeper than {} m", format_value(min_depth)));
                    Some(masks::standing_water_mask(wa, ve, min_depth, max_speed))
                }
                (LakeSource::Water, None) => {
                    notes.push("no pipe-model water yet, so no lakes".into());
                    None
                }
                (LakeSource::Auto | LakeSource::Depressions, _) => {
                    notes.push(format!("lake: depressions deeper than {} m when filled", format_value(min_depth)));
                    Some(masks::lake_mask(d.map, min_depth))
                }
            };
            let count = |m: &Option<Vec<bool>>| m.as_ref().map_or(0, |m| m.iter().filter(|&&b| b).count());
            let (nr, nl) = (count(&rivers), count(&lakes));
            let pct = |k: usize| 100.0 * k as f32 / n as f32;
            let rgba = paint(n, |i| {
                if lakes.as_ref().is_some_and(|m| m[i]) {
                    (LAKE, 1.0)
                } else if rivers.as_ref().is_some_and(|m| m[i]) {
                    (RIVER, 1.0)
                } else {
                    ([0, 0, 0], 0.0)
                }
            });
            let mut sw = Vec::new();
            if rivers.is_some() {
                sw.push((RIVER, format!("river · {:.1} %", pct(nr))));
            }
            if lakes.is_some() {
                sw.push((LAKE, format!("lake · {:.1} %", pct(nl))));
            }
            Overlay {
                image: image(rgba),
                legend: Some(Legend {
                    title: title.into(),
                    body: LegendBody::Swatches(sw),
                    note: Some(notes.join("\n")),
                }),
            }
        }
        OverlayKind::Hardness => {
            let title = "Hardness (erodibility)";
            let Some(k) = d.fit(d.hardness) else {
                return empty(title, "No hardness map (set one in Erosion ▸ Hardness).");
            };
            let rgba = paint(n, |i| (HARDNESS.at(k[i]), 1.0));
            let ls = vec![(0.0, "0 rock".into()), (1.0, "1 normal".into())];
            Overlay {
                image: image(rgba),
                legend: Some(Legend {
                    title: title.into(),
                    body: LegendBody::Ramp { ramp: HARDNESS, labels: ls, unit: String::new() },
                    note: Some("erodibility multiplier of the next run".into()),
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(w: usize, h: usize) -> Heightmap {
        let mut m = Heightmap::new(w, h, 1.0).unwrap();
        for y in 0..h {
            for x in 0..w {
                m.set(x, y, (x * 10 + y) as f32);
            }
        }
        m
    }

    fn params(kind: OverlayKind) -> OverlayParams {
        OverlayParams { kind, ..Default::default() }
    }

    #[test]
    fn ramps_hit_their_stops_and_clamp() {
        assert_eq!(HEAT.at(0.0), HEAT.0[0]);
        assert_eq!(HEAT.at(1.0), *HEAT.0.last().unwrap());
        assert_eq!(HEAT.at(-5.0), HEAT.0[0]);
        assert_eq!(HEAT.at(7.0), *HEAT.0.last().unwrap());
        assert_eq!(HEAT.at(f32::NAN), HEAT.0[0]);
        // Midway between the two stops of a two-stop segment.
        assert_eq!(DIVERGING.at(0.5), [247, 247, 247], "zero change is white");
        let q = DEPTH.at(0.125);
        for (c, &v) in q.iter().enumerate() {
            let mid = (DEPTH.0[0][c] as f32 + DEPTH.0[1][c] as f32) / 2.0;
            assert!((v as f32 - mid).abs() <= 1.0);
        }
        // The diverging ramp is red at the eroded end, blue at the deposited end.
        let (r, b) = (DIVERGING.at(0.0), DIVERGING.at(1.0));
        assert!(r[0] > r[2] && b[2] > b[0]);
    }

    #[test]
    fn image_has_one_texel_per_node_in_node_order() {
        let m = map(5, 3);
        let mut hard = vec![1.0; 15];
        hard[2 * 5 + 4] = 0.0; // node (4, 2)
        let d = OverlayData { hardness: Some(&hard), ..OverlayData::heights(&m) };
        let o = build(&params(OverlayKind::Hardness), &d);
        let img = o.image.unwrap();
        assert_eq!((img.width, img.height, img.rgba.len()), (5, 3, 60));
        assert_eq!(img.texel(4, 2), [HARDNESS.0[0][0], HARDNESS.0[0][1], HARDNESS.0[0][2], 255]);
        assert_eq!(&img.rgba[4 * (2 * 5 + 4)..4 * (2 * 5 + 4) + 3], &HARDNESS.0[0]);
        let soft = *HARDNESS.0.last().unwrap();
        assert_eq!(img.texel(0, 0), [soft[0], soft[1], soft[2], 255]);
        assert_eq!(img.texel(4, 0)[..3], soft, "(4, 0) is not (0, 4)");
    }

    #[test]
    fn flow_is_log_scaled_and_fades_where_dry() {
        let m = map(4, 1);
        let flow = [0.0, 9.0, 99.0, 999.0];
        let d = OverlayData { flow: Some(&flow), ..OverlayData::heights(&m) };
        // Auto range: from the median of the flowing nodes (99) to the largest flow.
        let auto = build(&params(OverlayKind::Flow), &d);
        let LegendBody::Ramp { labels, .. } = &auto.legend.as_ref().unwrap().body else { panic!() };
        assert_eq!(labels[0].1, "99");
        assert_eq!(auto.image.unwrap().texel(1, 0)[3], 0, "below the median: transparent");
        let p = OverlayParams { auto_range: false, min: 0.0, max: 999.0, ..params(OverlayKind::Flow) };
        let o = build(&p, &d);
        let img = o.image.unwrap();
        assert_eq!(img.texel(0, 0)[3], 0, "no flow: transparent");
        assert_eq!(img.texel(3, 0), [252, 255, 164, 255], "the largest flow: top of the ramp");
        // ln(10)/ln(1000) = 1/3 on the log scale.
        assert_eq!(img.texel(1, 0)[..3], HEAT.at(1.0 / 3.0));
        let legend = o.legend.unwrap();
        let LegendBody::Ramp { labels, unit, .. } = &legend.body else { panic!() };
        assert_eq!(unit, "particles");
        assert!(labels.iter().any(|(_, s)| s == "999"), "{labels:?}");
        assert!(
            labels.iter().any(|(t, s)| s == "10" && (t - (11f32.ln() / 1000f32.ln())).abs() < 1e-6),
            "decade tick: {labels:?}"
        );
        // Linear with a manual range.
        let p = OverlayParams { log_flow: false, auto_range: false, min: 0.0, max: 99.0, ..params(OverlayKind::Flow) };
        let img = build(&p, &d).image.unwrap();
        assert_eq!(img.texel(1, 0)[..3], HEAT.at(9.0 / 99.0));
        assert_eq!(img.texel(3, 0)[..3], HEAT.at(1.0));
    }

    #[test]
    fn drainage_areas_read_in_the_unit_of_the_world() {
        let m = map(4, 1);
        // A 32 km world's rivers drain hundreds of km²; a 1 km island's gullies hundreds of m².
        let big = [0.0, 2.0e6, 5.0e7, 4.0e8];
        let d = OverlayData { flow: Some(&big), flow_unit: "m²", ..OverlayData::heights(&m) };
        let o = build(&params(OverlayKind::Flow), &d);
        let LegendBody::Ramp { labels, unit, .. } = &o.legend.as_ref().unwrap().body else { panic!() };
        assert_eq!(unit, "km²");
        assert!(labels.iter().any(|(t, s)| s == "400" && *t == 1.0), "{labels:?}");
        assert!(labels.iter().all(|(_, s)| !s.contains('e')), "no scientific notation: {labels:?}");
        assert_eq!(flow_display_unit("m²", 5.0e4), (1.0e4, "ha".into()));
        assert_eq!(flow_display_unit("m²", 900.0), (1.0, "m²".into()));
        assert_eq!(flow_display_unit("particles", 1.0e9), (1.0, "particles".into()));
    }

    #[test]
    fn erosion_is_diverging_and_symmetric() {
        let m = map(3, 1);
        let er = [2.0, 0.0, 0.0];
        let de = [0.0, 0.0, 1.0];
        let p = OverlayParams { auto_range: false, min: -2.0, max: 0.5, ..params(OverlayKind::Erosion) };
        let o = build(&p, &OverlayData { eroded: Some(&er), deposited: Some(&de), ..OverlayData::heights(&m) });
        let img = o.image.unwrap();
        assert_eq!(img.texel(0, 0), [178, 24, 43, 255], "−2 at range 2: fully red");
        assert_eq!(img.texel(1, 0)[3], 0, "unchanged: transparent");
        assert_eq!(img.texel(2, 0)[..3], DIVERGING.at(0.75), "+1 at range 2: halfway to blue");
        let LegendBody::Ramp { labels, unit, .. } = o.legend.unwrap().body else { panic!() };
        assert_eq!(unit, "m");
        assert_eq!(labels.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(), ["-2", "0", "2"]);
    }

    #[test]
    fn missing_data_gives_a_message_not_a_blank() {
        let m = map(4, 4);
        for kind in [
            OverlayKind::Flow,
            OverlayKind::WaterDepth,
            OverlayKind::WaterSpeed,
            OverlayKind::Erosion,
            OverlayKind::Hardness,
        ] {
            let o = build(&params(kind), &OverlayData::heights(&m));
            assert!(o.image.is_none(), "{kind:?}");
            let l = o.legend.expect("a legend with the reason");
            assert_eq!(l.body, LegendBody::Empty);
            assert!(l.note.is_some_and(|n| n.len() > 10), "{kind:?}");
        }
        // A slice of the wrong size counts as missing.
        let short = [1.0; 3];
        let o = build(&params(OverlayKind::Flow), &OverlayData { flow: Some(&short), ..OverlayData::heights(&m) });
        assert!(o.image.is_none());
        // Off: nothing at all.
        assert_eq!(build(&params(OverlayKind::None), &OverlayData::heights(&m)), Overlay { image: None, legend: None });
    }

    #[test]
    fn water_is_drawn_only_where_wet() {
        let m = map(3, 1);
        let water = [0.0, 0.5, 2.0];
        let vel = [[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]];
        let d = OverlayData { water: Some(&water), velocity: Some(&vel), ..OverlayData::heights(&m) };
        let p = OverlayParams { auto_range: false, min: 0.0, max: 2.0, ..params(OverlayKind::WaterDepth) };
        let img = build(&p, &d).image.unwrap();
        assert_eq!(img.texel(0, 0)[3], 0);
        assert_eq!(img.texel(2, 0), [5, 18, 70, 255]);
        let p = OverlayParams { auto_range: false, min: 0.0, max: 5.0, ..params(OverlayKind::WaterSpeed) };
        let img = build(&p, &d).image.unwrap();
        assert_eq!(img.texel(1, 0)[..3], SPEED.at(1.0), "speed = |(3, 4)| = 5");
    }

    #[test]
    fn rivers_and_lakes_masks() {
        // A pit in the middle of a 5×5 bowl is a lake; a high-flow node is a river.
        let mut m = Heightmap::filled(5, 5, 1.0, 3.0).unwrap();
        m.set(2, 2, 0.0);
        let mut flow = vec![0.0; 25];
        flow[0] = 1000.0;
        flow[1] = 1.0;
        let d = OverlayData { flow: Some(&flow), ..OverlayData::heights(&m) };
        let o = build(&params(OverlayKind::RiversLakes), &d);
        let img = o.image.unwrap();
        assert_eq!(img.texel(2, 2), [LAKE[0], LAKE[1], LAKE[2], 255]);
        assert_eq!(img.texel(0, 0), [RIVER[0], RIVER[1], RIVER[2], 255]);
        assert_eq!(img.texel(1, 0)[3], 0, "low flow is no river");
        let l = o.legend.unwrap();
        let LegendBody::Swatches(sw) = &l.body else { panic!() };
        assert_eq!(sw.len(), 2);
        assert!(l.note.unwrap().contains("depressions"));
        // Standing water wins in Auto when the pipe model has run.
        let water = vec![1.0; 25];
        let vel = vec![[0.0, 0.0]; 25];
        let d = OverlayData { water: Some(&water), velocity: Some(&vel), ..d };
        let img = build(&params(OverlayKind::RiversLakes), &d).image.unwrap();
        assert_eq!(img.texel(4, 4)[..3], LAKE);
    }

    #[test]
    fn labels_and_quantiles() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(1234.4), "1234");
        assert_eq!(format_value(10.0), "10");
        assert_eq!(format_value(12.345), "12.3");
        assert_eq!(format_value(0.5), "0.500");
        assert_eq!(format_value(2.5e6), "2.50e6");
        assert_eq!(format_value(-0.001), "-1.00e-3");
        let v: Vec<f32> = (0..101).map(|i| i as f32).collect();
        assert_eq!(quantile(v.iter().copied(), 0.99), 99.0);
        assert_eq!(quantile(std::iter::empty(), 0.5), 0.0);
        assert_eq!(quantile([f32::NAN, 2.0].into_iter(), 1.0), 2.0);
    }

    #[test]
    fn absurd_ranges_do_not_panic() {
        let m = map(4, 4);
        let flow = vec![5.0; 16];
        let d = OverlayData { flow: Some(&flow), ..OverlayData::heights(&m) };
        for (min, max) in [(5.0, 5.0), (10.0, -3.0), (f32::NAN, f32::INFINITY), (-1e9, 1e9)] {
            for log_flow in [true, false] {
                let p = OverlayParams { auto_range: false, min, max, log_flow, ..params(OverlayKind::Flow) };
                let o = build(&p, &d);
                assert!(o.image.is_some());
            }
        }
    }
}
