//! Wording shared by the tools' outcomes.

/// "1 line", "3 lines".
pub(crate) fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}
