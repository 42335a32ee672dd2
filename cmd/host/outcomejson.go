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
	Checkpoint uint64         `json:"checkpoint"` // the instance's checkpoint (the one the command names)
	// Checkpoints are every instance's checkpoint, "<source>#<streamId>",
	// for a row fed by several.
	Checkpoints map[string]uint64 `json:"checkpoints,omitempty"`
	Row         map[string]any    `json:"row"`
	Error       string            `json:"error,omitempty"`
}

// writeOutcomes prints outcomes as {"rows": [...]}, each row's
// checkpoint the one of the instance ref.
func writeOutcomes(w io.Writer, outs []host.Outcome, ref host.InstanceRef) error {
	rows := make([]outcomeJSON, 0, len(outs))
	for _, o := range outs {
		j := outcomeJSON{Key: plainItem(o.Key), Written: o.Written, Removed: o.Removed, Applied: len(o.Applied()), Row: plainItem(o.State)}
		j.Checkpoint = instanceCheckpoint(o, ref)
		if len(o.Instances) > 1 {
			j.Checkpoints = map[string]uint64{}
			for _, in := range o.Instances {
				j.Checkpoints[in.Source+"#"+in.StreamID] = in.Version
			}
		}
		if o.Err != nil {
			j.Error = o.Err.Error()
		}
		rows = append(rows, j)
	}
	return writeJSON(w, map[string]any{"rows": rows})
}
