//! The files jp keeps under `.jp/` are never followed out of the workspace
//! (issue 34, item 5), through the real `jp` binary: each file a
//! conversation is kept in is planted as a link out of the workspace, a
//! link to `/dev/zero`, a FIFO or a directory link, and every command that
//! opens it refuses it, says what and where, and leaves what the link
//! names as it was. Reads of a stored file are bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Workspace;
use common::providers::text_reply;
use common::query::{initialized, query};
use jp_test_server::TestServer;

const MODEL: &str = "anthropic/claude-haiku-4-5";

/// What a link planted in the workspace points at: the user's file, that
/// jp must neither change nor read.
const PRECIOUS: &str = "export SECRET=precious\n";

/// A workspace with one conversation that this jp recorded (active), and
/// a directory `outside/` beside the project holding the user's file.
fn with_conversation() -> (Workspace, String) {
    let ws = initialized();
    let server = TestServer::start(vec![text_reply("Hello.")]);
    let run = query(&ws, &server, MODEL, &[], "hi");
    assert_eq!(run.code, 0, "{run:?}");
    let id = ws
        .read("project/.jp/conversations/active")
        .trim()
        .to_owned();
    ws.write("outside/precious", PRECIOUS);
    (ws, id)
}

fn conversation_dir(ws: &Workspace, id: &str) -> PathBuf {
    ws.project().join(".jp/conversations").join(id)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Replaces `path` (a file) with a link to `to`.
fn link(path: &Path, to: &Path) {
    std::fs::remove_file(path).unwrap();
    symlink(to, path).unwrap();
}

/// The ways a repository can plant a file jp keeps.
type Plant = fn(&Workspace, &str);

const PLANTS: [(&str, Plant); 10] = [
    ("lock -> outside file", |ws, id| {
        let lock = conversation_dir(ws, id).join("lock");
        link(&lock, &ws.root().join("outside/precious"));
    }),
    ("lock is a FIFO", |ws, id| {
        let lock = conversation_dir(ws, id).join("lock");
        std::fs::remove_file(&lock).unwrap();
        mkfifo(&lock);
    }),
    ("conversation dir -> outside", |ws, id| {
        // The conversation moved out of the workspace, and a link left.
        let dir = conversation_dir(ws, id);
        let out = ws.root().join("outside/conversation");
        std::fs::rename(&dir, &out).unwrap();
        std::fs::copy(ws.root().join("outside/precious"), out.join("lock")).unwrap();
        symlink(&out, &dir).unwrap();
    }),
    ("conversations dir -> outside", |ws, _| {
        let dir = ws.project().join(".jp/conversations");
        let out = ws.root().join("outside/conversations");
        std::fs::rename(&dir, &out).unwrap();
        symlink(&out, &dir).unwrap();
    }),
    ("events.jsonl -> outside file", |ws, id| {
        let log = conversation_dir(ws, id).join("events.jsonl");
        let out = ws.root().join("outside/events.jsonl");
        std::fs::copy(&log, &out).unwrap();
        link(&log, &out);
    }),
    ("events.jsonl -> /dev/zero", |ws, id| {
        link(
            &conversation_dir(ws, id).join("events.jsonl"),
            Path::new("/dev/zero"),
        );
    }),
    ("events.jsonl is a FIFO", |ws, id| {
        let log = conversation_dir(ws, id).join("events.jsonl");
        std::fs::remove_file(&log).unwrap();
        mkfifo(&log);
    }),
    ("events.jsonl over 1 GiB", |ws, id| {
        let log = conversation_dir(ws, id).join("events.jsonl");
        let file = std::fs::OpenOptions::new().write(true).open(log).unwrap();
        // Sparse: costs no disk.
        file.set_len((1 << 30) + 1).unwrap();
    }),
    ("conversation.json (v1) -> /dev/zero", |ws, id| {
        let dir = conversation_dir(ws, id);
        std::fs::remove_file(dir.join("events.jsonl")).unwrap();
        symlink("/dev/zero", dir.join("conversation.json")).unwrap();
    }),
    ("active -> outside file", |ws, id| {
        let active = ws.project().join(".jp/conversations/active");
        ws.write("outside/active", &format!("{id}\n"));
        link(&active, &ws.root().join("outside/active"));
    }),
];

/// Every file under `outside/`, with its bytes (a directory as its
/// entries), to see that nothing changed there.
fn snapshot_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.push((path.clone(), Vec::new()));
                stack.push(path);
            } else if meta.is_file() {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            } else {
                out.push((path, b"(not a file)".to_vec()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_command_refuses_a_planted_file_and_leaves_the_outside_alone() {
    type Run = fn(&Workspace, &str) -> common::Run;
    let commands: [(&str, Run); 6] = [
        ("query", |ws, _| {
            let server = TestServer::start(vec![text_reply("Again.")]);
            query(ws, &server, MODEL, &[], "again")
        }),
        ("conversation show ID", |ws, id| {
            ws.jp(&["conversation", "show", id])
        }),
        ("conversation ls", |ws, _| ws.jp(&["conversation", "ls"])),
        ("conversation forget-approvals ID", |ws, id| {
            ws.jp(&["conversation", "forget-approvals", id])
        }),
        ("conversation use ID", |ws, id| {
            ws.jp(&["conversation", "use", id])
        }),
        ("conversation rm ID", |ws, id| {
            ws.jp(&["conversation", "rm", id])
        }),
    ];
    let times = regex::Regex::new(
        r"\d+ (days?|hours?|minutes?|seconds?) ago|just now|\d{4}-\d\d-\d\d \d\d:\d\d",
    )
    .unwrap();
    let mut table = String::new();
    for (plant_name, plant) in PLANTS {
        for (command, run) in commands {
            let (ws, id) = with_conversation();
            plant(&ws, &id);
            let outside = ws.root().join("outside");
            let before = snapshot_of(&outside);
            let run = run(&ws, &id);
            assert_eq!(
                snapshot_of(&outside),
                before,
                "{plant_name} / {command}: changed what is outside the workspace\n{run:?}"
            );
            let hide = |text: &str| {
                let text = text.replace(&id, "<id>");
                times.replace_all(&text, "<age>").into_owned()
            };
            table.push_str(&format!(
                "## {plant_name} / jp {command}: exit {}\n{}{}\n",
                run.code,
                hide(&run.stdout),
                hide(&run.stderr)
            ));
        }
    }
    insta::assert_snapshot!(table);
}

/// `jp conversation use` writes `active` through `.active.<pid>.tmp`: a
/// link planted at that name (here for jp's own pid: the shell execs jp,
/// keeping its pid) is removed, never written through.
#[test]
fn a_link_at_the_temporary_name_of_active_is_not_written_through() {
    let (ws, id) = with_conversation();
    let script = format!(
        "ln -s '{}' \".jp/conversations/.active.$$.tmp\" && exec '{}' conversation use {id}",
        ws.root().join("outside/precious").display(),
        env!("CARGO_BIN_EXE_jp")
    );
    // The environment `jp` gets in every test, given to the shell instead.
    let jp = ws.command(&[], &[]);
    let output = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .env_clear()
        .envs(jp.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(ws.project())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let run = ws.run_of(output);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("outside/precious"), PRECIOUS);
    assert_eq!(
        ws.read("project/.jp/conversations/active"),
        format!("{id}\n")
    );
    let leftovers: Vec<_> = std::fs::read_dir(ws.project().join(".jp/conversations"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
}

/// `jp init` in a repository whose `.jp` is a link (here to the user's
/// own config directory) writes nothing through it.
#[test]
fn jp_init_refuses_a_jp_directory_that_is_a_link() {
    let ws = Workspace::new();
    let user_dir = ws.root().join("xdg/jp");
    std::fs::create_dir_all(&user_dir).unwrap();
    let jp_dir = ws.project().join(".jp");
    std::fs::remove_dir(&jp_dir).unwrap();
    symlink(&user_dir, &jp_dir).unwrap();
    let before = snapshot_of(&user_dir);
    let run = ws.jp(&["init", "--yes"]);
    assert_eq!(snapshot_of(&user_dir), before, "{run:?}");
    assert_eq!(
        run,
        common::Run {
            code: 1,
            stdout: String::new(),
            stderr: "error: cannot create <tmp>/project/.jp/config.toml: <tmp>/project/.jp is a symbolic link, and jp follows no link among the files it keeps in a workspace\n".into(),
        }
    );
}

/// `jp config set` writes the workspace's config in the workspace: when
/// `.jp/config.toml`, or `.jp` itself, is a link (here to another config
/// file, and to a directory outside), it is refused, and
/// what the link names is left as it was.
#[test]
fn jp_config_set_refuses_a_workspace_config_that_is_a_link() {
    type Plant = fn(&Workspace) -> PathBuf;
    let cases: [(&str, Plant); 2] = [
        (".jp/config.toml", |ws| {
            // A file that is a config, so that the config loads: the
            // user's own, say.
            let config = ws.project().join(".jp/config.toml");
            let out = ws.root().join("outside/config.toml");
            std::fs::write(&out, "# the user's own config\n").unwrap();
            link(&config, &out);
            config
        }),
        (".jp", |ws| {
            let dir = ws.project().join(".jp");
            let out = ws.root().join("outside/jp");
            std::fs::rename(&dir, &out).unwrap();
            symlink(&out, &dir).unwrap();
            dir
        }),
    ];
    for (name, plant) in cases {
        let ws = initialized();
        ws.write("outside/precious", PRECIOUS);
        let link = plant(&ws);
        let outside = ws.root().join("outside");
        let before = snapshot_of(&outside);
        let run = ws.jp(&["config", "set", "style.color=never"]);
        assert_eq!(snapshot_of(&outside), before, "{name}: {run:?}");
        assert_eq!(
            run,
            common::Run {
                code: 2,
                stdout: String::new(),
                stderr: format!(
                    "error: cannot write <tmp>/project/.jp/config.toml: {} is a symbolic link, and jp follows no link among the files it keeps in a workspace\n",
                    link.display()
                        .to_string()
                        .replace(&ws.root().display().to_string(), "<tmp>")
                ),
            },
            "{name}"
        );
    }
}

/// Nothing an untrusted repository sets makes jp read outside it (issue
/// 34, item 7): the scripted provider's script (`assistant.model.id =
/// "scripted/NAME"`, which applies without trust) and a script's
/// `replay.file` must be regular files inside the workspace, reached
/// through no link, and bounded; an error quotes nothing of a file
/// outside, and of one inside no more than a short, escaped start.
#[test]
fn the_scripted_provider_reads_only_regular_files_inside_the_workspace() {
    const SECRET: &str = "{\"SECRET\": \"do not print\"\nSECRET line two\n";
    const OUTSIDE_SCRIPT: &str = "[[responses]]\nparts = [{ text = \"SECRET from outside\" }]\n";
    fn replay(file: &str) -> String {
        format!("[[responses]]\nreplay = {{ format = \"ollama\", file = \"{file}\" }}\n")
    }
    type Setup = fn(&Workspace);
    let cases: [(&str, &str, Setup); 12] = [
        ("an absolute path", "scripted//dev/zero", |_| {}),
        (
            "`..` out of the workspace",
            "scripted/../outside/script.toml",
            |_| {},
        ),
        ("a link out", "scripted/.jp/link.toml", |ws| {
            symlink(
                ws.root().join("outside/script.toml"),
                ws.project().join(".jp/link.toml"),
            )
            .unwrap();
        }),
        ("a link to /dev/zero", "scripted/.jp/zero.toml", |ws| {
            symlink("/dev/zero", ws.project().join(".jp/zero.toml")).unwrap();
        }),
        ("a FIFO", "scripted/.jp/fifo.toml", |ws| {
            mkfifo(&ws.project().join(".jp/fifo.toml"))
        }),
        ("over 4 MiB", "scripted/.jp/big.toml", |ws| {
            let file = std::fs::File::create(ws.project().join(".jp/big.toml")).unwrap();
            file.set_len((4 << 20) + 1).unwrap();
        }),
        ("replay.file `..` out", "scripted/.jp/s.toml", |ws| {
            ws.write("project/.jp/s.toml", &replay("../../outside/secret.txt"));
        }),
        ("replay.file absolute", "scripted/.jp/s.toml", |ws| {
            ws.write("project/.jp/s.toml", &replay("/dev/zero"));
        }),
        ("replay.file a link out", "scripted/.jp/s.toml", |ws| {
            ws.write("project/.jp/s.toml", &replay("rec.ndjson"));
            symlink(
                ws.root().join("outside/secret.txt"),
                ws.project().join(".jp/rec.ndjson"),
            )
            .unwrap();
        }),
        ("replay.file a FIFO", "scripted/.jp/s.toml", |ws| {
            ws.write("project/.jp/s.toml", &replay("rec.ndjson"));
            mkfifo(&ws.project().join(".jp/rec.ndjson"));
        }),
        (
            "replay.file inside, not JSON: a short, escaped start",
            "scripted/.jp/s.toml",
            |ws| {
                ws.write("project/.jp/s.toml", &replay("notes.txt"));
                ws.write(
                    "project/.jp/notes.txt",
                    &format!(
                        "The first line: \u{1b}]0;title\u{7} then {}SECRET\n",
                        "a".repeat(200)
                    ),
                );
            },
        ),
        (
            "replay.file inside, as before",
            "scripted/.jp/s.toml",
            |ws| {
                ws.write("project/.jp/s.toml", &replay("rec/ok.ndjson"));
                ws.write(
                "project/.jp/rec/ok.ndjson",
                "{\"message\":{\"role\":\"assistant\",\"content\":\"Inside.\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":1,\"eval_count\":1}\n",
            );
            },
        ),
    ];
    let ids = regex::Regex::new(r"conversation \d+").unwrap();
    let mut table = String::new();
    for (name, model, setup) in cases {
        let ws = initialized();
        ws.write("outside/secret.txt", SECRET);
        ws.write("outside/script.toml", OUTSIDE_SCRIPT);
        setup(&ws);
        let run = ws.jp_with_env(&["query", "hi"], &[("JP_CFG_ASSISTANT__MODEL__ID", model)]);
        assert!(
            !run.stdout.contains("SECRET") && !run.stderr.contains("SECRET"),
            "{name}: printed what is outside\n{run:?}"
        );
        table.push_str(&format!(
            "## {name} ({model}): exit {}\n{}{}\n",
            run.code,
            run.stdout,
            ids.replace_all(&run.stderr, "conversation <id>")
        ));
    }
    insta::assert_snapshot!(table);
}
