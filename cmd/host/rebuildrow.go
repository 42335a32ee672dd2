package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
)

// rebuildRow runs `host rebuild --row KEY [--instance SOURCE#ID ...]`.
func rebuildRow(ctx context.Context, f *projectionFlags, rowArg string, instances []string, dropOthers bool) error {
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
	if len(refs) > 0 && !dropOthers {
		if err := leftOut(ctx, h, *f.proj, key, refs); err != nil {
			return err
		}
	}
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
	printState(o)
	return nil
}

// leftOut refuses a rebuild from named instances that leaves out some the
// row's checkpoints name: those would lose their part and their
// checkpoint, and a later rebuild could not find them again.
func leftOut(ctx context.Context, h *host.Host, projection string, key abi.Item, named []host.InstanceRef) error {
	has, err := h.RowInstances(ctx, projection, key)
	if err != nil {
		return fmt.Errorf("reading the row's instances: %w", err)
	}
	var out []string
	for _, r := range has {
		if !slices.Contains(named, r) {
			out = append(out, r.String())
		}
	}
	if len(out) == 0 {
		return nil
	}
	return fmt.Errorf("row %s also has %s, which --instance leaves out: the rebuild would drop %s part and checkpoint. Name %s too (or leave out --instance to rebuild from every instance the row names), or add --drop-others to rebuild without %s",
		keys.String(key), strings.Join(out, ", "), pick(len(out), "its", "their"), pick(len(out), "it", "them"), pick(len(out), "it", "them"))
}

// pick is one when n is 1, else many.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
