//! Seals on what jp records in a conversation on the user's word alone
//! (an "allow for this session" answer): a log can be committed to a
//! repository and edited by anyone, so such a record counts only if it
//! carries a keyed hash (HMAC-SHA256) made with a key that lives in the
//! user's config directory (`$XDG_CONFIG_HOME/jp/seal.key`, mode 0600),
//! never in a workspace. A record without one, or with one made by
//! another key, approves nothing (fail closed).

use std::io::Read as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use hmac::{Hmac, KeyInit, Mac as _};
use jp_conversation::{EventKind, SessionApproval};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The name of the key file in the user's config directory.
const KEY_FILE: &str = "seal.key";

/// The user's key, read (or made) once per process; `None` when there is
/// no config directory or it cannot be read or written.
fn key() -> Option<&'static [u8; 32]> {
    static KEY: OnceLock<Option<[u8; 32]>> = OnceLock::new();
    KEY.get_or_init(|| {
        let env = crate::ctx::process_env();
        let path = jp_config::load::user_config_file(&env)?.with_file_name(KEY_FILE);
        read_or_make(&path)
            .map_err(|e| tracing::warn!("no seal key at {}: {e}", path.display()))
            .ok()
    })
    .as_ref()
}

fn read_or_make(path: &PathBuf) -> std::io::Result<[u8; 32]> {
    if let Ok(text) = std::fs::read_to_string(path) {
        return parse_hex(text.trim())
            .ok_or_else(|| std::io::Error::other("the key file is not 64 hex digits"));
    }
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => {
            std::io::Write::write_all(&mut file, hex(&key).as_bytes())?;
            Ok(key)
        }
        // Another jp made it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            parse_hex(std::fs::read_to_string(path)?.trim())
                .ok_or_else(|| std::io::Error::other("the key file is not 64 hex digits"))
        }
        Err(e) => Err(e),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_hex(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// HMAC-SHA256 of `message` under `key`.
fn mac(key: &[u8; 32], message: &[u8]) -> HmacSha256 {
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(message);
    mac
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, as hex.
fn hmac(key: &[u8; 32], message: &[u8]) -> String {
    hex(&mac(key, message).finalize().into_bytes())
}

/// What an approval's seal covers: every field, and the conversation.
fn message(conversation_id: &str, approval: &SessionApproval) -> Vec<u8> {
    serde_json::json!([
        "jp session approval v1",
        conversation_id,
        approval.call_id,
        approval.tool,
        approval.rule,
        approval.rule_text,
    ])
    .to_string()
    .into_bytes()
}

/// `kind` with its seal, if it is a session approval and the user has a
/// key; anything else as it is.
#[must_use]
pub fn seal_event(conversation_id: &str, kind: EventKind) -> EventKind {
    match kind {
        EventKind::SessionApproval(mut approval) => {
            approval.seal = key().map(|key| hmac(key, &message(conversation_id, &approval)));
            EventKind::SessionApproval(approval)
        }
        other => other,
    }
}

/// Whether `approval`'s seal was made by this user's key for this
/// conversation.
#[must_use]
pub fn verifies(conversation_id: &str, approval: &SessionApproval) -> bool {
    let (Some(key), Some(seal)) = (key(), approval.seal.as_deref()) else {
        return false;
    };
    let Some(seal) = parse_hex(seal) else {
        return false;
    };
    // In constant time.
    mac(key, &message(conversation_id, approval))
        .verify_slice(&seal)
        .is_ok()
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
