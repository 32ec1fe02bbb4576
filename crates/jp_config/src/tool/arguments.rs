//! Checking a tool call's arguments against the tool's parameters.
//!
//! The model is told the parameters as a JSON Schema with
//! `additionalProperties: false`; this checks that it kept to it before the
//! call is run: every member is a known parameter, required ones are there,
//! and every value has its parameter's type (a `path` is a string without
//! NUL, an `integer` an integer literal that fits 64 bits: no fraction, no
//! exponent, not `-0`) and, where the parameter has an `enum`, is one of
//! its values. `null` is not a value of any type. Every problem is reported,
//! each with the JSON pointer of the value.

use std::fmt;

use jp_policy::matcher::{json_equal, show};
use jp_policy::parameter::{ParamType, ToolParameterConfig, ToolParameters};
use jp_policy::pointer::{encode, quote};
use serde_json::Value;

/// One way a call's arguments do not fit the tool's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentIssue {
    /// The JSON pointer of the offending value (`/patterns/0/old`); empty
    /// for the arguments as a whole.
    pub pointer: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ArgumentIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "arguments: {}", self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

impl std::error::Error for ArgumentIssue {}

/// Checks `args` against `params`.
///
/// # Errors
///
/// Every problem found, in document order: arguments that are not an
/// object, unknown or missing parameters, values of the wrong type or
/// outside their `enum`.
pub fn check_arguments(params: &ToolParameters, args: &Value) -> Result<(), Vec<ArgumentIssue>> {
    let mut issues = Vec::new();
    let mut at = Vec::new();
    check_object(params, args, &mut at, &mut issues);
    if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    }
}

/// Checks one value against its parameter, as [`check_arguments`] checks
/// it where it stands in the arguments (`at`, the pointer's segments):
/// for a value that is complete before the rest of the arguments are (a
/// scalar while the call streams), so a call that cannot run can be
/// refused before anything else is decided about it.
#[must_use]
pub fn check_value_at(
    param: &ToolParameterConfig,
    value: &Value,
    at: Vec<String>,
) -> Vec<ArgumentIssue> {
    let mut issues = Vec::new();
    let mut at = at;
    check_value(param, value, &mut at, &mut issues);
    issues
}

pub(crate) fn issue(at: &[String], message: String) -> ArgumentIssue {
    ArgumentIssue {
        pointer: encode(at),
        message,
    }
}

fn check_object(
    properties: &ToolParameters,
    value: &Value,
    at: &mut Vec<String>,
    issues: &mut Vec<ArgumentIssue>,
) {
    let Value::Object(members) = value else {
        issues.push(issue(
            at,
            format!("expected an object, found {}", show(value)),
        ));
        return;
    };
    for (name, member) in members {
        at.push(name.clone());
        match properties.get(name) {
            Some(param) => check_value(param, member, at, issues),
            None => issues.push(issue(at, unknown_member(properties))),
        }
        at.pop();
    }
    for (name, param) in properties {
        if param.required && !members.contains_key(name) {
            at.push(name.clone());
            issues.push(issue(at, "missing required parameter".to_owned()));
            at.pop();
        }
    }
}

pub(crate) fn unknown_member(properties: &ToolParameters) -> String {
    if properties.is_empty() {
        return "unknown parameter (none are accepted here)".to_owned();
    }
    let names = jp_policy::listing::cut_list(properties.keys().map(|k| quote(k)));
    format!("unknown parameter (expected one of {names})")
}

/// What an `integer` argument must look like, for messages.
const INTEGER_RULE: &str = "an integer is written as digits alone, without a fraction, an \
                            exponent or a minus zero, from -9223372036854775808 to \
                            18446744073709551615";

/// Whether `n` is what an `integer` parameter accepts: a JSON integer
/// literal (digits, an optional `-`, no fraction, no exponent) that fits
/// `i64` or `u64`, and not `-0`.
///
/// This is read off how serde_json stores the number, which is how every
/// tool call's arguments are parsed (the incremental parser hands each
/// number's text to serde_json): such a literal is stored as an `i64` or
/// `u64`, and everything else as an `f64`, including `1.0`, `1e2`,
/// `100.0000000000000000001` (which is `100.0` as an `f64`), `-0` (stored
/// as `-0.0`) and integer literals beyond 64 bits (`18446744073709551616`,
/// `-9223372036854775809`). An `f64` is never accepted, even when its
/// value is integral: it cannot tell `100` from `100.0000000000000000001`
/// or `2^64` from `2^64 + 1`, so accepting one would let the tool receive a
/// number the model did not write.
fn is_integer_literal(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64()
}

