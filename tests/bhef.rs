//! BHEF files (SPEC §4, seed 004's `exportBin`): layout, orientation, compatibility with the
//! seed's own C++ writer, typed errors for every malformation, robustness, atomic saving.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use talus::core::heightmap::{Heightmap, MAX_NODES, MAX_SIDE};
use talus::core::io::bhef::{self, BhefError};
use talus::core::rng::SplitMix64;

mod common;
use common::grid::bits;

const FIXTURE: &str = "tests/data/seed004_3x5.bhef";
const CPP: &str = "tests/data/seed004_exportbin.cpp";

fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn random_map(w: usize, h: usize, seed: u64) -> Heightmap {
    let mut rng = SplitMix64::new(seed);
    let data = (0..w * h).map(|_| rng.range_f32(-5000.0, 9000.0)).collect();
    Heightmap::from_data(w, h, 1.0, data).unwrap()
}

fn header(x: i32, y: i32) -> Vec<u8> {
    let mut b = x.to_le_bytes().to_vec();
    b.extend_from_slice(&y.to_le_bytes());
    b
}

/// Builds a file by hand, node by node, in the seed's order (i outer, j inner).
fn hand_built(x: i32, y: i32, f: impl Fn(i32, i32) -> f32) -> Vec<u8> {
    let mut b = header(x, y);
    for i in 0..x {
        for j in 0..y {
            b.extend_from_slice(&i.to_le_bytes());
            b.extend_from_slice(&j.to_le_bytes());
            b.extend_from_slice(&f(i, j).to_le_bytes());
        }
    }
    b
}

// ---------------------------------------------------------------------------------------------
// Layout and orientation

#[test]
fn layout_2x3_byte_exact() {
    // width 2 (x = i), height 3 (y = j); heights 10·x + y.
    let hm = Heightmap::from_data(2, 3, 1.0, vec![0.0, 10.0, 1.0, 11.0, 2.0, 12.0]).unwrap();
    let mut want: Vec<u8> = vec![2, 0, 0, 0, 3, 0, 0, 0];
    for (i, j, v) in [(0, 0, 0.0f32), (0, 1, 1.0), (0, 2, 2.0), (1, 0, 10.0), (1, 1, 11.0), (1, 2, 12.0)] {
        want.extend_from_slice(&[i, 0, 0, 0, j, 0, 0, 0]);
        want.extend_from_slice(&v.to_le_bytes());
    }
    assert_eq!(want.len(), 8 + 12 * 6);
    let got = bhef::encode(&hm).unwrap();
    assert_eq!(got, want);
    // The float bytes themselves, spelled out for 11.0 (0x41300000) at node (1, 1) = record 4.
    assert_eq!(&got[8 + 4 * 12 + 8..8 + 5 * 12], &[0x00, 0x00, 0x30, 0x41]);
    assert_eq!(bhef::decode(&want).unwrap(), hm);
}

#[test]
fn orientation_i_is_x_and_j_is_y() {
    // 4 wide, 7 tall, every node distinct: height = 100·x + y.
    let hm = Heightmap::from_fn(4, 7, 1.0, |x, y| (100 * x + y) as f32).unwrap();
    let bytes = bhef::encode(&hm).unwrap();
    assert_eq!(&bytes[..8], &header(4, 7)[..], "XBounds must be the width, YBounds the height");
    assert_eq!(bytes, hand_built(4, 7, |i, j| (100 * i + j) as f32));
    let back = bhef::decode(&bytes).unwrap();
    assert_eq!((back.width, back.height), (4, 7));
    assert_eq!(back.get(3, 6), 306.0);
    assert_eq!(back.get(1, 5), 105.0);
    // And a hand-built file reads the same way round.
    let hb = bhef::decode(&hand_built(5, 2, |i, j| (i * 10 - j) as f32)).unwrap();
    assert_eq!((hb.width, hb.height), (5, 2));
    for y in 0..2 {
        for x in 0..5 {
            assert_eq!(hb.get(x, y), (x as i32 * 10 - y as i32) as f32);
        }
    }
}

