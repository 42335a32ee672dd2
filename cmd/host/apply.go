package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/internal/keys"
)

func runApply(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	cfgPath := fs.String("config", "dynafold.json", "configuration file")
	recPath := fs.String("records", "-", "captured Lambda DynamoDB stream event or Kinesis event (JSON), or - for stdin")
	asJSON := fs.Bool("json", false, "print only the partial batch response, as Lambda returns it")
	source := fs.String("source", "", `who delivered the records, as the function's DYNAFOLD_SOURCE: "lambda" (an event source mapping's {"Records": [...]}, answered by sequence number) or "pipe" (an EventBridge Pipe's JSON array, answered by eventID); default: the configuration's "source", else lambda`)
	setUsage(fs, `usage: host apply --config F [--records FILE|-] [--source lambda|pipe] [--json]

Runs one captured Lambda event (a DynamoDB stream event, or a Kinesis event)
through the projections, as the Lambda handler would, and prints what each
row did and the partial batch response (--json: the response only). Capture
one with `+"`host capture`"+`.

The payload must be the shape its source delivers, as the function
requires: {"Records": [...]} for --source lambda (failed records named by
sequence number), a bare JSON array of records for --source pipe (named by
eventID). One of the other shape is refused with the function's message.

flags:
`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, fmt.Sprintf("the captured event is read from --records FILE, else stdin: host apply --config %s --records %s", *cfgPath, fs.Arg(0))); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	var raw []byte
	if *recPath == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(*recPath)
	}
	if err != nil {
		return fmt.Errorf("reading records: %w", err)
	}
	if *source != "" {
		if err := host.Source(*source).Check(); err != nil {
			return fmt.Errorf("--source %q: use lambda (a Lambda event source mapping) or pipe (an EventBridge Pipe target)", *source)
		}
		cfg.Source = host.Source(*source)
	}
	if err := lambda.CheckPayload(raw, string(cfg.Source)); err != nil {
		array := bytes.HasPrefix(bytes.TrimSpace(raw), []byte("["))
		switch {
		case array && cfg.Source != host.SourcePipe:
			return fmt.Errorf("records: %w; here: host apply --source pipe", err)
		case !array && cfg.Source == host.SourcePipe:
			return fmt.Errorf("records: %w; here: host apply --source lambda", err)
		}
		return fmt.Errorf("records: %w", err)
	}
	records, err := host.ParseEvent(raw)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	res, err := h.ProcessBatch(ctx, records)
	if err != nil {
		return err
	}
	resp, err := res.Response()
	if err != nil {
		return err
	}
	if !*asJSON {
		summarize(os.Stdout, res)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(resp)
}

// summarize prints what a batch did, row by row: what was applied, already
// applied, skipped or rejected (with the plugin's reason), and why a row or
// an event's key failed.
func summarize(w io.Writer, res *host.Result) {
	fmt.Fprintf(w, "%s: %s, %d ignored, %d failed to decode\n", plural(res.Records, "record"), plural(len(res.Events), "event"), len(res.Ignored), len(res.DecodeFailures))
	for _, f := range res.DecodeFailures {
		fmt.Fprintf(w, "  record %d (%s) failed to decode: %v\n", f.Position, f.Identifier, f.Err)
	}
	for _, o := range res.Obsolete {
		fmt.Fprintf(w, "  record %d (%s) passed over: its item was removed or corrected in the event table since (it did not decode: %v)\n", o.Position, o.Identifier, o.Err)
	}
	for _, c := range res.Corrected {
		fmt.Fprintf(w, "  record %d (%s) folded from its item as it is now: the item was corrected in the event table since (the record's image did not decode: %v)\n", c.Position, c.Identifier, c.Err)
	}
	names := make([]string, 0, len(res.Projections))
	for n := range res.Projections {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pr := res.Projections[name]
		fmt.Fprintf(w, "projection %s: %s, %s naming no row\n", name, plural(len(pr.Rows), "row"), plural(len(pr.NoRow), "event"))
		for _, o := range pr.Rows {
			if o.Err != nil {
				fmt.Fprintf(w, "  row %s: FAILED, nothing written: %v\n", keys.String(o.Key), o.Err)
				continue
			}
			for _, in := range o.Instances {
				fmt.Fprintf(w, "  row %s: %s %s: applied %s, already applied %s, skipped %s",
					keys.String(o.Key), in.Source, in.StreamID, versions(in.Applied), versions(in.AlreadyApplied), versions(in.Skipped))
				for _, rj := range in.Rejected {
					fmt.Fprintf(w, ", rejected v%d (%v)", rj.Event.Version, rj.Error)
				}
				if len(in.Superseded) > 0 {
					fmt.Fprintf(w, ", superseded %s (latest mode: only the newest is applied)", versions(in.Superseded))
				}
				fmt.Fprintf(w, "; checkpoint %d", in.Version)
				switch {
				case o.Removed && o.Written:
					fmt.Fprint(w, "; removed (a tombstone keeps its checkpoints)")
				case o.Removed:
					fmt.Fprint(w, "; already removed")
				case o.Written:
					fmt.Fprint(w, "; written")
				default:
					fmt.Fprint(w, "; not written (nothing new)")
				}
				fmt.Fprintln(w)
			}
		}
		for _, kf := range pr.KeyFailures {
			fmt.Fprintf(w, "  event %s %s v%d (record %d): the plugin's key failed: %v\n", kf.Stream, kf.StreamID, kf.Version, kf.Position, kf.Err)
		}
	}
}

// versions renders events' versions compactly: "-", "v3", "v1-v4 (4)".
func versions(evs []abi.Event) string {
	switch len(evs) {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf("v%d", evs[0].Version)
	}
	return fmt.Sprintf("v%d-v%d (%d)", evs[0].Version, evs[len(evs)-1].Version, len(evs))
}
