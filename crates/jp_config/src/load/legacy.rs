//! The deprecated top-level `run` and `result` of a tool, folded into
//! `policy.run` and `policy.result` layer by layer.

use crate::app::PartialAppConfig;
use crate::diagnostic::Diagnostic;
use crate::path::ConfigPath;

/// Moves each tool's deprecated top-level `run`/`result` into
/// `policy.run`/`policy.result` within one layer, before layers merge, so
/// a higher layer's `run` overrides a lower layer's `policy.run` like any
/// other field. Where a layer sets both, `policy.*` wins; the tools and
/// fields where that happened are returned, to warn about.
pub(super) fn fold_legacy_policies(partial: &mut PartialAppConfig) -> Vec<(String, &'static str)> {
    let mut both = Vec::new();
    let Some(tools) = partial.conversation.as_mut().and_then(|c| c.tools.as_mut()) else {
        return both;
    };
    for (name, tool) in tools.iter_mut() {
        let policy = tool.policy.get_or_insert_with(Default::default);
        for (legacy, modern, field) in [
            (&mut tool.run, &mut policy.run, "run"),
            (&mut tool.result, &mut policy.result, "result"),
        ] {
            if let Some(spec) = legacy.take() {
                if modern.is_some() {
                    both.push((name.clone(), field));
                } else {
                    *modern = Some(spec);
                }
            }
        }
    }
    both
}

/// The same move in a layer's raw value, so `jp config show` and error
/// locations attribute a folded `run` to the layer that wrote it.
pub(super) fn fold_legacy_raw(raw: &mut serde_json::Value) {
    let Some(tools) = raw
        .get_mut("conversation")
        .and_then(|c| c.get_mut("tools"))
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for tool in tools.values_mut() {
        let Some(tool) = tool.as_object_mut() else {
            continue;
        };
        for field in ["run", "result"] {
            if let Some(spec) = tool.remove(field) {
                let policy = tool
                    .entry("policy")
                    .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
                if let Some(policy) = policy.as_object_mut() {
                    policy.entry(field).or_insert(spec);
                }
            }
        }
    }
}

pub(super) fn deprecated_legacy(tool: &str, field: &str) -> Diagnostic {
    Diagnostic::warning(
        Some(ConfigPath::from_segments(["conversation", "tools", tool, field]).to_string()),
        format!("deprecated and ignored because `policy.{field}` is also set; remove it"),
    )
}
