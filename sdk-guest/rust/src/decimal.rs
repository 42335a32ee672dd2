//! Exact decimal numbers: the arithmetic type of DynamoDB's N.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// The most significant digits DynamoDB stores in a number.
pub const DECIMAL_DIGITS: usize = 38;

/// Exponents read from a text are bounded by this (larger ones saturate and
/// fail the range check unless the number is zero).
const MAX_EXPONENT: i64 = 1_000_000;

/// 10^38: coefficients below it are kept as a `u128`.
const SMALL_LIMIT: u128 = 100_000_000_000_000_000_000_000_000_000_000_000_000;

/// An exact decimal number, the arithmetic type of DynamoDB numbers (N):
/// money, quantities, anything summed where `f64` would drift (`0.1 + 0.2`
/// is `0.30000000000000004` in `f64`, `0.3` in `Decimal`).
///
/// Arithmetic ([`add`](Decimal::add), [`sub`](Decimal::sub),
/// [`mul`](Decimal::mul), [`neg`](Decimal::neg)) is exact and unbounded in
/// digits; [`round`](Decimal::round) brings a result to a number of
/// decimal places with a stated [`Rounding`]. DynamoDB stores at most 38
/// significant digits with a magnitude between 1E-130 and 9.99…E+125:
/// [`Decimal::parse`] refuses anything else, [`valid`](Decimal::valid)
/// reports whether a result fits, and a state attribute that does not fit
/// fails to encode instead of being rounded silently.
///
/// Decimals are kept in one normal form, so `==` compares numbers (`1.50`
/// equals `1.5`). The default is 0. The text ([`Display`](fmt::Display)) is
/// plain notation without an exponent or trailing zeros, as DynamoDB
/// returns numbers and as the Go SDK writes them (`12.5`, `-0.001`, `300`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    coef: Coef,
    exp: i32,
    neg: bool,
}

/// A coefficient without trailing zeros: below 10^38 in a u128 (0 is
/// zero), else its decimal digits.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Coef {
    Small(u128),
    Big(Box<[u8]>),
}

impl Default for Decimal {
    fn default() -> Self {
        Decimal::ZERO
    }
}

/// Why a text is not a decimal DynamoDB stores, or a result does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// The text is not a decimal number.
    Syntax,
    /// More significant digits than DynamoDB stores (38).
    Digits,
    /// A magnitude DynamoDB cannot store.
    Range,
}

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecimalError::Syntax => "decimal: not a number",
            DecimalError::Digits => "decimal: more than 38 significant digits",
            DecimalError::Range => "decimal: outside the range DynamoDB stores (1E-130 to 1E+126)",
        })
    }
}

impl std::error::Error for DecimalError {}

/// How [`Decimal::round`] treats the digits it drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// To the nearest, ties to the even digit (banker's rounding): 2.345 →
    /// 2.34, 2.355 → 2.36.
    HalfEven,
    /// To the nearest, ties away from zero: 2.345 → 2.35, -2.345 → -2.35.
    HalfUp,
    /// Toward zero: 2.349 → 2.34, -2.349 → -2.34.
    Down,
}

const POW10: [u64; 20] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
    10_000_000_000_000_000_000,
];

fn pow10_128(k: u32) -> u128 {
    if (k as usize) < POW10.len() {
        POW10[k as usize] as u128
    } else {
        (POW10[19] as u128) * POW10[(k - 19) as usize] as u128
    }
}

/// The number of decimal digits of v (0 for 0).
fn digits_u128(v: u128) -> usize {
    if v == 0 {
        return 0;
    }
    if v <= u64::MAX as u128 {
        let v = v as u64;
        let mut n = (64 - v.leading_zeros()) as usize * 1233 >> 12;
        if v >= POW10[n] {
            n += 1;
        }
        return n;
    }
    let mut n = 20;
    while n < 39 && v >= pow10_128(n as u32) {
        n += 1;
    }
    n
}

/// Drops the trailing zeros of v (not 0), raising exp by as many.
#[inline]
fn trim_zeros(v: u128, exp: i64) -> (u128, i64) {
    if v >> 64 == 0 {
        let (s, e) = trim_zeros64(v as u64, exp);
        return (s as u128, e);
    }
    trim_zeros128(v, exp)
}

