package ddblocal

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

func init() {
	register("UpdateTimeToLive", updateTimeToLive)
	register("DescribeTimeToLive", describeTimeToLive)
}

// ttlMaxAge: DynamoDB leaves alone items whose TTL value is more than five
// years in the past.
const ttlMaxAge = 5 * 365 * 24 * time.Hour

type ttlSpec struct {
	Enabled       bool
	AttributeName string
}

type updateTTLInput struct {
	TableName               string
	TimeToLiveSpecification *ttlSpec
}

func updateTimeToLive(s *Server, ctx context.Context, body []byte) (any, error) {
	var in updateTTLInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	c.checkTableName("tableName", in.TableName)
	if in.TimeToLiveSpecification == nil {
		c.add("Value null at 'timeToLiveSpecification' failed to satisfy constraint: Member must not be null")
	} else if in.TimeToLiveSpecification.AttributeName == "" {
		c.add("Value null at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must not be null")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	t, err := s.lookupControl(in.TableName)
	if err != nil {
		return nil, err
	}
	t.lockMeta()
	defer t.unlockMeta()
	if t.deleted {
		return nil, errGone
	}
	sp := in.TimeToLiveSpecification
	if sp.Enabled && t.meta.TTLEnabled {
		return nil, apierr.Validation("TimeToLive is already enabled")
	}
	if !sp.Enabled && !t.meta.TTLEnabled {
		return nil, apierr.Validation("TimeToLive is already disabled")
	}
	if !sp.Enabled && sp.AttributeName != t.meta.TTLAttr {
		return nil, apierr.Validation("TimeToLive attribute name does not match the enabled attribute name: %s", t.meta.TTLAttr)
	}
	// DynamoDB allows one TTL change per table per hour.
	now := s.now()
	if !t.meta.TTLChangedAt.IsZero() && now.Sub(t.meta.TTLChangedAt) < time.Hour {
		return nil, apierr.Validation("Time to live has been modified multiple times within a fixed interval")
	}
	old := t.meta
	t.meta.TTLEnabled = sp.Enabled
	t.meta.TTLAttr = sp.AttributeName
	t.meta.TTLChangedAt = now
	if err := s.saveMeta(t); err != nil {
		t.meta = old
		return nil, err
	}
	return map[string]any{"TimeToLiveSpecification": sp}, nil
}

func describeTimeToLive(s *Server, ctx context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	t, err := s.lookupControl(in.TableName)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, errGone
	}
	d := map[string]any{"TimeToLiveStatus": "DISABLED"}
	if t.meta.TTLEnabled {
		d = map[string]any{"TimeToLiveStatus": "ENABLED", "AttributeName": t.meta.TTLAttr}
	}
	return map[string]any{"TimeToLiveDescription": d}, nil
}

// expired reports whether a TTL attribute value is in the past (and not
// more than five years in the past).
func expired(v abi.Value, now time.Time) bool {
	if v.Kind != abi.KindN {
		return false
	}
	f, _, err := big.ParseFloat(v.Str, 10, 128, big.ToNearestEven)
	if err != nil {
		return false
	}
	sec, _ := f.Float64()
	n := float64(now.UnixNano()) / 1e9
	return sec < n && sec >= n-ttlMaxAge.Seconds()
}

// SweepTTL deletes now every item whose TTL attribute is in the past (per
// Options.Now) and returns how many it deleted. Each deletion is recorded in
// the table's stream as a REMOVE by the DynamoDB service principal.
func (s *Server) SweepTTL(ctx context.Context) (int, error) {
	s.catMu.RLock()
	tables := make([]*table, 0, len(s.tables))
	for _, t := range s.tables {
		tables = append(tables, t)
	}
	s.catMu.RUnlock()
	total := 0
	for _, t := range tables {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("ddblocal: sweep: %w", err)
		}
		n, err := s.sweepTable(t)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (s *Server) sweepTable(t *table) (int, error) {
	now := s.now()
	// Find candidates under the read lock, so a sweep that deletes nothing
	// never blocks writers; re-check them under the write lock.
	t.mu.RLock()
	var keys []abi.Item
	if !t.deleted && t.meta.TTLEnabled {
		for _, p := range t.parts {
			for _, it := range p.rows {
				if expired(it[t.meta.TTLAttr], now) {
					keys = append(keys, t.keyOf(it))
				}
			}
		}
	}
	t.mu.RUnlock()
	if len(keys) == 0 {
		return 0, nil
	}
	refs := make([]itemRef, len(keys))
	for i, k := range keys {
		refs[i] = itemRef{t, k}
	}
	n := 0
	err := s.write([]*table{t}, refs, ttlIdentity, func() ([]change, error) {
		if t.deleted || !t.meta.TTLEnabled {
			return nil, nil
		}
		var cs []change
		for _, k := range keys {
			if it := t.get(k); it != nil && expired(it[t.meta.TTLAttr], now) {
				cs = append(cs, change{t: t, key: k, old: it})
			}
		}
		n = len(cs)
		return cs, nil
	}, nil)
	if err != nil {
		return 0, fmt.Errorf("ddblocal: sweep %s: %w", t.name, err)
	}
	return n, nil
}

func (s *Server) ttlLoop(ctx context.Context, every time.Duration) {
	defer s.wg.Done()
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			if n, err := s.SweepTTL(ctx); err != nil {
				s.log.Warn("ddblocal: TTL sweep", "err", err)
			} else if n > 0 {
				s.log.Debug("ddblocal: TTL sweep", "deleted", n)
			}
		}
	}
}
