#![allow(clippy::unwrap_used)]

use clap::CommandFactory as _;

use super::*;
use crate::cmd::Cli;

/// Every command's path, as typed after `jp` (`""` for `jp` itself).
fn paths(command: &clap::Command, path: &str, out: &mut Vec<String>) {
    out.push(path.to_owned());
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let sub_path = if path.is_empty() {
            sub.get_name().to_owned()
        } else {
            format!("{path} {}", sub.get_name())
        };
        paths(sub, &sub_path, out);
    }
}

/// The words of the `jp` command in an example: after a pipe, before a
/// redirection, quotes removed (enough shell for these examples).
fn words(example: &str) -> Vec<String> {
    let command = example.rsplit(" | ").next().unwrap_or(example);
    let command = command.split(['>', '<']).next().unwrap_or(command);
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (_, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[test]
fn every_command_has_one_example_and_no_example_is_stale() {
    let mut all = Vec::new();
    paths(&Cli::command(), "", &mut all);
    let documented: Vec<String> = EXAMPLES.iter().map(|(p, _)| (*p).to_owned()).collect();
    assert_eq!(all, documented, "EXAMPLES must follow the command tree");
}

#[test]
fn every_example_parses_as_the_command_it_documents() {
    for (path, example) in EXAMPLES {
        let words = words(example);
        assert_eq!(words[0], "jp", "{example}");
        let parsed = Cli::command().try_get_matches_from(&words);
        let matches = parsed.unwrap_or_else(|e| panic!("{example}: {e}"));
        let mut used = Vec::new();
        let mut level = &matches;
        while let Some((name, sub)) = level.subcommand() {
            used.push(name.to_owned());
            level = sub;
        }
        let used = used.join(" ");
        assert!(
            used.starts_with(path),
            "`{example}` runs `jp {used}`, not `jp {path}`"
        );
    }
}

#[test]
fn help_ends_with_the_example() {
    let mut command = with_examples(Cli::command());
    let trust = command.find_subcommand_mut("trust").unwrap();
    let help = trust.render_help().to_string();
    assert!(
        help.ends_with("\nExample:\n  jp trust --status\n"),
        "{help}"
    );
}