/// trim_zeros of a coefficient that fits 64 bits: native divisions only
/// (a 128-bit one is a call into compiler-rt in a Wasm guest).
#[inline(always)]
fn trim_zeros64(mut s: u64, mut exp: i64) -> (u64, i64) {
    while s % 10 == 0 {
        s /= 10;
        exp += 1;
    }
    (s, exp)
}

#[cold]
#[inline(never)]
fn trim_zeros128(mut v: u128, mut exp: i64) -> (u128, i64) {
    while v > u64::MAX as u128 && v % 10 == 0 {
        v /= 10;
        exp += 1;
    }
    if v <= u64::MAX as u128 {
        let (s, e) = trim_zeros64(v as u64, exp);
        return (s as u128, e);
    }
    (v, exp)
}

/// The largest coefficient that can be scaled by 10^k within 64 bits.
const MAX_SCALABLE64: [u64; 20] = {
    let mut m = [0u64; 20];
    let mut k = 0;
    while k < 20 {
        m[k] = u64::MAX / POW10[k];
        k += 1;
    }
    m
};

#[inline(always)]
fn exp32(e: i64) -> i32 {
    if e < i32::MIN as i64 || e > i32::MAX as i64 {
        exponent_overflow();
    }
    e as i32
}

#[cold]
#[inline(never)]
fn exponent_overflow() -> ! {
    panic!("decimal: exponent overflows i32 (a product of numbers far outside the range DynamoDB stores)");
}

fn append_u128(out: &mut Vec<u8>, v: u128) {
    if v <= u64::MAX as u128 {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut x = v as u64;
        loop {
            i -= 1;
            buf[i] = b'0' + (x % 10) as u8;
            x /= 10;
            if x == 0 {
                break;
            }
        }
        out.extend_from_slice(&buf[i..]);
        return;
    }
    let mut buf = [0u8; 40];
    let mut i = buf.len();
    let mut x = v;
    while x > 0 {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
    }
    out.extend_from_slice(&buf[i..]);
}

impl Decimal {
    /// Zero.
    pub const ZERO: Decimal = Decimal { coef: Coef::Small(0), exp: 0, neg: false };

    /// ±v × 10^exp in normal form, for a coefficient that fits 64 bits.
    #[inline(always)]
    fn small64(neg: bool, v: u64, exp: i64) -> Decimal {
        if v == 0 {
            return Decimal::ZERO;
        }
        let (v, exp) = trim_zeros64(v, exp);
        Decimal { coef: Coef::Small(v as u128), exp: exp32(exp), neg }
    }

    /// ±v × 10^exp in normal form.
    fn small(neg: bool, v: u128, exp: i64) -> Decimal {
        if v >> 64 == 0 {
            return Decimal::small64(neg, v as u64, exp);
        }
        let (v, exp) = trim_zeros(v, exp);
        if v >= SMALL_LIMIT {
            let mut d = Vec::with_capacity(39);
            append_u128(&mut d, v);
            return Decimal { coef: Coef::Big(d.into_boxed_slice()), exp: exp32(exp), neg };
        }
        Decimal { coef: Coef::Small(v), exp: exp32(exp), neg }
    }

    /// ±digits × 10^exp in normal form; digits may have leading and
    /// trailing zeros.
    fn normal(neg: bool, digits: &[u8], mut exp: i64) -> Decimal {
        let mut lo = 0;
        let mut hi = digits.len();
        while lo < hi && digits[lo] == b'0' {
            lo += 1;
        }
        while hi > lo && digits[hi - 1] == b'0' {
            hi -= 1;
            exp += 1;
        }
        if lo == hi {
            return Decimal::ZERO;
        }
        if hi - lo <= DECIMAL_DIGITS {
            let mut v = 0u128;
            for &c in &digits[lo..hi] {
                v = v * 10 + (c - b'0') as u128;
            }
            return Decimal { coef: Coef::Small(v), exp: exp32(exp), neg };
        }
        Decimal { coef: Coef::Big(digits[lo..hi].to_vec().into_boxed_slice()), exp: exp32(exp), neg }
    }

