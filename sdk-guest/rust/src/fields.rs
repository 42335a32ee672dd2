//! Typed attributes: [`Field`] maps one Rust type to a DynamoDB value,
//! [`Fields`] a struct to the attributes of an item (see the [`fields!`]
//! macro), [`Attrs`] and [`Effects`] write them into a response.

use std::collections::BTreeMap;

use crate::decimal::Decimal;
use crate::text::{append_f64, parse_f64, parse_i64, parse_u64, quote};
use crate::value::{read_payload, Attributes, Item, Value, ValueRef};
use crate::wire::{kind, patch_count, put_bytes, put_str, put_uvarint, Reader};

/// Why a value does not map to a field: `what` happened at byte `at` of the
/// item being read (the Go SDK's messages say where, and so do these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// What failed, e.g. `cannot decode N into string`.
    pub what: String,
    /// The offset in the item where it failed.
    pub at: usize,
}

impl DecodeError {
    /// A value of the wrong kind for a field of type `ty`.
    pub fn mismatch(v: &ValueRef<'_>, ty: &str) -> Self {
        DecodeError { what: format!("cannot decode {} into {}", kind::name(v.kind()), ty), at: v.offset() }
    }

    /// A number that does not fit a field of type `ty`.
    pub fn not_fit(v: &ValueRef<'_>, text: &[u8], ty: &str) -> Self {
        DecodeError { what: format!("number {} does not fit {}", quote(text), ty), at: v.offset() + payload_len(v) }
    }

    /// The error with the attribute it happened in named, when it is a
    /// mismatch or a number that does not fit, not yet named (the innermost
    /// attribute names it, as the Go SDK's errors do).
    pub fn in_attribute(mut self, name: &[u8]) -> Self {
        if self.what.starts_with("cannot decode ") || self.what.starts_with("number ") {
            self.what = format!("attribute {}: {}", quote(name), self.what);
        }
        self
    }

    /// The message, as a decoding error of the ABI reads.
    pub fn message(&self) -> String {
        format!("abi: malformed encoding: {} at byte {}", self.what, self.at)
    }

    /// Whether the input was well formed but a value does not fit its field:
    /// a value of another kind, or a number out of the field's range.
    pub fn is_mismatch(&self) -> bool {
        self.what.starts_with("cannot decode ") || self.what.starts_with("number ") || self.what.starts_with("attribute ")
    }

    /// The message for an event's `part` ("data" or "metadata") that does
    /// not decode: a mismatch reads as the event not matching the plugin's
    /// type (as the Go SDK's `EventDataError`), other errors as [`message`](DecodeError::message).
    pub fn event_message(&self, part: &str) -> String {
        if !self.is_mismatch() {
            return self.message();
        }
        format!("event {}: {} (the event's {} does not match the plugin's type)", part, self.what, part)
    }

    /// The message for a row's stored state that does not decode: a
    /// mismatch reads as the state not matching the plugin's type (as the Go
    /// SDK's `StateDataError`), other errors as [`message`](DecodeError::message).
    pub fn state_message(&self) -> String {
        if !self.is_mismatch() {
            return self.message();
        }
        format!("{}{}", self.what, STATE_DATA_HINT)
    }
}

