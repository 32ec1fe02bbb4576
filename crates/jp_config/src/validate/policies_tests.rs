#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Edges `dependent -> prerequisite`, each from the entry given.
fn edges(list: &[(&str, &str, usize)]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut edges: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (from, to, entry) in list {
        edges
            .entry((*from).to_owned())
            .or_default()
            .insert((*to).to_owned(), *entry);
    }
    edges
}

fn found(list: &[(&str, &str, usize)]) -> Vec<String> {
    cycles(&edges(list))
        .iter()
        .map(|cycle| cycle.join(" > "))
        .collect()
}

#[test]
fn a_cycle_through_three_entries_is_found_once() {
    assert_eq!(
        found(&[("a", "b", 0), ("b", "c", 1), ("c", "a", 2)]),
        ["a > b > c > a"]
    );
    // Entered from the middle, the cycle is the same.
    assert_eq!(
        found(&[("x", "b", 3), ("a", "b", 0), ("b", "c", 1), ("c", "a", 2)]),
        ["a > b > c > a"]
    );
}

#[test]
fn shared_prerequisites_are_no_cycle() {
    // A diamond: d needs b and c, both need a.
    assert_eq!(
        found(&[("d", "b", 0), ("d", "c", 0), ("b", "a", 1), ("c", "a", 2)]),
        Vec::<String>::new()
    );
}

#[test]
fn separate_cycles_are_each_found() {
    assert_eq!(
        found(&[
            ("a", "b", 0),
            ("b", "a", 1),
            ("c", "d", 2),
            ("d", "e", 3),
            ("e", "c", 4)
        ]),
        ["a > b > a", "c > d > e > c"]
    );
}

#[test]
fn a_tool_reached_again_after_its_cycle_closed_adds_nothing() {
    // a -> b -> a is the cycle; c also needs a, after a is done.
    assert_eq!(
        found(&[("a", "b", 0), ("b", "a", 1), ("c", "a", 2)]),
        ["a > b > a"]
    );
}