#[test]
fn round_trip_random_shapes() {
    let shapes = [(1, 1), (1, 97), (97, 1), (2, 300), (300, 2), (65, 129), (128, 64), (129, 129)];
    for (k, &(w, h)) in shapes.iter().enumerate() {
        let hm = random_map(w, h, k as u64);
        let bytes = bhef::encode(&hm).unwrap();
        assert_eq!(bytes.len() as u64, bhef::encoded_len(w, h).unwrap());
        let back = bhef::decode(&bytes).unwrap();
        assert_eq!((back.width, back.height, back.cell_size), (w, h, 1.0));
        assert_eq!(bits(&back), bits(&hm), "{w}×{h}");
    }
}

// ---------------------------------------------------------------------------------------------
// Files written by the seed's own C++ loop

fn check_seed_file(bytes: &[u8], what: &str) {
    assert_eq!(bytes.len(), 8 + 12 * 15, "{what}");
    let hm = bhef::decode(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!((hm.width, hm.height), (3, 5), "{what}: XBounds=3 is the width");
    for y in 0..5 {
        for x in 0..3 {
            // C++: Data[i][j] = 10*i + j + 0.25 with i = x, j = y.
            assert_eq!(hm.get(x, y), 10.0 * x as f32 + y as f32 + 0.25, "{what} at x={x}, y={y}");
        }
    }
    // Files we write are byte-identical to the seed's, so the seed can load them.
    assert_eq!(bhef::encode(&hm).unwrap(), bytes, "{what}: re-encoding differs");
}

#[test]
fn seed_cpp_fixture_loads_with_right_orientation() {
    let path = fixture_path(FIXTURE);
    let bytes = std::fs::read(&path).unwrap();
    check_seed_file(&bytes, "committed fixture");
    assert_eq!(bhef::load(&path).unwrap(), bhef::decode(&bytes).unwrap());
}

#[test]
fn seed_cpp_compiled_now_matches() {
    if Command::new("g++").arg("--version").output().is_err() {
        eprintln!("note: g++ is not on PATH; skipping the live C++ check (the committed fixture is still checked)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("exportbin");
    let out = Command::new("g++").arg("-O1").arg("-o").arg(&exe).arg(fixture_path(CPP)).output().unwrap();
    assert!(out.status.success(), "g++ failed: {}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).current_dir(dir.path()).status().unwrap();
    assert!(run.success());
    let written = dir.path().join("landscape.bhef");
    let bytes = std::fs::read(&written).unwrap();
    check_seed_file(&bytes, "freshly compiled C++");
    assert_eq!(bytes, std::fs::read(fixture_path(FIXTURE)).unwrap(), "the fixture is stale");
    let hm = bhef::load(&written).unwrap();
    assert_eq!(hm.get(2, 4), 24.25);
}

// ---------------------------------------------------------------------------------------------
// Every malformation has its typed error, from memory and from disk

fn load_bytes(bytes: &[u8]) -> Result<Heightmap, BhefError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.bhef");
    std::fs::write(&p, bytes).unwrap();
    bhef::load(&p)
}

fn both(bytes: &[u8], check: impl Fn(&BhefError) -> bool) {
    let a = bhef::decode(bytes).unwrap_err();
    assert!(check(&a), "decode gave: {a}");
    let b = load_bytes(bytes).unwrap_err();
    assert!(check(&b), "load gave: {b}");
    assert_eq!(a.to_string(), b.to_string());
}

#[test]
fn short_header_error() {
    both(&[], |e| matches!(e, BhefError::ShortHeader { len: 0 }));
    both(&[3, 0, 0, 0, 5, 0, 0], |e| matches!(e, BhefError::ShortHeader { len: 7 }));
    assert!(bhef::decode(&[1, 2, 3]).unwrap_err().to_string().contains("8-byte header"));
}

#[test]
fn bad_bounds_errors_say_which() {
    both(&header(0, 5), |e| matches!(e, BhefError::BadBound { axis: "XBounds", offset: 0, value: 0 }));
    both(&header(-3, 5), |e| matches!(e, BhefError::BadBound { axis: "XBounds", value: -3, .. }));
    both(&header(3, 0), |e| matches!(e, BhefError::BadBound { axis: "YBounds", offset: 4, value: 0 }));
    both(&header(3, i32::MIN), |e| matches!(e, BhefError::BadBound { axis: "YBounds", .. }));
    let msg = bhef::decode(&header(3, -1)).unwrap_err().to_string();
    assert!(msg.contains("YBounds") && msg.contains("-1"), "{msg}");
}

#[test]
fn oversized_bounds_error() {
    for (x, y) in [(1 << 30, 1 << 30), (i32::MAX, i32::MAX), (MAX_SIDE as i32 + 1, 1), (1, MAX_SIDE as i32 + 1)] {
        let mut b = header(x, y);
        b.extend_from_slice(&[0; 12]);
        both(&b, |e| matches!(e, BhefError::TooLarge { .. }));
    }
    // Sides within MAX_SIDE but more than MAX_NODES nodes.
    let n = (MAX_NODES / MAX_SIDE) as i32 + 1;
    both(&header(MAX_SIDE as i32, n), |e| matches!(e, BhefError::TooLarge { .. }));
}

#[test]
fn length_errors_truncated_and_trailing() {
    let good = bhef::encode(&random_map(3, 4, 9)).unwrap();
    assert_eq!(good.len(), 152);
    for cut in [8, 9, 20, 151] {
        both(
            &good[..cut],
            |e| matches!(e, BhefError::Truncated { expected: 152, actual, .. } if *actual == cut as u64),
        );
    }
    let msg = bhef::decode(&good[..100]).unwrap_err().to_string();
    assert!(msg.contains("truncated") && msg.contains("152") && msg.contains("100"), "{msg}");
    for extra in [1usize, 11, 12, 1000] {
        let mut long = good.clone();
        long.resize(good.len() + extra, 0xAB);
        both(
            &long,
            |e| matches!(e, BhefError::TrailingBytes { expected: 152, actual, .. } if *actual == (152 + extra) as u64),
        );
    }
    let mut long = good.clone();
    long.push(0);
    let msg = bhef::decode(&long).unwrap_err().to_string();
    assert!(msg.contains("trailing bytes") && msg.contains("152") && msg.contains("153"), "{msg}");
}

#[test]
fn node_order_error() {
    // Swap records (0, 1) and (0, 2) of a 2×3 file: the first wrong record is at byte 20.
    let mut b = hand_built(2, 3, |i, j| (i + j) as f32);
    let (r1, r2) = (8 + 12, 8 + 24);
    let tmp: Vec<u8> = b[r1..r1 + 12].to_vec();
    b.copy_within(r2..r2 + 12, r1);
    b[r2..r2 + 12].copy_from_slice(&tmp);
    both(&b, |e| {
        matches!(e, BhefError::NodeOrder { offset: 20, expected_i: 0, expected_j: 1, found_i: 0, found_j: 2 })
    });
    let msg = bhef::decode(&b).unwrap_err().to_string();
    assert!(msg.contains("byte 20") && msg.contains("i=0, j=1") && msg.contains("i=0, j=2"), "{msg}");

    // A transposed file (j outer) is caught at the second record.
    let mut t = header(2, 3);
    for j in 0..3i32 {
        for i in 0..2i32 {
            t.extend_from_slice(&i.to_le_bytes());
            t.extend_from_slice(&j.to_le_bytes());
            t.extend_from_slice(&0f32.to_le_bytes());
        }
    }
    both(&t, |e| matches!(e, BhefError::NodeOrder { offset: 20, found_i: 1, found_j: 0, .. }));
}

#[test]
fn non_finite_error() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::from_bits(0x7FC0_1234)] {
        // Node (1, 2) of a 2×3 file: record 5 at byte 68, height at byte 76.
        let b = hand_built(2, 3, |i, j| if (i, j) == (1, 2) { bad } else { 1.0 });
        both(&b, |e| matches!(e, BhefError::NonFinite { offset: 76, i: 1, j: 2, .. }));
        let msg = bhef::decode(&b).unwrap_err().to_string();
        assert!(msg.contains("byte 76") && msg.contains("i=1, j=2"), "{msg}");
    }
}

#[test]
fn missing_file_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("no_such_terrain.bhef");
    let e = bhef::load(&p).unwrap_err();
    assert!(matches!(&e, BhefError::Io { path, .. } if path == &p));
    let msg = e.to_string();
    assert!(msg.contains(&p.display().to_string()), "{msg}");
    // A folder is not a BHEF file either, and the error still names it.
    let e = bhef::load(dir.path()).unwrap_err();
    assert!(e.to_string().contains(&dir.path().display().to_string()), "{e}");
}

