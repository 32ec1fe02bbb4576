//! Compiling a policy as written ([`PolicySpec`]) against a tool's
//! parameters into checked rules ([`Policy`]) (RFD D25, architecture
//! decision 4).
//!
//! Every problem is reported, with the field and the rule index, instead of
//! stopping at the first; a policy with any error is not usable at all, so a
//! typo can never turn a rule into a catch-all or drop it silently.

use indexmap::IndexMap;
use regex::Regex;
use serde_json::Value;

use super::matcher::{Condition, Literal, Matcher, is_integral, show};
use super::path::{PathLiteralError, PolicyPath};
use super::pointer::{SchemaError, article, encode, parse, quote, resolve_schema};
use super::rule::{PolicyIssue, Rule};
use super::shadow;
use super::spec::{Mode, PolicyField, PolicySpec, RuleSpec};
use crate::parameter::{ParamType, ToolParameters};

/// The matcher keys, in documentation order.
const MATCHERS: [&str; 8] = [
    "const",
    "enum",
    "pattern",
    "prefix",
    "minimum",
    "maximum",
    "exclusive_minimum",
    "exclusive_maximum",
];

const MATCHER_LIST: &str =
    "const, enum, pattern, prefix, minimum, maximum, exclusive_minimum or exclusive_maximum";

const MODE_LIST: &str = "\"unattended\", \"ask\", \"edit\" or \"skip\"";

/// Where a policy comes from, which decides what happens to a rule whose
/// `arg` is not one of the tool's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleOrigin {
    /// The tool's own `policy`: such a rule is an error.
    Tool,
    /// The defaults for every tool (`conversation.tools.'*'.policy`): such
    /// a rule is skipped for this tool (RFD D25, open question 5).
    Defaults,
}

/// The result of [`Policy::compile`].
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The policy, when there are no errors.
    pub policy: Option<Policy>,
    /// Everything that makes the policy unusable, in rule order.
    pub errors: Vec<PolicyIssue>,
    /// Things worth fixing that do not change what the policy does.
    pub warnings: Vec<PolicyIssue>,
    /// Indices of rules from the defaults skipped because their `arg` is
    /// not one of this tool's parameters.
    pub skipped: Vec<usize>,
}

/// A compiled, checked policy: the rules of one field of one tool.
#[derive(Debug, Clone)]
pub struct Policy {
    field: PolicyField,
    origin: RuleOrigin,
    rules: Vec<Rule>,
    alias: bool,
}

impl Policy {
    /// Checks `spec` against the tool's parameters and compiles it.
    ///
    /// Errors are collected for every rule; the policy is `None` when there
    /// is any. Warnings (no final catch-all, a rule reachable only through
    /// the `unattended` quantifier) are reported either way.
    #[must_use]
    pub fn compile(
        spec: &PolicySpec,
        field: PolicyField,
        origin: RuleOrigin,
        params: &ToolParameters,
    ) -> Compiled {
        let specs = match spec {
            PolicySpec::Mode(mode) => {
                let rule = Rule {
                    index: 0,
                    condition: None,
                    mode: *mode,
                };
                return Compiled {
                    policy: Some(Self {
                        field,
                        origin,
                        rules: vec![rule],
                        alias: true,
                    }),
                    errors: Vec::new(),
                    warnings: Vec::new(),
                    skipped: Vec::new(),
                };
            }
            PolicySpec::Rules(specs) => specs,
        };

        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let mut skipped = Vec::new();
        let mut rules = Vec::new();
        for (index, rule) in specs.iter().enumerate() {
            match compile_rule(index, rule, origin, params) {
                Outcome::Rule(rule) => rules.push(rule),
                Outcome::Skipped => skipped.push(index),
                Outcome::Errors(messages) => {
                    errors.extend(messages.into_iter().map(|message| PolicyIssue {
                        field,
                        rule: Some(index),
                        message,
                    }));
                }
            }
        }

        warnings.extend(
            rules
                .iter()
                .filter_map(|rule| confinement_warning(field, rule)),
        );
        let (shadow_errors, shadow_warnings) = shadow::check(field, &rules, specs.len());
        errors.extend(shadow_errors);
        warnings.extend(shadow_warnings);
        errors.sort_by_key(|issue| issue.rule);
        warnings.sort_by_key(|issue| issue.rule);

        // A catch-all before the end is an error from the shadow check.
        let ends_with_catch_all = specs.iter().any(is_catch_all_spec);
        if specs.is_empty() {
            warnings.push(PolicyIssue {
                field,
                rule: None,
                message: "has no rules, so every call falls back to \"ask\"; write a mode such as \
                          \"ask\" instead of an empty list"
                    .to_owned(),
            });
        } else if !ends_with_catch_all {
            warnings.push(PolicyIssue {
                field,
                rule: None,
                message: "the last rule is not a catch-all, so a call no rule matches falls back \
                          to \"ask\"; end with a rule such as { mode = \"ask\" } to make the \
                          fallback explicit"
                    .to_owned(),
            });
        }

        let policy = errors.is_empty().then_some(Self {
            field,
            origin,
            rules,
            alias: false,
        });
        Compiled {
            policy,
            errors,
            warnings,
            skipped,
        }
    }

