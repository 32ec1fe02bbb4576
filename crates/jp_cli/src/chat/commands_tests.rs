use super::*;

fn command(line: &str) -> Command {
    match parse(line) {
        Input::Command(command) => command,
        other => panic!("{line:?} is {other:?}"),
    }
}

#[test]
fn lines_are_messages_commands_or_nothing() {
    assert_eq!(parse("   \n "), Input::Empty);
    assert_eq!(
        parse("explain this\nand that  \n"),
        Input::Message("explain this\nand that".into())
    );
    // Leading blanks of a message are the user's (an indented snippet).
    assert_eq!(
        parse("  fn main() {}"),
        Input::Message("  fn main() {}".into())
    );
    assert_eq!(parse("//etc/hosts?"), Input::Message("/etc/hosts?".into()));
    assert_eq!(
        parse("/frobnicate now"),
        Input::Unknown("/frobnicate".into())
    );
}

#[test]
fn each_command_takes_its_arguments() {
    assert_eq!(command("/model"), Command::Model(None));
    assert_eq!(
        command(" /model  openai/gpt-5 "),
        Command::Model(Some("openai/gpt-5".into()))
    );
    assert_eq!(
        command("/model a b"),
        Command::Misused("/model takes one model name")
    );
    assert_eq!(command("/cost"), Command::Cost);
    assert_eq!(
        command("/cost now"),
        Command::Misused("/cost takes no arguments")
    );
    assert_eq!(
        command("/compact --keep 3"),
        Command::Compact(vec!["--keep".into(), "3".into()])
    );
    assert_eq!(command("/rewind"), Command::Rewind(vec![]));
    assert_eq!(
        command("/rewind --to 2 --force"),
        Command::Rewind(vec!["--to".into(), "2".into(), "--force".into()])
    );
    assert_eq!(command("/new"), Command::New);
    assert_eq!(command("/tools"), Command::Tools);
    assert_eq!(
        command("/trust --check"),
        Command::Trust(vec!["--check".into()])
    );
    assert_eq!(command("/edit"), Command::Edit);
    assert_eq!(command("/help"), Command::Help);
    assert_eq!(command("/?"), Command::Help);
    assert_eq!(command("/exit"), Command::Exit);
    assert_eq!(command("/quit"), Command::Exit);
}

#[test]
fn tab_completes_commands_and_model_names() {
    let models = || {
        vec![
            "anthropic/claude-sonnet-4-5".to_owned(),
            "openai/gpt-5".to_owned(),
        ]
    };
    assert_eq!(
        complete("/co", 3, &models),
        (0, vec!["/cost".into(), "/compact".into()])
    );
    assert_eq!(
        complete("/e", 2, &models),
        (0, vec!["/edit".into(), "/exit".into()])
    );
    assert_eq!(
        complete("/model anth", 11, &models),
        (7, vec!["anthropic/claude-sonnet-4-5".into()])
    );
    assert_eq!(complete("/model ", 7, &models).1.len(), 2);
    // Nothing to offer in a message, or after a command's arguments.
    assert_eq!(complete("hello /co", 9, &models), (9, vec![]));
    assert_eq!(complete("/rewind 2", 9, &models), (9, vec![]));
    assert_eq!(complete("/model a b", 10, &models), (10, vec![]));
}

#[test]
fn the_help_lists_every_command() {
    let help = help();
    for (name, _, _) in COMMANDS {
        assert!(help.contains(&format!("  {name}")), "{name} in {help}");
    }
    assert_eq!(help.lines().count(), COMMANDS.len() + 3);
}

#[test]
fn queued_lines_make_messages_between_commands() {
    let lines = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        group(&lines(&["first", "second"])),
        lines(&["first\nsecond"])
    );
    assert_eq!(
        group(&lines(&["/model openai/gpt-5", "hello there"])),
        lines(&["/model openai/gpt-5", "hello there"])
    );
    assert_eq!(
        group(&lines(&["hello", "/cost", "and", "more", "/nope"])),
        lines(&["hello", "/cost", "and\nmore", "/nope"])
    );
    assert_eq!(group(&lines(&["//etc", "x"])), lines(&["//etc\nx"]));
    assert!(group(&[]).is_empty());
}
