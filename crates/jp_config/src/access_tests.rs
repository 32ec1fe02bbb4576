//! Grant matching, sensitive paths, what a tool may read, and the schema
//! check of a rule's path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn grant(path: &str, read: bool, write: Write, delete: bool) -> ConfigGrant {
    ConfigGrant {
        path: path.into(),
        read,
        write,
        delete,
        apply: Apply::Ask,
    }
}

fn p(text: &str) -> ConfigPath {
    ConfigPath::parse(text).unwrap()
}

#[test]
fn the_longest_prefix_decides_in_full_by_segment() {
    let grants = Grants::new(&[
        grant("conversation", true, Write::Denied, false),
        grant("conversation.tools", true, Write::InsecureAllow, false),
        grant(
            "conversation.tools.toggle.access",
            false,
            Write::Denied,
            false,
        ),
        grant("assistant.model", true, Write::Allowed, false),
    ]);
    let caps = |path: &str| grants.capabilities(&p(path));
    assert_eq!(
        caps("conversation.attachments"),
        Capabilities {
            read: true,
            write: false,
            delete: false,
            apply: Apply::Ask
        }
    );
    assert!(caps("conversation.tools.fs_read_file.enable").write);
    // Self-contained: the more specific rule grants nothing, and nothing is
    // inherited from the rules above it.
    assert_eq!(
        caps("conversation.tools.toggle.access.config"),
        Capabilities::NONE
    );
    assert!(caps("assistant.model.id").write);
    // Segments, not characters: `assistant.model` does not cover
    // `assistant.models`, and nothing covers what no rule names.
    assert_eq!(caps("assistant.models"), Capabilities::NONE);
    assert_eq!(caps("style.color"), Capabilities::NONE);
}

#[test]
fn a_literal_segment_beats_a_wildcard_of_the_same_length() {
    let grants = Grants::new(&[
        grant("conversation.tools.*.style", true, Write::Allowed, false),
        grant(
            "conversation.tools.fs_read_file.style",
            false,
            Write::Denied,
            false,
        ),
        grant("a.*.c", true, Write::Denied, false),
        grant("a.b.*", false, Write::Allowed, false),
    ]);
    assert_eq!(
        grants.capabilities(&p("conversation.tools.fs_read_file.style.hidden")),
        Capabilities::NONE
    );
    assert!(
        grants
            .capabilities(&p("conversation.tools.other.style.hidden"))
            .write
    );
    // At the first difference (`b` against `*`) the literal wins.
    assert_eq!(
        grants.rule_for(&p("a.b.c")).map(|g| g.path.as_str()),
        Some("a.b.*")
    );
}

#[test]
fn a_key_with_a_dot_is_one_segment() {
    let grants = Grants::new(&[grant(
        "providers.llm.aliases.'gpt-4.1'",
        true,
        Write::Allowed,
        true,
    )]);
    assert!(
        grants
            .capabilities(&p("providers.llm.aliases.'gpt-4.1'"))
            .write
    );
    assert_eq!(
        grants.capabilities(&p("providers.llm.aliases.gpt-4")),
        Capabilities::NONE
    );
}

#[test]
fn a_true_grant_never_reaches_a_sensitive_path_and_insecure_allow_does() {
    let open = Grants::new(&[grant("conversation.tools", true, Write::Allowed, true)]);
    for path in [
        "conversation.tools.fs_modify_file.policy.run",
        "conversation.tools.x.access.config",
        "conversation.tools.x.command",
        "conversation.tools.'*'.enable",
    ] {
        let caps = open.capabilities(&p(path));
        assert!(!caps.write, "{path}");
        // Reading and deleting are not writes.
        assert!(caps.read && caps.delete, "{path}");
    }
    assert!(
        open.capabilities(&p("conversation.tools.x.style.hidden"))
            .write
    );
    let insecure = Grants::new(&[grant(
        "conversation.tools",
        true,
        Write::InsecureAllow,
        true,
    )]);
    assert!(
        insecure
            .capabilities(&p("conversation.tools.x.policy.run"))
            .write
    );
    assert_eq!(
        sensitive(&p("providers.llm.anthropic.base_url")),
        Some("providers.*.*.base_url")
    );
    assert_eq!(sensitive(&p("providers.llm.anthropic")), None);
}

