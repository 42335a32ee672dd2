package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/testenv"
)

// netEnv is ddblocal as a host sees it across a network: its handler behind
// a loopback HTTP server of the test's own, which counts and logs every
// request (by operation, with the row keys it touches) before ddblocal
// serves it. With a latency set, ddblocal delays every request by it
// (FaultConfig.Latency) and each new connection costs one more (a TCP
// handshake's round trip: its first request waits that long), so a client
// that opens a connection per request pays what it pays in a region.
//
// A webhook on the same footing (same latency, logged) stands for an
// outbox's delivery target.
type netEnv struct {
	*testenv.Env
	URL string // the endpoint the host under test talks to

	lat   atomic.Int64 // nanoseconds
	conns atomic.Int64 // connections accepted
	seq   atomic.Int64 // orders the log: a request's start and end

	mu  sync.Mutex
	log []logged

	// hook, when set, runs as a request arrives, before ddblocal sees it.
	hook atomic.Pointer[func(op string, body []byte)]
	// webhookDown makes the webhook answer 503.
	webhookDown atomic.Bool
}

// logged is one request as the server saw it: Start and End are positions
// in one sequence, so a request sent after another's answer has a Start
// greater than its End.
type logged struct {
	Op         string   // DynamoDB operation, or "Deliver" for the webhook
	Table      string   // the first table named ("" for the webhook)
	Keys       []string // the pk values of the items it reads or writes
	Start, End int64
	At, Done   time.Time // when it arrived and was answered
	Err        bool      // the answer was an error
	body       []byte    // parsed for Table and Keys when the log is read
}

func startNetEnv(tb testing.TB) *netEnv {
	tb.Helper()
	n := &netEnv{Env: testenv.Start(tb)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: n.handler("", n.Server), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(&slowListener{Listener: ln, env: n}) }()
	tb.Cleanup(func() { _ = srv.Close() })
	n.URL = "http://" + ln.Addr().String()
	return n
}

// setLatency sets the latency of every request and new connection: of
// ddblocal's requests, this server's connections and the webhook's.
func (n *netEnv) setLatency(d time.Duration) {
	n.lat.Store(int64(d))
	n.Server.SetFaults(ddblocal.FaultConfig{Latency: d})
}

// setFaults sets ddblocal's faults with the latency in force.
func (n *netEnv) setFaults(f ddblocal.FaultConfig) {
	f.Latency = time.Duration(n.lat.Load())
	n.Server.SetFaults(f)
}

func (n *netEnv) latency() time.Duration { return time.Duration(n.lat.Load()) }

// reset forgets the log and the connection count.
func (n *netEnv) reset() {
	n.mu.Lock()
	n.log = nil
	n.mu.Unlock()
	n.conns.Store(0)
}

// requests returns the log, in order of start.
func (n *netEnv) requests() []logged {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := append([]logged(nil), n.log...)
	for i := range out {
		out[i].Table, out[i].Keys = requestKeys(out[i].Op, out[i].body)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// counts returns the number of requests by operation.
func (n *netEnv) counts() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := map[string]int{}
	for _, r := range n.log {
		c[r.Op]++
	}
	return c
}

// handler logs each request and passes it to next; op names a request
// without an X-Amz-Target (the webhook).
func (n *netEnv) handler(op string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l := logged{Op: op, Start: n.seq.Add(1), At: time.Now()}
		if t := r.Header.Get("X-Amz-Target"); t != "" {
			l.Op = t[strings.LastIndexByte(t, '.')+1:]
		}
		l.body = body
		if h := n.hook.Load(); h != nil {
			(*h)(l.Op, body)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK, answer: func() { l.End, l.Done = n.seq.Add(1), time.Now() }}
		pprof.Do(r.Context(), pprof.Labels("side", "server"), func(context.Context) { next.ServeHTTP(rec, r) })
		rec.answered()
		l.Err = rec.status >= 300
		n.mu.Lock()
		n.log = append(n.log, l)
		n.mu.Unlock()
	})
}

