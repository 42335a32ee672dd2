package guest

import (
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// fillDecimal maps a Decimal to an N attribute, exactly: its plain text on
// the way out (a value DynamoDB cannot store fails the mapping), parsed on
// the way in.
func (c *codec) fillDecimal() {
	c.enc = func(e *encoder, p unsafe.Pointer) {
		d := (*Decimal)(p)
		if err := d.Valid(); err != nil {
			e.fail(c.t, "%s: %v (round it first, or store it as a string)", d, err)
			return
		}
		e.buf = append(e.buf, byte(abi.KindN))
		var tmp [48]byte
		e.buf = abi.AppendBytes(e.buf, d.appendText(tmp[:0]))
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		v, err := ParseDecimal(s)
		if err != nil {
			d.notFit(d.field, s, c.t)
			return
		}
		*(*Decimal)(p) = v
	}
}

// Decimal returns the N attribute name of the event's data as an exact
// Decimal; false when it is absent, not a number, or not a number DynamoDB
// stores.
func (e *Event) Decimal(name string) (Decimal, bool) { return decimalAttr(e.data, name) }

// decimalSlow is Event.Decimal by the general lookup and parser.
func decimalSlow(data, name string) (Decimal, bool) {
	k, o := lookup(data, name)
	if k != abi.KindN {
		return Decimal{}, false
	}
	s, next := shortStr(data, o)
	if next < 0 {
		var ok bool
		if s, ok = text(data, o); !ok {
			return Decimal{}, false
		}
	}
	if d, ok := parseSmall(s); ok { // no wrapping, no error values
		return d, d.Valid() == nil
	}
	d, err := ParseDecimal(s)
	return d, err == nil
}

// decimalAttr is the hot path of Event.Decimal (an evolve that sums one
// attribute per event), in one function: inside a Wasm guest every call,
// and every value passed through memory, costs several times what it does
// natively. It walks the data's attributes while their names are short and
// their values scalar, and parses the value of name when it is a plain
// number: an optional minus sign, at most 19 digits and an optional point,
// with an exponent DynamoDB always stores; anything else goes to
// decimalSlow.
func decimalAttr(data, name string) (Decimal, bool) {
	var n, o, vl int
	if len(data) == 0 {
		return Decimal{}, false // no data
	}
	if data[0] >= 0x80 {
		goto slow
	}
	n, o = int(data[0])-1, 1 // an absent item (0) has no entries
	for i := 0; i < n; i++ {
		if uint(o) >= uint(len(data)) {
			goto slow
		}
		kl := int(data[o])
		if kl >= 0x80 || kl >= len(data)-o-1 {
			goto slow
		}
		key := data[o+1 : o+1+kl]
		o += 1 + kl
		k := abi.Kind(data[o])
		o++
		if kl == len(name) && eqStr(key, name) {
			if k != abi.KindN {
				return Decimal{}, false
			}
			if uint(o) >= uint(len(data)) {
				goto slow
			}
			vl = int(data[o])
			if vl >= 0x80 || vl > len(data)-o-1 {
				goto slow
			}
			s := data[o+1 : o+1+vl]
			j, neg := 0, false
			if len(s) > 0 && s[0] == '-' {
				j, neg = 1, true
			}
			var v uint64
			digits, dot := 0, -1
			for ; j < len(s); j++ {
				c := s[j] - '0'
				if c > 9 {
					if s[j] != '.' || dot >= 0 {
						goto slow
					}
					dot = j
					continue
				}
				v = v*10 + uint64(c)
				digits++
			}
			if digits == 0 || digits > smallDigits {
				goto slow
			}
			if v == 0 {
				return Decimal{}, true
			}
			exp := 0
			if dot >= 0 {
				exp = dot + 1 - len(s)
			}
			for v&1 == 0 { // trimZeros, inline
				q := (v >> 1) * inv5
				if q > maxDiv5 {
					break
				}
				v, exp = q, exp+1
			}
			if exp < -130 || exp > 125-(smallDigits-1) {
				goto slow // Valid's slow path decides
			}
			return Decimal{lo: v, exp: int32(exp), neg: neg}, true
		}
		switch k {
		case abi.KindS, abi.KindN, abi.KindB:
			if uint(o) >= uint(len(data)) {
				goto slow
			}
			vl = int(data[o])
			if vl >= 0x80 || vl > len(data)-o-1 {
				goto slow
			}
			o += 1 + vl
		case abi.KindNULL:
		case abi.KindBOOL:
			o++
		default:
			goto slow
		}
	}
	return Decimal{}, false
slow:
	return decimalSlow(data, name)
}
