//! jp's typed configuration tree: loading, merging, `--cfg` assignments, tool
//! definitions and their argument-conditional policies (RFD D25).

pub mod policy;
pub mod tool;