    /// Parses a DynamoDB number: an optional sign, digits with an optional
    /// decimal point, an optional exponent (`12.50`, `-3`, `1.5E+3`). It
    /// fails when the text is not a number or DynamoDB could not store it.
    pub fn parse(s: &str) -> Result<Decimal, DecimalError> {
        Decimal::parse_bytes(s.as_bytes())
    }

    /// [`Decimal::parse`] of a byte string.
    #[inline]
    pub fn parse_bytes(s: &[u8]) -> Result<Decimal, DecimalError> {
        let d = Decimal::parse_any(s).ok_or(DecimalError::Syntax)?;
        d.valid()?;
        Ok(d)
    }

    /// Parses any decimal text, whether or not DynamoDB could store it.
    #[inline]
    pub(crate) fn parse_any(s: &[u8]) -> Option<Decimal> {
        if let Some(d) = parse_small(s) {
            return Some(d);
        }
        parse_general(s)
    }

    /// The decimal of an integer.
    pub fn from_i64(v: i64) -> Decimal {
        Decimal::small(v < 0, v.unsigned_abs() as u128, 0)
    }

    /// Whether DynamoDB can store the number: `Ok`, or why not.
    #[inline]
    pub fn valid(&self) -> Result<(), DecimalError> {
        if let Coef::Small(v) = self.coef {
            // A coefficient below 10^19 with an exponent from -130 to 107
            // always fits (zero's exponent is 0).
            if v <= u64::MAX as u128 && (-130..=107).contains(&self.exp) {
                return Ok(());
            }
        }
        let n = self.digits();
        if n == 0 {
            return Ok(());
        }
        if n > DECIMAL_DIGITS {
            return Err(DecimalError::Digits);
        }
        if self.exp < -130 || self.exp as i64 + n as i64 - 1 > 125 {
            return Err(DecimalError::Range);
        }
        Ok(())
    }

    /// The number of digits of the coefficient (0 for zero).
    fn digits(&self) -> usize {
        match &self.coef {
            Coef::Small(v) => digits_u128(*v),
            Coef::Big(d) => d.len(),
        }
    }

    /// The coefficient's digits ("" for zero).
    fn coef_digits(&self) -> Vec<u8> {
        match &self.coef {
            Coef::Small(0) => Vec::new(),
            Coef::Small(v) => {
                let mut d = Vec::with_capacity(39);
                append_u128(&mut d, *v);
                d
            }
            Coef::Big(d) => d.to_vec(),
        }
    }

    /// Whether the number is 0.
    pub fn is_zero(&self) -> bool {
        matches!(self.coef, Coef::Small(0))
    }

    /// -1, 0 or +1.
    pub fn sign(&self) -> i32 {
        if self.is_zero() {
            0
        } else if self.neg {
            -1
        } else {
            1
        }
    }

    /// -self.
    pub fn neg(&self) -> Decimal {
        let mut d = self.clone();
        if !d.is_zero() {
            d.neg = !d.neg;
        }
        d
    }

    /// |self|.
    pub fn abs(&self) -> Decimal {
        let mut d = self.clone();
        d.neg = false;
        d
    }

    /// self + o, exactly.
    #[inline]
    pub fn add(&self, o: &Decimal) -> Decimal {
        // The common case: both coefficients and the one scaled fit 64 bits,
        // the sum 128; native arithmetic only.
        if let (Coef::Small(x), Coef::Small(y)) = (&self.coef, &o.coef) {
            if x >> 64 == 0 && y >> 64 == 0 && *x != 0 && *y != 0 {
                let (mut a, mut b) = (*x as u64, *y as u64);
                let k = self.exp as i64 - o.exp as i64;
                let ok = if k > 0 {
                    k < 20 && a <= MAX_SCALABLE64[k as usize] && {
                        a *= POW10[k as usize];
                        true
                    }
                } else if k < 0 {
                    -k < 20 && b <= MAX_SCALABLE64[(-k) as usize] && {
                        b *= POW10[(-k) as usize];
                        true
                    }
                } else {
                    true
                };
                if ok {
                    let exp = self.exp.min(o.exp) as i64;
                    if self.neg == o.neg {
                        return match a.checked_add(b) {
                            Some(sum) => Decimal::small64(self.neg, sum, exp),
                            None => Decimal::small(self.neg, a as u128 + b as u128, exp),
                        };
                    }
                    return if a > b {
                        Decimal::small64(self.neg, a - b, exp)
                    } else if a < b {
                        Decimal::small64(o.neg, b - a, exp)
                    } else {
                        Decimal::ZERO
                    };
                }
            }
        }
        self.add_wide(o)
    }