fn payload_len(v: &ValueRef<'_>) -> usize {
    let mut r = v.reader();
    r.skip_payload(v.kind(), 1);
    r.offset()
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A Rust type that maps to one DynamoDB value, as the Go SDK maps Go
/// types: `String` to S, integers, `f64` (shortest form) and [`Decimal`]
/// (exactly) to N, [`Number`] to N kept as text, `bool` to BOOL, [`Bytes`]
/// to B, [`Item`] and structs declared with [`fields!`] to M, `Vec<T>` to
/// L, [`Value`] as is, and `Option<T>`: `None` is an absent attribute.
/// NULL reads as the default value.
pub trait Field: Default + Clone {
    /// The type's name in messages (`string`, `int64`, `decimal`…).
    const TYPE: &'static str;

    /// Makes `self` a copy of `o`, reusing `self`'s buffers: what the fold
    /// does to the state before every event ([`fields!`] structs'
    /// `clone_from`).
    #[inline]
    fn assign(&mut self, o: &Self) {
        self.clone_from(o)
    }

    /// Appends the value: its kind byte and payload. An error is why it
    /// cannot be stored (a decimal DynamoDB cannot store, an infinite
    /// float).
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String>;

    /// Reads a (non-NULL) value into `self`.
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError>;

    /// Whether the value is stored as an absent attribute.
    fn omit(&self) -> bool {
        false
    }

    /// Reads NULL: the default value.
    fn decode_null(&mut self) {
        *self = Default::default();
    }
}

/// A struct whose fields are an item's attributes. Declare one with
/// [`fields!`](crate::fields!), or implement it by hand.
pub trait Fields: Default + Clone {
    /// Writes the attributes, in declared order.
    fn write_fields(&self, w: &mut Attrs<'_>);

    /// Reads attribute `name` into its field: `Ok(false)` when no field has
    /// that name (the attribute is ignored).
    fn read_field(&mut self, name: &[u8], v: ValueRef<'_>) -> Result<bool, DecodeError>;
}

/// Reads an encoded optional item into a `T`: attributes without a field
/// are ignored, fields without an attribute keep their default, NULL reads
/// as the default; an absent item gives `T::default()`.
pub fn decode_fields<T: Fields>(item: &[u8]) -> Result<T, String> {
    let mut t = T::default();
    decode_into(&mut t, item)?;
    Ok(t)
}

/// [`decode_fields`] into an existing value.
pub fn decode_into<T: Fields>(t: &mut T, item: &[u8]) -> Result<(), String> {
    decode_with(t, item, DecodeError::message)
}

/// [`decode_fields`] of an event's `part` ("data" or "metadata"): an
/// attribute its field cannot hold reads as [`DecodeError::event_message`].
pub(crate) fn decode_event_part<T: Fields>(item: &[u8], part: &str) -> Result<T, String> {
    let mut t = T::default();
    decode_with(&mut t, item, |e| e.event_message(part))?;
    Ok(t)
}

/// Ends a [`DecodeError::state_message`], the same words as the Go SDK's
/// `StateDataError`.
const STATE_DATA_HINT: &str = " (the row's stored state does not match the plugin's type: a row written by another version of the plugin or edited by hand; rebuild the row)";

/// [`decode_into`] of a row's stored state as an evolve reads it: an
/// attribute its field cannot hold reads as [`DecodeError::state_message`].
pub(crate) fn decode_state_as_read<T: Fields>(t: &mut T, item: &[u8]) -> Result<(), String> {
    decode_with(t, item, DecodeError::state_message)
}

fn decode_with<T: Fields>(t: &mut T, item: &[u8], message: impl Fn(&DecodeError) -> String) -> Result<(), String> {
    if item.is_empty() {
        return Ok(());
    }
    let mut a = Attributes::new(item);
    while let Some((name, v)) = a.next() {
        if let Err(e) = t.read_field(name, v) {
            return Err(message(&e));
        }
    }
    a.end()
}

/// Appends `t` as an optional item.
pub fn encode_fields<T: Fields>(out: &mut Vec<u8>, t: &T) -> Result<(), String> {
    let mut w = Attrs::optional(out);
    t.write_fields(&mut w);
    w.finish()
}

/// Writes an item's attributes into a response: the key of `key`, the item
/// of `to_item`, a map effect. Attributes are written in the order given;
/// give each name once.
pub struct Attrs<'o> {
    out: &'o mut Vec<u8>,
    at: usize,
    n: u64,
    opt: bool,
    err: Option<String>,
}

impl<'o> Attrs<'o> {
    /// Starts an optional item (its count is written by `finish`).
    pub(crate) fn optional(out: &'o mut Vec<u8>) -> Self {
        let at = out.len();
        out.push(0);
        Attrs { out, at, n: 0, opt: true, err: None }
    }

    /// Starts the entries of a map value (after its kind byte).
    pub(crate) fn map(out: &'o mut Vec<u8>) -> Self {
        let at = out.len();
        out.push(0);
        Attrs { out, at, n: 0, opt: false, err: None }
    }

    /// Ends the item: its count, or the first error met.
    pub(crate) fn finish(self) -> Result<(), String> {
        if let Some(e) = self.err {
            return Err(e);
        }
        let n = if self.opt { self.n + 1 } else { self.n };
        patch_count(self.out, self.at, n);
        Ok(())
    }

    /// Drops what was written (a key that names no row).
    pub(crate) fn discard(self) {
        let at = self.at;
        self.out.truncate(at);
    }

    #[inline]
    fn name(&mut self, name: &str) -> &mut Vec<u8> {
        self.n += 1;
        put_str(self.out, name);
        self.out
    }

    /// Records the first error of the item.
    pub fn fail(&mut self, why: String) {
        if self.err.is_none() {
            self.err = Some(why);
        }
    }

    /// An S attribute.
    pub fn s(&mut self, name: &str, v: &str) -> &mut Self {
        let out = self.name(name);
        out.push(kind::S);
        put_str(out, v);
        self
    }

    /// An N attribute from its decimal text (written as given).
    pub fn n(&mut self, name: &str, text: &str) -> &mut Self {
        let out = self.name(name);
        out.push(kind::N);
        put_str(out, text);
        self
    }

    /// An N attribute of an integer.
    pub fn int(&mut self, name: &str, v: i64) -> &mut Self {
        let out = self.name(name);
        put_int(out, v);
        self
    }

    /// An N attribute of a decimal: fails the item when DynamoDB cannot
    /// store it (round it first).
    pub fn decimal(&mut self, name: &str, v: &Decimal) -> &mut Self {
        self.field(name, v)
    }

    /// A BOOL attribute.
    pub fn bool(&mut self, name: &str, v: bool) -> &mut Self {
        let out = self.name(name);
        out.push(kind::BOOL);
        out.push(v as u8);
        self
    }

    /// A NULL attribute.
    pub fn null(&mut self, name: &str) -> &mut Self {
        self.name(name).push(kind::NULL);
        self
    }

    /// A B attribute.
    pub fn bytes(&mut self, name: &str, v: &[u8]) -> &mut Self {
        let out = self.name(name);
        out.push(kind::B);
        put_bytes(out, v);
        self
    }

    /// An attribute of any value.
    pub fn value(&mut self, name: &str, v: &Value) -> &mut Self {
        v.encode(self.name(name));
        self
    }

    /// An attribute of a [`Field`] type (absent when it is omitted).
    pub fn field<T: Field>(&mut self, name: &str, v: &T) -> &mut Self {
        if v.omit() {
            return self;
        }
        let at = self.out.len();
        let out = self.name(name);
        if let Err(why) = v.encode(out) {
            self.out.truncate(at);
            self.n -= 1;
            self.fail(format!("guest: mapping {}: {}", T::TYPE, why));
        }
        self
    }

    /// A map attribute, written by `f`.
    pub fn map_with(&mut self, name: &str, f: impl FnOnce(&mut Attrs<'_>)) -> &mut Self {
        let out = self.name(name);
        out.push(kind::M);
        let mut m = Attrs::map(out);
        f(&mut m);
        if let Err(e) = m.finish() {
            self.fail(e);
        }
        self
    }

    /// Every attribute of a struct, in declared order.
    pub fn fields<T: Fields>(&mut self, v: &T) -> &mut Self {
        v.write_fields(self);
        self
    }

    /// Every attribute of an item.
    pub fn item(&mut self, it: &Item) -> &mut Self {
        for (k, v) in it {
            self.value(k, v);
        }
        self
    }
}

/// Writes the outbox effects of an applied event: a list of values,
/// usually maps.
pub struct Effects<'o> {
    out: &'o mut Vec<u8>,
    at: usize,
    n: u64,
    err: Option<String>,
}

impl<'o> Effects<'o> {
    #[inline]
    pub(crate) fn new(out: &'o mut Vec<u8>) -> Self {
        let at = out.len();
        out.push(0);
        Effects { out, at, n: 0, err: None }
    }

    #[inline]
    pub(crate) fn finish(self) -> Result<(), String> {
        if let Some(e) = self.err {
            return Err(e);
        }
        if self.n > 0 {
            patch_count(self.out, self.at, self.n);
        }
        Ok(())
    }

    /// An effect of any value.
    pub fn push(&mut self, v: &Value) -> &mut Self {
        self.n += 1;
        v.encode(self.out);
        self
    }

    /// A map effect, its attributes written by `f`.
    pub fn map(&mut self, f: impl FnOnce(&mut Attrs<'_>)) -> &mut Self {
        self.n += 1;
        self.out.push(kind::M);
        let mut m = Attrs::map(self.out);
        f(&mut m);
        if let Err(e) = m.finish() {
            if self.err.is_none() {
                self.err = Some(e);
            }
        }
        self
    }

    /// A map effect of a struct's attributes.
    pub fn fields<T: Fields>(&mut self, v: &T) -> &mut Self {
        self.map(|m| {
            m.fields(v);
        })
    }
}

fn put_int(out: &mut Vec<u8>, v: i64) {
    out.push(kind::N);
    let at = out.len();
    out.push(0);
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut x = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
    out[at] = (out.len() - at - 1) as u8;
}

/// An exact number kept as its decimal text (an N attribute read and
/// written as is), for numbers a projection passes through without
/// arithmetic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Number(pub String);

/// Bytes stored as a B attribute (a `Vec<u8>` field maps to L, as any
/// other `Vec`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bytes(pub Vec<u8>);

fn number_text<'a>(v: &ValueRef<'a>, ty: &str) -> Result<&'a [u8], DecodeError> {
    if v.kind() != kind::N {
        return Err(DecodeError::mismatch(v, ty));
    }
    Ok(v.text())
}

impl Field for String {
    const TYPE: &'static str = "string";
    /// A short string is copied by a few word moves: a call to memcpy
    /// costs more than the copy in a Wasm guest.
    #[inline]
    fn assign(&mut self, o: &Self) {
        let n = o.len();
        if n > 16 || n > self.len() {
            return self.clone_from(o);
        }
        // SAFETY: the first n bytes (initialized: n <= len) become a copy of
        // a valid UTF-8 string, and the length then ends with them.
        unsafe {
            let v = self.as_mut_vec();
            crate::bytes::copy_small(&mut v[..n], o.as_bytes());
            v.set_len(n);
        }
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        out.push(kind::S);
        put_str(out, self);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        if v.kind() != kind::S {
            return Err(DecodeError::mismatch(&v, Self::TYPE));
        }
        self.clear();
        self.push_str(&String::from_utf8_lossy(v.text()));
        Ok(())
    }
}

macro_rules! int_field {
    ($t:ty, $name:literal, $parse:ident, $wide:ty) => {
        impl Field for $t {
            const TYPE: &'static str = $name;
            fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
                out.push(kind::N);
                put_str(out, &self.to_string());
                Ok(())
            }
            fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
                let t = number_text(&v, Self::TYPE)?;
                let n = std::str::from_utf8(t).ok().and_then($parse).and_then(|x: $wide| <$t>::try_from(x).ok());
                match n {
                    Some(n) => {
                        *self = n;
                        Ok(())
                    }
                    None => Err(DecodeError::not_fit(&v, t, Self::TYPE)),
                }
            }
        }
    };
}