#[test]
fn huge_header_on_tiny_file_fails_fast() {
    // Each would need gigabytes if the header were trusted.
    let cases = [
        (1 << 30, 1 << 30),                               // beyond the limits
        (MAX_SIDE as i32, (MAX_NODES / MAX_SIDE) as i32), // exactly at the limit: 3 GiB
        (16_384, 16_384),
    ];
    for (x, y) in cases {
        let mut b = header(x, y);
        b.extend_from_slice(&[0u8; 12]);
        assert_eq!(b.len(), 20);
        let t = Instant::now();
        assert!(bhef::decode(&b).is_err());
        assert!(load_bytes(&b).is_err());
        assert!(t.elapsed() < Duration::from_millis(500), "{x}×{y} took {:?}", t.elapsed());
    }
}

// ---------------------------------------------------------------------------------------------
// Robustness: no input panics, none makes us allocate from a lying header

fn mutate(mut b: Vec<u8>, op: u8, at: usize, val: u8, len: usize) -> Vec<u8> {
    match op % 6 {
        0 if !b.is_empty() => {
            let k = at % b.len();
            b[k] ^= val | 1;
        }
        1 => b.truncate(at % (b.len() + 1)),
        2 => b.extend(std::iter::repeat_n(val, len)),
        3 if b.len() >= 8 => {
            // Rewrite one header bound with an arbitrary value.
            let v = (at as i32).wrapping_mul(0x1E37_79B1) ^ i32::from(val);
            let k = if op & 8 == 0 { 0 } else { 4 };
            b[k..k + 4].copy_from_slice(&v.to_le_bytes());
        }
        4 if b.len() >= 8 => {
            // Swap the two bounds.
            let (x, y) = (b[0..4].to_vec(), b[4..8].to_vec());
            b[0..4].copy_from_slice(&y);
            b[4..8].copy_from_slice(&x);
        }
        5 => {
            let k = at % (b.len() + 1);
            b.splice(k..k, std::iter::repeat_n(val, len));
        }
        _ => {}
    }
    b
}

