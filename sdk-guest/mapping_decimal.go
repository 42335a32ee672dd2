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
			d.r.Fail("number %q does not fit %s", s, c.t)
			return
		}
		*(*Decimal)(p) = v
	}
}

// Decimal returns the N attribute name of the event's data as an exact
// Decimal; false when it is absent, not a number, or not a number DynamoDB
// stores.
func (e *Event) Decimal(name string) (Decimal, bool) {
	k, o := lookup(e.data, name)
	if k != abi.KindN {
		return Decimal{}, false
	}
	s, next := shortStr(e.data, o)
	if next < 0 {
		var ok bool
		if s, ok = text(e.data, o); !ok {
			return Decimal{}, false
		}
	}
	if d, ok := parseSmall(s); ok { // the hot path: no wrapping, no error values
		return d, d.Valid() == nil
	}
	d, err := ParseDecimal(s)
	return d, err == nil
}
