//! Resolving a rule's `arg` (RFD D25): against the tool's parameter schema
//! when the policy is compiled, and against the arguments of a call when it
//! is evaluated.
//!
//! `arg` is an RFC 6901 JSON pointer, with one extension: the pointer walks
//! the *schema*, and wherever the schema has an array it goes through every
//! element of the actual argument. `/patterns/paths` therefore names
//! `patterns[*].paths[*]`. Array positions are implicit, so a numeric token
//! where the schema has an array is an error rather than "element 0".

use jsonptr::{ParseError, Pointer, PointerBuf};
use serde_json::Value;

use crate::parameter::{ParamType, ToolParameterConfig, ToolParameters};

/// One step of the walk from the arguments object to the values a rule
/// looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Go to this member of an object.
    Member(String),
    /// Go through every element of an array.
    Each,
}

/// Where a pointer lands in the schema.
#[derive(Debug, Clone)]
pub(crate) struct SchemaTarget {
    pub(crate) steps: Vec<Step>,
    pub(crate) param_type: ParamType,
}

/// Why a pointer does not resolve in the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SchemaError {
    /// A member the pointer names does not exist. A rule from the tool
    /// defaults (`conversation.tools.'*'`) is skipped for such a tool.
    NotFound(String),
    /// The pointer exists but cannot be used (ends at an object, uses an
    /// explicit array index, ...). Always an error.
    Invalid(String),
}

/// Parses `arg` into its decoded tokens.
pub(crate) fn parse(arg: &str) -> Result<Vec<String>, String> {
    match Pointer::parse(arg) {
        Ok(pointer) => Ok(pointer.tokens().map(|t| t.decoded().into_owned()).collect()),
        Err(ParseError::NoLeadingSlash) => Err(format!(
            "\"arg\" {} is not a JSON pointer: it must start with \"/\", such as \"/path\"",
            quote(arg)
        )),
        Err(ParseError::InvalidEncoding { .. }) => Err(format!(
            "\"arg\" {} is not a JSON pointer: \"~\" must be followed by \"0\" or \"1\" (\"~0\" is \
             \"~\", \"~1\" is \"/\")",
            quote(arg)
        )),
    }
}

/// Encodes decoded tokens as a JSON pointer (`["a/b", "c"]` is `/a~1b/c`).
pub fn encode<S: AsRef<str>>(tokens: &[S]) -> String {
    PointerBuf::from_tokens(tokens.iter().map(AsRef::as_ref)).to_string()
}

/// A JSON string literal for `s`, as messages quote user-written text.
pub fn quote(s: &str) -> String {
    Value::from(s).to_string()
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Root(&'a ToolParameters),
    Param(&'a ToolParameterConfig),
}

/// Walks the parameter schema along `tokens`.
pub(crate) fn resolve_schema(
    arg: &str,
    tokens: &[String],
    params: &ToolParameters,
) -> Result<SchemaTarget, SchemaError> {
    let mut node = Node::Root(params);
    let mut steps = Vec::new();
    // The schema position reached so far, without array positions.
    let mut walked: Vec<&str> = Vec::new();

    for (i, token) in tokens.iter().enumerate() {
        node = descend_arrays(node, &walked, arg, &mut steps, Some(token), tokens, i)?;
        let props = match node {
            Node::Root(props) => props,
            Node::Param(p) if p.kind == ParamType::Object => &p.properties,
            Node::Param(p) => {
                return Err(SchemaError::NotFound(format!(
                    "\"arg\" {}: {} is {}, which has no members",
                    quote(arg),
                    encode(&walked),
                    article(p.kind)
                )));
            }
        };
        let Some(param) = props.get(token) else {
            let message = if walked.is_empty() {
                format!(
                    "\"arg\" {}: the tool has no parameter {} ({})",
                    quote(arg),
                    quote(token),
                    members(&walked, props)
                )
            } else {
                format!(
                    "\"arg\" {}: {} has no member {} ({})",
                    quote(arg),
                    encode(&walked),
                    quote(token),
                    members(&walked, props)
                )
            };
            return Err(SchemaError::NotFound(message));
        };
        steps.push(Step::Member(token.clone()));
        walked.push(token);
        node = Node::Param(param);
    }
    node = descend_arrays(node, &walked, arg, &mut steps, None, tokens, tokens.len())?;

    match node {
        Node::Root(props) => Err(SchemaError::Invalid(format!(
            "\"arg\" {} points at all arguments at once; point at one parameter ({})",
            quote(arg),
            members(&walked, props)
        ))),
        Node::Param(p) if p.kind == ParamType::Object => Err(SchemaError::Invalid(format!(
            "\"arg\" {} ends at an object; point at one of its members ({})",
            quote(arg),
            members(&walked, &p.properties)
        ))),
        Node::Param(p) => Ok(SchemaTarget {
            steps,
            param_type: p.kind,
        }),
    }
}

/// Steps through arrays (implicitly, into every element) until `node` is
/// not an array. `token` is the next pointer token, if any: an index there
/// is an explicit array position, which the pointer syntax does not allow.
fn descend_arrays<'a>(
    mut node: Node<'a>,
    walked: &[&str],
    arg: &str,
    steps: &mut Vec<Step>,
    token: Option<&String>,
    tokens: &[String],
    position: usize,
) -> Result<Node<'a>, SchemaError> {
    while let Node::Param(p) = node {
        if p.kind != ParamType::Array {
            break;
        }
        let Some(items) = p.items.as_deref() else {
            return Err(SchemaError::Invalid(format!(
                "\"arg\" {}: {} is an array without \"items\", so its elements have no type",
                quote(arg),
                encode(walked)
            )));
        };
        if let Some(token) = token {
            let is_member = items.kind == ParamType::Object && items.properties.contains_key(token);
            if !is_member && is_array_position(token) {
                let mut fixed: Vec<&str> = tokens.iter().map(String::as_str).collect();
                fixed.remove(position);
                return Err(SchemaError::Invalid(format!(
                    "\"arg\" {}: array positions are implicit ({} is an array and the rule looks \
                     at every element), so write {}",
                    quote(arg),
                    encode(walked),
                    quote(&encode(&fixed))
                )));
            }
        }
        steps.push(Step::Each);
        node = Node::Param(items);
    }
    Ok(node)
}

