package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/keys"
)

func init() {
	commands = append(commands,
		command{"catchup", "bring every row a stream instance feeds up to the head, each with every instance of the row (--projection, --id, --source), or every stream instance one row's checkpoints know (--row)", runCatchUp},
		command{"rebuild", "re-derive every row a stream instance feeds from all of the row's instances (--id, --source), one row from the stream instances named (--row, --instance), or every row a plugin version wrote (--written-by)", runRebuild},
		command{"filter-pattern", "print the FilterCriteria JSON that keeps only the configured streams' event INSERTs (--kinesis: from a Kinesis data stream)", runFilterPattern},
	)
}

// projectionFlags are the flags naming a configuration, one of its
// projections and a stream instance (a source and a stream id).
type projectionFlags struct {
	fs                        *flag.FlagSet
	cfgPath, proj, id, source *string
}

func newProjectionFlags(name string) *projectionFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return &projectionFlags{fs: fs,
		cfgPath: fs.String("config", "dynafold.json", "configuration file"),
		proj:    fs.String("projection", "", "projection name (default: the only one)"),
		id:      fs.String("id", "", "stream id (composites joined with #)"),
		source:  fs.String("source", "", "with --id: the source whose stream the id belongs to, as the plugin names it (default: the projection's first source)"),
	}
}

// instance returns the stream instance --id and --source name.
func (f *projectionFlags) instance(h *host.Host) (host.InstanceRef, error) {
	sources, err := h.ProjectionSources(*f.proj)
	if err != nil {
		return host.InstanceRef{}, err
	}
	if *f.source == "" {
		return host.InstanceRef{Source: sources[0].Name, StreamID: *f.id}, nil
	}
	var names []string
	for _, s := range sources {
		if s.Name == *f.source {
			return host.InstanceRef{Source: s.Name, StreamID: *f.id}, nil
		}
		names = append(names, s.Name)
	}
	return host.InstanceRef{}, fmt.Errorf("--source %q: projection %q has no such source; its sources are %v", *f.source, *f.proj, names)
}

// printRow prints a rebuilt (rebuilt set) or caught-up row: the
// instance's checkpoint on the first line, and every instance of a row
// that several feed.
func printRow(o host.Outcome, ref host.InstanceRef, rebuilt bool) {
	c := fmt.Sprintf("checkpoint %d", instanceCheckpoint(o, ref))
	if len(o.Instances) > 1 {
		c = fmt.Sprintf("%s's checkpoint %d", ref, instanceCheckpoint(o, ref)) // the row has one per instance, listed below
	}
	n := len(o.Applied())
	switch {
	case !rebuilt:
		fmt.Fprintf(os.Stdout, "row %s: applied %s, %s, written %v\n", keys.String(o.Key), plural(n, "event"), c, o.Written)
	case n > 0:
		fmt.Fprintf(os.Stdout, "row %s: written %v, %s, applied %s after the row's checkpoints\n", keys.String(o.Key), o.Written, c, plural(n, "event"))
	default:
		fmt.Fprintf(os.Stdout, "row %s: written %v, %s\n", keys.String(o.Key), o.Written, c)
	}
	if len(o.Instances) > 1 {
		for _, in := range o.Instances {
			fmt.Fprintf(os.Stdout, "  %s#%s: checkpoint %d\n", in.Source, in.StreamID, in.Version)
		}
	}
	printState(o)
}

// printState prints the row as it is after the call (DynamoDB JSON), or
// that it is removed or absent.
func printState(o host.Outcome) {
	switch {
	case o.Removed:
		fmt.Fprintln(os.Stdout, "  removed (a tombstone)")
	case len(o.State) == 0:
		if o.Err == nil {
			fmt.Fprintln(os.Stdout, "  no row")
		}
	default:
		b, err := ddbjson.ItemToJSON(o.State)
		if err != nil {
			return
		}
		fmt.Fprintf(os.Stdout, "  %s\n", b)
	}
}

// instanceCheckpoint returns the checkpoint the outcome reports for the
// instance ref (0 when it reports none).
func instanceCheckpoint(o host.Outcome, ref host.InstanceRef) uint64 {
	for _, in := range o.Instances {
		if in.Source == ref.Source && in.StreamID == ref.StreamID {
			return in.Version
		}
	}
	return 0
}

// open loads the configuration and builds the host; the projection defaults
// to the only one.
func (f *projectionFlags) open(ctx context.Context) (*host.Host, error) {
	cfg, err := host.LoadConfig(*f.cfgPath)
	if err != nil {
		return nil, err
	}
	var opts []host.Option
	if cfg.Sidecar == nil {
		// no host run reads this configuration: an effect left pending
		// waits for a host drain-pending (a Lambda function's outbox)
		opts = append(opts, host.WithPendingDelivery(host.PendingByScheduledDrain))
	}
	h, err := host.New(ctx, cfg, opts...)
	if err != nil {
		return nil, err
	}
	if *f.proj == "" && len(h.Projections()) == 1 {
		*f.proj = h.Projections()[0]
	}
	return h, nil
}

