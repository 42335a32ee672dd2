//! Comparisons and copies of short byte strings (names, stream ids, event
//! types) without a loop per byte: in a Wasm guest every loop iteration
//! also pays the host's loop instrumentation, and a call to memcmp or
//! memcpy costs more than the work for a few bytes.

#[inline(always)]
fn load64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn load32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Whether a and b hold the same bytes; up to 16 bytes in at most four
/// (overlapping) word compares.
#[inline(always)]
pub(crate) fn eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => load32(a, 0) == load32(b, 0) && load32(a, n - 4) == load32(b, n - 4),
        8..=16 => load64(a, 0) == load64(b, 0) && load64(a, n - 8) == load64(b, n - 8),
        _ => a == b,
    }
}

/// Whether b is ASCII, eight bytes at a time.
#[inline(always)]
pub(crate) fn is_ascii(b: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = b.len();
    if n >= 8 {
        let mut i = 0;
        while i + 8 <= n {
            if load64(b, i) & HIGH != 0 {
                return false;
            }
            i += 8;
        }
        return load64(b, n - 8) & HIGH == 0;
    }
    if n >= 4 {
        return (load32(b, 0) | load32(b, n - 4)) & 0x8080_8080 == 0;
    }
    b.iter().all(|c| *c < 0x80)
}

/// Copies src (at most 16 bytes) to the start of dst (at least as long).
#[inline(always)]
pub(crate) fn copy_small(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        }
        _ => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_bytes() {
        let words: [&[u8]; 9] = [b"", b"a", b"ab", b"abc", b"Order", b"OrderPla", b"ItemAdded", b"0123456789abcdef", b"0123456789abcdefg"];
        for a in words {
            for b in words {
                assert_eq!(eq(a, b), a == b, "{:?} {:?}", a, b);
            }
            let mut d = [0u8; 17];
            if a.len() <= 16 {
                copy_small(&mut d, a);
                assert_eq!(&d[..a.len()], a);
            }
            assert!(is_ascii(a));
        }
        assert!(!eq(b"ItemAdded", b"ItemAddee"));
        assert!(!eq(b"Order", b"Ordex"));
        assert!(!is_ascii("Ünï".as_bytes()));
        assert!(!is_ascii("abcdefgh☃".as_bytes()));
        assert!(!is_ascii("ab☃".as_bytes()));
    }
}
