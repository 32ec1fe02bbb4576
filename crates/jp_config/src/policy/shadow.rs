//! Unreachable-rule detection (RFD D25 phase 4).
//!
//! A later rule is unreachable when an earlier rule on the same argument
//! matches every value the later one matches: first match wins, so the
//! later rule never decides anything. That is a config error, because the
//! user's intent and the configuration disagree.
//!
//! The check is pairwise and only claims what it can prove, so it has no
//! false positives: it never compares rules on different arguments or
//! `pattern` rules, and it knows the quantifiers of architecture decisions 2
//! and 3. An earlier `unattended` rule needs *every* value (and, for paths,
//! both the lexical and the symlink-resolved form) to match, while any other
//! rule needs only one. So when the earlier rule is `unattended`, the later
//! one is not, and the argument goes through an array or is a path, the
//! later rule still fires when the earlier one's stricter quantifier fails.
//! That case is a warning explaining the ordering, not an error.

use std::cmp::Ordering;

use super::compile::{PolicyIssue, Rule};
use super::matcher::{Condition, Literal, Matcher, compare_f64};
use super::{Mode, PolicyField};
use crate::tool::ParamType;

/// Unreachable rules (errors) and rules reachable only through the
/// `unattended` quantifier (warnings).
pub(crate) fn check(field: PolicyField, rules: &[Rule]) -> (Vec<PolicyIssue>, Vec<PolicyIssue>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    // Everything after the first catch-all is unreachable: one issue for
    // all of it, on the catch-all, instead of one per rule.
    let reachable = match rules.iter().position(Rule::is_catch_all) {
        Some(k) if k + 1 < rules.len() => {
            let (issue, is_error) = after_catch_all(field, &rules[k], &rules[k + 1..]);
            if is_error {
                errors.push(issue);
            } else {
                warnings.push(issue);
            }
            &rules[..=k]
        }
        _ => rules,
    };
    let rules = reachable;
    for (j, later) in rules.iter().enumerate() {
        let mut warning = None;
        let mut error = None;
        for earlier in &rules[..j] {
            match relation(earlier, later) {
                Relation::Unrelated => {}
                Relation::Shadowed => {
                    error = Some(earlier);
                    break;
                }
                Relation::QuantifierOnly => {
                    warning = warning.or(Some(earlier));
                }
            }
        }
        if let Some(earlier) = error {
            errors.push(PolicyIssue {
                field,
                rule: Some(later.index),
                message: format!(
                    "can never match: {field}[{}] ({}) matches everything it matches; move it \
                     above {field}[{}] or remove it",
                    earlier.index,
                    earlier.describe(),
                    earlier.index
                ),
            });
        } else if let Some(earlier) = warning {
            // Only rules through an array get here (see `relation`).
            let requirement =
                if later.condition.as_ref().map(Condition::param_type) == Some(ParamType::Path) {
                    "every value, each with its symlink-resolved form,"
                } else {
                    "every value"
                };
            warnings.push(PolicyIssue {
                field,
                rule: Some(later.index),
                message: format!(
                    "{field}[{}] ({}) comes first and matches every value this rule matches, but \
                     as an \"unattended\" rule it needs {requirement} to match, so this rule \
                     only fires when that fails; move it above {field}[{}] if it should decide \
                     every value it matches",
                    earlier.index,
                    earlier.describe(),
                    earlier.index
                ),
            });
        }
    }
    (errors, warnings)
}

/// The issue for the rules after a catch-all: an error when one of them
/// is stricter than the catch-all (a restriction the user wrote would be
/// ignored), a warning when they are merely dead.
fn after_catch_all(field: PolicyField, catch_all: &Rule, after: &[Rule]) -> (PolicyIssue, bool) {
    let names = after
        .iter()
        .map(|r| format!("{field}[{}]", r.index))
        .collect::<Vec<_>>();
    let names = match names.as_slice() {
        [one] => format!("{one} comes after it and can never match"),
        [init @ .., last] => format!(
            "{} and {last} come after it and can never match",
            init.join(", ")
        ),
        [] => String::new(),
    };
    let stricter = after
        .iter()
        .filter(|r| r.mode > catch_all.mode)
        .map(|r| format!("{field}[{}] ({})", r.index, r.mode))
        .collect::<Vec<_>>();
    let mut message = format!(
        "this rule is a catch-all ({}), so {names}; move the catch-all to the end or remove \
         the rules after it",
        catch_all.mode
    );
    if !stricter.is_empty() {
        message.push_str(&format!(
            " ({} would be stricter than \"{}\", so this is an error)",
            stricter.join(", "),
            catch_all.mode
        ));
    }
    let issue = PolicyIssue {
        field,
        rule: Some(catch_all.index),
        message,
    };
    (issue, !stricter.is_empty())
}

