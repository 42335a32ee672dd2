package swap_test

import (
	"context"
	"log"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
)

// A projection's plugin served from a watched file: the engine calls the
// Swapper as its logic.Logic; Watch swaps in every module renamed into place
// that passes the pipeline, and the version that computed each item is
// recorded in its "writtenBy" attribute.
func Example() {
	ctx := context.Background()
	src, err := swap.NewDirSource("plugins/order-summary.wasm", 100*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	s, err := swap.Open(ctx, src, swap.Config{
		Plugin:    plugin.Config{CacheDir: "wasm-cache"},
		WrittenBy: "writtenBy",
		Archive:   "plugins/.archive", // for `host plugin rollback --file ... --archive ...`
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	go swap.Watch(ctx, s, src)
	// ... apply.New(apply.Projection{..., Logic: s}, db, events)
	log.Printf("serving %s", s.Current().Plugin)
}

// In cmd/lambda, the source is checked between invocations, never during
// one: at the start of each invocation, before any call into the plugin.
func ExampleBetween() {
	ctx := context.Background()
	client, err := swap.NewS3Client(ctx, "", "eu-west-1")
	if err != nil {
		log.Fatal(err)
	}
	src := swap.NewS3Source(client, "plugins", "orders/order-summary.wasm", 0)
	s, err := swap.Open(ctx, src, swap.Config{Plugin: plugin.Config{CacheDir: "/var/task/wasm-cache"}})
	if err != nil {
		log.Fatal(err)
	}
	between := &swap.Between{Swapper: s, Source: src, Every: 30 * time.Second}
	handler := func(ctx context.Context) error {
		if _, _, err := between.Check(ctx); err != nil {
			log.Printf("plugin source: %v (the current version keeps serving)", err)
		}
		// ... process the batch with s
		return nil
	}
	_ = handler
}
