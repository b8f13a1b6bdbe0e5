//! Exchange formats (issue #6) through our own importers: round trips over random maps and sizes
//! (1×N and non-square included), orientation with an asymmetric map, and bad files that must
//! give a typed error, never a panic.
use std::path::Path;

use proptest::prelude::*;
use talus::core::heightmap::Heightmap;
use talus::core::io::interop::{self, ExportOptions, ImportOptions, InteropError};
use talus::core::io::{geotiff, glb, hgt, obj, openexr, png16, r16, sidecar};

/// Corners differ and the map is neither symmetric in x nor y: h = 10x + 1000y (+ a bump).
fn asymmetric(w: usize, h: usize) -> Heightmap {
    Heightmap::from_fn(w, h, 2.5, |x, y| 10.0 * x as f32 + 1000.0 * y as f32 + if (x, y) == (1, 0) { 5.0 } else { 0.0 })
        .unwrap()
}

fn arb_map() -> impl Strategy<Value = Heightmap> {
    (1usize..24, 1usize..24, 0.25f32..50.0, -1000.0f32..1000.0, 0.0f32..3000.0).prop_flat_map(
        |(w, h, cell, base, relief)| {
            proptest::collection::vec(0.0f32..1.0, w * h).prop_map(move |v| {
                Heightmap::from_data(w, h, cell, v.into_iter().map(|t| base + t * relief).collect()).unwrap()
            })
        },
    )
}

