//! Shared helpers of the subcommands: seeds, RON files, `--set PATH=VALUE`, `MIN:MAX` ranges, and
//! the parsers of number flags (a NaN or an infinity is refused where it is typed, by name).

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::CliError;

/// `123` or `random` ([`crate::core::rng::parse_seed`]).
pub fn parse_seed(s: &str) -> Result<u64, CliError> {
    crate::core::rng::parse_seed(s).map_err(CliError)
}

pub(super) fn read_ron<T: DeserializeOwned>(path: &Path) -> Result<T, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    ron::from_str(&text).map_err(|e| CliError(format!("{}: {e}", path.display())))
}

/// Applies `path=value` to a serialisable struct by round-tripping it through JSON.
/// `defaults` supplies the value of an `Option` field that is currently `None` when a path goes
/// through it.
pub fn apply_sets<T: Serialize + DeserializeOwned>(
    target: &T,
    sets: &[String],
    defaults: &dyn Fn(&str) -> Option<Value>,
) -> Result<T, CliError> {
    if sets.is_empty() {
        return serde_json::from_value(serde_json::to_value(target)?).map_err(not_finite_hint);
    }
    let mut root = serde_json::to_value(target)?;
    for s in sets {
        let (path, raw) = s.split_once('=').ok_or_else(|| CliError(format!("--set `{s}`: expected PATH=VALUE")))?;
        if raw.trim().parse::<f64>().is_ok_and(|v| !v.is_finite()) {
            return Err(CliError(format!("--set {s}: `{}` is not a finite number", raw.trim())));
        }
        let value: Value = serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.trim().to_string()));
        let keys: Vec<&str> = path.trim().split('.').filter(|k| !k.is_empty()).collect();
        if keys.is_empty() {
            return Err(CliError(format!("--set `{s}`: empty path")));
        }
        set_path(&mut root, &keys, value, defaults, path, "")?;
    }
    serde_json::from_value(root).map_err(|e| CliError(format!("--set: {}", not_finite_hint(e).0)))
}

/// A parameter struct goes through JSON, which has no NaN or infinity: a non-finite value comes
/// back as `null` where a number was expected (an unset `Option` reads `null` without error), so
/// that error says what it means.
fn not_finite_hint(e: serde_json::Error) -> CliError {
    let m = e.to_string();
    if m.starts_with("invalid type: null, expected f") {
        CliError(format!("a parameter is not a finite number (NaN or infinity; {m})"))
    } else {
        CliError(m)
    }
}

/// A number flag that must be finite (`value_parser = finite_f32`): clap reads `nan` and `inf`
/// as numbers, and every such flag is metres, a factor or a count of something.
pub fn finite_f32(s: &str) -> Result<f32, String> {
    finite(s)
}

/// [`finite_f32`] for the `f64` flags.
pub fn finite_f64(s: &str) -> Result<f64, String> {
    finite(s)
}

fn finite<T: std::str::FromStr<Err: std::fmt::Display> + Copy + Into<f64>>(s: &str) -> Result<T, String> {
    match s.trim().parse::<T>() {
        Ok(v) if v.into().is_finite() => Ok(v),
        Ok(_) => Err(format!("`{s}` is not a finite number")),
        Err(e) => Err(e.to_string()),
    }
}

/// A sea level in metres: finite, or `-inf` for no sea (NaN and `+inf` are refused).
pub fn sea_f32(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if v.is_finite() || v == f32::NEG_INFINITY => Ok(v),
        Ok(_) => Err(format!("`{s}` is not a sea level: give metres, or -inf for no sea")),
        Err(e) => Err(e.to_string()),
    }
}

/// `walked` is the dotted path of the keys consumed so far (what `defaults` is asked about when
/// `node` is an unset `Option`).
fn set_path(
    node: &mut Value,
    keys: &[&str],
    value: Value,
    defaults: &dyn Fn(&str) -> Option<Value>,
    full: &str,
    walked: &str,
) -> Result<(), CliError> {
    let key = keys[0];
    if node.is_null()
        && let Some(d) = defaults(walked)
    {
        *node = d;
    }
    let Value::Object(map) = node else {
        return Err(CliError(format!("--set {full}: `{key}` is not inside a parameter group")));
    };
    if !map.contains_key(key) {
        // Skip an enum wrapper such as {"Fbm": {...}}.
        if map.len() == 1 {
            let inner = map.values_mut().next().expect("len 1");
            if inner.is_object() {
                return set_path(inner, keys, value, defaults, full, walked);
            }
        }
        let known: Vec<&String> = map.keys().collect();
        return Err(CliError(format!("--set {full}: unknown parameter `{key}` (known here: {known:?})")));
    }
    let slot = map.get_mut(key).expect("checked");
    if keys.len() == 1 {
        *slot = value;
        Ok(())
    } else {
        let walked = if walked.is_empty() { key.to_string() } else { format!("{walked}.{key}") };
        set_path(slot, &keys[1..], value, defaults, full, &walked)
    }
}

pub(super) fn parse_range(s: &str) -> Result<Option<[f32; 2]>, CliError> {
    if s.eq_ignore_ascii_case("off") || s.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let bad = || CliError(format!("range `{s}`: expected MIN:MAX in metres (e.g. 0:250) or `off`"));
    let (lo, hi) = s.split_once(':').ok_or_else(bad)?;
    let lo: f32 = lo.trim().parse().map_err(|_| bad())?;
    let hi: f32 = hi.trim().parse().map_err(|_| bad())?;
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(bad());
    }
    Ok(Some([lo, hi]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_and_ranges_parse_or_explain() {
        assert_eq!(parse_seed("42").unwrap(), 42);
        assert!(parse_seed("-1").is_err());
        assert!(parse_seed("random").is_ok());
        assert_eq!(parse_range("0:250").unwrap(), Some([0.0, 250.0]));
        assert_eq!(parse_range("off").unwrap(), None);
        assert!(parse_range("5:1").is_err());
        assert!(parse_range("nan:1").is_err());
    }

    #[test]
    fn number_flags_take_finite_numbers_and_the_sea_takes_minus_infinity() {
        assert_eq!(finite_f32("2.5"), Ok(2.5));
        assert_eq!(finite_f64("-1e3"), Ok(-1000.0));
        for bad in ["nan", "inf", "-inf", "infinity", "NaN"] {
            assert!(finite_f32(bad).unwrap_err().contains("not a finite number"), "{bad}");
            assert!(finite_f64(bad).is_err(), "{bad}");
        }
        assert!(finite_f32("two").is_err());
        assert_eq!(sea_f32("-inf"), Ok(f32::NEG_INFINITY));
        assert_eq!(sea_f32("-3"), Ok(-3.0));
        assert!(sea_f32("nan").is_err() && sea_f32("inf").is_err());
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    struct P {
        k: f32,
        cap: Option<f32>,
    }

    #[test]
    fn a_set_or_a_struct_with_nan_says_so() {
        let none = |_: &str| None;
        let p = P { k: 1.0, cap: None };
        assert_eq!(apply_sets(&p, &["k=2".into()], &none).unwrap().k, 2.0);
        let e = apply_sets(&p, &["k=nan".into()], &none).err().unwrap().0;
        assert!(e.contains("`nan` is not a finite number"), "{e}");
        // A NaN that came in another way (a RON preset may write `NaN`) goes through JSON as null.
        let e = apply_sets(&P { k: f32::NAN, cap: None }, &[], &none).err().unwrap().0;
        assert!(e.contains("not a finite number"), "{e}");
        assert!(apply_sets(&p, &[], &none).unwrap().cap.is_none());
    }
}
