package host

import (
	"regexp"
)

// QuarantineKeyAttribute is the quarantine table's only key attribute, a
// string (the entry's id; see host/quarantine).
const QuarantineKeyAttribute = "id"

// QuarantineConfig is the "quarantine" section: the DynamoDB table that
// keeps the stream records a reader gave up on, for `host quarantine list`
// and `host quarantine replay`.
//
//	"quarantine": {"table": "orders-quarantine"}
type QuarantineConfig struct {
	// Table is the quarantine table's name (required). `host tables
	// create` creates it, keyed by QuarantineKeyAttribute.
	Table string `json:"table"`
}

// tableNameRE is what DynamoDB accepts as a table name.
var tableNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// validateQuarantine checks the quarantine section: a valid table name
// that is neither the event table nor a read model's table.
func (c *Config) validateQuarantine(ps *problems) {
	q := c.Quarantine
	if q == nil {
		return
	}
	switch {
	case q.Table == "":
		ps.add("quarantine.table", "is required: name the table that keeps the records given up (or remove the quarantine section)")
	case !tableNameRE.MatchString(q.Table):
		ps.add("quarantine.table", "%q is not a DynamoDB table name: use 3 to 255 letters, digits, '_', '-' or '.'", q.Table)
	case q.Table == c.EventStore.Table:
		ps.add("quarantine.table", "%q is the event table: use a table of its own", q.Table)
	default:
		for _, p := range c.Projections {
			if p.Table == q.Table {
				ps.add("quarantine.table", "%q is the table of projection %q: use a table of its own", q.Table, p.Name)
			}
		}
	}
}

// quarantineTable returns the table spec `host tables create` ensures for
// the quarantine section, if any.
func (c *Config) quarantineTable() (string, bool) {
	if c.Quarantine == nil || c.Quarantine.Table == "" {
		return "", false
	}
	return c.Quarantine.Table, true
}
