// Package netenv puts the network back between a host and DynamoDB in
// tests and benchmarks: ddblocal's handler behind a loopback HTTP server
// that logs every request (operation, the row keys it touches, when it
// arrived and was answered) before ddblocal serves it, with a latency on
// every request and on every new connection, and a webhook on the same
// footing. Requests are counted and ordered at the server, so the client
// under test is the real one.
package netenv

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/testenv"
)

// Env is ddblocal as a host sees it across a network. With a latency set
// (SetLatency), ddblocal delays every request by it (FaultConfig.Latency)
// and each new connection costs one more (a TCP handshake's round trip:
// its first request waits that long), so a client that opens a connection
// per request pays what it pays in a region. The embedded testenv.Env
// reaches ddblocal directly, unlogged and without latency: for setting up
// tables.
type Env struct {
	*testenv.Env
	// URL is the endpoint the host under test talks to.
	URL string
	// WebhookDown makes the webhook (Webhook) answer 503.
	WebhookDown atomic.Bool

	lat   atomic.Int64 // nanoseconds
	conns atomic.Int64 // connections accepted
	seq   atomic.Int64 // orders the log: a request's start and end

	mu  sync.Mutex
	log []Request

	hook atomic.Pointer[func(op string, body []byte)]

	dialed sync.Map // client-side addresses of connections DialContext opened (their handshake was paid there)
}

// Request is one request as the server saw it. Start and End are positions
// in one sequence: End is taken before the first byte of the answer leaves,
// so a request sent after another's answer has a Start greater than its
// End.
type Request struct {
	Op         string   // the DynamoDB operation, or "Deliver" for the webhook
	Table      string   // the first table it names ("" for the webhook)
	Keys       []string // the pk values of the items it reads or writes
	Start, End int64
	At, Done   time.Time // when it arrived and was answered
	Err        bool      // the answer was an error
	NewConn    bool      // it was the first request of its connection
	body       []byte    // parsed for Table and Keys when the log is read
}

// Start starts ddblocal (closed when tb ends) behind a logging server.
func Start(tb testing.TB) *Env {
	tb.Helper()
	n := &Env{Env: testenv.Start(tb)}
	n.URL = n.serve(tb, "", n.Server)
	return n
}

// serve serves h through the logging handler on a loopback listener whose
// connections cost a latency, until tb ends, and returns its URL.
func (n *Env) serve(tb testing.TB, op string, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: n.handler(op, h), ReadHeaderTimeout: 5 * time.Second,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connRequests{}, new(atomic.Int64))
		}}
	go func() { _ = srv.Serve(&slowListener{Listener: ln, env: n}) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// SetLatency sets the latency of every request and new connection: of
// ddblocal's requests (replacing its faults), of this server's connections
// and of the webhook's deliveries.
func (n *Env) SetLatency(d time.Duration) {
	n.lat.Store(int64(d))
	n.Server.SetFaults(ddblocal.FaultConfig{Latency: d})
}

// SetFaults sets ddblocal's faults, with the latency in force.
func (n *Env) SetFaults(f ddblocal.FaultConfig) {
	f.Latency = n.Latency()
	n.Server.SetFaults(f)
}

// Latency returns the latency in force.
func (n *Env) Latency() time.Duration { return time.Duration(n.lat.Load()) }

// Reset forgets the log and the connection count.
func (n *Env) Reset() {
	n.mu.Lock()
	n.log = nil
	n.mu.Unlock()
	n.conns.Store(0)
}

// Conns returns the connections accepted since Reset.
func (n *Env) Conns() int64 { return n.conns.Load() }

// Requests returns the log since Reset, in order of arrival.
func (n *Env) Requests() []Request {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := append([]Request(nil), n.log...)
	for i := range out {
		out[i].Table, out[i].Keys = requestKeys(out[i].Op, out[i].body)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Counts returns the requests since Reset by operation.
func (n *Env) Counts() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := map[string]int{}
	for _, r := range n.log {
		c[r.Op]++
	}
	return c
}

// SetHook makes f run as each request arrives, before it is served
// (replacing any hook or gate); f may block the request.
func (n *Env) SetHook(f func(op string, body []byte)) { n.hook.Store(&f) }

// ClearHook removes the hook or gate.
func (n *Env) ClearHook() { n.hook.Store(nil) }

// handler logs each request and passes it to next; op names a request
// without an X-Amz-Target (the webhook).
func (n *Env) handler(op string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l := Request{Op: op, Start: n.seq.Add(1), At: time.Now(), body: body}
		if c, ok := r.Context().Value(connRequests{}).(*atomic.Int64); ok {
			l.NewConn = c.Add(1) == 1
		}
		if t := r.Header.Get("X-Amz-Target"); t != "" {
			l.Op = t[strings.LastIndexByte(t, '.')+1:]
		}
		if h := n.hook.Load(); h != nil {
			(*h)(l.Op, body)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK, answer: func() { l.End, l.Done = n.seq.Add(1), time.Now() }}
		next.ServeHTTP(rec, r)
		rec.answered()
		l.Err = rec.status >= 300
		n.mu.Lock()
		n.log = append(n.log, l)
		n.mu.Unlock()
	})
}

// Webhook starts a loopback webhook (stopped when tb ends) that takes the
// latency to answer 204 to every delivery, 503 while WebhookDown;
// deliveries are logged as "Deliver", with the effect's row pk.
func (n *Env) Webhook(tb testing.TB) string {
	tb.Helper()
	return n.serve(tb, "Deliver", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(n.Latency())
		if n.WebhookDown.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
}

// statusWriter records a response's status, and calls answer once, before
// the first byte of the answer can reach the client: a request sent after
// the answer is sent after that.
type statusWriter struct {
	http.ResponseWriter
	status int
	answer func()
	once   sync.Once
}

func (s *statusWriter) answered() { s.once.Do(s.answer) }

func (s *statusWriter) WriteHeader(code int) {
	s.answered()
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	s.answered()
	return s.ResponseWriter.Write(p)
}

// connRequests keys a connection's request count in its context.
type connRequests struct{}

// slowListener counts the connections it accepts and makes each one's
// first read wait the latency: the round trip of a handshake.
type slowListener struct {
	net.Listener
	env *Env
}

func (l *slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.env.conns.Add(1)
	return &slowConn{Conn: c, env: l.env, wait: l.env.Latency()}, nil
}

type slowConn struct {
	net.Conn
	env  *Env
	once sync.Once
	wait time.Duration
}

func (c *slowConn) Read(p []byte) (int, error) {
	c.once.Do(func() {
		// a connection DialContext opened paid its handshake as it was
		// dialed (its first request is written after the dial returned,
		// so it is known by now)
		if _, ok := c.env.dialed.LoadAndDelete(c.RemoteAddr().String()); !ok {
			time.Sleep(c.wait)
		}
	})
	return c.Conn.Read(p)
}

// DialContext dials as a client on a network would: the connection is
// ready after the latency in force (the TCP handshake's round trip), and
// the server then adds nothing to its first request. A client whose
// transport dials through it sees a new connection cost what it costs on a
// network, where Go's transport takes whichever comes first, the dial or a
// connection being returned to its pool; without it (another process's
// client), the server makes the first request wait instead.
func (n *Env) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if d := n.Latency(); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		n.dialed.Store(c.LocalAddr().String(), true)
	}
	return c, err
}
