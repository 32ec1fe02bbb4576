//! The user's sealing key: a log can be committed to a repository and
//! edited by anyone, so what gives a recorded event authority (a session
//! approval, a call a stateful policy counts) is a keyed hash
//! (HMAC-SHA256) made with a key that lives in the user's config
//! directory (`$XDG_CONFIG_HOME/jp/seal.key`, mode 0600), never in a
//! workspace. Without the key nothing verifies (fail closed). What is
//! sealed, and where the seals are kept, is [`crate::ledger`]'s.

use std::io::Read as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use hmac::{Hmac, KeyInit, Mac as _};
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

/// `bytes` as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
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

/// The user's key, if they have one (read, or made, once per process).
#[must_use]
pub fn user_key() -> Option<[u8; 32]> {
    key().copied()
}

/// The seal of `message` with `key`, as hex.
#[must_use]
pub fn seal(key: &[u8; 32], message: &[u8]) -> String {
    hmac(key, message)
}

/// Whether `seal` is the seal of `message` with `key` (in constant time).
#[must_use]
pub fn verify(key: &[u8; 32], message: &[u8], seal: &str) -> bool {
    let Some(seal) = parse_hex(seal) else {
        return false;
    };
    mac(key, message).verify_slice(&seal).is_ok()
}

/// The directory that holds the user's key (`$XDG_CONFIG_HOME/jp`), where
/// what jp keeps for the user, apart from any workspace, lives.
#[must_use]
pub fn user_dir() -> Option<PathBuf> {
    let env = crate::ctx::process_env();
    Some(
        jp_config::load::user_config_file(&env)?
            .parent()?
            .to_path_buf(),
    )
}

/// `bytes` random bytes, as hex.
///
/// # Errors
///
/// When the system's random source cannot be read.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut out = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut out)?;
    Ok(hex(&out))
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
