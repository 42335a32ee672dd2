package ddblocal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
)

// fastRequest is a request head the front serves itself.
type fastRequest struct {
	request
	contentLength int64
	close         bool // Connection: close
}

// headVerdict is what readHead decided about a request head.
type headVerdict int

const (
	headOK      headVerdict = iota // the front serves it
	headHandOff                    // net/http serves the connection from here
	headFailed                     // the connection is to close (timeout, error, nothing read)
)

// readHead reads a request's line and headers into br's buffer, without
// consuming them: on headOK it returns the request and the head's length;
// headHandOff when the request is not one the front serves as net/http
// would (handOff asks for that at once). Before a read that can wait, it
// sets c's read-header deadline (c nil: none).
func readHead(br *bufio.Reader, handOff bool, c *fastConn) (fastRequest, int, headVerdict) {
	if handOff {
		return fastRequest{}, 0, headHandOff
	}
	scanned := 0
	for {
		buf, _ := br.Peek(br.Buffered())
		end, bad := headEnd(buf, scanned)
		if bad {
			return fastRequest{}, 0, headHandOff
		}
		if end > 0 {
			q, ok := parseHead(buf[:end])
			if !ok {
				return fastRequest{}, 0, headHandOff
			}
			return q, end, headOK
		}
		scanned = len(buf)
		if len(buf) == br.Size() {
			return fastRequest{}, 0, headHandOff // longer than the buffer
		}
		if c != nil {
			c.headDeadline()
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			var ne net.Error
			if br.Buffered() == 0 || (errors.As(err, &ne) && ne.Timeout()) {
				return fastRequest{}, 0, headFailed
			}
			// a partial head and the end of the connection: net/http's
			// answer to it
			return fastRequest{}, 0, headHandOff
		}
	}
}

// headEnd returns the length of the head in buf (0 when it is not all
// there), scanning the lines from from on; bad when a line does not end
// in CRLF or the first one is empty.
func headEnd(buf []byte, from int) (end int, bad bool) {
	for i := from; i < len(buf); {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return 0, false
		}
		i += j
		if i == 0 || buf[i-1] != '\r' || i == 1 {
			return 0, true
		}
		if i >= 3 && buf[i-3] == '\r' && buf[i-2] == '\n' {
			return i + 1, false
		}
		i++
	}
	return 0, false
}

// parseHead reads a whole head (request line, headers, the empty line);
// ok is false for what the front leaves to net/http. The values it keeps
// are copied out of h, into one string.
func parseHead(h []byte) (q fastRequest, ok bool) {
	line, rest, ok := headLine(h)
	if !ok {
		return q, false
	}
	method, line, _ := bytes.Cut(line, sp)
	uri, proto, _ := bytes.Cut(line, sp)
	if string(method) != "POST" || string(proto) != "HTTP/1.1" || !plainPath(uri) {
		return q, false
	}
	var host, cl, conn bool
	var target, ctype, auth, amzDate, date []byte
	for {
		if line, rest, ok = headLine(rest); !ok {
			return q, false
		}
		if len(line) == 0 {
			break
		}
		name, value, found := bytes.Cut(line, colon)
		if !found || !isToken(name) {
			return q, false
		}
		value = trimOWS(value)
		if !plainValue(value) {
			return q, false
		}
		switch len(name) {
		case 4:
			switch {
			case bytes.EqualFold(name, hostName):
				if host || !plainHost(value) {
					return q, false
				}
				host = true
			case bytes.EqualFold(name, dateName):
				if date == nil {
					date = value
				}
			}
		case 6, 7:
			if bytes.EqualFold(name, originName) || bytes.EqualFold(name, expectName) || bytes.EqualFold(name, upgradeName) {
				return q, false
			}
		case 10:
			switch {
			case bytes.EqualFold(name, connectionName):
				if conn {
					return q, false
				}
				conn = true
				switch {
				case bytes.EqualFold(value, closeValue):
					q.close = true
				case bytes.EqualFold(value, keepAliveValue):
				default:
					return q, false
				}
			case bytes.EqualFold(name, amzDateName):
				if amzDate == nil {
					amzDate = value
				}
			}
		case 12:
			switch {
			case bytes.EqualFold(name, contentTypeName):
				if ctype == nil {
					ctype = value
				}
			case bytes.EqualFold(name, targetName):
				if target == nil {
					target = value
				}
			}
		case 13:
			if bytes.EqualFold(name, authorizationName) && auth == nil {
				auth = value
			}
		case 14:
			if bytes.EqualFold(name, contentLengthName) {
				if cl || len(value) == 0 || len(bytes.Trim(value, "0123456789")) != 0 {
					return q, false
				}
				n, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil || n > maxBody {
					return q, false
				}
				cl = true
				q.contentLength = n
			}
		case 17:
			if bytes.EqualFold(name, transferEncodingName) {
				return q, false
			}
		}
	}
	if !host {
		return q, false
	}
	var b strings.Builder
	b.Grow(len(target) + len(ctype) + len(auth) + len(amzDate) + len(date))
	for _, v := range [...][]byte{target, ctype, auth, amzDate, date} {
		b.Write(v)
	}
	all, at := b.String(), 0
	next := func(v []byte) string {
		at += len(v)
		return all[at-len(v) : at]
	}
	q.target, q.contentType = next(target), next(ctype)
	q.auth = authHeaders{authorization: next(auth), amzDate: next(amzDate), date: next(date)}
	return q, true
}

