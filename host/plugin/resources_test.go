package plugin_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
)

// memSample is the host process's memory at one point.
type memSample struct {
	heap uint64 // Go heap in use after a full GC (runtime.MemStats.HeapInuse)
	rss  uint64 // resident set (VmRSS), after returning free memory to the OS
}

func (m memSample) String() string {
	return "heap " + mib(m.heap) + ", RSS " + mib(m.rss)
}

func mib(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// sampleMemory collects garbage, returns free memory to the OS and reads
// the Go heap in use and the process's resident set.
func sampleMemory(t *testing.T) memSample {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{heap: ms.HeapInuse, rss: vmRSS(t)}
}

// vmRSS reads VmRSS from /proc/self/status.
func vmRSS(t *testing.T) uint64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatalf("read the resident set: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("parse VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/self/status (err %v)", sc.Err())
	return 0
}

// TestW4_MemoryReturnsToBaseline makes hundreds of failing calls of each
// kind (memory limit, timeout, Wasm trap, Go panic), each of which discards
// its instance, and checks that the host's memory comes back to where it
// was: a discarded instance's module is closed and its linear memory freed.
// The memory-limit guest (balloon, a quicker hog) grows every instance to
// 32 MiB, so a leak of its instances would add 32 MiB per call; memory is
// checked every few calls so that a leak fails the test long before it
// exhausts the machine.
func TestW4_MemoryReturnsToBaseline(t *testing.T) {
	defer plugin.SetStartTimeoutForTest(time.Minute)()
	const (
		calls     = 100
		checkEach = 10
		pages     = 512 // 32 MiB per instance
		// heapSlack and rssSlack are what the process may grow by: room for
		// a couple of live instances and allocator noise, far below what
		// leaking even checkEach instances of the balloon would add (320 MiB).
		heapSlack = 96 << 20
		rssSlack  = 192 << 20
	)
	// Every failing call discards its instance, so each call starts a new
	// one. The starts get a bound of their own (a test hook): under
	// CallTimeout, as in production, a loaded machine made the loop's
	// 100 ms (now 20 ms: the call times out wherever it is, and only the
	// discarded instances matter here) time out the start instead of the
	// call, so no instance was discarded, or the plugin stopped serving. The loop fails fewer times
	// than the others, each waiting out its timeout (a leak of its
	// instances, a few MiB each, would still show).
	kinds := []struct {
		guest, event string
		cfg          plugin.Config
		want         error
		calls        int
	}{
		// The balloon's call timeout is long: on a loaded machine growing
		// to the limit has taken more than the default 5 s, and this test
		// is about memory, not time.
		{"balloon", "Balloon", plugin.Config{MemoryLimitPages: pages, CallTimeout: time.Minute}, plugin.ErrMemoryLimit, calls},
		{"loop", "Loop", plugin.Config{MemoryLimitPages: pages, CallTimeout: 20 * time.Millisecond}, plugin.ErrTimeout, calls / 2},
		{"trap", "Boom", plugin.Config{MemoryLimitPages: pages}, plugin.ErrTrap, calls},
		{"trap", "Panic", plugin.Config{MemoryLimitPages: pages}, plugin.ErrTrap, calls},
	}
	ctx := context.Background()
	plugins := make([]*plugin.Plugin, len(kinds))
	fail := func(i int) {
		t.Helper()
		_, err := plugins[i].Evolve(ctx, evolveReq("Placed", kinds[i].event))
		if !isCause(err, kinds[i].want) {
			t.Fatalf("%s: %v, want a call error matching %v", kinds[i].event, err, kinds[i].want)
		}
	}
	// Warm up: load every plugin and fail each kind a few times, so the
	// baseline holds the compiled modules and the runtime's steady state.
	for i, k := range kinds {
		k.cfg.PoolSize = 2
		plugins[i] = loadGuest(t, k.guest, k.cfg)
		for j := 0; j < 3; j++ {
			fail(i)
		}
	}
	base := sampleMemory(t)
	t.Logf("baseline: %s", base)

	start := time.Now()
	peak := base
	for n := 1; n <= calls; n++ {
		for i, k := range kinds {
			if n <= k.calls {
				fail(i)
			}
		}
		if n%checkEach != 0 {
			continue
		}
		m := sampleMemory(t)
		peak.heap, peak.rss = max(peak.heap, m.heap), max(peak.rss, m.rss)
		if m.heap > base.heap+heapSlack || m.rss > base.rss+rssSlack {
			t.Fatalf("after %d rounds of failing calls: %s; baseline %s: the discarded instances' memory is not released", n, m, base)
		}
	}
	for i, p := range plugins {
		mustServe(t, p)
		s := p.Stats()
		if s.Discarded < uint64(kinds[i].calls) {
			t.Errorf("%s: %d instances discarded after %d failing calls", kinds[i].event, s.Discarded, kinds[i].calls)
		}
		if s.Live > 2 || s.Busy != 0 {
			t.Errorf("%s: %d live, %d busy instances; the pool holds at most 2, none busy between calls", kinds[i].event, s.Live, s.Busy)
		}
	}
	end := sampleMemory(t)
	t.Logf("%d failing calls of %d kinds in %s; peak %s; end %s", 3*calls+calls/2, len(kinds), time.Since(start), peak, end)
	if end.heap > base.heap+heapSlack || end.rss > base.rss+rssSlack {
		t.Errorf("memory did not return to its baseline: %s, baseline %s", end, base)
	}
}

// isCause reports whether err is a *logic.CallError whose cause matches kind.
func isCause(err, kind error) bool {
	var ce *logic.CallError
	return errors.As(err, &ce) && errors.Is(err, kind)
}
