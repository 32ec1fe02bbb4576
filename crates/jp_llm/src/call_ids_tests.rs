use std::sync::Arc;

use super::*;
use crate::provider::ToolCall;

#[test]
fn made_up_ids_are_new_to_the_conversation_and_the_response() {
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "t".into(),
        arguments: Arc::new(serde_json::json!({})),
    };
    let request = ChatRequest {
        model: "m".into(),
        system: None,
        messages: vec![
            Message::User("go".into()),
            Message::Assistant {
                reasoning: None,
                text: String::new(),
                tool_calls: vec![call("jp_call_0"), call("jp_call_2")],
            },
        ],
        tools: vec![],
        max_tokens: 16,
        temperature: None,
        top_p: None,
    };
    let mut ids = CallIds::of(&request);
    ids.note("jp_call_3");
    assert_eq!([ids.fresh(), ids.fresh()], ["jp_call_1", "jp_call_4"]);
    assert_eq!(CallIds::default().fresh(), "jp_call_0");
}
