//! The streaming decision, fed by the real parser in random chunks, always
//! equals the batch decision on the complete arguments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use jp_conversation::{EventBuilder, EventPart, FlushedEvent, ToolCallPart};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::{Policy, PolicyField, PolicySpec, RuleOrigin, StreamingPolicyState, ToolParameters};

const ROOT: &str = "/nonexistent-jp-workspace";

fn parameters() -> ToolParameters {
    serde_json::from_value(json!({
        "path": { "type": "path" },
        "name": { "type": "string" },
        "n": { "type": "integer" },
        "content": { "type": "string" },
        "patterns": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "old": { "type": "string" },
                    "paths": { "type": "array", "items": { "type": "path" } },
                },
            },
        },
    }))
    .unwrap()
}

/// The policy of `rules` (JSON), when it loads.
fn policy(rules: &Value) -> Option<Policy> {
    let spec: PolicySpec = serde_json::from_value(rules.clone()).unwrap();
    Policy::compile(&spec, PolicyField::Run, RuleOrigin::Tool, &parameters()).policy
}

fn rule() -> impl Strategy<Value = Value> {
    let mode = prop::sample::select(vec!["unattended", "ask", "edit", "skip"]);
    let condition = prop::sample::select(vec![
        json!({ "arg": "/path", "prefix": "src" }),
        json!({ "arg": "/path", "const": ".env" }),
        json!({ "arg": "/name", "pattern": "^x" }),
        json!({ "arg": "/n", "minimum": 3 }),
        json!({ "arg": "/content", "pattern": "SECRET" }),
        json!({ "arg": "/patterns/paths", "prefix": "src" }),
        json!({ "arg": "/patterns/paths", "prefix": ".ssh" }),
        json!({ "arg": "/patterns/old", "pattern": "env" }),
        json!({}),
    ]);
    (condition, mode).prop_map(|(mut condition, mode)| {
        condition["mode"] = Value::from(mode);
        condition
    })
}

fn path() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::sample::select(vec!["src/a.rs", ".env", "../x", "src", ".ssh/k", "a/../src/b", ""])
            .prop_map(Value::from),
        1 => Just(json!(7)),
        1 => Just(json!({ "src": 1 })),
    ]
}

/// Argument entries (a key may repeat), in random order.
fn entries() -> impl Strategy<Value = Vec<(String, Value)>> {
    let pattern = (
        prop::sample::select(vec!["env", "x", "line\n\"quoted\" é"]),
        prop::collection::vec(path(), 0..3),
    )
        .prop_map(|(old, paths)| json!({ "old": old, "paths": paths }));
    let entry = prop_oneof![
        path().prop_map(|v| ("path".to_owned(), v)),
        prop::sample::select(vec!["x1", "y"]).prop_map(|v| ("name".to_owned(), json!(v))),
        (0..6i64).prop_map(|v| ("n".to_owned(), json!(v))),
        prop::sample::select(vec!["SECRET=1", "fn main() {}\n"])
            .prop_map(|v| ("content".to_owned(), json!(v))),
        prop::collection::vec(pattern, 0..3).prop_map(|v| ("patterns".to_owned(), json!(v))),
    ];
    prop::collection::vec(entry, 0..5)
}

