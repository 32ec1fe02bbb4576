#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::check::apply_layers;
use super::*;
use crate::access::{ConfigGrant, Delete, Permission, Write};
use crate::app::AppConfig;
use crate::diagnostic::Diagnostic;
use crate::load::{LoadOptions, load};

fn config() -> AppConfig {
    load(&LoadOptions::default()).unwrap().config
}

fn schema() -> &'static Value {
    crate::schema::config_schema().unwrap()
}

fn grant(path: &str, write: Write, delete: impl Into<Delete>, apply: Apply) -> ConfigGrant {
    ConfigGrant {
        path: path.into(),
        read: true,
        write,
        delete: delete.into(),
        apply,
    }
}

fn check(config: Value, unset: &[&str]) -> Result<Proposal, Refusal> {
    let unset: Vec<String> = unset.iter().map(|s| (*s).to_owned()).collect();
    Proposal::check(Some(&config), &unset, &self::config(), schema())
}

fn p(text: &str) -> ConfigPath {
    ConfigPath::parse(text).unwrap()
}

#[test]
fn unset_paths_parse_keys_and_list_elements() {
    let plain = UnsetPath::parse("assistant.model.parameters.temperature").unwrap();
    assert_eq!(plain.path, p("assistant.model.parameters.temperature"));
    assert_eq!(plain.element, None);
    let element = UnsetPath::parse(r#"assistant.instructions["be [brief]"]"#).unwrap();
    assert_eq!(element.path, p("assistant.instructions"));
    assert_eq!(element.element, Some(json!("be [brief]")));
    assert_eq!(
        element.to_string(),
        r#"assistant.instructions["be [brief]"]"#
    );
    let dotted = UnsetPath::parse(r#"conversation.tools.'my.tool'.enable"#).unwrap();
    assert_eq!(dotted.path.segments()[2], "my.tool");
    assert_eq!(
        UnsetPath::parse("assistant..model")
            .unwrap_err()
            .to_string(),
        "invalid config key `assistant..model`: a segment is empty"
    );
}

#[test]
fn a_change_must_be_config() {
    let refused = check(json!({"assistant": {"modle": {"id": "x"}}}), &[]).unwrap_err();
    assert!(refused.invalid);
    assert_eq!(refused.fields, ["assistant.modle"]);
    assert!(
        refused.detail.starts_with("unknown field `modle`"),
        "{}",
        refused.detail
    );

    let refused = check(
        json!({"assistant": {"model": {"parameters": {"max_tokens": "lots"}}}}),
        &[],
    )
    .unwrap_err();
    assert_eq!(refused.fields, ["assistant.model.parameters.max_tokens"]);

    let refused = check(json!({"style": {"color": "purple"}}), &[]).unwrap_err();
    assert_eq!(refused.fields, ["style.color"]);
    assert!(refused.detail.contains("purple"), "{}", refused.detail);

    let refused = check(json!({}), &["assistant.modle"]).unwrap_err();
    assert_eq!(refused.fields, ["assistant.modle"]);
    assert_eq!(
        refused.detail,
        "`unset` assistant.modle: `assistant` has no key `modle` (its keys: agents_md, instruction_files, instructions, model, repository_state, system_prompt)"
    );
    let refused = check(json!({}), &[r#"style.color["auto"]"#]).unwrap_err();
    assert_eq!(
        refused.detail,
        "`unset` style.color[\"auto\"]: `style.color` is not a list, so it has no element to remove"
    );
    let refused = check(
        json!({"assistant": {"model": {"parameters": {"temperature": null}}}}),
        &[],
    )
    .unwrap_err();
    assert_eq!(refused.fields, ["assistant.model.parameters.temperature"]);
    assert_eq!(
        refused.detail,
        "`assistant.model.parameters.temperature` is null in `config`, which sets nothing; to remove a value, list its path in `unset`"
    );
    let refused = Proposal::check(Some(&json!([1])), &[], &config(), schema()).unwrap_err();
    assert!(refused.detail.starts_with("`config` must be an object"));
}

#[test]
fn aliases_resolve_before_anything_else_sees_them() {
    let proposal = check(json!({"assistant": {"model": {"id": "opus"}}}), &[]).unwrap();
    assert_eq!(
        proposal.sets,
        [(p("assistant.model.id"), json!("anthropic/claude-opus-5"))]
    );
    let refused = check(json!({"assistant": {"model": {"id": "bogus"}}}), &[]).unwrap_err();
    assert!(refused.invalid);
    assert_eq!(refused.fields, ["assistant.model.id"]);
    assert!(
        refused.detail.starts_with("`bogus` is neither"),
        "{}",
        refused.detail
    );
}

#[test]
fn every_leaf_needs_a_write_grant_and_every_removal_a_delete_grant() {
    let grants = Grants::new(&[
        grant(
            "assistant.model.parameters",
            Write::Allowed,
            false,
            Apply::Unattended,
        ),
        grant("assistant.instructions", Write::Allowed, true, Apply::Ask),
    ]);
    let ok = check(
        json!({"assistant": {"model": {"parameters": {"temperature": 0.2, "max_tokens": 100}}}}),
        &[],
    )
    .unwrap();
    assert_eq!(ok.authorize(&grants), Ok(Apply::Unattended));

    // An alias cannot smuggle a model switch past a parameters grant.
    let smuggled = check(
        json!({"assistant": {"model": {"id": "opus", "parameters": {"temperature": 0.2}}}}),
        &[],
    )
    .unwrap();
    let refused = smuggled.authorize(&grants).unwrap_err();
    assert!(!refused.invalid);
    assert_eq!(refused.fields, ["assistant.model.id"]);
    assert_eq!(
        refused.detail,
        "the tool's access.config grants do not cover assistant.model.id: no write grant"
    );

    let removal = check(json!({}), &["assistant.model.parameters.temperature"]).unwrap();
    assert_eq!(
        removal.authorize(&grants).unwrap_err().fields,
        ["assistant.model.parameters.temperature"]
    );

    // Instructions append, so a write adds to them; a delete grant lets
    // the tool remove one, and the rule asks first.
    let both = check(
        json!({"assistant": {"instructions": ["be brief"]}}),
        &[r#"assistant.instructions["be verbose"]"#],
    )
    .unwrap();
    assert_eq!(both.authorize(&grants), Ok(Apply::Ask));
}

#[test]
fn setting_a_list_that_replaces_needs_delete_too() {
    let proposal = check(
        json!({"conversation": {"tools": {"t": {"parameters": {"mode": {"type": "string", "enum": ["a"]}}}}}}),
        &[],
    )
    .unwrap();
    let write_only = Grants::new(&[grant(
        "conversation.tools.t.parameters",
        Write::InsecureAllow,
        false,
        Apply::Unattended,
    )]);
    let refused = proposal.authorize(&write_only).unwrap_err();
    assert_eq!(
        refused.fields,
        ["conversation.tools.t.parameters.mode.enum"]
    );
    assert!(
        refused
            .detail
            .contains("replaces it, which needs a delete grant too")
    );
    // `parameters` is sensitive: replacing a list there removes from a
    // sensitive path, which a `true` delete does not reach.
    let with_delete = Grants::new(&[grant(
        "conversation.tools.t.parameters",
        Write::InsecureAllow,
        true,
        Apply::Unattended,
    )]);
    assert_eq!(
        proposal.authorize(&with_delete).unwrap_err().detail,
        "the tool's access.config grants do not cover conversation.tools.t.parameters.mode.enum: setting this list replaces it, which needs delete too: a sensitive path (conversation.tools.*.parameters), which delete = true does not reach; that needs delete = \"insecure_allow\""
    );
    let with_delete = Grants::new(&[grant(
        "conversation.tools.t.parameters",
        Write::InsecureAllow,
        Delete::InsecureAllow,
        Apply::Unattended,
    )]);
    assert_eq!(proposal.authorize(&with_delete), Ok(Apply::Unattended));
}

#[test]
fn a_true_grant_does_not_reach_sensitive_paths_below_it() {
    let proposal = check(
        json!({"conversation": {"tools": {"t": {"enable": false}}}}),
        &[],
    )
    .unwrap();
    let broad = Grants::new(&[grant(
        "conversation.tools",
        Write::Allowed,
        true,
        Apply::Ask,
    )]);
    assert_eq!(
        proposal.authorize(&broad).unwrap_err().fields,
        ["conversation.tools.t.enable"]
    );
    let acknowledged = Grants::new(&[grant(
        "conversation.tools",
        Write::InsecureAllow,
        true,
        Apply::Ask,
    )]);
    assert_eq!(proposal.authorize(&acknowledged), Ok(Apply::Ask));
}

#[test]
fn changes_show_the_value_before_and_after() {
    let resolved = crate::load::resolved_json(&config());
    let proposal = check(
        json!({"assistant": {"model": {"id": "opus"}, "instructions": ["be brief"]}}),
        &["assistant.model.parameters.max_tokens"],
    )
    .unwrap();
    assert_eq!(
        proposal.changes(&resolved),
        [
            Change {
                path: "assistant.model.id".into(),
                old: Some(json!("anthropic/claude-sonnet-4-5")),
                new: Some(json!("anthropic/claude-opus-5")),
            },
            Change {
                path: "assistant.instructions".into(),
                old: Some(json!([])),
                new: Some(json!(["be brief"])),
            },
            Change {
                path: "assistant.model.parameters.max_tokens".into(),
                old: Some(json!(8192)),
                new: None,
            },
        ]
    );
}

#[test]
fn the_buffer_folds_in_call_order_and_the_last_operation_wins() {
    let sets = |pairs: &[(&str, Value)]| Proposal {
        sets: pairs.iter().map(|(k, v)| (p(k), v.clone())).collect(),
        unsets: Vec::new(),
    };
    let unsets = |keys: &[&str]| Proposal {
        sets: Vec::new(),
        unsets: keys.iter().map(|k| UnsetPath::parse(k).unwrap()).collect(),
    };
    assert_eq!(Buffer::default().fold(), None);

    // Two tools write one path: the later call wins, whatever finished
    // first.
    let mut buffer = Buffer::default();
    buffer.add(
        1,
        "b",
        sets(&[("assistant.model.id", json!("anthropic/b"))]),
    );
    buffer.add(
        0,
        "a",
        sets(&[("assistant.model.id", json!("anthropic/a"))]),
    );
    let folded = buffer.fold().unwrap();
    assert_eq!(
        Value::Object(folded.delta),
        json!({"assistant": {"model": {"id": "anthropic/b"}}})
    );
    assert_eq!(folded.tools, ["a", "b"]);
    assert_eq!(folded.touched, ["assistant.model.id"]);

    // One sets and a later one removes: only the removal is left; and
    // the other way round, only the set.
    let mut buffer = Buffer::default();
    buffer.add(
        0,
        "a",
        sets(&[("assistant.model.parameters.temperature", json!(0.5))]),
    );
    buffer.add(1, "b", unsets(&["assistant.model.parameters"]));
    buffer.add(2, "c", sets(&[("assistant.system_prompt", json!("hi"))]));
    buffer.add(3, "d", unsets(&["assistant.system_prompt"]));
    buffer.add(4, "e", sets(&[("assistant.system_prompt", json!("again"))]));
    let folded = buffer.fold().unwrap();
    assert_eq!(
        Value::Object(folded.delta),
        json!({"assistant": {"system_prompt": "again"}})
    );
    assert_eq!(folded.unsets, ["assistant.model.parameters"]);
    assert_eq!(
        folded.touched,
        ["assistant.system_prompt", "assistant.model.parameters"]
    );

    // Appending lists add up.
    let mut buffer = Buffer::default();
    buffer.add(0, "a", sets(&[("assistant.instructions", json!(["x"]))]));
    buffer.add(1, "a", sets(&[("assistant.instructions", json!(["y"]))]));
    assert_eq!(
        Value::Object(buffer.fold().unwrap().delta),
        json!({"assistant": {"instructions": ["x", "y"]}})
    );
    buffer.clear();
    assert!(buffer.is_empty());
}

#[test]
fn removing_takes_a_key_or_matching_list_elements_out_of_a_layer() {
    let mut raw = json!({"assistant": {"instructions": ["a", "b", "a"], "model": {"id": "x/y"}}});
    assert!(remove(
        &mut raw,
        &UnsetPath::parse(r#"assistant.instructions["a"]"#).unwrap()
    ));
    assert!(remove(
        &mut raw,
        &UnsetPath::parse("assistant.model.id").unwrap()
    ));
    assert!(!remove(&mut raw, &UnsetPath::parse("style.color").unwrap()));
    assert_eq!(
        raw,
        json!({"assistant": {"instructions": ["b"], "model": {}}})
    );
}

/// The bypass of issue 21: a `true` grant on `conversation` (which loads)
/// let a tool remove the stateful policies, a tool's policy and a tool's
/// `enable` unasked.
#[test]
fn removing_sensitive_paths_needs_insecure_allow_like_writing_them() {
    let unsets = [
        "conversation.policies",
        "conversation.tools.fs_modify_file.policy",
        "conversation.tools.fs_delete_file.enable",
    ];
    let proposal = check(json!({}), &unsets).unwrap();
    let broad = Grants::new(&[grant(
        "conversation",
        Write::Allowed,
        true,
        Apply::Unattended,
    )]);
    let refused = proposal.authorize(&broad).unwrap_err();
    assert!(!refused.invalid);
    assert_eq!(refused.fields, unsets);
    assert_eq!(
        refused.detail,
        "the tool's access.config grants do not cover \
         conversation.policies: a sensitive path (conversation.policies), which delete = true does not reach; that needs delete = \"insecure_allow\"; \
         conversation.tools.fs_modify_file.policy: a sensitive path (conversation.tools.*.policy), which delete = true does not reach; that needs delete = \"insecure_allow\"; \
         conversation.tools.fs_delete_file.enable: a sensitive path (conversation.tools.*.enable), which delete = true does not reach; that needs delete = \"insecure_allow\""
    );
    // Removing what holds them is no way around it (removing the whole
    // section would take the conversation's sandbox too:
    // `no_grant_reaches_a_sandbox_not_even_insecure_allow`).
    for ancestor in ["conversation.tools", "conversation.tools.fs_modify_file"] {
        let refused = check(json!({}), &[ancestor])
            .unwrap()
            .authorize(&broad)
            .unwrap_err();
        assert!(
            refused.detail.ends_with(&format!(
                "{ancestor}: removing it removes a sensitive path below it (conversation.tools.*.access), which delete = true does not reach; that needs delete = \"insecure_allow\""
            )),
            "{}",
            refused.detail
        );
    }
    // Writing them with `true` is refused the same way.
    let write = check(
        json!({"conversation": {"tools": {"fs_delete_file": {"style": {"hidden": true}}}}}),
        &[],
    )
    .unwrap();
    assert_eq!(
        write.authorize(&broad).unwrap_err().detail,
        "the tool's access.config grants do not cover conversation.tools.fs_delete_file.style.hidden: a sensitive path (conversation.tools.*.style.hidden), which write = true does not reach; that needs write = \"insecure_allow\""
    );
    // A rule that keeps something is named when a removal would take it.
    let kept = Grants::new(&[
        grant(
            "conversation.tools",
            Write::Denied,
            Delete::InsecureAllow,
            Apply::Unattended,
        ),
        grant(
            "conversation.tools.fs_delete_file.enable",
            Write::Denied,
            false,
            Apply::Unattended,
        ),
    ]);
    assert_eq!(
        check(json!({}), &["conversation.tools.fs_delete_file"])
            .unwrap()
            .authorize(&kept)
            .unwrap_err()
            .detail,
        "the tool's access.config grants do not cover conversation.tools.fs_delete_file: removing it removes what the rule for conversation.tools.fs_delete_file.enable does not let the tool remove"
    );
    // Acknowledged, the removal goes through, unasked as the rule says.
    let acknowledged = Grants::new(&[grant(
        "conversation",
        Write::Allowed,
        Delete::InsecureAllow,
        Apply::Unattended,
    )]);
    assert_eq!(proposal.authorize(&acknowledged), Ok(Apply::Unattended));
}

/// Every sensitive pattern removed through `authorize`, with `delete` at
/// the path, at an ancestor and through a wildcard: only
/// `"insecure_allow"` at or below the pattern removes it.
#[test]
fn authorizing_a_removal_of_each_sensitive_path() {
    for pattern in crate::access::SENSITIVE {
        let concrete: Vec<String> = pattern
            .split('.')
            .map(|s| if s == "*" { "t".into() } else { s.to_owned() })
            .collect();
        let path = ConfigPath::from_segments(concrete.iter().cloned()).to_string();
        let proposal = Proposal {
            sets: Vec::new(),
            unsets: vec![UnsetPath::parse(&path).unwrap()],
        };
        // A sandbox is sealed: no grant removes it.
        let sealed = crate::access::SEALED.contains(pattern);
        let mut rules = vec![(path.clone(), true), ((*pattern).to_owned(), true)];
        if concrete.len() > 1 {
            rules.push((concrete[0].clone(), false));
        }
        for (rule, reaches) in rules {
            for (delete, removes) in [
                (Permission::Denied, false),
                (Permission::Allowed, false),
                (Permission::InsecureAllow, true),
            ] {
                let grants = Grants::new(&[grant(&rule, Write::Denied, delete, Apply::Ask)]);
                assert_eq!(
                    proposal.authorize(&grants).is_ok(),
                    removes && !sealed,
                    "{path} under {rule} with delete = {delete:?}"
                );
                assert_eq!(
                    crate::access::reaches_sensitive(&p(&rule)).is_some(),
                    reaches,
                    "{rule}"
                );
            }
        }
    }
}

/// A local tool `t` defined by a conversation's change over the defaults.
fn with_tool() -> AppConfig {
    load(&LoadOptions {
        deltas: vec![crate::load::DeltaLayer {
            label: "test".into(),
            delta: json!({"conversation": {"tools": {"t": {
                "command": ["sh", "-c", "true"],
                "summary": "A tool.",
                "parameters": {"path": {"type": "string"}},
                "style": {"hidden": false}
            }}}}),
            unsets: Vec::new(),
        }],
        ..LoadOptions::default()
    })
    .unwrap()
    .config
}

#[test]
fn a_change_that_would_leave_the_config_unable_to_load_is_invalid() {
    let current = with_tool();
    let proposal = |config: Value, unset: &[&str]| {
        let unset: Vec<String> = unset.iter().map(|s| (*s).to_owned()).collect();
        Proposal::check(Some(&config), &unset, &current, schema()).unwrap()
    };
    // Nothing, and changes that load, pass.
    assert_eq!(Proposal::default().check_loads(&current), Ok(()));
    for ok in [
        proposal(json!({"assistant": {"model": {"id": "opus"}}}), &[]),
        proposal(json!({}), &["conversation.tools.t.summary"]),
        proposal(json!({}), &["conversation.tools.t"]),
        proposal(
            json!({"conversation": {"tools": {"t": {"command": "echo hi"}}}}),
            &["conversation.tools.t.command"],
        ),
    ] {
        assert_eq!(ok.check_loads(&current), Ok(()), "{ok:?}");
    }

    // Without its command, `t` (which has parameters, so it is defined) is
    // a local tool jp cannot run.
    let refused = proposal(json!({}), &["conversation.tools.t.command"])
        .check_loads(&current)
        .unwrap_err();
    assert_eq!(
        refused,
        Refusal {
            invalid: true,
            fields: vec!["conversation.tools.t.command".into()],
            detail: "with this change the config would not load: conversation.tools.t.command: a local tool needs a `command` to run".into(),
        }
    );
    // Each value deserializes, but together they do not validate: a rule
    // about an argument the tool no longer has.
    let refused = proposal(
        json!({"conversation": {"tools": {"t": {"policy": {"run": [
            {"arg": "/path", "prefix": "src/", "mode": "unattended"},
            {"mode": "ask"}
        ]}}}}}),
        &["conversation.tools.t.parameters"],
    )
    .check_loads(&current)
    .unwrap_err();
    assert!(refused.invalid);
    assert_eq!(refused.fields, ["conversation.tools.t.policy.run[0]"]);
    assert!(
        refused.detail.starts_with(
            "with this change the config would not load: conversation.tools.t.policy.run[0]: "
        ),
        "{}",
        refused.detail
    );
}

#[test]
fn the_config_as_it_is_passes_its_own_load_check() {
    // Resolved and read back, the config is itself, whatever it holds: the
    // check only counts what a change brings.
    for current in [config(), with_tool()] {
        let base = crate::load::resolved_json(&current);
        assert_eq!(
            apply_layers(&base, &[], &json!({})).1,
            Vec::<Diagnostic>::new()
        );
        let touched = Proposal {
            sets: vec![(p("style.color"), json!("never"))],
            unsets: Vec::new(),
        };
        assert_eq!(touched.check_loads(&current), Ok(()));
    }
}

#[test]
fn no_grant_reaches_a_sandbox_not_even_insecure_allow() {
    let everything = Grants::new(&[grant(
        "conversation",
        Write::InsecureAllow,
        Delete::InsecureAllow,
        Apply::Unattended,
    )]);
    let widen = check(
        json!({"conversation": {"sandbox": {"env": ["ANTHROPIC_API_KEY"]}}}),
        &[],
    )
    .unwrap();
    let refusal = widen.authorize(&everything).unwrap_err();
    assert_eq!(refusal.fields, ["conversation.sandbox.env"]);
    assert_eq!(
        refusal.detail,
        "the tool's access.config grants do not cover conversation.sandbox.env: a sandbox (conversation.sandbox), which no grant reaches: a tool can never loosen a sandbox"
    );
    // Its own, by a grant on itself.
    let own = Grants::new(&[grant(
        "conversation.tools.t",
        Write::InsecureAllow,
        Delete::InsecureAllow,
        Apply::Unattended,
    )]);
    let mine = check(
        json!({"conversation": {"tools": {"t": {"sandbox": {"env": ["GITHUB_TOKEN"]}}}}}),
        &[],
    )
    .unwrap();
    assert_eq!(
        mine.authorize(&own).unwrap_err().fields,
        ["conversation.tools.t.sandbox.env"]
    );
    // Nor removed, nor what holds the conversation's; a whole tool may go.
    for unset in [
        "conversation.tools.t.sandbox",
        "conversation.sandbox.env",
        "conversation",
    ] {
        let grants = if unset.starts_with("conversation.tools") {
            &own
        } else {
            &everything
        };
        let removal = check(json!({}), &[unset]).unwrap();
        let refusal = removal.authorize(grants).unwrap_err();
        assert!(
            refusal
                .detail
                .contains("which no grant reaches: a tool can never loosen a sandbox"),
            "{unset}: {}",
            refusal.detail
        );
    }
    let whole_tool = check(json!({}), &["conversation.tools.t"]).unwrap();
    assert_eq!(whole_tool.authorize(&own), Ok(Apply::Unattended));
}
