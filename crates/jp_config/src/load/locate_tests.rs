#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn seg(path: &str) -> Vec<String> {
    path.split('.').map(str::to_owned).collect()
}

#[test]
fn finds_keys_tables_and_array_elements() {
    let text = "\
[assistant.model]
id = \"x\"

[conversation.tools.fs.policy]
run = [
    { mode = \"ask\" },
    { arg = \"/path\", prefx = \"src/\", mode = \"ask\" },
]
";
    assert_eq!(locate_key(text, &seg("assistant.model.id")), Some(2));
    assert_eq!(
        locate_key(text, &seg("conversation.tools.fs.policy.run")),
        Some(5)
    );
    assert_eq!(
        locate_key(text, &seg("conversation.tools.fs.policy.run.1")),
        Some(7)
    );
    assert_eq!(
        locate_key(text, &seg("conversation.tools.fs.policy.run.1.prefx")),
        Some(7)
    );
    // The deepest existing part: `assistant.model` exists, `temperature` does not.
    assert_eq!(
        locate_key(text, &seg("assistant.model.temperature")),
        Some(1)
    );
    assert_eq!(locate_key(text, &seg("style")), None);
}
