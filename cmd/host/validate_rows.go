package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
)

// validateSample is how many rows `plugin validate --config` re-derives
// with the candidate, and validateSampleTimeout bounds the check.
const (
	validateSample        = 20
	validateSampleTimeout = 30 * time.Second
)

// checkSampledRows re-derives a sample of the projection's rows with the
// candidate (file) from their events, as `host replay` does, and warns of
// what a swap would do to the rows the table holds: attributes the stored
// rows have and the candidate writes on none (a renamed or dropped state
// field, which the candidate's next event on such a row folds without),
// and how many sampled rows it derives differently. It only prints: a
// field dropped on purpose is legitimate. When the tables cannot be read
// (offline, no table yet) it says so in one line and checks nothing; a
// configuration naming no endpoint (tables in AWS) is read only with
// inAWS (--check-rows), so that validate stays offline in a build.
// With asJSON the lines go to standard error, so that standard output
// stays one JSON document.
func checkSampledRows(ctx context.Context, file, cfgPath, projection string, asJSON, inAWS bool) {
	out := stdoutOf(ctx)
	if asJSON {
		out = stderrOf(ctx)
	}
	skip := func(err error) {
		msg := strings.SplitN(err.Error(), "\n", 2)[0]
		fmt.Fprintf(out, "  rows     not checked against the table's rows (%s); check them with host replay once the tables can be read\n", msg)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		skip(err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, validateSampleTimeout)
	defer cancel()
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		skip(err)
		return
	}
	if !inAWS && cfg.Endpoint == "" && os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" && os.Getenv("AWS_ENDPOINT_URL") == "" {
		// validate runs offline (a build, CI): it calls AWS only when asked
		fmt.Fprintf(out, "  rows     not checked against the table's rows: the configuration names no endpoint (its tables are in AWS); add --check-rows to read them\n")
		return
	}
	// the host's own log at warnings only: its info lines (each plugin
	// loaded) are not validate's to print
	log := slog.New(slog.NewTextHandler(stderrOf(ctx), &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := host.New(ctx, cfg, host.WithLogger(log))
	if err != nil {
		skip(err)
		return
	}
	defer h.Close(context.WithoutCancel(ctx))
	rep, err := h.WhatIfSample(ctx, projection, abs, validateSample)
	if err != nil {
		skip(err)
		return
	}
	if rep.Compared == 0 && rep.Failed == 0 {
		fmt.Fprintf(out, "  rows     none to check: the table holds no row the candidate makes from the first events of the event store\n")
		return
	}
	line := fmt.Sprintf("  rows     %s re-derived from their events by the candidate: %d differ from the table", plural(rep.Compared, "sampled row"), rep.Differ)
	if rep.Failed > 0 {
		line += fmt.Sprintf(", %d the candidate fails (host replay --config %s --plugin %s --stream S --id ID shows why)", rep.Failed, cfgPath, file)
	}
	fmt.Fprintln(out, line)
	if len(rep.Dropped) == 0 {
		return
	}
	fix := fmt.Sprintf("host verify --config %s --repair", cfgPath)
	if len(rep.WrittenBy) > 0 {
		var cmds []string
		for _, w := range rep.WrittenBy {
			cmds = append(cmds, fmt.Sprintf("host rebuild --config %s --written-by %s", cfgPath, w))
		}
		fix = strings.Join(cmds, ", then ")
	}
	for _, d := range rep.Dropped {
		fmt.Fprintf(out, "  WARNING  attribute %q is in %d of %s and in none of the candidate's: a renamed or dropped field? "+
			"the candidate's next event on such a row folds on a state without it — rebuild the rows it changes after the swap (%s)\n",
			d.Name, d.Stored, plural(rep.Compared, "sampled row"), fix)
	}
}
