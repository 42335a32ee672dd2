package host_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

// Rows reads many rows by key at once, strongly consistent; QueryRows
// queries the read-model table. Both leave removed rows (tombstones) out.
func ExampleHost_Rows() {
	ctx := context.Background()
	h, stop := visitsHost(ctx) // host.New with a native projection on an in-process ddblocal: see example_test.go
	defer stop()
	for _, page := range []string{"home", "about"} {
		evs, err := h.Append(ctx, "Page", page, 0, host.NewEvent{Type: "Visited", Data: abi.Item{}})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := h.ApplyEvents(ctx, "counters", evs...); err != nil {
			log.Fatal(err)
		}
	}
	key := func(page string) abi.Item { return abi.Item{"pk": abi.S("Page#" + page), "sk": abi.S("Counter")} }

	rows, err := h.Rows(ctx, "counters", []abi.Item{key("home"), key("contact"), key("about")})
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range rows {
		if it == nil {
			fmt.Println("no row")
			continue
		}
		fmt.Println(it["page"].Str, it["visits"].Str)
	}
	found, err := h.QueryRows(ctx, "counters", host.RowQuery{KeyCondition: "pk = :pk",
		Values: map[string]abi.Value{":pk": abi.S("Page#home")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("query:", len(found), "row")
	// Output:
	// home 1
	// no row
	// about 1
	// query: 1 row
}
