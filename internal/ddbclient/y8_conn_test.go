package ddbclient_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/netenv"
	"github.com/dynafold/dynafold/internal/testenv"
)

// noRetry is a retryer of one attempt: a failure is the call's error.
func noRetry() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 1 })
}

// countAttempts counts w's attempts.
func countAttempts(w *ddbclient.Wire) *atomic.Int64 {
	var n atomic.Int64
	w.Attempt = func(string) { n.Add(1) }
	return &n
}

func put(ctx context.Context, w *ddbclient.Wire, table, pk string) error {
	body := fmt.Sprintf(`{"TableName":%q,"Item":{"pk":{"S":%q},"sk":{"S":"s"},"n":{"N":"1"}}}`, table, pk)
	return w.Call(ctx, "PutItem", []byte(body), func([]byte) error { return nil })
}

// TestY8_NewClientsWiresUseTheirOwnConnections: a Wire on NewClient's
// client (the SDK's BuildableClient) sends on connections of its own,
// one kept connection for many requests, against ddblocal; a client with
// an HTTPClient of its caller's, or a proxy, goes through net/http.
func TestY8_NewClientsWiresUseTheirOwnConnections(t *testing.T) {
	ctx := context.Background()
	n := netenv.Start(t)
	table := n.Table(t, "own", false)
	c, err := ddbclient.NewClient(ctx, n.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	w, ok := ddbclient.NewWire(ctx, c)
	if !ok || !ddbclient.OwnConns(w) {
		t.Fatalf("NewClient's client: wire %v, own connections %v; want both", ok, ok && ddbclient.OwnConns(w))
	}
	n.Reset()
	for i := range 20 {
		if err := put(ctx, w, table, fmt.Sprint("k", i)); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	err = w.Call(ctx, "GetItem", fmt.Appendf(nil, `{"TableName":%q,"Key":{"pk":{"S":"k7"},"sk":{"S":"s"}},"ConsistentRead":true}`, table),
		func(b []byte) error { got = append(got, b...); return nil })
	if err != nil || !strings.Contains(string(got), `"k7"`) {
		t.Fatalf("GetItem: %v, answer %s", err, got)
	}
	if conns := n.Conns(); conns != 1 || ddbclient.Dials(w) != 1 {
		t.Errorf("21 requests one after another: %d connections at the server, %d dialed; want 1", conns, ddbclient.Dials(w))
	}

	// A caller's own HTTP client: net/http, which it may record or change.
	var seen atomic.Int64
	own, _ := ddbclient.NewClient(ctx, n.URL, "", func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			seen.Add(1)
			return http.DefaultTransport.RoundTrip(r)
		})}
	})
	w2, ok := ddbclient.NewWire(ctx, own)
	if !ok || ddbclient.OwnConns(w2) {
		t.Fatalf("a client with its own HTTPClient: wire %v; want a wire through net/http", ok)
	}
	if err := put(ctx, w2, table, "x"); err != nil || seen.Load() != 1 {
		t.Fatalf("through the caller's client: %v, %d requests seen; want 1", err, seen.Load())
	}

	// A proxy: net/http, through it.
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		_, _ = io.WriteString(rw, `{}`)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	viaProxy := ddbclient.HTTPClient(10).WithTransportOptions(func(tr *http.Transport) { tr.Proxy = http.ProxyURL(pu) })
	w3 := ddbclient.NewWireTo("http://dynamodb.example:8000", viaProxy, nil)
	if ddbclient.OwnConns(w3) {
		t.Fatal("a client with a proxy for the endpoint sends on connections of its own; want net/http")
	}
	if err := put(ctx, w3, table, "y"); err != nil || proxied.Load() != 1 {
		t.Fatalf("through the proxy: %v, %d requests at the proxy; want 1", err, proxied.Load())
	}
}

