#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

/// The config a workspace with `toml` loads to (no user config, no
/// environment).
fn config(toml: &str) -> AppConfig {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
    std::fs::write(
        dir.path().join(".jp/config.toml"),
        format!(
            "[assistant.model]\nid = \"anthropic/claude-haiku-4-5\"\n\n\
             [providers.llm.aliases]\nopus = \"anthropic/claude-opus-5\"\n\n{toml}"
        ),
    )
    .unwrap();
    jp_config::load::load(&jp_config::load::LoadOptions {
        cwd: dir.path().to_path_buf(),
        trust: jp_config::trust::WorkspaceTrust::Trusted,
        ..jp_config::load::LoadOptions::default()
    })
    .unwrap()
    .config
}

fn schema() -> &'static Value {
    jp_config::schema::config_schema().unwrap()
}

/// Tools `m` (granted `assistant.model`, asking), `p` (granted
/// `assistant.model.parameters`, unattended), `wide` (`write` and
/// `delete` on all of `conversation`), `root` (`insecure_allow` on every
/// tool's command, both ways: a list set replaces) and `none` (no grants).
const TOOLS: &str = r#"
[conversation.tools.m]
command = ["m"]
[[conversation.tools.m.access.config]]
path = "assistant.model"
write = true

[conversation.tools.p]
command = ["p"]
[[conversation.tools.p.access.config]]
path = "assistant.model.parameters"
write = true
apply = "unattended"

[conversation.tools.wide]
command = ["wide"]
[[conversation.tools.wide.access.config]]
path = "conversation"
write = true
delete = true

[conversation.tools.root]
command = ["root"]
[[conversation.tools.root.access.config]]
path = "conversation.tools.*.command"
write = "insecure_allow"
delete = "insecure_allow"

[conversation.tools.none]
command = ["none"]
"#;

