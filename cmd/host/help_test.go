package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestH2_HelpIsAnAnswerNotAnError: asking for help prints the commands (or a
// command's flags) and exits 0; an unknown command exits 2 with the list.
func TestH2_HelpIsAnAnswerNotAnError(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "rebuild"}, {"rebuild", "--help"}, {"plugin", "--help"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 0 {
			t.Errorf("host %s: exit %d, want 0 (stderr %q)", strings.Join(args, " "), code, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errOut); !strings.Contains(out.String(), "rebuild") || !strings.Contains(out.String(), "host help <command>") {
		t.Errorf("host --help (exit %d) printed %q", code, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "nope"`) || !strings.Contains(errOut.String(), "demo") {
		t.Errorf("host nope: exit %d, stderr %q", code, errOut.String())
	}
}
