//! Deciding a policy while a call's arguments still stream (RFD D26).
//!
//! The batch evaluator ([`Policy::evaluate_in`]) needs every argument. A
//! [`StreamingPolicyState`] decides from what has arrived so far, over the
//! same compiled rules and with the same per-value tests, so that its
//! decision always equals the batch decision on the complete arguments:
//!
//! - rules are tried in order; a rule that cannot be settled yet (its
//!   parameter has not arrived, or is still arriving) blocks every rule
//!   below it, because the first match wins;
//! - a rule is *eliminated* when it can no longer match, and then the next
//!   rule is tried; a catch-all decides; when every rule is eliminated the
//!   implicit fallback `ask` applies;
//! - a rule on a nested pointer (`/patterns/path`) looks at each element as
//!   it completes. A rule whose mode is not `unattended` matches when any
//!   value does, so the first matching element decides. An `unattended` rule
//!   matches only when every value does (architecture decision 2), so its
//!   first failing element eliminates it, and it can match only once the
//!   whole top-level parameter is complete.
//!
//! Anything the streaming state cannot settle early (an argument of the
//! wrong shape, a parameter that never arrives) is settled when the
//! parameter completes, by the batch test on that parameter's value, or at
//! the end by the batch evaluator itself. Duplicate keys can make an early
//! decision disagree with the final arguments; such a call is refused
//! anyway (decision 1).

use std::sync::Arc;

use serde_json::Value;

use super::compile::Policy;
use super::evaluate::{Decision, RuleTrace, explain, try_found};
use super::matcher::Condition;
use super::path::Workspace;
use super::pointer::{Found, Step, encode, walk_member};
use super::rule::Rule;
use super::spec::Mode;
use crate::parameter::{ParamType, ToolParameters};

/// A concrete place inside a call's arguments: `/patterns/0/path` is
/// `[Key("patterns"), Index(0), Key("path")]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// Where a streaming evaluation stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Streaming {
    /// The policy decided; the decision equals the batch one on the
    /// complete arguments.
    Decided(Decision),
    /// The first rule not yet settled needs more of this parameter.
    Waiting {
        /// The rule's index as written.
        rule: usize,
        /// The top-level parameter it needs.
        on: String,
    },
}

/// What a piece of a nested argument is, for
/// [`StreamingPolicyState::seen`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A scalar or (part of) a string.
    Value,
    /// An empty array.
    EmptyArray,
    /// An empty object.
    EmptyObject,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RuleState {
    /// Not settled yet.
    Open,
    /// Cannot match.
    Eliminated,
    /// Matches; why.
    Matched(String),
}

/// One call's streaming evaluation of one policy: feed it each top-level
/// parameter as it completes ([`parameter_done`](Self::parameter_done)) and
/// each nested value it asks for ([`wants`](Self::wants),
/// [`element_done`](Self::element_done)).
#[derive(Debug, Clone)]
pub struct StreamingPolicyState {
    policy: Arc<Policy>,
    /// Each rule's state, in rule order.
    states: Vec<RuleState>,
    /// Every rule before this one is eliminated.
    first_open: usize,
    /// Rules that saw a value of the wrong shape under their parameter:
    /// only the parameter's end settles them (so the reason names the
    /// value the batch evaluator names).
    deferred: Vec<bool>,
    /// Set once decided; never changes after.
    decided: Option<Decision>,
}

impl StreamingPolicyState {
    /// A state with nothing received yet. A policy whose first rule is a
    /// catch-all (or a mode string) is decided at once.
    #[must_use]
    pub fn new(policy: Arc<Policy>) -> Self {
        let states = vec![RuleState::Open; policy.rules().len()];
        let deferred = vec![false; states.len()];
        let mut state = Self {
            policy,
            states,
            first_open: 0,
            deferred,
            decided: None,
        };
        state.settle();
        state
    }

