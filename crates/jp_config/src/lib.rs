//! jp's typed configuration tree: loading, merging, `--cfg` assignments, tool
//! definitions and their policies.
//!
//! Nothing lives here yet: the config system arrives with the D25 policy work.
