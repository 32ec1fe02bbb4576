#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::*;
use crate::prompt::ScriptedPrompter;

fn prompts(keys: &[Option<char>]) -> (Prompts, CancellationToken) {
    let cancel = CancellationToken::new();
    let backend = ScriptedPrompter {
        keys: keys.iter().copied().collect(),
        ..ScriptedPrompter::default()
    };
    (Prompts::new(Box::new(backend), cancel.clone()), cancel)
}

async fn ask(ticket: Ticket<'_>, n: usize, delay: u64) -> String {
    // Later tickets get here first: the queue, not the polling order,
    // decides who asks.
    tokio::time::sleep(Duration::from_millis(delay)).await;
    let turn = ticket.wait().await.unwrap();
    let key = turn.choose(&format!("call {n}?"), &YES_NO).await.unwrap();
    format!("{n}{key}")
}

#[tokio::test]
async fn prompts_show_in_ticket_order() {
    // The keys in the order the prompts should show: whoever asks first
    // gets `y`.
    let (prompts, _) = prompts(&[Some('y'), Some('n'), Some('n')]);
    let (a, b, c) = (prompts.ticket(), prompts.ticket(), prompts.ticket());
    let answers = tokio::join!(ask(a, 1, 30), ask(b, 2, 15), ask(c, 3, 0),);
    assert_eq!(answers, ("1y".into(), "2n".into(), "3n".into()));
}

#[tokio::test]
async fn a_ticket_given_up_lets_the_next_one_ask() {
    let (prompts, _) = prompts(&[Some('n')]);
    let first = prompts.ticket();
    let second = prompts.ticket();
    drop(first);
    let turn = second.wait().await.unwrap();
    assert!(!turn.confirm("second?").await.unwrap());
}

#[tokio::test]
async fn an_interrupt_ends_the_wait() {
    let (prompts, cancel) = prompts(&[]);
    let _first = prompts.ticket();
    let second = prompts.ticket();
    cancel.cancel();
    assert_eq!(second.wait().await.err(), Some(PromptError::Interrupted));
}
