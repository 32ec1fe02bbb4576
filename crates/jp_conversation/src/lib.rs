//! Conversation events and streaming tool-call arguments for jp.
//!
//! The part that exists today is RFD 043: tool-call arguments are parsed
//! while the provider streams them ([`IncrementalArgParser`]), described as
//! [`StreamFragment`]s, gathered back into values ([`FragmentAggregator`]),
//! and wired to provider events by the [`EventBuilder`].

mod arguments;

pub use arguments::{
    AggregateError, ArgParseError, DuplicateKey, EmptyKind, Found, FragmentAggregator,
    IncrementalArgParser, JsonPointer, Limit, ParserLimits, Scalar, StreamFragment,
    ToolCallArgumentProgress, TruncatedIn,
};
