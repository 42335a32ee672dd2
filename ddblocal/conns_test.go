package ddblocal

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestY8_CloseClosesConnectionsThatSentNothing: a connection a client
// opened and never used does not hold Close for net/http's five seconds of
// grace for new connections; it is closed when Close begins, while a
// connection with a request in flight is still answered; with ddblocal's
// own front and with net/http's server alone.
func TestY8_CloseClosesConnectionsThatSentNothing(t *testing.T) {
	for _, netHTTPOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "front", true: "net-http"}[netHTTPOnly], func(t *testing.T) {
			closeWithAnUnusedConnection(t, Options{TTLInterval: -1, netHTTPOnly: netHTTPOnly})
		})
	}
}

func closeWithAnUnusedConnection(t *testing.T, opts Options) {
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	unused := dial(t, s)
	// a second connection that has served a request and is idle
	used := dial(t, s)
	if _, err := io.WriteString(used, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	if n, err := used.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200") {
		t.Fatalf("health check: %q, %v", buf[:n], err)
	}
	// the server has registered the unused connection once it answers on another one accepted later
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(start); took >= 4*time.Second {
		t.Fatalf("Close took %v with an unused connection open; net/http alone waits 5s for it", took)
	}
	if n, err := unused.Read(buf); err == nil {
		t.Fatalf("the unused connection is still open after Close: read %q", buf[:n])
	}
}
