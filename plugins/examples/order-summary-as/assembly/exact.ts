// Exact conversions between decimal text and float64 with small big
// integers, the slow paths of num.ts: parseExact (correctly rounded, like
// strconv.ParseFloat) and writeShortest (the shortest digits that read back,
// closest when several are as short, in Go's %g layout).

import { Writer } from "./wire";

/** exactOk is false when the last parseExact overflowed float64. */
export let exactOk: bool = true;

// Big is a small arbitrary-precision natural number (little-endian u32
// limbs), enough for the exact shortest-digit search of any float64.
const LIMBS = 64;

class Big {
  n: i32 = 0;
  d: StaticArray<u32> = new StaticArray<u32>(LIMBS);

  setU64(v: u64): void {
    this.n = 0;
    while (v != 0) {
      unchecked((this.d[this.n++] = <u32>v));
      v >>= 32;
    }
  }

  copy(o: Big): void {
    this.n = o.n;
    for (let i = 0; i < o.n; i++) unchecked((this.d[i] = o.d[i]));
  }

  shl(bits: i32): void {
    const limbs = bits >> 5;
    const b = bits & 31;
    if (this.n == 0) return;
    if (b != 0) {
      let carry: u32 = 0;
      for (let i = 0; i < this.n; i++) {
        const x = unchecked(this.d[i]);
        unchecked((this.d[i] = (x << b) | carry));
        carry = x >> (32 - b);
      }
      if (carry != 0) unchecked((this.d[this.n++] = carry));
    }
    if (limbs != 0) {
      for (let i = this.n - 1; i >= 0; i--) unchecked((this.d[i + limbs] = this.d[i]));
      for (let i = 0; i < limbs; i++) unchecked((this.d[i] = 0));
      this.n += limbs;
    }
  }

  mulSmall(m: u32): void {
    let carry: u64 = 0;
    for (let i = 0; i < this.n; i++) {
      const x = <u64>unchecked(this.d[i]) * <u64>m + carry;
      unchecked((this.d[i] = <u32>x));
      carry = x >> 32;
    }
    if (carry != 0) unchecked((this.d[this.n++] = <u32>carry));
  }

  add(o: Big): void {
    const n = this.n > o.n ? this.n : o.n;
    let carry: u64 = 0;
    for (let i = 0; i < n; i++) {
      const a = i < this.n ? <u64>unchecked(this.d[i]) : 0;
      const b = i < o.n ? <u64>unchecked(o.d[i]) : 0;
      const x = a + b + carry;
      unchecked((this.d[i] = <u32>x));
      carry = x >> 32;
    }
    this.n = n;
    if (carry != 0) unchecked((this.d[this.n++] = <u32>carry));
  }

  // sub subtracts o (o <= this).
  sub(o: Big): void {
    let borrow: i64 = 0;
    for (let i = 0; i < this.n; i++) {
      let x = <i64>unchecked(this.d[i]) - (i < o.n ? <i64>unchecked(o.d[i]) : 0) - borrow;
      borrow = 0;
      if (x < 0) {
        x += 0x100000000;
        borrow = 1;
      }
      unchecked((this.d[i] = <u32>x));
    }
    while (this.n > 0 && unchecked(this.d[this.n - 1]) == 0) this.n--;
  }

  addSmall(a: u32): void {
    let carry: u64 = <u64>a;
    for (let i = 0; i < this.n && carry != 0; i++) {
      const x = <u64>unchecked(this.d[i]) + carry;
      unchecked((this.d[i] = <u32>x));
      carry = x >> 32;
    }
    if (carry != 0) unchecked((this.d[this.n++] = <u32>carry));
  }

  bitLen(): i32 {
    if (this.n == 0) return 0;
    return (this.n - 1) * 32 + (32 - <i32>clz(unchecked(this.d[this.n - 1])));
  }

