package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// sourceCheckpoints converts checkpoint.sources for the engine.
func sourceCheckpoints(in map[string]SourceCheckpointConfig) map[string]apply.Scalar {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]apply.Scalar, len(in))
	for n, sc := range in {
		out[n] = apply.Scalar{Field: sc.Field, Offset: sc.Offset, InstanceField: sc.InstanceField}
	}
	return out
}

// checkSourceNames refuses checkpoint.sources entries that name no source
// the plugin declares, naming the declared ones.
func checkSourceNames(pc ProjectionConfig, d abi.Description) error {
	var declared []string
	for _, s := range d.Sources {
		declared = append(declared, s.Name)
	}
	var unknown []string
	for n := range pc.Checkpoint.Sources {
		if !slices.Contains(declared, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("configuration: projection %q.checkpoint.sources names %s, which plugin %s does not declare; its sources are %s",
		pc.Name, quoteAll(unknown), d.Name, quoteAll(declared))
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
