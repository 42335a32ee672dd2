package main

import (
	"context"
	"io"
	"os"
)

// outputKey is the context key of a command's output (withOutput).
type outputKey struct{}

type cmdOutput struct{ stdout, stderr io.Writer }

// withOutput returns ctx carrying where a command run with it prints: its
// own writers instead of the process's standard output and error, so that
// commands run side by side in one process (tests) print apart.
func withOutput(ctx context.Context, stdout, stderr io.Writer) context.Context {
	return context.WithValue(ctx, outputKey{}, cmdOutput{stdout, stderr})
}

// stdoutOf returns where a command run with ctx prints its output:
// withOutput's writer, else the process's standard output.
func stdoutOf(ctx context.Context) io.Writer {
	if o, ok := ctx.Value(outputKey{}).(cmdOutput); ok && o.stdout != nil {
		return o.stdout
	}
	return os.Stdout
}

// stderrOf returns where a command run with ctx prints its diagnostics:
// withOutput's writer, else the process's standard error.
func stderrOf(ctx context.Context) io.Writer {
	if o, ok := ctx.Value(outputKey{}).(cmdOutput); ok && o.stderr != nil {
		return o.stderr
	}
	return os.Stderr
}