    fn add_wide(&self, o: &Decimal) -> Decimal {
        if let (Coef::Small(x), Coef::Small(y)) = (&self.coef, &o.coef) {
            let (x, y) = (*x, *y);
            if y == 0 {
                return self.clone();
            }
            if x == 0 {
                return o.clone();
            }
            if let Some((x, y, exp)) = align_small(x, self.exp, y, o.exp) {
                let (v, neg) = if self.neg == o.neg {
                    match x.checked_add(y) {
                        Some(v) => (v, self.neg),
                        None => return add_slow(self, o),
                    }
                } else if x > y {
                    (x - y, self.neg)
                } else if x < y {
                    (y - x, o.neg)
                } else {
                    return Decimal::ZERO;
                };
                return Decimal::small(neg, v, exp);
            }
        }
        add_slow(self, o)
    }

    /// self - o, exactly.
    pub fn sub(&self, o: &Decimal) -> Decimal {
        self.add(&o.neg())
    }

    /// self × o, exactly.
    pub fn mul(&self, o: &Decimal) -> Decimal {
        if self.is_zero() || o.is_zero() {
            return Decimal::ZERO;
        }
        let exp = self.exp as i64 + o.exp as i64;
        if let (Coef::Small(x), Coef::Small(y)) = (&self.coef, &o.coef) {
            if let Some(v) = x.checked_mul(*y) {
                return Decimal::small(self.neg != o.neg, v, exp);
            }
        }
        let (a, b) = (self.coef_digits(), o.coef_digits());
        let mut acc = vec![0u32; a.len() + b.len()];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                acc[i + j + 1] += (a[i] - b'0') as u32 * (b[j] - b'0') as u32;
            }
            // keep the accumulators small: carry after every row
            for k in (1..acc.len()).rev() {
                acc[k - 1] += acc[k] / 10;
                acc[k] %= 10;
            }
        }
        let out: Vec<u8> = acc.iter().map(|&v| b'0' + v as u8).collect();
        Decimal::normal(self.neg != o.neg, &out, exp)
    }

    /// The number rounded to `places` digits after the decimal point (a
    /// negative `places` rounds to tens, hundreds …) by `mode`.
    pub fn round(&self, places: i32, mode: Rounding) -> Decimal {
        let target = -(places as i64);
        if self.is_zero() || self.exp as i64 >= target {
            return self.clone();
        }
        let c = self.coef_digits();
        let drop = (target - self.exp as i64) as usize; // >= 1
        let mut kept: Vec<u8> = if drop < c.len() { c[..c.len() - drop].to_vec() } else { vec![b'0'] };
        // The coefficient has no trailing zeros: the dropped digits after
        // the first are all zero only when it is the coefficient's last.
        let (first, rest_zero) = if drop <= c.len() { (c[c.len() - drop], drop == 1) } else { (b'0', false) };
        let up = match mode {
            Rounding::HalfUp => first >= b'5',
            Rounding::HalfEven => {
                let last = kept[kept.len() - 1];
                first > b'5' || (first == b'5' && (!rest_zero || (last - b'0') % 2 == 1))
            }
            Rounding::Down => false,
        };
        if up {
            kept = add_digits(&kept, b"1");
        }
        Decimal::normal(self.neg, &kept, target)
    }

    /// The `f64` nearest to the number.
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    /// Appends the number's text (see [`Display`](fmt::Display)) to `out`.
    pub fn append_text(&self, out: &mut Vec<u8>) {
        if self.is_zero() {
            out.push(b'0');
            return;
        }
        if self.neg {
            out.push(b'-');
        }
        let start = out.len();
        match &self.coef {
            Coef::Small(v) => append_u128(out, *v),
            Coef::Big(d) => out.extend_from_slice(d),
        }
        let n = (out.len() - start) as i64;
        let exp = self.exp as i64;
        let p = n + exp;
        if exp >= 0 {
            out.resize(out.len() + exp as usize, b'0');
        } else if p > 0 {
            out.insert(start + p as usize, b'.');
        } else {
            let zeros = (-p) as usize;
            let mut prefix = Vec::with_capacity(2 + zeros);
            prefix.extend_from_slice(b"0.");
            prefix.resize(2 + zeros, b'0');
            out.splice(start..start, prefix);
        }
    }
}

