//! Wording shared by the tools' outcomes.

/// "1 line", "3 lines".
pub(crate) fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

/// `n` with commas between thousands: `48,894`.
pub(crate) use jp_policy::listing::grouped as thousands;

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
