package host

import "strings"

// The tags `host tables create` puts on every read-model table: the table
// is derived state, rebuilt from the event store by `host backfill` and
// checked by `host verify`, so backups and readers can tell it from the
// source of truth.
const (
	// TagDerived is "true" on a read-model table.
	TagDerived = "dynafold:derived"
	// TagProjection names the projections writing the table (space
	// separated when several share it).
	TagProjection = "dynafold:projection"
	// TagOutbox is "pending-effects" on a read-model table that also holds
	// its projection's outbox (the default layout): those items are not
	// derived, a rebuild never recreates them.
	TagOutbox = "dynafold:outbox"
)

// DerivedTags returns the tags of a read-model table: TagDerived,
// TagProjection with every projection writing it, and TagOutbox when an
// outbox lives in it. Nil when no projection writes the table.
func (c *Config) DerivedTags(table string) map[string]string { return c.derivedTags(table) }

func (c *Config) derivedTags(table string) map[string]string {
	var names []string
	outbox := false
	for _, p := range c.Projections {
		if p.Table != table {
			continue
		}
		names = append(names, p.Name)
		outbox = outbox || (p.Outbox != nil && p.Outbox.Table == "")
	}
	if len(names) == 0 {
		return nil
	}
	tags := map[string]string{TagDerived: "true", TagProjection: strings.Join(names, " ")}
	if outbox {
		tags[TagOutbox] = "pending-effects"
	}
	return tags
}
