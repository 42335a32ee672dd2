package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
)

func runWhatIf(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: host replay --config FILE --plugin CANDIDATE.wasm (--events FILE | --stream NAME --id ID) [--projection P] [--json]

Folds events through a candidate plugin without writing anything and prints
the rows it would write beside the rows the table holds now. Each row is
folded from its stream's first event (earlier events are read from the
event store), as if the read model were empty.

examples:
  host replay --config dynafold.json --plugin order-summary-1.1.wasm --stream Order --id o-1
  host capture --config dynafold.json --stream Order --out batch.json
  host replay --config dynafold.json --plugin order-summary-1.1.wasm --events batch.json --json

flags:`)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	proj := fs.String("projection", "", "projection name (default: the only one)")
	plugin := fs.String("plugin", "", "the candidate plugin (.wasm) (required)")
	events := fs.String("events", "", "a Lambda DynamoDB stream event file (host capture writes one), or - for stdin")
	stream := fs.String("stream", "", "with --id: the stream of the instance to fold")
	id := fs.String("id", "", "with --stream: the stream instance to fold, from version 1 to its head")
	asJSON := fs.Bool("json", false, "print one JSON document instead of the readable form")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	if *plugin == "" {
		return fmt.Errorf("--plugin is required: the candidate .wasm to fold through")
	}
	if (*events == "") == (*id == "") || (*id != "" && *stream == "") {
		return fmt.Errorf("give either --events FILE or --stream NAME --id ID")
	}
	var in host.WhatIfInput
	if *events != "" {
		recs, err := readRecords(*events)
		if err != nil {
			return err
		}
		in.Records = recs
	} else {
		in.StreamID = *id
	}
	if !strings.HasPrefix(*plugin, "native:") { // relative to the working directory, not to the configuration
		abs, err := filepath.Abs(*plugin)
		if err != nil {
			return err
		}
		*plugin = abs
	}
	f := &projectionFlags{cfgPath: cfgPath, proj: proj, id: id}
	h, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	rows, err := h.WhatIf(ctx, *proj, *plugin, in)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(os.Stdout, whatIfJSON(rows))
	}
	printWhatIf(os.Stdout, rows)
	return nil
}

// readRecords reads a captured event file (- for stdin).
func readRecords(path string) ([]host.Record, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	recs, err := host.ParseEvent(raw)
	if err != nil {
		return nil, fmt.Errorf("records in %s: %w", path, err)
	}
	if recs == nil {
		recs = []host.Record{}
	}
	return recs, nil
}

// whatIfRow is a row of `replay --json`.
type whatIfRow struct {
	Key     map[string]any `json:"key"`
	Would   map[string]any `json:"would"`
	Current map[string]any `json:"current"`
	Removed bool           `json:"removed,omitempty"`
	Error   string         `json:"error,omitempty"`
	Changes []string       `json:"changes"`
}

func whatIfJSON(rows []host.WhatIfRow) map[string]any {
	out := make([]whatIfRow, 0, len(rows))
	changed := 0
	for _, r := range rows {
		j := whatIfRow{Key: plainItem(r.Key), Would: plainItem(r.Would), Current: plainItem(r.Current), Removed: r.Removed, Changes: r.Changes}
		if j.Changes == nil {
			j.Changes = []string{}
		}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		if len(r.Changes) > 0 || r.Err != nil {
			changed++
		}
		out = append(out, j)
	}
	return map[string]any{"rows": out, "differing": changed, "written": false}
}

func printWhatIf(w io.Writer, rows []host.WhatIfRow) {
	changed := 0
	for _, r := range rows {
		k := keys.String(r.Key)
		switch {
		case r.Err != nil:
			changed++
			fmt.Fprintf(w, "row %s: the candidate FAILS the row: %v\n", k, r.Err)
			continue
		case r.Removed:
			fmt.Fprintf(w, "row %s: the candidate would remove it\n", k)
		case len(r.Changes) == 0:
			fmt.Fprintf(w, "row %s: same as the table\n", k)
		default:
			fmt.Fprintf(w, "row %s: %d attributes differ from the table\n", k, len(r.Changes))
		}
		if len(r.Changes) > 0 {
			changed++
		}
		for _, c := range r.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
		if !r.Removed {
			fmt.Fprintf(w, "  would write: %s\n", plainJSON(r.Would))
		}
	}
	fmt.Fprintf(w, "%s, %d differ from the table; nothing was written\n", plural(len(rows), "row"), changed)
}