    /// The field this policy is for.
    #[must_use]
    pub fn field(&self) -> PolicyField {
        self.field
    }

    /// Where the policy comes from.
    #[must_use]
    pub fn origin(&self) -> RuleOrigin {
        self.origin
    }

    /// The rules in order, without skipped ones.
    #[must_use]
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether the policy was written as a mode string (`run = "ask"`).
    #[must_use]
    pub fn is_alias(&self) -> bool {
        self.alias
    }

    /// Whether the decision needs no arguments: a mode string, a first rule
    /// that is a catch-all, or no rules at all (the implicit `ask`).
    #[must_use]
    pub fn is_unconditional(&self) -> bool {
        self.unconditional_mode().is_some()
    }

    /// The mode decided without arguments, if [`Policy::is_unconditional`].
    #[must_use]
    pub fn unconditional_mode(&self) -> Option<Mode> {
        match self.rules.first() {
            None => Some(Mode::Ask),
            Some(rule) if rule.is_catch_all() => Some(rule.mode),
            Some(_) => None,
        }
    }
}

/// An `unattended` `pattern` on a path says what a name looks like, not
/// where the file is; it approves only paths inside the workspace
/// (architecture decision 3), which the user should know when reading it.
fn confinement_warning(field: PolicyField, rule: &Rule) -> Option<PolicyIssue> {
    let condition = rule.condition.as_ref()?;
    let applies = rule.mode == Mode::Unattended
        && condition.param_type() == ParamType::Path
        && matches!(condition.matcher(), Matcher::Pattern(_));
    applies.then(|| PolicyIssue {
        field,
        rule: Some(rule.index),
        message: "an \"unattended\" pattern on a path only approves paths inside the \
                  workspace (both as written and with symlinks resolved): a matching path \
                  outside it, such as ../x or /tmp/x, falls through to the next rule; use \
                  prefix to say where, or an absolute prefix or const to approve a place \
                  outside the workspace"
            .to_owned(),
    })
}

fn is_catch_all_spec(spec: &RuleSpec) -> bool {
    let entries = spec.entries();
    entries.contains_key("mode")
        && !entries.contains_key("arg")
        && entries.keys().all(|k| k == "mode")
}

enum Outcome {
    Rule(Rule),
    Skipped,
    Errors(Vec<String>),
}

/// A matcher value checked without the schema.
enum Pre {
    Pattern(Regex),
    Prefix(String),
    Bound(f64),
    Const(Value),
    Enum(Vec<Value>),
}

