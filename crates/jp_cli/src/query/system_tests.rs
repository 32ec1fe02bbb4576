#![allow(clippy::unwrap_used)]

use super::*;

fn facts(root: &Path) -> Facts {
    Facts {
        root: root.to_path_buf(),
        os: "linux (x86_64)".into(),
        date: "2026-11-26".into(),
    }
}

fn assistant(system: Option<&str>, instructions: &[&str], files: &[&str]) -> AssistantConfig {
    AssistantConfig {
        system_prompt: system.map(str::to_owned),
        instructions: instructions.iter().map(|s| (*s).to_owned()).collect(),
        instruction_files: files.iter().map(|s| (*s).to_owned()).collect(),
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
        system_prompt(&assistant(None, &[], &[]), &facts).unwrap(),
        Some(DEFAULT.to_owned())
    );
}

#[test]
fn instructions_follow_the_default_or_the_replacement() {
    let facts = facts(Path::new("/work/project"));
    assert_eq!(
        system_prompt(&assistant(None, &["Be brief."], &[]), &facts).unwrap(),
        Some(format!("{DEFAULT}\n\nBe brief."))
    );
    assert_eq!(
        system_prompt(
            &assistant(Some("Only {{date}} and $(whoami)."), &["Be brief."], &[]),
            &facts
        )
        .unwrap(),
        Some("Only {{date}} and $(whoami).\n\nBe brief.".to_owned()),
        "config text is sent as written"
    );
    assert_eq!(
        system_prompt(&assistant(Some(""), &[], &[]), &facts).unwrap(),
        None,
        "an empty system_prompt and nothing else sends none"
    );
    assert_eq!(
        system_prompt(&assistant(Some(""), &["Be brief."], &[]), &facts).unwrap(),
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
        prompt.as_deref(),
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
    assert!(
        problem(root, "missing.md")
            .starts_with("assistant.instruction_files[0] (missing.md): cannot read it: "),
        "{}",
        problem(root, "missing.md")
    );
}
