package deliver

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// errNotNumber is the error of an N whose text is not a decimal number.
var errNotNumber = errors.New("not a decimal number")

// appendPlainItem writes it as a plain JSON object, attributes sorted.
func appendPlainItem(b *bytes.Buffer, it abi.Item) error {
	return ddbjson.AppendObject(b, it, appendPlain)
}

// appendPlain writes v as plain JSON (see the package documentation).
func appendPlain(b *bytes.Buffer, v abi.Value) error {
	switch v.Kind {
	case abi.KindS:
		ddbjson.AppendString(b, v.Str)
	case abi.KindN:
		return appendNumber(b, v.Str)
	case abi.KindB:
		appendBase64(b, v.Bytes)
	case abi.KindBOOL:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case abi.KindNULL:
		b.WriteString("null")
	case abi.KindM:
		return appendPlainItem(b, v.Map)
	case abi.KindL:
		b.WriteByte('[')
		for i, e := range v.List {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendPlain(b, e); err != nil {
				return fmt.Errorf("list element %d: %w", i, err)
			}
		}
		b.WriteByte(']')
	case abi.KindSS, abi.KindNS:
		b.WriteByte('[')
		for i, s := range v.Strs {
			if i > 0 {
				b.WriteByte(',')
			}
			if v.Kind == abi.KindSS {
				ddbjson.AppendString(b, s)
			} else if err := appendNumber(b, s); err != nil {
				return fmt.Errorf("set element %d: %w", i, err)
			}
		}
		b.WriteByte(']')
	case abi.KindBS:
		b.WriteByte('[')
		for i, x := range v.Blobs {
			if i > 0 {
				b.WriteByte(',')
			}
			appendBase64(b, x)
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("kind %d is not a DynamoDB type", v.Kind)
	}
	return nil
}

// appendNumber writes DynamoDB's decimal text s as a JSON number with the
// same digits. Forms DynamoDB accepts and JSON does not are rewritten to the
// same value: a leading '+' is dropped, ".5" becomes 0.5, "5." becomes 5 and
// leading zeros go ("007" is 7).
func appendNumber(b *bytes.Buffer, s string) error {
	t := strings.TrimPrefix(s, "+")
	neg := strings.HasPrefix(t, "-")
	if neg {
		t = t[1:]
	}
	mant, exp := t, ""
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant, exp = t[:i], t[i+1:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
	if whole == "" && frac == "" || !allDigits(whole) || !allDigits(frac) ||
		(mant != t && (digits == "" || !allDigits(digits))) {
		return fmt.Errorf("N %q: %w", s, errNotNumber)
	}
	if neg {
		b.WriteByte('-')
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	b.WriteString(whole)
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	if mant != t {
		b.WriteByte('e')
		b.WriteString(exp)
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func appendBase64(b *bytes.Buffer, x []byte) {
	b.WriteByte('"')
	b.WriteString(base64.StdEncoding.EncodeToString(x))
	b.WriteByte('"')
}
