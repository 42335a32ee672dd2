package ddblocal

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// A second server on an address in use says what holds it and what to do.
func TestH6_AnAddressInUseSaysAnotherProcessListensThere(t *testing.T) {
	first := startServer(t, Options{Addr: "127.0.0.1:0", TTLInterval: -1})
	addr := strings.TrimPrefix(first.Endpoint(), "http://")
	srv, err := Start(context.Background(), Options{Addr: addr, TTLInterval: -1})
	if err == nil {
		_ = srv.Close()
		t.Fatalf("a second server listened on %s", addr)
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("error does not wrap EADDRINUSE: %v", err)
	}
	for _, want := range []string{"another process listens on " + addr, "another ddblocal?", "--addr 127.0.0.1:8001"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
