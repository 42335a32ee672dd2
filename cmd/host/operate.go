package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/host"
)

func init() {
	commands = append(commands,
		command{"catchup", "bring the row of a stream's latest event up to the head (--projection, --id)", runCatchUp},
		command{"rebuild", "re-derive every row of a stream instance from version 1 (--projection, --id)", runRebuild},
		command{"filter-pattern", "print the FilterCriteria JSON that keeps only the configured streams' event INSERTs", runFilterPattern},
	)
}

// openProjection loads the configuration and returns the named projection.
func openProjection(ctx context.Context, args []string, name string) (*host.Host, string, string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	proj := fs.String("projection", "", "projection name (default: the only one)")
	id := fs.String("id", "", "stream id")
	if err := fs.Parse(args); err != nil {
		return nil, "", "", err
	}
	if *id == "" {
		return nil, "", "", fmt.Errorf("--id is required")
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return nil, "", "", err
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return nil, "", "", err
	}
	if *proj == "" && len(h.Projections()) == 1 {
		*proj = h.Projections()[0]
	}
	return h, *proj, *id, nil
}

func runCatchUp(ctx context.Context, args []string) error {
	h, proj, id, err := openProjection(ctx, args, "catchup")
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	o, err := h.CatchUp(ctx, proj, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "row %v: applied %d events, checkpoint %d, written %v\n", o.Key, len(o.Applied()), o.Instances[0].Version, o.Written)
	return nil
}

func runRebuild(ctx context.Context, args []string) error {
	h, proj, id, err := openProjection(ctx, args, "rebuild")
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	outs, err := h.Rebuild(ctx, proj, id)
	for _, o := range outs {
		fmt.Fprintf(os.Stdout, "row %v: written %v, checkpoint %d\n", o.Key, o.Written, o.Instances[0].Version)
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
