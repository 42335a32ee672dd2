package guesttest

import (
	"errors"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
	"github.com/dynafold/dynafold/sdk-guest/selftest"
)

// Case is a named test of a projection: events and the rows they give. Run
// it natively with Run, and ship it in the module with SelfTests.
type Case struct {
	Name   string
	Events []Ev
	Want   []abi.Item // the rows, built with Row
}

// Check folds the case's events through d and returns the differences from
// Want as an error (nil when the rows agree).
func (c Case) Check(d guest.Definition) error {
	got, err := Fold(d, c.Events...)
	if err != nil {
		return err
	}
	if diff := Diff(got, c.Want...); diff != "" {
		return errors.New(diff)
	}
	return nil
}

// Run runs the case as a test: each difference is a test error.
func (c Case) Run(t TB, d guest.Definition) {
	t.Helper()
	if err := c.Check(d); err != nil {
		t.Errorf("%s: rows differ:\n%v", c.Name, err)
	}
}

// SelfTests turns cases into self tests of d, for selftest.Register.
func SelfTests(d guest.Definition, cases ...Case) []selftest.Test {
	out := make([]selftest.Test, len(cases))
	for i, c := range cases {
		out[i] = selftest.Test{Name: c.Name, Run: func() error { return c.Check(d) }}
	}
	return out
}