impl Field for i64 {
    const TYPE: &'static str = "int64";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        put_int(out, *self);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        let t = number_text(&v, Self::TYPE)?;
        // The common case: a short plain integer.
        if !t.is_empty() && t.len() <= 18 {
            let (neg, digits) = if t[0] == b'-' { (true, &t[1..]) } else { (false, t) };
            if !digits.is_empty() && digits.iter().all(|c| c.is_ascii_digit()) {
                let mut x: i64 = 0;
                for &c in digits {
                    x = x * 10 + (c - b'0') as i64;
                }
                *self = if neg { -x } else { x };
                return Ok(());
            }
        }
        match std::str::from_utf8(t).ok().and_then(parse_i64) {
            Some(n) => {
                *self = n;
                Ok(())
            }
            None => Err(DecodeError::not_fit(&v, t, Self::TYPE)),
        }
    }
}
int_field!(i32, "int32", parse_i64, i64);
int_field!(u64, "uint64", parse_u64, u64);
int_field!(u32, "uint32", parse_u64, u64);

impl Field for f64 {
    const TYPE: &'static str = "float64";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        if !self.is_finite() {
            let mut s = String::new();
            append_f64(&mut s, *self);
            return Err(format!("{} cannot be stored as a DynamoDB number", s));
        }
        let mut s = String::with_capacity(24);
        append_f64(&mut s, *self);
        out.push(kind::N);
        put_str(out, &s);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        let t = number_text(&v, Self::TYPE)?;
        match std::str::from_utf8(t).ok().and_then(parse_f64) {
            Some(f) => {
                *self = f;
                Ok(())
            }
            None => Err(DecodeError::not_fit(&v, t, Self::TYPE)),
        }
    }
}

