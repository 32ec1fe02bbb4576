//! Wire types of jp's local tool protocol and a small helper for Rust tool
//! authors.
//!
//! Nothing lives here yet: the protocol (request on stdin, one `Outcome` on
//! stdout, see architecture decision 8) arrives with `jp query`.