// TestY8_NetHTTPOnRequest: DYNAFOLD_HTTP_CLIENT=net/http sends a
// NewClient's Wire through net/http (the way back), and its requests
// still succeed.
func TestY8_NetHTTPOnRequest(t *testing.T) {
	ctx := context.Background()
	n := netenv.Start(t)
	table := n.Table(t, "nethttp", false)
	t.Setenv(ddbclient.HTTPClientEnv, "net/http")
	c, err := ddbclient.NewClient(ctx, n.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	w, ok := ddbclient.NewWire(ctx, c)
	if !ok || ddbclient.OwnConns(w) {
		t.Fatalf("%s=net/http: wire %v, own connections %v; want a wire through net/http", ddbclient.HTTPClientEnv, ok, ok && ddbclient.OwnConns(w))
	}
	if err := put(ctx, w, table, "k"); err != nil {
		t.Fatal(err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// okServer answers every request {} with its checksum and counts its
// connections.
func okServer(t *testing.T, tlsToo bool) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rw.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(`{}`))), 10))
		_, _ = io.WriteString(rw, `{}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	if tlsToo {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &conns
}

func call(ctx context.Context, w *ddbclient.Wire) error {
	return w.Call(ctx, "PutItem", []byte(`{"TableName":"t"}`), func([]byte) error { return nil })
}

// TestY8_AnIdleConnectionTheServerClosedIsNotUsed: the server closes the
// idle connection; the next request goes on a new one at its first
// attempt (no retry).
func TestY8_AnIdleConnectionTheServerClosedIsNotUsed(t *testing.T) {
	srv, conns := okServer(t, false)
	w := ddbclient.NewWireTo(srv.URL, ddbclient.HTTPClient(10), nil)
	attempts := countAttempts(w)
	ctx := context.Background()
	if err := call(ctx, w); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections()
	// The server's FIN reaches the client's socket on its own time.
	for end := time.Now().Add(10 * time.Second); !ddbclient.IdleConnClosed(w); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the idle connection never showed the server's close")
		}
	}
	if err := call(ctx, w); err != nil {
		t.Fatal(err)
	}
	if attempts.Load() != 2 || conns.Load() != 2 || ddbclient.Dials(w) != 2 {
		t.Fatalf("%d attempts, %d connections at the server, %d dialed; want 2 attempts (no retry) on 2 connections",
			attempts.Load(), conns.Load(), ddbclient.Dials(w))
	}
}

// script is a loopback HTTP/1.1 server whose answers the test writes:
// each connection reads requests and writes, for each, the next answer
// of the script (raw bytes; "" closes the connection unanswered, after
// reading the request; a nil answer holds the request until the test
// ends).
type script struct {
	ln       net.Listener
	mu       sync.Mutex
	answers  []*string
	conns    atomic.Int64
	received chan struct{} // a request was read
	closed   chan struct{} // a connection ended (read EOF or error)
	done     chan struct{}
}

func newScript(t *testing.T, answers ...*string) *script {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &script{ln: ln, answers: answers, received: make(chan struct{}, 100), closed: make(chan struct{}, 100), done: make(chan struct{})}
	var wg sync.WaitGroup
	t.Cleanup(func() { close(s.done); ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			wg.Go(func() { s.serve(c) })
		}
	})
	return s
}

func (s *script) URL() string { return "http://" + s.ln.Addr().String() }

func (s *script) serve(c net.Conn) {
	defer func() { c.Close(); s.closed <- struct{}{} }()
	go func() { <-s.done; c.Close() }()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.received <- struct{}{}
		s.mu.Lock()
		var a *string
		if len(s.answers) > 0 {
			a, s.answers = s.answers[0], s.answers[1:]
		} else {
			ok := okAnswer("")
			a = &ok
		}
		s.mu.Unlock()
		switch {
		case a == nil:
			_, _ = io.Copy(io.Discard, br) // until the client or the test ends it
			return
		case *a == "":
			return
		}
		if _, err := io.WriteString(c, strings.TrimSuffix(*a, closeAfter)); err != nil || strings.HasSuffix(*a, closeAfter) {
			return
		}
	}
}

// closeAfter ends a script's answer that the server closes the
// connection after.
const closeAfter = "\x00close"

// okAnswer is a 200 answer {} with its checksum and Content-Length, and
// extra header lines.
func okAnswer(extra string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Crc32: " +
		strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(`{}`))), 10) + "\r\n" + extra + "Content-Length: 2\r\n\r\n{}"
}

func ptr(s string) *string { return &s }

// TestY8_AServerClosingAfterTheRequestIsRetried: the request was written,
// then the connection ended without an answer: a retryable send error,
// and the SDK's retry policy's next attempt succeeds.
func TestY8_AServerClosingAfterTheRequestIsRetried(t *testing.T) {
	s := newScript(t, ptr(""), ptr(okAnswer("")))
	w := ddbclient.NewWireTo(s.URL(), ddbclient.HTTPClient(10), nil)
	attempts := countAttempts(w)
	if err := call(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if attempts.Load() != 2 || s.conns.Load() != 2 {
		t.Fatalf("%d attempts on %d connections; want 2 on 2", attempts.Load(), s.conns.Load())
	}
	s2 := newScript(t, ptr(""))
	w2 := ddbclient.NewWireTo(s2.URL(), ddbclient.HTTPClient(10), noRetry())
	err := call(context.Background(), w2)
	var send *smithyhttp.RequestSendError
	if !errors.As(err, &send) || !retry.NewStandard().IsErrorRetryable(send) {
		t.Fatalf("one attempt, closed after the request: %v; want a retryable *smithyhttp.RequestSendError", err)
	}
}

// TestY8_OddAnswersAreReadAsNetHTTPReadsThem: Connection: close, HTTP/1.0,
// chunked (with a trailer), no framing (read to the end), a 100 Continue
// ahead of the answer, a wrong x-amz-crc32 (retried): each body as sent,
// and a connection reused only after an answer that allows it.
func TestY8_OddAnswersAreReadAsNetHTTPReadsThem(t *testing.T) {
	sum := strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(`{"a":1}`))), 10)
	for _, tc := range []struct {
		name   string
		answer string
		kept   bool
		body   string
		tries  int64
	}{
		{"keep-alive", okAnswer(""), true, `{}`, 1},
		{"connection close", okAnswer("Connection: close\r\n"), false, `{}`, 1},
		{"HTTP/1.0", strings.Replace(okAnswer(""), "HTTP/1.1", "HTTP/1.0", 1), false, `{}`, 1},
		{"HTTP/1.0 keep-alive", strings.Replace(okAnswer("Connection: keep-alive\r\n"), "HTTP/1.1", "HTTP/1.0", 1), true, `{}`, 1},
		{"chunked", "HTTP/1.1 200 OK\r\nX-Amz-Crc32: " + sum + "\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\nX-Trailer: t\r\n\r\n", true, `{"a":1}`, 1},
		{"no framing", "HTTP/1.1 200 OK\r\nX-Amz-Crc32: " + sum + "\r\n\r\n{\"a\":1}" + closeAfter, false, `{"a":1}`, 1},
		{"100 continue first", "HTTP/1.1 100 Continue\r\n\r\n" + okAnswer(""), true, `{}`, 1},
		{"checksum mismatch, retried", strings.Replace(okAnswer(""), "X-Amz-Crc32: ", "X-Amz-Crc32: 1", 1), true, `{}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(t, ptr(tc.answer))
			w := ddbclient.NewWireTo(s.URL(), ddbclient.HTTPClient(10), nil)
			attempts := countAttempts(w)
			var got string
			err := w.Call(context.Background(), "PutItem", []byte(`{}`), func(b []byte) error { got = string(b); return nil })
			if err != nil || got != tc.body || attempts.Load() != tc.tries {
				t.Fatalf("%v, body %q, %d attempts; want %q in %d", err, got, attempts.Load(), tc.body, tc.tries)
			}
			if err := call(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			conns := int64(2)
			if tc.kept {
				conns = 1
			}
			if s.conns.Load() != conns {
				t.Fatalf("%d connections for 2 requests, want %d", s.conns.Load(), conns)
			}
		})
	}
}

