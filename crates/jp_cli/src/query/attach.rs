//! Attachments: files, directories, globs and commands' output sent with a
//! message (`jp query -a PATH`, `-a 'cmd:git diff'`, `@path` in the text).
//!
//! Each one becomes a block of the user message, before what the user
//! wrote, that names where it came from ([`jp_conversation::attachment`]),
//! and the conversation records its source, the SHA-256 of the text and
//! its length ([`EventKind::Attachments`](jp_conversation::EventKind)),
//! the text itself once, in the message.
//!
//! Everything is read and checked before anything is recorded or sent: a
//! path outside the workspace, one that looks like it holds secrets (the
//! built-in list and what `fs_read_file`'s own policy asks about), a file
//! that is not UTF-8 text, an attachment over [`MAX_ATTACHMENT_BYTES`] or
//! all of them over [`MAX_TOTAL_BYTES`] is refused with a message that
//! names it. A directory or a glob attaches the files a walk finds
//! (`.gitignore` honoured, `.git` and jp's conversations never), leaving
//! out secret and binary files with a note. A command runs as
//! `run_command` would ([`command`]).

mod command;

use std::path::{Path, PathBuf};

use jp_config::app::AppConfig;
use jp_conversation::Attached;
use sha2::Digest as _;

/// The most bytes one attachment may hold.
pub const MAX_ATTACHMENT_BYTES: usize = 256 * 1024;

/// The most bytes all attachments of a message may hold together.
pub const MAX_TOTAL_BYTES: usize = 1024 * 1024;

/// The most files one directory or glob may attach.
pub const MAX_FILES: usize = 200;

/// One attachment, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `src/lib.rs` (relative to the workspace root), or `cmd:git diff`.
    pub source: String,
    /// The text sent.
    pub text: String,
}

impl Attachment {
    /// What the conversation records of it.
    #[must_use]
    pub fn record(&self) -> Attached {
        Attached {
            source: self.source.clone(),
            sha256: hex(&sha2::Sha256::digest(self.text.as_bytes())),
            bytes: self.text.len() as u64,
        }
    }

    /// Its block in the message, marked with the start of its hash.
    fn block(&self) -> String {
        let hash = hex(&sha2::Sha256::digest(self.text.as_bytes()));
        jp_conversation::attachment::block(&self.source, &self.text, &hash[..16])
    }
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The message sent: each attachment's block, then what the user wrote.
#[must_use]
pub fn compose(attachments: &[Attachment], message: &str) -> String {
    let blocks: Vec<String> = attachments.iter().map(Attachment::block).collect();
    jp_conversation::attachment::compose(&blocks, message)
}

/// Where the attachments are read: the workspace root, the directory jp
/// runs in (paths are relative to it, as a shell gives them), and the
/// config whose `fs_read_file` policy also says what is secret.
pub struct Place<'a> {
    /// The workspace root, with every link resolved.
    pub root: PathBuf,
    /// The directory jp runs in.
    pub cwd: PathBuf,
    /// The config.
    pub config: &'a AppConfig,
}

impl<'a> Place<'a> {
    /// The place of a query in the workspace at `root`, run in `cwd`.
    #[must_use]
    pub fn new(root: &Path, cwd: &Path, config: &'a AppConfig) -> Self {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        Self { root, cwd, config }
    }
}

/// What was attached, and the notes to say (files a directory or glob
/// left out).
#[derive(Debug, Default)]
pub struct Gathered {
    /// In order, each source once.
    pub attachments: Vec<Attachment>,
    /// One line each, without `note: `.
    pub notes: Vec<String>,
}

impl Gathered {
    /// Adds `attachment` unless its source is there already.
    fn push(&mut self, attachment: Attachment) {
        if !self
            .attachments
            .iter()
            .any(|a| a.source == attachment.source)
        {
            self.attachments.push(attachment);
        }
    }

    /// Checks the total size.
    fn check_total(&self) -> Result<(), String> {
        let total: usize = self.attachments.iter().map(|a| a.text.len()).sum();
        if total > MAX_TOTAL_BYTES {
            return Err(format!(
                "the attachments hold {} bytes together; the most a message may carry is {MAX_TOTAL_BYTES} (attach fewer or smaller files)",
                total
            ));
        }
        Ok(())
    }
}

