#![allow(clippy::unwrap_used)]

use super::*;

fn facts(root: &Path) -> Facts {
    Facts {
        root: root.to_path_buf(),
        os: "linux (x86_64)".into(),
        date: "2026-11-26".into(),
        cwd: root.to_path_buf(),
        repo: None,
    }
}

fn assistant(system: Option<&str>, instructions: &[&str], files: &[&str]) -> AssistantConfig {
    AssistantConfig {
        system_prompt: system.map(str::to_owned),
        instructions: instructions.iter().map(|s| (*s).to_owned()).collect(),
        instruction_files: files.iter().map(|s| (*s).to_owned()).collect(),
        agents_md: true,
        repository_state: true,
        model: jp_config::assistant::ModelConfig {
            id: "scripted/demo".into(),
            parameters: jp_config::assistant::ParametersConfig {
                max_tokens: 1024,
                temperature: None,
                top_p: None,
            },
        },
    }
}

const DEFAULT: &str = "You are jp, a coding assistant working in the user's workspace.\n\
\n\
- Workspace root: /work/project\n\
- Operating system: linux (x86_64)\n\
- Today's date: 2026-11-26 (UTC)\n\
\n\
You reach the workspace's files only through your tools; a path you give a tool is relative to \
the workspace root. The user sees each tool call and may decline it: a declined call is the \
user's decision, not an error, so do not retry it unchanged; ask what they want, or take another \
way.";

#[test]
fn the_default_prompt_says_where_the_model_is() {
    let facts = facts(Path::new("/work/project"));
    assert_eq!(default_prompt(&facts), DEFAULT);
    assert_eq!(
        system_prompt(&assistant(None, &[], &[]), &facts)
            .unwrap()
            .text,
        Some(DEFAULT.to_owned())
    );
}

#[test]
fn instructions_follow_the_default_or_the_replacement() {
    let facts = facts(Path::new("/work/project"));
    assert_eq!(
        system_prompt(&assistant(None, &["Be brief."], &[]), &facts)
            .unwrap()
            .text,
        Some(format!("{DEFAULT}\n\nBe brief."))
    );
    assert_eq!(
        system_prompt(
            &assistant(Some("Only {{date}} and $(whoami)."), &["Be brief."], &[]),
            &facts
        )
        .unwrap()
        .text,
        Some("Only {{date}} and $(whoami).\n\nBe brief.".to_owned()),
        "config text is sent as written"
    );
    assert_eq!(
        system_prompt(&assistant(Some(""), &[], &[]), &facts)
            .unwrap()
            .text,
        None,
        "an empty system_prompt and nothing else sends none"
    );
    assert_eq!(
        system_prompt(&assistant(Some(""), &["Be brief."], &[]), &facts)
            .unwrap()
            .text,
        Some("Be brief.".to_owned())
    );
}

#[test]
fn instruction_files_are_read_from_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), "Run cargo test.\n\n").unwrap();
    std::fs::write(dir.path().join("docs/style.md"), "Short names.").unwrap();
    let prompt = system_prompt(
        &assistant(
            Some("Base."),
            &["Be brief."],
            &["AGENTS.md", "docs/../docs/style.md"],
        ),
        &facts(dir.path()),
    )
    .unwrap();
    assert_eq!(
        prompt.text.as_deref(),
        Some("Base.\n\nBe brief.\n\nRun cargo test.\n\nShort names.")
    );
}

fn problem(root: &Path, path: &str) -> String {
    let error = system_prompt(&assistant(None, &[], &[path]), &facts(root)).unwrap_err();
    error.to_string()
}

#[test]
fn an_instruction_file_outside_the_workspace_is_refused() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(outer.path().join("secret"), "token").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outer.path().join("secret"), root.join("link.md")).unwrap();
    let outside = "it is outside the workspace; name a file in it, relative to its root";
    assert_eq!(
        problem(&root, "../secret"),
        format!("assistant.instruction_files[0] (../secret): {outside}")
    );
    let absolute = outer.path().join("secret").display().to_string();
    assert_eq!(
        problem(&root, &absolute),
        format!("assistant.instruction_files[0] ({absolute}): {outside}")
    );
    #[cfg(unix)]
    assert_eq!(
        problem(&root, "link.md"),
        format!("assistant.instruction_files[0] (link.md): {outside}")
    );
}

#[test]
fn an_instruction_file_must_be_a_small_text_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("bin.md"), [0xff, 0xfe, 0x00]).unwrap();
    let big = "x".repeat(usize::try_from(MAX_INSTRUCTION_FILE_BYTES).unwrap() + 1);
    std::fs::write(root.join("big.md"), big).unwrap();
    assert_eq!(
        problem(root, "sub"),
        "assistant.instruction_files[0] (sub): it is not a file"
    );
    assert_eq!(
        problem(root, "bin.md"),
        "assistant.instruction_files[0] (bin.md): it is not UTF-8 text"
    );
    assert_eq!(
        problem(root, "big.md"),
        "assistant.instruction_files[0] (big.md): it is 262145 bytes; the most an instruction file may hold is 262144"
    );
}

