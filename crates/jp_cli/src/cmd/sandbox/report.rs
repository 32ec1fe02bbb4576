//! What one attempt of the escape suite gives: the probe's report (the
//! content of its outcome, one line `VERDICT<TAB>DETAIL`) and the verdict
//! the check prints.

/// How an attempt ended, as the check prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The sandbox stopped it.
    Blocked,
    /// It got out.
    Escaped,
    /// It could not be tried here (a missing program, an absent place).
    Skipped,
}

impl Verdict {
    /// `blocked`, `escaped`, `skipped`: the JSON value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Blocked => "blocked",
            Self::Escaped => "escaped",
            Self::Skipped => "skipped",
        }
    }
}

/// What the probe says it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// A verdict of its own.
    Verdict(Verdict),
    /// It did its part (sent a datagram, left a child behind); what the
    /// check sees afterwards decides.
    Done,
}

/// The probe's report: what it says, and a short detail (an errno's text,
/// a count; never the content of what it read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub said: Said,
    pub detail: String,
}

impl Reported {
    pub fn blocked(detail: impl Into<String>) -> Self {
        Self::new(Said::Verdict(Verdict::Blocked), detail)
    }

    pub fn escaped(detail: impl Into<String>) -> Self {
        Self::new(Said::Verdict(Verdict::Escaped), detail)
    }

    pub fn skipped(detail: impl Into<String>) -> Self {
        Self::new(Said::Verdict(Verdict::Skipped), detail)
    }

    pub fn done(detail: impl Into<String>) -> Self {
        Self::new(Said::Done, detail)
    }

    fn new(said: Said, detail: impl Into<String>) -> Self {
        Self {
            said,
            detail: detail.into(),
        }
    }

    /// The line the probe answers with.
    pub fn encode(&self) -> String {
        let said = match self.said {
            Said::Verdict(verdict) => verdict.as_str(),
            Said::Done => "done",
        };
        // One line: the detail is an errno's text or a program's message.
        let detail = self.detail.replace(['\n', '\t'], " ");
        format!("{said}\t{}", detail.trim())
    }

    /// The report in a probe's answer, `None` when it is not one.
    pub fn decode(line: &str) -> Option<Self> {
        let (said, detail) = line.split_once('\t')?;
        let said = match said {
            "blocked" => Said::Verdict(Verdict::Blocked),
            "escaped" => Said::Verdict(Verdict::Escaped),
            "skipped" => Said::Verdict(Verdict::Skipped),
            "done" => Said::Done,
            _ => return None,
        };
        Some(Self::new(said, detail))
    }
}

/// A failed system call's text, without Rust's ` (os error N)`:
/// `Permission denied`.
pub fn errno(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
