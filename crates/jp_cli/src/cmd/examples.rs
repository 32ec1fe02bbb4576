//! One example per command, shown at the end of its `--help`. Kept in one
//! table, beside the command tree, so a test can check that every command
//! has one and that each one parses as the command it documents.

/// `(command path, example)`: the path as typed after `jp` (`""` for `jp`
/// itself), the example as a whole command line.
pub const EXAMPLES: &[(&str, &str)] = &[
    ("", "jp query \"why does the build fail?\""),
    ("init", "jp init --yes"),
    ("query", "jp query --new \"add a test for parse_args\""),
    ("chat", "jp chat --new --model anthropic/claude-sonnet-4-5"),
    ("conversation", "jp conversation ls"),
    ("conversation ls", "jp conversation ls"),
    ("conversation show", "jp conversation show last"),
    ("conversation cost", "jp conversation cost"),
    ("conversation decisions", "jp conversation decisions last"),
    ("conversation use", "jp conversation use 17"),
    (
        "conversation forget-approvals",
        "jp conversation forget-approvals",
    ),
    ("conversation rewind", "jp conversation rewind 2"),
    (
        "conversation compact",
        "jp conversation compact --keep 3 --model anthropic/claude-haiku-4-5",
    ),
    ("conversation rm", "jp conversation rm 17"),
    ("usage", "jp usage --since 7d"),
    ("config", "jp config get assistant.model.id"),
    ("config show", "jp config show"),
    (
        "config get",
        "jp config get conversation.tools.fs_read_file.policy",
    ),
    (
        "config set",
        "jp config set assistant.model.id=anthropic/claude-haiku-4-5",
    ),
    ("config validate", "jp config validate"),
    ("config schema", "jp config schema > jp-config.schema.json"),
    (
        "policy",
        "jp policy check fs_read_file --args '{\"path\": \".env\"}'",
    ),
    ("policy ls", "jp policy ls"),
    (
        "policy check",
        "jp policy check run_command --args '{\"program\": \"git\", \"args\": [\"push\"]}'",
    ),
    (
        "policy replay",
        "jp policy replay last --cfg @stricter-policies.toml",
    ),
    ("mcp", "jp mcp ls"),
    ("mcp ls", "jp mcp ls"),
    ("mcp tools", "jp mcp tools git"),
    ("trust", "jp trust --status"),
    ("sandbox", "jp sandbox check"),
    ("sandbox check", "jp sandbox check --format json"),
    (
        "sandbox probe",
        "jp sandbox probe write ../outside.txt < request.json",
    ),
    (
        "debug",
        "echo '{\"path\": \"a\"}' | jp debug stream-args --chunk-size 3",
    ),
    (
        "debug stream-args",
        "echo '{\"path\": \"a\"}' | jp debug stream-args --chunk-size 3",
    ),
    ("tool", "jp tool fs_read_file < request.json"),
    (
        "completions",
        "jp completions bash > ~/.local/share/bash-completion/completions/jp",
    ),
];

/// `command` with each (sub)command's example after its help.
pub fn with_examples(command: clap::Command) -> clap::Command {
    add(command, "")
}

fn add(mut command: clap::Command, path: &str) -> clap::Command {
    if let Some((_, example)) = EXAMPLES.iter().find(|(p, _)| *p == path) {
        command = command.after_help(format!("Example:\n  {example}"));
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .filter(|name| name != "help")
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        command = command.mut_subcommand(&name, |sub| add(sub, &sub_path));
    }
    command
}

#[cfg(test)]
#[path = "examples_tests.rs"]
mod tests;