/// The coefficients x×10^a and y×10^b scaled to their common exponent, when
/// both fit a u128.
#[inline]
fn align_small(x: u128, a: i32, y: u128, b: i32) -> Option<(u128, u128, i64)> {
    if a == b {
        return Some((x, y, a as i64));
    }
    let exp = a.min(b);
    let k = (a as i64 - b as i64).unsigned_abs();
    if k > 38 {
        return None;
    }
    let p = pow10_128(k as u32);
    if a > b {
        x.checked_mul(p).map(|x| (x, y, exp as i64))
    } else {
        y.checked_mul(p).map(|y| (x, y, exp as i64))
    }
}

/// The magnitudes of a and b as integer digit strings at their common
/// (smaller) exponent.
fn aligned(a: &Decimal, b: &Decimal) -> (Vec<u8>, Vec<u8>, i64) {
    let mut exp = a.exp.min(b.exp) as i64;
    if a.is_zero() {
        exp = b.exp as i64;
    } else if b.is_zero() {
        exp = a.exp as i64;
    }
    let scale = |d: &Decimal| {
        let mut c = d.coef_digits();
        if c.is_empty() {
            return vec![b'0'];
        }
        let pad = (d.exp as i64 - exp) as usize;
        c.resize(c.len() + pad, b'0');
        c
    };
    (scale(a), scale(b), exp)
}

fn cmp_digits(x: &[u8], y: &[u8]) -> Ordering {
    x.len().cmp(&y.len()).then_with(|| x.cmp(y))
}

fn add_digits(x: &[u8], y: &[u8]) -> Vec<u8> {
    let (x, y) = if x.len() < y.len() { (y, x) } else { (x, y) };
    let mut out = vec![b'0'; x.len() + 1];
    let mut carry = 0u8;
    for i in 0..x.len() {
        let mut s = x[x.len() - 1 - i] - b'0' + carry;
        if i < y.len() {
            s += y[y.len() - 1 - i] - b'0';
        }
        carry = s / 10;
        let n = out.len();
        out[n - 1 - i] = b'0' + s % 10;
    }
    out[0] = b'0' + carry;
    out
}

/// x - y for x >= y.
fn sub_digits(x: &[u8], y: &[u8]) -> Vec<u8> {
    let mut out = vec![b'0'; x.len()];
    let mut borrow = 0i32;
    for i in 0..x.len() {
        let mut s = (x[x.len() - 1 - i] - b'0') as i32 - borrow;
        if i < y.len() {
            s -= (y[y.len() - 1 - i] - b'0') as i32;
        }
        borrow = 0;
        if s < 0 {
            s += 10;
            borrow = 1;
        }
        let n = out.len();
        out[n - 1 - i] = b'0' + s as u8;
    }
    out
}

fn add_slow(a: &Decimal, b: &Decimal) -> Decimal {
    if a.is_zero() {
        return b.clone();
    }
    if b.is_zero() {
        return a.clone();
    }
    let (x, y, exp) = aligned(a, b);
    if a.neg == b.neg {
        return Decimal::normal(a.neg, &add_digits(&x, &y), exp);
    }
    match cmp_digits(&x, &y) {
        Ordering::Equal => Decimal::ZERO,
        Ordering::Greater => Decimal::normal(a.neg, &sub_digits(&x, &y), exp),
        Ordering::Less => Decimal::normal(b.neg, &sub_digits(&y, &x), exp),
    }
}

fn cmp_mag(a: &Decimal, b: &Decimal) -> Ordering {
    if let (Coef::Small(x), Coef::Small(y)) = (&a.coef, &b.coef) {
        if let Some((x, y, _)) = align_small(*x, a.exp, *y, b.exp) {
            return x.cmp(&y);
        }
    }
    let (x, y, _) = aligned(a, b);
    cmp_digits(&x, &y)
}

