//! jp on a terminal: everything it writes and everything it asks.
//!
//! - [`printer`]: all output, the assistant's content to stdout and chrome
//!   to stderr, escaped ([`printer::sanitize`], [`printer::escape_json`]);
//!   how many columns text takes and where it is cut (`printer/width.rs`);
//!   the spinner; the prompt line kept below streaming output; the
//!   [`outln!`] and [`errln!`] macros.
//! - [`prompt`]: asking the user: the [`prompt::Prompter`] trait, the
//!   terminal's own ([`prompt::TerminalPrompter`], reading keys byte by
//!   byte, `prompt/keys.rs`), none at all ([`prompt::NoPrompter`]), the
//!   queue that asks one question at a time while a turn streams
//!   ([`prompt::Prompts`]), the terminal's echo while jp prints a turn, and
//!   the external editor and pager.
//!
//! It knows nothing of jp's config, conversations, providers or commands:
//! it must not depend on `jp_config`, `jp_conversation`, `jp_llm` or
//! `jp_cli` (a setting such as `style.color` is handed in as this crate's
//! own type, [`printer::ColorMode`]). Its one jp dependency is `jp_tool`,
//! for the tool questions a prompt asks.

pub mod printer;
pub mod prompt;
