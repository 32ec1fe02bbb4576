//! What one "allow for this session" answer covers: derived from the call
//! the user answered `a` at, so that it covers what they saw, never a
//! whole `policy.run` rule (issue 34).
//!
//! - jp's `run_command`: later calls of the same `program` (as written)
//!   whose first argument is the same and whose `cwd` is the same
//!   (`"cargo test ..."`); the other arguments vary. A program that runs
//!   code given in its arguments ([`RUNS_GIVEN_CODE`]: shells,
//!   interpreters, programs that run another program), or a first argument
//!   that is an option (`git -c ...`, `cargo --config ...`, which can make
//!   a program run anything), is covered only for the identical call.
//! - jp's file tools: later calls whose every path argument lies in the
//!   same directory or below it (`notes/` for `notes/a.txt`), as written
//!   and with links followed; a file in the workspace root covers only
//!   itself.
//! - Any other tool: the identical call.

use std::path::Path;

use jp_conversation::ApprovalScope;
use jp_policy::path::PathValue;
use serde_json::{Map, Value};

/// Programs that run code given in their arguments (or run another
/// program named in them): an approval of one covers only the identical
/// call. Matched on the program's file name, ignoring case, a trailing
/// `.exe` and a version (`python3.12`, `perl5`). docs/terminal.md shows
/// this table.
pub const RUNS_GIVEN_CODE: &[(&str, &str)] = &[
    ("sh", "a shell: `sh -c CODE`"),
    ("bash", "a shell"),
    ("dash", "a shell"),
    ("zsh", "a shell"),
    ("ksh", "a shell"),
    ("mksh", "a shell"),
    ("ash", "a shell"),
    ("fish", "a shell"),
    ("csh", "a shell"),
    ("tcsh", "a shell"),
    ("busybox", "runs any of its applets, shells included"),
    ("pwsh", "a shell"),
    ("powershell", "a shell"),
    ("cmd", "a shell: `cmd /c CODE`"),
    ("python", "`python -c CODE`"),
    ("pypy", "`pypy -c CODE`"),
    ("perl", "`perl -e CODE`"),
    ("ruby", "`ruby -e CODE`"),
    ("irb", "Ruby"),
    ("node", "`node -e CODE`"),
    ("nodejs", "`nodejs -e CODE`"),
    ("deno", "`deno eval CODE`"),
    ("bun", "`bun -e CODE`"),
    ("php", "`php -r CODE`"),
    ("lua", "`lua -e CODE`"),
    ("luajit", "`luajit -e CODE`"),
    ("tclsh", "Tcl"),
    ("wish", "Tcl"),
    ("expect", "Tcl: `expect -c CODE`"),
    ("r", "`R -e CODE`"),
    ("rscript", "`Rscript -e CODE`"),
    ("julia", "`julia -e CODE`"),
    ("osascript", "`osascript -e CODE`"),
    ("awk", "an awk program can run commands (`system()`)"),
    ("gawk", "awk"),
    ("mawk", "awk"),
    ("nawk", "awk"),
    ("sed", "GNU sed's `e` command runs a command"),
    ("gdb", "`gdb -ex CMD`"),
    ("vim", "`vim -c CMD`"),
    ("nvim", "`nvim -c CMD`"),
    ("emacs", "`emacs --eval CODE`"),
    ("make", "`make -f -` and `--eval` run any recipe"),
    ("env", "runs the program named in its arguments"),
    ("xargs", "runs the program named in its arguments"),
    ("sudo", "runs the program named in its arguments"),
    ("doas", "runs the program named in its arguments"),
    ("su", "`su -c CODE`"),
    ("exec", "runs the program named in its arguments"),
    ("command", "runs the program named in its arguments"),
    ("builtin", "runs the command named in its arguments"),
    ("eval", "runs its arguments as a command"),
    ("nice", "runs the program named in its arguments"),
    ("nohup", "runs the program named in its arguments"),
    ("timeout", "runs the program named in its arguments"),
    ("time", "runs the program named in its arguments"),
    ("stdbuf", "runs the program named in its arguments"),
    ("setsid", "runs the program named in its arguments"),
    ("ionice", "runs the program named in its arguments"),
    ("taskset", "runs the program named in its arguments"),
    ("chrt", "runs the program named in its arguments"),
    ("chroot", "runs the program named in its arguments"),
    ("unshare", "runs the program named in its arguments"),
    ("nsenter", "runs the program named in its arguments"),
    ("flock", "runs the program named in its arguments"),
    ("watch", "runs its arguments with `sh -c`"),
    ("script", "`script -c CODE`"),
    ("strace", "runs the program named in its arguments"),
    ("ltrace", "runs the program named in its arguments"),
    ("valgrind", "runs the program named in its arguments"),
    ("find", "`find -exec` runs any program"),
    ("parallel", "runs its arguments as commands"),
    ("ssh", "runs its arguments as a command on another machine"),
    ("npx", "runs any package's program"),
    ("pnpx", "runs any package's program"),
    ("bunx", "runs any package's program"),
    ("uvx", "runs any package's program"),
    ("pipx", "`pipx run` runs any package's program"),
    ("dotnet", "`dotnet fsi`, `dotnet exec`"),
    ("java", "`java FILE.java` runs the source given; `jshell`"),
    ("jshell", "Java"),
];

/// Which of jp's own tools a tool runs, as far as its scope goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// jp's `run_command`.
    Command,
    /// One of jp's file tools (`fs_*`): its data goes to the path.
    Files,
    /// Any other tool.
    Other,
}

