package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

func init() {
	commands = append(commands, command{"quarantine",
		"list the records given up, from the quarantine table or an onFailure file (quarantine list --config F [--file PATH] [--json]), run them again through the plugins (quarantine replay --config F [--file PATH] --id ID | --all), or drop those beyond repair (quarantine drop --config F [--file PATH] ID...)", runQuarantine})
}

// quarantineOut is where `host quarantine` prints (a variable for tests).
var quarantineOut io.Writer = os.Stdout

const quarantineUsage = `usage:
  host quarantine list   --config FILE [--file PATH | --table NAME] [--json]
  host quarantine replay --config FILE [--file PATH | --table NAME] (--id ID | --all)
  host quarantine drop   --config FILE [--file PATH | --table NAME] ID...

The records given up are kept where the configuration sends them: the
quarantine table ("quarantine": {"table": ...}), or the sidecar's onFailure
destination (a table, "onFailure": {"table": NAME}, or a file,
"onFailure": {"file": PATH}, JSON lines). All three read the quarantine
table when the configuration has one, else the onFailure table or file it
names (when it names one); --file PATH or --table NAME reads that one
instead.

list prints the records kept: id, projection, the event (stream, stream id,
version and event type, read from the record's image), shard, sequence
number, first seen, attempts and reason; --json prints one JSON object per
line, the record included.

replay runs each chosen record again through the projections with the
plugins of the configuration, as a batch of one, and removes its entry only
when it succeeds; an entry that fails again stays, and the reason is
printed. A record that fails again is run again from the event table's
item as it is now when that item was changed since (an event repaired in
place), so a repaired event replays. A
file is never rewritten (a running reader may be appending to it): a
replayed entry's id goes to PATH.replayed, and list no longer shows it.

drop removes the entries named, without replaying them: for a record that
can never succeed (an event beyond repair, a record safe to lose), once
you have made sure its row is right or rebuilt it. From a table the entry
is deleted; from a file its id goes to PATH.replayed, as replay's do.

examples:
  host quarantine list --config dynafold.json
  host quarantine replay --config dynafold.json --id 3f2a9c0e1b7d5a4c6e8f0a1b
  host quarantine replay --config dynafold.json --all
  host quarantine drop --config dynafold.json 3f2a9c0e1b7d5a4c6e8f0a1b
  host quarantine list --config dynafold.json --file given-up.jsonl`

func runQuarantine(ctx context.Context, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(quarantineOut, quarantineUsage)
		if len(args) == 0 {
			return errors.New("a subcommand is required: list, replay or drop")
		}
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("quarantine "+args[0], flag.ContinueOnError)
	fs.SetOutput(quarantineOut)
	fs.Usage = func() { fmt.Fprintln(quarantineOut, quarantineUsage); fs.PrintDefaults() }
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	file := fs.String("file", "", "read the records given up from this file (an onFailure file) instead of the configuration's quarantine")
	table := fs.String("table", "", "read the records given up from this DynamoDB table (an onFailure table) instead of the configuration's quarantine")
	switch args[0] {
	case "list":
		asJSON := fs.Bool("json", false, "print one JSON object per entry, the record included")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := flagsOnly(fs, ""); err != nil {
			return err
		}
		cfg, t, err := openQuarantine(ctx, *cfgPath, *file, *table)
		if err != nil {
			return err
		}
		return listQuarantine(ctx, cfg, t, *asJSON)
	case "replay":
		id := fs.String("id", "", "the entry to replay (see quarantine list)")
		all := fs.Bool("all", false, "replay every entry")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := flagsOnly(fs, ""); err != nil {
			return err
		}
		if (*id == "") == !*all {
			return errors.New("name what to replay: --id ID (one entry) or --all (every entry)")
		}
		cfg, t, err := openQuarantine(ctx, *cfgPath, *file, *table)
		if err != nil {
			return err
		}
		return replayQuarantine(ctx, cfg, t, *id)
	case "drop":
		ids, err := parseInterspersed(fs, args[1:])
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return errors.New("name the entries to drop: host quarantine drop --config FILE ID... (see quarantine list for the ids)")
		}
		cfg, t, err := openQuarantine(ctx, *cfgPath, *file, *table)
		if err != nil {
			return err
		}
		return dropQuarantine(ctx, cfg, t, ids)
	}
	return fmt.Errorf("unknown subcommand %q: use list, replay or drop (host quarantine --help)", args[0])
}

