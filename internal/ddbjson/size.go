package ddbjson

import "github.com/dynafold/dynafold/abi"

// count adds n to the running sizes and checks the limits.
func (d *decoder) count(n int) error {
	d.size += n
	d.vsize += n
	if d.lim.MaxItemSize > 0 && d.size > d.lim.MaxItemSize {
		return &DecodeError{Kind: TooLarge, Attr: d.attr}
	}
	if d.lim.MaxValueSize > 0 && d.vsize > d.lim.MaxValueSize {
		return &DecodeError{Kind: TooLarge, Attr: d.attr}
	}
	return nil
}

// valueSize is a value's size as the decoder counts it (numbers 1 byte).
func valueSize(v abi.Value) int { return ValueSize(v, decodedNumberSize) }

// decodedNumberSize is the decoder's lower bound for a number: 1 byte.
func decodedNumberSize(s string) int {
	if s == "" {
		return 0
	}
	return 1
}

// ValueSize is a value's size by DynamoDB's rules, numbers counted by
// number (DynamoDB's rule is 1 byte per two significant digits plus 1):
// strings and binaries their bytes, BOOL and NULL 1 byte, sets the sum of
// their members, lists and maps 3 bytes plus 1 byte per element (plus the
// key names of a map).
func ValueSize(v abi.Value, number func(string) int) int {
	switch v.Kind {
	case abi.KindS:
		return len(v.Str)
	case abi.KindN:
		return number(v.Str)
	case abi.KindB:
		return len(v.Bytes)
	case abi.KindBOOL, abi.KindNULL:
		return 1
	case abi.KindSS:
		n := 0
		for _, s := range v.Strs {
			n += len(s)
		}
		return n
	case abi.KindNS:
		n := 0
		for _, s := range v.Strs {
			n += number(s)
		}
		return n
	case abi.KindBS:
		n := 0
		for _, b := range v.Blobs {
			n += len(b)
		}
		return n
	case abi.KindL:
		n := 3
		for _, e := range v.List {
			n += 1 + ValueSize(e, number)
		}
		return n
	case abi.KindM:
		n := 3
		for k, e := range v.Map {
			n += 1 + len(k) + ValueSize(e, number)
		}
		return n
	}
	return 0
}
