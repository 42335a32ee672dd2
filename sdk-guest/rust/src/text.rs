//! Texts as the Go SDK writes them, so that a row or a message reads the
//! same whichever language folded it: numbers (integers, `f64` in Go's
//! shortest form) and quoted strings (Go's `%q`).

use std::fmt::Write as _;

/// Quotes bytes as Go's `strconv.Quote` (`%q`) does: printable UTF-8 kept,
/// `"` and `\` escaped, control characters as `\n`, `\t`, `\x01`…, invalid
/// bytes as `\xff`, non-printable code points as `\u00ad`. (The set of
/// non-printable code points is a short list: C1 controls, format
/// characters and separators; Go uses the full Unicode tables.)
pub fn quote(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 2);
    out.push('"');
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            i += 1;
            match c {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                0x20..=0x7e => out.push(c as char),
                7 => out.push_str("\\a"),
                8 => out.push_str("\\b"),
                12 => out.push_str("\\f"),
                10 => out.push_str("\\n"),
                13 => out.push_str("\\r"),
                9 => out.push_str("\\t"),
                11 => out.push_str("\\v"),
                _ => {
                    let _ = write!(out, "\\x{:02x}", c);
                }
            }
            continue;
        }
        let size = match c {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        let s = if size > 0 && i + size <= b.len() { std::str::from_utf8(&b[i..i + size]).ok() } else { None };
        match s.and_then(|s| s.chars().next()) {
            None => {
                let _ = write!(out, "\\x{:02x}", c);
                i += 1;
            }
            Some(r) => {
                let v = r as u32;
                if !printable(v) {
                    if v < 0x10000 {
                        let _ = write!(out, "\\u{:04x}", v);
                    } else {
                        let _ = write!(out, "\\U{:08x}", v);
                    }
                } else {
                    out.push(r);
                }
                i += size;
            }
        }
    }
    out.push('"');
    out
}

fn printable(r: u32) -> bool {
    !(r < 0xa0
        || r == 0xad
        || (0x200b..=0x200f).contains(&r)
        || (0x2028..=0x202e).contains(&r)
        || (0x2060..=0x206f).contains(&r)
        || r == 0xfeff
        || (0xfff9..=0xfffb).contains(&r)
        || (0x2000..=0x200a).contains(&r)
        || r == 0x3000
        || r == 0x1680
        || r == 0x205f)
}

/// Appends `f` as Go's `strconv.FormatFloat(f, 'g', -1, 64)` does: the
/// shortest decimal that reads back as `f`, in plain notation for
/// exponents from -4 to 5 and as `1.5e+06` otherwise.
pub fn append_f64(out: &mut String, f: f64) {
    if f == 0.0 && f.is_sign_positive() {
        out.push('0');
        return;
    }
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    // Rust's {:e} gives the shortest digits that read back: d[.ddd]e[-]x.
    let s = format!("{:e}", f);
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.as_str()),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let nd = digits.len() as i32;
    let dp = exp + 1; // the value is 0.DIGITS × 10^dp
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= 6 {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        let _ = write!(out, "{}", e);
        return;
    }
    if dp <= 0 {
        out.push_str("0.");
        for _ in 0..-dp {
            out.push('0');
        }
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        for _ in 0..dp - nd {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
}

/// Parses a number's text as an `f64`, like Go's `strconv.ParseFloat`.
pub fn parse_f64(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(|c| c == '+' || c == '-');
    if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() && t.as_bytes()[0] != b'.' {
        return None; // no inf or nan: DynamoDB numbers have neither
    }
    if s.len() - t.len() > 1 {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Parses a number's text as an `i64`, like the Go SDK: a decimal integer,
/// or another form of one ("1e3", "2.0") in range.
pub fn parse_i64(s: &str) -> Option<i64> {
    if let Ok(v) = s.parse::<i64>() {
        return Some(v);
    }
    let f = parse_f64(s)?;
    if f.trunc() != f || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
        return None;
    }
    Some(f as i64)
}

/// Parses a number's text as a `u64`, like [`parse_i64`].
pub fn parse_u64(s: &str) -> Option<u64> {
    if let Ok(v) = s.parse::<u64>() {
        return Some(v);
    }
    let f = parse_f64(s)?;
    if f.trunc() != f || f < 0.0 || f >= 1.8446744073709552e19 {
        return None;
    }
    Some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(f: f64) -> String {
        let mut s = String::new();
        append_f64(&mut s, f);
        s
    }

    #[test]
    fn floats_read_as_go_writes_them() {
        assert_eq!(g(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(g(1234567.0), "1.234567e+06");
        assert_eq!(g(123456.0), "123456");
        assert_eq!(g(1e21), "1e+21");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(-2.5), "-2.5");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(5e-324), "5e-324");
    }

    #[test]
    fn quotes_as_go() {
        assert_eq!(quote(b"We\"ird\\ \t\x01 \xc3\x9cn\xc3\xaf \xe2\x98\x83 \xc2\xad\xff"), r#""We\"ird\\ \t\x01 Ünï ☃ \u00ad\xff""#);
    }

    #[test]
    fn integers_in_other_forms() {
        assert_eq!(parse_i64("1e3"), Some(1000));
        assert_eq!(parse_i64("+5"), Some(5));
        assert_eq!(parse_i64("2.5"), None);
        assert_eq!(parse_i64("9223372036854775808"), None);
        assert_eq!(parse_i64("inf"), None);
    }
}
