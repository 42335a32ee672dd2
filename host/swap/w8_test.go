package swap_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/host/swap"
)

// The modules of the case 3 (testdata/badoutput): order-summary
// whose to_item returns qty = {"N": "not-a-number"} (with self tests that
// expect it), and one whose to_item returns another row's pk (no self test).
const (
	badNumber = "badoutput/badnumber"
	otherKey  = "badoutput/otherkey"
)

// fixtureFor is the order fixture's events with the rows a module returns
// (what its author expects of it).
func fixtureFor(t *testing.T, rows string) *swap.Fixture {
	t.Helper()
	fx, err := swap.LoadFixture("testdata/fixture/events.json", rows)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// load loads a test module without smoke-testing it.
func load(t *testing.T, name string) transport.Plugin {
	t.Helper()
	p, _, err := transport.Load(context.Background(), module(t, name), pluginConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// TestW8_AHotSwapRefusesAModuleWhoseOutputCannotBeWritten: a candidate
// whose to_item makes a number DynamoDB refuses is refused by its own self
// test (guesttest checks the output); the serving version keeps serving.
func TestW8_AHotSwapRefusesAModuleWhoseOutputCannotBeWritten(t *testing.T) {
	s := newSwapper(t, v1, swap.Config{})
	_, changed, err := s.Offer(context.Background(), candidate(t, badNumber))
	t.Logf("refused: %v", err)
	if changed || !errors.Is(err, swap.ErrSmokeTest) {
		t.Fatalf("offer: changed %v, err %v; want refused at the smoke test", changed, err)
	}
	if want := `attribute "qty" that is N "not-a-number"`; !strings.Contains(err.Error(), want) {
		t.Errorf("the error does not name the attribute and the problem (%q)", want)
	}
	if got := s.Current().Plugin; got != "order-summary@1.0.0" {
		t.Errorf("serving %s", got)
	}
}

// TestW8_TheSmokeTestRefusesAModuleWhoseOutputCannotBeWritten: the smoke
// test with a fixture (a module without self test) refuses to_item output
// DynamoDB would refuse, or that names another row's key, even when the
// fixture's rows are what the module returns.
func TestW8_TheSmokeTestRefusesAModuleWhoseOutputCannotBeWritten(t *testing.T) {
	for _, c := range []struct {
		module, rows, text string
	}{
		{otherKey, "testdata/badoutput/rows-otherkey.json", `attribute "pk" that is S "OrderSummary#someone-else", but it is a key attribute`},
		{v1, "testdata/fixture/rows-v1.json", ""},
	} {
		err := swap.Smoke(context.Background(), load(t, c.module), module(t, c.module), fixtureFor(t, c.rows))
		if c.text == "" {
			if err != nil {
				t.Errorf("%s: %v", c.module, err)
			}
			continue
		}
		t.Logf("refused: %v", err)
		if err == nil || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: smoke test %v; want it refused naming %q", c.module, err, c.text)
		}
	}
}

// TestW8_FoldFailsTheRowsWhoseOutputCannotBeWritten: the fold behind
// `host plugin test` and the smoke test fails each row whose item DynamoDB
// would refuse, naming the plugin version, the event and the attribute.
func TestW8_FoldFailsTheRowsWhoseOutputCannotBeWritten(t *testing.T) {
	rows, err := swap.Fold(context.Background(), load(t, badNumber), fixtureFor(t, "testdata/badoutput/rows-badnumber.json").Events)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.Err == nil || r.Item != nil {
			t.Fatalf("row %v: item %v, err %v; want it failed", r.Key, r.Item, r.Err)
		}
		if !errors.Is(r.Err, logic.ErrOutput) {
			t.Errorf("row %v: %v does not match logic.ErrOutput", r.Key, r.Err)
		}
	}
	var oe *logic.OutputError
	if !errors.As(rows[0].Err, &oe) {
		t.Fatalf("%v is no *logic.OutputError", rows[0].Err)
	}
	if oe.Plugin != "order-summary@1.0.1" || oe.StreamID != "o-1" || oe.Version != 3 || oe.Type != "ItemAdded" || oe.Output != "to_item" || oe.Path != "qty" {
		t.Errorf("output error %+v", oe)
	}
}