fn compile_rule(
    index: usize,
    spec: &RuleSpec,
    origin: RuleOrigin,
    params: &ToolParameters,
) -> Outcome {
    let entries = spec.entries();
    let mut errors = Vec::new();
    check_keys(entries, &mut errors);
    let unusable = unusable_values(entries, &mut errors);
    let mode = rule_mode(entries, &mut errors);
    let Some((arg, key)) = condition_parts(entries, &mut errors) else {
        return finish(index, errors, mode, None);
    };
    if unusable.contains(&"arg") || unusable.contains(&key) {
        return Outcome::Errors(errors);
    }
    match compile_condition(arg, key, entries, origin, params, &mut errors) {
        Built::Condition(condition) => finish(index, errors, mode, Some(condition)),
        Built::Skipped if errors.is_empty() => Outcome::Skipped,
        Built::Skipped | Built::Failed => Outcome::Errors(errors),
    }
}

/// What became of a rule's condition.
enum Built {
    Condition(Condition),
    /// A default rule whose `arg` is not one of this tool's parameters.
    Skipped,
    /// The problems are in the errors.
    Failed,
}

/// Reports every key that is neither `arg`, `mode` nor a matcher.
fn check_keys(entries: &IndexMap<String, Value>, errors: &mut Vec<String>) {
    for key in entries.keys() {
        if key != "arg" && key != "mode" && !MATCHERS.contains(&key.as_str()) {
            errors.push(format!(
                "unknown key {} (a rule has arg, mode and one matcher: {MATCHER_LIST})",
                quote(key)
            ));
        }
    }
}

/// The known keys whose value is or holds a null, each reported.
fn unusable_values<'a>(
    entries: &'a IndexMap<String, Value>,
    errors: &mut Vec<String>,
) -> Vec<&'a str> {
    // TOML's nan and inf arrive as null (serde_json has no non-finite
    // numbers); no rule value may be or contain one.
    let mut unusable = Vec::new();
    for (key, value) in entries {
        let known = key == "arg" || key == "mode" || MATCHERS.contains(&key.as_str());
        if known && contains_null(value) {
            let verb = if value.is_null() { "is" } else { "contains" };
            errors.push(format!(
                "{} {verb} nan, inf or null; only finite values are allowed",
                quote(key)
            ));
            unusable.push(key.as_str());
        }
    }
    unusable
}

/// The rule's `mode`, when it names one.
fn rule_mode(entries: &IndexMap<String, Value>, errors: &mut Vec<String>) -> Option<Mode> {
    match entries.get("mode") {
        None => {
            errors.push(format!("missing \"mode\" (one of {MODE_LIST})"));
            None
        }
        Some(Value::String(name)) => {
            let mode = Mode::from_name(name);
            if mode.is_none() {
                errors.push(format!("unknown mode {} (one of {MODE_LIST})", quote(name)));
            }
            mode
        }
        Some(Value::Null) => None,
        Some(other) => {
            errors.push(format!(
                "\"mode\" must be one of {MODE_LIST}, found {}",
                show(other)
            ));
            None
        }
    }
}

/// The rule's `arg` and its one matcher key, when it has both; `None`
/// for a catch-all and for a rule whose pairing is wrong (reported).
fn condition_parts<'a>(
    entries: &'a IndexMap<String, Value>,
    errors: &mut Vec<String>,
) -> Option<(&'a Value, &'a str)> {
    let matchers: Vec<&str> = entries
        .keys()
        .map(String::as_str)
        .filter(|k| MATCHERS.contains(k))
        .collect();
    if matchers.len() > 1 {
        errors.push(format!(
            "more than one matcher ({}); a rule has exactly one, and conditions on several \
             values are not supported",
            and_list(&matchers.iter().map(|m| quote(m)).collect::<Vec<_>>())
        ));
    }

    let arg = entries.get("arg");
    match (arg, matchers.as_slice()) {
        (None, []) => None,
        (Some(_), []) => {
            errors.push(format!(
                "\"arg\" without a matcher (add one of {MATCHER_LIST})"
            ));
            None
        }
        (None, [key, ..]) => {
            errors.push(format!(
                "{} without \"arg\" (name the argument it looks at, such as arg = \"/path\")",
                quote(key)
            ));
            None
        }
        (Some(arg), [key]) => Some((arg, *key)),
        (Some(_), _) => None,
    }
}