    /// The policy being evaluated.
    #[must_use]
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    /// Where the evaluation stands.
    #[must_use]
    pub fn status(&self) -> Streaming {
        if let Some(decision) = &self.decided {
            return Streaming::Decided(decision.clone());
        }
        let rule = &self.policy.rules()[self.first_open];
        Streaming::Waiting {
            rule: rule.index,
            on: top_parameter(rule).unwrap_or_default().to_owned(),
        }
    }

    /// The decision, once made.
    #[must_use]
    pub fn decision(&self) -> Option<&Decision> {
        self.decided.as_ref()
    }

    /// Whether a still-open rule looks at the value at `path`, so the
    /// caller should collect it and pass it to
    /// [`element_done`](Self::element_done) when it completes. Top-level
    /// parameters go to [`parameter_done`](Self::parameter_done) instead.
    #[must_use]
    pub fn wants(&self, path: &[Segment]) -> bool {
        self.decided.is_none()
            && path.len() > 1
            && self.open_rules().any(|(i, rule)| {
                !self.deferred[i]
                    && rule
                        .condition
                        .as_ref()
                        .is_some_and(|c| fits(c.steps(), path))
            })
    }

    /// A piece of a nested argument arrived at `path` (at least two
    /// deep). Where it shows that the arguments do not have the shape a
    /// rule walks (a container where the rule expects a value, a value
    /// where it expects an array or object), that rule is no longer
    /// decided element by element but when the parameter completes, by the
    /// batch test.
    pub fn seen(&mut self, path: &[Segment], piece: Piece) {
        if self.decided.is_some() || path.len() < 2 {
            return;
        }
        for i in self.first_open..self.states.len() {
            if self.deferred[i] || self.states[i] != RuleState::Open {
                continue;
            }
            let Some(condition) = &self.policy.rules()[i].condition else {
                continue;
            };
            if misfits(condition.steps(), path, piece) {
                self.deferred[i] = true;
            }
        }
    }

    /// A top-level parameter is complete with `value`. Returns the decision
    /// if there is one now.
    pub fn parameter_done(
        &mut self,
        key: &str,
        value: &Value,
        workspace: &Workspace,
    ) -> Option<&Decision> {
        if self.decided.is_none() {
            for i in self.first_open..self.states.len() {
                let rule = &self.policy.rules()[i];
                let Some(condition) = &rule.condition else {
                    continue;
                };
                if self.states[i] != RuleState::Open || top_parameter(rule) != Some(key) {
                    continue;
                }
                // Most rules do not match: find out without explaining why
                // (no allocation); explain only the rule that matches.
                self.states[i] = if quick_match(rule, condition, key, value, workspace) {
                    let found = walk_member(condition.steps(), key, value);
                    RuleState::Matched(try_found(rule, condition, found, workspace).1)
                } else {
                    RuleState::Eliminated
                };
            }
            self.settle();
        }
        self.decided.as_ref()
    }

    /// A nested value at `path` (one that [`wants`](Self::wants) asked
    /// for) is complete with `value`. Returns the decision if there is one
    /// now.
    pub fn element_done(
        &mut self,
        path: &[Segment],
        value: &Value,
        workspace: &Workspace,
    ) -> Option<&Decision> {
        if self.decided.is_none() && path.len() > 1 {
            let at = pointer(path);
            for i in self.first_open..self.states.len() {
                let rule = &self.policy.rules()[i];
                let Some(condition) = &rule.condition else {
                    continue;
                };
                if self.states[i] != RuleState::Open
                    || self.deferred[i]
                    || !fits(condition.steps(), path)
                {
                    continue;
                }
                let verdict = condition.verdict(value, workspace);
                let satisfied = verdict.satisfies(rule.mode);
                let found = Found::Value {
                    at: at.clone(),
                    value,
                };
                // Any value decides a rule that is not `unattended`; any
                // value eliminates one that is.
                if rule.mode == Mode::Unattended && !satisfied {
                    self.states[i] = RuleState::Eliminated;
                } else if rule.mode != Mode::Unattended && satisfied {
                    let why = explain(condition, &found, &verdict, rule.mode, true);
                    self.states[i] = RuleState::Matched(why);
                }
            }
            self.settle();
        }
        self.decided.as_ref()
    }

