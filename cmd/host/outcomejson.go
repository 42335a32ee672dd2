package main

import (
	"io"

	"github.com/dynafold/dynafold/host"
)

// outcomeJSON is a row's outcome as catchup --json and rebuild --json
// print it: plain JSON, the row as written (or read).
type outcomeJSON struct {
	Key        map[string]any `json:"key"`
	Written    bool           `json:"written"`
	Removed    bool           `json:"removed,omitempty"`
	Applied    int            `json:"applied"`
	Checkpoint uint64         `json:"checkpoint"`
	Row        map[string]any `json:"row"`
	Error      string         `json:"error,omitempty"`
}

// writeOutcomes prints outcomes as {"rows": [...]}.
func writeOutcomes(w io.Writer, outs []host.Outcome) error {
	rows := make([]outcomeJSON, 0, len(outs))
	for _, o := range outs {
		rows = append(rows, outcomeOf(o))
	}
	return writeJSON(w, map[string]any{"rows": rows})
}

// outcomeOf is a row's outcome in plain JSON.
func outcomeOf(o host.Outcome) outcomeJSON {
	j := outcomeJSON{Key: plainItem(o.Key), Written: o.Written, Removed: o.Removed, Applied: len(o.Applied()), Row: plainItem(o.State)}
	if len(o.Instances) > 0 {
		j.Checkpoint = o.Instances[0].Version
	}
	if o.Err != nil {
		j.Error = o.Err.Error()
	}
	return j
}
