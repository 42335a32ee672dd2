package ddblocal

import (
	"strings"
	"unicode/utf16"

	"github.com/dynafold/dynafold/abi"
)

// pageSize is what an item counts toward the 1 MB a Query or Scan page
// reads: DynamoDB counts items in its storage form, not by the item-size
// rules of the API (which itemSize follows). This is dynalite's model of
// that form, fitted against DynamoDB and checked by its tests there: a
// byte or so of type and length per value, a compact number form, and 2
// bytes plus 18 (and the range key's size) per 3 KB of the rest. The
// range key counts in that overhead, not in the item.
func pageSize(item abi.Item, rangeKey string) int {
	size, rangeSize := 0, 0
	for name, v := range item {
		if name == rangeKey {
			rangeSize = storedSize(v, false)
			continue
		}
		size += storedSize(v, true) + 1
	}
	return 2 + size + (1+(1+size)/3072)*(18+rangeSize)
}

// storedSize is a value's size in the storage form; compact adds its
// type and length bytes.
func storedSize(v abi.Value, compact bool) int {
	size := rawSize(v, compact)
	if !compact {
		return size
	}
	switch v.Kind {
	case abi.KindS:
		switch {
		case size < 128:
			return size + 1
		case size < 16384:
			return size + 2
		}
		return size + 3
	case abi.KindB, abi.KindN:
		return size + 1
	case abi.KindSS, abi.KindNS:
		return size + len(v.Strs) + 1
	case abi.KindBS:
		return size + len(v.Blobs) + 1
	case abi.KindNULL:
		return 0
	case abi.KindBOOL:
		return 1
	}
	return size
}

func rawSize(v abi.Value, compact bool) int {
	switch v.Kind {
	case abi.KindS:
		return utf16Len(v.Str)
	case abi.KindB:
		return len(v.Bytes)
	case abi.KindN:
		return numberSize(v.Str)
	case abi.KindSS:
		n := 0
		for _, s := range v.Strs {
			n += utf16Len(s)
		}
		return n
	case abi.KindNS:
		n := 0
		for _, s := range v.Strs {
			n += numberSize(s)
		}
		return n
	case abi.KindBS:
		n := 0
		for _, b := range v.Blobs {
			n += len(b)
		}
		return n
	case abi.KindNULL, abi.KindBOOL:
		return 1
	case abi.KindL:
		n := 3
		for _, e := range v.List {
			n += 1 + storedSize(e, compact)
		}
		return n
	case abi.KindM:
		n := 3 + len(v.Map)
		for name, e := range v.Map {
			n += storedSize(e, compact)
			if compact {
				n++
			} else {
				n += utf16Len(name)
			}
		}
		return n
	}
	return 0
}

// numberSize is a number's size in the storage form: a byte of exponent
// and a byte per two digits, and one more when negative.
func numberSize(s string) int {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	var digits string
	var e int
	if intPart != "" {
		digits, e = strings.TrimRight(intPart+frac, "0"), len(intPart)-1
	} else {
		f := strings.TrimLeft(frac, "0")
		digits, e = strings.TrimRight(f, "0"), -(len(frac)-len(f))-1
	}
	if digits == "" {
		return 1
	}
	n := 1 + (len(digits)+1)/2
	if len(digits)%2 == 0 && e%2 == 0 {
		n++
	}
	if neg {
		n++
	}
	return n
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
