//! Conditions of compiled rules: which argument a rule looks at and how it
//! matches one value (RFD D25, architecture decisions 2 to 4).

use std::cmp::Ordering;
use std::path::Path;

use regex::Regex;
use serde_json::{Number, Value};

use super::path::{PathValue, PolicyPath, Workspace, resolve_path};
use super::pointer::{Found, Step, encode, quote, walk};
use super::spec::Mode;
use crate::parameter::ParamType;

/// A value written in a `const`, `enum` or `prefix` matcher, checked against
/// the parameter's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// For `boolean` parameters.
    Bool(bool),
    /// For `number` and `integer` parameters. Compared numerically: `1`
    /// equals `1.0`.
    Number(Number),
    /// For `string` parameters.
    String(String),
    /// For `path` parameters, normalized.
    Path(PolicyPath),
}

impl Literal {
    /// The literal as shown in messages: JSON for strings, numbers and
    /// booleans; the normalized path for paths.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            Self::Bool(b) => b.to_string(),
            Self::Number(n) => n.to_string(),
            Self::String(s) => quote(s),
            Self::Path(p) => p.display(),
        }
    }

    /// Whether every value equal to `other` (or, for `prefix`, under it)
    /// equals this literal.
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Bool(a), Self::Bool(b)) => a == b,
            (Self::Number(a), Self::Number(b)) => numbers_equal(a, b),
            (Self::String(a), Self::String(b)) => a == b,
            (Self::Path(a), Self::Path(b)) => a == b,
            _ => false,
        }
    }

    /// Whether `other` starts with this literal, as `prefix` matches it
    /// (bytes for strings, components for paths).
    pub(crate) fn is_prefix_of(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::String(a), Self::String(b)) => b.starts_with(a.as_str()),
            (Self::Path(a), Self::Path(b)) => a.is_prefix_of(b),
            _ => false,
        }
    }
}

/// How a condition tests one value. Each rule has exactly one.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `const`: the value equals this literal.
    Const(Literal),
    /// `enum`: the value equals one of these literals.
    Enum(Vec<Literal>),
    /// `pattern`: the regular expression (Rust `regex` syntax) finds a match
    /// anywhere in the value (unanchored). The source is `Regex::as_str`.
    Pattern(Regex),
    /// `prefix`: the value starts with this [`Literal::String`] (bytes) or
    /// is at or under this [`Literal::Path`] (components).
    Prefix(Literal),
    /// `minimum`: the value is at least this.
    Minimum(f64),
    /// `maximum`: the value is at most this.
    Maximum(f64),
    /// `exclusive_minimum`: the value is greater than this.
    ExclusiveMinimum(f64),
    /// `exclusive_maximum`: the value is less than this.
    ExclusiveMaximum(f64),
}

