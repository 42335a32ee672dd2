package admin_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Counter is the example projection's state: how many visits a page had.
type Counter struct {
	Page   string `ddb:"page"`
	Visits int64  `ddb:"visits"`
}

// visits counts a page's visits (natively here; the same value compiles
// to a Wasm plugin, see plugins/examples).
var visits = guest.Projection[Counter]{
	Name: "visits", Version: "1.0.0", Stream: "Page", EventTypes: []string{"Visited"},
	Key: func(streamID string, _ guest.Event) (guest.Key, bool) {
		return abi.Item{"pk": abi.S("Page#" + streamID), "sk": abi.S("Counter")}, true
	},
	Initial: func(streamID string, _ guest.Event) Counter { return Counter{Page: streamID} },
	Evolve: func(s Counter, _ guest.Event) (Counter, error) {
		s.Visits++
		return s, nil
	},
}

// A service embedding the host: the host (event store and projection), the
// change-feed reader that feeds it (what `host run` does), the metrics both
// report to, and the admin server showing them, with /readyz answering
// 200 once the host is built and the reader has taken its leases. DynamoDB
// here is ddblocal, started in the process; a service leaves "endpoint"
// out and talks to AWS.
func Example_service() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := ddblocal.Start(ctx, ddblocal.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	cfg, err := host.ParseConfig([]byte(`{
  "endpoint": "` + db.Endpoint() + `",
  "eventStore": {"table": "events", "schema": "web", "schemaVersion": 1,
                 "streams": [{"name": "Page", "eventTypes": ["Visited"], "composite": ["path"]}]},
  "projections": [{"name": "counters", "plugin": "native:visits", "table": "page-counters",
                   "checkpoint": {"field": "version"}}],
  "sidecar": {"leaseTable": "leases", "workerId": "worker-1", "pollInterval": "20ms"}
}`))
	if err != nil {
		log.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)

	// 1. the metrics, and the admin server, up first: /readyz says 503
	// while the rest starts
	m := telemetry.New(telemetry.Options{})
	var started atomic.Bool
	var reader atomic.Pointer[sidecar.Reader]
	srv, err := admin.Start(ctx, admin.Options{Addr: "127.0.0.1:0", Metrics: m, Logger: quiet,
		Ready:  admin.ReadyAfterLeaseRound(m, started.Load, true),
		Worker: "worker-1",
		Fleet: func(ctx context.Context) (sidecar.Fleet, error) {
			if r := reader.Load(); r != nil {
				return r.Fleet(ctx, sidecar.FleetOptions{Lag: true})
			}
			return sidecar.Fleet{}, fmt.Errorf("the reader is not started yet")
		}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println("before the host:", status(srv.URL()+"/readyz"))

	// 2. the host, reporting its plugin calls to the metrics; its tables
	// (`host tables create` does the same)
	plugin, err := guest.New(visits)
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.WithLogger(quiet), host.WithCallObserver(m.PluginCall),
		host.WithNative("visits", logic.Native(plugin, "visits")))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.CreateTables(ctx); err != nil {
		log.Fatal(err)
	}
	m.ServePlugins(h) // the status page's plugins and swaps
	m.ServeSwaps(h)
	started.Store(true)

	// 3. the reader, reporting to the metrics, run until ctx ends
	r, err := sidecar.New(ctx, h, cfg, sidecar.Options{Observer: m, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	reader.Store(r)
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(runCtx) }()

	// 4. events appended; the reader folds them into the row
	visit := host.NewEvent{Type: "Visited", Data: abi.Item{}}
	if _, err := h.Append(ctx, "Page", "home", 0, visit, visit, visit); err != nil {
		log.Fatal(err)
	}
	key := abi.Item{"pk": abi.S("Page#home"), "sk": abi.S("Counter")}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		row, _, err := h.Row(ctx, "counters", key)
		if err != nil {
			log.Fatal(err)
		}
		if row != nil && row["visits"].Str == "3" {
			fmt.Println("visits:", row["visits"].Str)
			break
		}
		if time.Now().After(deadline) {
			log.Fatalf("the row is %v after 20 s", row)
		}
	}
	fmt.Println("reading:", status(srv.URL()+"/readyz"))
	for _, line := range strings.Split(body(srv.URL()+"/metrics"), "\n") {
		if strings.HasPrefix(line, "dynafold_records_read_total{") { // labelled by the stream's ARN
			fmt.Println("records read:", line[strings.LastIndex(line, " ")+1:])
		}
	}

	// 5. a stop: the batch in flight is checkpointed, the leases released
	stop()
	fmt.Println("run:", <-ran)
	// Output:
	// before the host: 503
	// visits: 3
	// reading: 200
	// records read: 3
	// run: <nil>
}

// status returns the status code of a GET of url.
func status(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// body returns the body of a GET of url.
func body(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	return string(b)
}
