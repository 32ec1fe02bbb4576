//! Loading real files from a temporary workspace: layer order, `extends`,
//! environment variables, `--cfg`, and errors that name file, line and key.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use jp_config::ConfigPath;
use jp_config::load::{FlagAssignment, LoadOptions, Loaded, load};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/.jp")).unwrap();
        std::fs::create_dir_all(dir.path().join("project/src/deep")).unwrap();
        Self { dir }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn options(&self) -> LoadOptions {
        LoadOptions {
            cwd: self.project().join("src/deep"),
            user_config: Some(self.dir.path().join("xdg/jp/config.toml")),
            // The workspace's own file is what these tests are about.
            trust: jp_config::trust::WorkspaceTrust::Trusted,
            ..LoadOptions::default()
        }
    }

    fn load(&self, options: &LoadOptions) -> Loaded {
        match load(options) {
            Ok(loaded) => loaded,
            Err(e) => panic!("config should load:\n{e}"),
        }
    }

    fn errors(&self, options: &LoadOptions) -> Vec<String> {
        let err = load(options).expect_err("config should not load");
        let root = format!("{}/", self.dir.path().display());
        err.errors
            .iter()
            .map(|d| d.to_string().replace(&root, ""))
            .collect()
    }
}

fn key(s: &str) -> ConfigPath {
    ConfigPath::parse(s).unwrap()
}

fn label<'a>(loaded: &'a Loaded, k: &str) -> &'a str {
    loaded
        .source_of(&key(k))
        .map_or("default", |l| l.label.as_str())
}

#[test]
fn layers_apply_weakest_first_and_record_their_source() {
    let f = Fixture::new();
    f.write(
        "xdg/jp/config.toml",
        "[assistant]\ninstructions = [\"user\"]\n[assistant.model]\nid = \"openai/gpt-5-mini\"\n[assistant.model.parameters]\nmax_tokens = 100\ntemperature = 0.5\n",
    );
    f.write(
        "project/.jp/config.toml",
        "[assistant]\ninstructions = [\"workspace\"]\n[assistant.model.parameters]\nmax_tokens = 200\n",
    );
    let mut options = f.options();
    options.env = vec![
        (
            "JP_CFG_ASSISTANT__MODEL__PARAMETERS__MAX_TOKENS".into(),
            "300".into(),
        ),
        ("UNRELATED".into(), "x".into()),
    ];
    options.assignments = vec!["assistant.model.parameters.top_p=0.9".into()];
    let loaded = f.load(&options);
    let c = &loaded.config.assistant;
    assert_eq!(c.model.id, "openai/gpt-5-mini");
    assert_eq!(c.model.parameters.max_tokens, 300);
    assert_eq!(c.model.parameters.temperature, Some(0.5));
    assert_eq!(c.model.parameters.top_p, Some(0.9));
    // instructions append across layers; scalars replace.
    assert_eq!(c.instructions, ["user", "workspace"]);
    assert_eq!(
        loaded.workspace_root.as_deref(),
        Some(f.project().as_path())
    );

    let user = f
        .dir
        .path()
        .join("xdg/jp/config.toml")
        .display()
        .to_string();
    assert_eq!(label(&loaded, "assistant.model.id"), user);
    assert_eq!(
        label(&loaded, "assistant.model.parameters.max_tokens"),
        "env JP_CFG_ASSISTANT__MODEL__PARAMETERS__MAX_TOKENS"
    );
    assert_eq!(
        label(&loaded, "assistant.model.parameters.top_p"),
        "--cfg assistant.model.parameters.top_p=0.9"
    );
    assert_eq!(label(&loaded, "style.color"), "default");
    let ws = f.project().join(".jp/config.toml").display().to_string();
    let instruction_sources = loaded
        .sources_of(&key("assistant.instructions"))
        .iter()
        .map(|l| l.label.clone())
        .collect::<Vec<_>>();
    assert_eq!(instruction_sources, [user, ws]);
}

