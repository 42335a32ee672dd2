package quarantine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// Processor runs a batch of records; *host.Host is one.
type Processor interface {
	ProcessBatch(ctx context.Context, records []host.Record) (*host.Result, error)
}

// Replayed is what Replay did with one entry.
type Replayed struct {
	Entry   Entry
	OK      bool   // the record went through every projection; the entry is deleted
	Deleted bool   // the entry was deleted
	Why     string // why it failed again (empty when OK)
}

// Replay runs each entry's record through p, as a batch of one, with the
// plugins serving now, and deletes the entry from t (a Table, or a
// FileStore, which marks it replayed) only when the record succeeded (no
// row, key or decode failure). Entries that fail again stay, with the
// reason in their Replayed. The error is set only when t cannot be
// written; it stops the replay.
func Replay(ctx context.Context, p Processor, t Store, entries []Entry) ([]Replayed, error) {
	var out []Replayed
	for _, e := range entries {
		r := Replayed{Entry: e}
		res, err := p.ProcessBatch(ctx, []host.Record{e.Record})
		switch {
		case err != nil:
			r.Why = err.Error()
		case len(res.Failed()) > 0:
			r.Why = failureOf(res)
		default:
			r.OK = true
		}
		if r.OK {
			if err := t.Delete(ctx, e.ID); err != nil && !errors.Is(err, ErrNotFound) {
				out = append(out, r)
				return out, fmt.Errorf("entry %s replayed but not deleted (replaying it again is harmless): %w", e.ID, err)
			}
			r.Deleted = true
		}
		out = append(out, r)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// failureOf names what failed in res.
func failureOf(res *host.Result) string {
	var why []string
	for _, f := range res.DecodeFailures {
		if !f.Skipped {
			why = append(why, "decode: "+f.Err.Error())
		}
	}
	for name, pr := range res.Projections {
		for i := range pr.Rows {
			row := &pr.Rows[i]
			if row.Failed() {
				msg := row.Err.Error()
				if re := (*apply.RowError)(nil); !errors.As(row.Err, &re) || re.Projection != name {
					msg = "projection " + name + ": " + msg // the engine's row error names it already
				}
				why = append(why, msg)
				continue
			}
			for _, in := range row.Instances {
				if in.Err != nil {
					why = append(why, fmt.Sprintf("projection %s: stream instance %s#%s: %v", name, in.Source, in.StreamID, in.Err))
				}
			}
		}
		for _, kf := range pr.KeyFailures {
			why = append(why, fmt.Sprintf("projection %s: key: %v", name, kf.Err))
		}
	}
	if len(why) == 0 {
		return "the record was reported failed"
	}
	return strings.Join(why, "; ")
}
