//! Lists of allowed values in messages, cut short: a schema (a tool's, an
//! MCP server's, a policy's) can list any number of values, and a message
//! that names them all would flood the terminal, the conversation and the
//! model's context.

/// The most values a message lists; the rest are counted ("and 199,990
/// more").
pub const MAX_LISTED_VALUES: usize = 10;

/// `values` joined with `, `, at most [`MAX_LISTED_VALUES`] of them, then
/// ` and N more` for the rest. Only the values listed are made.
#[must_use]
pub fn cut_list<I>(values: I) -> String
where
    I: IntoIterator<Item = String>,
    I::IntoIter: ExactSizeIterator,
{
    let values = values.into_iter();
    let total = values.len();
    let shown: Vec<String> = values.take(MAX_LISTED_VALUES).collect();
    let mut text = shown.join(", ");
    if total > shown.len() {
        let more = u64::try_from(total - shown.len()).unwrap_or(u64::MAX);
        text.push_str(&format!(" and {} more", grouped(more)));
    }
    text
}

/// `199,990`: a count with its thousands grouped, as jp writes every
/// count it shows (token totals, bytes left out, values not listed).
#[must_use]
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
