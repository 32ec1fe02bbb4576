//! Trace tests: each file in `traces/` is a sequence of tool calls with
//! their results and the decision the registry must make before each,
//! replayed through a registry built from its `policies` (the
//! `conversation.policies` entries, as JSON).
//!
//! A step is one of:
//! - `{ "call": TOOL, "args": {...}, "expect": "allow" | "deny: REASON",
//!   "result": "success" | "error" }`: the call is checked; when allowed it
//!   "runs" with the result (default success), and only a success is
//!   recorded with the registry;
//! - `{ "snapshot": NAME }` / `{ "restore": NAME }`;
//! - `{ "reload": true }`: a new registry from the policies, rebuilt by
//!   replaying the conversation recorded so far (as `jp` does when it
//!   loads a conversation);
//! - `{ "file": PATH }`: the file now exists.
//!
//! `batch` groups steps that are calls of one response; they run in call
//! order, each checked against what the earlier ones did.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use jp_config::stateful::StatefulPolicyConfig;
use jp_conversation::{
    ConversationEvent, EventKind, ResponseStatus, ToolCallRequest, ToolCallResponse,
};
use jp_policy::stateful::testing::{FakeEnv, args};
use jp_policy::stateful::{Call, PolicyContext, PolicyDecision, Snapshot, replay};
use serde_json::{Value, json};

use super::*;

struct Runner {
    entries: Vec<StatefulPolicyConfig>,
    registry: PolicyRegistry,
    env: FakeEnv,
    events: Vec<ConversationEvent>,
    snapshots: HashMap<String, Snapshot>,
    config: Value,
    calls: usize,
}

impl Runner {
    fn step(&mut self, name: &str, index: usize, step: &Value) {
        let at = format!("{name} step {index}");
        if let Some(batch) = step.get("batch").and_then(Value::as_array) {
            for (i, inner) in batch.iter().enumerate() {
                self.step(name, index * 100 + i, inner);
            }
        } else if let Some(file) = step.get("file").and_then(Value::as_str) {
            self.env.files.insert(file.to_owned());
        } else if let Some(snap) = step.get("snapshot").and_then(Value::as_str) {
            self.snapshots
                .insert(snap.to_owned(), self.registry.snapshot());
        } else if let Some(snap) = step.get("restore").and_then(Value::as_str) {
            let snapshot = self.snapshots[snap].clone();
            self.registry.restore(&snapshot).expect(&at);
        } else if step.get("reload").is_some() {
            self.registry = from_entries(&self.entries).expect(&at);
            let ctx = PolicyContext {
                env: &self.env,
                config: &self.config,
                partial: false,
            };
            replay(&mut self.registry, &self.events, &ctx);
        } else {
            self.call(&at, step);
        }
    }

    fn call(&mut self, at: &str, step: &Value) {
        let tool = step["call"].as_str().expect("call");
        let arguments = args(step["args"].clone());
        let ctx = PolicyContext {
            env: &self.env,
            config: &self.config,
            partial: false,
        };
        let decision = self.registry.check_all(
            &Call {
                tool,
                arguments: &arguments,
            },
            &ctx,
        );
        let got = match &decision {
            PolicyDecision::Allow => "allow".to_owned(),
            PolicyDecision::Deny(d) => format!("deny: {}", d.reason),
        };
        assert_eq!(got, step["expect"].as_str().expect("expect"), "{at}");
        self.calls += 1;
        let id = format!("call_{}", self.calls);
        self.events
            .push(ConversationEvent::now(EventKind::ToolCallRequest(
                ToolCallRequest::new(&id, tool, arguments.clone()),
            )));
        let status = match (&decision, step.get("result").and_then(Value::as_str)) {
            (PolicyDecision::Deny(_), _) => ResponseStatus::Denied,
            (_, Some("error")) => ResponseStatus::Error,
            _ => ResponseStatus::Success,
        };
        if status == ResponseStatus::Success {
            self.registry.notify_result(
                &Call {
                    tool,
                    arguments: &arguments,
                },
                "ok",
                &ctx,
            );
        }
        self.events
            .push(ConversationEvent::now(EventKind::ToolCallResponse(
                ToolCallResponse::new(id, status, "ok"),
            )));
    }
}

fn run(name: &str, text: &str) {
    let trace: Value = serde_json::from_str(text).expect(name);
    let entries: Vec<StatefulPolicyConfig> =
        serde_json::from_value(trace["policies"].clone()).expect(name);
    let files: Vec<&str> = trace["files"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut runner = Runner {
        registry: from_entries(&entries).expect(name),
        entries,
        env: FakeEnv::with(&files),
        events: Vec::new(),
        snapshots: HashMap::new(),
        config: json!({}),
        calls: 0,
    };
    let steps = trace["steps"].as_array().expect("steps");
    assert!(!steps.is_empty(), "{name} has no steps");
    for (index, step) in steps.iter().enumerate() {
        runner.step(name, index, step);
    }
}

#[test]
fn every_trace_replays_with_the_expected_decisions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/stateful/traces");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("traces/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        run(&name, &std::fs::read_to_string(&path).unwrap());
    }
}
