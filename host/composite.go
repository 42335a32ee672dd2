package host

import (
	"fmt"
	"slices"

	"github.com/dynafold/dynafold/abi"
)

// checkComposites refuses a plugin that declares (ABI 1.2) a stream id's
// composite fields other than the configuration's: it would split the ids
// into the wrong fields. Plugins that declare nothing are not checked.
func (h *Host) checkComposites(d abi.Description) error {
	for _, c := range d.Composites {
		var stream string
		for _, s := range d.Sources {
			if s.Name == c.Source {
				stream = s.Stream
			}
		}
		if stream == "" {
			return fmt.Errorf("plugin %s declares a stream id composite for source %q, which it does not describe: rebuild the plugin", d.Name, c.Source)
		}
		want := h.streams[stream].Composite
		if !slices.Equal(c.Fields, want) {
			return fmt.Errorf("plugin %s splits the stream ids of %s (source %q) into %q, but eventStore.streams defines its composite as %q: make the plugin's Composite and the configuration the same",
				d.Name, stream, c.Source, c.Fields, want)
		}
	}
	return nil
}
