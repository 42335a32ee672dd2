//! DynamoDB attribute values: [`Value`], [`Item`], their encoding, and
//! [`ValueRef`], a value read in place from a request.

use std::collections::BTreeMap;

use crate::text::quote;
use crate::wire::{kind, put_bytes, put_str, put_uvarint, Reader, MAX_DEPTH};

/// An item: attribute names to values (a row, a key, event data). Names
/// are kept in ascending byte order, the order the ABI encodes them in.
pub type Item = BTreeMap<String, Value>;

/// One DynamoDB attribute value. Numbers (`N`, `NS`) are kept as their
/// exact decimal text; parse them with [`Decimal`](crate::Decimal) for
/// arithmetic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A string.
    S(String),
    /// A number, as its decimal text.
    N(String),
    /// Bytes.
    B(Vec<u8>),
    /// A boolean.
    Bool(bool),
    /// NULL.
    Null,
    /// A map.
    M(Item),
    /// A list.
    L(Vec<Value>),
    /// A set of strings.
    SS(Vec<String>),
    /// A set of numbers.
    NS(Vec<String>),
    /// A set of byte strings.
    BS(Vec<Vec<u8>>),
}

impl Value {
    /// A string value.
    pub fn s(s: impl Into<String>) -> Value {
        Value::S(s.into())
    }

    /// A number value from its decimal text (kept as given).
    pub fn n(text: impl Into<String>) -> Value {
        Value::N(text.into())
    }

    /// The value's kind byte.
    pub fn kind(&self) -> u8 {
        match self {
            Value::S(_) => kind::S,
            Value::N(_) => kind::N,
            Value::B(_) => kind::B,
            Value::Bool(_) => kind::BOOL,
            Value::Null => kind::NULL,
            Value::M(_) => kind::M,
            Value::L(_) => kind::L,
            Value::SS(_) => kind::SS,
            Value::NS(_) => kind::NS,
            Value::BS(_) => kind::BS,
        }
    }

    /// The string of an `S` value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::S(s) => Some(s),
            _ => None,
        }
    }

    /// The decimal text of an `N` value.
    pub fn as_number(&self) -> Option<&str> {
        match self {
            Value::N(s) => Some(s),
            _ => None,
        }
    }

    /// Appends the value's encoding: kind byte, then payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.kind());
        match self {
            Value::S(s) | Value::N(s) => put_str(out, s),
            Value::B(b) => put_bytes(out, b),
            Value::Bool(b) => out.push(*b as u8),
            Value::Null => {}
            Value::M(m) => encode_entries(out, m),
            Value::L(l) => {
                put_uvarint(out, l.len() as u64);
                for v in l {
                    v.encode(out);
                }
            }
            Value::SS(ss) | Value::NS(ss) => {
                put_uvarint(out, ss.len() as u64);
                for s in ss {
                    put_str(out, s);
                }
            }
            Value::BS(bs) => {
                put_uvarint(out, bs.len() as u64);
                for b in bs {
                    put_bytes(out, b);
                }
            }
        }
    }

    /// Decodes one value (kind byte and payload) that must fill `b`.
    pub fn decode(b: &[u8]) -> Result<Value, String> {
        let mut r = Reader::new(b);
        let v = read_value(&mut r, 0);
        r.end()?;
        v.ok_or_else(|| r.err().unwrap_or("abi: malformed encoding").to_string())
    }
}

/// Appends an item's entries: count, then names (ascending) and values.
pub fn encode_entries(out: &mut Vec<u8>, it: &Item) {
    put_uvarint(out, it.len() as u64);
    for (k, v) in it {
        put_str(out, k);
        v.encode(out);
    }
}

/// Appends an optional item: 0 for `None`, else count + 1 and the entries.
pub fn encode_opt_item(out: &mut Vec<u8>, it: Option<&Item>) {
    match it {
        None => out.push(0),
        Some(it) => {
            put_uvarint(out, it.len() as u64 + 1);
            for (k, v) in it {
                put_str(out, k);
                v.encode(out);
            }
        }
    }
}

