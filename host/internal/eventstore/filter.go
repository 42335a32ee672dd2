package eventstore

import (
	"encoding/json"
	"sort"
)

// FilterPattern returns the Lambda / EventBridge Pipes event filter pattern
// that keeps only the INSERTs of these streams' events: records
// whose new image carries one of their markers. Snapshots, idempotency
// sentinels, read-model rows and TTL deletions never invoke the function.
func (l Layout) FilterPattern(streams ...Stream) map[string]any {
	markers := make([]string, 0, len(streams))
	seen := map[string]bool{}
	for _, s := range streams {
		m := l.Marker(s.Name)
		if !seen[m] {
			seen[m] = true
			markers = append(markers, m)
		}
	}
	sort.Strings(markers)
	return map[string]any{
		"eventName": []string{"INSERT"},
		"dynamodb": map[string]any{
			"NewImage": map[string]any{
				AttrMarker: map[string]any{"S": markers},
			},
		},
	}
}

// FilterCriteria returns the FilterCriteria JSON of an event source mapping
// or a Pipe: {"Filters": [{"Pattern": "<the pattern as a JSON string>"}]}.
func (l Layout) FilterCriteria(streams ...Stream) ([]byte, error) {
	return criteria(l.FilterPattern(streams...))
}

func criteria(p map[string]any) ([]byte, error) {
	pattern, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(map[string]any{"Filters": []map[string]string{{"Pattern": string(pattern)}}}, "", "  ")
}

// KinesisFilterPattern returns the event filter pattern of a Lambda event
// source mapping (or a Pipe) on a Kinesis data stream that the event table
// streams its changes to: FilterPattern's conditions on the change record,
// under "data". Lambda filters a Kinesis record on its data alone, reading
// the base64 data as JSON; the record's own eventName is
// aws:kinesis:record, so the stream pattern would keep nothing.
func (l Layout) KinesisFilterPattern(streams ...Stream) map[string]any {
	return map[string]any{"data": l.FilterPattern(streams...)}
}

// KinesisFilterCriteria returns the FilterCriteria JSON of an event source
// mapping or a Pipe on such a Kinesis data stream.
func (l Layout) KinesisFilterCriteria(streams ...Stream) ([]byte, error) {
	return criteria(l.KinesisFilterPattern(streams...))
}
