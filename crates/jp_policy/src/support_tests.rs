//! Fixtures shared by the policy unit tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::Deserialize;

use super::{Compiled, Policy, PolicyField, PolicyIssue, PolicySpec, RuleOrigin};
use crate::parameter::ToolParameters;

/// A tool with one parameter of every kind a rule can look at.
pub(crate) fn params() -> ToolParameters {
    toml::from_str(
        r#"
        path = { type = "path", required = true }
        name = { type = "string" }
        util = { type = "string" }
        replace_using_regex = { type = "boolean" }
        start_line = { type = "integer" }
        ratio = { type = "number" }
        tags = { type = "array", items = { type = "string" } }
        list = { type = "array" }

        [patterns]
        type = "array"
        items = { type = "object", properties = { old = { type = "string" }, new = { type = "string" }, paths = { type = "array", items = { type = "path" } } } }

        [opts]
        type = "object"
        properties = { depth = { type = "integer" }, "a/b" = { type = "string" } }
        "#,
    )
    .unwrap()
}

#[derive(Deserialize)]
struct Holder {
    run: PolicySpec,
}

/// `run = <text>` parsed from TOML.
pub(crate) fn spec(text: &str) -> PolicySpec {
    toml::from_str::<Holder>(&format!("run = {text}"))
        .unwrap()
        .run
}

/// Compiles `run = <text>` for a tool with [`params`].
pub(crate) fn compile_with(origin: RuleOrigin, field: PolicyField, text: &str) -> Compiled {
    Policy::compile(&spec(text), field, origin, &params())
}

/// Compiles `run = <text>` as the tool's own `policy.run`.
pub(crate) fn compile(text: &str) -> Compiled {
    compile_with(RuleOrigin::Tool, PolicyField::Run, text)
}

/// The compiled policy, which must have no errors.
pub(crate) fn policy(text: &str) -> Policy {
    let compiled = compile(text);
    assert_eq!(messages(&compiled.errors), Vec::<String>::new());
    compiled.policy.unwrap()
}

/// The errors of `run = <text>`, as displayed.
pub(crate) fn errors(text: &str) -> Vec<String> {
    let compiled = compile(text);
    assert!(compiled.policy.is_none() || compiled.errors.is_empty());
    messages(&compiled.errors)
}

/// Issues as displayed.
pub(crate) fn messages(issues: &[PolicyIssue]) -> Vec<String> {
    issues.iter().map(ToString::to_string).collect()
}

/// The warning about a missing final catch-all.
pub(crate) const NO_CATCH_ALL: &str = "policy.run: the last rule is not a catch-all, so a call no \
                                       rule matches falls back to \"ask\"; end with a rule such as \
                                       { mode = \"ask\" } to make the fallback explicit";
