package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
)

func init() {
	commands = append(commands,
		command{"catchup", "bring the row of a stream's latest event up to the head (--projection, --id), or every stream instance one row's checkpoints know (--row)", runCatchUp},
		command{"rebuild", "re-derive the rows of a stream instance from version 1 (--id), one row from its stream instances (--row, --instance), or every row a plugin version wrote (--written-by)", runRebuild},
		command{"filter-pattern", "print the FilterCriteria JSON that keeps only the configured streams' event INSERTs", runFilterPattern},
	)
}

// projectionFlags are the flags naming a configuration, one of its
// projections and a stream instance.
type projectionFlags struct {
	fs                *flag.FlagSet
	cfgPath, proj, id *string
}

func newProjectionFlags(name string) *projectionFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return &projectionFlags{fs: fs,
		cfgPath: fs.String("config", "dynafold.json", "configuration file"),
		proj:    fs.String("projection", "", "projection name (default: the only one)"),
		id:      fs.String("id", "", "stream id (composites joined with #)"),
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
	o, err := h.CatchUp(ctx, *f.proj, *f.id)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeOutcomes(os.Stdout, []host.Outcome{o})
	}
	fmt.Fprintf(os.Stdout, "row %s: applied %d events, checkpoint %d, written %v\n", keys.String(o.Key), len(o.Applied()), o.Instances[0].Version, o.Written)
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
		fmt.Fprintf(f.fs.Output(), "usage: host rebuild --config F [--projection P] (--id ID | --row KEY [--instance SOURCE#ID ...] | --written-by V [--dry-run])\n\n"+
			"example: host rebuild --config dynafold.json --projection shipments --row '{\"pk\": \"Shipment#sh-1\", \"sk\": \"S\"}' --instance order#o-1 --instance weigh#w-1\n\n")
		f.fs.PrintDefaults()
	}
	asJSON := f.fs.Bool("json", false, "with --id: print the rows' outcomes as JSON (rows in plain JSON)")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *row != "" {
		return rebuildRow(ctx, f, *row, instances)
	}
	if len(instances) > 0 {
		return fmt.Errorf("--instance needs --row: the row to fold the instances into")
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
		return rebuildWrittenBy(ctx, h, *f.proj, *by, *dry)
	}
	outs, err := h.Rebuild(ctx, *f.proj, *f.id)
	if *asJSON {
		if jerr := writeOutcomes(os.Stdout, outs); jerr != nil {
			return jerr
		}
		return err
	}
	for _, o := range outs {
		fmt.Fprintf(os.Stdout, "row %s: written %v, checkpoint %d\n", keys.String(o.Key), o.Written, o.Instances[0].Version)
	}
	return err
}

func runFilterPattern(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("filter-pattern", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
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
	b, err := h.FilterCriteria()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(os.Stdout, string(b))
	return err
}
