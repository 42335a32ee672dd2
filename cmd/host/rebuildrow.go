package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
)

// rebuildRow runs `host rebuild --row KEY [--instance SOURCE#ID ...]`.
func rebuildRow(ctx context.Context, f *projectionFlags, rowArg string, instances []string) error {
	if *f.id != "" {
		return fmt.Errorf("--row and --id are exclusive: --row rebuilds one row from the instances given with --instance")
	}
	key, err := rowKeyArg(rowArg)
	if err != nil {
		return err
	}
	var refs []host.InstanceRef
	for _, s := range instances {
		r, err := host.ParseInstanceRef(s)
		if err != nil {
			return fmt.Errorf("--instance: %w", err)
		}
		refs = append(refs, r)
	}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	o, err := h.RebuildRow(ctx, *f.proj, key, refs...)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "row %s: written %v, revision %d\n", keys.String(o.Key), o.Written, o.Revision)
	for _, in := range o.Instances {
		fmt.Fprintf(os.Stdout, "  %s#%s: checkpoint %d\n", in.Source, in.StreamID, in.Version)
	}
	return nil
}

// catchUpRow runs `host catchup --row KEY`.
func catchUpRow(ctx context.Context, f *projectionFlags, rowArg string) error {
	if *f.id != "" {
		return fmt.Errorf("--row and --id are exclusive")
	}
	key, err := rowKeyArg(rowArg)
	if err != nil {
		return err
	}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	o, err := h.CatchUpRow(ctx, *f.proj, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "row %s: applied %s, written %v, revision %d\n", keys.String(o.Key), plural(len(o.Applied()), "event"), o.Written, o.Revision)
	for _, in := range o.Instances {
		fmt.Fprintf(os.Stdout, "  %s#%s: checkpoint %d\n", in.Source, in.StreamID, in.Version)
	}
	return nil
}
