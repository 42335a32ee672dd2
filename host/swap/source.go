package swap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Source is where new versions of a plugin appear: a watched directory
// (DirSource) or a versioned S3 object (S3Source).
type Source interface {
	// Check returns the module when it changed since the last Check (the
	// first Check returns the module present), nil when it did not or when
	// there is none. A module returned once is not returned again until it
	// changes, whether or not it was accepted.
	Check(ctx context.Context) (*Candidate, error)
	// Wait blocks until the module may have changed (a file event, the
	// polling interval) or ctx ends.
	Wait(ctx context.Context) error
	// Close releases the source.
	Close() error
}

// ErrNoModule is returned by Open when the source holds no module yet.
var ErrNoModule = errors.New("swap: the source holds no module")

// Open checks src for its module and starts a Swapper serving it.
func Open(ctx context.Context, src Source, cfg Config) (*Swapper, error) {
	return openWith(ctx, src, cfg, New)
}

// openWith checks src for its module and starts a Swapper on it with start.
func openWith(ctx context.Context, src Source, cfg Config, start func(context.Context, Candidate, Config) (*Swapper, error)) (*Swapper, error) {
	c, err := src.Check(ctx)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, ErrNoModule
	}
	return start(ctx, *c, cfg)
}

// CheckOnce checks src once and offers a changed module to s: for
// cmd/lambda, between two invocations (never during one). It reports the
// version serving afterwards and whether it changed; a refused module is an
// error (a *CandidateError) and leaves the current version serving. A
// module file the source itself refused (StepSource) is logged, counted
// and kept in Events like a module the pipeline refused.
func CheckOnce(ctx context.Context, s *Swapper, src Source) (Info, bool, error) {
	c, err := src.Check(ctx)
	var ce *CandidateError
	if errors.As(err, &ce) {
		s.refused(err)
		s.cfg.Logger.Error("plugin candidate refused; the current version keeps serving",
			"current", s.Current().Plugin, "origin", ce.Origin, "err", err)
		return s.Current(), false, err
	}
	if err != nil {
		return s.Current(), false, fmt.Errorf("swap: checking the plugin source: %w", err)
	}
	if c == nil {
		return s.Current(), false, nil
	}
	return s.Offer(ctx, *c)
}