/// A recorded change: `delta` set, `unsets` removed, by `tools` or (if
/// `flags`) a query's flags.
fn change(delta: Value, unsets: &[&str], tools: &[&str], flags: &[&str]) -> ConfigDelta {
    ConfigDelta {
        delta: delta.as_object().cloned().unwrap_or_default(),
        unsets: unsets.iter().map(ToString::to_string).collect(),
        claims: std::collections::BTreeMap::new(),
        tools: tools.iter().map(ToString::to_string).collect(),
        flags: flags.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn every_recorded_change_is_authorized_by_what_it_names() {
    let base = config(TOOLS);
    let model = json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}});
    let temperature = json!({"assistant": {"model": {"parameters": {"temperature": 0.2}}}});
    let both = json!({"assistant": {"model": {"id": "anthropic/claude-opus-5", "parameters": {"temperature": 0.2}}}});
    let command = json!({"conversation": {"tools": {"none": {"command": ["sh", "-c", "evil"]}}}});
    let base_url =
        json!({"providers": {"llm": {"anthropic": {"base_url": "http://evil.example"}}}});
    let cases: Vec<(&str, ConfigDelta, bool)> = vec![
        // A tool's change: its grants decide; `apply = "ask"` was asked.
        (
            "granted, asking",
            change(model.clone(), &[], &["m"], &[]),
            true,
        ),
        (
            "granted below",
            change(temperature.clone(), &[], &["m"], &[]),
            true,
        ),
        (
            "granted, unattended",
            change(temperature.clone(), &[], &["p"], &[]),
            true,
        ),
        (
            "outside the grant",
            change(model.clone(), &[], &["p"], &[]),
            false,
        ),
        (
            "no grants",
            change(model.clone(), &[], &["none"], &[]),
            false,
        ),
        (
            "not configured",
            change(model.clone(), &[], &["ghost"], &[]),
            false,
        ),
        (
            "the defaults entry",
            change(model.clone(), &[], &["*"], &[]),
            false,
        ),
        // Sensitive paths: a `true` grant on an ancestor never reaches them.
        (
            "command under a true grant",
            change(command.clone(), &[], &["wide"], &[]),
            false,
        ),
        (
            "command, insecure_allow",
            change(command.clone(), &[], &["root"], &[]),
            true,
        ),
        (
            "policies removed under a true grant",
            change(json!({}), &["conversation.policies"], &["wide"], &[]),
            false,
        ),
        (
            "policies removed without grants",
            change(json!({}), &["conversation.policies"], &["none"], &[]),
            false,
        ),
        (
            "a removal granted",
            change(json!({}), &["assistant.model.id"], &["m"], &[]),
            false,
        ),
        // No one named: no authority.
        ("no one", change(model.clone(), &[], &[], &[]), false),
        (
            "no one removes",
            change(json!({}), &["conversation.policies"], &[], &[]),
            false,
        ),
        // Several tools: each path needs one of them.
        (
            "two tools, each path granted",
            change(both.clone(), &[], &["p", "m"], &[]),
            true,
        ),
        (
            "two tools, one path not",
            change(both.clone(), &[], &["p", "none"], &[]),
            false,
        ),
        // A query's flags: what --cfg may set, save sensitive and loader
        // keys; nothing removed.
        (
            "flags: model",
            change(model.clone(), &[], &[], &["--model opus"]),
            true,
        ),
        (
            "flags: parameters",
            change(temperature, &[], &[], &["--cfg x"]),
            true,
        ),
        (
            "flags: a command",
            change(command, &[], &[], &["--cfg x"]),
            false,
        ),
        (
            "flags: a base_url",
            change(base_url, &[], &[], &["--cfg x"]),
            false,
        ),
        (
            "flags: extends",
            change(json!({"extends": ["evil.toml"]}), &[], &[], &["--cfg x"]),
            false,
        ),
        (
            "flags: policies",
            change(
                json!({"conversation": {"policies": [{"kind": "read_before_write", "read_tools": ["a"], "write_tools": ["b"]}]}}),
                &[],
                &[],
                &["--cfg x"],
            ),
            false,
        ),
        (
            "flags remove",
            change(
                json!({}),
                &["assistant.model.parameters"],
                &[],
                &["--cfg x"],
            ),
            false,
        ),
        (
            "flags and a tool",
            change(both, &[], &["p"], &["--model opus"]),
            true,
        ),
        // Not a change the config can take.
        (
            "an unknown key",
            change(json!({"assistant": {"modle": 1}}), &[], &["m"], &[]),
            false,
        ),
        (
            "an unknown removal",
            change(json!({}), &["assistant.nothing"], &["m"], &[]),
            false,
        ),
        // An empty object replaces a map: a value like any other (review).
        (
            "an empty map of grants, by a tool without grants",
            change(
                json!({"conversation": {"tools": {"fs_x": {"access": {}, "parameters": {}}}}}),
                &[],
                &["none"],
                &[],
            ),
            false,
        ),
        (
            "an empty map of grants, as flags",
            change(
                json!({"conversation": {"tools": {"m": {"access": {}}}}}),
                &[],
                &[],
                &["--cfg x"],
            ),
            false,
        ),
    ];
    for (name, delta, applies) in cases {
        let verdict = authorize(&delta, &base, schema());
        assert_eq!(verdict.is_ok(), applies, "{name}: {verdict:?}");
    }
}

#[test]
fn refusals_say_why() {
    let base = config(TOOLS);
    let says = |delta: ConfigDelta| authorize(&delta, &base, schema()).unwrap_err();
    assert_eq!(
        says(change(
            json!({}),
            &["conversation.policies"],
            &["none"],
            &[]
        )),
        "the tool's access.config grants do not cover conversation.policies: no delete grant"
    );
    assert_eq!(
        says(change(
            json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}}),
            &[],
            &[],
            &[]
        )),
        "it names no tool and is no query's flags, so nothing authorizes it"
    );
    assert_eq!(
        says(change(
            json!({"conversation": {"tools": {"none": {"command": ["x"]}}}}),
            &[],
            &[],
            &["--cfg x"]
        )),
        "the flags of a query are not recorded for conversation.tools.none.command (a sensitive or loader key applies only to the query that sets it)"
    );
    assert_eq!(
        says(change(
            json!({"assistant": {"model": {"id": "anthropic/claude-opus-5", "parameters": {"temperature": 0.2}}}}),
            &[],
            &["p", "none"],
            &[]
        )),
        "nothing it names is granted assistant.model.id"
    );
}

fn conversation(events: Vec<EventKind>) -> Conversation {
    Conversation {
        id: "c1".into(),
        created_ms: 0,
        title: None,
        events: events
            .into_iter()
            .map(|kind| jp_conversation::ConversationEvent { at_ms: 0, kind })
            .collect(),
        torn_tail: None,
    }
}

