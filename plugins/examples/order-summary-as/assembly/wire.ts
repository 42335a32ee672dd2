// The dynafold ABI v1 byte encoding (abi/ABI.md §3) for AssemblyScript:
// a Reader over a region of linear memory and a growable Writer. Strings are
// kept as (pointer, length) views of the input, never copied or decoded into
// UTF-16, so a fold allocates nothing per event.

export const KIND_INVALID: u8 = 0;
export const KIND_S: u8 = 1;
export const KIND_N: u8 = 2;
export const KIND_B: u8 = 3;
export const KIND_BOOL: u8 = 4;
export const KIND_NULL: u8 = 5;
export const KIND_M: u8 = 6;
export const KIND_L: u8 = 7;
export const KIND_SS: u8 = 8;
export const KIND_NS: u8 = 9;
export const KIND_BS: u8 = 10;

/** MaxDepth is the deepest nesting of M and L values a decoder accepts. */
export const MAX_DEPTH: i32 = 64;

const KIND_NAMES: string[] = ["", "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"];

/** kindName returns the DynamoDB type descriptor of a kind byte. */
export function kindName(k: u8): string {
  return k < <u8>KIND_NAMES.length ? unchecked(KIND_NAMES[k]) : "?";
}

/**
 * Reader decodes the encoding from [base, end). Like the Go reader it never
 * throws: the first error is kept in err and every later read returns zero.
 */
export class Reader {
  base: usize = 0;
  pos: usize = 0;
  end: usize = 0;
  err: string | null = null;
  /** slen is the length of the last string read by str(). */
  slen: usize = 0;

  reset(ptr: usize, len: usize): void {
    this.base = ptr;
    this.pos = ptr;
    this.end = ptr + len;
    this.err = null;
    this.slen = 0;
  }

  @inline remaining(): usize {
    return this.end - this.pos;
  }

  @inline offset(): usize {
    return this.pos - this.base;
  }

  fail(msg: string): void {
    if (this.err === null) {
      this.err = "abi: malformed encoding: " + msg + " at byte " + (this.pos - this.base).toString();
    }
    this.pos = this.end;
  }

  @inline byte(): u8 {
    const p = this.pos;
    if (p < this.end) {
      this.pos = p + 1;
      return load<u8>(p);
    }
    this.fail("unexpected end");
    return 0;
  }

  uvarint(): u64 {
    let p = this.pos;
    if (p < this.end) {
      const b = load<u8>(p);
      if (b < 0x80) {
        this.pos = p + 1;
        return <u64>b;
      }
    }
    let x: u64 = 0;
    let shift: u64 = 0;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end) {
        this.fail("unexpected end in varint");
        return 0;
      }
      const b = load<u8>(this.pos);
      this.pos++;
      if (i == 9 && b > 1) {
        this.fail("varint overflows 64 bits");
        return 0;
      }
      if (b < 0x80) return x | (<u64>b << shift);
      x |= <u64>(b & 0x7f) << shift;
      shift += 7;
    }
    return x;
  }

  /** count reads an element count, each element taking at least min bytes. */
  count(min: usize): usize {
    const n = this.uvarint();
    if (min < 1) min = 1;
    if (n > <u64>(this.remaining() / min)) {
      this.fail("count " + n.toString() + " exceeds the input");
      return 0;
    }
    return <usize>n;
  }

  /** str reads a length-prefixed string: returns its address, slen its length. */
  str(): usize {
    const n = this.uvarint();
    if (this.err !== null) {
      this.slen = 0;
      return 0;
    }
    if (n > <u64>this.remaining()) {
      this.fail("length " + n.toString() + " exceeds the input");
      this.slen = 0;
      return 0;
    }
    const p = this.pos;
    this.slen = <usize>n;
    this.pos = p + <usize>n;
    return p;
  }

  fixed32(): u32 {
    const p = this.pos;
    if (p + 4 <= this.end) {
      this.pos = p + 4;
      return load<u32>(p);
    }
    this.fail("unexpected end");
    return 0;
  }

  /** raw skips n bytes and returns their address. */
  raw(n: usize): usize {
    const p = this.pos;
    if (n <= this.end - p) {
      this.pos = p + n;
      return p;
    }
    this.fail("unexpected end");
    return 0;
  }

  bool(): bool {
    const b = this.byte();
    if (b == 0) return false;
    if (b == 1) return true;
    this.fail("bad bool");
    return false;
  }

  /** skipValue skips one Value (kind byte and payload). */
  skipValue(depth: i32): void {
    this.skipPayload(this.byte(), depth);
  }

  skipPayload(k: u8, depth: i32): void {
    if (this.err !== null) return;
    if (depth > MAX_DEPTH) {
      this.fail("nesting deeper than " + MAX_DEPTH.toString());
      return;
    }
    switch (k) {
      case KIND_INVALID:
      case KIND_NULL:
        return;
      case KIND_S:
      case KIND_N:
      case KIND_B:
        this.str();
        return;
      case KIND_BOOL:
        this.bool();
        return;
      case KIND_M: {
        const n = this.count(2);
        this.skipEntries(n, depth + 1);
        return;
      }
      case KIND_L: {
        const n = this.count(1);
        for (let i: usize = 0; i < n && this.err === null; i++) this.skipValue(depth + 1);
        return;
      }
      case KIND_SS:
      case KIND_NS:
      case KIND_BS: {
        const n = this.count(1);
        for (let i: usize = 0; i < n && this.err === null; i++) this.str();
        return;
      }
    }
    this.fail("unknown kind " + k.toString());
  }

  skipEntries(n: usize, depth: i32): void {
    if (depth > MAX_DEPTH) {
      this.fail("nesting deeper than " + MAX_DEPTH.toString());
      return;
    }
    for (let i: usize = 0; i < n && this.err === null; i++) {
      this.str();
      this.skipValue(depth);
    }
  }

  /** optCount reads an optional item's header: -1 for absent, else its entry count. */
  optCount(): i64 {
    const c = this.uvarint();
    if (c == 0 || this.err !== null) return -1;
    if (c - 1 > <u64>(this.remaining() / 2)) {
      this.fail("count " + (c - 1).toString() + " exceeds the input");
      return -1;
    }
    return <i64>(c - 1);
  }

  /** skipOptItem skips an optional item. */
  skipOptItem(): void {
    const n = this.optCount();
    if (n > 0) this.skipEntries(<usize>n, 0);
  }

  /** sized reads a u32 size then that many bytes; slen is the size. */
  sized(): usize {
    const n = this.fixed32();
    const p = this.raw(<usize>n);
    this.slen = this.err === null ? <usize>n : 0;
    return p;
  }
}