fn max_err(a: &Heightmap, b: &Heightmap) -> f32 {
    a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The 16-bit bound: half a step of the range plus f32 rounding of the values.
fn tol16(hm: &Heightmap) -> f32 {
    let s = hm.stats();
    (s.max - s.min) / 65535.0 * 0.5 + 1e-6 * s.min.abs().max(s.max.abs()) + 1e-6
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn png16_and_r16_round_trip_through_the_sidecar(hm in arb_map()) {
        let d = tempfile::tempdir().unwrap();
        for name in ["m.png", "m.r16"] {
            let p = d.path().join(name);
            interop::save(&p, &hm, &ExportOptions::default()).unwrap();
            // A non-square R16 is sized by the sidecar's width.
            let back = interop::load(&p, &ImportOptions::default()).unwrap();
            prop_assert_eq!((back.width, back.height), (hm.width, hm.height));
            prop_assert_eq!(back.cell_size, hm.cell_size);
            prop_assert!(max_err(&hm, &back) <= tol16(&hm), "{}: {} > {}", name, max_err(&hm, &back), tol16(&hm));
        }
    }

    #[test]
    fn float_formats_round_trip_exactly(hm in arb_map()) {
        let d = tempfile::tempdir().unwrap();
        for name in ["m.exr", "m.tif", "m.bhef"] {
            let p = d.path().join(name);
            interop::save(&p, &hm, &ExportOptions::default()).unwrap();
            let back = interop::load(&p, &ImportOptions { cell_size: name.ends_with("bhef").then_some(hm.cell_size), ..Default::default() }).unwrap();
            prop_assert_eq!(&back, &hm, "{}", name);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = png16::decode(&bytes, [0.0, 1.0], 1.0);
        let _ = r16::decode(&bytes, None, [0.0, 1.0], 1.0);
        let _ = r16::decode(&bytes, Some(3), [0.0, 1.0], 1.0);
        let _ = openexr::decode(&bytes);
        let _ = geotiff::decode(&bytes);
        let _ = hgt::decode(&bytes);
    }

    #[test]
    fn truncated_exports_never_panic(hm in arb_map(), cut in 0.0f64..1.0) {
        for bytes in [png16::encode(&hm, [0.0, 1.0]).unwrap().0, openexr::encode(&hm).unwrap(), geotiff::encode(&hm).unwrap()] {
            let n = (bytes.len() as f64 * cut) as usize;
            let _ = png16::decode(&bytes[..n], [0.0, 1.0], 1.0);
            let _ = openexr::decode(&bytes[..n]);
            let _ = geotiff::decode(&bytes[..n]);
        }
    }
}

#[test]
fn every_raster_format_keeps_file_row_zero_as_our_y_zero() {
    let hm = asymmetric(5, 3);
    let (w, h) = (hm.width, hm.height);
    // PNG: decode the samples ourselves, compare each pixel's order with the map's.
    let (pw, ph, s, full) = png16::decode_samples(&png16::encode(&hm, [0.0, 2100.0]).unwrap().0).unwrap();
    assert_eq!((pw, ph, full), (w, h, 65535));
    assert_eq!((s[0], s[1], s[w - 1], s[w]), (0, 468, 1248, 31207), "row 0 = y 0 running along +x, then row 1");
    // R16: the raw bytes, little-endian, row-major from y = 0.
    let (raw, _) = r16::encode(&hm, [0.0, 2100.0]);
    let at = |x: usize, y: usize| u16::from_le_bytes([raw[2 * (y * w + x)], raw[2 * (y * w + x) + 1]]);
    assert_eq!(at(0, 0), 0);
    assert_eq!(at(w - 1, h - 1), 63663, "2040 m of 2100");
    assert!(at(1, 0) == 468 && at(0, 1) > at(w - 1, 0));
    // EXR and GeoTIFF: exact values at the corners after a round trip.
    for back in [
        openexr::decode(&openexr::encode(&hm).unwrap()).unwrap(),
        geotiff::decode(&geotiff::encode(&hm).unwrap()).unwrap(),
    ] {
        assert_eq!(back.get(0, 0), 0.0);
        assert_eq!(back.get(1, 0), 15.0);
        assert_eq!(back.get(w - 1, 0), 40.0);
        assert_eq!(back.get(0, h - 1), 2000.0);
    }
    // HGT: big-endian rows from north (our y = 0).
    let n = 3;
    let tile: Vec<u8> = (0..n * n).flat_map(|i| ((i as i16) * 7 - 3).to_be_bytes()).collect();
    let (t, filled) = hgt::decode(&tile).unwrap();
    assert_eq!(filled, 0);
    assert_eq!((t.get(0, 0), t.get(1, 0), t.get(0, 1), t.get(2, 2)), (-3.0, 4.0, 18.0, 53.0));
}

#[test]
fn hgt_voids_are_filled_from_their_neighbours() {
    let n = 4;
    let mut v = vec![100i16; n * n];
    v[5] = hgt::VOID; // inside
    v[0] = hgt::VOID; // corner
    v[15] = 300;
    v[10] = hgt::VOID; // next to 300 and 100s
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_be_bytes()).collect();
    let (t, filled) = hgt::decode(&bytes).unwrap();
    assert_eq!(filled, 3);
    assert!(t.all_finite());
    assert!(t.data[10] > 100.0 && t.data[10] < 300.0);
    assert!(t.data.iter().all(|&h| (100.0..=300.0).contains(&h)));
    let all_void: Vec<u8> = [hgt::VOID; 4].iter().flat_map(|x| x.to_be_bytes()).collect();
    assert!(matches!(hgt::decode(&all_void), Err(InteropError::Unsupported { .. })));
    assert!(matches!(hgt::decode(&[0u8; 7]), Err(InteropError::Size { .. })));
    assert!(matches!(hgt::decode(&[0u8; 10]), Err(InteropError::Size { .. })));
}

#[test]
fn bad_files_give_typed_errors() {
    let hm = asymmetric(6, 4);
    // Truncated PNG.
    let (png, _) = png16::encode(&hm, [0.0, 4000.0]).unwrap();
    // (A cut inside the trailing IEND chunk still leaves every pixel: not an error.)
    for n in [0, 8, 30, png.len() / 2, png.len() * 3 / 4] {
        assert!(matches!(png16::decode(&png[..n], [0.0, 1.0], 1.0), Err(InteropError::Decode { .. })), "cut at {n}");
    }
    // A colour PNG is not a heightmap.
    let mut rgb = std::io::Cursor::new(Vec::new());
    image::RgbImage::new(3, 2).write_to(&mut rgb, image::ImageFormat::Png).unwrap();
    assert!(matches!(png16::decode(rgb.get_ref(), [0.0, 1.0], 1.0), Err(InteropError::Unsupported { .. })));
    // 8-bit grey is read with full scale 255.
    let mut g8 = std::io::Cursor::new(Vec::new());
    image::GrayImage::from_raw(2, 1, vec![0, 255]).unwrap().write_to(&mut g8, image::ImageFormat::Png).unwrap();
    assert_eq!(png16::decode(g8.get_ref(), [10.0, 20.0], 1.0).unwrap().data, vec![10.0, 20.0]);
    // R16 of the wrong length.
    assert!(matches!(r16::decode(&[0u8; 7], None, [0.0, 1.0], 1.0), Err(InteropError::Size { .. })));
    assert!(matches!(r16::decode(&[0u8; 12], None, [0.0, 1.0], 1.0), Err(InteropError::Size { .. })));
    assert!(matches!(r16::decode(&[0u8; 12], Some(4), [0.0, 1.0], 1.0), Err(InteropError::Length { .. })));
    assert_eq!(r16::decode(&[0u8; 12], Some(3), [0.0, 1.0], 1.0).unwrap().height, 2);
    // EXR with channels but none we can pick, and an EXR header with no channel at all.
    let rgb_exr = {
        use exr::prelude::*;
        let ch = |n: &str| AnyChannel::new(n, FlatSamples::F32(vec![0.0; 4]));
        let layer = Layer::new(
            (2, 2),
            LayerAttributes::named(""),
            Encoding::UNCOMPRESSED,
            AnyChannels::sort(SmallVec::from_vec(vec![ch("R"), ch("G"), ch("B")])),
        );
        let mut c = std::io::Cursor::new(Vec::new());
        Image::from_layer(layer).write().to_buffered(&mut c).unwrap();
        c.into_inner()
    };
    assert!(matches!(openexr::decode(&rgb_exr), Err(InteropError::Unsupported { .. })));
    assert!(matches!(
        openexr::decode(&no_channel_exr()),
        Err(InteropError::Unsupported { .. } | InteropError::Decode { .. })
    ));
    let exr = openexr::encode(&hm).unwrap();
    assert!(matches!(openexr::decode(&exr[..exr.len() - 10]), Err(InteropError::Decode { .. })));
    // GeoTIFF of another sample type (8-bit grey, RGB), and truncated.
    for bytes in
        [tiff_of::<tiff::encoder::colortype::Gray8>(&[1, 2, 3, 4]), tiff_of::<tiff::encoder::colortype::RGB8>(&[0; 12])]
    {
        let e = geotiff::decode(&bytes).unwrap_err();
        assert!(matches!(e, InteropError::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("Float32"), "{e}");
    }
    let tif = geotiff::encode(&hm).unwrap();
    assert!(matches!(geotiff::decode(&tif[..tif.len() / 2]), Err(InteropError::Decode { .. })));
    // Meshes need cells; unknown extensions and import of export-only formats are refused.
    assert!(matches!(glb::encode(&asymmetric(1, 5), 1), Err(InteropError::Size { .. })));
    assert!(matches!(
        interop::load(Path::new("x.obj"), &ImportOptions::default()),
        Err(InteropError::ExportOnly { .. })
    ));
    assert!(matches!(
        interop::load(Path::new("x.jpg"), &ImportOptions::default()),
        Err(InteropError::UnknownFormat { .. })
    ));
}

fn tiff_of<C: tiff::encoder::colortype::ColorType<Inner = u8>>(data: &[u8]) -> Vec<u8> {
    let mut c = std::io::Cursor::new(Vec::new());
    tiff::encoder::TiffEncoder::new(&mut c).unwrap().write_image::<C>(2, 2, data).unwrap();
    c.into_inner()
}

/// A scan-line EXR whose `channels` attribute lists no channel (the `exr` crate will not write
/// one, so the header is assembled here from the OpenEXR file layout).
fn no_channel_exr() -> Vec<u8> {
    let mut b = vec![0x76, 0x2f, 0x31, 0x01, 2, 0, 0, 0];
    let mut attr = |name: &str, ty: &str, value: &[u8]| {
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b.extend_from_slice(ty.as_bytes());
        b.push(0);
        b.extend_from_slice(&(value.len() as i32).to_le_bytes());
        b.extend_from_slice(value);
    };
    let window: Vec<u8> = [0i32, 0, 1, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    attr("channels", "chlist", &[0]);
    attr("compression", "compression", &[0]);
    attr("dataWindow", "box2i", &window);
    attr("displayWindow", "box2i", &window);
    attr("lineOrder", "lineOrder", &[0]);
    attr("pixelAspectRatio", "float", &1.0f32.to_le_bytes());
    attr("screenWindowCenter", "v2f", &[0; 8]);
    attr("screenWindowWidth", "float", &1.0f32.to_le_bytes());
    b.push(0);
    b.extend_from_slice(&[0; 16]);
    b
}

#[test]
fn stale_or_broken_sidecars_are_reported() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.png");
    interop::save(&p, &asymmetric(4, 3), &ExportOptions::default()).unwrap();
    let sc = sidecar::read(&p).unwrap().unwrap();
    assert_eq!((sc.width, sc.height, sc.min, sc.max, sc.cell_size), (4, 3, 0.0, 2030.0, 2.5));
    std::fs::write(sidecar::path_for(&p), serde_json::to_string(&sidecar::Sidecar { width: 9, ..sc.clone() }).unwrap())
        .unwrap();
    assert!(matches!(interop::load(&p, &ImportOptions::default()), Err(InteropError::Sidecar { .. })));
    std::fs::write(sidecar::path_for(&p), "{ not json").unwrap();
    assert!(matches!(interop::load(&p, &ImportOptions::default()), Err(InteropError::Sidecar { .. })));
    // Without a sidecar the range is 0…1 unless given.
    std::fs::remove_file(sidecar::path_for(&p)).unwrap();
    let n = interop::load(&p, &ImportOptions::default()).unwrap();
    assert_eq!((n.stats().min, n.stats().max), (0.0, 1.0));
    let m = interop::load(&p, &ImportOptions { range: Some([-5.0, 5.0]), ..Default::default() }).unwrap();
    assert_eq!((m.stats().min, m.stats().max), (-5.0, 5.0));
}

#[test]
fn fixed_and_unreal_ranges_are_recorded_and_clip() {
    let d = tempfile::tempdir().unwrap();
    let hm = asymmetric(4, 3);
    let p = d.path().join("f.r16");
    let rep = interop::save(&p, &hm, &ExportOptions { range: Some([0.0, 1000.0]), ..Default::default() }).unwrap();
    assert_eq!(rep.clipped, 7, "every node above 1000 m: 1010…1030 and the row at 2000…2030");
    let u = d.path().join("u.png");
    let rep = interop::save(&u, &hm, &ExportOptions { unreal: true, ..Default::default() }).unwrap();
    let (_, _, s, _) = png16::decode_samples(&std::fs::read(&u).unwrap()).unwrap();
    assert_eq!(s[0], 32768, "0 m is Unreal's 32768");
    assert_eq!(sidecar::read(&u).unwrap().unwrap().unreal_z_scale, rep.unreal_z_scale);
    let back = interop::load(&u, &ImportOptions::default()).unwrap();
    assert!(max_err(&hm, &back) <= 2030.0 * 2.0 / 65535.0);
}

#[test]
fn meshes_hold_the_grid_y_up_with_normals_and_uvs() {
    let hm = asymmetric(7, 4);
    let text = obj::encode(&hm, 1).unwrap();
    let v: Vec<Vec<f32>> = text
        .lines()
        .filter(|l| l.starts_with("v "))
        .map(|l| l[2..].split(' ').map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(v.len(), 28);
    assert_eq!(v[1], vec![2.5, 15.0, 0.0], "node (1, 0) at x = cell, y = height, z = 0");
    assert_eq!(v[7], vec![0.0, 1000.0, 2.5], "node (0, 1) at z = cell");
    assert_eq!(text.lines().filter(|l| l.starts_with("f ")).count(), 6 * 3 * 2);
    assert_eq!(text.lines().filter(|l| l.starts_with("vn ")).count(), 28);
    // Decimation keeps the outline: 7 → 0,3,6; 4 → 0,3.
    let dec = obj::encode(&hm, 3).unwrap();
    assert_eq!(dec.lines().filter(|l| l.starts_with("v ")).count(), 6);
    // The .glb parses back (gltf crate) with the same positions and counter-clockwise-up faces.
    let bytes = glb::encode(&hm, 1).unwrap();
    let g = gltf::Gltf::from_slice(&bytes).unwrap();
    let blob = g.blob.clone().unwrap();
    let prim = g.meshes().next().unwrap().primitives().next().unwrap();
    let r = prim.reader(|_| Some(&blob[..]));
    let pos: Vec<[f32; 3]> = r.read_positions().unwrap().collect();
    assert_eq!(pos.len(), 28);
    assert_eq!(pos[1], [2.5, 15.0, 0.0]);
    assert_eq!(r.read_normals().unwrap().count(), 28);
    assert_eq!(r.read_tex_coords(0).unwrap().into_f32().nth(27).unwrap(), [1.0, 1.0]);
    let idx: Vec<u32> = r.read_indices().unwrap().into_u32().collect();
    for t in idx.chunks(3) {
        let (a, b, c) = (pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
        let (u, w) = ([b[0] - a[0], b[2] - a[2]], [c[0] - a[0], c[2] - a[2]]);
        // y component of (b − a) × (c − a), from the horizontal parts only.
        assert!(u[1] * w[0] - u[0] * w[1] > 0.0, "face not counter-clockwise seen from +Y");
    }
}
