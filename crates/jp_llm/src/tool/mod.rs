//! Local tool execution (being written).