#[test]
fn extends_globs_load_before_the_file_in_sorted_order() {
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "extends = [\"tools/**/*.toml\"]\n[conversation.tools.b]\nsummary = \"from config.toml\"\n",
    );
    f.write(
        "project/.jp/tools/fs/b.toml",
        "[conversation.tools.b]\ncommand = \"b-tool\"\nsummary = \"from b.toml\"\n",
    );
    f.write(
        "project/.jp/tools/a.toml",
        "[conversation.tools.a]\ncommand = [\"a tool\", \"--flag\"]\n",
    );
    let loaded = f.load(&f.options());
    let tools = &loaded.config.conversation.tools;
    assert_eq!(tools["b"].summary.as_deref(), Some("from config.toml"));
    assert_eq!(tools["b"].command.as_ref().unwrap().argv(), ["b-tool"]);
    assert_eq!(
        tools["a"].command.as_ref().unwrap().argv(),
        ["a tool", "--flag"]
    );
    let labels = loaded
        .layers
        .iter()
        .map(|l| l.label.clone())
        .collect::<Vec<_>>();
    let p = |rel: &str| f.project().join(rel).display().to_string();
    assert_eq!(
        labels,
        [
            "default".into(),
            p(".jp/tools/a.toml"),
            p(".jp/tools/fs/b.toml"),
            p(".jp/config.toml")
        ]
    );
}

#[test]
fn a_missing_extends_file_and_cycles_are_errors() {
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "extends = [\"other.toml\", \"nope.toml\"]\n",
    );
    f.write("project/.jp/other.toml", "extends = [\"config.toml\"]\n");
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/other.toml: extends: extends cycle: project/.jp/config.toml -> project/.jp/other.toml -> project/.jp/config.toml",
            "error: project/.jp/config.toml:1: extends[1]: no such file: project/.jp/nope.toml",
        ]
    );
}

#[test]
fn an_extends_entry_that_is_no_regular_file_says_what_it_is() {
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "extends = [\"/dev/null\", \"sub\"]\n",
    );
    std::fs::create_dir_all(f.project().join(".jp/sub")).unwrap();
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/config.toml:1: extends[0]: /dev/null is not a regular file (a device or a pipe?); config files are read only from regular files",
            "error: project/.jp/config.toml:1: extends[1]: project/.jp/sub is a directory, not a config file",
        ]
    );
}

#[test]
fn parse_errors_name_file_line_and_key() {
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "# comment\n[assistant.model]\nid = \"anthropic/x\"\n\n[assistant.model.parameters]\nmax_tokens = \"many\"\n",
    );
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/config.toml:6: assistant.model.parameters.max_tokens: expected a whole number from 0 to 4294967295, found the string \"many\""
        ]
    );

    f.write("project/.jp/config.toml", "[assistant]\nmodle = 1\n");
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/config.toml:2: assistant.modle: unknown field `modle`, expected one of `system_prompt`, `instructions`, `instruction_files`, `agents_md`, `repository_state`, `model`"
        ]
    );

    f.write("project/.jp/config.toml", "[assistant\n");
    let errors = f.errors(&f.options());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("error: project/.jp/config.toml:1: "),
        "{errors:?}"
    );
}

#[test]
fn bad_environment_and_cfg_values_name_their_layer() {
    let f = Fixture::new();
    let mut options = f.options();
    options.env = vec![("JP_CFG_STYLE__COLOR".into(), "sometimes".into())];
    options.assignments = vec![
        "assistant.model.parameters.max_tokens=-1".into(),
        "nokey".into(),
        "@missing.toml".into(),
    ];
    let errors = f.errors(&options);
    assert_eq!(
        errors,
        [
            "error: env JP_CFG_STYLE__COLOR: style.color: unknown variant `sometimes`, expected one of `auto`, `always`, `never`",
            "error: --cfg assistant.model.parameters.max_tokens=-1: assistant.model.parameters.max_tokens: expected a whole number from 0 to 4294967295, found the number -1",
            "error: --cfg nokey: expected `key=value`, `key:=json` or `@file`, found `nokey`",
            "error: --cfg @missing.toml: no such file: project/src/deep/missing.toml",
        ]
    );
}

#[test]
fn validation_errors_point_at_the_layer_that_wrote_the_key() {
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "[assistant.model]\nid = \"acme/model\"\n\n[assistant.model.parameters]\ntemperature = 3.0\n\n[conversation.tools.'*']\ncommand = \"x\"\n",
    );
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/config.toml:2: assistant.model.id: unknown provider `acme` in `acme/model` (providers: anthropic, openai, openrouter, ollama, llamacpp, google, scripted)",
            "error: project/.jp/config.toml:5: assistant.model.parameters.temperature: must be a number from 0 to 2, found 3",
            "error: project/.jp/config.toml:8: conversation.tools.'*'.command: cannot be set for all tools; `'*'` takes only enable, policy, run, result, style, timeout_secs, max_output_bytes and max_argument_bytes",
        ]
    );
}