    /// The rules not settled yet, with their positions.
    fn open_rules(&self) -> impl Iterator<Item = (usize, &Rule)> {
        self.policy
            .rules()
            .iter()
            .enumerate()
            .skip(self.first_open)
            .filter(|(i, _)| self.states[*i] == RuleState::Open)
    }

    /// Moves past eliminated rules and decides when the first rule left
    /// matched or is a catch-all, or when none is left.
    fn settle(&mut self) {
        if self.decided.is_some() {
            return;
        }
        let rules = self.policy.rules();
        while self.first_open < rules.len() {
            let rule = &rules[self.first_open];
            match &self.states[self.first_open] {
                RuleState::Eliminated => self.first_open += 1,
                RuleState::Matched(reason) => {
                    let decision = self.policy.decided_by(rule, reason, self.trace(true));
                    self.decided = Some(decision);
                    return;
                }
                RuleState::Open if rule.is_catch_all() => {
                    let decision = self.policy.decided_by(rule, "catch-all", self.trace(true));
                    self.decided = Some(decision);
                    return;
                }
                RuleState::Open => return,
            }
        }
        self.decided = Some(self.policy.fallback(self.trace(false)));
    }

    /// The trace of a streaming decision: the deciding rule alone (the
    /// rules passed over are not explained, which keeps a decision step
    /// free of formatting; `jp policy check` shows the full trace).
    fn trace(&self, deciding: bool) -> Vec<RuleTrace> {
        if !deciding {
            return Vec::new();
        }
        let rule = &self.policy.rules()[self.first_open];
        let reason = match &self.states[self.first_open] {
            RuleState::Matched(reason) => reason.clone(),
            _ => "catch-all".to_owned(),
        };
        vec![RuleTrace {
            rule: rule.index,
            matched: true,
            reason,
        }]
    }
}

/// The top-level parameter a rule looks at; `None` for a catch-all.
#[must_use]
pub fn top_parameter(rule: &Rule) -> Option<&str> {
    match rule.condition.as_ref()?.steps().first()? {
        Step::Member(name) => Some(name),
        Step::Each => None,
    }
}

/// Warnings for a tool whose parameters are declared in an order that
/// keeps `policy` from deciding early: a long parameter (a string that is
/// not a path, an array, an object) declared before a parameter a rule
/// needs. Models usually send arguments in the order of the schema, so
/// the long one streams in full before the rule can be tried.
#[must_use]
pub fn ordering_warnings(policy: &Policy, params: &ToolParameters) -> Vec<String> {
    let field = policy.field();
    let mut needed: Vec<(&str, usize)> = Vec::new();
    for rule in policy.rules() {
        if let Some(top) = top_parameter(rule)
            && !needed.iter().any(|(name, _)| *name == top)
        {
            needed.push((top, rule.index));
        }
    }
    let mut warnings = Vec::new();
    for (name, rule) in &needed {
        let Some(position) = params.get_index_of(*name) else {
            continue;
        };
        let long: Vec<String> = params
            .iter()
            .take(position)
            .filter(|(other, param)| {
                !needed.iter().any(|(n, _)| n == other)
                    && matches!(
                        param.kind,
                        ParamType::String | ParamType::Array | ParamType::Object | ParamType::Any
                    )
            })
            .map(|(other, param)| format!("`{other}` ({})", param.kind))
            .collect();
        if long.is_empty() {
            continue;
        }
        let (list, verb) = match long.as_slice() {
            [one] => (one.clone(), "is"),
            _ => (long.join(", "), "are"),
        };
        warnings.push(format!(
            "{list} {verb} declared before `{name}`, which {field}[{rule}] needs: models send \
             arguments in this order, so jp must wait for all of it before deciding; declare \
             `{name}` first"
        ));
    }
    warnings
}