#[test]
fn a_refused_change_is_left_out_by_its_line_and_the_rest_applies() {
    let base = config(TOOLS);
    let conversation = conversation(vec![
        EventKind::TurnStart,
        EventKind::ChatRequest {
            content: "hi".into(),
        },
        EventKind::ConfigDelta(change(
            json!({}),
            &["conversation.policies"],
            &["none"],
            &[],
        )),
        EventKind::ConfigDelta(change(
            json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}}),
            &[],
            &["m"],
            &[],
        )),
        // Only claims: nothing to apply or refuse.
        EventKind::ConfigDelta(ConfigDelta {
            claims: [("assistant.model.id".to_owned(), Vec::new())].into(),
            ..ConfigDelta::default()
        }),
        EventKind::ConfigDelta(change(
            json!({"assistant": {"model": {"id": "anthropic/claude-haiku-4-5"}}}),
            &[],
            &[],
            &["--model haiku"],
        )),
    ]);
    let authorized = authorized(&conversation, &base, &[]);
    assert_eq!(
        authorized.refused,
        [Refused {
            line: 4,
            by: "tool none".into(),
            reason: "the tool's access.config grants do not cover conversation.policies: no delete grant".into(),
        }]
    );
    let labels: Vec<&str> = authorized.layers.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "conversation c1 (changed by tool m)",
            "conversation c1 (set by --model haiku)"
        ]
    );
}

/// `(label, raw)` layers as the loader makes them for flags.
fn layers(of: &[(&str, Value)]) -> Vec<(String, Value)> {
    of.iter()
        .map(|(label, raw)| ((*label).to_owned(), raw.clone()))
        .collect()
}

#[test]
fn flags_record_what_they_may_and_keep_sensitive_keys_to_the_query() {
    let current = config(TOOLS);
    let flags = sort_flags(
        &layers(&[
            (
                "--cfg providers.llm.anthropic.base_url=http://127.0.0.1:1",
                json!({"providers": {"llm": {"anthropic": {"base_url": "http://127.0.0.1:1"}}}}),
            ),
            (
                "extra.toml",
                json!({
                    "extends": ["more.toml"],
                    "assistant": {"model": {"parameters": {"max_tokens": 1234}}},
                    "conversation": {"tools": {"m": {"summary": "Model.", "command": ["x"]}}}
                }),
            ),
            (
                "--model opus",
                json!({"assistant": {"model": {"id": "opus"}}}),
            ),
        ]),
        &current,
        schema(),
    );
    assert_eq!(
        flags.query_only,
        [
            FlagAssignment {
                flag: "--cfg providers.llm.anthropic.base_url=http://127.0.0.1:1".into(),
                assignment: "providers.llm.anthropic.base_url:=\"http://127.0.0.1:1\"".into(),
            },
            // A tool whose command stays with the query stays whole: a
            // later query is never left with half a tool.
            FlagAssignment {
                flag: "--cfg @extra.toml".into(),
                assignment: format!(
                    "conversation.tools.m:={}",
                    json!({"summary": "Model.", "command": ["x"]})
                ),
            },
        ]
    );
    let record = flags.record.unwrap();
    // The alias is recorded as the model it names.
    assert_eq!(
        Value::Object(record.delta.clone()),
        json!({
            "assistant": {"model": {"parameters": {"max_tokens": 1234}, "id": "anthropic/claude-opus-5"}}
        })
    );
    assert_eq!(record.flags, ["--cfg @extra.toml", "--model opus"]);
    assert!(record.tools.is_empty() && record.unsets.is_empty());
    assert_eq!(
        record.claims.keys().collect::<Vec<_>>(),
        [
            "assistant.model.id",
            "assistant.model.parameters.max_tokens"
        ]
    );
    // What is recorded passes the check every reader makes.
    assert_eq!(authorize(&record, &current, schema()), Ok(()));
}

#[test]
fn flags_that_only_set_sensitive_keys_record_nothing() {
    let flags = sort_flags(
        &layers(&[(
            "--cfg conversation.tools.m.policy.run=unattended",
            json!({"conversation": {"tools": {"m": {"policy": {"run": "unattended"}}}}}),
        )]),
        &config(TOOLS),
        schema(),
    );
    assert_eq!(flags.record, None);
    assert_eq!(flags.query_only.len(), 1);
}

