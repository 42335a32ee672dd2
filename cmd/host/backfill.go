package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/backfill"
)

func init() {
	commands = append(commands, command{"backfill",
		"rebuild a whole read model from the event store, in place or into a new table for a cutover (--projection, --to-table)", runBackfill})
}

// backfillOut and backfillErr are where `host backfill` prints its report
// and its progress (variables for tests).
var (
	backfillOut io.Writer = os.Stdout
	backfillErr io.Writer = os.Stderr
)

const backfillUsage = `usage: host backfill --config FILE [--projection NAME] [--segments N] [--workers N] [--to-table NEW] [--since TIME]

Rebuilds every row of a projection from the event store: a parallel scan of
the event table finds the instances of every stream the projection's
sources read, and each row they feed is re-derived once, from every
instance that feeds it, with the plugin of the configuration. The live
change feed may keep running: a row it moves on during the rebuild is
rebuilt again from what it wrote, and no event is folded, nor its effects
committed, twice.

--to-table writes into a new table (created if needed) instead of the
projection's table, for a versioned cutover: the old table keeps serving,
and the command prints the configuration change to make and the catch-up
command to run after the switch. --since rebuilds only the streams with an
event stored at or after TIME (RFC 3339): that catch-up.

A progress bar with the time left is drawn on a terminal; otherwise a
progress line is printed every few seconds.

examples:
  host backfill --config dynafold.json --projection summaries
  host backfill --config dynafold.json --projection summaries --segments 8 --to-table order-summaries-v2
  host backfill --config dynafold.json --projection summaries --since 2026-12-01T05:00:00Z
`

func runBackfill(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("backfill", flag.ContinueOnError)
	fs.SetOutput(backfillOut)
	fs.Usage = func() { fmt.Fprint(backfillOut, backfillUsage); fs.PrintDefaults() }
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	proj := fs.String("projection", "", "projection to rebuild (default: the only one)")
	segments := fs.Int("segments", backfill.DefaultSegments, "parallel scan segments of the event table")
	workers := fs.Int("workers", backfill.DefaultWorkers, "streams rebuilt at once")
	toTable := fs.String("to-table", "", "write into this new table instead of the projection's (a versioned cutover)")
	sinceArg := fs.String("since", "", "only the streams with an event stored at or after this time (RFC 3339)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	var since time.Time
	if *sinceArg != "" {
		var err error
		if since, err = time.Parse(time.RFC3339Nano, *sinceArg); err != nil {
			return fmt.Errorf("--since %q: want an RFC 3339 time such as 2026-12-01T05:00:00Z: %w", *sinceArg, err)
		}
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *proj == "" && len(cfg.Projections) == 1 {
		*proj = cfg.Projections[0].Name
	}
	idx := -1
	for i, p := range cfg.Projections {
		if p.Name == *proj {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("%w %q: name one of the configuration's projections with --projection", host.ErrUnknownProjection, *proj)
	}
	oldTable := cfg.Projections[idx].Table
	if *toTable != "" {
		if *toTable == oldTable {
			return fmt.Errorf("--to-table %s is the projection's table already: name a new table, or leave --to-table out to rebuild in place", *toTable)
		}
		c := *cfg
		c.Projections = append([]host.ProjectionConfig(nil), cfg.Projections...)
		c.Projections[idx].Table = *toTable
		cfg = &c
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	if *toTable != "" {
		if _, err := h.CreateTables(ctx); err != nil {
			return fmt.Errorf("creating %s: %w", *toTable, err)
		}
	}
	rep, err := backfill.Run(ctx, h, backfill.Options{Projection: *proj, Segments: *segments, Workers: *workers,
		Since: since, Progress: progressFor(backfillErr)})
	target := cfg.Projections[idx].Table
	fmt.Fprintf(backfillOut, "backfill of %s into %s: %s, %s written, %d caught up with events that arrived meanwhile, %d failed, in %s\n",
		*proj, target, plural(rep.Streams, "stream instance"), plural(rep.Rows, "row"), rep.CaughtUp, len(rep.Failed), rep.Took.Round(time.Millisecond))
	fmt.Fprintf(backfillOut, "watermark (started): %s\n", rep.Started.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return err
	}
	if *toTable != "" {
		fmt.Fprintf(backfillOut, `
To cut over to %[1]s:
  1. check it row by row against the event store:
       host verify --config %[2]s --projection %[3]s --table %[1]s
  2. in %[2]s, set the table of projection %[3]q to %[1]q (it is %[4]q) and restart the hosts;
  3. then bring in what arrived during the backfill:
       host backfill --config %[2]s --projection %[3]s --since %[5]s
  4. keep %[4]s for the rollback window, then delete it.
`, *toTable, *cfgPath, *proj, oldTable, rep.Started.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// progressFor draws a bar with the time left on a terminal, and prints
// plain lines every few seconds otherwise.
func progressFor(w io.Writer) backfill.Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &bar{w: w}
	}
	return backfill.NewLines(w, 5*time.Second)
}

// bar is a backfill.Progress (and a host.VerifyProgress) drawn with
// progressbar.
type bar struct {
	w    io.Writer
	b    *progressbar.ProgressBar
	unit string
	desc string // default "backfill"
}

// Unit sets what the bar counts: "streams" or "rows".
func (b *bar) Unit(unit string) {
	b.unit = "streams"
	if unit == "rows" {
		b.unit = unit
	}
}

func (b *bar) Start(total int) {
	if b.unit == "" {
		b.unit = "streams"
	}
	if b.desc == "" {
		b.desc = "backfill"
	}
	b.b = progressbar.NewOptions(total, progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.desc),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(b.unit),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.w) }))
}

func (b *bar) Add(n int) { _ = b.b.Add(n) }

// clear erases the bar from its line, for a line printed between two
// draws.
func (b *bar) clear() {
	if b.b != nil {
		_ = b.b.Clear()
	}
}

func (b *bar) Finish() {
	if b.b != nil {
		_ = b.b.Finish()
	}
}
