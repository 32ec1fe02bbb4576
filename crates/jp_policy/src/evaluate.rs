//! Evaluating a compiled policy against a call's arguments (RFD D25,
//! architecture decisions 2 and 3).
//!
//! Rules are tried in order and the first that matches decides; when none
//! does, the implicit fallback is `ask`. A rule whose mode is `unattended`
//! matches only when the pointer resolves to at least one value and every
//! value satisfies the matcher (for paths: both forms); any other rule
//! matches when one value does. A value of the wrong type never satisfies an
//! `unattended` rule and always satisfies any other, so malformed arguments
//! fail closed.

use std::path::Path;

use serde_json::Value;

use super::compile::Policy;
use super::matcher::{Condition, Matcher, Verdict, show};
use super::path::{PathForm, PathValue, Unresolvable, Workspace};
use super::pointer::{Found, encode, walk};
use super::rule::Rule;
use super::spec::Mode;

/// What a policy decided for one call, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The mode to apply.
    pub mode: Mode,
    /// The index (as written) of the rule that decided, or `None` for the
    /// implicit fallback `ask`.
    pub rule: Option<usize>,
    /// One sentence for the user: which rule decided and why.
    pub reason: String,
    /// Every rule tried, in order, up to and including the one that
    /// matched.
    pub trace: Vec<RuleTrace>,
}

/// One rule tried during an evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleTrace {
    /// The rule's index as written.
    pub rule: usize,
    /// Whether it matched.
    pub matched: bool,
    /// A short phrase: `"README.md" is not under src/`, `/path is absent`.
    pub reason: String,
}

impl Policy {
    /// Decides the mode for a call with these arguments; `root` is the
    /// workspace root that relative `path` arguments are joined to.
    #[must_use]
    pub fn evaluate(&self, args: &Value, root: &Path) -> Decision {
        self.evaluate_in(args, &Workspace::new(root))
    }

    /// [`Policy::evaluate`] with a workspace built once.
    #[must_use]
    pub fn evaluate_in(&self, args: &Value, workspace: &Workspace) -> Decision {
        let mut trace = Vec::new();
        for rule in self.rules() {
            let (matched, reason) = try_rule(rule, args, workspace);
            trace.push(RuleTrace {
                rule: rule.index,
                matched,
                reason: reason.clone(),
            });
            if matched {
                return self.decided_by(rule, &reason, trace);
            }
        }
        self.fallback(trace)
    }

    /// The decision when `rule` is the first that matches, for `reason`.
    pub(crate) fn decided_by(&self, rule: &Rule, reason: &str, trace: Vec<RuleTrace>) -> Decision {
        let field = self.field();
        let reason = if self.is_alias() {
            format!("{field} is {}", quote_mode(rule.mode))
        } else if rule.is_catch_all() {
            format!("{field}[{}] (catch-all) matched", rule.index)
        } else {
            format!(
                "{field}[{}] ({}) matched: {reason}",
                rule.index,
                rule.describe()
            )
        };
        Decision {
            mode: rule.mode,
            rule: Some(rule.index),
            reason,
            trace,
        }
    }

    /// The decision when no rule matches: the implicit `ask`.
    pub(crate) fn fallback(&self, trace: Vec<RuleTrace>) -> Decision {
        Decision {
            mode: Mode::Ask,
            rule: None,
            reason: format!(
                "no rule of {} matched, so the implicit fallback \"ask\" applies",
                self.field()
            ),
            trace,
        }
    }
}

fn quote_mode(mode: Mode) -> String {
    format!("\"{mode}\"")
}

/// Whether `rule` matches, and a short phrase saying why.
fn try_rule(rule: &Rule, args: &Value, workspace: &Workspace) -> (bool, String) {
    match &rule.condition {
        None => (true, "catch-all".to_owned()),
        Some(condition) => try_found(rule, condition, walk(condition.steps(), args), workspace),
    }
}