/// Reads what the `-a` `specs` name, then the files `@path` in `typed`
/// (what the user wrote, not what was piped) names, and only then runs
/// the `cmd:` ones (see [`command`]; `can_ask` says whether one whose
/// policy asks may be asked about), so that no command runs for a message
/// refused for a path; the attachments keep the order of `specs`.
///
/// # Errors
///
/// What was refused, naming it; nothing is attached then.
pub fn gather(
    place: &Place<'_>,
    specs: &[String],
    typed: &str,
    runtime: &tokio::runtime::Runtime,
    can_ask: bool,
) -> Result<Gathered, String> {
    let mut slots: Vec<Gathered> = specs.iter().map(|_| Gathered::default()).collect();
    for (spec, slot) in specs.iter().zip(&mut slots) {
        if !spec.starts_with("cmd:") {
            attach_path(place, spec, slot).map_err(|why| format!("-a {spec}: {why}"))?;
        }
    }
    let mut mentioned = Gathered::default();
    for mention in mentions(typed) {
        let path = place.cwd.join(&mention);
        if !path.is_file() {
            continue;
        }
        let attachment = read_named(place, &path).map_err(|why| format!("@{mention}: {why}"))?;
        mentioned.push(attachment);
    }
    merged(&slots, &mentioned).check_total()?;
    for (index, spec) in specs.iter().enumerate() {
        if let Some(command) = spec.strip_prefix("cmd:") {
            let command = command.trim();
            let text = command::run(place, index, command, runtime, can_ask)
                .map_err(|why| format!("-a cmd:{command}: {why}"))?;
            slots[index].push(Attachment {
                source: format!("cmd:{command}"),
                text,
            });
        }
    }
    let gathered = merged(&slots, &mentioned);
    gathered.check_total()?;
    Ok(gathered)
}

/// What each `-a` of `slots` attached, in order, then what was
/// `mentioned`; each source once.
fn merged(slots: &[Gathered], mentioned: &Gathered) -> Gathered {
    let mut gathered = Gathered::default();
    for slot in slots.iter().chain([mentioned]) {
        for attachment in &slot.attachments {
            gathered.push(attachment.clone());
        }
        gathered.notes.extend(slot.notes.iter().cloned());
    }
    gathered
}

/// The paths `@path` names in `message`: a word that starts with `@`,
/// without the punctuation that may end a sentence after it.
#[must_use]
pub fn mentions(message: &str) -> Vec<String> {
    message
        .split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']))
        .filter(|path| !path.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Attaches what `spec` names: a file, a directory's files, or a glob's.
fn attach_path(place: &Place<'_>, spec: &str, gathered: &mut Gathered) -> Result<(), String> {
    if spec.contains(['*', '?', '[', '{']) {
        let files = glob_files(place, spec)?;
        if files.is_empty() {
            return Err("no file matches".to_owned());
        }
        return attach_found(place, &files, gathered);
    }
    let path = place.cwd.join(spec);
    let meta = std::fs::metadata(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "there is no such file or directory".to_owned(),
        _ => format!("cannot read it: {}", jp_fs::io_reason(&e)),
    })?;
    if meta.is_dir() {
        let dir = inside(place, &path)?;
        let files = walk(&place.root, |rel| rel.starts_with(&dir));
        if files.is_empty() {
            return Err("the directory holds no file to attach".to_owned());
        }
        return attach_found(place, &files, gathered);
    }
    if !meta.is_file() {
        return Err("it is neither a file nor a directory".to_owned());
    }
    gathered.push(read_named(place, &path)?);
    Ok(())
}

/// Attaches `files` (relative to the root) that a directory or glob found,
/// leaving out secret and binary ones with a note.
fn attach_found(
    place: &Place<'_>,
    files: &[PathBuf],
    gathered: &mut Gathered,
) -> Result<(), String> {
    let before = gathered.attachments.len();
    let left_out = gathered.notes.len();
    attach_each(place, files, gathered)?;
    if gathered.attachments.len() == before {
        return Err(format!(
            "every file it names was left out ({})",
            gathered.notes[left_out..].join("; ")
        ));
    }
    Ok(())
}

/// [`attach_found`] for each of `files`.
fn attach_each(
    place: &Place<'_>,
    files: &[PathBuf],
    gathered: &mut Gathered,
) -> Result<(), String> {
    if files.len() > MAX_FILES {
        return Err(format!(
            "it names {} files; at most {MAX_FILES} may be attached at once (narrow it)",
            files.len()
        ));
    }
    for rel in files {
        let shown = shown(rel);
        if let Some(why) = secret(place, &shown) {
            gathered.notes.push(format!("left out {shown}: {why}"));
            continue;
        }
        match read_text(&place.root.join(rel)) {
            Ok(text) => gathered.push(Attachment {
                source: shown,
                text,
            }),
            Err(Unread::Binary) => gathered
                .notes
                .push(format!("left out {shown}: it is not UTF-8 text")),
            Err(Unread::Refused(why)) => return Err(format!("{shown}: {why}")),
        }
    }
    Ok(())
}

/// Reads a file the user named (by `-a` or `@`): it must be inside the
/// workspace, not look secret, and be text within the limit.
fn read_named(place: &Place<'_>, path: &Path) -> Result<Attachment, String> {
    let rel = inside(place, path)?;
    let shown = shown(&rel);
    if let Some(why) = secret(place, &shown).or_else(|| internal(&rel).map(str::to_owned)) {
        return Err(format!("refused: {why}"));
    }
    match read_text(&place.root.join(&rel)) {
        Ok(text) => Ok(Attachment {
            source: shown,
            text,
        }),
        Err(Unread::Binary) => Err("refused: it is not UTF-8 text (a binary file)".to_owned()),
        Err(Unread::Refused(why)) => Err(why),
    }
}

/// `path` relative to the workspace root, every link resolved; refused
/// when it is not inside.
fn inside(place: &Place<'_>, path: &Path) -> Result<PathBuf, String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot read it: {}", jp_fs::io_reason(&e)))?;
    real.strip_prefix(&place.root)
        .map(Path::to_path_buf)
        .map_err(|_| {
            format!(
                "refused: it is outside the workspace ({}); attach files in it",
                place.root.display()
            )
        })
}

/// Why a file at `rel` (relative to the root, `/`-separated) is not
/// attached as secret, if it looks like it holds secrets: by jp's list, or
/// because `fs_read_file`'s policy would not read it unattended.
fn secret(place: &Place<'_>, rel: &str) -> Option<String> {
    if looks_secret(rel) {
        return Some(SECRET.to_owned());
    }
    let (_, compiled) = jp_config::tool::effective::effective_policy(
        place.config,
        "fs_read_file",
        jp_policy::PolicyField::Run,
    )?;
    let policy = compiled.policy?;
    let arguments = serde_json::json!({ "path": rel });
    let decision = policy.evaluate_in(&arguments, &jp_policy::path::Workspace::new(&place.root));
    (decision.mode != jp_policy::Mode::Unattended).then(|| {
        format!(
            "fs_read_file's policy would not read it unattended ({})",
            decision.reason
        )
    })
}

/// Why a file that [`looks_secret`] is not attached.
pub(crate) const SECRET: &str = "it looks like it holds secrets (keys, credentials, .env)";

/// Why a path (relative to the root) inside git's or jp's own store is not
/// attached: `.git` (its config can hold tokens in remote URLs) and jp's
/// conversations.
pub(crate) fn internal(rel: &Path) -> Option<&'static str> {
    if rel.components().any(|c| c.as_os_str() == ".git") {
        return Some(
            "it is in a .git directory, which may hold credentials (remote URLs with tokens)",
        );
    }
    rel.starts_with(".jp/conversations")
        .then_some("it is in jp's conversations, which are not part of the project")
}

