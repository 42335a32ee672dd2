package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/keys"
)

func init() {
	commands = append(commands, command{"row",
		"print read-model rows as they are, changing nothing: one by its key (--row), or every row a stream instance feeds (--id, --source)", runRow})
}

const rowUsage = `usage: host row --config F [--projection P] (--row KEY | --id ID [--source S])

Prints read-model rows as the table holds them, in DynamoDB JSON, reading
them strongly consistent and changing nothing (catchup and rebuild print a
row too, after applying what it lacks). --row takes the row's key as JSON,
plain or DynamoDB JSON; --id finds every row the stream instance's events
address, through the plugin's key function. A row removed (a tombstone) or
never written is said to be absent.

Examples:
  host row --config dynafold.json --row '{"pk": "Inventory#i-1", "sk": "Inventory"}'
  host row --config dynafold.json --id i-1

flags:
`

func runRow(ctx context.Context, args []string) error {
	f := newProjectionFlags("row")
	row := f.fs.String("row", "", `the row's key as JSON, plain or DynamoDB JSON: '{"pk": "Shipment#sh-1", "sk": "S"}'`)
	f.fs.SetOutput(stderrOf(ctx))
	setUsage(f.fs, rowUsage)
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(f.fs, ""); err != nil {
		return err
	}
	if (*row == "") == (*f.id == "") {
		return fmt.Errorf("give the row by its key (--row '{\"pk\": …}') or the stream instance that feeds it (--id ID), one of the two")
	}
	if *f.source != "" && *f.id == "" {
		return fmt.Errorf("--source needs --id: the stream instance's id")
	}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	var rows []abi.Item
	if *row != "" {
		key, err := rowKeyArg(*row)
		if err != nil {
			return err
		}
		rows = append(rows, key)
	} else {
		ref, err := f.instance(h)
		if err != nil {
			return err
		}
		if rows, err = h.RowsOf(ctx, *f.proj, ref); err != nil {
			if errors.Is(err, host.ErrEventDecode) {
				// --id finds the rows through the instance's events, and one
				// of them does not decode: the row is still there by its key.
				return fmt.Errorf("%w\n--id finds the rows through the stream instance's events, and one of them does not decode; give the row by its key instead: host row --row '{\"pk\": …, \"sk\": …}'", err)
			}
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("stream instance %s has no events that address a row of this projection (is the id right? `host append` prints the ids it writes)", ref)
		}
	}
	out := stdoutOf(ctx)
	for _, key := range rows {
		it, ok, err := h.Row(ctx, *f.proj, key)
		if err != nil {
			return fmt.Errorf("row %s: %w", keys.String(key), err)
		}
		if !ok {
			fmt.Fprintf(out, "row %s: absent (never written, or removed)\n", keys.String(key))
			continue
		}
		b, err := ddbjson.ItemToJSON(it)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "row %s:\n  %s\n", keys.String(key), b)
	}
	return nil
}