/// Whether `rule`, whose condition is `condition`, matches the values its
/// pointer reached (`found`), and a short phrase saying why.
pub(crate) fn try_found(
    rule: &Rule,
    condition: &Condition,
    found: Vec<Found<'_>>,
    workspace: &Workspace,
) -> (bool, String) {
    let arg = encode(condition.tokens());
    if found.is_empty() {
        let reason = if condition.traverses_array() {
            format!("{arg} has no values")
        } else {
            format!("{arg} is absent")
        };
        return (false, reason);
    }
    let verdicts: Vec<(Found<'_>, Verdict)> = found
        .into_iter()
        .map(|f| {
            let verdict = match &f {
                Found::Value { value, .. } => condition.verdict(value, workspace),
                Found::Malformed { .. } => Verdict::Invalid(String::new()),
            };
            (f, verdict)
        })
        .collect();
    let count = verdicts.len();

    if rule.mode == Mode::Unattended {
        if let Some((f, v)) = verdicts.iter().find(|(_, v)| !v.satisfies(rule.mode)) {
            return (false, explain(condition, f, v, rule.mode, false));
        }
        let reason = match verdicts.as_slice() {
            [(f, v)] => explain(condition, f, v, rule.mode, true),
            _ => format!(
                "each of the {count} values of {arg} {}",
                condition.matcher().phrase(true)
            ),
        };
        return (true, reason);
    }

    if let Some((f, v)) = verdicts.iter().find(|(_, v)| v.satisfies(rule.mode)) {
        return (true, explain(condition, f, v, rule.mode, true));
    }
    let reason = match verdicts.as_slice() {
        [(f, v)] => explain(condition, f, v, rule.mode, false),
        _ => format!(
            "none of the {count} values of {arg} {}",
            condition.matcher().phrase(true)
        ),
    };
    (false, reason)
}

/// Why one value did (`satisfied`) or did not satisfy a rule with `mode`.
pub(crate) fn explain(
    condition: &Condition,
    found: &Found<'_>,
    verdict: &Verdict,
    mode: Mode,
    satisfied: bool,
) -> String {
    let label = match found {
        Found::Malformed {
            at,
            expected,
            found,
        } => {
            let text = if at.is_empty() {
                format!("the arguments are {}, not {expected}", show(found))
            } else {
                format!("{at} is {}, not {expected}", show(found))
            };
            return with_fail_closed(text, satisfied);
        }
        Found::Value { at, value } => {
            if condition.traverses_array() {
                format!("{} at {at}", show(value))
            } else {
                show(value)
            }
        }
    };
    let matcher = condition.matcher();
    match verdict {
        Verdict::Invalid(why) => with_fail_closed(format!("{label} {why}"), satisfied),
        Verdict::Tested { path: None, .. } => format!("{label} {}", matcher.phrase(satisfied)),
        Verdict::Tested {
            lexical,
            resolved,
            resolved_lexical,
            confined,
            path: Some(forms),
        } => {
            let raw = match found {
                Found::Value {
                    value: Value::String(s),
                    ..
                } => s.as_str(),
                _ => "",
            };
            let lexical_text = forms.lexical.text();
            let label = if lexical_text == raw {
                label
            } else {
                format!("{label} (normalized: {lexical_text})")
            };
            if forms.is_ambiguous() {
                let matched = [
                    *lexical,
                    *resolved == Some(true),
                    *resolved_lexical == Some(true),
                ];
                return explain_ambiguous(&label, matcher, forms, matched);
            }
            explain_path(&label, matcher, forms, *lexical, *resolved, *confined, mode)
        }
    }
}

/// Why a path value in which a `..` follows a symbolic link did or did not
/// satisfy a rule: it names both files the value may open, the kernel's
/// (and jp's tools') and a tool's that removes `..` first, and how each
/// fared. Such a value satisfies an `unattended` rule only when every form
/// matches inside the workspace, any other rule when any form matches.
fn explain_ambiguous(
    label: &str,
    matcher: &Matcher,
    forms: &PathValue,
    [lexical, resolved, resolved_lexical]: [bool; 3],
) -> String {
    let describe = |form: &Result<PathForm, Unresolvable>, matched: bool| match form {
        Ok(form) => {
            let outside = if form.relative().is_some() {
                ""
            } else {
                ", outside the workspace"
            };
            format!(
                "{}{outside}, which {}",
                form.text(),
                matcher.phrase(matched)
            )
        }
        Err(why) => format!("nowhere jp can tell ({why})"),
    };
    format!(
        "{label} {}, but \"..\" follows a symbolic link: it opens {}, and a tool that removes \
         \"..\" before following links opens {}",
        matcher.phrase(lexical),
        describe(&forms.resolved, resolved),
        describe(&forms.resolved_lexical, resolved_lexical),
    )
}

/// Why a path value did or did not satisfy a rule with `mode`, given how
/// each of its forms fared ([`Verdict::Tested`]).
fn explain_path(
    label: &str,
    matcher: &Matcher,
    forms: &PathValue,
    lexical: bool,
    resolved: Option<bool>,
    confined: bool,
    mode: Mode,
) -> String {
    let unattended = mode == Mode::Unattended;
    let resolved_form = match &forms.resolved {
        Ok(form) => form,
        Err(why) if unattended && lexical => {
            return format!(
                "{label} {}, but cannot be resolved: {why}",
                matcher.phrase(true)
            );
        }
        Err(why) => {
            return format!(
                "{label} {} (cannot be resolved: {why})",
                matcher.phrase(lexical)
            );
        }
    };
    // Some exactly when the path was resolved.
    let resolved = resolved == Some(true);
    let same = *resolved_form == forms.lexical;
    let resolved_text = resolved_form.text();
    if unattended && lexical && resolved && !confined {
        return if same {
            format!(
                "{label} {}, but is outside the workspace",
                matcher.phrase(true)
            )
        } else {
            format!(
                "{label} {}, but resolves to {resolved_text}, outside the workspace",
                matcher.phrase(true)
            )
        };
    }
    if same {
        return format!("{label} {}", matcher.phrase(lexical));
    }
    let satisfied = if unattended {
        lexical && resolved
    } else {
        lexical || resolved
    };
    match (unattended, satisfied) {
        // Both forms matched.
        (true, true) => format!(
            "{label} {} (resolved: {resolved_text})",
            matcher.phrase(true)
        ),
        // One of the forms did not match.
        (true, false) if lexical => format!(
            "{label} {}, but resolves to {resolved_text}, which {}",
            matcher.phrase(true),
            matcher.phrase(false)
        ),
        (true, false) => format!(
            "{label} {} (resolved: {resolved_text})",
            matcher.phrase(false)
        ),
        // Either form matched.
        (false, true) if lexical => format!(
            "{label} {} (resolved: {resolved_text})",
            matcher.phrase(true)
        ),
        (false, true) => format!(
            "{label} resolves to {resolved_text}, which {}",
            matcher.phrase(resolved)
        ),
        (false, false) => format!(
            "{label} {} (resolved: {resolved_text})",
            matcher.phrase(false)
        ),
    }
}

fn with_fail_closed(text: String, satisfied: bool) -> String {
    if satisfied {
        format!("{text}, which matches any rule that is not \"unattended\"")
    } else {
        text
    }
}

#[cfg(test)]
#[path = "evaluate_tests.rs"]
mod tests;
