package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

func init() {
	commands = append(commands, command{"run",
		"read the event table's change feed and fold it into the read models until interrupted (the sidecar; run --config F)", runRun})
}

// runErr is where `host run` writes its progress lines and logs (a
// variable for tests).
var runErr io.Writer = os.Stderr

const runHelp = `usage: host run --config FILE [--quiet] [--worker-id ID] [--admin-addr ADDR] [--progress-interval D] [--outbox-sweep-interval D]

Reads the DynamoDB stream of the configuration's event table and folds every
event into the read models, until SIGTERM or SIGINT. Any number of processes
may run it against the same stream: they share the stream's shards through
leases kept in the table named by "sidecar.leaseTable" (create it with
` + "`host tables create`" + `). A shard is read by one process at a time, a child
shard only after its parents, and the shards of a process that stops are
taken over by the others.

At start every table the configuration names is checked (a missing one
refuses to start: create them with ` + "`host tables create`" + `), and an
unreachable DynamoDB endpoint is retried with backoff, one log line per
retry. A hot-swapped plugin refused at start is replaced by the last
accepted version of hotSwap.archive, and the refusal logged.

On SIGTERM or SIGINT, at any moment, the batch in flight is finished and
checkpointed, the leases are released, and the command exits 0. Hot-swapped plugins are
watched and swapped in while it runs.

Unless --quiet, one progress line per interval goes to stderr: records done
per second (folded or given up; a record delivered again counts once),
rows written, failures (records a batch reported failed, at each delivery,
as the status page's Failures and dynafold_records_failed_total count
them), records given up, shards held, the lag as ` + "`host status`" + ` shows it
(the age of the oldest record not yet done, the worst shard's) and how many
shards wait behind a failing record. Logs are text on a terminal, JSON lines
otherwise. With --admin-addr (or "admin.addr" in the configuration) it
serves Prometheus metrics at /metrics, /healthz, /readyz and a status page
at / (the whole fleet, this worker marked) on that loopback address;
` + "`host status`" + ` prints the fleet from the lease table.

With "sidecar.verify" (e.g. {"every": "10m", "sample": 0.01}), the fleet
verifies a sample of each projection's rows every interval, as
` + "`host verify --sample`" + ` does: drift found is logged with each row's key,
exported as dynafold_verify_drift_rows (rows that could not be checked as
dynafold_verify_unverified_rows), and shown on the status page and by
` + "`host status`" + `.

With an outbox (index and delivery target configured), the fleet sweeps
each projection's pending side effects every outbox.claimFor (or
--outbox-sweep-interval): effects that no process is delivering, left by
a process that stopped between a row's write and its delivery, or by a
failed delivery, are delivered in order as ` + "`host drain-pending`" + ` does.
One worker sweeps at a time (the one holding the lowest shard lease);
the count and age of the pending effects are exported as
dynafold_outbox_pending_effects and dynafold_outbox_pending_oldest_seconds.

Example:

  host tables create --config dynafold.json
  host run --config dynafold.json --worker-id "$(hostname)-a" --admin-addr 127.0.0.1:9100

flags:`

func runRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(runErr)
	cfgPath := fs.String("config", "dynafold.json", "configuration file; it needs a \"sidecar\" section with \"leaseTable\"")
	quiet := fs.Bool("quiet", false, "print no progress lines")
	worker := fs.String("worker-id", "", "this process's name in the lease table (default: sidecar.workerId, else host name and process id)")
	admin := fs.String("admin-addr", "", "loopback address of the admin server (metrics, health, status page), e.g. 127.0.0.1:9464")
	every := durationFlag(fs, "progress-interval", 10*time.Second, "time between progress lines (a `duration`)")
	sweep := durationFlag(fs, "outbox-sweep-interval", 0, "time between sweeps of the pending outbox effects no process is delivering (a `duration`; 0: each projection's outbox.claimFor; negative: never)")
	fs.Usage = func() {
		fmt.Fprintln(runErr, runHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	sum := configSum(*cfgPath) // before the load: a change after it is warned of
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Sidecar == nil {
		return fmt.Errorf(`%s has no "sidecar" section: add {"sidecar": {"leaseTable": "dynafold-leases"}} and create the table with `+"`host tables create`", *cfgPath)
	}
	if *worker != "" {
		side := *cfg.Sidecar
		side.WorkerID = *worker
		cfg.Sidecar = &side
	}
	log := runLogger(runErr)
	ops, err := startOps(ctx, cfg, *admin, log)
	if err != nil {
		return err
	}
	defer ops.close()
	err = runSidecar(ctx, cfg, *cfgPath, ops, log, runOptions{quiet: *quiet, every: *every, sweep: *sweep, configSum: sum})
	if err != nil && ctx.Err() != nil && !errors.Is(err, sidecar.ErrAbandoned) {
		// SIGTERM or SIGINT while starting (waiting for the endpoint,
		// loading a plugin): a shutdown, not a failure
		log.Info("stopped while starting", "stage", ops.stage(), "cause", err.Error())
		return nil
	}
	return err
}

// runOptions are the flags of `host run` that shape the reading.
type runOptions struct {
	quiet bool
	every time.Duration // between progress lines
	sweep time.Duration // between outbox sweeps (0: claimFor; negative: never)
	// configSum is the configuration file's digest as read at the start
	// (configSum): a later change is warned of.
	configSum []byte
}

// runSidecar checks the tables, builds the host and reads the change feed
// until ctx ends.
func runSidecar(ctx context.Context, cfg *host.Config, cfgPath string, ops *runOps, log *slog.Logger, ro runOptions) error {
	quiet, every := ro.quiet, ro.every
	ops.setStage("checking the tables")
	if err := checkTables(ctx, cfg, cfgPath, ops, log); err != nil {
		return err
	}
	ops.setStage("loading the plugins")
	// Effects go out in the background: a batch's checkpoint does not wait
	// for a slow consumer (the outbox sweep delivers what a stop leaves).
	h, err := host.New(ctx, cfg, host.WithLogger(log), host.WithCallObserver(ops.metrics.PluginCall), host.WithOutboxSweep(max(ro.sweep, 0)),
		host.WithBackgroundDelivery(backgroundRows))
	if err != nil {
		return err
	}
	defer func() {
		// the effects being delivered get a while to go out; what is left
		// stays claimed until claimFor ends, then the fleet's sweep has it
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeDeliveries)
		defer cancel()
		h.Close(cctx)
	}()
	ops.serving(h)
	r, err := sidecar.New(ctx, h, cfg, sidecar.Options{Observer: ops.metrics, Logger: log, Destinations: destinations(cfg), Status: ops.metrics.FreshnessReports,
		SweepEvery: ro.sweep})
	if err != nil {
		return err
	}
	ops.reader.Store(r)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		if err := h.Watch(watchCtx); err != nil && watchCtx.Err() == nil {
			log.Error("watching the hot-swap sources stopped", "err", err)
		}
	}()
	go func() { _ = h.ResumeDeliveries(watchCtx) }() // drains what open delivery breakers held back
	go watchConfig(watchCtx, cfgPath, ro.configSum, log, configCheckEvery)
	if !quiet {
		done := make(chan struct{})
		defer close(done)
		lease := time.Duration(cfg.EffectiveSidecar().LeaseDuration)
		go progress(r, every, done, func() string { return leaseNote(ops.metrics.LastLeaseRound(), 3*lease, time.Now()) })
	}
	ops.setStage("reading")
	err = r.Run(ctx)
	if !quiet {
		printProgress(runErr, r.Stats(), sidecar.Stats{}, 0)
	}
	return err
}

