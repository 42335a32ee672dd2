package ddbjson

// Valid reports whether b is one JSON value (with whitespace around
// it), as encoding/json's Valid does, byte for byte: the same grammar, the
// same bytes taken inside strings (any from 0x20 on, UTF-8 or not), the
// same limit of 10000 nested arrays and objects. ddblocal checks every
// request body with it before anything else reads it: one pass, without
// encoding/json's scanner's call per byte.
func Valid(b []byte) bool {
	var arr [64]byte
	stack := arr[:0] // the closing byte of each open container
	i := jsonWS(b, 0)
	for {
		// a value starts at i
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxJSONDepth {
				return false
			}
			i = jsonWS(b, i+1)
			closer := c + 2 // '}' or ']'
			if i < len(b) && b[i] == closer {
				i++
				break // an empty container: a value ended
			}
			stack = append(stack, closer)
			if c == '{' {
				if i = jsonKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = jsonString(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = jsonLiteral(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = jsonLiteral(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = jsonLiteral(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = jsonNumber(b, i); i < 0 {
				return false
			}
		}
		// a value ended at i: close what it ends, or go on to the next one
		for {
			i = jsonWS(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == top {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = jsonWS(b, i+1)
			if top == '}' {
				if i = jsonKey(b, i); i < 0 {
					return false
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

// jsonKey reads a member name and its colon at i (whitespace after
// them skipped): where its value starts, or -1.
func jsonKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = jsonString(b, i); i < 0 {
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

// jsonLiteral reads lit at i: the position after it, or -1.
func jsonLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// jsonNumber reads the number at i: the position after it, or -1.
func jsonNumber(b []byte, i int) int { return numberEnd(b, i) }
