//! Reading a workspace file as text, for the tools that read or change
//! files: regular files only, bounded in size, UTF-8 without NUL bytes.

use std::fs::Metadata;
use std::io::Read as _;

use crate::workspace::Target;

/// The largest file the tools read or modify: 1 MiB. More would crowd the
/// model's context, and a file that large is rarely edited by hand.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Why a file could not be read as text.
#[derive(Debug)]
pub(crate) enum TextError {
    /// Nothing is there.
    Missing,
    /// It is a directory.
    Directory,
    /// It is a socket, FIFO or device.
    NotAFile,
    /// It is larger than [`MAX_FILE_BYTES`]; its size.
    TooLarge(u64),
    /// It contains a NUL byte at this offset.
    Binary(usize),
    /// It is not UTF-8; the offset of the first invalid byte.
    NotUtf8(usize),
    /// Reading failed.
    Io(std::io::Error),
}

impl TextError {
    /// The message for `tool` failing to `verb` (`read`, `modify`) the file
    /// shown as `shown`.
    pub(crate) fn message(&self, tool: &str, verb: &str, shown: &str) -> String {
        let why = match self {
            Self::Missing => "no such file".to_owned(),
            Self::Directory => "it is a directory".to_owned(),
            Self::NotAFile => "it is not a regular file".to_owned(),
            Self::TooLarge(size) => format!(
                "it is {} ({size} bytes), over the {} limit for one file",
                fmt_size(*size),
                fmt_size(MAX_FILE_BYTES)
            ),
            Self::Binary(offset) => format!(
                "it looks binary (a NUL byte at offset {offset}), and {tool} handles only text"
            ),
            Self::NotUtf8(offset) => format!(
                "it is not UTF-8 text (an invalid byte at offset {offset}), and {tool} handles only UTF-8"
            ),
            Self::Io(e) => e.to_string(),
        };
        format!("cannot {verb} `{shown}`: {why}")
    }
}

/// Reads the file at `target` (following symlinks, which the workspace
/// check has kept inside) as text, with its metadata.
pub(crate) fn read_text(target: &Target) -> Result<(String, Metadata), TextError> {
    let metadata = match std::fs::metadata(&target.abs) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(TextError::Missing),
        Err(e) => return Err(TextError::Io(e)),
    };
    if metadata.is_dir() {
        return Err(TextError::Directory);
    }
    // Opening a FIFO would block until someone writes to it.
    if !metadata.is_file() {
        return Err(TextError::NotAFile);
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(TextError::TooLarge(metadata.len()));
    }
    let file = std::fs::File::open(&target.abs).map_err(TextError::Io)?;
    let mut bytes = Vec::new();
    // The file may have grown since `metadata`.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(TextError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(TextError::TooLarge(bytes.len() as u64));
    }
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(TextError::Binary(offset));
    }
    let text =
        String::from_utf8(bytes).map_err(|e| TextError::NotUtf8(e.utf8_error().valid_up_to()))?;
    Ok((text, metadata))
}

/// `512 bytes`, `1 MiB`, `1.5 MiB`, `12.3 KiB`.
pub(crate) fn fmt_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    let scaled = |unit: u64, name: &str| {
        if bytes.is_multiple_of(unit) {
            format!("{} {name}", bytes / unit)
        } else {
            // Sizes here are far below 2^52, so the conversion is exact.
            #[allow(clippy::cast_precision_loss)]
            let value = bytes as f64 / unit as f64;
            format!("{value:.1} {name}")
        }
    };
    if bytes >= MIB {
        scaled(MIB, "MiB")
    } else if bytes >= KIB {
        scaled(KIB, "KiB")
    } else if bytes == 1 {
        "1 byte".to_owned()
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