fn check_outcome(bytes: &[u8], r: Result<Heightmap, BhefError>) {
    match r {
        Ok(hm) => {
            assert_eq!(hm.data.len(), hm.width * hm.height);
            assert_eq!(bhef::encoded_len(hm.width, hm.height), Some(bytes.len() as u64));
            assert!(hm.all_finite());
            assert_eq!(bhef::encode(&hm).unwrap(), bytes, "a file that loads must re-encode identically");
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check_outcome(&bytes, bhef::decode(&bytes));
    }

    #[test]
    fn random_bodies_behind_plausible_headers(x in -3i32..6, y in -3i32..6, body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut b = header(x, y);
        b.extend_from_slice(&body);
        check_outcome(&b, bhef::decode(&b));
    }

    #[test]
    fn mutated_valid_files_never_panic(
        w in 1usize..9, h in 1usize..9, seed in any::<u64>(),
        ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>(), 0usize..40), 1..4),
    ) {
        let mut b = bhef::encode(&random_map(w, h, seed)).unwrap();
        for (op, at, val, len) in ops {
            b = mutate(b, op, at, val, len);
        }
        check_outcome(&b, bhef::decode(&b));
    }

    #[test]
    fn round_trip_any_shape(w in 1usize..40, h in 1usize..40, seed in any::<u64>()) {
        let hm = random_map(w, h, seed);
        let back = bhef::decode(&bhef::encode(&hm).unwrap()).unwrap();
        prop_assert_eq!(bits(&back), bits(&hm));
        prop_assert_eq!((back.width, back.height), (w, h));
    }
}