impl Matcher {
    /// The matcher's key in config (`"prefix"`, `"exclusive_minimum"`, ...).
    #[must_use]
    pub const fn keyword(&self) -> &'static str {
        match self {
            Self::Const(_) => "const",
            Self::Enum(_) => "enum",
            Self::Pattern(_) => "pattern",
            Self::Prefix(_) => "prefix",
            Self::Minimum(_) => "minimum",
            Self::Maximum(_) => "maximum",
            Self::ExclusiveMinimum(_) => "exclusive_minimum",
            Self::ExclusiveMaximum(_) => "exclusive_maximum",
        }
    }

    /// What a matching (`positive`) or non-matching value does, as the end
    /// of a sentence: `is under src/`, `does not equal "jq"`.
    #[must_use]
    pub fn phrase(&self, positive: bool) -> String {
        let (yes, no, what) = match self {
            Self::Const(lit) => ("equals", "does not equal", lit.display()),
            Self::Enum(lits) => {
                let list = crate::listing::cut_list(lits.iter().map(Literal::display));
                ("is one of", "is not one of", format!("[{list}]"))
            }
            Self::Pattern(re) => (
                "matches pattern",
                "does not match pattern",
                quote(re.as_str()),
            ),
            Self::Prefix(Literal::Path(p)) => ("is under", "is not under", p.display_prefix()),
            Self::Prefix(lit) => ("starts with", "does not start with", lit.display()),
            Self::Minimum(n) => ("is at least", "is less than", n.to_string()),
            Self::Maximum(n) => ("is at most", "is greater than", n.to_string()),
            Self::ExclusiveMinimum(n) => ("is greater than", "is not greater than", n.to_string()),
            Self::ExclusiveMaximum(n) => ("is less than", "is not less than", n.to_string()),
        };
        format!("{} {what}", if positive { yes } else { no })
    }

    /// Whether the matcher names an absolute path itself (an absolute
    /// `prefix`, `const` or `enum` member on a `path` parameter). Only such
    /// a matcher lets an `unattended` rule approve a path outside the
    /// workspace: `pattern = "\\.rs$"` says nothing about where a file is.
    #[must_use]
    pub fn names_absolute_location(&self) -> bool {
        let absolute = |lit: &Literal| matches!(lit, Literal::Path(PolicyPath::Absolute(_)));
        match self {
            Self::Const(lit) | Self::Prefix(lit) => absolute(lit),
            Self::Enum(lits) => lits.iter().any(absolute),
            _ => false,
        }
    }

    fn test(&self, subject: &Subject<'_>) -> bool {
        match self {
            Self::Const(lit) => literal_matches(lit, subject),
            Self::Enum(lits) => lits.iter().any(|lit| literal_matches(lit, subject)),
            Self::Pattern(re) => match subject {
                Subject::Text(s) => re.is_match(s),
                Subject::Path(form) => re.is_match(&form.text()),
                Subject::Bool(_) | Subject::Number(_) => false,
            },
            Self::Prefix(lit) => match (lit, subject) {
                (Literal::String(p), Subject::Text(s)) => s.starts_with(p.as_str()),
                (Literal::Path(p), Subject::Path(form)) => p.contains(form),
                _ => false,
            },
            Self::Minimum(b) => bound(subject, *b, |o| o != Ordering::Less),
            Self::Maximum(b) => bound(subject, *b, |o| o != Ordering::Greater),
            Self::ExclusiveMinimum(b) => bound(subject, *b, |o| o == Ordering::Greater),
            Self::ExclusiveMaximum(b) => bound(subject, *b, |o| o == Ordering::Less),
        }
    }
}

fn bound(subject: &Subject<'_>, b: f64, accept: impl Fn(Ordering) -> bool) -> bool {
    match subject {
        Subject::Number(n) => compare_f64(n, b).is_some_and(accept),
        _ => false,
    }
}

