#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::*;

#[test]
fn lists_are_cut_after_the_bound_and_the_rest_counted() {
    let list = |n: usize| cut_list((0..n).map(|i| format!("v{i}")));
    for (n, expected) in [
        (0, String::new()),
        (1, "v0".to_owned()),
        (10, "v0, v1, v2, v3, v4, v5, v6, v7, v8, v9".to_owned()),
        (
            11,
            "v0, v1, v2, v3, v4, v5, v6, v7, v8, v9 and 1 more".to_owned(),
        ),
        (
            200_000,
            "v0, v1, v2, v3, v4, v5, v6, v7, v8, v9 and 199,990 more".to_owned(),
        ),
    ] {
        assert_eq!(list(n), expected, "{n} values");
    }
}

#[test]
fn counts_are_grouped_by_thousands() {
    for (n, expected) in [
        (0, "0"),
        (999, "999"),
        (1_000, "1,000"),
        (199_990, "199,990"),
        (1_234_567, "1,234,567"),
    ] {
        assert_eq!(grouped(n), expected);
    }
}

proptest! {
    /// Whatever the number of values, the list names at most the bound and
    /// the count makes up the rest.
    #[test]
    fn a_cut_list_names_at_most_the_bound_and_counts_the_rest(n in 0usize..5_000) {
        let text = cut_list((0..n).map(|i| format!("v{i}")));
        let (named, more) = match text.split_once(" and ") {
            Some((named, more)) => {
                let more = more.strip_suffix(" more").unwrap().replace(',', "");
                (named.to_owned(), more.parse::<usize>().unwrap())
            }
            None => (text.clone(), 0),
        };
        let named = if named.is_empty() { 0 } else { named.split(", ").count() };
        prop_assert!(named <= MAX_LISTED_VALUES);
        prop_assert_eq!(named + more, n);
    }
}