impl Field for bool {
    const TYPE: &'static str = "bool";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        out.push(kind::BOOL);
        out.push(*self as u8);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        match v.as_bool() {
            Some(b) => {
                *self = b;
                Ok(())
            }
            None => Err(DecodeError::mismatch(&v, Self::TYPE)),
        }
    }
}

impl Field for Decimal {
    // the Go SDK's name, so a decoding error is the same bytes from either
    const TYPE: &'static str = "guest.Decimal";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        if let Err(e) = self.valid() {
            return Err(format!("{}: {} (round it first, or store it as a string)", self, e));
        }
        out.push(kind::N);
        let at = out.len();
        out.push(0);
        self.append_text(out);
        let n = out.len() - at - 1;
        if n >= 0x80 {
            patch_count(out, at, n as u64);
        } else {
            out[at] = n as u8;
        }
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        let t = number_text(&v, Self::TYPE)?;
        match Decimal::parse_bytes(t) {
            Ok(d) => {
                *self = d;
                Ok(())
            }
            Err(_) => Err(DecodeError::not_fit(&v, t, Self::TYPE)),
        }
    }
}

impl Field for Number {
    const TYPE: &'static str = "guest.Number";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        out.push(kind::N);
        put_str(out, &self.0);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        let t = number_text(&v, Self::TYPE)?;
        self.0 = String::from_utf8_lossy(t).into_owned();
        Ok(())
    }
}

