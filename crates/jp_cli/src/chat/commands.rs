//! What a line typed in `jp chat` asks for: a message, or one of the
//! session's commands. Each command is an existing `jp` subcommand (or a
//! `jp query` flag) run in the session, never a second implementation.

/// The session's commands: name, arguments, and what it does (for `/help`
/// and Tab).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "/model",
        "[NAME]",
        "the model for the next messages (`jp query --model`); without NAME, say which",
    ),
    (
        "/cost",
        "",
        "this conversation's tokens and cost so far (`jp conversation cost`)",
    ),
    (
        "/compact",
        "[--keep N] [--edit]",
        "summarise older turns (`jp conversation compact`)",
    ),
    (
        "/rewind",
        "[N | --to TURN] [--force]",
        "take back the last turn(s) and their file changes (`jp conversation rewind`)",
    ),
    (
        "/new",
        "",
        "the next message starts a new conversation (`jp query --new`)",
    ),
    (
        "/tools",
        "",
        "the tools and their policies as they stand (`jp policy ls`)",
    ),
    (
        "/trust",
        "[--check | --revoke]",
        "trust this workspace's config (`jp trust`)",
    ),
    (
        "/edit",
        "",
        "write the next message in $VISUAL or $EDITOR (`jp query --edit`)",
    ),
    ("/help", "", "this list"),
    ("/exit", "", "leave (Ctrl+D does too)"),
];

/// What a typed line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Nothing but blanks.
    Empty,
    /// A message for the assistant.
    Message(String),
    /// A command, with its arguments split as a shell would not (on
    /// blanks only: no command takes quoted text).
    Command(Command),
    /// A `/word` that is no command.
    Unknown(String),
}

/// A session command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Model(Option<String>),
    Cost,
    Compact(Vec<String>),
    Rewind(Vec<String>),
    New,
    Tools,
    Trust(Vec<String>),
    Edit,
    Help,
    Exit,
    /// A command given arguments it does not take: what to say.
    Misused(&'static str),
}

/// What `line` asks for. A line starting with `//` is a message starting
/// with `/`.
#[must_use]
pub fn parse(line: &str) -> Input {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Input::Empty;
    }
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Input::Message(format!("/{rest}"));
    }
    if !trimmed.starts_with('/') {
        return Input::Message(line.trim_end().to_owned());
    }
    let mut words = trimmed.split_whitespace();
    let name = words.next().unwrap_or_default();
    let args: Vec<String> = words.map(str::to_owned).collect();
    let bare = |command: Command, misused: &'static str| {
        if args.is_empty() {
            Input::Command(command)
        } else {
            Input::Command(Command::Misused(misused))
        }
    };
    match name {
        "/model" => match args.as_slice() {
            [] => Input::Command(Command::Model(None)),
            [model] => Input::Command(Command::Model(Some(model.clone()))),
            _ => Input::Command(Command::Misused("/model takes one model name")),
        },
        "/cost" => bare(Command::Cost, "/cost takes no arguments"),
        "/compact" => Input::Command(Command::Compact(args)),
        "/rewind" => Input::Command(Command::Rewind(args)),
        "/new" => bare(Command::New, "/new takes no arguments"),
        "/tools" => bare(Command::Tools, "/tools takes no arguments"),
        "/trust" => Input::Command(Command::Trust(args)),
        "/edit" => bare(Command::Edit, "/edit takes no arguments"),
        "/help" | "/?" => bare(Command::Help, "/help takes no arguments"),
        "/exit" | "/quit" => bare(Command::Exit, "/exit takes no arguments"),
        _ => Input::Unknown(name.to_owned()),
    }
}

/// The inputs that lines queued while a turn printed make, in order: a
/// command stands alone, and the lines between commands are one message
/// (found in review: joined whole, a queued `/model` and a message were
/// parsed as one misused command, and a message followed by `/cost` sent
/// `/cost` to the model).
#[must_use]
pub fn group(lines: &[String]) -> Vec<String> {
    let mut inputs = Vec::new();
    let mut message: Vec<&str> = Vec::new();
    for line in lines {
        match parse(line) {
            Input::Command(_) | Input::Unknown(_) => {
                if !message.is_empty() {
                    inputs.push(message.join("\n"));
                    message.clear();
                }
                inputs.push(line.clone());
            }
            Input::Empty | Input::Message(_) => message.push(line),
        }
    }
    if !message.is_empty() {
        inputs.push(message.join("\n"));
    }
    inputs
}

/// The `/help` text.
#[must_use]
pub fn help() -> String {
    let mut text = String::new();
    for (name, args, what) in COMMANDS {
        let usage = if args.is_empty() {
            (*name).to_owned()
        } else {
            format!("{name} {args}")
        };
        text.push_str(&format!("  {usage:<34} {what}\n"));
    }
    text.push_str(
        "  Alt+Enter or Ctrl+J: a new line in the message; Tab completes commands and models\n",
    );
    text.push_str(
        "  Ctrl+C clears the line (twice on an empty line leaves); while the model works, type the next message: it is sent when the turn ends\n",
    );
    text.push_str("  //text sends a message that starts with /\n");
    text
}

/// What Tab offers at byte `pos` of `line`: where the word being completed
/// starts, and the candidates; `models` are the model names known.
#[must_use]
pub fn complete(line: &str, pos: usize, models: &dyn Fn() -> Vec<String>) -> (usize, Vec<String>) {
    let before = line.get(..pos).unwrap_or(line);
    if !before.starts_with('/') {
        return (pos, Vec::new());
    }
    match before.split_once(' ') {
        None => (
            0,
            COMMANDS
                .iter()
                .map(|(name, _, _)| (*name).to_owned())
                .filter(|name| name.starts_with(before))
                .collect(),
        ),
        Some(("/model", partial)) if !partial.contains(' ') => (
            pos - partial.len(),
            models()
                .into_iter()
                .filter(|name| name.starts_with(partial))
                .collect(),
        ),
        Some(_) => (pos, Vec::new()),
    }
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