// runLogger logs text on a terminal and JSON lines otherwise.
func runLogger(w io.Writer) *slog.Logger {
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return slog.New(slog.NewTextHandler(w, nil))
		}
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// progress prints a progress line every interval, with note's text (what
// the line's numbers do not show) after it.
func progress(r *sidecar.Reader, every time.Duration, done <-chan struct{}, note func() string) {
	t := time.NewTicker(every)
	defer t.Stop()
	prev := r.Stats()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			st := r.Stats()
			printProgress(runErr, st, prev, every)
			if n := note(); n != "" {
				fmt.Fprintln(runErr, "host run: "+n)
			}
			prev = st
		}
	}
}

// printProgress writes one progress line; with a zero interval it is the
// final summary.
func printProgress(w io.Writer, st, prev sidecar.Stats, every time.Duration) {
	stream := st.StreamArn
	if i := strings.Index(stream, ":table/"); i >= 0 {
		stream, _, _ = strings.Cut(stream[i+len(":table/"):], "/stream/")
	} else if i := strings.Index(stream, ":stream/"); i >= 0 && strings.HasPrefix(stream, "arn:aws:kinesis:") {
		stream = "kinesis " + stream[i+len(":stream/"):] // a Kinesis data stream's ARN: its name
	}
	if every == 0 {
		fmt.Fprintf(w, "host run: stopped: %s done, %s written, %s, %d given up\n", plural(int(st.Records), "record"), plural(int(st.Written), "row"), plural(int(st.Failures), "failure"), st.GivenUp)
		return
	}
	rate := float64(st.Records-prev.Records) / every.Seconds()
	held := ""
	if st.HeldBack > 0 {
		held = fmt.Sprintf("; %s held back by a failing record (the log says why)", plural(st.HeldBack, "shard"))
	}
	lag := st.Behind.Round(time.Millisecond).String()
	if st.Shards == 0 {
		// no shard to measure: another worker's, or none taken yet
		lag = "unknown here (no shard held: `host status` shows every shard's)"
	}
	fmt.Fprintf(w, "host run: %.1f records/s done; since start %s written, %s, %d given up; %s held, lag %s %s%s\n",
		rate, plural(int(st.Written), "row"), plural(int(st.Failures), "failure"), st.GivenUp, plural(st.Shards, "shard"), stream, lag, held)
}

// backgroundRows is how many rows' effects host run delivers at once, off
// the batches' path; closeDeliveries how long a stopping host run waits for
// those in flight.
const (
	backgroundRows  = 32
	closeDeliveries = 10 * time.Second
)

// leaseNote says, for the progress line, that no lease round has
// succeeded for longer than within (DynamoDB unreachable or throttling
// the lease table): the line's lag is then as of the last read, not now.
// "" before the first round and while rounds succeed.
func leaseNote(last time.Time, within time.Duration, now time.Time) string {
	if last.IsZero() || now.Sub(last) <= within {
		return ""
	}
	return fmt.Sprintf("no lease round has succeeded for %s: the lag above is as of the last read (the log says why the rounds fail)", now.Sub(last).Round(time.Second))
}