/// A relative path as `/`-separated text (`.` components left out).
fn shown(rel: &Path) -> String {
    rel.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a file at `rel` looks like it holds secrets: jp's one list
/// ([`jp_tools::SECRET_PATTERNS`], the places `fs_read_file`'s default
/// policy asks about).
pub(crate) fn looks_secret(rel: &str) -> bool {
    jp_tools::looks_secret(rel)
}

/// Why a file was not read.
enum Unread {
    /// Not UTF-8 text.
    Binary,
    /// Too large, or unreadable: the message says which.
    Refused(String),
}

/// The text of the file at `path`, within [`MAX_ATTACHMENT_BYTES`].
fn read_text(path: &Path) -> Result<String, Unread> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)
        .map_err(|e| Unread::Refused(format!("cannot read it: {}", jp_fs::io_reason(&e))))?;
    let mut bytes = Vec::new();
    file.take(MAX_ATTACHMENT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Unread::Refused(format!("cannot read it: {}", jp_fs::io_reason(&e))))?;
    if bytes.len() > MAX_ATTACHMENT_BYTES {
        let size = std::fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Err(Unread::Refused(format!(
            "refused: it is {size} bytes; an attachment may hold at most {MAX_ATTACHMENT_BYTES}"
        )));
    }
    if bytes.contains(&0) {
        return Err(Unread::Binary);
    }
    String::from_utf8(bytes).map_err(|_| Unread::Binary)
}

/// The files (relative to the root) a glob matches, written relative to
/// the directory jp runs in.
fn glob_files(place: &Place<'_>, spec: &str) -> Result<Vec<PathBuf>, String> {
    let below = place
        .cwd
        .strip_prefix(&place.root)
        .map_err(|_| "refused: jp runs outside the workspace".to_owned())?;
    let written = Path::new(spec);
    let pattern = if written.is_absolute() {
        let inside = written
            .strip_prefix(&place.root)
            .map_err(|_| "refused: it is outside the workspace".to_owned())?;
        shown(inside)
    } else {
        shown(&below.join(spec))
    };
    if pattern.split('/').any(|part| part == "..") {
        return Err("refused: a glob cannot climb with `..`; run jp where it starts".to_owned());
    }
    let matcher = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("it is not a glob jp reads: {e}"))?
        .compile_matcher();
    Ok(walk(&place.root, |rel| matcher.is_match(rel)))
}

/// The files under `root` (relative, sorted) for which `keep` holds, as
/// `fs_list_files` walks: `.gitignore` honoured, hidden files included,
/// `.git` and `.jp/conversations` never entered, links not followed.
fn walk(root: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let top = root.to_path_buf();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let rel = entry.path().strip_prefix(&top).unwrap_or(entry.path());
            entry.file_name() != ".git" && rel != Path::new(".jp/conversations")
        })
        .build();
    let mut files: Vec<PathBuf> = walker
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|entry| entry.path().strip_prefix(root).ok().map(Path::to_path_buf))
        .filter(|rel| keep(rel))
        .collect();
    files.sort();
    files
}

#[cfg(test)]
#[path = "attach_tests.rs"]
mod tests;
