package quarantine

import (
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

// EventInfo is what an entry's record says of its event, read leniently
// from its new image: a record given up because its image did not decode
// still shows what it has. Empty fields are attributes the image lacks.
type EventInfo struct {
	Stream   string // the stream's name, as configured when one of streams matches the image's marker
	StreamID string
	Version  uint64 // 0 when absent or not a number
	Type     string
}

// Event reads the event of the entry's record from its new image; streams
// are the configuration's stream names, to name the stream as configured
// (the image's marker has it in lower case).
func (e Entry) Event(streams ...string) EventInfo {
	img := e.Record.DynamoDB.NewImage
	s := func(a string) string {
		if v, ok := img[a]; ok && v.Kind == abi.KindS {
			return v.Str
		}
		return ""
	}
	info := EventInfo{StreamID: s(eventstore.AttrStreamID), Type: s(eventstore.AttrEventType)}
	if v, ok := img[eventstore.AttrVersion]; ok && v.Kind == abi.KindN {
		info.Version, _ = strconv.ParseUint(v.Str, 10, 64)
	}
	if marker := s(eventstore.AttrMarker); marker != "" {
		info.Stream = strings.TrimSuffix(marker, ".event")
		for _, name := range streams {
			if strings.EqualFold(name, info.Stream) {
				info.Stream = name
			}
		}
	}
	return info
}
