package sidecar_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

// A long-running host reading its own change feed: what `host run` does.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cfg, err := host.LoadConfig("dynafold.json") // with a "sidecar" section
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())
	go h.Watch(ctx) // hot-swapped plugins
	r, err := sidecar.New(ctx, h, cfg, sidecar.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// On SIGTERM: the batch in flight finishes, is checkpointed, and the
	// leases are released; Run returns nil.
	if err := r.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