#[test]
fn mutated_files_from_disk_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.bhef");
    let mut rng = SplitMix64::new(42);
    for k in 0..200u64 {
        let base = bhef::encode(&random_map(1 + (k % 5) as usize, 1 + (k % 7) as usize, k)).unwrap();
        let b =
            mutate(base, rng.below(256) as u8, rng.next_u64() as usize, rng.below(256) as u8, rng.below(30) as usize);
        std::fs::write(&p, &b).unwrap();
        let (a, l) = (bhef::decode(&b), bhef::load(&p));
        assert_eq!(a.as_ref().err().map(|e| e.to_string()), l.as_ref().err().map(|e| e.to_string()));
        check_outcome(&b, l);
    }
}

// ---------------------------------------------------------------------------------------------
// Atomic saving

fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn save_atomic_replaces_and_leaves_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("landscape.bhef");
    std::fs::write(&p, b"an old, longer file that is not even BHEF ......................").unwrap();
    let a = random_map(5, 3, 1);
    bhef::save_atomic(&p, &a).unwrap();
    assert_eq!(dir_names(dir.path()), ["landscape.bhef"]);
    assert_eq!(std::fs::read(&p).unwrap(), bhef::encode(&a).unwrap());
    assert_eq!(bhef::load(&p).unwrap(), a);

    let b = random_map(2, 9, 2);
    bhef::save_atomic(&p, &b).unwrap();
    assert_eq!(dir_names(dir.path()), ["landscape.bhef"]);
    assert_eq!(bhef::load(&p).unwrap(), b);
}

#[test]
fn the_sidecar_gives_the_map_back_with_its_cell_size_and_only_that_map() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("world.bhef");
    let mut a = random_map(6, 4, 7);
    a.cell_size = 4.0;
    bhef::save_with_sidecar(&p, &a, "test").unwrap();
    assert_eq!(dir_names(dir.path()), ["world.bhef", "world.bhef.json"]);
    // The BHEF bytes are the seed's layout, unchanged.
    assert_eq!(std::fs::read(&p).unwrap(), bhef::encode(&a).unwrap());
    assert_eq!(bhef::load(&p).unwrap(), a);
    assert_eq!(bhef::load_with_cell(&p).unwrap().1, Some(4.0));
    // Rewritten without its sidecar (as another tool would): the stale sidecar describes
    // another map (its height range), so it is not used, and the map reads at 1 m.
    let b = random_map(6, 4, 8);
    bhef::save_atomic(&p, &b).unwrap();
    assert_eq!(bhef::load_with_cell(&p).unwrap(), (b.clone(), None));
    // Another size: not used either.
    let c = random_map(3, 3, 7);
    bhef::save_atomic(&p, &c).unwrap();
    assert_eq!(bhef::load(&p).unwrap().cell_size, 1.0);
    // A sidecar that cannot be read is an error that names it, not a silent 1 m.
    std::fs::write(dir.path().join("world.bhef.json"), b"{ not json").unwrap();
    let e = bhef::load(&p).unwrap_err();
    assert!(matches!(e, BhefError::Sidecar { .. }) && e.to_string().contains("world.bhef.json"), "{e}");
    std::fs::write(dir.path().join("world.bhef.json"), b"{\"format\": \"bhef\", \"width\": 3}").unwrap();
    assert!(matches!(bhef::load(&p), Err(BhefError::Sidecar { .. })));
    // Without a sidecar, as before: 1 m.
    std::fs::remove_file(dir.path().join("world.bhef.json")).unwrap();
    assert_eq!(bhef::load_with_cell(&p).unwrap(), (c, None));
}

