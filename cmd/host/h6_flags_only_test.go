package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestH6_ApplyRefusesARecordsFileGivenWithoutRecords: `host apply --config
// F hot.json` read stdin and failed on its empty JSON; it now refuses the
// file argument and says to pass it with --records.
func TestH6_ApplyRefusesARecordsFileGivenWithoutRecords(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"apply", "--config", "dynafold.json", "hot.json"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Equal(t, `host apply: unexpected arguments ["hot.json"]: host apply takes flags only (the captured event is read from --records FILE, else stdin: host apply --config dynafold.json --records hot.json)`+"\n", errOut.String())
	assert.Empty(t, out.String())
}

// TestH6_EveryFlagsOnlyCommandRefusesPositionalArguments: each command
// (and subcommand) that takes no positional arguments refuses one, naming
// it, rather than ignoring it. Commands that take them (plugin new,
// validate, test, precompile; quarantine drop) are left out. The context
// is cancelled: a command that did not refuse would fail otherwise, not
// run.
func TestH6_EveryFlagsOnlyCommandRefusesPositionalArguments(t *testing.T) {
	t.Chdir(t.TempDir()) // no dynafold.json
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var lines [][]string
	for _, c := range commands {
		switch c.name {
		case "plugin":
			lines = append(lines, []string{"plugin", "promote"}, []string{"plugin", "rollback"})
		case "quarantine":
			lines = append(lines, []string{"quarantine", "list"}, []string{"quarantine", "replay"})
		case "tables":
			lines = append(lines, []string{"tables", "create"})
		default:
			lines = append(lines, []string{c.name})
		}
	}
	assert.Greater(t, len(lines), 20)
	for _, line := range lines {
		name := strings.Join(line, " ")
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(ctx, append(line, "stray"), &out, &errOut)
			assert.NotEqual(t, 0, code)
			assert.Contains(t, errOut.String(), fmt.Sprintf(`unexpected arguments ["stray"]: host %s takes flags only`, name))
		})
	}
}
