package ddblocal

import (
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Table status transitions. A table passes through CREATING after
// CreateTable, UPDATING after UpdateTable and DELETING after DeleteTable,
// each for Options.TableDelay (0 by default: the table is ACTIVE, or gone,
// at once, while the operation still answers CREATING, UPDATING or
// DELETING as DynamoDB does). While it is CREATING or DELETING, reads and
// writes answer ResourceNotFoundException; while it is CREATING or
// UPDATING, UpdateTable and DeleteTable answer ResourceInUseException; a
// global secondary index being created is CREATING, and reading it is a
// ValidationException. Times come from Options.Now.

// lifecycle is a table's transition in progress (zero: ACTIVE); the
// table's mu guards it.
type lifecycle struct {
	status   string          // "CREATING" or "UPDATING"
	until    time.Time       // when the table is ACTIVE again
	creating map[string]bool // global secondary indexes being created
}

// ghost is a deleted table while it is DELETING: what DescribeTable and
// ListTables still show of it.
type ghost struct {
	desc  map[string]any
	until time.Time
}

// startTransition puts t in status (CREATING or UPDATING) for the table
// delay, with the named indexes CREATING; the caller holds t.mu for
// writing (or owns t alone).
func (s *Server) startTransition(t *table, status string, creating ...string) {
	if s.opts.TableDelay <= 0 {
		return
	}
	t.life = lifecycle{status: status, until: s.now().Add(s.opts.TableDelay)}
	for _, n := range creating {
		if t.life.creating == nil {
			t.life.creating = map[string]bool{}
		}
		t.life.creating[n] = true
	}
	if status == "CREATING" {
		t.readyAt.Store(t.life.until.UnixNano())
	}
}

// status returns t's TableStatus now; the caller holds t.mu.
func (s *Server) status(t *table) string {
	if t.life.status == "" || !s.now().Before(t.life.until) {
		return "ACTIVE"
	}
	return t.life.status
}

// indexStatus returns the IndexStatus of t's global index name now; the
// caller holds t.mu.
func (s *Server) indexStatus(t *table, name string) string {
	if s.status(t) != "ACTIVE" && (t.life.status == "CREATING" || t.life.creating[name]) {
		return "CREATING"
	}
	return "ACTIVE"
}

// creatingNow reports whether t is still CREATING (data operations do not
// see it yet); it reads no lock.
func (s *Server) creatingNow(t *table) bool {
	ra := t.readyAt.Load()
	return ra != 0 && s.now().UnixNano() < ra
}

// inUse refuses to change t while it is CREATING or UPDATING; the caller
// holds t.mu.
func (s *Server) inUse(t *table) error {
	switch s.status(t) {
	case "CREATING":
		return apierr.New("ResourceInUseException", 400, "Attempt to change a resource which is still in use: Table is being created: %s", t.name)
	case "UPDATING":
		return apierr.New("ResourceInUseException", 400, "Attempt to change a resource which is still in use: Table is being updated: %s", t.name)
	}
	return nil
}

// readableIndex refuses to read a global index being created.
func (s *Server) readableIndex(t *table, ix *indexDef) error {
	if ix.Global && s.indexStatus(t, ix.IndexName) == "CREATING" {
		return apierr.Validation("Cannot read from backfilling global secondary index: %s", ix.IndexName)
	}
	return nil
}

// addGhost keeps a deleted table's description for the table delay; the
// caller holds catMu for writing.
func (s *Server) addGhost(name string, desc map[string]any) {
	if s.opts.TableDelay <= 0 {
		return
	}
	if s.ghosts == nil {
		s.ghosts = map[string]ghost{}
	}
	s.ghosts[name] = ghost{desc: desc, until: s.now().Add(s.opts.TableDelay)}
}

// ghostOf returns the description of name while it is DELETING; the
// caller holds catMu (expired ghosts are dropped by the writers).
func (s *Server) ghostOf(name string) (map[string]any, bool) {
	g, ok := s.ghosts[name]
	if !ok || !s.now().Before(g.until) {
		return nil, false
	}
	return g.desc, true
}

// dropGhosts forgets the deleted tables whose DELETING is over; the
// caller holds catMu for writing.
func (s *Server) dropGhosts() {
	for n, g := range s.ghosts {
		if !s.now().Before(g.until) {
			delete(s.ghosts, n)
		}
	}
}