// webhook starts a loopback webhook with the environment's latency that
// answers 204 to every delivery (503 while webhookDown); deliveries are logged as "Deliver" with
// the effect's row pk.
func (n *netEnv) webhook(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	sink := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(n.latency())
		if n.webhookDown.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Handler: n.handler("Deliver", sink), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(&slowListener{Listener: ln, env: n}) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
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

// slowListener counts the connections it accepts and makes each one's
// first read wait the latency: the round trip of a handshake.
type slowListener struct {
	net.Listener
	env *netEnv
}

func (l *slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.env.conns.Add(1)
	return &slowConn{Conn: c, wait: l.env.latency()}, nil
}

type slowConn struct {
	net.Conn
	once sync.Once
	wait time.Duration
}

func (c *slowConn) Read(p []byte) (int, error) {
	c.once.Do(func() { time.Sleep(c.wait) })
	return c.Conn.Read(p)
}

// delivered returns the deliveries of the log the webhook accepted, in
// order of arrival, as
// "<row pk> v<version>.<index>".
func delivered(reqs []logged) []string {
	var out []string
	for _, r := range reqs {
		if r.Op != "Deliver" || r.Err {
			continue
		}
		var e struct {
			Version, Index int
		}
		_ = json.Unmarshal(r.body, &e)
		out = append(out, fmt.Sprintf("%s v%d.%d", strings.Join(r.Keys, ","), e.Version, e.Index))
	}
	return out
}

// requestKeys returns the first table a DynamoDB request names and the pk
// values of the items it reads or writes; for a webhook delivery, the pk of
// the effect's row.
func requestKeys(op string, body []byte) (string, []string) {
	type item map[string]map[string]any
	pk := func(it item) string {
		if v, ok := it["pk"]; ok {
			if s, ok := v["S"].(string); ok {
				return s
			}
		}
		return ""
	}
	switch op {
	case "Deliver":
		var e struct {
			Key map[string]any `json:"key"`
		}
		_ = json.Unmarshal(body, &e)
		if s, ok := e.Key["pk"].(string); ok {
			return "", []string{s}
		}
		return "", nil
	case "BatchGetItem":
		var in struct {
			RequestItems map[string]struct{ Keys []item }
		}
		_ = json.Unmarshal(body, &in)
		for t, ks := range in.RequestItems {
			var out []string
			for _, k := range ks.Keys {
				out = append(out, pk(k))
			}
			return t, out
		}
	case "TransactWriteItems":
		var in struct {
			TransactItems []struct {
				Put *struct {
					TableName string
					Item      item
				}
			}
		}
		_ = json.Unmarshal(body, &in)
		table, seen, out := "", map[string]bool{}, []string(nil)
		for _, ti := range in.TransactItems {
			if ti.Put == nil {
				continue
			}
			if table == "" {
				table = ti.Put.TableName
			}
			if k := pk(ti.Put.Item); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
		return table, out
	default:
		var in struct {
			TableName                 string
			Item, Key                 item
			ExpressionAttributeValues item
		}
		_ = json.Unmarshal(body, &in)
		switch {
		case in.Item != nil:
			return in.TableName, []string{pk(in.Item)}
		case in.Key != nil:
			return in.TableName, []string{pk(in.Key)}
		case op == "Query":
			for _, name := range []string{":h", ":pk"} {
				if s, ok := in.ExpressionAttributeValues[name]["S"].(string); ok {
					return in.TableName, []string{s}
				}
			}
		}
		return in.TableName, nil
	}
	return "", nil
}

// gateTimeout bounds how long a gate holds a request: a gate that does not
// open fails its test instead of hanging it.
const gateTimeout = 10 * time.Second

// gate holds the requests hold matches until want requests that arrive
// matches have arrived: a barrier that shows which requests a host has in
// flight at once (a request it sends only after a held one's answer never
// arrives, and the gate times out).
type gate struct {
	hold, arrive func(op string, keys []string) bool
	want         int
	mu           sync.Mutex
	got          int
	atTimeout    int // got when a held request first timed out
	open         chan struct{}
	timedOut     atomic.Bool
}

// setGate installs a gate (replacing any hook) and returns it.
func (n *netEnv) setGate(hold, arrive func(op string, keys []string) bool, want int) *gate {
	g := &gate{hold: hold, arrive: arrive, want: want, open: make(chan struct{})}
	f := func(op string, body []byte) {
		_, keys := requestKeys(op, body)
		if g.arrive(op, keys) {
			g.mu.Lock()
			g.got++
			if g.got == g.want {
				close(g.open)
			}
			g.mu.Unlock()
		}
		if g.hold(op, keys) {
			select {
			case <-g.open:
			case <-time.After(gateTimeout):
				g.mu.Lock()
				if !g.timedOut.Swap(true) {
					g.atTimeout = g.got
				}
				g.mu.Unlock()
			}
		}
	}
	n.hook.Store(&f)
	return g
}

// clearHook removes the hook or gate.
func (n *netEnv) clearHook() { n.hook.Store(nil) }

// opened reports whether the gate opened before any held request timed out.
func (g *gate) opened() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.got >= g.want && !g.timedOut.Load()
}

// arrived returns how many requests arrive matched: all of them when the
// gate opened, else those that had arrived when it first timed out.
func (g *gate) arrived() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut.Load() {
		return g.atTimeout
	}
	return g.got
}

// op matches requests of one operation.
func op(name string) func(string, []string) bool {
	return func(o string, _ []string) bool { return o == name }
}

// opOn matches requests of one operation that touch the row whose pk is pk.
func opOn(name, pk string) func(string, []string) bool {
	return func(o string, keys []string) bool {
		if o != name {
			return false
		}
		for _, k := range keys {
			if k == pk {
				return true
			}
		}
		return false
	}
}

// chain returns the length of the longest chain of requests each sent
// after the previous one was answered: the round trips a batch waited for
// one after the other. On a busy machine a request can start late for want
// of CPU and lengthen a chain; it never shortens one.
func chain(reqs []logged) int {
	depth := make([]int, len(reqs))
	longest := 0
	for j := range reqs {
		depth[j] = 1
		for i := range j {
			if reqs[i].End < reqs[j].Start && depth[i]+1 > depth[j] {
				depth[j] = depth[i] + 1
			}
		}
		longest = max(longest, depth[j])
	}
	return longest
}
