package host_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

// Verify reconciles a read model with its event store: here a stream
// whose events never reached the table (its records were lost) makes a
// row the table lacks. Repair would rebuild it.
func ExampleHost_Verify() {
	ctx := context.Background()
	h, stop := visitsHost(ctx) // host.New with a native projection on an in-process ddblocal: see example_test.go
	defer stop()
	visited := host.NewEvent{Type: "Visited", Data: abi.Item{}}
	home, err := h.Append(ctx, "Page", "home", 0, visited, visited)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := h.ProcessBatch(ctx, insertRecords(h, home)); err != nil { // records built with h.EventItem (example_test.go)
		log.Fatal(err)
	}
	if _, err := h.Append(ctx, "Page", "about", 0, visited); err != nil { // never delivered
		log.Fatal(err)
	}

	rep, err := h.Verify(ctx, host.VerifyOptions{
		Grace: time.Minute,
		Now:   func() time.Time { return time.Now().Add(time.Hour) }, // the events are an hour old by then
	})
	if err != nil {
		log.Fatal(err)
	}
	c := rep.Total()
	fmt.Println("rows:", c.Rows, "events:", c.Events, "drift:", c.Drift())
	for _, f := range rep.Findings {
		fmt.Println(f.Kind, f.Projection, f.Key["pk"].Str, "visits:", f.Fold["visits"].Str)
	}
	// Output:
	// rows: 1 events: 3 drift: 1
	// missing counters Page#about visits: 1
}