impl Field for Bytes {
    const TYPE: &'static str = "bytes";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        out.push(kind::B);
        put_bytes(out, &self.0);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        match v.as_bytes() {
            Some(b) => {
                self.0 = b.to_vec();
                Ok(())
            }
            None => Err(DecodeError::mismatch(&v, Self::TYPE)),
        }
    }
}

impl Default for Value {
    fn default() -> Self {
        Value::Null
    }
}

fn decode_value(v: &ValueRef<'_>) -> Result<Value, DecodeError> {
    let mut r: Reader<'_> = v.reader();
    match read_payload(&mut r, v.kind(), 1) {
        Some(x) => Ok(x),
        None => Err(DecodeError {
            what: r.err().unwrap_or("malformed").trim_start_matches("abi: malformed encoding: ").to_string(),
            at: v.offset(),
        }),
    }
}

impl Field for Value {
    const TYPE: &'static str = "Value";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        self.encode(out);
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        *self = decode_value(&v)?;
        Ok(())
    }
    fn decode_null(&mut self) {
        *self = Value::Null;
    }
}

impl<T: Field> Field for BTreeMap<String, T> {
    const TYPE: &'static str = "map";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        out.push(kind::M);
        let mut m = Attrs::map(out);
        for (k, v) in self {
            m.field(k, v);
        }
        m.finish()
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        if v.kind() != kind::M {
            return Err(DecodeError::mismatch(&v, Self::TYPE));
        }
        let x = decode_value(&v)?;
        self.clear();
        if let Value::M(m) = x {
            for (k, x) in m {
                let mut enc = Vec::new();
                x.encode(&mut enc);
                let mut t = T::default();
                let r = ValueRef::from_encoded(&enc, v.offset());
                if r.is_null() {
                    t.decode_null();
                } else {
                    t.decode(r)?;
                }
                self.insert(k, t);
            }
        }
        Ok(())
    }
    fn omit(&self) -> bool {
        false
    }
}

