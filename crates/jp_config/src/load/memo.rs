//! What a pure function of a config file's text gave, kept for the next
//! load of the same text.
//!
//! A query loads the config three times, and `jp chat` loads it again for
//! every message; parsing the same files each time was most of what
//! remained of a message's delay before its request left (issue 39). The
//! key is the whole text, so an edited file is parsed anew; a few entries
//! are kept, none for a text longer than the bound.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

/// The newest results of one function, by text.
pub(super) struct Memo<V> {
    entries: Mutex<VecDeque<(String, V)>>,
    capacity: usize,
    max_text: usize,
}

impl<V: Clone> Memo<V> {
    /// At most `capacity` results, for texts of at most `max_text` bytes.
    pub(super) const fn new(capacity: usize, max_text: usize) -> Self {
        Self {
            entries: Mutex::new(VecDeque::new()),
            capacity,
            max_text,
        }
    }

    /// The result kept for `text`, or `compute`'s, kept.
    pub(super) fn get_or(&self, text: &str, compute: impl FnOnce() -> V) -> V {
        let entries = || self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, value)) = entries().iter().find(|(kept, _)| kept == text) {
            return value.clone();
        }
        let value = compute();
        if text.len() <= self.max_text && self.capacity > 0 {
            let mut entries = entries();
            if entries.len() >= self.capacity {
                entries.pop_back();
            }
            entries.push_front((text.to_owned(), value.clone()));
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn a_text_is_computed_once_while_it_is_kept() {
        let memo: Memo<usize> = Memo::new(2, 8);
        let calls = std::cell::Cell::new(0);
        let get = |text: &str| {
            memo.get_or(text, || {
                calls.set(calls.get() + 1);
                text.len()
            })
        };
        assert_eq!(get("a"), 1);
        assert_eq!(get("a"), 1);
        assert_eq!(get("bb"), 2);
        assert_eq!(get("ccc"), 3); // "a" is dropped: two are kept
        assert_eq!(get("a"), 1);
        assert_eq!(get("a very long text"), 16); // too long to keep
        assert_eq!(get("a very long text"), 16);
        assert_eq!(calls.get(), 6);
    }
}
