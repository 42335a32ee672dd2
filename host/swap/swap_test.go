package swap_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
)

// mustServe checks that s folds an order with the version wanted.
func mustServe(t *testing.T, s *swap.Swapper, wantModel string) {
	t.Helper()
	resp, err := s.Evolve(context.Background(), evolveReq("o-1", 3))
	if err != nil {
		t.Fatalf("evolve: %v", err)
	}
	if got := resp.Item["items"].Str; got != "2" {
		t.Errorf("items = %q, want 2", got)
	}
	if got := model(resp.Item); got != wantModel {
		t.Errorf("model = %q, want %q (serving %s)", got, wantModel, s.Current().Plugin)
	}
}

func TestH3_OfferSwapsAndRetiresTheOldVersion(t *testing.T) {
	ctx := context.Background()
	s := newSwapper(t, v1, swap.Config{})
	if got := s.Describe().Version; got != "1.0.0" {
		t.Fatalf("describe version %q", got)
	}
	mustServe(t, s, "")
	info, changed, err := s.Offer(ctx, candidate(t, v2))
	if err != nil || !changed {
		t.Fatalf("offer v2: changed %v, %v", changed, err)
	}
	if info.Plugin != "order-summary@2.0.0" || s.Current().Plugin != info.Plugin || s.Describe().Version != "2.0.0" {
		t.Errorf("after swap: info %+v, current %+v, describe %+v", info, s.Current(), s.Describe())
	}
	mustServe(t, s, "2")
	waitFor(t, "v1 retired", func() bool { return s.Stats().Retired == 1 })
	if st := s.Stats(); st.Swaps != 1 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
	// The same module again is no change.
	if _, changed, err := s.Offer(ctx, candidate(t, v2)); err != nil || changed {
		t.Errorf("offer v2 again: changed %v, %v", changed, err)
	}
	if st := s.Stats(); st.Unchanged != 1 || st.Swaps != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestH3_BrokenCandidatesLeaveTheOldVersionServing(t *testing.T) {
	ctx := context.Background()
	s := newSwapper(t, v1, swap.Config{})
	cases := []struct {
		name  string
		cand  swap.Candidate
		step  error
		cause error
		text  string
	}{
		{"bad ABI", candidate(t, badABI), swap.ErrLoad, plugin.ErrABIVersion, "ABI version 2.0"},
		{"trap in self-test", candidate(t, v2trap), swap.ErrSmokeTest, plugin.ErrTrap, "self_test"},
		{"wrong streams", candidate(t, wrongStream), swap.ErrIncompatible, nil, `source 0 is Invoice<-Invoice/fold, want Order<-Order/fold`},
		{"not wasm", swap.Candidate{Wasm: []byte("not a module"), Origin: "junk"}, swap.ErrLoad, nil, "from junk refused at load"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, changed, err := s.Offer(ctx, c.cand)
			t.Logf("refused: %v", err)
			var ce *swap.CandidateError
			if changed || !errors.As(err, &ce) || !errors.Is(err, c.step) {
				t.Fatalf("offer: changed %v, err %v; want a CandidateError matching %v", changed, err, c.step)
			}
			if c.cause != nil && !errors.Is(err, c.cause) {
				t.Errorf("error does not match %v", c.cause)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("error lacks %q", c.text)
			}
			if got := s.Current().Plugin; got != "order-summary@1.0.0" {
				t.Errorf("serving %s", got)
			}
			mustServe(t, s, "")
			if st := s.Stats(); st.Failed != uint64(i+1) || st.Swaps != 0 || st.FailedBy[ce.Step] == 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestH3_PinnedDigests(t *testing.T) {
	ctx := context.Background()
	c1 := candidate(t, v1)
	s := newSwapper(t, v1, swap.Config{Pins: []string{strings.ToUpper(c1.SHA256())}})
	_, _, err := s.Offer(ctx, candidate(t, v2))
	if !errors.Is(err, swap.ErrPinMismatch) {
		t.Fatalf("offer of an unpinned module: %v", err)
	}
	mustServe(t, s, "")
	if st := s.Stats(); st.FailedBy[swap.StepPin] != 1 || st.Failed != 1 {
		t.Errorf("stats %+v", st)
	}
	if _, err := swap.New(ctx, candidate(t, v2), swap.Config{Plugin: pluginConfig(), Pins: []string{c1.SHA256()}}); !errors.Is(err, swap.ErrPinMismatch) {
		t.Errorf("New with an unpinned module: %v", err)
	}
	c2 := candidate(t, v2)
	s2 := newSwapper(t, v1, swap.Config{Pins: []string{c1.SHA256(), c2.SHA256()}})
	if _, changed, err := s2.Offer(ctx, c2); err != nil || !changed {
		t.Errorf("offer of a pinned module: %v", err)
	}
}

func TestH3_RollbackByCommand(t *testing.T) {
	ctx := context.Background()
	s := newSwapper(t, v1, swap.Config{})
	if _, err := s.Rollback(ctx); !errors.Is(err, swap.ErrNoHistory) {
		t.Fatalf("rollback with one version: %v", err)
	}
	if _, _, err := s.Offer(ctx, candidate(t, v2)); err != nil {
		t.Fatal(err)
	}
	mustServe(t, s, "2")
	info, err := s.Rollback(ctx)
	if err != nil || info.Plugin != "order-summary@1.0.0" {
		t.Fatalf("rollback: %+v, %v", info, err)
	}
	mustServe(t, s, "")
	if h := s.History(); len(h) != 1 || h[0].Version != "1.0.0" {
		t.Errorf("history after rollback: %+v", h)
	}
	if st := s.Stats(); st.Swaps != 2 || st.Rollbacks != 1 {
		t.Errorf("stats %+v", st)
	}
	if _, err := s.Rollback(ctx); !errors.Is(err, swap.ErrNoHistory) {
		t.Errorf("second rollback: %v", err)
	}
}

func TestH3_FixtureSmokeTestWithoutSelfTest(t *testing.T) {
	ctx := context.Background()
	events := orderRun("o-9", 1, 3)
	var fx swap.Fixture
	for _, e := range events {
		fx.Events = append(fx.Events, swap.SrcEvent{Event: e})
	}
	rows, err := swap.Fold(ctx, newSwapper(t, v1, swap.Config{}), fx.Events)
	if err != nil || len(rows) != 1 || rows[0].Item["items"].Str != "2" {
		t.Fatalf("fold: %+v, %v", rows, err)
	}
	fx.Name, fx.Rows = "good", []abi.Item{rows[0].Item}
	newSwapper(t, v1, swap.Config{Fixture: &fx}) // passes

	bad := fx
	bad.Name = "bad"
	row := abi.CloneItem(rows[0].Item)
	row["items"] = abi.N("3")
	bad.Rows = []abi.Item{row}
	_, err = swap.New(ctx, candidate(t, v1), swap.Config{Plugin: pluginConfig(), Fixture: &bad})
	if !errors.Is(err, swap.ErrSmokeTest) || !strings.Contains(err.Error(), `items = {"N":"2"}, want {"N":"3"}`) {
		t.Errorf("New with a failing fixture: %v", err)
	}
}

func TestY3_WrittenByFollowsTheServingVersion(t *testing.T) {
	ctx := context.Background()
	s := newSwapper(t, v1, swap.Config{WrittenBy: "writtenBy"})
	resp, by, err := s.EvolveAttributed(ctx, evolveReq("o-1", 2))
	if err != nil || by != "order-summary@1.0.0" || resp.Item["writtenBy"].Str != by {
		t.Fatalf("v1: by %q, item %v, %v", by, resp.Item["writtenBy"], err)
	}
	if _, _, err := s.Offer(ctx, candidate(t, v2)); err != nil {
		t.Fatal(err)
	}
	resp, by, err = s.EvolveAttributed(ctx, evolveReq("o-1", 2))
	if err != nil || by != "order-summary@2.0.0" || resp.Item["writtenBy"].Str != by || model(resp.Item) != "2" {
		t.Fatalf("v2: by %q, item %v, %v", by, resp.Item, err)
	}
}

func TestH3_ClosedSwapperRefusesCalls(t *testing.T) {
	ctx := context.Background()
	s, err := swap.New(ctx, candidate(t, v1), swap.Config{Plugin: pluginConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Evolve(ctx, evolveReq("o-1", 1)); !errors.Is(err, swap.ErrClosed) {
		t.Errorf("evolve after close: %v", err)
	}
	if s.Describe().Name != "order-summary" {
		t.Errorf("describe after close: %+v", s.Describe())
	}
	if st := s.Stats(); st.Retired != 1 {
		t.Errorf("the only version was not closed: %+v", st)
	}
}

// TestH3_FixtureFilesFromTheConfiguration smoke-tests order-summary 1.0.0
// (no self_test) with fixture files named in a SourceConfig: the rows 1.0.0
// gives pass, the rows 2.0.0 gives (with model = 2) refuse it.
func TestH3_FixtureFilesFromTheConfiguration(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		rows string
		ok   bool
	}{{"rows-v1.json", true}, {"rows-v2.json", false}} {
		sc := &swap.SourceConfig{Fixture: &swap.FixtureFiles{Events: "events.json", Rows: c.rows}}
		cfg := swap.Config{Plugin: pluginConfig()}
		if err := sc.Apply(&cfg, "testdata/fixture"); err != nil || cfg.Fixture == nil || len(cfg.Fixture.Events) != 5 || len(cfg.Fixture.Rows) != 2 {
			t.Fatalf("%s: apply: %v %+v", c.rows, err, cfg.Fixture)
		}
		s, err := swap.New(ctx, candidate(t, v1), cfg)
		if c.ok {
			if err != nil {
				t.Fatalf("%s: %v", c.rows, err)
			}
			s.Close(ctx)
			continue
		}
		if !errors.Is(err, swap.ErrSmokeTest) || !strings.Contains(err.Error(), `model missing, want {"N":"2"}`) {
			t.Errorf("%s: %v", c.rows, err)
		}
	}
}
