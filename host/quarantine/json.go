package quarantine

import (
	"encoding/json"
	"time"

	"github.com/dynafold/dynafold/host"
)

// entryJSON is an entry's JSON form: an SQS message body, a line of
// `host quarantine list --json`.
type entryJSON struct {
	ID         string      `json:"id"`
	Projection string      `json:"projection,omitempty"`
	Stream     string      `json:"stream,omitempty"`
	Shard      string      `json:"shard,omitempty"`
	Record     host.Record `json:"record"`
	Reason     string      `json:"reason"`
	FirstSeen  time.Time   `json:"firstSeen"`
	Attempts   int         `json:"attempts"`
}

// MarshalJSON writes the entry as an object with lower-case field names,
// the record in the stream-record wire shape (images in DynamoDB JSON).
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryJSON{e.ID, e.Projection, e.Stream, e.Shard, e.Record, e.Reason, e.FirstSeen.UTC(), e.Attempts})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var j entryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Entry(j)
	return nil
}
