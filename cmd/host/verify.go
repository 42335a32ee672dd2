package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

func init() {
	commands = append(commands, command{"verify",
		"reconcile read models with the event store: re-fold every row from its events and report rows that differ, are missing, orphaned or ahead; exit 1 on drift (--config F [--projection P] [--sample F] [--repair] [--json])", runVerify})
}

// verifyOut and verifyErr are where `host verify` prints its findings and
// its progress (variables for tests).
var (
	verifyOut io.Writer = os.Stdout
	verifyErr io.Writer = os.Stderr
)

const verifyUsage = `usage: host verify --config FILE [--projection NAME] [--table TABLE] [--segments N] [--sample FRACTION] [--grace DURATION] [--repair] [--json]

Reconciles each projection's read model with the event store. Every row of
the table (read in parallel segments, strongly consistent) is folded again
from its events exactly as a rebuild would fold it (every stream instance
that feeds it, its checkpoints, latest mode, tombstones), without writing,
and compared with the stored item; the event store is walked too, for rows
the events make that the table lacks. Each row found wrong is one finding:

  differs  the stored row is not what its events make: the attribute paths
           that differ with both values, and the events older than the
           grace that its checkpoints have not passed
  missing  the events make a row the table lacks
  orphan   a row no event addresses (tombstones are not orphans)
  ahead    a checkpoint above its stream's head: only lost or edited data
           does that

Events younger than --grace are lag, not drift: they are counted as pending.
It may run beside ` + "`host run`" + ` and Lambda: a row found wrong is read again,
with its events, before it is reported, so a row the live feed changes
while it is checked is never reported falsely.

--repair rebuilds each differs, missing and ahead row through the rebuild's
write conditions (the live feed is never overwritten and no effect is
committed twice; a checkpoint above its head is brought down to the head)
and checks it again. Orphans are reported and left: removing data is your
decision.

--table verifies another table as the projection's read model: a copy that
` + "`host backfill --to-table`" + ` built, before the cutover to it.

A full verification holds each projection's events in memory; --sample
checks a random fraction of the rows (it reads that fraction of each
table) for tables too large for that. A sample cannot tell orphans: only a
full verification knows that no event addresses a row.

Output: one finding per row as it is made, a progress bar on a terminal,
and a summary. --json prints one JSON object per line: each finding with
"kind", "projection", "key" (the row's key attributes as strings) and its
details, rows that could not be checked as "kind": "error", and last
{"kind": "summary", ...} with the counts per kind, the rows and events
read, and "verified" (false when anything could not be checked). A
verification that could not check everything never says "no drift".

Exit status: 0 no drift; 1 drift found (with --repair: drift left
unrepaired, orphans included); 2 the verification could not run, or some
rows could not be checked.

examples:
  host verify --config dynafold.json
  host verify --config dynafold.json --projection summaries --json | jq 'select(.kind == "differs")'
  host verify --config dynafold.json --projection summaries --table order-summaries-v2
  host verify --config dynafold.json --sample 0.01 --grace 5m
  host verify --config dynafold.json --repair

flags:
`

// exitCode is an error with the exit status the command line returns.
type exitCode struct {
	code int
	err  error // nil: nothing more to print
}

func (e *exitCode) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitCode) Unwrap() error { return e.err }