// Watch checks src whenever it may have changed and offers every changed
// module to s, until ctx ends (it then returns nil). Refused modules and
// source errors are logged (and counted by s) and watching goes on.
func Watch(ctx context.Context, s *Swapper, src Source) error {
	for {
		if _, _, err := CheckOnce(ctx, s, src); err != nil && ctx.Err() == nil {
			var ce *CandidateError
			if !errors.As(err, &ce) { // refusals are logged by Offer
				s.cfg.Logger.Warn("plugin source", "err", err)
			}
		}
		if err := src.Wait(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// archive keeps every accepted module in Config.Archive, one file per
// module, for RollbackDir: "<unix nanoseconds>-<sha256 prefix>.wasm", named
// for its latest acceptance (a module accepted again is renamed, not
// copied).
func (s *Swapper) archive(c Candidate, info Info) {
	if s.cfg.Archive == "" {
		return
	}
	name := filepath.Join(s.cfg.Archive, fmt.Sprintf("%019d-%s.wasm", info.Since.UnixNano(), short(info.SHA256)))
	first := info.Since
	if t, ok := firstAccepted(s.cfg.Archive, info.SHA256); ok && t.Before(first) {
		first = t
	}
	meta, _ := json.Marshal(archiveMeta{Plugin: info.Plugin, SHA256: info.SHA256, FirstAccepted: first})
	if old, _ := filepath.Glob(filepath.Join(s.cfg.Archive, "*-"+short(info.SHA256)+".wasm")); len(old) > 0 {
		// The new name's metadata is written first, so a host reading the
		// archive meanwhile (firstAccepted) never sees the module without it.
		err := errors.Join(writeAtomic(name+metaSuffix, meta), os.Rename(old[0], name))
		for _, extra := range old[1:] { // archives written before there was one per module
			err = errors.Join(err, os.Remove(extra))
			_ = os.Remove(extra + metaSuffix)
		}
		if old[0] != name {
			_ = os.Remove(old[0] + metaSuffix)
		}
		if err != nil {
			s.cfg.Logger.Warn("archiving the plugin version", "plugin", info.Plugin, "err", err)
		}
		return
	}
	if err := errors.Join(writeAtomic(name, c.Wasm), writeAtomic(name+metaSuffix, meta)); err != nil {
		s.cfg.Logger.Warn("archiving the plugin version", "plugin", info.Plugin, "err", err)
	}
}

// metaSuffix names the file beside an archived module that says which
// version it is.
const metaSuffix = ".json"

// archiveMeta is what the archive keeps beside a module.
type archiveMeta struct {
	Plugin string `json:"plugin"` // name@version
	SHA256 string `json:"sha256"`
	// FirstAccepted is when the module was first accepted, by any host
	// sharing the archive; renaming the module for a later acceptance
	// keeps it. It orders modules by age: putting back one accepted before
	// the one serving is a rollback, one accepted after it (another
	// worker's upgrade) is not. Zero in archives written before it was
	// recorded: the file name's time stands in.
	FirstAccepted time.Time `json:"firstAccepted,omitzero"`
}

// firstAccepted returns when the archive in dir says the module with
// digest sha was first accepted (ok false: it is not archived): the
// earliest FirstAccepted of its files, or for a file without one, the
// time in its name (its latest acceptance).
func firstAccepted(dir, sha string) (first time.Time, ok bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*-"+short(sha)+".wasm"))
	for _, f := range files {
		var meta archiveMeta
		var t time.Time
		if mb, err := os.ReadFile(f + metaSuffix); err == nil && json.Unmarshal(mb, &meta) == nil && meta.SHA256 == sha {
			t = meta.FirstAccepted
		}
		if t.IsZero() {
			stamp, _, _ := strings.Cut(filepath.Base(f), "-")
			ns, err := strconv.ParseInt(stamp, 10, 64)
			if err != nil {
				continue
			}
			t = time.Unix(0, ns)
		}
		if !ok || t.Before(first) {
			first, ok = t, true
		}
	}
	return first, ok
}

// writeAtomic writes b to path through a temporary file renamed into place,
// so a watcher never sees a partial module.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// RollbackDir puts back the newest archived module (Config.Archive) that
// differs from the module at path, through a rename, so the Swapper
// watching path's directory swaps it in. It returns the archived file used.
func RollbackDir(archive, path string) (string, error) {
	r, err := RollbackFile(archive, path)
	return r.File, err
}

// Restored is what RollbackFile put back.
type Restored struct {
	File   string // the archived module used
	Plugin string // its name@version, as the host recorded it when it accepted it ("" for an archive written before it was recorded)
	SHA256 string // its digest
	From   string // the digest of the module it replaced
}

// RollbackFile is RollbackDir, saying which version it put back.
func RollbackFile(archive, path string) (Restored, error) {
	cur, err := os.ReadFile(path)
	if err != nil {
		return Restored{}, fmt.Errorf("rollback: %w", err)
	}
	curSHA := (&Candidate{Wasm: cur}).SHA256()
	names, err := archived(archive)
	if err != nil {
		return Restored{}, fmt.Errorf("rollback: %w", err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, "-"+short(curSHA)+".wasm") {
			continue
		}
		file := filepath.Join(archive, n)
		b, err := os.ReadFile(file)
		if err != nil {
			return Restored{}, fmt.Errorf("rollback: %w", err)
		}
		if err := writeAtomic(path, b); err != nil {
			return Restored{}, fmt.Errorf("rollback: %w", err)
		}
		r := Restored{File: file, SHA256: (&Candidate{Wasm: b}).SHA256(), From: curSHA}
		var meta archiveMeta
		if mb, err := os.ReadFile(file + metaSuffix); err == nil && json.Unmarshal(mb, &meta) == nil && meta.SHA256 == r.SHA256 {
			r.Plugin = meta.Plugin
		}
		return r, nil
	}
	return Restored{}, fmt.Errorf("rollback: %w in %s", ErrNoHistory, archive)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
