//! Events as a plugin sees them, read in place from the request.

use crate::decimal::Decimal;
use crate::fields::{decode_event_part, Fields};
use crate::projection::{Error, StreamKey};
use crate::text::{parse_f64, parse_i64};
use crate::value::{decode_opt_item, find, Item, ValueRef};
use crate::wire::{kind, Reader};

/// One event of a stream. Its strings and data are views of the request,
/// valid during the call; the data is read on demand, one attribute at a
/// time ([`str`](Event::str), [`decimal`](Event::decimal), …) or into a
/// struct ([`decode`](Event::decode)).
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    stream: &'a [u8],
    stream_id: &'a [u8],
    version: u64,
    event_type: &'a [u8],
    data: &'a [u8],
    metadata: &'a [u8],
    timestamp: &'a [u8],
    composite: &'static [&'static str],
}

#[inline]
fn text(b: &[u8]) -> &str {
    // Short ASCII, the common case, without a call.
    if b.len() <= 32 && crate::bytes::is_ascii(b) {
        // SAFETY: ASCII is UTF-8.
        return unsafe { std::str::from_utf8_unchecked(b) };
    }
    text_slow(b)
}

#[cold]
fn text_slow(b: &[u8]) -> &str {
    match std::str::from_utf8(b) {
        Ok(s) => s,
        // the longest valid prefix: the raw bytes are there too
        Err(e) => std::str::from_utf8(&b[..e.valid_up_to()]).unwrap_or(""),
    }
}

impl<'a> Event<'a> {
    /// Reads an Event record (ABI.md §3.3).
    #[inline]
    pub(crate) fn read(r: &mut Reader<'a>, composite: &'static [&'static str]) -> Event<'a> {
        Event {
            stream: r.bytes(),
            stream_id: r.bytes(),
            version: r.uvarint(),
            event_type: r.bytes(),
            data: r.sized(),
            metadata: r.sized(),
            timestamp: r.bytes(),
            composite,
        }
    }

    /// The event with the composite fields `stream_key` splits its id by.
    pub fn with_composite(mut self, composite: &'static [&'static str]) -> Event<'a> {
        self.composite = composite;
        self
    }

    #[inline]
    pub(crate) fn set_composite(&mut self, composite: &'static [&'static str]) {
        self.composite = composite;
    }

    /// An event from its parts, for tests of domain code: `data` and
    /// `metadata` are encoded optional items (empty: absent).
    pub fn from_parts(stream: &'a str, stream_id: &'a str, version: u64, event_type: &'a str, data: &'a [u8], timestamp: &'a str) -> Event<'a> {
        Event {
            stream: stream.as_bytes(),
            stream_id: stream_id.as_bytes(),
            version,
            event_type: event_type.as_bytes(),
            data,
            metadata: &[],
            timestamp: timestamp.as_bytes(),
            composite: &[],
        }
    }

    /// The stream's name, e.g. `Order`.
    #[inline]
    pub fn stream(&self) -> &'a str {
        text(self.stream)
    }

    /// The stream instance: its composite values joined with `#`.
    #[inline]
    pub fn stream_id(&self) -> &'a str {
        text(self.stream_id)
    }

    /// The stream version, from 1.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The event type (the data's `_tag`).
    #[inline]
    pub fn event_type(&self) -> &'a str {
        text(self.event_type)
    }

    /// The event type's bytes, as sent (for a type that is not UTF-8).
    #[inline]
    pub fn event_type_bytes(&self) -> &'a [u8] {
        self.event_type
    }

    /// The timestamp, ISO-8601 as stored.
    #[inline]
    pub fn timestamp(&self) -> &'a str {
        text(self.timestamp)
    }

    /// The stream id split into the composite fields the projection
    /// declares for the event's source.
    pub fn stream_key(&self) -> Result<StreamKey<'a>, Error> {
        StreamKey::parse(self.stream_id(), self.composite)
    }

    /// The data attribute `name`, read in place.
    #[inline]
    pub fn attr(&self, name: &str) -> Option<ValueRef<'a>> {
        find(self.data, name)
    }

    /// The S attribute `name` of the data (`None` when absent or of another
    /// type).
    #[inline]
    pub fn str(&self, name: &str) -> Option<&'a str> {
        self.attr(name)?.as_str()
    }

    /// The N attribute `name` of the data, as its exact text.
    #[inline]
    pub fn num(&self, name: &str) -> Option<&'a str> {
        self.attr(name)?.as_number()
    }

    /// The N attribute `name` of the data as an exact [`Decimal`]: `None`
    /// when it is absent, not a number, or not a number DynamoDB stores.
    #[inline]
    pub fn decimal(&self, name: &str) -> Option<Decimal> {
        let v = self.attr(name)?;
        if v.kind() != kind::N {
            return None;
        }
        Decimal::parse_bytes(v.text()).ok()
    }

    /// The N attribute `name` of the data as an `i64` (an integer in any
    /// form, `1e3` included).
    pub fn int(&self, name: &str) -> Option<i64> {
        parse_i64(self.num(name)?)
    }

    /// The N attribute `name` of the data as an `f64`.
    pub fn float(&self, name: &str) -> Option<f64> {
        parse_f64(self.num(name)?)
    }

    /// The BOOL attribute `name` of the data.
    #[inline]
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.attr(name)?.as_bool()
    }

    /// The B attribute `name` of the data.
    #[inline]
    pub fn bytes(&self, name: &str) -> Option<&'a [u8]> {
        self.attr(name)?.as_bytes()
    }

    /// The data mapped into a struct (see [`fields!`](crate::fields!)):
    /// attributes without a field are ignored, fields without an attribute
    /// keep their default. An attribute of the wrong type is an error
    /// (tag `Error`), as the Go SDK's `Decode` returns: `event data:
    /// attribute "qty": cannot decode S into int64 (the event's data does
    /// not match the plugin's type)`.
    pub fn decode<T: Fields>(&self) -> Result<T, Error> {
        decode_event_part(self.data, "data").map_err(|m| Error::new("Error", m))
    }

    /// The metadata mapped into a struct, like [`decode`](Event::decode).
    pub fn decode_metadata<T: Fields>(&self) -> Result<T, Error> {
        decode_event_part(self.metadata, "metadata").map_err(|m| Error::new("Error", m))
    }

    /// The data as an item (`None` when the event has none).
    pub fn data(&self) -> Result<Option<Item>, Error> {
        if self.data.is_empty() {
            return Ok(None);
        }
        decode_opt_item(self.data).map_err(|m| Error::new("Error", m))
    }

    /// The metadata as an item (`None` when the event has none).
    pub fn metadata(&self) -> Result<Option<Item>, Error> {
        if self.metadata.is_empty() {
            return Ok(None);
        }
        decode_opt_item(self.metadata).map_err(|m| Error::new("Error", m))
    }

    /// The data's encoding (an optional item), as sent.
    pub fn raw_data(&self) -> &'a [u8] {
        self.data
    }
}