func runCatchUp(ctx context.Context, args []string) error {
	f := newProjectionFlags("catchup")
	row := f.fs.String("row", "", `bring instead every stream instance this row's checkpoints know up to its head; the row's key as JSON, plain or DynamoDB JSON: '{"pk": "Shipment#sh-1", "sk": "S"}'`)
	asJSON := f.fs.Bool("json", false, "print the rows' outcomes as JSON (rows in plain JSON)")
	f.fs.Usage = func() {
		fmt.Fprintf(f.fs.Output(), "usage: host catchup --config F [--projection P] (--id ID [--source S] | --row KEY) [--json]\n\n"+
			"--id brings every row the stream instance feeds up to the stream's head: each row its events address, from\n"+
			"every instance the row's checkpoints know and this one, so a row left behind (a record given up, a failed\n"+
			"delivery) is brought up even when the stream's latest event went to another row. A row already up to date\n"+
			"is not written. Each row prints the events applied, the row's checkpoint for the instance afterwards (the\n"+
			"version it has folded up to, whether or not this run wrote it) and whether it was written.\n"+
			"--row brings one row up, from every stream instance its checkpoints know.\n\n"+
			"example: host catchup --config dynafold.json --id o-1\n"+
			"  row pk=Order#o-1,sk=Order: applied 2 events, checkpoint 22, written true\n\n")
		f.fs.PrintDefaults()
	}
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(f.fs, ""); err != nil {
		return err
	}
	if *row != "" {
		return catchUpRow(ctx, f, *row)
	}
	if *f.id == "" {
		return fmt.Errorf("--id is required: the stream instance whose rows to bring up to its head (or --row: a row)")
	}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	ref, err := f.instance(h)
	if err != nil {
		return err
	}
	outs, err := h.CatchUpRows(ctx, *f.proj, ref)
	if err != nil && len(outs) == 0 {
		return instanceHint(err, ref)
	}
	if *asJSON {
		if jerr := writeOutcomes(os.Stdout, outs, ref); jerr != nil {
			return jerr
		}
		return err
	}
	for _, o := range outs {
		if o.Err != nil {
			fmt.Fprintf(os.Stdout, "row %s: failed: %v\n", keys.String(o.Key), o.Err)
			continue
		}
		printRow(o, ref, false)
	}
	return err
}

// instanceHint adds to the error of a catch-up or rebuild of an instance
// that has no events what to check.
func instanceHint(err error, ref host.InstanceRef) error {
	if errors.Is(err, host.ErrNoEvents) {
		return fmt.Errorf("%w\n(check --id, a stream id as appended, composites joined with #, and --source (now %q) for a projection with several sources; `host capture --config F --stream STREAM --out -` prints a stream's events with their ids)", err, ref.Source)
	}
	return err
}