func runVerify(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(verifyOut)
	fs.Usage = func() { fmt.Fprint(verifyOut, verifyUsage); fs.PrintDefaults() }
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	proj := fs.String("projection", "", "projection to verify (default: every one)")
	segments := fs.Int("segments", host.DefaultVerifySegments, "parallel scan segments of each table")
	sample := fs.Float64("sample", 1, "fraction of the rows to check, above 0 and at most 1 (0.01: 1%)")
	grace := fs.Duration("grace", host.DefaultVerifyGrace, "events younger than this are lag, not drift")
	repair := fs.Bool("repair", false, "rebuild each row found differing, missing or ahead, and check it again")
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	table := fs.String("table", "", "verify this table instead of the projection's (a backfilled copy before a cutover); needs --projection when there are several")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitCode{2, err}
	}
	if err := flagsOnly(fs, ""); err != nil {
		return &exitCode{2, err}
	}
	if *sample <= 0 || *sample > 1 {
		return &exitCode{2, fmt.Errorf("--sample %g: use a fraction above 0 and at most 1 (0.01 checks 1%% of the rows)", *sample)}
	}
	if *grace <= 0 {
		return &exitCode{2, fmt.Errorf("--grace %s: use a positive duration such as 2m", *grace)}
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return &exitCode{2, err}
	}
	if *table != "" {
		if cfg, err = withTable(cfg, *proj, *table); err != nil {
			return &exitCode{2, err}
		}
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return &exitCode{2, err}
	}
	defer h.Close(ctx)
	p := &findingPrinter{w: verifyOut, json: *asJSON}
	progress := verifyProgress(verifyErr, *asJSON)
	if b, ok := progress.(*bar); ok {
		p.clear = b.clear // a finding is printed on a line of its own, not after the bar
	}
	opts := host.VerifyOptions{Projection: *proj, Segments: *segments, Sample: *sample, Grace: *grace, Repair: *repair,
		OnFinding: p.finding, Progress: progress, PausedSince: pausedSince(ctx, cfg, *proj, verifyErr)}
	if *sample == 1 {
		opts.Sample = 0
	}
	rep, err := h.Verify(ctx, opts)
	for _, e := range rep.Errors {
		p.rowError(e)
	}
	p.summary(rep, err, *grace, *repair)
	switch {
	case err != nil:
		return &exitCode{2, err}
	case rep.Unrepaired() > 0:
		return &exitCode{1, nil}
	case len(rep.Errors) > 0:
		return &exitCode{2, fmt.Errorf("%s could not be checked, so the read model is not verified (the first: %v)", rowsText(len(rep.Errors)), rep.Errors[0])}
	}
	return nil
}

// withTable returns cfg with the table of projection (or of the only
// projection) replaced by table.
func withTable(cfg *host.Config, projection, table string) (*host.Config, error) {
	if projection == "" {
		if len(cfg.Projections) != 1 {
			return nil, fmt.Errorf("--table %s: name the projection it is a table of with --projection", table)
		}
		projection = cfg.Projections[0].Name
	}
	c := *cfg
	c.Projections = append([]host.ProjectionConfig(nil), cfg.Projections...)
	for i := range c.Projections {
		if c.Projections[i].Name == projection {
			c.Projections[i].Table = table
			return &c, nil
		}
	}
	return nil, fmt.Errorf("%w %q: name one of the configuration's projections with --projection", host.ErrUnknownProjection, projection)
}

// findingPrinter prints findings as they are made: lines for people, or
// JSON objects.
type findingPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	clear func() // clears the progress bar before a finding is printed
}

func (p *findingPrinter) finding(f host.Finding) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clear != nil {
		p.clear()
	}
	if p.json {
		writeLine(p.w, findingJSON(f))
		return
	}
	fmt.Fprintf(p.w, "%-8s %s %s", f.Kind, f.Projection, keyLine(f.Key))
	switch f.Kind {
	case host.FindingMissing:
		fmt.Fprintf(p.w, ": the events make it: %s", plainJSON(f.Fold))
	case host.FindingOrphan:
		fmt.Fprint(p.w, ": no event addresses it")
	}
	fmt.Fprintln(p.w)
	for _, a := range f.Ahead {
		fmt.Fprintf(p.w, "    checkpoint of %s is v%d, its stream's head is v%d\n", a.Instance, a.Checkpoint, a.Head)
	}
	for _, d := range f.Diffs {
		fmt.Fprintf(p.w, "    %s: stored %s, events make %s\n", d.Path, valueOrAbsent(d.Stored), valueOrAbsent(d.Fold))
	}
	if len(f.Unapplied) > 0 {
		var evs []string
		for _, e := range f.Unapplied {
			evs = append(evs, fmt.Sprintf("%s v%d", e.Instance, e.Version))
		}
		fmt.Fprintf(p.w, "    events the row lacks: %s\n", strings.Join(evs, ", "))
	}
	switch {
	case f.Repaired:
		fmt.Fprintln(p.w, "    repaired: rebuilt from its events and checked again")
	case f.RepairErr != nil:
		fmt.Fprintf(p.w, "    not repaired: %v\n", f.RepairErr)
	}
}

