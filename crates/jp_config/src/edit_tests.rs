#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn key(s: &str) -> ConfigPath {
    ConfigPath::parse(s).unwrap()
}

#[test]
fn replaces_a_value_keeping_comments() {
    let text = "# my config\n[assistant.model]\n# the model\nid = \"a/b\" # trailing\n\n[style]\ncolor = \"auto\"\n";
    let out = set_key(
        text,
        &key("assistant.model.id"),
        &serde_json::json!("ollama/x"),
    )
    .unwrap();
    assert_eq!(
        out,
        "# my config\n[assistant.model]\n# the model\nid = \"ollama/x\" # trailing\n\n[style]\ncolor = \"auto\"\n"
    );
}

#[test]
fn creates_missing_tables() {
    let out = set_key(
        "",
        &key("conversation.tools.fs_read_file.policy.run"),
        &serde_json::json!("unattended"),
    )
    .unwrap();
    assert_eq!(
        out,
        "[conversation.tools.fs_read_file.policy]\nrun = \"unattended\"\n"
    );
    let out = set_key(
            "[style]\ncolor = \"never\"\n",
            &key("conversation.tools.'*'.policy.run"),
            &serde_json::json!([{ "arg": "/path", "prefix": "src/", "mode": "unattended" }, { "mode": "ask" }]),
        )
        .unwrap();
    assert_eq!(
        out,
        "[style]\ncolor = \"never\"\n\n[conversation.tools.\"*\".policy]\nrun = [{ arg = \"/path\", prefix = \"src/\", mode = \"unattended\" }, { mode = \"ask\" }]\n"
    );
}

#[test]
fn a_replaced_table_keeps_its_comments() {
    let text = "\
# Models we use.
[assistant.model]
# Fast and cheap.
id = \"a/b\" # for now
# Gone soon.
alias = \"x\"

[style]
color = \"auto\"
";
    let out = set_key(
        text,
        &key("assistant.model"),
        &serde_json::json!({ "id": "c/d", "parameters": { "max_tokens": 10 } }),
    )
    .unwrap();
    assert_eq!(
        out,
        "\
# Models we use.
[assistant.model]
# Fast and cheap.
id = \"c/d\" # for now
parameters = { max_tokens = 10 }

[style]
color = \"auto\"
"
    );
}

#[test]
fn a_replaced_array_of_tables_keeps_the_comments_of_the_tables_that_stay() {
    let text = "\
[tools.t.policy]
# Sources are safe.
[[tools.t.policy.run]]
prefix = \"src/\" # ours
mode = \"unattended\"

# Everything else.
[[tools.t.policy.run]]
mode = \"ask\"
";
    let out = set_key(
        text,
        &key("tools.t.policy.run"),
        &serde_json::json!([{ "prefix": "crates/", "mode": "unattended" }]),
    )
    .unwrap();
    assert_eq!(
        out,
        "\
[tools.t.policy]
# Sources are safe.
[[tools.t.policy.run]]
prefix = \"crates/\" # ours
mode = \"unattended\"
"
    );
    let out = set_key(
        text,
        &key("tools.t.policy.run"),
        &serde_json::json!([{ "mode": "ask" }, { "mode": "skip" }, { "mode": "deny" }]),
    )
    .unwrap();
    assert_eq!(
        out,
        "\
[tools.t.policy]
# Sources are safe.
[[tools.t.policy.run]]
mode = \"ask\"

# Everything else.
[[tools.t.policy.run]]
mode = \"skip\"

[[tools.t.policy.run]]
mode = \"deny\"
"
    );
    // A value that is not a list of tables replaces the array whole.
    let out = set_key(text, &key("tools.t.policy.run"), &serde_json::json!("ask")).unwrap();
    assert_eq!(out, "[tools.t.policy]\nrun = \"ask\"\n");
}

#[test]
fn sets_inside_inline_tables_and_refuses_values_in_the_way() {
    let out = set_key(
        "assistant = { model = { id = \"a/b\" } }\n",
        &key("assistant.model.id"),
        &serde_json::json!("c/d"),
    )
    .unwrap();
    assert_eq!(out, "assistant = { model = { id = \"c/d\" } }\n");
    assert_eq!(
        set_key(
            "[assistant]\nmodel = \"x\"\n",
            &key("assistant.model.id"),
            &serde_json::json!("c/d")
        )
        .unwrap_err()
        .to_string(),
        "`assistant.model` is set to a string, not a table, so `assistant.model.id` cannot be set below it"
    );
    assert_eq!(
        set_key("", &key("a"), &serde_json::Value::Null)
            .unwrap_err()
            .to_string(),
        "TOML has no null; set a value or remove the key from the file"
    );
}
