package netenv

import (
	"sync"
	"sync/atomic"
	"time"
)

// GateTimeout bounds how long a gate holds a request: a gate that does not
// open fails its test (Opened) instead of hanging it.
const GateTimeout = 10 * time.Second

// Gate holds the requests its hold matcher matches until want requests its
// arrive matcher matches have arrived: a barrier at the server that shows
// which requests a client has in flight at once. A request the client
// sends only after a held one's answer never arrives, and the gate times
// out.
type Gate struct {
	hold, arrive func(op string, keys []string) bool
	want         int
	mu           sync.Mutex
	got          int
	atTimeout    int // got when a held request first timed out
	open         chan struct{}
	timedOut     atomic.Bool
}

// SetGate installs a gate (replacing any hook) and returns it.
func (n *Env) SetGate(hold, arrive func(op string, keys []string) bool, want int) *Gate {
	g := &Gate{hold: hold, arrive: arrive, want: want, open: make(chan struct{})}
	n.SetHook(func(op string, body []byte) {
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
			case <-time.After(GateTimeout):
				g.mu.Lock()
				if !g.timedOut.Swap(true) {
					g.atTimeout = g.got
				}
				g.mu.Unlock()
			}
		}
	})
	return g
}

// Opened reports whether the gate opened before any held request timed
// out.
func (g *Gate) Opened() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.got >= g.want && !g.timedOut.Load()
}

// Arrived returns how many requests arrive matched: all of them when the
// gate opened, else those that had arrived when it first timed out.
func (g *Gate) Arrived() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut.Load() {
		return g.atTimeout
	}
	return g.got
}

// Op matches the requests of one operation.
func Op(name string) func(string, []string) bool {
	return func(o string, _ []string) bool { return o == name }
}

// OpOn matches the requests of one operation that touch the row whose pk
// is pk.
func OpOn(name, pk string) func(string, []string) bool {
	return func(o string, keys []string) bool { return o == name && Touches(keys, pk) }
}

// Touches reports whether keys hold pk.
func Touches(keys []string, pk string) bool {
	for _, k := range keys {
		if k == pk {
			return true
		}
	}
	return false
}
