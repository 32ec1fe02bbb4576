//! Fitting the next request into the model's context window (issue 38):
//! older turns summarised first when it nears the window
//! (`conversation.compaction.auto`, at most once a query, so never in a
//! loop), a request still too large refused with the ways out that fit,
//! and a turn whose first request was refused taken back, so the next
//! query does not send it again.

use jp_conversation::view::turn_starts;
use jp_conversation::{Compaction, EventKind, Rewind, RewindReason, StoreError};
use jp_llm::ChatRequest;
use jp_llm::request::{estimate_tokens, messages_of};
use jp_term::printer::Style;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::window::{Ways, refuse_before_sending};
use crate::compact::{self, Candidate, Model, part, sent_turns};
use crate::usage::grouped;

/// The request to send next, the older turns compacted first when it
/// nears the window; `Err` says why it is not sent: larger than the
/// window, and which ways out fit.
pub(super) async fn fitted_request(
    session: &mut Session,
    cancel: &CancellationToken,
) -> Result<Result<ChatRequest, String>, crate::error::Error> {
    let mut request = session.request();
    let (model, window) = session.window();
    let Some(window) = window else {
        return Ok(Ok(request));
    };
    let estimate = estimate_tokens(&request);
    let settings = &session.config.conversation.compaction;
    #[allow(clippy::cast_precision_loss)]
    let near = estimate as f64 > settings.at * window as f64;
    if settings.auto && near && !session.compacted {
        let keep = settings.keep_turns as usize;
        let ours = session.ledger.ours(&session.conversation);
        let turns = sent_turns(&session.conversation.events, Some(&ours));
        if let Some(candidate) = compact::candidate(&session.conversation.events, &turns, keep) {
            // Once a query, whatever comes of it: never in a loop.
            session.compacted = true;
            session.printer.chrome_line(
                    Style::Dim,
                    &format!(
                        "the conversation is about {} tokens, over {}% of the {}-token window of {model}: compacting {}",
                        grouped(estimate),
                        (settings.at * 100.0).round(),
                        grouped(window),
                        crate::rewind::turn_range(1..=candidate.turns)
                    ),
                );
            if compact(session, candidate, &request, cancel).await? {
                request = session.request();
            }
        }
    }
    let estimate = estimate_tokens(&request);
    if estimate <= window {
        return Ok(Ok(request));
    }
    let ways = ways_out(session, request, window);
    Ok(Err(refuse_before_sending(&model, estimate, window, &ways)))
}

