package host

import (
	"strings"
	"testing"
)

// TestM3_SourceCheckpointsThatCannotWorkAreRefusedWithTheirPath: every
// problem of checkpoint.sources names its JSON path.
func TestM3_SourceCheckpointsThatCannotWorkAreRefusedWithTheirPath(t *testing.T) {
	for _, tc := range []struct {
		name, projection string
		want             []string
	}{
		{"without revision", `"checkpoint": {"sources": {"weigh": {"field": "weighVersion"}}}`,
			[]string{`projection "summaries".checkpoint.sources`, "needs revision"}},
		{"no field", `"checkpoint": {"sources": {"weigh": {"offset": -1}}}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.sources.weigh.field is required`}},
		{"map without instance field", `"checkpoint": {"map": "cps", "sources": {"weigh": {"field": "wv"}}}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.sources.weigh.instanceField is required`}},
		{"field is the revision", `"checkpoint": {"sources": {"weigh": {"field": "rev"}}}, "revision": {"field": "rev"}`,
			[]string{`"rev"`, "each attribute the host writes holds one thing"}},
		{"field is a key", `"checkpoint": {"sources": {"weigh": {"field": "pk"}}}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.sources.weigh.field`, "key attribute"}},
		{"offset out of range", `"checkpoint": {"sources": {"weigh": {"field": "wv", "offset": 9007199254740993}}}, "revision": {"field": "rev"}`,
			[]string{`projection "summaries".checkpoint.sources.weigh.offset`, "out of range"}},
	} {
		_, err := ParseConfig([]byte(strings.Replace(baseConfig, `"checkpoint": {"field": "version"} %s`, tc.projection, 1)))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q\ndoes not contain %q", tc.name, err, w)
			}
		}
	}
	cfg, err := ParseConfig([]byte(strings.Replace(baseConfig, `"checkpoint": {"field": "version"} %s`,
		`"checkpoint": {"map": "checkpoints", "sources": {"weigh": {"field": "weighVersion", "offset": -1, "instanceField": "weighSession"}}}, "revision": {"field": "revision"}`, 1)))
	if err != nil {
		t.Fatalf("the weight-log configuration: %v", err)
	}
	if sc := cfg.Projections[0].Checkpoint.Sources["weigh"]; sc.Field != "weighVersion" || sc.Offset != -1 || sc.InstanceField != "weighSession" {
		t.Errorf("parsed %+v", sc)
	}
}
