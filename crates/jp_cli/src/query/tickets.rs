//! [`CallTickets`]: the prompts of one response's calls, in call order
//! (RFD D26: "several calls in one response: prompts in call order, one at
//! a time").
//!
//! A call may be decided while it streams, and calls can stream
//! interleaved (OpenAI sends pieces of several calls in turn), so the
//! second call can be decided, and want to ask, before the first. A place
//! in the prompt queue taken when a call is *decided* would then put the
//! second call's prompt first. So each call's place is reserved when it
//! *starts*, which is call order, and given up as soon as the call is
//! known not to ask: a call that will not prompt never holds up the
//! prompts of the calls after it.

use std::collections::HashMap;

use jp_term::prompt::{Prompts, Ticket};

/// The places in the prompt queue of the calls of one response, by call
/// number. Dropping it gives every place not taken up.
pub struct CallTickets<'p> {
    prompts: &'p Prompts,
    reserved: HashMap<usize, Ticket<'p>>,
}

impl<'p> CallTickets<'p> {
    /// No places reserved yet.
    #[must_use]
    pub fn new(prompts: &'p Prompts) -> Self {
        Self {
            prompts,
            reserved: HashMap::new(),
        }
    }

    /// Call number `call` started: its place is taken now, behind the
    /// calls that started before it. A second reservation for the same
    /// call keeps the first place.
    pub fn reserve(&mut self, call: usize) {
        self.reserved
            .entry(call)
            .or_insert_with(|| self.prompts.ticket());
    }

    /// The place for a prompt about call number `call`: the one reserved
    /// when it started; for a call asked about a second time (its early
    /// answer did not settle it) or never reserved, a new place at the end
    /// of the line.
    #[must_use]
    pub fn take(&mut self, call: usize) -> Ticket<'p> {
        self.reserved
            .remove(&call)
            .unwrap_or_else(|| self.prompts.ticket())
    }

    /// Call number `call` is settled without a prompt (or will only ever
    /// get a new place): the calls after it need not wait for it.
    pub fn release(&mut self, call: usize) {
        self.reserved.remove(&call);
    }

    /// The response is over: no call of it will ask in its place now.
    pub fn release_all(&mut self) {
        self.reserved.clear();
    }
}

#[cfg(test)]
#[path = "tickets_tests.rs"]
mod tests;
