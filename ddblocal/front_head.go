package ddblocal

import (
	"bufio"
	"bytes"
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
// would (handOff asks for that at once).
func readHead(br *bufio.Reader, handOff bool) (fastRequest, int, headVerdict) {
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
			q, ok := parseHead(string(buf[:end]))
			if !ok {
				return fastRequest{}, 0, headHandOff
			}
			return q, end, headOK
		}
		scanned = len(buf)
		if len(buf) == br.Size() {
			return fastRequest{}, 0, headHandOff // longer than the buffer
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
// ok is false for what the front leaves to net/http.
func parseHead(h string) (q fastRequest, ok bool) {
	line, rest, _ := strings.Cut(h, "\r\n")
	method, line, _ := strings.Cut(line, " ")
	uri, proto, _ := strings.Cut(line, " ")
	if method != "POST" || proto != "HTTP/1.1" || !plainPath(uri) {
		return q, false
	}
	var host, cl, conn bool
	for {
		line, rest, _ = strings.Cut(rest, "\r\n")
		if line == "" {
			break
		}
		name, value, found := strings.Cut(line, ":")
		if !found || !isToken(name) {
			return q, false
		}
		value = strings.Trim(value, " \t")
		if !plainValue(value) {
			return q, false
		}
		switch len(name) {
		case 4:
			switch {
			case strings.EqualFold(name, "Host"):
				if host || !plainHost(value) {
					return q, false
				}
				host = true
			case strings.EqualFold(name, "Date"):
				if q.auth.date == "" {
					q.auth.date = value
				}
			}
		case 6, 7:
			if strings.EqualFold(name, "Origin") || strings.EqualFold(name, "Expect") || strings.EqualFold(name, "Upgrade") {
				return q, false
			}
		case 10:
			switch {
			case strings.EqualFold(name, "Connection"):
				if conn {
					return q, false
				}
				conn = true
				switch {
				case strings.EqualFold(value, "close"):
					q.close = true
				case strings.EqualFold(value, "keep-alive"):
				default:
					return q, false
				}
			case strings.EqualFold(name, "X-Amz-Date"):
				if q.auth.amzDate == "" {
					q.auth.amzDate = value
				}
			}
		case 12:
			switch {
			case strings.EqualFold(name, "Content-Type"):
				if q.contentType == "" {
					q.contentType = value
				}
			case strings.EqualFold(name, "X-Amz-Target"):
				if q.target == "" {
					q.target = value
				}
			}
		case 13:
			if strings.EqualFold(name, "Authorization") && q.auth.authorization == "" {
				q.auth.authorization = value
			}
		case 14:
			if strings.EqualFold(name, "Content-Length") {
				if cl || value == "" || strings.Trim(value, "0123456789") != "" {
					return q, false
				}
				n, err := strconv.ParseInt(value, 10, 64)
				if err != nil || n > maxBody {
					return q, false
				}
				cl = true
				q.contentLength = n
			}
		case 17:
			if strings.EqualFold(name, "Transfer-Encoding") {
				return q, false
			}
		}
	}
	return q, host
}

// plainPath reports whether a request target is a path the front takes
// as net/http does: printable ASCII, no query, fragment or escapes.
func plainPath(uri string) bool {
	if uri == "" || uri[0] != '/' {
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
func plainValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// plainHost reports whether a Host header is a host name or address and
// port, of the characters they take.
func plainHost(v string) bool {
	if v == "" {
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
func isToken(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