func (p *findingPrinter) rowError(e *host.RowCheckError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		line := map[string]any{"kind": "error", "projection": e.Projection, "error": e.Err.Error()}
		if e.Key != nil {
			line["key"] = keyStrings(e.Key)
		}
		writeLine(p.w, line)
		return
	}
	fmt.Fprintf(p.w, "%-8s %v\n", "error", e)
}

// summary prints the counts and the verdict; err is Verify's, when the
// verification stopped. "no drift" is said only of a verification that
// checked every row it read and stopped for nothing.
func (p *findingPrinter) summary(rep host.VerifyReport, err error, grace time.Duration, repair bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := rep.Total()
	verified := err == nil && t.Errors == 0
	if p.json {
		var projs []map[string]any
		for _, pv := range rep.Projections {
			m := countsJSON(pv.VerifyCounts)
			m["projection"], m["table"] = pv.Projection, pv.Table
			projs = append(projs, m)
		}
		line := countsJSON(t)
		line["kind"] = "summary"
		line["unrepaired"] = rep.Unrepaired()
		line["tookMillis"] = rep.Took.Milliseconds()
		line["verified"] = verified
		if err != nil {
			line["error"] = err.Error()
		}
		line["projections"] = projs
		writeLine(p.w, line)
		return
	}
	for _, pv := range rep.Projections {
		c := pv.VerifyCounts
		fmt.Fprintf(p.w, "verify %s (table %s): %d rows and %d events read: %d differs, %d missing, %d orphan, %d ahead",
			pv.Projection, pv.Table, c.Rows, c.Events, c.Differs, c.Missing, c.Orphan, c.Ahead)
		if c.Repaired > 0 {
			fmt.Fprintf(p.w, " (%d repaired)", c.Repaired)
		}
		fmt.Fprintf(p.w, "; %d events pending (younger than %s)", c.Pending, grace)
		if c.Unchecked > 0 {
			fmt.Fprintf(p.w, "; %s unchecked (no stream instance known for them in a sample, or a table another projection shares)", rowsText(c.Unchecked))
		}
		if c.Errors > 0 {
			fmt.Fprintf(p.w, "; %d could not be checked", c.Errors)
		}
		fmt.Fprintln(p.w)
	}
	took := rep.Took.Round(time.Millisecond)
	unchecked := ""
	switch {
	case err != nil:
		unchecked = "; the verification stopped (see the error printed with this summary), so the read model is not verified"
	case t.Errors > 0:
		unchecked = fmt.Sprintf("; %s could not be checked (see each above), so the read model is not verified", rowsText(t.Errors))
	}
	switch n := rep.Unrepaired(); {
	case n > 0 && repair:
		fmt.Fprintf(p.w, "drift left: %s (see each above: orphans are left for you to decide on)%s, in %s\n", rowsText(n), unchecked, took)
	case n > 0:
		fmt.Fprintf(p.w, "drift: %s (see each above; `host verify --repair` rebuilds all but orphans)%s, in %s\n", rowsText(n), unchecked, took)
	case err != nil:
		fmt.Fprintf(p.w, "not verified, in %s: the verification stopped before every row was checked (see the error printed with this summary); fix the cause and run it again\n", took)
	case !verified:
		fmt.Fprintf(p.w, "not verified, in %s: %s could not be checked (see each above; the rows checked agree with their events); fix the cause and run it again\n", took, rowsText(t.Errors))
	default:
		fmt.Fprintf(p.w, "no drift, in %s\n", took)
	}
}