// TestY8_AnErrorAnswerIsTheSDKsError: an error answer's type, message
// and request ID come through as the SDK makes them.
func TestY8_AnErrorAnswerIsTheSDKsError(t *testing.T) {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`
	s := newScript(t, ptr("HTTP/1.1 400 Bad Request\r\nX-Amzn-Requestid: RID1\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"+body))
	w := ddbclient.NewWireTo(s.URL(), ddbclient.HTTPClient(10), nil)
	err := call(context.Background(), w)
	var api smithy.APIError
	var re interface{ ServiceRequestID() string }
	if !errors.As(err, &api) || api.ErrorCode() != "ConditionalCheckFailedException" || api.ErrorMessage() != "The conditional request failed" ||
		!errors.As(err, &re) || re.ServiceRequestID() != "RID1" {
		t.Fatalf("%v; want ConditionalCheckFailedException with its message and request ID RID1", err)
	}
}

// TestY8_AHeaderBlockOverTheLimitIsAnError: an answer whose headers do
// not end is an error once past MaxResponseHeaderBytes, not a wait.
func TestY8_AHeaderBlockOverTheLimitIsAnError(t *testing.T) {
	huge := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Filler: "+strings.Repeat("f", 1000)+"\r\n", 80) + // 80 KB and no end
		"X-Long: " + strings.Repeat("l", 20000) + "\r\n"
	s := newScript(t, &huge)
	client := ddbclient.HTTPClient(10).WithTransportOptions(func(tr *http.Transport) { tr.MaxResponseHeaderBytes = 64 << 10 })
	w := ddbclient.NewWireTo(s.URL(), client, noRetry())
	err := call(context.Background(), w)
	if !errors.Is(err, ddbclient.ErrAnswerHeaderTooLarge) {
		t.Fatalf("%v; want ErrAnswerHeaderTooLarge", err)
	}
}

// TestY8_ACanceledRequestReturnsAtOnce: a cancel while the answer is
// awaited ends the call with the SDK's CanceledError and closes the
// connection; a deadline the same.
func TestY8_ACanceledRequestReturnsAtOnce(t *testing.T) {
	s := newScript(t, nil, nil)
	w := ddbclient.NewWireTo(s.URL(), ddbclient.HTTPClient(10), nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.received; cancel() }()
	err := call(ctx, w)
	var ce *smithy.CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v; want *smithy.CanceledError of context.Canceled", err)
	}
	<-s.closed // the server sees the connection end
	if ddbclient.IdleConns(w) != 0 || ddbclient.OpenConns(w) != 0 {
		t.Fatalf("%d idle, %d open connections after a cancel; want none", ddbclient.IdleConns(w), ddbclient.OpenConns(w))
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	err = call(dctx, w)
	if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline: %v; want *smithy.CanceledError of context.DeadlineExceeded", err)
	}
	<-s.closed
	if ddbclient.OpenConns(w) != 0 {
		t.Fatalf("%d open connections after a deadline; want none", ddbclient.OpenConns(w))
	}
}

// TestY8_OwnConnectionsSpeakTLS: https with the transport's TLS settings
// (the test server's certificate pool), one connection kept for many
// requests.
func TestY8_OwnConnectionsSpeakTLS(t *testing.T) {
	srv, conns := okServer(t, true)
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	client := ddbclient.HTTPClient(10).WithTransportOptions(func(tr *http.Transport) {
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	})
	w := ddbclient.NewWireTo(srv.URL, client, nil)
	if !ddbclient.OwnConns(w) {
		t.Fatal("https endpoint: want own connections")
	}
	for range 10 {
		if err := call(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	if conns.Load() != 1 || ddbclient.Dials(w) != 1 {
		t.Fatalf("10 requests on %d TLS connections (%d dialed); want 1", conns.Load(), ddbclient.Dials(w))
	}
	// Without the pool, the certificate is refused.
	bad := ddbclient.NewWireTo(srv.URL, ddbclient.HTTPClient(10), noRetry())
	if err := call(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unknown certificate: %v; want a certificate error", err)
	}
}

// TestY8_ConcurrentRequestsKeepAtMostTheIdleLimit: 100 requests at once
// (held at the server until all have arrived, so each needs a
// connection) open 100 connections, keep MaxIdleConnsPerHost of them,
// and the requests after reuse those.
func TestY8_ConcurrentRequestsKeepAtMostTheIdleLimit(t *testing.T) {
	const n, idle = 100, 10
	var arrived sync.WaitGroup
	arrived.Add(n)
	var conns atomic.Int64
	var free atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if !free.Load() {
			arrived.Done()
			arrived.Wait()
		}
		_, _ = io.WriteString(rw, `{}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	w := ddbclient.NewWireTo(srv.URL, ddbclient.HTTPClient(idle), nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- call(context.Background(), w) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if ddbclient.Dials(w) != n || conns.Load() != n || ddbclient.IdleConns(w) != idle || ddbclient.OpenConns(w) != idle {
		t.Fatalf("%d requests at once: %d dialed, %d at the server, %d idle, %d open; want %d, %d, %d, %d",
			n, ddbclient.Dials(w), conns.Load(), ddbclient.IdleConns(w), ddbclient.OpenConns(w), n, n, idle, idle)
	}
	free.Store(true)
	for range 3 * n {
		if err := call(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	if ddbclient.Dials(w) != n {
		t.Fatalf("requests one after another dialed %d more connections; want none", ddbclient.Dials(w)-n)
	}
}

// TestY8_IdleConnectionsCloseAfterTheIdleTimeout: a connection idle for
// the transport's IdleConnTimeout is closed.
func TestY8_IdleConnectionsCloseAfterTheIdleTimeout(t *testing.T) {
	s := newScript(t)
	client := ddbclient.HTTPClient(10).WithTransportOptions(func(tr *http.Transport) { tr.IdleConnTimeout = 20 * time.Millisecond })
	w := ddbclient.NewWireTo(s.URL(), client, nil)
	if err := call(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	<-s.closed // the client closed it
	if ddbclient.IdleConns(w) != 0 || ddbclient.OpenConns(w) != 0 {
		t.Fatalf("%d idle, %d open after the idle timeout; want none", ddbclient.IdleConns(w), ddbclient.OpenConns(w))
	}
	if err := call(context.Background(), w); err != nil || s.conns.Load() != 2 {
		t.Fatalf("the next request: %v on connection %d; want a new one, 2", err, s.conns.Load())
	}
}

// TestY8_ADialThatFailsIsUnreachable: a refused connection on a Wire's
// own connections is the error net/http's path gave (a *url.Error around
// the dial's *net.OpError), so Unreachable names the endpoint.
func TestY8_ADialThatFailsIsUnreachable(t *testing.T) {
	addr, _ := testenv.ClosedAddr(t) // nothing listens there, and no other test's server can
	w := ddbclient.NewWireTo("http://"+addr, ddbclient.HTTPClient(10), noRetry())
	if !ddbclient.OwnConns(w) {
		t.Fatal("want own connections")
	}
	err := call(context.Background(), w)
	ue, ok := ddbclient.Unreachable(err)
	if !ok || ue.Endpoint != "http://"+addr || !strings.Contains(ue.Cause, "refused") {
		t.Fatalf("%v: unreachable %v (%+v); want the endpoint http://%s, connection refused", err, ok, ue, addr)
	}
}
