package ddblocal

import (
	"crypto/md5"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// Scan order and parallel-scan segments, as DynamoDB has them. DynamoDB
// places an item by an MD5 hash of its partition key's bytes, salted with
// "Outliers" (found by dynalite against DynamoDB and checked by its tests
// there): a string's UTF-8 bytes, a binary's bytes, a number in DynamoDB's
// own serialization (numberBytes). Scan returns partitions in the order of
// the hash's first 24 bits, then of the key's value; Segment i of
// TotalSegments n holds the keys whose hash's first 12 bits p satisfy
// floor(p*n/4096) == i, so an item lands in the segment it would in
// DynamoDB. How DynamoDB orders keys whose first 24 bits agree, and splits
// more than 4096 segments, cannot be known from outside; ddblocal orders
// them by value, and leaves the segments past the 4096th empty.

// scanHash returns the first 24 bits of a partition key's hash.
func scanHash(v abi.Value) uint64 {
	h := md5.New()
	h.Write([]byte("Outliers"))
	switch v.Kind {
	case abi.KindB:
		h.Write(v.Bytes)
	case abi.KindN:
		h.Write(numberBytes(v.Str))
	default:
		h.Write([]byte(v.Str))
	}
	var sum [md5.Size]byte
	s := h.Sum(sum[:0])
	return uint64(s[0])<<16 | uint64(s[1])<<8 | uint64(s[2])
}

// cmpScan orders hash keys in Scan order: by scanHash, then by value.
func cmpScan(ha uint64, a abi.Value, hb uint64, b abi.Value) int {
	switch {
	case ha < hb:
		return -1
	case ha > hb:
		return 1
	}
	return cmpVal(a, b)
}

// segmentOf is the parallel-scan segment of a scan hash among total.
func segmentOf(h uint64, total int) int {
	return int((h >> 12) * uint64(total) / 4096)
}

// numberBytes is DynamoDB's serialization of a number (normalized text):
// base-100 digits, two decimal digits a byte, after an exponent byte; a
// negative number's bytes are complemented and end with 102.
func numberBytes(s string) []byte {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	var digits string
	var e int // the exponent of the first digit, as in d.ddd x 10^e
	if intPart != "" {
		digits, e = strings.TrimRight(intPart+frac, "0"), len(intPart)-1
	} else {
		f := strings.TrimLeft(frac, "0")
		digits, e = strings.TrimRight(f, "0"), -(len(frac)-len(f))-1
	}
	if digits == "" {
		return []byte{0x80}
	}
	exponent := e + 1
	pad := 0
	if exponent%2 != 0 {
		pad = 1 // a leading zero digit makes the exponent even
	}
	n := (len(digits) + pad + 1) / 2
	out := make([]int, n+1, n+2)
	out[0] = floorDiv(exponent+pad, 2) - 64
	if neg {
		out[0] = ^out[0]
	}
	d := make([]int, 0, len(digits)+1)
	if pad == 1 {
		d = append(d, 0)
	}
	for _, c := range digits {
		d = append(d, int(c-'0'))
	}
	for i := 0; i < len(d); i += 2 {
		v := d[i] * 10
		if i+1 < len(d) {
			v += d[i+1]
		}
		if neg {
			v = 101 - v
		} else {
			v++
		}
		out[i/2+1] = v
	}
	if neg && n < 20 {
		out = append(out, 102)
	}
	b := make([]byte, len(out))
	for i, v := range out {
		b[i] = byte(v & 0xFF)
	}
	return b
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
