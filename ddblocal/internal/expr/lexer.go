package expr

import "strings"

// tokKind is the lexical class of a token.
type tokKind int

const (
	tEOF    tokKind = iota
	tIdent          // attribute name, function name or keyword: [A-Za-z][A-Za-z0-9_]*
	tName           // expression attribute name: #[A-Za-z0-9_]+
	tValue          // expression attribute value: :[A-Za-z0-9_]+
	tNumber         // list index: [0-9]+
	tPunct          // ( ) [ ] , . = <> < <= > >= + -
	tBad            // a character no token starts with
)

// token is one lexical token; start and end are byte offsets in the source.
type token struct {
	kind       tokKind
	text       string
	start, end int
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isWord(c byte) bool   { return isLetter(c) || isDigit(c) || c == '_' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// lex splits src into tokens, ending with a tEOF token. It never fails: a
// character that starts no token becomes a tBad token, which no grammar
// accepts, so the parser reports it as the syntax error's token.
func lex(src string) []token {
	var toks []token
	i := 0
	for {
		for i < len(src) && isSpace(src[i]) {
			i++
		}
		if i >= len(src) {
			toks = append(toks, token{kind: tEOF, text: "<EOF>", start: len(src), end: len(src)})
			return toks
		}
		c := src[i]
		start := i
		switch {
		case isLetter(c):
			for i < len(src) && isWord(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tIdent, text: src[start:i], start: start, end: i})
		case isDigit(c):
			for i < len(src) && isDigit(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tNumber, text: src[start:i], start: start, end: i})
		case c == '#' || c == ':':
			i++
			for i < len(src) && isWord(src[i]) {
				i++
			}
			k := tName
			if c == ':' {
				k = tValue
			}
			if i == start+1 {
				k = tBad
			}
			toks = append(toks, token{kind: k, text: src[start:i], start: start, end: i})
		case strings.HasPrefix(src[i:], "<>") || strings.HasPrefix(src[i:], "<=") || strings.HasPrefix(src[i:], ">="):
			i += 2
			toks = append(toks, token{kind: tPunct, text: src[start:i], start: start, end: i})
		case strings.IndexByte("()[],.=<>+-", c) >= 0:
			i++
			toks = append(toks, token{kind: tPunct, text: src[start:i], start: start, end: i})
		default:
			// One whole UTF-8 character.
			i++
			for i < len(src) && src[i]&0xC0 == 0x80 {
				i++
			}
			toks = append(toks, token{kind: tBad, text: src[start:i], start: start, end: i})
		}
	}
}

// syntaxError returns DynamoDB's syntax error for the token at index i: the
// token, and the text near it (from the token before to the token after).
func syntaxError(k kind, src string, toks []token, i int) error {
	if i >= len(toks) {
		i = len(toks) - 1
	}
	t := toks[i]
	from, to := t.start, t.end
	if i > 0 {
		from = toks[i-1].start
	}
	if i+1 < len(toks) {
		to = toks[i+1].end
	}
	return invalid(k, "Syntax error; token: \"%s\", near: \"%s\"", t.text, src[from:to])
}

// maxExprSize is DynamoDB's limit on the length of an expression string.
const maxExprSize = 4096

// precheck returns DynamoDB's error for an expression that is empty or
// longer than 4 KB (checked before any parsing).
func precheck(src string, k kind) error {
	if len(src) > maxExprSize {
		return invalid(k, "Expression size has exceeded the maximum allowed size; expression size: %d", len(src))
	}
	return nil
}

// emptyError is DynamoDB's answer to an expression with no tokens.
func emptyError(k kind) error { return invalid(k, "The expression can not be empty;") }
