package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

func init() {
	commands = append(commands,
		command{"pause", "pause one projection across the fleet of host run workers: its events are recorded, not applied, while the others go on (pause --config F --projection P [--reason R])",
			func(ctx context.Context, args []string) error { return runPause(ctx, args, true) }},
		command{"resume", "resume a paused projection: the workers catch up from the event store what it skipped (resume --config F --projection P)",
			func(ctx context.Context, args []string) error { return runPause(ctx, args, false) }})
}

// pauseOut is where `host pause` and `host resume` print (a variable for
// tests).
var pauseOut io.Writer = os.Stdout

const pauseHelp = `usage: host pause --config FILE --projection NAME [--reason TEXT] [--by NAME]
       host resume --config FILE --projection NAME [--by NAME]

Pauses (or resumes) one projection across every host run worker of the
configuration's sidecar, through the lease table: each worker reads it at
its next lease round (within a third of sidecar.leaseDuration).

While a projection is paused its events are not applied and its plugin is
not called; the other projections of the same feed go on, and the
checkpoints move on. The stream instances it skipped are recorded in the
lease table before a checkpoint passes them. Once it is resumed, the first
live worker catches each of them up from the event store (the rows'
checkpoints and gap-fill make that exact) and deletes its record; host status
shows how many wait. Nothing is lost.

In Lambda there is no lease table: disable the event source mapping of the
projection's function instead (aws lambda update-event-source-mapping
--no-enabled); its records wait in the stream (24 hours) and are read from
where it stopped once it is enabled again.

Example:

  host pause --config dynafold.json --projection search --reason "reindexing the cluster"
  host resume --config dynafold.json --projection search

flags:`

func runPause(ctx context.Context, args []string, paused bool) error {
	name := "resume"
	if paused {
		name = "pause"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(pauseOut)
	cfgPath := fs.String("config", "dynafold.json", "configuration file; it needs a \"sidecar\" section with \"leaseTable\"")
	projection := fs.String("projection", "", "the projection to "+name)
	reason := fs.String("reason", "", "why, shown by host status and the status page")
	by := fs.String("by", defaultBy(), "who, shown by host status and the status page")
	fs.Usage = func() {
		fmt.Fprintln(pauseOut, pauseHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	if *projection == "" {
		return fmt.Errorf("--projection is required: name the projection to %s", name)
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Sidecar == nil {
		return fmt.Errorf(`%s has no "sidecar" section: a pause is kept in the lease table of host run's workers; in Lambda, disable the projection function's event source mapping instead`, *cfgPath)
	}
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
	if err != nil {
		return fmt.Errorf("DynamoDB client: %w", err)
	}
	if err := sidecar.SetPaused(ctx, cfg, client, *projection, paused, *by, *reason); err != nil {
		return err
	}
	within := time.Duration(cfg.EffectiveSidecar().LeaseDuration) / 3
	if paused {
		fmt.Fprintf(pauseOut, "projection %s paused in lease table %s: the workers stop applying its events within %s and record what it skips; `host resume` catches it up\n",
			*projection, cfg.EffectiveSidecar().LeaseTable, within)
	} else {
		fmt.Fprintf(pauseOut, "projection %s resumed in lease table %s: the workers apply its events again within %s and catch up what it skipped (host status shows how many instances wait)\n",
			*projection, cfg.EffectiveSidecar().LeaseTable, within)
	}
	return nil
}

// defaultBy names who pauses: the user and host name.
func defaultBy() string {
	h, _ := os.Hostname()
	u := os.Getenv("USER")
	if u == "" {
		return h
	}
	return u + "@" + h
}