#[test]
fn aliases_resolve_and_unknown_ids_are_errors() {
    let f = Fixture::new();
    let mut options = f.options();
    options.assignments = vec!["assistant.model.id=haiku".into()];
    let loaded = f.load(&options);
    assert_eq!(
        jp_config::validate::resolve_model_id(&loaded.config, "haiku").unwrap(),
        ("anthropic", "claude-haiku-4-5")
    );
    options.assignments = vec!["assistant.model.id=gpt".into()];
    assert_eq!(
        f.errors(&options),
        [
            "error: --cfg assistant.model.id=gpt: assistant.model.id: `gpt` is neither `provider/name` nor an alias (aliases: haiku, sonnet, opus)"
        ]
    );
}

#[test]
fn a_flag_s_value_wins_over_cfg_and_is_named_after_the_flag() {
    let f = Fixture::new();
    let mut options = f.options();
    options.assignments = vec!["assistant.model.id=sonnet".into()];
    options.flags = vec![FlagAssignment {
        flag: "--model haiku".into(),
        assignment: "assistant.model.id=haiku".into(),
    }];
    let loaded = f.load(&options);
    assert_eq!(loaded.config.assistant.model.id, "haiku");
    assert_eq!(label(&loaded, "assistant.model.id"), "--model haiku");
    options.flags = vec![FlagAssignment {
        flag: "--model gpt".into(),
        assignment: "assistant.model.id=gpt".into(),
    }];
    assert_eq!(
        f.errors(&options),
        [
            "error: --model gpt: assistant.model.id: `gpt` is neither `provider/name` nor an alias (aliases: haiku, sonnet, opus)"
        ]
    );
}

#[test]
fn no_workspace_means_user_config_only() {
    let f = Fixture::new();
    f.write("xdg/jp/config.toml", "[style]\ncolor = \"never\"\n");
    let mut options = f.options();
    options.cwd = f.dir.path().join("xdg");
    let loaded = f.load(&options);
    assert_eq!(loaded.workspace_root, None);
    assert_eq!(
        loaded.config.style.color,
        jp_config::style::ColorMode::Never
    );
}

/// Two tools with a `path` and a `target` parameter, and `extra`.
const TOOLS: &str = r#"
[conversation.tools.read]
command = "r"
parameters.path = { type = "path", required = true }

[conversation.tools.write]
command = "w"
parameters.path = { type = "path", required = true }
parameters.lines = { type = "array", items = { type = "string" } }

[conversation.tools.deploy]
command = "d"
parameters.target = { type = "string" }
"#;

