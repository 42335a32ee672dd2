// Exact decimal numbers for AssemblyScript plugins: the DynamoDB number (N)
// text parsed into digits and an exponent, added without rounding, checked
// against what DynamoDB stores, and written back in plain notation. The same
// steps and messages as the Go SDK's guest.Decimal (sdk-guest/decimal.go),
// so both plugins write the same bytes. Copy this file into a plugin of your
// own: it depends on nothing else.

/** Decimal is ±coef × 10^exp; coef has no leading or trailing zeros ("" is 0). */
export class Decimal {
  neg: bool = false;
  coef: string = "";
  exp: i32 = 0;

  /** isZero reports whether the number is 0. */
  isZero(): bool {
    return this.coef.length == 0;
  }
}

/** The most significant digits DynamoDB stores in a number. */
export const DECIMAL_DIGITS: i32 = 38;
export const ERR_DECIMAL_DIGITS = "decimal: more than 38 significant digits";
export const ERR_DECIMAL_RANGE = "decimal: outside the range DynamoDB stores (1E-130 to 1E+126)";

const MAX_EXPONENT: i32 = 1000000;

// normal builds ±digits × 10^exp in normal form; digits holds values 0–9
// and may have leading and trailing zeros.
function normal(neg: bool, digits: Array<i32>, exp: i32): Decimal {
  let lo = 0;
  let hi = digits.length;
  while (lo < hi && digits[lo] == 0) lo++;
  while (hi > lo && digits[hi - 1] == 0) {
    hi--;
    exp++;
  }
  const d = new Decimal();
  if (lo == hi) return d;
  let s = "";
  for (let i = lo; i < hi; i++) s += String.fromCharCode(0x30 + digits[i]);
  d.neg = neg;
  d.coef = s;
  d.exp = exp;
  return d;
}

/**
 * parseDecimal reads the number text at [p, p+n): an optional sign, digits
 * with an optional point, an optional exponent. null: not a number. The
 * result may still not fit DynamoDB: check it with decimalError.
 */
export function parseDecimal(p: usize, n: usize): Decimal | null {
  let i: usize = 0;
  let neg = false;
  if (i < n && (load<u8>(p) == 0x2d || load<u8>(p) == 0x2b)) {
    neg = load<u8>(p) == 0x2d;
    i++;
  }
  const digits = new Array<i32>();
  let count = 0;
  let frac = 0;
  let point = false;
  for (; i < n; i++) {
    const c = <i32>load<u8>(p + i);
    if (c >= 0x30 && c <= 0x39) {
      count++;
      if (point) frac++;
      if (c != 0x30 || digits.length > 0) digits.push(c - 0x30);
    } else if (c == 0x2e && !point) {
      point = true;
    } else break;
  }
  if (count == 0) return null;
  let exp: i32 = 0;
  if (i < n) {
    const e = load<u8>(p + i);
    if (e != 0x65 && e != 0x45) return null;
    i++;
    let eneg = false;
    if (i < n && (load<u8>(p + i) == 0x2d || load<u8>(p + i) == 0x2b)) {
      eneg = load<u8>(p + i) == 0x2d;
      i++;
    }
    if (i == n) return null;
    for (; i < n; i++) {
      const c = <i32>load<u8>(p + i);
      if (c < 0x30 || c > 0x39) return null;
      if (exp < MAX_EXPONENT) exp = exp * 10 + (c - 0x30);
    }
    if (eneg) exp = -exp;
  }
  return normal(neg, digits, exp - frac);
}

/** decimalError is null when DynamoDB can store d, else the reason. */
export function decimalError(d: Decimal): string | null {
  const n = d.coef.length;
  if (n == 0) return null;
  if (n > DECIMAL_DIGITS) return ERR_DECIMAL_DIGITS;
  if (d.exp < -130 || d.exp + n - 1 > 125) return ERR_DECIMAL_RANGE;
  return null;
}

// scaled returns d's magnitude as integer digits at exponent exp <= d.exp.
function scaled(d: Decimal, exp: i32): Array<i32> {
  const out = new Array<i32>();
  if (d.coef.length == 0) {
    out.push(0);
    return out;
  }
  for (let i = 0; i < d.coef.length; i++) out.push(d.coef.charCodeAt(i) - 0x30);
  for (let i = exp; i < d.exp; i++) out.push(0);
  return out;
}

function cmpDigits(x: Array<i32>, y: Array<i32>): i32 {
  if (x.length != y.length) return x.length < y.length ? -1 : 1;
  for (let i = 0; i < x.length; i++) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}

function addDigits(x: Array<i32>, y: Array<i32>): Array<i32> {
  if (x.length < y.length) {
    const t = x;
    x = y;
    y = t;
  }
  const out = new Array<i32>(x.length + 1);
  let carry = 0;
  for (let i = 0; i < x.length; i++) {
    let s = x[x.length - 1 - i] + carry;
    if (i < y.length) s += y[y.length - 1 - i];
    carry = s / 10;
    out[out.length - 1 - i] = s % 10;
  }
  out[0] = carry;
  return out;
}

// subDigits returns x - y for x >= y.
function subDigits(x: Array<i32>, y: Array<i32>): Array<i32> {
  const out = new Array<i32>(x.length);
  let borrow = 0;
  for (let i = 0; i < x.length; i++) {
    let s = x[x.length - 1 - i] - borrow;
    if (i < y.length) s -= y[y.length - 1 - i];
    borrow = 0;
    if (s < 0) {
      s += 10;
      borrow = 1;
    }
    out[out.length - 1 - i] = s;
  }
  return out;
}

/** decimalAdd returns a + b, exactly. */
export function decimalAdd(a: Decimal, b: Decimal): Decimal {
  if (a.isZero()) return b;
  if (b.isZero()) return a;
  const exp = a.exp < b.exp ? a.exp : b.exp;
  const x = scaled(a, exp);
  const y = scaled(b, exp);
  if (a.neg == b.neg) return normal(a.neg, addDigits(x, y), exp);
  const c = cmpDigits(x, y);
  if (c == 0) return new Decimal();
  if (c > 0) return normal(a.neg, subDigits(x, y), exp);
  return normal(b.neg, subDigits(y, x), exp);
}

/** decimalString returns d in plain notation, as DynamoDB returns numbers. */
export function decimalString(d: Decimal): string {
  if (d.isZero()) return "0";
  let s = d.neg ? "-" : "";
  const p = d.coef.length + d.exp;
  if (d.exp >= 0) {
    s += d.coef;
    for (let i = 0; i < d.exp; i++) s += "0";
  } else if (p > 0) {
    s += d.coef.substring(0, p) + "." + d.coef.substring(p);
  } else {
    s += "0.";
    for (let i = 0; i < -p; i++) s += "0";
    s += d.coef;
  }
  return s;
}