/// The table's entry for `program` (a name or a path), if any.
#[must_use]
pub fn runs_given_code(program: &str) -> Option<&'static str> {
    let name = program
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    // A version: `python3`, `python3.12`, `perl5.36`, `lua5.4`.
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    RUNS_GIVEN_CODE
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, why)| *why)
}

/// The scope of an approval given at a call of a tool of `kind` with
/// `arguments`, whose path arguments are `paths` (resolved).
#[must_use]
pub fn scope_of(kind: Kind, arguments: &Map<String, Value>, paths: &[PathValue]) -> ApprovalScope {
    let exact = || ApprovalScope::Call {
        arguments: Value::Object(arguments.clone()),
    };
    match kind {
        Kind::Command => command(arguments).map_or_else(exact, |(program, first, cwd)| {
            let narrow = runs_given_code(program).is_some()
                || first.is_some_and(|first| first.starts_with('-'));
            if narrow {
                exact()
            } else {
                ApprovalScope::Command {
                    program: program.to_owned(),
                    first: first.map(str::to_owned),
                    cwd: cwd.map(str::to_owned),
                }
            }
        }),
        Kind::Files => {
            let mut under: Vec<String> = Vec::new();
            for path in paths {
                let Some(dir) = directory(path) else {
                    return exact();
                };
                if !under.contains(&dir) {
                    under.push(dir);
                }
            }
            if under.is_empty() {
                exact()
            } else {
                ApprovalScope::Paths { under }
            }
        }
        Kind::Other => exact(),
    }
}

/// Whether `scope` is one a tool of `kind` can have: the tool may have
/// changed since the approval (a config that redefines it).
#[must_use]
pub fn fits(scope: &ApprovalScope, kind: Kind) -> bool {
    match scope {
        ApprovalScope::Command { .. } => kind == Kind::Command,
        ApprovalScope::Paths { .. } => kind == Kind::Files,
        ApprovalScope::Call { .. } => true,
    }
}

/// Whether `scope` covers a call with `arguments`, whose path arguments
/// are `paths` (resolved).
#[must_use]
pub fn covers(scope: &ApprovalScope, arguments: &Map<String, Value>, paths: &[PathValue]) -> bool {
    match scope {
        ApprovalScope::Call {
            arguments: approved,
        } => approved
            .as_object()
            .is_some_and(|approved| approved == arguments),
        ApprovalScope::Command {
            program,
            first,
            cwd,
        } => command(arguments).is_some_and(|(p, f, c)| {
            p == program
                && f == first.as_deref()
                && c == cwd.as_deref()
                && runs_given_code(p).is_none()
                && !f.is_some_and(|f| f.starts_with('-'))
        }),
        ApprovalScope::Paths { under } => {
            !paths.is_empty()
                && paths.iter().all(|path| {
                    both_relative(path).is_some_and(|(lexical, resolved)| {
                        under.iter().any(|dir| {
                            lexical.starts_with(Path::new(dir))
                                && resolved.starts_with(Path::new(dir))
                        })
                    })
                })
        }
    }
}

/// What `scope` covers, for the prompt, the note and `jp conversation
/// show`: `"cargo test ..."`, `fs_create_file calls on paths in notes/`,
/// `only this exact call`.
#[must_use]
pub fn describe(scope: &ApprovalScope, tool: &str) -> String {
    match scope {
        ApprovalScope::Command {
            program,
            first,
            cwd,
        } => {
            let quoted = |text: &str| text.escape_debug().to_string();
            let command = match first {
                Some(first) => format!("\"{} {} ...\"", quoted(program), quoted(first)),
                None => format!("\"{}\" without arguments", quoted(program)),
            };
            match cwd {
                Some(cwd) => format!("{command} in {cwd:?}"),
                None => command,
            }
        }
        ApprovalScope::Paths { under } => {
            let places = under
                .iter()
                .map(|dir| format!("{dir:?}"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("{tool} calls on paths at or below {places}")
        }
        ApprovalScope::Call { arguments } => {
            let program = arguments
                .get("program")
                .and_then(Value::as_str)
                .and_then(|p| runs_given_code(p).map(|why| (p, why)));
            match program {
                Some((program, why)) => format!(
                    "only this exact call ({program:?} runs code given in its arguments: {why})"
                ),
                None => "only this exact call".to_owned(),
            }
        }
    }
}

/// `program`, its first argument and `cwd` of a `run_command` call; `None`
/// when they are not what the tool takes.
fn command(arguments: &Map<String, Value>) -> Option<(&str, Option<&str>, Option<&str>)> {
    let program = arguments.get("program")?.as_str()?;
    let first = match arguments.get("args") {
        None | Some(Value::Null) => None,
        Some(Value::Array(args)) => match args.first() {
            None => None,
            Some(first) => Some(first.as_str()?),
        },
        Some(_) => return None,
    };
    let cwd = match arguments.get("cwd") {
        None | Some(Value::Null) => None,
        Some(cwd) => Some(cwd.as_str()?),
    };
    Some((program, first, cwd))
}

/// A path argument's forms relative to the root, when both are inside it.
fn both_relative(path: &PathValue) -> Option<(&Path, &Path)> {
    let lexical = path.lexical.relative()?;
    let resolved = path.resolved.as_ref().ok()?.relative()?;
    Some((lexical, resolved))
}

/// Where an approval at `path` reaches: its directory, or the file itself
/// when it is in the root; `None` (only the identical call) for the root
/// itself, a path outside, or one a link leads elsewhere.
fn directory(path: &PathValue) -> Option<String> {
    let (lexical, resolved) = both_relative(path)?;
    if lexical != resolved || lexical.as_os_str().is_empty() {
        return None;
    }
    let place = match lexical.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => lexical,
    };
    Some(place.to_string_lossy().replace('\\', "/"))
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
