//! The byte encoding of abi/ABI.md §3: a [`Reader`] over a request that
//! keeps the first error, and the writers of responses.

use std::fmt::Write as _;

/// The deepest nesting of `M` and `L` values a decoder accepts.
pub const MAX_DEPTH: usize = 64;

/// The kind bytes of values (ABI.md §3.1).
pub mod kind {
    /// No value: only where a value may be absent, never inside items.
    pub const ABSENT: u8 = 0;
    /// A string.
    pub const S: u8 = 1;
    /// A number, as its exact decimal text.
    pub const N: u8 = 2;
    /// Raw bytes.
    pub const B: u8 = 3;
    /// A boolean.
    pub const BOOL: u8 = 4;
    /// NULL.
    pub const NULL: u8 = 5;
    /// A map of attributes.
    pub const M: u8 = 6;
    /// A list of values.
    pub const L: u8 = 7;
    /// A set of strings.
    pub const SS: u8 = 8;
    /// A set of numbers (decimal texts).
    pub const NS: u8 = 9;
    /// A set of byte strings.
    pub const BS: u8 = 10;

    /// The DynamoDB type descriptor of a kind ("S", "N", …; "?" for an
    /// unknown kind, "" for absent).
    pub fn name(k: u8) -> &'static str {
        const NAMES: [&str; 11] = ["", "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"];
        NAMES.get(k as usize).copied().unwrap_or("?")
    }
}

/// Reads the encoding from a byte slice. Its methods never panic: the first
/// error is kept ([`Reader::err`]) and every later read returns a zero
/// value. Strings and byte strings are slices of the input.
#[derive(Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    off: usize,
    err: Option<String>,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, from its start.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, off: 0, err: None }
    }

    /// The bytes read so far.
    pub fn offset(&self) -> usize {
        self.off
    }

    /// The bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.off
    }

    /// The input after what was read.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.off..]
    }

    /// The first error met, if any: `abi: malformed encoding: WHAT at byte N`.
    pub fn err(&self) -> Option<&str> {
        self.err.as_deref()
    }

    /// Whether no error was met.
    pub fn ok(&self) -> bool {
        self.err.is_none()
    }

    /// Takes the first error, leaving none.
    pub fn take_err(&mut self) -> Option<String> {
        self.err.take()
    }

    /// Records a decoding error (unless one is kept already) and moves to
    /// the end of the input, so later reads fail fast.
    pub fn fail(&mut self, what: &str) {
        if self.err.is_none() {
            let mut m = String::with_capacity(40 + what.len());
            let _ = write!(m, "abi: malformed encoding: {} at byte {}", what, self.off);
            self.err = Some(m);
        }
        self.off = self.buf.len();
    }

    /// Fails unless every byte was read.
    pub fn end(&mut self) -> Result<(), String> {
        if self.err.is_none() && self.off != self.buf.len() {
            let n = self.buf.len() - self.off;
            self.fail(&format!("{} trailing bytes", n));
        }
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Reads one byte.
    #[inline]
    pub fn byte(&mut self) -> u8 {
        if let Some(&b) = self.buf.get(self.off) {
            self.off += 1;
            return b;
        }
        self.fail("unexpected end");
        0
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    #[inline]
    pub fn uvarint(&mut self) -> u64 {
        if let Some(&b) = self.buf.get(self.off) {
            if b < 0x80 {
                self.off += 1;
                return b as u64;
            }
        }
        self.uvarint_slow()
    }

    fn uvarint_slow(&mut self) -> u64 {
        let mut x = 0u64;
        let mut shift = 0u32;
        for i in 0..10 {
            let b = match self.buf.get(self.off) {
                Some(&b) => b,
                None => {
                    self.fail("unexpected end in varint");
                    return 0;
                }
            };
            self.off += 1;
            if i == 9 && b > 1 {
                self.fail("varint overflows 64 bits");
                return 0;
            }
            if b < 0x80 {
                return x | (b as u64) << shift;
            }
            x |= ((b & 0x7f) as u64) << shift;
            shift += 7;
        }
        x
    }

    /// Reads an element count and checks it against the bytes left, each
    /// element taking at least `min` bytes: a hostile count never makes a
    /// decoder allocate more than the input can fill.
    pub fn count(&mut self, min: usize) -> usize {
        let n = self.uvarint();
        let min = min.max(1);
        if n > (self.remaining() / min) as u64 {
            self.fail(&format!("count {} exceeds the input", n));
            return 0;
        }
        n as usize
    }

    /// Reads a length-prefixed byte string.
    #[inline]
    pub fn bytes(&mut self) -> &'a [u8] {
        let o = self.off;
        if let Some(&n) = self.buf.get(o) {
            let n = n as usize;
            if n < 0x80 && n < self.buf.len() - o {
                self.off = o + 1 + n;
                return &self.buf[o + 1..o + 1 + n];
            }
        }
        self.bytes_slow()
    }

    fn bytes_slow(&mut self) -> &'a [u8] {
        let n = self.uvarint();
        if self.err.is_some() {
            return &[];
        }
        if n > self.remaining() as u64 {
            self.fail(&format!("length {} exceeds the input", n));
            return &[];
        }
        let s = &self.buf[self.off..self.off + n as usize];
        self.off += n as usize;
        s
    }

    /// Skips a length-prefixed string.
    pub fn skip_bytes(&mut self) {
        self.bytes();
    }

    /// Reads a 4-byte little-endian unsigned integer.
    pub fn fixed32(&mut self) -> u32 {
        let o = self.off;
        if o + 4 <= self.buf.len() {
            self.off = o + 4;
            let b = &self.buf[o..o + 4];
            return u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        self.fail("unexpected end");
        0
    }

    /// Reads the next `n` bytes.
    pub fn raw(&mut self, n: usize) -> &'a [u8] {
        if n <= self.remaining() {
            let s = &self.buf[self.off..self.off + n];
            self.off += n;
            return s;
        }
        self.fail("unexpected end");
        &[]
    }

    /// Reads a 4-byte size and that many bytes (an event's data, an evolve
    /// request's key and state): empty when they do not fit.
    #[inline(always)]
    pub fn sized(&mut self) -> &'a [u8] {
        let o = self.off;
        if o + 4 <= self.buf.len() {
            let b = &self.buf[o..o + 4];
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
            if n <= self.buf.len() - o - 4 {
                self.off = o + 4 + n;
                return &self.buf[o + 4..o + 4 + n];
            }
        }
        let n = self.fixed32();
        self.raw(n as usize)
    }

    /// Reads a bool byte, which must be 0 or 1.
    pub fn bool(&mut self) -> bool {
        match self.byte() {
            0 => false,
            1 => true,
            _ => {
                if self.err.is_none() {
                    self.fail("bad bool");
                }
                false
            }
        }
    }

    /// Reads an optional item's header: `None` for absent (or on error),
    /// else its entry count.
    pub fn opt_count(&mut self) -> Option<usize> {
        let c = self.uvarint();
        if c == 0 || self.err.is_some() {
            return None;
        }
        if c - 1 > (self.remaining() / 2) as u64 {
            self.fail(&format!("count {} exceeds the input", c - 1));
            return None;
        }
        Some((c - 1) as usize)
    }

    /// Skips one value (kind byte and payload).
    pub fn skip_value(&mut self) {
        self.skip(0)
    }

    fn skip(&mut self, depth: usize) {
        if depth > MAX_DEPTH {
            self.fail(&format!("nesting deeper than {}", MAX_DEPTH));
            return;
        }
        let k = self.byte();
        self.skip_payload(k, depth);
    }

    /// Skips the payload of a value whose kind byte `k` was read.
    pub fn skip_payload(&mut self, k: u8, depth: usize) {
        if self.err.is_some() {
            return;
        }
        match k {
            kind::ABSENT | kind::NULL => {}
            kind::S | kind::N | kind::B => self.skip_bytes(),
            kind::BOOL => {
                self.bool();
            }
            kind::M => {
                if depth + 1 > MAX_DEPTH {
                    self.fail(&format!("nesting deeper than {}", MAX_DEPTH));
                    return;
                }
                let n = self.count(2);
                for _ in 0..n {
                    if self.err.is_some() {
                        break;
                    }
                    self.skip_bytes();
                    self.skip(depth + 1);
                }
            }
            kind::L => {
                let n = self.count(1);
                for _ in 0..n {
                    if self.err.is_some() {
                        break;
                    }
                    self.skip(depth + 1);
                }
            }
            kind::SS | kind::NS | kind::BS => {
                let n = self.count(1);
                for _ in 0..n {
                    if self.err.is_some() {
                        break;
                    }
                    self.skip_bytes();
                }
            }
            _ => self.fail(&format!("unknown kind {}", k)),
        }
    }

    /// Skips an optional item.
    pub fn skip_opt_item(&mut self) {
        if let Some(n) = self.opt_count() {
            for _ in 0..n {
                if self.err.is_some() {
                    break;
                }
                self.skip_bytes();
                self.skip(1);
            }
        }
    }
}

