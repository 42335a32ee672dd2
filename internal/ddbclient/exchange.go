package ddbclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"os"
	"strconv"
	"sync"
	"time"
)

// answer is what a Wire reads of an answer besides its body: the status,
// x-amz-crc32, and for an error answer (not 2xx) every header, for
// responseError.
type answer struct {
	status  int
	proto   string // error answers only
	crc     uint32 // x-amz-crc32, when hasCRC and crcOK
	hasCRC  bool
	crcOK   bool
	crcText [12]byte
	crcLen  int
	header  http.Header // error answers only
}

// crcHeader returns the x-amz-crc32 header as it came.
func (a *answer) crcHeader() string { return string(a.crcText[:a.crcLen]) }

// response is an error answer as net/http would have given it.
func (a *answer) response(body int) *http.Response {
	return &http.Response{StatusCode: a.status, Status: strconv.Itoa(a.status) + " " + http.StatusText(a.status),
		Proto: a.proto, ProtoMajor: 1, ProtoMinor: 1, Header: a.header, ContentLength: int64(body), Body: http.NoBody}
}

// ErrAnswerHeaderTooLarge is an answer whose status line and headers are
// longer than the transport's MaxResponseHeaderBytes (1 MiB when unset).
var ErrAnswerHeaderTooLarge = errors.New("the answer's headers are longer than the limit (MaxResponseHeaderBytes)")

// errMalformed is an answer that is not HTTP/1.x.
type errMalformed struct{ what string }

func (e errMalformed) Error() string { return "malformed HTTP answer: " + e.what }

// aLongTimeAgo is a deadline in the past: it ends a wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// reqBufs are the requests' bytes being built and written.
var reqBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// roundTrip writes req and reads the answer into body and a, on an idle
// connection or a new one. A request whose write to an idle connection
// failed before any byte went is sent again once, on a new connection;
// any other failure is returned (the SDK's retry policy decides).
func (p *ownConns) roundTrip(ctx context.Context, req []byte, body *bytes.Buffer, a *answer) error {
	for try := 0; ; try++ {
		c, err := p.get(ctx, try > 0)
		if err != nil {
			return err
		}
		keep, written, err := p.exchange(ctx, c, req, body, a)
		if err == nil {
			if keep {
				p.put(c)
			} else {
				p.closeConn(c)
			}
			return nil
		}
		p.closeConn(c)
		if written || !c.reused || try > 0 || ctx.Err() != nil {
			return err
		}
		body.Reset()
		*a = answer{}
	}
}

// exchange writes req on c and reads its answer: keep is whether c can
// serve another request, written whether any of req went.
func (p *ownConns) exchange(ctx context.Context, c *ownConn, req []byte, body *bytes.Buffer, a *answer) (keep, written bool, err error) {
	dl, hasDL := ctx.Deadline()
	if hasDL {
		_ = c.c.SetDeadline(dl)
		c.deadline = true
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(aLongTimeAgo) })
		defer func() {
			if !stop() {
				keep = false // the deadline is in the past now, or will be
			}
		}()
	}
	defer func() {
		if err != nil && hasDL && !time.Now().Before(dl) && errors.Is(err, os.ErrDeadlineExceeded) {
			<-ctx.Done() // the context's own timer is about to fire: its error is the caller's
		}
		if keep && c.deadline {
			_ = c.c.SetDeadline(time.Time{})
			c.deadline = false
		}
	}()
	n, err := c.c.Write(req)
	if err != nil {
		return false, n > 0, err
	}
	keep, err = p.readAnswer(c, body, a)
	return keep && err == nil, true, err
}

