// Command host is the dynafold projection host's command line: the demo on
// the embedded default, the operator commands, and ddblocal standalone.
//
//	host demo                      the main job, on an in-process ddblocal
//	host apply --config F --records F|-   run one captured batch, print the response
//	host append --config F --stream S --id ID --type T [--data JSON]
//	host catchup | rebuild --config F --id ID
//	host rebuild --config F (--written-by V[,V...] | --not-written-by V) [--dry-run]
//	host rebuild --config F --row KEY [--instance SOURCE#ID ...]
//	host catchup --config F --row KEY
//	host filter-pattern --config F [--kinesis]
//	host plugin precompile | validate | test | rollback
//	host run --config F [--worker-id ID] [--admin-addr ADDR]
//	host status --config F [--json]
//	host pause | resume --config F --projection P [--reason R]
//	host alerts --config F --format prometheus|cloudwatch [--out F]
//	host quarantine list | replay | drop --config F [--file PATH] [--json] [--id ID | --all | ID...]
//	host backfill --config F --projection P [--segments N] [--to-table T] [--since TIME]
//	host verify --config F [--projection P] [--sample F] [--grace D] [--repair] [--json]
//	host ddblocal --addr 127.0.0.1:8000 [--data DIR] [--allow-non-loopback] [--stream-shards N] [--split-after N] [--latency 5ms] [--request-memory-mib N] [--table-delay 500ms] [--allow-unsigned]
//	host healthcheck [--url http://127.0.0.1:9100/healthz]   a container health check
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/gctune"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string) error
}

var commands = []command{
	{"demo", "run the main job on the embedded default (ddblocal in-process) and check every row; --config F [--plugin F] --events F runs any plugin; --kinesis reads the feed through a Kinesis data stream as `host run` does", runDemo},
	{"apply", "run one captured Lambda DynamoDB stream (or Kinesis) event, or a Pipe's array with --source pipe, through the projections; print what each row did and the batch response (--json: the response only)", runApply},
	{"append", "append an event to a stream", runAppend},
	{"ddblocal", "serve ddblocal, the project's DynamoDB-compatible server (DynamoDB and its Streams on your machine), until interrupted", runDDBLocal},
	{"capture", "write a range of a stream from the event store as a Lambda event file for apply and replay (--kinesis: a Kinesis event)", runCapture},
	{"replay", "fold events through a candidate plugin without writing; print the rows it would write and how they differ from the table", runWhatIf},
}

// logLevel is the level of the process's default logger: informational
// lines (a plugin loaded, a lease taken) for the commands that run until
// stopped, warnings and errors only for the others, whose output is what
// they print.
var logLevel slog.LevelVar

// chatty names the commands whose informational log lines are part of
// what they show: the long-running ones, and the demo's progress.
var chatty = map[string]bool{"run": true, "ddblocal": true, "demo": true, "backfill": true, "drain-pending": true}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: &logLevel})))
	// In a container with a memory limit, give the collector room (see gctune).
	if s, ok := gctune.For(os.Getenv, gctune.CgroupBudget(os.DirFS("/"))); ok {
		gctune.Apply(s)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs one command line and returns the exit code: 0 for success and
// for asked-for help, 1 when the command failed, 2 for a command line that
// is not one.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		if len(args) > 1 && !isHelp(args[1]) { // host help CMD [SUB]: that command's help
			cmd := []string{args[1]}
			if len(args) > 2 && !isHelp(args[2]) {
				cmd = append(cmd, args[2]) // a group's command: host help plugin new
			}
			return run(ctx, append(cmd, "--help"), stdout, stderr)
		}
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		if !chatty[c.name] {
			logLevel.Set(slog.LevelWarn)
		}
		err := c.run(ctx, args[1:])
		var ec *exitCode
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 0 // the flag set printed the command's flags
		case errors.As(err, &ec):
			if ec.err != nil {
				fmt.Fprintf(stderr, "host %s: %v\n", c.name, ec.err)
				printHint(stderr, ec.err)
			}
			return ec.code
		case err != nil:
			fmt.Fprintf(stderr, "host %s: %v\n", c.name, err)
			printHint(stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "host: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// printHint adds, below a command's error, what a DynamoDB request that
// was throttled on every attempt means and what to do, when the error
// carries one and does not say so itself (the SDK's retry summary).
func printHint(w io.Writer, err error) {
	if te, ok := ddbclient.Throttled(err); ok && !strings.Contains(err.Error(), "DynamoDB throttled") {
		fmt.Fprintf(w, "  %s\n", te.Error())
	}
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: host <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w, "\n`host help <command>` or `host <command> --help` lists a command's flags.")
}