/// Appends `x` as an unsigned LEB128 varint.
#[inline]
pub fn put_uvarint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Appends a length-prefixed byte string.
#[inline]
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    if b.len() < 0x80 {
        out.push(b.len() as u8);
    } else {
        put_uvarint(out, b.len() as u64);
    }
    out.extend_from_slice(b);
}

/// Appends a length-prefixed string.
#[inline]
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes())
}

/// Appends a bool byte.
#[inline]
pub fn put_bool(out: &mut Vec<u8>, b: bool) {
    out.push(b as u8);
}

/// Appends a list of strings: count, then each.
pub fn put_strs(out: &mut Vec<u8>, ss: &[&str]) {
    put_uvarint(out, ss.len() as u64);
    for s in ss {
        put_str(out, s);
    }
}

/// Overwrites a varint count reserved as one byte at `at` of `out` with
/// `n`, making room when it takes more than one byte.
pub(crate) fn patch_count(out: &mut Vec<u8>, at: usize, n: u64) {
    if n < 0x80 {
        out[at] = n as u8;
        return;
    }
    let mut v = Vec::with_capacity(10);
    put_uvarint(&mut v, n);
    out[at] = v[0];
    let tail: Vec<u8> = v[1..].to_vec();
    let len = tail.len();
    out.splice(at + 1..at + 1, tail);
    debug_assert!(len > 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for x in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            let mut b = Vec::new();
            put_uvarint(&mut b, x);
            let mut r = Reader::new(&b);
            assert_eq!(r.uvarint(), x);
            assert!(r.end().is_ok());
        }
        let mut r = Reader::new(&[0xff; 11]);
        r.uvarint();
        assert_eq!(r.err(), Some("abi: malformed encoding: varint overflows 64 bits at byte 10"));
    }

    #[test]
    fn hostile_counts_fail() {
        let mut r = Reader::new(&[0x80, 0x01, 1, 2]);
        assert_eq!(r.count(1), 0);
        assert!(r.err().unwrap().contains("count 128 exceeds the input"));
    }

    #[test]
    fn patched_counts_grow() {
        let mut b = vec![9, 0, 7];
        patch_count(&mut b, 1, 300);
        assert_eq!(b, vec![9, 0xac, 0x02, 7]);
    }
}