/// Summarises the turns before `candidate` (the model's request being
/// `request`) and records the summary; whether it did. Why it did not
/// is said.
async fn compact(
    session: &mut Session,
    candidate: Candidate,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<bool, crate::error::Error> {
    let config = std::sync::Arc::clone(&session.config);
    let settings = &config.conversation.compaction;
    let other = match compact::chosen(&config, None) {
        None => None,
        Some(by) => {
            let env = crate::ctx::process_env().into_iter().collect();
            let root = session.loaded.workspace_root.clone().unwrap_or_default();
            match compact::summariser(&config, by, &env, &root) {
                Ok(summariser) => Some(summariser),
                Err(why) => return Ok(not_compacted(session, &why)),
            }
        }
    };
    let (provider, by) = match &other {
        Some(other) => (other.provider.as_ref(), other.model.clone()),
        None => (
            session.provider.as_ref(),
            Model {
                provider: session.provider_name.clone(),
                name: session.model.clone(),
            },
        ),
    };
    // The model's own request, so its prompt cache serves the prefix.
    let base = ChatRequest {
        model: by.name.clone(),
        messages: Vec::new(),
        ..request.clone()
    };
    let ours = session.ledger.ours(&session.conversation);
    let summary_request = compact::summary_request(
        base,
        &session.conversation.events,
        Some(&ours),
        candidate.upto,
        super::session::elision(&config),
        settings.max_tokens,
    );
    if let Some(why) = compact::too_large_to_summarise(&summary_request, &by, &config) {
        return Ok(not_compacted(session, &why));
    }
    session
        .printer
        .spin(&format!("summarising with {}", by.id()));
    let written = compact::write(provider, summary_request, Some(cancel)).await;
    session
        .printer
        .spin(&format!("waiting for {}", session.model));
    let written = match written {
        Ok(written) => written,
        Err(why) => {
            return Ok(not_compacted(
                session,
                &format!("{} wrote no summary: {why}", by.id()),
            ));
        }
    };
    let compaction = Compaction {
        upto: candidate.upto,
        summary: written.text.trim().to_owned(),
        model: by.id(),
        edited: false,
    };
    let summarised =
        compact::summarised_tokens(&session.conversation.events, Some(&ours), candidate.upto);
    let line = compact::done_line(candidate, summarised, &compaction);
    let events = compact::events(&config, &by, &written, compaction);
    session.append(events)?;
    session.printer.chrome_line(Style::Dim, &line);
    Ok(true)
}

/// Says why the conversation was not compacted; `false`.
fn not_compacted(session: &Session, why: &str) -> bool {
    session.printer.chrome_line(
        Style::Warn,
        &format!("not compacted: {why}; nothing was recorded"),
    );
    false
}

/// Which ways out get `request` (too large for `window`) through, by
/// jp's estimate.
fn ways_out(session: &Session, request: ChatRequest, window: u64) -> Ways {
    let events = &session.conversation.events;
    let ours = session.ledger.ours(&session.conversation);
    let by = Some(ours.as_slice());
    let settings = &session.config.conversation.compaction;
    let elision = super::session::elision(&session.config);
    let base = ChatRequest {
        messages: Vec::new(),
        ..request
    };
    let estimate = |sent| {
        estimate_tokens(&ChatRequest {
            messages: messages_of(sent, elision),
            ..base.clone()
        })
    };
    let current = turn_starts(events).last().copied().unwrap_or(0);
    // The turns before this one that are sent whole.
    let before: Vec<usize> = sent_turns(events, by)
        .into_iter()
        .filter(|&start| start < current)
        .collect();
    let mut ways = Ways {
        summary_tokens: settings.max_tokens,
        elision_off: elision.is_none(),
        ..Ways::default()
    };
    // A turn refused at its first request is taken back, and its message
    // sent again after what is kept; one the model already answered in
    // stays, whole.
    let first = first_request(events, current);
    if first {
        let alone = estimate(part(events, by, |index| index >= current, false));
        if alone > window {
            ways.alone = Some(alone);
            return ways;
        }
        ways.new = Some(alone);
    } else {
        // A new conversation holds the next message alone.
        ways.new = Some(estimate(part(events, by, |_| false, false)));
    }
    let mut turns = before.clone();
    turns.push(current);
    let keep = settings.keep_turns as usize + usize::from(first);
    if let Some(candidate) = compact::candidate(events, &turns, keep) {
        let kept = estimate(part(events, by, |index| index >= candidate.upto, false))
            + u64::from(settings.max_tokens);
        ways.compact = (kept <= window).then_some((candidate.turns, kept));
    }
    // Taken back: the last turns before this one (and this one, when it
    // stays).
    let takeable = if first { before } else { turns };
    ways.rewind = (1..=takeable.len()).find_map(|n| {
        let cut = takeable[takeable.len() - n];
        let left = estimate(part(
            events,
            by,
            |index| index < cut || (first && index >= current),
            true,
        ));
        (left <= window).then_some((n, left))
    });
    ways
}

/// Takes back the turn whose first request was refused as too large
/// (nothing of the model's is in it yet), so the next query does not
/// send it again; the log keeps its message. Whether it did.
pub(super) fn take_back_refused(session: &mut Session) -> Result<bool, StoreError> {
    let events = &session.conversation.events;
    let Some(current) = turn_starts(events).last().copied() else {
        return Ok(false);
    };
    if !first_request(events, current) {
        return Ok(false);
    }
    session.record(EventKind::Rewind(Rewind {
        turns: vec![current],
        reason: RewindReason::TooLarge,
        restored: Vec::new(),
        removed: Vec::new(),
        left: Vec::new(),
        complete: true,
    }))?;
    Ok(true)
}

/// Whether the turn starting at `start` holds nothing of the model's yet.
fn first_request(events: &[jp_conversation::ConversationEvent], start: usize) -> bool {
    !events[start..].iter().any(|event| {
        matches!(
            event.kind,
            EventKind::AssistantMessage { .. }
                | EventKind::AssistantReasoning { .. }
                | EventKind::ToolCallRequest(_)
        )
    })
}

/// Whether the last turn of `events` was taken back because its first
/// request was too large.
#[must_use]
pub fn taken_back(events: &[jp_conversation::ConversationEvent]) -> bool {
    let last = turn_starts(events).last().copied();
    events.last().is_some_and(|event| {
        matches!(&event.kind, EventKind::Rewind(rewind)
            if rewind.reason == RewindReason::TooLarge && Some(rewind.turns.as_slice()) == last.as_ref().map(std::slice::from_ref))
    })
}