#[test]
fn a_listed_file_that_is_missing_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = system_prompt(
        &assistant(Some("Base."), &[], &["CLAUDE.md", "missing.md"]),
        &facts(dir.path()),
    )
    .unwrap();
    assert_eq!(
        prompt,
        SystemPrompt {
            text: Some("Base.".into()),
            warnings: vec![
                "assistant.instruction_files[0] (CLAUDE.md): there is no such file; it is left out"
                    .into(),
                "assistant.instruction_files[1] (missing.md): there is no such file; it is left out"
                    .into(),
            ],
        }
    );
}

#[test]
fn agents_md_is_read_from_the_root_down_to_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("crates/a/src")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("AGENTS.md"), "Root rules.\n").unwrap();
    std::fs::write(root.join("crates/a/AGENTS.md"), "Crate rules.\n").unwrap();
    std::fs::write(root.join("docs/AGENTS.md"), "Not on the way.\n").unwrap();
    let mut facts = facts(&root);
    facts.cwd = root.join("crates/a/src");
    let prompt = system_prompt(
        &assistant(Some("Base."), &["Brief."], &["AGENTS.md"]),
        &facts,
    );
    assert_eq!(
        prompt.unwrap(),
        SystemPrompt {
            text: Some("Base.\n\nBrief.\n\nRoot rules.\n\nCrate rules.".into()),
            warnings: Vec::new(),
        },
        "root first, then deeper; AGENTS.md listed too is sent once"
    );
    let mut off = assistant(Some("Base."), &[], &[]);
    off.agents_md = false;
    assert_eq!(
        system_prompt(&off, &facts).unwrap().text.as_deref(),
        Some("Base.")
    );
    // Outside the workspace (a cwd jp was not started under), only the
    // root's is read.
    facts.cwd = std::path::PathBuf::from("/");
    assert_eq!(
        system_prompt(&assistant(Some("Base."), &[], &[]), &facts)
            .unwrap()
            .text
            .as_deref(),
        Some("Base.\n\nRoot rules.")
    );
    // A found one that is not text stops the query, naming the switch.
    std::fs::write(root.join("AGENTS.md"), [0xff, 0xfe]).unwrap();
    assert_eq!(
        system_prompt(&assistant(None, &[], &[]), &facts)
            .unwrap_err()
            .to_string(),
        "AGENTS.md (read as the project's instructions; `assistant.agents_md = false` turns that off): it is not UTF-8 text"
    );
}

#[test]
fn the_default_prompt_says_the_repository_state() {
    let mut facts = facts(Path::new("/work/project"));
    facts.repo = Some(super::super::repo::RepoState {
        branch: Some("main".into()),
        detached_at: None,
        changed: 1,
        subject: Some("Fix it".into()),
    });
    assert_eq!(
        default_prompt(&facts),
        format!(
            "{DEFAULT}\n\nThe workspace is a git repository. When this session started:\n\
             - Branch: \"main\"\n\
             - Working tree: 1 path changed or untracked\n\
             - Last commit: \"Fix it\""
        )
    );
    assert_eq!(
        system_prompt(&assistant(Some("Mine."), &[], &[]), &facts)
            .unwrap()
            .text
            .as_deref(),
        Some("Mine."),
        "a system_prompt of the user's replaces it all"
    );
}

#[test]
fn an_instruction_file_that_leads_to_a_secret_is_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".env"), "AWS_SECRET_ACCESS_KEY=x").unwrap();
    std::fs::write(root.join(".git/config"), "url = https://u:t@h/r").unwrap();
    std::os::unix::fs::symlink(".env", root.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(".git/config", root.join("CLAUDE.md")).unwrap();
    let facts = facts(&root);
    assert_eq!(
        system_prompt(&assistant(None, &[], &[]), &facts)
            .unwrap_err()
            .to_string(),
        "AGENTS.md (read as the project's instructions; `assistant.agents_md = false` turns that off): \
         it leads to .env: it looks like it holds secrets (keys, credentials, .env); jp does not send it"
    );
    let mut listed = assistant(None, &[], &["CLAUDE.md"]);
    listed.agents_md = false;
    assert_eq!(
        system_prompt(&listed, &facts).unwrap_err().to_string(),
        "assistant.instruction_files[0] (CLAUDE.md): it leads to .git/config: it is in a .git directory, \
         which may hold credentials (remote URLs with tokens); jp does not send it"
    );
    std::fs::remove_file(root.join("AGENTS.md")).unwrap();
    std::fs::write(root.join("AGENTS.md"), "a\0b").unwrap();
    assert_eq!(
        system_prompt(&assistant(None, &[], &[]), &facts)
            .unwrap_err()
            .to_string(),
        "AGENTS.md (read as the project's instructions; `assistant.agents_md = false` turns that off): it is not UTF-8 text"
    );
}