// openQuarantine loads the configuration and opens where its given-up
// records are kept: file when given, else the quarantine table, else the
// one onFailure file of the sidecar section.
func openQuarantine(ctx context.Context, path, file, table string) (*host.Config, quarantine.Store, error) {
	cfg, err := host.LoadConfig(path)
	if err != nil {
		return nil, nil, err
	}
	if file != "" && table != "" {
		return nil, nil, fmt.Errorf("--file and --table both name where the records are: give one")
	}
	if file == "" && table == "" {
		if cfg.Quarantine != nil {
			table = cfg.Quarantine.Table
		} else {
			dests := onFailureDestinations(cfg)
			switch len(dests) {
			case 0:
				return nil, nil, fmt.Errorf("%s keeps no record given up: add \"quarantine\": {\"table\": \"NAME\"} (and run `host tables create --config %s`), or an onFailure destination to its sidecar section; for a file or table elsewhere, give --file PATH or --table NAME", path, path)
			case 1:
				file, table = dests[0].File, dests[0].Table
			default:
				var names []string
				for _, d := range dests {
					names = append(names, d.String())
				}
				return nil, nil, fmt.Errorf("%s sends given-up records to several places (%s): choose one with --file PATH or --table NAME", path, strings.Join(names, ", "))
			}
		}
	}
	if file != "" {
		s, err := quarantine.OpenFile(file)
		return cfg, s, err
	}
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
	if err != nil {
		return nil, nil, fmt.Errorf("DynamoDB client: %w", err)
	}
	t, err := quarantine.NewTable(client, table)
	return cfg, t, err
}

// destination is an onFailure file or table.
type destination struct{ File, Table string }

func (d destination) String() string {
	if d.File != "" {
		return "file " + d.File
	}
	return "table " + d.Table
}