  // bits returns the 64 bits of this number starting at bit lo.
  bits64(lo: i32): u64 {
    let v: u64 = 0;
    for (let b = 0; b < 64; b += 32) {
      const bit = lo + b;
      const i = bit >> 5;
      const sh = bit & 31;
      let w: u64 = 0;
      if (i < this.n) w = <u64>unchecked(this.d[i]) >> sh;
      if (sh != 0 && i + 1 < this.n) w |= <u64>unchecked(this.d[i + 1]) << (32 - sh);
      v |= (w & 0xffffffff) << b;
    }
    return v;
  }

  // anyBelow reports whether any of the lowest nbits bits is set.
  anyBelow(nbits: i32): bool {
    const full = nbits >> 5;
    for (let i = 0; i < full && i < this.n; i++) if (unchecked(this.d[i]) != 0) return true;
    const rest = nbits & 31;
    if (rest != 0 && full < this.n) return (unchecked(this.d[full]) & ((<u32>1 << rest) - 1)) != 0;
    return false;
  }

  isZero(): bool {
    return this.n == 0;
  }

  cmp(o: Big): i32 {
    if (this.n != o.n) return this.n > o.n ? 1 : -1;
    for (let i = this.n - 1; i >= 0; i--) {
      const a = unchecked(this.d[i]);
      const b = unchecked(o.d[i]);
      if (a != b) return a > b ? 1 : -1;
    }
    return 0;
  }
}

const bR = new Big();
const bM = new Big();
const bP = new Big();
const bD = new Big();

// makeDouble returns the float64 nearest to q * 2^e2 (+ a nonzero fraction
// below q's last bit when sticky), rounding half to even, with subnormals
// and overflow (exactOk false) handled.
function makeDouble(q: u64, e2: i32, sticky: bool): f64 {
  if (q == 0) return 0;
  const bl = 64 - <i32>clz(q);
  const lead = bl - 1 + e2; // exponent of the leading bit
  let want = 53;
  if (lead < -1022) want = 53 - (-1022 - lead);
  let shift = bl - want;
  let m: u64;
  if (shift > 0) {
    if (shift > 64) {
      return 0; // far below the smallest subnormal
    }
    const dropped = shift == 64 ? q : q & ((<u64>1 << shift) - 1);
    const half = <u64>1 << (shift - 1);
    m = shift == 64 ? 0 : q >> shift;
    if (dropped > half || (dropped == half && (sticky || (m & 1) != 0))) m++;
  } else {
    m = q << (-shift);
  }
  // m * 2^(e2 + shift)
  let e = e2 + shift;
  if (want == 53 || m >= (<u64>1 << 52)) {
    if (m == <u64>1 << 53) {
      m >>= 1;
      e++;
    }
    if (m < (<u64>1 << 52)) {
      // a subnormal that did not round up to the smallest normal
      return reinterpret<f64>(m);
    }
    const biased = e + 52 + 1023;
    if (biased >= 2047) {
      exactOk = false;
      return 0;
    }
    if (biased <= 0) return reinterpret<f64>(m); // m == 2^52 at the subnormal edge
    return reinterpret<f64>((<u64>biased << 52) | (m & 0xfffffffffffff));
  }
  return reinterpret<f64>(m); // subnormal: exponent field 0
}

