//! Grant matching, sensitive paths, what a tool may read, and the schema
//! check of a rule's path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn grant(path: &str, read: bool, write: Write, delete: impl Into<Delete>) -> ConfigGrant {
    ConfigGrant {
        path: path.into(),
        read,
        write,
        delete: delete.into(),
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
    // (`style.hidden` is sensitive; `style.result_lines` is not.)
    assert!(
        grants
            .capabilities(&p("conversation.tools.other.style.result_lines"))
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
        "conversation.tools.x.style.hidden",
    ] {
        let caps = open.capabilities(&p(path));
        // Neither set nor removed: removing is as sensitive as writing.
        assert!(!caps.write && !caps.delete, "{path}");
        assert!(caps.read, "{path}");
    }
    let plain = open.capabilities(&p("conversation.tools.x.style.result_lines"));
    assert!(plain.write && plain.delete);
    let insecure = Grants::new(&[grant(
        "conversation.tools",
        true,
        Write::InsecureAllow,
        Delete::InsecureAllow,
    )]);
    let caps = insecure.capabilities(&p("conversation.tools.x.policy.run"));
    assert!(caps.write && caps.delete);
    assert_eq!(
        sensitive(&p("providers.llm.anthropic.base_url")),
        Some("providers.*.*.base_url")
    );
    assert_eq!(sensitive(&p("providers.llm.anthropic")), None);
}

#[test]
fn removing_a_path_removes_what_is_below_it_and_needs_a_grant_for_all_of_it() {
    // A `true` delete on an ancestor: the removal of a tool, of the tools,
    // or of the whole section takes sensitive paths with it.
    let broad = Grants::new(&[grant("conversation", true, Write::Allowed, true)]);
    // The whole section holds the conversation's sandbox, which no grant
    // removes.
    assert_eq!(
        broad
            .check_removal(&p("conversation"))
            .map_err(|d| (d.sensitive, d.sealed)),
        Err((Some("conversation.sandbox"), true))
    );
    for path in ["conversation.tools", "conversation.tools.x"] {
        assert_eq!(
            broad.check_removal(&p(path)).map_err(|d| d.sensitive),
            Err(Some("conversation.tools.*.access")),
            "{path}"
        );
    }
    assert_eq!(
        broad
            .check_removal(&p("conversation.tools.x.style"))
            .map_err(|d| (d.at.to_string(), d.sensitive)),
        Err((
            "conversation.tools.x.style.hidden".into(),
            Some("conversation.tools.*.style.hidden")
        ))
    );
    assert_eq!(
        broad.removal(&p("conversation.tools.x.summary")),
        Some(Apply::Ask)
    );

    // A rule below the removed path decides about its part: a removal
    // cannot take away what that rule keeps.
    let kept = Grants::new(&[
        grant(
            "conversation.tools",
            true,
            Write::Allowed,
            Delete::InsecureAllow,
        ),
        grant(
            "conversation.tools.fs_delete_file.enable",
            false,
            Write::Denied,
            false,
        ),
    ]);
    assert_eq!(kept.removal(&p("conversation.tools.x")), Some(Apply::Ask));
    assert_eq!(
        kept.check_removal(&p("conversation.tools.fs_delete_file"))
            .map_err(|d| d.at.to_string()),
        Err("conversation.tools.fs_delete_file.enable".into())
    );
    assert_eq!(kept.removal(&p("conversation.tools")), None);

    // ... and its `apply` counts: one part that asks makes the whole
    // removal ask.
    let mut asks = grant("conversation.tools.*.style", false, Write::Denied, true);
    asks.apply = Apply::Ask;
    let mut unattended = grant(
        "conversation.tools",
        false,
        Write::Denied,
        Delete::InsecureAllow,
    );
    unattended.apply = Apply::Unattended;
    let mixed = Grants::new(&[unattended, asks]);
    assert_eq!(
        mixed.removal(&p("conversation.tools.x.command")),
        Some(Apply::Unattended)
    );
    // `style` is decided by the `true` rule, which stops short of
    // `style.hidden`.
    assert_eq!(mixed.removal(&p("conversation.tools.x")), None);
    let mut hidden = grant(
        "conversation.tools.*.style.hidden",
        false,
        Write::Denied,
        Delete::InsecureAllow,
    );
    hidden.apply = Apply::Unattended;
    let mixed = Grants::new(&[mixed.rules[0].1.clone(), mixed.rules[1].1.clone(), hidden]);
    assert_eq!(mixed.removal(&p("conversation.tools.x")), Some(Apply::Ask));
    assert_eq!(
        mixed.removal(&p("conversation.tools.x.style.hidden")),
        Some(Apply::Unattended)
    );
    // Nothing to decide: no removal.
    assert_eq!(Grants::new(&[]).removal(&p("assistant")), None);
}

