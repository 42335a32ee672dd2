package swap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNoAccepted is matched by the error of NewOrArchived when the module
// offered at start is refused and no archived version passes either.
var ErrNoAccepted = errors.New("no accepted plugin version to serve instead")

// OpenOrArchived is Open with NewOrArchived's fallback, which also serves
// a module file the source refused unread (StepSource).
func OpenOrArchived(ctx context.Context, src Source, cfg Config) (*Swapper, error) {
	s, err := openWith(ctx, src, cfg, NewOrArchived)
	var ce *CandidateError
	if errors.As(err, &ce) && ce.Step == StepSource {
		return archivedInstead(ctx, err, "", ce.Origin, cfg)
	}
	return s, err
}

// NewOrArchived is New that never lets a broken module replace a working
// one across restarts: when first is refused by the pipeline and
// cfg.Archive holds accepted modules, the newest archived module that
// passes serves instead. The refusal and the fallback are logged (naming
// `host plugin rollback`), counted and kept in Events; the refused module
// stays where it is, and a changed module is offered again as usual. With
// no archived module that passes, the error is first's refusal, matching
// ErrNoAccepted too, and explains what to do.
func NewOrArchived(ctx context.Context, first Candidate, cfg Config) (*Swapper, error) {
	s, err := New(ctx, first, cfg)
	var ce *CandidateError
	if err == nil || !errors.As(err, &ce) {
		return s, err
	}
	return archivedInstead(ctx, err, first.SHA256(), first.Origin, cfg)
}

// archivedInstead starts a Swapper on the newest archived module that
// passes, the module at origin (digest sha, "" when it was not read)
// having been refused with err.
func archivedInstead(ctx context.Context, err error, sha, origin string, cfg Config) (*Swapper, error) {
	names, lerr := archived(cfg.Archive)
	if cfg.Archive == "" || lerr != nil || len(names) == 0 {
		why := "hotSwap.archive is not set, so no accepted version is kept"
		switch {
		case lerr != nil:
			why = fmt.Sprintf("the archive %s cannot be read (%v)", cfg.Archive, lerr)
		case cfg.Archive != "":
			why = fmt.Sprintf("the archive %s holds no accepted version yet", cfg.Archive)
		}
		return nil, fmt.Errorf("%w; %w: %s; fix the module at %s, or put back an accepted one (`host plugin rollback`)", err, ErrNoAccepted, why, origin)
	}
	var tried []error
	for _, n := range names {
		path := filepath.Join(cfg.Archive, n)
		if sha != "" && strings.HasSuffix(n, "-"+short(sha)+".wasm") {
			continue // the module refused
		}
		b, rerr := os.ReadFile(path)
		if rerr != nil {
			tried = append(tried, rerr)
			continue
		}
		s, aerr := New(ctx, Candidate{Wasm: b, Origin: path}, cfg)
		if aerr != nil {
			tried = append(tried, aerr)
			continue
		}
		s.refused(err)
		s.hist.fallbacks.Add(1)
		cur := s.Current()
		s.hist.add(Event{Result: ResultFallback, Plugin: cur.Plugin, SHA256: cur.SHA256, Origin: path, Reason: err.Error()})
		s.cfg.Logger.Error("plugin module refused at start; serving the last accepted version from the archive instead",
			"refused", origin, "err", err.Error(), "serving", cur.Plugin, "archived", path,
			"fix", fmt.Sprintf("write a fixed module to %s, or put the accepted one back with `host plugin rollback --file %s --archive %s`", origin, origin, cfg.Archive))
		return s, nil
	}
	return nil, fmt.Errorf("%w; %w: no archived version in %s passes either (%w); fix the module at %s", err, ErrNoAccepted, cfg.Archive, errors.Join(tried...), origin)
}

// archived lists the archive's modules, newest acceptance first.
func archived(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".wasm") {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names, nil
}

// ArchivedModules lists the paths of the modules the archive dir holds,
// newest acceptance first: the order in which a refused module at start
// falls back on them (NewOrArchived). None for an empty dir or one that
// does not exist yet.
func ArchivedModules(dir string) ([]string, error) {
	names, err := archived(dir)
	for i, n := range names {
		names[i] = filepath.Join(dir, n)
	}
	return names, err
}
