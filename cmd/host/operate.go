package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
)

func init() {
	commands = append(commands,
		command{"catchup", "bring the row of a stream's latest event up to the head with every instance of the row (--projection, --id, --source), or every stream instance one row's checkpoints know (--row)", runCatchUp},
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
	var c uint64
	for _, in := range o.Instances {
		if in.Source == ref.Source && in.StreamID == ref.StreamID {
			c = in.Version
		}
	}
	n := len(o.Applied())
	switch {
	case !rebuilt:
		fmt.Fprintf(os.Stdout, "row %s: applied %d events, checkpoint %d, written %v\n", keys.String(o.Key), n, c, o.Written)
	case n > 0:
		fmt.Fprintf(os.Stdout, "row %s: written %v, checkpoint %d, applied %d events after the row's checkpoints\n", keys.String(o.Key), o.Written, c, n)
	default:
		fmt.Fprintf(os.Stdout, "row %s: written %v, checkpoint %d\n", keys.String(o.Key), o.Written, c)
	}
	if len(o.Instances) > 1 {
		for _, in := range o.Instances {
			fmt.Fprintf(os.Stdout, "  %s#%s: checkpoint %d\n", in.Source, in.StreamID, in.Version)
		}
	}
}

// open loads the configuration and builds the host; the projection defaults
// to the only one.
func (f *projectionFlags) open(ctx context.Context) (*host.Host, error) {
	cfg, err := host.LoadConfig(*f.cfgPath)
	if err != nil {
		return nil, err
	}
	h, err := host.New(ctx, cfg)
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
	asJSON := f.fs.Bool("json", false, "print the row's outcome as JSON (the row in plain JSON)")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *row != "" {
		return catchUpRow(ctx, f, *row)
	}
	if *f.id == "" {
		return fmt.Errorf("--id is required: the stream instance whose row to bring up to its head (or --row: a row)")
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
	o, err := h.CatchUpInstance(ctx, *f.proj, ref)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeOutcomes(os.Stdout, []host.Outcome{o})
	}
	printRow(o, ref, false)
	return nil
}

func runRebuild(ctx context.Context, args []string) error {
	f := newProjectionFlags("rebuild")
	by := f.fs.String("written-by", "", "rebuild instead every row written by this plugin version: NAME@VERSION, or VERSION of the projection's plugin")
	dry := f.fs.Bool("dry-run", false, "with --written-by: list the rows and stream instances, rebuild nothing")
	row := f.fs.String("row", "", `rebuild instead this one row, given by its key as JSON, plain or DynamoDB JSON: '{"pk": "Shipment#sh-1", "sk": "S"}'`)
	var instances multiFlag
	f.fs.Var(&instances, "instance", "with --row: a stream instance to fold into the row, SOURCE#ID (repeat for each; default: the instances the row's checkpoints name)")
	f.fs.Usage = func() {
		fmt.Fprintf(f.fs.Output(), "usage: host rebuild --config F [--projection P] (--id ID [--source S] | --row KEY [--instance SOURCE#ID ...] | --written-by V [--dry-run])\n\n"+
			"--id rebuilds every row the stream instance feeds, each from every instance of the row (its checkpoints name them), so\n"+
			"the row's other sources keep their part; --row rebuilds one row from exactly the instances named.\n\n"+
			"example: host rebuild --config dynafold.json --projection shipments --id w-1 --source weigh\n"+
			"example: host rebuild --config dynafold.json --projection shipments --row '{\"pk\": \"Shipment#sh-1\", \"sk\": \"S\"}' --instance order#o-1 --instance weigh#w-1\n\n")
		f.fs.PrintDefaults()
	}
	asJSON := f.fs.Bool("json", false, "with --id: print the rows' outcomes as JSON (rows in plain JSON); with --written-by: the report, each row with what its rebuild did, and the counts")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *row != "" {
		return rebuildRow(ctx, f, *row, instances)
	}
	if len(instances) > 0 {
		return fmt.Errorf("--instance needs --row: the row to fold the instances into")
	}
	if *f.source != "" && *f.id == "" {
		return fmt.Errorf("--source needs --id: the stream instance's id")
	}
	if *by == "" && *f.id == "" {
		return fmt.Errorf("--id (a stream instance) or --written-by (a plugin version) is required, or --row (one row)")
	}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	if *by != "" {
		return rebuildWrittenBy(ctx, h, *f.proj, *by, *dry, *asJSON)
	}
	ref, err := f.instance(h)
	if err != nil {
		return err
	}
	outs, err := h.RebuildInstance(ctx, *f.proj, ref)
	if *asJSON {
		if jerr := writeOutcomes(os.Stdout, outs); jerr != nil {
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
	if err := fs.Parse(args); err != nil {
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
