//! How to let a call like a declined one run without a terminal (or its
//! result reach the model), and no other: the advice a refusal carries.

use jp_policy::{Mode, Policy, PolicyField};
use serde_json::{Map, Value};

use super::ToolCoordinator;

impl ToolCoordinator<'_> {
    /// How to let a call like this one run (`field` is `policy.run`), or
    /// its result reach the model (`policy.result`), without a terminal,
    /// and no other: a rule on the argument that decided (or on the call's
    /// path), placed before the rule that asked (`rule`; `None` for the
    /// implicit fallback). Never a blanket `unattended` for the whole tool.
    pub(super) fn narrow_advice(
        &self,
        name: &str,
        field: PolicyField,
        rule: Option<usize>,
        known: &dyn Fn(&str) -> Option<Value>,
    ) -> String {
        let alias = self
            .policy(name, field)
            .is_some_and(|policy| policy.is_alias());
        let place = match rule {
            // `run = "ask"`: rules replace the mode string.
            Some(_) if alias => format!("in a {field} list that ends with {{ mode = \"ask\" }}"),
            Some(index) => format!("before {field}[{index}]"),
            None => format!("at the end of {field}"),
        };
        let allow = match field {
            PolicyField::Run => "allow calls like this one",
            PolicyField::Result => "send the results of calls like this one",
        };
        let deciding = rule.and_then(|index| {
            self.policy(name, field)?
                .rules()
                .iter()
                .find(|r| r.index == index)
                .and_then(|r| r.condition.clone())
        });
        // The argument the deciding rule looks at, when it is a top-level
        // one; otherwise the call's first path argument.
        let key = match &deciding {
            Some(condition) => match condition.steps() {
                [jp_policy::Step::Member(key)] => Some(key.clone()),
                _ => None,
            },
            None => self.tool(name).and_then(|tool| {
                tool.parameters
                    .iter()
                    .find(|(key, p)| {
                        p.kind == jp_config::tool::ParamType::Path && known(key).is_some()
                    })
                    .map(|(key, _)| key.clone())
            }),
        };
        let value = key
            .as_deref()
            .and_then(known)
            .filter(|v| v.is_string() || v.is_number() || v.is_boolean());
        // Suggested only when it would really let this call run: a path
        // that escapes the workspace or cannot be resolved never runs
        // unattended, whatever rule names it.
        let (key, value) = match (key, value) {
            (Some(key), Some(value)) if self.would_allow(name, field, &key, &value) => {
                (Some(key), Some(value))
            }
            _ => (None, None),
        };
        let entry = self.advice_entry(name, field);
        match (key, value) {
            (Some(key), Some(value)) => format!(
                "run jp in a terminal to answer, or {allow} with a rule {place} in {entry}: {{ arg = \"/{key}\", const = {value}, mode = \"unattended\" }}"
            ),
            _ => format!(
                "run jp in a terminal to answer, or add a rule for calls like this one {place} in {entry} (`jp policy check {name}` tries it)"
            ),
        }
    }

    /// The entry whose policy to change for tool `name`: the tool's own,
    /// or, when its policy is its MCP server's wildcard entry's
    /// (`'git.*'`), that one.
    fn advice_entry(&self, name: &str, field: PolicyField) -> String {
        let spec = jp_config::tool::effective::effective_spec(self.config, name, field);
        let wildcard = spec
            .origin
            .key()
            .and_then(|key| key.segments().get(2))
            .filter(|entry| jp_config::tool::wildcard::wildcard_server(entry).is_some());
        let entry = wildcard.map_or(name, String::as_str);
        jp_config::ConfigPath::from_segments(["conversation", "tools", entry]).to_string()
    }

    /// Whether the rule `{ arg = "/KEY", const = VALUE, mode =
    /// "unattended" }` in `field` would allow a call whose `KEY` is
    /// `value`.
    pub(super) fn would_allow(
        &self,
        name: &str,
        field: PolicyField,
        key: &str,
        value: &Value,
    ) -> bool {
        let Some(tool) = self.tool(name) else {
            return false;
        };
        let rule: indexmap::IndexMap<String, Value> = [
            ("arg".to_owned(), Value::from(format!("/{key}"))),
            ("const".to_owned(), value.clone()),
            ("mode".to_owned(), Value::from("unattended")),
        ]
        .into_iter()
        .collect();
        let spec = jp_policy::PolicySpec::Rules(vec![jp_policy::RuleSpec(rule)]);
        let compiled = Policy::compile(&spec, field, jp_policy::RuleOrigin::Tool, &tool.parameters);
        let mut arguments = Map::new();
        arguments.insert(key.to_owned(), value.clone());
        compiled.policy.is_some_and(|policy| {
            policy
                .evaluate_in(&Value::Object(arguments), &self.workspace)
                .mode
                == Mode::Unattended
        })
    }
}
