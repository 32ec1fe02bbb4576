//! Conversation events and streaming tool-call arguments for jp.
//!
//! What exists today is RFD 043: tool-call arguments are parsed while the
//! provider streams them ([`IncrementalArgParser`]), described as
//! [`StreamFragment`]s, gathered back into values ([`FragmentAggregator`]),
//! and wired to streamed response parts by the [`EventBuilder`], which
//! returns [`ToolCallArgumentProgress`] as chunks arrive and a complete
//! [`ToolCallRequest`] on flush.
//!
//! A conversation is a list of [`ConversationEvent`]s, stored by [`Store`]
//! under `.jp/conversations/` as a log that recording an event appends to.
//!
//! It depends on no jp crate but `jp_fs` (the store's files): not on
//! `jp_config`, nor on `jp_policy`, which follows the parser's progress to
//! decide a call while it streams.

mod arguments;
pub mod attachment;
pub mod conversation;
pub mod decision;
mod event;
mod event_builder;
pub mod recovery;
pub mod store;
pub mod view;

pub use arguments::{
    AggregateError, ArgParseError, ArgumentsSoFar, DuplicateKey, EmptyKind, Found,
    FragmentAggregator, FragmentPath, FragmentRef, IncrementalArgParser, JsonPointer, Leaf, Limit,
    ParserLimits, PathIter, PathSegment, ProgressRef, Scalar, StreamFragment,
    ToolCallArgumentProgress, TruncatedIn,
};
pub use conversation::{
    ApprovalScope, Attached, ConfigDelta, ConversationEvent, EventKind, MAX_RECORDED_TOKENS,
    PolicyDenial, RanWith, ResponseStatus, ResponseUsage, SessionApproval, ToolCallResponse,
    UsageTotals,
};
pub use decision::{CallDecision, DecidedBy, RuleSource};
pub use event::{ArgumentsError, EventPart, FlushedEvent, ToolCallPart, ToolCallRequest};
pub use event_builder::{CallView, EventBuilder, EventBuilderError};
pub use recovery::{ChangesNotKept, Compaction, FileChange, FileState, Rewind, RewindReason};
pub use store::{Conversation, ConversationLock, Store, StoreError};
