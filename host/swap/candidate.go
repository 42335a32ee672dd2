package swap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
)

// Steps of the pipeline, as CandidateError.Step names them.
const (
	StepPin     = "pin"
	StepLoad    = "load"
	StepCompat  = "compatibility"
	StepSmoke   = "smoke test"
	StepUnknown = "unknown"
)

// Errors matched (errors.Is) by a *CandidateError, one per step.
var (
	// ErrPinMismatch: the module's SHA-256 is not one of Config.Pins.
	ErrPinMismatch = errors.New("module not pinned")
	// ErrLoad: the module does not compile or does not follow the ABI (the
	// error also matches host/plugin's ErrABIVersion, ErrInvalidModule, ...).
	ErrLoad = errors.New("module does not load")
	// ErrIncompatible: describe does not match the configuration.
	ErrIncompatible = errors.New("module incompatible with the configuration")
	// ErrSmokeTest: self_test failed or trapped, or the fixture's rows differ.
	ErrSmokeTest = errors.New("smoke test failed")
)

// Candidate is a module offered to a Swapper.
type Candidate struct {
	Wasm   []byte // the module's bytes
	Origin string // where it came from, for logs and Info
	sha    string
}

// SHA256 returns the hex SHA-256 of the module.
func (c *Candidate) SHA256() string {
	if c.sha == "" {
		sum := sha256.Sum256(c.Wasm)
		c.sha = hex.EncodeToString(sum[:])
	}
	return c.sha
}

// CandidateError is a candidate refused by the pipeline: the step that
// refused it and why. It matches the step's sentinel error and unwraps to
// the cause.
type CandidateError struct {
	Origin string // Candidate.Origin
	SHA256 string // the module's digest
	Plugin string // "name@version" when the module loaded, else ""
	Step   string // StepPin, StepLoad, StepCompat, StepSmoke or StepSource
	Err    error  // the cause
}

// Error implements error.
func (e *CandidateError) Error() string {
	who := e.Plugin
	switch {
	case who != "":
	case e.SHA256 != "":
		who = "sha256:" + short(e.SHA256)
	default: // refused before it was read
		who = "module"
	}
	return fmt.Sprintf("plugin candidate %s from %s refused at %s: %v", who, e.Origin, e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *CandidateError) Unwrap() error { return e.Err }

// Is matches the sentinel of the step.
func (e *CandidateError) Is(target error) bool {
	switch e.Step {
	case StepPin:
		return target == ErrPinMismatch
	case StepLoad:
		return target == ErrLoad
	case StepCompat:
		return target == ErrIncompatible
	case StepSmoke:
		return target == ErrSmokeTest
	}
	return false
}

// Expect is what a version must describe to replace another.
type Expect struct {
	Name         string           // the plugin's name ("" accepts any)
	Sources      []abi.SourceDesc // compared by name, stream and mode, in order (event types may change)
	Capabilities []abi.Capability // each must be listed
	// StreamComposites maps a stream to its configured composite fields: a
	// version declaring (ABI 1.2) a composite for a source of one of these
	// streams must declare exactly these fields. Kept when the rest of
	// the expectation is taken from the first version.
	StreamComposites map[string][]string
}

// IsZero reports whether e expects nothing.
func (e Expect) IsZero() bool {
	return e.Name == "" && len(e.Sources) == 0 && len(e.Capabilities) == 0
}

// ExpectOf returns what a replacement of a version describing d must
// describe: the same name and sources, the required capabilities, and
// effects if d has them (the outbox depends on them).
func ExpectOf(d abi.Description) Expect {
	e := Expect{Name: d.Name, Sources: append([]abi.SourceDesc(nil), d.Sources...),
		Capabilities: []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve}}
	if d.Has(abi.CapEffects) {
		e.Capabilities = append(e.Capabilities, abi.CapEffects)
	}
	return e
}

// Check reports how d fails the expectation (nil when it does not).
func (e Expect) Check(d abi.Description) error {
	var probs []string
	if e.Name != "" && d.Name != e.Name {
		probs = append(probs, fmt.Sprintf("name %q is not %q", d.Name, e.Name))
	}
	if len(e.Sources) > 0 {
		if len(d.Sources) != len(e.Sources) {
			probs = append(probs, fmt.Sprintf("%d sources (%s), want %d (%s)", len(d.Sources), sourcesText(d.Sources), len(e.Sources), sourcesText(e.Sources)))
		} else {
			for i, want := range e.Sources {
				got := d.Sources[i]
				if got.Name != want.Name || got.Stream != want.Stream || mode(got.Mode) != mode(want.Mode) {
					probs = append(probs, fmt.Sprintf("source %d is %s, want %s", i, sourcesText(d.Sources[i:i+1]), sourcesText(e.Sources[i:i+1])))
				}
			}
		}
	}
	for _, c := range d.Composites {
		for _, src := range d.Sources {
			if want, ok := e.StreamComposites[src.Stream]; ok && src.Name == c.Source && !slices.Equal(c.Fields, want) {
				probs = append(probs, fmt.Sprintf("source %q splits stream ids of %s into %q, but the stream's composite is %q", c.Source, src.Stream, c.Fields, want))
			}
		}
	}
	for _, c := range e.Capabilities {
		if !d.Has(c) {
			probs = append(probs, fmt.Sprintf("capability %q is missing", c))
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return errors.New(strings.Join(probs, "; "))
}

func mode(m string) string {
	if m == "" {
		return abi.ModeFold
	}
	return m
}

func sourcesText(ss []abi.SourceDesc) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("%s<-%s/%s", s.Name, s.Stream, mode(s.Mode))
	}
	return strings.Join(parts, ", ")
}

