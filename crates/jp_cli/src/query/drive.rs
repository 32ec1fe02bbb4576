//! Driving a turn ([`Session::run_turn`]): the [`TurnCoordinator`]'s
//! actions carried out in order, one response after another: stream it (a
//! [`Response`]), settle the questions still open, run its calls (a
//! [`Cycle`]), ask for the user's reply, until the turn ends or tools
//! change the config.

use std::collections::VecDeque;

use jp_conversation::EventKind;

use super::run::Cycle;
use super::session::Session;
use super::signals::Interrupts;
use super::stream::Response;
use jp_llm::tool::ToolExecutor;

use super::tools::Runner;
use super::turn::{Action, Input, TurnCoordinator, TurnEnd};
use jp_term::printer::Style;
use jp_term::prompt::Prompts;

/// The most requests one turn may send before jp stops it: a guard against
/// a model that calls tools forever.
pub const MAX_CYCLES: usize = 50;

/// What `run_turn` hands back: the turn's end, or its state when tools
/// changed the config and the turn goes on after it is resolved again.
pub enum Step {
    End(TurnEnd),
    Reload(Box<(TurnCoordinator, VecDeque<Action>)>),
}

impl Session {
    /// Runs the turn (or goes on with one resumed after its config was
    /// resolved again) until it ends or tools change the config.
    pub async fn run_turn<'t, E: ToolExecutor>(
        &mut self,
        runner: &'t Runner<'t>,
        executor: &E,
        prompts: &'t Prompts,
        interrupts: &mut Interrupts,
        resume: Option<(TurnCoordinator, VecDeque<Action>)>,
    ) -> Result<Step, crate::error::Error> {
        let (mut turn, mut queue) = match resume {
            Some(state) => state,
            None => {
                let seen_ids = self
                    .conversation
                    .events
                    .iter()
                    .filter_map(|e| match &e.kind {
                        EventKind::ToolCallRequest(call) => Some(call.id.clone()),
                        _ => None,
                    })
                    .collect();
                let max = usize::try_from(self.config.conversation.max_turns).unwrap_or(MAX_CYCLES);
                let mut turn = TurnCoordinator::new(max, seen_ids);
                let queue: VecDeque<Action> = turn.start().into();
                (turn, queue)
            }
        };
        // What is decided about the calls of the response streaming.
        let mut response = Response::new(runner.asker(), prompts);
        while let Some(action) = queue.pop_front() {
            match action {
                Action::Request { cycle } => {
                    if let Some(over) = self.budget.as_ref().and_then(super::budget::Budget::over) {
                        return Ok(Step::End(TurnEnd::CostLimit(over)));
                    }
                    tracing::debug!(cycle, "requesting a response");
                    // One header per response, not per query: after a
                    // tool's result or the user's reply, it says that the
                    // model speaks again, in a terminal and in a log alike.
                    self.printer.chrome_line(Style::Header, &self.header);
                    self.printer.spin(&format!("waiting for {}", self.model));
                    response = Response::new(runner.asker(), prompts);
                    let inputs = response.stream(self, &mut turn, interrupts);
                    queue.extend(inputs.await?);
                }
                Action::RunTools(list) => {
                    // The stream is over; the questions still open decide.
                    response.settle_questions(self, &turn).await;
                    let ran = Cycle::new(self, runner, executor, prompts)
                        .run_tools(list, &mut response.calls, interrupts)
                        .await?;
                    if ran.interrupted {
                        return Ok(Step::End(TurnEnd::Interrupted));
                    }
                    let input = if ran.stopped {
                        Input::Stopped
                    } else {
                        Input::ToolsDone
                    };
                    queue.extend(turn.handle(input));
                    if ran.committed {
                        return Ok(Step::Reload(Box::new((turn, queue))));
                    }
                }
                Action::AskReply => {
                    let Some(reply) = self.ask_reply(prompts).await else {
                        return Ok(Step::End(TurnEnd::Interrupted));
                    };
                    queue.extend(turn.handle(Input::Reply(reply)));
                }
                Action::Finish(end) => return Ok(Step::End(end)),
                other => response.perform(self, other, &turn)?,
            }
        }
        Ok(Step::End(TurnEnd::Completed))
    }
}