#[test]
fn stateful_policies_load_from_every_layer_and_append() {
    let f = Fixture::new();
    f.write(
        "xdg/jp/config.toml",
        "[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"read\"]\n",
    );
    f.write(
        "project/.jp/config.toml",
        &format!("{TOOLS}\n[[conversation.policies]]\nkind = \"read_before_write\"\nread_tools = [\"read\"]\nwrite_tools = [\"wr*\"]\nwhen = {{ path = \"style.color\", equals = \"auto\" }}\n"),
    );
    let loaded = f.load(&f.options());
    let kinds: Vec<&str> = loaded
        .config
        .conversation
        .policies
        .iter()
        .map(|p| p.kind.as_str())
        .collect();
    assert_eq!(kinds, ["sequential", "read_before_write"]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let when = loaded.config.conversation.policies[1]
        .when
        .as_ref()
        .unwrap();
    assert!(when.holds(&loaded.resolved));
}

#[test]
fn stateful_policy_mistakes_name_file_line_and_entry() {
    let f = Fixture::new();
    let cases: [(&str, &[&str]); 6] = [
        (
            "[[conversation.policies]]\nkind = \"read_before_write\"\nread_tools = [\"read\"]\nwrite_tools = [\"write\"]\nowner = \"me\"\n",
            &[
                "error: project/.jp/config.toml:19: conversation.policies[0].owner: unknown field `owner`, expected one of `kind`, `tool`, `dependencies`, `key`, `read_tools`, `write_tools`, `when`",
            ],
        ),
        (
            "[[conversation.policies]]\nkind = \"before\"\n",
            &[
                "error: project/.jp/config.toml:16: conversation.policies[0].kind: unknown variant `before`, expected one of `sequential`, `keyed`, `read_before_write`",
            ],
        ),
        (
            "[[conversation.policies]]\nkind = \"keyed\"\ntool = \"write\"\ndependencies = [\"read\"]\n",
            &[
                "error: project/.jp/config.toml:15: conversation.policies[0].key: a `keyed` policy needs `key`",
            ],
        ),
        (
            "[[conversation.policies]]\nkind = \"keyed\"\ntool = \"write\"\ndependencies = [\"read\"]\nkey = \"/lines\"\n",
            &[
                "error: project/.jp/config.toml:19: conversation.policies[0].key: \"key\" \"/lines\": the tool has no parameter \"lines\" (it has /path) (in tool `read`)",
                "error: project/.jp/config.toml:19: conversation.policies[0].key: \"key\" \"/lines\" goes through an array; a key must be one value per call (in tool `write`)",
            ],
        ),
        (
            "[[conversation.policies]]\nkind = \"read_before_write\"\nread_tools = [\"read\", \"deploy\"]\nwrite_tools = [\"write\"]\n",
            &[
                "error: project/.jp/config.toml:15: conversation.policies[0].key: \"key\" \"/path\": the tool has no parameter \"path\" (it has /target) (in tool `deploy`; `key` is \"/path\" unless set)",
            ],
        ),
        (
            "[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"deploy\"]\nwhen = { path = \"style.colour\", equals = 1 }\n",
            &[
                "error: project/.jp/config.toml:18: conversation.policies[0].dependencies: `deploy` is in both `tool` and `dependencies`: it would have to succeed before it could run (a dependency cycle)",
                "error: project/.jp/config.toml:19: conversation.policies[0].when: `when.path` \"style.colour\" is not a config key",
            ],
        ),
    ];
    let more: [(&str, &[&str]); 2] = [
        (
            "[[conversation.policies]]\nkind = \"read_before_write\"\nread_tools = [\"deploy\"]\nwrite_tools = [\"deploy2\"]\nkey = \"/target\"\n\n[conversation.tools.deploy2]\ncommand = \"d\"\nparameters.target = { type = \"path\" }\n",
            &[
                "error: project/.jp/config.toml:19: conversation.policies[0].key: \"/target\" must be a `path` parameter of every read and write tool (path in deploy2; string in deploy)",
            ],
        ),
        (
            "[[conversation.policies]]\nkind = \"keyed\"\ntool = \"deploy2\"\ndependencies = [\"deploy\"]\nkey = \"/target\"\n\n[conversation.tools.deploy2]\ncommand = \"d\"\nparameters.target = { type = \"path\" }\n",
            &[
                "error: project/.jp/config.toml:19: conversation.policies[0].key: \"/target\" has one type in some tools and another in others (path in deploy2; string in deploy), so their keys would never match",
            ],
        ),
    ];
    for (policies, expected) in cases.into_iter().chain(more) {
        f.write("project/.jp/config.toml", &format!("{TOOLS}\n{policies}"));
        assert_eq!(f.errors(&f.options()), expected, "{policies}");
    }
    // Unknown tools only warn: a user-wide policy may name tools some
    // workspaces do not have.
    f.write(
        "project/.jp/config.toml",
        &format!("{TOOLS}\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"lint\", \"test_*\"]\n"),
    );
    let loaded = f.load(&f.options());
    let root = format!("{}/", f.dir.path().display());
    let warnings: Vec<String> = loaded
        .warnings
        .iter()
        .map(|w| w.to_string().replace(&root, ""))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: project/.jp/config.toml:18: conversation.policies[0].dependencies: there is no tool \"lint\", so nothing can satisfy it",
            "warning: project/.jp/config.toml:18: conversation.policies[0].dependencies: \"test_*\" matches no configured tool, so nothing can satisfy it",
        ]
    );
}

