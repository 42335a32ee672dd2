package selftest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	"github.com/dynafold/dynafold/sdk-guest/selftest"
)

func load(t *testing.T, dir string) (*plugin.Plugin, []byte) {
	t.Helper()
	wasm := wasmbuild.Build(t, dir)
	ctx := context.Background()
	p, err := plugin.Load(ctx, wasm, plugin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(ctx) })
	return p, wasm
}

// TestH3_ShippedSelfTestGatesTheModule builds two modules with guesttest
// cases registered as self tests: the host's smoke test (what validation
// and a hot swap run) passes the right one and refuses the wrong one with
// the case's difference, even though a fixture that passes is given.
func TestH3_ShippedSelfTestGatesTheModule(t *testing.T) {
	ctx := context.Background()
	pass, passWasm := load(t, "testdata/pass")
	if !pass.Describe().Has(abi.CapSelfTest) {
		t.Errorf("describe does not list self_test: %v", pass.Describe().Capabilities)
	}
	ran, err := swap.SelfTest(ctx, pass, passWasm)
	if !ran || err != nil {
		t.Fatalf("passing self test: ran %v, %v", ran, err)
	}
	fail, failWasm := load(t, "testdata/fail")
	err = swap.Smoke(ctx, fail, failWasm, &swap.Fixture{Name: "empty"})
	if err == nil {
		t.Fatal("a failing self test passed the smoke test")
	}
	for _, want := range []string{"self_test: 1 failure: expects a float sum:", "total = 2.35, want 2.3500000000000001"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestW2_SelfTestRunReportsFailuresAndPanics(t *testing.T) {
	got := selftest.Run([]selftest.Test{
		{Name: "ok", Run: func() error { return nil }},
		{Name: "bad", Run: func() error { return errors.New("2 != 3") }},
		{Name: "boom", Run: func() error { panic("nil map") }},
		{Name: "empty"},
	})
	want := []string{"bad: 2 != 3", "boom: panic: nil map", "empty: no Run function"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("failures %q, want %q", got, want)
	}
}