impl<T: Field> Field for Vec<T> {
    const TYPE: &'static str = "list";
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        out.push(kind::L);
        put_uvarint(out, self.len() as u64);
        for v in self {
            v.encode(out)?;
        }
        Ok(())
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        if v.kind() != kind::L {
            return Err(DecodeError::mismatch(&v, Self::TYPE));
        }
        let x = decode_value(&v)?;
        self.clear();
        if let Value::L(l) = x {
            for x in l {
                let mut enc = Vec::new();
                x.encode(&mut enc);
                let mut t = T::default();
                let r = ValueRef::from_encoded(&enc, v.offset());
                if r.is_null() {
                    t.decode_null();
                } else {
                    t.decode(r)?;
                }
                self.push(t);
            }
        }
        Ok(())
    }
}

impl<T: Field> Field for Option<T> {
    const TYPE: &'static str = T::TYPE;
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            Some(v) => v.encode(out),
            None => Ok(()),
        }
    }
    fn decode(&mut self, v: ValueRef<'_>) -> Result<(), DecodeError> {
        let mut t = T::default();
        t.decode(v)?;
        *self = Some(t);
        Ok(())
    }
    fn omit(&self) -> bool {
        self.is_none()
    }
    fn decode_null(&mut self) {
        *self = None;
    }
}

/// An item is a state of any attributes: each read into a [`Value`],
/// written back in ascending name order.
impl Fields for Item {
    fn write_fields(&self, w: &mut Attrs<'_>) {
        w.item(self);
    }

    fn read_field(&mut self, name: &[u8], v: ValueRef<'_>) -> Result<bool, DecodeError> {
        let name = match std::str::from_utf8(name) {
            Ok(n) => n.to_string(),
            Err(_) => return Err(DecodeError { what: "an attribute name is not UTF-8".into(), at: v.offset() }),
        };
        let x = decode_value(&v)?;
        if self.contains_key(&name) {
            return Err(DecodeError { what: format!("duplicate attribute {}", quote(name.as_bytes())), at: v.offset() });
        }
        self.insert(name, x);
        Ok(true)
    }
}

/// Writes a struct's entries as an M value: for [`fields!`] structs nested
/// in others.
pub fn encode_map<T: Fields>(out: &mut Vec<u8>, v: &T) -> Result<(), String> {
    out.push(kind::M);
    let mut m = Attrs::map(out);
    v.write_fields(&mut m);
    m.finish()
}

/// Reads an M value into a struct: for [`fields!`] structs nested in
/// others.
pub fn decode_map<T: Fields>(t: &mut T, v: ValueRef<'_>) -> Result<(), DecodeError> {
    if v.kind() != kind::M {
        return Err(DecodeError::mismatch(&v, "struct"));
    }
    let mut a = Attributes::map(v);
    while let Some((name, x)) = a.next() {
        t.read_field(name, x)?;
    }
    match a.take_err() {
        Some(e) => Err(DecodeError { what: e, at: v.offset() }),
        None => Ok(()),
    }
}

