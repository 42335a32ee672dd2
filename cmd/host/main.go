// Command host is the dynafold projection host's command line: the demo on
// the embedded default, the operator commands, and ddblocal standalone.
//
//	host demo                      the main job, on an in-process ddblocal
//	host apply --config F --records F|-   run one captured batch, print the response
//	host append --config F --stream S --id ID --type T [--data JSON]
//	host catchup | rebuild --config F --id ID [--written-by V]
//	host filter-pattern --config F
//	host plugin precompile | validate | test | rollback
//	host ddblocal --addr 127.0.0.1:8000 [--data DIR] [--allow-non-loopback]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string) error
}

var commands = []command{
	{"demo", "run the main job on the embedded default (ddblocal in-process) and check every row", runDemo},
	{"apply", "run one captured Lambda DynamoDB stream event through processBatch; print batchItemFailures", runApply},
	{"append", "append an event to a stream", runAppend},
	{"ddblocal", "serve the DynamoDB-compatible server until interrupted", runDDBLocal},
}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands {
		if c.name == os.Args[1] {
			err := c.run(ctx, os.Args[2:])
			if errors.Is(err, flag.ErrHelp) {
				os.Exit(2)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "host %s: %v\n", c.name, err)
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "host: unknown command %q\n", os.Args[1])
	usage()
	os.Exit(2)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: host <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.usage)
	}
}