/// One value, typed by the parameter.
enum Subject<'a> {
    Bool(bool),
    Number(&'a Number),
    Text(&'a str),
    Path(&'a super::path::PathForm),
}

fn literal_matches(lit: &Literal, subject: &Subject<'_>) -> bool {
    match (lit, subject) {
        (Literal::Bool(a), Subject::Bool(b)) => a == b,
        (Literal::Number(a), Subject::Number(b)) => numbers_equal(a, b),
        (Literal::String(a), Subject::Text(b)) => a == b,
        (Literal::Path(a), Subject::Path(form)) => a.equals(form),
        _ => false,
    }
}

/// The condition of a rule: `arg` plus one matcher.
#[derive(Debug, Clone)]
pub struct Condition {
    pub(crate) arg: String,
    pub(crate) tokens: Vec<String>,
    pub(crate) steps: Vec<Step>,
    pub(crate) param_type: ParamType,
    pub(crate) matcher: Matcher,
    /// The matcher's value as written, for [`Condition::describe`].
    pub(crate) written: Value,
}

/// What one value does against a condition.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    /// Not a value of the parameter's type (or not a path): never satisfies
    /// an `unattended` rule, always satisfies any other rule.
    Invalid(String),
    /// Tested. For non-path parameters `lexical` and `resolved` are the
    /// same and `confined` is true.
    Tested {
        /// Whether the value (a path's lexical form) matches.
        lexical: bool,
        /// Whether a path's resolved form matches; `None` when the path
        /// cannot be resolved.
        resolved: Option<bool>,
        /// Whether a path's lexical form, resolved, matches (the same as
        /// `resolved` unless a `..` follows a link); `None` when it cannot
        /// be resolved.
        resolved_lexical: Option<bool>,
        /// Whether an `unattended` rule may approve the value at all: a path
        /// must have every form inside the workspace, unless the matcher
        /// names an absolute location itself.
        confined: bool,
        path: Option<Box<PathValue>>,
    },
}

impl Verdict {
    /// Whether the value satisfies a rule with this mode (the dual path
    /// rule, confinement and fail-closed typing).
    pub(crate) fn satisfies(&self, mode: Mode) -> bool {
        match self {
            Self::Invalid(_) => mode != Mode::Unattended,
            Self::Tested {
                lexical,
                resolved,
                resolved_lexical,
                confined,
                ..
            } => {
                let resolved = *resolved == Some(true);
                let resolved_lexical = *resolved_lexical == Some(true);
                if mode == Mode::Unattended {
                    *lexical && resolved && resolved_lexical && *confined
                } else {
                    *lexical || resolved || resolved_lexical
                }
            }
        }
    }
}

impl Condition {
    /// The pointer as written (`/patterns/paths`).
    #[must_use]
    pub fn arg(&self) -> &str {
        &self.arg
    }

    /// The pointer's decoded tokens (`["patterns", "paths"]`): two
    /// conditions look at the same argument exactly when these are equal.
    #[must_use]
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The walk from the arguments object to the values, with array
    /// positions made explicit as [`Step::Each`].
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The type of the parameter the pointer ends at (never `array` or
    /// `object`: arrays are gone through, objects are rejected).
    #[must_use]
    pub fn param_type(&self) -> ParamType {
        self.param_type
    }

    /// The matcher.
    #[must_use]
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// Whether the pointer goes through an array, so it may resolve to any
    /// number of values.
    #[must_use]
    pub fn traverses_array(&self) -> bool {
        self.steps.contains(&Step::Each)
    }

    /// The condition as written: `prefix "src/" on /path`.
    #[must_use]
    pub fn describe(&self) -> String {
        let written = match &self.written {
            Value::Array(items) => {
                let items = items.iter().map(Value::to_string).collect::<Vec<_>>();
                format!("[{}]", items.join(", "))
            }
            other => other.to_string(),
        };
        format!(
            "{} {written} on {}",
            self.matcher.keyword(),
            encode(&self.tokens)
        )
    }

    /// Every value the pointer resolves to in `args`, through arrays, in
    /// document order. An absent argument gives none. Where the arguments
    /// do not have the schema's shape (a string where an array of objects
    /// belongs), the value is `null`, which no matcher accepts: it never
    /// satisfies an `unattended` rule and always satisfies any other.
    #[must_use]
    pub fn values<'a>(&self, args: &'a Value) -> Vec<&'a Value> {
        static MALFORMED: Value = Value::Null;
        walk(&self.steps, args)
            .into_iter()
            .map(|found| match found {
                Found::Value { value, .. } => value,
                Found::Malformed { .. } => &MALFORMED,
            })
            .collect()
    }

    /// Whether one value satisfies this condition for a rule with `mode`:
    /// an `unattended` rule needs the value to be of the right type and, for
    /// paths, both its lexical and its resolved form to match; any other
    /// rule is satisfied by a value of the wrong type or by either form.
    #[must_use]
    pub fn matches_value(&self, value: &Value, mode: Mode, root: &Path) -> bool {
        self.matches_value_in(value, mode, &Workspace::new(root))
    }

    /// [`Condition::matches_value`] with a workspace built once.
    #[must_use]
    pub fn matches_value_in(&self, value: &Value, mode: Mode, workspace: &Workspace) -> bool {
        self.verdict(value, workspace).satisfies(mode)
    }

    pub(crate) fn verdict(&self, value: &Value, workspace: &Workspace) -> Verdict {
        let wrong = |expected: &str| Verdict::Invalid(format!("is not {expected}"));
        let plain = |ok: bool| Verdict::Tested {
            lexical: ok,
            resolved: Some(ok),
            resolved_lexical: Some(ok),
            confined: true,
            path: None,
        };
        match (self.param_type, value) {
            (ParamType::Boolean, Value::Bool(b)) => plain(self.matcher.test(&Subject::Bool(*b))),
            (ParamType::Number | ParamType::Integer, Value::Number(n)) => {
                plain(self.matcher.test(&Subject::Number(n)))
            }
            (ParamType::String, Value::String(s)) => plain(self.matcher.test(&Subject::Text(s))),
            (ParamType::Path, Value::String(s)) => match resolve_path(s, workspace) {
                Err(_) => Verdict::Invalid("contains NUL, which no path can hold".to_owned()),
                Ok(forms) => Verdict::Tested {
                    lexical: self.matcher.test(&Subject::Path(&forms.lexical)),
                    resolved: forms
                        .resolved
                        .as_ref()
                        .ok()
                        .map(|resolved| self.matcher.test(&Subject::Path(resolved))),
                    resolved_lexical: forms
                        .resolved_lexical
                        .as_ref()
                        .ok()
                        .map(|resolved| self.matcher.test(&Subject::Path(resolved))),
                    confined: forms.is_inside() || self.matcher.names_absolute_location(),
                    path: Some(Box::new(forms)),
                },
            },
            // A value of several possible types is compared whole (`const`
            // and `enum` are the only matchers such a parameter takes).
            (ParamType::Any, Value::Bool(b)) => plain(self.matcher.test(&Subject::Bool(*b))),
            (ParamType::Any, Value::Number(n)) => plain(self.matcher.test(&Subject::Number(n))),
            (ParamType::Any, Value::String(s)) => plain(self.matcher.test(&Subject::Text(s))),
            (ParamType::Boolean, _) => wrong("a boolean"),
            (ParamType::Number, _) => wrong("a number"),
            (ParamType::Integer, _) => wrong("an integer"),
            (ParamType::String | ParamType::Path, _) => wrong("a string"),
            (ParamType::Array | ParamType::Object | ParamType::Any, _) => wrong("a single value"),
        }
    }
}