#[test]
fn reaching_a_sensitive_path_covers_wildcards_but_not_ancestors() {
    assert_eq!(reaches_sensitive(&p("conversation.tools")), None);
    assert_eq!(reaches_sensitive(&p("conversation.tools.x")), None);
    assert_eq!(
        reaches_sensitive(&p("conversation.tools.x.run")),
        Some("conversation.tools.*.run")
    );
    assert_eq!(
        reaches_sensitive(&p("conversation.tools.*.*")),
        Some("conversation.tools.*.access")
    );
    assert_eq!(
        reaches_sensitive(&p("conversation.tools.x.access.config")),
        Some("conversation.tools.*.access")
    );
    assert_eq!(reaches_sensitive(&p("conversation.tools.*.style")), None);
    assert_eq!(reaches_sensitive(&p("extends")), Some("extends"));
}

#[test]
fn a_tool_reads_exactly_what_it_may() {
    let config = json!({
        "assistant": { "model": { "id": "anthropic/x", "parameters": { "max_tokens": 10, "top_p": null } } },
        "conversation": { "tools": { "a": { "enable": true, "access": { "config": [] } }, "b": { "enable": false } } },
        "style": { "color": "auto" }
    });
    let grants = Grants::new(&[
        grant("assistant.model", true, Write::Denied, false),
        grant(
            "assistant.model.parameters.max_tokens",
            false,
            Write::Allowed,
            false,
        ),
        grant("conversation.tools.*.enable", true, Write::Denied, false),
    ]);
    assert_eq!(
        grants.readable(&config),
        Some(json!({
            "assistant": { "model": { "id": "anthropic/x", "parameters": { "top_p": null } } },
            "conversation": { "tools": { "a": { "enable": true }, "b": { "enable": false } } }
        }))
    );
    // Write or delete alone is blind: nothing to read.
    let blind = Grants::new(&[grant("assistant.model", false, Write::Allowed, true)]);
    assert_eq!(blind.readable(&config), None);
    assert!(Grants::new(&[]).is_empty());
}

#[test]
fn write_is_true_false_or_insecure_allow() {
    let parse = |text: &str| serde_json::from_str::<ConfigGrant>(text).map(|g| g.write);
    assert_eq!(
        parse(r#"{"path": "a", "write": true}"#).unwrap(),
        Write::Allowed
    );
    assert_eq!(parse(r#"{"path": "a"}"#).unwrap(), Write::Denied);
    assert_eq!(
        parse(r#"{"path": "a", "write": "insecure_allow"}"#).unwrap(),
        Write::InsecureAllow
    );
    assert_eq!(
        parse(r#"{"path": "a", "write": "yes"}"#)
            .unwrap_err()
            .to_string(),
        "invalid value: string \"yes\", expected true, false or \"insecure_allow\" at line 1 column 28"
    );
    assert_eq!(
        serde_json::to_value(grant("a", false, Write::InsecureAllow, false)).unwrap(),
        json!({ "path": "a", "read": false, "write": "insecure_allow", "delete": false, "apply": "ask" })
    );
}

#[test]
fn a_rule_path_must_exist_and_wildcards_stand_only_for_map_keys() {
    let schema = crate::schema::config_schema().unwrap();
    let check = |path: &str| check_path(&p(path), schema);
    for ok in [
        "assistant.model",
        "assistant.model.parameters.temperature",
        "conversation.tools.*.enable",
        "conversation.tools.fs_read_file.style",
        "providers.llm.aliases.*",
        "conversation.policies",
    ] {
        assert_eq!(check(ok), Ok(()), "{ok}");
    }
    assert_eq!(
        check("assistant.*"),
        Err("`*` stands for any key of a map, and `assistant` has fixed keys (instructions, model, system_prompt); name the one you mean".into())
    );
    assert_eq!(
        check("assistant.modle"),
        Err("`assistant` has no key `modle` (its keys: instructions, model, system_prompt)".into())
    );
    assert_eq!(
        check("assistant.model.id.provider"),
        Err("`assistant.model.id` is a single value; nothing is below it".into())
    );
}