fn is_array_position(token: &str) -> bool {
    token == "-" || (!token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()))
}

/// `it has /a, /b` style list of the members under `walked`.
fn members(walked: &[&str], props: &ToolParameters) -> String {
    if props.is_empty() {
        return "it has none".to_owned();
    }
    let list = props
        .keys()
        .map(|name| {
            let mut tokens = walked.to_vec();
            tokens.push(name);
            encode(&tokens)
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("it has {list}")
}

/// `a string`, `an integer`, ...
pub(crate) fn article(kind: ParamType) -> String {
    match kind {
        ParamType::Integer | ParamType::Array | ParamType::Object => format!("an {kind}"),
        ParamType::Any => "a value of several possible types".to_owned(),
        _ => format!("a {kind}"),
    }
}

/// One place the pointer reached in a call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found<'a> {
    /// A value at the pointer's end, at this concrete location.
    Value {
        /// The concrete pointer (`/patterns/1/paths/0`).
        at: String,
        /// The value.
        value: &'a Value,
    },
    /// The arguments do not have the schema's shape here: an object or an
    /// array was expected. Matches like a value of the wrong type (never an
    /// `unattended` rule, always any other rule).
    Malformed {
        /// The concrete pointer of the offending value.
        at: String,
        /// `"an object"` or `"an array"`.
        expected: &'static str,
        /// The value found instead.
        found: &'a Value,
    },
}

/// Every place `steps` reaches in `args`, in document order. An absent
/// member yields nothing.
pub(crate) fn walk<'a>(steps: &[Step], args: &'a Value) -> Vec<Found<'a>> {
    let mut out = Vec::new();
    let mut at = Vec::new();
    walk_into(steps, args, &mut at, &mut out);
    out
}

/// [`walk`] for steps that begin with `Member(key)`, given only that
/// member's value: what the walk of the whole arguments would find under
/// it, without building the arguments object.
pub(crate) fn walk_member<'a>(steps: &[Step], key: &str, value: &'a Value) -> Vec<Found<'a>> {
    let mut out = Vec::new();
    let rest = match steps.split_first() {
        Some((Step::Member(first), rest)) if first == key => rest,
        _ => return out,
    };
    let mut at = vec![key.to_owned()];
    walk_into(rest, value, &mut at, &mut out);
    out
}

fn walk_into<'a>(steps: &[Step], value: &'a Value, at: &mut Vec<String>, out: &mut Vec<Found<'a>>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(Found::Value {
            at: encode(at),
            value,
        });
        return;
    };
    match (step, value) {
        (Step::Member(name), Value::Object(map)) => {
            if let Some(member) = map.get(name) {
                at.push(name.clone());
                walk_into(rest, member, at, out);
                at.pop();
            }
        }
        (Step::Member(_), other) => out.push(Found::Malformed {
            at: encode(at),
            expected: "an object",
            found: other,
        }),
        (Step::Each, Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                at.push(i.to_string());
                walk_into(rest, item, at, out);
                at.pop();
            }
        }
        (Step::Each, other) => out.push(Found::Malformed {
            at: encode(at),
            expected: "an array",
            found: other,
        }),
    }
}

/// A stateful policy's `key` (`conversation.policies`): an RFC 6901 pointer
/// that must name one scalar parameter of `params`, not through an array
/// (a key is one value per call). Returns the pointer's decoded tokens and
/// the parameter's type.
///
/// # Errors
///
/// A message saying why the pointer does not name one scalar parameter.
pub fn key_target(key: &str, params: &ToolParameters) -> Result<(Vec<String>, ParamType), String> {
    let tokens = parse(key).map_err(|m| m.replacen("\"arg\"", "\"key\"", 1))?;
    let target = resolve_schema(key, &tokens, params).map_err(|error| match error {
        SchemaError::NotFound(m) | SchemaError::Invalid(m) => m.replacen("\"arg\"", "\"key\"", 1),
    })?;
    if target.steps.contains(&Step::Each) {
        return Err(format!(
            "\"key\" {} goes through an array; a key must be one value per call",
            quote(key)
        ));
    }
    Ok((tokens, target.param_type))
}

#[cfg(test)]
#[path = "pointer_tests.rs"]
mod tests;
