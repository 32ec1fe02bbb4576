#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn fragments_and_arguments_show_control_characters_escaped() {
    let mut out = Vec::new();
    let args = r#"{"p\u001b[2J":"a\u001b]0;x\u0007\u009b\u202e"}"#;
    let tool = "t\u{1b}[31m\u{9b}";
    let code = stream_args_to(&mut out, args, 100, tool).unwrap();
    assert_eq!(code, ExitCode::SUCCESS);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "t\\u{1b}[31m\\u{9b} /p\\u{001b}[2J += \"a\\u001b]0;x\\u0007\\u{9b}\\u{202e}\"\n\
             t\\u{1b}[31m\\u{9b} /p\\u{001b}[2J: done\n\
             t\\u{1b}[31m\\u{9b} (root): done\n\
             t\\u{1b}[31m\\u{9b} arguments: {\"p\\u001b[2J\":\"a\\u001b]0;x\\u0007\\u009b\\u202e\"}\n"
    );
}
