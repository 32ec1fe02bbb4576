#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[test]
fn request_wire_shape() {
    let request: Request = serde_json::from_value(json!({
        "tool": {"name": "fs_read_file", "arguments": {"path": "a.rs"}},
        "context": {"root": "/w", "action": "run"}
    }))
    .unwrap();
    assert_eq!(request.tool.name, "fs_read_file");
    assert!(request.tool.answers.is_empty());
    assert_eq!(request.context.action, Action::Run);
    assert_eq!(request.string_argument("path"), Ok("a.rs"));
    assert_eq!(
        request.string_argument("content"),
        Err(Outcome::error("missing argument `content`"))
    );
}

#[test]
fn a_question_that_cannot_be_answered_is_not_an_outcome() {
    let outcome = |question: serde_json::Value| {
        parse_outcome(&json!({"type": "needs_input", "question": question}).to_string())
    };
    assert_eq!(
        outcome(json!({"id": "q", "text": "Pick", "answer": {"type": "select", "options": []}})),
        Err("question `q` is a `select` without options: it could not be answered".into())
    );
    assert_eq!(
        outcome(
            json!({"id": "q", "text": "Pick", "answer": {"type": "select", "options": ["a", "b"]}, "default": "zzz"})
        ),
        Err("question `q` has the default \"zzz\", which is not an answer it accepts".into())
    );
    assert_eq!(
        outcome(json!({"id": "q", "text": "Sure?", "default": "yes"})),
        Err("question `q` has the default \"yes\", which is not an answer it accepts".into())
    );
    assert!(outcome(json!({"id": "q", "text": "Pick", "answer": {"type": "select", "options": ["a", "b"]}, "default": "b"})).is_ok());
    assert!(
        outcome(json!({"id": "q", "text": "Name?", "answer": {"type": "text"}, "default": "x"}))
            .is_ok()
    );
    assert!(outcome(json!({"id": "q", "text": "Sure?", "default": false})).is_ok());
}

#[test]
fn outcome_wire_shape() {
    assert_eq!(
        serde_json::to_value(Outcome::success("ok")).unwrap(),
        json!({"type": "success", "content": "ok"})
    );
    let error: Outcome = serde_json::from_value(json!({"type": "error", "message": "no"})).unwrap();
    assert_eq!(error, Outcome::error("no"));
    let question: Outcome = serde_json::from_value(json!({
        "type": "needs_input",
        "question": {"id": "overwrite", "text": "Overwrite a.rs?"}
    }))
    .unwrap();
    assert_eq!(
        question,
        Outcome::NeedsInput {
            question: Question {
                id: "overwrite".into(),
                text: "Overwrite a.rs?".into(),
                answer: AnswerKind::Boolean,
                default: None,
            }
        }
    );
}

#[test]
fn a_success_carries_config_changes_and_nothing_else_may() {
    let outcome = parse_outcome(
        r#"{"type":"success","content":"switched","config":{"assistant":{"model":{"id":"opus"}}},"unset":["assistant.model.parameters.temperature"]}"#,
    )
    .unwrap();
    assert_eq!(
        outcome,
        Outcome::success_with_config(
            "switched",
            Some(json!({"assistant": {"model": {"id": "opus"}}})),
            vec!["assistant.model.parameters.temperature".into()],
        )
    );
    // Without them, the wire shape is unchanged.
    assert_eq!(
        parse_outcome(r#"{"type":"success","content":"ok"}"#).unwrap(),
        Outcome::success("ok")
    );
    assert_eq!(
        parse_outcome(r#"{"type":"error","message":"no","config":{}}"#).unwrap_err(),
        "`config` is allowed only on a `success` outcome, not on `error`"
    );
    assert_eq!(
        parse_outcome(r#"{"type":"needs_input","question":{"id":"q","text":"?"},"unset":["a"]}"#)
            .unwrap_err(),
        "`unset` is allowed only on a `success` outcome, not on `needs_input`"
    );
    assert_eq!(
        parse_outcome("[1]").unwrap_err(),
        "invalid type: integer `1`, expected variant identifier at line 1 column 2"
    );
}

#[test]
fn a_context_carries_config_only_when_granted() {
    let plain = serde_json::to_value(Context::run("/w")).unwrap();
    assert_eq!(plain, json!({"root": "/w", "action": "run"}));
    let mut context = Context::run("/w");
    context.config = Some(json!({"assistant": {"model": {"id": "anthropic/x"}}}));
    context.delta_rejection = Some(DeltaRejection {
        reason: RejectionReason::UnauthorizedPaths,
        fields: vec!["assistant.model.id".into()],
        detail: "no write grant".into(),
    });
    assert_eq!(
        serde_json::to_value(&context).unwrap(),
        json!({
            "root": "/w",
            "action": "run",
            "config": {"assistant": {"model": {"id": "anthropic/x"}}},
            "delta_rejection": {
                "reason": "unauthorized_paths",
                "fields": ["assistant.model.id"],
                "detail": "no write grant"
            }
        })
    );
}

#[test]
fn unreadable_request_says_why() {
    let error = read_request("{}".as_bytes()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the request on stdin is not valid: missing field `tool` at line 1 column 2"
    );
}
