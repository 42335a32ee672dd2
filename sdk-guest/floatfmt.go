package guest

import (
	"math"
	"strconv"

	"github.com/dynafold/dynafold/abi"
)

// appendFloat appends f exactly as strconv.AppendFloat(dst, f, 'g', -1, 64)
// does, with a fast path for the common short decimals (strconv's shortest
// formatting is costly inside a Wasm guest): for 1e-4 ≤ |f| < 1e6 the
// shortest decimal is the one with the fewest fractional digits k that
// parses back to f, and round(f·10^k)/10^k is the closest such decimal.
func appendFloat(dst []byte, f float64) []byte {
	if f == 0 && !math.Signbit(f) {
		return append(dst, '0')
	}
	if f == math.Trunc(f) && f > -1e6 && f < 1e6 && f != 0 {
		var buf [24]byte
		return append(dst, appendInt(buf[:0], int64(f))...)
	}
	a := math.Abs(f)
	if f == 0 || a < 1e-4 || a >= 1e6 || math.IsNaN(f) {
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	for k := 0; k <= 15; k++ {
		m := math.Round(a * pow10[k])
		if m >= 1<<53 {
			break
		}
		if m/pow10[k] != a {
			continue
		}
		if f < 0 {
			dst = append(dst, '-')
		}
		var buf [24]byte
		digits := strconv.AppendUint(buf[:0], uint64(m), 10)
		if k == 0 {
			return append(dst, digits...)
		}
		if len(digits) <= k {
			dst = append(dst, '0', '.')
			for i := len(digits); i < k; i++ {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		dst = append(dst, digits[:len(digits)-k]...)
		dst = append(dst, '.')
		return append(dst, digits[len(digits)-k:]...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendInt appends v in decimal, like strconv.AppendInt(dst, v, 10).
func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(dst, '-'), uint64(-v))
	}
	return appendUint(dst, uint64(v))
}

func appendUint(dst []byte, v uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	return append(dst, buf[i:]...)
}

// appendIntN appends v as an encoded N value (kind, length, digits).
func appendIntN(dst []byte, v int64) []byte {
	if v < 0 {
		return appendUintN(dst, uint64(-v), true)
	}
	return appendUintN(dst, uint64(v), false)
}

func appendUintN(dst []byte, v uint64, neg bool) []byte {
	var buf [21]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	if neg {
		i--
		buf[i] = '-'
	}
	return append(append(dst, byte(abi.KindN), byte(len(buf)-i)), buf[i:]...)
}
