#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[derive(Debug, Deserialize)]
struct Holder {
    run: PolicySpec,
}

#[test]
fn mode_string_and_rules_parse() {
    let h: Holder = toml::from_str("run = \"unattended\"").unwrap();
    assert_eq!(h.run, PolicySpec::Mode(Mode::Unattended));
    let h: Holder =
        toml::from_str("run = [{ arg = \"/path\", prefix = \"src/\", mode = \"ask\" }]").unwrap();
    let PolicySpec::Rules(rules) = h.run else {
        panic!("expected rules")
    };
    assert_eq!(
        rules[0].entries().keys().collect::<Vec<_>>(),
        ["arg", "prefix", "mode"]
    );
}

#[test]
fn unknown_mode_is_named() {
    let err = toml::from_str::<Holder>("run = \"yes\"").unwrap_err();
    assert_eq!(
        err.message(),
        "unknown mode `yes`, expected `unattended`, `ask`, `edit` or `skip`"
    );
}

#[test]
fn strictness_order() {
    assert!(Mode::Unattended < Mode::Ask);
    assert!(Mode::Ask < Mode::Edit);
    assert!(Mode::Edit < Mode::Skip);
    assert_eq!(Mode::ALL.into_iter().max(), Some(Mode::Skip));
}
