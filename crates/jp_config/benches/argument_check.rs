//! What checking a call against a tool's whole JSON Schema costs (issue
//! 37), against jp's own check of the same parameters without a schema,
//! measured in the same run so the machine's noise falls on both:
//!
//! - `plain`: `mcp-server-git`'s `git_log` arguments, checked against
//!   `parameters` (jp's check, the baseline) and against its schema
//!   (`anyOf [string, null]` members; the validator and jp's forms);
//! - `refs`: a call through `$defs`/`$ref` (an array of 200 edits), its
//!   schema against the same parameters written out;
//! - `adopt`: importing a schema with 40 properties (the view, the
//!   config's additions and the validator built), as each MCP tool is
//!   imported once per query, against serializing its parameters.
//!
//! Prints microseconds per check and the ratio to the baseline.
//!
//! ```text
//! cargo bench -p jp_config --bench argument_check
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use jp_config::tool::{ToolConfig, ToolParameters, check_arguments, schema};
use serde_json::{Value, json};

const ROUNDS: usize = 20;

/// The best of `ROUNDS` rounds of `runs` calls, per call.
fn per_call(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..ROUNDS)
        .map(|_| {
            let began = Instant::now();
            for _ in 0..runs {
                f();
            }
            began.elapsed() / u32::try_from(runs).unwrap()
        })
        .min()
        .unwrap()
}

fn adopted(schema_value: &Value) -> ToolConfig {
    let mut tool = ToolConfig::default();
    schema::adopt(&mut tool, schema_value).unwrap();
    tool
}

fn report(name: &str, baseline: Duration, measured: Duration) {
    println!(
        "{name:<6} baseline {:>8.2} µs  schema {:>8.2} µs  ratio {:>5.2}x",
        baseline.as_secs_f64() * 1e6,
        measured.as_secs_f64() * 1e6,
        measured.as_secs_f64() / baseline.as_secs_f64()
    );
}

fn main() {
    let git_log = json!({
        "type": "object",
        "properties": {
            "repo_path": { "type": "string" },
            "max_count": { "type": "integer", "default": 10 },
            "start_timestamp": { "anyOf": [{ "type": "string" }, { "type": "null" }], "default": null },
            "end_timestamp": { "anyOf": [{ "type": "string" }, { "type": "null" }], "default": null }
        },
        "required": ["repo_path"]
    });
    let tool = adopted(&git_log);
    let plain: ToolParameters = tool.parameters.clone();
    let args =
        json!({ "repo_path": "/work/repo", "max_count": 5, "start_timestamp": "2024-01-01" });
    let base = per_call(20_000, || {
        black_box(check_arguments(&plain, &args)).unwrap()
    });
    let measured = per_call(20_000, || black_box(tool.check_arguments(&args)).unwrap());
    report("plain", base, measured);

    let refs = json!({
        "$defs": { "Edit": {
            "type": "object",
            "properties": { "file": { "type": "string" }, "line": { "type": "integer", "minimum": 1 } },
            "required": ["file", "line"]
        } },
        "type": "object",
        "properties": { "edits": { "type": "array", "items": { "$ref": "#/$defs/Edit" } } },
        "required": ["edits"]
    });
    let tool = adopted(&refs);
    let plain = tool.parameters.clone();
    let edits: Vec<Value> = (1..=200)
        .map(|i| json!({ "file": format!("src/f{i}.rs"), "line": i }))
        .collect();
    let args = json!({ "edits": edits });
    let base = per_call(500, || black_box(check_arguments(&plain, &args)).unwrap());
    let measured = per_call(500, || black_box(tool.check_arguments(&args)).unwrap());
    report("refs", base, measured);

    let properties: serde_json::Map<String, Value> = (0..40)
        .map(|i| {
            (
                format!("p{i}"),
                json!({ "anyOf": [{ "type": "string", "maxLength": 100 }, { "type": "null" }], "description": "A parameter." }),
            )
        })
        .collect();
    let wide = json!({ "type": "object", "properties": properties });
    let plain = adopted(&wide).parameters;
    let base = per_call(200, || {
        black_box(jp_config::tool::parameters_json_schema(&plain));
    });
    // A new schema each time (a counter in its description), so the
    // validator is built, not found in the cache.
    let mut n = 0u64;
    let measured = per_call(200, || {
        n += 1;
        let mut fresh = wide.clone();
        fresh["description"] = n.to_string().into();
        black_box(adopted(&fresh));
    });
    report("adopt", base, measured);
}