fn check_value(
    param: &ToolParameterConfig,
    value: &Value,
    at: &mut Vec<String>,
    issues: &mut Vec<ArgumentIssue>,
) {
    let expected = match (param.kind, value) {
        (ParamType::String, Value::String(_))
        | (ParamType::Number, Value::Number(_))
        | (ParamType::Boolean, Value::Bool(_)) => None,
        (ParamType::Path, Value::String(s)) if s.contains('\0') => {
            issues.push(nul_in_path(at));
            return;
        }
        (ParamType::Path, Value::String(_)) => None,
        (ParamType::Integer, Value::Number(n)) if is_integer_literal(n) => None,
        (ParamType::Integer, Value::Number(_)) => {
            issues.push(not_an_integer_literal(at, value));
            return;
        }
        (ParamType::Array, Value::Array(items)) => {
            if let Some(item) = param.items.as_deref() {
                for (i, element) in items.iter().enumerate() {
                    at.push(i.to_string());
                    check_value(item, element, at, issues);
                    at.pop();
                }
            }
            None
        }
        (ParamType::Object, Value::Object(_)) => {
            check_object(&param.properties, value, at, issues);
            None
        }
        (ParamType::Any, Value::Null) => Some("a value other than null"),
        (ParamType::Any, _) => None,
        (ParamType::String, _) => Some("a string"),
        (ParamType::Path, _) => Some("a path (a string)"),
        (ParamType::Number, _) => Some("a number"),
        (ParamType::Integer, _) => Some("an integer"),
        (ParamType::Boolean, _) => Some("a boolean"),
        (ParamType::Array, _) => Some("an array"),
        (ParamType::Object, _) => Some("an object"),
    };
    if let Some(expected) = expected {
        issues.push(issue(
            at,
            format!("expected {expected}, found {}", show(value)),
        ));
        return;
    }
    if let Some(allowed) = &param.enumeration
        && !allowed.iter().any(|a| json_equal(a, value))
    {
        let list = jp_policy::listing::cut_list(allowed.iter().map(show));
        issues.push(issue(
            at,
            format!("expected one of {list}, found {}", show(value)),
        ));
    }
}

fn nul_in_path(at: &[String]) -> ArgumentIssue {
    issue(
        at,
        "expected a path, found a string containing NUL".to_owned(),
    )
}

fn not_an_integer_literal(at: &[String], value: &Value) -> ArgumentIssue {
    issue(
        at,
        format!(
            "expected an integer, found {} ({INTEGER_RULE})",
            show(value)
        ),
    )
}

/// What jp asks of a value beyond its type, for a tool whose JSON Schema
/// decides the types ([`super::schema`]): under a parameter the schema's
/// view calls a `path`, a string holds no NUL; under one it calls an
/// `integer`, a number is an integer literal (JSON Schema takes `1.0` for
/// an integer; jp never hands a tool a number the model did not write).
/// A value of another type than the view's is the validator's to judge.
#[must_use]
pub fn check_forms(params: &ToolParameters, value: &Value) -> Vec<ArgumentIssue> {
    let mut issues = Vec::new();
    let mut at = Vec::new();
    if let Value::Object(members) = value {
        for (name, member) in members {
            if let Some(param) = params.get(name) {
                at.push(name.clone());
                forms(param, member, &mut at, &mut issues);
                at.pop();
            }
        }
    }
    issues
}

/// [`check_forms`] of one value where it stands in the arguments (`at`),
/// as [`check_value_at`] checks it for a tool without a schema.
#[must_use]
pub fn check_form_at(
    param: &ToolParameterConfig,
    value: &Value,
    at: Vec<String>,
) -> Vec<ArgumentIssue> {
    let mut issues = Vec::new();
    let mut at = at;
    forms(param, value, &mut at, &mut issues);
    issues
}

fn forms(
    param: &ToolParameterConfig,
    value: &Value,
    at: &mut Vec<String>,
    issues: &mut Vec<ArgumentIssue>,
) {
    match (param.kind, value) {
        (ParamType::Path, Value::String(s)) if s.contains('\0') => issues.push(nul_in_path(at)),
        (ParamType::Integer, Value::Number(n)) if !is_integer_literal(n) => {
            issues.push(not_an_integer_literal(at, value));
        }
        (ParamType::Array, Value::Array(elements)) => {
            if let Some(item) = param.items.as_deref() {
                for (i, element) in elements.iter().enumerate() {
                    at.push(i.to_string());
                    forms(item, element, at, issues);
                    at.pop();
                }
            }
        }
        (ParamType::Object, Value::Object(members)) => {
            for (name, member) in members {
                if let Some(inner) = param.properties.get(name) {
                    at.push(name.clone());
                    forms(inner, member, at, issues);
                    at.pop();
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "arguments_tests.rs"]
mod tests;