// onFailureDestinations returns the distinct files and tables the sidecar
// section gives records up to, in the order the configuration names them
// (queues are not read back: their consumer has the records).
func onFailureDestinations(cfg *host.Config) []destination {
	if cfg.Sidecar == nil {
		return nil
	}
	sc := cfg.EffectiveSidecar()
	var out []destination
	seen := map[destination]bool{}
	add := func(of *host.OnFailureConfig) {
		if of == nil || (of.File == "" && of.Table == "") {
			return
		}
		d := destination{File: of.File, Table: of.Table}
		if d.File != "" {
			d.Table = ""
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	add(sc.Failure.OnFailure)
	for _, p := range cfg.Projections {
		add(sc.Policy(p.Name).OnFailure)
	}
	return out
}

func listQuarantine(ctx context.Context, cfg *host.Config, t quarantine.Store, asJSON bool) error {
	entries, err := t.All(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(quarantineOut)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintf(quarantineOut, "%s: no record is quarantined\n", t.Name())
		return nil
	}
	var streams []string
	for _, st := range cfg.EventStore.Streams {
		streams = append(streams, st.Name)
	}
	tw := tabwriter.NewWriter(quarantineOut, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROJECTION\tSTREAM\tSTREAM ID\tVERSION\tEVENT TYPE\tSHARD\tSEQUENCE\tFIRST SEEN\tATTEMPTS\tREASON")
	for _, e := range entries {
		ev := e.Event(streams...)
		version := "-"
		if ev.Version > 0 {
			version = strconv.FormatUint(ev.Version, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.ID, dash(e.Projection), dash(ev.Stream), dash(ev.StreamID), version, dash(ev.Type),
			dash(e.Shard), dash(e.Record.DynamoDB.SequenceNumber), e.FirstSeen.UTC().Format(time.RFC3339), e.Attempts, oneLine(e.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(quarantineOut, "%d quarantined in %s\n", len(entries), t.Name())
	return nil
}

func replayQuarantine(ctx context.Context, cfg *host.Config, t quarantine.Store, id string) error {
	var entries []quarantine.Entry
	if id != "" {
		e, err := t.Get(ctx, id)
		if err != nil {
			return err
		}
		entries = []quarantine.Entry{e}
	} else {
		var err error
		if entries, err = t.All(ctx); err != nil {
			return err
		}
	}
	if len(entries) == 0 {
		fmt.Fprintf(quarantineOut, "%s: nothing to replay\n", t.Name())
		return nil
	}
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
	if err != nil {
		return fmt.Errorf("DynamoDB client: %w", err)
	}
	h, err := host.New(ctx, cfg, host.WithClient(client)) // the re-reads of event items share it
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	p := &rereader{h: h, client: client, table: cfg.EventStore.Table, reread: map[string]bool{}, gone: map[string]bool{}, unread: map[string]string{}}
	done, err := quarantine.Replay(ctx, p, t, entries)
	failed := 0
	for _, r := range done {
		switch {
		case r.OK && p.gone[recordID(r.Entry.Record)]:
			fmt.Fprintf(quarantineOut, "%s: passed over, nothing to replay: its event item was removed from the event table since it was given up (as host run passes such a record over); %s\n", r.Entry.ID, removedText(t))
			continue
		case r.OK && p.reread[recordID(r.Entry.Record)]:
			fmt.Fprintf(quarantineOut, "%s: replayed from the event table's item as it is now (repaired since it was given up); %s\n", r.Entry.ID, removedText(t))
			continue
		case r.OK:
			fmt.Fprintf(quarantineOut, "%s: replayed; %s\n", r.Entry.ID, removedText(t))
			continue
		}
		failed++
		fmt.Fprintf(quarantineOut, "%s: failed again, entry kept: %s\n", r.Entry.ID, oneLine(r.Why))
		if u := p.unread[recordID(r.Entry.Record)]; u != "" {
			fmt.Fprintf(quarantineOut, "%s: %s\n", r.Entry.ID, u)
		}
	}
	fmt.Fprintf(quarantineOut, "%d replayed, %d failed again\n", len(done)-failed, failed)
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d entries failed again; fix the cause (see the reasons above) and replay them, or, for a record that can never succeed, make sure its row is right and drop the entry (`host quarantine drop ID`)", failed, len(done))
	}
	return nil
}

// removedText says what removing an entry from t did.
func removedText(t quarantine.Store) string {
	if _, ok := t.(*quarantine.FileStore); ok {
		return fmt.Sprintf("its id was appended to %s%s, so list no longer shows it (the file itself is never rewritten)", t.Name(), quarantine.ReplayedSuffix)
	}
	return "entry deleted from table " + t.Name()
}

// dropQuarantine removes the entries ids from t without replaying them,
// printing each with its event; an id t does not hold is reported and
// the others are still dropped.
func dropQuarantine(ctx context.Context, cfg *host.Config, t quarantine.Store, ids []string) error {
	var streams []string
	for _, st := range cfg.EventStore.Streams {
		streams = append(streams, st.Name)
	}
	var errs []error
	dropped := 0
	for _, id := range ids {
		e, err := t.Get(ctx, id)
		if err == nil {
			err = t.Delete(ctx, id)
		}
		if err != nil {
			fmt.Fprintf(quarantineOut, "%s: not dropped: %s\n", id, oneLine(err.Error()))
			errs = append(errs, err)
			continue
		}
		dropped++
		ev := e.Event(streams...)
		version := "-"
		if ev.Version > 0 {
			version = "v" + strconv.FormatUint(ev.Version, 10)
		}
		fmt.Fprintf(quarantineOut, "%s: dropped without replaying (projection %s, event %s %s %s %s); %s\n", id, dash(e.Projection),
			dash(ev.Stream), dash(ev.StreamID), version, dash(ev.Type), removedText(t))
	}
	fmt.Fprintf(quarantineOut, "%d dropped from %s, %d not\n", dropped, t.Name(), len(ids)-dropped)
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d entries not dropped: %w", len(errs), len(ids), errors.Join(errs...))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
