//! Ids for the tool calls a provider sends without one.

use std::collections::HashSet;

use crate::provider::{ChatRequest, Message};

/// Hands out `jp_call_{n}` for calls that came without an id, skipping
/// every id the conversation already holds and every id this response used
/// (the prefix keeps them apart from the ids servers make, which a server
/// may send later in the same response).
/// jp matches a call and its result by id and refuses a call whose id
/// repeats another's (it could take that call's verdict or result), so an
/// id jp makes up must be new to the whole conversation, not only to the
/// response: counting from `call_0` in each response made every id-less
/// call after the first response a refused duplicate.
#[derive(Debug, Clone, Default)]
pub struct CallIds {
    taken: HashSet<String>,
    next: usize,
}

impl CallIds {
    /// Ids new to the conversation `request` carries.
    #[must_use]
    pub fn of(request: &ChatRequest) -> Self {
        let taken = request
            .messages
            .iter()
            .filter_map(|message| match message {
                Message::Assistant { tool_calls, .. } => Some(tool_calls),
                _ => None,
            })
            .flatten()
            .map(|call| call.id.clone())
            .collect();
        Self { taken, next: 0 }
    }

    /// Notes an id the provider sent, so no made-up one repeats it.
    pub fn note(&mut self, id: &str) {
        self.taken.insert(id.to_owned());
    }

    /// The next id not taken, itself taken from now on.
    pub fn fresh(&mut self) -> String {
        loop {
            let id = format!("jp_call_{}", self.next);
            self.next += 1;
            if self.taken.insert(id.clone()) {
                return id;
            }
        }
    }
}

#[cfg(test)]
#[path = "call_ids_tests.rs"]
mod tests;
