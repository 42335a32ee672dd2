package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dynafold/dynafold/host"
)

func runApply(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	recPath := fs.String("records", "-", "captured Lambda DynamoDB stream event (JSON), or - for stdin")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	var raw []byte
	if *recPath == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(*recPath)
	}
	if err != nil {
		return fmt.Errorf("reading records: %w", err)
	}
	records, err := host.ParseEvent(raw)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	res, err := h.ProcessBatch(ctx, records)
	if err != nil {
		return err
	}
	for name, r := range res.Projections {
		for _, o := range r.Rows {
			if o.Err != nil {
				fmt.Fprintf(os.Stderr, "projection %s: row failed: %v\n", name, o.Err)
			}
		}
	}
	for _, f := range res.DecodeFailures {
		fmt.Fprintf(os.Stderr, "record %d (%s) failed to decode: %v\n", f.Position, f.Identifier, f.Err)
	}
	resp, err := res.Response()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return errors.Join(enc.Encode(resp))
}