/// Stateful policies append across layers, so a problem is placed by the
/// layer its entry came from, with the entry's index in that file (not in
/// the merged list), and a cycle names its other entries the same way.
#[test]
fn stateful_policy_mistakes_in_two_layers_name_each_file_and_its_own_index() {
    let f = Fixture::new();
    f.write(
        "xdg/jp/config.toml",
        "[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"lint\"]\n\n[[conversation.policies]]\nkind = \"keyed\"\ntool = \"write\"\ndependencies = [\"read\"]\n\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"read\"\ndependencies = [\"deploy\"]\n",
    );
    f.write(
        "project/.jp/config.toml",
        &format!("{TOOLS}\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"read\"]\nkey = \"/target\"\n"),
    );
    let err = load(&f.options()).expect_err("config should not load");
    let root = format!("{}/", f.dir.path().display());
    let shown = |list: &[jp_config::Diagnostic]| {
        list.iter()
            .map(|d| d.to_string().replace(&root, ""))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shown(&err.errors),
        [
            "error: xdg/jp/config.toml:6: conversation.policies[1].key: a `keyed` policy needs `key`",
            "error: project/.jp/config.toml:19: conversation.policies[0].key: a `sequential` policy has no `key` (see `kind`)",
            "error: project/.jp/config.toml:15: conversation.policies[0]: dependency cycle: deploy needs read needs deploy; none of these tools could ever run (with conversation.policies[2] in xdg/jp/config.toml:11)",
        ]
    );
    assert_eq!(
        shown(&err.warnings),
        [
            "warning: xdg/jp/config.toml:4: conversation.policies[0].dependencies: there is no tool \"lint\", so nothing can satisfy it",
        ]
    );
}

/// Three entries that each need the next tool close a cycle only
/// together: the problem is placed at the last and names the others.
#[test]
fn a_dependency_cycle_through_three_entries_is_an_error() {
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        &format!("{TOOLS}\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"read\"\ndependencies = [\"deploy\"]\n\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"write\"]\n\n[[conversation.policies]]\nkind = \"keyed\"\ntool = \"write\"\ndependencies = [\"read\"]\nkey = \"/path\"\n"),
    );
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/config.toml:25: conversation.policies[2]: dependency cycle: deploy needs write needs read needs deploy; none of these tools could ever run (with conversation.policies[0], conversation.policies[1])",
        ]
    );
    // Two of the three close nothing.
    f.write(
        "project/.jp/config.toml",
        &format!("{TOOLS}\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"read\"\ndependencies = [\"deploy\"]\n\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"write\"]\n"),
    );
    f.load(&f.options());
}

/// A `when.equals` that the key at `when.path` can never hold would turn
/// its policy off without a word; it is refused instead (a typo must not
/// weaken a rule, architecture decision 4).
#[test]
fn a_when_equals_the_key_cannot_hold_is_an_error() {
    let f = Fixture::new();
    let policy = |when: &str| {
        format!(
            "{TOOLS}\n[[conversation.policies]]\nkind = \"sequential\"\ntool = \"deploy\"\ndependencies = [\"read\"]\n{when}"
        )
    };
    let cases: [(&str, &str); 5] = [
        (
            "when = { path = \"style.color\", equals = 1 }\n",
            "error: project/.jp/config.toml:19: conversation.policies[0].when.equals: `when.equals` is a number, but \"style.color\" holds a string, so the condition could never hold and the policy would never apply",
        ),
        (
            "when = { path = \"style.color\", equals = \"nevr\" }\n",
            "error: project/.jp/config.toml:19: conversation.policies[0].when.equals: `when.equals` \"nevr\" is not a value \"style.color\" can have (\"auto\", \"always\", \"never\"), so the condition could never hold and the policy would never apply",
        ),
        // Unset now (null): judged by the type the schema gives the key.
        (
            "when = { path = \"assistant.model.parameters.temperature\", equals = \"hot\" }\n",
            "error: project/.jp/config.toml:19: conversation.policies[0].when.equals: `when.equals` is a string, but \"assistant.model.parameters.temperature\" holds a number, so the condition could never hold and the policy would never apply",
        ),
        (
            "when = { path = \"conversation.tools.read.enable\", equals = \"yes\" }\n",
            "error: project/.jp/config.toml:19: conversation.policies[0].when.equals: `when.equals` is a string, but \"conversation.tools.read.enable\" holds a boolean, so the condition could never hold and the policy would never apply",
        ),
        // A `when` table of its own: the line of `equals`.
        (
            "\n[conversation.policies.when]\npath = \"assistant.model.id\"\nequals = false\n",
            "error: project/.jp/config.toml:22: conversation.policies[0].when.equals: `when.equals` is a boolean, but \"assistant.model.id\" holds a string, so the condition could never hold and the policy would never apply",
        ),
    ];
    for (when, expected) in cases {
        f.write("project/.jp/config.toml", &policy(when));
        assert_eq!(f.errors(&f.options()), [expected], "{when}");
    }
    for when in [
        "when = { path = \"style.color\", equals = \"never\" }\n",
        "when = { path = \"assistant.model.parameters.temperature\", equals = 0.5 }\n",
        "when = { path = \"assistant.model.parameters.max_tokens\", equals = 100 }\n",
        "when = { path = \"conversation.tools.read.enable\", equals = true }\n",
        "when = { path = \"assistant.instructions\", equals = [\"be brief\"] }\n",
    ] {
        f.write("project/.jp/config.toml", &policy(when));
        f.load(&f.options());
    }
}

