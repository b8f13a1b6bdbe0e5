//! Shared helpers of the subcommands: seeds, RON files, `--set PATH=VALUE` and `MIN:MAX` ranges.

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
        return Ok(serde_json::from_value(serde_json::to_value(target)?)?);
    }
    let mut root = serde_json::to_value(target)?;
    for s in sets {
        let (path, raw) = s.split_once('=').ok_or_else(|| CliError(format!("--set `{s}`: expected PATH=VALUE")))?;
        let value: Value = serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.trim().to_string()));
        let keys: Vec<&str> = path.trim().split('.').filter(|k| !k.is_empty()).collect();
        if keys.is_empty() {
            return Err(CliError(format!("--set `{s}`: empty path")));
        }
        set_path(&mut root, &keys, value, defaults, path, "")?;
    }
    serde_json::from_value(root).map_err(|e| CliError(format!("--set: {e}")))
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
}