/// Decodes an optional item that must fill `b`.
pub fn decode_opt_item(b: &[u8]) -> Result<Option<Item>, String> {
    let mut r = Reader::new(b);
    let it = read_opt_item(&mut r);
    r.end()?;
    Ok(it)
}

/// Reads an optional item (`None` when absent or on error).
pub fn read_opt_item(r: &mut Reader<'_>) -> Option<Item> {
    let n = r.opt_count()?;
    read_entries(r, n, 0)
}

fn string_of(r: &mut Reader<'_>, b: &[u8], what: &str) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) => {
            r.fail(&format!("{} is not UTF-8", what));
            String::new()
        }
    }
}

fn read_entries(r: &mut Reader<'_>, n: usize, depth: usize) -> Option<Item> {
    if depth > MAX_DEPTH {
        r.fail(&format!("nesting deeper than {}", MAX_DEPTH));
        return None;
    }
    let mut m = Item::new();
    for _ in 0..n {
        let nb = r.bytes();
        let name = string_of(r, nb, "an attribute name");
        let v = read_value(r, depth)?;
        if !r.ok() {
            return None;
        }
        if m.contains_key(&name) {
            r.fail(&format!("duplicate attribute {}", quote(name.as_bytes())));
            return None;
        }
        m.insert(name, v);
    }
    if r.ok() {
        Some(m)
    } else {
        None
    }
}

/// Reads one value (kind byte and payload).
pub fn read_value(r: &mut Reader<'_>, depth: usize) -> Option<Value> {
    let k = r.byte();
    read_payload(r, k, depth)
}

/// Reads the payload of a value whose kind byte `k` was read.
pub fn read_payload(r: &mut Reader<'_>, k: u8, depth: usize) -> Option<Value> {
    if !r.ok() {
        return None;
    }
    let v = match k {
        kind::S => {
            let b = r.bytes();
            Value::S(string_of(r, b, "a string"))
        }
        kind::N => {
            let b = r.bytes();
            Value::N(string_of(r, b, "a number"))
        }
        kind::B => Value::B(r.bytes().to_vec()),
        kind::BOOL => Value::Bool(r.bool()),
        kind::NULL => Value::Null,
        kind::M => {
            let n = r.count(2);
            Value::M(read_entries(r, n, depth + 1)?)
        }
        kind::L => {
            if depth >= MAX_DEPTH {
                r.fail(&format!("nesting deeper than {}", MAX_DEPTH));
                return None;
            }
            let n = r.count(1);
            let mut l = Vec::with_capacity(n);
            for _ in 0..n {
                l.push(read_value(r, depth + 1)?);
            }
            Value::L(l)
        }
        kind::SS | kind::NS => {
            let n = r.count(1);
            let mut ss = Vec::with_capacity(n);
            for _ in 0..n {
                let b = r.bytes();
                ss.push(string_of(r, b, if k == kind::SS { "a string" } else { "a number" }));
            }
            if k == kind::SS {
                Value::SS(ss)
            } else {
                Value::NS(ss)
            }
        }
        kind::BS => {
            let n = r.count(1);
            let mut bs = Vec::with_capacity(n);
            for _ in 0..n {
                bs.push(r.bytes().to_vec());
            }
            Value::BS(bs)
        }
        kind::ABSENT => {
            r.fail("an absent value inside an item");
            return None;
        }
        _ => {
            r.fail(&format!("unknown kind {}", k));
            return None;
        }
    };
    if r.ok() {
        Some(v)
    } else {
        None
    }
}

/// A value read in place from an encoded item (an event's data, a row as
/// read): its kind and the bytes of its payload, without copying.
#[derive(Clone, Copy, Debug)]
pub struct ValueRef<'a> {
    kind: u8,
    payload: &'a [u8],
    /// The offset of the payload in the item it was read from (for error
    /// messages that say where, as the Go SDK's do).
    at: usize,
}

