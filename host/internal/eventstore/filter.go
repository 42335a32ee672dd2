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
	pattern, err := json.Marshal(l.FilterPattern(streams...))
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(map[string]any{"Filters": []map[string]string{{"Pattern": string(pattern)}}}, "", "  ")
}