impl Ord for Decimal {
    fn cmp(&self, o: &Decimal) -> Ordering {
        let (ds, os) = (self.sign(), o.sign());
        if ds != os {
            return ds.cmp(&os);
        }
        let c = cmp_mag(self, o);
        if self.neg {
            c.reverse()
        } else {
            c
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, o: &Decimal) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut b = Vec::with_capacity(24);
        self.append_text(&mut b);
        f.write_str(std::str::from_utf8(&b).unwrap_or("?"))
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({})", self)
    }
}

impl FromStr for Decimal {
    type Err = DecimalError;
    fn from_str(s: &str) -> Result<Decimal, DecimalError> {
        Decimal::parse(s)
    }
}

impl From<i64> for Decimal {
    fn from(v: i64) -> Decimal {
        Decimal::from_i64(v)
    }
}

macro_rules! ops {
    ($tr:ident, $f:ident, $m:ident) => {
        impl std::ops::$tr for Decimal {
            type Output = Decimal;
            fn $f(self, o: Decimal) -> Decimal {
                Decimal::$m(&self, &o)
            }
        }
        impl<'a> std::ops::$tr<&'a Decimal> for &'a Decimal {
            type Output = Decimal;
            fn $f(self, o: &'a Decimal) -> Decimal {
                Decimal::$m(self, o)
            }
        }
    };
}
ops!(Add, add, add);
ops!(Sub, sub, sub);
ops!(Mul, mul, mul);

impl std::ops::Neg for Decimal {
    type Output = Decimal;
    fn neg(self) -> Decimal {
        Decimal::neg(&self)
    }
}

/// Parses the common forms: at most 19 digits, an optional point, an
/// optional exponent of at most 6 digits. `None`: use the general parser.
#[inline]
fn parse_small(s: &[u8]) -> Option<Decimal> {
    let mut i = 0;
    let mut neg = false;
    if let Some(&c) = s.first() {
        if c == b'-' || c == b'+' {
            neg = c == b'-';
            i = 1;
        }
    }
    let start = i;
    let mut v: u64 = 0;
    while i < s.len() {
        let c = s[i].wrapping_sub(b'0');
        if c > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(c as u64);
        i += 1;
    }
    let mut n = i - start;
    let mut exp: i64 = 0;
    if i < s.len() && s[i] == b'.' {
        i += 1;
        let frac = i;
        while i < s.len() {
            let c = s[i].wrapping_sub(b'0');
            if c > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(c as u64);
            i += 1;
        }
        n += i - frac;
        exp = frac as i64 - i as i64;
    }
    if n == 0 || n > 19 {
        return None;
    }
    if i < s.len() {
        if s[i] != b'e' && s[i] != b'E' {
            return None;
        }
        i += 1;
        let mut eneg = false;
        if i < s.len() && (s[i] == b'-' || s[i] == b'+') {
            eneg = s[i] == b'-';
            i += 1;
        }
        if i == s.len() || s.len() - i > 6 {
            return None;
        }
        let mut e: i64 = 0;
        while i < s.len() {
            let c = s[i].wrapping_sub(b'0');
            if c > 9 {
                return None;
            }
            e = e * 10 + c as i64;
            i += 1;
        }
        exp += if eneg { -e } else { e };
    }
    if v == 0 {
        return Some(Decimal::ZERO);
    }
    if !(-(i32::MAX as i64)..=i32::MAX as i64).contains(&exp) {
        return None;
    }
    Some(Decimal::small64(neg, v, exp))
}

