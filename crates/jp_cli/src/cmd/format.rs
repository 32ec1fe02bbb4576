//! How commands that print structured results print them.

/// Output formats of commands that print structured results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// One JSON document, for scripts.
    Json,
}
