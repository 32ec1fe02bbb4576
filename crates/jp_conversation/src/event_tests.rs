#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{ArgumentsError, ToolCallRequest};

fn call() -> ToolCallRequest {
    let mut arguments = Map::new();
    arguments.insert("path".into(), Value::from("a.txt"));
    ToolCallRequest::new("c1", "save", arguments)
}

#[test]
fn derived_calls_share_the_arguments_and_keep_their_meaning() {
    let call = call();
    let shared = |other: &ToolCallRequest| {
        Arc::ptr_eq(
            &other.shared_received_arguments(),
            &call.shared_received_arguments(),
        )
    };

    let renamed = call.refused_as("c1-2", ArgumentsError::DuplicateId("c1".into()));
    assert!(shared(&renamed));
    assert_eq!(
        (renamed.id.as_str(), renamed.name.as_str()),
        ("c1-2", "save")
    );
    assert_eq!(
        renamed.arguments(),
        Err(&ArgumentsError::DuplicateId("c1".into()))
    );
    assert_eq!(renamed.received_arguments(), call.received_arguments());

    let shown = renamed.as_received();
    assert!(shared(&shown));
    assert_eq!(shown.arguments(), Ok(call.received_arguments()));
    assert_eq!(shown.id, "c1-2");
}