/// Parses any decimal text on digit strings.
fn parse_general(s: &[u8]) -> Option<Decimal> {
    let mut i = 0;
    let mut neg = false;
    if let Some(&c) = s.first() {
        if c == b'-' || c == b'+' {
            neg = c == b'-';
            i = 1;
        }
    }
    let mut digits: Vec<u8> = Vec::with_capacity(s.len());
    let (mut n, mut frac, mut point) = (0i64, 0i64, false);
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() {
            n += 1;
            if point {
                frac += 1;
            }
            if c != b'0' || !digits.is_empty() {
                digits.push(c);
            }
        } else if c == b'.' && !point {
            point = true;
        } else {
            break;
        }
        i += 1;
    }
    if n == 0 {
        return None;
    }
    let mut exp: i64 = 0;
    if i < s.len() {
        if s[i] != b'e' && s[i] != b'E' {
            return None;
        }
        i += 1;
        let mut eneg = false;
        if i < s.len() && (s[i] == b'-' || s[i] == b'+') {
            eneg = s[i] == b'-';
            i += 1;
        }
        if i == s.len() {
            return None;
        }
        while i < s.len() {
            let c = s[i];
            if !c.is_ascii_digit() {
                return None;
            }
            if exp < MAX_EXPONENT {
                exp = exp * 10 + (c - b'0') as i64;
            }
            i += 1;
        }
        if eneg {
            exp = -exp;
        }
    }
    Some(Decimal::normal(neg, &digits, exp - frac))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn sums_are_exact() {
        let mut t = Decimal::ZERO;
        for p in ["0.1", "2.25", "1.5", "0.2", "1.5"] {
            t = t.add(&d(p));
        }
        assert_eq!(t.to_string(), "5.55");
        assert_eq!(d("0.1").add(&d("0.2")).to_string(), "0.3");
        assert_eq!(d("12.50"), d("12.5"));
        assert_eq!(d("-5.75").add(&d("-0.5")).to_string(), "-6.25");
        assert_eq!(d("1.5E2").to_string(), "150");
        assert_eq!(d("1e-7").to_string(), "0.0000001");
        assert_eq!(d("-0").to_string(), "0");
    }

    #[test]
    fn big_results_stay_exact() {
        let a = d("99999999999999999999999999999999999999");
        let s = a.add(&d("1"));
        assert_eq!(s.to_string(), "100000000000000000000000000000000000000");
        assert!(s.valid().is_ok());
        let t = a.add(&d("0.1"));
        assert_eq!(t.valid(), Err(DecimalError::Digits));
        assert_eq!(t.sub(&d("0.1")), a);
        let m = a.mul(&a);
        assert_eq!(m.to_string(), "9999999999999999999999999999999999999800000000000000000000000000000000000001");
        let far = d("1e125").add(&d("1e-130"));
        assert_eq!(far.valid(), Err(DecimalError::Digits));
        assert_eq!(far.sub(&d("1e125")), d("1e-130"));
    }

    #[test]
    fn parse_refuses_what_dynamodb_refuses() {
        assert_eq!(Decimal::parse("abc"), Err(DecimalError::Syntax));
        assert_eq!(Decimal::parse(""), Err(DecimalError::Syntax));
        assert_eq!(Decimal::parse("1e"), Err(DecimalError::Syntax));
        assert_eq!(Decimal::parse("1e400"), Err(DecimalError::Range));
        assert_eq!(Decimal::parse("1e-131"), Err(DecimalError::Range));
        assert_eq!(Decimal::parse("123456789012345678901234567890123456789"), Err(DecimalError::Digits));
        assert!(Decimal::parse("9.9999999999999999999999999999999999999E+125").is_ok());
    }

    #[test]
    fn rounding_modes() {
        assert_eq!(d("2.345").round(2, Rounding::HalfEven).to_string(), "2.34");
        assert_eq!(d("2.355").round(2, Rounding::HalfEven).to_string(), "2.36");
        assert_eq!(d("2.345").round(2, Rounding::HalfUp).to_string(), "2.35");
        assert_eq!(d("-2.345").round(2, Rounding::HalfUp).to_string(), "-2.35");
        assert_eq!(d("2.349").round(2, Rounding::Down).to_string(), "2.34");
        assert_eq!(d("1250").round(-2, Rounding::HalfEven).to_string(), "1200");
        assert_eq!(d("0.0004").round(2, Rounding::HalfUp).to_string(), "0");
    }

    #[test]
    fn comparisons() {
        assert!(d("10.01") > d("10"));
        assert!(d("-1") < d("0.5"));
        assert!(d("-2") < d("-1.5"));
        assert_eq!(d("1e3").cmp(&d("1000")), Ordering::Equal);
    }
}