/// The condition of a rule on `arg` with the matcher `key`, checked
/// against the tool's parameters.
fn compile_condition(
    arg: &Value,
    key: &str,
    entries: &IndexMap<String, Value>,
    origin: RuleOrigin,
    params: &ToolParameters,
    errors: &mut Vec<String>,
) -> Built {
    let arg = match arg {
        Value::String(arg) => arg,
        other => {
            errors.push(format!(
                "\"arg\" must be a string holding a JSON pointer such as \"/path\", found {}",
                show(other)
            ));
            return Built::Failed;
        }
    };
    let tokens = match parse(arg) {
        Ok(tokens) => Some(tokens),
        Err(message) => {
            errors.push(message);
            None
        }
    };

    // Checks that do not depend on the parameter come first, so that they
    // are reported even for a default rule this tool skips.
    let Some(value) = entries.get(key) else {
        return Built::Failed;
    };
    let pre = match precheck(key, value) {
        Ok(pre) => Some(pre),
        Err(message) => {
            errors.push(message);
            None
        }
    };
    let Some(tokens) = tokens else {
        return Built::Failed;
    };

    let target = match resolve_schema(arg, &tokens, params) {
        Ok(target) => target,
        Err(SchemaError::NotFound(_)) if origin == RuleOrigin::Defaults => {
            return Built::Skipped;
        }
        Err(SchemaError::NotFound(message) | SchemaError::Invalid(message)) => {
            errors.push(message);
            return Built::Failed;
        }
    };
    let pointer = encode(&tokens);

    if let Err(message) = applies_to(key, target.param_type, &pointer) {
        errors.push(message);
        return Built::Failed;
    }
    let Some(pre) = pre else {
        return Built::Failed;
    };
    let matcher = match typed(key, pre, target.param_type, &pointer) {
        Ok(matcher) => matcher,
        Err(messages) => {
            errors.extend(messages);
            return Built::Failed;
        }
    };

    Built::Condition(Condition {
        arg: arg.clone(),
        tokens,
        steps: target.steps,
        param_type: target.param_type,
        matcher,
        written: value.clone(),
    })
}

fn finish(
    index: usize,
    errors: Vec<String>,
    mode: Option<Mode>,
    condition: Option<Condition>,
) -> Outcome {
    match mode {
        Some(mode) if errors.is_empty() => Outcome::Rule(Rule {
            index,
            condition,
            mode,
        }),
        _ => Outcome::Errors(errors),
    }
}

