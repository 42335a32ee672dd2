//! What a plugin implements: [`Projection`], and the types its functions
//! take and return.

use std::fmt;

use crate::decimal::DecimalError;
use crate::event::Event;
use crate::fields::{Attrs, Effects, Fields};
use crate::text::quote;
use crate::value::{decode_opt_item, Item};

/// A typed domain error: its tag names its type (`ZoneNotPlaced`) and
/// travels to the host, where [`Projection::terminal`] decides by it and
/// reports show it. Build one with [`Error::new`] or [`errorf!`](crate::errorf!).
/// Reserved tags: `Panic`, and `Error` for an untyped error (a mapping
/// error, a decimal that does not parse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The error's type.
    pub tag: String,
    /// What happened.
    pub message: String,
}

impl Error {
    /// An error with tag and message.
    pub fn new(tag: impl Into<String>, message: impl Into<String>) -> Error {
        Error { tag: tag.into(), message: message.into() }
    }

    /// Whether the error's tag is `tag`.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tag == tag
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            f.write_str(&self.tag)
        } else {
            write!(f, "{}: {}", self.tag, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// Implemented by domain error types that name their tag: `?` turns them
/// into an [`Error`] with that tag and their text as the message.
pub trait Tagged: fmt::Display {
    /// The error's type, e.g. `InsufficientFunds`.
    fn tag(&self) -> &str;
}

impl<T: Tagged> From<T> for Error {
    fn from(e: T) -> Error {
        Error::new(e.tag(), e.to_string())
    }
}

impl From<DecimalError> for Error {
    fn from(e: DecimalError) -> Error {
        Error::new("Error", e.to_string())
    }
}

/// Builds an [`Error`] with a tag and a formatted message:
/// `errorf!("BadEvent", "ItemAdded v{}: price is not a number", e.version())`.
#[macro_export]
macro_rules! errorf {
    ($tag:expr, $($arg:tt)*) => {
        $crate::Error::new($tag, ::std::format!($($arg)*))
    };
}

/// What evolve did with an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The event applied: the state is the new one.
    Applied,
    /// The event is skipped: the state is unchanged (whatever evolve did to
    /// it is dropped), and the checkpoint does not move past it.
    Skip,
    /// The row is removed: it becomes a tombstone, and a later event starts
    /// again from [`Projection::initial`].
    RemoveRow,
}

/// How the host feeds a source (ABI.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every version of a stream instance above the row's checkpoint.
    Fold,
    /// Only the newest event of each instance in a delivery.
    Latest,
}

impl Mode {
    /// The mode's name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Mode::Fold => "fold",
            Mode::Latest => "latest",
        }
    }
}

/// One source of a projection: a stream, the event types it folds, how it
/// is fed, and optionally the composite fields of its stream ids.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// The source's name, unique within the projection (for a
    /// single-source projection, the stream's name).
    pub name: &'static str,
    /// The stream it reads.
    pub stream: &'static str,
    /// The event types it folds.
    pub event_types: &'static [&'static str],
    /// How the host feeds it.
    pub mode: Mode,
    /// The fields of the stream's ids, as the host's configuration names
    /// them (`["tenantId", "orderId"]`): declared in describe and used by
    /// [`Event::stream_key`]. Empty: none declared.
    pub composite: &'static [&'static str],
}

impl Source {
    /// A source named after its stream, folding every version.
    pub const fn new(stream: &'static str, event_types: &'static [&'static str]) -> Source {
        Source { name: stream, stream, event_types, mode: Mode::Fold, composite: &[] }
    }

    /// The source with another name (several sources may read one stream).
    pub const fn named(self, name: &'static str) -> Source {
        Source { name, ..self }
    }

    /// The source fed only the newest event of each instance.
    pub const fn latest(self) -> Source {
        Source { mode: Mode::Latest, ..self }
    }

    /// The source with its stream ids' composite fields declared.
    pub const fn composite(self, fields: &'static [&'static str]) -> Source {
        Source { composite: fields, ..self }
    }
}

/// What a projection says about itself (the describe export).
#[derive(Clone, Copy, Debug)]
pub struct Description {
    /// The plugin's name.
    pub name: &'static str,
    /// The plugin's own version.
    pub version: &'static str,
    /// Its sources, in declaration order (the fold order of a row's events).
    pub sources: &'static [Source],
    /// A single-source projection: initial gets the stream id and the
    /// first event; a multi-source one gets only the row's key.
    pub single: bool,
}

impl Description {
    /// A single-source projection.
    pub const fn single(name: &'static str, version: &'static str, source: &'static [Source; 1]) -> Description {
        Description { name, version, sources: source, single: true }
    }

    /// A projection whose rows several sources contribute to.
    pub const fn multi(name: &'static str, version: &'static str, sources: &'static [Source]) -> Description {
        Description { name, version, sources, single: false }
    }
}

/// What a projection's functions know besides the event and the state:
/// the source, the stream instance and the row's key.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    pub(crate) source: &'a str,
    pub(crate) stream_id: &'a str,
    pub(crate) key: &'a [u8],
    pub(crate) composite: &'static [&'static str],
}

