//! Streaming tool-call arguments (RFD 043): the fragment protocol, the
//! incremental parser that produces it, and the aggregator that turns it back
//! into values.

mod aggregator;
mod error;
mod fragment;
mod lexical;
mod limits;
mod parser;
mod pointer;
mod state;

pub use aggregator::{AggregateError, ArgumentsSoFar, DuplicateKey, FragmentAggregator};
pub use error::{ArgParseError, Found, Limit, TruncatedIn};
pub use fragment::{
    EmptyKind, FragmentPath, FragmentRef, Leaf, PathIter, PathSegment, ProgressRef, Scalar,
    StreamFragment, ToolCallArgumentProgress,
};
pub use parser::{IncrementalArgParser, ParserLimits};
pub(crate) use pointer::DisplayKey;
pub use pointer::JsonPointer;
