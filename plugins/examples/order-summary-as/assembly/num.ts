// Numbers as the Go guest SDK reads and writes them (sdk-guest/number.go,
// floatfmt.go), so that this plugin's output is byte-for-byte the Go
// plugin's: decimal text is parsed exactly, and a float64 is written in Go's
// strconv.FormatFloat(f, 'g', -1, 64) form (shortest decimal that reads back
// as f; exponent form "1.5e+06" below 1e-4 and from 1e6 up).

import { Writer } from "./wire";
import { exactOk, parseExact, writeShortest } from "./exact";

const POW10: StaticArray<f64> = [
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/** parseOk is false when the last parseFloat/parseInt failed. */
export let parseOk: bool = true;

// parseExp parses a decimal integer with optional sign (strconv.Atoi).
function parseExp(p: usize, end: usize): i32 {
  if (p >= end) {
    parseOk = false;
    return 0;
  }
  let neg = false;
  const c0 = load<u8>(p);
  if (c0 == 0x2b || c0 == 0x2d) {
    neg = c0 == 0x2d;
    p++;
    if (p >= end) {
      parseOk = false;
      return 0;
    }
  }
  let v: i64 = 0;
  for (; p < end; p++) {
    const c = load<u8>(p);
    if (c < 0x30 || c > 0x39) {
      parseOk = false;
      return 0;
    }
    v = v * 10 + <i64>(c - 0x30);
    if (v > 100000) v = 100000; // only |e| <= 400 matters
  }
  return <i32>(neg ? -v : v);
}

// fastFloat is the Go SDK's exact fast path: an integer mantissa of at most
// 15 digits scaled by an exactly representable power of ten.
function fastFloat(p: usize, n: usize): f64 {
  let i: usize = 0;
  let neg = false;
  if (i < n && (load<u8>(p) == 0x2d || load<u8>(p) == 0x2b)) {
    neg = load<u8>(p) == 0x2d;
    i++;
  }
  let mant: u64 = 0;
  let digits = 0;
  let exp = 0;
  let sawDigit = false;
  let sawDot = false;
  for (; i < n; i++) {
    const ch = load<u8>(p + i);
    if (ch >= 0x30 && ch <= 0x39) {
      sawDigit = true;
      if (ch == 0x30 && digits == 0) {
        if (sawDot) exp--;
        continue;
      }
      if (digits >= 15) {
        parseOk = false;
        return 0;
      }
      mant = mant * 10 + <u64>(ch - 0x30);
      digits++;
      if (sawDot) exp--;
    } else if (ch == 0x2e && !sawDot) {
      sawDot = true;
    } else if (ch == 0x65 || ch == 0x45) {
      if (!sawDigit) {
        parseOk = false;
        return 0;
      }
      parseOk = true;
      const e = parseExp(p + i + 1, p + n);
      if (!parseOk || e > 400 || e < -400) {
        parseOk = false;
        return 0;
      }
      exp += e;
      i = n;
    } else {
      parseOk = false;
      return 0;
    }
  }
  if (!sawDigit) {
    parseOk = false;
    return 0;
  }
  let f = <f64>mant;
  if (mant == 0) {
    f = 0;
  } else if (exp == 0) {
    // exact
  } else if (exp > 0 && exp <= 22) {
    f *= unchecked(POW10[exp]);
  } else if (exp < 0 && exp >= -22) {
    f /= unchecked(POW10[-exp]);
  } else {
    parseOk = false;
    return 0;
  }
  parseOk = true;
  return neg ? -f : f;
}

// wellFormed reports whether [p, p+n) is a decimal number:
// [+-]digits[.digits][(e|E)[+-]digits], with at least one digit.
function wellFormed(p: usize, n: usize): bool {
  let i: usize = 0;
  if (i < n && (load<u8>(p) == 0x2d || load<u8>(p) == 0x2b)) i++;
  let digits = 0;
  for (; i < n && load<u8>(p + i) >= 0x30 && load<u8>(p + i) <= 0x39; i++) digits++;
  if (i < n && load<u8>(p + i) == 0x2e) {
    i++;
    for (; i < n && load<u8>(p + i) >= 0x30 && load<u8>(p + i) <= 0x39; i++) digits++;
  }
  if (digits == 0) return false;
  if (i < n && (load<u8>(p + i) == 0x65 || load<u8>(p + i) == 0x45)) {
    i++;
    if (i < n && (load<u8>(p + i) == 0x2d || load<u8>(p + i) == 0x2b)) i++;
    let ed = 0;
    for (; i < n && load<u8>(p + i) >= 0x30 && load<u8>(p + i) <= 0x39; i++) ed++;
    if (ed == 0) return false;
  }
  return i == n;
}

/**
 * parseNumber parses the decimal text [p, p+n) as a float64 like the Go
 * SDK's parseFloat (strconv.ParseFloat): parseOk is false when it is not a
 * number or does not fit (±Inf).
 */
export function parseNumber(p: usize, n: usize): f64 {
  const f = fastFloat(p, n);
  if (parseOk) return f;
  if (!wellFormed(p, n)) {
    parseOk = false;
    return 0;
  }
  const v = parseExact(p, n);
  parseOk = exactOk;
  return v;
}

/** parseInt64 parses [p, p+n) like the Go SDK's parseInt(s, 64). */
export function parseInt64(p: usize, n: usize): i64 {
  let i: usize = 0;
  let neg = false;
  if (n > 0 && load<u8>(p) == 0x2d) {
    neg = true;
    i = 1;
  }
  if (i < n && n - i <= 18) {
    let v: i64 = 0;
    for (; i < n; i++) {
      const ch = load<u8>(p + i);
      if (ch < 0x30 || ch > 0x39) break;
      v = v * 10 + <i64>(ch - 0x30);
    }
    if (i == n) {
      parseOk = true;
      return neg ? -v : v;
    }
  }
  const f = parseNumber(p, n);
  if (!parseOk || f != Math.trunc(f) || f < -9223372036854775808.0 || f >= 9223372036854775808.0) {
    parseOk = false;
    return 0;
  }
  return <i64>f;
}

/** writeInt appends v in decimal. */
export function writeInt(w: Writer, v: i64): void {
  if (v < 0) {
    w.byte(0x2d);
    writeUint(w, <u64>(-v));
  } else {
    writeUint(w, <u64>v);
  }
}

const digitBuf = new StaticArray<u8>(32);

function writeUint(w: Writer, v: u64): void {
  let i = 32;
  do {
    i--;
    unchecked((digitBuf[i] = <u8>(0x30 + <u32>(v % 10))));
    v /= 10;
  } while (v != 0);
  w.bytes(changetype<usize>(digitBuf) + <usize>i, <usize>(32 - i));
}

// roundHalfUp is Go's math.Round for x >= 0.
@inline function roundHalfUp(x: f64): f64 {
  const t = Math.floor(x);
  return x - t >= 0.5 ? t + 1 : t;
}

/**
 * writeFloat appends f exactly as Go's strconv.AppendFloat(dst, f, 'g', -1,
 * 64) (through the Go SDK's fast path for short decimals). f must be finite.
 */
export function writeFloat(w: Writer, f: f64): void {
  if (f == 0 && !(reinterpret<u64>(f) >> 63)) {
    w.byte(0x30);
    return;
  }
  if (f == Math.trunc(f) && f > -1e6 && f < 1e6 && f != 0) {
    writeInt(w, <i64>f);
    return;
  }
  const a = Math.abs(f);
  if (f != 0 && a >= 1e-4 && a < 1e6) {
    for (let k = 0; k <= 15; k++) {
      const m = roundHalfUp(a * unchecked(POW10[k]));
      if (m >= 9007199254740992.0) break;
      if (m / unchecked(POW10[k]) != a) continue;
      if (f < 0) w.byte(0x2d);
      const start = w.len;
      writeUint(w, <u64>m);
      if (k == 0) return;
      const nd = <i32>(w.len - start);
      if (nd <= k) {
        // 0.000ddd: move the digits right
        const digits = String.UTF8.decodeUnsafe(w.ptr + start, <usize>nd);
        w.len = start;
        w.byte(0x30);
        w.byte(0x2e);
        for (let i = nd; i < k; i++) w.byte(0x30);
        w.ascii(digits);
        return;
      }
      // insert the point k digits from the end
      w.byte(0);
      const at = w.ptr + w.len - 1 - <usize>k;
      memory.copy(at + 1, at, <usize>k);
      store<u8>(at, 0x2e);
      return;
    }
  }
  writeShortest(w, f);
}
