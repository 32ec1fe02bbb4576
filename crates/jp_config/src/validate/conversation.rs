//! `conversation`: the ranges its types alone do not check, of how old
//! tool results and turns are sent (`elide_tool_results`, `compaction`;
//! the compaction's `model` is checked with the other model ids).

use crate::conversation::ConversationConfig;
use crate::path::ConfigPath;

/// What is wrong in `conversation`'s ranges: the key and why.
pub(super) fn check(conversation: &ConversationConfig) -> Vec<(ConfigPath, String)> {
    let key = |table: &str, name: &str| ConfigPath::from_segments(["conversation", table, name]);
    let mut problems = Vec::new();
    if conversation.elide_tool_results.keep_turns == 0 {
        problems.push((
            key("elide_tool_results", "keep_turns"),
            "must be at least 1 (the current turn's results are always sent whole)".to_owned(),
        ));
    }
    let compaction = &conversation.compaction;
    if !(compaction.at > 0.0 && compaction.at <= 1.0) {
        problems.push((
            key("compaction", "at"),
            format!(
                "must be more than 0 and at most 1 (a share of the model's context window), found {}",
                compaction.at
            ),
        ));
    }
    if compaction.keep_turns == 0 {
        problems.push((
            key("compaction", "keep_turns"),
            "must be at least 1 (the current turn is always sent whole)".to_owned(),
        ));
    }
    if compaction.max_tokens == 0 {
        problems.push((
            key("compaction", "max_tokens"),
            "must be at least 1".to_owned(),
        ));
    }
    problems
}