var (
	sp, colon                                        = []byte(" "), []byte(":")
	hostName, dateName, originName, expectName       = []byte("Host"), []byte("Date"), []byte("Origin"), []byte("Expect")
	upgradeName, connectionName, amzDateName         = []byte("Upgrade"), []byte("Connection"), []byte("X-Amz-Date")
	contentTypeName, targetName                      = []byte("Content-Type"), []byte("X-Amz-Target")
	authorizationName, contentLengthName             = []byte("Authorization"), []byte("Content-Length")
	transferEncodingName, closeValue, keepAliveValue = []byte("Transfer-Encoding"), []byte("close"), []byte("keep-alive")
)

// headLine returns the line at the start of h without its CRLF, and what
// follows (all of h when it holds no LF: the head's end); ok false at a
// bare LF, which the front leaves to net/http (as the checks of a line's
// parts would, were it kept in the line).
func headLine(h []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(h, '\n')
	if i < 0 {
		return h, nil, true
	}
	if i < 1 || h[i-1] != '\r' {
		return nil, nil, false
	}
	return h[:i-1], h[i+1:], true
}

// trimOWS trims spaces and tabs around a header value.
func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// plainPath reports whether a request target is a path the front takes
// as net/http does: printable ASCII, no query, fragment or escapes.
func plainPath(uri []byte) bool {
	if len(uri) == 0 || uri[0] != '/' {
		return false
	}
	for i := 0; i < len(uri); i++ {
		if c := uri[i]; c <= ' ' || c >= 0x7f || c == '?' || c == '#' || c == '%' {
			return false
		}
	}
	return true
}

// plainValue reports whether a header value has no control characters
// (but tabs).
func plainValue(v []byte) bool {
	// eight bytes at a time: those without a byte under ' ' or of 0x7f
	// (most of a head) pass without a look at each byte
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := binary.LittleEndian.Uint64(v[i:])
		y := x ^ 0x7f7f7f7f7f7f7f7f // a zero byte where x has 0x7f
		if (x-ones*' ')&^x&highs == 0 && (y-ones)&^y&highs == 0 {
			continue
		}
		if !plainBytes(v[i : i+8]) {
			return false
		}
	}
	return plainBytes(v[i:])
}

// plainBytes is plainValue a byte at a time.
func plainBytes(v []byte) bool {
	for _, c := range v {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// plainHost reports whether a Host header is a host name or address and
// port, of the characters they take.
func plainHost(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-:[]_", c) >= 0) {
			return false
		}
	}
	return true
}

// isToken reports whether a header name is an RFC 9110 token.
func isToken(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if !tokenChars[c] {
			return false
		}
	}
	return true
}

// tokenChars are the bytes of an RFC 9110 token.
var tokenChars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()
