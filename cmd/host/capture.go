package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/host"
)

func runCapture(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: host capture --config FILE --stream NAME [--id ID] [--from V] [--to V] [--out FILE]

Writes a range of a stream from the event store as a Lambda DynamoDB stream
event ({"Records": [...]}), the file host apply and host replay read.

example:
  host capture --config dynafold.json --stream Order --id o-1 --from 3 --out batch.json

flags:`)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	stream := fs.String("stream", "", "stream name, e.g. Order (required)")
	id := fs.String("id", "", "stream id (composites joined with #); empty: every instance of the stream (scans the event table)")
	from := fs.Uint64("from", 0, "first version (0: the first)")
	to := fs.Uint64("to", 0, "last version (0: the head)")
	out := fs.String("out", "-", "output file, or - for stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *stream == "" {
		return fmt.Errorf("--stream is required: the stream to capture, e.g. --stream Order")
	}
	if *to != 0 && *from > *to {
		return fmt.Errorf("--from %d is after --to %d", *from, *to)
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly()) // no plugin is needed
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	recs, err := h.Capture(ctx, host.CaptureOptions{Stream: *stream, StreamID: *id, From: *from, To: *to})
	if err != nil {
		return err
	}
	if recs == nil {
		recs = []host.Record{}
	}
	w := os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := writeJSON(w, map[string]any{"Records": recs}); err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(os.Stderr, "%d records written to %s\n", len(recs), *out)
		return w.Close()
	}
	return nil
}