// readAnswer reads an answer from c: the status line and headers (1xx
// answers skipped), then the body into body, by its Content-Length,
// chunked, or (with neither) to the end of the connection. keep is false
// when c cannot serve another request: an HTTP/1.0 answer, Connection:
// close, a body read to the end, bytes after the body.
func (p *ownConns) readAnswer(c *ownConn, body *bytes.Buffer, a *answer) (keep bool, err error) {
	br := c.br
	left := p.maxHeader
	var (
		length   int64 = -1
		chunked  bool
		closeIt  bool
		keepOpen bool
		http10   bool
	)
	for {
		line, err := readLine(br, &left)
		if err != nil {
			return false, err
		}
		// HTTP/1.x 200 OK
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
			return false, errMalformed{fmt.Sprintf("status line %q", trimForError(line))}
		}
		code, perr := strconv.Atoi(string(line[9:12]))
		if perr != nil || code < 100 {
			return false, errMalformed{fmt.Sprintf("status line %q", trimForError(line))}
		}
		a.status = code
		http10 = line[7] == '0'
		closeIt, keepOpen, chunked, length = false, false, false, -1
		a.header = nil
		if code < 200 || code >= 300 {
			a.header = http.Header{}
			a.proto = string(line[:8])
		}
		for {
			line, err := readLine(br, &left)
			if err != nil {
				return false, err
			}
			if len(line) == 0 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return false, errMalformed{fmt.Sprintf("header line %q", trimForError(line))}
			}
			name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
			switch {
			case equalFold(name, "Content-Length"):
				n, perr := strconv.ParseInt(string(val), 10, 64)
				if perr != nil || n < 0 || (length >= 0 && n != length) {
					return false, errMalformed{fmt.Sprintf("Content-Length %q", trimForError(val))}
				}
				length = n
			case equalFold(name, "Transfer-Encoding"):
				if !equalFold(val, "chunked") || chunked {
					return false, errMalformed{fmt.Sprintf("Transfer-Encoding %q", trimForError(val))}
				}
				chunked = true
			case equalFold(name, "Connection"):
				for tok := range bytes.SplitSeq(val, []byte(",")) {
					tok = bytes.TrimSpace(tok)
					closeIt = closeIt || equalFold(tok, "close")
					keepOpen = keepOpen || equalFold(tok, "keep-alive")
				}
			case equalFold(name, "X-Amz-Crc32"):
				a.hasCRC = true
				a.crcLen = copy(a.crcText[:], val)
				v, perr := strconv.ParseUint(string(val), 10, 32)
				a.crc, a.crcOK = uint32(v), perr == nil && len(val) <= len(a.crcText)
			}
			if a.header != nil {
				a.header.Add(string(name), string(val))
			}
		}
		if code == http.StatusSwitchingProtocols {
			return false, errMalformed{"101 Switching Protocols"}
		}
		if code >= 200 {
			break
		}
		a.hasCRC = false // 1xx: the answer follows
	}
	closeIt = closeIt || (http10 && !keepOpen)
	body.Reset()
	switch {
	case a.status == http.StatusNoContent || a.status == http.StatusNotModified:
	case chunked:
		if _, err := body.ReadFrom(httputil.NewChunkedReader(br)); err != nil {
			return false, err
		}
		for { // trailers, up to the empty line
			line, err := readLine(br, &left)
			if err != nil {
				return false, err
			}
			if len(line) == 0 {
				break
			}
		}
	case length >= 0:
		body.Grow(int(min(length, 16<<20)) + bytes.MinRead)
		c.lr = io.LimitedReader{R: br, N: length}
		if _, err := body.ReadFrom(&c.lr); err != nil {
			return false, err
		}
		if c.lr.N > 0 {
			return false, io.ErrUnexpectedEOF
		}
	default:
		if _, err := body.ReadFrom(br); err != nil {
			return false, err
		}
		closeIt = true
	}
	return !closeIt && br.Buffered() == 0, nil
}

// readLine reads a line of an answer's head, without its line end,
// counting its bytes against left.
func readLine(br *bufio.Reader, left *int64) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if int64(len(long)) > *left {
				return nil, ErrAnswerHeaderTooLarge
			}
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	*left -= int64(len(line))
	if *left < 0 {
		return nil, ErrAnswerHeaderTooLarge
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nil
}

// equalFold reports whether b is s in ASCII, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// trimForError is b, cut to a length an error message can show.
func trimForError(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
