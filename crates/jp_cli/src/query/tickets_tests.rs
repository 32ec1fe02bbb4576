#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;
use jp_term::prompt::{ScriptedPrompter, YES_NO};

fn prompts(keys: &[Option<char>]) -> (Prompts, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let backend = ScriptedPrompter {
        keys: keys.iter().copied().collect(),
        ..ScriptedPrompter::default()
    };
    let asked = backend.asked.clone();
    (
        Prompts::new(Box::new(backend), CancellationToken::new()),
        asked,
    )
}

async fn ask(ticket: Ticket<'_>, call: usize, delay: u64) -> char {
    tokio::time::sleep(Duration::from_millis(delay)).await;
    let turn = ticket.wait().await.unwrap();
    turn.choose(&format!("call {call}?"), &YES_NO)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_later_call_decided_first_still_asks_second() {
    let (prompts, asked) = prompts(&[Some('y'), Some('n')]);
    let mut tickets = CallTickets::new(&prompts);
    tickets.reserve(0);
    tickets.reserve(1);
    // Call 1 is decided (and takes its place) first.
    let second = tickets.take(1);
    let first = tickets.take(0);
    let (first, second) = tokio::join!(ask(first, 0, 30), ask(second, 1, 0));
    assert_eq!((first, second), ('y', 'n'));
    assert_eq!(*asked.lock().unwrap(), ["call 0? [y,n]", "call 1? [y,n]"]);
}

#[tokio::test]
async fn a_call_released_does_not_hold_up_the_next() {
    let (prompts, asked) = prompts(&[Some('y'), Some('y')]);
    let mut tickets = CallTickets::new(&prompts);
    tickets.reserve(0);
    tickets.reserve(1);
    tickets.reserve(2);
    // Call 0 runs unasked; call 2 is settled when the response ends.
    tickets.release(0);
    let second = tickets.take(1);
    let answer = tokio::time::timeout(Duration::from_secs(5), ask(second, 1, 0)).await;
    assert_eq!(answer, Ok('y'));
    tickets.release_all();
    // A prompt after the response (a tool's question) is not held up
    // by call 2.
    let later = tokio::time::timeout(Duration::from_secs(5), ask(prompts.ticket(), 3, 0)).await;
    assert_eq!(later, Ok('y'));
    assert_eq!(*asked.lock().unwrap(), ["call 1? [y,n]", "call 3? [y,n]"]);
}
