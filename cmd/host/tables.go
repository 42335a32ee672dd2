package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dynafold/dynafold/host"
)

func init() {
	commands = append(commands, command{"tables",
		"create the configuration's tables that do not exist yet: the event table (with its stream), each read model, and the outbox, lease and quarantine tables configured, and the sidecar's Kinesis stream and streaming destination when configured (tables create --config F)", runTables})
}

// tablesOut is where `host tables` prints (a variable for tests).
var tablesOut io.Writer = os.Stdout

func runTables(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprintln(tablesOut, "usage: host tables create --config FILE")
			return flag.ErrHelp
		}
		return fmt.Errorf("usage: host tables create --config FILE")
	}
	fs := flag.NewFlagSet("tables create", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	setUsage(fs, `usage: host tables create --config F

Creates the configuration's tables that do not exist yet: the event table
(with its stream), each read model, and the outbox, lease and quarantine
tables configured, and the sidecar's Kinesis stream and streaming
destination when configured. Tables that exist are left as they are.

flags:
`)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
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
	reps, err := h.CreateTables(ctx)
	for _, r := range reps {
		what := "exists"
		switch {
		case r.Created:
			what = "created"
		case r.StreamEnabled:
			what = "exists; its NEW_IMAGE stream was enabled"
		}
		if len(r.IndexesAdded) > 0 {
			what += fmt.Sprintf("; index %s added (DynamoDB builds it in the background)", strings.Join(r.IndexesAdded, ", "))
		}
		if len(r.Tagged) > 0 {
			what += "; tagged derived state (" + strings.Join(r.Tagged, ", ") + ")"
		}
		fmt.Fprintf(tablesOut, "%-30s %-28s %s\n", r.Table, r.Role, what)
		if k := r.Kinesis; k != nil {
			what := "exists"
			if k.Created {
				what = "created (on-demand)"
			}
			switch {
			case k.Enabled:
				what += fmt.Sprintf("; streaming destination of %s enabled (%s)", k.Destination, k.PrecisionUsed)
			case k.PrecisionSet:
				what += fmt.Sprintf("; streaming destination of %s: precision set to %s", k.Destination, k.PrecisionUsed)
			default:
				what += fmt.Sprintf("; already the streaming destination of %s", k.Destination)
			}
			fmt.Fprintf(tablesOut, "%-30s %-28s %s\n", k.Stream, "kinesis stream", what)
		}
	}
	return err
}
