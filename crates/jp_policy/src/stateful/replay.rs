//! The state of a conversation's policies is never stored: [`replay`]
//! rebuilds it from the conversation's calls and their successful
//! responses, with the keys each call made when it ran ([`Recording`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use jp_conversation::{ConversationEvent, EventKind, ResponseStatus};
use serde_json::{Map, Value};

use super::policy::{Call, Key, PolicyContext, PolicyEnv};
use super::registry::PolicyRegistry;

/// Replays a conversation into `registry`: every call whose response says
/// it ran and succeeded is passed to [`PolicyRegistry::notify_result`],
/// with the arguments it ran with (the user's edit, when there was one)
/// and the keys recorded when it ran ([`Recording`]). A call recorded
/// without keys (by a jp before they were kept) has them resolved now
/// through `ctx.env`.
pub fn replay(
    registry: &mut PolicyRegistry,
    events: &[ConversationEvent],
    ctx: &PolicyContext<'_>,
) {
    let mut calls: HashMap<&str, (&str, &Map<String, Value>)> = HashMap::new();
    for event in events {
        match &event.kind {
            EventKind::ToolCallRequest(call) => {
                if let Ok(arguments) = call.arguments() {
                    calls.insert(call.id.as_str(), (call.name.as_str(), arguments));
                }
            }
            EventKind::ToolCallResponse(response) if response.status == ResponseStatus::Success => {
                let Some((tool, arguments)) = calls.get(response.id.as_str()) else {
                    continue;
                };
                let empty = BTreeMap::new();
                let ran = response.ran.as_ref();
                let arguments = ran.and_then(|r| r.arguments.as_ref()).unwrap_or(arguments);
                let env = Recorded {
                    keys: ran.map_or(&empty, |r| &r.keys),
                    live: ctx.env,
                };
                let replayed = PolicyContext { env: &env, ..*ctx };
                registry.notify_result(&Call { tool, arguments }, &response.content, &replayed);
            }
            _ => {}
        }
    }
}

/// Keys as they were when a call ran (by pointer), else from `live`.
struct Recorded<'a> {
    keys: &'a BTreeMap<String, String>,
    live: &'a dyn PolicyEnv,
}

impl PolicyEnv for Recorded<'_> {
    fn key(&self, tool: &str, pointer: &str, value: &Value) -> Result<Key, String> {
        match self.keys.get(pointer) {
            // Replay only learns; whether the key was a path matters only
            // to a check.
            Some(text) => Ok(Key {
                text: text.clone(),
                is_path: false,
            }),
            None => self.live.key(tool, pointer, value),
        }
    }

    fn file_exists(&self, key: &Key) -> bool {
        self.live.file_exists(key)
    }
}

/// A [`PolicyEnv`] that notes every key `inner` makes, by pointer, so what
/// a call taught the policies can be stored with its response and
/// replayed exactly.
pub struct Recording<'a> {
    inner: &'a dyn PolicyEnv,
    keys: RefCell<BTreeMap<String, String>>,
}

impl<'a> Recording<'a> {
    /// Records what `inner` answers.
    #[must_use]
    pub fn new(inner: &'a dyn PolicyEnv) -> Self {
        Self {
            inner,
            keys: RefCell::new(BTreeMap::new()),
        }
    }

    /// The keys made, by pointer.
    #[must_use]
    pub fn into_keys(self) -> BTreeMap<String, String> {
        self.keys.into_inner()
    }
}

impl PolicyEnv for Recording<'_> {
    fn key(&self, tool: &str, pointer: &str, value: &Value) -> Result<Key, String> {
        let key = self.inner.key(tool, pointer, value)?;
        self.keys
            .borrow_mut()
            .insert(pointer.to_owned(), key.text.clone());
        Ok(key)
    }

    fn file_exists(&self, key: &Key) -> bool {
        self.inner.file_exists(key)
    }
}
