//! What every wire decoder shares: the loop that feeds a [`Framing`]'s
//! frames to a format's [`Frames`], and the [`Latch`] that keeps the events
//! decoded before an error.
//!
//! A provider's decoder is a [`FramedDecoder`] of its [`Frames`]: the
//! Anthropic and OpenAI-compatible formats read server-sent events, Ollama
//! reads NDJSON lines (see [`crate::framing`]).

use crate::error::ProviderError;
use crate::framing::Framing;
use crate::provider::{StreamEvent, WireDecoder};

/// What a wire format makes of the frames of one response.
pub(crate) trait Frames: Send {
    /// How the format's body is cut into frames.
    type Framing: Framing;

    /// The provider named in errors.
    fn provider(&self) -> &str;

    /// Decodes one frame, appending its events to `out`.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Decode`] for a frame that is not the format, or
    /// [`ProviderError::Api`] for an error the provider sent.
    fn frame(
        &mut self,
        frame: <Self::Framing as Framing>::Frame<'_>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError>;

    /// The body ended, its last bytes making `rest` (if the framing allows
    /// a frame without its terminator): appends what is complete to `out`.
    ///
    /// # Errors
    ///
    /// As for [`frame`](Self::frame), and
    /// [`ProviderError::Disconnected`] for a body that ended before the
    /// format's end marker.
    fn end(
        &mut self,
        rest: Option<<Self::Framing as Framing>::Frame<'_>>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError>;
}

/// A [`WireDecoder`] made of a framing and a format's [`Frames`].
///
/// An error found after some events of the same bytes is returned by the
/// next call (`feed` of any bytes, even none, or `finish`), so no event
/// before it is lost.
#[derive(Debug, Default)]
pub(crate) struct FramedDecoder<F: Frames> {
    framing: F::Framing,
    latch: Latch,
    frames: F,
}

impl<F: Frames> FramedDecoder<F> {
    /// A decoder for one response, starting from `frames`.
    pub(crate) fn with_frames(frames: F) -> Self {
        Self {
            framing: F::Framing::default(),
            latch: Latch::default(),
            frames,
        }
    }

    /// The format's state, to configure before the response arrives.
    pub(crate) fn frames_mut(&mut self) -> &mut F {
        &mut self.frames
    }
}

impl<F: Frames> WireDecoder for FramedDecoder<F> {
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
        let Self {
            framing,
            latch,
            frames,
        } = self;
        latch
            .run(|out| {
                framing.push(bytes);
                while let Some(frame) = framing.next_frame() {
                    let frame = frame.map_err(|error| decode_error(&*frames, &error))?;
                    frames.frame(frame, out)?;
                }
                Ok(())
            })
            .map(plausible_usage)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        let Self {
            framing,
            latch,
            frames,
        } = self;
        latch
            .run(|out| {
                let rest = framing
                    .finish()
                    .map_err(|error| decode_error(&*frames, &error))?;
                frames.end(rest, out)
            })
            .map(plausible_usage)
    }
}

/// `events` with every usage report's absurd counts made unknown
/// ([`crate::provider::Usage::plausible`]), whichever format reported them.
fn plausible_usage(mut events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    for event in &mut events {
        if let StreamEvent::Usage(usage) = event {
            *usage = usage.plausible();
        }
    }
    events
}

/// A framing error as [`ProviderError::Decode`].
fn decode_error(frames: &impl Frames, error: &impl std::fmt::Display) -> ProviderError {
    ProviderError::Decode {
        provider: frames.provider().to_owned(),
        message: error.to_string(),
    }
}

/// Holds a decoder's first error so that the events decoded before it in
/// the same bytes are not lost.
///
/// A decoder that fails halfway through a chunk returns the events before
/// the failure as `Ok`, and the error from its next call (a `feed` of any
/// bytes, even none, or `finish`); every later call returns the error
/// again. The events a stream produces are then the same however its
/// bytes were split.
#[derive(Debug, Default)]
pub(crate) struct Latch {
    error: Option<ProviderError>,
}

impl Latch {
    /// Runs one decoding step that appends to a fresh list of events.
    pub(crate) fn run(
        &mut self,
        step: impl FnOnce(&mut Vec<StreamEvent>) -> Result<(), ProviderError>,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let mut events = Vec::new();
        match step(&mut events) {
            Ok(()) => Ok(events),
            Err(error) => {
                self.error = Some(error.clone());
                if events.is_empty() {
                    Err(error)
                } else {
                    Ok(events)
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
pub(crate) mod tests;