// parseExact parses a well-formed decimal text exactly (correctly rounded,
// like strconv.ParseFloat) with big integers: the slow path for texts with
// more than 15 significant digits or large exponents.
export function parseExact(p: usize, n: usize): f64 {
  let i: usize = 0;
  let neg = false;
  if (load<u8>(p) == 0x2d || load<u8>(p) == 0x2b) {
    neg = load<u8>(p) == 0x2d;
    i++;
  }
  bM.setU64(0);
  let nd = 0; // significant digits taken
  let exp: i32 = 0;
  let sawDot = false;
  let dropped = false; // nonzero digits beyond what we keep
  for (; i < n; i++) {
    const c = load<u8>(p + i);
    if (c == 0x2e) {
      sawDot = true;
      continue;
    }
    if (c == 0x65 || c == 0x45) break;
    const d = <u32>(c - 0x30);
    if (d == 0 && nd == 0) {
      if (sawDot) exp--;
      continue;
    }
    if (nd < 40) {
      bM.mulSmall(10);
      bM.addSmall(d);
      nd++;
      if (sawDot) exp--;
    } else {
      if (d != 0) dropped = true;
      if (!sawDot) exp++;
    }
  }
  if (i < n) {
    i++;
    let eneg = false;
    if (load<u8>(p + i) == 0x2d || load<u8>(p + i) == 0x2b) {
      eneg = load<u8>(p + i) == 0x2d;
      i++;
    }
    let ev: i32 = 0;
    for (; i < n; i++) {
      if (ev < 100000) ev = ev * 10 + <i32>(load<u8>(p + i) - 0x30);
    }
    exp += eneg ? -ev : ev;
  }
  exactOk = true;
  if (nd == 0) return neg ? -0.0 : 0.0;
  if (nd + exp > 310) {
    exactOk = false; // beyond MaxFloat64: strconv reports a range error
    return 0;
  }
  if (nd + exp < -330) return neg ? -0.0 : 0.0;
  // At most 40 significant digits are kept exactly, the rest only as a
  // sticky bit: exact for every DynamoDB number (38 digits at most); a longer
  // text could in principle straddle a halfway point (see README).
  let v: f64;
  if (exp >= 0) {
    for (let k = 0; k < exp; k++) bM.mulSmall(10);
    const bl = bM.bitLen();
    if (bl <= 64) {
      v = makeDouble(bM.bits64(0), 0, dropped);
    } else {
      v = makeDouble(bM.bits64(bl - 64), bl - 64, dropped || bM.anyBelow(bl - 64));
    }
  } else {
    bP.setU64(1);
    for (let k = 0; k < -exp; k++) bP.mulSmall(10);
    // q = floor(M * 2^s / P) has 62 or 63 bits
    const s = 62 - (bM.bitLen() - bP.bitLen());
    if (s >= 0) bM.shl(s);
    else bP.shl(-s);
    let q: u64 = 0;
    for (let b = bM.bitLen() - bP.bitLen(); b >= 0; b--) {
      bD.copy(bP);
      bD.shl(b);
      if (bM.cmp(bD) >= 0) {
        bM.sub(bD);
        q |= <u64>1 << b;
      }
    }
    v = makeDouble(q, -s, dropped || !bM.isZero());
  }
  if (!exactOk) return 0;
  return neg ? -v : v;
}
const bS = new Big();
const bMp = new Big();
const bMm = new Big();
const bT = new Big();
const shortDigits = new StaticArray<u8>(32);

// shortest computes the shortest decimal digits that read back as v > 0
// (Burger & Dybvig's free-format algorithm on exact integers), choosing the
// closest when several are as short, as Go's strconv does. It returns the
// digit count; the value is 0.d1d2... * 10^shortExp.
let shortExp: i32 = 0;