// CheckPin reports (ErrPinMismatch) a module digest that is not one of
// pins; no pins accept every module. Digests compare case-insensitively.
func CheckPin(sha string, pins []string) error {
	if len(pins) == 0 || slices.ContainsFunc(pins, func(p string) bool { return strings.EqualFold(p, sha) }) {
		return nil
	}
	return fmt.Errorf("%w: sha256 %s is not among the %d pinned digests", ErrPinMismatch, sha, len(pins))
}

// prepareHook, when set (by tests), runs as a candidate enters prepare.
var prepareHook atomic.Pointer[func(Candidate)]

// prepare runs the pipeline on a candidate and returns the loaded version,
// not yet current. skipCompat is set for the first version when nothing is
// expected yet. It holds no lock: Close ends it through s.life.
func (s *Swapper) prepare(ctx context.Context, c Candidate, skipCompat bool) (*version, error) {
	if f := prepareHook.Load(); f != nil {
		(*f)(c)
	}
	sha := c.SHA256()
	refuse := func(step, who string, err error) error {
		return &CandidateError{Origin: c.Origin, SHA256: sha, Plugin: who, Step: step, Err: err}
	}
	if err := CheckPin(sha, s.cfg.Pins); err != nil {
		return nil, refuse(StepPin, "", err)
	}
	p, _, err := transport.Load(ctx, c.Wasm, s.cfg.Plugin)
	if err != nil {
		return nil, refuse(StepLoad, "", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = p.Close(context.WithoutCancel(ctx))
		}
	}()
	d := p.Describe()
	if !skipCompat {
		if err := s.expect.Check(d); err != nil {
			return nil, refuse(StepCompat, p.Name(), err)
		}
	}
	fx := s.cfg.Fixture
	if f := s.cfg.FixtureFiles; f != nil {
		if fx, err = LoadFixture(f.Events, f.Rows); err != nil {
			return nil, refuse(StepSmoke, p.Name(), fmt.Errorf("reading the fixture: %w", err))
		}
	}
	if err := Smoke(ctx, p, c.Wasm, fx); err != nil {
		return nil, refuse(StepSmoke, p.Name(), err)
	}
	ok = true
	return &version{l: p, desc: d, info: Info{Name: d.Name, Version: d.Version, Plugin: p.Name(), SHA256: sha, Origin: c.Origin}}, nil
}

// Smoke runs a loaded plugin's smoke test: its self_test export when the
// module (wasm, its bytes) has one, else the fixture (when not nil). The
// error lists what failed.
func Smoke(ctx context.Context, p transport.Plugin, wasm []byte, fx *Fixture) error {
	ran, err := SelfTest(ctx, p, wasm)
	if ran || err != nil {
		return err
	}
	if fx == nil {
		return nil
	}
	diffs, err := fx.Run(ctx, p)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("fixture %s: %s", fx.Name, strings.Join(diffs, "; "))
	}
	return nil
}

// SelfTest calls the self_test export of a plugin loaded from wasm, if the
// module exports one (ran false when it does not). A trap, a guest error or
// a reported failure is an error.
func SelfTest(ctx context.Context, p transport.Plugin, wasm []byte) (ran bool, err error) {
	has, err := exportsFunction(wasm, abi.CapSelfTest)
	if err != nil {
		return false, fmt.Errorf("self_test: reading the exports: %w", err)
	}
	if !has {
		return false, nil
	}
	out, err := p.Call(ctx, abi.CapSelfTest, nil)
	var ce *logic.CallError
	if errors.As(err, &ce) {
		return true, err // it names the plugin and self_test
	}
	if err != nil {
		return true, fmt.Errorf("self_test: %w", err)
	}
	resp, err := abi.DecodeSelfTestResponse(out)
	if err != nil {
		return true, fmt.Errorf("self_test: malformed result: %w", err)
	}
	if len(resp.Failures) > 0 {
		failures := "failures"
		if len(resp.Failures) == 1 {
			failures = "failure"
		}
		return true, fmt.Errorf("self_test: %d %s: %s", len(resp.Failures), failures, strings.Join(resp.Failures, "; "))
	}
	return true, nil
}