impl<'a> ValueRef<'a> {
    /// The kind byte.
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// The string of an `S` value.
    pub fn as_str(&self) -> Option<&'a str> {
        if self.kind != kind::S {
            return None;
        }
        std::str::from_utf8(self.text()).ok()
    }

    /// The decimal text of an `N` value.
    pub fn as_number(&self) -> Option<&'a str> {
        if self.kind != kind::N {
            return None;
        }
        std::str::from_utf8(self.text()).ok()
    }

    /// The bytes of a `B` value.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        if self.kind != kind::B {
            return None;
        }
        Some(self.text())
    }

    /// The boolean of a `BOOL` value.
    pub fn as_bool(&self) -> Option<bool> {
        match (self.kind, self.payload.first()) {
            (kind::BOOL, Some(0)) => Some(false),
            (kind::BOOL, Some(1)) => Some(true),
            _ => None,
        }
    }

    /// Whether the value is NULL.
    pub fn is_null(&self) -> bool {
        self.kind == kind::NULL
    }

    /// The payload of an S, N or B value (the bytes after the length).
    #[inline]
    pub(crate) fn text(&self) -> &'a [u8] {
        let mut r = Reader::new(self.payload);
        r.bytes()
    }

    /// The value encoded in `b` (kind byte, then payload), read at offset
    /// `at` of an item.
    pub(crate) fn from_encoded(b: &'a [u8], at: usize) -> ValueRef<'a> {
        ValueRef { kind: b[0], payload: &b[1..], at }
    }

    /// A reader positioned at the payload.
    pub(crate) fn reader(&self) -> Reader<'a> {
        Reader::new(self.payload)
    }

    /// The offset of the payload in the item it was read from.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// The value, decoded.
    pub fn to_value(&self) -> Result<Value, String> {
        let mut r = Reader::new(self.payload);
        read_payload(&mut r, self.kind, 1).ok_or_else(|| r.err().unwrap_or("abi: malformed encoding").to_string())
    }
}

/// Walks an encoded optional item's attributes in place.
pub struct Attributes<'a> {
    buf: &'a [u8],
    r: Reader<'a>,
    left: usize,
    base: usize,
}

impl<'a> Attributes<'a> {
    /// The attributes of the optional item `b` (none when it is absent).
    pub fn new(b: &'a [u8]) -> Self {
        let mut r = Reader::new(b);
        let left = if b.is_empty() { 0 } else { r.opt_count().unwrap_or(0) };
        Attributes { buf: b, r, left, base: 0 }
    }

    /// The entries of an M value, read in place.
    pub fn map(v: ValueRef<'a>) -> Self {
        let mut r = Reader::new(v.payload);
        let left = r.count(2);
        Attributes { buf: v.payload, r, left, base: v.at }
    }

    /// The reader's first error, if any.
    pub fn err(&self) -> Option<&str> {
        self.r.err()
    }

    /// Takes the reader's first error.
    pub fn take_err(&mut self) -> Option<String> {
        self.r.take_err()
    }

    /// Fails the walk at the current offset with `what` (the message says
    /// where, as [`Reader::fail`] does).
    pub fn fail(&mut self, what: &str) {
        self.r.fail(what)
    }

    /// Fails unless every byte of the item was read.
    pub fn end(&mut self) -> Result<(), String> {
        self.r.end()
    }
}

impl<'a> Iterator for Attributes<'a> {
    type Item = (&'a [u8], ValueRef<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 || !self.r.ok() {
            return None;
        }
        self.left -= 1;
        let name = self.r.bytes();
        let k = self.r.byte();
        let at = self.r.offset();
        self.r.skip_payload(k, 1);
        if !self.r.ok() {
            return None;
        }
        let end = self.r.offset();
        let payload = &self.buf[at..end];
        Some((name, ValueRef { kind: k, payload, at: self.base + at }))
    }
}