function shortest(v: f64): i32 {
  const bits = reinterpret<u64>(v);
  const be = <i32>((bits >> 52) & 0x7ff);
  let f = bits & 0xfffffffffffff;
  let e: i32;
  if (be == 0) {
    e = -1074;
  } else {
    f |= <u64>1 << 52;
    e = be - 1075;
  }
  const even = (f & 1) == 0;
  const pow2 = be > 1 && f == <u64>1 << 52;
  // r/s = v, mp/s and mm/s are the distances to the upper and lower halfway points.
  if (e >= 0) {
    bR.setU64(f);
    bR.shl(e + (pow2 ? 2 : 1));
    bS.setU64(pow2 ? 4 : 2);
    bMp.setU64(1);
    bMp.shl(e + (pow2 ? 1 : 0));
    bMm.setU64(1);
    bMm.shl(e);
  } else {
    bR.setU64(f);
    bR.shl(pow2 ? 2 : 1);
    bS.setU64(1);
    bS.shl(-e + (pow2 ? 2 : 1));
    bMp.setU64(pow2 ? 2 : 1);
    bMm.setU64(1);
  }
  let k = <i32>Math.ceil(Math.log10(v) - 1e-10);
  if (k >= 0) {
    for (let i = 0; i < k; i++) bS.mulSmall(10);
  } else {
    for (let i = 0; i < -k; i++) {
      bR.mulSmall(10);
      bMp.mulSmall(10);
      bMm.mulSmall(10);
    }
  }
  // fix k so that 10^(k-1) <= high < 10^k
  let fixed = false;
  while (!fixed) {
    bT.copy(bR);
    bT.add(bMp);
    const c = bT.cmp(bS);
    if (c > 0 || (even && c == 0)) {
      bS.mulSmall(10);
      k++;
      continue;
    }
    bT.mulSmall(10);
    const c2 = bT.cmp(bS);
    if (c2 < 0 || (!even && c2 == 0)) {
      bR.mulSmall(10);
      bMp.mulSmall(10);
      bMm.mulSmall(10);
      k--;
      continue;
    }
    fixed = true;
  }
  shortExp = k;
  let nd = 0;
  let more = true;
  while (more) {
    bR.mulSmall(10);
    bMp.mulSmall(10);
    bMm.mulSmall(10);
    let d: u32 = 0;
    while (bR.cmp(bS) >= 0) {
      bR.sub(bS);
      d++;
    }
    const cl = bR.cmp(bMm);
    const tc1 = cl < 0 || (even && cl == 0);
    bT.copy(bR);
    bT.add(bMp);
    const ch = bT.cmp(bS);
    const tc2 = ch > 0 || (even && ch == 0);
    if (!tc1 && !tc2) {
      unchecked((shortDigits[nd++] = <u8>(0x30 + d)));
      if (nd >= 30) more = false;
      continue;
    }
    if (tc1 && tc2) {
      bT.copy(bR);
      bT.add(bR);
      const c = bT.cmp(bS);
      if (c > 0 || (c == 0 && (d & 1) == 1)) d++;
    } else if (tc2) {
      d++;
    }
    unchecked((shortDigits[nd++] = <u8>(0x30 + d)));
    more = false;
  }
  return nd;
}

// writeShortest formats f in Go's %g shortest form: exponent form when the
// decimal exponent is below -4 or from 6 up (the precision Go uses to
// decide for shortest formatting), else plain.
export function writeShortest(w: Writer, f: f64): void {
  if (f < 0) w.byte(0x2d);
  const nd = shortest(Math.abs(f));
  const dp = shortExp;
  const exp = dp - 1;
  if (exp < -4 || exp >= 6) {
    w.byte(unchecked(shortDigits[0]));
    if (nd > 1) {
      w.byte(0x2e);
      w.bytes(changetype<usize>(shortDigits) + 1, <usize>(nd - 1));
    }
    w.byte(0x65);
    let e = exp;
    if (e < 0) {
      w.byte(0x2d);
      e = -e;
    } else {
      w.byte(0x2b);
    }
    if (e < 10) {
      w.byte(0x30);
      w.byte(<u8>(0x30 + e));
    } else if (e < 100) {
      w.byte(<u8>(0x30 + e / 10));
      w.byte(<u8>(0x30 + (e % 10)));
    } else {
      w.byte(<u8>(0x30 + e / 100));
      w.byte(<u8>(0x30 + ((e / 10) % 10)));
      w.byte(<u8>(0x30 + (e % 10)));
    }
    return;
  }
  // %f with max(nd-dp, 0) fractional digits
  if (dp > 0) {
    for (let j = 0; j < dp; j++) w.byte(j < nd ? unchecked(shortDigits[j]) : 0x30);
  } else {
    w.byte(0x30);
  }
  const prec = nd - dp;
  if (prec > 0) {
    w.byte(0x2e);
    for (let j = 1; j <= prec; j++) {
      const at = dp + j - 1;
      w.byte(at >= 0 && at < nd ? unchecked(shortDigits[at]) : 0x30);
    }
  }
}
