package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrTablesMissing is matched (errors.Is) by the error of CheckTables when a
// table the configuration names does not exist, or the event table has no
// stream.
var ErrTablesMissing = errors.New("tables missing")

// TableProblem is one table CheckTables found missing.
type TableProblem struct {
	Table   string // the table's name
	Role    string // as TableReport.Role: "event store", "projection NAME", ...
	Problem string // "does not exist" or "has no stream"
}

// TablesError is the error of CheckTables: the tables missing. It matches
// ErrTablesMissing.
type TablesError struct {
	Problems []TableProblem
}

// Error lists each table with its role and what is wrong.
func (e *TablesError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("table %s (%s) %s", p.Table, p.Role, p.Problem)
	}
	return strings.Join(parts, "; ") + ": create the configuration's tables with `host tables create` (it creates what is missing and enables the event table's stream, and leaves the rest as it is)"
}

// Is matches ErrTablesMissing.
func (e *TablesError) Is(target error) bool { return target == ErrTablesMissing }

// CheckTables checks, changing nothing, that every table the configuration
// names exists (those CreateTables creates: the event table with its
// stream, unless host run reads a Kinesis data stream (sidecar.kinesis), each read model and outbox, the quarantine and on-failure tables,
// the sidecar's lease table). The tables missing are a *TablesError; any
// other failure (the endpoint unreachable, a table keyed otherwise than
// the configuration says) is returned as it is, and the check stops there.
func (h *Host) CheckTables(ctx context.Context) error {
	var missing []TableProblem
	done := map[string]bool{}
	for _, s := range h.cfg.tableSpecs() {
		if done[s.spec.Name] {
			continue
		}
		done[s.spec.Name] = true
		spec := s.spec
		if sc := h.cfg.Sidecar; sc != nil && sc.Kinesis != nil && spec.Name == h.cfg.EventStore.Table {
			spec.Stream = false // host run reads the Kinesis data stream: the table's own stream is not needed
		}
		c, err := h.db.CheckTable(ctx, spec)
		if err != nil {
			return fmt.Errorf("checking the %s table %s: %w", s.role, s.spec.Name, err)
		}
		if c.Problem != "" {
			missing = append(missing, TableProblem{Table: s.spec.Name, Role: s.role, Problem: c.Problem})
		}
	}
	if len(missing) > 0 {
		return &TablesError{Problems: missing}
	}
	return nil
}

// onFailureTables returns the DynamoDB tables the failure policies send
// given-up records to, each once.
func (s *SidecarConfig) onFailureTables() []string {
	var out []string
	add := func(f FailurePolicyConfig) {
		if o := f.OnFailure; o != nil && o.Table != "" && !slices.Contains(out, o.Table) {
			out = append(out, o.Table)
		}
	}
	add(s.Failure)
	names := make([]string, 0, len(s.Projections))
	for n := range s.Projections {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		add(s.Projections[n])
	}
	return out
}