enum Relation {
    /// The later rule can still decide calls the earlier one does not.
    Unrelated,
    /// The later rule can never match.
    Shadowed,
    /// The later rule matches only calls the earlier one would match with
    /// the "any value" quantifier, but the earlier one is `unattended`.
    QuantifierOnly,
}

fn relation(earlier: &Rule, later: &Rule) -> Relation {
    let Some(first) = &earlier.condition else {
        return Relation::Shadowed;
    };
    let Some(second) = &later.condition else {
        return Relation::Unrelated;
    };
    if first.tokens() != second.tokens() || !covers(first.matcher(), second.matcher()) {
        return Relation::Unrelated;
    }
    // Through an array, an `unattended` rule needs every element and a
    // later rule any one, so the later rule still decides mixed arrays:
    // only a warning. On a single path the later rule could fire only when
    // a symlink defeats the earlier one, which is never what an ordering
    // like `src/` before `src/secret/` means: an error (D25's own example).
    let quantifiers_differ = earlier.mode == Mode::Unattended
        && later.mode != Mode::Unattended
        && second.traverses_array();
    if quantifiers_differ {
        Relation::QuantifierOnly
    } else {
        Relation::Shadowed
    }
}

/// Whether every value `later` matches is matched by `earlier` (one value,
/// one form at a time).
fn covers(earlier: &Matcher, later: &Matcher) -> bool {
    match (earlier, later) {
        (Matcher::Pattern(_), _) | (_, Matcher::Pattern(_)) => false,
        (Matcher::Prefix(p), Matcher::Prefix(q) | Matcher::Const(q)) => p.is_prefix_of(q),
        (Matcher::Prefix(p), Matcher::Enum(qs)) => qs.iter().all(|q| p.is_prefix_of(q)),
        (Matcher::Const(a), Matcher::Const(b)) => a.same_as(b),
        (Matcher::Const(a), Matcher::Enum(bs)) => bs.iter().all(|b| a.same_as(b)),
        (Matcher::Enum(a), Matcher::Const(b)) => in_set(a, b),
        (Matcher::Enum(a), Matcher::Enum(bs)) => bs.iter().all(|b| in_set(a, b)),
        (bound, Matcher::Const(lit)) => in_interval(bound, lit),
        (bound, Matcher::Enum(lits)) => lits.iter().all(|lit| in_interval(bound, lit)),
        (first, second) => interval_covers(first, second),
    }
}

fn in_set(set: &[Literal], lit: &Literal) -> bool {
    set.iter().any(|x| x.same_as(lit))
}

fn in_interval(bound: &Matcher, lit: &Literal) -> bool {
    let Literal::Number(n) = lit else {
        return false;
    };
    let check = |b: f64, ok: fn(Ordering) -> bool| compare_f64(n, b).is_some_and(ok);
    match bound {
        Matcher::Minimum(b) => check(*b, |o| o != Ordering::Less),
        Matcher::Maximum(b) => check(*b, |o| o != Ordering::Greater),
        Matcher::ExclusiveMinimum(b) => check(*b, |o| o == Ordering::Greater),
        Matcher::ExclusiveMaximum(b) => check(*b, |o| o == Ordering::Less),
        _ => false,
    }
}

/// Half-lines: `[a, ∞)` covers `[b, ∞)` and `(b, ∞)` when `b >= a`; `(a, ∞)`
/// covers `(b, ∞)` when `b >= a` and `[b, ∞)` when `b > a`. Likewise for
/// upper bounds. Exact over the reals, so no integrality is assumed.
fn interval_covers(earlier: &Matcher, later: &Matcher) -> bool {
    use Matcher::{ExclusiveMaximum, ExclusiveMinimum, Maximum, Minimum};
    match (earlier, later) {
        (Minimum(a), Minimum(b) | ExclusiveMinimum(b))
        | (ExclusiveMinimum(a), ExclusiveMinimum(b)) => b >= a,
        (ExclusiveMinimum(a), Minimum(b)) => b > a,
        (Maximum(a), Maximum(b) | ExclusiveMaximum(b))
        | (ExclusiveMaximum(a), ExclusiveMaximum(b)) => b <= a,
        (ExclusiveMaximum(a), Maximum(b)) => b < a,
        _ => false,
    }
}

#[cfg(test)]
#[path = "shadow_tests.rs"]
mod tests;
