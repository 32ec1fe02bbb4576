//! Reading a request's arguments, with the messages the model gets when
//! they are not what a tool takes.

use jp_tool::Request;
use serde_json::Value;

/// The string argument `name`.
pub(crate) fn string_argument<'a>(request: &'a Request, name: &str) -> Result<&'a str, String> {
    match request.argument(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("argument `{name}` must be a string")),
        None => Err(format!("missing argument `{name}`")),
    }
}

/// The optional argument `name`, a list of strings; absent or `null` is
/// empty.
pub(crate) fn string_list_argument<'a>(
    request: &'a Request,
    name: &str,
) -> Result<Vec<&'a str>, String> {
    match request.argument(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| format!("argument `{name}` must be an array of strings"))
            })
            .collect(),
        Some(_) => Err(format!("argument `{name}` must be an array of strings")),
    }
}