/// Whether `rule` matches the values its condition reaches under the
/// parameter `key` (whose value is `value`): the batch test of
/// [`try_found`] without its explanation.
fn quick_match(
    rule: &Rule,
    condition: &Condition,
    key: &str,
    value: &Value,
    workspace: &Workspace,
) -> bool {
    let rest = match condition.steps().split_first() {
        Some((Step::Member(first), rest)) if first == key => rest,
        _ => return false,
    };
    let unattended = rule.mode == Mode::Unattended;
    let mut seen = 0usize;
    let mut decided = None;
    visit(rest, value, &mut |found| {
        // A value of the wrong shape fails an `unattended` rule and
        // satisfies any other.
        let satisfied = match found {
            Some(v) => condition.verdict(v, workspace).satisfies(rule.mode),
            None => !unattended,
        };
        seen += 1;
        match (unattended, satisfied) {
            (true, false) => decided = Some(false),
            (false, true) => decided = Some(true),
            _ => {}
        }
        decided.is_none()
    });
    decided.unwrap_or(unattended && seen > 0)
}

/// Calls `f` with each value `steps` reach in `value` (`None` where the
/// shape is wrong), in document order, as [`walk_member`] finds them;
/// stops when `f` returns false. Returns false when stopped.
fn visit<'a>(
    steps: &[Step],
    value: &'a Value,
    f: &mut impl FnMut(Option<&'a Value>) -> bool,
) -> bool {
    let Some((step, rest)) = steps.split_first() else {
        return f(Some(value));
    };
    match (step, value) {
        (Step::Member(name), Value::Object(map)) => match map.get(name) {
            Some(member) => visit(rest, member, f),
            None => true,
        },
        (Step::Each, Value::Array(items)) => items.iter().all(|item| visit(rest, item, f)),
        _ => f(None),
    }
}

/// Whether the concrete `path` is one of the places `steps` reaches.
fn fits(steps: &[Step], path: &[Segment]) -> bool {
    steps.len() == path.len()
        && steps
            .iter()
            .zip(path)
            .all(|(step, segment)| match (step, segment) {
                (Step::Member(name), Segment::Key(key)) => name == key,
                (Step::Each, Segment::Index(_)) => true,
                _ => false,
            })
}

/// Whether a piece at `path` shows a shape `steps` cannot walk: a member
/// where the steps go through an array, an element where they go to a
/// member, a value where they go on, or anything below the place where they
/// end. Pieces off the steps' way (another member) do not count.
fn misfits(steps: &[Step], path: &[Segment], piece: Piece) -> bool {
    for (step, segment) in steps.iter().zip(path) {
        match (step, segment) {
            (Step::Member(name), Segment::Key(key)) if name != key => return false,
            (Step::Member(_), Segment::Key(_)) | (Step::Each, Segment::Index(_)) => {}
            _ => return true,
        }
    }
    match path.len().cmp(&steps.len()) {
        // Below the walk's end: a container where a value belongs.
        std::cmp::Ordering::Greater => true,
        // The walk's end: a value belongs here.
        std::cmp::Ordering::Equal => piece != Piece::Value,
        // The walk goes on, but here is a value or an empty container.
        std::cmp::Ordering::Less => !matches!(
            (&steps[path.len()], piece),
            (Step::Each, Piece::EmptyArray) | (Step::Member(_), Piece::EmptyObject)
        ),
    }
}

fn pointer(path: &[Segment]) -> String {
    let tokens: Vec<String> = path
        .iter()
        .map(|segment| match segment {
            Segment::Key(key) => key.clone(),
            Segment::Index(index) => index.to_string(),
        })
        .collect();
    encode(&tokens)
}

#[cfg(test)]
#[path = "streaming_tests.rs"]
mod tests;