#[test]
fn save_atomic_failures_leave_target_and_folder_clean() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("keep.bhef");
    let old = random_map(3, 3, 3);
    bhef::save_atomic(&p, &old).unwrap();

    // A map that cannot be encoded: nothing is created, the old file stays.
    let mut bad = random_map(3, 3, 4);
    bad.data[5] = f32::NAN;
    assert!(matches!(bhef::save_atomic(&p, &bad), Err(BhefError::MapNonFinite { x: 2, y: 1, .. })));
    assert_eq!(dir_names(dir.path()), ["keep.bhef"]);
    assert_eq!(bhef::load(&p).unwrap(), old);

    // The rename fails (the target is a non-empty folder): the temp file must be removed.
    let blocker = dir.path().join("blocked.bhef");
    std::fs::create_dir(&blocker).unwrap();
    std::fs::write(blocker.join("inside"), b"x").unwrap();
    let e = bhef::save_atomic(&blocker, &old).unwrap_err();
    assert!(matches!(&e, BhefError::Io { path, .. } if path == &blocker), "{e}");
    assert!(e.to_string().contains("blocked.bhef"), "{e}");
    assert_eq!(dir_names(dir.path()), ["blocked.bhef", "keep.bhef"]);

    // A folder that does not exist: an I/O error naming the path, nothing left behind.
    let missing = dir.path().join("nope").join("x.bhef");
    let e = bhef::save_atomic(&missing, &old).unwrap_err();
    assert!(e.to_string().contains("x.bhef"), "{e}");
    assert_eq!(dir_names(dir.path()), ["blocked.bhef", "keep.bhef"]);
}

/// Timing of a 4097² map (≈ 201 MB file). Run with
/// `cargo test --release --no-default-features --test bhef -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_4097() {
    let hm = Heightmap::from_fn(4097, 4097, 1.0, |x, y| (x as f32 * 0.37).sin() * 100.0 + y as f32).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.bhef");
    let t = Instant::now();
    let bytes = bhef::encode(&hm).unwrap();
    let enc = t.elapsed();
    let t = Instant::now();
    let back = bhef::decode(&bytes).unwrap();
    let dec = t.elapsed();
    // Reference: a plain copy of the same number of bytes (allocation + page faults + memcpy).
    let t = Instant::now();
    let copy = bytes.clone();
    let memcpy = t.elapsed();
    assert_eq!(copy.len(), bytes.len());
    drop(copy);
    // Reference: writing the same bytes to a file in the same folder and fsync'ing it.
    let t = Instant::now();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(dir.path().join("plain.bin")).unwrap();
        f.write_all(&bytes).unwrap();
        f.sync_all().unwrap();
    }
    let plain = t.elapsed();
    std::fs::remove_file(dir.path().join("plain.bin")).unwrap();
    assert_eq!(back, hm);
    drop((bytes, back));
    let t = Instant::now();
    bhef::save_atomic(&p, &hm).unwrap();
    let save = t.elapsed();
    let t = Instant::now();
    let loaded = bhef::load(&p).unwrap();
    let load = t.elapsed();
    assert_eq!(loaded, hm);
    eprintln!(
        "4097²: encode {enc:?}, decode {dec:?}, copy of the file bytes {memcpy:?}, save_atomic {save:?} (plain write+fsync {plain:?}), load {load:?}"
    );
}