/// The arguments as JSON text, keys in the given order (repeats kept).
fn text(entries: &[(String, Value)]) -> String {
    let body: Vec<String> = entries
        .iter()
        .map(|(key, value)| format!("{}: {value}", Value::from(key.as_str())))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// Cuts `text` at the given fractions (char boundaries).
fn chunks(text: &str, cuts: &[f64]) -> Vec<String> {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|f| (f * text.len() as f64) as usize)
        .collect();
    at.push(text.len());
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for mut to in at {
        while !text.is_char_boundary(to) {
            to += 1;
        }
        if to > from {
            out.push(text[from..to].to_owned());
            from = to;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn streaming_equals_batch_at_any_chunking(
        rules in prop::collection::vec(rule(), 0..5),
        entries in entries(),
        cuts in prop::collection::vec(0.0..1.0f64, 0..12),
    ) {
        let Some(policy) = policy(&Value::Array(rules)) else {
            // A rule list that does not load never reaches evaluation.
            return Ok(());
        };
        let policy = Arc::new(policy);
        let workspace = Workspace::new(Path::new(ROOT));
        let mut watch = PolicyWatch::new(StreamingPolicyState::new(policy.clone()));
        let mut early = None;
        let mut builder = EventBuilder::new();
        let start = ToolCallPart::Start { id: "1".into(), name: "t".into() };
        builder.handle_part(0, EventPart::ToolCall(start)).unwrap();
        for chunk in chunks(&text(&entries), &cuts) {
            let part = EventPart::ToolCall(ToolCallPart::ArgumentChunk(chunk));
            let progress = builder.handle_part(0, part).unwrap();
            for progress in progress {
                if let Some(decision) =
                    watch.feed(&progress, |key| builder.argument(0, key), &workspace)
                {
                    prop_assert!(early.is_none(), "decided twice");
                    early = Some(decision.clone());
                }
            }
        }
        let Some(FlushedEvent::ToolCallRequest(call)) = builder.handle_flush(0) else {
            panic!("no call");
        };
        let Ok(arguments) = call.arguments() else {
            // The text is valid JSON, so only a repeated key makes the
            // arguments unusable: the call is refused whatever was decided.
            prop_assert!(
                matches!(call.error(), Some(jp_conversation::ArgumentsError::DuplicateKey(_))),
                "{:?}",
                call.error()
            );
            return Ok(());
        };
        let batch = policy.evaluate_in(&Value::Object(arguments.clone()), &workspace);
        if let Some(early) = early {
            prop_assert_eq!((early.mode, early.rule), (batch.mode, batch.rule));
            prop_assert_eq!(early.reason, batch.reason);
        }
    }
}

/// The decision for `text` fed in `chunks`, made while it streamed.
fn early_decision(rules: &Value, chunks: &[&str]) -> Option<(crate::Mode, Option<usize>)> {
    let policy = Arc::new(policy(rules).unwrap());
    let workspace = Workspace::new(Path::new(ROOT));
    let mut watch = PolicyWatch::new(StreamingPolicyState::new(policy));
    let mut builder = EventBuilder::new();
    let start = ToolCallPart::Start {
        id: "1".into(),
        name: "t".into(),
    };
    builder.handle_part(0, EventPart::ToolCall(start)).unwrap();
    let mut decided = None;
    for chunk in chunks {
        let part = EventPart::ToolCall(ToolCallPart::ArgumentChunk((*chunk).to_owned()));
        for progress in builder.handle_part(0, part).unwrap() {
            if let Some(d) = watch.feed(&progress, |key| builder.argument(0, key), &workspace) {
                decided = Some((d.mode, d.rule));
            }
        }
    }
    decided
}

#[test]
fn a_nested_value_split_anywhere_is_judged_whole() {
    use crate::Mode;
    let rules = json!([
        { "arg": "/patterns/paths", "prefix": "src", "mode": "unattended" },
        { "mode": "ask" },
    ]);
    let text = r#"{"patterns": [{"old": "x", "paths": ["src/a.rs", "src/b.rs"]}], "content": "…"}"#;
    for at in (1..text.len()).filter(|at| text.is_char_boundary(*at)) {
        let (a, b) = text.split_at(at);
        assert_eq!(
            early_decision(&rules, &[a, b]),
            Some((Mode::Unattended, Some(0))),
            "split at {at}: {a:?} | {b:?}"
        );
    }
    // One byte at a time, and a path outside src/ decides `ask` as soon as
    // it is complete, before the rest of the array.
    let text = r#"{"patterns": [{"paths": ["src/a.rs", "../x", "src/b.rs"]}]}"#;
    let bytes: Vec<String> = text.chars().map(String::from).collect();
    let bytes: Vec<&str> = bytes.iter().map(String::as_str).collect();
    assert_eq!(early_decision(&rules, &bytes), Some((Mode::Ask, Some(1))));
}
