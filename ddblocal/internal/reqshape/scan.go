package reqshape

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// str reads the JSON string at w.pos and returns its bytes (unescaped;
// a slice of the body when it has no escapes).
func (w *walker) str() []byte {
	start := w.pos + 1
	esc := false
	for w.pos++; w.pos < len(w.b); w.pos++ {
		switch w.b[w.pos] {
		case '\\':
			esc = true
			w.pos++
		case '"':
			w.pos++
			raw := w.b[start : w.pos-1]
			if !esc {
				return raw
			}
			var s string
			if json.Unmarshal(w.b[start-1:w.pos], &s) != nil {
				return raw
			}
			return []byte(s)
		}
	}
	return w.b[start:]
}

// skipScalar passes a number or literal.
func (w *walker) skipScalar() {
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return
		}
		w.pos++
	}
}

// number reads the number at w.pos.
func (w *walker) number() []byte {
	start := w.pos
	w.skipScalar()
	return w.b[start:w.pos]
}

// parseNumber returns a JSON number's value and whether it is written
// as an integer.
func parseNumber(text []byte) (float64, bool) {
	integral := true
	for _, c := range text {
		if c == '.' || c == 'e' || c == 'E' {
			integral = false
		}
	}
	f, _ := strconv.ParseFloat(string(text), 64)
	return f, integral
}

// skip passes one JSON value without counting what is in it.
func (w *walker) skip() error {
	w.ws()
	depth := 0
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case '"':
			w.skipString()
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return nil
			}
			depth--
			if depth == 0 {
				w.pos++
				return nil
			}
		case ',':
			if depth == 0 {
				return nil
			}
		}
		w.pos++
		if w.pos >= w.next {
			w.next = w.pos + stopEvery
			if w.ctx != nil {
				if err := w.ctx.Err(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (w *walker) skipString() {
	for w.pos++; w.pos < len(w.b); w.pos++ {
		switch w.b[w.pos] {
		case '\\':
			w.pos++
		case '"':
			w.pos++
			return
		}
	}
}

// length returns the number of members of the list or object at w.pos,
// leaving w.pos where it is.
func (w *walker) length() (int, error) {
	at := w.pos
	defer func() { w.pos = at }()
	w.pos++
	n := 0
	for {
		w.ws()
		if w.pos >= len(w.b) {
			return n, nil
		}
		switch w.b[w.pos] {
		case ']', '}':
			return n, nil
		case ',':
			w.pos++
			continue
		}
		n++
		if w.b[at] == '{' {
			w.skipString()
			w.ws()
			w.pos++ // ':'
		}
		if err := w.skip(); err != nil {
			return n, err
		}
	}
}

// any walks a value of no known shape, counting its members.
func (w *walker) any() error {
	w.ws()
	if w.pos >= len(w.b) {
		return nil
	}
	switch w.b[w.pos] {
	case '{', '[':
		obj := w.b[w.pos] == '{'
		w.pos++
		for {
			w.ws()
			if w.pos >= len(w.b) {
				return nil
			}
			switch w.b[w.pos] {
			case '}', ']':
				w.pos++
				return nil
			case ',':
				w.pos++
				continue
			}
			if obj {
				w.skipString()
				w.ws()
				w.pos++ // ':'
			}
			if err := w.count(); err != nil {
				return err
			}
			if err := w.any(); err != nil {
				return err
			}
		}
	case '"':
		w.skipString()
	default:
		w.skipScalar()
	}
	return nil
}

// utf16Len is a string's length as DynamoDB counts it (UTF-16 units).
func utf16Len(b []byte) int {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return len(b)
	}
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n += utf16.RuneLen(r)
	}
	return n
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
