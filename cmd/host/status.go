package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

func init() {
	commands = append(commands, command{"status",
		"print the fleet of `host run` workers from the lease table: every shard (owner, checkpoint, parent, state, lag) and worker; exit 1 when a shard has no owner (status --config F [--json])", runStatus})
}

// statusOut is where `host status` prints (a variable for tests).
var statusOut io.Writer = os.Stdout

const statusHelp = `usage: host status --config FILE [--json] [--no-lag]

Reads the lease table of the configuration's "sidecar" section and the event
table's stream, and prints every shard (state, owner, checkpoint, parent,
lag, last lease write) and every worker the lease table names (the shards
it holds, its last renewal). A shard's state is open or closed (read by a
live worker), finished (read to its end), waiting (its parents are not
finished yet) or unowned (readable, and no live worker holds it).

It exits 1, naming the shard and for how long, when a readable shard has
had no owner for longer than sidecar.leaseDuration: nobody reads it; and
when the stream's shards cannot be listed (the event table does not exist,
or has no stream), naming the cause; and when a table the configuration
names (a read model, an outbox, the quarantine table) does not exist, as
` + "`host run`" + ` checks at its start: the workers fail every record that writes
to it. Times
in the lease table are by the clocks of the workers that wrote them.

Lag is the age of the oldest record after the shard's checkpoint (one
GetRecords call per shard; --no-lag skips it).

Then every projection: applying, or paused (host pause: since when, by
whom, why), the stream instances it skipped that wait to be caught up, and
its freshness over the last hour, summed over the workers (each publishes
its own on a lease it holds, once per lease round), against each objective of
its "freshness" setting: the share of events applied within the threshold,
met or missed, and the estimated percentile.

With "sidecar.verify" in the configuration, the fleet verifies a sample of
each projection's rows on a schedule; the last pass of each projection is
listed (rows checked, drift found per kind, events pending) and a drift
named with the command that lists every row.

Example:

  host status --config dynafold.json
  host status --config dynafold.json --json | jq '.shards[] | select(.state == "unowned")'

flags:`

