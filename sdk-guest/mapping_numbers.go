package guest

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

func (c *codec) readNumber(d *decoder, k abi.Kind) (string, bool) {
	if k != abi.KindN {
		c.mismatch(d, k)
		return "", false
	}
	return d.r.String(), d.r.Err() == nil
}

func (c *codec) fillInt() {
	bits := c.t.Bits()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		var v int64
		switch bits {
		case 8:
			v = int64(*(*int8)(p))
		case 16:
			v = int64(*(*int16)(p))
		case 32:
			v = int64(*(*int32)(p))
		default:
			v = *(*int64)(p)
		}
		e.buf = appendIntN(e.buf, v)
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		v, ok := parseInt(s, bits)
		if !ok {
			d.notFit(d.field, s, c.t)
			return
		}
		switch bits {
		case 8:
			*(*int8)(p) = int8(v)
		case 16:
			*(*int16)(p) = int16(v)
		case 32:
			*(*int32)(p) = int32(v)
		default:
			*(*int64)(p) = v
		}
	}
}

func (c *codec) fillUint() {
	bits := c.t.Bits()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		var v uint64
		switch bits {
		case 8:
			v = uint64(*(*uint8)(p))
		case 16:
			v = uint64(*(*uint16)(p))
		case 32:
			v = uint64(*(*uint32)(p))
		default:
			v = *(*uint64)(p)
		}
		e.buf = appendUintN(e.buf, v, false)
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		v, err := strconv.ParseUint(s, 10, bits)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || f != math.Trunc(f) || f < 0 || f >= math.Ldexp(1, bits) {
				d.notFit(d.field, s, c.t)
				return
			}
			v = uint64(f)
		}
		switch bits {
		case 8:
			*(*uint8)(p) = uint8(v)
		case 16:
			*(*uint16)(p) = uint16(v)
		case 32:
			*(*uint32)(p) = uint32(v)
		default:
			*(*uint64)(p) = v
		}
	}
}

func (c *codec) fillFloat() {
	bits := c.t.Bits()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		var f float64
		if bits == 32 {
			f = float64(*(*float32)(p))
		} else {
			f = *(*float64)(p)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.fail(c.t, "%v cannot be stored as a DynamoDB number", f)
			return
		}
		e.buf = append(e.buf, byte(abi.KindN))
		var tmp [32]byte
		if bits == 64 {
			e.buf = abi.AppendBytes(e.buf, appendFloat(tmp[:0], f))
		} else {
			e.buf = abi.AppendBytes(e.buf, strconv.AppendFloat(tmp[:0], f, 'g', -1, bits))
		}
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		var f float64
		var err error
		if bits == 64 {
			f, err = parseFloat(s)
		} else {
			f, err = strconv.ParseFloat(s, bits)
		}
		if err != nil {
			d.notFit(d.field, s, c.t)
			return
		}
		if bits == 32 {
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
	}
}
