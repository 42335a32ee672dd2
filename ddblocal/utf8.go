package ddblocal

import (
	"bytes"
	"unicode/utf8"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// checkUTF8 refuses a request body holding a string that is not valid
// UTF-8: invalid bytes, or a \u escape of a lone UTF-16 surrogate. Go's
// encoding/json would silently turn either into U+FFFD, so two distinct
// keys could alias one item; DynamoDB stores strings as UTF-8 and refuses
// them instead.
func checkUTF8(body []byte) error {
	if !utf8.Valid(body) {
		off := 0
		for off < len(body) {
			r, n := utf8.DecodeRune(body[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return invalidUTF8(off, "a byte sequence that is not UTF-8")
	}
	if !bytes.Contains(body, []byte(`\u`)) {
		return nil
	}
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(body) {
				return nil // invalid JSON: the decoder reports it
			}
			if body[i+1] != 'u' {
				i++
				continue
			}
			r, ok := ddbjson.HexRune(body, i+2)
			if !ok {
				return nil // invalid JSON: the decoder reports it
			}
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if i+7 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
					if lo, ok := ddbjson.HexRune(body, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
						i += 11
						continue
					}
				}
				return invalidUTF8(i, "a lone UTF-16 high surrogate escape")
			case r >= 0xDC00 && r < 0xE000:
				return invalidUTF8(i, "a lone UTF-16 low surrogate escape")
			}
			i += 5
		}
	}
	return nil
}

func invalidUTF8(off int, what string) error {
	return apierr.Validation("One or more parameter values were invalid: the request holds a string that is not valid UTF-8 (%s at byte %d of the request); send strings as valid UTF-8", what, off)
}