/**
 * Bytes is a constant byte string in linear memory (the UTF-8 of s, or of s
 * length-prefixed with prefixed set), built once at start.
 */
export class Bytes {
  ptr: usize;
  len: usize;
  buf: ArrayBuffer;
  constructor(s: string, prefixed: bool = false) {
    let b = String.UTF8.encode(s);
    if (prefixed) {
      const n = b.byteLength;
      const c = new ArrayBuffer(n + 1); // constants are shorter than 128 bytes
      store<u8>(changetype<usize>(c), <u8>n);
      memory.copy(changetype<usize>(c) + 1, changetype<usize>(b), <usize>n);
      b = c;
    }
    this.buf = b;
    this.ptr = changetype<usize>(b);
    this.len = <usize>b.byteLength;
  }
}

/**
 * eq compares [p, p+n) with c without a loop for up to 16 bytes: loops are
 * costly under a host that enforces timeouts (wazero checks at every loop
 * iteration).
 */
export function eq(p: usize, n: usize, c: Bytes): bool {
  if (n != c.len) return false;
  const q = c.ptr;
  if (n >= 8) {
    if (n > 16) return memory.compare(p, q, n) == 0;
    return load<u64>(p) == load<u64>(q) && load<u64>(p + n - 8) == load<u64>(q + n - 8);
  }
  if (n >= 4) return load<u32>(p) == load<u32>(q) && load<u32>(p + n - 4) == load<u32>(q + n - 4);
  if (n == 0) return true;
  if (load<u8>(p) != load<u8>(q)) return false;
  return n == 1 || load<u16>(p + n - 2) == load<u16>(q + n - 2);
}

/** equalsAscii compares [a, a+alen) with the ASCII string s. */
export function equalsAscii(a: usize, alen: usize, s: string): bool {
  const n = s.length;
  if (<usize>n != alen) return false;
  for (let i = 0; i < n; i++) {
    if (<u32>load<u8>(a + <usize>i) != <u32>s.charCodeAt(i)) return false;
  }
  return true;
}

/** Writer is a growable byte buffer in unmanaged memory, reused across calls. */
export class Writer {
  ptr: usize = 0;
  len: usize = 0;
  cap: usize = 0;

  @inline reset(): void {
    this.len = 0;
  }

  grow(need: usize): void {
    let c = this.cap < 256 ? <usize>256 : this.cap;
    while (c < this.len + need) c <<= 1;
    this.ptr = this.ptr == 0 ? heap.alloc(c) : heap.realloc(this.ptr, c);
    this.cap = c;
  }

  @inline byte(b: u8): void {
    if (this.len + 1 > this.cap) this.grow(1);
    store<u8>(this.ptr + this.len, b);
    this.len++;
  }

  uvarint(x: u64): void {
    if (this.len + 10 > this.cap) this.grow(10);
    let p = this.ptr + this.len;
    while (x >= 0x80) {
      store<u8>(p++, <u8>(x | 0x80));
      x >>= 7;
    }
    store<u8>(p++, <u8>x);
    this.len = p - this.ptr;
  }

  /** bytes appends n raw bytes from src. */
  bytes(src: usize, n: usize): void {
    if (this.len + n > this.cap) this.grow(n);
    memory.copy(this.ptr + this.len, src, n);
    this.len += n;
  }

  /** put appends a constant. */
  @inline put(c: Bytes): void {
    this.bytes(c.ptr, c.len);
  }

  /** str appends a length-prefixed byte string. */
  str(src: usize, n: usize): void {
    this.uvarint(<u64>n);
    this.bytes(src, n);
  }

  /** ascii appends the bytes of an ASCII (or Latin-1) string, without prefix. */
  ascii(s: string): void {
    const n = s.length;
    if (this.len + <usize>n > this.cap) this.grow(<usize>n);
    const p = this.ptr + this.len;
    for (let i = 0; i < n; i++) store<u8>(p + <usize>i, <u8>s.charCodeAt(i));
    this.len += <usize>n;
  }

  /** strAscii appends an ASCII string with its length prefix. */
  strAscii(s: string): void {
    this.uvarint(<u64>s.length);
    this.ascii(s);
  }

  /** utf8 appends the UTF-8 bytes of any string, without prefix. */
  utf8(s: string): void {
    const b = String.UTF8.encode(s);
    this.bytes(changetype<usize>(b), <usize>b.byteLength);
  }
}
