package ddblocal

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestY8_FrontServesPipelinedRequestsBeyondItsBuffer: requests sent in one
// write, four times the front's read buffer, are all answered, in order,
// by the front itself: a read that filled the buffer and ended where a
// request ends is followed by another read before the front waits for the
// socket (a front that waited then would wait for bytes already there);
// and a request sent once those are answered is answered too.
func TestY8_FrontServesPipelinedRequestsBeyondItsBuffer(t *testing.T) {
	fast, _ := frontPair(t, Options{})
	mkTable(t, client(fast, 1), "front", false)
	// requests of 1 KiB each, so that reads which fill the buffer end
	// where a request ends (the front cannot learn from a part of a
	// request that the socket has more)
	one := getItemRaw(t, fast)
	pad := "X-Pad: " + strings.Repeat("p", 1024-len(one)-len("X-Pad: \r\n"))
	one = strings.Replace(one, "\r\n", "\r\n"+pad+"\r\n", 1)
	if len(one) != 1024 {
		t.Fatalf("a request of %d bytes, want 1024", len(one))
	}
	n := 4 * frontBufSize / len(one)
	conn := dial(t, fast)
	go func() { _, _ = io.WriteString(conn, strings.Repeat(one, n)) }()
	br := bufio.NewReader(conn)
	for i := range n + 1 {
		if i == n {
			if _, err := io.WriteString(conn, one); err != nil {
				t.Fatal(err)
			}
		}
		a, err := readRawAnswer(br)
		if err != nil {
			t.Fatalf("answer %d of %d: %v (read %q)", i+1, n+1, err, a)
		}
		if !strings.HasPrefix(string(a), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(a), "\r\n\r\n{}") {
			t.Fatalf("answer %d of %d: %q, want a 200 with no item", i+1, n+1, a)
		}
	}
	if h := fast.fast.handedOff.Load(); h != 0 {
		t.Errorf("handed %d connections to net/http, want none", h)
	}
}
