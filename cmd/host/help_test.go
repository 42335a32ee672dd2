package main

import (
	"bytes"
	"context"
	"os/exec"
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

// Every command's help, and every group's commands' (host help plugin new,
// host help tables create), starts with its usage line, never the flag
// package's bare "Usage of …:".
func TestH6_EveryCommandsHelpStartsWithItsUsage(t *testing.T) {
	var lines [][]string
	for _, c := range commands {
		lines = append(lines, []string{c.name})
	}
	for _, c := range pluginCommands {
		lines = append(lines, []string{"plugin", c.name})
	}
	lines = append(lines, []string{"tables", "create"}, []string{"quarantine", "list"}, []string{"quarantine", "replay"}, []string{"quarantine", "drop"})
	bin := hostBinary(t)
	for _, l := range lines {
		out, err := exec.Command(bin, append([]string{"help"}, l...)...).CombinedOutput()
		text := strings.TrimSpace(string(out))
		if err != nil || !strings.HasPrefix(text, "usage:") || strings.Contains(text, "Usage of") {
			t.Errorf("host help %s: %v, printed:\n%.300s", strings.Join(l, " "), err, text)
		}
	}
}
