package ddbclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// countingConn counts its Write calls.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestY8_WireWritesEachRequestInOneWrite: a request's headers and body go
// to the connection in one write (not the headers flushed first, then the
// body: two writes, and two reads at the server), on one kept connection,
// and every body is counted as written when the call returns (its buffer
// goes back to the pool).
func TestY8_WireWritesEachRequestInOneWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = rw.Write([]byte(`{}`))
	}))
	defer srv.Close()
	var writes, dials atomic.Int64
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{c, &writes}, err
	}}}
	w := newWire(dynamoDB, srv.URL, client, "us-east-1", credentials.NewStaticCredentialsProvider("a", "b", ""), retry.NewStandard())
	for i, size := range []int{10, 500, 3000} {
		body := []byte(`{"TableName":"` + strings.Repeat("t", size) + `"}`)
		st := &bodies{}
		before := writes.Load()
		if err := w.call(st.context(context.Background()), "PutItem", body, func([]byte) error { return nil }, st); err != nil {
			t.Fatal(err)
		}
		if n := writes.Load() - before; n != 1 {
			t.Errorf("request %d (%d bytes): %d writes to the connection, want 1", i, len(body), n)
		}
		if n := st.open.Load(); n != 0 {
			t.Errorf("request %d: %d bodies not written when the call returned, want 0", i, n)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests, want 1 kept", n)
	}
}
