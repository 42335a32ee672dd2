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
		rows = append(rows, outcomeOf(o, &ref))
	}
	return writeJSON(w, map[string]any{"rows": rows})
}

// outcomeOf is a row's outcome in plain JSON: its checkpoint is the one
// of the instance ref (nil: the first instance folded), and a row fed by
// several instances lists every instance's.
func outcomeOf(o host.Outcome, ref *host.InstanceRef) outcomeJSON {
	j := outcomeJSON{Key: plainItem(o.Key), Written: o.Written, Removed: o.Removed, Applied: len(o.Applied()), Row: plainItem(o.State)}
	switch {
	case ref != nil:
		j.Checkpoint = instanceCheckpoint(o, *ref)
	case len(o.Instances) > 0:
		j.Checkpoint = o.Instances[0].Version
	}
	if len(o.Instances) > 1 {
		j.Checkpoints = map[string]uint64{}
		for _, in := range o.Instances {
			j.Checkpoints[in.Source+"#"+in.StreamID] = in.Version
		}
	}
	if o.Err != nil {
		j.Error = o.Err.Error()
	}
	return j
}
