//! Unreachable-rule detection (RFD D25 phase 4).
//!
//! A later rule is unreachable when an earlier rule on the same argument
//! matches every value the later one matches, and every rule after a
//! catch-all is: first match wins, so the later rule never decides
//! anything. That is a config error (RFD D25, "Unreachable rule
//! detection"), because the user's intent and the configuration disagree,
//! whatever the modes of the rules involved.
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

use super::matcher::{Condition, Literal, Matcher, compare_f64};
use super::rule::{PolicyIssue, Rule};
use super::spec::{Mode, PolicyField};
use crate::parameter::ParamType;

/// Unreachable rules (errors) and rules reachable only through the
/// `unattended` quantifier (warnings).
///
/// `rules` are the rules that compiled, in order, and `count` the number
/// of rules written. Every rule written after the first catch-all is
/// unreachable, whatever its mode, including a default rule this tool skips
/// and a rule with errors of its own (D25's table: "a catch-all matches
/// everything; nothing after it can fire"), and each is an error of its
/// own. A catch-all with an error (an unknown mode) is reported for that
/// error alone.
pub(crate) fn check(
    field: PolicyField,
    rules: &[Rule],
    count: usize,
) -> (Vec<PolicyIssue>, Vec<PolicyIssue>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let catch_all = rules.iter().find(|rule| rule.is_catch_all());
    let reachable = match catch_all.map(|rule| rule.index) {
        Some(k) => {
            errors.extend((k + 1..count).map(|index| after_catch_all(field, k, index)));
            let end = rules.partition_point(|rule| rule.index <= k);
            &rules[..end]
        }
        None => rules,
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

/// The error for rule `index`, which comes after the catch-all `catch_all`.
fn after_catch_all(field: PolicyField, catch_all: usize, index: usize) -> PolicyIssue {
    PolicyIssue {
        field,
        rule: Some(index),
        message: format!(
            "can never match: {field}[{catch_all}] (catch-all) matches every call; move the \
             catch-all to the end or remove this rule"
        ),
    }
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
