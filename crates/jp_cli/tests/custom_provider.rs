//! A provider added by config alone (`providers.llm.custom.NAME`, issue
//! 35): reached through the real binary by the wire API it speaks, its
//! key sent from the variable it names; held until the workspace is
//! trusted, as every setting that says where a key goes is; and its
//! mistakes refused with the key that has them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::providers::{Item, openai};
use common::query::initialized;
use jp_test_server::{Reply, Split, TestServer};
use std::time::Duration;

fn custom(server: &TestServer, extra: &str) -> String {
    format!(
        "[providers.llm.custom.local]\nbase_url = \"{}/v1\"\napi_key_env = \"LOCAL_KEY\"\n{extra}",
        server.url()
    )
}

/// A local OpenAI-compatible server, added in the user's config: the
/// query reaches `{base_url}/chat/completions` with the key from
/// `LOCAL_KEY`, and the answer streams as from any provider.
#[test]
fn a_provider_added_by_config_alone_answers_through_its_wire_api() {
    let ws = initialized();
    let server = TestServer::start(vec![
        Reply::sse(openai(&[Item::Text("Hello from a local model.")], "stop"))
            .split(Split::Random { seed: 35, max: 17 })
            .pace(Duration::from_millis(1)),
    ]);
    ws.write("xdg/jp/config.toml", &custom(&server, ""));
    let run = ws.jp_with_env(
        &["query", "hi"],
        &[
            ("JP_CFG_ASSISTANT__MODEL__ID", "local/qwen3-coder"),
            ("LOCAL_KEY", "local-secret"),
        ],
    );
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "Hello from a local model.\n",
            "── jp (local/qwen3-coder) ──\ntokens: 10 in · 5 out\n"
        ),
        "{run:?}"
    );
    let requests = server.wait_for(1, Duration::from_secs(5));
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer local-secret")
    );
    assert_eq!(requests[0].json()["model"], "qwen3-coder");

    // Without the key it names, nothing is sent.
    let run = ws.jp_with_env(
        &["query", "again"],
        &[("JP_CFG_ASSISTANT__MODEL__ID", "local/qwen3-coder")],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("LOCAL_KEY"),
        "the error names the variable: {}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

/// A workspace's config says where a key goes only once the workspace is
/// trusted: before, the provider it adds is not there (and the key is
/// never sent); `jp trust` shows it among what the workspace holds.
#[test]
fn a_provider_in_a_workspace_config_waits_for_trust() {
    let ws = initialized();
    let server = TestServer::start(vec![Reply::sse(openai(
        &[Item::Text("Trusted now.")],
        "stop",
    ))]);
    ws.write(
        "project/.jp/config.toml",
        &(ws.read("project/.jp/config.toml") + "\n" + &custom(&server, "")),
    );
    let env = [
        ("JP_CFG_ASSISTANT__MODEL__ID", "local/m"),
        ("LOCAL_KEY", "local-secret"),
    ];
    // Without the test harness's trust for one run.
    let untrusted = |args: &[&str]| {
        let mut command = ws.command(args, &env);
        command.env_remove("JP_TRUST_WORKSPACE");
        ws.run_of(command.output().unwrap())
    };
    // All of `providers` is held: run without it, the provider is not
    // there, and nothing is sent.
    let mut command = ws.command(&["query", "hi"], &env);
    command.env("JP_TRUST_WORKSPACE", "0");
    let run = ws.run_of(command.output().unwrap());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(server.requests().is_empty(), "{run:?}");
    assert!(
        run.stderr.ends_with(
            "error: env JP_CFG_ASSISTANT__MODEL__ID: assistant.model.id: unknown provider `local` in `local/m` (providers: anthropic, openai, openrouter, ollama, llamacpp, google, scripted)\n"
        ),
        "{}",
        run.stderr
    );
    // `jp trust` reviews it though the config loads only with it (jp
    // once refused to trust a workspace whose model id named what its
    // held part adds).
    let status = untrusted(&["trust", "--status"]);
    assert!(status.stdout.contains("providers.llm.custom"), "{status:?}");
    let trusted = untrusted(&["trust"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    let run = untrusted(&["query", "hi"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Trusted now.\n"),
        "{run:?}"
    );
}

/// Each mistake is refused with the key it is at.
#[test]
fn mistakes_in_a_custom_provider_are_errors_at_their_key() {
    let cases = [
        (
            "[providers.llm.custom.anthropic]\nbase_url = \"http://localhost:1/v1\"\n",
            "providers.llm.custom.anthropic: `anthropic` is a built-in provider; set providers.llm.anthropic instead, or give this one a name of its own",
        ),
        (
            "[providers.llm.custom.local]\napi_key_env = \"K\"\n",
            "providers.llm.custom.local.base_url: is not set: where the server is reached (`http://localhost:1234/v1` for an OpenAI-compatible server on this machine)",
        ),
        (
            "[providers.llm.custom.local]\nbase_url = \"localhost:1234\"\n",
            "providers.llm.custom.local.base_url: `localhost:1234` is not an http:// or https:// URL",
        ),
        (
            "[providers.llm.custom.local]\nbase_url = \"http://localhost:1/v1\"\nwire = \"anthropic\"\n",
            "providers.llm.custom.local.api_key_env: a provider speaking this wire API needs an API key: name the environment variable that holds it",
        ),
        (
            "[providers.llm.custom.local]\nbase_url = \"http://localhost:1/v1\"\nwire = \"scripted\"\n",
            "providers.llm.custom.local.wire: `scripted` is jp's own offline provider, not a wire API a server speaks (openai_chat, openai_responses, anthropic, ollama, google)",
        ),
    ];
    for (config, problem) in cases {
        let ws = initialized();
        ws.write("xdg/jp/config.toml", config);
        let run = ws.jp(&["config", "show"]);
        assert_eq!(run.code, 1, "{config}\n{run:?}");
        assert!(
            run.stderr.contains(problem),
            "{config}\nexpected: {problem}\n{}",
            run.stderr
        );
    }
    // An unknown provider's error lists the custom ones after the built-in.
    let ws = initialized();
    ws.write(
        "xdg/jp/config.toml",
        "[providers.llm.custom.local]\nbase_url = \"http://localhost:1/v1\"\n",
    );
    let run = ws.jp_with_env(
        &["config", "show"],
        &[("JP_CFG_ASSISTANT__MODEL__ID", "acme/m")],
    );
    assert!(
        run.stderr.contains(
            "unknown provider `acme` in `acme/m` (providers: anthropic, openai, openrouter, ollama, llamacpp, google, scripted, local)"
        ),
        "{}",
        run.stderr
    );
}