func rowsText(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

func countsJSON(c host.VerifyCounts) map[string]any {
	return map[string]any{"rows": c.Rows, "events": c.Events, "pending": c.Pending, "differs": c.Differs, "missing": c.Missing,
		"orphan": c.Orphan, "ahead": c.Ahead, "repaired": c.Repaired, "errors": c.Errors, "unchecked": c.Unchecked}
}

// findingJSON is a finding as one JSON object: values in DynamoDB JSON.
func findingJSON(f host.Finding) map[string]any {
	m := map[string]any{"kind": string(f.Kind), "projection": f.Projection, "key": keyStrings(f.Key)}
	if len(f.Diffs) > 0 {
		var ds []map[string]any
		for _, d := range f.Diffs {
			ds = append(ds, map[string]any{"path": d.Path, "stored": valueJSON(d.Stored), "fold": valueJSON(d.Fold)})
		}
		m["diffs"] = ds
	}
	if len(f.Unapplied) > 0 {
		var us []map[string]any
		for _, u := range f.Unapplied {
			us = append(us, map[string]any{"instance": u.Instance.String(), "version": u.Version})
		}
		m["unapplied"] = us
	}
	if len(f.Ahead) > 0 {
		var as []map[string]any
		for _, a := range f.Ahead {
			as = append(as, map[string]any{"instance": a.Instance.String(), "checkpoint": a.Checkpoint, "head": a.Head})
		}
		m["ahead"] = as
	}
	switch f.Kind {
	case host.FindingMissing:
		m["fold"] = itemJSON(f.Fold)
	case host.FindingOrphan:
		m["stored"] = itemJSON(f.Stored)
	}
	var insts []string
	for _, r := range f.Instances {
		insts = append(insts, r.String())
	}
	if insts != nil {
		m["instances"] = insts
	}
	if f.Repaired || f.RepairErr != nil {
		m["repaired"] = f.Repaired
	}
	if f.RepairErr != nil {
		m["repairError"] = f.RepairErr.Error()
	}
	return m
}

// keyStrings is a row key as a JSON object of strings: S as is, N its
// decimal text, B in base64.
func keyStrings(k abi.Item) map[string]string {
	out := make(map[string]string, len(k))
	for n, v := range k {
		switch v.Kind {
		case abi.KindB:
			out[n] = base64.StdEncoding.EncodeToString(v.Bytes)
		default:
			out[n] = v.Str
		}
	}
	return out
}

// keyLine is a row key for people: {"pk":"…","sk":"…"}.
func keyLine(k abi.Item) string {
	b, _ := json.Marshal(keyStrings(k))
	return string(b)
}

func valueJSON(v *abi.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := ddbjson.ValueToJSON(*v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

func itemJSON(it abi.Item) json.RawMessage {
	if it == nil {
		return nil
	}
	b, err := ddbjson.ItemToJSON(it)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

func valueOrAbsent(v *abi.Value) string {
	if v == nil {
		return "(absent)"
	}
	return string(valueJSON(v))
}

func writeLine(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"kind": "error", "error": err.Error()})
	}
	fmt.Fprintln(w, string(b))
}

// verifyProgress draws a bar on a terminal; otherwise it prints a line
// every few seconds, except with --json (the output is for programs).
func verifyProgress(w io.Writer, asJSON bool) host.VerifyProgress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &bar{w: w, desc: "verify", unit: "rows"}
	}
	if asJSON {
		return nil
	}
	return &verifyLines{w: w, every: 5 * time.Second}
}

// verifyLines is a host.VerifyProgress for logs and pipes.
type verifyLines struct {
	w            io.Writer
	every        time.Duration
	mu           sync.Mutex
	total, done  int
	start, last  time.Time
	finishedOnce bool
}

func (l *verifyLines) Start(total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total, l.done, l.start, l.last, l.finishedOnce = total, 0, time.Now(), time.Now(), false
	fmt.Fprintf(l.w, "verify: %s to check\n", plural(total, "row"))
}

func (l *verifyLines) Add(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done += n
	if time.Since(l.last) >= l.every {
		l.last = time.Now()
		l.line()
	}
}

func (l *verifyLines) Finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.finishedOnce {
		l.finishedOnce = true
		l.line()
	}
}

func (l *verifyLines) line() {
	rate := float64(l.done) / max(time.Since(l.start).Seconds(), 1e-9)
	fmt.Fprintf(l.w, "verify: %d/%s, %.1f/s\n", l.done, plural(l.total, "row"), rate)
}