#[test]
fn config_grant_mistakes_name_file_line_and_rule() {
    let f = Fixture::new();
    let grant = |body: &str| {
        format!(
            "[conversation.tools.tune]\ncommand = \"t\"\n\n[[conversation.tools.tune.access.config]]\n{body}"
        )
    };
    let cases: [(&str, &[&str]); 7] = [
        (
            "path = \"conversation.tools.'*'.enable\"\nread = true\n",
            &[
                "error: project/.jp/config.toml:5: conversation.tools.tune.access.config[0].path: `conversation.tools.'*'.enable`: a grant cannot name the defaults entry `'*'` (it would read as any key); write `*` for any key",
            ],
        ),
        (
            "path = \"assistant.model\"\nread = true\nowner = \"me\"\n",
            &[
                "error: project/.jp/config.toml:7: conversation.tools.tune.access.config[0].owner: unknown field `owner`, expected one of `path`, `read`, `write`, `delete`, `apply`",
            ],
        ),
        (
            "path = \"assistant.models\"\nread = true\n",
            &[
                "error: project/.jp/config.toml:5: conversation.tools.tune.access.config[0].path: `assistant.models`: `assistant` has no key `models` (its keys: agents_md, instruction_files, instructions, model, repository_state, system_prompt)",
            ],
        ),
        (
            "path = \"assistant.*\"\nread = true\n",
            &[
                "error: project/.jp/config.toml:5: conversation.tools.tune.access.config[0].path: `assistant.*`: `*` stands for any key of a map, and `assistant` has fixed keys (agents_md, instruction_files, instructions, model, repository_state, system_prompt); name the one you mean",
            ],
        ),
        (
            "path = \"conversation.tools.*.policy\"\nwrite = true\n",
            &[
                "error: project/.jp/config.toml:6: conversation.tools.tune.access.config[0].write: tool `tune` grants write = true to `conversation.tools.*.policy`, which reaches the sensitive path `conversation.tools.*.policy`; use write = \"insecure_allow\" to acknowledge this grant",
            ],
        ),
        (
            "path = \"conversation.tools.tune.enable\"\nwrite = true\n",
            &[
                "error: project/.jp/config.toml:6: conversation.tools.tune.access.config[0].write: tool `tune` grants write = true to `conversation.tools.tune.enable`, which reaches the sensitive path `conversation.tools.*.enable`; use write = \"insecure_allow\" to acknowledge this grant",
            ],
        ),
        (
            "path = \"assistant.model\"\nread = true\n\n[[conversation.tools.tune.access.config]]\npath = \"assistant.model\"\nwrite = true\n",
            &[
                "error: project/.jp/config.toml:9: conversation.tools.tune.access.config[1].path: another rule of tool `tune` has the path `assistant.model`; one rule per path",
            ],
        ),
    ];
    for (body, expected) in cases {
        f.write("project/.jp/config.toml", &grant(body));
        assert_eq!(f.errors(&f.options()), expected, "{body}");
    }
    // An ancestor of sensitive paths with write = true loads (the grant
    // stops short of them, architecture decision 10). So does insecure_allow on a sensitive path.
    f.write(
        "project/.jp/config.toml",
        &grant("path = \"conversation.tools\"\nread = true\nwrite = true\n\n[[conversation.tools.tune.access.config]]\npath = \"conversation.tools.*.enable\"\nwrite = \"insecure_allow\"\napply = \"unattended\"\n"),
    );
    let loaded = f.load(&f.options());
    let grants = &loaded.config.conversation.tools["tune"].access.config;
    assert_eq!(grants.len(), 2);
    assert_eq!(grants[1].write, jp_config::access::Write::InsecureAllow);
    assert_eq!(grants[1].apply, jp_config::access::Apply::Unattended);
}