/// Finds attribute `name` of the encoded optional item `b`.
#[inline]
pub fn find<'a>(b: &'a [u8], name: &str) -> Option<ValueRef<'a>> {
    let name = name.as_bytes();
    // The common case inline: short names, scalar values.
    if let Some(&c) = b.first() {
        if c < 0x80 {
            let n = (c as usize).saturating_sub(1);
            let mut o = 1;
            let mut i = 0;
            while i < n {
                let kl = match b.get(o) {
                    Some(&kl) if kl < 0x80 => kl as usize,
                    _ => return find_slow(b, name),
                };
                if o + 1 + kl >= b.len() {
                    return find_slow(b, name);
                }
                let key = &b[o + 1..o + 1 + kl];
                o += 1 + kl;
                let k = b[o];
                o += 1;
                if crate::fold::eq_bytes(key, name) {
                    let end = match k {
                        kind::S | kind::N | kind::B => match b.get(o) {
                            Some(&vl) if vl < 0x80 && (vl as usize) < b.len() - o => o + 1 + vl as usize,
                            _ => return find_slow(b, name),
                        },
                        kind::NULL => o,
                        kind::BOOL if o < b.len() => o + 1,
                        _ => return find_slow(b, name),
                    };
                    return Some(ValueRef { kind: k, payload: &b[o..end], at: o });
                }
                match k {
                    kind::S | kind::N | kind::B => match b.get(o) {
                        Some(&vl) if vl < 0x80 => o += 1 + vl as usize,
                        _ => return find_slow(b, name),
                    },
                    kind::NULL => {}
                    kind::BOOL => o += 1,
                    _ => return find_slow(b, name),
                }
                i += 1;
            }
            return None;
        }
    }
    find_slow(b, name)
}

fn find_slow<'a>(b: &'a [u8], name: &[u8]) -> Option<ValueRef<'a>> {
    let mut a = Attributes::new(b);
    while let Some((n, v)) = a.next() {
        if n == name {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_round_trip_sorted() {
        let mut it = Item::new();
        it.insert("n".into(), Value::n("12.5"));
        it.insert("b".into(), Value::B(vec![0, 255]));
        it.insert("m".into(), Value::M(Item::from([("x".to_string(), Value::L(vec![Value::Null, Value::Bool(true)]))])));
        it.insert("ss".into(), Value::SS(vec!["b".into(), "a".into()]));
        let mut b = Vec::new();
        encode_opt_item(&mut b, Some(&it));
        assert_eq!(b[0], 5);
        assert_eq!(&b[1..3], b"\x01b");
        assert_eq!(decode_opt_item(&b).unwrap(), Some(it));
        assert_eq!(decode_opt_item(&[0]).unwrap(), None);
        assert_eq!(decode_opt_item(&[1]).unwrap(), Some(Item::new()));
    }

    #[test]
    fn decoders_reject_what_the_abi_rejects() {
        // duplicate names
        let dup = [3, 1, b'a', 5, 1, b'a', 5];
        assert!(decode_opt_item(&dup).unwrap_err().contains("duplicate attribute \"a\""));
        // a bad bool
        assert!(decode_opt_item(&[2, 1, b'a', 4, 2]).unwrap_err().contains("bad bool"));
        // an unknown kind
        assert!(decode_opt_item(&[2, 1, b'a', 11]).unwrap_err().contains("unknown kind 11"));
        // truncated
        assert!(decode_opt_item(&[2, 1, b'a', 1, 5, b'x']).is_err());
        // nesting deeper than 64
        let mut deep = vec![2, 1, b'a'];
        for _ in 0..70 {
            deep.extend_from_slice(&[7, 1]);
        }
        deep.push(5);
        assert!(decode_opt_item(&deep).unwrap_err().contains("nesting deeper than 64"));
    }

    #[test]
    fn find_reads_in_place() {
        let mut it = Item::new();
        it.insert("_tag".into(), Value::s("ItemAdded"));
        it.insert("price".into(), Value::n("2.25"));
        it.insert("tags".into(), Value::L(vec![Value::s("x")]));
        it.insert("z".into(), Value::Bool(true));
        let mut b = Vec::new();
        encode_opt_item(&mut b, Some(&it));
        assert_eq!(find(&b, "price").unwrap().as_number(), Some("2.25"));
        assert_eq!(find(&b, "z").unwrap().as_bool(), Some(true));
        assert_eq!(find(&b, "tags").unwrap().to_value().unwrap(), Value::L(vec![Value::s("x")]));
        assert!(find(&b, "nope").is_none());
        assert!(find(&[0], "x").is_none());
    }
}