/// Declares a struct whose fields are an item's attributes, and implements
/// [`Fields`] (and [`Field`], so it nests as an M value) and a `Clone`
/// whose `clone_from` reuses the fields' buffers (the fold clones the state
/// before every event):
///
/// ```
/// dynafold_guest::fields! {
///     /// A row's state.
///     #[derive(Debug, PartialEq)]
///     pub struct Account {
///         pub account_id: String = "accountId",
///         pub owner: String,                 // the attribute "owner"
///         pub balance: dynafold_guest::Decimal,
///         pub closed_at: Option<String> = "closedAt", // absent while None
///     }
/// }
/// ```
///
/// An attribute is named by `= "name"` after the type, else by the field's
/// name. Attributes are written in declared order, as the Go SDK writes a
/// struct's fields.
#[macro_export]
macro_rules! fields {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $ty:ty $(= $attr:literal)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: $ty, )*
        }

        impl ::core::clone::Clone for $name {
            fn clone(&self) -> Self {
                $name { $( $field: ::core::clone::Clone::clone(&self.$field), )* }
            }
            #[inline]
            fn clone_from(&mut self, o: &Self) {
                $( $crate::Field::assign(&mut self.$field, &o.$field); )*
            }
        }

        impl $crate::Fields for $name {
            fn write_fields(&self, w: &mut $crate::Attrs<'_>) {
                $( w.field($crate::__attr_name!($field $(, $attr)?), &self.$field); )*
            }
            fn read_field(&mut self, name: &[u8], v: $crate::ValueRef<'_>) -> ::core::result::Result<bool, $crate::DecodeError> {
                $(
                    if name == $crate::__attr_name!($field $(, $attr)?).as_bytes() {
                        if v.is_null() {
                            $crate::Field::decode_null(&mut self.$field);
                        } else {
                            $crate::Field::decode(&mut self.$field, v).map_err(|e| e.in_attribute(name))?;
                        }
                        return ::core::result::Result::Ok(true);
                    }
                )*
                ::core::result::Result::Ok(false)
            }
        }

        impl $crate::Field for $name {
            const TYPE: &'static str = ::core::stringify!($name);
            fn encode(&self, out: &mut ::std::vec::Vec<u8>) -> ::core::result::Result<(), ::std::string::String> {
                $crate::encode_map(out, self)
            }
            fn decode(&mut self, v: $crate::ValueRef<'_>) -> ::core::result::Result<(), $crate::DecodeError> {
                $crate::decode_map(self, v)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __attr_name {
    ($field:ident) => {
        ::core::stringify!($field)
    };
    ($field:ident, $attr:literal) => {
        $attr
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::encode_opt_item;

    crate::fields! {
        #[derive(Debug)]
        struct Cart {
            sku: String,
            qty: i64,
        }
    }

    fn encoded(attrs: &[(&str, Value)]) -> Vec<u8> {
        let it: Item = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let mut out = Vec::new();
        encode_opt_item(&mut out, Some(&it));
        out
    }

    // An event's data of the wrong type reads as bad event data, as the Go
    // SDK's EventDataError; malformed data and other items keep the ABI's
    // wording.
    #[test]
    fn event_data_of_the_wrong_type_reads_as_bad_event_data() {
        let tail = "does not match the plugin's type)";
        let bad = encoded(&[("sku", Value::s("x")), ("qty", Value::s("one"))]);
        let want = format!("event data: attribute \"qty\": cannot decode S into int64 (the event's data {}", tail);
        assert_eq!(decode_event_part::<Cart>(&bad, "data").err(), Some(want));
        let big = encoded(&[("qty", Value::n("1e400"))]);
        let want = format!("event metadata: attribute \"qty\": number \"1e400\" does not fit int64 (the event's metadata {}", tail);
        assert_eq!(decode_event_part::<Cart>(&big, "metadata").err(), Some(want));
        assert!(decode_fields::<Cart>(&bad).unwrap_err().starts_with("abi: malformed encoding: attribute \"qty\": cannot decode S into int64 at byte "));
        let good = encoded(&[("sku", Value::s("one"))]);
        let err = decode_event_part::<Cart>(&good[..good.len() - 2], "data").unwrap_err();
        assert!(err.starts_with("abi: malformed encoding: "), "{}", err);
    }

    // A row's stored state of the wrong type reads as such, as the Go SDK's
    // StateDataError; malformed state keeps the ABI's wording.
    #[test]
    fn state_of_the_wrong_type_reads_as_bad_stored_state() {
        let mut c = Cart::default();
        let big = encoded(&[("qty", Value::n("1e400"))]);
        let want = format!("attribute \"qty\": number \"1e400\" does not fit int64{}", STATE_DATA_HINT);
        assert_eq!(decode_state_as_read(&mut c, &big).err(), Some(want));
        let bad = encoded(&[("sku", Value::s("x")), ("qty", Value::s("one"))]);
        let want = format!("attribute \"qty\": cannot decode S into int64{}", STATE_DATA_HINT);
        assert_eq!(decode_state_as_read(&mut c, &bad).err(), Some(want));
        let good = encoded(&[("sku", Value::s("one"))]);
        let err = decode_state_as_read(&mut c, &good[..good.len() - 2]).unwrap_err();
        assert!(err.starts_with("abi: malformed encoding: "), "{}", err);
    }
}