#[test]
fn conversation_changes_replay_above_the_files_and_below_cfg() {
    use jp_config::load::DeltaLayer;
    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "[assistant]\nsystem_prompt = \"be kind\"\ninstructions = [\"a\", \"b\"]\n\n[assistant.model.parameters]\ntemperature = 0.7\n",
    );
    let delta = |label: &str, delta: serde_json::Value, unsets: &[&str]| DeltaLayer {
        label: label.into(),
        delta,
        unsets: unsets.iter().map(|s| (*s).to_owned()).collect(),
    };
    let mut options = f.options();
    options.deltas = vec![
        delta(
            "conversation 1 (changed by tool a)",
            serde_json::json!({"assistant": {"model": {"id": "anthropic/claude-opus-5"}}}),
            &["assistant.system_prompt", "assistant.instructions[\"a\"]"],
        ),
        // Only removals: still a change.
        delta(
            "conversation 1 (changed by tool b)",
            serde_json::json!({}),
            &["assistant.model.parameters.temperature"],
        ),
    ];
    let loaded = f.load(&options);
    let assistant = &loaded.config.assistant;
    assert_eq!(assistant.model.id, "anthropic/claude-opus-5");
    assert_eq!(assistant.system_prompt, None);
    assert_eq!(assistant.instructions, ["b"]);
    assert_eq!(assistant.model.parameters.temperature, None);
    assert_eq!(
        label(&loaded, "assistant.model.id"),
        "conversation 1 (changed by tool a)"
    );

    // --cfg still wins for one query.
    options.assignments = vec!["assistant.model.id=anthropic/claude-haiku-4-5".into()];
    let loaded = f.load(&options);
    assert_eq!(
        loaded.config.assistant.model.id,
        "anthropic/claude-haiku-4-5"
    );

    // A change that does not load names itself.
    options.deltas = vec![delta(
        "conversation 1",
        serde_json::json!({"style": {"color": "purple"}}),
        &[],
    )];
    let errors = f.errors(&options);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("error: conversation 1: style.color:"),
        "{errors:?}"
    );
}

/// `max_argument_bytes` (issue 14): the tool's own, else the `'*'` entry's,
/// else 16 MiB; each answer names the key to change; 0 is refused.
#[test]
fn argument_limits_come_from_the_tool_then_the_defaults_entry() {
    use jp_config::tool::limits::{ArgumentLimit, argument_limit};

    let f = Fixture::new();
    f.write(
        "project/.jp/config.toml",
        "[conversation.tools.a]\ncommand = \"a\"\nmax_argument_bytes = 100\n\n[conversation.tools.b]\ncommand = \"b\"\n",
    );
    let loaded = f.load(&f.options());
    let tools = &loaded.config.conversation.tools;
    assert_eq!(
        argument_limit(tools, "a"),
        ArgumentLimit {
            bytes: 100,
            key: "conversation.tools.a.max_argument_bytes".into()
        }
    );
    assert_eq!(
        argument_limit(tools, "b"),
        ArgumentLimit {
            bytes: 16 * 1024 * 1024,
            key: "conversation.tools.b.max_argument_bytes".into()
        }
    );

    f.write(
        "project/.jp/config.toml",
        "[conversation.tools.'*']\nmax_argument_bytes = 200\n\n[conversation.tools.a]\ncommand = \"a\"\nmax_argument_bytes = 100\n\n[conversation.tools.b]\ncommand = \"b\"\n",
    );
    let loaded = f.load(&f.options());
    let tools = &loaded.config.conversation.tools;
    assert_eq!(argument_limit(tools, "a").bytes, 100);
    assert_eq!(
        argument_limit(tools, "b"),
        ArgumentLimit {
            bytes: 200,
            key: "conversation.tools.'*'.max_argument_bytes".into()
        }
    );

    f.write(
        "project/.jp/config.toml",
        "[conversation.tools.a]\ncommand = \"a\"\nmax_argument_bytes = 0\n",
    );
    assert_eq!(
        f.errors(&f.options()),
        [
            "error: project/.jp/config.toml:3: conversation.tools.a.max_argument_bytes: must be at least 1"
        ]
    );
}
