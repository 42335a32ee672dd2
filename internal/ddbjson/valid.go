package ddbjson

import "unicode/utf8"

// Valid reports whether b is one JSON value (with whitespace around
// it), as encoding/json's Valid does, byte for byte: the same grammar, the
// same bytes taken inside strings (any from 0x20 on, UTF-8 or not), the
// same limit of 10000 nested arrays and objects. ddblocal checks every
// request body with it before anything else reads it: one pass, without
// encoding/json's scanner's call per byte.
func Valid(b []byte) bool {
	ok, _ := validate(b, false)
	return ok
}

// ValidText is Valid, and in the same pass whether every string in b is
// text: valid UTF-8 without a \u escape of a lone UTF-16 surrogate (a high
// one not followed at once by a \u escape of a low one, or a low one
// alone). encoding/json would turn either into U+FFFD; ddblocal refuses
// them (text false) instead. text is meaningful only when valid is true.
func ValidText(b []byte) (valid, text bool) { return validate(b, true) }

// validate is Valid, and with checkText ValidText.
func validate(b []byte, checkText bool) (valid, text bool) {
	text = true
	var arr [64]byte
	stack := arr[:0] // the closing byte of each open container
	i := jsonWS(b, 0)
	for {
		// a value starts at i
		if i >= len(b) {
			return false, text
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxJSONDepth {
				return false, text
			}
			i = jsonWS(b, i+1)
			closer := c + 2 // '}' or ']'
			if i < len(b) && b[i] == closer {
				i++
				break // an empty container: a value ended
			}
			stack = append(stack, closer)
			if c == '{' {
				if i = jsonKeyText(b, i, checkText, &text); i < 0 {
					return false, text
				}
			}
			continue
		case c == '"':
			if i = jsonStringText(b, i, checkText, &text); i < 0 {
				return false, text
			}
		case c == 't':
			if i = jsonLiteral(b, i, "true"); i < 0 {
				return false, text
			}
		case c == 'f':
			if i = jsonLiteral(b, i, "false"); i < 0 {
				return false, text
			}
		case c == 'n':
			if i = jsonLiteral(b, i, "null"); i < 0 {
				return false, text
			}
		default:
			if i = jsonNumber(b, i); i < 0 {
				return false, text
			}
		}
		// a value ended at i: close what it ends, or go on to the next one
		for {
			i = jsonWS(b, i)
			if len(stack) == 0 {
				return i == len(b), text
			}
			if i >= len(b) {
				return false, text
			}
			top := stack[len(stack)-1]
			if b[i] == top {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false, text
			}
			i = jsonWS(b, i+1)
			if top == '}' {
				if i = jsonKeyText(b, i, checkText, &text); i < 0 {
					return false, text
				}
			}
			break
		}
	}
}

// jsonWS skips JSON whitespace from i.
func jsonWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonKeyText reads a member name and its colon at i (whitespace after
// them skipped): where its value starts, or -1; with checkText it clears
// *text when the name is not text (strEndText).
func jsonKeyText(b []byte, i int, checkText bool, text *bool) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = jsonStringText(b, i, checkText, text); i < 0 {
		return -1
	}
	i = jsonWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return jsonWS(b, i+1)
}

// jsonString reads the string at i (its quote): the position after it, or
// -1.
func jsonString(b []byte, i int) int { return strEnd(b, i+1) }

// jsonStringText is jsonString, and with checkText it clears *text when
// the string is not text (strEndText).
func jsonStringText(b []byte, i int, checkText bool, text *bool) int {
	if !checkText {
		return strEnd(b, i+1)
	}
	end, ok := strEndText(b, i+1)
	if !ok {
		*text = false
	}
	return end
}

// jsonLiteral reads lit at i: the position after it, or -1.
func jsonLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// jsonNumber reads the number at i: the position after it, or -1.
func jsonNumber(b []byte, i int) int { return numberEnd(b, i) }

// strEndText is strEnd (i is inside the string), and whether the string
// is text (ValidText): its bytes UTF-8, its \u escapes no lone
// surrogates, checked as ddblocal's checkUTF8 checks a whole body.
func strEndText(b []byte, i int) (end int, text bool) {
	text = true
	for ; i < len(b); i++ {
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, text
		case c == '\\':
			i++
			if i >= len(b) {
				return -1, text
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r, ok := HexRune(b, i+1)
				if !ok {
					return -1, text
				}
				i += 4
				switch {
				case r >= 0xD800 && r < 0xDC00:
					if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						if lo, ok := HexRune(b, i+3); ok && lo >= 0xDC00 && lo < 0xE000 {
							i += 6
							continue
						}
					}
					text = false
				case r >= 0xDC00 && r < 0xE000:
					text = false
				}
			default:
				return -1, text
			}
		case c < 0x20:
			return -1, text
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				text = false
				continue
			}
			i += n - 1
		}
	}
	return -1, text
}

// HexRune reads the four hex digits of a \u escape at i (after the \u):
// the UTF-16 code unit, and false when they are not four hex digits.
func HexRune(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