/// A JSON number as an exact integer or a float.
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn classify(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i.into())
    } else if let Some(u) = n.as_u64() {
        Num::Int(u.into())
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Compares an integer with a float exactly (no rounding of the integer).
fn compare_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    let floor = f.floor();
    // Far beyond any JSON integer serde_json keeps (i64/u64).
    if floor >= 1e38 {
        return Some(Ordering::Less);
    }
    if floor <= -1e38 {
        return Some(Ordering::Greater);
    }
    #[allow(
        clippy::cast_possible_truncation,
        reason = "floor is integral and in range"
    )]
    let whole = floor as i128;
    match i.cmp(&whole) {
        Ordering::Equal if f > floor => Some(Ordering::Less),
        other => Some(other),
    }
}

fn compare(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => compare_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => compare_int_float(y, x).map(Ordering::reverse),
    }
}

/// Compares a JSON number with a bound, exactly.
pub(crate) fn compare_f64(n: &Number, bound: f64) -> Option<Ordering> {
    compare(classify(n), Num::Float(bound))
}

/// Whether two JSON numbers are numerically equal (`1` equals `1.0`).
/// Integers compare exactly, and an integer with a float exactly.
#[must_use]
pub fn numbers_equal(a: &Number, b: &Number) -> bool {
    compare(classify(a), classify(b)) == Some(Ordering::Equal)
}

/// Whether a JSON number has no fractional part.
pub(crate) fn is_integral(n: &Number) -> bool {
    match classify(n) {
        Num::Int(_) => true,
        Num::Float(f) => f.is_finite() && f.fract() == 0.0,
    }
}

/// Deep equality of JSON values with numbers compared numerically.
#[must_use]
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| json_equal(x, y)))
        }
        _ => a == b,
    }
}

/// A JSON value as messages show it: compact, long values cut short.
pub fn show(value: &Value) -> String {
    const LIMIT: usize = 60;
    let text = value.to_string();
    if text.chars().count() <= LIMIT {
        return text;
    }
    let cut: String = text.chars().take(LIMIT).collect();
    format!("{cut}…")
}

#[cfg(test)]
#[path = "matcher_tests.rs"]
mod tests;