func runStatus(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(statusOut)
	cfgPath := fs.String("config", "dynafold.json", "configuration file; it needs a \"sidecar\" section with \"leaseTable\"")
	asJSON := fs.Bool("json", false, "print the view as one JSON object")
	noLag := fs.Bool("no-lag", false, "do not read the shards for their lag")
	fs.Usage = func() {
		fmt.Fprintln(statusOut, statusHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Sidecar == nil {
		return fmt.Errorf(`%s has no "sidecar" section: there is no lease table to read; add {"sidecar": {"leaseTable": "dynafold-leases"}}`, *cfgPath)
	}
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
	if err != nil {
		return fmt.Errorf("DynamoDB client: %w", err)
	}
	f, err := sidecar.ReadFleet(ctx, cfg, client, nil, sidecar.FleetOptions{Lag: !*noLag})
	if err != nil {
		return err
	}
	missing, tablesErr := statusTables(ctx, cfg, client, f)
	if *asJSON {
		v := fleetJSONOf(f)
		if missing != nil {
			v.TablesMissing = missing.Error()
		}
		if err := json.NewEncoder(statusOut).Encode(v); err != nil {
			return err
		}
	} else {
		if err := printFleet(statusOut, f); err != nil {
			return err
		}
		if missing != nil {
			fmt.Fprintf(statusOut, "\ntables missing: %v\n", missing)
		}
	}
	var errs []error
	if f.StreamErr != nil {
		errs = append(errs, fmt.Errorf("the stream's shards could not be listed, so whether every shard is read is unknown: %w", f.StreamErr))
	}
	if missing != nil {
		errs = append(errs, fmt.Errorf("the workers fail every record that writes to a missing table: %w", missing))
	}
	if tablesErr != nil {
		errs = append(errs, tablesErr)
	}
	for _, p := range f.Problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// printFleet writes the fleet view as two tables.
func printFleet(w io.Writer, f sidecar.Fleet) error {
	fmt.Fprintf(w, "stream %s\nlease table %s, lease duration %s, read %s\n", dash(f.Stream), f.LeaseTable, f.LeaseDuration, f.At.UTC().Format(time.RFC3339))
	if f.StreamErr != nil {
		fmt.Fprintf(w, "the stream could not be listed (only the leases are shown): %v\n", f.StreamErr)
	}
	printOtherStreams(w, f)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSHARD\tSTATE\tOWNER\tCHECKPOINT\tPARENT\tLAG\tLAST WRITE")
	for _, s := range f.Shards {
		owner := dash(s.Owner)
		switch {
		case s.Expired:
			owner += " (expired)"
		case s.StealBy != "":
			owner += " (asked by " + s.StealBy + ")"
		}
		state := s.State
		if s.State == sidecar.ShardUnowned && s.UnownedKnown {
			state += " " + s.UnownedFor.Round(time.Second).String()
		}
		lag := "-"
		if s.LagKnown {
			lag = s.Lag.Round(time.Millisecond).String()
		}
		ckpt := s.Checkpoint
		if !s.HasLease {
			ckpt = "(no lease yet)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, state, owner, ckpt, dash(strings.Join(s.Parents, ",")), lag, ago(f.At, s.Heartbeat))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) // its own columns, no padding after ALIVE
	fmt.Fprintln(tw, "\nWORKER\tSHARDS\tLAST RENEWAL\tALIVE\tPLUGINS")
	for _, wk := range f.Workers {
		alive := "no"
		switch {
		case wk.Alive:
			alive = "yes"
		case len(wk.Shards) == 0:
			// no lease of its own to renew: its renewals cannot tell
			alive = "unknown (holds no lease)"
		}
		held := dash(strings.Join(wk.Shards, ","))
		if len(wk.Asking) > 0 {
			held += " (asking for " + strings.Join(wk.Asking, ",") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", wk.ID, held, ago(f.At, wk.LastRenewal), alive, pluginsText(wk.Plugins))
	}
	if len(f.Workers) == 0 {
		fmt.Fprintln(tw, "(none: no worker holds or asks for a lease)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range mixedVersions(f.Workers) {
		fmt.Fprintln(w, line)
	}
	if err := printProjections(w, f); err != nil {
		return err
	}
	return printFleetVerify(w, f)
}

// printFleetVerify writes the last sampled verification pass of each
// projection, when the fleet runs them.
func printFleetVerify(w io.Writer, f sidecar.Fleet) error {
	if len(f.Verify) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nVERIFIED\tLAST PASS\tBY\tSAMPLE\tROWS\tDIFFERS\tMISSING\tORPHAN\tAHEAD\tPENDING\tERRORS")
	for _, v := range f.Verify {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", v.Projection, ago(f.At, v.At), dash(v.Worker), v.Sample,
			v.Rows, v.Differs, v.Missing, v.Orphan, v.Ahead, v.Pending, v.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range f.Verify {
		if v.Drift() > 0 {
			fmt.Fprintf(w, "drift in %s: %s of the last sample; run `host verify --projection %s` to list every row, and --repair to rebuild all but orphans\n", v.Projection, rowsText(int(v.Drift())), v.Projection)
		}
	}
	return nil
}

// ago is how long before now t was, "-" for a zero t.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Millisecond).String() + " ago"
}

// fleetJSON is the JSON form of `host status --json`: durations in
// milliseconds, times in RFC 3339.
type fleetJSON struct {
	Stream          string           `json:"stream"`
	LeaseTable      string           `json:"leaseTable"`
	LeaseDurationMS int64            `json:"leaseDurationMillis"`
	At              time.Time        `json:"at"`
	StreamError     string           `json:"streamError,omitempty"`
	TablesMissing   string           `json:"tablesMissing,omitempty"`
	Shards          []shardJSON      `json:"shards"`
	Workers         []workerJSON     `json:"workers"`
	Problems        []string         `json:"problems"`
	Projections     []projectionJSON `json:"projections"`
	Verify          []verifyJSON     `json:"verify,omitempty"`
	// OtherStreams counts the leases of other streams in the lease
	// table, by stream ARN (another fleet shares it).
	OtherStreams map[string]int `json:"otherStreamLeases,omitempty"`
}

// verifyJSON is a projection's last sampled verification pass.
type verifyJSON struct {
	Projection string     `json:"projection"`
	Worker     string     `json:"worker,omitempty"`
	At         *time.Time `json:"at,omitempty"`
	TookMS     int64      `json:"tookMillis"`
	Sample     float64    `json:"sample"`
	Rows       int64      `json:"rows"`
	Events     int64      `json:"events"`
	Pending    int64      `json:"pending"`
	Differs    int64      `json:"differs"`
	Missing    int64      `json:"missing"`
	Orphan     int64      `json:"orphan"`
	Ahead      int64      `json:"ahead"`
	Errors     int64      `json:"errors"`
	Unchecked  int64      `json:"unchecked"`
}

type shardJSON struct {
	Shard        string     `json:"shard"`
	Parents      []string   `json:"parents,omitempty"`
	State        string     `json:"state"`
	Closed       bool       `json:"closed"`
	Listed       bool       `json:"listed"`
	Lease        bool       `json:"lease"`
	Owner        string     `json:"owner,omitempty"`
	Expired      bool       `json:"ownerExpired,omitempty"`
	StealBy      string     `json:"stealRequestedBy,omitempty"`
	Checkpoint   string     `json:"checkpoint,omitempty"`
	Heartbeat    *time.Time `json:"lastWrite,omitempty"`
	LagMS        *int64     `json:"lagMillis,omitempty"`
	UnownedForMS *int64     `json:"unownedForMillis,omitempty"`
}

type workerJSON struct {
	Worker      string     `json:"worker"`
	Shards      []string   `json:"shards"`
	Asking      []string   `json:"asking,omitempty"`
	LastRenewal *time.Time `json:"lastRenewal,omitempty"`
	Alive       bool       `json:"alive"`
}

func fleetJSONOf(f sidecar.Fleet) fleetJSON {
	out := fleetJSON{Stream: f.Stream, LeaseTable: f.LeaseTable, LeaseDurationMS: f.LeaseDuration.Milliseconds(), At: f.At.UTC(),
		Shards: []shardJSON{}, Workers: []workerJSON{}, Problems: []string{}, Projections: projectionsJSONOf(f), OtherStreams: f.OtherStreams}
	if f.StreamErr != nil {
		out.StreamError = f.StreamErr.Error()
	}
	ms := func(d time.Duration, ok bool) *int64 {
		if !ok {
			return nil
		}
		v := d.Milliseconds()
		return &v
	}
	tp := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		u := t.UTC()
		return &u
	}
	for _, s := range f.Shards {
		out.Shards = append(out.Shards, shardJSON{Shard: s.ID, Parents: s.Parents, State: s.State, Closed: s.Closed, Listed: s.Listed,
			Lease: s.HasLease, Owner: s.Owner, Expired: s.Expired, StealBy: s.StealBy, Checkpoint: s.Checkpoint, Heartbeat: tp(s.Heartbeat),
			LagMS: ms(s.Lag, s.LagKnown), UnownedForMS: ms(s.UnownedFor, s.UnownedKnown)})
	}
	for _, w := range f.Workers {
		shards := w.Shards
		if shards == nil {
			shards = []string{}
		}
		out.Workers = append(out.Workers, workerJSON{Worker: w.ID, Shards: shards, Asking: w.Asking, LastRenewal: tp(w.LastRenewal), Alive: w.Alive})
	}
	for _, p := range f.Problems() {
		out.Problems = append(out.Problems, p.Error())
	}
	for _, v := range f.Verify {
		out.Verify = append(out.Verify, verifyJSON{Projection: v.Projection, Worker: v.Worker, At: tp(v.At), TookMS: v.Took.Milliseconds(),
			Sample: v.Sample, Rows: v.Rows, Events: v.Events, Pending: v.Pending, Differs: v.Differs, Missing: v.Missing,
			Orphan: v.Orphan, Ahead: v.Ahead, Errors: v.Errors, Unchecked: v.Unchecked})
	}
	return out
}

// printOtherStreams says how many leases of other streams the lease table
// holds: another fleet shares it, and its shards are not shown.
func printOtherStreams(w io.Writer, f sidecar.Fleet) {
	if len(f.OtherStreams) == 0 {
		return
	}
	arns := make([]string, 0, len(f.OtherStreams))
	n := 0
	for a, c := range f.OtherStreams {
		arns = append(arns, fmt.Sprintf("%s (%d)", a, c))
		n += c
	}
	slices.Sort(arns)
	fmt.Fprintf(w, "the lease table also holds %d leases of other streams, not shown: %s; two fleets share one lease table: give each its own sidecar.leaseTable\n",
		n, strings.Join(arns, ", "))
}

// pluginsText is a worker's plugin versions as the WORKER table shows them:
// "name@version" per projection, "-" when it published none.
func pluginsText(ps map[string]string) string {
	if len(ps) == 0 {
		return "-"
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(ps)) {
		out = append(out, ps[p])
	}
	return strings.Join(slices.Compact(out), ",")
}

// mixedVersions says, for each projection more than one plugin version
// serves across the workers, which version each worker runs: a rolling
// deploy under way, or a worker left behind.
func mixedVersions(ws []sidecar.FleetWorker) []string {
	by := map[string]map[string][]string{} // projection -> version -> workers
	for _, w := range ws {
		for p, v := range w.Plugins {
			if by[p] == nil {
				by[p] = map[string][]string{}
			}
			by[p][v] = append(by[p][v], w.ID)
		}
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(by)) {
		if len(by[p]) < 2 {
			continue
		}
		var parts []string
		for _, v := range slices.Sorted(maps.Keys(by[p])) {
			parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(by[p][v], ", ")))
		}
		out = append(out, fmt.Sprintf("projection %s is served by %d plugin versions: %s: a rolling deploy under way, or a worker left behind", p, len(by[p]), strings.Join(parts, ", ")))
	}
	return out
}