fn contains_null(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Null => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// `"a"`, `"a" and "b"`, `"a", "b" and "c"`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Checks a matcher's value on its own.
fn precheck(key: &str, value: &Value) -> Result<Pre, String> {
    match key {
        "pattern" => {
            let Value::String(source) = value else {
                return Err(format!(
                    "\"pattern\" must be a string, found {}",
                    show(value)
                ));
            };
            compile_pattern(source).map(Pre::Pattern)
        }
        "prefix" => match value {
            Value::String(s) if s.is_empty() => {
                Err("\"prefix\" is empty, so it would match every \
                                                     value; remove \"arg\" and \"prefix\" for a \
                                                     catch-all"
                    .to_owned())
            }
            Value::String(s) => Ok(Pre::Prefix(s.clone())),
            other => Err(format!(
                "\"prefix\" must be a string, found {}",
                show(other)
            )),
        },
        "const" => Ok(Pre::Const(value.clone())),
        "enum" => match value {
            Value::Array(items) if items.is_empty() => {
                Err("\"enum\" is empty, so it would match nothing".to_owned())
            }
            Value::Array(items) => Ok(Pre::Enum(items.clone())),
            other => Err(format!(
                "\"enum\" must be an array of values, found {}",
                show(other)
            )),
        },
        _ => {
            // minimum, maximum, exclusive_minimum, exclusive_maximum
            let Value::Number(n) = value else {
                return Err(format!(
                    "{} must be a number, found {}",
                    quote(key),
                    show(value)
                ));
            };
            let Some(bound) = n.as_f64().filter(|f| f.is_finite()) else {
                return Err(format!("{} must be a finite number, found {n}", quote(key)));
            };
            // A bound is kept as f64; an integer it cannot hold exactly
            // would silently move the bound.
            let exact = n.as_i64().map_or_else(
                || n.as_u64().is_none_or(|u| bound_is_exact_u(u, bound)),
                |i| bound_is_exact_i(i, bound),
            );
            if !exact {
                return Err(format!(
                    "{} {n} cannot be compared exactly; use a bound between -2^53 and 2^53",
                    quote(key)
                ));
            }
            Ok(Pre::Bound(bound))
        }
    }
}

fn bound_is_exact_i(i: i64, f: f64) -> bool {
    const LIMIT: i64 = 1 << 53;
    (-LIMIT..=LIMIT).contains(&i) || super::matcher::numbers_equal(&i.into(), &number_from_f64(f))
}

fn bound_is_exact_u(u: u64, f: f64) -> bool {
    const LIMIT: u64 = 1 << 53;
    u <= LIMIT || super::matcher::numbers_equal(&u.into(), &number_from_f64(f))
}

fn number_from_f64(f: f64) -> serde_json::Number {
    serde_json::Number::from_f64(f).unwrap_or_else(|| 0.into())
}

/// Whether the regular expression `hir`, searched unanchored as `pattern`
/// is, matches every value: when it can match nothing at all needing only
/// what holds at the start of any text (`^`, `(?m)^`) or only what holds
/// at its end (`$`). So `.*`, `x?`, `^`, `.*$` and `^|x` do; `^$`, `\b` and
/// `x+` do not. (Some others match every value too, such as `^$|(?s).`;
/// this finds the ones that say so on their face.)
fn matches_every_value(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{HirKind, Look, LookSet};

    /// At most this many ways to match nothing are followed.
    const MAX_WAYS: usize = 64;

    fn merge(mut ways: Vec<LookSet>) -> Vec<LookSet> {
        ways.sort_by_key(|set| set.bits);
        ways.dedup();
        ways.truncate(MAX_WAYS);
        ways
    }

    /// The assertions each way of matching nothing needs.
    fn empty_ways(hir: &regex_syntax::hir::Hir) -> Vec<LookSet> {
        match hir.kind() {
            HirKind::Empty => vec![LookSet::empty()],
            HirKind::Literal(_) | HirKind::Class(_) => Vec::new(),
            HirKind::Look(look) => vec![LookSet::singleton(*look)],
            HirKind::Repetition(repetition) => {
                let mut ways = empty_ways(&repetition.sub);
                if repetition.min == 0 {
                    ways.push(LookSet::empty());
                }
                merge(ways)
            }
            HirKind::Capture(capture) => empty_ways(&capture.sub),
            HirKind::Concat(parts) => parts.iter().fold(vec![LookSet::empty()], |ways, part| {
                let next = empty_ways(part);
                merge(
                    ways.iter()
                        .flat_map(|a| next.iter().map(move |b| a.union(*b)))
                        .collect(),
                )
            }),
            HirKind::Alternation(branches) => merge(branches.iter().flat_map(empty_ways).collect()),
        }
    }

    let start = LookSet::singleton(Look::Start)
        .insert(Look::StartLF)
        .insert(Look::StartCRLF);
    let end = LookSet::singleton(Look::End)
        .insert(Look::EndLF)
        .insert(Look::EndCRLF);
    empty_ways(hir)
        .into_iter()
        .any(|way| way.subtract(start).is_empty() || way.subtract(end).is_empty())
}

/// How many patterns [`compile_pattern`] keeps, and the longest it keeps.
const KEPT_PATTERNS: usize = 256;
const KEPT_PATTERN_BYTES: usize = 1024;

/// Compiles a `pattern` ([`compile_pattern_anew`]), or gives back the one
/// compiled before from the same text. A config's policies are compiled
/// each time it loads (a query loads it three times, and `jp chat` for
/// every message), and compiling is a pure function of the text: most of a
/// message's time before its request left was spent compiling the same
/// patterns again (issue 39). A [`Regex`] is shared, not copied, when
/// cloned; at most [`KEPT_PATTERNS`] are kept (when full, the store is
/// emptied and fills again), none longer than [`KEPT_PATTERN_BYTES`].
fn compile_pattern(source: &str) -> Result<Regex, String> {
    type Kept = std::collections::HashMap<String, Result<Regex, String>>;
    static KEPT: std::sync::LazyLock<std::sync::Mutex<Kept>> =
        std::sync::LazyLock::new(Default::default);
    let kept = || {
        KEPT.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(compiled) = kept().get(source) {
        return compiled.clone();
    }
    let compiled = compile_pattern_anew(source);
    let mut kept = kept();
    if source.len() <= KEPT_PATTERN_BYTES {
        // Full: start again, so that the patterns in use now are kept.
        if kept.len() >= KEPT_PATTERNS {
            kept.clear();
        }
        kept.insert(source.to_owned(), compiled.clone());
    }
    compiled
}

/// Compiles a `pattern`, with clear messages for the features Rust's regex
/// syntax leaves out on purpose (it runs in linear time on model-written
/// arguments).
fn compile_pattern_anew(source: &str) -> Result<Regex, String> {
    use regex_syntax::ast::ErrorKind;

    if source.is_empty() {
        return Err(
            "\"pattern\" is empty, so it would match every value; remove \"arg\" and \
                    \"pattern\" for a catch-all"
                .to_owned(),
        );
    }
    if let Err(err) = regex_syntax::ast::parse::Parser::new().parse(source) {
        return Err(match err.kind() {
            ErrorKind::UnsupportedLookAround => format!(
                "\"pattern\" {} uses look-around ((?=, (?!, (?<= or (?<!), which Rust regex \
                 syntax does not support",
                quote(source)
            ),
            ErrorKind::UnsupportedBackreference => format!(
                "\"pattern\" {} uses a backreference, which Rust regex syntax does not support",
                quote(source)
            ),
            kind => format!(
                "\"pattern\" {} is not a valid regular expression: {kind}",
                quote(source)
            ),
        });
    }
    match regex_syntax::Parser::new().parse(source) {
        Err(err) => {
            let detail = match &err {
                regex_syntax::Error::Parse(e) => e.kind().to_string(),
                regex_syntax::Error::Translate(e) => e.kind().to_string(),
                other => other.to_string(),
            };
            return Err(format!(
                "\"pattern\" {} is not a valid regular expression: {detail}",
                quote(source)
            ));
        }
        // A catch-all written as a matcher, like the empty pattern (found
        // in review and by an adversarial run).
        Ok(hir) if matches_every_value(&hir) => {
            return Err(format!(
                "\"pattern\" {} matches every value (it can match nothing at all at the \
                 start or at the end of any value); remove \"arg\" and \"pattern\" for a \
                 catch-all",
                quote(source)
            ));
        }
        Ok(_) => {}
    }
    // `.` matches any character, a line break too: a value with a newline
    // must not slip past a rule written as "anything but ..." (`git.`
    // missed `git\n/x`, found by an adversarial run).
    regex::RegexBuilder::new(source)
        .dot_matches_new_line(true)
        .build()
        .map_err(|err| {
            let detail = match err {
                regex::Error::CompiledTooBig(limit) => {
                    format!("it is too large (it compiles to more than {limit} bytes)")
                }
                other => other.to_string(),
            };
            format!(
                "\"pattern\" {} is not a valid regular expression: {detail}",
                quote(source)
            )
        })
}

/// Whether the matcher `key` applies to a parameter of type `kind`.
fn applies_to(key: &str, kind: ParamType, pointer: &str) -> Result<(), String> {
    let text = matches!(kind, ParamType::String | ParamType::Path);
    let numeric = matches!(kind, ParamType::Number | ParamType::Integer);
    let ok = match key {
        "const" | "enum" => true,
        "pattern" | "prefix" => text,
        _ => numeric,
    };
    if ok {
        return Ok(());
    }
    let hint = if kind == ParamType::Boolean {
        "booleans take \"const\" or \"enum\"".to_owned()
    } else if kind == ParamType::Any {
        "a parameter of several types takes \"const\" or \"enum\"".to_owned()
    } else if matches!(key, "pattern" | "prefix") {
        "\"prefix\" and \"pattern\" are for string and path parameters".to_owned()
    } else {
        "\"minimum\", \"maximum\", \"exclusive_minimum\" and \"exclusive_maximum\" are for \
         number and integer parameters"
            .to_owned()
    };
    Err(format!(
        "{} does not apply to {pointer}, {} ({hint})",
        quote(key),
        article(kind)
    ))
}

/// Builds the matcher for a parameter of type `kind`.
fn typed(key: &str, pre: Pre, kind: ParamType, pointer: &str) -> Result<Matcher, Vec<String>> {
    Ok(match pre {
        Pre::Pattern(re) => Matcher::Pattern(re),
        Pre::Prefix(text) if kind == ParamType::Path => Matcher::Prefix(Literal::Path(
            path_literal("\"prefix\"", &text).map_err(|e| vec![e])?,
        )),
        Pre::Prefix(text) => Matcher::Prefix(Literal::String(text)),
        Pre::Bound(b) => match key {
            "minimum" => Matcher::Minimum(b),
            "maximum" => Matcher::Maximum(b),
            "exclusive_minimum" => Matcher::ExclusiveMinimum(b),
            _ => Matcher::ExclusiveMaximum(b),
        },
        Pre::Const(value) => {
            Matcher::Const(literal("\"const\"", &value, kind, pointer).map_err(|e| vec![e])?)
        }
        Pre::Enum(values) => {
            let mut literals = Vec::new();
            let mut errors = Vec::new();
            for (i, value) in values.iter().enumerate() {
                match literal(&format!("\"enum\"[{i}]"), value, kind, pointer) {
                    Ok(lit) => literals.push(lit),
                    Err(e) => errors.push(e),
                }
            }
            if !errors.is_empty() {
                return Err(errors);
            }
            Matcher::Enum(literals)
        }
    })
}

/// Checks a `const` or `enum` value against the parameter's type.
fn literal(what: &str, value: &Value, kind: ParamType, pointer: &str) -> Result<Literal, String> {
    let mismatch = |expected: &str| {
        format!(
            "{what} must be {expected}, because {pointer} is {}; found {}",
            article(kind),
            show(value)
        )
    };
    match (kind, value) {
        (ParamType::Boolean, Value::Bool(b)) => Ok(Literal::Bool(*b)),
        (ParamType::Number, Value::Number(n)) => Ok(Literal::Number(n.clone())),
        (ParamType::Integer, Value::Number(n)) if is_integral(n) => Ok(Literal::Number(n.clone())),
        (ParamType::String, Value::String(s)) => Ok(Literal::String(s.clone())),
        (ParamType::Path, Value::String(s)) => path_literal(what, s).map(Literal::Path),
        // A value of several possible types is compared whole.
        (ParamType::Any, Value::Bool(b)) => Ok(Literal::Bool(*b)),
        (ParamType::Any, Value::Number(n)) => Ok(Literal::Number(n.clone())),
        (ParamType::Any, Value::String(s)) => Ok(Literal::String(s.clone())),
        (ParamType::Boolean, _) => Err(mismatch("a boolean")),
        (ParamType::Number, _) => Err(mismatch("a number")),
        (ParamType::Integer, _) => Err(mismatch("an integer")),
        (ParamType::String | ParamType::Path, _) => Err(mismatch("a string")),
        (ParamType::Array | ParamType::Object | ParamType::Any, _) => {
            Err(mismatch("a single value"))
        }
    }
}

fn path_literal(what: &str, text: &str) -> Result<PolicyPath, String> {
    PolicyPath::parse(text).map_err(|err| match err {
        PathLiteralError::Empty => {
            format!("{what} is an empty path; write \".\" for the workspace root")
        }
        PathLiteralError::Nul => format!("{what} contains a NUL character, which no path can hold"),
        PathLiteralError::EscapesRoot => format!(
            "{what} {} leaves the workspace; write an absolute path to match outside it",
            quote(text)
        ),
    })
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