impl<'a> Context<'a> {
    /// A context, for tests of domain code.
    pub fn new(source: &'a str, stream_id: &'a str) -> Context<'a> {
        Context { source, stream_id, key: &[], composite: &[] }
    }

    /// The source's name.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// Whether the source is `name`.
    pub fn is_source(&self, name: &str) -> bool {
        self.source == name
    }

    /// The stream instance (for to_item: the row's, single-source).
    pub fn stream_id(&self) -> &'a str {
        self.stream_id
    }

    /// The stream id split into the source's declared composite fields.
    pub fn stream_key(&self) -> Result<StreamKey<'a>, Error> {
        StreamKey::parse(self.stream_id, self.composite)
    }

    /// The row's key (`None` in key calls, which decide it).
    pub fn key(&self) -> Option<Item> {
        if self.key.is_empty() {
            return None;
        }
        decode_opt_item(self.key).ok().flatten()
    }
}

/// A stream id split into its composite fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamKey<'a> {
    fields: &'a [&'a str],
    values: Vec<&'a str>,
}

impl<'a> StreamKey<'a> {
    /// Splits `id` into `fields` as the host joins them: a single-field id
    /// is taken whole (`#` included); a multi-field id must split on `#`
    /// into exactly as many non-empty values.
    pub fn parse(id: &'a str, fields: &'a [&'a str]) -> Result<StreamKey<'a>, Error> {
        let fail = |problem: String| {
            let comp: Vec<String> = fields.iter().map(|f| quote(f.as_bytes())).collect();
            Error::new("Error", format!("guest: stream id {} (composite [{}]): {}", quote(id.as_bytes()), comp.join(" "), problem))
        };
        if fields.is_empty() {
            return Err(Error::new(
                "Error",
                format!(
                    "guest: stream id {} (composite []): no composite fields declared: declare them on the source (the names of the stream's composite in the host's configuration)",
                    quote(id.as_bytes())
                ),
            ));
        }
        let values: Vec<&str> = if fields.len() == 1 { vec![id] } else { id.split('#').collect() };
        if values.len() != fields.len() {
            return Err(fail(format!("has {} parts, want {}; a value containing \"#\" is ambiguous", values.len(), fields.len())));
        }
        for (i, v) in values.iter().enumerate() {
            if v.is_empty() {
                return Err(fail(format!("the value of {} is empty", quote(fields[i].as_bytes()))));
            }
        }
        Ok(StreamKey { fields, values })
    }

    /// The value of `field`.
    pub fn get(&self, field: &str) -> Option<&'a str> {
        self.fields.iter().position(|f| *f == field).map(|i| self.values[i])
    }

    /// (field, value) pairs, in the composite's order.
    pub fn pairs(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.fields.iter().copied().zip(self.values.iter().copied())
    }
}

/// A projection: a row's key, initial state and fold, and optionally which
/// errors reject an event, the stored item and the outbox effects. The SDK
/// does the rest (decoding requests, the fold loop, encoding responses);
/// [`export!`](crate::export!) makes a type implementing it a Wasm module.
///
/// Functions must be deterministic and keep nothing between calls: the host
/// may call any instance, in any order, and may retry.
pub trait Projection {
    /// The row's state: its attributes (declare it with
    /// [`fields!`](crate::fields!)).
    type State: Fields;

    /// Name, version and sources.
    const DESCRIPTION: Description;

    /// Writes the key of the row `event` folds into and returns true; false
    /// names no row (the event is acknowledged and ignored). An error fails
    /// that event's row.
    fn key(&self, event: &Event<'_>, ctx: &Context<'_>, key: &mut Attrs<'_>) -> Result<bool, Error>;

    /// The state of a row that does not exist yet. Single-source: before
    /// `event`, the first event folded into the row (`ctx.stream_id()` is
    /// its instance); multi-source: from the key alone (`ctx.key()`,
    /// `event` is `None`).
    fn initial(&self, event: Option<&Event<'_>>, ctx: &Context<'_>) -> Self::State;

    /// Folds `event` into `state`. [`Step::Skip`] and errors leave the
    /// state as it was (changes made to it are dropped); an error rejects
    /// the event when [`terminal`](Projection::terminal) accepts it, else
    /// it fails the row.
    fn evolve(&self, state: &mut Self::State, event: &Event<'_>, ctx: &Context<'_>) -> Result<Step, Error>;

    /// Whether an evolve error of source `ctx.source()` rejects its event
    /// (the row goes on) rather than failing the row. None does by default.
    fn terminal(&self, _error: &Error, _ctx: &Context<'_>) -> bool {
        false
    }

    /// Writes the stored item of a state (the host adds the key,
    /// checkpoints and its own attributes). By default, the state's
    /// attributes.
    fn to_item(&self, state: &Self::State, _ctx: &Context<'_>, item: &mut Attrs<'_>) {
        item.fields(state);
    }

    /// Writes the outbox effects of an applied event; `next` is `None` when
    /// it removed the row. None by default.
    fn effects(&self, _event: &Event<'_>, _next: Option<&Self::State>, _ctx: &Context<'_>, _effects: &mut Effects<'_>) {}
}
