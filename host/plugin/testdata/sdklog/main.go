// Command sdklog is a test guest written with the guest SDK whose evolve
// logs every event with guest.Logf (so the module imports dynafold.log).
package main

import (
	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type counter struct {
	Count int64 `ddb:"count"`
}

func init() {
	guest.Register(guest.Projection[counter]{
		Name: "sdklog", Version: "0.0.1",
		Stream: "Order", EventTypes: []string{"Placed"},
		Key: func(streamID string, _ guest.Event) (guest.Key, bool) {
			return guest.Key{"pk": abi.S(streamID)}, true
		},
		Initial: func(string, guest.Event) counter { return counter{} },
		Evolve: func(s counter, e guest.Event) (counter, error) {
			guest.Logf(guest.LevelWarn, "sdk folds %s v%d", e.Type, e.Version)
			s.Count++
			return s, nil
		},
	})
}

func main() {}
