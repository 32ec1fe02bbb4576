//! The states of [`IncrementalArgParser`](crate::IncrementalArgParser)'s
//! byte-level state machine.

use super::lexical::{Literal, NumberState};

/// Where the parser is: what the next byte may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// A value must come: at the root, after `:`, or after `,` in an array.
    Value,
    /// Just after `[`: a value or `]`.
    ValueOrEnd,
    /// Just after `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    Key,
    /// Inside an object key.
    InKey,
    /// After a key: `:`.
    Colon,
    /// Inside a string value.
    InString,
    /// Inside a number.
    Number(NumberState),
    /// Inside `true`, `false` or `null`; `matched` bytes seen so far.
    Literal { literal: Literal, matched: u8 },
    /// After a value inside a container: `,` or the closing bracket.
    AfterValue,
    /// The root value is complete; only whitespace may follow.
    End,
}

/// What a step of the state machine did with the current byte.
pub(super) enum Step {
    /// The byte was used; move to the next one.
    Consumed,
    /// A value ended just before this byte; look at it again in the new state.
    Reprocess,
}