func runRebuild(ctx context.Context, args []string) error {
	f := newProjectionFlags("rebuild")
	by := f.fs.String("written-by", "", "rebuild instead every row written by these plugin versions, separated by commas: NAME@VERSION, or VERSION of the projection's plugin (e.g. cart@1.0.0,cart@1.0.2)")
	notBy := f.fs.String("not-written-by", "", "rebuild instead every row not written by this plugin version alone, e.g. the one serving: what every older version left, whichever they were")
	dry := f.fs.Bool("dry-run", false, "with --written-by or --not-written-by: list the rows and stream instances, rebuild nothing")
	row := f.fs.String("row", "", `rebuild instead this one row, given by its key as JSON, plain or DynamoDB JSON: '{"pk": "Shipment#sh-1", "sk": "S"}'`)
	var instances multiFlag
	f.fs.Var(&instances, "instance", "with --row: a stream instance to fold into the row, SOURCE#ID (repeat for each; default: the instances the row's checkpoints name)")
	dropOthers := f.fs.Bool("drop-others", false, "with --row and --instance: rebuild the row from the instances named even though its checkpoints name others, which then lose their part and checkpoint (a row adopted by the wrong instance)")
	f.fs.Usage = func() {
		fmt.Fprintf(f.fs.Output(), "usage: host rebuild --config F [--projection P] (--id ID [--source S] | --row KEY [--instance SOURCE#ID ...] | --written-by V[,V...] [--dry-run] | --not-written-by V [--dry-run])\n\n"+
			"--id rebuilds every row the stream instance feeds, each from every instance of the row (its checkpoints name them), so\n"+
			"the row's other sources keep their part; --row rebuilds one row from every instance its checkpoints name, or from\n"+
			"exactly the instances named with --instance (refused when the row names others, unless --drop-others).\n"+
			"--written-by rebuilds, with the version serving, every row the versions listed wrote (or a later one folded on);\n"+
			"after several swaps, --not-written-by with the serving version catches every older one at once. A version no row\n"+
			"names (mistyped: 1.0 for 1.0.0) is warned of on standard error, with the versions the rows name.\n\n"+
			"example: host rebuild --config dynafold.json --projection shipments --id w-1 --source weigh\n"+
			"example: host rebuild --config dynafold.json --projection shipments --row '{\"pk\": \"Shipment#sh-1\", \"sk\": \"S\"}' --instance order#o-1 --instance weigh#w-1\n"+
			"example: host rebuild --config dynafold.json --written-by cart@1.0.0,cart@1.0.2 --dry-run\n"+
			"example: host rebuild --config dynafold.json --not-written-by cart@2.0.0\n\n")
		f.fs.PrintDefaults()
	}
	asJSON := f.fs.Bool("json", false, "with --id: print the rows' outcomes as JSON (rows in plain JSON); with --written-by or --not-written-by: the report, each row with what its rebuild did, and the counts")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(f.fs, ""); err != nil {
		return err
	}
	if *row != "" {
		return rebuildRow(ctx, f, *row, instances, *dropOthers)
	}
	if len(instances) > 0 || *dropOthers {
		return fmt.Errorf("--instance and --drop-others need --row: the row to fold the instances into")
	}
	if *f.source != "" && *f.id == "" {
		return fmt.Errorf("--source needs --id: the stream instance's id")
	}
	if *by != "" && *notBy != "" {
		return fmt.Errorf("--written-by and --not-written-by: give one (the versions whose rows to rebuild, or the version whose rows to keep)")
	}
	if *by == "" && *notBy == "" && *f.id == "" {
		return fmt.Errorf("--id (a stream instance), --written-by (plugin versions) or --not-written-by (a plugin version) is required, or --row (one row)")
	}
	sel := host.WrittenBySelection{NotBy: strings.TrimSpace(*notBy)}
	if *by != "" {
		for _, v := range strings.Split(*by, ",") {
			if v = strings.TrimSpace(v); v == "" {
				return fmt.Errorf("--written-by %q: an empty plugin version in the list: give each as 1.0.0 or name@1.0.0, separated by commas", *by)
			}
			sel.Versions = append(sel.Versions, v)
		}
	}
	if *notBy != "" && sel.NotBy == "" {
		return fmt.Errorf("--not-written-by %q: give the plugin version whose rows to keep, as 1.0.0 or name@1.0.0", *notBy)
	}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	if *by != "" || *notBy != "" {
		cfg, err := host.LoadConfig(*f.cfgPath)
		if err != nil {
			return err
		}
		return rebuildWrittenBy(ctx, h, cfg, *f.proj, sel, *dry, *asJSON)
	}
	ref, err := f.instance(h)
	if err != nil {
		return err
	}
	outs, err := h.RebuildInstance(ctx, *f.proj, ref)
	if err != nil && len(outs) == 0 {
		return instanceHint(rebuildHint(err), ref)
	}
	if *asJSON {
		if jerr := writeOutcomes(os.Stdout, outs, ref); jerr != nil {
			return jerr
		}
		return rebuildHint(err)
	}
	for _, o := range outs {
		if o.Err != nil {
			fmt.Fprintf(os.Stdout, "row %s: failed: %v\n", keys.String(o.Key), o.Err)
			continue
		}
		printRow(o, ref, true)
	}
	return rebuildHint(err)
}

// rebuildHint adds to a refused rebuild how to rebuild the row instead.
func rebuildHint(err error) error {
	if errors.Is(err, host.ErrUnnamedInstance) {
		return fmt.Errorf("%w\n(rebuild that row with: host rebuild --row KEY --instance SOURCE#ID ..., naming every instance that feeds it)", err)
	}
	return err
}

func runFilterPattern(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("filter-pattern", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	kinesis := fs.Bool("kinesis", false, "the filter of a mapping on a Kinesis data stream the event table streams its changes to (it matches inside each record's data)")
	setUsage(fs, `usage: host filter-pattern --config F [--kinesis]

Prints the FilterCriteria JSON of an event source mapping that keeps only
the configured streams' event INSERTs (--kinesis: for a mapping on the
Kinesis data stream the event table streams its changes to).

flags:
`)
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
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly()) // the pattern needs no plugin
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	criteria := h.FilterCriteria
	if *kinesis {
		criteria = h.KinesisFilterCriteria
	}
	b, err := criteria()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(os.Stdout, string(b))
	return err
}