/// Every sensitive pattern, as a concrete path, against every way a rule
/// can cover it (at the path, at an ancestor, through a wildcard) and every
/// value of `write` and `delete`: only `"insecure_allow"` at or below the
/// pattern sets or removes it, and `true` is a config error exactly where
/// the rule reaches the pattern.
#[test]
fn sensitive_paths_need_insecure_allow_to_write_and_to_delete() {
    let concrete = |pattern: &str| {
        ConfigPath::from_segments(pattern.split('.').enumerate().map(|(i, s)| {
            if s == "*" {
                format!("k{i}")
            } else {
                s.to_owned()
            }
        }))
    };
    let permissions = [
        Permission::Denied,
        Permission::Allowed,
        Permission::InsecureAllow,
    ];
    for pattern in SENSITIVE {
        let path = concrete(pattern);
        assert_eq!(sensitive(&path), Some(*pattern), "{path}");
        // A sandbox is sealed: not even `insecure_allow` reaches it, nor
        // the removal of what holds the conversation's.
        let is_sealed = SEALED.contains(pattern);
        // Whether removing `at` takes the conversation's sandbox with it.
        let holds_sealed = |at: &ConfigPath| {
            ["conversation", "sandbox"]
                .iter()
                .zip(at.segments())
                .all(|(a, b)| a == b)
                && at.segments().len() <= 2
        };
        let below = path.join("deeper");
        let segments = path.segments();
        // Where a rule may stand to decide about `path`: at it, at its
        // parent and its root (ancestors), and at the pattern itself and
        // at the path with its first segment a wildcard.
        let mut rules: Vec<(String, bool)> = vec![
            (path.to_string(), true),
            (pattern.to_string(), true),
            (
                std::iter::once("*")
                    .chain(segments[1..].iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join("."),
                true,
            ),
        ];
        if segments.len() > 1 {
            rules.push((
                ConfigPath::from_segments(segments[..segments.len() - 1].iter().cloned())
                    .to_string(),
                false,
            ));
            rules.push((segments[0].clone(), false));
        }
        for (rule, at_or_below) in rules {
            for write in permissions {
                for delete in permissions {
                    let grants = Grants::new(&[grant(&rule, true, write, delete)]);
                    let case =
                        format!("{path} under rule {rule} write={write:?} delete={delete:?}");
                    let reaches = |granted: Permission| granted == Permission::InsecureAllow;
                    for at in [&path, &below] {
                        let caps = grants.capabilities(at);
                        assert!(caps.read, "{case}");
                        assert_eq!(caps.write, reaches(write) && !is_sealed, "{case} at {at}");
                        assert_eq!(caps.delete, reaches(delete) && !is_sealed, "{case} at {at}");
                    }
                    // Removing the ancestor takes the sensitive path with it.
                    if segments.len() > 1 {
                        let parent = ConfigPath::from_segments(
                            segments[..segments.len() - 1].iter().cloned(),
                        );
                        if grants.rule_for(&parent).is_some() {
                            assert_eq!(
                                grants.capabilities(&parent).delete,
                                reaches(delete) && !holds_sealed(&parent),
                                "{case} removing {parent}"
                            );
                        }
                    }
                    // The config check: `true` is an error where the rule
                    // reaches the pattern (at or below it, or through a
                    // wildcard), never on an ancestor.
                    let rule_path = ConfigPath::parse(&rule).unwrap();
                    assert_eq!(
                        reaches_sensitive(&rule_path).is_some(),
                        at_or_below,
                        "{case}"
                    );
                }
            }
        }
    }
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
    assert_eq!(
        reaches_sensitive(&p("conversation.tools.*.style.hidden")),
        Some("conversation.tools.*.style.hidden")
    );
    assert_eq!(reaches_sensitive(&p("conversation")), None);
    assert_eq!(
        reaches_sensitive(&p("conversation.policies")),
        Some("conversation.policies")
    );
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
fn write_and_delete_are_true_false_or_insecure_allow() {
    for field in ["write", "delete"] {
        let parse = |value: &str| {
            serde_json::from_str::<ConfigGrant>(&format!(r#"{{"path": "a", "{field}": {value}}}"#))
                .map(|g| if field == "write" { g.write } else { g.delete })
        };
        assert_eq!(parse("true").unwrap(), Permission::Allowed, "{field}");
        assert_eq!(parse("false").unwrap(), Permission::Denied, "{field}");
        assert_eq!(
            parse(r#""insecure_allow""#).unwrap(),
            Permission::InsecureAllow,
            "{field}"
        );
        let error = parse(r#""yes""#).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "invalid value: string \"yes\", expected true, false or \"insecure_allow\""
            ),
            "{error}"
        );
    }
    let unset = serde_json::from_str::<ConfigGrant>(r#"{"path": "a"}"#).unwrap();
    assert_eq!((unset.write, unset.delete), (Write::Denied, Delete::Denied));
    assert_eq!(
        serde_json::from_str::<ConfigGrant>(r#"{"path": "a", "write": "yes"}"#)
            .unwrap_err()
            .to_string(),
        "invalid value: string \"yes\", expected true, false or \"insecure_allow\" at line 1 column 28"
    );
    assert_eq!(
        serde_json::to_value(grant("a", false, Write::InsecureAllow, false)).unwrap(),
        json!({ "path": "a", "read": false, "write": "insecure_allow", "delete": false, "apply": "ask" })
    );
    assert_eq!(
        serde_json::to_value(grant("a", false, Write::Allowed, Delete::InsecureAllow)).unwrap(),
        json!({ "path": "a", "read": false, "write": true, "delete": "insecure_allow", "apply": "ask" })
    );
    // The schema says what the file takes.
    let schema = crate::schema::config_schema().unwrap();
    let grant = &schema["definitions"]["ConfigGrant"]["properties"];
    for field in ["write", "delete"] {
        let node = resolve(&grant[field], schema);
        assert_eq!(
            node["enum"],
            json!([false, true, "insecure_allow"]),
            "{field}: {node}"
        );
    }
}

#[test]
fn a_rule_path_must_exist_and_wildcards_stand_only_for_map_keys() {
    let schema = crate::schema::config_schema().unwrap();
    let check = |path: &str| check_path(&p(path), schema).map_err(|e| e.to_string());
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
        Err("`*` stands for any key of a map, and `assistant` has fixed keys (agents_md, instruction_files, instructions, model, repository_state, system_prompt); name the one you mean".into())
    );
    assert_eq!(
        check("assistant.modle"),
        Err("`assistant` has no key `modle` (its keys: agents_md, instruction_files, instructions, model, repository_state, system_prompt)".into())
    );
    assert_eq!(
        check("assistant.model.id.provider"),
        Err("`assistant.model.id` is a single value; nothing is below it".into())
    );
}

/// `check_removal` decides from a few points of what a removal takes; the
/// oracle walks every concrete path it takes, in a small world of names
/// (those the sensitive patterns use, one more, and a name no rule spells,
/// which a `*` stands for), and asks the deciding rule about each.
mod removal_against_every_part {
    use proptest::prelude::*;

    use super::*;

    /// The names rules and paths are made of.
    const NAMES: [&str; 8] = [
        "conversation",
        "tools",
        "policy",
        "enable",
        "style",
        "hidden",
        "policies",
        "t1",
    ];
    /// A name no rule spells.
    const FRESH: &str = "fresh";
    const DEPTH: usize = 5;

    fn permission() -> impl Strategy<Value = Permission> {
        prop_oneof![
            Just(Permission::Denied),
            Just(Permission::Allowed),
            Just(Permission::InsecureAllow)
        ]
    }

    /// Paths rules and removals are cut from: the sensitive ones and their
    /// neighbours, so that the interesting meetings come up often.
    const TEMPLATES: [&[&str]; 7] = [
        &["conversation", "tools", "t1", "policy"],
        &["conversation", "tools", "t1", "style", "hidden"],
        &["conversation", "tools", "t1", "enable"],
        &["conversation", "policies"],
        &["conversation", "tools", "t1", "style", "policy"],
        &["style", "tool_call", "show_arguments"],
        &["conversation", "tools", "t1", "options"],
    ];

    /// A prefix of a template, each segment kept, made `*`, or made
    /// another name.
    fn cut(wild: bool) -> impl Strategy<Value = Vec<String>> {
        (
            prop::sample::select(TEMPLATES.to_vec()),
            1..=DEPTH,
            prop::collection::vec(0..10_u8, DEPTH),
        )
            .prop_map(move |(template, len, dice)| {
                template
                    .iter()
                    .take(len)
                    .zip(dice)
                    .map(|(name, die)| match die {
                        0 if wild => "*".to_owned(),
                        1 => FRESH.to_owned(),
                        2 => NAMES[usize::from(die) % NAMES.len()].to_owned(),
                        _ => (*name).to_owned(),
                    })
                    .collect()
            })
    }

    fn rule() -> impl Strategy<Value = ConfigGrant> {
        (cut(true), permission(), any::<bool>()).prop_map(|(path, delete, ask)| ConfigGrant {
            path: path.join("."),
            read: false,
            write: Write::Denied,
            delete,
            apply: if ask { Apply::Ask } else { Apply::Unattended },
        })
    }

    /// Every concrete path at or below `at`, to `DEPTH` segments, whose
    /// names at each depth are those some sensitive pattern or rule spells
    /// there, and one that none does (which stands for all the others:
    /// they are decided alike).
    fn below(at: &[String], rules: &[ConfigGrant]) -> Vec<Vec<String>> {
        let spelled: Vec<Vec<String>> = SENSITIVE
            .iter()
            .map(|s| s.split('.').map(str::to_owned).collect())
            .chain(
                rules
                    .iter()
                    .map(|r| r.path.split('.').map(str::to_owned).collect()),
            )
            .collect();
        let names_at = |depth: usize| {
            let mut names: Vec<String> = spelled
                .iter()
                .filter_map(|segments| segments.get(depth))
                .filter(|name| *name != "*")
                .cloned()
                .collect();
            names.push(FRESH.to_owned());
            names.sort();
            names.dedup();
            names
        };
        let mut out = vec![at.to_vec()];
        let mut frontier = vec![at.to_vec()];
        while let Some(path) = frontier.pop() {
            if path.len() >= DEPTH {
                continue;
            }
            for name in names_at(path.len()) {
                let mut next = path.clone();
                next.push(name);
                out.push(next.clone());
                frontier.push(next);
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn a_removal_is_allowed_exactly_when_every_part_of_it_is(
            rules in prop::collection::vec(rule(), 1..5),
            at in cut(false),
        ) {
            let grants = Grants::new(&rules);
            let every_part = below(&at, &rules).into_iter().all(|part| {
                let part = ConfigPath::from_segments(part);
                grants
                    .rule_for(&part)
                    .is_some_and(|rule| rule.delete.reaches(sensitive(&part).is_some()))
            });
            // A sandbox, or what holds the conversation's, never goes.
            let seals = sealed(&ConfigPath::from_segments(at.clone())).is_some()
                || (at.len() <= 2 && ["conversation", "sandbox"].iter().zip(&at).all(|(a, b)| a == b));
            let got = grants.check_removal(&ConfigPath::from_segments(at.clone()));
            prop_assert_eq!(got.is_ok(), every_part && !seals, "removing {:?}: {:?}", at, got);
        }
    }
}