#[test]
fn only_what_the_flags_change_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".jp")).unwrap();
    std::fs::write(
        dir.path().join(".jp/config.toml"),
        "[assistant]\ninstructions = [\"a\"]\n\n[assistant.model]\nid = \"haiku\"\n",
    )
    .unwrap();
    let current = jp_config::load::load(&jp_config::load::LoadOptions {
        cwd: dir.path().to_path_buf(),
        trust: jp_config::trust::WorkspaceTrust::Trusted,
        ..jp_config::load::LoadOptions::default()
    })
    .unwrap();
    let flags = |delta: Value| change(delta, &[], &[], &["--cfg x"]);
    // The id the config's alias resolves to is no change (review: it
    // compared the resolved id with the alias as written).
    assert_eq!(
        news(
            flags(json!({"assistant": {"model": {"id": "anthropic/claude-haiku-4-5"}}})),
            &current
        ),
        None
    );
    let opus = flags(json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}}));
    assert_eq!(
        news(opus.clone(), &current).map(|record| record.delta),
        Some(opus.delta)
    );
    // A list that appends records only what it does not hold yet, so the
    // same flag on every query is recorded once.
    assert_eq!(
        news(
            flags(json!({"assistant": {"instructions": ["a"]}})),
            &current
        ),
        None
    );
    let got = news(
        flags(json!({"assistant": {"instructions": ["a", "b"], "model": {"id": "haiku"}}})),
        &current,
    )
    .unwrap();
    assert_eq!(
        Value::Object(got.delta),
        json!({"assistant": {"instructions": ["b"]}})
    );
    assert_eq!(
        got.claims.keys().collect::<Vec<_>>(),
        ["assistant.instructions"]
    );
}

#[test]
fn a_change_applies_only_if_the_config_still_loads_with_it() {
    // `wide` may set `timeout_secs`; 0 is no timeout the loader takes.
    // A later change that loads on its own still applies; one that loaded
    // only over a change left out does not.
    let base = config(TOOLS);
    let conversation = conversation(vec![
        EventKind::TurnStart,
        EventKind::ConfigDelta(change(
            json!({"conversation": {"tools": {"m": {"timeout_secs": 0}}}}),
            &[],
            &["wide"],
            &[],
        )),
        EventKind::ConfigDelta(change(
            json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}}),
            &[],
            &["m"],
            &[],
        )),
    ]);
    let authorized = authorized(&conversation, &base, &[]);
    assert_eq!(authorized.refused.len(), 1, "{:?}", authorized.refused);
    assert_eq!(authorized.refused[0].line, 3);
    assert!(
        authorized.refused[0]
            .reason
            .starts_with("with this change the config would not load: "),
        "{}",
        authorized.refused[0].reason
    );
    let labels: Vec<&str> = authorized.layers.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["conversation c1 (changed by tool m)"]);
}

#[test]
fn a_tool_the_flags_keep_to_the_query_stays_whole_across_flags() {
    // Found by an adversarial run: `--cfg @tools.toml` defines `nt` (its
    // command stays with the query), and another `--cfg` sets its
    // description, which was recorded: later queries kept half a tool.
    let current = config(TOOLS);
    let flags = sort_flags(
        &layers(&[
            (
                "tools.toml",
                json!({"conversation": {"tools": {"nt": {"command": ["x"]}}}}),
            ),
            (
                "--cfg conversation.tools.nt.description=hi",
                json!({"conversation": {"tools": {"nt": {"description": "hi"}}}}),
            ),
            (
                "--cfg conversation.tools.m.summary=kept",
                json!({"conversation": {"tools": {"m": {"summary": "kept"}}}}),
            ),
        ]),
        &current,
        schema(),
    );
    let assignments: Vec<&str> = flags
        .query_only
        .iter()
        .map(|a| a.assignment.as_str())
        .collect();
    assert_eq!(
        assignments,
        [
            "conversation.tools.nt:={\"command\":[\"x\"]}",
            "conversation.tools.nt:={\"description\":\"hi\"}"
        ]
    );
    let record = flags.record.unwrap();
    assert_eq!(
        Value::Object(record.delta),
        json!({"conversation": {"tools": {"m": {"summary": "kept"}}}})
    );
    assert_eq!(record.flags, ["--cfg conversation.tools.m.summary=kept"]);
}
